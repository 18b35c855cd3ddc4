"""DL105 rng-object-copied-to-workers."""

from __future__ import annotations

import ast

from dllint.model import Diagnostic
from dllint.names import canonical
from dllint.rules.base import Rule

# RNG object constructors -> how the message names them
RNG_CTORS = {
    "numpy.random.default_rng": "numpy.random.default_rng()",
    "numpy.random.RandomState": "numpy.random.RandomState",
    "numpy.random.mtrand.RandomState": "numpy.random.RandomState",
    "numpy.random.Generator": "numpy.random.Generator",
    "random.Random": "random.Random",
    "torch.Generator": "torch.Generator",
    "torch._C.Generator": "torch.Generator",
}
# methods that reseed an RNG object in place
RESEED_METHODS = frozenset({"seed", "manual_seed", "set_state", "setstate", "__setstate__"})


def rng_ctor(value) -> str | None:
    for alt in value.alternatives():
        if alt.kind == "call" and canonical(alt.ref) in RNG_CTORS:
            return canonical(alt.ref)
    return None


class RngObjectCopiedToWorkers(Rule):
    code = "DL105"
    name = "rng-object-copied-to-workers"
    severity = "warning"
    triggers = ()  # only Dataset classes matter: the core triggers find them
    summary = "RNG object built in a Dataset's `__init__`: every worker gets a copy with the same state and draws the same numbers."
    docs = {
        "What it does": """
            Flags `self.X = np.random.default_rng(...)` / `np.random.RandomState(...)` /
            `np.random.Generator(...)` / `random.Random(...)` / `torch.Generator(...)` assigned in
            a Dataset's `__init__` (or a helper it calls, base classes included) when `self.X` is
            read by code that runs in workers (`__getitem__`, `__iter__` and what they call).
            Stays silent when the worker code re-creates or reseeds `self.X` (`self.X = ...`,
            `self.X.seed(...)`, `self.X.manual_seed(...)`), when a loader using the class passes
            a `worker_init_fn` (it can reseed through `get_worker_info().dataset`), and when every
            loader using the class is proven to run without workers.
            """,
        "Why is this bad?": """
            torch reseeds only the global RNGs in each worker (`random`, `torch`, and `numpy`
            since 1.9, from `base_seed + worker_id`). An RNG *object* on the dataset is copied
            (fork) or pickled (spawn) with the parent's state, so every worker draws exactly the
            same numbers -- identical "random" augmentations for sample 0 and sample 1 -- and,
            because non-persistent workers restart from the parent's copy, every epoch repeats
            the previous one. Measured with torch 2.13: identical draws from `default_rng()`,
            `random.Random()` and `torch.Generator()` in both workers and both epochs. (PR
            #107131, which reseeded all generators, was reverted in #107756.)
            """,
        "Example": """
            ```python
            import numpy as np
            from torch.utils.data import Dataset


            class Augmented(Dataset):
                def __init__(self, items):
                    self.items = items
                    self.rng = np.random.default_rng()

                def __len__(self):
                    return len(self.items)

                def __getitem__(self, i):
                    return self.items[i] + self.rng.normal()
            ```
            """,
        "Use instead": """
            ```python
            import numpy as np
            from torch.utils.data import Dataset, get_worker_info


            class Augmented(Dataset):
                def __init__(self, items):
                    self.items = items
                    self.rng = None

                def __len__(self):
                    return len(self.items)

                def __getitem__(self, i):
                    if self.rng is None:  # once per worker process
                        info = get_worker_info()
                        self.rng = np.random.default_rng(info.seed if info else None)
                    return self.items[i] + self.rng.normal()
            ```
            or draw from the global `np.random` / `torch` streams, which torch reseeds per worker.
            """,
        "Fix safety": "No fix: where to create the generator, and from which seed, is a design choice.",
        "References": """
            - https://pytorch.org/docs/stable/data.html#randomness-in-multi-process-data-loading
            - https://pytorch.org/docs/stable/notes/randomness.html
            - PR #56488, #107131 (reverted in #107756)
            """,
    }

    def extract(self, ctx):
        """Per method: attributes reseeded in place (``self.rng.seed(...)``), and attributes set to
        a seeded chain the core value summary cannot see through (``torch.Generator().manual_seed(0)``)."""
        out = {}
        for fn in ctx.functions:
            if not fn.self_name:
                continue
            attrs = set()
            chained = []
            for node in ctx.function_nodes(fn.node, ast.Call):
                if (
                    isinstance(node.func, ast.Attribute)
                    and node.func.attr in RESEED_METHODS
                    and ctx.is_self_attr(node.func.value, fn)
                ):
                    attrs.add(node.func.value.attr)
            for node in ctx.function_nodes(fn.node, ast.Assign):
                if len(node.targets) == 1 and ctx.is_self_attr(node.targets[0], fn):
                    inner = node.value
                    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in RESEED_METHODS:
                        inner = inner.func.value
                        if isinstance(inner, ast.Call):
                            ctor = canonical(ctx.qualname(inner.func))
                            if ctor in RNG_CTORS:
                                chained.append((node.targets[0].attr, ctor, ctx.span(node.value)))
            if attrs or chained:
                out[fn.qualname] = {"reseeded": sorted(attrs), "chained": chained}
        return out or None

    def check(self, project):
        index = project.index
        reported = set()
        for ref in index.dataset_classes():
            if index.proven_without_workers(ref):
                continue
            loaders = index.worker_loaders(ref)
            if any(self._has_init_fn(ld) for ld in loaders):
                continue
            own = {r.key for r in index.mro(ref)}
            init = index.find_method(ref, "__init__")
            if init is None:
                continue
            setup = [f for f, _ in index.reachable([init], ref).values() if index.class_of(f) and index.class_of(f).key in own]
            workers = [f for f, _ in index.worker_functions(ref).values() if index.class_of(f) and index.class_of(f).key in own]
            if not workers:
                continue
            worker_keys = {f.key for f in workers}
            for fn in setup:
                if fn.key in worker_keys:
                    continue
                found = []
                for attr, values in fn.fn.self_writes.items():
                    for value in values:
                        ctor = rng_ctor(value)
                        if ctor is not None:
                            found.append((attr, ctor, value.span))
                entry = (project.payload(self.code, fn.file.path) or {}).get(fn.fn.qualname) or {}
                found.extend(entry.get("chained", ()))
                for attr, ctor, span in found:
                    readers = [f for f in workers if attr in f.fn.self_reads]
                    if not readers or self._recreated(project, workers, attr):
                        continue
                    key = (fn.file.path, span)
                    if key in reported:
                        continue
                    reported.add(key)
                    reader = readers[0].fn.name
                    yield Diagnostic(
                        self.code,
                        f"`self.{attr}` (a `{RNG_CTORS[ctor]}`) is copied to every worker with the same state",
                        fn.file.path,
                        span,
                        severity=self.severity,
                        details=(
                            ("attribute", attr),
                            ("why", f"built in `{fn.fn.name}`, drawn from in `{reader}`: torch reseeds only the global "
                             "RNGs, so workers draw identical numbers and every epoch repeats the last; create it in "
                             "the worker, seeded from `torch.utils.data.get_worker_info().seed`"),
                        ),
                    )

    @staticmethod
    def _has_init_fn(loader) -> bool:
        value = loader.call.args.get("worker_init_fn")
        if value is None:
            return False
        return not all(alt.kind == "const" and alt.const is None for alt in value.alternatives())

    def _recreated(self, project, workers, attr) -> bool:
        for f in workers:
            if attr in f.fn.self_writes:
                return True
            entry = (project.payload(self.code, f.file.path) or {}).get(f.fn.qualname) or {}
            if attr in entry.get("reseeded", ()):
                return True
        return False
