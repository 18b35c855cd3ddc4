"""DL101 copy-on-read-container: a query on the program model's values (dllint/program/values.py)
and sample uses (dllint/program/datasets.py).

An attribute of a Dataset is reported when, once the instance is built, it holds a Python container
of Python objects (list, dict, set, tuple, deque, an object array) whose length grows with the data:
its source is a directory listing, the lines or records of a file, a loop or comprehension over
those, or a value passed in that is (through every call site the project has); or, when its source
is not visible, ``__len__`` measures it, ``__getitem__`` indexes it with the sample index, or
``__iter__`` walks it.
"""

from __future__ import annotations

import os

from dllint.model import Diagnostic, Span
from dllint.program.values import BOUNDED, DATA, DEDUP, EMPTY, LOAD, UNKNOWN_SIZE, Env
from dllint.rules.base import Rule

PY_CONTAINERS = frozenset({"list", "dict", "set", "tuple", "deque", "frozenset", "ndarray-obj"})
# what a container may be rebound to before the constructor returns: no longer a Python container
COMPACT = frozenset({"ndarray", "tensor", "memmap", "store", "tensordataset", "series"})
KIND_WORDS = {
    "list": "list", "dict": "dict", "set": "set", "tuple": "tuple", "deque": "deque",
    "frozenset": "frozenset", "ndarray-obj": "object array", "records": "dict/list of records",
}
ELEM_WORDS = (
    ("tuple", "tuples"), ("dict", "dicts"), ("list", "lists"), ("str", "str"), ("path", "paths"),
    ("int", "ints"), ("float", "floats"), ("bytes", "bytes"), ("ndarray", "arrays"), ("tensor", "tensors"),
    ("instance", "objects"),
)


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


class CopyOnReadContainer(Rule):
    code = "DL101"
    name = "copy-on-read-container"
    severity = "warning"
    fix = "none"
    triggers = ()
    summary = "A data-sized list/dict on a Dataset: every forked worker slowly copies what it reads (refcounts); store it compactly."
    docs = {
        "What it does": """
            Reports an attribute of a Dataset (one finding per attribute, at the assignment that
            creates it) that holds, once the instance is built, a Python container of Python
            objects -- list, dict, set, tuple, deque, a numpy array of `dtype=object` -- whose
            length grows with the data. dllint decides "grows with the data" from evidence:

            - where the value comes from (the program model's value flow): a directory listing
              (`os.listdir`, `glob`, `os.walk`, `Path.rglob/iterdir`), the lines of a file
              (`readlines`, iterating a file, `read().splitlines()`), json / pickle / yaml / csv
              records, HDF5 keys, a COCO-style annotation API; a comprehension, `zip`,
              `enumerate`, `dict(zip(...))` or `.append`/`.extend`/`[k] = v` loop over any of
              those; through helpers the constructor calls, base-class constructors in other
              files, project functions returning tuples, constructor parameters filled at the
              project's call sites, per-sample caches such as `[None] * len(self.files)`;
            - how the Dataset uses it, when its source is not visible (a library call, an
              argument nobody in the project passes): `__len__` returns its length,
              `__getitem__` (or a helper it calls) indexes it with the sample index, or
              `__iter__` walks it.

            Stays quiet for bounded containers (literals, class names, mean/std, per-split lists,
            a vocabulary deduplicated with `set`/`sorted(set(...))`), numpy arrays that are not
            `dtype=object`, tensors, memmaps, Arrow / HF `datasets` tables, attributes rebound to
            one of those before the constructor returns, and Datasets whose every loader has
            `num_workers=0` or starts its workers only with spawn/forkserver (explicit
            `multiprocessing_context` or `set_start_method`): copy-on-read needs fork. Dataset
            classes with no loader in sight (built by configuration or defined in a library) are
            judged as used by a loader with workers under fork, the common case. Records loaded
            from json / pickle / yaml (which may be a configuration) count only with the structural
            evidence above.
            """,
        "Why is this bad?": """
            Forked workers share the parent's pages copy-on-write, but CPython writes the reference
            count of every object it reads (and the cyclic GC writes the headers of containers), so
            each worker slowly gets a private copy of every list element it touches: memory grows
            through the epoch, once per worker ("DataLoader worker (pid N) is killed by signal:
            Killed"). Measured: 2M paths in a list cost 184 MB per worker after one pass; as a numpy
            `<U37` array 0.1 MB.
            """,
        "Example": """
            ```python
            class Images(Dataset):
                def __init__(self, root):
                    self.paths = sorted(glob.glob(os.path.join(root, "*.jpg")))

                def __getitem__(self, i):
                    return load(self.paths[i])
            ```
            """,
        "Use instead": """
            ```python
            self.paths = np.array(sorted(glob.glob(os.path.join(root, "*.jpg"))), dtype=np.str_)
            ```
            Numbers: `np.int64` / `np.float64` arrays. (path, label) pairs: two arrays or a
            structured array. Dicts and nested records: pickle each item into one uint8 buffer with
            int64 offsets (detectron2 `NumpySerializedList`), or a pyarrow / HF `datasets` table.
            """,
        "Fix safety": """
            No automatic fix yet in this version: the representation that keeps every use the same
            (types included) depends on how the whole project uses the attribute.
            """,
        "References": """
            - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
            - pytorch/pytorch#13246
            - https://ppwwyyxx.com/blog/2022/Demystify-RAM-Usage-in-Multiprocess-DataLoader/
            """,
    }

    def check(self, project):
        model = project.index
        seen: set = set()
        for ref in model.dataset_classes():
            if self._quiet(model, ref):
                continue
            uses = model.sample_uses(ref)
            attrs = set()
            for r in model.mro(ref):
                for qual in r.cls.methods.values():
                    fn = r.file.functions.get(qual)
                    if fn is not None and fn.flow is not None:
                        attrs.update(fn.flow.writes)
            for attr in sorted(attrs):
                finding = self._judge(model, ref, attr, uses.get(attr, ()))
                if finding is None:
                    continue
                text, evidence = finding
                # one finding per class that assigns the attribute, at its first assignment
                for anchor_fn, write in self._anchors(model, ref, attr):
                    path = anchor_fn.file.path
                    key = (path, write[2], attr)
                    if key in seen:
                        continue
                    seen.add(key)
                    owner = model.class_of(anchor_fn) or ref
                    yield Diagnostic(
                        self.code,
                        f"`self.{attr}` holds {text}: forked workers copy what they read",
                        path,
                        Span(write[2], write[3], write[5], write[6]),
                        severity=self.severity,
                        details=(("class", owner.cls.qualname), ("attribute", attr), ("evidence", tuple(evidence))),
                    )

    @staticmethod
    def _quiet(model, ref) -> bool:
        """Every loader using the class has no workers, or starts them only with spawn/forkserver."""
        loaders = model.loaders_using(ref)
        if not loaders:
            return False  # no loader in sight: judged as the common case (workers, fork)
        active = [ld for ld in loaders if ld.may_start_workers]
        if not active:
            return True
        return all("fork" not in ld.start_methods and "unknown" not in ld.start_methods for ld in active)

    def _judge(self, model, ref, attr: str, uses):
        writes = model.attr_writes(ref, attr)
        if not writes:
            return None
        value = model.attr_value(ref, attr)
        if not (value.kinds & PY_CONTAINERS) and not value.has("records"):
            return None
        if value.kinds & COMPACT and not (value.kinds & PY_CONTAINERS):
            return None  # records that are an array or a tensor on some path: not a Python container
        if self._rebound(model, ref, writes):
            return None
        kinds = value.kinds & PY_CONTAINERS
        evidence = [f"{w[0]} ({_rel(w[1])}:{w[2]})" for w in value.why if len(w) >= 3]
        uses = [u for u in uses if u[0] in ("len", "index")]
        structural = [f"{how} in `{fn}`" for how, fn, _row in uses]
        size = value.size
        if size == DATA:
            grows = True
        elif size == LOAD:
            # records loaded from json / pickle / yaml: a table when used as one (looked up with a
            # computed key, walked, measured), a configuration when only read by literal keys
            grows = bool(uses) or self._table_use(model, ref, attr)
        elif size == UNKNOWN_SIZE:
            grows = bool(uses)
        else:
            grows = False  # EMPTY, BOUNDED, DEDUP
        if not grows:
            return None
        if not kinds:
            kinds = frozenset({"records"})
        ctype = KIND_WORDS[sorted(kinds, key=lambda k: ("list", "dict", "tuple", "set", "deque", "frozenset", "ndarray-obj", "records").index(k))[0]]
        elem = _elem_words(value)
        what = f"a {ctype} of {elem}" if elem and ctype not in ("dict", "dict/list of records") else f"a {ctype}"
        if size == DATA and value.why:
            why = value.why[0]
            text = f"{what} from {why[0]} ({_rel(why[1])}:{why[2]})"
        elif uses:
            how, fn, _ = uses[0]
            text = f"{what} {'measured by' if how == 'len' else 'indexed per sample in' if how == 'index' else 'walked by'} `{fn}`"
        else:
            text = what
        return text, evidence + structural

    @staticmethod
    def _anchors(model, ref, attr):
        """Where the attribute is created: in each class of the hierarchy that assigns it, its
        first ``=`` assignment (in ``__init__`` first), else its first write."""
        writes = model.attr_writes(ref, attr)
        by_class: dict = {}
        for fn, w in writes:
            cls = model.class_of(fn)
            by_class.setdefault(cls.key if cls is not None else fn.key, []).append((fn, w))
        out = []
        for items in by_class.values():
            assigns = [x for x in items if x[1][0] == "="]
            if not assigns and len(by_class) > 1:
                continue  # only mutated here: created in another class
            pool = assigns or items
            out.append(min(pool, key=lambda x: (x[0].fn.name != "__init__", x[1][2])))
        return out

    @staticmethod
    def _table_use(model, ref, attr: str) -> bool:
        """Some method looks ``self.attr`` up with a computed key, walks it or measures it."""
        for r in model.mro(ref):
            for qual in r.cls.methods.values():
                fn = r.file.functions.get(qual)
                flow = fn.flow if fn is not None else None
                if flow is None:
                    continue
                if attr in flow.iterates:
                    return True
                if any(ix[0] != "k" for ix in flow.indexes.get(attr, ())):
                    return True
                for kind, target, args, _kw, _row in flow.calls:
                    if kind == "attr" and target[0] == attr:
                        if target[1] in ("items", "keys", "values", "__iter__"):
                            return True
                        if target[1] in ("get", "pop", "__getitem__") and args and args[0][0] != "k":
                            return True
                for ret in flow.returns:
                    if ret[0] == "c" and ret[1] == ("g", "builtins.len") and ret[2][:1] == (("s", attr),):
                        return True
        return False

    @staticmethod
    def _rebound(model, ref, writes) -> bool:
        """A later assignment in the same method turns the container into a compact store
        (``self.x = np.array(self.x)``)."""
        last: dict = {}
        for fn, w in writes:
            if w[0] != "=":
                continue
            if fn.key not in last or w[2] > last[fn.key][1][2]:
                last[fn.key] = (fn, w)
        mro = [r.key for r in model.mro(ref)]
        for fn, w in last.values():
            v = model.value(w[1], Env(fn.file, fn, ref))
            if not (v.kinds & COMPACT) or v.kinds & PY_CONTAINERS:
                continue
            if any(f2.key == fn.key and x[2] < w[2] for f2, x in writes):
                return True  # rebound later in the same method
            cls = model.class_of(fn)
            depth = mro.index(cls.key) if cls is not None and cls.key in mro else len(mro)
            for f2, x in writes:
                other = model.class_of(f2)
                if other is not None and other.key in mro and mro.index(other.key) > depth and x[0] == "=":
                    return True  # a subclass assigns the compact form after its base built the container
        return False


def _elem_words(value) -> str:
    e = value.elem if not value.has("dict") else value.elem
    if e is None or e.is_bottom:
        return ""
    for kind, word in ELEM_WORDS:
        if e.has(kind):
            return word
    return ""


__all__ = ["CopyOnReadContainer", "BOUNDED", "DEDUP", "EMPTY"]
