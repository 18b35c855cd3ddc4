"""``--output-format full``: ruff's default style.

For each finding: the ``path:row:col: CODE [*] message`` line, the source lines around it with a
caret underline under the span, the fix's description, and the fix as a small diff with old and
new line numbers when the finding has one. Then the same summary as ``concise``.

``text`` stays ``concise`` (one line per finding): the golden fixtures, scripts and editors parse
that line, so the longer layout is opt-in.
"""

from __future__ import annotations

import difflib

from dllint.facts.extract import decode_source
from dllint.fix import apply_edits
from dllint.report.text import fixable, line, summary
from dllint.textutil import split_lines

CONTEXT = 2  # source lines shown before and after the span
MAX_SPAN_LINES = 6  # longer spans show their first and last lines
TAB = 4
APPLICABILITY = {"safe": "Safe fix", "unsafe": "Unsafe fix", "display": "Suggested change (not applied)"}


def _source(path: str, ctx) -> str | None:
    text = ctx.sources.get(path)
    if text is not None:
        return text
    try:
        with open(path, "rb") as fh:
            text = decode_source(fh.read())
    except (OSError, ValueError):
        return None
    ctx.sources[path] = text
    return text


def _width(text: str) -> int:
    return len(text.expandtabs(TAB))


def _underline(text: str, start: int, end: int) -> tuple[int, int]:
    """Display (offset, length) of characters [start, end) (0-based) of ``text``, at least 1 wide."""
    a = _width(text[:start])
    b = _width(text[:end])
    return a, max(1, b - a)


def _cell_end(diag, ctx) -> int | None:
    """The last row (of the concatenated cells) of a notebook finding's cell, when known."""
    notebook = ctx.notebooks.get(diag.path) if getattr(diag, "cell", None) is not None else None
    if notebook is None:
        return None
    cell = next((c for c in notebook.cells if c.number == diag.cell), None)
    return cell.first_row + len(cell.lines) - 1 if cell is not None else None


def snippet(diag, lines: list[str], cell_end: int | None = None) -> list[str]:
    span = diag.span
    n = len(lines)
    if n == 0:
        return []
    # a notebook: rows of the concatenated cells, shown as lines of the finding's cell (context
    # after the span only when the cell's end is known)
    shift = diag.cell_row_offset if getattr(diag, "cell", None) is not None else 0
    first = min(max(span.row, 1), n)
    last = min(max(span.end_row, first), n)
    in_cell = getattr(diag, "cell", None) is not None
    after = (CONTEXT if cell_end is not None else 0) if in_cell else CONTEXT
    end = min(n, cell_end) if in_cell and cell_end is not None else n
    shown = list(range(max(1 + shift, first - CONTEXT), min(end, last + after) + 1))
    while shown and shown[0] < first and not lines[shown[0] - 1].strip():
        shown.pop(0)
    while shown and shown[-1] > last and not lines[shown[-1] - 1].strip():
        shown.pop()
    if last - first + 1 > MAX_SPAN_LINES:
        keep_to = first + MAX_SPAN_LINES // 2 - 1
        keep_from = last - MAX_SPAN_LINES // 2 + 1
        shown = [r for r in shown if not keep_to < r < keep_from]
    width = len(str(shown[-1] - shift)) if shown else 1
    gutter = " " * width + " |"
    out = [gutter]
    previous = None
    for row in shown:
        if previous is not None and row != previous + 1:
            out.append(" " * width + " ...")
        previous = row
        text = lines[row - 1]
        out.append(f"{row - shift:>{width}} | {text.expandtabs(TAB)}".rstrip())
        if first <= row <= last:
            start = span.col - 1 if row == first else len(text) - len(text.lstrip())
            end = span.end_col - 1 if row == last else len(text)
            start = min(max(start, 0), len(text))
            end = min(max(end, start), len(text))
            offset, length = _underline(text, start, end)
            label = f" {diag.code}" if row == last else ""
            out.append(f"{gutter} {' ' * offset}{'^' * length}{label}")
    out.append(gutter)
    return out


def notebook_fix_diff(diag, notebook) -> list[str] | None:
    """The fix of a notebook's finding as each changed cell's own lines (IPython lines as the cell
    holds them), numbered within the cell under a ``cell N`` heading; None when the edits cannot be
    mapped to cells."""
    from dllint.notebook import NotebookError

    fixed, applied = apply_edits(notebook.text, [diag])
    if not applied or fixed == notebook.text:
        return []
    try:
        changes = notebook.cell_changes(fixed)
    except NotebookError:
        return None
    out: list[str] = []
    for number, old, new in changes:
        width = len(str(max(len(old), len(new), 1)))
        blank = " " * width
        if out:
            out.append("")
        out.append(f"  cell {number}")
        for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(1):
            if out[-1] != f"  cell {number}":
                out.append(f"  {blank} {blank} ...")
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    for k in range(i2 - i1):
                        out.append(f"  {i1 + k + 1:>{width}} {j1 + k + 1:>{width}} |  {old[i1 + k].expandtabs(TAB)}".rstrip())
                    continue
                for k in range(i1, i2):
                    out.append(f"  {k + 1:>{width}} {blank} |- {old[k].expandtabs(TAB)}".rstrip())
                for k in range(j1, j2):
                    out.append(f"  {blank} {k + 1:>{width}} |+ {new[k].expandtabs(TAB)}".rstrip())
    return out


def fix_diff(diag, text: str) -> list[str]:
    """The fix of ``diag`` alone, as changed lines with old / new line numbers (1 line of context).

    A notebook's fix (when ``notebook_fix_diff`` cannot place it in cells) may touch another cell,
    so its lines are shown without numbers."""
    fixed, applied = apply_edits(text, [diag])
    if not applied or fixed == text:
        return []
    old, new = split_lines(text), split_lines(fixed)
    numbered = getattr(diag, "cell", None) is None
    width = len(str(max(len(old), len(new), 1))) if numbered else 0
    blank = " " * width

    def num(k: int) -> str:
        return f"{k:>{width}}" if numbered else ""

    out: list[str] = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(1):
        if out:
            out.append(f"  {blank} {blank} ...")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for k in range(i2 - i1):
                    out.append(f"  {num(i1 + k + 1)} {num(j1 + k + 1)} |  {old[i1 + k].expandtabs(TAB)}".rstrip())
                continue
            for k in range(i1, i2):
                out.append(f"  {num(k + 1)} {blank} |- {old[k].expandtabs(TAB)}".rstrip())
            for k in range(j1, j2):
                out.append(f"  {blank} {num(k + 1)} |+ {new[k].expandtabs(TAB)}".rstrip())
    return out


def block(diag, ctx) -> list[str]:
    out = [line(diag, ctx)]
    text = _source(diag.path, ctx)
    lines = split_lines(text) if text is not None else []
    out.extend(snippet(diag, lines, _cell_end(diag, ctx)))
    for key, value in diag.details:  # the why, the evidence and the advice behind the short message
        if key in ("why", "evidence", "hazards", "error", "before spawn"):
            for item in value if isinstance(value, tuple) else (value,):
                out.append(f"  = {'note' if key == 'why' else key}: {item}")
    if diag.fix is not None:
        if diag.fix.message:
            out.append(f"  = help: {diag.fix.message}")
        notebook = ctx.notebooks.get(diag.path) if getattr(diag, "cell", None) is not None else None
        diff = notebook_fix_diff(diag, notebook) if notebook is not None else None
        if diff is None:
            diff = fix_diff(diag, text) if text is not None else []
        if diff:
            kind = APPLICABILITY.get(diag.fix.applicability, "Fix")
            if diag.fix.applicability == "unsafe" and not fixable(diag, ctx.unsafe_fixes):
                kind += " (enable with --unsafe-fixes)"
            out.append("")
            out.append(f"  {kind}:")
            out.extend(diff)
    out.append("")
    return out


def render(diagnostics, ctx) -> str:
    out: list[str] = []
    for diag in diagnostics:
        out.extend(block(diag, ctx))
    if ctx.show_summary:
        out.append(summary(diagnostics, ctx))
    return "\n".join(out) + ("\n" if out else "")
