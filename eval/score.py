"""Score dllint against the labeled corpora (rules: eval/LABELING.md).

    python eval/score.py dl101   [--split dev|holdout|all] [--repos DIR] [--show N]
    python eval/score.py hazards [--split dev|holdout|all] [--show N]

``dl101``: every repository in eval/dl101/labels/*.csv must be checked out under ``--repos``
(default /work/repos) as ``owner+name`` at the labeled commit; ``eval/fetch_repos.sh`` says how
(the tool library's ``fetch`` brings the snapshot, ``eval/checkout.py`` writes its files). dllint
runs on each whole repository, as a user runs it (``dllint --select DL101 <repo>``), and each
DL101 finding is matched to a label by (path, class, attribute).

Expected reports: ``pos`` labels whose class is used by loaders with workers under fork
(``loaders == workers``). A report on a ``neg`` label, or on a ``pos`` whose loaders have no
workers or only spawn, is a false report; ``unsure`` rows and attributes of classes nobody
labeled are left out (listed as "unlabeled").

``hazards``: every snippet in eval/hazards/snippets/ is linted on its own (a project of one file,
default settings) with the hazard rules selected; a report matches a ``pos`` label of the same
rule within two lines. Labels are exhaustive: any other report is false.

The holdout split is scored once, at the end (``--split holdout``).
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from split import split_of  # noqa: E402

HAZARD_RULES = ("DL101", "DL102", "DL103", "DL104", "DL105", "DL106", "DL201", "DL202", "DL203", "DL204",
                "DL301", "DL302", "DL303", "DL304", "DL305")


def run_dllint(args: list[str], cwd: str | None = None) -> list[dict]:
    cmd = [sys.executable, "-m", "dllint", "check", "--output-format", "json", "--exit-zero", "--no-cache", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"dllint failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout or "[]")


def ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "-"


# ------------------------------------------------------------------------------------- DL101


def load_dl101(split: str):
    repos: dict[str, dict] = {}
    for path in sorted(glob.glob(os.path.join(HERE, "dl101", "labels", "*.csv"))):
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                repo = row["repo"]
                if split != "all" and split_of(repo) != split:
                    continue
                entry = repos.setdefault(repo, {"commit": row["commit"], "labels": []})
                entry["labels"].append(row)
    return repos


def _class_key(name: str) -> str:
    return name.split(".<locals>.")[-1]


def _chosen(args, name: str) -> bool:
    """Whether ``--only`` / ``--skip`` (comma-separated name parts) keep ``name``."""
    only = [w for w in args.only.split(",") if w]
    skip = [w for w in args.skip.split(",") if w]
    return (not only or any(w in name for w in only)) and not any(w in name for w in skip)


def score_dl101(args) -> int:
    repos = load_dl101(args.split)
    total = defaultdict(int)
    lines = []
    misses, falses, unlabeled = [], [], []
    for repo, entry in sorted(repos.items()):
        if not _chosen(args, repo):
            continue
        root = os.path.join(args.repos, repo.replace("/", "+"))
        if not os.path.isdir(root):
            print(f"missing checkout: {root} (see eval/fetch_repos.sh)", file=sys.stderr)
            continue
        findings = run_dllint(["--select", "DL101", root])
        labels = {}
        for row in entry["labels"]:
            key = (row["path"], _class_key(row["class"]), row["attribute"])
            labels[key] = row
        by_path_attr = defaultdict(list)
        for key in labels:
            by_path_attr[(key[0], key[2])].append(key)
        expected = {k for k, r in labels.items() if r["verdict"] == "pos" and r["loaders"] == "workers"}
        tp = fp = 0
        matched = set()
        for f in findings:
            if f["code"] != "DL101":
                continue
            rel = os.path.relpath(f["filename"], root)
            details = f.get("details") or {}
            cls = details.get("class", "")
            cls = _class_key(cls.rsplit(".", 1)[-1] if cls else "")
            attr = details.get("attribute", "")
            key = (rel, cls, attr)
            if key not in labels:
                # a class nested in another, or named by its qualified name: match on path + attribute
                cands = [k for k in by_path_attr.get((rel, attr), ()) if k[1].split(".")[-1] == cls]
                key = cands[0] if len(cands) == 1 else key
            row = labels.get(key)
            where = f"{repo} {rel}:{f['location']['row']} {cls}.{attr}"
            if row is None:
                unlabeled.append(where)
                continue
            if row["verdict"] == "unsure":
                continue
            if key in expected:
                if key not in matched:
                    tp += 1
                    matched.add(key)
            else:
                fp += 1
                falses.append(f"{where}  [{row['verdict']}, loaders={row['loaders']}] {row['reason']}")
        fn = len(expected - matched)
        for key in sorted(expected - matched):
            r = labels[key]
            misses.append(f"{repo} {key[0]}:{r['line']} {key[1]}.{key[2]}  {r['reason']}")
        total["tp"] += tp
        total["fp"] += fp
        total["fn"] += fn
        lines.append(f"| {repo} | {split_of(repo)} | {len(expected)} | {tp} | {fp} | {fn} | {ratio(tp, tp + fp)} | {ratio(tp, tp + fn)} |")
    print("| repository | split | expected | found | false | missed | precision | recall |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(lines))
    tp, fp, fn = total["tp"], total["fp"], total["fn"]
    print(f"| **all** | {args.split} | {tp + fn} | {tp} | {fp} | {fn} | {ratio(tp, tp + fp)} | {ratio(tp, tp + fn)} |")
    _listing("missed", misses, args.show)
    _listing("false reports", falses, args.show)
    _listing("reports on unlabeled classes", unlabeled, args.show)
    return 0


def _listing(title: str, items: list[str], show: int) -> None:
    if not items or show == 0:
        return
    print(f"\n{title} ({len(items)}):")
    for item in items[:show]:
        print("  " + item)
    if len(items) > show:
        print(f"  ... {len(items) - show} more")


# ------------------------------------------------------------------------------------- hazards


def load_hazards(split: str):
    projects = {}
    for path in glob.glob(os.path.join(HERE, "hazards", "projects", "*.csv")):
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                projects[row["snippet"]] = row
    labels = defaultdict(list)
    for path in glob.glob(os.path.join(HERE, "hazards", "labels", "*.csv")):
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                labels[row["snippet"]].append(row)
    snippets = sorted(os.listdir(os.path.join(HERE, "hazards", "snippets")))
    out = {}
    for name in snippets:
        project = projects.get(name, {}).get("project") or "/".join(name.split("__")[:2])
        if split != "all" and split_of(project) != split:
            continue
        out[name] = labels.get(name, [])
    return out


def score_hazards(args) -> int:
    snippets = load_hazards(args.split)
    counts = {r: defaultdict(int) for r in HAZARD_RULES}
    misses, falses = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, rows in snippets.items():
            if not _chosen(args, name):
                continue
            work = os.path.join(tmp, name[:-3])
            os.makedirs(os.path.join(work, ".git"))
            shutil.copy(os.path.join(HERE, "hazards", "snippets", name), os.path.join(work, name))
            findings = [f for f in run_dllint(["--select", ",".join(HAZARD_RULES), name], cwd=work) if f["code"] in HAZARD_RULES]
            pos = [r for r in rows if r["verdict"] == "pos"]
            used = set()
            for f in findings:
                row_no = f["location"]["row"]
                hit = None
                for i, r in enumerate(pos):
                    if i in used or r["rule"] != f["code"]:
                        continue
                    if abs(int(r["line"]) - row_no) <= 2:
                        hit = i
                        break
                if hit is None:
                    unsure = any(r["rule"] == f["code"] and r["verdict"] == "unsure" and abs(int(r["line"]) - row_no) <= 2 for r in rows)
                    if unsure:
                        continue
                    counts[f["code"]]["fp"] += 1
                    falses.append(f"{name}:{row_no} {f['code']} {f['message'][:110]}")
                else:
                    used.add(hit)
                    counts[f["code"]]["tp"] += 1
            for i, r in enumerate(pos):
                if r["rule"] not in counts:
                    continue
                counts[r["rule"]]["pos"] += 1
                if i not in used:
                    counts[r["rule"]]["fn"] += 1
                    misses.append(f"{name}:{r['line']} {r['rule']}  {r['reason']}")
    print("| rule | labeled | found | false | missed | precision | recall |")
    print("|---|---|---|---|---|---|---|")
    tot = defaultdict(int)
    for rule in HAZARD_RULES:
        c = counts[rule]
        for k in ("pos", "tp", "fp", "fn"):
            tot[k] += c[k]
        print(f"| {rule} | {c['pos']} | {c['tp']} | {c['fp']} | {c['fn']} | {ratio(c['tp'], c['tp'] + c['fp'])} | {ratio(c['tp'], c['tp'] + c['fn'])} |")
    print(f"| **all** ({len(snippets)} snippets, {args.split}) | {tot['pos']} | {tot['tp']} | {tot['fp']} | {tot['fn']} | {ratio(tot['tp'], tot['tp'] + tot['fp'])} | {ratio(tot['tp'], tot['tp'] + tot['fn'])} |")
    _listing("missed", misses, args.show)
    _listing("false reports", falses, args.show)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", choices=("dl101", "hazards"))
    parser.add_argument("--split", default="dev", choices=("dev", "holdout", "all"))
    parser.add_argument("--repos", default="/work/repos")
    parser.add_argument("--show", type=int, default=30, help="how many misses / false reports to list")
    parser.add_argument("--only", default="", help="score only repositories (or snippets) whose name contains one of these (comma-separated)")
    parser.add_argument("--skip", default="", help="leave out repositories (or snippets) whose name contains one of these (comma-separated)")
    args = parser.parse_args(argv)
    return score_dl101(args) if args.corpus == "dl101" else score_hazards(args)


if __name__ == "__main__":
    sys.exit(main())
