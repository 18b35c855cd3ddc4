"""``--statistics`` (findings counted per rule) and ``--show-fixes`` (what ``--fix`` applied)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

from dllint.report.text import fixable


def _name(code: str) -> str:
    from dllint.rules import rule_by_code

    rule = rule_by_code(code)
    return rule.name if rule is not None else ""


def statistics(diagnostics, unsafe: bool) -> list[dict]:
    """One entry per code, most frequent first (then by code)."""
    counts: Counter = Counter(d.code for d in diagnostics)
    fixes: Counter = Counter(d.code for d in diagnostics if fixable(d, unsafe))
    rows = [
        {"code": code, "name": _name(code), "count": n, "fixable": fixes[code] == n, "fixable_count": fixes[code]}
        for code, n in counts.items()
    ]
    rows.sort(key=lambda r: (-r["count"], r["code"]))
    return rows


def render_statistics(diagnostics, ctx) -> str:
    """Like ruff: ``count<TAB>code<TAB>[*] name`` (``[*]`` all fixable, ``[-]`` some); JSON for json formats."""
    rows = statistics(diagnostics, ctx.unsafe_fixes)
    if ctx.output_format in ("json", "json-lines"):
        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return ""
    cw = max(len(str(r["count"])) for r in rows)
    codew = max(len(r["code"]) for r in rows)
    out = []
    for r in rows:
        marker = "[*] " if r["fixable"] else "[-] " if r["fixable_count"] else "    "
        out.append(f"{r['count']:>{cw}}\t{r['code']:<{codew}}\t{marker}{r['name']}".rstrip())
    return "\n".join(out) + "\n"


def render_fixes(applied, ctx) -> str:
    """``--show-fixes``: per file, how many findings of each rule ``--fix`` fixed."""
    if not applied:
        return "No errors were fixed.\n"
    by_path: dict[str, Counter] = defaultdict(Counter)
    for d in applied:
        by_path[d.path][d.code] += 1
    n = len(applied)
    out = [f"Fixed {n} error{'s' if n != 1 else ''}:"]
    for path in sorted(by_path):
        out.append(f"- {ctx.display_path(path)}:")
        for code, count in sorted(by_path[path].items()):
            name = _name(code)
            out.append(f"    {count} × {code}" + (f" ({name})" if name else ""))
    return "\n".join(out) + "\n"


def attach_sources(ctx, analysis) -> None:
    """Give formats that show code (``full``) the analysed text of every file with a finding (a
    notebook's cells as they are, IPython lines included), and every format the run's notebooks."""
    notebooks = getattr(analysis, "notebooks", None) or {}
    ctx.notebooks.update(notebooks)
    project = getattr(analysis, "project", None)
    if project is None:
        return
    for d in analysis.diagnostics:
        if d.path in ctx.sources:
            continue
        if d.path in notebooks:
            ctx.sources[d.path] = notebooks[d.path].source_text
            continue
        try:
            ctx.sources[d.path] = project.source(d.path)
        except (OSError, ValueError):
            pass
