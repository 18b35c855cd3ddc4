"""Per-file facts: equivalence of two versions of dllint, and their serial CPU time.

The per-file facts (``dllint.model.FileFacts``) are plain data, so a change meant to make their
extraction faster can be checked exactly: extract the same files with a snapshot of the old code
and with the new code, encode each with ``dllint.serial`` and compare.

    # 1. the inputs: the files a real run parses (recorded from FactStore.compute), as a pickle
    python bench/facts_equiv.py collect /tmp/jobs.pkl /work/repos/NVIDIA+NeMo /work/repos/huggingface+diffusers
    python bench/facts_equiv.py collect --all /tmp/fixtures.pkl fixtures     # every file (no pre-filter)
    # 2. the old code
    mkdir -p /tmp/facts_base && git archive main dllint | tar -x -C /tmp/facts_base
    # 3. compare (each side runs in its own process, with its own dllint on PYTHONPATH)
    python bench/facts_equiv.py compare /tmp/facts_base . /tmp/jobs.pkl /tmp/fixtures.pkl
    # serial CPU seconds of extract() for one version (best of --repeat), and a profile
    python bench/facts_equiv.py time . /tmp/jobs.pkl --limit 300 [--profile]

``compare`` compares the encoded facts byte for byte (both sides run with PYTHONHASHSEED=0) and,
where bytes differ, once more with the elements of sets put in order (a set's iteration order is
not a fact); it prints every file whose facts differ and exits 1 if there is one.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------- collect


def collect(out: str, roots: list[str], everything: bool) -> None:
    """Run ``dllint check --no-cache --select ALL --jobs 1`` on each root (in this process, with the
    dllint on sys.path) and record every job handed to FactStore.compute."""
    if everything:
        os.environ["DLLINT_NO_PREFILTER"] = "1"
    import dllint.engine as engine
    from dllint.cli import main

    jobs: dict[str, tuple] = {}
    original = engine.FactStore.compute

    def compute(self, items, *rest):
        for item in items:
            jobs[item[0]] = (*item, self.loader_classes)
        return original(self, items, *rest)

    engine.FactStore.compute = compute
    for root in roots:
        cwd = os.getcwd()
        os.chdir(root)
        try:
            main(["check", "--no-cache", "--select", "ALL", "--jobs", "1", "--quiet", "."])
        except SystemExit:
            pass
        finally:
            os.chdir(cwd)
    with open(out, "wb") as fh:
        pickle.dump(list(jobs.values()), fh)
    print(f"{len(jobs)} files -> {out}", file=sys.stderr)


def _extract(job: tuple, rules):
    """``extract`` of one recorded job: (path, module, root, is_package, data, shadowed library
    names, loader classes); recordings made before the shadowed names lack them."""
    from dllint.facts.extract import extract

    if len(job) == 6:
        job = (*job[:5], frozenset(), job[5])
    path, module, root, is_package, data, shadowed, loader_classes = job
    return extract(path, module, root, is_package, data, rules, loader_classes, shadowed)


def _load_jobs(paths: list[str], limit: int | None = None) -> list[tuple]:
    jobs: list[tuple] = []
    for path in paths:
        with open(path, "rb") as fh:
            jobs.extend(pickle.load(fh))
    return jobs[:limit] if limit else jobs


# ---------------------------------------------------------------------------- one side


def dump(out: str, job_files: list[str]) -> None:
    """Extract every job with the dllint on sys.path; write path -> serial bytes (a pickle)."""
    from dllint.rules import all_rules
    from dllint.serial import dumps

    rules = all_rules()
    result = {}
    for job in _load_jobs(job_files):
        result[job[0]] = dumps(_extract(job, rules))
    with open(out, "wb") as fh:
        pickle.dump(result, fh)


def _side(code_root: str, out: str, job_files: list[str]) -> None:
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=os.path.abspath(code_root))
    subprocess.run([sys.executable, __file__, "_dump", out, *job_files], env=env, check=True)


# ---------------------------------------------------------------------------- compare


def _canonical(x):
    """Decoded cache JSON with every set's elements in a fixed order."""
    if isinstance(x, list):
        items = [_canonical(v) for v in x]
        if items and items[0] in ("f", "s"):
            return [items[0], *sorted(items[1:], key=lambda v: json.dumps(v, sort_keys=True))]
        return items
    return x


def _body(blob: bytes):
    return json.loads(blob.split(b"\n", 1)[1])


def _first_difference(a, b, where="") -> str:
    if type(a) is not type(b):
        return f"{where}: {a!r:.200} != {b!r:.200}"
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: length {len(a)} != {len(b)}: {a!r:.300} != {b!r:.300}"
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{where}[{i}]")
    return f"{where}: {a!r:.200} != {b!r:.200}"


def compare(old_root: str, new_root: str, job_files: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        # the old side's facts are kept beside the old code (it does not change): computed once
        key = "_".join(os.path.basename(j).replace(".", "-") for j in job_files)
        old_out, new_out = os.path.join(old_root, f".facts_{key}.pkl"), os.path.join(tmp, "new.pkl")
        if not os.path.exists(old_out):
            _side(old_root, old_out, job_files)
        _side(new_root, new_out, job_files)
        with open(old_out, "rb") as fh:
            old = pickle.load(fh)
        with open(new_out, "rb") as fh:
            new = pickle.load(fh)
    same_bytes = differ = 0
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a == b:
            same_bytes += 1
            continue
        if a is not None and b is not None:
            ca, cb = _canonical(_body(a)), _canonical(_body(b))
            if ca == cb:
                continue
            print(f"DIFF {path}: {_first_difference(ca, cb)}")
        else:
            print(f"DIFF {path}: missing on one side")
        differ += 1
    print(f"{len(old)} files: {same_bytes} byte-identical, {len(old) - same_bytes - differ} equal up to set order, {differ} different")
    return 1 if differ else 0


# ---------------------------------------------------------------------------- time


def timing(job_files: list[str], limit: int | None, repeat: int, profile: str | None) -> None:
    import gc

    from dllint.rules import all_rules

    rules = all_rules()
    jobs = _load_jobs(job_files, limit)
    gc.disable()  # as the engine runs
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        for job in jobs:
            _extract(job, rules)
        prof.disable()
        prof.dump_stats(profile)
        pstats.Stats(profile).sort_stats("tottime").print_stats(40)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(60)
        return
    best = None
    for _ in range(repeat):
        start = time.process_time()
        for job in jobs:
            _extract(job, rules)
        spent = time.process_time() - start
        gc.collect()
        best = spent if best is None else min(best, spent)
    print(f"{len(jobs)} files, {sum(len(j[4]) for j in jobs) / 1e6:.1f} MB: extract {best:.2f} s CPU (best of {repeat})")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_dump":
        dump(sys.argv[2], sys.argv[3:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("collect")
    p.add_argument("--all", action="store_true", help="every file (no pre-filter)")
    p.add_argument("out")
    p.add_argument("roots", nargs="+")
    p = sub.add_parser("compare")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("jobs", nargs="+")
    p = sub.add_parser("time")
    p.add_argument("code")
    p.add_argument("jobs", nargs="+")
    p.add_argument("--limit", type=int)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--profile", nargs="?", const="/tmp/facts.prof")
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.out, [os.path.abspath(r) for r in args.roots], args.all)
    elif args.command == "compare":
        return compare(args.old, args.new, args.jobs)
    elif args.command == "time":
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.code))
        cmd = [sys.executable, __file__, "_time", *args.jobs, "--repeat", str(args.repeat)]
        if args.limit:
            cmd += ["--limit", str(args.limit)]
        if args.profile:
            cmd += ["--profile", args.profile]
        return subprocess.run(cmd, env=env).returncode
    return 0


def _time_main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("jobs", nargs="+")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile")
    args = parser.parse_args(sys.argv[2:])
    timing(args.jobs, args.limit, args.repeat, args.profile)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_time":
        sys.exit(_time_main())
    sys.exit(main())
