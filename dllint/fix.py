"""Applying fixes: text edits, non-overlapping, re-linted until nothing changes (at most
MAX_PASSES), verified to re-parse with both ast and libcst, then written in place.

Writing (``write_in_place``), as ruff and black do: the file is opened for update (no temporary
file, so a killed run leaves nothing behind in the tree; a symbolic link is followed, so its target
is fixed and the link stays; the inode, hard links, owner and mode are kept), and written only if it
still holds the bytes that were analysed: a file saved, replaced or deleted while dllint ran is
left alone with a warning, never overwritten with the fix of its old text nor re-created. A file
without write permission (even for root) is reported as not writable. One file's failure is that
file's warning; the others are still written. A run killed while writing leaves the old text or
the fixed one (possibly followed by blanks, see ``write_in_place``), and no other file.

Bytes: the fixed text is encoded in the file's own encoding (its coding cookie, or UTF-8) with its
BOM; line endings are the file's. A file whose bytes do not come back identical from decoding and
re-encoding, or a fix its encoding cannot hold, is not fixed.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import io
import os
import stat
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
    new_text, applied, _ = apply_edits_with_ranges(text, diagnostics)
    return new_text, applied


def apply_edits_with_ranges(text: str, diagnostics: list[Diagnostic]) -> tuple[str, list[Diagnostic], list[tuple[int, int]]]:
    """``apply_edits``, plus the (start, end) character ranges of the new text the edits wrote.

    Linear in the text: the result is joined once from the untouched pieces and the edits."""
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
    pieces: list[str] = []
    written: list[tuple[int, int]] = []
    at = 0  # offset in the old text
    size = 0  # length of the new text so far
    for a, b, content in sorted(chosen, key=lambda t: (t[0], t[1])):
        pieces.append(text[at:a])
        size += a - at
        pieces.append(content)
        written.append((size, size + len(content)))
        size += len(content)
        at = max(at, b)
    pieces.append(text[at:])
    return "".join(pieces), applied, written


def _overlaps(a: int, b: int, x: int, y: int) -> bool:
    if a == b and x == y:
        return a == x  # two insertions at the same place: order would be ambiguous
    return a < y and x < b or (a == b and x < a < y) or (x == y and a < x < b)


def verify(text: str, path: str, changed: list[tuple[int, int]] | None = None) -> str | None:
    """None if the text parses (ast and libcst), else the error.

    With ``changed`` (character ranges of ``text`` that fixes wrote), libcst parses only the
    top-level statements those ranges touch: the whole module already parsed with ``ast``, so each
    top-level statement stands on its own, and a one-line fix in a 12 MB module no longer builds
    the whole module's concrete syntax tree (most of a fix's time and memory there)."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    except (ValueError, MemoryError, RecursionError) as exc:
        return f"cannot parse the result: {type(exc).__name__}"
    snippet = text if changed is None else _statements_around(text, tree, changed)
    del tree
    try:
        import libcst

        libcst.parse_module(snippet)
    except Exception as exc:  # libcst raises its own ParserSyntaxError
        return f"libcst cannot parse the result: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return None


def _statements_around(text: str, tree: ast.Module, changed: list[tuple[int, int]]) -> str:
    """The source of the top-level statements (whole lines, with their decorators and the
    statements sharing those lines) that hold the ``changed`` character ranges."""
    body = tree.body
    if not body:
        return ""
    if not changed:
        return text
    starts = line_starts(text)
    firsts = [min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]) for s in body]
    lasts = [s.end_lineno or s.lineno for s in body]
    wanted = [False] * len(body)
    for a, b in changed:
        first = bisect.bisect_right(starts, a)  # 1-based rows of the range
        last = bisect.bisect_right(starts, max(a, b - 1))
        # the statements overlapping those rows; a range between statements touches the next one
        lo = min(bisect.bisect_left(lasts, first), len(body) - 1)
        hi = max(bisect.bisect_right(firsts, last), lo + 1)
        for i in range(lo, hi):
            wanted[i] = True
    out = []
    i = 0
    while i < len(body):
        if not wanted[i]:
            i += 1
            continue
        j = i
        while i > 0 and firsts[i] <= lasts[i - 1]:  # shares a row with the one before (``a = 1; b = 2``)
            i -= 1
        while j + 1 < len(body) and (wanted[j + 1] or firsts[j + 1] <= lasts[j]):
            j += 1
        a = starts[firsts[i] - 1]
        b = starts[lasts[j]] if lasts[j] < len(starts) else len(text)
        piece = text[a:b]
        out.append(piece if piece.endswith(("\n", "\r")) else piece + "\n")
        i = j + 1
    return "".join(out)


def encode_like(original: bytes, text: str) -> bytes:
    """``text`` in the encoding of ``original`` (its coding cookie or UTF-8, and its BOM).

    ValueError when the encoding cannot hold a character of ``text``."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(original).readline)
    except SyntaxError:
        encoding = "utf-8"
    bom = b""
    if encoding == "utf-8-sig":
        bom, encoding = b"\xef\xbb\xbf", "utf-8"
    try:
        return bom + text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise ValueError(f"the fixed text has a character {encoding} cannot encode ({exc.object[exc.start:exc.end]!r})") from None
    except LookupError:
        raise ValueError(f"unknown encoding {encoding}") from None


def encode_checked(original: bytes, text: str) -> bytes:
    """``encode_like``, and the bytes must read back as ``text`` the way Python reads them (an
    edit above a coding declaration would make the interpreter read the file as UTF-8)."""
    from dllint.facts.extract import decode_source

    data = encode_like(original, text)
    try:
        same = decode_source(data) == text
    except ValueError:
        same = False
    if not same:
        raise ValueError("the fixed file would not read back as the fixed text (its coding declaration would move)")
    return data


def round_trip_error(original: bytes) -> str | None:
    """None when decoding ``original`` and encoding it back gives the same bytes (so a fix changes
    only what it edits), else why not."""
    from dllint.facts.extract import decode_source

    try:
        same = encode_like(original, decode_source(original)) == original
    except ValueError as exc:
        return str(exc)
    return None if same else "its bytes do not survive decoding and encoding again in its encoding"


def write_in_place(path: str, expected: bytes, data: bytes) -> str | None:
    """Write ``data`` over the file at ``path`` if it still holds ``expected``; None when written
    (or already holding ``data``), else why not. See the module docstring."""
    flags = os.O_RDWR | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)  # no O_CREAT: a file deleted meanwhile is not re-created
    except FileNotFoundError:
        return "the file was deleted or moved while dllint ran"
    except PermissionError:
        return "the file is not writable"
    except OSError as exc:
        return f"cannot open it for writing: {exc.strerror or exc}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if not st.st_mode & 0o222:
            return "the file is not writable (read-only)"
        chunks = []
        while True:
            chunk = os.read(fd, max(st.st_size + 1, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
        current = b"".join(chunks)
        if current == data:
            return None
        if current != expected:
            return "the file changed while dllint ran"
        # One write of the whole new text; when it is shorter, padded with spaces to the old
        # length and then truncated: a run killed in between leaves the fixed text followed by
        # blanks (the same program), never the fixed text followed by the end of the old one.
        padded = data + b" " * (len(current) - len(data)) if len(data) < len(current) else data
        view = memoryview(padded)
        written = 0
        while written < len(padded):
            written += os.pwrite(fd, view[written:], written) if hasattr(os, "pwrite") else _write_at(fd, view[written:], written)
        if len(padded) > len(data):
            os.ftruncate(fd, len(data))
        return None
    except OSError as exc:
        return f"cannot write it: {exc.strerror or exc}"
    finally:
        os.close(fd)


def _write_at(fd: int, data, at: int) -> int:
    os.lseek(fd, at, os.SEEK_SET)
    return os.write(fd, data)


def write_atomic(path: str, data: bytes, tmp_dir: str | None = None) -> None:
    """Write a file of dllint's own (the cache) through a temporary file renamed into place
    (made in ``tmp_dir``, on the same file system, when given)."""
    directory = tmp_dir or os.path.dirname(os.path.abspath(path))
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
    originals: dict[str, bytes] = field(default_factory=dict)  # path -> the analysed source
    read: dict[str, bytes] = field(default_factory=dict)  # path -> its bytes as read (a notebook's JSON)
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
            notebook = getattr(analysis, "notebooks", {}).get(path)
            if path not in result.originals:
                result.originals[path] = original
                result.read[path] = notebook.raw if notebook is not None else original
                error = None if notebook is not None else round_trip_error(original)
                if error is not None:
                    result.failures.append(f"{path}: not fixed: {error}")
                    rejected.update((d.path, d.code, d.span) for d in diags)
                    continue
            text = analysis.project.source(path)
            new_text, applied, changed = apply_edits_with_ranges(text, diags)
            if new_text == text:
                rejected.update((d.path, d.code, d.span) for d in diags)
                continue
            error = verify(new_text, path, changed)
            if error is not None:
                result.failures.append(f"{path}: fixes for {', '.join(sorted({d.code for d in applied}))} not applied: {error}")
                rejected.update((d.path, d.code, d.span) for d in diags)
                continue
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
                try:
                    overlay[path] = encode_checked(result.originals[path], new_text)
                except ValueError as exc:
                    result.failures.append(f"{path}: fixes for {', '.join(sorted({d.code for d in applied}))} not applied: {exc}")
                    rejected.update((d.path, d.code, d.span) for d in diags)
                    continue
            result.fixed[path] = new_text
            result.applied.extend(applied)
            changed = True
        if not changed:
            break
        analysis = analyse(overlay)
    result.rejected = rejected
    return result, analysis


def fixed_bytes(result: FixResult, path: str) -> bytes:
    """The bytes to write for a fixed path (a notebook's JSON, else the source's encoding)."""
    if path in result.notebooks:
        return result.notebooks[path]
    return encode_like(result.originals[path], result.fixed[path])


def write_fixes(result: FixResult) -> dict[str, str]:
    """Write every fixed file (see ``write_in_place``); returns path -> why, for those not written."""
    skipped: dict[str, str] = {}
    for path in result.fixed:
        why = write_in_place(path, result.read[path], fixed_bytes(result, path))
        if why is not None:
            skipped[path] = why
    return skipped
