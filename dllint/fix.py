"""Applying fixes: text edits, non-overlapping, re-linted until nothing changes (at most
MAX_PASSES), verified to re-parse with both ast and libcst, written atomically."""

from __future__ import annotations

import ast
import difflib
import io
import os
import tempfile
import tokenize
from dataclasses import dataclass, field

from dllint.model import Diagnostic, Edit
from dllint.textutil import line_starts, newline_of, offset

MAX_PASSES = 10


def allowed(applicability: str, unsafe: bool) -> bool:
    return applicability == "safe" or (unsafe and applicability == "unsafe")


def apply_edits(text: str, diagnostics: list[Diagnostic]) -> tuple[str, list[Diagnostic]]:
    """Apply each diagnostic's fix unless it overlaps one already taken (first come first served,
    in source order). Returns the new text and the diagnostics whose fixes were applied."""
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
    for a, b, content in sorted(chosen, key=lambda t: (t[0], t[1]), reverse=True):
        text = text[:a] + content + text[b:]
    return text, applied


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
    failures: list[str] = field(default_factory=list)
    notebooks: dict[str, bytes] = field(default_factory=dict)  # path -> the fixed notebook's JSON bytes
    notebook_originals: dict = field(default_factory=dict)  # path -> the notebook as read (NotebookSource)
    rejected: set = field(default_factory=set)  # (path, code, span) of fixes that could not be applied


def fix_loop(analyse, unsafe: bool) -> tuple[FixResult, object]:
    """Run ``analyse(overlay)`` (returning an Analysis), apply allowed fixes, repeat until stable.

    Returns the fixes and the final analysis (of the fixed contents)."""
    result = FixResult()
    overlay: dict[str, bytes] = {}
    rejected: set[tuple] = set()
    analysis = analyse(overlay)
    for _ in range(MAX_PASSES):
        by_path: dict[str, list[Diagnostic]] = {}
        for d in analysis.diagnostics:
            if d.fix and allowed(d.fix.applicability, unsafe) and (d.path, d.code, d.span) not in rejected:
                by_path.setdefault(d.path, []).append(d)
        if not by_path:
            break
        changed = False
        for path, diags in by_path.items():
            original = analysis.sources.get(path)
            if original is None:
                continue
            result.originals.setdefault(path, original)
            text = analysis.project.source(path)
            new_text, applied = apply_edits(text, diags)
            if new_text == text:
                rejected.update((d.path, d.code, d.span) for d in diags)
                continue
            error = verify(new_text, path)
            if error is not None:
                result.failures.append(f"{path}: fixes for {', '.join(sorted({d.code for d in applied}))} not applied: {error}")
                rejected.update((d.path, d.code, d.span) for d in diags)
                continue
            notebook = getattr(analysis, "notebooks", {}).get(path)
            if notebook is not None:  # the overlay of a notebook is the notebook itself
                from dllint.notebook import NotebookError

                result.notebook_originals.setdefault(path, notebook)
                try:
                    overlay[path] = result.notebooks[path] = notebook.with_python(new_text)
                except NotebookError as exc:
                    result.failures.append(f"{path}: fixes for {', '.join(sorted({d.code for d in applied}))} not applied: {exc}")
                    rejected.update((d.path, d.code, d.span) for d in diags)
                    continue
            else:
                overlay[path] = encode_like(result.originals[path], new_text)
            result.fixed[path] = new_text
            result.applied.extend(applied)
            changed = True
        if not changed:
            break
        analysis = analyse(overlay)
    result.rejected = rejected
    return result, analysis


def write_fixes(result: FixResult) -> None:
    for path, text in result.fixed.items():
        if path in result.notebooks:
            write_atomic(path, result.notebooks[path])
            continue
        write_atomic(path, encode_like(result.originals[path], text))
