"""DL301 missing-multiprocessing-context."""

from __future__ import annotations

import ast

from dllint.model import Diagnostic, Edit, Fix, Span
from dllint.rules.base import Rule
from dllint.rules.dl201_cuda_in_worker import display, worker_code


def dataset_call_key(path: str, row: int, col: int) -> str:
    """The fork_hazards key of a Dataset built by a call at a position (a library Dataset given
    CUDA tensors, DL102)."""
    return f"<dataset-call>{path}:{row}:{col}"


def insertion_point(ctx, call: ast.Call) -> tuple[int, int, bool] | None:
    """Where a new keyword argument goes: after the last argument (row, col, needs a comma first).
    None when a keyword cannot be appended (a bare generator argument)."""
    items = [*call.args, *call.keywords]
    if any(isinstance(a, ast.GeneratorExp) for a in call.args) and len(items) == 1:
        return None
    if not items:
        span = ctx.span(call)
        return span.end_row, span.end_col - 1, False
    last = max(items, key=lambda n: (n.end_lineno, n.end_col_offset))
    span = ctx.span(last)
    return span.end_row, span.end_col, True


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

    def hazards(self, project) -> dict[str, list]:
        from dllint.rules import all_rules

        merged: dict[str, list] = {}
        for rule in all_rules():
            found = rule.fork_hazards(project) or {}
            for key, items in found.items():
                merged.setdefault(key, []).extend(items)
        return merged

    def _loader_hazards(self, index, loader, hazards) -> list[tuple[str, tuple]]:
        """[(owner, (description, path, row))] for a loader, first seen first."""
        found: list[tuple[str, tuple]] = []
        seen: set = set()

        def add(owner: str, keys) -> None:
            for key in keys:
                for item in hazards.get(key, ()):
                    if tuple(item) not in seen:
                        seen.add(tuple(item))
                        found.append((owner, tuple(item)))

        for ref in loader.datasets:
            keys = [r.cls.qualname for r in index.mro(ref)]
            keys += [fn.fn.qualname for fn, _ in worker_code(index, ref).values()]
            add(f"dataset `{ref.cls.name}`", keys)
        dataset = loader.call.args.get("dataset")
        for alt in dataset.alternatives() if dataset is not None else ():
            if alt.kind == "call" and alt.ref:
                key = dataset_call_key(loader.file.path, alt.span.row, alt.span.col)
                add(f"dataset `{alt.ref.rsplit('.', 1)[-1]}(...)`", [key])
        for arg, targets in index.loader_callables(loader).items():
            for target in targets:
                keys = [fn.fn.qualname for fn, _ in index.reachable([target]).values()]
                add(f"{arg} `{target.fn.name}`", keys)
        return found

    def check(self, project):
        index = project.index
        hazards = None
        for loader in index.loaders:
            if loader.file.path not in project.targets:
                continue
            if not loader.may_start_workers or loader.context is not None or "fork" not in loader.start_methods:
                continue
            if hazards is None:
                hazards = self.hazards(project)
            found = self._loader_hazards(index, loader, hazards)
            if not found:
                continue
            here = loader.file.path
            found.sort(key=lambda f: (f[1][1] != here, f[1][1], f[1][2]))
            owner, (description, path, row) = found[0]
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            where = "fork" if loader.start_methods == {"fork"} else "fork on some targets"
            verb = "starts" if loader.workers == "yes" else "may start"
            message = (
                f"DataLoader {verb} workers with {where} (no `multiprocessing_context`) and its {owner} has a fork "
                f"hazard: {description} at {display(path)}:{row}{more}; pass `multiprocessing_context=\"spawn\"`"
            )
            yield Diagnostic(
                self.code,
                message,
                loader.file.path,
                loader.call.func_span,
                fix=self._fix(project, loader),
                severity=self.severity,
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
