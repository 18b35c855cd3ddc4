"""DL000 syntax-error: a file dllint could not read or parse."""

from __future__ import annotations

from dllint.model import Diagnostic, Span
from dllint.rules.base import Rule


class SyntaxErrorRule(Rule):
    code = "DL000"
    name = "syntax-error"
    severity = "error"
    summary = "A file that cannot be read, decoded or parsed; the run goes on."
    docs = {
        "What it does": """
            Reports a file dllint needed to analyse but could not: unreadable, binary (NUL bytes),
            not decodable in its declared encoding (UTF-8 by default), or not valid Python.
            """,
        "Why is this bad?": """
            A file that cannot be parsed cannot be checked: a Dataset defined there is invisible
            to every other rule, so its pitfalls go unreported.
            """,
        "Example": """
            ```python
            class Broken(Dataset)
                ...
            ```
            """,
        "Use instead": """
            ```python
            class Broken(Dataset):
                ...
            ```
            """,
        "Fix safety": "No fix.",
    }

    def check(self, project):
        for facts in project.files.values():
            if facts.error is not None and facts.path in project.targets:
                err = facts.error
                yield Diagnostic(
                    self.code, err.message, facts.path, Span(err.row, err.col, err.row, err.col), severity="error"
                )
