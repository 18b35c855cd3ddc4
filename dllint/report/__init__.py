"""Output formats. Each module ``report/<name>.py`` defines ``render(diagnostics, ctx) -> str``;
FORMATS maps the ``--output-format`` value to it."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field

from dllint.model import Diagnostic
from dllint.textutil import display_path

FORMATS = {
    "text": "dllint.report.text",
    "concise": "dllint.report.text",
    "json": "dllint.report.json",
    "json-lines": "dllint.report.json_lines",
    "full": "dllint.report.full",
    "github": "dllint.report.github",
    "sarif": "dllint.report.sarif",
}
# Formats meant for other programs: nothing else may be printed on standard output with them.
MACHINE_FORMATS = frozenset({"json", "json-lines", "github", "sarif"})


@dataclass
class ReportContext:
    unsafe_fixes: bool = False
    fix_applied: int = 0  # diagnostics fixed in this run
    show_summary: bool = True
    color: bool = False
    cwd: str = field(default_factory=os.getcwd)
    output_format: str = "text"
    sources: dict = field(default_factory=dict)  # path -> text, for formats that show code
    # path -> dllint.notebook.NotebookSource of the run's notebooks: fix edits and diffs are shown
    # in their cells' coordinates and text
    notebooks: dict = field(default_factory=dict)

    def display_path(self, path: str) -> str:
        return display_path(path, self.cwd)


def render(name: str, diagnostics: list[Diagnostic], ctx: ReportContext) -> str:
    module = importlib.import_module(FORMATS[name])
    return module.render(diagnostics, ctx)
