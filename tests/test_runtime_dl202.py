"""DL202 runtime proof: an unsharded IterableDataset with two workers yields every item twice;
the sharded form (get_worker_info) yields each item once. Real torch, CPU, fork or default."""

from __future__ import annotations

import collections
import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from golden import FIXTURES, copy_case, findings, Case

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

FIXTURE = FIXTURES / "dl202" / "positive.py"


def load(tmp_path: Path, name: str = "dl202_positive"):
    """Import the fixture under a unique module name (importable by worker processes too)."""
    shutil.copy(FIXTURE, tmp_path / f"{name}.py")
    sys.path.insert(0, str(tmp_path))
    spec = importlib.util.spec_from_file_location(name, tmp_path / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def items(dataset, workers=2):
    loader = DataLoader(dataset, batch_size=None, num_workers=workers)
    return collections.Counter(int(x) for x in loader)


def test_unsharded_dataset_yields_every_item_once_per_worker(tmp_path):
    mod = load(tmp_path)
    counts = items(mod.Numbers(8))
    assert counts == {i: 2 for i in range(8)}  # each item twice: both workers run the whole range
    assert items(mod.Numbers(8), workers=0) == {i: 1 for i in range(8)}
    records = items(mod.Records(range(4)))
    assert records == {i: 2 for i in range(4)}


def test_sharded_form_yields_each_item_once(tmp_path):
    mod = load(tmp_path)
    assert items(mod.ShardedNumbers(8)) == {i: 1 for i in range(8)}
    assert items(mod.ShardedNumbers(9)) == {i: 1 for i in range(9)}  # uneven split too


def test_rule_flags_exactly_the_duplicating_classes(tmp_path):
    """The linter's verdict agrees with the runtime: Numbers and Records, not ShardedNumbers."""
    work = copy_case(Case("dl202/positive", FIXTURE), tmp_path)
    out = findings(work, Case("dl202/positive", FIXTURE))
    flagged = {line.split("`")[1] for line in out.splitlines() if " DL202 " in line}
    assert flagged == {"Numbers", "Records"}
