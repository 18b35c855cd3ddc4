"""DL301 missing-multiprocessing-context: a query on the program model's fork hazards of each loader
(dllint/program/hazards.py)."""

from __future__ import annotations


from dllint.model import Diagnostic, Fix
from dllint.names import NUM_WORKERS_POSITION
from dllint.rules.base import Rule, planned_fix
from dllint.textutil import display_path



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
            worker (an unpicklable attribute then fails, DL103), re-imports the entry script in
            each worker and starts workers more slowly. The fix adds
            `multiprocessing_context="spawn"` (`"spawn" if NW > 0 else None` when `num_workers`
            is a name or attribute that may be 0, since DataLoader rejects a context without
            workers; no fix when it is another expression that may be 0). It is offered only when
            spawn can work at all:

            - every entry script that reaches the loader has an `if __name__ == "__main__":`
              guard and starts no workers at import time (DL303): the loader's own file when it
              is a script, and the project files importing it that are scripts. A script is a file
              with a main guard, or a file no analysed file imports whose import-time code loops,
              builds a loader or calls a project function or class; a module of only definitions
              is not one, and a notebook is never re-imported;
            - the worker code is importable by name: the dataset class, `collate_fn` and
              `worker_init_fn` are not defined in a notebook, under the main guard or inside a
              function, and `collate_fn` / `worker_init_fn` is not a lambda.

            Otherwise there is no fix and the finding's details say what to change first (`before spawn`, for example
            "add an `if __name__ == "__main__":` guard to train.py"). Entry scripts that dllint
            does not analyse (no data-loading word in them, not calling a function that starts
            workers) are not seen. Like every fix, it is re-linted before it is kept: it is
            withheld if it would add a finding (DL106, DL304, ...).
            """,
        "References": """
            - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
            - https://docs.python.org/3/library/multiprocessing.html#contexts-and-start-methods
            - pytorch/pytorch#40403, #45198
            """,
    }

    def extract(self, ctx):
        """What the file runs at import time: the fix needs to know which files are scripts."""
        from dllint.fixes.spawn import import_time_work

        return import_time_work(ctx)

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
            where = "" if loader.start_methods == {"fork"} else " on some targets"
            fix, blocker = self._fix(project, loader)
            yield Diagnostic(
                self.code,
                f"{owner[:1].upper()}{owner[1:]} has a fork hazard ({site.rule}){more} and workers fork{where}",
                loader.file.path,
                loader.call.func_span,
                fix=fix,
                severity=self.severity,
                details=(
                    ("hazards", tuple(f"{s.rule} {display_path(s.path)}:{s.row} {s.what}" for _, s in found)),
                    *((("before spawn", blocker),) if blocker else ()),
                ),
            )

    def _fix(self, project, loader) -> tuple[Fix | None, str | None]:
        """(the fix, or None; what to do before spawn can work, or None)."""
        from dllint.fixes.cst import statement_source
        from dllint.fixes.keywords import add_keyword, simple_argument
        from dllint.fixes.spawn import spawn_blocker

        blocker = spawn_blocker(project.index, loader, lambda path: project.payload(self.code, path))
        if blocker is not None:
            return None, blocker
        known = loader.call.edit_facts
        editless = not project.edits and known is not None
        src = None
        if editless:
            # only whether the fix exists (the `[*]` mark, the counts): from the call's facts, as
            # ``add_keyword`` and ``simple_argument`` decide (dllint/facts/keyword_text.py), no libcst
            keywords, bare_generator, nw = known
            if "multiprocessing_context" in keywords or bare_generator:
                return None, None
        else:
            src = statement_source(project, loader.file.path, loader.call.span)
            nw = simple_argument(src, loader.call.span, "num_workers", NUM_WORKERS_POSITION) if loader.workers == "maybe" else None
        value = '"spawn"'
        if loader.workers == "maybe":  # with 0 workers a context raises ValueError (DL304): pass it only with workers
            if nw is None:
                return None, None
            value = f'"spawn" if {nw} > 0 else None'
        fix = planned_fix(
            project, "unsafe", f"Add `multiprocessing_context={value}` (the dataset, collate_fn and worker_init_fn must be picklable)",
            lambda: add_keyword(src, loader.call.span, "multiprocessing_context", value), known=editless,
        )
        return fix, None
