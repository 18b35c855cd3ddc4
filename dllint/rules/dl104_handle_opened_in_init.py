"""DL104 handle-opened-in-init: a query on the program model's handle sites (dllint/program/hazards.py);
the rule itself only builds the lazy-open fix."""

from __future__ import annotations

import ast

from dllint.model import Diagnostic, Span
from dllint.rules.base import Rule, planned_fix


def lazy_open_plan(ctx, fn, stmt) -> Span | None:
    """The span of ``self.X = ctor(args)`` written directly in ``__init__`` when the lazy-open fix
    applies to its shape (the edits are built lazily, dllint/fixes/lazy_open.py), else None."""
    call = stmt.value
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(call, ast.Call)):
        return None
    if stmt not in fn.node.body or stmt.lineno != stmt.end_lineno and "#" in "".join(ctx.lines[stmt.lineno - 1 : stmt.end_lineno]):
        return None
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    return ctx.span(stmt)


def lazy_open_certain(ctx, fn, stmt) -> bool:
    """Whether ``lazy_open`` surely finds the plan's statement where it edits (a run printing no
    edits then marks the fix without libcst): the constructor written directly in its class's
    body, both bodies on lines of their own (not ``class A: ...`` on one line), and the statement
    alone on its lines. Otherwise only libcst can say."""
    cls = ctx.parent(fn.node)
    if not isinstance(cls, ast.ClassDef) or fn.node not in cls.body:
        return False
    if not (_starts_its_line(ctx, cls.body[0]) and _starts_its_line(ctx, fn.node.body[0])):
        return False
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    return not any(
        other is not stmt and other.lineno <= last and (other.end_lineno or other.lineno) >= first for other in fn.node.body
    )


def _starts_its_line(ctx, stmt) -> bool:
    """The statement (its first decorator) is the first thing on its line."""
    node = stmt.decorator_list[0] if getattr(stmt, "decorator_list", None) else stmt
    line = ctx.lines[node.lineno - 1] if node.lineno <= len(ctx.lines) else ""
    return line.encode()[: node.col_offset].strip() == b""  # (ast's columns count UTF-8 bytes)


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
            constructor; the main process opens its own handle when it reads `X`; each process
            reads through its own handle, from the start of the file (forked workers no longer
            share one file position: code that relied on it, reading on where another worker
            stopped, sees other data); nothing closes the handles a worker opens (the process
            exit does). Lists of handles, handles read through other attributes, and other shapes
            get no fix.
            """,
        "References": """
            - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
            - pytorch/pytorch#11887, #11929, #1919; jnwatson/py-lmdb#346; mehta-lab/VisCy#417
            """,
    }

    # ------------------------------------------------------------------ facts

    def extract(self, ctx):
        """The lazy-open fix of each ``self.X = ctor(...)`` in an ``__init__``, by (method, attr)."""
        out = {}
        for fn in ctx.functions:
            if fn.node.name != "__init__" or not fn.self_name:
                continue
            for stmt in fn.node.body:
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and ctx.is_self_attr(stmt.targets[0], fn)):
                    continue
                if not isinstance(stmt.value, ast.Call):
                    continue
                span = lazy_open_plan(ctx, fn, stmt)
                if span:
                    out[(fn.qualname, stmt.targets[0].attr)] = (span, lazy_open_certain(ctx, fn, stmt))
        return out or None

    def check(self, project):
        model = project.index
        for site in model.handle_sites():
            cls = site.detail["cls"]
            methods = model.start_methods_for(cls)
            if methods and methods <= {"spawn", "forkserver"}:
                continue  # no fork: the same handle is a pickling error (DL103)
            attr, fn, used = site.detail["attr"], site.detail["function"], site.detail["used"]
            through = "" if used == [attr] else f" (via `self.{'`, `self.'.join(u for u in used if u != attr)}`)"
            start = "forked workers" if "fork" in methods else "workers, if forked,"
            fix = None
            if len(used) == 1 and used == [attr] and not site.detail["several"] and self._assigned_once(model, cls, attr):
                plan = (project.payload(self.code, fn.file.path) or {}).get((fn.fn.qualname, attr))
                if plan is not None:
                    from dllint.fixes.cst import source_of
                    from dllint.fixes.lazy_open import lazy_open

                    fix = planned_fix(
                        project, "unsafe", f"Open `self.{attr}` lazily, once per worker process",
                        lambda: lazy_open(source_of(project, fn.file.path), plan[0], attr),
                        known=plan[1],  # ``lazy_open_certain``
                    )
            yield Diagnostic(
                self.code,
                f"`self.{attr}` holds {site.what}: {start} share it",
                site.path,
                site.span,
                fix=fix,
                severity=self.severity,
                details=(
                    ("attribute", attr),
                    ("why", f"opened in `{fn.fn.name}`, used in `{site.detail['reader']}`{through}: {start} share one "
                     "file offset and library state; open it lazily, once per worker"),
                ),
            )

    @staticmethod
    def _assigned_once(model, ref, attr) -> bool:
        """The attribute is set in one place only and no method, property or class attribute of the
        class hierarchy (subclasses included) already uses the name the fix needs."""
        count = 0
        for cls in {c.key: c for c in (*model.mro(ref), *model.subclasses_of(ref))}.values():
            names = set(cls.cls.methods) | set(cls.cls.class_attrs)
            if names & {attr, f"_{attr}_open", f"_{attr}_handle", f"_{attr}_pid"}:
                return False
            for qual in cls.cls.methods.values():
                writes = cls.file.functions[qual].self_writes
                if any(k in writes for k in (f"_{attr}_open", f"_{attr}_handle", f"_{attr}_pid")):
                    return False
                count += len(writes.get(attr, ()))
        return count == 1
