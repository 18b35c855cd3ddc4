"""DL103 unpicklable-worker-state: what spawn/forkserver must pickle into each worker and cannot,
asked of the program model's values (dllint/program/values.py)."""

from __future__ import annotations

import ast
import functools

from dllint.model import Diagnostic, Fix, Span, are_edits
from dllint.project import replayable
from dllint.names import DATALOADER_CLASSES, DATALOADER_POSITIONAL, canonical
from dllint.program.values import Env, holds, replaced
from dllint.rules.base import Rule
from dllint.textutil import clip

CALLABLE_ARGS = ("collate_fn", "worker_init_fn")
LAMBDA_ERROR = "Can't pickle <function <lambda>>: attribute lookup <lambda> failed"
LOCAL_ERROR = "Can't pickle local object"
GENERATOR_ERROR = "cannot pickle 'generator' object"
PICKLE_HOOKS = ("__getstate__", "__reduce__", "__reduce_ex__")
# iterators pickle refuses (``iter(list)``, ``map``, ``zip``, ``enumerate`` pickle)
UNPICKLABLE_ITERATORS = {
    "os.scandir": "cannot pickle 'posix.ScandirIterator' object",
    "glob.iglob": GENERATOR_ERROR,
    "csv.reader": "cannot pickle '_csv.reader' object",
    "csv.DictReader": "cannot pickle '_csv.reader' object",
}
HANDLE_ERRORS = {
    "h5py.File": "h5py objects cannot be pickled",
    "lmdb.open": "cannot pickle 'Environment' object",
    "lmdb.Environment": "cannot pickle 'Environment' object",
    "sqlite3.connect": "cannot pickle 'sqlite3.Connection' object",
    "zipfile.ZipFile": "cannot pickle '_io.BufferedReader' object",
    "tarfile.open": "cannot pickle '_io.BufferedReader' object",
    "builtins.open": "cannot pickle '_io.TextIOWrapper' object",
}
LOCK_ERRORS = {
    "threading.RLock": "cannot pickle '_thread.RLock' object",
    "threading.Condition": "cannot pickle '_thread.RLock' object",
    "socket.socket": "cannot pickle 'socket' object",
    "cv2.VideoCapture": "cannot pickle 'cv2.VideoCapture' object",
}


def problem(v) -> tuple[str, str, str] | None:
    """(what, error, kind) when pickling a value fails."""
    for part in (v, v.elem) if v.elem is not None else (v,):
        if part.has("lambda"):
            return "a lambda", LOCAL_ERROR if part.has("local-lambda") else LAMBDA_ERROR, "lambda"
        if part.has("localfn"):
            name = part.detail.rsplit(".", 1)[-1]
            return f"`{name}`, defined inside a function", LOCAL_ERROR, "local"
        if part.has("localcls"):
            return f"an instance of `{part.cls.cls.name if part.cls else '?'}`, a class defined inside a function", LOCAL_ERROR, "local"
    if v.has("generator") and not v.has("list", "dict", "tuple", "set"):
        return "a generator", GENERATOR_ERROR, "generator"
    if v.has("iterator") and v.detail in UNPICKLABLE_ITERATORS and not v.has("list", "dict", "tuple", "set"):
        article = "an" if v.detail[:1] in "aeio" else "a"
        return f"{article} `{v.detail}` iterator", UNPICKLABLE_ITERATORS[v.detail], "generator"
    handle = v if v.has("handle", "file", "h5dataset") else v.elem if v.elem is not None and v.elem.has("handle", "file") and v.has("list", "dict", "tuple") else None
    if handle is not None and handle.detail != "PIL.Image.open":
        ctor = handle.detail if handle.has("handle", "h5dataset") else "builtins.open"
        error = HANDLE_ERRORS.get(ctor, "cannot pickle '_io.BufferedReader' object")
        what = "an open file" if ctor == "builtins.open" else f"an open handle (`{ctor}`)"
        if handle.has("h5dataset") and not handle.has("handle"):
            what = f"an h5py dataset object of an open `{ctor}`"
        if handle is not v:
            what = f"a container of {what.removeprefix('an ')}s"
        return what, error, "handle"
    if v.has("lock"):
        return f"a `{v.detail}`", LOCK_ERRORS.get(v.detail, "cannot pickle '_thread.lock' object"), "lock"
    if v.has("rng") and v.detail == "torch.Generator":
        return (
            "a `torch.Generator` (it pickles, but each worker dies unpickling it: pytorch/pytorch#146828)",
            "RuntimeError: unable to resize file <filename not specified> to the right size",
            "torch_generator",
        )
    return None


def _partial_name(ctx) -> tuple[str, bool]:
    """How the module names ``functools.partial``, and whether ``import functools`` must be added."""
    for name, binding in ctx.module_scope.bindings.items():
        if binding.kind == "import" and binding.qualname == "functools.partial":
            return name, False
    for name, binding in ctx.module_scope.bindings.items():
        if binding.kind == "import" and binding.qualname == "functools":
            return f"{name}.partial", False
    return "functools.partial", True


def partial_plan(ctx, lam: ast.Lambda):
    """(name of partial, add ``import functools``, what the lambda becomes) when ``lambda b:
    f(x, b, k=v)`` can become ``functools.partial(f, x, k=v)`` (the edits are built lazily,
    dllint/fixes/partial.py), or None."""
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
    partial, add_import = _partial_name(ctx)
    # what the lambda becomes, written from the source (the fix's message where no edits are
    # built: ``_partial_fix``; the edits' own text comes from libcst and keeps the layout)
    callee = ctx._source_segment(func)
    kept = [ctx._source_segment(x) for x in head] + [f"{k.arg}={ctx._source_segment(k.value)}" for k in body.keywords]
    text = f"{partial}({', '.join([callee, *kept])})" if kept else callee
    return partial, add_import, text


# ---------------------------------------------------------------------------- the rule


@replayable("dl103.lambda_to_partial")
def _partial_edits(project, path: str, span: Span, partial: str, add_import: bool):
    """(the replacement's code, edits) turning the lambda at ``span`` into a ``partial`` (and
    importing functools when ``add_import``), or None. Only the lambda's statement is parsed, and
    the module's head when an import is added."""
    from dllint.fixes.cst import import_edits, statement_source
    from dllint.fixes.partial import lambda_to_partial

    found = lambda_to_partial(statement_source(project, path, span), span, partial)
    if not found or not found[1]:
        return None
    code, edits, uses_partial = found
    if add_import and uses_partial:
        added = import_edits(project, path, ["functools"])
        if added is None:
            return None
        edits = tuple(sorted((*added, *edits), key=lambda e: (e.span.row, e.span.col)))
    return code, edits


def _partial_shape(v) -> bool:
    return type(v) is tuple and len(v) == 2 and type(v[0]) is str and are_edits(v[1])

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
            a function, a generator (`Path.iterdir()`, `(x for x in ...)`), an `os.scandir` /
            `glob.iglob` / `csv.reader` iterator, an open handle (`open`, `h5py.File` and its
            datasets, `lmdb.open`, `sqlite3.connect`, ...), a thread lock or queue, a socket,
            `cv2.VideoCapture`, a `torch.Generator`; a lambda passed to the dataset's constructor
            and stored on it; a Dataset class defined inside a function; a lambda or local
            function kept by a library dataset (a transform pipeline, however long, ending in
            `Lambda(lambda ...)`; each stage of a webdataset pipeline; a dataset class chosen at
            run time; subsets and folds of such a dataset); a lambda or locally defined function
            passed as `collate_fn=` / `worker_init_fn=` (also through a `**kwargs` dict, or by a
            DataLoader subclass's `super().__init__`), at every definition when a local function
            is defined on several branches. `self.x = f(self.x)` reads the value `self.x` has at
            that point, not the values it held before. One finding per hazard per line: an error
            when a loader that meets it resolves to spawn or forkserver, a warning when they all
            fork (it breaks on Python >= 3.14 Linux, macOS and Windows). Stays silent when the class defines `__getstate__`/`__reduce__`,
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

    def extract(self, ctx):
        """The partial() fix of each lambda passed as collate_fn= / worker_init_fn= (keyed by its
        position), and ``"defs"``: where each function defined inside a function is written, when
        one name is defined there more than once (``if seed: def init(i): ... else: def init(i):
        ...``: either may be the worker_init_fn)."""
        out: dict = {}
        defs: dict = {}
        for fn in ctx.functions:
            if ".<locals>." in fn.qualname:
                span = ctx.name_span(fn.node)
                defs.setdefault(fn.qualname, []).append((span.row, span.col, span.end_row, span.end_col))
        defs = {q: spans for q, spans in defs.items() if len(spans) > 1}
        if defs:
            out["defs"] = defs
        if "lambda" not in ctx.text:
            return out or None
        for node in ctx.nodes(ast.Call):
            values = [kw.value for kw in node.keywords if kw.arg in CALLABLE_ARGS]
            if canonical(ctx.call_name(node)) in DATALOADER_CLASSES:
                values += [a for i, a in enumerate(node.args) if i < len(DATALOADER_POSITIONAL) and DATALOADER_POSITIONAL[i] in CALLABLE_ARGS]
            for value in values:
                if isinstance(value, ast.Lambda):
                    plan = partial_plan(ctx, value)
                    if plan:
                        span = ctx.span(value)
                        out[(span.row, span.col)] = (span, *plan)
        return out or None

    def check(self, project):
        model = project.index
        # one finding per hazard per line, with the start methods of every loader that meets it
        pending: dict = {}

        def emit(path, span, subject, methods, error, fix=None):
            key = (path, span.row, error)
            entry = pending.get(key)
            if entry is None:
                pending[key] = [path, span, subject, set(methods), error, fix]
            else:
                entry[3] |= set(methods)
                entry[5] = entry[5] or fix

        yield from self._collect(project, model, emit)
        for path, span, subject, methods, error, fix in pending.values():
            fix = fix() if callable(fix) else fix
            spawn = sorted(m for m in methods if m in ("spawn", "forkserver"))
            if spawn:
                tail = f"{'/'.join(spawn)} workers fail to unpickle it"
                why = f"{'/'.join(spawn)} pickles the dataset into each worker: `{error}`"
                severity = "error"
            else:
                tail = "breaks under spawn/forkserver"
                why = f"spawn/forkserver (Python >= 3.14 on Linux, macOS, Windows) pickle the dataset into each worker: `{error}`"
                severity = "warning"
            message = f"{subject}: {tail}"
            if len(message) > 100:
                message = f"{clip(subject, 100 - len(tail) - 2)}: {tail}"
            yield Diagnostic(self.code, message, path, span, fix=fix, severity=severity, details=(("subject", subject), ("why", why)))

    def _collect(self, project, model, emit):
        """Hands every hazard to ``emit`` (a generator only for ``yield from``: it yields nothing)."""
        # 1. dataset state
        for ref in model.dataset_classes():
            if model.proven_without_workers(ref):
                continue
            used = model.worker_loaders(ref)
            if used and all(ld.context == "fork" for ld in used):
                continue  # an explicit fork context pickles nothing, on every Python and platform
            methods = model.start_methods_for(ref, used)
            if ref.cls.local:
                d = emit(ref.file.path, ref.cls.span, f"Dataset `{ref.cls.name}` is defined inside a function", methods, LOCAL_ERROR)
                if d:
                    yield d
            if any(model.find_method(ref, hook) for hook in PICKLE_HOOKS):
                continue
            yield from self._state(model, ref, methods, emit)

        # 2. collate_fn / worker_init_fn; a library Dataset given a lambda (transform=lambda ...)
        for loader in model.loaders:
            if not loader.may_start_workers or loader.context == "fork":
                continue
            for part in model.dataset_keeps(loader):
                found = problem(part)
                if found is None:
                    continue
                what, error, _kind = found
                for path, span in _written_at(project, model, part):
                    d = emit(path, span, f"{_sentence(what)} is kept by the loader's dataset", loader.start_methods, error)
                    if d:
                        yield d
            for arg in CALLABLE_ARGS:
                v = model.loader_arg(loader, arg)
                found = problem(v) if v is not None else None
                if found is None or found[2] not in ("lambda", "local"):
                    continue
                what, error, kind = found
                given = loader.call.args.get(arg)
                origin = next((w for w in v.why if len(w) >= 6), None)
                if given is not None:
                    span = given.span
                elif origin is not None and origin[1] == loader.file.path:
                    span = Span(*origin[2:6])  # stored in a dict passed as **kwargs: the lambda
                else:
                    continue
                local = v.detail if v.has("localfn") else ""
                fn = loader.file.functions.get(local)
                if fn is not None:
                    span = fn.span  # the function defined inside a function: where it is written
                    payload = project.payload(self.code, loader.file.path) or {}
                    for other in payload.get("defs", {}).get(local, ()):
                        if tuple(other[:2]) != (span.row, span.col):  # defined there more than once
                            d = emit(loader.file.path, Span(*other), f"`{arg}` is {what}", loader.start_methods, error)
                            if d:
                                yield d
                fix = None
                if kind == "lambda":
                    if loader.call.scope == loader.file.module:
                        error = LAMBDA_ERROR
                    plan = (project.payload(self.code, loader.file.path) or {}).get((span.row, span.col))
                    if plan:
                        fix = functools.partial(self._partial_fix, project, loader.file.path, *plan)  # built once, at the end
                d = emit(loader.file.path, span, f"`{arg}` is {what}", loader.start_methods, error, fix)
                if d:
                    yield d

    @staticmethod
    def _partial_fix(project, path, span, partial, add_import, text) -> Fix | None:
        if not project.edits:
            # only whether a fix exists (the `[*]` mark, the counts), decided from the file's facts
            # as DL101's is: no libcst (0.1 s to import) in a run printing no edits; the one
            # difference, a statement that ``ast`` reads and libcst cannot, loses the fix there
            return Fix("unsafe", f"Replace the lambda with `{text}`", ())
        found = project.remember("dl103.lambda_to_partial", path, (span, partial, add_import), _partial_shape)
        if found is None:
            return None
        return Fix("unsafe", f"Replace the lambda with `{found[0]}`", found[1])

    def _state(self, model, ref, methods, emit):
        """Attributes set before the workers start whose value cannot be pickled."""
        workers = set(model.worker_functions(ref))
        deleted = set()
        attrs = set()
        for fn in model.hierarchy_methods(ref):
            if fn.key not in workers:
                deleted |= fn.fn.flow.deletes
            attrs.update(fn.fn.flow.writes)
        for attr in sorted(attrs - deleted):
            writes = model.attr_writes(ref, attr)
            for fnref, write in writes:
                if write[0] != "=":
                    continue
                if any(f2.key == fnref.key and replaced(write, w2) for f2, w2 in writes):
                    continue  # rebound later in the same method (self.x = np.asarray(self.x))
                v = model.value(write[1], Env(fnref.file, fnref, ref))
                found = problem(v)
                if found is None:
                    continue
                before = _dominating_write(fnref, write, writes, attr)
                if before is not None and problem(model.value(before[1], Env(fnref.file, fnref, ref))) is None:
                    # self.x = self.x.reshape(...) after self.x = np.asarray(self.x): what it reads
                    # is the earlier write's value, which pickles (the attribute's other writes,
                    # replaced by then, do not reach it)
                    continue
                what, error, kind = found
                span = Span(write[2], write[3], write[5], write[6])
                path = fnref.file.path
                subject = f"`self.{attr}` on `{ref.cls.name}` holds {what}"
                origin = next((w for w in v.why if len(w) >= 5), None) if kind in ("lambda", "local") else None
                if origin is not None and (origin[1], origin[2]) != (path, write[2]) and write[1][0] == "p":
                    # a lambda passed to the constructor: point at it
                    path, span = origin[1], Span(*origin[2:6])
                    subject = f"{_sentence(what)} is stored on `{ref.cls.name}` as `self.{attr}`"
                d = emit(path, span, subject, methods, error)
                if d:
                    yield d


def _reads_attr(ir, attr: str) -> bool:
    """The IR of a value reads ``self.<attr>`` (anywhere: ``sorted(self.x)`` holds the read as
    the first element of its argument tuple)."""
    return holds(ir, ("s", attr))


def _dominating_write(fnref, write, writes, attr: str):
    """For ``self.x = f(self.x)``: the last earlier ``self.x = ...`` of the same method that always
    runs before it (in the same block or an enclosing one), or None."""
    if not _reads_attr(write[1], attr):
        return None
    best = None
    for f2, w2 in writes:
        if f2.key != fnref.key or w2[0] != "=" or w2[2] >= write[2]:
            continue
        if write[9][: len(w2[9])] == w2[9] and (best is None or w2[2] > best[2]):
            best = w2
    return best


def _written_at(project, model, part) -> list:
    """[(path, span)] where a lambda or a function defined inside a function is written (every
    definition of that name there)."""
    origin = next((w for w in part.why if len(w) >= 6), None)
    if origin is not None:
        return [(origin[1], Span(*origin[2:6]))]
    if not part.has("localfn"):
        return []
    out = []
    for w in part.why:
        facts = model.files.get(w[1]) if len(w) >= 3 else None
        fn = facts.functions.get(part.detail) if facts is not None else None
        if fn is None:
            continue
        spans = (project.payload("DL103", facts.path) or {}).get("defs", {}).get(part.detail) or [(fn.span.row, fn.span.col, fn.span.end_row, fn.span.end_col)]
        out.extend((facts.path, Span(*sp)) for sp in spans)
        break
    return out


def _sentence(what: str) -> str:
    """``what`` as a sentence's subject: first letter up, a trailing clause closed by a comma."""
    what = what[:1].upper() + what[1:]
    return what + "," if what.endswith("defined inside a function") else what
