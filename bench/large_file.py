"""Cost of one large generated module: time and peak memory of `dllint` (check) and `dllint --fix`
(one safe fix on one line) against the file's size, to see that both grow linearly.

    python bench/large_file.py                 # 1.5, 3, 6 and 12 MB
    python bench/large_file.py 3 12 --runs 1   # chosen sizes (MB)

Each size is a fresh project (a `.git` marker) holding `gen.py`: a Dataset and a DataLoader with
`persistent_workers=True` and `num_workers=0` (DL304, a safe fix), then generated functions,
classes and tuple constants up to the size. dllint runs as a separate process with `--no-cache
--select ALL`; peak memory is the kernel's maximum resident size of the child (``wait4``).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HEAD = '''import torch
from torch.utils.data import DataLoader, Dataset


class Table(Dataset):
    def __init__(self):
        self.rows = ROWS

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


loader = DataLoader(Table(), num_workers=0, persistent_workers=True)

'''


def generate(path: str, size: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    parts = [HEAD]
    total = len(HEAD)
    i = 0
    while total < size:
        if i % 3 == 0:
            values = ", ".join(str(rng.randint(0, 999)) for _ in range(8))
            s = (
                f"def generated_{i}(a, b=None):\n    x = a + {i}\n    if b is not None:\n        x = x * b\n"
                f"    return {{'k{i}': x, 'name': 'generated_{i}', 'values': [{values}]}}\n\n\n"
            )
        elif i % 3 == 1:
            s = f"class Generated{i}:\n    field_{i} = {i}\n\n    def method(self, y):\n        return self.field_{i} + y\n\n\n"
        else:
            s = f"CONST_{i} = ({', '.join(repr(str(rng.random())) for _ in range(6))})\n"
        parts.append(s)
        total += len(s)
        i += 1
    parts.append("ROWS = [CONST_2, CONST_5]\n")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("".join(parts))


def run_one(cmd: list[str], cwd: str) -> tuple[float, float, int, str]:
    """Run in a fresh helper process so ru_maxrss is this command's own peak."""
    helper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "e = time.perf_counter() - t\n"
        "m = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "tail = (p.stderr.decode(errors='replace').strip().splitlines() or [''])[-1]\n"
        "print(json.dumps([e, m, p.returncode, tail]))\n"
    )
    import json

    proc = subprocess.run([sys.executable, "-c", helper, *cmd], cwd=cwd, capture_output=True, text=True)
    e, m, rc, tail = json.loads(proc.stdout)
    return e, m, rc, tail


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", nargs="*", type=float, default=[1.5, 3, 6, 12], help="file sizes in MB")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--no-fix", action="store_true")
    parser.add_argument("--limit", type=float, default=1000, help="max-file-size for the run (MB; default 1000, i.e. analyse everything)")
    parser.add_argument("--dllint", default=f"{sys.executable} -m dllint")
    args = parser.parse_args()
    dllint = args.dllint.split()
    rows = []
    for mb in args.sizes:
        work = tempfile.mkdtemp(prefix="dllint-large-")
        try:
            os.mkdir(os.path.join(work, ".git"))
            if args.limit is not None:  # analyse files over the default max-file-size too
                with open(os.path.join(work, "pyproject.toml"), "w") as fh:
                    fh.write(f"[tool.dllint]\nmax-file-size = {args.limit}\n")
            path = os.path.join(work, "gen.py")
            generate(path, int(mb * 1_000_000))
            original = open(path, "rb").read()
            for mode in ("check", "fix") if not args.no_fix else ("check",):
                best = None
                for _ in range(args.runs):
                    with open(path, "wb") as fh:
                        fh.write(original)
                    extra = ["--fix"] if mode == "fix" else []
                    e, m, rc, tail = run_one([*dllint, "--no-cache", "--select", "ALL", *extra, "gen.py"], work)
                    if best is None or e < best[0]:
                        best = (e, m, rc, tail)
                e, m, rc, tail = best
                rows.append((mb, mode, e, m, rc, tail))
                print(f"{mb:6.1f} MB  {mode:5}  {e:7.2f} s  {m:8.0f} MB peak  exit {rc}  {tail[:90]}", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
