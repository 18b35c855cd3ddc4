"""The start method in force at a loader (``Loader.context`` / ``Loader.start_methods``,
``ProgramModel.start_method_calls``, ``Settings.default_start_methods``) and the rules built on it
(DL301, DL307)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from golden import run_dllint

from dllint.config import Settings, parse_requires_python
from dllint.engine import Engine


def write(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def loaders(root: Path, settings: Settings | None = None, targets: list[str] | None = None):
    settings = settings or Settings(target_version="py311")
    engine = Engine(settings, str(root), jobs=1)
    paths = [str(root / t) for t in targets] if targets else engine.project_files()
    analysis = engine.analyse(paths, set())
    return {
        (os.path.relpath(ld.file.path, root), ld.call.span.row): ld for ld in analysis.project.index.loaders
    }


DATA = """
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Points(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return torch.ones(2).cuda()

    def make_loader():
        return DataLoader(Points(), num_workers=2)
"""

# ---------------------------------------------------------------------------- target defaults


@pytest.mark.parametrize(
    "settings, expected",
    [
        (Settings(target_version="py310"), {"fork"}),
        (Settings(target_version="py313"), {"fork"}),
        (Settings(target_version="py314"), {"forkserver"}),
        # the range spans both: both sets of hazards apply
        (Settings(requires_python=">=3.10"), {"fork", "forkserver"}),
        (Settings(target_version="py312", requires_python=">=3.10"), {"fork", "forkserver"}),
        (Settings(requires_python=">=3.10,<3.14"), {"fork"}),
        (Settings(requires_python=">=3.14"), {"forkserver"}),
        (Settings(target_version="py311", platforms=("darwin",)), {"spawn"}),
        (Settings(target_version="py314", platforms=("win32",)), {"spawn"}),
        (Settings(target_version="py311", platforms=("linux", "darwin")), {"fork", "spawn"}),
    ],
)
def test_default_start_methods(settings, expected):
    assert settings.default_start_methods() == expected


@pytest.mark.parametrize(
    "spec, expected",
    [
        (">=3.10", (10, None)),
        (">3.10", (10, None)),  # 3.10.1 satisfies >3.10
        ("~=3.10", (10, None)),
        ("~=3.10.2", (10, 10)),  # >=3.10.2, ==3.10.*
        (">=3.8, <3.13", (8, 12)),
        ("<3.14.0", (None, 13)),
        ("<3.13.5", (None, 13)),
        ("==3.12.*", (12, 12)),
        (">=3.9,!=3.11.*", (9, None)),
    ],
)
def test_parse_requires_python(spec, expected):
    assert parse_requires_python(spec) == expected


# ---------------------------------------------------------------------------- explicit contexts


def test_explicit_contexts(tmp_path):
    write(
        tmp_path,
        {
            "train.py": """
                import multiprocessing as mp
                import torch.multiprocessing as tmp
                from torch.utils.data import DataLoader, TensorDataset

                ds = TensorDataset()
                a = DataLoader(ds, num_workers=2, multiprocessing_context="spawn")
                b = DataLoader(ds, num_workers=2, multiprocessing_context=mp.get_context("forkserver"))
                ctx = tmp.get_context("fork")
                c = DataLoader(ds, num_workers=2, multiprocessing_context=ctx)
                d = DataLoader(ds, num_workers=2, multiprocessing_context=None)
                e = DataLoader(ds, num_workers=2)

                def f(context, cfg):
                    g = DataLoader(ds, num_workers=2, multiprocessing_context=context)
                    h = DataLoader(ds, **cfg)
                    kw = dict(num_workers=2, multiprocessing_context="spawn")
                    i = DataLoader(ds, **kw)
            """
        },
    )
    found = loaders(tmp_path)
    ctx = {row: (ld.context, set(ld.start_methods), ld.workers) for (_, row), ld in found.items()}
    assert ctx[6] == ("spawn", {"spawn"}, "yes")
    assert ctx[7] == ("forkserver", {"forkserver"}, "yes")
    assert ctx[9] == ("fork", {"fork"}, "yes")
    assert ctx[10] == (None, {"fork"}, "yes")  # None is the default context
    assert ctx[11] == (None, {"fork"}, "yes")
    assert ctx[14] == ("unknown", {"unknown"}, "yes")  # chosen by the caller
    assert ctx[15] == ("unknown", {"unknown"}, "maybe")  # **cfg may hold it
    assert ctx[17] == ("spawn", {"spawn"}, "yes")
    assert len(ctx) == 8


# ---------------------------------------------------------------------------- set_start_method


@pytest.mark.parametrize(
    "call",
    [
        'import multiprocessing\nmultiprocessing.set_start_method("spawn")',
        'import multiprocessing as mp\nmp.set_start_method("spawn", force=True)',
        'from multiprocessing import set_start_method\nset_start_method("spawn")',
        'import torch.multiprocessing as mp\nmp.set_start_method("spawn")',
        'import torch\ntorch.multiprocessing.set_start_method("spawn")',
        'from torch.multiprocessing import set_start_method as ssm\nssm(method="spawn")',
    ],
)
def test_set_start_method_in_loader_module(tmp_path, call):
    write(tmp_path, {"data.py": call + "\n" + textwrap.dedent(DATA)})
    (ld,) = loaders(tmp_path).values()
    assert ld.context is None
    assert ld.start_methods == {"spawn"}
    assert len(ld.file.start_methods) == 1


@pytest.mark.parametrize(
    "guard, methods",
    [
        ("if num_gpus > 1:", {"spawn", "fork"}),  # a single-GPU run keeps the default
        ("if args.distributed:\n    pass\nelse:", {"spawn", "fork"}),
        ("if mp.get_start_method(allow_none=True) is None:", {"spawn"}),  # set on every run
        ('if mp.get_start_method() != "spawn":', {"spawn"}),
        ("try:", {"spawn"}),
    ],
)
def test_a_start_method_set_only_under_a_condition_leaves_the_default_on_the_other_runs(tmp_path, guard, methods):
    body = "    mp.set_start_method('spawn')\n" + ("except RuntimeError:\n    pass\n" if guard == "try:" else "")
    call = f"import torch.multiprocessing as mp\nnum_gpus = 2\nargs = None\n{guard}\n{body}"
    write(tmp_path, {"data.py": call + textwrap.dedent(DATA)})
    (ld,) = loaders(tmp_path).values()
    assert ld.start_methods == methods
    assert [s.conditional for s in ld.file.start_methods] == [methods != {"spawn"}]


def test_set_start_method_in_entry_script_importing_the_loader_module(tmp_path):
    write(
        tmp_path,
        {
            "data.py": DATA,
            "train.py": """
                import torch.multiprocessing as mp
                from data import make_loader

                if __name__ == "__main__":
                    mp.set_start_method("forkserver")
                    list(make_loader())
            """,
            # a script that does not import data.py has no say
            "other.py": """
                import multiprocessing
                multiprocessing.set_start_method("spawn")
            """,
        },
    )
    (ld,) = loaders(tmp_path).values()
    assert ld.start_methods == {"forkserver"}
    # also when only data.py is named on the command line (pre-commit passes staged files)
    (ld,) = loaders(tmp_path, targets=["data.py"]).values()
    assert ld.start_methods == {"forkserver"}


def test_entry_script_through_a_package_and_relative_import(tmp_path):
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/data.py": DATA,
            "pkg/main.py": """
                import multiprocessing as mp
                from .data import make_loader

                def main():
                    mp.set_start_method("spawn")
                    return make_loader()
            """,
        },
    )
    (ld,) = loaders(tmp_path).values()
    assert ld.start_methods == {"spawn"}


def test_module_level_call_in_an_imported_module_applies(tmp_path):
    write(
        tmp_path,
        {
            "mpsetup.py": 'import multiprocessing\nmultiprocessing.set_start_method("forkserver", force=True)\n',
            "guarded.py": (
                "import multiprocessing\n"
                'if __name__ == "__main__":\n'
                '    multiprocessing.set_start_method("spawn")\n'
            ),
            "train.py": "import mpsetup\nimport guarded\n" + textwrap.dedent(DATA),
        },
    )
    (ld,) = loaders(tmp_path).values()
    # the guarded call does not run on import; the module-level one does
    assert ld.start_methods == {"forkserver"}


def test_non_literal_method_is_unknown(tmp_path):
    write(tmp_path, {"data.py": "import sys, multiprocessing\nmultiprocessing.set_start_method(sys.argv[1])\n" + textwrap.dedent(DATA)})
    (ld,) = loaders(tmp_path).values()
    assert ld.start_methods == {"unknown"}


@pytest.mark.parametrize(
    "settings, expected",
    [
        (Settings(target_version="py313"), {"fork"}),
        (Settings(target_version="py314"), {"forkserver"}),
        (Settings(requires_python=">=3.10"), {"fork", "forkserver"}),
        (Settings(target_version="py313", platforms=("darwin",)), {"spawn"}),
    ],
)
def test_loader_without_context_gets_the_target_defaults(tmp_path, settings, expected):
    write(tmp_path, {"data.py": DATA})
    (ld,) = loaders(tmp_path, settings).values()
    assert ld.context is None and ld.start_methods == expected


# ---------------------------------------------------------------------------- DL301 / DL307 on top


def details(root: Path, *args: str) -> list[dict]:
    """The JSON findings' details (the why and the evidence behind the short messages)."""
    import json

    _, out = run_dllint(root, ["check", "--output-format", "json", "--no-fix", *args])
    return [f.get("details", {}) for f in json.loads(out)]


def check(root: Path, *args: str) -> tuple[int, list[str]]:
    """dllint on the whole project (run_dllint appends the path ".")."""
    code, out = run_dllint(root, ["check", "--output-format", "concise", "-q", "--no-fix", *args])
    return code, [line for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "target, fires",
    [("py311", True), ("py313", True), ("py314", False)],
)
def test_dl301_follows_the_target(tmp_path, target, fires):
    write(tmp_path, {"data.py": DATA})
    _, lines = check(tmp_path, "--select", "DL301", "--target-version", target)
    assert any("DL301" in line for line in lines) is fires, lines


def test_dl301_silent_under_an_entry_script_spawn(tmp_path):
    write(
        tmp_path,
        {
            "data.py": DATA,
            "train.py": 'import torch.multiprocessing as mp\nfrom data import make_loader\nmp.set_start_method("spawn")\n',
        },
    )
    _, lines = check(tmp_path, "--select", "DL301,DL201", "--target-version", "py311")
    assert not any("DL301" in line for line in lines), lines
    # the hazard's own rule still reports, as a warning under spawn
    assert any("DL201" in line and "spawn" in line for line in lines), lines


def test_dl301_reported_when_only_the_loader_file_is_named(tmp_path):
    write(
        tmp_path,
        {
            "data.py": DATA.replace("def make_loader():\n        return DataLoader(Points(), num_workers=2)", ""),
            "train.py": "from torch.utils.data import DataLoader\nfrom data import Points\nloader = DataLoader(Points(), num_workers=4)\n",
        },
    )
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--output-format", "concise", "-q", "--no-fix", "--target-version", "py311", "train.py"])
    assert code == 1 and out.startswith("train.py:3:10: DL301"), out
    [found] = details(tmp_path, "--select", "DL301", "--target-version", "py311", "train.py")
    assert any("data.py:9" in h for h in found["hazards"])  # names where the hazard is


def test_dl301_silent_when_the_hazard_cannot_be_traced(tmp_path):
    write(
        tmp_path,
        {
            "data.py": DATA.replace("return DataLoader(Points(), num_workers=2)", "return DataLoader(build(), num_workers=2)"),
        },
    )
    _, lines = check(tmp_path, "--select", "DL301,DL201", "--target-version", "py311")
    assert not any("DL301" in line for line in lines), lines
    assert any("DL201" in line for line in lines), lines  # info: no loader seen using Points


def test_dl307_only_on_its_exact_code(tmp_path):
    write(tmp_path, {"data.py": DATA})
    _, lines = check(tmp_path, "--select", "DL3", "--target-version", "py311")
    assert not any("DL307" in line for line in lines)
    _, lines = check(tmp_path, "--select", "DL307", "--target-version", "py311")
    assert len(lines) == 1 and "DL307" in lines[0] and "(fork on the targets)" in lines[0]
    [found] = details(tmp_path, "--select", "DL307", "--target-version", "py311")
    assert found["start methods"] == "fork (Linux, Python 3.11)"


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--target-version", "py314"], "forkserver (Linux, Python 3.14)"),
        (["--target-version", "py311"], "fork (Linux, Python 3.11)"),
    ],
)
def test_dl307_names_the_start_methods_of_the_targets(tmp_path, args, expected):
    write(tmp_path, {"data.py": DATA})
    _, lines = check(tmp_path, "--select", "DL307", *args)
    assert len(lines) == 1 and f"({expected.split()[0]} on the targets)" in lines[0], lines
    [found] = details(tmp_path, "--select", "DL307", *args)
    assert found["start methods"] == expected


def test_dl307_with_requires_python_and_platforms(tmp_path):
    write(
        tmp_path,
        {
            "data.py": DATA,
            "pyproject.toml": '[project]\nrequires-python = ">=3.10"\n[tool.dllint]\nplatforms = ["linux", "darwin"]\n',
        },
    )
    _, lines = check(tmp_path, "--select", "DL307")
    assert len(lines) == 1 and "(fork/forkserver/spawn on the targets)" in lines[0], lines
    [found] = details(tmp_path, "--select", "DL307")
    for part in ("fork (Linux, Python 3.10-3.13)", "forkserver (Linux, Python 3.14)", "spawn (macOS)"):
        assert part in found["start methods"]


def test_dl307_silent_when_set_start_method_applies(tmp_path):
    write(
        tmp_path,
        {
            "data.py": DATA,
            "train.py": 'import multiprocessing\nimport data\nif __name__ == "__main__":\n    multiprocessing.set_start_method("fork")\n',
        },
    )
    _, lines = check(tmp_path, "--select", "DL307", "--target-version", "py311")
    assert lines == []


def test_dl301_follows_worker_code_into_files_without_trigger_words(tmp_path):
    """torch_geometric's Dataset runs ``get`` in the workers; the CUDA call is in a helper module
    that mentions neither Dataset nor DataLoader, parsed on demand (DL201's ``wants``)."""
    write(
        tmp_path,
        {
            "helpers.py": """
                import torch
                DEVICE = torch.device("cuda")

                def to_device(x):
                    return x.to(DEVICE)
            """,
            "data.py": """
                from torch_geometric.data import DataLoader, Dataset
                from helpers import to_device

                class Graphs(Dataset):
                    def len(self):
                        return 4

                    def get(self, idx):
                        return to_device(idx)

                loader = DataLoader(Graphs(), num_workers=2)
            """,
        },
    )
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--output-format", "full", "-q", "--no-fix", "--target-version", "py311", "data.py"])
    assert code == 1 and "data.py:11:10: DL301" in out and "helpers.py:5" in out.split("= hazards:", 1)[1], out


def test_module_level_call_in_a_parent_package_applies(tmp_path):
    write(
        tmp_path,
        {
            "pkg/__init__.py": 'import torch.multiprocessing as mp\nmp.set_start_method("spawn", force=True)\n',
            "pkg/data.py": DATA,
        },
    )
    (ld,) = loaders(tmp_path).values()
    assert ld.start_methods == {"spawn"}


def test_an_entry_script_without_a_call_keeps_the_default(tmp_path):
    """Two scripts run the same loader: one sets spawn, the other does not (fork there)."""
    write(
        tmp_path,
        {
            "data.py": DATA,
            "train.py": 'import multiprocessing as mp\nfrom data import make_loader\nif __name__ == "__main__":\n    mp.set_start_method("spawn")\n    make_loader()\n',
            # parsed because it mentions DataLoader (an entry script that is never parsed is not seen)
            "evaluate.py": (
                "from torch.utils.data import DataLoader\nfrom data import make_loader\n\n"
                "def evaluate(loader: DataLoader):\n    return sum(1 for _ in loader)\n\n"
                'if __name__ == "__main__":\n    evaluate(make_loader())\n'
            ),
            # a test module (no main guard) is not an entry script
            "test_data.py": "from data import make_loader\n\ndef test_loader():\n    make_loader()\n",
        },
    )
    (ld,) = loaders(tmp_path).values()
    assert ld.start_methods == {"spawn", "fork"}
    _, lines = check(tmp_path, "--select", "DL301,DL307", "--target-version", "py311")
    assert sum("DL301" in line for line in lines) == 1 and sum("DL307" in line for line in lines) == 1, lines
    # with evaluate.py also setting it, spawn is all that applies
    (tmp_path / "evaluate.py").write_text(
        (tmp_path / "evaluate.py").read_text().replace(
            'if __name__ == "__main__":\n', 'if __name__ == "__main__":\n    import multiprocessing\n    multiprocessing.set_start_method("forkserver")\n'
        )
    )
    (ld,) = loaders(tmp_path).values()
    assert ld.start_methods == {"spawn", "forkserver"}
    _, lines = check(tmp_path, "--select", "DL301,DL307", "--target-version", "py311")
    assert lines == []
