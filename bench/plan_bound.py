"""What planning's rounds cost: a run beside the same run given its final plan up front.

The engine parses the files with trigger words (or a named file), then asks rounds of demands on
models of what is parsed so far, each round and each link of a chase a model of its own
(dllint/program/plan.py, ``Engine._chase``). This measures how far an ideal planner, one that knew
the files the run will end up analysing, could bring a cold run: the second run's first round of
demands is answered with those files at once (no question asked), the following round finds
nothing new, and the rules run on that model.

    python bench/plan_bound.py ROOT [FILE] [--runs 3]

Runs in this process with the dllint on ``sys.path`` (as ``bench/facts_equiv.py``), from ROOT,
``check --no-cache --select ALL`` of ``.`` or of FILE (what a pre-commit hook runs); prints the
wall time of each kind of run (best of ``--runs``), the files analysed and whether both printed
the same findings (they must: else the bound means nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time


def _run(args: list[str], hint: set[str] | None) -> tuple[float, set[str], str]:
    import dllint.engine as engine
    from dllint.cli import main

    original = engine.Engine._demands
    analysed: set[str] = set()
    first = [True]

    def demands(self, index, data, facts, *rest, **kw):
        if hint is not None and first[0]:
            first[0] = False
            return {p for p in hint if p not in facts}
        found = original(self, index, data, facts, *rest, **kw)
        if not found:
            analysed.update(facts)
        return found

    engine.Engine._demands = demands
    out = io.StringIO()
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out):
            main(["check", "--no-cache", "--select", "ALL", "--output-format", "concise", "--exit-zero", "-q", *args])
    except SystemExit:
        pass
    finally:
        engine.Engine._demands = original
    return time.perf_counter() - start, analysed, out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("file", nargs="?")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.chdir(args.root)
    target = [args.file] if args.file else ["."]
    _run(target, None)  # warm-up: the page cache, the imports
    plain, ideal = [], []
    found_plain = found_ideal = ""
    analysed: set[str] = set()
    for _ in range(args.runs):
        spent, analysed, found_plain = _run(target, None)
        plain.append(spent)
        spent, _, found_ideal = _run(target, analysed)
        ideal.append(spent)
    same = found_plain == found_ideal
    print(f"{' '.join(target)}: {len(analysed)} files analysed")
    print(f"  as planned now:     {min(plain):.2f} s (best of {args.runs})")
    print(f"  plan known up front: {min(ideal):.2f} s (best of {args.runs}); same findings: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
