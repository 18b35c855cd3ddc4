"""``dllint server``: a Language Server over stdio (pygls, the ``lsp`` extra).

Diagnostics are published on open, change and save. The unsaved text of every open document is
an overlay on the files on disk, and the whole project is indexed as ``dllint check`` indexes it
(same configuration, same engine), so a Dataset base class in another file is known. Code actions
offer each finding's fix (safe fixes first, labelled safe or unsafe) and a ``# noqa: CODE`` quick
fix. Notebooks are linted through LSP notebook sync (``notebookDocument/*``): each code cell gets
its findings, rows counted in the cell; a ``.ipynb`` opened as plain text (its JSON) is not linted.

Positions: dllint counts 1-based rows and character (code point) columns; LSP counts 0-based lines
and code units of the encoding agreed at ``initialize`` (UTF-16 unless the client prefers UTF-8 or
UTF-32). The conversion goes through the line's text.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import sys
import warnings
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

import click

from dllint.model import Diagnostic, Span
from dllint.textutil import split_lines

SEVERITY = {"error": 1, "warning": 2, "info": 3}
_NOQA_CODES = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)", re.IGNORECASE)
_NOQA_ALL = re.compile(r"#\s*noqa(?!:)", re.IGNORECASE)


# ---------------------------------------------------------------------------- positions


def uri_to_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return os.path.abspath(unquote(parsed.path))


UNIT_BYTES = {"utf-8": 1, "utf-16": 2, "utf-32": 4}  # the position encodings LSP 3.17 defines


def utf16_col(line: str, col: int, encoding: str = "utf-16") -> int:
    """0-based offset, in ``encoding``'s code units (UTF-16 unless the client and server agreed on
    another), of the 1-based character column ``col`` in ``line``."""
    prefix = line[: max(col - 1, 0)]
    codec = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}.get(encoding, "utf-16-le")
    return len(prefix.encode(codec)) // UNIT_BYTES.get(encoding, 2) + max(col - 1 - len(line), 0)


def lsp_position(lines: list[str], row: int, col: int, encoding: str = "utf-16") -> dict:
    line = lines[row - 1] if 1 <= row <= len(lines) else ""
    return {"line": row - 1, "character": utf16_col(line, col, encoding)}


def lsp_range(lines: list[str], span: Span, encoding: str = "utf-16") -> dict:
    return {
        "start": lsp_position(lines, span.row, span.col, encoding),
        "end": lsp_position(lines, span.end_row, span.end_col, encoding),
    }


def _before(a: dict, b: dict) -> bool:
    return (a["line"], a["character"]) < (b["line"], b["character"])


def overlaps(a: dict, b: dict) -> bool:
    """Two LSP ranges touch (an empty range touches what contains it)."""
    return not (_before(a["end"], b["start"]) or _before(b["end"], a["start"]))


# ---------------------------------------------------------------------------- linting (no pygls)


@dataclass
class Linted:
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # ``Analysis.notes``: logged, not shown inline

    @property
    def lines(self) -> list[str]:
        return split_lines(self.text)


class CachedFacts:
    """Wraps an engine's FactStore: a file's facts are computed again only when its bytes change
    (facts are a pure function of the path, module name, bytes and the shadowed library names)."""

    def __init__(self, store):
        self.store = store
        self.cache: dict[tuple, object] = {}

    def compute(self, items, writer=None, stored=None):
        """(The language server keeps no cache on disk: ``writer`` is always None.)"""
        out = {}
        missing = []
        for item in items:
            key = (*item[:4], *item[5:], hashlib.blake2b(item[4], digest_size=16).digest())
            facts = self.cache.get(key)
            if facts is None:
                missing.append(item)
            else:
                out[item[0]] = facts
        if missing:
            fresh = self.store.compute(missing)
            for item in missing:
                self.cache[(*item[:4], *item[5:], hashlib.blake2b(item[4], digest_size=16).digest())] = fresh[item[0]]
            out.update(fresh)
        if len(self.cache) > 20000:  # a bound for long sessions: start again
            self.cache.clear()
        return out

    def scan(self, paths, triggers, extract_as=None, writer=None, meanwhile=None, imports=False):
        """Verdicts only: facts the scan computed would pass by this cache (each run of the
        session would analyse every accepted file again); ``compute`` serves them. (No imports
        either: the engine reads them itself.)"""
        return self.store.scan(paths, triggers, meanwhile=meanwhile)

    def close(self) -> None:
        self.store.close()

    def release(self) -> None:
        self.store.release()


class Linter:
    """Runs the engine for one document, with the open documents as overlays."""

    def __init__(self):
        self.results: dict[str, Linted] = {}  # uri -> last result
        self.engines: dict[tuple, object] = {}  # (root, settings) -> Engine with cached facts
        self.encoding = "utf-16"  # the position encoding agreed at initialize
        self.cell_owner: dict[str, str] = {}  # notebook cell URI -> the notebook's URI

    def engine(self, settings, root: str):
        from dllint.commands.check import project_scope
        from dllint.engine import Engine

        key = (root, settings)
        engine = self.engines.get(key)
        if engine is None:
            engine = Engine(settings, root, bounded=project_scope([root])[1])
            engine.store = CachedFacts(engine.store)
            engine.plans = {}  # each document's next run starts from the files its last one analysed
            self.engines[key] = engine
        return engine

    def lint(self, uri: str, text: str, open_docs: dict[str, str]) -> Linted:
        from dllint.commands.check import enabled_codes, load_configuration
        from dllint.config import Overrides

        path = uri_to_path(uri)
        result = Linted(text)
        if path is None or path.endswith(".ipynb"):
            self.results[uri] = result
            return result
        settings, root = load_configuration([path], None, Overrides())
        overlay = {}
        for other_uri, other_text in open_docs.items():
            other = uri_to_path(other_uri)
            if other is not None and not other.endswith(".ipynb"):
                overlay[other] = other_text.encode("utf-8")
        overlay[path] = text.encode("utf-8")
        analysis = self.engine(settings, root).analyse([path], enabled_codes(settings), overlay, {path})
        result.diagnostics = [d for d in analysis.diagnostics if d.path == path]
        result.notes = analysis.notes
        self.results[uri] = result
        return result

    def lint_notebook(self, uri: str, cells: list[tuple[str, str, str]], open_docs: dict[str, str]) -> dict[str, Linted]:
        """Lint a notebook the editor holds (``cells``: kind "code"/"markdown", cell URI, text) as
        ``dllint check`` lints the .ipynb; each code cell gets its findings, rows in the cell."""
        from dllint.commands.check import enabled_codes, load_configuration
        from dllint.config import Overrides

        out = {cell_uri: Linted(text) for kind, cell_uri, text in cells if kind == "code"}
        path = uri_to_path(uri)
        if path is not None:
            doc = {
                "cells": [
                    {"cell_type": kind, "metadata": {}, "source": text, **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                    for kind, _, text in cells
                ],
                "metadata": {"language_info": {"name": "python"}},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
            settings, root = load_configuration([path], None, Overrides())
            overlay = {p: t.encode("utf-8") for u, t in open_docs.items() if (p := uri_to_path(u)) and not p.endswith(".ipynb")}
            overlay[path] = json.dumps(doc, ensure_ascii=False).encode("utf-8")
            analysis = self.engine(settings, root).analyse([path], enabled_codes(settings), overlay, {path})
            notebook = analysis.notebooks.get(path)
            for d in analysis.diagnostics:
                if d.path != path or d.cell is None or notebook is None:
                    continue
                cell_uri = cells[d.cell - 1][1]
                if cell_uri in out:
                    out[cell_uri].diagnostics.append(_into_cell(d, notebook))
        for cell_uri, linted in out.items():
            self.results[cell_uri] = linted
            self.cell_owner[cell_uri] = uri
        return out


    # ------------------------------------------------------------------ LSP payloads (plain dicts)

    def lsp_diagnostic(self, d: Diagnostic, lines: list[str]) -> dict:
        from dllint.rules import rule_by_code

        rule = rule_by_code(d.code)
        out = {
            "range": lsp_range(lines, d.span, self.encoding),
            "severity": SEVERITY.get(d.severity, 2),
            "code": d.code,
            "source": "dllint",
            "message": d.message,
        }
        if rule is not None:
            out["codeDescription"] = {"href": rule.url}
        return out

    def diagnostics(self, uri: str) -> list[dict]:
        linted = self.results.get(uri)
        if linted is None:
            return []
        lines = linted.lines
        return [self.lsp_diagnostic(d, lines) for d in linted.diagnostics]

    def code_actions(self, uri: str, want: dict) -> list[dict]:
        """Quick fixes for the findings touching the range ``want``: fixes (safe first), then noqa."""
        linted = self.results.get(uri)
        if linted is None:
            return []
        lines = linted.lines
        fixes: list[tuple[int, dict]] = []
        noqas: list[dict] = []
        for d in linted.diagnostics:
            lsp_diag = self.lsp_diagnostic(d, lines)
            if not overlaps(lsp_diag["range"], want):
                continue
            if d.fix is not None and d.fix.edits and d.fix.applicability in ("safe", "unsafe"):
                edits = [{"range": lsp_range(lines, e.span, self.encoding), "newText": e.content} for e in d.fix.edits]
                fixes.append(
                    (
                        0 if d.fix.applicability == "safe" else 1,
                        {
                            "title": f"{d.code}: {d.fix.message} ({d.fix.applicability} fix)",
                            "kind": "quickfix",
                            "diagnostics": [lsp_diag],
                            "isPreferred": d.fix.applicability == "safe",
                            "edit": {"changes": {uri: edits}},
                        },
                    )
                )
            edit = noqa_edit(linted.text, lines, d, self.encoding)
            if edit is not None:
                noqas.append(
                    {
                        "title": f"{d.code}: disable for this line (# noqa: {d.code})",
                        "kind": "quickfix",
                        "diagnostics": [lsp_diag],
                        "edit": {"changes": {uri: [edit]}},
                    }
                )
        fixes.sort(key=lambda t: t[0])
        return [a for _, a in fixes] + noqas


def _into_cell(d: Diagnostic, notebook) -> Diagnostic:
    """A notebook finding with rows counted in its cell; a fix with an edit outside the cell is
    dropped (an editor applies a cell's edits to that cell only)."""
    from dataclasses import replace

    off = d.cell_row_offset

    def shift(span: Span) -> Span:
        return Span(span.row - off, span.col, span.end_row - off, span.end_col)

    fix = d.fix
    if fix is not None:
        inside = all(
            notebook.cell_row_offset(e.span.row) == (d.cell, off) and notebook.cell_row_offset(e.span.end_row) == (d.cell, off)
            for e in fix.edits
        )
        fix = replace(fix, edits=tuple(replace(e, span=shift(e.span)) for e in fix.edits)) if inside else None
    return replace(
        d, span=shift(d.span), fix=fix, noqa_row=(d.noqa_row - off) if d.noqa_row else None, cell=None, cell_row_offset=0
    )


def noqa_edit(text: str, lines: list[str], d: Diagnostic, encoding: str = "utf-16") -> dict | None:
    """A TextEdit adding ``d.code`` to the ``# noqa`` of the finding's noqa row, or None when the
    line already suppresses everything or the text there would not be a comment."""
    row = d.noqa_row or d.span.row
    if not 1 <= row <= len(lines):
        return None
    line = lines[row - 1]
    if _NOQA_ALL.search(line):
        return None
    m = _NOQA_CODES.search(line)
    if m:
        codes = [c.upper() for c in re.findall(r"[A-Z]+[0-9]+", m.group("codes"), re.IGNORECASE)]
        if d.code in codes:
            return None
        start, end = m.span("codes")
        new_line = line[:start] + ", ".join([*codes, d.code]) + line[end:]
    else:
        new_line = line.rstrip() + f"  # noqa: {d.code}"
    from dllint.notebook import mask_cell  # a notebook cell may hold IPython syntax

    new_text = "\n".join(mask_cell([*lines[: row - 1], new_line, *lines[row:]])) + "\n"
    try:  # a comment leaves the syntax tree as it is; text landing in a string would not
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same = ast.dump(ast.parse(new_text)) == ast.dump(ast.parse("\n".join(mask_cell(lines)) + "\n"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        same = False
    if not same:
        return None  # e.g. the line ends inside a multi-line string
    whole = {"start": {"line": row - 1, "character": 0}, "end": {"line": row - 1, "character": utf16_col(line, len(line) + 1, encoding)}}
    return {"range": whole, "newText": new_line}


# ---------------------------------------------------------------------------- the server


def build_server():
    from lsprotocol import converters, types
    from pygls.lsp.server import LanguageServer

    from dllint import __version__

    from pygls.exceptions import FeatureNotificationError

    class Server(LanguageServer):
        def report_server_error(self, error, source):
            """A notification the workspace cannot apply (a notebook change naming a cell or a
            notebook that was never opened ...) is logged as a warning and the session goes on;
            pygls' default is an "Error in server" popup."""
            if source is FeatureNotificationError:
                detail = str(error) if type(error).__name__ == "JsonRpcInternalError" else f"{type(error).__name__}: {error}"
                self.window_log_message(
                    types.LogMessageParams(
                        type=types.MessageType.Warning, message=f"dllint: ignored a notification it cannot apply ({detail})"
                    )
                )
                return
            super().report_server_error(error, source)

    ls = Server(
        "dllint",
        __version__,
        text_document_sync_kind=types.TextDocumentSyncKind.Full,
        notebook_document_sync=types.NotebookDocumentSyncOptions(
            notebook_selector=[
                types.NotebookDocumentFilterWithCells(
                    notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")]
                )
            ],
            save=True,
        ),
    )
    linter = Linter()
    converter = converters.get_converter()

    def open_docs() -> dict[str, str]:
        return {uri: doc.source for uri, doc in ls.workspace.text_documents.items()}

    def publish(uri: str, version=None) -> None:
        try:
            encoding = getattr(ls.workspace, "position_encoding", None) or "utf-16"
            linter.encoding = str(getattr(encoding, "value", encoding))
            doc = ls.workspace.get_text_document(uri)
            linted = linter.lint(uri, doc.source, open_docs())
            payload = linter.diagnostics(uri)
            for note in linted.notes:
                ls.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=f"dllint: {note}"))
        except Exception as exc:  # never let one document take the server down
            ls.window_log_message(
                types.LogMessageParams(type=types.MessageType.Error, message=f"dllint: {type(exc).__name__}: {exc}")
            )
            payload = []
        diagnostics = [converter.structure(d, types.Diagnostic) for d in payload]
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(*args):
        params: types.DidOpenTextDocumentParams = args[-1]
        publish(params.text_document.uri, params.text_document.version)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(*args):
        params: types.DidChangeTextDocumentParams = args[-1]
        publish(params.text_document.uri, params.text_document.version)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(*args):
        params: types.DidSaveTextDocumentParams = args[-1]
        publish(params.text_document.uri)
        notebooks = set()
        for uri in list(linter.results):  # a saved file can change what the others' findings are
            if uri in linter.cell_owner:
                notebooks.add(linter.cell_owner[uri])
            elif uri != params.text_document.uri and uri in ls.workspace.text_documents:
                publish(uri, ls.workspace.get_text_document(uri).version)
        for uri in notebooks:
            publish_notebook(uri)

    def publish_notebook(uri: str) -> None:
        notebook = ls.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            return
        cells = []
        missing = set()
        for cell in notebook.cells:
            kind = "code" if cell.kind == types.NotebookCellKind.Code else "markdown"
            document = ls.workspace.text_documents.get(unquote(cell.document))
            if document is None:  # the client named a cell it never sent: lint the others
                missing.add(cell.document)
                ls.window_log_message(
                    types.LogMessageParams(
                        type=types.MessageType.Warning,
                        message=f"dllint: notebook {uri} names cell {cell.document}, whose text was never sent; linting without it",
                    )
                )
            cells.append((kind, cell.document, document.source if document is not None else ""))
        try:
            encoding = getattr(ls.workspace, "position_encoding", None) or "utf-16"
            linter.encoding = str(getattr(encoding, "value", encoding))
            linter.lint_notebook(uri, cells, open_docs())
        except Exception as exc:  # never let one notebook take the server down
            ls.window_log_message(
                types.LogMessageParams(type=types.MessageType.Error, message=f"dllint: {type(exc).__name__}: {exc}")
            )
            for _, cell_uri, text in cells:
                linter.results[cell_uri] = Linted(text)
        for kind, cell_uri, _ in cells:
            if kind == "code" and cell_uri not in missing:
                diagnostics = [converter.structure(d, types.Diagnostic) for d in linter.diagnostics(cell_uri)]
                ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=diagnostics))

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(*args):
        publish_notebook(args[-1].notebook_document.uri)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(*args):
        publish_notebook(args[-1].notebook_document.uri)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(*args):
        publish_notebook(args[-1].notebook_document.uri)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(*args):
        for cell in args[-1].cell_text_documents:
            linter.results.pop(cell.uri, None)
            linter.cell_owner.pop(cell.uri, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(*args):
        params: types.DidCloseTextDocumentParams = args[-1]
        linter.results.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @ls.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=False),
    )
    def code_action(*args):
        params: types.CodeActionParams = args[-1]
        only = params.context.only if params.context else None
        if only and not any(kind == "quickfix" or "quickfix".startswith(kind + ".") or kind == "" for kind in only):
            return []  # the client asked for other kinds (source.organizeImports ...)
        want = converter.unstructure(params.range)
        actions = linter.code_actions(params.text_document.uri, want)
        return [converter.structure(a, types.CodeAction) for a in actions]

    return ls


@click.command(short_help="Run the Language Server on stdin/stdout (the lsp extra).")
def server():
    """Run the dllint Language Server on stdin/stdout (needs the `lsp` extra: pip install 'dllint[lsp]')."""
    try:
        import pygls  # noqa: F401
    except ImportError:
        click.echo("dllint: error: the language server needs pygls: pip install 'dllint[lsp]'", err=True)
        sys.exit(2)
    build_server().start_io()
