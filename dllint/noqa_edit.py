"""``--add-noqa``: write ``# noqa: CODE`` on the row of every current finding.

For adopting dllint on a large code base without fixing everything first. A notebook gets its
directives in its code cells (written back like ``--fix`` writes a notebook: only the changed
cells' sources; a line holding IPython syntax is skipped and reported). The directive goes on
the finding's ``noqa_row`` (the row the engine checks), merged into an existing
``# noqa: X`` directive (codes appended, nothing else touched), else appended at the end of the
line after any other comment. Rows where a comment cannot go (inside a multi-line string, a
backslash continuation) are skipped and reported. The result must re-parse, and a second run adds
nothing because every finding is then suppressed.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass, field

from dllint.facts.extract import _CODE, _NOQA, noqa_map
from dllint.fix import verify
from dllint.textutil import line_starts, split_lines

UNSUPPRESSIBLE = frozenset({"DL000", "DL001"})  # DL000 ignores noqa; DL001 is fixed, not silenced


@dataclass
class NoqaEdit:
    text: str  # the new text (unchanged when nothing was added)
    added: int = 0  # rows whose directive was written or extended
    skipped: list[str] = field(default_factory=list)  # "row N: why"


def _rows(text: str) -> tuple[dict[int, tuple[int, str]], set[int]]:
    """(row -> (col, comment) of its comment token, rows a comment can be appended to)."""
    comments: dict[int, tuple[int, str]] = {}
    open_rows: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = (tok.start[1], tok.string)
        elif tok.type in (tokenize.NEWLINE, tokenize.NL):
            open_rows.add(tok.start[0])
        elif tok.type == tokenize.ENDMARKER:
            open_rows.add(tok.start[0])
    return comments, open_rows


def _apply(text: str, edits) -> str:
    for _, a, b, content in sorted(edits, key=lambda e: e[1], reverse=True):
        text = text[:a] + content + text[b:]
    return text


def add_noqa(text: str, rows: dict[int, set[str]], path: str = "<file>") -> NoqaEdit:
    """Add ``# noqa`` directives for ``rows`` (row -> codes) to ``text``."""
    wanted = {row: sorted(c.upper() for c in codes if c.upper() not in UNSUPPRESSIBLE) for row, codes in rows.items()}
    wanted = {row: codes for row, codes in wanted.items() if codes}
    result = NoqaEdit(text)
    if not wanted:
        return result
    try:
        comments, open_rows = _rows(text)
    except (tokenize.TokenError, SyntaxError, IndentationError) as exc:
        result.skipped.append(f"cannot tokenize: {exc}")
        return result
    lines = split_lines(text)
    starts = line_starts(text)
    edits: list[tuple[int, int, int, str]] = []  # (row, start offset, end offset, new text)
    for row, codes in sorted(wanted.items()):
        if row < 1 or row > len(lines):
            result.skipped.append(f"row {row}: beyond the end of the file")
            continue
        if row not in open_rows:
            result.skipped.append(f"row {row}: no comment can go there (multi-line string or line continuation)")
            continue
        line = lines[row - 1]
        base = starts[row - 1]
        comment = comments.get(row)
        if comment is not None:
            col, body = comment
            m = _NOQA.search(body)
            if m and not m.group("codes"):
                continue  # a bare noqa already suppresses every code
            if m:
                present = {c.upper() for c in _CODE.findall(m.group("codes"))}
                new = [c for c in codes if c not in present]
                if not new:
                    continue
                at = base + col + m.end("codes")
                edits.append((row, at, at, "".join(f", {c}" for c in new)))
                result.added += 1
                continue
        content_end = len(line.rstrip())
        edits.append((row, base + content_end, base + len(line), f"  # noqa: {', '.join(codes)}"))
        result.added += 1
    new_text = _apply(text, edits)
    # the engine reads the first directive on a row (even one inside a string): keep only edits it will see
    read, _ = noqa_map(new_text)
    unread = {
        row for row, *_ in edits
        if not (row in read and (read[row] is None or set(wanted[row]) <= read[row]))
    }
    if unread:
        for row in sorted(unread):
            result.skipped.append(f"row {row}: another `# noqa` text earlier on the line would hide the directive")
        edits = [e for e in edits if e[0] not in unread]
        result.added -= len(unread)
        new_text = _apply(text, edits)
    error = verify(new_text, path)
    if error is not None:
        result.skipped.append(f"not written: the result would not parse ({error})")
        result.added = 0
        return result
    result.text = new_text
    return result


def add_noqa_to_files(analysis) -> tuple[int, int, list[str]]:
    """Write directives for every finding of ``analysis``: (directives added, files changed, warnings)."""
    from dllint.fix import encode_checked, round_trip_error, write_in_place

    by_path: dict[str, dict[int, set[str]]] = {}
    for d in analysis.diagnostics:
        if d.code in UNSUPPRESSIBLE:
            continue
        by_path.setdefault(d.path, {}).setdefault(d.noqa_row or d.span.row, set()).add(d.code)
    added = files = 0
    warnings: list[str] = []
    notebooks = getattr(analysis, "notebooks", None) or {}
    for path, rows in sorted(by_path.items()):
        if path in notebooks:
            n, why = _add_noqa_to_notebook(path, notebooks[path], rows)
            warnings.extend(f"{path}: {w}" for w in why)
            if n:
                added += n
                files += 1
            continue
        if not path.endswith((".py", ".pyi")):
            warnings.append(f"{path}: --add-noqa edits Python files only; skipped")
            continue
        original = analysis.sources.get(path)
        try:
            text = analysis.project.source(path)
        except (OSError, ValueError) as exc:
            warnings.append(f"{path}: cannot read: {exc}")
            continue
        result = add_noqa(text, rows, path)
        warnings.extend(f"{path}: {why}" for why in result.skipped)
        if result.added and result.text != text:
            if original is None:
                try:
                    with open(path, "rb") as fh:
                        original = fh.read()
                except OSError as exc:
                    warnings.append(f"{path}: cannot read: {exc.strerror or exc}")
                    continue
            why = round_trip_error(original)
            if why is None:
                try:
                    data = encode_checked(original, result.text)
                except ValueError as exc:
                    why = str(exc)
                else:
                    why = write_in_place(path, original, data)
            if why is not None:
                warnings.append(f"{path}: not written: {why}")
                continue
            added += result.added
            files += 1
    return added, files, warnings


def _add_noqa_to_notebook(path: str, notebook, rows: dict[int, set[str]]) -> tuple[int, list[str]]:
    """Directives written into a notebook's code cells (only the cells that change; outputs and
    metadata kept, as ``--fix`` writes them): (directives added, warnings in cell coordinates)."""
    import re

    from dllint.fix import write_atomic
    from dllint.notebook import NotebookError

    def where(row: int) -> str:
        pos = notebook.cell_position(row)
        return f"cell {pos[0]}, line {pos[1]}" if pos else f"row {row}"

    masked = notebook.text.split("\n")
    original = notebook.source_text.split("\n")
    skipped = [f"{where(row)}: an IPython line (magic or shell escape) cannot hold a comment" for row in sorted(rows)
               if 1 <= row <= len(masked) and masked[row - 1] != original[row - 1]]
    rows = {row: codes for row, codes in rows.items() if not (1 <= row <= len(masked) and masked[row - 1] != original[row - 1])}
    result = add_noqa(notebook.text, rows, path)
    skipped += [re.sub(r"^row (\d+)", lambda m: where(int(m.group(1))), why) for why in result.skipped]
    if not result.added or result.text == notebook.text:
        return 0, skipped
    try:
        write_atomic(path, notebook.with_python(result.text))
    except NotebookError as exc:
        return 0, [*skipped, f"not written: {exc}"]
    return result.added, skipped
