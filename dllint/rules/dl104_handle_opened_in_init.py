"""DL104 handle-opened-in-init."""

from __future__ import annotations

import ast

from dllint.model import Diagnostic, Edit, Fix, Span
from dllint.names import canonical
from dllint.rules.base import Rule
from dllint.rules.dl202_unsharded_iterable_dataset import (
    in_hierarchy,
    proven_without_workers,
    setup_functions,
    start_methods_for,
)
from dllint.textutil import header_rows

# constructors of handles that must not cross a fork -> how the message names them
HANDLE_CTORS = {
    "builtins.open": "a file handle (`open()`)",
    "io.open": "a file handle (`io.open()`)",
    "codecs.open": "a file handle (`codecs.open()`)",
    "gzip.open": "a gzip file handle",
    "bz2.open": "a bz2 file handle",
    "lzma.open": "an lzma file handle",
    "h5py.File": "an HDF5 file (`h5py.File`)",
    "lmdb.open": "an LMDB environment (`lmdb.open`)",
    "lmdb.Environment": "an LMDB environment",
    "sqlite3.connect": "a SQLite connection",
    "tables.open_file": "a PyTables file",
    "pandas.HDFStore": "an HDF5 store (`pandas.HDFStore`)",
    "zipfile.ZipFile": "a zip archive (`zipfile.ZipFile`)",
    "tarfile.open": "a tar archive (`tarfile.open`)",
    "tarfile.TarFile": "a tar archive",
    "PIL.Image.open": "a lazily read image file (`PIL.Image.open`)",
    "pymongo.MongoClient": "a MongoDB client",
    "psycopg2.connect": "a PostgreSQL connection",
    "netCDF4.Dataset": "a netCDF (HDF5) file",
}
# methods whose result keeps using the handle: an LMDB transaction, a cursor, an HDF5 group
DERIVED_METHODS = frozenset({"begin", "cursor", "get", "require_dataset", "require_group"})
PICKLE_HOOKS = ("__getstate__", "__reduce__", "__reduce_ex__")


def handle_ctor(ctx, node) -> tuple[str, bool] | None:
    """(constructor, several) when a value is a handle, or a list/dict of handles."""
    if isinstance(node, ast.Call):
        q = canonical(ctx.qualname(node.func))
        if q in HANDLE_CTORS:
            return q, False
        return None
    if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        inner = handle_ctor(ctx, node.elt)
        return (inner[0], True) if inner else None
    if isinstance(node, ast.DictComp):
        inner = handle_ctor(ctx, node.value)
        return (inner[0], True) if inner else None
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        inner = [handle_ctor(ctx, e) for e in node.elts]
        if all(inner):
            return inner[0][0], True
    return None


def _is_slice(node) -> bool:
    if isinstance(node, ast.Slice) or (isinstance(node, ast.Constant) and node.value is Ellipsis):
        return True
    return isinstance(node, ast.Tuple) and (not node.elts or any(_is_slice(e) for e in node.elts))


def derived_root(node):
    """The expression a value keeps a handle through: ``h``, ``h["x"]``, ``h.begin()``; else None.
    ``h["x"][:]`` reads the data out (an array), so it is not a handle."""
    while True:
        if isinstance(node, ast.Subscript):
            if _is_slice(node.slice):
                return None
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DERIVED_METHODS:
            node = node.func.value
        else:
            return node


def import_edit(ctx, modules: list[str]) -> Edit | None:
    """An edit adding ``import m`` for each module not yet imported under its own name, after the
    module's leading docstring and imports (None when nothing is missing)."""
    bound = {name for name, b in ctx.module_scope.bindings.items() if b.kind == "import" and b.qualname == name}
    missing = [m for m in modules if m not in bound]
    if not missing:
        return None
    text = "".join(f"import {m}\n" for m in missing)
    body = ctx.tree.body
    row, i = header_rows(ctx.lines) + 1, 0  # after a shebang / coding cookie
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        row, i = body[0].end_lineno + 1, 1
    while i < len(body) and isinstance(body[i], (ast.Import, ast.ImportFrom)):
        row, i = body[i].end_lineno + 1, i + 1
    if row > len(ctx.lines):
        last = len(ctx.lines)
        end = len(ctx.lines[-1]) + 1 if ctx.lines else 1
        return Edit("\n" + text.rstrip("\n"), Span(last, end, last, end))
    return Edit(text, Span(row, 1, row, 1))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def lazy_open_fix(ctx, fn, stmt, attr: str):
    """Edits for ``self.X = ctor(args)`` in ``__init__``: keep a ``functools.partial`` of the open and
    a property that opens once per process (keyed on the pid). None when the shape is unusual."""
    call = stmt.value
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(call, ast.Call)):
        return None
    if stmt not in fn.node.body or stmt.lineno != stmt.end_lineno and "#" in "".join(ctx.lines[stmt.lineno - 1 : stmt.end_lineno]):
        return None
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    try:
        func_src = ast.get_source_segment(ctx.text, call.func)
        args_src = [ast.get_source_segment(ctx.text, a) for a in call.args]
        kw_src = [f"{k.arg}={ast.get_source_segment(ctx.text, k.value)}" for k in call.keywords]
    except Exception:  # pragma: no cover - odd positions
        return None
    if func_src is None or None in args_src or any(k.endswith("=None") and False for k in kw_src):
        return None
    method_indent = _indent(ctx.lines[fn.node.lineno - 1])
    body_indent = _indent(ctx.lines[stmt.lineno - 1])
    step = body_indent[len(method_indent) :] or "    "
    inner = body_indent + step
    parts = ", ".join([func_src, *args_src, *kw_src])
    replacement = (
        f"self._{attr}_open = functools.partial({parts})\n"
        f"{body_indent}self._{attr}_handle, self._{attr}_pid = None, None"
    )
    prop = (
        f"\n{method_indent}@property\n"
        f"{method_indent}def {attr}(self):\n"
        f'{body_indent}"""Opened on first use in each process: a handle must not cross a fork."""\n'
        f"{body_indent}if self._{attr}_pid != os.getpid():\n"
        f"{inner}self._{attr}_handle, self._{attr}_pid = self._{attr}_open(), os.getpid()\n"
        f"{body_indent}return self._{attr}_handle\n"
    )
    end = fn.node.end_lineno
    if end >= len(ctx.lines):
        last = len(ctx.lines)
        col = len(ctx.lines[-1]) + 1
        prop_edit = Edit("\n" + prop.rstrip("\n"), Span(last, col, last, col))
    else:
        prop_edit = Edit(prop, Span(end + 1, 1, end + 1, 1))
    edits = [Edit(replacement, ctx.span(stmt)), prop_edit]
    imp = import_edit(ctx, ["functools", "os"])
    if imp is not None:
        edits.insert(0, imp)
    return tuple(edits)


class HandleOpenedInInit(Rule):
    code = "DL104"
    name = "handle-opened-in-init"
    severity = "warning"
    fix = "unsafe"
    triggers = ()  # only Dataset classes matter: the core triggers and demand-driven parsing find them
    summary = "File/DB handle opened in a Dataset's `__init__` and used in workers: forked workers share one descriptor."
    docs = {
        "What it does": """
            Flags `self.X = <handle>` in a Dataset's `__init__` (or a helper it calls, base classes
            included) when `self.X` -- or something that keeps using it, such as `self.txn =
            self.env.begin()` or `self.images = f["images"]` -- is read by worker code
            (`__getitem__`, `__iter__` and what they call). Handles: `open`, `gzip/bz2/lzma.open`,
            `h5py.File`, `lmdb.open`, `sqlite3.connect`, `tables.open_file`, `pandas.HDFStore`,
            `zipfile.ZipFile`, `tarfile.open`, `PIL.Image.open`, `pymongo.MongoClient`,
            `psycopg2.connect`, `netCDF4.Dataset`, and lists/dicts of them. Reported when the
            loader's workers may start with fork (the Linux default before Python 3.14); under
            spawn/forkserver the same handle is a pickling error, reported by DL103.
            Stays silent when the handle is closed in `__init__`, when the class defines
            `__getstate__`/`__reduce__`, when worker code re-opens it (`self.X = ...` there, the
            lazy per-worker pattern), for `np.memmap`/`np.load(mmap_mode=...)` (read-only,
            fork-safe), and when every loader using the class is proven to run without workers.
            """,
        "Why is this bad?": """
            A forked worker inherits the parent's file descriptors: all workers share one file
            offset and the library's internal state. Reads interleave and return wrong bytes,
            zip members fail their CRC (mehta-lab/VisCy#417), HDF5 returns garbage or crashes
            ("h5py doesn't allow reading from multiple processes", pytorch/pytorch#11887, #11929,
            torchmd/torchmd-net#84), LMDB fails with `MDB_BAD_RSLOT` or segfaults
            (jnwatson/py-lmdb#346). Under spawn/forkserver the dataset is pickled instead and
            fails with `cannot pickle '_io.BufferedReader' object` (DL103).
            """,
        "Example": """
            ```python
            import h5py
            from torch.utils.data import Dataset


            class Frames(Dataset):
                def __init__(self, path):
                    self.h5 = h5py.File(path, "r")

                def __len__(self):
                    return 100

                def __getitem__(self, i):
                    return self.h5["frames"][i]
            ```
            """,
        "Use instead": """
            ```python
            import h5py
            from torch.utils.data import Dataset


            class Frames(Dataset):
                def __init__(self, path):
                    self.path = path
                    self.h5 = None

                def __len__(self):
                    return 100

                def __getitem__(self, i):
                    if self.h5 is None:  # first use in this worker process
                        self.h5 = h5py.File(self.path, "r")
                    return self.h5["frames"][i]
            ```
            or open it in `worker_init_fn` through `torch.utils.data.get_worker_info().dataset`.
            """,
        "Fix safety": """
            Unsafe. For `self.X = ctor(args)` written directly in `__init__` (X set nowhere else,
            nothing derived from it there), the fix keeps `self._X_open =
            functools.partial(ctor, args)` and adds a property `X` that opens the handle on first
            use in each process (keyed on `os.getpid()`), adding `import functools` / `import os`
            when missing. Behaviour changes: `args` are still evaluated in `__init__`, but the
            open happens later, so a missing file fails on first use instead of in the
            constructor; the main process opens its own handle when it reads `X`; nothing closes
            the handles a worker opens (the process exit does). Lists of handles, handles read
            through other attributes, and other shapes get no fix.
            """,
        "References": """
            - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
            - pytorch/pytorch#11887, #11929, #1919; jnwatson/py-lmdb#346; mehta-lab/VisCy#417
            """,
    }

    # ------------------------------------------------------------------ facts

    def extract(self, ctx):
        out = {}
        for fn in ctx.functions:
            if not fn.self_name:
                continue
            handles = []  # (attr, ctor, several, span, row, via)
            derived = []  # (attr, from_attr)
            closed = set()
            later: dict[str, int] = {}  # attr -> last row it is assigned something else
            fixes = {}  # attr -> edits of the lazy-open fix
            for node in ctx.walk_function(fn.node):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "close":
                    if ctx.is_self_attr(node.func.value, fn):
                        closed.add(node.func.value.attr)
                if isinstance(node, ast.Delete):
                    for t in node.targets:
                        if ctx.is_self_attr(t, fn):
                            closed.add(t.attr)
                if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                    continue
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if not ctx.is_self_attr(target, fn):
                        continue
                    attr = target.attr
                    found = handle_ctor(ctx, node.value)
                    if found:
                        fix = lazy_open_fix(ctx, fn, node, attr) if fn.node.name == "__init__" and not found[1] else None
                        handles.append((attr, found[0], found[1], ctx.span(node), node.lineno, None))
                        if fix:
                            fixes[attr] = fix
                        continue
                    root = derived_root(node.value)
                    if root is not None and ctx.is_self_attr(root, fn):
                        if root.attr != attr:
                            derived.append((attr, root.attr))
                        continue
                    local = self._local_handle(ctx, fn, root)
                    if local:
                        handles.append((attr, local, False, ctx.span(node), node.lineno, root.id))
                        continue
                    later[attr] = max(later.get(attr, 0), node.lineno)
            handles = [h for h in handles if later.get(h[0], 0) < h[4]]
            if handles or derived or closed:
                out[fn.qualname] = {"handles": handles, "derived": derived, "closed": sorted(closed), "fixes": fixes}
        return out or None

    @staticmethod
    def _local_handle(ctx, fn, node) -> str | None:
        """A local name bound only to handle calls (not a ``with`` target, not closed here)."""
        if not isinstance(node, ast.Name):
            return None
        binding = ctx.lookup(node.id, ctx.scope_of(node))
        if binding is None or binding.kind != "local" or not binding.values or binding is ctx.module_scope.bindings.get(node.id):
            return None
        ctors = set()
        for value in binding.values:
            found = handle_ctor(ctx, value) if value is not None else None
            if not found or found[1]:
                return None
            ctors.add(found[0])
        for sub in ctx.walk_function(fn.node):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr == "close"
                and isinstance(sub.func.value, ast.Name)
                and sub.func.value.id == node.id
            ):
                return None
        return ctors.pop() if len(ctors) == 1 else None

    # ------------------------------------------------------------------ the join

    def findings(self, project):
        """(dataset class, handle assignment facts, owner function, reader name) for every
        handle opened before the workers start and used by worker code; no start-method filter."""
        index = project.index
        for ref in index.dataset_classes():
            if proven_without_workers(index, ref):
                continue
            if any(index.find_method(ref, hook) for hook in PICKLE_HOOKS):
                continue
            init = index.find_method(ref, "__init__")
            if init is None:
                continue
            in_class = in_hierarchy(index, ref)
            workers = [f for f, _ in index.worker_functions(ref).values() if in_class(f)]
            if not workers:
                continue
            setup = setup_functions(index, ref, init)
            handles = []
            children: dict[str, set[str]] = {}
            closed: set[str] = set()
            for f in setup:
                entry = (project.payload(self.code, f.file.path) or {}).get(f.fn.qualname)
                if not entry:
                    continue
                handles.extend((f, h) for h in entry["handles"])
                for attr, parent in entry["derived"]:
                    children.setdefault(parent, set()).add(attr)
                closed.update(entry["closed"])
            reads = set().union(*(f.fn.self_reads for f in workers))
            writes = set().union(*(set(f.fn.self_writes) for f in workers))
            for f, (attr, ctor, several, span, row, via) in handles:
                if attr in closed:
                    continue
                family = {attr}
                frontier = [attr]
                while frontier:
                    for child in children.get(frontier.pop(), ()):
                        if child not in family:
                            family.add(child)
                            frontier.append(child)
                used = sorted(family & reads)
                if not used or family & writes:
                    continue
                reader = next(w.fn.name for w in workers if set(used) & w.fn.self_reads)
                fix = None
                entry = (project.payload(self.code, f.file.path) or {}).get(f.fn.qualname) or {}
                if len(family) == 1 and via is None and self._assigned_once(index, ref, attr):
                    fix = entry.get("fixes", {}).get(attr)
                yield ref, f, attr, ctor, several, span, via, used, reader, fix

    def fork_hazards(self, project):
        out: dict[str, list] = {}
        for ref, f, attr, ctor, several, span, via, used, reader, _ in self.findings(project):
            desc = f"`self.{attr}` holds {HANDLE_CTORS[ctor]} opened in `{f.fn.name}` and used in `{reader}` (DL104)"
            item = (desc, f.file.path, span.row)
            bucket = out.setdefault(ref.cls.qualname, [])
            if item not in bucket:
                bucket.append(item)
        return out

    def check(self, project):
        index = project.index
        reported = set()
        for ref, f, attr, ctor, several, span, via, used, reader, edits in self.findings(project):
            methods = start_methods_for(index, ref)
            if methods and methods <= {"spawn", "forkserver"}:
                continue  # no fork: the same handle is a pickling error (DL103)
            key = (f.file.path, span)
            if key in reported:
                continue
            reported.add(key)
            what = HANDLE_CTORS[ctor]
            if several:
                what = f"one {what.removeprefix('a ').removeprefix('an ')} per item"
            if via:
                what = f"an object read from {what} (local `{via}`)"
            through = "" if used == [attr] else f" (through `self.{'`, `self.'.join(u for u in used if u != attr)}`)"
            start = "fork" if "fork" in methods else "fork, when the start method resolves to it"
            yield Diagnostic(
                self.code,
                f"`self.{attr}` holds {what}, opened in `{f.fn.name}` and used in `{reader}`{through}: under {start} "
                "every worker inherits the same descriptor, so workers share its offset and library state "
                "(wrong data, CRC errors, crashes); open it lazily in each worker (store the path, set it to None, "
                "open on first use)",
                f.file.path,
                span,
                fix=Fix("unsafe", f"Open `self.{attr}` lazily, once per worker process", edits) if edits else None,
                severity=self.severity,
            )

    @staticmethod
    def _assigned_once(index, ref, attr) -> bool:
        """The attribute is set in one place only and no method, property or class attribute of the
        class hierarchy (subclasses included) already uses the name the fix needs."""
        count = 0
        for cls in {c.key: c for c in (*index.mro(ref), *index.subclasses_of(ref))}.values():
            names = set(cls.cls.methods) | set(cls.cls.class_attrs)
            if names & {attr, f"_{attr}_open", f"_{attr}_handle", f"_{attr}_pid"}:
                return False
            for qual in cls.cls.methods.values():
                writes = cls.file.functions[qual].self_writes
                if any(k in writes for k in (f"_{attr}_open", f"_{attr}_handle", f"_{attr}_pid")):
                    return False
                count += len(writes.get(attr, ()))
        return count == 1
