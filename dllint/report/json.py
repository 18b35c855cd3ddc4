"""The JSON list ruff users know: one object per finding, 1-based rows and columns.

A notebook finding has ``cell`` (1-based, every cell counted) and rows inside that cell, as ruff
reports them; so do its fix's edits, each with the ``cell`` it edits."""

from __future__ import annotations

import json
import os


def _loc(row: int, col: int) -> dict:
    return {"row": row, "column": col}


def _edit(e, notebook) -> dict:
    """An edit in file rows, or for a notebook in rows of the cell it falls in, with ``cell``
    (a notebook's fix may touch another cell than its finding: an import added to the first)."""
    if notebook is not None:
        start = notebook.cell_position(e.span.row)
        end = notebook.cell_position(e.span.end_row)
        if start is not None and end is not None:
            return {
                "content": e.content,
                "location": _loc(start[1], e.span.col),
                "end_location": _loc(end[1], e.span.end_col),
                "cell": start[0],
            }
    return {"content": e.content, "location": _loc(e.span.row, e.span.col), "end_location": _loc(e.span.end_row, e.span.end_col)}


def to_dict(diag, ctx=None) -> dict:
    notebook = ctx.notebooks.get(diag.path) if ctx is not None and diag.cell is not None else None
    fix = None
    if diag.fix is not None:
        fix = {
            "applicability": diag.fix.applicability,
            "message": diag.fix.message,
            "edits": [_edit(e, notebook) for e in diag.fix.edits],
        }
    from dllint.rules import rule_by_code

    rule = rule_by_code(diag.code)
    shift = diag.cell_row_offset  # notebooks: rows within the cell, as ruff reports them
    out = {
        "cell": diag.cell,
        "code": diag.code,
        "end_location": _loc(diag.span.end_row - shift, diag.span.end_col),
        "filename": os.path.abspath(diag.path),
        "fix": fix,
        "location": _loc(diag.span.row - shift, diag.span.col),
        "message": diag.message,
        "noqa_row": (diag.noqa_row or diag.span.row) - shift,
        "url": rule.url if rule else None,
    }
    if diag.details:
        out["details"] = {k: list(v) if isinstance(v, tuple) else v for k, v in diag.details}
    return out


def render(diagnostics, ctx) -> str:
    return json.dumps([to_dict(d, ctx) for d in diagnostics], indent=2) + "\n"
