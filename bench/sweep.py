"""dllint on every repository under a folder, the ways users run it, looking for what must never
happen: an internal error or a warning (exit 2, text on standard error), a fix that leaves a file
that no longer parses, a cached run that prints what a run without the cache does not, a named
file that takes long.

    python bench/sweep.py REPOS_DIR [--mode check|fix|cache|named|prefilter] [--compare DIR] [--dllint DIR]
                          [--min-files N] [--max-files N] [--per-repo K] [--slow S]

- ``check`` (default): ``dllint check REPO --no-cache --select ALL`` on each repository. With
  ``--compare DIR`` (another dllint, e.g. ``git archive HEAD~1 dllint | tar -x -C DIR``) that one
  runs too, and each repository whose output differs is listed (a change meant to keep every
  finding, checked on the whole corpus).
- ``fix``: a copy of each repository with a finding marked ``[*]`` gets ``--fix --unsafe-fixes``;
  every Python file it changed must still parse (unless the original did not either), and a
  check afterwards counts the findings still marked fixable (a fix withheld with a warning).
  Warnings that a fix was withheld are designed (its fixed file would add a finding) unless the
  reason is that the fixed file would not parse: those are listed as problems.
- ``cache``: on a copy of each repository, a run with the cache (cold, then warm), one after a
  comment is appended to a file naming ``Dataset`` or ``DataLoader`` (its facts unchanged) and one
  after a line of code is appended to it (``_dllint_sweep_edit = 1``: its facts change); then the
  same two edits to a random file naming neither (most often one the analysis leaves out: the
  early cutoff asks planning's questions of it again), and a third that makes it name
  ``DataLoader`` in its code; last, a random notebook as if run again (an output added), and
  one whose JSON names ``DataLoader`` (most likely analysed, its findings shown in its cells): each
  must print what a run without the cache prints for the same
  files (a stale or mixed-up cache entry). The times of the cold run and of the other file's code
  edit are summed over the repositories, and those of the notebook naming ``DataLoader`` run
  again beside the cold runs of the repositories holding one.
- ``prefilter``: the run as users make it against one parsing every file (``--no-prefilter``):
  the pre-filter and planning must not change a finding (docs/architecture.md). DL000 lines are
  left out of the comparison: a syntax error in a file the run need not parse is not reported by
  design (README, "not a syntax checker"). Each repository whose findings differ is listed with
  the count of lines only one run prints, and the lines themselves with ``--show``.
- ``named``: ``--per-repo`` files of each repository (those naming ``Dataset`` or ``DataLoader``
  first, one other), each checked alone with ``--no-cache``, as a pre-commit hook runs it; the
  runs over ``--slow`` seconds are listed.

One run each; prints one line per problem and a summary, exit 1 when there is any problem (or
an output differs under ``--compare``). ``--dllint DIR`` runs the dllint of another folder
instead of this checkout's.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import ENV  # noqa: E402
from survey import python_files  # noqa: E402

WITHHELD_UNPARSABLE = "would not parse"


def dllint(folder: str, args: list[str], cwd: str, timeout: int = 600) -> tuple[int, str, str, float]:
    """(exit status, standard output, standard error, seconds) of the dllint under ``folder``."""
    env = dict(ENV, PYTHONPATH=folder + os.pathsep + ENV.get("PYTHONPATH", ""))
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "dllint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "", f"timed out after {timeout} s", time.perf_counter() - start
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - start


CHECK = ["check", "--no-cache", "--select", "ALL", "--output-format", "concise", "-q", "--exit-zero"]


def _parses(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            ast.parse(fh.read())
        return True
    except (SyntaxError, ValueError, OSError):
        return False


def _sources(root: str) -> dict[str, bytes]:
    out = {}
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                with open(path, "rb") as fh:
                    out[os.path.relpath(path, root)] = fh.read()
    return out


def sweep_check(root: str, own: str, compare: str | None) -> tuple[list[str], dict]:
    rc, out, err, seconds = dllint(own, [*CHECK, "."], root)
    problems = [f"exit {rc}: {err.strip()[:300]}"] if rc != 0 else ([f"stderr: {err.strip()[:300]}"] if err.strip() else [])
    info = {"seconds": seconds, "fixable": out.count("[*]")}
    if compare:
        rc_b, out_b, _err_b, _ = dllint(compare, [*CHECK, "."], root)
        if (rc_b, out_b) != (rc, out):
            problems.append("output differs from --compare's")
    return problems, info


def sweep_prefilter(root: str, own: str, show: bool) -> tuple[list[str], dict]:
    rc, out, err, seconds = dllint(own, [*CHECK, "."], root)
    problems = [f"exit {rc}: {err.strip()[:300]}"] if rc != 0 else ([f"stderr: {err.strip()[:300]}"] if err.strip() else [])
    rc_a, out_a, err_a, seconds_a = dllint(own, [*CHECK, "--no-prefilter", "."], root, timeout=1800)
    if rc_a != 0:
        problems.append(f"--no-prefilter exit {rc_a}: {err_a.strip()[:300]}")
    kept = [{line for line in text.splitlines() if line.strip() and ": DL000 " not in line} for text in (out, out_a)]  # (a notebook's: "path:cell 3:line 2:1: DL000 ...")
    only = sorted(kept[0] - kept[1]), sorted(kept[1] - kept[0])
    shown = []
    if rc_a == 0 and (only[0] or only[1]):
        problems.append(f"findings differ: {len(only[0])} only filtered, {len(only[1])} only with every file parsed")
        if show:
            shown = [f"  filtered:   {line}" for line in only[0]] + [f"  every file: {line}" for line in only[1]]
    return problems, {"seconds": seconds, "every file": seconds_a, "shown": shown}


def sweep_fix(root: str, own: str) -> tuple[list[str], dict]:
    rc, out, err, _ = dllint(own, [*CHECK, "."], root)
    if rc != 0 or "[*]" not in out:
        return ([f"exit {rc}: {err.strip()[:300]}"] if rc != 0 else []), {"fixable": 0}
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "repo")
        shutil.copytree(root, work, ignore=shutil.ignore_patterns(".git", ".dllint_cache"), symlinks=True)
        before = _sources(work)
        rc, _out, err, _ = dllint(own, ["check", ".", "--no-cache", "--select", "ALL", "-q", "--exit-zero", "--fix", "--unsafe-fixes"], work)
        if rc != 0:
            problems.append(f"--fix exit {rc}: {err.strip()[:300]}")
        problems += [f"--fix: {line.strip()}" for line in err.splitlines() if WITHHELD_UNPARSABLE in line]
        after = _sources(work)
        changed = [p for p, text in after.items() if before.get(p) != text]
        for rel in changed:
            original_parses = rel not in before or _parses(os.path.join(root, rel))
            if original_parses and not _parses(os.path.join(work, rel)):
                problems.append(f"--fix left {rel} unparsable")
        rc, out2, err, _ = dllint(own, [*CHECK, "."], work)
        if rc != 0:
            problems.append(f"check after --fix: exit {rc}: {err.strip()[:300]}")
    return problems, {"fixable": out.count("[*]"), "changed": len(changed), "left": out2.count("[*]")}


def sweep_cache(root: str, own: str, rng: random.Random) -> tuple[list[str], dict]:
    problems: list[str] = []
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "repo")
        shutil.copytree(root, work, ignore=shutil.ignore_patterns(".git", ".dllint_cache"), symlinks=True)
        cached = ["check", "--cache-dir", os.path.join(tmp, "cache"), *CHECK[2:], "."]
        sources = sorted(_sources(work).items())
        edited = next((rel for rel, text in sources if b"DataLoader" in text or b"Dataset" in text), None)
        others = [rel for rel, text in sources if b"DataLoader" not in text and b"Dataset" not in text]
        other = rng.choice(others) if others else None
        notebooks = sorted(
            os.path.relpath(os.path.join(d, f), work) for d, dirs, names in os.walk(work) for f in names if f.endswith(".ipynb")
        )
        notebook = rng.choice(notebooks) if notebooks else None
        # one building a DataLoader: most likely one the run analyses (its findings show its cells)
        loading = [rel for rel in notebooks if b"DataLoader" in _read(os.path.join(work, rel))]
        analysed = rng.choice(loading) if loading else None
        steps = [
            ("cold", None, None),
            ("warm", None, None),
            ("comment", edited, b"\n# dllint sweep: a comment\n"),
            ("code edit", edited, b"\n_dllint_sweep_edit = 1\n"),
            ("other comment", other, b"\n# dllint sweep: a comment\n"),
            ("other code edit", other, b"\n_dllint_sweep_edit = 1\n"),
            ("other names DataLoader", other, b"\n_dllint_sweep_name = 'DataLoader'\n"),
            ("notebook run again", notebook, _run_again),
            ("DataLoader notebook run again", analysed, _run_again),
        ]
        for label, target, append in steps:
            if append is not None:
                if target is None:
                    continue
                if callable(append):
                    append(os.path.join(work, target))
                else:
                    with open(os.path.join(work, target), "ab") as fh:
                        fh.write(append)
            rc, out, err, seconds = dllint(own, cached, work)
            times[label] = seconds
            rc_n, out_n, _err_n, _ = dllint(own, [*CHECK, "."], work)
            if rc != 0 or err.strip():
                problems.append(f"{label}: exit {rc}: {err.strip()[:300]}")
            elif (rc, out) != (rc_n, out_n):
                problems.append(f"{label}: output differs from a run without the cache")
    return problems, times


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _run_again(path: str) -> None:
    """A notebook as if run again: a stream output added to its first code cell (the JSON
    rewritten; a notebook that is not JSON is left as it is)."""
    try:
        with open(path, encoding="utf-8") as fh:
            nb = json.load(fh)
        cell = next(c for c in nb["cells"] if c.get("cell_type") == "code")
        cell.setdefault("outputs", []).append({"name": "stdout", "output_type": "stream", "text": ["dllint sweep\n"]})
    except (OSError, ValueError, KeyError, TypeError, AttributeError, StopIteration):
        return
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(nb, fh, indent=1)


def _named_files(root: str, k: int, rng: random.Random) -> list[str]:
    hot, other = [], []
    for rel, text in sorted(_sources(root).items()):
        (hot if (b"DataLoader" in text or b"Dataset" in text) else other).append(rel)
    return rng.sample(hot, min(max(k - 1, 1), len(hot))) + rng.sample(other, min(1, len(other)))


def sweep_named(root: str, own: str, k: int, slow: float, rng: random.Random) -> tuple[list[str], dict]:
    problems, times = [], []
    for rel in _named_files(root, k, rng):
        rc, _out, err, seconds = dllint(own, ["check", "--no-cache", "--select", "ALL", "-q", "--exit-zero", rel], root)
        times.append(seconds)
        if rc != 0:
            problems.append(f"{rel}: exit {rc}: {err.strip()[:300]}")
        elif err.strip():
            problems.append(f"{rel}: stderr: {err.strip()[:300]}")
        elif seconds > slow:
            problems.append(f"{rel}: {seconds:.2f} s")
    return problems, {"files": len(times), "slowest": max(times, default=0.0)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos_dir")
    parser.add_argument("--mode", choices=("check", "fix", "cache", "named", "prefilter"), default="check")
    parser.add_argument("--compare", help="another dllint's folder (holding dllint/): outputs compared (check)")
    parser.add_argument("--dllint", default=os.path.dirname(HERE), help="the folder holding the dllint to run")
    parser.add_argument("--min-files", type=int, default=1)
    parser.add_argument("--max-files", type=int, default=10**9)
    parser.add_argument("--per-repo", type=int, default=4, help="named: files per repository")
    parser.add_argument("--show", action="store_true", help="prefilter: print the lines that differ")
    parser.add_argument("--slow", type=float, default=1.0, help="named: seconds over which a run is listed")
    args = parser.parse_args(argv)
    own = os.path.abspath(args.dllint)
    compare = os.path.abspath(args.compare) if args.compare else None
    rng = random.Random(7)
    repos = found = 0
    totals: dict[str, float] = {}
    for name in sorted(os.listdir(args.repos_dir)):
        root = os.path.join(args.repos_dir, name)
        if not os.path.isdir(root) or not args.min_files <= python_files(root) <= args.max_files:
            continue
        repos += 1
        shown: list[str] = []
        print(f"  {name}", file=sys.stderr, flush=True)
        if args.mode == "check":
            problems, _info = sweep_check(root, own, compare)
        elif args.mode == "fix":
            problems, _info = sweep_fix(root, own)
        elif args.mode == "prefilter":
            problems, info = sweep_prefilter(root, own, args.show)
            for label in ("seconds", "every file"):
                totals[label] = totals.get(label, 0.0) + info[label]
            shown = info["shown"]  # (printed after the problem, not counted as problems)
        elif args.mode == "cache":
            problems, info = sweep_cache(root, own, rng)
            for label in ("cold", "other code edit", "DataLoader notebook run again"):
                if label in info:
                    totals[label] = totals.get(label, 0.0) + info[label]
            if "DataLoader notebook run again" in info:  # (its repositories' cold runs, beside it)
                totals["cold, those with one"] = totals.get("cold, those with one", 0.0) + info["cold"]
        else:
            problems, _info = sweep_named(root, own, args.per_repo, args.slow, rng)
        for problem in problems:
            print(f"{name}: {problem}")
        for line in shown:
            print(f"{name}: {line}")
        found += len(problems)
    print(f"{args.mode}: {repos} repositories, {found} problem(s)")
    if totals:  # (cache, prefilter)
        print("seconds in all: " + ", ".join(f"{label} {t:.1f}" for label, t in totals.items()))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
