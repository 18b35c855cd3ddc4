"""Generated-program run: thousands of modules through dllint, looking for crashes and bad fixes.

    python bench/fuzz.py --modules 2000                 # hypothesmith (when importable) + mutated
                                                        # fixtures + the grammar generator below
    python bench/fuzz.py --modules 200 --no-hypothesmith --seed 3 --out /tmp/fuzz

Modules come from three sources, in equal parts:

- ``hypothesmith`` (``pip install hypothesmith``; skipped when it is not importable): syntactically
  valid programs drawn from Python's grammar, odd and rarely about data loading;
- mutated fixtures: the files under ``fixtures/`` with lines deleted, duplicated, swapped,
  re-indented or spliced from another fixture, loader keywords, lambdas and ``# noqa`` comments
  inserted, names swapped (Dataset / IterableDataset / DataLoader), truncated, CRLF line endings,
  a BOM, a latin-1 cookie with a non-ASCII string, tabs, or undecodable bytes;
- a small grammar of data-loading code (``program()`` below): Dataset classes with hazards in
  ``__init__``, ``__getitem__`` / ``__iter__`` reading them, loaders with random keyword
  arguments, ``set_start_method``, worker_init_fn / collate_fn, a main guard or not, noqa comments.

They are laid out as projects of ``--batch`` modules (a ``.git`` marker, a few in packages, so the
cross-file index is exercised) and each project is checked with ``python -m dllint``:

1. default rules and ``--select ALL`` (``--no-cache``), and ``--select ALL`` twice with the cache
   (cold, warm): no crash (exit 2, a traceback, "internal error"), and the cache changes nothing;
2. ``--fix --unsafe-fixes --select ALL`` on a copy: no crash; every file it changed still parses
   (``ast``) and kept its encoding (it decodes as before);
3. the same again on the fixed copy: it changes no file (fixes converge).

A failing project is narrowed down to its modules one by one; reproducers are written under
``--out``. The summary (modules, projects, dllint runs, findings, fixes, problems, time) is printed
and written as JSON. ``tests/test_fuzz_smoke.py`` runs a short version in the test suite.
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

# ---------------------------------------------------------------------------- sources


def hypothesmith_programs(n: int, seed: int) -> list[str]:
    """``n`` programs from hypothesmith, or [] when it is not installed."""
    try:
        import hypothesmith
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as hseed
    except ImportError:
        return []
    import warnings

    warnings.simplefilter("ignore", SyntaxWarning)  # hypothesmith compiles what it draws
    out: list[str] = []

    @hseed(seed)
    @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(hypothesmith.from_grammar())
    def collect(source):
        out.append(source)

    collect()
    try:
        @hseed(seed + 1)
        @settings(max_examples=max(1, n // 4), deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(hypothesmith.from_node())
        def collect_nodes(source):
            out.append(source)

        collect_nodes()
    except Exception:  # from_node needs a libcst that matches: optional
        pass
    rng = random.Random(seed)
    rng.shuffle(out)
    return out[:n]


SNIPPETS = [
    "num_workers=4", "num_workers=0", "persistent_workers=True", "prefetch_factor=2",
    "multiprocessing_context='fork'", "collate_fn=lambda b: b", "worker_init_fn=lambda i: None",
    "self.items = [str(k) for k in range(100000)]", "self.fh = open(path, 'rb')", "self.rng = np.random.default_rng(0)",
    "self.mean = torch.zeros(3).cuda()", "torch.multiprocessing.set_sharing_strategy('file_system')",
    "mp.set_start_method('spawn')", "# noqa: DL101", "# noqa", "# dllint: noqa: DL201", "lambda x: x",
    "loader = DataLoader(ds, num_workers=8)", "for batch in loader: kept.append(batch)",
    "cv2.imread(path)", "random.seed(worker_id)", "if __name__ == '__main__':", "pass", "yield x",
    "return self.items[i]", "os.cpu_count()", "async def f(): await g()", "x = (", ")", "'''", "\\",
]
NAMES = ["Dataset", "IterableDataset", "DataLoader", "TensorDataset", "Sampler", "torch", "np", "self", "mp"]


def fixture_texts() -> list[tuple[str, bytes]]:
    out = []
    for p in sorted(FIXTURES.rglob("*.py")):
        if any(part in ("probe", "runtime") for part in p.parts) or "fixed" in p.parts or "unsafe-fixed" in p.parts:
            continue
        out.append((p.name, p.read_bytes()))
    return out


def mutate(data: bytes, others: list[bytes], rng: random.Random) -> bytes:
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(14)
        i = rng.randrange(len(lines)) if lines else 0
        if op == 0 and lines:
            del lines[i]
        elif op == 1 and lines:
            lines.insert(i, lines[i])
        elif op == 2 and len(lines) > 1:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3 and lines:
            lines[i] = " " * rng.choice((1, 2, 4, 8)) + lines[i]
        elif op == 4 and lines:
            lines[i] = lines[i].lstrip()
        elif op == 5:
            other = rng.choice(others).decode("utf-8", errors="replace").split("\n")
            a = rng.randrange(len(other))
            lines[i:i] = other[a : a + rng.randint(1, 12)]
        elif op == 6 and lines:
            indent = len(lines[i]) - len(lines[i].lstrip())
            lines.insert(i, " " * indent + rng.choice(SNIPPETS))
        elif op == 7 and lines:
            line = lines[i]
            if ")" in line:
                k = line.rindex(")")
                lines[i] = line[:k] + ", " + rng.choice(SNIPPETS[:7]) + line[k:]
        elif op == 8 and lines:
            a, b = rng.sample(NAMES, 2)
            lines[i] = lines[i].replace(a, b)
        elif op == 9 and lines:
            lines[i] = lines[i] + "  " + rng.choice(["# noqa: DL101", "# noqa", "# noqa: DL304, DL001", "# noqa:DL999"])
        elif op == 10:
            lines = lines[: rng.randrange(len(lines) + 1)]
        elif op == 11 and lines:
            k = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:k] + lines[i][k + rng.randint(1, 5):]
        elif op == 12 and lines:
            lines[i] = lines[i].replace("    ", "\t")
        elif op == 13:
            lines.insert(i, rng.choice(SNIPPETS))
    out = "\n".join(lines).encode("utf-8")
    kind = rng.randrange(12)
    if kind == 0:
        out = out.replace(b"\n", b"\r\n")
    elif kind == 1:
        out = b"\xef\xbb\xbf" + out
    elif kind == 2:
        try:
            out = ("# -*- coding: latin-1 -*-\nLABEL = 'caf\u00e9'\n" + out.decode("utf-8")).encode("latin-1")
        except UnicodeError:
            pass
    elif kind == 3 and out:
        k = rng.randrange(len(out))
        out = out[:k] + bytes([rng.choice((0xFF, 0xC3, 0x80, 0x00))]) + out[k:]
    return out


def program(rng: random.Random, n: int) -> str:
    """A data-loading module from a small grammar."""
    imports = [
        "import os", "import random", "import numpy as np", "import torch",
        rng.choice(["from torch.utils.data import DataLoader, Dataset, IterableDataset",
                    "import torch.utils.data as tud", "from torch.utils.data import DataLoader as DL, Dataset"]),
        rng.choice(["import torch.multiprocessing as mp", "import multiprocessing as mp"]),
    ]
    tud = "tud." if "as tud" in imports[4] else ""
    loader = "DL" if "as DL" in imports[4] else f"{tud}DataLoader"
    out = [*imports, ""]
    hazards = [
        "self.items = [str(k) for k in range(100000)]", "self.items = list(range(10))",
        "self.transform = lambda x: x * 2", "self.fh = open(path, 'rb')", "self.rng = np.random.default_rng(0)",
        "self.gen = torch.Generator()", "self.mean = torch.zeros(3).cuda()", "self.table = {k: k for k in range(1000)}",
        "self.lock = __import__('threading').Lock()", "self.paths = sorted(os.listdir(path))",
    ]
    classes = []
    for c in range(rng.randint(1, 3)):
        name = f"Set{n}_{c}"
        iterable = rng.random() < 0.3
        base = f"{tud}IterableDataset" if iterable else (f"{tud}Dataset" if rng.random() < 0.8 else "object")
        if "as DL" in imports[4] and iterable:
            base = "torch.utils.data.IterableDataset"
        chosen = rng.sample(hazards, rng.randint(0, 3))
        body = [f"class {name}({base}):", "    def __init__(self, path='.'):"]
        body += [f"        {h}" + (rng.choice(["", "  # noqa: DL101", "  # noqa"]) if rng.random() < 0.2 else "") for h in chosen] or ["        pass"]
        attrs = [h.split("=")[0].strip().split(".")[1] for h in chosen]
        if iterable:
            body += ["", "    def __iter__(self):",
                     "        info = torch.utils.data.get_worker_info()" if rng.random() < 0.5 else "        info = None",
                     f"        for x in {('self.' + attrs[0]) if attrs else 'range(10)'}:", "            yield x"]
        else:
            read = rng.choice([f"self.{a}" for a in attrs] or ["0"])
            body += ["", "    def __len__(self):", "        return 10", "", "    def __getitem__(self, i):",
                     f"        return ({read}, i)" if rng.random() < 0.7 else "        return torch.ones(3).cuda()"]
        out += body + ["", ""]
        classes.append(name)
    funcs = []
    if rng.random() < 0.5:
        out += ["def init_fn(worker_id):", "    " + rng.choice(["random.seed(worker_id)", "np.random.seed(0)", "torch.manual_seed(worker_id)", "pass"]), "", ""]
        funcs.append("worker_init_fn=init_fn")
    if rng.random() < 0.3:
        funcs.append("collate_fn=lambda b: b")
    calls = []
    for k in range(rng.randint(1, 3)):
        args = [f"{rng.choice(classes)}()"]
        if rng.random() < 0.5:
            args.append(str(rng.choice([0, 2, 4])))
        kw = rng.sample(["num_workers=0", "num_workers=4", "num_workers=os.cpu_count()", "persistent_workers=True",
                         "prefetch_factor=2", "multiprocessing_context='fork'", "multiprocessing_context='spawn'",
                         "batch_size=8", "shuffle=True", "pin_memory=True", *funcs], rng.randint(0, 4))
        calls.append(f"loader{k} = {loader}({', '.join(args + kw)})")
    guard = rng.random() < 0.5
    main = []
    if rng.random() < 0.3:
        main.append(f"mp.set_start_method({rng.choice(['fork', 'spawn', 'forkserver'])!r})")
    if rng.random() < 0.2:
        main.append("torch.multiprocessing.set_sharing_strategy('file_system')")
    main += calls
    if rng.random() < 0.4:
        main += ["kept = []", "for batch in loader0:", "    kept.append(batch)"]
    if guard:
        out += ["if __name__ == '__main__':"] + ["    " + line for line in main]
    else:
        out += main
    return "\n".join(out) + "\n"


def modules(n: int, seed: int, use_hypothesmith: bool) -> list[tuple[str, bytes]]:
    """(origin, bytes) for ``n`` modules, in equal parts from each available source."""
    rng = random.Random(seed)
    hyp = hypothesmith_programs(n // 3 + 1, seed) if use_hypothesmith else []
    sources = 3 if hyp else 2
    share = n // sources
    out: list[tuple[str, bytes]] = [("hypothesmith", p.encode("utf-8", errors="surrogatepass")) for p in hyp[:share]]
    fixtures = fixture_texts()
    blobs = [b for _, b in fixtures]
    n_mut = share if hyp else n // 2
    for _ in range(n_mut):
        name, data = rng.choice(fixtures)
        out.append((f"mutated {name}", mutate(data, blobs, rng)))
    k = 0
    while len(out) < n:
        out.append(("grammar", program(rng, k).encode("utf-8")))
        k += 1
    rng.shuffle(out)
    return out


# ---------------------------------------------------------------------------- running


@dataclass
class Stats:
    modules: int = 0
    projects: int = 0
    runs: int = 0
    findings: int = 0
    files_fixed: int = 0
    fixes_applied: int = 0
    problems: list[dict] = field(default_factory=list)
    by_origin: dict = field(default_factory=dict)


def layout(root: Path, batch: list[tuple[str, bytes]]) -> dict[str, str]:
    """Write a project; returns relative path -> origin."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "pkg").mkdir(exist_ok=True)
    (root / "pkg" / "__init__.py").write_text("")
    where = {}
    for i, (origin, data) in enumerate(batch):
        rel = f"pkg/m{i}.py" if i % 3 == 0 else f"m{i}.py"
        (root / rel).write_bytes(data)
        where[rel] = origin
    return where


def dllint(cwd: Path, *args: str, timeout: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DLLINT_CACHE_DIR", None)
    try:
        return subprocess.run([sys.executable, "-m", "dllint", *args, "."], cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, env=env, errors="replace")
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, -1, "", f"timed out after {timeout} s")


def crashed(proc: subprocess.CompletedProcess) -> str | None:
    if proc.returncode not in (0, 1):
        return f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}"
    for marker in ("Traceback (most recent call last)", "internal error"):
        if marker in proc.stderr:
            return f"{marker}: {proc.stderr.strip()[-400:]}"
    return None


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.py")) if ".git" not in p.parts and ".dllint_cache" not in p.parts}


def parses(data: bytes) -> bool:
    try:
        ast.parse(data)
    except (SyntaxError, ValueError):
        return False
    return True


def decodes_like(before: bytes, after: bytes) -> bool:
    import io
    import tokenize

    def enc(b):
        try:
            return tokenize.detect_encoding(io.BytesIO(b).readline)[0]
        except SyntaxError:
            return None

    return enc(before) == enc(after) and before.startswith(b"\xef\xbb\xbf") == after.startswith(b"\xef\xbb\xbf")


def check_project(root: Path, timeout: int, stats: Stats, cache: bool = True) -> list[str]:
    """Run every check on the project at ``root``; returns the problems found."""
    problems = []
    default = dllint(root, "--no-cache", "--output-format", "concise", timeout=timeout)
    full = dllint(root, "--no-cache", "--select", "ALL", "--output-format", "concise", timeout=timeout)
    stats.runs += 2
    for name, proc in (("default rules", default), ("--select ALL", full)):
        why = crashed(proc)
        if why:
            problems.append(f"{name}: {why}")
    stats.findings += sum(1 for line in full.stdout.splitlines() if ": DL" in line)
    if cache:
        cold = dllint(root, "--select", "ALL", "--output-format", "concise", timeout=timeout)
        warm = dllint(root, "--select", "ALL", "--output-format", "concise", timeout=timeout)
        stats.runs += 2
        for name, proc in (("cold cache", cold), ("warm cache", warm)):
            why = crashed(proc)
            if why:
                problems.append(f"{name}: {why}")
            elif proc.stdout != full.stdout:
                problems.append(f"{name}: findings differ from --no-cache")
        shutil.rmtree(root / ".dllint_cache", ignore_errors=True)
    copy = root.parent / (root.name + "-fixed")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy)
    try:
        before = snapshot(copy)
        fixed = dllint(copy, "--no-cache", "--select", "ALL", "--fix", "--unsafe-fixes", "--show-fixes", timeout=timeout)
        stats.runs += 1
        why = crashed(fixed)
        if why:
            problems.append(f"--fix: {why}")
        after = snapshot(copy)
        changed = [p for p in after if after[p] != before.get(p)]
        stats.files_fixed += len(changed)
        for line in fixed.stderr.splitlines() + fixed.stdout.splitlines():
            if line.startswith("Found ") and " fixed" in line:
                try:
                    stats.fixes_applied += int(line.split("(")[1].split(" fixed")[0])
                except (IndexError, ValueError):
                    pass
        for p in changed:
            if parses(before[p]) and not parses(after[p]):
                problems.append(f"--fix: {p} no longer parses")
            if not decodes_like(before[p], after[p]):
                problems.append(f"--fix: {p} changed its encoding or BOM")
        if set(after) != set(before):
            problems.append(f"--fix: files created or deleted: {sorted(set(after) ^ set(before))}")
        again = dllint(copy, "--no-cache", "--select", "ALL", "--fix", "--unsafe-fixes", timeout=timeout)
        stats.runs += 1
        why = crashed(again)
        if why:
            problems.append(f"second --fix: {why}")
        third = snapshot(copy)
        moved = [p for p in third if third[p] != after.get(p)]
        if moved:
            problems.append(f"second --fix changed {moved}")
        stray = [str(p.relative_to(copy)) for p in copy.rglob("*") if p.name.startswith(".dllint-")]
        if stray:
            problems.append(f"temporary files left: {stray}")
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    return problems


def narrow(batch, work: Path, timeout: int, out: Path | None, stats: Stats) -> list[dict]:
    """The modules of a failing project that fail alone (or the project, when none does)."""
    found = []
    for i, (origin, data) in enumerate(batch):
        single = work / f"single{i}"
        shutil.rmtree(single, ignore_errors=True)
        layout(single, [(origin, data)])
        problems = check_project(single, timeout, Stats(), cache=False)
        shutil.rmtree(single, ignore_errors=True)
        if problems:
            found.append({"origin": origin, "problems": problems, "source": data.decode("utf-8", errors="replace")})
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for item in found:
            n = len(list(out.glob("repro_*.py")))
            (out / f"repro_{n}.py").write_text(item["source"], encoding="utf-8")
            item["file"] = str(out / f"repro_{n}.py")
    return found


def run(n: int, batch_size: int, seed: int, use_hypothesmith: bool, out: Path | None, timeout: int = 300, log=print) -> Stats:
    stats = Stats()
    mods = modules(n, seed, use_hypothesmith)
    stats.modules = len(mods)
    for origin, _ in mods:
        key = origin.split(" ")[0]
        stats.by_origin[key] = stats.by_origin.get(key, 0) + 1
    work = Path(tempfile.mkdtemp(prefix="dllint-fuzz-"))
    try:
        for start in range(0, len(mods), batch_size):
            batch = mods[start : start + batch_size]
            root = work / f"p{start // batch_size}"
            layout(root, batch)
            stats.projects += 1
            problems = check_project(root, timeout, stats)
            if problems:
                culprits = narrow(batch, work, timeout, out, stats)
                stats.problems.append({"project": start // batch_size, "problems": problems, "modules": culprits})
                log(f"project {start // batch_size}: {len(problems)} problem(s): {problems[0][:200]}")
            shutil.rmtree(root, ignore_errors=True)
            log(f"{min(start + batch_size, len(mods))}/{len(mods)} modules, {stats.runs} runs, {len(stats.problems)} failing projects")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=50, help="modules per generated project")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-hypothesmith", action="store_true")
    parser.add_argument("--out", type=Path, default=None, help="where reproducers and the JSON summary go")
    args = parser.parse_args()
    start = time.time()
    stats = run(args.modules, args.batch, args.seed, not args.no_hypothesmith, args.out)
    summary = {
        "modules": stats.modules, "by_origin": stats.by_origin, "projects": stats.projects, "dllint_runs": stats.runs,
        "findings (--select ALL)": stats.findings, "files changed by --fix": stats.files_fixed,
        "fixes applied": stats.fixes_applied, "failing projects": len(stats.problems),
        "seconds": round(time.time() - start, 1), "problems": stats.problems,
    }
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: v for k, v in summary.items() if k != "problems"}, indent=2))
    for p in stats.problems:
        print(json.dumps({k: v for k, v in p.items()}, indent=2)[:3000])
    sys.exit(1 if stats.problems else 0)


if __name__ == "__main__":
    main()
