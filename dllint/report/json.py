"""The JSON list ruff users know: one object per finding, 1-based rows and columns."""

from __future__ import annotations

import json
import os


def _loc(row: int, col: int) -> dict:
    return {"row": row, "column": col}


def to_dict(diag) -> dict:
    fix = None
    if diag.fix is not None:
        fix = {
            "applicability": diag.fix.applicability,
            "message": diag.fix.message,
            "edits": [
                {
                    "content": e.content,
                    "location": _loc(e.span.row, e.span.col),
                    "end_location": _loc(e.span.end_row, e.span.end_col),
                }
                for e in diag.fix.edits
            ],
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
    return json.dumps([to_dict(d) for d in diagnostics], indent=2) + "\n"
