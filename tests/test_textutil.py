"""Lines and offsets as Python's tokenizer counts them (``\\n``, ``\\r\\n``, ``\\r`` only), on
texts with and without the other separators ``str.splitlines`` would split on (form feed,
vertical tab, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029``): those take the regular
expressions' path, the others ``str.splitlines``; both must give the same answer."""

from __future__ import annotations

import random
import re

from dllint.textutil import line_starts, split_lines

NEWLINE = re.compile(r"\r\n|\r|\n")
KEEPENDS = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # as ast.get_source_segment splits


def reference_lines(text: str) -> list[str]:
    lines = NEWLINE.split(text)
    if lines and lines[-1] == "" and text:
        lines.pop()
    return lines


def reference_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in NEWLINE.finditer(text)]


def test_lines_and_starts_match_the_tokenizer_on_random_texts():
    plain = ["a", "bc", "\n", "\r", "\r\n", " ", "é"]
    rare = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
    rng = random.Random(7)
    for i in range(20000):
        alphabet = plain + rare if i % 2 else plain
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        assert split_lines(text) == reference_lines(text), repr(text)
        assert split_lines(text, keepends=True) == KEEPENDS.findall(text), repr(text)
        assert line_starts(text) == reference_starts(text), repr(text)


def test_edge_cases():
    assert split_lines("") == [""] and split_lines("", keepends=True) == [] and line_starts("") == [0]
    assert split_lines("a\n\n") == ["a", ""] and line_starts("a\n\n") == [0, 2, 3]
    assert split_lines("a\x0cb\nc") == ["a\x0cb", "c"] and line_starts("a\x0cb\nc") == [0, 4]
    assert split_lines("x\r\ny\r", keepends=True) == ["x\r\n", "y\r"] and line_starts("x\r\ny") == [0, 3]
