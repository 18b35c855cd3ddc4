"""DL203 constant-worker-seed."""

from __future__ import annotations

import ast

from dllint.model import Diagnostic, Edit, Fix
from dllint.names import DATALOADER_CLASSES, DATALOADER_POSITIONAL, canonical
from dllint.rules.base import Rule
from dllint.textutil import clip

# seeding function -> the random stream it resets
SEED_FUNCS = {
    "numpy.random.seed": "numpy.random",
    "random.seed": "random",
    "torch.manual_seed": "torch",
    "torch.random.manual_seed": "torch",
    "imgaug.seed": "imgaug",
    "imgaug.random.seed": "imgaug",
}
GET_WORKER_INFO = "torch.utils.data.get_worker_info"
# builtins that keep a value fixed when their arguments are fixed
PURE_BUILTINS = frozenset(
    f"builtins.{n}" for n in ("int", "abs", "round", "min", "max", "hash", "str", "float", "len", "sum", "bool")
)
# callees that are never a project's seeding helper: skip them (speed)
EXTERNAL_ROOTS = frozenset(
    {"builtins", "torch", "numpy", "os", "sys", "math", "re", "json", "logging", "itertools", "functools",
     "collections", "typing", "time", "warnings", "random", "pathlib", "copy", "pickle", "subprocess", "unittest"}
)
WORKER_INFO_FIXED = frozenset({"id", "num_workers"})  # get_worker_info().seed differs per epoch
MAX_DEPTH = 8
WORKER_INIT_INDEX = DATALOADER_POSITIONAL.index("worker_init_fn")


class _Classifier:
    """Is a seed expression built only from values fixed when the loader is built?

    Fixed: literals (not None), the worker function's parameters (``worker_id`` and whatever
    ``functools.partial`` bound), module-level names never rebound, attributes and items of fixed
    values, arithmetic on them, ``get_worker_info().id`` / ``.num_workers``. Anything else (a call,
    ``torch.initial_seed()``, ``get_worker_info().seed``, ``self.x``, a RNG draw) may vary."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.mutated_globals = {
            name for node in ctx.nodes(ast.Global, ast.Nonlocal) for name in node.names
        }

    def fixed(self, node, self_name, depth=0) -> bool:
        if depth > MAX_DEPTH or node is None:
            return False
        ctx = self.ctx
        rec = lambda n: self.fixed(n, self_name, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value is not None
        if isinstance(node, ast.Name):
            binding = ctx.lookup(node.id, ctx.scope_of(node))
            if binding is None:
                return False
            if binding.kind == "param":
                if node.id == self_name:
                    return False
                return all(v is not None and rec(v) for v in binding.values)
            if binding.kind == "local":
                if binding is ctx.module_scope.bindings.get(node.id):
                    return node.id not in self.mutated_globals and len(binding.values) == 1 and binding.values[0] is not None
                return bool(binding.values) and all(v is not None and rec(v) for v in binding.values)
            return binding.kind in ("import", "def", "class")
        if isinstance(node, ast.Attribute):
            if self.is_worker_info(node.value, depth):
                return node.attr in WORKER_INFO_FIXED
            if isinstance(node.value, ast.Name) and node.value.id == self_name:
                return False
            return rec(node.value)
        if isinstance(node, ast.Subscript):
            return rec(node.value) and rec(node.slice)
        if isinstance(node, ast.BinOp):
            return rec(node.left) and rec(node.right)
        if isinstance(node, ast.UnaryOp):
            return rec(node.operand)
        if isinstance(node, ast.BoolOp):
            return all(rec(v) for v in node.values)
        if isinstance(node, ast.IfExp):
            return rec(node.test) and rec(node.body) and rec(node.orelse)
        if isinstance(node, ast.Compare):
            return rec(node.left) and all(rec(c) for c in node.comparators)
        if isinstance(node, ast.Tuple):
            return all(rec(e) for e in node.elts)
        if isinstance(node, ast.Call):
            if canonical(ctx.qualname(node.func)) in PURE_BUILTINS:
                return all(rec(a) for a in node.args) and all(rec(k.value) for k in node.keywords)
            return False
        return False

    def is_worker_info(self, node, depth) -> bool:
        ctx = self.ctx
        if isinstance(node, ast.Call):
            return canonical(ctx.qualname(node.func)) == GET_WORKER_INFO
        if isinstance(node, ast.Name) and depth <= MAX_DEPTH:
            binding = ctx.lookup(node.id, ctx.scope_of(node))
            if binding is not None and binding.kind == "local" and binding.values:
                return all(v is not None and self.is_worker_info(v, depth + 1) for v in binding.values)
        return False


def _torch_name(ctx) -> str | None:
    for name, binding in ctx.module_scope.bindings.items():
        if binding.kind == "import" and binding.qualname == "torch":
            return name
    return None


def _seed_arg(call: ast.Call):
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    for kw in call.keywords:
        if kw.arg in ("seed", "a"):
            return kw.value
    return None


def _body_calls(ctx, node):
    if isinstance(node, ast.Lambda):
        return [n for n in ast.walk(node.body) if isinstance(n, ast.Call)]
    return ctx.function_nodes(node, ast.Call)


def _analyse(ctx, classifier, node, self_name, torch_name):
    """(seed calls from fixed values, calls to project functions with only fixed arguments)."""
    seeds = []
    helpers = []
    for sub in _body_calls(ctx, node):
        callee = canonical(ctx.qualname(sub.func))
        if callee in SEED_FUNCS:
            arg = _seed_arg(sub)
            if arg is None or not classifier.fixed(arg, self_name):
                continue
            replacement = None
            if torch_name:
                replacement = f"{torch_name}.initial_seed()" if SEED_FUNCS[callee] == "torch" else f"{torch_name}.initial_seed() % 2**32"
            seeds.append(
                {
                    "stream": SEED_FUNCS[callee],
                    "span": ctx.span(sub),
                    "arg": ctx.span(arg),
                    "text": ctx.segment(arg, 60),
                    "replacement": replacement,
                }
            )
        elif callee and callee.split(".", 1)[0] not in EXTERNAL_ROOTS and (sub.args or sub.keywords):
            args = [*sub.args, *(k.value for k in sub.keywords)]
            if args and not any(isinstance(a, ast.Starred) for a in sub.args) and all(classifier.fixed(a, self_name) for a in args):
                helpers.append(
                    {
                        "callee": callee,
                        "span": ctx.span(sub),
                        "text": ctx.segment(sub, 60),
                        "arg": ctx.span(args[0]) if len(args) == 1 else None,
                    }
                )
    return seeds, helpers


def _worker_init_value(ctx, call: ast.Call):
    for kw in call.keywords:
        if kw.arg == "worker_init_fn":
            return kw.value
    if canonical(ctx.call_name(call)) in DATALOADER_CLASSES and len(call.args) > WORKER_INIT_INDEX and not any(isinstance(a, ast.Starred) for a in call.args[: WORKER_INIT_INDEX + 1]):
        return call.args[WORKER_INIT_INDEX]
    return None


class ConstantWorkerSeed(Rule):
    code = "DL203"
    name = "constant-worker-seed"
    severity = "warning"
    fix = "unsafe"
    triggers = (b"worker_init_fn",)
    summary = "`worker_init_fn` seeds numpy/random/torch from the worker id or constants: every epoch and every rank replays the same randomness."
    docs = {
        "What it does": """
            Flags a `seed(...)` call (`numpy.random.seed`, `random.seed`, `torch.manual_seed`,
            `imgaug.seed`) in a function used as a DataLoader's `worker_init_fn` (directly, through
            `functools.partial`, a lambda, or a project helper it calls) when the seed is built
            only from values fixed when the loader is built: the `worker_id` parameter, literals,
            module constants, config attributes, `partial`-bound parameters,
            `get_worker_info().id`. Stays silent when the seed involves `torch.initial_seed()`,
            `get_worker_info().seed`, a random draw or any call it cannot see through, when every
            loader is proven to run without workers, and with `persistent_workers=True` (workers
            are started once).
            """,
        "Why is this bad?": """
            Since torch 1.9 every worker already gets `random`, `torch` and `numpy` seeded from
            `base_seed + worker_id`, where `base_seed` is drawn anew for every epoch. A
            `worker_init_fn` that reseeds from `worker_id` (or `SEED + worker_id`) throws that
            away: non-persistent workers restart each epoch with the same seeds, so every epoch
            replays exactly the same augmentations, and every DDP rank draws the same numbers
            (tanelp.github.io "Using PyTorch + NumPy? You're making a mistake"; pytorch/pytorch#5059,
            open-mmlab/OpenPCDet#886).
            """,
        "Example": """
            ```python
            import numpy as np
            from torch.utils.data import DataLoader

            SEED = 0


            def worker_init_fn(worker_id):
                np.random.seed(SEED + worker_id)


            loader = DataLoader(dataset, num_workers=4, worker_init_fn=worker_init_fn)
            ```
            """,
        "Use instead": """
            ```python
            import numpy as np
            import torch
            from torch.utils.data import DataLoader


            def worker_init_fn(worker_id):
                np.random.seed(torch.initial_seed() % 2**32)


            loader = DataLoader(dataset, num_workers=4, worker_init_fn=worker_init_fn)
            ```
            or drop the `worker_init_fn`: torch >= 1.9 seeds numpy per worker and per epoch itself.
            Reproducibility comes from `torch.manual_seed(SEED)` in the main process (or the
            loader's `generator=`), which fixes `base_seed`.
            """,
        "Fix safety": """
            Unsafe: replaces the seed argument with `torch.initial_seed() % 2**32` (the per-worker,
            per-epoch seed torch already set), which changes the random numbers every run draws.
            Offered only when `torch` is imported in that file; a seed passed through a helper
            function is rewritten only when the helper takes that one argument.
            """,
        "References": """
            - https://pytorch.org/docs/stable/notes/randomness.html#dataloader
            - https://pytorch.org/docs/stable/data.html#randomness-in-multi-process-data-loading
            - pytorch/pytorch#5059, PR #56488
            """,
    }

    def extract(self, ctx):
        if "seed" not in ctx.text and "worker_init_fn" not in ctx.text:
            return None
        classifier = _Classifier(ctx)
        torch_name = _torch_name(ctx)
        funcs = {}
        for fn in ctx.functions:
            seeds, helpers = _analyse(ctx, classifier, fn.node, fn.self_name, torch_name)
            if seeds or helpers:
                funcs[fn.qualname] = (seeds, helpers)
        uses = []
        for node in ctx.nodes(ast.Call):
            value = _worker_init_value(ctx, node)
            if value is None:
                continue
            lam = None
            if isinstance(value, ast.Lambda):
                lam = _analyse(ctx, classifier, value, None, torch_name)
            elif isinstance(value, ast.Name):
                # a worker_init_fn defined inside the function that builds the loader
                binding = ctx.lookup(value.id, ctx.scope_of(value))
                if binding is not None and binding.kind == "def" and ".<locals>." in (binding.qualname or ""):
                    local = next((f for f in ctx.functions if f.qualname == binding.qualname), None)
                    if local is not None:
                        lam = _analyse(ctx, classifier, local.node, local.self_name, torch_name)
                        lam = (lam[0], lam[1], f"`worker_init_fn` `{local.node.name}`")
            direct = canonical(ctx.qualname(value)) if isinstance(value, (ast.Name, ast.Attribute)) else None
            if direct in SEED_FUNCS:
                # worker_init_fn=np.random.seed: seeds from the worker id itself
                seed = {"stream": SEED_FUNCS[direct], "span": ctx.span(value), "arg": None, "text": "worker_id", "replacement": None}
                lam = ([seed], [])
            persistent = next((k.value for k in node.keywords if k.arg == "persistent_workers"), None)
            uses.append(
                {
                    "call": ctx.span(node),
                    "value": ctx.value(value),
                    "lambda": lam,
                    "persistent": ctx.const(persistent, None) is True,
                }
            )
        if not funcs and not uses:
            return None
        return {"funcs": funcs, "uses": uses, "torch": torch_name}

    def check(self, project):
        index = project.index
        loaders = {(ld.file.path, ld.call.span): ld for ld in index.loaders}
        seen = set()
        for facts, payload in project.payloads(self.code):
            for use in payload["uses"]:
                loader = loaders.get((facts.path, use["call"]))
                if loader is not None and not loader.may_start_workers:
                    continue
                if use["persistent"]:
                    continue
                if use["lambda"] is not None:
                    seeds, helpers = use["lambda"][:2]
                    if len(use["lambda"]) == 3:
                        what = use["lambda"][2]
                    elif seeds and seeds[0]["arg"] is not None or helpers:
                        what = "A lambda `worker_init_fn`"
                    else:
                        what = "`worker_init_fn` itself"
                    yield from self._report(project, facts, what, seeds, helpers, seen)
                    continue
                if loader is not None:
                    targets = index.loader_callables(loader).get("worker_init_fn", [])
                else:
                    targets = index.callable_targets(use["value"], facts)
                for target in targets:
                    entry = project.payload(self.code, target.file.path)
                    if not entry or target.fn.qualname not in entry["funcs"]:
                        continue
                    seeds, helpers = entry["funcs"][target.fn.qualname]
                    yield from self._report(project, target.file, f"`worker_init_fn` `{target.fn.name}`", seeds, helpers, seen)

    def _report(self, project, facts, what, seeds, helpers, seen):
        for seed in seeds:
            key = (facts.path, seed["span"])
            if key in seen:
                continue
            seen.add(key)
            yield self._diag(facts.path, seed["span"], seed["arg"], seed["replacement"], (
                f"{what} seeds `{seed['stream']}` from `{clip(seed['text'], 20)}` each epoch"
            ), (
                "the seed is fixed when the loader is built: it overrides torch's per-worker, per-epoch seed, so "
                "every epoch replays the same random stream and every DDP rank draws the same numbers; seed from "
                "`torch.initial_seed() % 2**32` (or drop it: torch >= 1.9 seeds numpy per worker)"
            ))
        for call in helpers:
            found = project.index.resolve(call["callee"], facts.root)
            if not hasattr(found, "fn"):
                continue
            entry = project.payload(self.code, found.file.path)
            if not entry or found.fn.qualname not in entry["funcs"]:
                continue
            inner = entry["funcs"][found.fn.qualname][0]
            if not inner:
                continue
            key = (facts.path, call["span"])
            if key in seen:
                continue
            seen.add(key)
            streams = ", ".join(sorted({f"`{s['stream']}`" for s in inner}))
            replacement = None
            caller_torch = (project.payload(self.code, facts.path) or {}).get("torch")
            if call["arg"] is not None and caller_torch is not None:
                replacement = f"{caller_torch}.initial_seed() % 2**32"
            yield self._diag(facts.path, call["span"], call["arg"], replacement, (
                f"{what} calls `{clip(call['text'], 20)}`: the same seed each epoch"
            ), (
                f"it seeds {streams} from values fixed when the loader is built: it overrides torch's per-worker, per-epoch "
                "seed, so every epoch replays the same random stream and every DDP rank draws the same numbers; "
                "pass `torch.initial_seed() % 2**32`"
            ))

    def _diag(self, path, span, arg_span, replacement, message, why):
        fix = None
        if replacement and arg_span is not None:
            fix = Fix("unsafe", "Seed from `torch.initial_seed()`", (Edit(replacement, arg_span),))
        return Diagnostic(self.code, message, path, span, fix=fix, severity=self.severity, details=(("why", why),))
