"""DL301 missing-multiprocessing-context: a query on the program model's fork hazards of each loader
(dllint/program/hazards.py)."""

from __future__ import annotations

import ast
import os

from dllint.facts.edits import insertion_point
from dllint.model import Diagnostic, Edit, Fix, Span
from dllint.rules.base import Rule


def display(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


class MissingMultiprocessingContext(Rule):
    code = "DL301"
    name = "missing-multiprocessing-context"
    severity = "error"
    fix = "unsafe"
    summary = "A loader whose dataset / collate_fn / worker_init_fn has a fork hazard starts its workers with fork."
    docs = {
        "What it does": """
            Reports a `DataLoader(...)` call when all of these hold: it may start workers
            (`num_workers` > 0 or an expression); its dataset (resolved across files through the
            project's classes), `collate_fn` or `worker_init_fn` carries a fork hazard found by
            another rule (DL201 CUDA in worker code, DL102 CUDA state on the Dataset, DL104 a
            handle opened in `__init__`, DL204 OpenCV threads); it passes no
            `multiprocessing_context`; no `set_start_method("spawn" | "forkserver")` applies to it;
            and the start methods in force include fork (Linux before Python 3.14, unless
            configured otherwise). The message names the hazard and where it is. When the hazard
            cannot be traced to a loader, the hazard's own rule still reports and this one stays
            silent.
            """,
        "Why is this bad?": """
            fork is the Linux default up to Python 3.13 and is fast, but the child inherits the
            parent's CUDA state, OpenCV thread pool and open file handles: the worker crashes
            ("Cannot re-initialize CUDA in forked subprocess"), hangs, or reads garbage. One
            argument cures it: `multiprocessing_context="spawn"` (or "forkserver").
            """,
        "Example": """
            ```python
            class Frames(Dataset):
                def __getitem__(self, i):
                    return self.frames[i].cuda()

            loader = DataLoader(Frames(), num_workers=4)
            ```
            """,
        "Use instead": """
            ```python
            loader = DataLoader(Frames(), num_workers=4, multiprocessing_context="spawn")
            ```
            (better still, remove the hazard: return CPU tensors, open handles lazily per worker)
            """,
        "Fix safety": """
            Unsafe: spawn pickles the dataset, `collate_fn` and `worker_init_fn` into every
            worker (an unpicklable attribute then fails, DL103), re-imports the main module in
            each worker (a script needs an `if __name__ == "__main__":` guard, DL303) and starts
            workers more slowly.
            """,
        "References": """
            - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
            - https://docs.python.org/3/library/multiprocessing.html#contexts-and-start-methods
            - pytorch/pytorch#40403, #45198
            """,
    }

    def extract(self, ctx):
        out = {}
        for node in ctx.nodes(ast.Call):
            if not (node.args or node.keywords):
                continue
            callee = ctx.call_name(node)
            if callee is None or not callee.rsplit(".", 1)[-1][:1].isupper():
                continue  # loaders are classes
            point = insertion_point(ctx, node)
            if point is not None:
                span = ctx.span(node)
                out[(span.row, span.col)] = point
        return out or None

    def check(self, project):
        model = project.index
        for loader in model.loaders:
            if loader.file.path not in project.targets:
                continue
            if not loader.may_start_workers or loader.context is not None or "fork" not in loader.start_methods:
                continue
            found = model.fork_hazards(loader)
            if not found:
                continue
            owner, site = found[0]
            more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
            where = "fork" if loader.start_methods == {"fork"} else "fork on some targets"
            yield Diagnostic(
                self.code,
                f"Loader starts workers with {where}, but its {owner} has a fork hazard "
                f"({site.rule} at {display(site.path)}:{site.row}){more}",
                loader.file.path,
                loader.call.func_span,
                fix=self._fix(project, loader),
                severity=self.severity,
                details=(("hazards", tuple(f"{s.rule} {display(s.path)}:{s.row} {s.what}" for _, s in found)),),
            )

    def _fix(self, project, loader) -> Fix | None:
        payload = project.payload(self.code, loader.file.path) or {}
        point = payload.get((loader.call.span.row, loader.call.span.col))
        if point is None:
            return None
        row, col, comma = point
        content = (', multiprocessing_context="spawn"' if comma else 'multiprocessing_context="spawn"')
        return Fix(
            "unsafe",
            'Add `multiprocessing_context="spawn"` (the dataset must be picklable and the entry script needs a main guard)',
            (Edit(content, Span(row, col, row, col)),),
        )
