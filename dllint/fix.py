"""Applying fixes: text edits, non-overlapping, re-linted until nothing changes (at most
MAX_PASSES), verified to re-parse with both ast and libcst and to add no finding (each fix that
would is withheld alone, with the reason), then written in place.

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
import re
import stat
import tempfile
import tokenize
from dataclasses import dataclass, field

from dllint.model import Diagnostic
from dllint.textutil import display_path, first_row, line_starts, newline_of, offset

MAX_PASSES = 10
_LINE_PREFIX = re.compile(r"^syntax error at line \d+: ")


def allowed(applicability: str, unsafe: bool) -> bool:
    return applicability == "safe" or (unsafe and applicability == "unsafe")


def apply_edits(text: str, diagnostics: list[Diagnostic]) -> tuple[str, list[Diagnostic]]:
    """Apply each diagnostic's fix unless it overlaps one already taken (first come first served,
    in source order). Returns the new text and the diagnostics whose fixes were applied."""
    new_text, applied, _ = _apply(text, diagnostics)
    return new_text, applied


def apply_edits_with_ranges(text: str, diagnostics: list[Diagnostic]) -> tuple[str, list[Diagnostic], list[tuple[int, int]]]:
    """``apply_edits``, plus the (start, end) character ranges of the new text the edits wrote."""
    new_text, applied, chosen = _apply(text, diagnostics)
    return new_text, applied, written_ranges(chosen)


def written_ranges(chosen: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """The ranges of the new text written by the replacements ``chosen`` (in order, non-overlapping)."""
    out: list[tuple[int, int]] = []
    shift = 0
    for a, b, content in chosen:
        out.append((a + shift, a + shift + len(content)))
        shift += len(content) - (b - a)
    return out


def _apply(text: str, diagnostics: list[Diagnostic]) -> tuple[str, list[Diagnostic], list[tuple[int, int, str]]]:
    """``apply_edits``, also returning the replaced ranges ``(start, end, content)`` (offsets in
    ``text``, in order). Linear in the text: the result is joined once from the untouched pieces
    and the edits."""
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
    pieces: list[str] = []
    at = 0  # offset in the old text
    for a, b, content in chosen:
        pieces.append(text[at:a])
        pieces.append(content)
        at = max(at, b)
    pieces.append(text[at:])
    return "".join(pieces), applied, chosen


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
    firsts = [first_row(s) for s in body]
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
        new_text, applied, chosen = _apply(text, diags)
        if new_text == text:
            for d in applied:
                self.withhold(d, "it changes nothing")
            return []
        if self.problem(path, new_text, written_ranges(chosen)) is None:
            return applied
        kept: list[Diagnostic] = []
        for d in applied:
            trial, _, chosen = _apply(text, [*kept, d])
            why = self.problem(path, trial, written_ranges(chosen))
            if why is not None:
                self.withhold(d, why)
            else:
                kept.append(d)
        return kept

    def problem(self, path: str, text: str, changed: list[tuple[int, int]] | None = None) -> str | None:
        """Why ``text`` cannot replace the file at ``path`` (None: it can); ``changed``: the
        ranges of ``text`` the fixes wrote (only the statements around them are re-parsed by libcst)."""
        error = verify(text, path, changed)
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
        try:
            encode_checked(self.before.sources[path], text)
        except ValueError as exc:
            return str(exc)
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
        return encode_checked(self.result.originals[path], text)

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


def fix_loop(analyse, unsafe: bool, shown=display_path) -> tuple[FixResult, object]:
    """Run ``analyse(overlay)`` (returning an Analysis), apply allowed fixes, repeat until stable.

    A fix is kept only when the fixed text parses (ast and libcst) and re-linting it adds no
    finding that was not there (any watched rule, compared by code and by location mapped
    through the edits); otherwise that fix alone is withheld (``FixResult.withheld``, with the
    reason) and the others of the file stay. Returns the fixes and the final analysis (of the
    fixed contents)."""
    result = FixResult()
    overlay: dict[str, bytes] = {}
    withheld: dict[tuple, str] = {}
    unfixable: dict[str, str] = {}  # path -> why no fix can be written to it
    analysis = analyse(overlay)
    for _ in range(MAX_PASSES):
        by_path: dict[str, list[Diagnostic]] = {}
        for d in analysis.diagnostics:
            if d.fix and d.fix.edits and allowed(d.fix.applicability, unsafe) and _key(d) not in withheld and d.path in analysis.sources:
                by_path.setdefault(d.path, []).append(d)
        for path in list(by_path):
            if path in unfixable:
                for d in by_path.pop(path):
                    withheld[_key(d)] = unfixable[path]
                continue
            if path in result.originals:
                continue
            notebook = getattr(analysis, "notebooks", {}).get(path)
            original = result.originals[path] = analysis.sources[path]
            result.read[path] = notebook.raw if notebook is not None else original
            error = None if notebook is not None else round_trip_error(original)
            if error is not None:
                unfixable[path] = error
                result.failures.append(f"{shown(path)}: not fixed: {error}")
                for d in by_path.pop(path):
                    withheld[_key(d)] = error
        if not by_path:
            break
        step = _Pass(analyse, analysis, overlay, result, withheld, shown)
        chosen = [d for path, diags in by_path.items() for d in step.parseable(path, diags)]
        kept = step.settle([], chosen)
        if not kept:
            break
        after, _, changes = step.run(kept)
        for path, (old, new_text, ranges, applied) in changes.items():
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
