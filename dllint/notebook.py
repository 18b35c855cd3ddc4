"""Jupyter notebooks (``.ipynb``) as Python modules, and back.

A notebook is linted as the concatenation of its code cells, in order. IPython syntax that is not
Python is masked *without shifting positions* (one source line stays one line):

- a cell whose first non-blank line is a cell magic (``%%time``, ``%%bash`` ...): every line of the
  cell becomes an empty line (the cell is skipped);
- a line magic (``%matplotlib inline``), a shell escape (``!pip install x``) or a help request
  (``obj?``, ``??obj``): the line becomes ``pass`` at the same indentation;
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

    # ------------------------------------------------------------------ writing back

    def with_python(self, new_text: str) -> bytes:
        """The notebook's bytes with the code cells replaced by ``new_text`` (an edited version
        of ``self.text``). Raises NotebookError when the change cannot be mapped to cells or the
        notebook's formatting cannot be preserved."""
        if new_text == self.text:
            return self.raw
        dump = _serializer(self.raw, self.doc)
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
        doc = json.loads(self.raw.decode("utf-8"))  # a fresh copy, in the file's key order
        for cell in self.cells:
            lines = new_cell_lines[cell.index]
            if lines == cell.lines:
                continue
            body = "\n".join(lines)
            if lines and cell.trailing_newline:
                body += "\n"
            source = _split_keep(body) if cell.list_source else body
            doc["cells"][cell.index]["source"] = source
        out = dump(doc)
        _check_only_sources_changed(self.doc, json.loads(out.decode("utf-8")))
        return out


def _split_keep(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _check_only_sources_changed(before: dict, after: dict) -> None:
    """Everything but the code cells' ``source`` is identical."""

    def strip(d: dict) -> dict:
        return {**d, "cells": [{k: v for k, v in c.items() if k != "source"} for c in d.get("cells", [])]}

    if strip(before) != strip(after):  # pragma: no cover - a bug guard
        raise NotebookError("rewriting the notebook would change more than cell sources")


def _detect_indent(raw: str) -> int | None:
    m = re.search(r"\n( *)\"", raw)
    if m is None:
        return None
    return len(m.group(1))


def _serializer(raw: bytes, doc: dict):
    """A function doc -> bytes that reproduces ``raw`` exactly for ``doc``, or NotebookError."""
    text = raw.decode("utf-8")
    indent = _detect_indent(text)
    trailing = text[len(text.rstrip("\r\n")) :]
    newline = "\r\n" if "\r\n" in text else "\n"  # JSON escapes newlines in strings: only layout has them
    separators = (None,) if indent is not None else (None, (",", ":"))  # one-line JSON: either spacing
    for ensure_ascii in (False, True):
        for sort_keys in (False, True):
            for seps in separators:

                def dump(d, ensure_ascii=ensure_ascii, sort_keys=sort_keys, seps=seps) -> bytes:
                    out = json.dumps(d, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=seps)
                    return (out.replace("\n", newline) + trailing).encode("utf-8")

                if dump(doc) == raw:
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
        m = _LINE_MAGIC.match(line) or _HELP.match(line)
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


def read_notebook(raw: bytes) -> NotebookSource:
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise NotebookError(f"not a notebook (invalid JSON: {exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise NotebookError("not a notebook (no `cells` list)")
    nb = NotebookSource(raw=raw, doc=doc)
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    language = (meta.get("language_info") or {}).get("name") or (meta.get("kernelspec") or {}).get("language")
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


def notebook_python(raw: bytes) -> tuple[bytes, NotebookSource]:
    """(the Python source dllint analyses, the notebook) for a notebook's bytes."""
    nb = read_notebook(raw)
    return nb.text.encode("utf-8"), nb
