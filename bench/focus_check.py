"""Does analysing a file alone (``dllint check FILE``, as pre-commit and the editor run it) find
what the whole-project run finds in that file?

    python bench/focus_check.py REPO [--sample N] [--seed S] [--jobs J]

    python bench/focus_check.py REPO --folders K [--max-folder-files M] [--sample 0 --limit -1]

Runs the whole project once (no cache), then each file that has a finding, plus N sampled files
the pre-filter selects that have none, alone (``Engine.analyse([file], explicit={file})``, no
cache), and prints per file the findings only one of the two runs has and the time of the run
alone. Findings are compared by (path, row, column, code, message, fix applicability).

``--folders K``: K folders holding a file with a finding (its folder or the one above, at most
``--max-folder-files`` Python files below it), each folder's Python files named together, as a
pre-commit hook names the files of a commit: the findings in those files must be the whole run's.
``--limit -1`` checks no single file.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dllint.config import Settings  # noqa: E402
from dllint.engine import Engine  # noqa: E402


def key(d):
    """A finding with its fix's applicability: a named file's `--fix` (a pre-commit hook) must not
    apply a fix the whole project's run would hold back as unsafe."""
    return (d.path, d.span.row, d.span.col, d.code, d.message, d.fix.applicability if d.fix is not None else "no fix")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="at most this many files with findings (-1: none)")
    parser.add_argument("--folders", type=int, default=0, help="folders whose files are named together")
    parser.add_argument("--max-folder-files", type=int, default=150)
    args = parser.parse_args()
    root = os.path.abspath(args.repo)
    engine = Engine(Settings(), root, jobs=args.jobs, cache=None)
    enabled = {r.code for r in engine.rules}
    files = engine.project_files()
    start = time.perf_counter()
    whole = engine.analyse(files, enabled)
    print(f"whole project: {len(whole.diagnostics)} findings, {whole.analysed} files parsed, {time.perf_counter() - start:.1f} s")
    by_file: dict[str, set] = {}
    for d in whole.diagnostics:
        by_file.setdefault(d.path, set()).add(key(d))
    chosen = sorted(by_file)
    if args.limit:
        chosen = chosen[: max(args.limit, 0)]
    rest = sorted(p for p in files if p not in by_file and p.endswith(".py") and engine.triggers(open(p, "rb").read()))
    random.Random(args.seed).shuffle(rest)
    chosen += rest[: args.sample]
    units = [[p] for p in chosen] + _folders(root, files, by_file, args)
    same = differ = 0
    times = []
    for unit in units:
        engine = Engine(Settings(), root, jobs=args.jobs, cache=None)
        start = time.perf_counter()
        alone = engine.analyse(unit, enabled, None, set(unit))
        took = time.perf_counter() - start
        times.append(took)
        got = {key(d) for d in alone.diagnostics if d.code != "DL000"}
        want = {k for path in unit for k in by_file.get(path, set()) if k[3] != "DL000"}
        rel = os.path.relpath(unit[0], root) if len(unit) == 1 else f"{os.path.relpath(os.path.commonpath(unit), root)}/ ({len(unit)} files)"
        if got == want:
            same += 1
            print(f"same    {took:5.1f} s {alone.analysed:4d} files  {rel} ({len(want)})")
            continue
        differ += 1
        print(f"DIFFER  {took:5.1f} s {alone.analysed:4d} files  {rel}")
        for k in sorted(want - got):
            print(f"   only whole: {os.path.relpath(k[0], root)}:{k[1]}:{k[2]} {k[3]} {k[4]} (fix: {k[5]})")
        for k in sorted(got - want):
            print(f"   only alone: {os.path.relpath(k[0], root)}:{k[1]}:{k[2]} {k[3]} {k[4]} (fix: {k[5]})")
    if not times:
        print("no file to compare (no finding, and --sample 0)")
        return 0
    times.sort()
    print(f"{same} same, {differ} differ; alone: median {times[len(times) // 2]:.2f} s, max {times[-1]:.2f} s")
    return 0


def _folders(root: str, files: list[str], by_file: dict, args) -> list[list[str]]:
    """``args.folders`` folders (sampled) holding a file with a finding, or the folder above one,
    each as the sorted Python files below it (at most ``args.max_folder_files``)."""
    if not args.folders:
        return []
    python = [p for p in files if p.endswith(".py")]
    candidates = set()
    for path in by_file:
        folder = os.path.dirname(path)
        for _ in range(2):
            if folder == root or not folder.startswith(root + os.sep):
                break
            candidates.add(folder)
            folder = os.path.dirname(folder)
    units = []
    for folder in sorted(candidates):
        below = sorted(p for p in python if p.startswith(folder + os.sep))
        if 2 <= len(below) <= args.max_folder_files:
            units.append(below)
    random.Random(args.seed).shuffle(units)
    return units[: args.folders]


if __name__ == "__main__":
    raise SystemExit(main())
