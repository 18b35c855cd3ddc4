"""Fix equivalence: every golden fixed file of DL103, DL104, DL204, DL301 and DL304 behaves like
the original when driven the way training code drives it.

For each case with a ``.fixed`` / ``.unsafe-fixed`` golden (and the project cases whose golden
changes come from these rules), the original and the fixed module are imported side by side and
driven by the case's driver: every Dataset's items (with their types), its ``len``, whether it
pickles (what spawn does to it), and a real ``DataLoader`` with its workers (fork unless the code
chose a context; spawn where the fix chose it) for every loader the module builds, plus the
loader's options and whether its ``collate_fn`` / ``worker_init_fn`` pickle.

- a **safe** fix must give identical observations, except where the rule's "Fix safety" says the
  original fails: DL304's fix changes only what happens where ``DataLoader`` raised its ValueError;
- an **unsafe** fix may differ only where its rule's "Fix safety" says it does (``ALLOWED``), in
  the direction it says; anything else is a failure.

Data are tiny and loaders have two workers: the whole file runs in seconds (the spawn loaders
dominate).
"""

from __future__ import annotations

import itertools
import pickle
import re
import shutil
import sqlite3
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from golden import FIXTURES, import_fixture

torch = pytest.importorskip("torch")
cv2 = pytest.importorskip("cv2")
pytest.importorskip("numpy.random")  # imported here, not first in a forked worker (import locks copied mid-use)
from torch.utils.data import DataLoader, Dataset, IterableDataset  # noqa: E402

RULES = ("dl103", "dl104", "dl204", "dl301", "dl304")
DEFAULT_CV2_THREADS = cv2.getNumThreads()
_names = itertools.count()

# ---------------------------------------------------------------------------- observing


def raised(exc: BaseException) -> tuple:
    """An exception as an observation: its type and first line, without what differs between two
    imports of the same code (addresses, the fixture's module name, worker pids)."""
    message = (str(exc).strip().splitlines() or [""])[0]
    for pattern, repl in ((r" at 0x[0-9a-f]+", ""), (r"eq_\w+?_\d+", "<fixture>"), (r"pid\(s\) [\d, ]+", "pid(s) N")):
        message = re.sub(pattern, repl, message)
    return ("raises", type(exc).__name__, message)


def norm(x: Any) -> Any:
    """A comparable picture of a value, its types included."""
    if isinstance(x, torch.Tensor):
        return ("tensor", str(x.dtype), tuple(x.shape), x.tolist())
    if type(x).__module__ == "numpy":
        return ("numpy", str(getattr(x, "dtype", type(x).__name__)), x.tolist() if hasattr(x, "tolist") else x)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [norm(v) for v in x])
    if isinstance(x, dict):
        return ("dict", sorted((repr(k), norm(v)) for k, v in x.items()))
    return (type(x).__name__, x)


def pickles(obj: Any) -> Any:
    """What spawn does to the object: pickle it (and unpickle it)."""
    try:
        pickle.loads(pickle.dumps(obj))
    except Exception as exc:  # noqa: BLE001 - the observation
        return raised(exc)
    return "pickles"


def attempt(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the observation
        return raised(exc)


def observe_dataset(ds, item: Callable) -> dict:
    out = {"type": type(ds).__name__, "pickle": pickles(ds)}  # before use: lazy handles are not open yet
    if isinstance(ds, IterableDataset):
        out["items"] = attempt(lambda: [norm(item(x)) for x in ds])
        return out
    out["len"] = attempt(lambda: len(ds))
    if isinstance(out["len"], int):
        out["items"] = [attempt(lambda i=i: norm(item(ds[i]))) for i in range(out["len"])]
    return out


def observe_loader(loader: DataLoader, item: Callable) -> dict:
    context = loader.multiprocessing_context
    return {
        "dataset": observe_dataset(loader.dataset, item),
        "options": {  # with their types: `persistent_workers=1` is not `True`
            "batch_size": norm(loader.batch_size),
            "num_workers": norm(loader.num_workers),
            "prefetch_factor": norm(loader.prefetch_factor),
            "persistent_workers": norm(loader.persistent_workers),
        },
        "context": context.get_start_method() if context is not None else None,
        "collate_fn": pickles(loader.collate_fn),
        "worker_init_fn": pickles(loader.worker_init_fn),
        "batches": batches(loader, item),  # with its workers: fork unless the code chose a context
    }


def batches(loader: DataLoader, item: Callable) -> Any:
    """Every batch, the workers shut down right after (left to the garbage collector, a loader
    whose worker raised takes seconds to stop)."""
    it = None
    try:
        it = iter(loader)
        return [norm(item(b)) for b in it]
    except Exception as exc:  # noqa: BLE001 - the observation
        return raised(exc)
    finally:
        stop = getattr(it, "_shutdown_workers", None)
        if stop is not None:
            stop()


def observe(obj: Any, item: Callable = lambda x: x) -> Any:
    if isinstance(obj, DataLoader):
        return observe_loader(obj, item)
    if isinstance(obj, Dataset):
        return observe_dataset(obj, item)
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(o, (DataLoader, Dataset)) for o in obj):
        return [observe(o, item) for o in obj]
    return norm(obj)


def differences(before: Any, after: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, before, after) of every leaf that differs."""
    if isinstance(before, dict) and isinstance(after, dict) and before.keys() == after.keys():
        return [d for k in before for d in differences(before[k], after[k], f"{path}.{k}")]
    if (
        isinstance(before, list)
        and isinstance(after, list)
        and len(before) == len(after)
        and all(isinstance(x, dict) for x in [*before, *after])
    ):
        return [d for i, (b, a) in enumerate(zip(before, after)) for d in differences(b, a, f"{path}[{i}]")]
    return [] if before == after else [(path, before, after)]


# ---------------------------------------------------------------------------- documented differences


def is_raise(value, name: str | None = None) -> bool:
    return isinstance(value, tuple) and len(value) == 3 and value[0] == "raises" and (name is None or value[1] == name)


DL304_ERRORS = (
    "prefetch_factor option could only be specified in multiprocessing",
    "persistent_workers option needs num_workers > 0",
    "multiprocessing_context can only be used with multi-process loading",
)

# rule -> [(path suffix, check(before, after), the "Fix safety" sentence it stands for)]
ALLOWED: dict[str, list[tuple[str, Callable[[Any, Any], bool], str]]] = {
    "DL304": [
        (
            "",
            lambda b, a: is_raise(b, "ValueError") and b[2].startswith(DL304_ERRORS) and not is_raise(a),
            "The fix only changes what happens when num_workers is 0 (where the original call raises)",
        ),
    ],
    "DL103": [
        (
            ".collate_fn",
            lambda b, a: is_raise(b) and a == "pickles",
            "a lambda passed as collate_fn= becomes functools.partial (it pickles: spawn can start workers)",
        ),
        (
            ".worker_init_fn",
            lambda b, a: is_raise(b) and a == "pickles",
            "a lambda passed as worker_init_fn= becomes functools.partial",
        ),
    ],
    "DL104": [
        (
            ".dataset.pickle",
            lambda b, a: is_raise(b) and a == "pickles",
            "the handle becomes a functools.partial of the open and a property: until it opens, the dataset pickles",
        ),
        (
            ".batches",
            lambda b, a: not is_raise(a) and not is_raise(b) and len(a) == len(b),
            "each process reads through its own handle, from the start of the file (forked workers no longer share one file position)",
        ),
    ],
    "DL204": [
        (
            ".opencv_threads",
            lambda b, a: a == 1,
            "it also makes OpenCV single-threaded in the main process",
        ),
    ],
    "DL301": [
        (
            ".context",
            lambda b, a: b is None and a == "spawn",
            'the fix adds multiprocessing_context="spawn" (spawn pickles the dataset ... and starts workers more slowly)',
        ),
    ],
}


# ---------------------------------------------------------------------------- cases and drivers


@dataclass
class Variant:
    """One side (original or fixed) of a case, imported on demand."""

    path: Path  # the file (or the project folder)
    tmp: Path
    label: str

    def load(self, argv: list[str] | None = None, module: str | None = None):
        cv2.setNumThreads(DEFAULT_CV2_THREADS)  # a fixed module may have changed the process-wide setting
        old = sys.argv
        sys.argv = ["fixture", *(argv or [])]
        try:
            if self.path.is_dir():
                return import_project(self.path, module, self.tmp / f"{self.label}-{next(_names)}")
            return import_fixture(self.path, self.tmp, f"eq_{self.label}_{next(_names)}")
        finally:
            sys.argv = old


_project_modules: set[str] = set()


def import_project(folder: Path, module: str, dest: Path):
    """Import ``module`` of a project copy at ``dest`` (its folder first on sys.path; the modules
    of a previously imported copy forgotten first, so the two sides never mix)."""
    import importlib

    shutil.copytree(folder, dest)
    for name in list(_project_modules):
        sys.modules.pop(name, None)
    _project_modules.update(p.stem for p in dest.glob("*.py"))
    sys.path.insert(0, str(dest))
    importlib.invalidate_caches()
    return importlib.import_module(module)


Observations = dict[str, Any]
Driver = Callable[[Variant], Observations]


def run_all(thunks: dict[str, Callable[[], Any]], item: Callable = lambda x: x) -> Observations:
    return {label: observe_thunk(fn, item) for label, fn in thunks.items()}


def observe_thunk(fn: Callable[[], Any], item: Callable) -> Any:
    try:
        obj = fn()
    except Exception as exc:  # noqa: BLE001 - the observation
        return raised(exc)
    return observe(obj, item)


def guarded_import(variant: Variant, **kw):
    """The module, or the exception importing it raised (recorded as an observation)."""
    try:
        return variant.load(**kw), None
    except Exception as exc:  # noqa: BLE001
        return None, raised(exc)


def dl103_positive(v: Variant) -> Observations:
    mod = v.load()
    return run_all({**{f"loaders()[{i}]": (lambda i=i: mod.loaders()[i]) for i in range(7)}, "build_local(4)": lambda: mod.build_local(4)})


def dl103_positive_py314(v: Variant) -> Observations:
    mod = v.load()
    return run_all({"main()": mod.main, "fork_loader": lambda: mod.fork_loader, "partial_loader": lambda: mod.partial_loader})


def dl103_positive_loader_subclass(v: Variant) -> Observations:
    mod = v.load()
    return run_all({f"loaders()[{i}]": (lambda i=i: mod.loaders()[i]) for i in range(3)})


def dl104_positive(v: Variant) -> Observations:
    mod = v.load()
    data = v.tmp / "dl104-data"
    data.mkdir(exist_ok=True)
    (data / "records.bin").write_bytes(b"".join(f"rec{i:05d}".encode() for i in range(4)))
    with zipfile.ZipFile(data / "a.zip", "w") as zf:
        for i in range(4):
            zf.writestr(f"m{i}", f"member-{i}")
    sqlite3.connect(data / "t.db").close()
    for i in range(2):
        (data / f"s{i}.txt").write_text(f"shard {i}")
    out = run_all({"Lines": lambda: mod.loader(mod.Lines(data / "records.bin", n=4))}, item=lambda x: x[1])  # (pid, record): the record
    out.update(
        run_all(
            {
                "Archive": lambda: mod.loader(mod.Archive(data / "a.zip")),
                "Table": lambda: mod.Table(data / "t.db"),
                "Shards": lambda: mod.Shards([data / "s0.txt", data / "s1.txt"]),
            }
        )
    )
    return out


def dl204_positive(v: Variant) -> Observations:
    mod = v.load()
    return {"module.opencv_threads": cv2.getNumThreads(), **run_all({"make_loader(4)": lambda: mod.make_loader(4)})}


def dl204_positive_collate_alias(v: Variant) -> Observations:
    mod = v.load()
    return {"module.opencv_threads": cv2.getNumThreads(), **run_all({"loader": lambda: mod.loader})}


def dl301_positive_guarded_script(v: Variant) -> Observations:
    mod = v.load()
    return run_all({"make_loader(2)": lambda: mod.make_loader(2), "make_loader(0)": lambda: mod.make_loader(0), "make_two_worker_loader()": mod.make_two_worker_loader})


def dl304_positive_expression(v: Variant) -> Observations:
    out = {}
    for workers in (2, 0):
        mod, failed = guarded_import(v, argv=["--workers", str(workers)])
        assert failed is None, failed
        # cfg.workers stays 2: `int(cfg.workers)` (no fix: a call) must not be the one raising
        cfg = SimpleNamespace(workers="2", data=SimpleNamespace(workers=workers))
        out[f"build(workers={workers})"] = observe_thunk(lambda: mod.build(cfg, workers), lambda x: x)
    return out


def dl304_positive_literal(v: Variant) -> Observations:
    """Module-level loaders: the statements run one by one (the original's first loader raises)."""
    import ast

    tree = ast.parse(v.path.read_text())
    namespace: dict = {"__name__": f"eq_literal_{next(_names)}"}
    out = {}
    for stmt in tree.body:
        name = stmt.targets[0].id if isinstance(stmt, ast.Assign) else f"line {stmt.lineno}"
        try:
            exec(compile(ast.Module([stmt], []), str(v.path), "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - the observation
            out[name] = raised(exc)
            continue
        if isinstance(namespace.get(name), DataLoader):
            out[name] = observe(namespace[name])
    return out


def dl304_positive_value_shapes(v: Variant) -> Observations:
    mod = v.load()
    return run_all({f"build({w}, fast={f})": (lambda w=w, f=f: mod.build(w, f)) for w in (2, 0) for f in (True, False)})


def dl304_positive_sources(v: Variant) -> Observations:
    """Options from a flag, a config, a branch: every combination with 0 and 2 workers."""
    out = {}
    for workers in (2, 0):
        for flag in ([], ["--persistent"]):
            mod, failed = guarded_import(v, argv=["--workers", str(workers), *flag])
            assert failed is None, failed
            label = f"workers={workers}{' --persistent' if flag else ''}"
            cfg = SimpleNamespace(prefetch=3, workers=workers, prefetch_factor=3)
            thunks = {
                "build_local(4)": lambda: mod.build_local(4),
                "build_inline": lambda: mod.build_inline(cfg, workers),
                "build_flag": mod.build_flag,
                "build_branch": lambda: mod.build_branch(workers),
                "build_branch(test)": lambda: mod.build_branch(workers, test=True),
            }
            out.update({f"{name} [{label}]": value for name, value in run_all(thunks).items()})
    return out


def project_make_loader(module: str) -> Driver:
    def driver(v: Variant) -> Observations:
        mod = v.load(module=module)
        return {"module.opencv_threads": cv2.getNumThreads(), **run_all({"make_loader()": mod.make_loader})}

    return driver


DRIVERS: dict[str, Driver] = {
    "dl103/positive": dl103_positive,
    "dl103/positive_py314": dl103_positive_py314,
    "dl103/positive_loader_subclass": dl103_positive_loader_subclass,
    "dl104/positive": dl104_positive,
    "dl204/positive": dl204_positive,
    "dl204/positive_collate_alias": dl204_positive_collate_alias,
    "dl301/positive_guarded_script": dl301_positive_guarded_script,
    "dl304/positive_expression": dl304_positive_expression,
    "dl304/positive_literal": dl304_positive_literal,
    "dl304/positive_value_shapes": dl304_positive_value_shapes,
    "dl304/positive_sources": dl304_positive_sources,
    # project cases whose golden changes come from these rules only
    "projects/dl2_cv2_reexport": project_make_loader("data"),
    "projects/dl301_library_module": project_make_loader("frames"),
}
# project cases with fixes of these rules that cannot be driven here, and why
NOT_DRIVEN = {
    "projects/dl1_worker_state_cross_file": "needs h5py, and DL101/DL105 fixes are others' (DL101 is tested elsewhere)",
    "projects/dl1_dl3_spawn_cross_file": "needs torchvision; its one fix (a DataLoader subclass's lambda collate_fn) is driven in dl103/positive_loader_subclass",
    "projects/dl2_cross_file": "needs CUDA (the dataset moves tensors to the GPU)",
    "projects/dl2_pyg_get": "needs torch_geometric",
    "projects/dl3_context_requires_python": "needs CUDA",
    "projects/dl3_context_subclass_loader": "needs CUDA",
    "projects/dl301_entry_without_guard": "only DL204's fix (driven in dl204/); train.py runs at import",
}
FIX_RULES = {  # the rules whose fixes a case's golden holds (a single-file case: its folder's rule)
    "projects/dl2_cv2_reexport": ("DL301",),
    "projects/dl301_library_module": ("DL204", "DL301"),
}


@dataclass
class Case:
    name: str
    kind: str  # "fixed" (safe fixes) or "unsafe-fixed"
    original: Path
    fixed: Path  # a file, or a folder holding the fixed files of a project
    rules: tuple[str, ...] = field(default=())


def cases() -> list[Case]:
    out = []
    for rule in RULES:
        for source in sorted((FIXTURES / rule).glob("*.py")):
            fixed, unsafe = Path(f"{source}.fixed"), Path(f"{source}.unsafe-fixed")
            if fixed.exists():
                out.append(Case(f"{rule}/{source.stem}", "fixed", source, fixed, (rule.upper(),)))
            if unsafe.exists() and not (fixed.exists() and fixed.read_text() == unsafe.read_text()):
                out.append(Case(f"{rule}/{source.stem}", "unsafe-fixed", source, unsafe, (rule.upper(),)))
    for name, rules in FIX_RULES.items():
        folder = FIXTURES / name
        for kind in ("fixed", "unsafe-fixed"):
            if (folder / kind).is_dir():
                out.append(Case(name, kind, folder, folder / kind, rules))
    return out


CASES = cases()


def test_every_case_with_a_golden_fix_is_driven():
    """A new fixture with a golden fixed file for these rules needs a driver here."""
    for rule in RULES:
        for source in (FIXTURES / rule).glob("*.py"):
            if Path(f"{source}.fixed").exists() or Path(f"{source}.unsafe-fixed").exists():
                assert f"{rule}/{source.stem}" in DRIVERS, f"no driver for {rule}/{source.stem}"
    for folder in (FIXTURES / "projects").iterdir():
        if not any((folder / kind).is_dir() for kind in ("fixed", "unsafe-fixed")):
            continue
        fixed_files = [p for kind in ("fixed", "unsafe-fixed") for p in (folder / kind).glob("*.py") if (folder / kind).is_dir()]
        changed_by_ours = any(
            r in (folder / "expected.txt").read_text() for r in ("DL103 ", "DL104 ", "DL204 ", "DL301 ", "DL304 ")
        ) and fixed_files
        name = f"projects/{folder.name}"
        if changed_by_ours and not folder.name.startswith("dl101") and name not in DRIVERS:
            assert name in NOT_DRIVEN, f"{name}: no driver and no reason"


def project_copy(case: Case, tmp: Path, fixed: bool) -> Path:
    """The project as it is, or as --fix leaves it (the golden fixed files over the original)."""
    dest = tmp / f"project-{next(_names)}"
    shutil.copytree(case.original, dest, ignore=shutil.ignore_patterns("expected.txt", "fixed", "unsafe-fixed", "__pycache__"))
    for p in case.fixed.rglob("*.py") if fixed else ():
        shutil.copy(p, dest / p.relative_to(case.fixed))
    return dest


@pytest.mark.parametrize("case", CASES, ids=[f"{c.name}-{c.kind}" for c in CASES])
def test_fixed_code_behaves_like_the_original(case: Case, tmp_path):
    driver = DRIVERS[case.name]
    if case.original.is_dir():
        original = Variant(project_copy(case, tmp_path, fixed=False), tmp_path, "orig")
        fixed = Variant(project_copy(case, tmp_path, fixed=True), tmp_path, "fixed")
    else:
        original = Variant(case.original, tmp_path, "orig")
        fixed = Variant(case.fixed, tmp_path, "fixed")
    try:
        before = driver(original)
        after = driver(fixed)
    finally:
        cv2.setNumThreads(DEFAULT_CV2_THREADS)
    assert before.keys() == after.keys()
    assert any(not is_raise(v) for v in after.values()), "the fixed code must do something"
    unexplained = []
    for path, b, a in differences(before, after):
        reasons = [why for rule in case.rules for suffix, ok, why in ALLOWED.get(rule, ()) if path.endswith(suffix) and ok(b, a)]
        if case.kind == "fixed":  # safe fixes: only the documented "where the original failed" of DL304
            reasons = [why for suffix, ok, why in ALLOWED["DL304"] if "DL304" in case.rules and ok(b, a)]
        if not reasons:
            unexplained.append(f"{path}:\n    original: {b!r}\n    fixed:    {a!r}")
    assert not unexplained, "differences no Fix safety section documents:\n" + "\n".join(unexplained)
    if "DL304" in case.rules:  # and the fix fixes: no DataLoader raises what DL304 predicted
        left = [v for v in leaves(after) if is_raise(v, "ValueError") and v[2].startswith(DL304_ERRORS)]
        assert not left, left


def leaves(value: Any):
    if isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
        for v in value:
            yield from leaves(v)
    else:
        yield value
