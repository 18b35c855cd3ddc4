"""DL201 cuda-in-worker.

Also holds the helpers the other worker-hazard rules (DL102, DL204, DL301) share: deciding
whether an expression is a CUDA device, finding CUDA-initializing calls, and working out which
loaders run a piece of worker code (and so which severity a finding gets).
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field

from dllint.model import Diagnostic
from dllint.names import canonical
from dllint.rules.base import Rule

_CUDA_STR = re.compile(r"^cuda(:\d+)?$")

# torch.cuda functions that initialize the CUDA runtime (torch.cuda._lazy_init) when called.
CUDA_INIT_FUNCTIONS = frozenset(
    {
        "torch.cuda.init",
        "torch.cuda.current_device",
        "torch.cuda.set_device",
        "torch.cuda.synchronize",
        "torch.cuda.get_device_properties",
        "torch.cuda.get_device_name",
        "torch.cuda.get_device_capability",
        "torch.cuda.mem_get_info",
        "torch.cuda.current_stream",
        "torch.cuda.Stream",
    }
)
# Calls that look like CUDA but do not initialize it (kept for the docs and the tests).
CUDA_NON_INIT = frozenset(
    {
        "torch.cuda.is_available",
        "torch.cuda.device_count",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "torch.device",
    }
)

MAYBE = "maybe"
CUDA = "cuda"


def _combine(kinds) -> str | None:
    kinds = list(kinds)
    if not kinds:
        return None
    if all(k == CUDA for k in kinds):
        return CUDA
    if any(k in (CUDA, MAYBE) for k in kinds):
        return MAYBE
    return None


def device_kind(ctx, node, depth: int = 0) -> str | None:
    """"cuda" when ``node`` certainly names a CUDA device, "maybe" when one of its possible values
    does (``"cuda" if torch.cuda.is_available() else "cpu"``), None when it cannot be told (an
    unknown parameter) or names another device."""
    if node is None or depth > 6:
        return None
    if isinstance(node, ast.Constant):
        return CUDA if isinstance(node.value, str) and _CUDA_STR.match(node.value) else None
    if isinstance(node, ast.JoinedStr):
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("cuda"):
            return CUDA
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        # "cuda:%d" % rank, "cuda:" + str(rank)
        left = node.left
        if isinstance(left, ast.Constant) and isinstance(left.value, str) and left.value.startswith("cuda:"):
            return CUDA
        return None
    if isinstance(node, ast.IfExp):
        return _combine([device_kind(ctx, node.body, depth + 1), device_kind(ctx, node.orelse, depth + 1)])
    if isinstance(node, ast.BoolOp):
        return _combine(device_kind(ctx, v, depth + 1) for v in node.values)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant):
            text = func.value.value  # "cuda:{}".format(rank)
            return CUDA if isinstance(text, str) and text.startswith("cuda:") else None
        if ctx.call_name(node) == "torch.device":
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "type"), None)
            return device_kind(ctx, arg, depth + 1)
        return None
    if isinstance(node, ast.Name):
        binding = ctx.lookup(node.id, ctx.scope_of(node))
        if binding is None or binding.kind != "local" or not binding.values:
            return None  # parameters, imports, unknown names: cannot be decided
        return _combine(device_kind(ctx, v, depth + 1) for v in binding.values)
    if isinstance(node, ast.Attribute):
        fn = ctx.method_of(node)
        if fn is not None and ctx.is_self_attr(node, fn):
            values = fn.cls.self_assigns.get(node.attr)
            if values:
                return _combine(device_kind(ctx, v, depth + 1) for v in values)
    return None


def _device_arg(call: ast.Call, position: int, keyword: str):
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return call.args[position]
    return None


def _imported_receiver(ctx, func: ast.Attribute) -> bool:
    """``module.attr(...)``: the chain starts at an imported name (a function, not a method)."""
    node = func.value
    while isinstance(node, ast.Attribute):
        node = node.value
    if not isinstance(node, ast.Name):
        return False
    binding = ctx.lookup(node.id, ctx.scope_of(node))
    return binding is not None and binding.kind == "import"


def cuda_call(ctx, call: ast.Call) -> tuple[str, str] | None:
    """(what, kind) when a call initializes CUDA: kind "cuda" or "maybe"."""
    func = call.func
    callee = ctx.call_name(call)
    if callee in CUDA_INIT_FUNCTIONS:
        return f"`{callee}()`", CUDA
    if callee and callee.startswith("torch.cuda.") and callee.endswith("Tensor"):
        return f"`{callee}(...)`", CUDA
    if callee == "torch.load":
        kind = device_kind(ctx, _device_arg(call, 1, "map_location"))
        if kind:
            return f"`torch.load(..., map_location={ctx.segment(_device_arg(call, 1, 'map_location'), 30)})`", kind
        return None
    if isinstance(func, ast.Attribute) and not _imported_receiver(ctx, func):
        if func.attr == "cuda":
            return f"`{ctx.segment(call, 50)}`", CUDA
        if func.attr == "pin_memory":
            return f"`{ctx.segment(call, 50)}` (pinned memory)", CUDA
        if func.attr == "to":
            kind = device_kind(ctx, _device_arg(call, 0, "device"))
            if kind:
                return f"`{ctx.segment(call, 50)}`", kind
            return None
    device = next((k.value for k in call.keywords if k.arg == "device"), None)
    if device is not None and callee != "torch.device":
        torch_factory = callee is not None and callee.startswith("torch.") and not callee.startswith("torch.cuda.")
        tensor_method = (
            isinstance(func, ast.Attribute) and func.attr.startswith("new_") and not _imported_receiver(ctx, func)
        )
        if torch_factory or tensor_method:
            kind = device_kind(ctx, device)
            if kind:
                return f"`{ctx.segment(call, 50)}`", kind
    return None


def cuda_calls_in(ctx, fn_node) -> list[tuple[str, str, object]]:
    """[(what, kind, span)] of the CUDA-initializing calls in a function body."""
    out = []
    for node in ctx.walk_function(fn_node):
        if isinstance(node, ast.Call):
            found = cuda_call(ctx, node)
            if found:
                out.append((found[0], found[1], ctx.span(node)))
    return out


# ---------------------------------------------------------------------------- who runs worker code


@dataclass
class Use:
    """One way a function runs in DataLoader workers."""

    owner: str  # "dataset `Ds`" / "collate_fn `pad`"
    owner_qualname: str
    loaders: list = field(default_factory=list)  # loaders that may run it with workers
    no_loader: bool = False  # a Dataset no loader was seen using


# Library Dataset bases whose own __getitem__ hands the work to a method the user writes.
LIBRARY_ENTRY_METHODS = {
    "torch_geometric.data.Dataset": ("get",),
    "torch_geometric.data.dataset.Dataset": ("get",),
    "torch_geometric.data.InMemoryDataset": ("get",),
    "monai.data.Dataset": ("_transform",),
}


def worker_code(index, ref) -> dict:
    """A Dataset class's worker code: ``index.worker_functions`` plus the methods a library base
    class's ``__getitem__`` calls (torch_geometric's ``get``)."""
    found = dict(index.worker_functions(ref))
    extra = {m for base in index.external_bases(ref) for m in LIBRARY_ENTRY_METHODS.get(canonical(base) or "", ())}
    roots = [f for name in sorted(extra) if (f := index.find_method(ref, name)) is not None]
    if roots:
        for key, value in index.reachable(roots, ref).items():
            found.setdefault(key, value)
    return found


def dataset_use(index, ref) -> Use | None:
    """How a Dataset class runs in workers; None when every loader using it has no workers."""
    loaders = index.loaders_using(ref)
    active = [ld for ld in loaders if ld.may_start_workers]
    if loaders and not active:
        return None  # every loader using it runs in the main process
    return Use(f"dataset `{ref.cls.name}`", ref.cls.qualname, active, not loaders)


def worker_uses(index) -> dict[tuple[str, str], list[Use]]:
    """Function key -> how it runs in workers: through a Dataset class (its entry methods and what
    they call) or through a loader's collate_fn / worker_init_fn. A Dataset whose every loader
    provably has no workers contributes nothing."""
    out: dict[tuple[str, str], list[Use]] = {}
    for ref in index.dataset_classes():
        use = dataset_use(index, ref)
        if use is None:
            continue
        for key in worker_code(index, ref):
            out.setdefault(key, []).append(use)
    for loader in index.loaders:
        if not loader.may_start_workers:
            continue
        for arg, targets in index.loader_callables(loader).items():
            for target in targets:
                use = Use(f"{arg} `{target.fn.name}`", target.fn.qualname, [loader])
                for key in index.reachable([target]):
                    out.setdefault(key, []).append(use)
    return out


def start_methods_of(uses: list[Use], settings) -> set[str]:
    methods: set[str] = set()
    for use in uses:
        for loader in use.loaders:
            methods.update(loader.start_methods)
    return methods


def fork_severity(uses: list[Use], settings) -> str | None:
    """error when a loader running the code may start its workers with fork, warning for
    spawn/forkserver, info when no loader with workers was seen."""
    if any(use.loaders for use in uses):
        return "error" if "fork" in start_methods_of(uses, settings) else "warning"
    if any(use.no_loader for use in uses):
        return "info"
    return None


def owners(uses: list[Use]) -> str:
    names = sorted({u.owner for u in uses})
    return names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"


def display(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def start_method_phrase(severity: str, methods: set[str] | None = None) -> str:
    if severity == "error":
        how = "start with fork here" if not methods or set(methods) == {"fork"} else "start with fork on some targets"
        return f'workers {how} and fail with "Cannot re-initialize CUDA in forked subprocess"'

    if severity == "warning":
        return "under spawn/forkserver each worker creates its own CUDA context (GPU memory per worker)"
    return "no DataLoader with workers seen using it, but forked workers would fail with \"Cannot re-initialize CUDA in forked subprocess\""


class CudaInWorker(Rule):
    code = "DL201"
    name = "cuda-in-worker"
    severity = "error"
    summary = "CUDA initialized in DataLoader worker code (`__getitem__`, collate_fn, worker_init_fn): fails under fork."
    docs = {
        "What it does": """
            Finds calls that initialize CUDA in code that runs inside DataLoader workers: a
            Dataset's `__getitem__`, `__getitems__`, `__iter__`, `__next__`, a loader's
            `collate_fn` and `worker_init_fn`, and the project functions and methods they call
            (also in other files). Initializing calls: `.cuda()`, `.to("cuda")` /
            `.to(torch.device("cuda"))` / `.to(self.device)` where the device is CUDA, factories
            with `device="cuda"`, `.pin_memory()`, `torch.cuda.current_device / set_device /
            synchronize / get_device_properties / get_device_name`,
            `torch.Generator(device="cuda")`, `torch.load(..., map_location="cuda")`. The
            `"cuda" if torch.cuda.is_available() else "cpu"` idiom counts (the message says
            "may"). Not flagged: `torch.device("cuda")` alone, `torch.cuda.manual_seed(_all)`,
            `torch.cuda.is_available()` / `device_count()`, cudnn flags, `.to(device)` with a
            device that cannot be decided (a parameter).

            Severity: error when a loader running the code may start its workers with fork
            (Linux, Python <= 3.13, no `multiprocessing_context`); warning under spawn or
            forkserver; info when no loader with workers was seen. Silent when every loader
            using the Dataset provably runs without workers.
            """,
        "Why is this bad?": """
            A forked child cannot use CUDA once the parent has touched it (and
            `DataLoader(pin_memory=True)` or `torch.cuda.is_available()` already does): the
            worker dies with `RuntimeError: Cannot re-initialize CUDA in forked subprocess. To
            use CUDA with multiprocessing, you must use the 'spawn' start method`. Under spawn it
            works, but every worker creates its own CUDA context (hundreds of MB of GPU memory
            each), and `pin_memory=True` then fails on CUDA tensors.
            """,
        "Example": """
            ```python
            class Images(Dataset):
                def __getitem__(self, i):
                    return load(self.paths[i]).cuda()

            loader = DataLoader(Images(paths), num_workers=4)
            ```
            """,
        "Use instead": """
            ```python
            class Images(Dataset):
                def __getitem__(self, i):
                    return load(self.paths[i])          # CPU tensor

            loader = DataLoader(Images(paths), num_workers=4, pin_memory=True)
            for batch in loader:
                batch = batch.to("cuda", non_blocking=True)
            ```
            """,
        "Fix safety": "No automatic fix: moving work out of the worker changes the training loop.",
        "References": """
            - https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing
            - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
            - pytorch/pytorch#40403, #77159, #2971
            """,
    }

    def extract(self, ctx):
        out = {}
        for fn in ctx.functions:
            calls = cuda_calls_in(ctx, fn.node)
            if calls:
                out[fn.qualname] = calls
        return out or None

    def wants(self, index):
        """The files this rule's worker code reaches (beyond ``index.worker_functions``: the
        methods a library base's ``__getitem__`` calls), asked for by their resolutions."""
        with index.quietly(False):
            for ref in index.dataset_classes():
                worker_code(index, ref)
        return set()

    def _sites(self, project):
        """[(path, what, kind, span, uses)] for each CUDA call in worker code."""
        index = project.index
        sites = []
        for key, uses in worker_uses(index).items():
            path, qualname = key
            payload = project.payload(self.code, path)
            if not payload or qualname not in payload:
                continue
            for what, kind, span in payload[qualname]:
                sites.append((path, what, kind, span, uses))
        return sites

    def check(self, project):
        for path, what, kind, span, uses in self._sites(project):
            severity = fork_severity(uses, project.settings)
            if severity is None:
                continue
            verb = "initializes CUDA" if kind == CUDA else "may initialize CUDA (the device is CUDA when available)"
            yield Diagnostic(
                self.code,
                f"{what} {verb} in DataLoader worker code ({owners(uses)}): "
                f"{start_method_phrase(severity, start_methods_of(uses, project.settings))}; "
                "return CPU tensors and move batches to the GPU in the training loop",
                path,
                span,
                severity=severity,
            )

    def fork_hazards(self, project):
        out: dict[str, list] = {}
        for path, what, kind, span, uses in self._sites(project):
            verb = "initializes" if kind == CUDA else "may initialize"
            for use in uses:
                out.setdefault(use.owner_qualname, []).append(
                    (f"{what} {verb} CUDA in a worker (DL201)", path, span.row)
                )
        return out
