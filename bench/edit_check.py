"""Random code edits with the cache, each checked against a run without it.

    python bench/edit_check.py ROOT [--files 15] [--seed 1]

ROOT is a copy of a repository (its files are edited and restored; the cache lands in it). A
cached run first fills the cache; then, for each of ``--files`` random ``.py`` files, a line of
code (``_dllint_rand_edit = 1``) is appended, a cached run is timed, its output is compared with
a ``--no-cache`` run's, and the file is restored (and run again, so the cache holds the tree as
it was). Prints one line per file (seconds, same or DIFFERS) and a summary; exit 1 when an
output differs. An edit of a file the analysis leaves out keeps the last findings when planning
would ask it the same questions (``Engine._cutoff``): those runs take a fraction of a second.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time

CHECK = [sys.executable, "-m", "dllint", "check", "--select", "ALL", "--output-format", "concise", "-q", "--exit-zero"]


def run(root: str, extra: list[str]) -> tuple[float, str, str]:
    start = time.perf_counter()
    done = subprocess.run([*CHECK, *extra, "."], cwd=root, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done.stdout, done.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root")
    parser.add_argument("--files", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    files = sorted(
        os.path.relpath(os.path.join(d, f), root)
        for d, dirs, names in os.walk(root)
        if ".dllint_cache" not in d.split(os.sep)
        for f in names
        if f.endswith(".py")
    )
    run(root, [])
    picked = random.Random(args.seed).sample(files, min(args.files, len(files)))
    fast = same = 0
    for rel in picked:
        path = os.path.join(root, rel)
        with open(path, "rb") as fh:
            old = fh.read()
        with open(path, "ab") as fh:
            fh.write(b"\n_dllint_rand_edit = 1\n")
        seconds, out, err = run(root, [])
        _, reference, _ = run(root, ["--no-cache"])
        ok = out == reference and not err.strip()
        fast += seconds < 1.0
        same += ok
        print(f"{seconds:6.2f} s {'same' if ok else 'DIFFERS'} {rel}", flush=True)
        with open(path, "wb") as fh:
            fh.write(old)
        run(root, [])
    print(f"{len(picked)} edits: {fast} under 1 s, {same} outputs equal to --no-cache")
    return 0 if same == len(picked) else 1


if __name__ == "__main__":
    sys.exit(main())
