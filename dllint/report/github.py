"""GitHub Actions workflow commands (``--output-format github``): one annotation per finding.

``::error file=a.py,line=3,col=5,endLine=3,endColumn=9,title=DL101 (copy-on-read-container)::message``
with ``warning`` / ``notice`` for the other severities. Escaping follows the workflow-command
grammar (actions/toolkit ``command.ts``): in the message ``%`` ``\\r`` ``\\n``; in property values
also ``:`` and ``,``. A notebook finding annotates the notebook file (its cells' rows are not
lines of the JSON) and names the cell, line and column in the message, as the text output does
(``cell 3:line 2:9: message``).
"""

from __future__ import annotations

import os

from dllint.report.text import location

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(diag, ctx) -> str:
    from dllint.rules import rule_by_code

    rule = rule_by_code(diag.code)
    title = f"{diag.code} ({rule.name})" if rule is not None and rule.name else diag.code
    props = [("file", ctx.display_path(diag.path).replace(os.sep, "/"))]
    message = diag.message
    cell = getattr(diag, "cell", None)
    if cell is None:
        props += [
            ("line", str(diag.span.row)),
            ("col", str(diag.span.col)),
            ("endLine", str(diag.span.end_row)),
            ("endColumn", str(diag.span.end_col)),
        ]
    else:  # rows of a notebook's cells are not lines of the .ipynb file: annotate the file, say where
        message = f"{location(diag)}: {message}"
    props.append(("title", title))
    command = COMMANDS.get(diag.severity, "warning")
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{command} {joined}::{escape_data(message)}"


def render(diagnostics, ctx) -> str:
    return "".join(annotation(d, ctx) + "\n" for d in diagnostics)
