"""Lines and offsets the way Python's tokenizer counts them (``\\n``, ``\\r\\n``, ``\\r`` only;
str.splitlines would also split on form feeds and other separators)."""

from __future__ import annotations

import re
from itertools import accumulate

_NEWLINE = re.compile(r"\r\n|\r|\n")
# what str.splitlines splits on besides \n, \r and \r\n: a text without them is split by it
# as the tokenizer splits it (in C, several times faster than the regular expressions)
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_LINE_KEEPENDS = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # as ast.get_source_segment splits


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """Lines (with their terminators when ``keepends``); a trailing newline does not add an empty
    line (without ``keepends``, an empty text is one empty line)."""
    if _OTHER_BREAKS.search(text) is None:
        return text.splitlines(keepends) if text or keepends else [""]
    if keepends:
        return _LINE_KEEPENDS.findall(text)
    lines = _NEWLINE.split(text)
    if lines and lines[-1] == "" and text:
        lines.pop()
    return lines


def line_starts(text: str) -> list[int]:
    """Offset of the start of each line (1-based row r starts at starts[r - 1])."""
    starts = [0]
    starts.extend(accumulate(map(len, split_lines(text, True))))  # each line's end
    if text and text[-1] not in "\r\n":
        starts.pop()  # the last line has no terminator: no line starts after it
    return starts


def newline_of(text: str) -> str:
    m = _NEWLINE.search(text)
    return m.group(0) if m else "\n"


def offset(text: str, starts: list[int], row: int, col: int) -> int:
    """Character offset of a 1-based (row, col) position."""
    if row - 1 >= len(starts):
        return len(text)
    return min(starts[row - 1] + col - 1, len(text))


def clip(text: str, width: int = 32) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis: code quoted in a message."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def clip_code(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters without breaking a backquoted span: a text that starts
    with code keeps only that code (clipped inside its quotes)."""
    if len(text) <= width:
        return text
    if text.startswith("`") and "`" in text[1:]:
        inner = text[1:].split("`", 1)[0]
        return f"`{clip(inner, max(width - 2, 8))}`"
    return clip(text, width)


def display_path(path: str, start: str | None = None) -> str:
    """A path as the user would write it: relative to the current directory (or ``start``) when
    below it."""
    import os

    try:
        rel = os.path.relpath(path, start)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def common_ends(a: list, b: list) -> tuple[int, int]:
    """(length of the common prefix, length of the common suffix) of two sequences of lines, not
    overlapping: what a line diff can leave out."""
    lo = 0
    while lo < len(a) and lo < len(b) and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < len(a) - lo and hi < len(b) - lo and a[-1 - hi] == b[-1 - hi]:
        hi += 1
    return lo, hi


def first_row(stmt) -> int:
    """The first row of an ``ast`` statement, its decorators included."""
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
