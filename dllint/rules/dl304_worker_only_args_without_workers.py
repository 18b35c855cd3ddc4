"""DL304 worker-only-args-without-workers.

``DataLoader.__init__`` (torch 2.x) raises ValueError when an option that only means something
with worker processes is given while ``num_workers == 0``:

- ``prefetch_factor`` not None: "prefetch_factor option could only be specified in multiprocessing..."
- ``persistent_workers`` truthy: "persistent_workers option needs num_workers > 0"
- ``multiprocessing_context`` not None: "multiprocessing_context can only be used with multi-process
  loading (num_workers > 0), but got num_workers=0"

Facts come from the core ``LoaderCall`` (values, positional mapping, ``**kwargs``); this rule's
``extract`` adds the keywords' positions and texts, the source of the num_workers expression,
whether the call sits under a test that mentions num_workers, and whether the code around it
expects the ValueError (``pytest.raises``, ``assertRaises``, a ``try`` that catches it). The fix
edits are built lazily with libcst (dllint/fixes/keywords.py).
"""

from __future__ import annotations

import ast

from dllint.facts import loader_options
from dllint.facts.loader_options import OptionSources
from dllint.facts.loops import call_key
from dllint.model import Diagnostic, Fix
from dllint.names import GET_CONTEXT, NUM_WORKERS_POSITION, canonical
from dllint.rules.base import Rule, planned_fix
from dllint.textutil import clip

WORKER_ONLY = ("prefetch_factor", "persistent_workers", "multiprocessing_context")
CPU_COUNT = frozenset(
    {"os.cpu_count", "multiprocessing.cpu_count", "torch.multiprocessing.cpu_count", "psutil.cpu_count"}
)

ERRORS = {
    "prefetch_factor": "ValueError: prefetch_factor option could only be specified in multiprocessing",
    "persistent_workers": "ValueError: persistent_workers option needs num_workers > 0",
    "multiprocessing_context": "ValueError: multiprocessing_context can only be used with multi-process loading",
}


RAISES = frozenset({"pytest.raises", "_pytest.python_api.raises"})
ASSERT_RAISES = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "failUnlessRaises"})
CATCHES = frozenset({"ValueError", "Exception", "BaseException", "builtins.ValueError", "builtins.Exception", "builtins.BaseException"})


def _expects_raise(ctx, node) -> bool:
    """``pytest.raises(...)`` / ``self.assertRaises(...)`` (and the Regex forms)."""
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr in ASSERT_RAISES:
        return True
    return ctx.call_name(node) in RAISES


def _catches(ctx, handler: ast.ExceptHandler) -> bool:
    """The handler catches a ValueError (bare, ValueError, Exception, BaseException, a tuple)."""
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(ctx.qualname(t) in CATCHES or (isinstance(t, ast.Name) and t.id in CATCHES) for t in types)


def expected_error(ctx, call: ast.Call) -> str | None:
    """How the code around the call expects its ValueError: "test" inside ``with pytest.raises(...)``
    / ``with self.assertRaises(...)`` (or a lambda given to ``self.assertRaises(E, lambda: ...)``),
    "caught" inside a ``try`` whose handlers catch it (or ``contextlib.suppress``); else None."""
    child = call
    for anc in ctx.ancestors(call):
        if isinstance(anc, ast.Lambda):
            parent = ctx.parent(anc)
            if _expects_raise(ctx, parent) and anc in parent.args:
                return "test"
            return None
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            return None
        if isinstance(anc, (ast.With, ast.AsyncWith)) and child in anc.body:
            for item in anc.items:
                if _expects_raise(ctx, item.context_expr):
                    return "test"
                if isinstance(item.context_expr, ast.Call) and ctx.call_name(item.context_expr) == "contextlib.suppress":
                    return "caught"
        if isinstance(anc, ast.Try) or type(anc).__name__ == "TryStar":
            if child in anc.body and any(_catches(ctx, h) for h in anc.handlers):
                return "caught"
        child = anc
    return None


def _guarded(ctx, call: ast.Call, nw_text: str) -> bool:
    """The call sits under an ``if``/``while``/conditional expression whose test mentions num_workers."""
    child = call
    for anc in ctx.ancestors(call):
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)):
            return False
        if isinstance(anc, (ast.If, ast.While, ast.IfExp)) and child is not anc.test:
            for sub in ast.walk(anc.test):
                if isinstance(sub, (ast.Name, ast.Attribute)) and ctx.segment(sub, 200) == nw_text:
                    return True
        child = anc
    return False


def _positive_const(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 1


def _positive(ctx, node) -> bool:
    """Expressions that cannot be 0: ``max(n, 1)``, ``n or 4``, ``cpu_count()``."""
    if isinstance(node, ast.Call):
        name = ctx.call_name(node)
        if name == "builtins.max" and any(_positive_const(a) for a in node.args):
            return True
        return name in CPU_COUNT
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return _positive_const(node.values[-1])
    return False


def _workers_here(ctx, node) -> str:
    """"no" / "yes" / "maybe" for a num_workers expression, from this file alone."""
    verdicts = set()
    for alt in ctx.value(node).alternatives():
        const = alt.const if alt.kind == "const" else None
        if isinstance(const, int) and not isinstance(const, bool):
            verdicts.add("no" if const <= 0 else "yes")
        else:
            verdicts.add("maybe")
    return verdicts.pop() if len(verdicts) == 1 else "maybe"


def extract_calls(ctx) -> dict:
    """Per call with a worker-only option (a keyword, or an item of a ``**`` dict we can follow):
    positions for fixes and what each option is when num_workers is 0, keyed by the call's position."""
    out: dict[tuple[int, int], dict] = {}
    for node in ctx.nodes(ast.Call):
        kws = [kw for kw in node.keywords if kw.arg in WORKER_ONLY]
        if not kws and not any(kw.arg is None for kw in node.keywords):
            continue
        sources = OptionSources(ctx, node)
        passed = [name for name in WORKER_ONLY if sources.stores.get(name)]
        if not passed:
            continue
        nw_node = next((kw.value for kw in node.keywords if kw.arg == "num_workers"), None)
        if nw_node is None and len(node.args) > NUM_WORKERS_POSITION:
            nw_node = node.args[NUM_WORKERS_POSITION]
            if isinstance(nw_node, ast.Starred):
                nw_node = None
        nw_via_dict = None
        if nw_node is None and sources.nw_node is not None:
            nw_via_dict = _workers_here(ctx, sources.nw_node)
            nw_node = sources.nw_node
        nw_text = ctx.segment(nw_node, 200) if nw_node is not None else None
        entry = {
            "nw_positive": _positive(ctx, nw_node),
            "nw_text": nw_text,
            "nw_simple": isinstance(nw_node, (ast.Name, ast.Attribute, ast.Constant)),
            "nw_literal": isinstance(nw_node, ast.Constant),
            "nw_via_dict": nw_via_dict,
            "guarded": bool(nw_text) and _guarded(ctx, node, nw_text),
            "expects": expected_error(ctx, node),
            "keywords": {},
            "passed": {},
            "dict_text": next((ctx.segment(kw.value, 60) for kw in node.keywords if kw.arg is None), None),
            # a `#` in the call's source (a comment, or in a string), or a keyword given twice
            # (which ``ast`` reads and the compiler rejects): only then may the keyword fixes find
            # no edit (``keywords.remove_keyword``), so a run printing no edits asks libcst only
            # then (``_fixes``)
            "ask_libcst": "#" in ctx._source_segment(node) or _repeated_keyword(node),
        }
        for kw in kws:
            entry["keywords"][kw.arg] = {
                "value_text": ctx.segment(kw.value, 200),
                "span": ctx.span(kw),
            }
        for name in passed:
            verdict = sources.verdict(name)
            if verdict in (loader_options.RAISES, loader_options.MAY):
                values = [ctx.segment(v, 200) for v, _t in sources.stores[name] if v is not None]
                entry["passed"][name] = {
                    "verdict": verdict,
                    "via": None if name in entry["keywords"] else "dict",
                    "value_text": values[0] if len(values) == 1 else "...",
                }
        out[call_key(ctx.span(node))] = entry
    return out


def _repeated_keyword(call: ast.Call) -> bool:
    names = [kw.arg for kw in call.keywords if kw.arg is not None]
    return len(names) != len(set(names))


def surely_positive(value) -> bool:
    """num_workers expressions that cannot be 0: ``max(1, n)``, ``os.cpu_count()``."""
    alts = value.alternatives()
    for alt in alts:
        if alt.kind == "call" and canonical(alt.ref) == "builtins.max" and isinstance(alt.const, int) and alt.const >= 1:
            continue
        if alt.kind == "call" and canonical(alt.ref) in CPU_COUNT:
            continue
        if alt.kind == "const" and isinstance(alt.const, int) and not isinstance(alt.const, bool) and alt.const > 0:
            continue
        return False
    return True


def offending(name: str, value) -> bool:
    """The argument's value certainly trips torch's check when num_workers is 0."""
    alts = value.alternatives()
    if not alts:
        return False
    for alt in alts:
        if name == "prefetch_factor":
            if not (alt.kind == "const" and alt.const is not None):
                return False
        elif name == "persistent_workers":
            if not (alt.kind == "const" and alt.const):
                return False
        else:
            ok = (alt.kind == "const" and isinstance(alt.const, str)) or (
                alt.kind == "call" and canonical(alt.ref) in GET_CONTEXT
            )
            if not ok:
                return False
    return True


class WorkerOnlyArgsWithoutWorkers(Rule):
    code = "DL304"
    name = "worker-only-args-without-workers"
    severity = "error"
    fix = "safe"
    triggers = (b"prefetch_factor", b"persistent_workers", b"multiprocessing_context")
    summary = "`prefetch_factor` / `persistent_workers` / `multiprocessing_context` with num_workers=0: DataLoader raises ValueError."
    docs = {
        "What it does": """
            Flags a DataLoader given `prefetch_factor`, `persistent_workers=True` or
            `multiprocessing_context` while `num_workers` is 0 (absent, a literal, or a constant):
            an error. When `num_workers` is an expression (a config value, a parameter) and the
            option is passed unconditionally, it flags a warning: the call crashes as soon as a
            user sets the workers to 0 (a common debugging step).

            The option may come as a keyword or through a `**kwargs` dict (a dict display or
            `dict(...)` in a local or a `self` attribute, `kw["k"] = v`, `kw.update(...)`), and its
            value is followed through locals and `self` attributes: flagged when it is still set
            for 0 workers (`P if num_workers > 0 else 2`), or when it comes from a setting that does
            not depend on num_workers (a command-line flag `args.persistent`, `cfg["prefetch_factor"]`,
            a constructor parameter kept on the object, a parameter defaulting to `True`, a branch
            chosen by another test).

            Stays silent when the option is `None`/`False` for 0 workers (a test on num_workers, a
            store under `if num_workers > 0:`), when it is a plain parameter of the function
            building the loader (its caller decides) or a value we cannot decide, when num_workers
            is surely positive (`max(1, n)`, `os.cpu_count()`), when the
            call sits under an `if` that tests num_workers, for DataLoader subclasses with
            their own `__init__`, and inside `with pytest.raises(...)` / `self.assertRaises(...)`
            (a test that expects the ValueError).
            """,
        "Why is this bad?": """
            `DataLoader.__init__` (torch >= 2.0) rejects these options without workers:

            - `ValueError: prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.`
            - `ValueError: persistent_workers option needs num_workers > 0`
            - `ValueError: multiprocessing_context can only be used with multi-process loading (num_workers > 0), but got num_workers=0`

            Config-driven `num_workers` with unconditional options crashed in
            deepseek-ai/DeepSpec#40, JonasGeiping/cramming#23, AnswerDotAI/ModernBERT#38 and
            rom1504/clip-retrieval#356. (torch <= 1.13 only accepted `prefetch_factor=2`, the
            default, without workers: pytorch/pytorch#68576.)
            """,
        "Example": """
            ```python
            loader = DataLoader(ds, batch_size=32, num_workers=args.workers,
                                prefetch_factor=4, persistent_workers=True)
            ```
            """,
        "Use instead": """
            ```python
            loader = DataLoader(ds, batch_size=32, num_workers=args.workers,
                                prefetch_factor=4 if args.workers > 0 else None,
                                persistent_workers=args.workers > 0)
            ```
            With `num_workers` absent or a literal 0, drop the option.
            """,
        "Fix safety": """
            Safe. The fix only changes what happens when num_workers is 0 (where the original
            call raises) and keeps the value unchanged when num_workers > 0:
            `prefetch_factor=P if NW > 0 else None`, `persistent_workers=PW if NW > 0 else False`
            (`NW > 0` when PW is `True`), `multiprocessing_context=C if NW > 0 else None`. The
            value is parenthesized where the conditional expression would otherwise read it
            differently (`(4 if fast else 2) if NW > 0 else None`, a lambda, a walrus): the fixed
            expression is checked to parse back to exactly the original value. It is offered only
            when the num_workers expression is a name, an attribute or a literal written in the
            call (evaluating it twice has no effect); with num_workers absent or a literal 0 the
            option is dropped (unless a comment would go with it). No fix for an option passed
            positionally or through `**kwargs`, and none when the call sits in a `try` whose
            handlers catch the ValueError (or under `contextlib.suppress`): there the error is
            part of what the code does, and removing it would skip the handler (the finding
            stays). Inside `with pytest.raises(...)` / `with self.assertRaises(...)` (and
            `assertRaisesRegex`, or a lambda given to them) the code is a test that expects the
            error: no finding at all.
            """,
        "References": """
            - `torch/utils/data/dataloader.py`, `DataLoader.__init__` and the `multiprocessing_context` setter
            - https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader
            - pytorch/pytorch#68576
            """,
    }

    def extract(self, ctx):
        return extract_calls(ctx) or None

    def check(self, project):
        index = project.index
        for loader in index.loaders:
            payload = project.payload(self.code, loader.file.path)
            if not payload:
                continue
            entry = payload.get(call_key(loader.call.span))
            if entry is None:
                continue
            if entry.get("expects") == "test":
                continue  # `with pytest.raises(ValueError):`: the test wants the error
            checked, positional_ok = index.passes_through(loader)
            if not checked:
                continue
            yield from self._check_loader(project, loader, entry, positional_ok)

    def _check_loader(self, project, loader, entry, positional_ok):
        call = loader.call
        if not positional_ok and call.positional > 1:
            return  # positional arguments of another signature: we cannot tell what they are
        nw_value = call.args.get("num_workers")
        nw_shown = clip(entry["nw_text"] or (nw_value.text if nw_value is not None else ""), 24)
        via_dict = entry.get("nw_via_dict")
        if nw_value is None and via_dict is None:
            if call.unresolved_kwargs:
                return
            status, nw_desc = "zero", "num_workers not given (default 0)"
        elif (loader.workers if nw_value is not None else via_dict) == "no":
            alts = nw_value.alternatives() if nw_value is not None else ()
            if any(isinstance(a.const, int) and a.const < 0 for a in alts if a.kind == "const"):
                return  # another ValueError comes first
            if entry["nw_literal"]:
                nw_desc = f"num_workers={nw_shown}"
            else:
                nw_desc = f"num_workers=`{nw_shown}` (= 0)"
            status = "zero"
        elif (loader.workers if nw_value is not None else via_dict) == "maybe":
            if entry["nw_text"] is None or entry["guarded"] or entry.get("nw_positive"):
                return
            if nw_value is not None and surely_positive(nw_value):
                return
            status, nw_desc = "maybe", f"num_workers=`{nw_shown}` may be 0"
        else:
            return
        passed = entry.get("passed", {})
        verdicts = {}
        for name in WORKER_ONLY:
            if name in entry["keywords"] and call.args.get(name) is not None and offending(name, call.args[name]):
                verdicts[name] = "raises"
            elif name in passed:
                verdicts[name] = passed[name]["verdict"]
        names = list(verdicts)
        if not names:
            return
        # one finding per DataLoader call (one hazard: the call raises), at the `DataLoader(` callee
        first = names[0]
        more = f" (+{len(names) - 1} more)" if len(names) > 1 else ""
        if first in entry["keywords"]:
            opt = f"`{first}={clip(entry['keywords'][first]['value_text'], 20)}`"
        else:
            opt = f"`{first}` in `**{clip(entry.get('dict_text') or 'kwargs', 24)}`"
        certain = all(verdicts[n] == "raises" for n in names)
        if status == "zero":
            if certain:
                message = f"{opt}{more} with {nw_desc}: DataLoader raises ValueError"
                severity = "error"
            else:
                message = f"{opt}{more} may be set, with {nw_desc}: DataLoader raises ValueError"
                severity = "warning"
        elif certain and all(n in entry["keywords"] and offending(n, call.args[n]) for n in names if n in call.args):
            message = f"{opt}{more} is passed always, but {nw_desc}"
            severity = "warning"
        elif certain:
            message = f"{opt}{more} stays set when num_workers=`{nw_shown}` is 0"
            if len(message) > 100:
                message = f"{opt}{more} stays set when num_workers is 0"
            severity = "warning"
        else:
            message = f"{opt}{more} is set apart from num_workers=`{nw_shown}` (may be 0)"
            if len(message) > 100:
                message = f"{opt}{more} is set apart from num_workers (may be 0)"
            severity = "warning"
        why = []
        for n in names:
            shown = entry["keywords"][n]["value_text"] if n in entry["keywords"] else passed[n]["value_text"]
            where = " (through a ** dict)" if n not in entry["keywords"] else ""
            if verdicts[n] == "raises":
                why.append(f"{n}={shown}{where} is set when num_workers is 0")
            else:
                why.append(
                    f"{n}={shown}{where} comes from a setting or a branch that does not depend on num_workers"
                )
        yield Diagnostic(
            self.code,
            message,
            loader.file.path,
            call.func_span,
            fix=self._fixes(project, loader, names, entry, status),
            severity=severity,
            details=(
                ("options", tuple(f"{n}={entry['keywords'][n]['value_text'] if n in entry['keywords'] else passed[n]['value_text']}" for n in names)),
                ("why", tuple(why)),
                ("error", tuple(f"DataLoader raises {ERRORS[n]}" for n in names)),
            ),
        )

    def _fixes(self, project, loader, names, entry, status) -> Fix | None:
        """One fix for every offending option of the call: all of them, or none (none when one
        comes through a ``**`` dict: the edit would have to go where the dict is built)."""
        if any(n not in entry["keywords"] for n in names):
            return None
        # a run printing no edits (the `[*]` mark, the counts): a call without `#` in its source
        # and without a repeated keyword always takes the edits (removing a keyword, or guarding
        # its value, fails only where a comment would go or move), so whether the fix exists is
        # known without libcst
        editless = not project.edits and entry.get("ask_libcst") is False
        if len(names) > 1 and (entry["nw_text"] is None or entry["nw_literal"]) and status == "zero" and not entry.get("expects"):
            from dllint.fixes.cst import statement_source
            from dllint.fixes.keywords import remove_keyword

            listed = ", ".join(f"`{n}`" for n in names)
            return planned_fix(
                project, "safe", f"Remove {listed} (num_workers is 0)",
                lambda: remove_keyword(statement_source(project, loader.file.path, loader.call.span), loader.call.span, tuple(names)),
                known=editless,
            )
        # (several fixes are combined only if their edits do not overlap: the edits decide)
        fixes = [self._fix(project, loader, name, entry, status, editless and len(names) == 1) for name in names]
        if any(f is None for f in fixes):
            return None
        if len(fixes) == 1:
            return fixes[0]
        edits = sorted((e for f in fixes for e in f.edits), key=lambda e: (e.span.row, e.span.col))
        for a, b in zip(edits, edits[1:]):
            if (b.span.row, b.span.col) < (a.span.end_row, a.span.end_col):
                return None  # overlapping edits (adjacent keywords removed): no combined fix
        message = "; ".join(f.message for f in fixes)
        return Fix("safe", message, tuple(edits))

    @staticmethod
    def _fix(project, loader, name, entry, status, editless: bool = False) -> Fix | None:
        if entry.get("expects"):
            return None  # a `try` / `suppress` that catches the ValueError: the fix would skip the handler
        from dllint.fixes.cst import statement_source
        from dllint.fixes.keywords import guard_keyword, remove_keyword

        def source():
            return statement_source(project, loader.file.path, loader.call.span)

        if entry["nw_text"] is None or entry["nw_literal"]:
            if status != "zero":
                return None
            return planned_fix(
                project, "safe", f"Remove `{name}` (num_workers is 0)", lambda: remove_keyword(source(), loader.call.span, name), known=editless
            )
        if not entry["nw_simple"]:
            return None
        return planned_fix(
            project, "safe", f"Pass `{name}` only when num_workers > 0",
            lambda: guard_keyword(source(), loader.call.span, name, entry["nw_text"]), known=editless,
        )
