"""Jupyter notebooks (``.ipynb``) as Python modules, and back.

A notebook is linted as the concatenation of its code cells, in order. IPython syntax that is not
Python is masked *without shifting positions* (one source line stays one line):

- a cell whose first non-blank line is a cell magic (``%%time``, ``%%bash`` ...): every line of the
  cell becomes an empty line (the cell is skipped);
- a line magic (``%matplotlib inline``; also without its ``%``, as Jupyter's automagic runs
  ``ls ./data`` or ``pip install x``, when the line is not Python by itself), a shell escape
  (``!pip install x``) or a help request (``obj?``, ``??obj``): the line becomes ``pass`` at the
  same indentation;
- an assignment from one (``files = !ls``, ``t = %timeit -o f()``): the right-hand side becomes a
  call of an unknown function (``files = get_ipython()``), so the name's value stays unknown.

Masking is tried only on a cell that does not parse as it is (IPython compiles each cell on its
own), so a ``%`` at the start of a line inside a string is never touched in a valid cell.

Rows of the concatenated source map back to ``(cell number, line in the cell)``; cell numbers are
1-based positions among *all* cells (markdown included), which is what an editor shows. Writing a
fixed source back touches only the ``source`` of the cells whose text changed: outputs, metadata,
key order, indentation and the trailing newline of the JSON are kept, and a notebook whose bytes
cannot be reproduced exactly by re-serializing it is never rewritten.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import json
import re
import warnings
from dataclasses import dataclass, field

NOTEBOOK_SUFFIX = ".ipynb"
MASK_CALL = "get_ipython()"

_LINE_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?:%|!|\?)")
_HELP = re.compile(r"^(?P<indent>[ \t]*)\??[A-Za-z_][\w.]*(?:\(\))?\?{1,2}[ \t]*$")
_ASSIGN_MAGIC = re.compile(r"^(?P<head>[ \t]*[A-Za-z_][\w., \t]*?[ \t]*=[ \t]*)(?:%|!)")
# IPython's line magics and default shell aliases, which Jupyter runs without the ``%`` (automagic,
# on by default): ``ls ./embeddings/``, ``cd data``, ``pip install x``, ``time f()``
AUTOMAGICS = (
    "alias alias_magic autoawait autocall automagic autosave bookmark cat cd clear colors conda config "
    "connect_info cp debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less "
    "lf lk ll load load_ext loadpy logoff logon logstart logstate logstop ls lsmagic lx macro magic man "
    "mamba matplotlib micromamba mkdir more mv notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 "
    "pip popd pprint precision prun psearch psource pushd pwd pycat pylab qtconsole quickref recall "
    "rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env store sx system tb "
    "time timeit unalias unload_ext uv who who_ls whos xdel xmode"
).split()
# a magic's name, then its arguments (``_automagic`` keeps the lines that are Python)
_AUTOMAGIC = re.compile(r"^(?P<indent>[ \t]*)(?:" + "|".join(AUTOMAGICS) + r")[ \t]+\S")


class NotebookError(ValueError):
    """The file is not a notebook dllint can read."""


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


@dataclass
class CodeCell:
    index: int  # 0-based position among all cells
    lines: list[str]  # the cell's source lines, without terminators
    masked: list[str]  # the same lines with IPython syntax masked
    first_row: int  # 1-based row of the cell's first line in the concatenated source
    list_source: bool  # the JSON holds the source as a list of lines (else one string)
    trailing_newline: bool  # the cell's source ends with a newline

    @property
    def number(self) -> int:
        return self.index + 1

    @property
    def cell_magic(self) -> bool:
        """A ``%%magic`` cell: not Python, and nothing may go before its first line."""
        return bool(self.lines) and not any(self.masked)


@dataclass
class NotebookSource:
    """A notebook read as one Python module."""

    raw: bytes
    doc: dict
    cells: list[CodeCell] = field(default_factory=list)
    text: str = ""
    python: bool = True  # False: a notebook of another language (nothing to lint)

    # ------------------------------------------------------------------ positions

    def _cell_at(self, row: int) -> CodeCell | None:
        starts = [c.first_row for c in self.cells if c.lines]
        cells = [c for c in self.cells if c.lines]
        i = bisect.bisect_right(starts, row) - 1
        if i < 0:
            return None
        cell = cells[i]
        return cell if row < cell.first_row + len(cell.lines) else None

    def cell_position(self, row: int) -> tuple[int, int] | None:
        """(1-based cell number, 1-based line in that cell) of a concatenated row."""
        cell = self._cell_at(row)
        if cell is None:
            # the position after the last line (an insertion at the end): the last non-empty cell
            cells = [c for c in self.cells if c.lines]
            if cells and row == cells[-1].first_row + len(cells[-1].lines):
                return cells[-1].number, len(cells[-1].lines) + 1
            return None
        return cell.number, row - cell.first_row + 1

    def cell_row_offset(self, row: int) -> tuple[int, int] | None:
        """(cell number, rows of the concatenated source before that cell's first line)."""
        pos = self.cell_position(row)
        if pos is None:
            return None
        return pos[0], row - pos[1]

    @property
    def source_text(self) -> str:
        """The code cells' own text, concatenated: the rows of ``text`` with IPython lines as the
        cells hold them (``%matplotlib inline``, not the ``pass`` that stands for it)."""
        return "".join(line + "\n" for cell in self.cells for line in cell.lines)

    # ------------------------------------------------------------------ writing back

    def unwritable(self) -> str | None:
        """Why ``with_python`` can never write this notebook back (its JSON formatting cannot be
        reproduced), or None."""
        if not hasattr(self, "_unwritable"):
            try:
                _serializer(self.raw, self.doc)
                self._unwritable = None
            except NotebookError as exc:
                self._unwritable = str(exc)
        return self._unwritable

    def cell_changes(self, new_text: str) -> list[tuple[int, list[str], list[str]]]:
        """(cell number, old lines, new lines) of each code cell that ``new_text`` (an edited
        version of ``self.text``) changes, in the cells' own text; NotebookError as ``with_python``."""
        new = self.cell_lines_for(new_text)
        return [(c.number, c.lines, new[c.index]) for c in self.cells if new[c.index] != c.lines]

    def with_python(self, new_text: str) -> bytes:
        """The notebook's bytes with the code cells replaced by ``new_text`` (an edited version
        of ``self.text``). Raises NotebookError when the change cannot be mapped to cells or the
        notebook's formatting cannot be preserved."""
        if new_text == self.text:
            return self.raw
        dump = _serializer(self.raw, self.doc)
        new_cell_lines = self.cell_lines_for(new_text)
        doc = _load(self.raw)  # a fresh copy, in the file's key order
        for cell in self.cells:
            lines = new_cell_lines[cell.index]
            if lines == cell.lines:
                continue
            body = "\n".join(lines)
            if lines and cell.trailing_newline:
                body += "\n"
            source = _split_keep(body) if cell.list_source else body
            doc["cells"][cell.index]["source"] = source
        try:
            out = dump(doc)
            _check_only_sources_changed(self.doc, _load(out))
        except RecursionError:
            raise NotebookError("the notebook's JSON is nested too deeply to rewrite") from None
        return out

    def cell_lines_for(self, new_text: str) -> dict[int, list[str]]:
        """Cell index -> the cell's new lines (IPython lines as they were) for ``new_text``, an
        edited version of ``self.text``; NotebookError when the change cannot be mapped to cells."""
        old_lines = self.text.split("\n")[:-1] if self.text else []
        new_lines = new_text.split("\n")
        if new_lines and new_lines[-1] == "":
            new_lines.pop()
        # owner[i]: the cell of old line i; masked lines restore their original text
        owner: list[CodeCell] = []
        original: list[str] = []
        for cell in self.cells:
            for line in cell.lines:
                owner.append(cell)
                original.append(line)
        new_cell_lines: dict[int, list[str]] = {c.index: [] for c in self.cells}
        matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                for k in range(i2 - i1):
                    new_cell_lines[owner[i1 + k].index].append(original[i1 + k])
                continue
            touched = {owner[i].index for i in range(i1, i2)}
            if len(touched) > 1:
                raise NotebookError("a fix spans more than one cell")
            for i in range(i1, i2):
                if old_lines[i] != original[i]:
                    raise NotebookError("a fix changes a line holding IPython syntax")
            if touched:
                target = touched.pop()
            else:
                # an insertion before line i1 goes into that line's cell, at the end into the last
                # cell; never into a %%magic cell (the magic must stay its first line): the next
                # Python cell gets it, at its start
                k = i1
                while k < len(owner) and owner[k].cell_magic:
                    k += 1
                if k < len(owner):
                    target = owner[k].index
                    if k != i1:
                        new_cell_lines[target][:0] = new_lines[j1:j2]
                        continue
                elif owner and not owner[-1].cell_magic:
                    target = owner[-1].index
                else:
                    raise NotebookError("no Python cell to write the inserted lines into")
            new_cell_lines[target].extend(new_lines[j1:j2])
        return new_cell_lines


BOM = b"\xef\xbb\xbf"


def _load(raw: bytes):
    """The JSON document of a notebook's bytes (a UTF-8 BOM allowed); ValueError, UnicodeDecodeError
    or RecursionError (nested too deeply) when it is not JSON."""
    return json.loads(raw.decode("utf-8-sig"))


def _split_keep(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _check_only_sources_changed(before: dict, after: dict) -> None:
    """Everything but the code cells' ``source`` is identical."""

    def strip(d: dict) -> dict:
        cells = [{k: v for k, v in c.items() if k != "source"} if isinstance(c, dict) else c for c in d.get("cells", [])]
        return {**d, "cells": cells}

    if strip(before) != strip(after):  # pragma: no cover - a bug guard
        raise NotebookError("rewriting the notebook would change more than cell sources")


def _detect_indent(raw: str) -> int | None:
    m = re.search(r"\n( *)\"", raw)
    if m is None:
        return None
    return len(m.group(1))


def _serializer(raw: bytes, doc: dict):
    """A function doc -> bytes that reproduces ``raw`` exactly for ``doc``, or NotebookError."""
    bom = BOM if raw.startswith(BOM) else b""
    text = raw[len(bom) :].decode("utf-8")
    indent = _detect_indent(text)
    trailing = text[len(text.rstrip("\r\n")) :]
    newline = "\r\n" if "\r\n" in text else "\n"  # JSON escapes newlines in strings: only layout has them
    separators = (None,) if indent is not None else (None, (",", ":"))  # one-line JSON: either spacing
    for ensure_ascii in (False, True):
        for sort_keys in (False, True):
            for seps in separators:

                def dump(d, ensure_ascii=ensure_ascii, sort_keys=sort_keys, seps=seps) -> bytes:
                    out = json.dumps(d, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=seps)
                    return bom + (out.replace("\n", newline) + trailing).encode("utf-8")

                try:
                    same = dump(doc) == raw
                except (RecursionError, ValueError):  # nested too deeply; a lone surrogate
                    raise NotebookError("the notebook's JSON cannot be written back; not rewriting it") from None
                if same:
                    return dump
    raise NotebookError("the notebook's JSON formatting cannot be reproduced; not rewriting it")


# ---------------------------------------------------------------------------- reading


def _lines(source) -> str:
    if isinstance(source, list):
        if not all(isinstance(s, str) for s in source):
            raise NotebookError("a cell's source is not text")
        return "".join(source)
    if isinstance(source, str):
        return source
    raise NotebookError("a cell's source is not text")


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def mask_cell(lines: list[str]) -> list[str]:
    """The cell's lines with IPython syntax masked (same number of lines)."""
    first = next((ln for ln in lines if ln.strip()), "")
    if first.lstrip().startswith("%%"):
        return [""] * len(lines)
    if _parses("\n".join(lines) + "\n"):
        return list(lines)
    out: list[str] = []
    continued = False
    for line in lines:
        if continued:  # the continuation of a masked line
            out.append("")
            continued = line.rstrip().endswith("\\")
            continue
        m = _LINE_MAGIC.match(line) or _HELP.match(line) or _automagic(line)
        if m:
            out.append(m.group("indent") + "pass")
            continued = line.rstrip().endswith("\\")
            continue
        a = _ASSIGN_MAGIC.match(line)
        if a and not line.lstrip().startswith("#"):
            out.append(a.group("head") + MASK_CALL)
            continued = line.rstrip().endswith("\\")
            continue
        out.append(line)
    return out


def _automagic(line: str):
    """A line magic called without ``%`` (``ls ./embeddings/``), when the line is not a Python
    statement by itself: ``time = 3``, ``ls(x)`` and ``ls -la`` (an expression) are kept as they
    are."""
    m = _AUTOMAGIC.match(line)
    if m is None or _parses(line.strip()):
        return None
    return m


def read_notebook(raw: bytes) -> NotebookSource:
    try:
        doc = _load(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise NotebookError(f"not a notebook (invalid JSON: {exc})") from None
    except RecursionError:
        raise NotebookError("not a notebook (its JSON is nested too deeply to read)") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise NotebookError("not a notebook (no `cells` list)")
    nb = NotebookSource(raw=raw, doc=doc)
    language = _language(doc)
    if isinstance(language, str) and language.lower() not in ("python", "python3", "ipython", "ipython3"):
        nb.python = False
        return nb
    row = 1
    parts: list[str] = []
    for index, cell in enumerate(doc["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _lines(cell.get("source", ""))
        lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        masked = mask_cell(lines)
        nb.cells.append(
            CodeCell(index, lines, masked, row, isinstance(cell.get("source"), list), source.endswith(("\n", "\r")))
        )
        parts.extend(line + "\n" for line in masked)
        row += len(lines)
    nb.text = "".join(parts)
    return nb


def _language(doc: dict):
    """The kernel language the notebook's metadata names (None when it names none); metadata of
    the wrong shape (``"language_info": "python"``) names none."""

    def get(table, key):
        return table.get(key) if isinstance(table, dict) else None

    meta = get(doc, "metadata")
    return get(get(meta, "language_info"), "name") or get(get(meta, "kernelspec"), "language")


def notebook_python(raw: bytes) -> tuple[bytes, NotebookSource]:
    """(the Python source dllint analyses, the notebook) for a notebook's bytes."""
    nb = read_notebook(raw)
    try:
        return nb.text.encode("utf-8"), nb
    except UnicodeEncodeError as exc:  # JSON can spell a lone surrogate ("\ud800"); Python source cannot hold one
        row = nb.text.count("\n", 0, exc.start) + 1
        where = nb.cell_position(row)
        at = f" (cell {where[0]}, line {where[1]})" if where else ""
        raise NotebookError(f"a code cell holds text that is not valid Unicode (a lone surrogate){at}") from None


# ---------------------------------------------------------------------------- findings


def finalize(diagnostics: list, notebooks: dict) -> list:
    """Findings as a notebook's user sees it, applied once where the run's findings are final:

    - a finding in a notebook gets its cell (``cell`` and ``cell_row_offset``);
    - a location in a notebook named in a message (``nb.ipynb:17``, ``line 17 of nb.ipynb``, or
      ``line 17`` in the notebook's own finding) is rewritten in cell coordinates
      (``nb.ipynb:cell 2:line 4``, ``cell 2, line 4 of nb.ipynb``, ``cell 2, line 4``): rows of
      the concatenated cells mean nothing to a reader;
    - a fix in a notebook whose JSON formatting cannot be reproduced becomes display-only (never
      applied, never counted as fixable), with the reason in its message.
    """
    from dataclasses import replace

    if not notebooks:
        return diagnostics
    rewrite = MessageLocations(notebooks)
    out = []
    for d in diagnostics:
        nb = notebooks.get(d.path)
        changes: dict = {}
        if nb is not None:
            where = nb.cell_row_offset(d.span.row)
            if where is not None:
                changes.update(cell=where[0], cell_row_offset=where[1])
            why = nb.unwritable() if d.fix is not None and d.fix.applicability != "display" else None
            if why is not None:
                changes["fix"] = replace(d.fix, applicability="display", message=f"{d.fix.message} (not applied: {why})")
        message = rewrite(d.message, d.path)
        if message != d.message:
            changes["message"] = message
        details = _rewrite_details(d.details, rewrite, d.path)
        if details != d.details:
            changes["details"] = details
        out.append(replace(d, **changes) if changes else d)
    return out


def _rewrite_details(value, rewrite, own_path: str):
    """The details of a finding (evidence, hazards, why) with notebook rows in cell coordinates."""
    if isinstance(value, str):
        return rewrite(value, own_path)
    if isinstance(value, tuple):
        return tuple(_rewrite_details(v, rewrite, own_path) for v in value)
    return value


class MessageLocations:
    """Rewrites the rows of notebooks named in message texts into cell coordinates."""

    _BEFORE = r"(?<![\w./\\-])"  # not inside a longer path
    _AFTER = r"(?![\w/\\-]|\.\w)"  # the whole name (a sentence's full stop may follow)
    _CELL_BEFORE = re.compile(r"cell \d+(?:, |:)$")

    def __init__(self, notebooks: dict):
        import os

        self.notebooks = notebooks
        spellings: dict[str, str | None] = {}  # spelling -> notebook path (None: ambiguous)
        for path in notebooks:
            forms = {path, os.path.basename(path)}
            try:
                rel = os.path.relpath(path)
            except ValueError:
                rel = path
            if not rel.startswith(".."):
                forms.add(rel)
            for form in forms:
                spellings[form] = path if spellings.get(form, path) == path else None
        self.spellings = {k: v for k, v in spellings.items() if v is not None}
        alternatives = "|".join(re.escape(k) for k in sorted(self.spellings, key=len, reverse=True))
        self.qualified = re.compile(
            rf"{self._BEFORE}(?P<path>{alternatives}):(?P<row>\d+)(?::(?P<col>\d+))?(?![\d:])"
            rf"|\bline (?P<lrow>\d+) of (?P<lpath>{alternatives}){self._AFTER}"
        ) if alternatives else None
        self.bare = re.compile(r"\bline (?P<row>\d+)\b(?! of )")

    def _cell(self, path: str, row: int) -> tuple[int, int] | None:
        nb = self.notebooks.get(path)
        return nb.cell_position(row) if nb is not None else None

    def __call__(self, message: str, own_path: str) -> str:
        if self.qualified is None:
            return message
        def qualified(m: re.Match) -> str:
            if m.group("path") is not None:
                where = self._cell(self.spellings[m.group("path")], int(m.group("row")))
                if where is None:
                    return m.group(0)
                col = f":{m.group('col')}" if m.group("col") else ""
                return f"{m.group('path')}:cell {where[0]}:line {where[1]}{col}"
            where = self._cell(self.spellings[m.group("lpath")], int(m.group("lrow")))
            if where is None:
                return m.group(0)
            return f"cell {where[0]}, line {where[1]} of {m.group('lpath')}"

        message = self.qualified.sub(qualified, message)
        if own_path not in self.notebooks:
            return message

        def bare(m: re.Match) -> str:
            if self._CELL_BEFORE.search(m.string, 0, m.start()):  # already in cell coordinates
                return m.group(0)
            where = self._cell(own_path, int(m.group("row")))
            return f"cell {where[0]}, line {where[1]}" if where is not None else m.group(0)

        return self.bare.sub(bare, message)


def cell_diffs(before: NotebookSource, after: bytes) -> list[tuple[int, str, str]]:
    """(cell number, old source, new source) of each code cell whose text differs between the
    notebook ``before`` and the notebook bytes ``after`` (the same notebook, fixed)."""
    fixed = read_notebook(after)
    new = {c.index: c.lines for c in fixed.cells}
    return [
        (c.number, "".join(ln + "\n" for ln in c.lines), "".join(ln + "\n" for ln in new.get(c.index, [])))
        for c in before.cells
        if new.get(c.index, []) != c.lines
    ]
