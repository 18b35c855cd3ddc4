"""DL204 opencv-threads-in-fork-workers: a query on the program model's OpenCV sites
(dllint/program/hazards.py)."""

from __future__ import annotations

import ast

from dllint.facts.flow import THREADS_OFF_WORDS
from dllint.model import Diagnostic
from dllint.rules.base import Rule, planned_fix


class OpencvThreadsInForkWorkers(Rule):
    code = "DL204"
    name = "opencv-threads-in-fork-workers"
    default = False
    severity = "info"
    fix = "unsafe"
    triggers = THREADS_OFF_WORDS
    summary = "OpenCV called in forked DataLoader workers without `cv2.setNumThreads(0)` (off by default)."
    docs = {
        "What it does": """
            Reports `cv2.*` calls in DataLoader worker code (a Dataset's `__getitem__` /
            `__iter__`, `collate_fn`, `worker_init_fn` and what they call) when a loader running
            it may start its workers with fork (Linux before Python 3.14; with no loader in sight,
            the target's default) and nothing in the project calls `cv2.setNumThreads(0)` or sets
            `OMP_NUM_THREADS`. Off by default: many pipelines never hit the hang.
            """,
        "Why is this bad?": """
            OpenCV keeps a thread pool (pthreads or GNU OpenMP). After fork only the forking
            thread exists in the child, but the pool's state says its workers are there: a
            worker's first parallel OpenCV call can hang forever (the DataLoader then times out
            or waits). PyTorch's workers call `torch.set_num_threads(1)` but leave OpenCV alone.
            """,
        "Example": """
            ```python
            import cv2

            class Frames(Dataset):
                def __getitem__(self, i):
                    return cv2.resize(cv2.imread(self.paths[i]), (224, 224))
            ```
            """,
        "Use instead": """
            ```python
            import cv2
            cv2.setNumThreads(0)  # OpenCV's thread pool is not fork-safe
            ```
            or `multiprocessing_context="spawn"` on the loader, or `OMP_NUM_THREADS=1`.
            """,
        "Fix safety": """
            Inserts `cv2.setNumThreads(0)` after the module's `import cv2`: unsafe, because it also
            makes OpenCV single-threaded in the main process (slower OpenCV code outside the
            loader). `OMP_NUM_THREADS` set outside Python (a shell script) is not seen.
            """,
        "References": """
            - pytorch/pytorch#45198, #1355, #1838
            - opencv/opencv#5150
            - open-mmlab/mmfewshot#36
            """,
    }

    def extract(self, ctx):
        """Where ``cv2.setNumThreads(0)`` goes: after the module's ``import cv2`` (its span, the name)."""
        if "cv2" not in ctx.text:
            return None
        for stmt in ctx.tree.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.name == "cv2":
                        return (alias.asname or "cv2", ctx.span(stmt))
        return None

    def check(self, project):
        model = project.index
        for site in model.opencv_sites():
            fix = None
            point = project.payload(self.code, site.path)
            if point is not None:
                from dllint.fixes.cst import source_of
                from dllint.fixes.opencv import set_num_threads_after_import

                name, span = point
                # (a module-level `import cv2` always takes the line after it)
                fix = planned_fix(
                    project, "unsafe", f"Add `{name}.setNumThreads(0)` after `import cv2` (OpenCV becomes single-threaded everywhere)",
                    lambda: set_num_threads_after_import(source_of(project, site.path), span, name),
                )
            yield Diagnostic(
                self.code,
                f"{site.what} runs in forked workers with OpenCV threads on: may hang",
                site.path,
                site.span,
                fix=fix,
                severity=self.severity,
                details=(("workers", model.owners(site.uses)), ("why", "call `cv2.setNumThreads(0)` before the workers start")),
            )
