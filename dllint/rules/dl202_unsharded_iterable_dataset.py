"""DL202 unsharded-iterable-dataset.

Also holds the small helpers the worker-state rules (DL103, DL104, DL105, DL202, DL203) share:
which loaders use a Dataset class, whether they are proven to run without workers, and the
start methods their workers may get.
"""

from __future__ import annotations

import ast

from dllint.model import Diagnostic
from dllint.names import ITERABLE_DATASET, canonical
from dllint.rules.base import Rule

GET_WORKER_INFO = "torch.utils.data.get_worker_info"
# Calls (by resolved name, or by method name on an object we cannot resolve) that split a stream
# between workers: torch's own, webdataset's, torchdata's, Hugging Face's `.shard(...)`.
SHARDING_NAMES = frozenset({"get_worker_info", "split_by_worker", "sharding_filter", "apply_sharding", "shard"})


# libraries whose iterable datasets split their stream by worker themselves
SELF_SHARDING_LIBRARIES = frozenset({"datasets", "webdataset", "torchdata", "streaming"})

# ------------------------------------------------------------------ shared helpers


def class_loaders(index, ref):
    """Loaders whose dataset is this class (or a subclass)."""
    return index.loaders_using(ref)


def proven_without_workers(index, ref) -> bool:
    """True when some loader uses the class and every one of them is proven to start no workers."""
    loaders = class_loaders(index, ref)
    return bool(loaders) and all(ld.workers == "no" for ld in loaders)


def worker_loaders(index, ref):
    return [ld for ld in class_loaders(index, ref) if ld.may_start_workers]


def start_methods_for(index, ref, loaders=None) -> frozenset[str]:
    """Start methods workers of this class may get: from the loaders that use it, else the
    start method the class's own file (or the scripts importing it) sets, else the defaults."""
    loaders = worker_loaders(index, ref) if loaders is None else loaders
    methods: set[str] = set()
    for ld in loaders:
        methods |= ld.start_methods
    if not methods:
        methods = set(index.global_start_methods(ref.file))
    return frozenset(methods)


def in_hierarchy(index, ref):
    """A predicate: is a function a method of this class or of one of its project bases?"""
    own = {r.key for r in index.mro(ref)}

    def member(fn) -> bool:
        cls = index.class_of(fn)
        return cls is not None and cls.key in own

    return member


def setup_functions(index, ref, init) -> list:
    """The class's own methods run from ``__init__`` (before workers start), worker code excluded."""
    member = in_hierarchy(index, ref)
    workers = {f.key for f, _ in index.worker_functions(ref).values()}
    return [f for f, _ in index.reachable([init], ref).values() if member(f) and f.key not in workers]


def pickling_methods(methods: frozenset[str]) -> list[str]:
    return sorted(m for m in methods if m in ("spawn", "forkserver"))


def describe_methods(methods) -> str:
    return "/".join(sorted(methods)) if methods else "the default start method"


def line_of(facts, row: int) -> str:
    return f"{facts.path}:{row}"


def rel_name(qualname: str) -> str:
    return qualname.rsplit(".", 1)[-1]


# ------------------------------------------------------------------ the rule


WORKER_POSITION = frozenset({"id", "num_workers", "worker_id", "rank", "world_size"})


def _shard_signs(ctx, sub) -> tuple[bool, bool, bool]:
    """What one node of a function says about splitting a stream by worker: (calls a sharding
    helper, asks for the worker info, uses a worker's position)."""
    kind = type(sub)
    if kind is ast.Call or kind is ast.Attribute or kind is ast.Name:
        target = sub.func if kind is ast.Call else sub
        qual = canonical(ctx.qualname(target))
        if qual == GET_WORKER_INFO:
            parent = ctx.parent(sub) if kind is ast.Call else None
            # get_worker_info() handed straight on
            return False, True, isinstance(parent, ast.Call) or isinstance(parent, ast.keyword)
        if qual and qual.rsplit(".", 1)[-1] in SHARDING_NAMES and not qual.startswith("builtins.") and qual.rsplit(".", 1)[-1] != "get_worker_info":
            return True, False, False
        if kind is ast.Call and isinstance(sub.func, ast.Attribute) and sub.func.attr in SHARDING_NAMES - {"get_worker_info"}:
            return True, False, False
    return False, False, kind is ast.Attribute and sub.attr in WORKER_POSITION


def _sharding_functions(ctx) -> list[str]:
    """The functions that (nested code included) split a stream by worker: a sharding helper
    (``split_by_worker``, ``.shard(...)``), or ``get_worker_info()`` whose worker id or count is
    used (``info.id``, ``info.num_workers``, or the info handed on); reading only ``info.seed``
    (to seed an RNG) is not splitting. One look at each name, attribute and call of the file: a
    node's signs count for every function around it."""
    signs: dict[int, list[bool]] = {}  # def node id -> [splits, asks, position]
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    for sub in ctx.nodes(ast.Call, ast.Attribute, ast.Name):
        found = _shard_signs(ctx, sub)
        if not (found[0] or found[1] or found[2]):
            continue
        for anc in ctx.ancestors(sub):
            if type(anc) in defs:
                mark = signs.setdefault(id(anc), [False, False, False])
                mark[0] = mark[0] or found[0]
                mark[1] = mark[1] or found[1]
                mark[2] = mark[2] or found[2]
    out = []
    for fn in ctx.functions:
        mark = signs.get(id(fn.node))
        if mark is not None and (mark[0] or (mark[1] and mark[2])):
            out.append(fn.qualname)
    return out


def _iter_shape(ctx, fn) -> str | None:
    """"abstract" for an ``__iter__`` with no body; "self.X" when it only re-yields ``self.X``."""
    body = list(fn.node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body or all(
        isinstance(b, ast.Pass)
        or (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) and b.value.value is Ellipsis)
        or (isinstance(b, ast.Raise) and b.exc is not None and "NotImplementedError" in ast.dump(b.exc))
        for b in body
    ):
        return "abstract"
    if len(body) != 1:
        return None
    stmt = body[0]
    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Name) and stmt.value.id == fn.self_name:
        return "returns-self"
    target = None
    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Name) and call.func.id == "iter" and len(call.args) == 1:
            target = call.args[0]
        elif isinstance(call.func, ast.Attribute) and call.func.attr == "__iter__":
            target = call.func.value
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.YieldFrom):
        target = stmt.value.value
    elif (
        isinstance(stmt, ast.For)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], ast.Expr)
        and isinstance(stmt.body[0].value, ast.Yield)
        and isinstance(stmt.target, ast.Name)
        and isinstance(stmt.body[0].value.value, ast.Name)
        and stmt.body[0].value.value.id == stmt.target.id
    ):
        target = stmt.iter
    if target is not None and ctx.is_self_attr(target, fn):
        return f"self.{target.attr}"
    return None


_ITER_WRAPPERS = frozenset({"builtins.map", "builtins.filter", "builtins.enumerate", "builtins.zip", "builtins.iter", "builtins.reversed"})


def _names_in(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _iterated_self_attr(ctx, fn, expr) -> str | None:
    """``self.X`` when ``expr`` iterates it (directly, or through map/filter/enumerate/zip/itertools)."""
    if ctx.is_self_attr(expr, fn):
        return expr.attr
    if isinstance(expr, ast.Call):
        qual = ctx.qualname(expr.func) or ""
        if qual in _ITER_WRAPPERS or qual.startswith("itertools."):
            for arg in expr.args:
                found = _iterated_self_attr(ctx, fn, arg)
                if found:
                    return found
    return None


def _delegated_attrs(ctx, fn) -> list[str]:
    """Attributes ``__iter__`` passes through element by element: ``for x in self.source: ... yield``
    where nothing derived from ``x`` is iterated again (so ``x`` is an item of a stream, not a file
    or shard name the loop opens and reads)."""
    out: list[str] = []
    for node in ctx.walk_function(fn.node):
        if not isinstance(node, (ast.For, ast.AsyncFor)):
            continue
        attr = _iterated_self_attr(ctx, fn, node.iter)
        if attr is None:
            continue
        tainted = _names_in(node.target)
        inner = [n for stmt in node.body for n in ast.walk(stmt)]
        for n in inner:  # names computed from the loop variable
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and n.value is not None and _names_in(n.value) & tainted:
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    tainted |= _names_in(t)
            elif isinstance(n, (ast.With, ast.AsyncWith)):
                for item in n.items:
                    if item.optional_vars is not None and _names_in(item.context_expr) & tainted:
                        tainted |= _names_in(item.optional_vars)
        reads_again = any(
            (isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)) and _names_in(n.iter) & tainted)
            or (isinstance(n, ast.YieldFrom) and _names_in(n.value) & tainted)
            for n in inner
        )
        yields = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in inner)
        if yields and not reads_again:
            out.append(attr)
    return out


def _drawn_attrs(ctx, fn) -> list[str]:
    """Attributes a method draws items from one at a time: ``next(self.source)``,
    ``next(self.readers[i])`` (an iterator or a list of iterators it holds)."""
    out: list[str] = []
    for node in ctx.function_nodes(fn.node, ast.Call):
        if not (node.args and ctx.call_name(node) == "builtins.next"):
            continue
        target = node.args[0]
        if isinstance(target, ast.Subscript):
            target = target.value
        targets = [target]
        if isinstance(target, ast.Name):  # it = iter(self.source); next(it)
            binding = ctx.lookup(target.id, ctx.scope_of(target))
            values = binding.values if binding is not None and binding.kind == "local" else []
            targets = [
                v.args[0]
                for v in values
                if isinstance(v, ast.Call) and len(v.args) == 1 and ctx.call_name(v) == "builtins.iter"
            ] if values else []
            if len(targets) != len(values):
                targets = []
        for t in targets:
            if ctx.is_self_attr(t, fn) and t.attr not in out:
                out.append(t.attr)
    return out


# values that make an attribute a plain list of sources (file names, shards, records), not a stream
_SOURCE_LIST_PREFIXES = ("builtins.", "glob.", "os.", "pathlib.", "json.", "pickle.", "yaml.", "csv.")


class UnshardedIterableDataset(Rule):
    code = "DL202"
    name = "unsharded-iterable-dataset"
    severity = "warning"
    triggers = ()  # "IterableDataset" contains the core trigger "Dataset"
    summary = "IterableDataset whose `__iter__` never splits the stream by worker: with N workers every item comes N times."
    docs = {
        "What it does": """
            Flags a `torch.utils.data.IterableDataset` subclass (through the project's own base
            classes too) whose `__iter__`, and the project code it calls, never asks which worker
            it runs in (`torch.utils.data.get_worker_info()`, webdataset's `split_by_worker`,
            torchdata's `sharding_filter`, a `.shard(...)` call). Stays silent when every loader
            using the class is proven to run without workers (`num_workers=0` or absent), when the
            loader's `worker_init_fn` shards (it calls `get_worker_info()`) or cannot be resolved,
            for classes that also derive from a non-torch base (webdataset, Hugging Face
            `datasets`, torchdata pipes shard on their own) or whose worker code reads a stream
            built by one of those libraries (`load_dataset(..., streaming=True)`,
            `wds.WebDataset(...)`), for an abstract `__iter__`, and for
            a wrapper whose `__iter__` only re-yields an iterable it was given (`return
            iter(self.source)` with `self.source` a constructor argument), or that draws its items
            with `next()` from iterators or datasets it was given (`next(self.readers[i])`, a
            random mix of sources): those may shard. Asking `get_worker_info()` only for its
            `.seed` is not splitting.
            """,
        "Why is this bad?": """
            Each DataLoader worker gets its own copy of the dataset object and runs `__iter__`
            from the start. PyTorch's docs: "naive multi-process loading will often result in
            duplicated data". With `num_workers=4` every record is yielded four times per epoch,
            `drop_last` applies per worker and `len(dataloader)` is only an estimate
            (vahidk/tfrecord#78, huggingface/datasets#3423).
            """,
        "Example": """
            ```python
            from torch.utils.data import DataLoader, IterableDataset


            class Lines(IterableDataset):
                def __init__(self, path):
                    self.path = path

                def __iter__(self):
                    with open(self.path) as fh:
                        yield from fh


            loader = DataLoader(Lines("data.txt"), num_workers=4)
            ```
            """,
        "Use instead": """
            ```python
            import itertools

            from torch.utils.data import DataLoader, IterableDataset, get_worker_info


            class Lines(IterableDataset):
                def __init__(self, path):
                    self.path = path

                def __iter__(self):
                    info = get_worker_info()
                    wid, n = (info.id, info.num_workers) if info is not None else (0, 1)
                    with open(self.path) as fh:
                        yield from itertools.islice(fh, wid, None, n)


            loader = DataLoader(Lines("data.txt"), num_workers=4)
            ```
            """,
        "Fix safety": "No fix: how to split a stream (by line, by file, by shard) depends on the data.",
        "References": """
            - https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset
            - vahidk/tfrecord#78, huggingface/datasets#3423
            """,
    }

    def extract(self, ctx):
        shards = []
        if any(word in ctx.text for word in SHARDING_NAMES):
            shards = _sharding_functions(ctx)
        iters = {}
        delegates = {}
        draws = {}
        drawing = "next" in ctx.text  # (asked once: a file without the word is read whole)
        for fn in ctx.functions:
            if fn.self_name and drawing:
                drawn = _drawn_attrs(ctx, fn)
                if drawn:
                    draws[fn.qualname] = drawn
            if fn.node.name == "__iter__" and fn.self_name:
                shape = _iter_shape(ctx, fn)
                if shape:
                    iters[fn.qualname] = shape
                attrs = _delegated_attrs(ctx, fn)
                if attrs:
                    delegates[fn.qualname] = attrs
        if not (shards or iters or delegates or draws):
            return None
        return {"shards": shards, "iters": iters, "delegates": delegates, "draws": draws}

    def check(self, project):
        index = project.index
        sharding: set[tuple[str, str]] = set()
        shapes: dict[tuple[str, str], str] = {}
        delegates: dict[tuple[str, str], list[str]] = {}
        draws: dict[tuple[str, str], list[str]] = {}
        for facts, payload in project.payloads(self.code):
            sharding.update((facts.path, q) for q in payload["shards"])
            shapes.update(((facts.path, q), shape) for q, shape in payload["iters"].items())
            delegates.update(((facts.path, q), attrs) for q, attrs in payload.get("delegates", {}).items())
            draws.update(((facts.path, q), attrs) for q, attrs in payload.get("draws", {}).items())
        for ref in index.dataset_classes():
            if not self._torch_iterable_only(index, ref):
                continue
            entry = index.find_method(ref, "__iter__")
            if entry is None or proven_without_workers(index, ref):
                continue
            shape = shapes.get(entry.key)
            if shape == "abstract":
                continue  # a base class: subclasses provide the stream
            if shape == "returns-self" and index.find_method(ref, "__next__") is None:
                continue  # an iterator whose __next__ we cannot see
            if shape and shape.startswith("self.") and self._from_outside(index, ref, shape[5:]):
                continue  # only re-yields an iterable given to it: that one may shard
            if any(self._opaque_stream(index, ref, attr) for attr in delegates.get(entry.key, ())):
                continue  # passes on the items of a wrapped dataset or reader, which may shard itself
            reach = index.worker_functions(ref)
            if any(key in sharding for key in reach):
                continue
            member = in_hierarchy(index, ref)
            drawn = {a for key, (fn, _) in reach.items() if member(fn) for a in draws.get(key, ())}
            if any(self._opaque_stream(index, ref, attr) for attr in sorted(drawn)):
                continue  # draws items from iterators or datasets it was given, which may shard themselves
            if self._reads_self_sharding_source(index, ref, reach):
                continue
            loaders = worker_loaders(index, ref)
            if any(self._init_fn_may_shard(index, ld, sharding) for ld in loaders):
                continue
            counts = sorted(
                {
                    v.const
                    for ld in loaders
                    if "num_workers" in ld.call.args  # (a count forwarded through ``**kwargs`` is not)
                    for v in ld.call.args["num_workers"].alternatives()
                    if v.kind == "const" and isinstance(v.const, int)
                }
            )
            n = counts[0] if len(counts) == 1 and counts[0] > 1 else "N"
            where = "" if entry.file.path == ref.file.path and entry.fn.cls == ref.cls.qualname else f" (inherited `__iter__` at {line_of(entry.file, entry.fn.span.row)})"
            yield Diagnostic(
                self.code,
                f"IterableDataset `{ref.cls.name}` never splits its stream by worker: each worker yields every item",
                ref.file.path,
                ref.cls.span,
                severity=self.severity,
                details=(
                    ("why", f"`__iter__`{where} and what it calls never use `get_worker_info()`, so every worker "
                     f"yields every item ({n} workers: each epoch sees the data {n} times); shard by "
                     "`get_worker_info().id` / `.num_workers`"),
                ),
            )

    @staticmethod
    def _reads_self_sharding_source(index, ref, reach) -> bool:
        """Worker code reads an attribute built by a library whose streams split by worker on their
        own (Hugging Face `datasets` streaming, webdataset, torchdata, MosaicML streaming)."""
        attrs = set().union(*(f.fn.self_reads for f, _ in reach.values())) if reach else set()
        for attr in attrs:
            for value in index.self_attr_values(ref, attr):
                for alt in value.alternatives():
                    if alt.kind == "call" and alt.ref and alt.ref.split(".", 1)[0] in SELF_SHARDING_LIBRARIES:
                        return True
        return False

    @staticmethod
    def _opaque_stream(index, ref, attr) -> bool:
        """The attribute holds an object given to the class or built by a call we cannot see into
        (another dataset, a reader), not a list built from files or literals."""
        values = index.self_attr_values(ref, attr)
        if not values:
            return False
        for value in values:
            for alt in value.alternatives():
                if alt.kind in ("const", "lambda"):
                    return False
                if alt.kind == "call" and (alt.ref is None or alt.ref.startswith(_SOURCE_LIST_PREFIXES)):
                    return False
                if alt.kind == "unknown" and alt.text.startswith(("[", "(", "{")):
                    return False
        return True

    @staticmethod
    def _from_outside(index, ref, attr) -> bool:
        values = index.self_attr_values(ref, attr)
        return any(alt.kind in ("param", "unknown") for v in values for alt in v.alternatives())

    @staticmethod
    def _torch_iterable_only(index, ref) -> bool:
        external = {canonical(b) for b in index.external_bases(ref)}
        if ITERABLE_DATASET not in external:
            return False
        allowed = {ITERABLE_DATASET, "torch.utils.data.Dataset", "typing.Generic", "abc.ABC", "builtins.object", "typing.Iterator", "collections.abc.Iterator"}
        return external <= allowed

    @staticmethod
    def _init_fn_may_shard(index, loader, sharding) -> bool:
        value = loader.call.args.get("worker_init_fn")
        if value is None:
            return False
        if all(alt.kind == "const" and alt.const is None for alt in value.alternatives()):
            return False
        targets = index.loader_callables(loader).get("worker_init_fn", [])
        if not targets:
            return True  # a worker_init_fn we cannot see: it may shard through get_worker_info().dataset
        reach = index.reachable(targets)
        return any(key in sharding for key in reach)
