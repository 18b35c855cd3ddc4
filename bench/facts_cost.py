"""What a cold run's scan costs at least: the pre-filter and the facts of every file it selects,
one file after the other in this process.

A cold run of a project reads every file, keeps those whose code holds a trigger word (the
pre-filter: a byte test, then the code words of the files that pass it) and computes their
facts in worker processes before planning asks its first question. This measures that work
alone, serially and without the pool, so that the least wall time of the scan on ``--jobs``
processes can be set beside ruff's: the CPU seconds of the byte test, of the files whose code
words decide, of the facts (per MB, and the slowest files), and the floor they give.

    python bench/facts_cost.py ROOT [--jobs 2] [--top 5]

Runs in this process with the dllint on ``sys.path`` (as ``bench/plan_bound.py``); the files are
those ``dllint check ROOT`` discovers, with the project's settings.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time


def measure(root: str) -> dict:
    """The costs (CPU seconds of this process) of the pre-filter and of the facts of the files
    it selects under ``root``."""
    from dllint.commands.check import load_configuration
    from dllint.config import Overrides
    from dllint.discover import discover, module_name
    from dllint.engine import Engine
    from dllint.facts.extract import extract
    from dllint.names import DATALOADER_CLASSES
    from dllint.prefilter import code_words
    from dllint.rules import all_rules

    settings, project_root = load_configuration([root], None, Overrides(select=["ALL"]))
    triggers = Engine(settings, project_root).triggers
    paths = [p for p in discover([root], project_root, settings.all_excludes, settings.respect_gitignore) if p.endswith(".py")]
    was = gc.isenabled()
    gc.disable()  # (as a run: dllint/engine.py, ``Engine.analyse``)
    try:
        blobs = {}
        for path in paths:
            with open(path, "rb") as fh:
                blobs[path] = fh.read()
        start = time.process_time()
        quick = {path: triggers.from_bytes(data) for path, data in blobs.items()}
        byte_test = time.process_time() - start
        undecided = [path for path, verdict in quick.items() if verdict is None]
        start = time.process_time()
        selected = [p for p in paths if quick[p]]
        for path in undecided:
            words = code_words(blobs[path])
            if words is None or triggers.in_words(words):
                selected.append(path)
        code_test = time.process_time() - start
        rules = all_rules()
        costs = []
        for path in selected:
            name = module_name(path)
            start = time.process_time()
            extract(path, name.module, name.root, name.is_package, blobs[path], rules, DATALOADER_CLASSES, frozenset())
            costs.append((time.process_time() - start, len(blobs[path]), path))
    finally:
        if was:
            gc.enable()
    return {
        "files": len(paths),
        "byte_test": byte_test,
        "undecided": len(undecided),
        "code_test": code_test,
        "selected": len(selected),
        "facts": sum(c for c, _n, _p in costs),
        "bytes": sum(n for _c, n, _p in costs),
        "costs": sorted(costs, reverse=True),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes of the scan (default: the CPUs)")
    parser.add_argument("--top", type=int, default=5, help="the slowest files listed")
    args = parser.parse_args(argv)
    found = measure(os.path.abspath(args.root))
    megabytes = found["bytes"] / 1e6
    print(f"{args.root}: {found['files']} files, {found['selected']} selected by the pre-filter ({megabytes:.1f} MB)")
    print(f"  byte test of every file:      {found['byte_test']:.2f} s of CPU")
    print(f"  code words of {found['undecided']} files:     {found['code_test']:.2f} s of CPU (a cold run reads them from the facts' parse)")
    rate = found["facts"] / megabytes if megabytes else 0.0
    print(f"  facts of the selected files:  {found['facts']:.2f} s of CPU ({rate:.2f} s/MB)")
    for spent, size, path in found["costs"][: args.top]:
        print(f"    {spent * 1000:7.1f} ms {size / 1000:7.1f} KB  {os.path.relpath(path, args.root)}")
    floor = (found["byte_test"] + found["facts"]) / max(1, args.jobs)
    print(f"  the scan on {args.jobs} processes: at least {floor:.2f} s of wall time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
