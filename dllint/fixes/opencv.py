"""DL204: ``cv2.setNumThreads(0)`` as the statement after the module's ``import cv2``."""

from __future__ import annotations

from dllint.fixes.cst import CstSource, edits_between
from dllint.model import Edit, Span

COMMENT = "# OpenCV's thread pool is not fork-safe"


def set_num_threads_after_import(src: CstSource, import_span: Span, name: str) -> tuple[Edit, ...] | None:
    """Edits adding ``{name}.setNumThreads(0)`` after the module-level statement line holding the
    ``import`` at ``import_span``."""
    import libcst as cst

    imp = src.find(cst.Import, import_span)
    if imp is None:
        return None
    body = list(src.module.body)
    for i, line in enumerate(body):
        if isinstance(line, cst.SimpleStatementLine) and any(s is imp for s in line.body):
            break
    else:
        return None  # not at module level
    body.insert(i + 1, cst.parse_statement(f"{name}.setNumThreads(0)  {COMMENT}\n"))
    return edits_between(src.text, src.module.with_changes(body=body).code)
