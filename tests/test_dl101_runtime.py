"""DL101 fix proofs at run time: the original and the fixed Dataset (the golden fixed files), imported
and iterated by a real ``torch.utils.data.DataLoader(num_workers=2)`` over small real files, yield the
same batches. The golden harness (test_fixtures.py) already proves each fixed file re-parses and that
a second ``--fix`` changes nothing.
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from golden import FIXTURES

pytest.importorskip("torch")
pytest.importorskip("numpy")

# fixture -> (golden kind, module to import, Dataset expression evaluated with `root` bound)
CASES = {
    "dl101/positive_glob": ("fixed", "positive_glob", "TextFiles(root)"),
    "dl101/positive_listdir": ("fixed", "positive_listdir", "Folder(root)"),
    "dl101/positive_readlines": ("fixed", "positive_readlines", "ListFile(root, 'list.lst')"),
    "dl101/positive_make_dataset": ("fixed", "positive_make_dataset", "ImageFolder(root)"),
    "dl101/positive_param": ("fixed", "positive_param", "FromLists(['a', 'bb', 'ccc', 'd', 'e'], ['3', '1', '4', '1', '5'])"),
    "dl101/spawn_target": ("fixed", "spawn_target", "Clips(root)"),
    "dl101/positive_local_list": ("fixed", "positive_local_list", "PairList(root + '/pairs.lst')"),
    # unsafe: the slice in head() is never reached by the loader, so the batches are still the same
    "dl101/unsafe_uses": ("unsafe-fixed", "unsafe_uses", "Shards(root)"),
    "projects/dl101_subclass": ("fixed", "data.texts", "Texts(root)"),
    "projects/dl101_outside_use": ("unsafe-fixed", "datasets", "Paths(root)"),
    # unsafe: the element type is known from train.py's call only; this call passes those paths
    "projects/dl101_callers": ("unsafe-fixed", "image_list", "ImageList(sorted(__import__('glob').glob(root + '/*.txt')))"),
}

RUNNER = r"""
import importlib, json, pickle, sys
import numpy as np
import torch
from torch.utils.data import DataLoader

spec = json.loads(sys.argv[1])
out = {}

def plain(x):
    if isinstance(x, torch.Tensor):
        return ("tensor", str(x.dtype), x.tolist())
    if isinstance(x, np.ndarray):
        return ("ndarray", x.tolist())
    if isinstance(x, str):
        return str(x)
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, np.generic):
        return ("numpy scalar", x.item())
    return x

for case, (directory, module, expr, root) in spec.items():
    sys.path.insert(0, directory)
    top = module.split(".")[0]
    for name in list(sys.modules):
        if name == top or name.startswith(top + "."):
            del sys.modules[name]
    try:
        mod = importlib.import_module(module)
        dataset = eval(expr, vars(mod), {"root": root})
        loader = DataLoader(dataset, batch_size=2, num_workers=2)
        out[case] = ("ok", len(dataset), [plain(b) for b in loader])
    except Exception as exc:
        out[case] = ("error", type(exc).__name__, str(exc))
    sys.path.remove(directory)
sys.stdout.buffer.write(pickle.dumps(out))
"""


def make_data(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(7):
        name = f"img_{i:03d}.txt"
        (root / name).write_text("x" * (i + 3) + "\n")
        names.append(name)
    (root / "list.lst").write_text("\n".join(reversed(names)) + "\n\n")
    (root / "pairs.lst").write_text("".join(f"{n} {i % 3}\n" for i, n in enumerate(reversed(names))))
    for cls, n in (("cat", 3), ("dog", 4)):
        (root / cls).mkdir()
        for i in range(n):
            (root / cls / f"{cls}_{i}.txt").write_text(cls * (i + 1))
    ann = {
        "images": [{"id": i, "file_name": n} for i, n in enumerate(names)],
        "annotations": [{"image_id": i % 3, "bbox": [i, i, 2, 2]} for i in range(5)],
    }
    (root / "ann.json").write_text(json.dumps(ann))
    return root


def variant(case: str, kind: str, dest: Path) -> Path:
    """A directory holding the original (kind "original") or the golden fixed version of a case."""
    source = FIXTURES / case if case.startswith("projects/") else FIXTURES / f"{case}.py"
    dest.mkdir(parents=True)
    if source.is_dir():
        shutil.copytree(source, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("expected.txt", "fixed", "unsafe-fixed"))
        if kind != "original":
            shutil.copytree(source / kind, dest, dirs_exist_ok=True)
    else:
        golden = source if kind == "original" else Path(f"{source}.{kind}")
        shutil.copy(golden, dest / source.name)
    return dest


def run_all(spec: dict, cwd: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(spec)], cwd=cwd, capture_output=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    return pickle.loads(proc.stdout)


def fixtures_with_fixes() -> set[str]:
    out = set()
    for p in (FIXTURES / "dl101").glob("*.py"):
        if Path(f"{p}.fixed").exists() or Path(f"{p}.unsafe-fixed").exists():
            out.add(f"dl101/{p.stem}")
    for d in (FIXTURES / "projects").glob("dl101_*"):
        if (d / "fixed").exists() or (d / "unsafe-fixed").exists():
            out.add(f"projects/{d.name}")
    return out


def test_every_fixture_with_a_fix_has_a_runtime_proof():
    assert fixtures_with_fixes() == set(CASES)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    base = tmp_path_factory.mktemp("dl101rt")
    root = make_data(base / "data")
    out = {}
    for kind in ("original", "fixed"):
        spec = {}
        for case, (golden, module, expr) in CASES.items():
            directory = variant(case, "original" if kind == "original" else golden, base / kind / case.replace("/", "_"))
            spec[case] = (str(directory), module, expr, str(root))
        out[kind] = run_all(spec, base)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_fixed_dataset_yields_the_same_batches(case, results):
    before = results["original"][case]
    after = results["fixed"][case]
    assert before[0] == "ok", before
    assert after[0] == "ok", after
    assert before[1] > 1 and before[2], "the dataset must not be empty"
    assert after[1] == before[1]
    assert after[2] == before[2]


def test_the_fixed_file_really_holds_an_array(tmp_path):
    """The proof above would be vacuous if the fix did not change the attribute's type."""
    root = make_data(tmp_path / "data")
    directory = variant("dl101/positive_glob", "fixed", tmp_path / "fixed")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import positive_glob as m; "
        "ds = m.TextFiles(sys.argv[2]); print(type(ds.paths).__name__, ds.paths.dtype.kind)"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(directory), str(root)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ndarray", "U"]


def test_unsafe_fix_is_really_unsafe_for_json_encoded_ints(tmp_path):
    """unsafe_uses.Labels: the fix is labelled unsafe because np.int64 is not JSON serializable;
    run both versions and see the fixed one fail where the original works."""
    root = make_data(tmp_path / "data")
    spec_before = {"labels": (str(variant("dl101/unsafe_uses", "original", tmp_path / "a")), "unsafe_uses", "Labels(root)", str(root))}
    spec_after = {"labels": (str(variant("dl101/unsafe_uses", "unsafe-fixed", tmp_path / "b")), "unsafe_uses", "Labels(root)", str(root))}
    before = run_all(spec_before, tmp_path)["labels"]
    after = run_all(spec_after, tmp_path)["labels"]
    assert before[0] == "ok" and before[2], before
    assert after[0] == "error" and "not JSON serializable" in after[2], after
