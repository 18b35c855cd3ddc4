"""What the keyword fixes of ``dllint/fixes/keywords.py`` would find in a call, read from ``ast``
and the source text instead of a libcst tree: a run that prints no edits (``check`` in the text
formats) marks a finding fixable without importing libcst (0.1 s) or parsing the statement.

Only what decides whether a fix exists, and its message, is read here; the edits themselves are
always built by libcst. ``tests/test_keyword_text.py`` compares both on tricky layouts. As for
DL101's ``can_convert_in_init``, the one case where they differ is a statement that ``ast`` reads
and libcst cannot: the edits then do not exist.
"""

from __future__ import annotations

import ast
import io
import tokenize

from dllint.names import NUM_WORKERS_POSITION
from dllint.textutil import line_starts, offset


def keyword_edit_facts(ctx, call: ast.Call) -> tuple[tuple[str, ...], bool, str | None]:
    """(the call's keyword names, whether an argument is a generator expression without
    parentheses of its own, the source of its ``num_workers`` argument as
    ``keywords.simple_argument`` gives it or None): what ``add_keyword`` and ``simple_argument``
    decide."""
    names = tuple(kw.arg for kw in call.keywords if kw.arg is not None)
    return names, bare_generator(ctx, call), _simple_argument(ctx, call, "num_workers", NUM_WORKERS_POSITION)


def bare_generator(ctx, call: ast.Call) -> bool:
    """``f(x for x in y)``: the generator's parentheses are the call's (libcst: no ``lpar``)."""
    if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.GeneratorExp):
        return False
    gen = call.args[0]
    between = ctx.text[_offset(ctx, call.func.end_lineno, call.func.end_col_offset) : _offset(ctx, gen.lineno, gen.col_offset)]
    return "(" not in between


def _simple_argument(ctx, call: ast.Call, name: str, position: int) -> str | None:
    """``keywords.simple_argument``: the argument's source, its own parentheses included, when it
    is a name or an attribute of names written on one line without a comment."""
    found = [kw for kw in call.keywords if kw.arg == name]
    node = left = None
    if len(found) == 1:
        node, left = found[0].value, (found[0].lineno, found[0].col_offset)
    else:  # (libcst's lookup wants the keyword exactly once: given twice, the position decides)
        # libcst's positional arguments: the call's own, then its ``**`` arguments (keyword None)
        positional = [*call.args, *(kw for kw in call.keywords if kw.arg is None)]
        if len(positional) > position and not any(isinstance(a, (ast.Starred, ast.keyword)) for a in positional[: position + 1]):
            node, before = positional[position], positional[position - 1]
            left = (before.end_lineno, before.end_col_offset)
    if node is None:
        return None
    inner = node
    while isinstance(inner, ast.Attribute):
        inner = inner.value
    if not isinstance(inner, ast.Name):
        return None
    code = _with_parentheses(ctx, node, left, call)
    if code is None or "#" in code or "\n" in code:  # (as libcst's check: a lone "\r" passes)
        return None
    return code


def _with_parentheses(ctx, node: ast.AST, left: tuple[int, int], call: ast.Call) -> str | None:
    """The source of ``node`` with the parentheses around it that belong to it: the ``(`` tokens
    after the ``=`` or ``,`` before it (``left`` is a position before those), and as many ``)``
    after it. None when the tokens are not as expected."""
    text = ctx.text
    start = _offset(ctx, node.lineno, node.col_offset)
    end = _offset(ctx, node.end_lineno, node.end_col_offset)
    opened = []  # offsets (in ``before``) of the value's own ``(`` tokens
    before = text[_offset(ctx, *left) : start]
    try:
        for tok in tokenize.generate_tokens(io.StringIO(before).readline):
            if tok.type == tokenize.OP and tok.string in ("=", ","):
                opened = []
            elif tok.type == tokenize.OP and tok.string == "(":  # (a ")" closes the previous argument's)
                opened.append(_line_offset(before, tok.start))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    if not opened:
        return text[start:end]
    first = _offset(ctx, *left) + opened[0]
    after = text[end : _offset(ctx, call.end_lineno, call.end_col_offset)]
    closing = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(after).readline):
            if tok.type == tokenize.OP and tok.string == ")":
                closing += 1
                if closing == len(opened):
                    return text[first : end + _line_offset(after, tok.end)]
            elif tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                return None
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return None


def _offset(ctx, row: int, byte_col: int) -> int:
    """The offset in ``ctx.text`` of an ``ast`` position (its columns count UTF-8 bytes)."""
    starts = ctx._cache.get(_STARTS)
    if starts is None:
        starts = ctx._cache[_STARTS] = line_starts(ctx.text)
    return offset(ctx.text, starts, row, ctx._char_col(row, byte_col))


_STARTS = ("keyword_text", "line_starts")


def _line_offset(text: str, position: tuple[int, int]) -> int:
    """The offset in ``text`` of a ``tokenize`` position (row from 1, column in characters)."""
    row, col = position
    offset = 0
    for _ in range(row - 1):
        offset = text.index("\n", offset) + 1
    return offset + col
