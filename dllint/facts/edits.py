"""Where edits go, read off one file's syntax tree (shared by the rules that build fixes)."""

from __future__ import annotations

import ast


def insertion_point(ctx, call: ast.Call) -> tuple[int, int, bool] | None:
    """Where a new keyword argument goes: after the last argument (row, col, needs a comma first).
    None when a keyword cannot be appended (a bare generator argument)."""
    items = [*call.args, *call.keywords]
    if any(isinstance(a, ast.GeneratorExp) for a in call.args) and len(items) == 1:
        return None
    if not items:
        span = ctx.span(call)
        return span.end_row, span.end_col - 1, False
    last = max(items, key=lambda n: (n.end_lineno, n.end_col_offset))
    span = ctx.span(last)
    return span.end_row, span.end_col, True
