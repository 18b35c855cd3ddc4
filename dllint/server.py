"""``dllint server``: a Language Server over stdio (pygls, the ``lsp`` extra).

Diagnostics are published on open, change and save. The unsaved text of every open document is
an overlay on the files on disk, and the whole project is indexed as ``dllint check`` indexes it
(same configuration, same engine), so a Dataset base class in another file is known. Code actions
offer each finding's fix (safe fixes first, labelled safe or unsafe) and a ``# noqa: CODE`` quick
fix. Notebooks opened as text (their JSON) are not linted here; ``dllint check`` covers them.

Positions: dllint counts 1-based rows and character (code point) columns; LSP counts 0-based lines
and UTF-16 code units. The conversion goes through the line's text.
"""

from __future__ import annotations

import ast
import hashlib
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

    @property
    def lines(self) -> list[str]:
        return split_lines(self.text)


class CachedFacts:
    """Wraps an engine's FactStore: a file's facts are computed again only when its bytes change
    (facts are a pure function of the path, module name and bytes)."""

    def __init__(self, store):
        self.store = store
        self.cache: dict[tuple, object] = {}

    def compute(self, items):
        out = {}
        missing = []
        for item in items:
            key = (*item[:4], hashlib.blake2b(item[4], digest_size=16).digest())
            facts = self.cache.get(key)
            if facts is None:
                missing.append(item)
            else:
                out[item[0]] = facts
        if missing:
            fresh = self.store.compute(missing)
            for item in missing:
                self.cache[(*item[:4], hashlib.blake2b(item[4], digest_size=16).digest())] = fresh[item[0]]
            out.update(fresh)
        if len(self.cache) > 20000:  # a bound for long sessions: start again
            self.cache.clear()
        return out


class Linter:
    """Runs the engine for one document, with the open documents as overlays."""

    def __init__(self):
        self.results: dict[str, Linted] = {}  # uri -> last result
        self.engines: dict[tuple, object] = {}  # (root, settings) -> Engine with cached facts
        self.encoding = "utf-16"  # the position encoding agreed at initialize

    def engine(self, settings, root: str):
        from dllint.engine import Engine

        key = (root, settings)
        engine = self.engines.get(key)
        if engine is None:
            engine = Engine(settings, root)
            engine.store = CachedFacts(engine.store)
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
        self.results[uri] = result
        return result

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
    new_text = "\n".join([*lines[: row - 1], new_line, *lines[row:]]) + "\n"
    try:  # a comment leaves the syntax tree as it is; text landing in a string would not
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same = ast.dump(ast.parse(new_text)) == ast.dump(ast.parse("\n".join(lines) + "\n"))
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

    ls = LanguageServer("dllint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
    linter = Linter()
    converter = converters.get_converter()

    def open_docs() -> dict[str, str]:
        return {uri: doc.source for uri, doc in ls.workspace.text_documents.items()}

    def publish(uri: str, version=None) -> None:
        try:
            encoding = getattr(ls.workspace, "position_encoding", None) or "utf-16"
            linter.encoding = str(getattr(encoding, "value", encoding))
            doc = ls.workspace.get_text_document(uri)
            linter.lint(uri, doc.source, open_docs())
            payload = linter.diagnostics(uri)
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
        for uri in list(linter.results):  # a saved file can change what the others' findings are
            if uri != params.text_document.uri and uri in ls.workspace.text_documents:
                publish(uri, ls.workspace.get_text_document(uri).version)

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


@click.command()
def server():
    """Run the dllint Language Server on stdin/stdout (needs the `lsp` extra: pip install 'dllint[lsp]')."""
    try:
        import pygls  # noqa: F401
    except ImportError:
        click.echo("dllint: error: the language server needs pygls: pip install 'dllint[lsp]'", err=True)
        sys.exit(2)
    build_server().start_io()
