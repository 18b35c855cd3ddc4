"""Applying fixes: text edits, non-overlapping, re-linted until nothing changes (at most
MAX_PASSES), verified to re-parse with both ast and libcst and to add no finding, written
atomically."""

from __future__ import annotations

import ast
import bisect
import difflib
import io
import os
import re
import tempfile
import tokenize
from dataclasses import dataclass, field

from dllint.model import Diagnostic, Edit
from dllint.textutil import line_starts, newline_of, offset

MAX_PASSES = 10
_LINE_PREFIX = re.compile(r"^syntax error at line \d+: ")


def allowed(applicability: str, unsafe: bool) -> bool:
    return applicability == "safe" or (unsafe and applicability == "unsafe")


def apply_edits(text: str, diagnostics: list[Diagnostic]) -> tuple[str, list[Diagnostic]]:
    """Apply each diagnostic's fix unless it overlaps one already taken (first come first served,
    in source order). Returns the new text and the diagnostics whose fixes were applied."""
    new_text, applied, _ = _apply(text, diagnostics)
    return new_text, applied


def _apply(text: str, diagnostics: list[Diagnostic]) -> tuple[str, list[Diagnostic], list[tuple[int, int, str]]]:
    """``apply_edits``, also returning the replaced ranges ``(start, end, content)`` (offsets in
    ``text``, in order)."""
    starts = line_starts(text)
    newline = newline_of(text)
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, str]] = []
    applied: list[Diagnostic] = []
    for diag in sorted(diagnostics, key=lambda d: (d.fix.edits[0].span.row, d.fix.edits[0].span.col) if d.fix and d.fix.edits else (0, 0)):
        if diag.fix is None or not diag.fix.edits:
            continue
        ranges = []
        for edit in diag.fix.edits:
            a = offset(text, starts, edit.span.row, edit.span.col)
            b = offset(text, starts, edit.span.end_row, edit.span.end_col)
            ranges.append((a, b, edit.content.replace("\n", newline) if newline != "\n" else edit.content))
        if any(_overlaps(a, b, x, y) for a, b, _ in ranges for x, y in taken):
            continue
        for a, b, content in ranges:
            taken.append((a, b))
            chosen.append((a, b, content))
        applied.append(diag)
    chosen.sort(key=lambda t: (t[0], t[1]))
    for a, b, content in reversed(chosen):
        text = text[:a] + content + text[b:]
    return text, applied, chosen


def _overlaps(a: int, b: int, x: int, y: int) -> bool:
    if a == b and x == y:
        return a == x  # two insertions at the same place: order would be ambiguous
    return a < y and x < b or (a == b and x < a < y) or (x == y and a < x < b)


def verify(text: str, path: str) -> str | None:
    """None if the text parses (ast and libcst), else the error."""
    try:
        ast.parse(text, filename=path)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    try:
        import libcst

        libcst.parse_module(text)
    except Exception as exc:  # libcst raises its own ParserSyntaxError
        return f"libcst cannot parse the result: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return None


def encode_like(original: bytes, text: str) -> bytes:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(original).readline)
    except SyntaxError:
        encoding = "utf-8"
    if encoding == "utf-8-sig":
        return b"\xef\xbb\xbf" + text.encode("utf-8")
    return text.encode(encoding)


def write_atomic(path: str, data: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".dllint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            st = os.stat(path)
            os.chmod(tmp, st.st_mode & 0o7777)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=path, tofile=path
    )
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


@dataclass
class FixResult:
    fixed: dict[str, str] = field(default_factory=dict)  # path -> new text
    originals: dict[str, bytes] = field(default_factory=dict)
    applied: list[Diagnostic] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # warnings: fixes withheld and why
    notebooks: dict[str, bytes] = field(default_factory=dict)  # path -> the fixed notebook's JSON bytes
    notebook_originals: dict = field(default_factory=dict)  # path -> the notebook as read (NotebookSource)
    # (path, code, row, col) of the findings whose fix was withheld, in the final text's
    # coordinates -> why ("it would add DL106 at train.py:12", "the result would not parse: ...")
    withheld: dict = field(default_factory=dict)


# Findings that a fix may make appear without changing what the program does: DL001 reports a
# `# noqa` that no longer suppresses anything (a fix removed the finding it silenced).
NOT_WATCHED = frozenset({"DL001"})


def _key(d: Diagnostic) -> tuple:
    return (d.path, d.code, d.span.row, d.span.col)


def _watched(analysis) -> list[Diagnostic]:
    """Every finding a fix must not add: the reported ones and the watched ones (rules that run
    only to check the fixes, ``Analysis.watched``)."""
    found = [*analysis.diagnostics, *getattr(analysis, "watched", ())]
    return [d for d in found if d.code not in NOT_WATCHED]


def _where(d: Diagnostic, shown) -> str:
    row = f"cell {d.cell}:line {d.cell_row}" if d.cell is not None else str(d.span.row)
    return f"{d.code} at {shown(d.path)}:{row}"


def _display(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _mapper(old: str, new: str, ranges: list[tuple[int, int, str]]):
    """A function mapping a (row, col) of ``old`` to the interval of (row, col) in ``new`` where
    the same text is after the replacements ``ranges`` (a point, or the replacement's extent when
    the position was inside a replaced range)."""
    old_starts, new_starts = line_starts(old), line_starts(new)

    def to_pos(offs: int) -> tuple[int, int]:
        row = bisect.bisect_right(new_starts, offs)
        return (row, offs - new_starts[row - 1] + 1)

    def mapped(row: int, col: int) -> tuple[tuple[int, int], tuple[int, int]]:
        pos = offset(old, old_starts, row, col)
        shift = 0
        for a, b, content in ranges:
            if a > pos:
                break
            if a == b == pos or a <= pos < b:
                lo = a + shift
                return to_pos(lo), to_pos(lo + len(content))
            shift += len(content) - (b - a)
        return to_pos(pos + shift), to_pos(pos + shift)

    return mapped


def added_findings(before, after, changes: dict) -> list[Diagnostic]:
    """Findings of ``after`` that ``before`` did not have: compared by path, code and location,
    the locations of ``before`` mapped through the text changes ``changes`` (path -> (old text,
    new text, replaced ranges))."""
    known: dict[tuple[str, str], list] = {}
    mappers = {path: _mapper(*change) for path, change in changes.items()}
    for d in _watched(before):
        m = mappers.get(d.path)
        where = m(d.span.row, d.span.col) if m else ((d.span.row, d.span.col),) * 2
        known.setdefault((d.path, d.code), []).append(where)
    out = []
    for d in _watched(after):
        pos = (d.span.row, d.span.col)
        if not any(lo <= pos <= hi for lo, hi in known.get((d.path, d.code), ())):
            out.append(d)
    return out


class _Pass:
    """One pass of the loop: the fixes offered by ``analysis``, applied over ``overlay``; each fix
    that breaks parsing, or adds a finding, is withheld (alone: the others stay)."""

    def __init__(self, analyse, analysis, overlay: dict, result: FixResult, withheld: dict, shown):
        self.analyse = analyse
        self.before = analysis
        self.overlay = overlay
        self.result = result
        self.withheld = withheld
        self.shown = shown
        self.runs: dict[frozenset, tuple] = {}

    def withhold(self, d: Diagnostic, why: str) -> None:
        self.withheld[_key(d)] = why
        self.result.failures.append(f"{self.shown(d.path)}:{d.span.row}:{d.span.col}: {d.code} fix withheld: {why}")

    def texts(self, chosen: list[Diagnostic]):
        """path -> (old text, new text, replaced ranges, applied) for the fixes ``chosen``."""
        by_path: dict[str, list[Diagnostic]] = {}
        for d in chosen:
            by_path.setdefault(d.path, []).append(d)
        out = {}
        for path, diags in by_path.items():
            text = self.before.project.source(path)
            new_text, applied, ranges = _apply(text, diags)
            out[path] = (text, new_text, ranges, applied)
        return out

    def parseable(self, path: str, diags: list[Diagnostic]) -> list[Diagnostic]:
        """The fixes of one file that parse together: all of them, or (when they do not) each one
        that still parses with the ones kept before it."""
        text = self.before.project.source(path)
        new_text, applied, _ = _apply(text, diags)
        if new_text == text:
            for d in applied:
                self.withhold(d, "it changes nothing")
            return []
        if self.problem(path, new_text) is None:
            return applied
        kept: list[Diagnostic] = []
        for d in applied:
            trial, _, _ = _apply(text, [*kept, d])
            why = self.problem(path, trial)
            if why is not None:
                self.withhold(d, why)
            else:
                kept.append(d)
        return kept

    def problem(self, path: str, text: str) -> str | None:
        """Why ``text`` cannot replace the file at ``path`` (None: it can)."""
        error = verify(text, path)
        if error is not None:  # its line is in a text that will not exist: the message alone
            return f"the fixed file would not parse ({_LINE_PREFIX.sub('', error)})"
        notebook = getattr(self.before, "notebooks", {}).get(path)
        if notebook is not None:
            from dllint.notebook import NotebookError

            try:
                notebook.with_python(text)
            except NotebookError as exc:
                return f"the notebook cannot take it ({exc})"
        return None

    def run(self, chosen: list[Diagnostic]):
        """(analysis of the program with ``chosen`` applied, the findings it adds, changes)."""
        key = frozenset(id(d) for d in chosen)
        found = self.runs.get(key)
        if found is None:
            changes = self.texts(chosen)
            overlay = dict(self.overlay)
            for path, (_, new_text, _, _) in changes.items():
                overlay[path] = self.encoded(path, new_text)
            after = self.analyse(overlay)
            added = added_findings(self.before, after, {p: c[:3] for p, c in changes.items()})
            found = self.runs[key] = (after, added, changes)
        return found

    def encoded(self, path: str, text: str) -> bytes:
        notebook = getattr(self.before, "notebooks", {}).get(path)
        if notebook is not None:  # the overlay of a notebook is the notebook itself
            return notebook.with_python(text)
        original = self.result.originals.setdefault(path, self.before.sources[path])
        return encode_like(original, text)

    def settle(self, kept: list[Diagnostic], rest: list[Diagnostic]) -> list[Diagnostic]:
        """``kept`` (known to add nothing) plus the fixes of ``rest`` that add no finding to it:
        all of ``rest`` when together they add none, else halves tried one after the other, down to
        the single fixes to withhold."""
        if not rest:
            return kept
        _, added, _ = self.run([*kept, *rest])
        if not added:
            return [*kept, *rest]
        if len(rest) == 1:
            shown = ", ".join(_where(d, self.shown) for d in added[:3]) + (f" (+{len(added) - 3} more)" if len(added) > 3 else "")
            self.withhold(rest[0], f"it would add {shown}")
            return kept
        half = len(rest) // 2
        return self.settle(self.settle(kept, rest[:half]), rest[half:])


def fix_loop(analyse, unsafe: bool, shown=_display) -> tuple[FixResult, object]:
    """Run ``analyse(overlay)`` (returning an Analysis), apply allowed fixes, repeat until stable.

    A fix is kept only when the fixed text parses (ast and libcst) and re-linting it adds no
    finding that was not there (any watched rule, compared by code and by location mapped
    through the edits); otherwise that fix alone is withheld (``FixResult.withheld``, with the
    reason) and the others of the file stay. Returns the fixes and the final analysis (of the
    fixed contents)."""
    result = FixResult()
    overlay: dict[str, bytes] = {}
    withheld: dict[tuple, str] = {}
    analysis = analyse(overlay)
    for _ in range(MAX_PASSES):
        by_path: dict[str, list[Diagnostic]] = {}
        for d in analysis.diagnostics:
            if d.fix and d.fix.edits and allowed(d.fix.applicability, unsafe) and _key(d) not in withheld and d.path in analysis.sources:
                by_path.setdefault(d.path, []).append(d)
        if not by_path:
            break
        step = _Pass(analyse, analysis, overlay, result, withheld, shown)
        chosen = [d for path, diags in by_path.items() for d in step.parseable(path, diags)]
        kept = step.settle([], chosen)
        if not kept:
            break
        after, _, changes = step.run(kept)
        for path, (old, new_text, ranges, applied) in changes.items():
            result.originals.setdefault(path, analysis.sources[path])
            notebook = getattr(analysis, "notebooks", {}).get(path)
            if notebook is not None:
                result.notebook_originals.setdefault(path, notebook)
                result.notebooks[path] = step.encoded(path, new_text)
            overlay[path] = step.encoded(path, new_text)
            result.fixed[path] = new_text
            result.applied.extend(applied)
            mapped = _mapper(old, new_text, ranges)
            for key in [k for k in withheld if k[0] == path]:
                why = withheld.pop(key)
                (row, col), _ = mapped(key[2], key[3])
                withheld[(path, key[1], row, col)] = why
        analysis = after
    result.withheld = withheld
    return result, analysis


def write_fixes(result: FixResult) -> None:
    for path, text in result.fixed.items():
        if path in result.notebooks:
            write_atomic(path, result.notebooks[path])
            continue
        write_atomic(path, encode_like(result.originals[path], text))
