"""libcst for fixes: one parse per file and run, nodes found by the positions the facts recorded,
and the text edits that turn the old text into the transformed module's code.

Positions are the ones of dllint.model.Span: 1-based rows, 1-based columns counting characters
(libcst counts characters from 0)."""

from __future__ import annotations

import bisect
import difflib
import re

from dllint.model import Edit, Span
from dllint.textutil import common_ends, first_row, line_starts, newline_of

_UNSET = object()
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class CstSource:
    """One file's text (or the lines ``first_row``.. of it: one top-level statement, see
    ``statement_source``), parsed with libcst on first use; positions are the file's."""

    def __init__(self, text: str, first_row: int = 1):
        self.text = text
        self.shift = first_row - 1  # rows before ``text`` in the file
        self._module = _UNSET
        self._by_start: dict | None = None
        self._positions = None

    @property
    def module(self):
        """The libcst Module, or None when libcst cannot parse the text."""
        if self._module is _UNSET:
            import libcst

            try:
                self._module = libcst.parse_module(self.text)
            except Exception:  # libcst's ParserSyntaxError, or a grammar it does not know
                self._module = None
        return self._module

    def positions(self):
        """node -> CodeRange for every node of the module (computed once)."""
        if self._positions is None:
            from libcst.metadata import MetadataWrapper, PositionProvider

            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = wrapper.resolve(PositionProvider)
        return self._positions

    def find(self, kind, span: Span, exact_end: bool = True):
        """The node of type ``kind`` whose code starts at ``span``'s start (and, with
        ``exact_end``, ends at its end); None when there is none (or libcst cannot parse)."""
        if self.module is None:
            return None
        if self._by_start is None:
            index: dict = {}
            for node, where in self.positions().items():
                index.setdefault((where.start.line + self.shift, where.start.column + 1), []).append(node)
            self._by_start = index
        for node in self._by_start.get((span.row, span.col), ()):
            if not isinstance(node, kind):
                continue
            if exact_end:
                end = self.positions()[node].end
                if (end.line + self.shift, end.column + 1) != (span.end_row, span.end_col):
                    continue
            return node
        return None

    def start_row(self, node) -> int:
        return self.positions()[node].start.line + self.shift

    def code(self, node) -> str:
        """The source of one node as libcst prints it (its own parentheses and commas included)."""
        return self.module.code_for_node(node)

    def replace(self, old, new) -> tuple[Edit, ...]:
        """Edits replacing the node ``old`` of this module with ``new``."""
        edits = edits_between(self.text, self.module.deep_replace(old, new).code)
        if not self.shift:
            return edits
        k = self.shift
        return tuple(Edit(e.content, Span(e.span.row + k, e.span.col, e.span.end_row + k, e.span.end_col)) for e in edits)


def source_of(project, path: str) -> CstSource:
    """The CstSource of an analysed file, parsed once per run (kept on the Project)."""
    memo = project.__dict__.setdefault("_cst_sources", {})
    text = project.source(path)  # asked each time: the project records who reads a file's text
    found = memo.get(path)
    if found is None:
        found = memo[path] = CstSource(text)
    return found


def _module_body(project, path: str, text: str):
    """The ast statements of an analysed file (parsed once per run), or None when it does not parse."""
    memo = project.__dict__.setdefault("_cst_statements", {})
    if path not in memo:
        import ast

        try:
            memo[path] = ast.parse(text).body
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            memo[path] = None
    return memo[path]


def import_edits(project, path: str, modules: list[str]) -> tuple[Edit, ...] | None:
    """The edits adding ``import m`` for each of ``modules`` that the file does not import at its
    top, placed as libcst's AddImportsVisitor places them in the whole module, computed on the
    file's head alone. The visitor decides from the module's first statements only: a docstring
    (or ``__strict__``) to keep first, the run of import lines after it, and the leading lines of
    the first statement that is not one (an empty line goes there). So the head (the text before
    that statement) followed by ``pass`` in its place gives the same edits, and a 2,000-line
    module is not parsed whole for one ``import functools``. None when libcst cannot parse it."""
    text = project.source(path)
    head = head_source(_module_body(project, path, text) or (), text)
    src = source_of(project, path) if head is None else head[1]
    if src.module is None:
        return None
    return edits_between(src.text, add_imports(src.module, modules).code)


def stand_in(text: str) -> str:
    """The statement standing for the rest of a module after its head (``head_source``)."""
    return "pass" + newline_of(text)


def head_source(body, text: str) -> tuple[int, CstSource] | None:
    """(``head_end``, the CstSource of the text before it with ``stand_in`` in place of the rest):
    what an edit of the module's head (an import, a helper class after the imports) needs parsed;
    None when there is no place to cut."""
    end = head_end(body, text)
    if end is None:
        return None
    return end, CstSource(text[:end] + stand_in(text))


def head_end(body, text: str) -> int | None:
    """The offset in ``text`` of the line starting the first top-level statement that is not an
    import (its decorators first), the statements before it included whole; None when there is no
    such place to cut (only imports, the statement shares a line with an earlier one, or the file
    does not parse)."""
    import ast

    start = 0
    if body:
        first = body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            start = 1  # a docstring (libcst decides whether it is one: the head keeps it whole)
        elif isinstance(first, ast.Assign):
            start = 1  # `__strict__ = ...` or a statement: kept whole in the head either way
    for i in range(start, len(body)):
        stmt = body[i]
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        row = first_row(stmt)
        if i and (body[i - 1].end_lineno or body[i - 1].lineno) >= row:
            return None
        starts = line_starts(text)
        return starts[row - 1] if row <= len(starts) else None
    return None


def statement_source(project, path: str, span: Span) -> CstSource:
    """A CstSource of only the statement(s) on the rows of ``span`` (whole lines, with decorators
    and the statements sharing those lines), for fixes that edit inside one statement: a keyword of
    one call in a 12 MB module, or in a method of a 2,000-line class, does not build the concrete
    syntax tree of the module or the class. The innermost block holding the span is used: a
    statement nested in a function or class is parsed under a synthetic ``if 1:`` line (its own
    indentation kept, so its text and columns are the file's). The whole file when it does not
    parse with ``ast``."""
    memo = project.__dict__.setdefault("_cst_statements", {})
    text = project.source(path)
    body = _module_body(project, path, text)
    if not body:
        return source_of(project, path)
    starts = line_starts(text)
    found = _statement_rows(body, span, text, starts)
    if found is None:
        return source_of(project, path)
    first, last, nested = found
    key = (path, first, last)
    src = memo.get(key)
    if src is None:
        lo = starts[first - 1]
        hi = starts[last] if last < len(starts) else len(text)
        if nested:
            src = CstSource("if 1:" + newline_of(text) + text[lo:hi], first - 1)
        else:
            src = CstSource(text[lo:hi], first)
        memo[key] = src
    return src


_BLOCKS = ("body", "orelse", "finalbody")


def _statement_rows(body, span: Span, text: str, starts) -> tuple[int, int, bool] | None:
    """(first row, last row, nested) of the statements of the innermost block that hold ``span``."""
    found = None
    block, nested = body, False
    while True:
        lo, hi = span.row, span.end_row
        hits = []
        for s in block:  # widen to whole statements, and to the statements sharing their rows
            a = first_row(s)
            b = s.end_lineno or s.lineno
            if a <= hi and b >= lo:
                lo, hi = min(lo, a), max(hi, b)
                hits.append(s)
        if not hits or (nested and not whole_lines(hits, text, starts)):
            break
        found = (lo, hi, nested)
        inner = _inner_block(hits, span) if len(hits) == 1 else None
        if inner is None:
            break
        block, nested = inner, True
    if found is None or found[0] > len(starts):
        return None
    return found


def _inner_block(hits, span: Span):
    """The child block of the one compound statement in ``hits`` that holds ``span`` entirely and
    starts on a row after the statement's header; None when the span is in the header."""
    (stmt,) = hits
    blocks = [getattr(stmt, name, None) for name in _BLOCKS]
    blocks += [h.body for h in getattr(stmt, "handlers", ())]
    blocks += [c.body for c in getattr(stmt, "cases", ())]
    for block in blocks:
        if not isinstance(block, list) or not block or not hasattr(block[0], "lineno"):
            continue
        a = first_row(block[0])
        b = block[-1].end_lineno or block[-1].lineno
        if a <= span.row and span.end_row <= b and a > stmt.lineno:
            return block
    return None


def whole_lines(hits, text: str, starts) -> bool:
    """The statements start their first line (only indentation before them) and end their last
    one (only a comment or a semicolon after them)."""
    def line(row: int) -> bytes:
        lo = starts[row - 1]
        hi = starts[row] if row < len(starts) else len(text)
        return text[lo:hi].encode("utf-8", "surrogatepass")

    head = hits[0]
    decorators = getattr(head, "decorator_list", ())
    top = min([head, *decorators], key=lambda n: (n.lineno, n.col_offset))
    if top is not head:  # a decorator: `@` sits one column before the expression
        if line(top.lineno)[: top.col_offset].rstrip()[:-1].strip():
            return False
    elif line(head.lineno)[: head.col_offset].strip():
        return False
    tail = hits[-1]
    rest = line(tail.end_lineno)[tail.end_col_offset :].lstrip(b"; \t").strip()
    return not rest or rest.startswith(b"#")


def add_imports(module, modules: list[str]):
    """``module`` with ``import m`` for each of ``modules`` that it does not import yet, placed by
    libcst's AddImportsVisitor (after the leading imports)."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext()
    for name in modules:
        AddImportsVisitor.add_needed_import(context, name)
    return AddImportsVisitor(context).transform_module(module)


def parses_as(code: str, expected_ast) -> bool:
    """``code`` (an expression) parses to the tree ``expected_ast`` (an ast node)."""
    import ast

    try:
        tree = ast.parse(f"({code})", mode="eval").body
    except SyntaxError:
        return False
    return ast.dump(tree) == ast.dump(expected_ast)


# ---------------------------------------------------------------------------- text edits


def edits_between(before: str, after: str) -> tuple[Edit, ...]:
    """The smallest text edits (in ``before``'s coordinates) that turn ``before`` into ``after``:
    the changed lines (difflib on lines), each trimmed to the changed characters without cutting a
    word or a ``\\r\\n`` in two. Edit contents use ``\\n`` (dllint/fix.py writes the file's own
    newline)."""
    if before == after:
        return ()
    a = _LINES.findall(before)
    b = _LINES.findall(after)
    lo, hi = common_ends(a, b)
    offsets = [0]
    for line in a:
        offsets.append(offsets[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, a[lo : len(a) - hi], b[lo : len(b) - hi], autojunk=False)
    newline = newline_of(before)
    starts = line_starts(before)
    edits = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = offsets[lo + i1], offsets[lo + i2]
        old = before[start:end]
        new = "".join(b[lo + j1 : lo + j2])
        p, s = _trim(old, new)
        content = new[p : len(new) - s]
        if newline != "\n":
            content = content.replace(newline, "\n")
        edits.append(Edit(content, _span(starts, start + p, end - s)))
    return tuple(edits)


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _trim(old: str, new: str) -> tuple[int, int]:
    """(common prefix, common suffix) lengths, not overlapping, backed off to word and line-end
    boundaries (the prefix is settled first, so the suffix may take what it gave back)."""
    n = min(len(old), len(new))
    p = 0
    while p < n and old[p] == new[p]:
        p += 1
    while p > 0 and _cuts(old, new, p, p):
        p -= 1
    s = 0
    while s < n - p and old[-1 - s] == new[-1 - s]:
        s += 1
    while s > 0 and _cuts(old, new, len(old) - s, len(new) - s):
        s -= 1
    return p, s


def _cuts(old: str, new: str, i: int, j: int) -> bool:
    """A boundary before ``old[i]`` / ``new[j]`` (common text on one side of it) splits a word or
    a \\r\\n."""
    lefts = [x for x in (old[i - 1 : i], new[j - 1 : j]) if x]
    rights = [x for x in (old[i : i + 1], new[j : j + 1]) if x]
    if "\r" in lefts and "\n" in rights:
        return True
    return any(_word(x) for x in lefts) and any(_word(x) for x in rights)


def _span(starts: list[int], a: int, b: int) -> Span:
    row = bisect.bisect_right(starts, a)
    end_row = bisect.bisect_right(starts, b)
    return Span(row, a - starts[row - 1] + 1, end_row, b - starts[end_row - 1] + 1)
