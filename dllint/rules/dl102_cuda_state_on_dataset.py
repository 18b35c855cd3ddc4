"""DL102 cuda-state-on-dataset."""

from __future__ import annotations

import ast

from dllint.model import Diagnostic, Edit, Fix, Span
from dllint.rules.base import Rule
from dllint.rules.dl201_cuda_in_worker import (
    CUDA,
    MAYBE,
    _device_arg,
    _imported_receiver,
    dataset_use,
    device_kind,
    fork_severity,
    owners,
    start_method_phrase,
    start_methods_of,
    worker_code,
)
from dllint.rules.dl301_missing_multiprocessing_context import (
    dataset_call_key,
    insertion_point,
)

# methods whose result is no longer on the GPU (or not a tensor)
_OFF_GPU = frozenset({"cpu", "numpy", "tolist", "item", "size", "numel", "dim", "keys", "values", "items"})


def cuda_value(ctx, node, depth: int = 0):
    """(what, kind, fix point) when an expression evaluates to CUDA state, else None.

    The fix point is where `map_location="cpu"` goes in a `torch.load(...)` without one."""
    if node is None or depth > 4:
        return None
    if isinstance(node, ast.Subscript):
        return cuda_value(ctx, node.value, depth + 1)
    if isinstance(node, ast.Name):
        binding = ctx.lookup(node.id, ctx.scope_of(node))
        if binding is None or binding.kind != "local":
            return None
        for value in binding.values:
            found = cuda_value(ctx, value, depth + 1)
            if found:
                return found
        return None
    if not isinstance(node, ast.Call):
        return None
    callee = ctx.call_name(node)
    func = node.func
    if callee == "torch.load":
        if any(k.arg is None for k in node.keywords):
            return None  # **kwargs may hold map_location
        location = _device_arg(node, 1, "map_location")
        if location is None:
            point = insertion_point(ctx, node) if node.args else None
            return f"`{ctx.segment(node, 50)}` without `map_location`", MAYBE, point
        kind = device_kind(ctx, location)
        return (f"`{ctx.segment(node, 50)}`", kind, None) if kind else None
    if isinstance(func, ast.Attribute) and ctx.is_self_attr(func):
        # self._make() building the value in a method of the same class: what it returns
        method = ctx.method_of(node)
        target = method.cls.methods.get(func.attr) if method is not None else None
        info = ctx.func_by_node.get(id(target)) if target is not None else None
        if info is not None:
            for sub in ctx.walk_function(info.node):
                if isinstance(sub, ast.Return):
                    found = cuda_value(ctx, sub.value, depth + 1)
                    if found:
                        return found
            return None
    if isinstance(func, ast.Attribute) and not _imported_receiver(ctx, func):
        if func.attr == "cuda":
            return f"`{ctx.segment(node, 50)}`", CUDA, None
        if func.attr == "to":
            kind = device_kind(ctx, _device_arg(node, 0, "device"))
            return (f"`{ctx.segment(node, 50)}`", kind, None) if kind else None
        if func.attr in _OFF_GPU:
            return None
        device = next((k.value for k in node.keywords if k.arg == "device"), None)
        if device is not None and func.attr.startswith("new_"):
            kind = device_kind(ctx, device)
            return (f"`{ctx.segment(node, 50)}`", kind, None) if kind else None
        return cuda_value(ctx, func.value, depth + 1)  # t.float(), net.eval(): same device
    device = next((k.value for k in node.keywords if k.arg == "device"), None)
    if device is not None and callee and callee.startswith("torch.") and not callee.startswith("torch.cuda."):
        if callee == "torch.device":
            return None
        kind = device_kind(ctx, device)
        return (f"`{ctx.segment(node, 50)}`", kind, None) if kind else None
    return None


# Library Datasets that keep the tensors they are given: CUDA tensors handed to them are CUDA
# state on the Dataset just like ``self.x = t.cuda()``.
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.StackDataset"})
TENSOR_DATASETS_KEY = "<tensor-datasets>"  # payload key (never a qualname)


class CudaStateOnDataset(Rule):
    code = "DL102"
    name = "cuda-state-on-dataset"
    severity = "error"
    fix = "unsafe"
    summary = "CUDA tensors or modules created in a Dataset's `__init__` and read in worker code: fails under fork."
    docs = {
        "What it does": """
            Finds CUDA state created in a Dataset's `__init__` and kept on the instance --
            `self.x = t.cuda()`, `self.x = t.to("cuda")`, `self.x = torch.randn(..., device="cuda")`,
            `self.model = Net().cuda()`, `self.data = torch.load(path)` without `map_location`
            (tensors saved from a GPU come back on the GPU) -- and reports it when worker code
            (`__getitem__`, `__iter__` and what they call) reads that attribute. Severity follows
            the loaders using the class: error under fork, warning under spawn/forkserver, info
            when no loader with workers was seen; silent when every loader has no workers.
            """,
        "Why is this bad?": """
            The tensor lives on the GPU of the parent process. A forked worker that touches it
            needs CUDA, which cannot be re-initialized after fork: `RuntimeError: Cannot
            re-initialize CUDA in forked subprocess`. Under spawn each worker receives the
            tensor through CUDA IPC and creates its own CUDA context.
            """,
        "Example": """
            ```python
            class Embeddings(Dataset):
                def __init__(self, path):
                    self.table = torch.load(path)            # saved from a GPU
                def __getitem__(self, i):
                    return self.table[i]
            ```
            """,
        "Use instead": """
            ```python
            class Embeddings(Dataset):
                def __init__(self, path):
                    self.table = torch.load(path, map_location="cpu")
                def __getitem__(self, i):
                    return self.table[i]
            ```
            """,
        "Fix safety": """
            `torch.load(...)` gets `map_location="cpu"`: unsafe, because the loaded object is
            then on the CPU for every user of the attribute, also code in the main process that
            expected it on the GPU. Other CUDA state has no automatic fix (keep it on the CPU, or
            create it in the training loop).
            """,
        "References": """
            - https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing
            - https://pytorch.org/docs/stable/generated/torch.load.html
            - pytorch/pytorch#40403
            """,
    }

    def extract(self, ctx):
        out: dict[str, list] = {}
        for info in ctx.classes:
            init = info.methods.get("__init__")
            fn = ctx.func_by_node.get(id(init)) if init is not None else None
            if fn is None or not fn.self_name:
                continue
            found = []
            for method in self._init_methods(ctx, info, fn):
                found.extend(self._cuda_assignments(ctx, method))
            if found:
                out[info.qualname] = found
        tensor_datasets = []
        for node in ctx.nodes(ast.Call) if ("TensorDataset" in ctx.text or "StackDataset" in ctx.text) else ():
            if ctx.call_name(node) in TENSOR_DATASETS:
                for arg in (*node.args, *(k.value for k in node.keywords)):
                    hit = cuda_value(ctx, arg)
                    if hit:
                        span = ctx.span(node)
                        tensor_datasets.append(((span.row, span.col), *hit, ctx.span(arg)))
                        break
        if tensor_datasets:
            out[TENSOR_DATASETS_KEY] = tensor_datasets
        return out or None

    def _loader_sites(self, project):
        """[(loader, name, what, kind, point, span)]: TensorDataset(<CUDA tensors>) given to a
        loader that may start workers."""
        out = []
        for loader in project.index.loaders:
            value = loader.call.args.get("dataset")
            if value is None or not loader.may_start_workers:
                continue
            payload = project.payload(self.code, loader.file.path) or {}
            entries = {e[0]: e for e in payload.get(TENSOR_DATASETS_KEY, ())}
            for alt in value.alternatives():
                entry = entries.get((alt.span.row, alt.span.col)) if alt.kind == "call" else None
                if entry is not None:
                    _, what, kind, point, span = entry
                    out.append((loader, alt, what, kind, point, span))
        return out

    @staticmethod
    def _init_methods(ctx, info, init):
        """``__init__`` and the methods of the same class it calls as ``self.m()`` (two levels):
        ``self._load()`` filling attributes is still construction, in the main process."""
        chosen = [init]
        frontier = [init]
        for _ in range(2):
            nxt = []
            for fn in frontier:
                for node in ctx.walk_function(fn.node):
                    if (
                        isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute)
                        and ctx.is_self_attr(node.func, fn)
                        and node.func.attr in info.methods
                        and node.func.attr not in ("__getitem__", "__iter__", "__next__", "__getitems__")
                    ):
                        method = ctx.func_by_node.get(id(info.methods[node.func.attr]))
                        if method is not None and method.self_name and all(m is not method for m in chosen):
                            chosen.append(method)
                            nxt.append(method)
            frontier = nxt
        return chosen

    @staticmethod
    def _cuda_assignments(ctx, fn):
        found = []
        for node in ctx.walk_function(fn.node):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                attrs = [t.attr for t in targets if ctx.is_self_attr(t, fn)]
                if attrs:
                    hit = cuda_value(ctx, node.value)
                    if hit:
                        for attr in attrs:
                            found.append((attr, *hit, ctx.span(node.value)))
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                # self.model.cuda() / self.model.to("cuda"): a module moved in place
                call = node.value
                if isinstance(call.func, ast.Attribute) and call.func.attr in ("cuda", "to"):
                    target = call.func.value
                    if ctx.is_self_attr(target, fn):
                        hit = cuda_value(ctx, call)
                        if hit:
                            found.append((target.attr, *hit, ctx.span(call)))
        return found

    def _sites(self, project):
        """{(path, span): [attr, what, kind, point, uses, readers]}"""
        index = project.index
        sites: dict = {}
        for ref in index.dataset_classes():
            use = None
            chain = index.mro(ref)
            hazards = []
            for r in chain:
                payload = project.payload(self.code, r.file.path) or {}
                for item in payload.get(r.cls.qualname, ()):
                    hazards.append((r.file.path, item))
            if not hazards:
                continue
            use = dataset_use(index, ref)
            if use is None:
                continue
            quals = {r.cls.qualname for r in chain}
            readers: dict[str, str] = {}
            for fn, _ in worker_code(index, ref).values():
                if fn.fn.cls in quals:
                    for attr in fn.fn.self_reads:
                        readers.setdefault(attr, fn.fn.name)
            for path, (attr, what, kind, point, span) in hazards:
                if attr not in readers:
                    continue
                site = sites.setdefault((path, span), [attr, what, kind, point, [], readers[attr]])
                site[4].append(use)
        return sites

    @staticmethod
    def _map_location_fix(point) -> Fix | None:
        if point is None:
            return None
        row, col, comma = point
        return Fix(
            "unsafe",
            'Add `map_location="cpu"` (the object is then on the CPU in the main process too)',
            (Edit(', map_location="cpu"' if comma else 'map_location="cpu"', Span(row, col, row, col)),),
        )

    def check(self, project):
        for loader, alt, what, kind, point, span in self._loader_sites(project):
            methods = set(loader.start_methods)
            severity = "error" if "fork" in methods else "warning"
            if severity == "error":
                why = start_method_phrase(severity, methods)
            else:
                why = "under spawn/forkserver each worker gets it through CUDA IPC and creates its own CUDA context"
            state = "is CUDA state" if kind == CUDA else "may be CUDA state"
            name = (alt.ref or "TensorDataset").rsplit(".", 1)[-1]
            yield Diagnostic(
                self.code,
                f"{what} {state} kept by the `{name}` of a DataLoader that starts workers: {why}; keep the "
                "tensors on the CPU and move batches to the GPU in the training loop",
                loader.file.path,
                span,
                fix=self._map_location_fix(point),
                severity=severity,
            )
        for (path, span), (attr, what, kind, point, uses, reader) in self._sites(project).items():
            severity = fork_severity(uses, project.settings)
            if severity is None:
                continue
            if severity == "error":
                why = start_method_phrase(severity, start_methods_of(uses, project.settings))
            elif severity == "warning":
                why = "under spawn/forkserver each worker gets it through CUDA IPC and creates its own CUDA context"
            else:
                why = 'no DataLoader with workers seen using it, but forked workers would fail with "Cannot re-initialize CUDA in forked subprocess"'
            state = "is CUDA state" if kind == CUDA else "may be CUDA state"
            fix = self._map_location_fix(point)
            yield Diagnostic(
                self.code,
                f"`self.{attr}` = {what} {state} created in `__init__` and read in worker code "
                f"(`{reader}` of {owners(uses)}): {why}; keep it on the CPU",
                path,
                span,
                fix=fix,
                severity=severity,
            )

    def fork_hazards(self, project):
        out: dict[str, list] = {}
        for loader, alt, what, kind, point, span in self._loader_sites(project):
            key = dataset_call_key(loader.file.path, alt.span.row, alt.span.col)
            out.setdefault(key, []).append((f"{what} is CUDA state kept by the Dataset (DL102)", loader.file.path, span.row))
        for (path, span), (attr, what, kind, point, uses, reader) in self._sites(project).items():
            for use in uses:
                out.setdefault(use.owner_qualname, []).append(
                    (f"`self.{attr}` holds CUDA state ({what}) read in a worker (DL102)", path, span.row)
                )
        return out
