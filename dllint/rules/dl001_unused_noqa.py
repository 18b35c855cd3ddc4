"""DL001 unused-noqa: a ``# noqa: DLxxx`` whose codes suppress nothing."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

from dllint.facts.extract import _CODE, _NOQA
from dllint.model import Diagnostic, Edit, Fix, Span, pickled_by_fields
from dllint.rules.base import Rule
from dllint.textutil import split_lines


_MAYBE_DL_NOQA = re.compile(r"noqa\s*:[^\n\r]*?DL[0-9]", re.IGNORECASE)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class NoqaComment:
    """A ``# noqa: ...`` directive found in a real comment token (never inside a string)."""

    row: int
    col: int  # 0-based character column of the comment's ``#``
    comment: str  # the comment token, ``#`` to the end of the line
    code_end: int  # 0-based column just after the code before the comment (0 for an own-line comment)
    own_line: bool
    start: int  # the directive inside ``comment``: [start, end); codes at [codes_start, codes_end)
    end: int
    codes_start: int
    codes_end: int
    codes: tuple[str, ...]  # upper-case, in written order


def noqa_comments(text: str) -> list[NoqaComment]:
    """Every noqa directive with codes that sits in a comment token of ``text``."""
    out: list[NoqaComment] = []
    # tokenizing costs about a quarter of a parse: only when needed (and the case-blind search
    # only where the lower-cased text holds the word: it tries every position)
    if "noqa" not in text.lower() or not _MAYBE_DL_NOQA.search(text):
        return out
    lines = split_lines(text)
    try:  # universal newlines: rows as the engine's noqa map counts them (\r, \r\n, \n)
        tokens = list(tokenize.generate_tokens(io.StringIO(text, newline=None).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return out
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        m = _NOQA.search(tok.string)
        if not m or not m.group("codes"):
            continue
        row, col = tok.start
        line = lines[row - 1] if row - 1 < len(lines) else ""
        before = line[:col]
        out.append(
            NoqaComment(
                row=row,
                col=col,
                comment=tok.string,
                code_end=len(before.rstrip()),
                own_line=not before.strip(),
                start=m.start(),
                end=m.end(),
                codes_start=m.start("codes"),
                codes_end=m.end("codes"),
                codes=tuple(c.upper() for c in _CODE.findall(m.group("codes"))),
            )
        )
    return out


def removal_edit(c: NoqaComment, keep: list[str]) -> Edit:
    """The edit that drops the unused codes of ``c`` (the whole directive when ``keep`` is empty)."""
    base = c.col + 1  # 1-based column of the comment's first character
    if keep:
        return Edit(", ".join(keep), Span(c.row, base + c.codes_start, c.row, base + c.codes_end))
    rest = c.comment[c.end:]
    before = c.comment[: c.start]
    if before.strip() and before.strip() != "#":
        # ``# other text  # noqa: DL101 ...``: drop the directive and the blanks before it
        cut = len(before.rstrip())
        return Edit("", Span(c.row, base + cut, c.row, base + c.end))
    tail = rest.lstrip()
    if not tail:
        if c.own_line:  # the line held only this comment: remove the line
            return Edit("", Span(c.row, 1, c.row + 1, 1))
        return Edit("", Span(c.row, c.code_end + 1, c.row, base + len(c.comment)))
    if tail.startswith("#"):  # ``# noqa: DL101  # reason``: keep ``# reason``
        return Edit("", Span(c.row, base, c.row, base + len(c.comment) - len(tail)))
    # ``# noqa: DL101 reason``: keep ``# reason`` as a comment
    return Edit("# ", Span(c.row, base, c.row, base + len(c.comment) - len(tail)))


class UnusedNoqa(Rule):
    code = "DL001"
    name = "unused-noqa"
    severity = "warning"
    fix = "safe"
    # A file with nothing else worth parsing can still carry a stale directive.
    comment_triggers = (b"noqa: DL", b"noqa:DL", b"NOQA: DL", b"NOQA:DL")
    summary = "A `# noqa: DLxxx` directive that suppresses nothing; `--fix` removes the unused codes."
    docs = {
        "What it does": """
            Reports the `DLxxx` codes of a `# noqa: ...` comment that suppressed no finding in this
            run, like ruff's RUF100. Only codes of rules that ran are judged: a `# noqa: DL204`
            while DL204 is not selected, a code turned off for the file by `per-file-ignores` or a
            file-level `# dllint: noqa`, and an unknown `DL` code are left alone. Codes of other
            tools (`E501`, `F401`, ...) and a bare `# noqa` (which other linters read too) are
            never reported. Files that cannot be parsed are not judged.
            """,
        "Why is this bad?": """
            A suppression outlives the code it was written for. Once the finding is gone, the stale
            `# noqa` hides the next real finding on that line, and readers assume a problem that no
            longer exists.
            """,
        "Example": """
            ```python
            mp.set_sharing_strategy("file_descriptor")  # noqa: DL302
            ```
            """,
        "Use instead": """
            ```python
            mp.set_sharing_strategy("file_descriptor")
            ```
            """,
        "Fix safety": """
            Safe: only comment text changes. The unused codes are removed from the list; when none
            is left the directive goes (and the whole line when it held nothing else); other
            comments on the line are kept.
            """,
        "References": """
            - https://docs.astral.sh/ruff/rules/unused-noqa/
            """,
    }

    def extract(self, ctx):
        return noqa_comments(ctx.text) or None

    def check_noqa(self, project, used, enabled, ignored):
        """Called by the engine after suppression, with ``used`` = {(path, row, code)} that matched."""
        for facts, comments in project.payloads(self.code):
            if facts.path not in project.targets or facts.error is not None or facts.file_noqa is None:
                continue
            for c in comments:
                if facts.noqa.get(c.row) != frozenset(c.codes):
                    continue  # the engine read another directive on this row (e.g. inside a string)
                unused: list[str] = []
                for code in c.codes:
                    if (
                        code.startswith("DL")
                        and code != self.code
                        and code in enabled
                        and code not in facts.file_noqa
                        and not ignored(facts.path, code)
                        and (facts.path, c.row, code) not in used
                        and code not in unused
                    ):
                        unused.append(code)
                if not unused:
                    continue
                keep: list[str] = []
                for code in c.codes:
                    if code not in unused and code not in keep:
                        keep.append(code)
                listed = ", ".join(f"`{code}`" for code in unused)
                span = Span(c.row, c.col + c.start + 1, c.row, c.col + c.end + 1)
                message = "Remove unused `noqa` directive" if not keep else f"Remove unused code{'s' if len(unused) > 1 else ''} {listed}"
                yield Diagnostic(
                    self.code,
                    f"Unused `noqa` directive (unused: {listed})",
                    facts.path,
                    span,
                    fix=Fix("safe", message, (removal_edit(c, keep),)),
                    severity=self.severity,
                )
