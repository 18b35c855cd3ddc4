"""DL106 main-module-worker-code."""

from __future__ import annotations

import ast

from dllint.facts.context import FUNC_TYPES, is_main_guard_test
from dllint.model import Diagnostic
from dllint.notebook import is_notebook
from dllint.rules.base import Rule

PICKLING_METHODS = frozenset({"spawn", "forkserver"})
CALLABLE_ARGS = ("collate_fn", "worker_init_fn")


def _guarded_definitions(ctx) -> list[str]:
    """Qualified names of the classes and functions defined inside a module-level
    ``if __name__ == "__main__":`` block (not inside a def or class there)."""
    out: list[str] = []
    for stmt in ctx.tree.body:
        if not (isinstance(stmt, ast.If) and is_main_guard_test(stmt.test)):
            continue
        stack = list(stmt.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (*FUNC_TYPES, ast.ClassDef)):
                out.append(f"{ctx.module}.{node.name}")
                continue
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                stack.extend(getattr(node, field, None) or [])
    return out


class MainModuleWorkerCode(Rule):
    code = "DL106"
    name = "main-module-worker-code"
    severity = "error"
    summary = (
        "A Dataset, collate_fn or worker_init_fn defined in a notebook or inside `if __name__ == \"__main__\":` "
        "cannot be unpickled by spawn/forkserver workers (\"Can't get attribute 'X' on <module '__main__'>\")."
    )
    docs = {
        "What it does": """
            Flags a `DataLoader` that starts workers (a literal `num_workers > 0`) with the `spawn` or
            `forkserver` start method (explicit `multiprocessing_context`, `set_start_method`, or the
            target's default: Python >= 3.14 on Linux, macOS, Windows) whose dataset class,
            `collate_fn` or `worker_init_fn` is defined where a worker cannot import it:

            - in a Jupyter notebook (`.ipynb`): the kernel's `__main__` has no file, so a worker
              cannot re-import it;
            - in a script, inside the `if __name__ == "__main__":` block: a worker re-imports the
              script as `__mp_main__`, where that block does not run.

            A class or function defined at the top level of a script is *not* flagged: the worker
            re-imports the script by its path and finds it (measured). Stays silent when every start
            method the loader can get is `fork` (the worker inherits the parent's memory and
            unpickles nothing), when the number of workers is 0 or not a literal, and for classes and
            functions defined inside a function (DL103 covers those).
            """,
        "Why is this bad?": """
            With `spawn` and `forkserver` the dataset, `collate_fn` and `worker_init_fn` are pickled
            *by reference* (module and name) and looked up again in every worker. For an object of
            `__main__` that lookup fails when the worker's `__main__` does not define it, and every
            worker dies with `AttributeError: Can't get attribute 'MyDataset' on <module '__main__'
            (built-in)>` (notebook, `python -c`) or `... on <module '__mp_main__' from 'train.py'>`
            (defined under the main guard), surfaced as "DataLoader worker (pid(s) N) exited
            unexpectedly". The same code works under `fork`, so it breaks when moving to macOS,
            Windows or Python 3.14 (whose Linux default is `forkserver`).
            """,
        "Example": """
            ```python
            # notebook.ipynb, cell 1
            class Frames(Dataset):
                def __len__(self): return 100
                def __getitem__(self, i): return i

            # cell 2
            loader = DataLoader(Frames(), num_workers=4, multiprocessing_context="spawn")
            ```
            """,
        "Use instead": """
            Move the class or function into a module (`frames.py`) and import it
            (`from frames import Frames`); in a script, define it at the top level rather than under
            the main guard.
            """,
        "Fix safety": "No fix: moving code between files is a change for the author to make.",
        "References": """
            - https://pytorch.org/docs/stable/data.html#platform-specific-behaviors
            - https://docs.python.org/3/library/multiprocessing.html#the-spawn-and-forkserver-start-methods
            - Python 3.14 makes `forkserver` the Linux default (CPython gh-84559)
            - measured (torch 2.13, Python 3.11): tests/test_notebook.py runs both failures and both working layouts
            """,
    }

    def extract(self, ctx):
        guarded = _guarded_definitions(ctx)
        return tuple(guarded) or None

    def check(self, project):
        index = project.index
        for loader in index.loaders:
            if loader.workers != "yes":
                continue
            methods = sorted(loader.start_methods & PICKLING_METHODS)
            if not methods:
                continue
            facts = loader.file
            guarded = set(project.payload(self.code, facts.path) or ())
            notebook = is_notebook(facts.path)
            found: dict[str, str] = {}  # qualname -> what it is
            for ref in loader.datasets:
                if ref.file.path == facts.path and not ref.cls.local:
                    found.setdefault(ref.cls.qualname, "the dataset class")
            for arg in CALLABLE_ARGS:
                value = loader.call.args.get(arg)
                if value is None:
                    continue
                for alt in value.alternatives():
                    if alt.kind not in ("ref", "partial", "call"):
                        continue  # a lambda cannot be pickled at all (DL103)
                    for fn in index.callable_targets(alt, facts):
                        if fn.file.path != facts.path or fn.fn.nested:
                            continue
                        found.setdefault(fn.fn.cls or fn.fn.qualname, f"the `{arg}`")
            for qualname, role in found.items():
                if not notebook and qualname not in guarded:
                    continue
                name = qualname.rsplit(".", 1)[-1]
                how = " or ".join(methods)
                if notebook:
                    where = "is defined in the notebook"
                    error = f"AttributeError: Can't get attribute '{name}' on <module '__main__'>"
                    advice = "move it into a .py module and import it"
                else:
                    where = "is defined under the main guard"
                    error = f"AttributeError: Can't get attribute '{name}' on <module '__mp_main__'>"
                    advice = "define it at the top level of the script or in a module"
                yield Diagnostic(
                    self.code,
                    f"`{name}` ({role.removeprefix('the ')}) {where}: {how} workers cannot load it",
                    facts.path,
                    loader.call.func_span,
                    severity=self.severity,
                    details=(("error", error), ("why", f"workers started with {how} unpickle it by name: {advice}")),
                )
