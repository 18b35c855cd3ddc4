"""DL101's fix: ``self.<attr> = _CompactList(self.<attr>)`` as the last statement of a
constructor, and the class ``_CompactList`` defined after the module's imports (once).

The transform is defined on the whole module (``convert_whole``), but libcst only ever sees two
slices of it: the top-level statement holding the constructor, and the module's head (its imports
and the first statement after them), where the helper class goes. Both are parsed once per file
and run (``CompactSlices``), so a file with ten findings, or one 3,000-line training script with
its Dataset class in the middle, does not build that file's concrete syntax tree ten times; the
result is the same text (libcst prints what it parsed exactly, and neither slice's tree depends on
the code outside it; ``tests/test_fix_cst.py`` compares both paths).
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize

from dllint.codegen.compact_list import NAME as COMPACT_NAME
from dllint.codegen.compact_list import SOURCE as COMPACT_SOURCE
from dllint.fixes.cst import CstSource, head_source, stand_in, whole_lines
from dllint.textutil import first_row, line_starts, newline_of

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def convert_in_init(text: str, qualparts: list[str], attr: str, memo: dict | None = None) -> str | None:
    """The module ``text`` with the conversion added to the ``__init__`` named by ``qualparts``
    (Class.__init__, Outer.Class.__init__); None when the constructor cannot take it (a ``return``
    or ``yield`` in it: the conversion would be skipped on that path) or is not found. ``memo``
    (one dict per run) keeps each file's slices between findings (the rule remembers its edits
    across runs: ``Project.remember``)."""
    if not _is_init_path(qualparts):
        return None
    return _convert_in_init(text, qualparts, attr, memo)


def can_convert_in_init(text: str, qualparts: list[str], memo: dict | None = None) -> bool:
    """Whether ``convert_in_init`` gives the module a conversion, decided from ``ast`` alone (no
    libcst tree is built): the constructor is found, holds no ``return`` or ``yield``, and its
    body starts on a line of its own. (A file that ``ast`` reads and libcst cannot is the one case
    where the conversion still fails; ``tests/test_fix_cst.py`` compares both on every fixture.)"""
    return _is_init_path(qualparts) and _slices(text, memo).can_convert(qualparts[:-1])


def _is_init_path(qualparts: list[str]) -> bool:
    """A class's ``__init__`` (Class.__init__, Outer.Class.__init__), not one in a function."""
    return len(qualparts) >= 2 and qualparts[-1] == "__init__" and "<locals>" not in qualparts


def _convert_in_init(text: str, qualparts: list[str], attr: str, memo: dict | None) -> str | None:
    return _slices(text, memo).convert(qualparts[:-1], attr)


def _slices(text: str, memo: dict | None) -> CompactSlices:
    key = ("compact-slices", text)
    slices = memo.get(key) if memo is not None else None
    if slices is None:
        slices = CompactSlices(text)
        if memo is not None:
            memo[key] = slices
    return slices


def convertible_classes(text: str, body: list[ast.stmt]) -> frozenset[tuple[str, ...]]:
    """The class paths (Class, Outer.Class; not in functions) of ``text`` whose constructor
    ``can_convert_in_init`` accepts, from the module's already parsed ``body`` (the file's facts
    carry them, so that the `[*]` mark needs no second parse of the file)."""
    paths: set[tuple[str, ...]] = set()
    stack: list[tuple[ast.AST, tuple[str, ...]]] = [(stmt, ()) for stmt in body]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _FUNCS):
            continue
        if isinstance(node, ast.ClassDef):
            path = (*path, node.name)
            paths.add(path)
        stack.extend((child, path) for child in ast.iter_child_nodes(node) if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)))
    if not paths:
        return frozenset()
    slices = CompactSlices(text, body)
    return frozenset(p for p in paths if slices.can_convert(list(p)))


class CompactSlices:
    """One file's text, its top-level statements' rows (``ast``), and the libcst slices parsed so far."""

    def __init__(self, text: str, body: list[ast.stmt] | None = None):
        self.text = text
        if body is None:
            try:
                body = ast.parse(text).body
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                body = None
        self.body = body
        self.rows: list[tuple[int, int]] = []
        if body is not None:
            self.rows = [(first_row(s), s.end_lineno or s.lineno) for s in body]
        self.starts = line_starts(text)
        self._parsed: dict = {}  # (first, last) -> libcst Module of those rows, or None
        self._head = _UNSET
        self._before = _UNSET
        self._indent = _UNSET

    # ------------------------------------------------------------------ slices

    def _span_of(self, first: int, last: int) -> tuple[int, int]:
        """Rows ``first..last`` widened to the top-level statements sharing them."""
        for a, b in self.rows:
            if a <= last and b >= first:
                first, last = min(first, a), max(last, b)
        return first, last

    def _offsets(self, first: int, last: int) -> tuple[int, int]:
        lo = self.starts[first - 1]
        hi = self.starts[last] if last < len(self.starts) else len(self.text)
        return lo, hi

    def _module(self, first: int, last: int):
        """The libcst Module of the whole rows ``first..last`` (None: libcst cannot parse them)."""
        if (first, last) not in self._parsed:
            lo, hi = self._offsets(first, last)
            self._parsed[(first, last)] = CstSource(self.text[lo:hi]).module
        return self._parsed[(first, last)]

    # ------------------------------------------------------------------ the transform

    def can_convert(self, class_path: list[str]) -> bool:
        """``convert``'s answer (some text or None) from the ``ast`` of the constructor."""
        if self.body is None:
            return convert_whole(self.text, class_path, "x") is not None
        held = _holder(self.body, class_path)
        if held is None or _returns_or_yields(held[1], self.text, self.starts):
            return False
        init = held[1]
        first = init.body[0]
        if first.lineno > len(self.starts):
            return False
        lo, hi = self._offsets(first.lineno, first.lineno)
        # `def __init__(self): self.x = ...`: the body shares the header's line, no line to add
        # (ast's columns count UTF-8 bytes)
        return self.text[lo:hi].encode()[: first.col_offset].strip() == b""

    def convert(self, class_path: list[str], attr: str) -> str | None:
        if self.body is None or len(self.starts) == 0:
            return convert_whole(self.text, class_path, attr)
        held = _holder(self.body, class_path)
        if held is None:
            return None  # no such constructor (the whole-module transform changes nothing)
        k, init = held
        if _returns_or_yields(init, self.text, self.starts):
            return None  # the conversion would be skipped on that path
        if _nested_init(init):
            return convert_whole(self.text, class_path, attr)  # a def __init__ inside it: met first
        defined = any(isinstance(s, ast.ClassDef) and s.name == COMPACT_NAME for s in self.body)
        narrow = self._in_init(init, attr)
        head = None if defined else self._head_before()
        if narrow is not None and (defined or head is not None):
            # the constructor alone, and the helper on the text before the module's first
            # statement after its imports: neither parses the class
            lo, hi, new = narrow
            if defined:
                return self.text[:lo] + new + self.text[hi:]
            end, head_text = head
            if end <= lo:
                return head_text + self.text[end:lo] + new + self.text[hi:]
        first, last = self._span_of(*self.rows[k])
        head_last = None if defined else self._head_last()
        if head_last is not None and first <= head_last:
            # the constructor's statement is in the module's head: one slice, both changes
            first, last = self._span_of(1, max(last, head_last))
            module = self._module(first, last)
            if module is None or not self._same_config(module):
                return convert_whole(self.text, class_path, attr)
            new = _transform(module, class_path, attr, add_helper=True, indent=self._file_indent(), checked=True)
            if new is None:
                return None
            lo, hi = self._offsets(first, last)
            return self.text[:lo] + new + self.text[hi:]
        if narrow is not None:
            lo, hi, new = narrow
        else:
            module = self._module(first, last)
            if module is None or not self._same_config(module):
                return convert_whole(self.text, class_path, attr)
            new = _transform(module, class_path, attr, add_helper=False, checked=True)
            if new is None:
                return None
            lo, hi = self._offsets(first, last)
        out = new + self.text[hi:]
        if head_last is None:
            return self.text[:lo] + out
        head = self._head_code()
        if head is None:
            return convert_whole(self.text, class_path, attr)
        _, head_hi = self._offsets(1, head_last)
        return head + self.text[head_hi:lo] + out

    def _in_init(self, init: ast.AST, attr: str) -> tuple[int, int, str] | None:
        """(start, end, new text) of the constructor's own rows with the conversion appended, the
        constructor parsed alone under a synthetic ``if 1:`` line (its indentation kept, so its
        text is the file's): a 2,000-line class is not parsed for one line at the end of its
        ``__init__``. None when its rows are not whole lines of their own (a statement shares
        them) or libcst reads them differently: the caller parses the whole class."""
        first, last = first_row(init), init.end_lineno or init.lineno
        if last > len(self.starts) or not whole_lines([init], self.text, self.starts):
            return None
        key = ("init", first, last)
        lo, hi = self._offsets(first, last)
        newline = newline_of(self.text)
        if key not in self._parsed:
            self._parsed[key] = CstSource("if 1:" + newline + self.text[lo:hi]).module
        module = self._parsed[key]
        if module is None or not self._same_config(module):
            return None
        new = _transform(module, [], attr, add_helper=False, checked=True)
        if new is None or not new.startswith("if 1:" + newline):
            return None
        return lo, hi, new[len("if 1:" + newline) :]

    def _head_before(self) -> tuple[int, str] | None:
        """(offset, new text) of the text before the module's first statement after its leading
        imports, with the helper class added (computed once per file): that statement stands as
        ``pass`` (the helper goes before it, its leading comments kept), so a class there is not
        parsed. None when the statements do not allow the cut (``fixes.cst.head_end``) or
        libcst reads the head differently."""
        if self._before is _UNSET:
            self._before = None
            head = head_source(self.body or (), self.text)
            module = head[1].module if head is not None else None
            if module is not None and self._same_config(module):
                rest = stand_in(self.text)
                code = _add_helper(module, self._file_indent()).code
                if code.endswith(rest) and (len(code) == len(rest) or code[-len(rest) - 1] in "\r\n"):
                    self._before = (head[0], code[: -len(rest)])
        return self._before

    def _head_last(self) -> int | None:
        """The last row of the module's head: the leading imports (and a docstring) and the first
        statement after them, where the helper class goes before; None: no head (no statements)."""
        if not self.body:
            return None
        for i, stmt in enumerate(self.body):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) or (i == 0 and isinstance(stmt, ast.Expr)):
                continue
            return self._span_of(*self.rows[i])[1]
        return self._span_of(*self.rows[-1])[1]

    def _head_code(self) -> str | None:
        """The head's text with the helper class added (computed once per file)."""
        if self._head is _UNSET:
            last = self._head_last()
            module = self._module(1, last)
            if module is None or not self._same_config(module):
                self._head = None
            else:
                self._head = _add_helper(module, self._file_indent()).code
        return self._head

    def _same_config(self, module) -> bool:
        """The slice's default newline is the file's (new lines are written with it)."""
        return module.default_newline == newline_of(self.text)

    def _file_indent(self) -> str | None:
        """The whole module's default indentation as libcst detects it (its first INDENT)."""
        if self._indent is _UNSET:
            self._indent = self._first_indent()
        return self._indent

    def _first_indent(self) -> str | None:
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                if tok.type == tokenize.INDENT:
                    return tok.string
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return None
        return "    "


_UNSET = object()


def _holder(body: list[ast.stmt], class_path: list[str]) -> tuple[int, ast.AST] | None:
    """(the index of the top-level statement holding it, the node) of the first ``__init__`` of
    the class at ``class_path`` (classes nested in classes and in compound statements, not in
    functions), in the order the whole-module transform meets it."""

    found: list[ast.AST] = []

    def search(node: ast.AST, stack: list[str]) -> bool:
        if isinstance(node, ast.ClassDef):
            stack = [*stack, node.name]
        elif isinstance(node, _FUNCS):
            if stack == class_path and node.name == "__init__":
                found.append(node)
                return True
            return False
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)) and search(child, stack):
                return True
        return False

    for i, stmt in enumerate(body):
        if search(stmt, []):
            return i, found[0]
    return None


def _returns_or_yields(init: ast.AST, text: str | None = None, starts: list[int] | None = None) -> bool:
    """A ``return`` or ``yield`` anywhere in the constructor's body (what libcst's
    ``findall(body, Return() | Yield())`` finds, nested functions and lambdas included). With the
    module's ``text`` and its ``line_starts``: rows whose text holds neither word hold neither
    statement (most constructors), without walking the tree."""
    if text is not None and starts is not None and init.body:
        first, last = init.body[0].lineno, init.end_lineno or init.lineno
        if 1 <= first <= last <= len(starts):
            rows = text[starts[first - 1] : starts[last] if last < len(starts) else len(text)]
            if "return" not in rows and "yield" not in rows:
                return False
    return any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for stmt in init.body for n in ast.walk(stmt))


def _nested_init(init: ast.AST) -> bool:
    """A ``def __init__`` in the constructor's body outside a class: the whole-module transform,
    which leaves inner functions first, would meet it before the constructor."""
    stack = list(init.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.ClassDef):
            continue
        if isinstance(n, _FUNCS) and n.name == "__init__":
            return True
        stack.extend(ast.iter_child_nodes(n))
    return False


def _returns_anywhere(body) -> bool:
    """A ``return`` or ``yield`` anywhere in ``body`` (nested functions included, as libcst's
    ``matchers.findall`` saw them; that module takes a second to import)."""
    import libcst as cst

    class Find(cst.CSTVisitor):
        found = False

        def visit_Return(self, node):
            self.found = True

        def visit_Yield(self, node):
            self.found = True

    finder = Find()
    body.visit(finder)
    return finder.found


def _transform(module, class_path: list[str], attr: str, add_helper: bool, indent: str | None = None, checked: bool = False) -> str | None:
    """``checked``: the first matching constructor is known (from ``ast``) to hold no return,
    yield or inner ``def __init__``: no function body and no class off the path is walked."""
    import libcst as cst

    class Convert(cst.CSTTransformer):
        def __init__(self):
            self.stack: list[str] = []
            self.done = False
            self.blocked = False

        def visit_ClassDef(self, node):
            self.stack.append(node.name.value)
            if checked:
                return self.stack == class_path[: len(self.stack)]

        def leave_ClassDef(self, original, updated):
            self.stack.pop()
            return updated

        def leave_FunctionDef(self, original, updated):
            if self.stack != class_path or original.name.value != "__init__" or self.done:
                return updated
            if not checked and _returns_anywhere(original.body):
                self.blocked = True
                return updated
            if not isinstance(updated.body, cst.IndentedBlock):
                # `def __init__(self): self.x = ...` on one line: no line to add after it
                self.blocked = True
                return updated
            line = cst.parse_statement(f"self.{attr} = {COMPACT_NAME}(self.{attr})\n")
            body = updated.body
            self.done = True
            return updated.with_changes(body=body.with_changes(body=(*body.body, line)))

        def visit_FunctionDef(self, node):
            return not checked and self.stack == class_path and node.name.value == "__init__"

    converter = Convert()
    updated = module.visit(converter)
    if not converter.done or converter.blocked:
        return None
    if add_helper and not any(isinstance(s, cst.ClassDef) and s.name.value == COMPACT_NAME for s in updated.body):
        updated = _add_helper(updated, indent)
    return updated.code


def _add_helper(module, indent: str | None):
    """``module`` with the helper class after its leading imports (and docstring)."""
    import libcst as cst

    if indent is not None and indent != module.default_indent:
        # a head with no indented block: the helper's blocks take the whole file's indentation
        module = module.with_changes(default_indent=indent)
    statements = list(module.body)
    at = 0
    for i, stmt in enumerate(statements):
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) or (isinstance(s, cst.Expr) and isinstance(s.value, cst.SimpleString) and i == 0)
            for s in stmt.body
        ):
            at = i + 1
        else:
            break
    helper = [h.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()]) for h in _helper_body()]
    statements[at:at] = helper
    if at < len(statements) - len(helper):
        nxt = statements[at + len(helper)]
        if hasattr(nxt, "leading_lines"):
            statements[at + len(helper)] = nxt.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *[l for l in nxt.leading_lines if l.comment is not None]])
    return module.with_changes(body=statements)


@functools.lru_cache(maxsize=1)
def _helper_body() -> tuple:
    """The helper class's statements, parsed once (libcst nodes are immutable)."""
    import libcst as cst

    return tuple(cst.parse_module(COMPACT_SOURCE.lstrip("\n")).body)


def convert_whole(text: str, class_path: list[str], attr: str) -> str | None:
    """The transform on the whole module's concrete syntax tree (the definition; used when the
    file's rows are not known or a slice cannot stand alone)."""
    module = CstSource(text).module
    if module is None:
        return None
    return _transform(module, class_path, attr, add_helper=True, indent=None)
