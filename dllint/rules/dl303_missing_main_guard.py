"""DL303 missing-main-guard.

Under spawn and forkserver every worker re-imports the main module (as ``__mp_main__``). Code that
starts DataLoader workers at module level -- outside ``if __name__ == "__main__":`` -- then runs
again inside each worker while it is still bootstrapping, and multiprocessing raises
``RuntimeError: An attempt has been made to start a new process before the current process has
finished its bootstrapping phase``.

``extract`` records, per file: the module-level places that start iterating something (``for``,
comprehensions, ``iter()``/``next()``/``list()``), the module-level calls of functions, and for
every function which names it iterates and which of its parameters it iterates. ``check`` joins
them with the project's loaders (workers > 0) and follows calls across files.
"""

from __future__ import annotations

import ast

from dllint.facts.context import FUNC_TYPES, is_main_guard_test
from dllint.program.model import FuncRef
from dllint.model import Diagnostic
from dllint.rules.base import Rule
from dllint.rules.dl305_loader_tensors_retained import effective_workers, loaders_for, loop_source, unwrap_iter

CONSUMERS = frozenset({"builtins.iter", "builtins.next", "builtins.list", "builtins.tuple", "builtins.enumerate", "builtins.zip", "builtins.sorted"})
CONSUMER_NAMES = frozenset(c.rsplit(".", 1)[1] for c in CONSUMERS)
MAX_CALL_DEPTH = 5
TRAINERS = frozenset({"lightning.Trainer", "lightning.pytorch.Trainer", "pytorch_lightning.Trainer"})
FIT_METHODS = frozenset({"fit", "validate", "test", "predict"})
LIGHTNING_HOOKS = ("train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader")

SPAWN_LIKE = ("spawn", "forkserver")
WHY = {
    "spawn": "spawn (the default on macOS and Windows)",
    "forkserver": "forkserver (the default on Linux from Python 3.14)",
}
BOOTSTRAP = (
    "RuntimeError: An attempt has been made to start a new process before the current process has "
    "finished its bootstrapping phase"
)


def _module_statements(tree: ast.Module):
    """Statements that run at import time, outside the main guard, defs and classes."""
    stack = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (*FUNC_TYPES, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.If) and is_main_guard_test(stmt.test):
            stack.extend(reversed(stmt.orelse))
            continue
        yield stmt
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                stack.extend(reversed(block))


def _own_nodes(stmt: ast.AST):
    """The expressions of a statement itself (not of nested statements, defs or lambdas)."""
    stack = []
    for name, value in ast.iter_fields(stmt):
        if name in ("body", "orelse", "finalbody", "handlers"):
            continue
        if isinstance(value, ast.AST):
            stack.append(value)
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, ast.AST))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.Lambda, *FUNC_TYPES, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _iterations(ctx, nodes):
    """(iterated expression, span) for each place in ``nodes`` that iterates something."""
    for node in nodes:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            src, _ = unwrap_iter(ctx, node.iter, node.target)
            yield src, ctx.span(node.iter)
        elif isinstance(node, ast.comprehension):
            src, _ = unwrap_iter(ctx, node.iter, node.target)
            yield src, ctx.span(node.iter)
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.func, ast.Name)
            and node.func.id in CONSUMER_NAMES
            and ctx.call_name(node) in CONSUMERS
        ):
            src, _ = unwrap_iter(ctx, node.args[0], None)
            yield src, ctx.span(node)


def _call_args(ctx, call: ast.Call) -> list:
    """Arguments of a call that name a local or global: (position or keyword, loop source)."""
    out = []
    pairs = [(i, a) for i, a in enumerate(call.args)] + [(k.arg, k.value) for k in call.keywords if k.arg]
    for key, arg in pairs:
        if isinstance(arg, ast.Starred):
            break
        if isinstance(arg, (ast.Name, ast.Attribute)) and _built_by_call(ctx, arg):
            source = loop_source(ctx, arg)
            if source is not None:
                out.append((key, source))
    return out


def _built_by_call(ctx, arg) -> bool:
    """A name assigned from a call (a loader is built by one); ``self.x`` always qualifies."""
    if isinstance(arg, ast.Attribute):
        return isinstance(arg.value, ast.Name)
    binding = ctx.lookup(arg.id, ctx.scope_of(arg))
    return binding is not None and binding.kind == "local" and any(isinstance(v, ast.Call) for v in binding.values)


def _calls_with_args(ctx, nodes) -> list:
    out = []
    for node in nodes:
        if isinstance(node, ast.Call) and any(
            isinstance(a, (ast.Name, ast.Attribute)) for a in (*node.args, *(k.value for k in node.keywords))
        ):
            args = _call_args(ctx, node)
            if not args:
                continue
            callee = ctx.call_name(node)
            if callee and not callee.startswith("builtins."):
                out.append((callee, args))
    return out


def _trainer_call(ctx, call: ast.Call) -> dict | None:
    """``trainer.fit(model, loader)`` where ``trainer = lightning.Trainer(...)``: what it is given
    (loaders by name, and the classes of objects built at module level, whose *_dataloader()
    methods Lightning calls)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in FIT_METHODS and isinstance(func.value, ast.Name)):
        return None
    binding = ctx.lookup(func.value.id, ctx.scope_of(func.value))
    if binding is None or binding.kind != "local" or len(binding.values) != 1:
        return None
    made = binding.values[0]
    if not (isinstance(made, ast.Call) and ctx.call_name(made) in TRAINERS):
        return None
    sources, classes = [], []
    for arg in (*call.args, *(k.value for k in call.keywords)):
        if isinstance(arg, ast.Name):
            source = loop_source(ctx, arg)
            if source is not None:
                sources.append(source)
            value = ctx.value(arg)
            for alt in value.alternatives():
                if alt.kind == "call" and alt.ref:
                    classes.append(alt.ref)
    return {"kind": "trainer", "sources": sources, "classes": classes, "span": ctx.span(call), "text": ctx.segment(func, 60)}


def extract_starts(ctx) -> dict:
    module_sites = []  # what module-level code iterates or calls, in source order
    for stmt in _module_statements(ctx.tree):
        nodes = [stmt, *_own_nodes(stmt)] if isinstance(stmt, (ast.For, ast.AsyncFor)) else list(_own_nodes(stmt))
        for src, span in _iterations(ctx, nodes):
            if isinstance(src, ast.Call):
                module_sites.append({"kind": "direct", "call": (ctx.span(src).row, ctx.span(src).col), "span": span, "text": ctx.segment(src, 60)})
            else:
                source = loop_source(ctx, src)
                if source is not None:
                    module_sites.append({"kind": "iter", "source": source, "span": span, "text": ctx.segment(src, 60)})
        for node in nodes:
            if isinstance(node, ast.Call):
                trainer = _trainer_call(ctx, node)
                if trainer is not None:
                    module_sites.append(trainer)
                    continue
                callee = ctx.call_name(node)
                if callee and not callee.startswith("builtins."):
                    module_sites.append(
                        {"kind": "call", "callee": callee, "span": ctx.span(node), "text": ctx.segment(node.func, 60), "args": _call_args(ctx, node)}
                    )
    functions: dict[str, dict] = {}
    for fn in ctx.functions:
        iters, params = [], []
        param_names = [a.arg for a in (*fn.node.args.posonlyargs, *fn.node.args.args, *fn.node.args.kwonlyargs)]
        body = [n for n in ctx.walk_function(fn.node) if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension, ast.Call))]
        for node in body:
            for src, _ in _iterations(ctx, [node]):
                if isinstance(src, ast.Call):
                    iters.append(("direct", (ctx.span(src).row, ctx.span(src).col)))
                elif isinstance(src, ast.Name) and src.id in param_names:
                    binding = ctx.lookup(src.id, ctx.scope_of(src))
                    if binding is not None and binding.kind == "param":
                        params.append(src.id)
                        continue
                source = loop_source(ctx, src) if not isinstance(src, ast.Call) else None
                if source is not None:
                    iters.append(("source", source))
        passes = _calls_with_args(ctx, body)
        if iters or params or passes:
            functions[fn.qualname] = {"iters": iters, "params": params, "param_names": param_names, "passes": passes}
    if not module_sites and not functions:
        return None
    return {"module": module_sites, "functions": functions}


class MissingMainGuard(Rule):
    code = "DL303"
    name = "missing-main-guard"
    severity = "error"
    fix = "none"
    triggers = ()
    summary = "Workers started at module level without `if __name__ == \"__main__\":`: spawn/forkserver workers re-run it and crash."
    docs = {
        "What it does": """
            Flags module-level code (outside `if __name__ == "__main__":`, functions and classes)
            that starts DataLoader workers: iterating a loader with `num_workers` > 0 (`for`,
            a comprehension, `iter()`/`next()`/`list()`), or calling a project function -- in
            this file or another -- that does (also through the functions it calls, or by
            iterating the loader passed to it), or Lightning's `trainer.fit(...)` /
            `validate` / `test` / `predict` given such a loader or a model whose
            `*_dataloader()` hook builds one. One finding per file, at the first place.
            In a script, `num_workers=args.workers` counts with the `argparse` default.

            Error when the loader can start with spawn or forkserver (an explicit
            `multiprocessing_context`, `set_start_method`, or the target's default: every Linux
            target from Python 3.14, macOS, Windows); info when only fork applies (it works
            today and breaks on those targets). Silent for loaders proven to run without
            workers, undecidable worker counts, and notebooks (no module to re-import).
            """,
        "Why is this bad?": """
            Under spawn and forkserver each worker re-imports the main module as `__mp_main__`.
            Module-level code that starts workers runs again inside every worker, before it has
            finished bootstrapping, and fails with `RuntimeError: An attempt has been made to
            start a new process before the current process has finished its bootstrapping
            phase. ... you have forgotten to use the proper idiom in the main module` (the
            main process then reports `DataLoader worker (pid(s) N) exited unexpectedly`). Even
            with the guard, the rest of the module-level code runs once per worker (and per
            epoch without persistent workers): keep heavy work there to a minimum.
            Python 3.14 made forkserver the Linux default, so scripts that worked under fork
            break on upgrade.
            """,
        "Example": """
            ```python
            loader = DataLoader(ds, batch_size=32, num_workers=4)
            for batch in loader:
                train_step(batch)
            ```
            """,
        "Use instead": """
            ```python
            def main():
                loader = DataLoader(ds, batch_size=32, num_workers=4)
                for batch in loader:
                    train_step(batch)

            if __name__ == "__main__":
                main()
            ```
            """,
        "Fix safety": """
            No automatic fix (suggestion only): moving module-level code into a function or
            under the guard changes which names are global (functions that read them, pickled
            references to module-level objects), so it needs a person.
            """,
        "References": """
            - https://pytorch.org/docs/stable/data.html#platform-specific-behaviors
            - https://pytorch.org/docs/stable/notes/windows.html#multiprocessing-error-without-if-clause-protection
            - https://docs.python.org/3/library/multiprocessing.html#the-spawn-and-forkserver-start-methods ("Safe importing of main module")
            """,
    }

    def extract(self, ctx):
        if ctx.path.endswith(".ipynb"):
            return None
        return extract_starts(ctx)

    # ------------------------------------------------------------------ join

    def check(self, project):
        index = project.index
        self._memo: dict = {}
        self._project = project
        for facts, payload in project.payloads(self.code):
            if facts.path.endswith(".ipynb"):
                continue
            hits = []
            for site in payload["module"]:
                loaders = self._site_loaders(index, project, facts, site)
                if loaders:
                    hits.append((site, loaders))
            if not hits:
                continue
            hits.sort(key=lambda h: (h[0]["span"].row, h[0]["span"].col))
            site, loaders = hits[0]
            more = len({h[0]["span"].row for h in hits} - {site["span"].row})
            yield self._diagnostic(facts, site, loaders, more)

    def _site_loaders(self, index, project, facts, site) -> list:
        if site["kind"] == "direct":
            return [ld for ld in self._file_loaders(index, facts) if (ld.call.span.row, ld.call.span.col) == tuple(site["call"]) and self._yes(ld)]
        if site["kind"] == "iter":
            return self._source_loaders(index, facts, tuple(site["source"]))
        if site["kind"] == "trainer":
            return self._trainer_loaders(index, facts, site)
        found = index.resolve(site["callee"], facts.root)
        if not isinstance(found, FuncRef):
            return []
        out = list(self._function_loaders(index, project, found, 0, frozenset()))
        out.extend(self._passed_loaders(index, project, facts, found, site["args"]))
        return out

    def _trainer_loaders(self, index, facts, site) -> list:
        out = []
        for source in site["sources"]:
            out.extend(self._source_loaders(index, facts, tuple(source)))
        for qualname in site["classes"]:
            ref = index.resolve_class(qualname, facts.root)
            if ref is None:
                continue
            for hook in LIGHTNING_HOOKS:
                method = index.find_method(ref, hook)
                if method is None:
                    continue
                loaders = [ld for ld in self._file_loaders(index, method.file) if ld.call.scope == method.fn.qualname]
                out.extend(ld for ld in loaders if self._yes(ld))
        return out

    def _passed_loaders(self, index, project, facts, callee: FuncRef, args) -> list:
        """Loaders passed as arguments to a function that iterates that parameter."""
        entry = self._fn_entry(project, callee)
        if not entry or not entry["params"]:
            return []
        names = entry["param_names"]
        if callee.fn.cls is not None and names and names[0] in ("self", "cls"):
            names = names[1:]  # called as a bound method
        out = []
        for pos, source in args:
            param = names[pos] if isinstance(pos, int) and pos < len(names) else pos
            if param in entry["params"]:
                out.extend(self._source_loaders(index, facts, tuple(source)))
        return out

    def _file_loaders(self, index, facts):
        return list(index.loaders_in(facts.path))

    def _source_loaders(self, index, facts, source) -> list:
        loaders = loaders_for(index, facts, source)
        if not loaders and source[0] == "name" and source[1] == facts.module:
            loaders = self._returned_loaders(index, facts, source[2])
        if not loaders or not all(self._yes(ld) for ld in loaders):
            return []
        return loaders

    def _yes(self, loader) -> bool:
        return effective_workers(self._project, loader)[0] == "yes"

    def _returned_loaders(self, index, facts, name) -> list:
        """``loader = make_loader()`` at module level: the loaders make_loader returns."""
        value = facts.constants.get(name)
        if value is None or value.kind != "call" or not value.ref:
            return []
        found = index.resolve(value.ref, facts.root)
        if not isinstance(found, FuncRef):
            return []
        out = []
        for ret in found.fn.returns:
            for alt in ret.alternatives():
                if alt.kind != "call":
                    continue
                out.extend(
                    ld for ld in index.loaders_in(found.file.path) if ld.call.span == alt.span
                )
        return out

    @staticmethod
    def _fn_entry(project, fn: FuncRef):
        facts = project.files.get(fn.file.path)
        payload = facts.payloads.get("DL303") if facts is not None else None
        return payload["functions"].get(fn.fn.qualname) if payload else None

    def wants(self, index) -> set[str]:
        """Names of functions that start workers: files that call them (entry scripts) matter."""
        self._memo = {}
        self._project = index  # has .files, all effective_workers needs
        names: set[str] = set()
        for facts in list(index.files.values()):
            payload = facts.payloads.get(self.code)
            if not payload:
                continue
            for qualname in payload["functions"]:
                fn = facts.functions.get(qualname)
                if fn is None or fn.nested:
                    continue
                if self._function_loaders(index, index, FuncRef(facts, fn), 0, frozenset()):
                    names.add(fn.name)
        return names

    def _function_loaders(self, index, project, fn: FuncRef, depth: int, seen: frozenset):
        """Loaders with workers that ``fn`` (or what it calls) iterates."""
        key = fn.key
        if key in self._memo:
            return self._memo[key]
        if key in seen or depth > MAX_CALL_DEPTH:
            return []
        seen = seen | {key}
        out = []
        entry = self._fn_entry(project, fn)
        if entry:
            for kind, value in entry["iters"]:
                if kind == "direct":
                    out.extend(ld for ld in self._file_loaders(index, fn.file) if (ld.call.span.row, ld.call.span.col) == tuple(value) and self._yes(ld))
                else:
                    out.extend(self._source_loaders(index, fn.file, tuple(value)))
        for call in fn.fn.calls:
            if call.kind != "ref":
                continue
            target = index.resolve(call.target, fn.file.root)
            if isinstance(target, FuncRef):
                out.extend(self._function_loaders(index, project, target, depth + 1, seen))
        for callee, args in (entry or {}).get("passes", ()):
            target = index.resolve(callee, fn.file.root)
            if isinstance(target, FuncRef):
                out.extend(self._passed_loaders(index, project, fn.file, target, args))
        self._memo[key] = out
        return out

    def _diagnostic(self, facts, site, loaders, more: int) -> Diagnostic:
        methods = set()
        for ld in loaders:
            methods |= set(ld.start_methods)
        spawnish = [m for m in SPAWN_LIKE if m in methods]
        loader = loaders[0]
        nw_text = effective_workers(self._project, loader)[1]
        where = "" if loader.file.path == facts.path else f" (in {loader.file.module})"
        if site["kind"] in ("call", "trainer"):
            what = f"`{site['text']}()` starts DataLoader workers{where} ({nw_text})"
        else:
            what = f"Iterating `{site['text']}` starts DataLoader workers ({nw_text})"
        tail = f" ({more} more such place{'s' if more > 1 else ''} below)" if more else ""
        if spawnish:
            how = " or ".join(WHY[m] if loader.context is None else f"multiprocessing_context={m!r}" for m in spawnish)
            message = (
                f"{what} at import time, outside `if __name__ == \"__main__\":`: under {how} every worker "
                f"re-imports this module and fails with {BOOTSTRAP}; move it under the guard{tail}"
            )
            severity = "error"
        else:
            now = "fine under fork, but" if methods == {"fork"} else "the start method is not known here;"
            message = (
                f"{what} at import time, outside `if __name__ == \"__main__\":`: {now} under "
                f"spawn/forkserver (macOS, Windows, Linux from Python 3.14) every worker re-imports this module "
                f"and fails with {BOOTSTRAP}; move it under the guard{tail}"
            )
            severity = "info"
        return Diagnostic(self.code, message, facts.path, site["span"], severity=severity)
