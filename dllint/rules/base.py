"""What a rule is: a code, a name, docs with fixed sections, and two hooks.

``extract(ctx)`` runs once per analysed file (in parallel, cached) and returns plain data the rule
alone needs (fix positions, mostly); ``check(project)`` runs once over the whole project and yields
Diagnostics, asking the program model (``project.index``, dllint/program/) what the program does.
A rule keeps no state between runs and imports no other rule. A rule module holds exactly one
subclass of ``Rule``; rules are found by scanning the package, so adding a rule touches one file
(plus its fixtures).
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from dllint.facts.context import FileContext
    from dllint.model import Diagnostic
    from dllint.project import Project

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References")


class Rule:
    code: str = ""
    name: str = ""
    default: bool = True  # runs without --select
    severity: str = "warning"  # default severity; a finding may override it
    fix: str = "none"  # none | safe | unsafe | "safe or unsafe": how its fixes are labelled
    # Words whose presence in a file's code (a name, an attribute, a keyword argument, a string
    # without spaces) makes the file worth analysing for this rule (dllint/prefilter.py);
    # ``comment_triggers`` count anywhere in the bytes.
    triggers: tuple[bytes, ...] = ()
    comment_triggers: tuple[bytes, ...] = ()
    summary: str = ""  # one line: what it catches
    # The docs, as a dict section -> markdown text (sections from DOC_SECTIONS).
    docs: dict[str, str] = {}

    def extract(self, ctx: "FileContext") -> Any:
        """Per-file facts for this rule (plain, picklable data), or None."""
        return None

    def check(self, project: "Project") -> Iterable["Diagnostic"]:
        return ()

    @property
    def url(self) -> str:
        return f"https://dllint.dev/rules/{self.code}-{self.name}"

    def render_docs(self) -> str:
        lines = [f"# {self.name} ({self.code})", ""]
        lines.append(f"Default: {'on' if self.default else 'off (enable with --select ' + self.code + ')'}.  ")
        lines.append(f"Fix: {self.fix}.")
        lines.append("")
        for section in DOC_SECTIONS:
            body = self.docs.get(section)
            if body:
                lines.append(f"## {section}")
                lines.append(textwrap.dedent(body).strip("\n"))
                lines.append("")
        return "\n".join(lines).rstrip() + "\n"


def planned_fix(project: "Project", applicability: str, message: str, build, known: bool = True):
    """The ``Fix`` of a finding whose fix the facts say exists (``known``): in a run printing no
    edits (``Project.edits`` off), one without edits, nothing built (no libcst); else one with the
    edits ``build()`` gives, or None when it gives none."""
    from dllint.model import Fix

    if known and not project.edits:
        return Fix(applicability, message, ())
    edits = build()
    return Fix(applicability, message, edits) if edits else None
