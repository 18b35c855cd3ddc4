"""DL103 unpicklable-worker-state."""

from __future__ import annotations

import ast

from dllint.model import Diagnostic, Edit, Fix, Span
from dllint.names import DATALOADER_CLASSES, DATALOADER_POSITIONAL, canonical
from dllint.rules.base import Rule
from dllint.rules.dl104_handle_opened_in_init import (
    HANDLE_CTORS,
    PICKLE_HOOKS,
    handle_ctor,
)
from dllint.rules.dl202_unsharded_iterable_dataset import (
    pickling_methods,
    proven_without_workers,
    setup_functions,
    start_methods_for,
    worker_loaders,
)
from dllint.textutil import header_rows

# objects pickle refuses -> (what it is, the error pickling raises)
OTHER_CTORS = {
    "threading.Lock": ("a `threading.Lock`", "cannot pickle '_thread.lock' object"),
    "threading.RLock": ("a `threading.RLock`", "cannot pickle '_thread.RLock' object"),
    "threading.Condition": ("a `threading.Condition`", "cannot pickle '_thread.RLock' object"),
    "threading.Semaphore": ("a `threading.Semaphore`", "cannot pickle '_thread.lock' object"),
    "threading.BoundedSemaphore": ("a `threading.BoundedSemaphore`", "cannot pickle '_thread.lock' object"),
    "threading.Event": ("a `threading.Event`", "cannot pickle '_thread.lock' object"),
    "queue.Queue": ("a `queue.Queue`", "cannot pickle '_thread.lock' object"),
    "concurrent.futures.ThreadPoolExecutor": ("a thread pool", "cannot pickle '_thread.lock' object"),
    "socket.socket": ("a socket", "cannot pickle 'socket' object"),
    "cv2.VideoCapture": ("a `cv2.VideoCapture`", "cannot pickle 'cv2.VideoCapture' object"),
    "torch.Generator": (
        "a `torch.Generator` (it pickles, but each worker dies unpickling it: pytorch/pytorch#146828)",
        "RuntimeError: unable to resize file <filename not specified> to the right size",
    ),
}
HANDLE_ERRORS = {
    "h5py.File": "h5py objects cannot be pickled",
    "lmdb.open": "cannot pickle 'Environment' object",
    "lmdb.Environment": "cannot pickle 'Environment' object",
    "sqlite3.connect": "cannot pickle 'sqlite3.Connection' object",
}
# calls that keep a lambda argument inside the object they build
LAMBDA_HOLDERS = frozenset(
    {
        "collections.defaultdict",
        "functools.partial",
        "torchvision.transforms.Lambda",
        "torchvision.transforms.Compose",
        "torchvision.transforms.RandomApply",
        "torchvision.transforms.v2.Lambda",
        "torchvision.transforms.v2.Compose",
        "torchvision.transforms.v2.RandomApply",
        "albumentations.Compose",
        "albumentations.Lambda",
    }
)
CALLABLE_ARGS = ("collate_fn", "worker_init_fn")
LAMBDA_ERROR = "Can't pickle <function <lambda>>: attribute lookup <lambda> failed"
LOCAL_ERROR = "Can't pickle local object"


def handle_error(callee: str) -> str:
    if callee in HANDLE_ERRORS:
        return HANDLE_ERRORS[callee]
    return "cannot pickle '_io.TextIOWrapper' object" if callee == "builtins.open" else "cannot pickle '_io.BufferedReader' object"


def lambda_error(ctx, node) -> str:
    """A lambda inside a function is a local object; one at module level fails the name lookup."""
    scope = ctx.scope_of(node)
    while scope is not None:
        if scope.kind in ("function", "lambda"):
            return LOCAL_ERROR
        scope = scope.parent
    return LAMBDA_ERROR


def _local_qualname(ctx, node) -> str | None:
    """The qualified name of a function or class defined inside a function that ``node`` names."""
    if isinstance(node, ast.Name):
        binding = ctx.lookup(node.id, ctx.scope_of(node))
        if binding is not None and binding.kind in ("def", "class") and ".<locals>." in (binding.qualname or ""):
            return binding.qualname
    return None


def _generator_defs(ctx) -> set[str]:
    out = set()
    for fn in ctx.functions:
        for sub in ctx.walk_function(fn.node):
            if isinstance(sub, (ast.Yield, ast.YieldFrom)):
                out.add(fn.qualname)
                break
    return out


def unpicklable(ctx, node, generators, depth=0, callables_only=False):
    """(kind, what, error) when pickling the value of ``node`` fails, else None.
    ``callables_only``: only lambdas and local functions/classes (cheaper)."""
    if node is None or depth > 4:
        return None
    if isinstance(node, ast.Lambda):
        return "lambda", "a lambda", lambda_error(ctx, node)
    if isinstance(node, ast.GeneratorExp):
        return "generator", "a generator", "cannot pickle 'generator' object"
    local = _local_qualname(ctx, node)
    if local:
        return "local", f"`{local.rsplit('.', 1)[-1]}`, defined inside a function", LOCAL_ERROR
    if not callables_only and isinstance(node, (ast.ListComp, ast.DictComp, ast.SetComp, ast.List, ast.Tuple)):
        several = handle_ctor(ctx, node)
        if several and several[0] != "PIL.Image.open":
            desc = HANDLE_CTORS[several[0]].removeprefix("a ").removeprefix("an ")
            return "handle", f"one {desc} per item", handle_error(several[0])
    if isinstance(node, (ast.BoolOp, ast.IfExp)):  # `transform or Compose([...])`
        for option in node.values if isinstance(node, ast.BoolOp) else (node.body, node.orelse):
            found = unpicklable(ctx, option, generators, depth + 1, callables_only)
            if found:
                return found
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for elt in node.elts:
            found = unpicklable(ctx, elt, generators, depth + 1, callables_only=True)
            if found and found[0] in ("lambda", "local"):
                return found[0], found[1] if " inside " in found[1] else f"a container holding {found[1]}", found[2]
        return None
    if isinstance(node, ast.Dict):
        for elt in node.values:
            found = unpicklable(ctx, elt, generators, depth + 1, callables_only=True)
            if found and found[0] in ("lambda", "local"):
                return found[0], f"a dict holding {found[1]}", found[2]
        return None
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr == "manual_seed" and isinstance(node.func.value, ast.Call):
        return unpicklable(ctx, node.func.value, generators, depth + 1, callables_only)  # torch.Generator().manual_seed(0)
    local = _local_qualname(ctx, node.func)
    if local:
        return "local", f"an instance of `{local.rsplit('.', 1)[-1]}`, a class defined inside a function", LOCAL_ERROR
    callee = canonical(ctx.qualname(node.func))
    if callee in LAMBDA_HOLDERS:
        for arg in (*node.args, *(k.value for k in node.keywords)):
            found = unpicklable(ctx, arg, generators, depth + 1, callables_only=True)
            if found and found[0] in ("lambda", "local"):
                what = found[1] if " inside " in found[1] else f"{found[1]} inside `{ctx.segment(node.func, 40)}(...)`"
                return found[0], what, found[2]
    if callables_only:
        return None
    if callee in HANDLE_CTORS and callee != "PIL.Image.open":
        return "handle", HANDLE_CTORS[callee], handle_error(callee)
    if callee in OTHER_CTORS:
        what, error = OTHER_CTORS[callee]
        return ("torch_generator" if callee == "torch.Generator" else "lock"), what, error
    if callee in generators:
        return "generator", f"a generator (`{callee.rsplit('.', 1)[-1]}()` yields)", "cannot pickle 'generator' object"
    if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and generators:
        fn = ctx.method_of(node)
        if fn is not None and ctx.is_self_attr(node.func, fn) and f"{fn.cls.qualname}.{node.func.attr}" in generators:
            return "generator", f"a generator (`self.{node.func.attr}()` yields)", "cannot pickle 'generator' object"
    return None


# ---------------------------------------------------------------------------- fixes


def _source(ctx, node) -> str | None:
    try:
        return ast.get_source_segment(ctx.text, node)
    except Exception:  # pragma: no cover - odd positions
        return None


def _import_edit(ctx) -> tuple[str, Edit | None]:
    """The name to call ``partial`` by, and the edit adding ``import functools`` when needed."""
    for name, binding in ctx.module_scope.bindings.items():
        if binding.kind == "import" and binding.qualname == "functools.partial":
            return name, None
    for name, binding in ctx.module_scope.bindings.items():
        if binding.kind == "import" and binding.qualname == "functools":
            return f"{name}.partial", None
    body = ctx.tree.body
    row = header_rows(ctx.lines) + 1  # after a shebang / coding cookie
    i = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
        row = body[0].end_lineno + 1
        i = 1
    while i < len(body) and isinstance(body[i], (ast.Import, ast.ImportFrom)):
        row = body[i].end_lineno + 1
        i += 1
    if row > len(ctx.lines):
        return "functools.partial", Edit("\nimport functools", Span(len(ctx.lines), len(ctx.lines[-1]) + 1, len(ctx.lines), len(ctx.lines[-1]) + 1))
    return "functools.partial", Edit("import functools\n", Span(row, 1, row, 1))


def lambda_to_partial(ctx, lam: ast.Lambda):
    """Edits turning ``lambda b: f(x, b, k=v)`` into ``functools.partial(f, x, k=v)``, or None."""
    a = lam.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or not a.args:
        return None
    params = [p.arg for p in a.args]
    body = lam.body
    if not isinstance(body, ast.Call):
        return None

    def uses_params(node) -> bool:
        return any(isinstance(n, ast.Name) and n.id in params for n in ast.walk(node))

    func = body.func
    qual = ctx.qualname(func)
    if qual is None or ".<locals>." in qual or qual.startswith("builtins.") or uses_params(func):
        return None
    if len(body.args) < len(params) or any(isinstance(x, ast.Starred) for x in body.args):
        return None
    tail = body.args[len(body.args) - len(params) :]
    if [getattr(x, "id", None) for x in tail] != params or not all(isinstance(x, ast.Name) for x in tail):
        return None
    head = body.args[: len(body.args) - len(params)]
    if any(uses_params(x) for x in head) or any(k.arg is None or uses_params(k.value) for k in body.keywords):
        return None
    parts = [_source(ctx, func)]
    parts += [_source(ctx, x) for x in head]
    parts += [f"{k.arg}={_source(ctx, k.value)}" for k in body.keywords]
    if any(p is None for p in parts):
        return None
    edits = []
    if len(parts) == 1:
        text = parts[0]
    else:
        partial, imp = _import_edit(ctx)
        text = f"{partial}({', '.join(parts)})"
        if imp is not None:
            edits.append(imp)
    edits.append(Edit(text, ctx.span(lam)))
    return text, tuple(edits)


# ---------------------------------------------------------------------------- the rule


class UnpicklableWorkerState(Rule):
    code = "DL103"
    name = "unpicklable-worker-state"
    severity = "error"
    fix = "unsafe"
    triggers = (b"collate_fn", b"worker_init_fn")  # Dataset files are parsed anyway (core triggers)
    summary = "Dataset state, collate_fn or worker_init_fn that cannot be pickled: workers fail to start under spawn/forkserver (Python >= 3.14 Linux, macOS, Windows)."
    docs = {
        "What it does": """
            Flags what a DataLoader must pickle into each worker under spawn/forkserver and
            cannot: a Dataset attribute set before the workers start (in `__init__` or a helper
            it calls, base classes included) holding a lambda, a function or class defined inside
            a function, a generator, an open handle (`open`, `h5py.File`, `lmdb.open`,
            `sqlite3.connect`, ...), a thread lock or queue, a socket, `cv2.VideoCapture`, a
            `torch.Generator`; a lambda passed to the dataset's constructor and stored on it; a
            Dataset class defined inside a function; a lambda or locally defined function passed
            as `collate_fn=` / `worker_init_fn=`. An error when the loader's start method resolves
            to spawn or forkserver, a warning when it is fork (it breaks on Python >= 3.14 Linux,
            macOS and Windows). Stays silent when the class defines `__getstate__`/`__reduce__`,
            for attributes assigned in worker code (after unpickling), when every loader using
            the class is proven to run without workers, and when every loader passes an explicit
            `multiprocessing_context="fork"` (nothing is pickled, on any Python).
            """,
        "Why is this bad?": """
            Under spawn and forkserver (the default on macOS, Windows, and on Linux from Python
            3.14) the dataset, `collate_fn` and `worker_init_fn` are pickled into every worker at
            the start of every epoch. Pickling a lambda fails with `Can't pickle <function
            <lambda>>: attribute lookup <lambda> on __main__ failed` (even at module level), a
            nested function or class with `Can't pickle local object`, a file with `cannot pickle
            '_io.TextIOWrapper' object`, a lock with `cannot pickle '_thread.lock' object`
            (pytorch/pytorch#51836), h5py with `h5py objects cannot be pickled`, LMDB with
            `cannot pickle 'Environment' object`. torch 2.13 adds: "Got pickle error when
            attempting to start a worker Process ... Python 3.14+ changed the multiprocessing
            start method in non-Mac POSIX platforms to 'forkserver'".
            """,
        "Example": """
            ```python
            from torch.utils.data import DataLoader, Dataset, default_collate


            def pad(value, batch):
                return default_collate([x + value for x in batch])


            class Numbers(Dataset):
                def __init__(self, items):
                    self.items = items
                    self.scale = lambda x: 2 * x

                def __len__(self):
                    return len(self.items)

                def __getitem__(self, i):
                    return self.scale(self.items[i])


            loader = DataLoader(Numbers([1, 2]), num_workers=2, collate_fn=lambda b: pad(0, b))
            ```
            """,
        "Use instead": """
            ```python
            import functools

            from torch.utils.data import DataLoader, Dataset, default_collate


            def pad(value, batch):
                return default_collate([x + value for x in batch])


            def double(x):
                return 2 * x


            class Numbers(Dataset):
                def __init__(self, items):
                    self.items = items
                    self.scale = double

                def __len__(self):
                    return len(self.items)

                def __getitem__(self, i):
                    return self.scale(self.items[i])


            loader = DataLoader(Numbers([1, 2]), num_workers=2, collate_fn=functools.partial(pad, 0))
            ```
            Open handles lazily in the worker (see DL104); create locks with
            `multiprocessing.get_context("spawn").Lock()` or in the worker.
            """,
        "Fix safety": """
            Unsafe, and only for a lambda passed as `collate_fn=`/`worker_init_fn=` whose body
            calls a module-level function with the lambda's parameters last:
            `lambda b: pad(0, b, value=x)` becomes `functools.partial(pad, 0, value=x)` (adding
            `import functools` when needed). `partial` evaluates `pad`, `0` and `x` once, when
            the loader is built, where the lambda read them at every call: a name rebound later
            is no longer seen. Other findings have no fix: the state must move into the worker.
            """,
        "References": """
            - https://pytorch.org/docs/stable/data.html#platform-specific-behaviors
            - https://docs.python.org/3.14/library/multiprocessing.html#contexts-and-start-methods
            - pytorch/pytorch#51836, pytorch/pytorch#146828, NVIDIA/Megatron-Energon#252
            """,
    }

    # ------------------------------------------------------------------ facts

    def extract(self, ctx):
        generators = _generator_defs(ctx)
        attrs = {}
        for fn in ctx.functions:
            if not fn.self_name:
                continue
            last: dict[str, tuple] = {}
            for node in ctx.walk_function(fn.node):
                if isinstance(node, ast.Delete):
                    for t in node.targets:
                        if ctx.is_self_attr(t, fn):
                            last[t.attr] = None
                if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                    continue
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if ctx.is_self_attr(target, fn):
                        found = unpicklable(ctx, node.value, generators)
                        last[target.attr] = (target.attr, *found, ctx.span(node)) if found else None
            found = [v for v in last.values() if v is not None]
            if found:
                attrs[fn.qualname] = found
        callables = []
        stored = []
        # constructor arguments can only hold a lambda or a local def/class when the file has one
        may_hold = "lambda" in ctx.text or any(".<locals>." in f.qualname for f in ctx.functions) or any(c.local for c in ctx.classes)
        for node in ctx.nodes(ast.Call):
            callee = canonical(ctx.call_name(node))
            positional = {DATALOADER_POSITIONAL[i]: a for i, a in enumerate(node.args) if i < len(DATALOADER_POSITIONAL)} if callee in DATALOADER_CLASSES else {}
            for kw in node.keywords:
                if kw.arg:
                    positional[kw.arg] = kw.value
            for arg in CALLABLE_ARGS:
                value = positional.get(arg)
                found = self._callable_problem(ctx, value, generators)
                if found:
                    fix = lambda_to_partial(ctx, value) if isinstance(value, ast.Lambda) else None
                    error = lambda_error(ctx, value) if found[0] == "lambda" else LOCAL_ERROR
                    callables.append((ctx.span(node), arg, found[0], found[1], ctx.span(value), fix, error))
            if callee is None or callee in DATALOADER_CLASSES or not may_hold:
                continue
            for i, a in enumerate(node.args):
                found = unpicklable(ctx, a, generators, callables_only=True)
                if found and found[0] in ("lambda", "local"):
                    stored.append((callee, i, found[1], found[2], ctx.span(a)))
            for kw in node.keywords:
                found = unpicklable(ctx, kw.value, generators, callables_only=True) if kw.arg else None
                if found and found[0] in ("lambda", "local"):
                    stored.append((callee, kw.arg, found[1], found[2], ctx.span(kw.value)))
        if not attrs and not callables and not stored:
            return None
        return {"attrs": attrs, "callables": callables, "stored": stored}

    @staticmethod
    def _callable_problem(ctx, node, generators):
        if node is None:
            return None
        if isinstance(node, ast.Lambda):
            return "lambda", "a lambda"
        local = _local_qualname(ctx, node)
        if local:
            return "local", f"`{local.rsplit('.', 1)[-1]}`, defined inside a function"
        if isinstance(node, ast.Call):
            local = _local_qualname(ctx, node.func)
            if local:
                return "local", f"an instance of `{local.rsplit('.', 1)[-1]}`, a class defined inside a function"
            if canonical(ctx.qualname(node.func)) == "functools.partial" and node.args:
                inner = UnpicklableWorkerState._callable_problem(ctx, node.args[0], generators)
                if inner:
                    return inner[0], f"`functools.partial` of {inner[1]}"
        return None

    # ------------------------------------------------------------------ the join

    def check(self, project):
        index = project.index
        reported = set()

        def emit(path, span, subject, methods, error, fix=None):
            key = (path, span)
            if key in reported:
                return None
            reported.add(key)
            spawn = pickling_methods(methods)
            if spawn:
                tail = f"under {'/'.join(spawn)} every worker gets it pickled, which fails: `{error}`"
                severity = "error"
            else:
                tail = (
                    f"fine under fork, but spawn/forkserver pickle it (`{error}`): breaks on Python >= 3.14 Linux, "
                    "macOS, Windows"
                )
                severity = "warning"
            return Diagnostic(self.code, f"{subject}; {tail}", path, span, fix=fix, severity=severity)

        # 1. dataset state
        for ref in index.dataset_classes():
            if proven_without_workers(index, ref):
                continue
            used = worker_loaders(index, ref)
            if used and all(ld.context == "fork" for ld in used):
                continue  # an explicit fork context pickles nothing, on every Python and platform
            methods = start_methods_for(index, ref, used)
            if ref.cls.local:
                d = emit(
                    ref.file.path,
                    ref.cls.span,
                    f"Dataset `{ref.cls.name}` is defined inside a function: workers cannot import it",
                    methods,
                    LOCAL_ERROR,
                )
                if d:
                    yield d
            if any(index.find_method(ref, hook) for hook in PICKLE_HOOKS):
                continue
            init = index.find_method(ref, "__init__")
            if init is None:
                continue
            for f in setup_functions(index, ref, init):
                entry = project.payload(self.code, f.file.path)
                for attr, kind, what, error, span in (entry or {}).get("attrs", {}).get(f.fn.qualname, ()):
                    subject = f"`self.{attr}` on Dataset `{ref.cls.name}` holds {what} (set in `{f.fn.name}`)"
                    d = emit(f.file.path, span, subject, methods, error)
                    if d:
                        yield d
            # lambdas given to the constructor and stored on the instance
            yield from self._stored(project, ref, init, methods, emit)

        # 2. collate_fn / worker_init_fn
        loaders = {(ld.file.path, ld.call.span): ld for ld in index.loaders}
        for facts, payload in project.payloads(self.code):
            for call_span, arg, kind, what, span, fix, error in payload["callables"]:
                loader = loaders.get((facts.path, call_span))
                if loader is None or not loader.may_start_workers or loader.context == "fork":
                    continue
                edit = Fix("unsafe", f"Replace the lambda with `{fix[0]}`", fix[1]) if fix else None
                d = emit(facts.path, span, f"`{arg}` is {what}", loader.start_methods, error, edit)
                if d:
                    yield d

    def _stored(self, project, ref, init, methods, emit):
        index = project.index
        params = init.fn.params[1:]
        stored_params = {}
        for attr, values in init.fn.self_writes.items():
            for value in values:
                for alt in value.alternatives():
                    if alt.kind == "param" and alt.ref:
                        stored_params[alt.ref] = attr
        if not stored_params:
            return
        for facts, payload in project.payloads(self.code):
            for callee, where, what, error, span in payload["stored"]:
                found = index.resolve_class(callee, facts.root)
                if found is None or found.key != ref.key:
                    continue
                name = params[where] if isinstance(where, int) and where < len(params) else where
                attr = stored_params.get(name) if isinstance(name, str) else None
                if attr is None:
                    continue
                d = emit(facts.path, span, f"`{name}` is {what}, stored on Dataset `{ref.cls.name}` as `self.{attr}`", methods, error)
                if d:
                    yield d
