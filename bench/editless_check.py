"""Do runs printing no edits mark the same fixes as runs building them?

A ``check`` in the text formats (``Engine.edits`` False) decides whether a finding has a fix from
the facts, without libcst; a run building edits (JSON, ``--fix``, ``--diff``) asks libcst. This
runs both on each root (whole project, no cache, every rule) and compares, finding by finding,
whether a fix exists, its applicability and its message.

    python bench/editless_check.py ROOT [ROOT ...]
    python bench/editless_check.py --fuzz 1 12     # bench/fuzz.py's projects, seeds 1 to 12
                                                   # (400 modules each, laid out 50 per project)

Prints each difference and, per root, the findings and fixes compared; exits 1 when a fix's
existence or applicability differs.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dllint.config import Settings  # noqa: E402
from dllint.engine import Engine  # noqa: E402


def findings(root: str, edits: bool) -> dict:
    engine = Engine(Settings(), root, jobs=2, cache=None)
    engine.edits = edits
    result = engine.analyse(engine.project_files(), {r.code for r in engine.rules})
    return {(d.path, d.span.row, d.span.col, d.code, d.message): d.fix for d in result.diagnostics}


def main(roots: list[str]) -> int:
    bad = 0
    for root in map(os.path.abspath, roots):
        plain, built = findings(root, False), findings(root, True)
        if plain.keys() != built.keys():
            bad += 1
            print(f"FINDINGS DIFFER in {root}: {sorted(set(plain) ^ set(built))[:5]}")
            continue
        for key, fix in plain.items():
            other = built[key]
            mark = None if fix is None else fix.applicability
            expected = None if other is None else other.applicability
            where = f"{key[3]} {os.path.relpath(key[0], root)}:{key[1]}"
            if mark != expected:
                bad += 1
                print(f"FIX DIFFERS {where}: {mark} without edits, {expected} with them")
            elif fix is not None and fix.message != other.message:
                print(f"message differs {where}: {fix.message!r} / {other.message!r}")
        print(f"{root}: {len(plain)} findings, {sum(f is not None for f in plain.values())} with fixes")
    return 1 if bad else 0


def fuzzed(first: int, last: int, work: str) -> list[str]:
    """bench/fuzz.py's generated modules (no hypothesmith), seeds ``first``..``last``, laid out as
    projects of 50 modules under ``work``: odd keyword arguments, lambdas, comments, line endings."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("bench_fuzz", os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz.py"))
    fuzz = importlib.util.module_from_spec(spec)
    sys.modules["bench_fuzz"] = fuzz
    spec.loader.exec_module(fuzz)
    roots = []
    for seed in range(first, last + 1):
        mods = fuzz.modules(400, seed, False)
        for i in range(0, len(mods), 50):
            root = Path(work) / f"s{seed}" / f"p{i}"
            fuzz.layout(root, mods[i : i + 50])
            roots.append(str(root))
    return roots


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--fuzz"]:
        import tempfile

        args = fuzzed(int(args[1]), int(args[2]), tempfile.mkdtemp(prefix="dllint-editless-"))
    sys.exit(main(args))
