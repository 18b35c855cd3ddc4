"""DL103 runtime proof with real torch (CPU): iterating each flagged dataset / loader under
multiprocessing_context="spawn" raises the pickling error the finding quotes; the fixed forms
(a module-level function, the golden unsafe fix turning the collate lambda into functools.partial)
iterate and give the same batches as before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from golden import FIXTURES, Case, copy_case, findings, import_fixture

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

FIXTURE = FIXTURES / "dl103" / "positive.py"


def spawned(loader: DataLoader) -> DataLoader:
    """The same loader, one worker, started with spawn."""
    return DataLoader(
        loader.dataset,
        batch_size=loader.batch_size,
        num_workers=1,
        multiprocessing_context="spawn",
        collate_fn=loader.collate_fn,
        worker_init_fn=loader.worker_init_fn,
    )


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_fixture(FIXTURE, tmp_path_factory.mktemp("dl103"), "dl103_positive")


@pytest.mark.parametrize(
    "index, error",
    [
        (0, r"Can't pickle local object 'Cleaned.__init__.<locals>.<lambda>'"),
        (1, r"cannot pickle '_thread.lock' object"),
        (2, r"cannot pickle 'generator' object"),
        (3, r"Can't pickle local object 'loaders.<locals>.<lambda>'"),
        (4, r"Can't pickle local object 'loaders.<locals>.<lambda>'"),
        (5, r"Can't pickle local object 'loaders.<locals>.init'"),
        (6, r"Can't pickle local object 'Counted.__init__.<locals>.<lambda>'"),
    ],
    ids=["lambda-attr", "lock", "generator", "stored-lambda", "collate-lambda", "nested-init-fn", "defaultdict-lambda"],
)
def test_flagged_state_fails_under_spawn(mod, index, error):
    loader = mod.loaders()[index]
    with pytest.raises((AttributeError, TypeError, pickle_error())) as info:
        next(iter(spawned(loader)))
    assert re.search(error, str(info.value)), str(info.value)


def pickle_error():
    import pickle

    return pickle.PicklingError


def test_local_dataset_class_fails_under_spawn(mod):
    with pytest.raises((AttributeError, pickle_error())) as info:
        next(iter(spawned(mod.build_local(4))))
    assert "Can't pickle local object 'build_local.<locals>.Local'" in str(info.value)


def test_same_loaders_work_under_fork(mod):
    """fork pickles nothing: the finding is a warning for fork targets, not an error."""
    for index in (0, 1, 4):
        assert list(mod.loaders()[index]) is not None


def test_fixed_forms_work_under_spawn(mod, tmp_path):
    # a module-level function instead of the lambda attribute
    assert [int(x) for b in spawned(DataLoader(mod.CleanedFixed([" a ", "bb "]), batch_size=2)) for x in b] == [1, 2]
    # the golden unsafe fix: collate_fn=functools.partial(pad, 1) gives the batches the lambda gave
    fixed = import_fixture(Path(f"{FIXTURE}.unsafe-fixed"), tmp_path, "dl103_positive_fixed")
    after = [b.tolist() for b in spawned(fixed.loaders()[4])]
    before = [b.tolist() for b in mod.loaders()[4]]  # the original lambda, under fork
    assert after == before == [[2, 2]]


def test_rule_findings_match_the_failing_cases(tmp_path):
    case = Case("dl103/positive", FIXTURE)
    out = findings(copy_case(case, tmp_path), case)
    rows = [int(line.split(":")[1]) for line in out.splitlines() if " DL103 " in line]
    lines = FIXTURE.read_text().splitlines()
    texts = [lines[r - 1].strip() for r in rows]
    assert texts[:3] == ["self.clean = lambda s: s.strip()", "self.lock = threading.Lock()", "self.rows = (i * i for i in range(n))"]
    assert texts[3] == "self.counts = counts or defaultdict(lambda: 0)"
    assert texts[4] == "class Local(Dataset):"
    # a local worker_init_fn is reported at its def (the line to move), before the loaders using it
    assert texts[5] == "def init(worker_id):" and "transform=lambda" in texts[6] and "collate_fn=lambda" in texts[7]
    assert len(rows) == 8


def _diagnostics(tmp_path, source: Path, target: str, platforms=("linux",)):
    import os

    from dllint.config import Settings
    from dllint.engine import Engine

    import tempfile

    work = copy_case(Case(f"dl103/{source.stem}", source), Path(tempfile.mkdtemp(dir=tmp_path)))
    engine = Engine(Settings(target_version=target, platforms=tuple(platforms)), str(work))
    path = os.path.join(str(work), source.name)
    return [d for d in engine.analyse([path], {"DL103"}).diagnostics if d.code == "DL103"]


def test_severity_follows_the_start_method(tmp_path):
    """Error where the workers start with forkserver/spawn, warning where they fork."""
    source = FIXTURES / "dl103" / "positive_py314.py"
    on_314 = {d.span.row: d.severity for d in _diagnostics(tmp_path, source, "py314")}
    assert on_314 == {16: "error", 27: "error"}  # row 31 passes multiprocessing_context="fork": silent
    on_311 = {d.span.row: d.severity for d in _diagnostics(tmp_path, source, "py311")}
    assert on_311 == {16: "warning", 27: "warning"}
    on_mac = {d.span.row: d.severity for d in _diagnostics(tmp_path, source, "py311", ["darwin"])}
    assert on_mac == {16: "error", 27: "error"}
    assert all("spawn" in d.message for d in _diagnostics(tmp_path, source, "py311", ["darwin"]) if d.severity == "error")
