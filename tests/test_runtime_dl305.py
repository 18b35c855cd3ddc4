"""DL305 runtime proof: batch tensors received from workers and kept across iterations hold
shared memory (one open file descriptor each under the default ``file_descriptor`` strategy);
``.clone()`` -- what the unsafe fix adds -- releases them."""

from __future__ import annotations

import gc
import os
import shutil
import sys
import types
from pathlib import Path

import pytest
from golden import run_dllint_process

torch = pytest.importorskip("torch")

from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "dl305" / "positive.py"
linux_fds = pytest.mark.skipif(
    not os.path.isdir("/proc/self/fd") or torch.multiprocessing.get_sharing_strategy() != "file_descriptor",
    reason="needs /proc and the file_descriptor sharing strategy (Linux)",
)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@linux_fds
def test_kept_batch_tensors_hold_one_descriptor_each_and_clone_releases_them():
    ds = TensorDataset(torch.randn(80, 4), torch.arange(80))
    loader = DataLoader(ds, batch_size=2, num_workers=2)
    batches = len(loader)

    gc.collect()
    base = open_fds()
    kept = []
    for _, y in loader:
        kept.append(y)
    held = open_fds() - base
    assert all(t.is_shared() for t in kept)
    assert held >= batches, (held, batches)  # one descriptor per kept batch tensor

    del kept, y
    gc.collect()
    assert open_fds() - base < batches // 4  # freed tensors close their descriptors

    base = open_fds()
    cloned = []
    for _, y in loader:
        cloned.append(y.clone())
    assert not any(t.is_shared() for t in cloned)
    assert open_fds() - base < batches // 4, open_fds() - base
    del y


def _run_fixture(path: Path):
    """Import the fixture (tqdm stubbed: not needed to show the effect) and run evaluate()."""
    stub = types.ModuleType("tqdm")
    stub.tqdm = lambda it, *a, **k: it
    old = sys.modules.get("tqdm")
    sys.modules["tqdm"] = stub
    try:
        namespace: dict = {"__name__": "fixture"}
        exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102
    finally:
        if old is None:
            del sys.modules["tqdm"]
        else:
            sys.modules["tqdm"] = old
    labels, feats, _arrays, by_index = namespace["evaluate"](lambda x: x * 2)
    return namespace, labels, feats, by_index


@linux_fds
def test_fixture_keeps_shared_tensors_until_the_unsafe_fix(tmp_path):
    work = tmp_path / "case"
    work.mkdir()
    (work / ".git").mkdir()
    path = work / FIXTURE.name
    shutil.copy(FIXTURE, path)

    ns, labels, feats, by_index = _run_fixture(path)
    # labels holds y (flagged) and model outputs (not flagged) alternately
    assert all(t.is_shared() for t in labels[0::2])
    assert not any(t.is_shared() for t in labels[1::2])
    assert all(t.is_shared() for t in feats) and all(t.is_shared() for t in by_index.values())
    assert all(t.is_shared() for b in ns["kept"] for t in b)  # the module-level loop

    out = run_dllint_process(work, "check", "--select", "DL305", "--fix", "--unsafe-fixes", "-q")
    assert out.returncode in (0, 1), out.stderr
    assert ".clone()" in path.read_text()

    ns, labels, feats, by_index = _run_fixture(path)
    assert not any(t.is_shared() for t in labels)
    assert not any(t.is_shared() for t in feats) and not any(t.is_shared() for t in by_index.values())
    # what got no fix (the whole batch list) still holds shared memory: still reported
    assert all(t.is_shared() for b in ns["kept"] for t in b)
    remaining = run_dllint_process(work, "check", "--select", "DL305", "-q", "--output-format", "concise").stdout
    assert "kept.append(batch)" in remaining and "labels.append" not in remaining
