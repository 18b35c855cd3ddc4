"""Whether what the model says a Dataset attribute holds depends on the order questions are asked.

    python bench/order_check.py REPO [REPO...] [--show N]

For each repository: one run (``Engine.analyse``, no cache) gives the analysed files' facts; then
two fresh models of those facts ask ``attr_value`` of every attribute a Dataset class (or one of
its bases) writes, one model in sorted order, the other in the reverse order. Each (class,
attribute) whose answers differ is counted (and the first ``--show`` printed): an answer that
depends on what was asked before it. Evaluation inside a cycle of values (an attribute whose
value is being computed, read again by what it reads) is single-pass (dllint/program/values.py,
``_memo_start`` / ``_memo_finish``), so the cycle's entry point may decide what is seen.
Prints one line per repository and a total; exit 0.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from dllint.config import Settings  # noqa: E402
from dllint.engine import Engine  # noqa: E402
from dllint.program.model import ProgramModel  # noqa: E402


def _pairs(model) -> list[tuple]:
    out = set()
    for ref in model.dataset_classes():
        for r in model.mro(ref):
            for qual in r.cls.methods.values():
                fn = r.file.functions.get(qual)
                if fn is not None and fn.flow is not None:
                    out.update((ref.key, attr) for attr in fn.flow.writes)
    return sorted(out)


def _answers(facts, settings, layout, names_workers: bool, reverse: bool) -> dict:
    model = ProgramModel(facts, settings, layout)
    model.project_names_workers = names_workers
    model.settle()  # (as the rules ask: memoized answers)
    pairs = _pairs(model)
    out = {}
    for key, attr in reversed(pairs) if reverse else pairs:
        out[(key, attr)] = model.attr_value(model._class_of(key), attr)
    return out


def check(root: str) -> tuple[int, list]:
    """(the attributes asked, [(class key, attribute, answer in order, answer in reverse)])."""
    root = os.path.abspath(root)
    settings = Settings()
    engine = Engine(settings, root)
    files = [p for p in engine.project_files() if p.endswith(".py")]
    analysis = engine.analyse(files, {"DL101"})
    model = analysis.project.index
    facts = model._given
    forward = _answers(facts, settings, model.layout, model.project_names_workers, False)
    backward = _answers(facts, settings, model.layout, model.project_names_workers, True)
    differ = [(key, attr, forward[(key, attr)], backward.get((key, attr))) for key, attr in forward if forward[(key, attr)] != backward.get((key, attr))]
    return len(forward), differ


def _short(value) -> str:
    elem = f" of {'/'.join(sorted(value.elem.kinds))}" if value.elem is not None else ""
    return f"{'/'.join(sorted(value.kinds)) or 'nothing'}{elem}, {value.size}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--show", type=int, default=3, help="differing attributes printed per repository")
    args = parser.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    total = total_differ = 0
    for repo in args.repos:
        asked, differ = check(repo)
        total += asked
        total_differ += len(differ)
        print(f"{os.path.basename(os.path.abspath(repo))}: {asked} attributes, {len(differ)} depend on the order")
        for (path, qual), attr, first, second in differ[: args.show]:
            print(f"  {os.path.relpath(path, repo)} {qual}.{attr}: {_short(first)} | reversed: {_short(second)}")
    print(f"total: {total} attributes, {total_differ} depend on the order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
