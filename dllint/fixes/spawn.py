"""When ``multiprocessing_context="spawn"`` can be offered for a loader (DL301's fix).

spawn starts each worker as a fresh interpreter: it re-imports the entry script as
``__mp_main__`` (its code outside ``if __name__ == "__main__":`` runs again in every worker) and
unpickles the dataset, ``collate_fn`` and ``worker_init_fn`` *by name* (module and qualified
name). So the switch is offered only when

- every entry script that reaches the loader -- the loader's own file when it is a script, and the
  project files importing it that are scripts -- has a main guard and starts no workers at import
  time; a script is a file with a main guard, or a file no analysed file imports whose
  import-time code runs the program (a loop, a loader, a call of a project function or class);
  notebooks are not re-imported;
- the worker code is importable by name: no class or function defined in a notebook, under the
  main guard, or inside a function, and no lambda as ``collate_fn`` / ``worker_init_fn``.

``spawn_blocker`` returns what to do first (a phrase for the finding's message), or None.
"""

from __future__ import annotations

import ast

from dllint.facts.context import FUNC_TYPES, is_main_guard_test, node_fields
from dllint.notebook import is_notebook
from dllint.program.refs import ClassRef, FuncRef
from dllint.textutil import display_path

GUARD = '`if __name__ == "__main__":`'


def import_time_work(ctx) -> dict | None:
    """What a file's import-time code runs (outside the main guard, defs and classes): whether it
    loops, and the qualified names it calls. Per-file facts, for ``spawn_blocker``."""
    loops = False
    calls: set[str] = set()
    stack = list(ctx.tree.body)
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind in _NOT_RUN:
            continue
        if kind is ast.If and is_main_guard_test(node.test):
            extend(node.orelse)
            continue
        if kind in _LOOPS:
            loops = True
        elif kind is ast.Call:
            name = ctx.call_name(node)
            if name:
                calls.add(name)
        # (the children, in any order: what is collected is a set)
        for field, many in node_fields(kind):
            value = getattr(node, field, None)
            if value is None:
                continue
            if many is True:
                extend([item for item in value if item is not None])
            elif many is False or isinstance(value, ast.AST):
                push(value)
            elif isinstance(value, list):
                extend([item for item in value if isinstance(item, ast.AST)])
    if not loops and not calls:
        return None
    return {"loops": loops, "calls": tuple(sorted(calls))}


# (the node types ``ast.parse`` makes are never subclassed: their exact type is tested)
_NOT_RUN = frozenset({*FUNC_TYPES, ast.ClassDef, ast.Lambda})  # bodies that do not run at import
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While})


def spawn_blocker(model, loader, work_of) -> str | None:
    """What must change before the loader can use spawn (None: nothing). ``work_of(path)`` gives
    a file's ``import_time_work`` facts."""
    with model.quietly():
        for facts in (loader.file, *model.importers(loader.file.path)):
            if is_notebook(facts.path) or not _is_script(model, facts, work_of(facts.path)):
                continue
            if facts.main_guard is None:
                return f"add an {GUARD} guard to {display_path(facts.path)} (spawn re-imports it in every worker)"
            for site in (facts.signals.get("starts") or {}).get("module", ()):
                if model.site_loaders(facts, site):
                    return f"move the code that starts workers at import time in {display_path(facts.path)} under {GUARD}"
        for ref in loader.datasets:
            why = _not_importable(ref.file, ref.cls.qualname, ref.cls.name, ref.cls.span.row, ref.cls.local)
            if why:
                return why
        for arg in ("collate_fn", "worker_init_fn"):
            value = loader.call.args.get(arg)
            if value is not None and any(alt.kind == "lambda" for alt in value.alternatives()):
                return f"replace the `{arg}` lambda with a function defined at module level (spawn pickles it by name)"
        for targets in model.loader_callables(loader).values():
            for fn in targets:
                cls = model.class_of(fn)
                if cls is not None:
                    why = _not_importable(cls.file, cls.cls.qualname, cls.cls.name, cls.cls.span.row, cls.cls.local)
                else:
                    why = _not_importable(fn.file, fn.fn.qualname, fn.fn.name, fn.fn.span.row, fn.fn.nested)
                if why:
                    return why
    return None


def _is_script(model, facts, work) -> bool:
    if facts.main_guard is not None:
        return True
    if model.importers(facts.path):
        return False  # a module of the program
    if any(call.module_level and not call.in_main_guard for call in facts.loaders):
        return True
    if not work:
        return False
    if work["loops"]:
        return True
    return any(isinstance(model.resolve(name, facts.root), (FuncRef, ClassRef)) for name in work["calls"])


def _not_importable(facts, qualname: str, name: str, row: int, local: bool) -> str | None:
    if is_notebook(facts.path):
        return f"move `{name}` from the notebook into a module and import it (spawn workers cannot import the notebook)"
    if local:
        outer = qualname.split(".<locals>.", 1)[0].rsplit(".", 1)[-1]
        return f"move `{name}` out of `{outer}()` to module level (spawn pickles it by name)"
    guard = facts.main_guard
    if guard is not None and guard.contains_row(row):
        return f"define `{name}` at the top level of {display_path(facts.path)}, not under {GUARD} (spawn workers do not run that block)"
    return None
