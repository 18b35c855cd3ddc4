"""Keyword arguments of a call: add one (DL102 ``map_location=``, DL301 ``multiprocessing_context=``),
guard one on the number of workers or remove one (DL304). The call is found by its span; the
layout of the argument list is kept (one argument per line stays one per line, comments stay
where they are)."""

from __future__ import annotations

import ast

from dllint.fixes.cst import CstSource, parses_as
from dllint.model import Edit, Span


def _keyword(call, name: str):
    found = [a for a in call.args if a.keyword is not None and a.keyword.value == name]
    return found[0] if len(found) == 1 else None


def simple_argument(src: CstSource, call_span: Span, name: str, position: int | None = None) -> str | None:
    """The source of the call's argument ``name`` (or its positional argument ``position``) when
    it is a name or an attribute of names (reading it twice has no effect), else None."""
    import libcst as cst

    call = src.find(cst.Call, call_span)
    if call is None:
        return None
    arg = _keyword(call, name)
    if arg is None and position is not None:
        positional = [a for a in call.args if a.keyword is None]
        if len(positional) > position and not any(a.star for a in positional[: position + 1]):
            arg = positional[position]
    if arg is None:
        return None
    node = arg.value
    while isinstance(node, cst.Attribute):
        node = node.value
    if not isinstance(node, cst.Name) or "#" in src.code(arg.value) or "\n" in src.code(arg.value):
        return None
    return src.code(arg.value)


def add_keyword(src: CstSource, call_span: Span, name: str, value: str) -> tuple[Edit, ...] | None:
    """Edits adding ``name=value`` as the call's last argument; None when the call is not found,
    already passes ``name``, or takes a bare generator (``f(x for x in y)``) that would need
    parentheses first."""
    import libcst as cst

    call = src.find(cst.Call, call_span)
    if call is None or any(a.keyword is not None and a.keyword.value == name for a in call.args):
        return None
    if any(isinstance(a.value, cst.GeneratorExp) and not a.value.lpar for a in call.args):
        return None
    arg = cst.Arg(
        keyword=cst.Name(name),
        value=cst.parse_expression(value),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    return src.replace(call, call.with_changes(args=_appended(call, arg)))


def _appended(call, arg) -> list:
    """The call's arguments with ``arg`` last, laid out like the others."""
    import libcst as cst

    args = list(call.args)
    if not args:
        return [arg]
    last = args[-1]
    comma = last.comma
    between = _between(call, args)
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace) and between is not None:
        # one argument per line with a trailing comma: the new one on its own line, before `)`
        closing = comma.whitespace_after
        kept = comma.with_changes(whitespace_after=closing.with_changes(empty_lines=(), indent=between.indent, last_line=between.last_line))
        new_comma = cst.Comma(
            whitespace_after=cst.ParenthesizedWhitespace(
                first_line=cst.TrailingWhitespace(), empty_lines=closing.empty_lines, indent=closing.indent, last_line=closing.last_line
            )
        )
        args[-1] = last.with_changes(comma=kept)
        return [*args, arg.with_changes(comma=new_comma)]
    if isinstance(comma, cst.Comma):  # `f(a, b, )`: the trailing comma moves to the new argument
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_before=comma.whitespace_before, whitespace_after=cst.SimpleWhitespace(" ")))
        return [*args, arg.with_changes(comma=comma)]
    after = last.whitespace_after_arg
    if isinstance(after, cst.ParenthesizedWhitespace) and between is not None:
        # `f(\n    a,\n    b\n)`: the new argument on a line of its own, `)` stays where it was
        args[-1] = last.with_changes(
            whitespace_after_arg=cst.SimpleWhitespace(""),
            comma=cst.Comma(whitespace_after=cst.ParenthesizedWhitespace(indent=between.indent, last_line=between.last_line)),
        )
        return [*args, arg.with_changes(whitespace_after_arg=after)]
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return [*args, arg]


def _between(call, args):
    """The line break and indentation that lead to an argument on its own line, if the call
    puts its arguments on their own lines."""
    import libcst as cst

    for a in reversed(args[:-1]):
        if isinstance(a.comma, cst.Comma) and isinstance(a.comma.whitespace_after, cst.ParenthesizedWhitespace):
            return a.comma.whitespace_after
    ws = call.whitespace_before_args
    return ws if isinstance(ws, cst.ParenthesizedWhitespace) else None


def guard_keyword(src: CstSource, call_span: Span, name: str, nw: str) -> tuple[Edit, ...] | None:
    """Edits making ``name=V`` take effect only with workers: ``V if NW > 0 else None``
    (``else False`` for ``persistent_workers``; ``NW > 0`` for ``persistent_workers=True``), with
    ``V`` parenthesized when the conditional expression would otherwise parse differently
    (``(4 if fast else 2) if NW > 0 else None``, a lambda, a walrus). ``nw`` is the num_workers
    expression's source (a name, an attribute, a literal)."""
    import libcst as cst

    call = src.find(cst.Call, call_span)
    arg = _keyword(call, name) if call is not None else None
    if arg is None:
        return None
    value = arg.value
    test = cst.parse_expression(f"{nw} > 0")
    if name == "persistent_workers" and isinstance(value, cst.Name) and value.value == "True" and not value.lpar:
        return src.replace(value, test)
    fallback = "False" if name == "persistent_workers" else "None"
    try:
        expected = ast.parse(f"(VALUE if {nw} > 0 else {fallback})", mode="eval").body
        expected.body = ast.parse(f"({src.code(value)})", mode="eval").body
    except SyntaxError:
        return None
    for body in (value, value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])):
        new = cst.IfExp(test=test, body=body, orelse=cst.Name(fallback))
        if parses_as(src.code(new), expected):
            return src.replace(value, new)
    return None


def remove_keyword(src: CstSource, call_span: Span, name: str | tuple[str, ...]) -> tuple[Edit, ...] | None:
    """Edits dropping ``name=...`` (or each of several names; with one separating comma each);
    None when a comment would go with one."""
    import libcst as cst

    call = src.find(cst.Call, call_span)
    if call is None:
        return None
    new = call
    for one in (name,) if isinstance(name, str) else name:
        new = _without(src, new, one)
        if new is None:
            return None
    return src.replace(call, new)


def _without(src: CstSource, call, name: str):
    """``call`` without its keyword argument ``name``, or None."""
    import libcst as cst

    arg = _keyword(call, name)
    if arg is None or "#" in src.code(arg):
        return None
    args = list(call.args)
    i = next(j for j, a in enumerate(args) if a is arg)
    if i == len(args) - 1 and i > 0:
        prev = args[i - 1]
        if isinstance(arg.comma, cst.Comma):  # a trailing comma: the previous argument takes it
            mine, theirs = arg.comma.whitespace_after, prev.comma.whitespace_after
            if "#" not in src.code(prev.comma):
                args[i - 1] = prev.with_changes(comma=arg.comma)
            elif isinstance(mine, cst.ParenthesizedWhitespace) and isinstance(theirs, cst.ParenthesizedWhitespace):
                args[i - 1] = prev.with_changes(comma=prev.comma.with_changes(whitespace_after=theirs.with_changes(indent=mine.indent, last_line=mine.last_line)))
            else:
                return None
        else:
            if "#" in src.code(prev.comma):
                return None
            args[i - 1] = prev.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=arg.whitespace_after_arg)
    del args[i]
    return call.with_changes(args=args)
