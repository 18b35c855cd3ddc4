"""``path:row:col: CODE [*] message`` lines, then a summary, as ruff prints them."""

from __future__ import annotations

import click

from dllint.fix import allowed


def fixable(diag, unsafe: bool) -> bool:
    return diag.fix is not None and allowed(diag.fix.applicability, unsafe)


def position(diag) -> str:
    """``row`` for a file; ``cell 3:line 2`` for a notebook (line 2 of its third cell)."""
    cell = getattr(diag, "cell", None)
    return f"cell {cell}:line {diag.cell_row}" if cell is not None else f"{diag.span.row}"


def location(diag) -> str:
    """``row:col``, or ``cell 3:line 2:9`` for a notebook: the coordinates every format shows."""
    return f"{position(diag)}:{diag.span.col}"


def line(diag, ctx) -> str:
    path = ctx.display_path(diag.path)
    marker = " [*]" if fixable(diag, ctx.unsafe_fixes) else ""
    if ctx.color:
        location = (
            click.style(path, bold=True)
            + click.style(":", fg="cyan")
            + position(diag)
            + click.style(":", fg="cyan")
            + f"{diag.span.col}"
            + click.style(":", fg="cyan")
        )
        code = click.style(diag.code, fg="red", bold=True)
        return f"{location} {code}{click.style(marker, fg='cyan')} {diag.message}"
    return f"{path}:{position(diag)}:{diag.span.col}: {diag.code}{marker} {diag.message}"


def summary(diagnostics, ctx) -> str:
    n = len(diagnostics)
    fixed = ctx.fix_applied
    if n == 0 and fixed == 0:
        return "All checks passed!"
    total = n + fixed
    noun = "error" if total == 1 else "errors"
    if fixed:
        head = f"Found {total} {noun} ({fixed} fixed, {n} remaining)."
    else:
        can = sum(1 for d in diagnostics if fixable(d, ctx.unsafe_fixes))
        flag = "--fix --unsafe-fixes" if ctx.unsafe_fixes else "--fix"
        head = f"Found {total} {noun} ({can} fixable with {flag})." if can else f"Found {total} {noun}."
    hidden = 0 if ctx.unsafe_fixes else sum(1 for d in diagnostics if d.fix and d.fix.applicability == "unsafe")
    if hidden:
        head += f"\nNo more fixes available without `--unsafe-fixes` ({hidden} hidden {'fix' if hidden == 1 else 'fixes'} can be enabled with the `--unsafe-fixes` option)."
    return head


def render(diagnostics, ctx) -> str:
    out = [line(d, ctx) for d in diagnostics]
    if ctx.show_summary:
        out.append(summary(diagnostics, ctx))
    return "\n".join(out) + ("\n" if out else "")
