"""dllint beside ruff: cold, warm, one file touched; median and spread, peak memory, files and lines
per second, ratios; a scaling run (the tree, and the tree twice). See bench/README.md.

    python bench/run.py                 # the installed torch package + a generated typical project
    python bench/run.py PATH [PATH...]  # any trees
    python bench/run.py --repos         # the real ML repositories of bench/repos.csv (see bench/README.md)
    python bench/run.py --runs 7 --no-generated --no-scaling

Each tree is copied (its .py/.pyi files only) under a scratch directory with a ``.git`` marker, so
that directory is the project root for both tools, the cache lands there and the original is never
touched. Within a round the commands alternate: ruff, dllint cold (cache deleted first), dllint warm
(cache present, nothing changed), dllint after one file changed (a comment appended to a file the
pre-filter selects: its facts stay, the last findings stand), dllint on that one file alone
without a cache (what a pre-commit hook runs on a staged file), and dllint after a line of code
appended to the same file (``_dllint_bench_edit = N``: its facts change, so the model and the
rules run again over the cached facts of the other files), and dllint after the same line appended
to the largest file whose code names no ``Dataset``, ``DataLoader`` or workers (``other edit``:
the kind of file most edits touch, which the analysis leaves out; the early cutoff asks it
planning's questions again). Wall time is measured around the process; peak memory is the largest sum of
the resident sizes of the process tree, sampled every 10 ms (and the kernel's max RSS of the
largest single process, from wait4). Writes bench/results/<timestamp>.json and prints a table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def torch_dir() -> str | None:
    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


REPOS_CSV = os.path.join(HERE, "repos.csv")
# what eval/checkout.py writes: the files a linter reads, and the project markers
CHECKOUT_SUFFIXES = (".py", ".pyi", ".ipynb")
CHECKOUT_NAMES = ("pyproject.toml", "setup.py", "setup.cfg", ".gitignore")


def read_repos(path: str = REPOS_CSV) -> list[tuple[str, str]]:
    """(OWNER/NAME, commit) of the benchmark's real repositories."""
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        return [(row["repo"], row["commit"]) for row in csv.DictReader(fh)]


def copy_tree(src: str, dest: str, checkout: bool = False) -> tuple[int, int]:
    """Copy the .py/.pyi files of ``src`` to ``dest`` (``checkout``: also notebooks and project
    markers, as eval/checkout.py writes a repository); (Python files, their lines). Modification
    times are kept (``copy2``), as in a user's checkout: a file modified in the last two seconds
    is not remembered by its stat signature (``cache.RACY_NS``), so fresh copies made the first
    round's warm and touched runs read every file again."""
    files = lines = 0
    for directory, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".git", ".dllint_cache", ".ruff_cache"))
        for name in names:
            if checkout and (name.endswith(CHECKOUT_SUFFIXES) or name in CHECKOUT_NAMES) and not name.endswith((".py", ".pyi")):
                rel = os.path.relpath(os.path.join(directory, name), src)
                os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
                shutil.copy2(os.path.join(directory, name), os.path.join(dest, rel))
                continue
            if not name.endswith((".py", ".pyi")):
                continue
            rel = os.path.relpath(os.path.join(directory, name), src)
            target = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(directory, name), target)
            with open(target, "rb") as fh:
                lines += fh.read().count(b"\n")
            files += 1
    return files, lines


def make_root(path: str) -> None:
    os.makedirs(os.path.join(path, ".git"), exist_ok=True)  # the project root for both tools


# ---------------------------------------------------------------------------- measuring


def _tree_rss(root_pid: int) -> int:
    """Sum of the resident sizes of ``root_pid`` and its descendants (Linux /proc), in bytes."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
            with open(f"/proc/{entry}/statm", "rb") as fh:
                pages = int(fh.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = pages * PAGE
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total


# Measured as installed: with bytecode files (a PYTHONDONTWRITEBYTECODE=1 environment would
# otherwise recompile dllint on every run, 0.7 s here); the warm-up run writes them.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(cmd: list[str], cwd: str, env: dict | None = None) -> dict:
    """Run ``cmd``; wall seconds, peak memory (sampled tree sum, and wait4's max RSS), output."""
    out = tempfile.TemporaryFile()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env or ENV)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            try:
                peak[0] = max(peak[0], _tree_rss(proc.pid))
            except OSError:
                pass
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    if os.path.isdir("/proc"):
        sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    text = out.read().decode("utf-8", errors="replace")
    maxrss = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    cpu = usage.ru_utime + usage.ru_stime  # the process and its reaped workers
    return {"wall": wall, "cpu": cpu, "rc": proc.returncode, "peak_tree": peak[0], "maxrss": maxrss, "output": text}


def summary(values: list[float]) -> dict:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "runs": values,
    }


def _code_names(data: bytes) -> set[str]:
    """Names and attributes the code uses (not its docstrings or comments)."""
    try:
        code = compile(data, "<bench>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return names


def _python_sources(root: str):
    """(path, bytes) of every .py file under ``root``, in a stable order (hidden folders skipped)."""
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                with open(path, "rb") as fh:
                    yield path, fh.read()


def pick_touch_file(root: str, dllint: list[str]) -> str | None:
    """A file the pre-filter selects (the expensive kind of change): the largest one whose code
    uses DataLoader or Dataset (a mention in a docstring alone does not get a file analysed)."""
    best, best_size, fallback = None, -1, None
    for path, data in _python_sources(root):
        fallback = fallback or path
        if len(data) > best_size and (b"DataLoader" in data or b"Dataset" in data):
            if {"DataLoader", "Dataset"} & _code_names(data):
                best, best_size = path, len(data)
    return best or fallback


def pick_other_file(root: str) -> str | None:
    """The largest file whose bytes name no Dataset, DataLoader or workers (a model, a utility)."""
    best, best_size = None, -1
    for path, data in _python_sources(root):
        if len(data) > best_size and not any(w in data for w in (b"ataset", b"DataLoader", b"orker")):
            best, best_size = path, len(data)
    return best


def bench_tree(label: str, root: str, files: int, lines: int, args, dllint: list[str]) -> dict:
    cache = os.path.join(root, ".dllint_cache")
    check = [*dllint, "check", "--select", "ALL", "--output-format", "concise", "-q", "--exit-zero"]
    if args.jobs:
        check += ["--jobs", str(args.jobs)]
    ruff = [args.ruff, "check", "--no-cache", "--isolated", "--exit-zero", "-q", "."]
    touch = pick_touch_file(root, dllint)
    other = pick_other_file(root)
    results: dict[str, list[dict]] = {"ruff": [], "cold": [], "warm": [], "touched": [], "one_file": [], "code_edit": [], "other_edit": []}
    outputs: dict[str, set[str]] = {"cold": set(), "warm": set(), "touched": set(), "code_edit": set(), "other_edit": set()}
    if args.warmup:  # page cache and Python's .pyc files, not measured
        subprocess.run([*check, "--no-cache", "."], cwd=root, capture_output=True, env=ENV)
        subprocess.run(ruff, cwd=root, capture_output=True, env=ENV)
    for i in range(args.runs):
        print(f"  [{label}] round {i + 1}/{args.runs}", file=sys.stderr, flush=True)
        results["ruff"].append(measure(ruff, root))
        shutil.rmtree(cache, ignore_errors=True)
        results["cold"].append(measure([*check, "."], root))
        results["warm"].append(measure([*check, "."], root))
        if touch:
            with open(touch, "ab") as fh:
                fh.write(f"# bench edit {i} {time.time_ns()}\n".encode())
            results["touched"].append(measure([*check, "."], root))
            # pre-commit: the staged file alone, no cache
            results["one_file"].append(measure([*check, "--no-cache", os.path.relpath(touch, root)], root))
            # a code edit: the file's facts change (a module constant), the cache holds the others'
            with open(touch, "ab") as fh:
                fh.write(f"_dllint_bench_edit = {i}\n".encode())
            results["code_edit"].append(measure([*check, "."], root))
        if other:  # a code edit of a file outside the analysis
            with open(other, "ab") as fh:
                fh.write(f"_dllint_bench_edit = {i}\n".encode())
            results["other_edit"].append(measure([*check, "."], root))
        for kind in outputs:
            if results[kind]:
                outputs[kind].add(results[kind][-1]["output"].replace(f"# bench edit {i}", ""))
    report = {"label": label, "root": root, "files": files, "lines": lines, "touched_file": touch, "other_file": other}
    for kind, runs in results.items():
        if not runs:
            continue
        walls = [r["wall"] for r in runs]
        report[kind] = {
            "wall": summary(walls),
            "cpu": summary([r["cpu"] for r in runs]),
            "peak_tree_mb": max(r["peak_tree"] for r in runs) / 2**20,
            "maxrss_mb": max(r["maxrss"] for r in runs) / 2**20,
            "files_per_s": files / statistics.median(walls),
            "lines_per_s": lines / statistics.median(walls),
            "exit_codes": sorted({r["rc"] for r in runs}),
        }
    ruff_median = report["ruff"]["wall"]["median"]
    kinds = ("cold", "warm", "touched", "one_file", "code_edit", "other_edit")
    report["ratios"] = {k: report[k]["wall"]["median"] / ruff_median for k in kinds if k in report}
    ruff_cpu = report["ruff"]["cpu"]["median"] or 1e-9
    report["cpu_ratios"] = {k: report[k]["cpu"]["median"] / ruff_cpu for k in kinds if k in report}
    report["findings"] = len([l for l in results["cold"][-1]["output"].splitlines() if l.strip()])
    report["cold_equals_warm"] = outputs["cold"] == outputs["warm"] and len(outputs["cold"]) == 1
    if outputs["code_edit"]:  # a module constant added at the end changes no finding
        report["code_edit_equals_cold"] = outputs["code_edit"] == outputs["cold"]
    if outputs["other_edit"]:
        report["other_edit_equals_cold"] = outputs["other_edit"] == outputs["cold"]
    return report


def scaling(label: str, src: str, work: str, args, dllint: list[str]) -> dict:
    """Cold time on the tree and on the tree twice (two copies under two roots of one project)."""
    once = os.path.join(work, "scale-once")
    twice = os.path.join(work, "scale-twice")
    make_root(once)
    make_root(twice)
    name = os.path.basename(src.rstrip(os.sep))
    copy_tree(src, os.path.join(once, name))
    copy_tree(src, os.path.join(twice, "a", name))
    copy_tree(src, os.path.join(twice, "b", name))
    check = [*dllint, "check", "--select", "ALL", "-q", "--exit-zero", "--no-cache", "."]
    if args.jobs:
        check[-1:-1] = ["--jobs", str(args.jobs)]
    t1: list[float] = []
    t2: list[float] = []
    for _ in range(max(1, args.scaling_runs)):
        t1.append(measure(check, once)["wall"])
        t2.append(measure(check, twice)["wall"])
    m1, m2 = statistics.median(t1), statistics.median(t2)
    return {"label": label, "once": summary(t1), "twice": summary(t2), "ratio": m2 / m1, "at_most_linear": m2 <= 2 * m1 * 1.1}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="trees to benchmark (default: the installed torch package)")
    parser.add_argument(
        "--repos", action="store_true",
        help="benchmark the repositories of bench/repos.csv, checked out under --repos-dir (see bench/README.md)",
    )
    parser.add_argument("--repos-dir", default=os.environ.get("REPOS", "/work/repos"), help="where OWNER+NAME checkouts are")
    parser.add_argument("--runs", type=int, default=5, help="rounds per tree (default 5)")
    parser.add_argument("--generated", type=int, default=300, help="files in the generated project (0: none)")
    parser.add_argument("--no-generated", action="store_true", help="skip the generated project")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-scaling", action="store_true", help="skip the scaling run")
    parser.add_argument("--scaling-runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None, help="pass --jobs to dllint")
    parser.add_argument("--ruff", default=shutil.which("ruff") or "ruff")
    parser.add_argument("--dllint", default=f"{sys.executable} -m dllint", help="the dllint command")
    parser.add_argument("--no-warmup", dest="warmup", action="store_false")
    parser.add_argument("--out", default=None, help="JSON result path (default bench/results/<time>.json)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args(argv)
    dllint = args.dllint.split()

    trees: list[tuple[str, str]] = []
    for p in args.paths:
        trees.append((os.path.basename(os.path.abspath(p).rstrip(os.sep)), os.path.abspath(p)))
    checkouts: set[str] = set()
    if args.repos:
        for repo, commit in read_repos():
            path = os.path.join(args.repos_dir, repo.replace("/", "+"))
            if not os.path.isdir(path):
                print(f"{repo}: no checkout at {path}: fetch github:{repo}, then python eval/checkout.py "
                      f"/work/.mirror/{repo.replace('/', '+')}/repo {commit} {path}", file=sys.stderr)
                continue
            trees.append((repo.split("/")[1], path))
            checkouts.add(path)
        if not args.paths:
            args.no_generated = True
            args.no_scaling = True
    if not args.paths and not args.repos:
        t = torch_dir()
        if t:
            trees.append(("torch", t))
        else:
            print("torch is not installed: give a PATH", file=sys.stderr)
    work = tempfile.mkdtemp(prefix="dllint-bench-")
    reports, scales = [], []
    try:
        for label, src in trees:
            root = os.path.join(work, "trees", label)
            make_root(root)
            if src in checkouts:  # the checkout is the project (its markers and notebooks too)
                shutil.rmtree(root)
                files, lines = copy_tree(src, root, checkout=True)
                make_root(root)
            else:
                files, lines = copy_tree(src, os.path.join(root, label))
            reports.append(bench_tree(label, root, files, lines, args, dllint))
        if not args.no_generated and args.generated > 0:
            sys.path.insert(0, os.path.join(REPO, "tests"))
            from projectgen import count_lines, generate

            root = os.path.join(work, "trees", "generated")
            rels = generate(root, seed=args.seed, files=args.generated)
            reports.append(bench_tree(f"generated-{args.generated}", root, len(rels), count_lines(root, rels), args, dllint))
        if not args.no_scaling and trees:
            label, src = trees[0]
            scales.append(scaling(label, src, work, args, dllint))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "platform": platform.platform()},
        "ruff": subprocess.run([args.ruff, "--version"], capture_output=True, text=True).stdout.strip(),
        "dllint": args.dllint,
        "runs": args.runs,
        "trees": reports,
        "scaling": scales,
    }
    out = args.out or os.path.join(HERE, "results", time.strftime("%Y%m%d-%H%M%S") + ".json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    print_table(result)
    print(f"\nwritten {out}")
    return 0


def print_table(result: dict) -> None:
    print(f"\n{result['ruff']}, {result['machine']['cpus']} CPUs, Python {result['machine']['python']}, {result['runs']} runs (median [min-max] s)")
    head = f"{'tree':<16}{'files':>7}{'lines':>10}  {'what':<8}{'median':>8}{'spread':>16}{'x ruff':>8}{'cpu s':>7}{'x ruff':>7}{'peak MB':>9}{'files/s':>9}{'lines/s':>11}"
    print(head)
    print("-" * len(head))
    for t in result["trees"]:
        for kind in ("ruff", "cold", "warm", "touched", "one_file", "code_edit", "other_edit"):
            if kind not in t:
                continue
            k = t[kind]
            w = k["wall"]
            ratio = t["ratios"].get(kind, 1.0)
            print(
                f"{t['label'][:15]:<16}{t['files']:>7}{t['lines']:>10}  {kind[:8]:<8}{w['median']:>8.2f}"
                f"{'[' + format(w['min'], '.2f') + '-' + format(w['max'], '.2f') + ']':>16}{ratio:>8.2f}"
                f"{k['cpu']['median']:>7.2f}{t['cpu_ratios'].get(kind, 1.0):>7.2f}"
                f"{k['peak_tree_mb']:>9.0f}{k['files_per_s']:>9.0f}{k['lines_per_s']:>11.0f}"
            )
        same = f", code edit output == cold output: {t['code_edit_equals_cold']}" if "code_edit_equals_cold" in t else ""
        same += f", other edit output == cold output: {t['other_edit_equals_cold']}" if "other_edit_equals_cold" in t else ""
        print(f"{'':<16}findings: {t['findings']}, cold output == warm output: {t['cold_equals_warm']}{same}")
    print("\nmarkdown (median wall; x ruff wall, and CPU seconds x ruff's in brackets):")
    print("| tree | files | ruff | dllint cold | warm | touch-1 | one file, no cache | code edit | other edit | peak memory (cold) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for t in result["trees"]:
        def cell(kind, ratio=True):
            if kind not in t:
                return "-"
            w = t[kind]["wall"]["median"]
            if not ratio:
                return f"{w:.2f} s"
            return f"{w:.2f} s ({t['ratios'][kind]:.1f}x; cpu {t['cpu_ratios'][kind]:.1f}x)"
        print(
            f"| {t['label']} | {t['files']:,} | {t['ruff']['wall']['median']:.2f} s | {cell('cold')} | {cell('warm')} |"
            f" {cell('touched', False)} | {cell('one_file', False)} | {cell('code_edit', False)} | {cell('other_edit', False)} | {t['cold']['peak_tree_mb']:.0f} MB |"
        )
    for s in result["scaling"]:
        print(
            f"scaling ({s['label']}, cold, no cache): once {s['once']['median']:.2f} s, twice {s['twice']['median']:.2f} s,"
            f" ratio {s['ratio']:.2f} ({'at most linear' if s['at_most_linear'] else 'WORSE than linear'})"
        )


if __name__ == "__main__":
    sys.exit(main())
