"""From a rewritten module back to text edits: fixes are computed as libcst transforms of the whole
module, and handed on as the few line ranges that changed (what --diff, the JSON output and the
edit merger work with)."""

from __future__ import annotations

import difflib

from dllint.model import Edit, Span
from dllint.textutil import common_ends


def line_edits(old: str, new: str) -> tuple[Edit, ...]:
    """The edits turning ``old`` into ``new``: one per run of changed lines, each replacing whole
    lines (from the start of its first line to the start of the line after its last)."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    # the common first and last lines are left out of the matcher (it is quadratic in the lines
    # between, and a module holds many identical blank lines)
    lo, hi = common_ends(a, b)
    edits = []
    matcher = difflib.SequenceMatcher(None, a[lo : len(a) - hi], b[lo : len(b) - hi], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        i1, i2, j1, j2 = i1 + lo, i2 + lo, j1 + lo, j2 + lo
        if tag != "equal":
            # edits are written with "\n"; applying them uses the file's own line ending
            content = "".join(b[j1:j2]).replace("\r\n", "\n").replace("\r", "\n")
            edits.append(Edit(content, Span(i1 + 1, 1, i2 + 1, 1)))
    return tuple(edits)
