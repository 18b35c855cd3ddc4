"""DL101 memory proof: a Dataset holding a few hundred thousand paths in a list, iterated by forked
DataLoader workers, makes every worker's private memory grow (copy-on-read: reading an element
writes its refcount, so the page is copied); after ``dllint --fix`` packed the list
(``_CompactList``), the same iteration leaves the workers' private memory flat: at least 95% of the
growth is gone. With skewed lengths (many short paths and one very long one, where a numpy ``<U``
array would pad every element to the longest) the packed list is never larger than the list.

Private memory = Private_Clean + Private_Dirty of ``/proc/<pid>/smaps_rollup``, read once when the
worker starts (worker_init_fn) and once after the epoch (persistent workers are still alive); the
growth a worker shows over a thousand paths (its own batches, pages the allocator reuses) is the
noise both measures are taken above.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from golden import run_dllint

pytest.importorskip("torch")
if not Path("/proc/self/smaps_rollup").exists():  # pragma: no cover - Linux only
    pytest.skip("needs /proc/<pid>/smaps_rollup (Linux)", allow_module_level=True)

N = 600_000

DATASET = '''"""A few hundred thousand image paths, read one by one in workers."""

import torch.utils.data as tud


class Paths(tud.Dataset):
    def __init__(self, n, long_one=0):
        self.paths = [f"/datasets/imagenet/train/n{i % 1000:08d}/n{i % 1000:08d}_{i:09d}.JPEG" for i in range(n)]
        if long_one:
            self.paths.append("/datasets/" + "x" * long_one)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        return len(self.paths[index])
'''

MEASURE = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
import torch
from torch.utils.data import DataLoader
import paths_dataset

def private_kb(pid):
    total = 0
    with open(f"/proc/{pid}/smaps_rollup") as fh:
        for line in fh:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                total += int(line.split()[1])
    return total

def footprint(obj):
    # what the attribute holds: the list's slots and its distinct items, or the packed parts
    if type(obj) is list:
        seen = {}
        for x in obj:
            seen[id(x)] = sys.getsizeof(x)
        return sys.getsizeof(obj) + sum(seen.values())
    return sum(sys.getsizeof(getattr(obj, a)) for a in obj.__slots__) + sys.getsizeof(obj)

marks = sys.argv[2]

def init(worker_id):
    path = os.path.join(marks, str(os.getpid()))
    with open(path + ".tmp", "w") as fh:
        fh.write(str(private_kb(os.getpid())))
    os.replace(path + ".tmp", path)  # whole, or not there yet

def mark(pid):
    # a worker that got no batch (the baseline's one batch went to the other) may still be in
    # its worker_init_fn on a loaded machine: wait for its mark
    path = os.path.join(marks, str(pid))
    for _ in range(1200):
        if os.path.exists(path):
            return int(open(path).read())
        time.sleep(0.05)
    raise FileNotFoundError(path)

dataset = paths_dataset.Paths(int(sys.argv[3]), int(sys.argv[4]))
loader = DataLoader(dataset, batch_size=1000, num_workers=2, persistent_workers=True,
                    worker_init_fn=init, multiprocessing_context="fork")
it = iter(loader)
total = sum(int(batch.sum()) for batch in it)
assert total == sum(len(p) for p in dataset.paths), "every element was read"
growth = []
for worker in it._workers:
    start = mark(worker.pid)
    growth.append(private_kb(worker.pid) - start)
print(type(dataset.paths).__name__, footprint(dataset.paths), *growth)
"""


def measure(directory: Path, tmp_path: Path, name: str, long_one: int = 0, n: int = N) -> tuple[str, int, list[int]]:
    marks = tmp_path / f"marks_{name}"
    marks.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(directory), str(marks), str(n), str(long_one)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    kind, size, *growth = proc.stdout.split()
    return kind, int(size), [int(g) for g in growth]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The dataset before (``list``) and after ``dllint --fix`` (``fixed``)."""
    base = tmp_path_factory.mktemp("dl101mem")
    before = base / "list"
    before.mkdir()
    (before / "paths_dataset.py").write_text(DATASET)
    after = base / "fixed"
    after.mkdir()
    (after / ".git").mkdir()  # the project root
    source = after / "paths_dataset.py"
    source.write_text(DATASET)
    code, out = run_dllint(after, ["check", "--select", "DL101", "--fix", "--target-version", "py311"])
    fixed = source.read_text()
    assert "self.paths = _CompactList(self.paths)" in fixed and "class _CompactList" in fixed, out
    code, out = run_dllint(after, ["check", "--select", "DL101", "--target-version", "py311"])
    assert code == 0, out  # nothing left to report
    return base, before, after


def test_fix_removes_copy_on_read_growth(project, tmp_path):
    base, before, after = project
    kind, list_size, list_growth = measure(before, tmp_path, "list")
    assert kind == "list"
    kind, packed_size, packed_growth = measure(after, tmp_path, "packed")
    assert kind == "_CompactList"
    # what a worker's own run adds whatever the data (its batches, the allocator reusing pages it
    # shares with the parent): the same loader over a thousand paths (1-3 MB on some machines)
    _, _, idle = measure(before, tmp_path, "baseline", n=1_000)
    noise = max(idle)
    # 600k ~60-char str objects are ~60 MB; each worker reads half of them
    assert len(list_growth) == len(packed_growth) == 2
    assert min(list_growth) > 8_000, (list_growth, packed_growth)  # KiB
    # >= 95% of the growth the data causes is gone
    assert (max(packed_growth) - noise) * 20 <= min(list_growth) - noise, (list_growth, packed_growth, idle)
    assert packed_size < list_size
    print(f"private growth per worker (KiB): list {list_growth}, packed {packed_growth}; bytes {list_size} -> {packed_size}")


def test_skewed_lengths_never_take_more_memory(project, tmp_path):
    """One 1,000,000-character path among 600k short ones: a fixed-width array would pad every
    element to the longest (4 bytes a character: 1.2 TB); the packed list stays smaller than the
    list, and the workers still do not grow."""
    base, before, after = project
    kind, list_size, list_growth = measure(before, tmp_path, "list_skewed", long_one=1_000_000)
    assert kind == "list"
    kind, packed_size, packed_growth = measure(after, tmp_path, "packed_skewed", long_one=1_000_000)
    assert kind == "_CompactList"
    assert packed_size <= list_size, (list_size, packed_size)
    assert max(packed_growth) <= min(list_growth), (list_growth, packed_growth)
