"""SARIF 2.1.0 (``--output-format sarif``): GitHub code scanning, VS Code's SARIF viewer, ...

One ``reportingDescriptor`` per rule (id, name, short and full description and help from the
rule's docs, help URI, default level), one ``result`` per finding with a region (1-based rows and
columns; ``columnKind`` is ``unicodeCodePoints`` because dllint counts characters, and
``endColumn`` is exclusive, as SARIF defines it) and its fix as ``artifactChanges`` when it has one
(the fix's applicability, safe / unsafe / display, is in the fix's ``properties``).
Paths are relative to the working directory (``%SRCROOT%``) when they lie under it.
A notebook finding has no region and no fix (its rows are lines of a cell, not of the .ipynb JSON):
the cell is a logical location, ``properties.cellRegion`` holds the position inside the cell, and
the message starts with the text output's coordinates (``cell 3:line 2:9: ...``).
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from urllib.parse import quote

from dllint import __version__
from dllint.report.text import location as cell_location

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def level(severity: str) -> str:
    return LEVELS.get(severity, "warning")


def _text(rule, section: str) -> str:
    body = rule.docs.get(section) if isinstance(rule.docs, dict) else None
    return " ".join(textwrap.dedent(body).split()) if body else ""


def rule_descriptor(rule) -> dict:
    short = rule.summary or rule.name or rule.code
    full = _text(rule, "What it does") or short
    docs = rule.render_docs()
    return {
        "id": rule.code,
        "name": rule.name or rule.code,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": docs, "markdown": docs},
        "helpUri": rule.url,
        "defaultConfiguration": {"level": level(rule.severity)},
        "properties": {"fix": rule.fix, "default": bool(rule.default)},
    }


def artifact_location(path: str, ctx) -> dict:
    absolute = os.path.abspath(path)
    shown = ctx.display_path(absolute)
    if os.path.isabs(shown):
        return {"uri": Path(absolute).as_uri()}
    return {"uri": quote(shown.replace(os.sep, "/")), "uriBaseId": SRCROOT}


def region(span) -> dict:
    return {"startLine": span.row, "startColumn": span.col, "endLine": span.end_row, "endColumn": span.end_col}


def result(diag, rule_index: dict[str, int], ctx) -> dict:
    location = artifact_location(diag.path, ctx)
    cell = getattr(diag, "cell", None)
    if cell is None:
        where: dict = {"physicalLocation": {"artifactLocation": location, "region": region(diag.span)}}
    else:  # a notebook: rows are lines of a cell, not of the .ipynb file, so no region and no fix
        shift = diag.cell_row_offset
        where = {
            "physicalLocation": {"artifactLocation": location},
            "logicalLocations": [{"name": f"cell {cell}", "kind": "module"}],
            "properties": {
                "cell": cell,
                "cellRegion": region(type(diag.span)(diag.span.row - shift, diag.span.col, diag.span.end_row - shift, diag.span.end_col)),
            },
        }
    out: dict = {
        "ruleId": diag.code,
        "level": level(diag.severity),
        "message": {"text": diag.message if cell is None else f"{cell_location(diag)}: {diag.message}"},
        "locations": [where],
    }
    if diag.code in rule_index:
        out["ruleIndex"] = rule_index[diag.code]
    if diag.fix is not None and diag.fix.edits and cell is None:
        out["fixes"] = [
            {
                "description": {"text": diag.fix.message or f"Fix {diag.code}"},
                "artifactChanges": [
                    {
                        "artifactLocation": location,
                        "replacements": [
                            {"deletedRegion": region(e.span), "insertedContent": {"text": e.content}}
                            for e in diag.fix.edits
                        ],
                    }
                ],
                "properties": {"applicability": diag.fix.applicability},
            }
        ]
    return out


def sarif_log(diagnostics, ctx) -> dict:
    from dllint.rules import all_rules

    rules = list(all_rules())
    rule_index = {r.code: i for i, r in enumerate(rules)}
    root = Path(os.path.abspath(ctx.cwd)).as_uri().rstrip("/") + "/"
    run = {
        "tool": {
            "driver": {
                "name": "dllint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": "https://dllint.dev",
                "rules": [rule_descriptor(r) for r in rules],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": root}},
        "columnKind": "unicodeCodePoints",
        "results": [result(d, rule_index, ctx) for d in diagnostics],
        "invocations": [{"executionSuccessful": True}],
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(diagnostics, ctx) -> str:
    return json.dumps(sarif_log(diagnostics, ctx), indent=2, ensure_ascii=False) + "\n"
