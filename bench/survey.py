"""dllint cold beside ruff on every repository under a folder, the slowest ratios first: the
outliers a table of four repositories does not show (MONAI's 34 s against ruff's 0.3 s).

    python bench/survey.py REPOS_DIR [--min-files N] [--max-files N] [--compare DIR] [--ruff RUFF]

For each folder of REPOS_DIR holding at least N (default 200) Python files: ``ruff check
--no-cache --isolated`` (default rules), then ``dllint check --no-cache --select ALL`` (this
checkout's dllint), each once; prints files, ruff s, dllint s, the ratio and dllint's peak memory
(the process tree), sorted by ratio. With ``--compare DIR`` (another dllint, e.g.
``git archive HEAD~1 dllint | tar -x -C DIR``), runs that one first and says whether the outputs
are equal, with its time: a change meant to keep every finding is checked on the same repositories
it is timed on.
One run each: a survey finds outliers; ``bench/run.py`` measures a row.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import ENV, measure


def python_files(root: str) -> int:
    n = 0
    for _directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        n += sum(name.endswith(".py") for name in names)
    return n


def survey(repos_dir: str, min_files: int, max_files: int, ruff: str, compare: str | None) -> list[dict]:
    check = [sys.executable, "-m", "dllint", "check", "--select", "ALL", "--output-format", "concise", "-q", "--exit-zero", "--no-cache", "."]
    own = dict(ENV, PYTHONPATH=os.path.dirname(HERE) + os.pathsep + ENV.get("PYTHONPATH", ""))
    rows = []
    for name in sorted(os.listdir(repos_dir)):
        root = os.path.join(repos_dir, name)
        if not os.path.isdir(root):
            continue
        files = python_files(root)
        if not min_files <= files <= max_files:
            continue
        print(f"  {name} ({files} files)", file=sys.stderr, flush=True)
        row = {"repo": name, "files": files}
        row["ruff"] = measure([ruff, "check", "--no-cache", "--isolated", "--exit-zero", "-q", "."], root)["wall"]
        if compare:
            before = measure(check, root, dict(ENV, PYTHONPATH=os.path.abspath(compare)))
        run = measure(check, root, own)
        row.update(dllint=run["wall"], mb=run["peak_tree"] / 2**20, rc=run["rc"])
        row["ratio"] = row["dllint"] / row["ruff"] if row["ruff"] > 0 else float("inf")
        if compare:
            row["same"] = before["output"] == run["output"] and before["rc"] == run["rc"]
            row["before"] = before["wall"]
        rows.append(row)
    rows.sort(key=lambda r: -r["ratio"])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos_dir")
    parser.add_argument("--min-files", type=int, default=200)
    parser.add_argument("--max-files", type=int, default=10**9)
    parser.add_argument("--compare", help="another dllint's folder (holding dllint/): outputs compared")
    parser.add_argument("--ruff", default="ruff")
    args = parser.parse_args(argv)
    rows = survey(args.repos_dir, args.min_files, args.max_files, args.ruff, args.compare)
    head = "| repository | files | ruff | dllint cold | ratio | peak memory |" + (" compared dllint | same output |" if args.compare else "")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        line = f"| {r['repo']} | {r['files']} | {r['ruff']:.2f} s | {r['dllint']:.2f} s | {r['ratio']:.1f}x | {r['mb']:.0f} MB |"
        if args.compare:
            line += f" {r['before']:.2f} s |" + (" yes |" if r["same"] else " **no** |")
        print(line)
    return 1 if args.compare and not all(r["same"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
