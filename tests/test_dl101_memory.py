"""DL101 memory proof: a Dataset holding a few hundred thousand paths in a list, iterated by forked
DataLoader workers, makes every worker's private memory grow (copy-on-read: reading an element
writes its refcount, so the page is copied); after ``dllint --fix`` turned the list into a numpy str
array, the same iteration leaves the workers' private memory flat.

Private memory = Private_Clean + Private_Dirty of ``/proc/<pid>/smaps_rollup``, read once when the
worker starts (worker_init_fn) and once after the epoch (persistent workers are still alive).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from golden import run_dllint

pytest.importorskip("torch")
pytest.importorskip("numpy")
if not Path("/proc/self/smaps_rollup").exists():  # pragma: no cover - Linux only
    pytest.skip("needs /proc/<pid>/smaps_rollup (Linux)", allow_module_level=True)

N = 300_000

DATASET = '''"""A few hundred thousand image paths, read one by one in workers."""

import torch.utils.data as tud


class Paths(tud.Dataset):
    def __init__(self, n):
        self.paths = [f"/datasets/imagenet/train/n{i % 1000:08d}/n{i % 1000:08d}_{i:09d}.JPEG" for i in range(n)]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        return len(self.paths[index])
'''

MEASURE = r"""
import os, sys
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

marks = sys.argv[2]

def init(worker_id):
    with open(os.path.join(marks, str(os.getpid())), "w") as fh:
        fh.write(str(private_kb(os.getpid())))

dataset = paths_dataset.Paths(int(sys.argv[3]))
loader = DataLoader(dataset, batch_size=1000, num_workers=2, persistent_workers=True,
                    worker_init_fn=init, multiprocessing_context="fork")
it = iter(loader)
total = sum(int(batch.sum()) for batch in it)
assert total == sum(len(p) for p in dataset.paths), "every element was read"
growth = []
for worker in it._workers:
    start = int(open(os.path.join(marks, str(worker.pid))).read())
    growth.append(private_kb(worker.pid) - start)
print(type(dataset.paths).__name__, *growth)
"""


def measure(directory: Path, tmp_path: Path, name: str) -> tuple[str, list[int]]:
    marks = tmp_path / f"marks_{name}"
    marks.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(directory), str(marks), str(N)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    kind, *growth = proc.stdout.split()
    return kind, [int(g) for g in growth]


def test_fix_removes_copy_on_read_growth(tmp_path):
    work = tmp_path / "project"
    work.mkdir()
    (work / ".git").mkdir()  # the project root
    source = work / "paths_dataset.py"
    source.write_text(DATASET)

    kind, list_growth = measure(work, tmp_path, "list")
    assert kind == "list"

    code, out = run_dllint(work, ["check", "--select", "DL101", "--fix", "--target-version", "py311"])
    fixed = source.read_text()
    assert "dtype=np.str_" in fixed and "import numpy as np" in fixed, out
    code, out = run_dllint(work, ["check", "--select", "DL101", "--target-version", "py311"])
    assert code == 0, out  # nothing left to report

    kind, array_growth = measure(work, tmp_path, "array")
    assert kind == "ndarray"

    # 300k ~60-char str objects are ~30 MB; each worker reads half of them
    assert len(list_growth) == len(array_growth) == 2
    assert min(list_growth) > 8_000, (list_growth, array_growth)  # KiB
    assert max(array_growth) * 4 < min(list_growth), (list_growth, array_growth)
    print(f"private growth per worker (KiB): list {list_growth}, array {array_growth}")
