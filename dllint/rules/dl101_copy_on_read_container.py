"""DL101 copy-on-read-container: a data-sized Python container kept on a Dataset and read in workers.

Facts (per file, ``extract``): for every method of every class, the ``self.X`` builds (assignments,
``append``/``extend``/``insert``/``update``/``self.X[k] = v`` ...) with a small type summary of the
value (container kind, element type, why its size follows the data), the ``self.X`` uses with
their kind (index, len, iteration, slice, truth test ...), the return summaries of every function
(for ``self.samples = make_dataset(root)``), the non-self ``.X`` uses, and where a numpy import
is or would go. ``check`` joins them per Dataset class through the project index.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from dllint.facts.context import FUNC_TYPES
from dllint.program.model import ClassRef
from dllint.model import Diagnostic, Edit, Fix, Span
from dllint.rules.base import Rule

NESTED_SCOPES = (*FUNC_TYPES, ast.ClassDef)  # what a method's recorded body does not descend into

# --------------------------------------------------------------------------- value summaries


@dataclass(frozen=True, slots=True)
class T:
    """What an expression evaluates to, as far as DL101 needs to know.

    kind: container | iter | str | int | float | bytes | bool | none | path | tuple | dict |
          file | entry | json | array | empty | call | mixed | unknown
    """

    kind: str
    ctype: str = ""  # container: list, tuple, set, dict, deque, OrderedDict, defaultdict, Counter, object array, JSON data
    elem: "T | None" = None  # container/iter element
    items: tuple = ()  # tuple items
    data: str = ""  # why its size follows the data ("" = not data-sized)
    defer: str = ""  # call: the callee (qualified name, or "self.m")
    source: str = ""  # the builder, for messages


UNKNOWN = T("unknown")
CYCLE = T("cycle")  # a value that depends on itself (x = x.strip()): neutral in joins
STR = T("str")
INT = T("int")
FLOAT = T("float")
PATH = T("path")

SCALARS = ("str", "int", "float", "bytes", "bool", "none", "path")


def join(a: T | None, b: T | None) -> T | None:
    if a is None or a.kind == "cycle":
        return b
    if b is None or b.kind == "cycle":
        return a
    data = a.data or b.data
    source = a.source or b.source
    if a.kind == b.kind:
        if a.kind == "tuple":
            items = tuple(join(x, y) for x, y in zip(a.items, b.items)) if len(a.items) == len(b.items) else ()
            return T("tuple", items=items, data=data)
        if a.kind == "call":
            return a if a.defer == b.defer else T("mixed", data=data)
        ctype = a.ctype if a.ctype == b.ctype or not b.ctype else b.ctype if not a.ctype else ""
        return T(a.kind, ctype, join(a.elem, b.elem), data=data, source=source)
    for x, y in ((a, b), (b, a)):
        if x.kind in ("empty", "none") and y.kind in ("container", "empty"):
            return replace(y, data=data, source=source)
        if x.kind == "unknown" and x.defer.startswith("param:") and y.kind == "container":
            # a parameter taken as is in another branch: still a container, element type unknown
            return replace(y, elem=T("mixed"), data=y.data or x.data, source=source)
    return T("mixed", data=data, source=source)


def elem_of(t: T) -> T:
    if t.kind in ("container", "iter"):
        return t.elem or UNKNOWN
    if t.kind == "file":
        return STR if t.ctype != "binary" else T("bytes")
    if t.kind == "str":
        return STR
    if t.kind == "json":
        return T("json")
    if t.kind == "array" and t.elem is not None:
        return t.elem
    return UNKNOWN


LISTING = {
    "os.listdir": T("container", "list", STR, data="a directory listing (`os.listdir`)"),
    "glob.glob": T("container", "list", STR, data="a directory listing (`glob.glob`)"),
    "glob.iglob": T("iter", "", STR, data="a directory listing (`glob.iglob`)"),
    "os.scandir": T("iter", "", T("entry"), data="a directory listing (`os.scandir`)"),
    "os.walk": T(
        "iter",
        "",
        T(
            "tuple",
            items=(
                STR,
                T("container", "list", STR, data="a directory listing (`os.walk`)"),
                T("container", "list", STR, data="a directory listing (`os.walk`)"),
            ),
        ),
        data="a directory listing (`os.walk`)",
    ),
}
LISTING.update(
    {
        "imutils.paths.list_images": T("iter", "", STR, data="a directory listing (`list_images`)"),
        "imutils.paths.list_files": T("iter", "", STR, data="a directory listing (`list_files`)"),
        "mmcv.list_from_file": T("container", "list", STR, data="a file read (`list_from_file`)"),
        "mmengine.list_from_file": T("container", "list", STR, data="a file read (`list_from_file`)"),
        "mmengine.fileio.list_from_file": T("container", "list", STR, data="a file read (`list_from_file`)"),
        "tensorflow.io.gfile.listdir": T("container", "list", STR, data="a directory listing (`gfile.listdir`)"),
        "tensorflow.io.gfile.glob": T("container", "list", STR, data="a directory listing (`gfile.glob`)"),
        "blobfile.listdir": T("iter", "", STR, data="a directory listing (`blobfile.listdir`)"),
        "blobfile.glob": T("iter", "", STR, data="a directory listing (`blobfile.glob`)"),
    }
)
LOADS = {
    "mmcv.load": "`mmcv.load`",
    "mmengine.load": "`mmengine.load`",
    "ujson.load": "`ujson.load`",
    "orjson.loads": "`orjson.loads`",
    "json.load": "`json.load`",
    "json.loads": "`json.loads`",
    "pickle.load": "`pickle.load`",
    "pickle.loads": "`pickle.loads`",
    "yaml.load": "`yaml.load`",
    "yaml.safe_load": "`yaml.safe_load`",
    "yaml.full_load": "`yaml.full_load`",
    "yaml.unsafe_load": "`yaml.unsafe_load`",
}
STR_FUNCS = frozenset(
    {
        "builtins.str",
        "builtins.repr",
        "builtins.format",
        "os.path.join",
        "os.path.basename",
        "os.path.dirname",
        "os.path.abspath",
        "os.path.realpath",
        "os.path.expanduser",
        "os.path.normpath",
        "os.path.relpath",
        "os.fspath",
        "posixpath.join",
        "blobfile.join",
        "blobfile.basename",
    }
)
STR_METHODS = frozenset(
    {"strip", "rstrip", "lstrip", "lower", "upper", "replace", "format", "join", "decode", "casefold", "title",
     "removeprefix", "removesuffix", "zfill", "ljust", "rjust", "as_posix"}
)
CONTAINER_BUILTINS = {
    "builtins.list": "list",
    "builtins.tuple": "tuple",
    "builtins.set": "set",
    "builtins.frozenset": "set",
    "builtins.sorted": "list",
    "natsort.natsorted": "list",
    "natsort.os_sorted": "list",
    "collections.deque": "deque",
}
MAPPING_BUILTINS = {
    "builtins.dict": "dict",
    "collections.OrderedDict": "OrderedDict",
    "collections.defaultdict": "defaultdict",
    "collections.Counter": "Counter",
}
# Modules whose call results are not Python containers (arrays, tensors, tables, buffers).
ARRAY_MODULES = ("numpy.", "torch.", "pyarrow.", "datasets.", "h5py.", "zarr.", "lmdb.", "pandas.")
ARRAY_FUNCS = frozenset({"pickle.dumps", "builtins.bytes", "builtins.bytearray", "builtins.memoryview"})

COCO_API = frozenset({"pycocotools.coco.COCO", "pycocotools.COCO", "lvis.LVIS", "lvis.lvis.LVIS"})

# Array functions whose result is as large as their input (np.unique & co. are not).
SIZE_KEEPING = frozenset(
    {"numpy.array", "numpy.asarray", "numpy.concatenate", "numpy.stack", "numpy.hstack", "numpy.vstack",
     "numpy.arange", "numpy.load", "numpy.loadtxt", "numpy.genfromtxt", "numpy.fromfile", "torch.tensor",
     "torch.load", "pandas.DataFrame", "pandas.Series", "pandas.concat"}
)

# Attribute-name words that mark configuration, class names, normalisation or transforms: small by
# construction even when read from a file or a parameter.
CONFIG_WORDS = frozenset(
    {"transform", "transforms", "aug", "augs", "augment", "augmentation", "augmentations", "mean", "std",
     "cfg", "config", "conf", "configs", "opt", "opts", "args", "hparams", "kwargs", "options", "settings",
     "class", "classes", "classnames", "category", "categories", "cat", "cats", "pipeline", "params",
     "shape", "dim", "dims", "resolution", "scale", "scales", "palette", "colors", "colormap",
     "dataset", "datasets", "cumulative", "loader", "loaders", "model", "models", "modules", "layers", "hooks",
     "callbacks", "handlers", "samplers", "tokenizer", "tokenizers", "processors", "readers", "fields", "columns"}
)

MUTATORS = frozenset({"append", "extend", "insert", "update", "add", "appendleft", "extendleft", "setdefault"})
REORDERS = frozenset({"sort", "reverse"})
LIST_ONLY_METHODS = frozenset(
    {"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse", "index", "count", "update",
     "add", "appendleft", "extendleft", "setdefault", "popleft", "discard", "keys", "values", "items", "get"}
)
ITER_FUNCS = frozenset(
    {"builtins.len", "builtins.enumerate", "builtins.zip", "builtins.iter", "builtins.sorted", "builtins.list",
     "builtins.tuple", "builtins.set", "builtins.frozenset", "builtins.min", "builtins.max", "builtins.any",
     "builtins.all", "builtins.reversed", "random.choice", "numpy.array", "numpy.asarray"}
)
ELEM_TYPE_FUNCS = frozenset({"builtins.isinstance", "builtins.type", "json.dumps", "json.dump"})
# Uses that an array answers the same way as a list.
SAFE_USES = frozenset({"index", "key", "len", "iter", "in"})
# Uses that certainly break on an array (no fix at all).
BREAKING_USES = frozenset({"truth", "method", "binop", "compare", "augassign", "setitem", "json"})


def _attr_words(attr: str) -> set[str]:
    return {w for w in attr.lower().strip("_").split("_") if w}


# --------------------------------------------------------------------------- analysis of one file


class _Func:
    """Local definitions of one function: name -> where it gets its values."""

    def __init__(self, node):
        self.node = node
        self.defs: dict[str, list] = {}
        self.muts: dict[str, list] = {}  # local name -> [(kind, node)] of append/extend/...


class Analyzer:
    def __init__(self, ctx):
        self.ctx = ctx
        self.funcs: dict[int, _Func] = {}
        self._active: set[int] = set()
        self._memo: dict[int, T] = {}

    # ---------------------------------------------------------------- locals

    def func(self, fn_node) -> _Func:
        info = self.funcs.get(id(fn_node))
        if info is not None:
            return info
        info = _Func(fn_node)
        self.funcs[id(fn_node)] = info
        ctx = self.ctx
        for node in ctx.walk_function(fn_node):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(info, target, ("value", node.value))
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._bind(info, node.target, ("value", node.value))
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                info.muts.setdefault(node.target.id, []).append(("augassign", node))
            elif isinstance(node, ast.NamedExpr):
                self._bind(info, node.target, ("value", node.value))
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                self._bind(info, node.target, ("iter", node.iter))
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        self._bind(info, item.optional_vars, ("value", item.context_expr))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.attr in MUTATORS
            ):
                info.muts.setdefault(node.func.value.id, []).append((node.func.attr, node))
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                        info.muts.setdefault(target.value.id, []).append(("setitem", node))
        return info

    def _bind(self, info: _Func, target, entry, path=()) -> None:
        if isinstance(target, ast.Name):
            info.defs.setdefault(target.id, []).append((*entry, path))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    self._bind(info, elt.value, ("unknown", None), ())
                else:
                    self._bind(info, elt, entry, (*path, i))

    def loop_data(self, node, stop) -> str:
        """Why the loops around ``node`` (up to ``stop``) run a data-sized number of times."""
        child = node
        for anc in self.ctx.ancestors(node):
            if anc is stop:
                break
            if isinstance(anc, (ast.For, ast.AsyncFor)) and child is not anc.iter and child is not anc.target:
                data = self.typeof(anc.iter).data
                if data:
                    return data
            if isinstance(anc, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                for gen in anc.generators:
                    data = self.typeof(gen.iter).data
                    if data:
                        return data
            child = anc
        return ""

    # ---------------------------------------------------------------- typing

    def typeof(self, node, depth: int = 0) -> T:
        t = self._typeof_guarded(node, depth)
        return UNKNOWN if t.kind == "cycle" and depth == 0 else t

    def _typeof_guarded(self, node, depth: int) -> T:
        if node is None or depth > 12:
            return UNKNOWN
        key = id(node)
        memo = self._memo.get(key)
        if memo is not None:
            return memo
        if key in self._active:
            return CYCLE
        self._active.add(key)
        try:
            out = self._typeof(node, depth + 1)
        except RecursionError:  # pragma: no cover - pathological nesting
            out = UNKNOWN
        finally:
            self._active.discard(key)
        if depth <= 12:
            self._memo[key] = out
        return out

    def _typeof(self, node, depth: int) -> T:
        ctx = self.ctx
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                return T("bool")
            if isinstance(v, str):
                return STR
            if isinstance(v, int):
                return INT
            if isinstance(v, float):
                return FLOAT
            if isinstance(v, bytes):
                return T("bytes")
            if v is None:
                return T("none")
            return UNKNOWN
        if isinstance(node, ast.JoinedStr):
            return STR
        if isinstance(node, (ast.List, ast.Set)):
            ctype = "list" if isinstance(node, ast.List) else "set"
            if not node.elts:
                return T("empty", ctype)
            elem = None
            data = ""
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    inner = self.typeof(elt.value, depth)
                    data = data or inner.data
                    elem = join(elem, elem_of(inner))
                else:
                    elem = join(elem, self.typeof(elt, depth))
            return T("container", ctype, elem, data=data, source="a display")
        if isinstance(node, ast.Tuple):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return UNKNOWN
            return T("tuple", items=tuple(self.typeof(e, depth) for e in node.elts))
        if isinstance(node, ast.Dict):
            if not node.keys:
                return T("empty", "dict")
            return T("dict")
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            data = ""
            for gen in node.generators:
                data = data or self.typeof(gen.iter, depth).data
            elem = self.typeof(node.elt, depth)
            kind = "iter" if isinstance(node, ast.GeneratorExp) else "container"
            ctype = "list" if isinstance(node, ast.ListComp) else "set" if isinstance(node, ast.SetComp) else ""
            return T(kind, ctype, elem, data=data, source="a comprehension")
        if isinstance(node, ast.DictComp):
            data = ""
            for gen in node.generators:
                data = data or self.typeof(gen.iter, depth).data
            return T("container", "dict", T("mixed"), data=data, source="a comprehension")
        if isinstance(node, ast.IfExp):
            return join(self.typeof(node.body, depth), self.typeof(node.orelse, depth)) or UNKNOWN
        if isinstance(node, ast.BoolOp):
            out = None
            for v in node.values:
                out = join(out, self.typeof(v, depth))
            return out or UNKNOWN
        if isinstance(node, ast.NamedExpr):
            return self.typeof(node.value, depth)
        if isinstance(node, ast.Starred):
            return self.typeof(node.value, depth)
        if isinstance(node, ast.BinOp):
            left = self.typeof(node.left, depth)
            right = self.typeof(node.right, depth)
            if isinstance(node.op, ast.Add):
                if "str" in (left.kind, right.kind):
                    return STR
                if left.kind == right.kind == "container" and left.ctype == right.ctype == "list":
                    return join(left, right)
                if {left.kind, right.kind} <= {"int", "float"}:
                    return FLOAT if "float" in (left.kind, right.kind) else INT
            if isinstance(node.op, ast.Mod) and left.kind == "str":
                return STR
            if isinstance(node.op, ast.Mod) and left.kind == right.kind == "int":
                return INT
            if isinstance(node.op, ast.Div):
                if left.kind == "path" or (left.kind in ("str", "unknown") and right.kind == "path"):
                    return PATH
                if {left.kind, right.kind} <= {"int", "float"}:
                    return FLOAT
            if isinstance(node.op, (ast.Sub, ast.Mult, ast.FloorDiv)) and {left.kind, right.kind} <= {"int", "float"}:
                return FLOAT if "float" in (left.kind, right.kind) else INT
            if isinstance(node.op, ast.Mult) and left.kind == "container" and left.ctype == "list":
                return replace(left, data=left.data or right.data)
            return UNKNOWN
        if isinstance(node, ast.Subscript):
            base = self.typeof(node.value, depth)
            if isinstance(node.slice, ast.Slice):
                if base.kind == "unknown" and base.defer.startswith("param:"):
                    return base  # image_paths[shard:][::num_shards]: still what the callers pass
                return base if base.kind in ("container", "str") else UNKNOWN
            if base.kind == "container":
                if base.ctype == "JSON data":
                    return replace(base, source=base.source)
                if base.ctype in ("list", "tuple", "deque"):
                    return base.elem or UNKNOWN
                return UNKNOWN
            if base.kind == "tuple":
                idx = node.slice.value if isinstance(node.slice, ast.Constant) else None
                if isinstance(idx, int) and -len(base.items) <= idx < len(base.items):
                    return base.items[idx]
                return UNKNOWN
            if base.kind == "str":
                return STR
            if base.kind == "array" and base.elem is not None:
                return base.elem
            if base.kind in ("array", "json"):
                return base
            if base.kind == "call" and base.defer in ("os.path.splitext", "os.path.split"):
                return STR
            return UNKNOWN
        if isinstance(node, ast.Name):
            return self._name(node, depth)
        if isinstance(node, ast.Attribute):
            if ctx.is_self_attr(node):
                fn = ctx.method_of(node)
                values = fn.cls.self_assigns.get(node.attr) if fn else None
                if not values:
                    return UNKNOWN
                out = None
                for v in values:
                    out = join(out, self.typeof(v, depth) if v is not None else UNKNOWN)
                return out or UNKNOWN
            base = self.typeof(node.value, depth)
            if base.kind == "coco" and node.attr in ("imgs", "anns", "cats", "imgToAnns", "catToImgs", "dataset"):
                return T("container", "JSON data", T("json"), data=base.data, source=f"`COCO.{node.attr}`")
            if base.kind == "entry" and node.attr in ("path", "name"):
                return STR
            if base.kind == "path":
                if node.attr in ("name", "stem", "suffix"):
                    return STR
                if node.attr == "parent":
                    return PATH
            if base.kind == "array":
                return base
            return UNKNOWN
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        return UNKNOWN

    def _name(self, node: ast.Name, depth: int) -> T:
        ctx = self.ctx
        for anc in ctx.ancestors(node):  # a comprehension's own variables first
            if isinstance(anc, (*FUNC_TYPES, ast.ClassDef, ast.Lambda)):
                break
            if isinstance(anc, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                entries: list = []
                for gen in anc.generators:
                    probe = _Func(None)
                    self._bind(probe, gen.target, ("iter", gen.iter))
                    entries.extend(probe.defs.get(node.id, ()))
                if entries:
                    out = None
                    for entry in entries:
                        out = join(out, self._entry(entry, depth))
                    return out or UNKNOWN
        fn = ctx.enclosing_function(node)
        if fn is not None:
            info = self.func(fn.node)
            entries = info.defs.get(node.id)
            binding = fn.scope.bindings.get(node.id)
            if entries or (binding is not None and binding.kind in ("local", "param")):
                out = None
                if binding is not None and binding.kind == "param":
                    out = self._param(node.id, binding, depth)
                for entry in entries or ():
                    out = join(out, self._entry(entry, depth))
                out = out or UNKNOWN
                muts = info.muts.get(node.id)
                if muts and out.kind in ("empty", "container"):
                    out = self._with_mutations(out, muts, fn.node, depth)
                return out
        binding = ctx.lookup(node.id, ctx.scope_of(node))
        if binding is not None and binding.kind == "local" and binding is ctx.module_scope.bindings.get(node.id):
            out = None
            for v in binding.values:
                out = join(out, self.typeof(v, depth) if v is not None else UNKNOWN)
            # a module-level constant is not data-sized unless it reads data itself
            return out or UNKNOWN
        if binding is not None and binding.kind == "import" and binding.qualname in ("pathlib.Path", "pathlib.PosixPath"):
            return T("pathclass")
        return UNKNOWN

    def _param(self, name: str, binding, depth: int) -> T:
        default = binding.default
        if isinstance(default, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            return UNKNOWN  # a literal default: a fixed, small collection (class names, mean/std ...)
        if name in ("self", "cls"):
            return UNKNOWN
        return T("unknown", data=f"the `{name}` argument", defer=f"param:{name}")

    def _entry(self, entry, depth: int) -> T:
        kind, node, path = entry
        if kind == "unknown" or node is None:
            return UNKNOWN
        t = self.typeof(node, depth)
        if kind == "iter":
            t = elem_of(t)
        for i in path:
            if t.kind == "tuple" and i < len(t.items):
                t = t.items[i]
            else:
                return UNKNOWN
        return t

    def _with_mutations(self, base: T, muts, stop, depth: int) -> T:
        ctype = base.ctype or "list"
        elem = base.elem if base.kind == "container" else None
        data = base.data
        for kind, node in muts:
            if kind in ("append", "insert", "add", "appendleft"):
                args = node.args
                value = args[-1] if args else None
                elem = join(elem, self.typeof(value, depth))
            elif kind in ("extend", "extendleft"):
                inner = self.typeof(node.args[0], depth) if node.args else UNKNOWN
                elem = join(elem, elem_of(inner))
                data = data or inner.data
            elif kind == "augassign":
                inner = self.typeof(node.value, depth)
                elem = join(elem, elem_of(inner))
                data = data or inner.data
            elif kind in ("setitem", "update", "setdefault"):
                ctype = "dict" if base.ctype in ("dict", "OrderedDict", "defaultdict", "Counter", "") else ctype
                elem = T("mixed")
            data = data or self.loop_data(node, stop)
        return T("container", ctype, elem, data=data, source=base.source or "appends in a loop")

    def _call(self, node: ast.Call, depth: int) -> T:
        ctx = self.ctx
        callee = ctx.call_name(node)
        args = node.args
        first = self.typeof(args[0], depth) if args else None
        func = node.func
        if callee is not None:
            if callee in CONTAINER_BUILTINS:
                ctype = CONTAINER_BUILTINS[callee]
                if first is None:
                    return T("empty", ctype)
                if first.kind == "call":  # elements of a project function's result: resolved in check
                    return T("container", ctype, None, data=first.data, defer=first.defer, source=f"`{callee.rsplit('.', 1)[-1]}(...)`")
                return T("container", ctype, elem_of(first), data=first.data, source=f"`{callee.rsplit('.', 1)[-1]}(...)`")
            if callee in MAPPING_BUILTINS:
                ctype = MAPPING_BUILTINS[callee]
                data = ""
                for a in args[1:] if callee == "collections.defaultdict" else args:
                    data = data or self.typeof(a, depth).data
                if not args or (callee == "collections.defaultdict" and len(args) == 1):
                    if not node.keywords:
                        return T("empty", ctype)
                return T("container", ctype, T("mixed"), data=data, source=f"`{callee.rsplit('.', 1)[-1]}(...)`")
            if callee == "builtins.zip":
                elems = [elem_of(self.typeof(a, depth)) for a in args]
                data = next((self.typeof(a, depth).data for a in args if self.typeof(a, depth).data), "")
                return T("iter", "", T("tuple", items=tuple(elems)), data=data)
            if callee == "builtins.enumerate":
                inner = first or UNKNOWN
                return T("iter", "", T("tuple", items=(INT, elem_of(inner))), data=inner.data)
            if callee in ("builtins.map", "builtins.filter", "builtins.reversed"):
                inner = self.typeof(args[-1], depth) if args else UNKNOWN
                elem = elem_of(inner) if callee != "builtins.map" else UNKNOWN
                if callee == "builtins.map" and args and isinstance(args[0], ast.Name) and args[0].id in ("str", "int", "float"):
                    elem = {"str": STR, "int": INT, "float": FLOAT}[args[0].id]
                return T("iter", "", elem, data=inner.data)
            if callee == "builtins.range":
                data = ""
                for a in args:
                    data = data or self.typeof(a, depth).data
                return T("iter", "", INT, data=data)
            if callee == "builtins.len":
                return T("int", data=first.data if first else "")
            if callee == "builtins.int":
                return INT
            if callee == "builtins.float":
                return FLOAT
            if callee in STR_FUNCS:
                return STR
            if callee in ("os.path.getsize", "os.path.getmtime", "os.path.getctime"):
                return INT if callee == "os.path.getsize" else FLOAT
            if callee in ("builtins.open", "io.open", "codecs.open"):
                mode = None
                if len(args) > 1 and isinstance(args[1], ast.Constant):
                    mode = args[1].value
                for kw in node.keywords:
                    if kw.arg == "mode" and isinstance(kw.value, ast.Constant):
                        mode = kw.value.value
                binary = isinstance(mode, str) and "b" in mode
                return T("file", "binary" if binary else "", data="a file read")
            if callee in LISTING:
                return LISTING[callee]
            if callee in LOADS:
                return T("container", "JSON data", T("json"), data=LOADS[callee], source=LOADS[callee])
            if callee in COCO_API:
                return T("coco", data="COCO annotations (`pycocotools`)")
            if callee in ("csv.reader", "csv.DictReader"):
                elem = T("container", "list", STR) if callee == "csv.reader" else T("dict")
                return T("iter", "", elem, data=f"a file read (`{callee}`)")
            if callee in ("pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"):
                return PATH
            if callee in ("os.path.splitext", "os.path.split"):
                return T("tuple", items=(STR, STR))
            if callee in ("numpy.array", "numpy.asarray"):
                dtype = next((kw.value for kw in node.keywords if kw.arg == "dtype"), None)
                if dtype is None and len(args) > 1:
                    dtype = args[1]
                if dtype is not None and (
                    (isinstance(dtype, ast.Name) and dtype.id == "object")
                    or ctx.qualname(dtype) in ("builtins.object", "numpy.object_")
                    or (isinstance(dtype, ast.Constant) and dtype.value in ("O", "object"))
                ):
                    inner = first or UNKNOWN
                    return T("container", "object array", elem_of(inner), data=inner.data, source="`np.array(..., dtype=object)`")
                elem = None
                if dtype is not None:
                    dt = (ctx.qualname(dtype) or "").rsplit(".", 1)[-1]
                    if dt in ("str_", "unicode_"):
                        elem = STR
                    elif dt in ("int64", "int32", "int_", "intp", "uint8", "int16", "uint16", "uint32", "uint64"):
                        elem = INT
                    elif dt in ("float64", "float32", "float_", "double"):
                        elem = FLOAT
                return T("array", elem=elem, data=first.data if first else "")
            if callee.startswith(ARRAY_MODULES) or callee in ARRAY_FUNCS:
                data = ""
                if callee in SIZE_KEEPING:
                    for a in args:
                        data = data or self.typeof(a, depth).data
                if callee.startswith("pandas.read_") or callee in ("numpy.load", "numpy.loadtxt", "numpy.genfromtxt"):
                    data = data or "a file read"
                return T("array", data=data)
            if callee.startswith("builtins."):
                return UNKNOWN
            return T("call", defer=callee, data=self._args_data(node, depth))
        if isinstance(func, ast.Attribute):
            method = func.attr
            if ctx.is_self_attr(func):
                fn = ctx.method_of(func)
                if fn is not None and method in fn.cls.methods:
                    return T("call", defer=f"self.{method}", data=self._args_data(node, depth))
                return UNKNOWN
            recv = self.typeof(func.value, depth)
            if recv.kind == "coco":
                if method in ("getImgIds", "getAnnIds", "getCatIds"):
                    return T("container", "list", UNKNOWN, data=recv.data, source=f"`COCO.{method}()`")
                if method in ("loadImgs", "loadAnns", "loadCats"):
                    return T("container", "JSON data", T("json"), data=recv.data, source=f"`COCO.{method}()`")
                return UNKNOWN
            if method == "readlines":
                return T("container", "list", STR, data="a file read (`readlines`)", source="`readlines()`")
            if method in ("read", "read_text"):
                if recv.kind in ("file", "path") or (recv.kind == "unknown" and method == "read_text"):
                    return T("str", data="a file read")
                return UNKNOWN
            if method in ("splitlines", "split") and recv.kind == "str":
                return T("container", "list", STR, data=recv.data, source=f"`{method}()`")
            if method in STR_METHODS and recv.kind == "str":
                return T("str", data=recv.data)
            if method == "tolist":
                return T("container", "list", UNKNOWN, data=recv.data, source="`.tolist()`")
            if method in ("glob", "rglob", "iterdir") and recv.kind in ("path", "pathclass"):
                return T("iter", "", PATH, data=f"a directory listing (`Path.{method}`)")
            if method in ("keys", "values", "items") and recv.kind == "container" and recv.data:
                elem = T("tuple", items=(UNKNOWN, UNKNOWN)) if method == "items" else UNKNOWN
                return T("iter", "", elem, data=recv.data)
            if method == "copy" and recv.kind == "container":
                return recv
            if recv.kind == "path" and method == "open":
                return T("file", data="a file read")
            if recv.kind == "path" and method in ("resolve", "absolute", "with_suffix", "with_name", "joinpath", "expanduser"):
                return PATH
            if recv.kind == "array":
                return T("array", data=recv.data)
            if recv.kind == "pathclass" and method in ("cwd", "home"):
                return PATH
        return UNKNOWN

    def _args_data(self, node: ast.Call, depth: int) -> str:
        for a in (*node.args, *(k.value for k in node.keywords)):
            data = self.typeof(a, depth).data
            if data:
                return data
        return ""


# --------------------------------------------------------------------------- uses


NEUTRAL_CALLS = frozenset(
    {"torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.FloatTensor", "torch.Tensor", "builtins.int",
     "builtins.float", "builtins.str", "builtins.range", "numpy.array", "numpy.asarray", "numpy.int64",
     "numpy.float32", "numpy.float64", "torch.full", "torch.zeros", "torch.ones"}
)


def _elem_neutral(ctx, expr, follow: bool = True) -> bool:
    """Whether an element (``self.X[i]``) only goes where an int and an np.int64 act the same:
    returned in the sample (collated to the same tensor), arithmetic, comparisons, used as an
    index, formatted, or passed to int()/float()/torch.tensor(); one local alias is followed."""
    up, parent = expr, ctx.parent(expr)
    while isinstance(parent, (ast.Tuple, ast.List, ast.Dict)):
        up, parent = parent, ctx.parent(parent)
    if up is not expr:  # inside a display: fine only when the display is the returned sample
        return isinstance(parent, (ast.Return, ast.Yield))
    if isinstance(parent, (ast.Return, ast.Yield, ast.BinOp, ast.UnaryOp, ast.Compare, ast.FormattedValue)):
        return True
    if isinstance(parent, ast.Subscript) and parent.slice is expr:
        return True
    if isinstance(parent, ast.Call) and expr in parent.args:
        return ctx.call_name(parent) in NEUTRAL_CALLS
    if isinstance(parent, ast.Expr):
        return True
    if follow and isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        fn = ctx.enclosing_function(parent)
        if fn is None:
            return False
        name = parent.targets[0].id
        for sub in ctx.walk_function(fn.node):
            if isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Load):
                if not _elem_neutral(ctx, sub, follow=False):
                    return False
        return True
    return False


def classify_use(ctx, node: ast.Attribute) -> tuple[str, str]:
    """How ``<recv>.X`` (node) is used: (kind, detail)."""
    parent = ctx.parent(node)
    if isinstance(node.ctx, ast.Store):
        return "store", ""
    if isinstance(node.ctx, ast.Del):
        return "method", "del"
    if isinstance(parent, ast.Subscript) and parent.value is node:
        if isinstance(parent.ctx, ast.Store):
            return "setitem", "item assignment"
        if isinstance(parent.ctx, ast.Del):
            return "setitem", "item deletion"
        if isinstance(parent.slice, ast.Slice):
            return "slice", "sliced"
        if isinstance(parent.slice, ast.Tuple):
            return "other", "indexed with a tuple"
        grand = ctx.parent(parent)
        up, holder = parent, grand  # through displays: json.dumps({"id": self.ids[i]})
        while isinstance(holder, (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.keyword)):
            up, holder = holder, ctx.parent(holder)
        if isinstance(holder, ast.Call) and (up in holder.args or isinstance(up, ast.keyword)):
            callee = ctx.call_name(holder)
            if callee in ELEM_TYPE_FUNCS:
                return "elemtype", f"an element passed to `{callee.rsplit('.', 1)[-1]}`"
        if isinstance(grand, ast.Subscript) and grand.value is parent and isinstance(grand.ctx, ast.Store):
            return "setitem", "an element changed in place"
        if isinstance(grand, ast.Attribute) and grand.value is parent:
            gg = ctx.parent(grand)
            if isinstance(gg, ast.Call) and gg.func is grand and grand.attr in LIST_ONLY_METHODS:
                return "elemmethod", f"an element changed with `.{grand.attr}()`"
        if isinstance(parent.slice, ast.Constant) and isinstance(parent.slice.value, str):
            # self.cfg["size"]: one named entry, like a config lookup; but self.ann["images"][i],
            # self.ann["imgs"].values(), `for a in self.ann["annotations"]` read a whole table
            reads_table = (
                (isinstance(grand, (ast.Subscript, ast.Attribute)) and grand.value is parent)
                or (isinstance(grand, (ast.For, ast.comprehension)) and grand.iter is parent)
                or (isinstance(grand, ast.Call) and parent in grand.args and ctx.call_name(grand) in ITER_FUNCS - {"builtins.len"})
                or (isinstance(grand, ast.Compare) and parent in grand.comparators)
            )
            if not reads_table:
                return "key", ""
        if not _elem_neutral(ctx, parent):
            return "index_loose", "an element is used where `np.int64` and `int` may differ"
        return "index", ""
    if isinstance(parent, ast.Attribute) and parent.value is node:
        grand = ctx.parent(parent)
        if isinstance(grand, ast.Call) and grand.func is parent:
            if parent.attr in MUTATORS or parent.attr in REORDERS or parent.attr in LIST_ONLY_METHODS:
                return "method", f"`.{parent.attr}()`"
            if parent.attr == "copy":
                return "other", "`.copy()`"
        return "other", f"`.{parent.attr}`"
    if isinstance(parent, ast.Call):
        if node in parent.args:
            callee = ctx.call_name(parent)
            if callee in ITER_FUNCS:
                return ("len", "") if callee == "builtins.len" else ("iter", "")
            if callee in ("json.dump", "json.dumps"):
                return "json", f"passed to `{callee}`"
            if callee == "random.shuffle":
                return "shuffle", "passed to `random.shuffle`"
            name = callee.rsplit(".", 1)[-1] if callee else ctx.segment(parent.func, 30)
            return "passed", f"passed whole to `{name}`"
        return "passed", "passed as a keyword argument"
    if isinstance(parent, ast.keyword):
        return "passed", f"passed as `{parent.arg}=`"
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is node:
        return "iter", ""
    if isinstance(parent, ast.Compare):
        if node in parent.comparators:
            idx = parent.comparators.index(node)
            if isinstance(parent.ops[idx], (ast.In, ast.NotIn)):
                return "in", ""
        return "compare", "compared"
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and getattr(parent, "test", None) is node:
        return "truth", "used as a truth value"
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return "truth", "used as a truth value"
    if isinstance(parent, ast.BoolOp):
        return "truth", "used in `and`/`or`"
    if isinstance(parent, ast.BinOp):
        return "binop", f"used with `{_OPS.get(type(parent.op), 'an operator')}`"
    if isinstance(parent, ast.AugAssign) and parent.target is node:
        return "augassign", "extended with `+=`"
    if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
        return "returned", "returned whole"
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and parent.value is node:
        return "alias", "bound to another name"
    if isinstance(parent, ast.Starred):
        return "iter", ""
    if isinstance(parent, ast.FormattedValue):
        return "other", "formatted as text"
    if isinstance(parent, ast.Expr):
        return "noop", ""
    return "other", "used in an expression"


_OPS = {ast.Add: "+", ast.Mult: "*", ast.Sub: "-", ast.Mod: "%", ast.BitOr: "|", ast.BitAnd: "&"}

MUTATING_USES = frozenset({"method", "setitem", "augassign", "shuffle"})


def _kind_of_t(t: T) -> str:
    if t.kind == "container":
        return "container"
    if t.kind in ("empty", "none"):
        return "empty"
    if t.kind == "call":
        return "call"
    return "other"


def _ser(t: T):
    return t


# --------------------------------------------------------------------------- the rule


@dataclass(slots=True)
class Build:
    attr: str
    op: str  # assign | mutate
    t: T
    span: Span  # the statement (assign) / the call (mutate)
    value: Span | None  # the assigned value
    value_paren: bool  # the value may be wrapped in a call as is
    top: int  # index of the method's top-level statement holding it
    loop: str  # data reason of the loops around a mutation


@dataclass(slots=True)
class Use:
    attr: str
    kind: str
    detail: str
    row: int
    top: int  # index of the method's top-level statement holding it (-1: nested def)


@dataclass(slots=True)
class MethodInfo:
    self_name: str
    builds: list = field(default_factory=list)
    uses: list = field(default_factory=list)
    has_return: bool = False
    tops: list = field(default_factory=list)  # (insert row, insert col, prefix, indent) after each top-level statement
    numpy: str | None = None  # the name numpy is reachable under here (None: must import)
    np_free: bool = True  # "np" can be bound at module level without shadowing anything here


class CopyOnReadContainer(Rule):
    code = "DL101"
    name = "copy-on-read-container"
    severity = "warning"
    fix = "safe or unsafe"
    triggers = ()
    summary = "A data-sized list/dict on a Dataset read in workers: every forked worker slowly copies it (refcounts); store a numpy array."
    docs = {
        "What it does": """
            Flags a Python container (list, dict, set, tuple, deque, `np.array(..., dtype=object)`,
            JSON data) stored on a Dataset in `__init__` (or a helper it calls) whose size follows
            the data (a directory listing, a file read, an `__init__` argument, a loop over those)
            and which is read in code that runs in DataLoader workers (`__getitem__`, `__iter__`
            and what they call). Silent for literal lists, class names, mean/std, transform lists,
            numpy non-object arrays, tensors, serialized buffers, attributes used only in
            `__init__`/`__len__`, and datasets whose every loader has `num_workers=0`.
            """,
        "Why is this bad?": """
            Forked workers share the parent's pages copy-on-write, but CPython writes the reference
            count of every object it reads (and the cyclic GC writes the headers of containers), so
            each worker slowly gets a private copy of every list element it touches: memory grows
            through the epoch, once per worker ("DataLoader worker (pid N) is killed by signal:
            Killed"). Measured: 2M paths in a list cost 184 MB per worker after one pass; as a numpy
            `<U37` array 0.1 MB. Under spawn/forkserver each worker holds a full pickled copy instead.
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
            The fix converts a list of str / int / float (element type known from the code) to a
            numpy array with an explicit dtype, importing numpy when needed. It is safe only when
            every use of the attribute in the project is one an array answers the same way
            (indexing with one integer, `len`, iteration, membership; int elements only returned,
            used in arithmetic, as indexes or in `torch.tensor()`). It is unsafe when the list (or a
            slice of it) is handed to other code, returned, aliased, reassigned later, its int
            elements are type-checked, JSON-encoded or kept elsewhere (`np.int64` is not `int`), or
            its element type is known only from this project's calls of the class. There is no fix
            when the list is mutated after `__init__`, truth-tested, concatenated, compared,
            JSON-dumped, built in several methods, or holds tuples, dicts, paths or mixed values.
            List-only uses right after the build in the same method (`if not self.X: raise`,
            `self.X.sort()`) stay before the conversion, which goes after the last of them.
            """,
        "References": """
            - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
            - pytorch/pytorch#13246
            - https://ppwwyyxx.com/blog/2022/Demystify-RAM-Usage-in-Multiprocess-DataLoader/
            """,
    }

    # ----------------------------------------------------------------- facts

    def extract(self, ctx):
        try:
            return self._extract(ctx)
        except RecursionError:
            raise  # the core reports the file as too deeply nested
        except Exception:  # pragma: no cover - never let one odd file stop the run
            return None

    def _extract(self, ctx):
        an = Analyzer(ctx)
        classes: dict[str, dict[str, MethodInfo]] = {}
        numpy_name = self._numpy_binding(ctx)
        for fn in ctx.functions:
            if fn.cls is None or not fn.self_name:
                continue
            info = self._method(ctx, an, fn, numpy_name)
            if info.builds or info.uses:
                classes.setdefault(fn.cls.qualname, {})[fn.qualname] = info
        return_nodes: list = []
        attr_nodes: list = []
        call_nodes: list = []
        for node in ctx.all_nodes():
            if isinstance(node, ast.Attribute):
                attr_nodes.append(node)
            elif isinstance(node, ast.Call):
                call_nodes.append(node)
            elif isinstance(node, ast.Return) and node.value is not None:
                return_nodes.append(node)
        by_fn: dict[str, T | None] = {}
        for node in return_nodes:
            fn = ctx.enclosing_function(node)
            if fn is not None:
                by_fn[fn.qualname] = join(by_fn.get(fn.qualname), an.typeof(node.value))
        returns = {q: t for q, t in by_fn.items() if t is not None and t.kind in ("container", "call", "iter", "tuple")}
        ext_uses: dict[str, list] = {}
        for node in attr_nodes:
            if ctx.is_self_attr(node):
                continue
            parent = ctx.parent(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                continue  # a method call: not a data attribute
            if _is_module_ref(ctx, node.value):
                continue  # module.attr
            kind, detail = classify_use(ctx, node)
            lst = ext_uses.setdefault(node.attr, [])
            if len(lst) < 8 and (kind, detail) not in [(k, d) for k, d, _ in lst]:
                lst.append((kind, detail, node.lineno))
        ctor_calls = self._ctor_calls(ctx, an, call_nodes)
        if not classes and not returns and not ext_uses and not ctor_calls:
            return None
        return {
            "classes": classes,
            "returns": returns,
            "ext_uses": ext_uses,
            "ctor_calls": ctor_calls,
            "import": self._import_plan(ctx),
        }

    @staticmethod
    def _ctor_calls(ctx, an: Analyzer, calls) -> list:
        """Calls of class-like callees (``Images(paths, ...)``) with the containers they pass.

        Each: (callee, row, ((position or keyword, T or None), ...)); None is a value we cannot type."""
        out = []
        for node in calls:
            func = node.func
            last = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if not last[:1].isupper():
                continue
            callee = ctx.call_name(node)
            if callee is None or callee.startswith(("builtins.", "torch.", "numpy.", "collections.", "pathlib.")):
                continue
            args = []
            for i, arg in enumerate(node.args):
                if isinstance(arg, ast.Starred):
                    break
                args.append((i, an.typeof(arg)))
            for kw in node.keywords:
                if kw.arg is not None:
                    args.append((kw.arg, an.typeof(kw.value)))
            if not any(t.kind in ("container", "iter", "empty", "call") for _, t in args):
                continue
            args = [(k, t if t.kind in ("container", "iter", "empty", "array", "call") else None) for k, t in args]
            starred = any(isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords)
            out.append((callee, node.lineno, tuple(args), starred))
        return out

    @staticmethod
    def _numpy_binding(ctx) -> str | None:
        for name, binding in ctx.module_scope.bindings.items():
            if binding.kind == "import" and binding.qualname == "numpy":
                return name
        return None

    @staticmethod
    def _import_plan(ctx):
        """(row, col, text) inserting ``import numpy as np`` after the leading docstring/imports."""
        body = ctx.tree.body
        last = None
        i = 0
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            last = body[0]
            i = 1
        while i < len(body) and isinstance(body[i], (ast.Import, ast.ImportFrom)):
            last = body[i]
            i += 1
        if last is None:
            if not body:
                return None
            return (body[0].lineno, 1, "")
        row = last.end_lineno
        if row >= len(ctx.lines) and not ctx.text.endswith(("\n", "\r")):
            return (row, len(ctx.lines[row - 1]) + 1, "\n")
        line = ctx.lines[row - 1] if row <= len(ctx.lines) else ""
        if last.end_col_offset is not None and line[last.end_col_offset:].strip().startswith(";"):
            return None
        return (row + 1, 1, "")

    def _method(self, ctx, an: Analyzer, fn, numpy_name) -> MethodInfo:
        node = fn.node
        info = MethodInfo(self_name=fn.self_name)
        if numpy_name is not None:
            b = ctx.lookup(numpy_name, fn.scope)
            info.numpy = numpy_name if b is ctx.module_scope.bindings.get(numpy_name) else None
        info.np_free = ctx.lookup("np", fn.scope) is None
        positions = {id(stmt): i for i, stmt in enumerate(node.body)}
        for stmt in node.body:
            info.tops.append(self._after(ctx, node, stmt))

        def top(sub) -> int:
            """Index of the method's top-level statement holding ``sub`` (-1: in a nested def)."""
            child = sub
            for anc in ctx.ancestors(sub):
                if anc is node:
                    return positions.get(id(child), -1)
                if isinstance(anc, (*FUNC_TYPES, ast.ClassDef)):
                    return -1
                child = anc
            return -1
        for sub in ctx.walk_function(node):
            if isinstance(sub, ast.Return):
                info.has_return = True
            if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.value is not None:
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                for target in targets:
                    if ctx.is_self_attr(target, fn):
                        t = an.typeof(sub.value)
                        paren = not (isinstance(sub.value, ast.Tuple) and not ctx.segment(sub.value, 10**6).startswith("("))
                        paren = paren and not isinstance(sub.value, (ast.Starred, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
                        info.builds.append(
                            Build(target.attr, "assign", t, ctx.span(sub), ctx.span(sub.value), paren, top(sub), "")
                        )
                    elif isinstance(target, (ast.Tuple, ast.List)):
                        # self.samples, self.targets = load(root): one item of a tuple each
                        whole = an.typeof(sub.value)
                        for i, elt in enumerate(target.elts):
                            if not ctx.is_self_attr(elt, fn):
                                continue
                            if whole.kind == "tuple" and i < len(whole.items):
                                t = whole.items[i]
                            elif whole.kind == "call":
                                t = replace(whole, items=(i,))
                            else:
                                t = UNKNOWN
                            info.builds.append(Build(elt.attr, "assign", t, ctx.span(sub), None, False, top(sub), ""))
                    elif isinstance(target, ast.Subscript) and ctx.is_self_attr(target.value, fn):
                        t = T("container", "dict", T("mixed"))
                        info.builds.append(
                            Build(target.value.attr, "mutate", t, ctx.span(sub), None, False, top(sub), an.loop_data(sub, node))
                        )
            elif isinstance(sub, ast.AugAssign) and ctx.is_self_attr(sub.target, fn):
                inner = an.typeof(sub.value)
                t = T("container", "list", elem_of(inner), data=inner.data)
                info.builds.append(
                    Build(sub.target.attr, "mutate", t, ctx.span(sub), None, False, top(sub), an.loop_data(sub, node))
                )
            elif (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and ctx.is_self_attr(sub.func.value, fn)
                and sub.func.attr in (MUTATORS | REORDERS)
            ):
                attr = sub.func.value.attr
                m = sub.func.attr
                if m in ("append", "insert", "add", "appendleft"):
                    t = T("container", "set" if m == "add" else "list", an.typeof(sub.args[-1]) if sub.args else UNKNOWN)
                elif m in ("extend", "extendleft"):
                    inner = an.typeof(sub.args[0]) if sub.args else UNKNOWN
                    t = T("container", "list", elem_of(inner), data=inner.data)
                elif m in REORDERS:
                    t = T("container", "")
                else:  # update / setdefault: a mapping
                    data = an.typeof(sub.args[0]).data if sub.args else ""
                    t = T("container", "dict", T("mixed"), data=data)
                info.builds.append(
                    Build(attr, "mutate", t, ctx.span(sub), None, False, top(sub), an.loop_data(sub, node))
                )
            if isinstance(sub, ast.Attribute) and ctx.is_self_attr(sub, fn):
                kind, detail = classify_use(ctx, sub)
                if kind != "store":
                    info.uses.append(Use(sub.attr, kind, detail, sub.lineno, top(sub)))
        # uses inside nested functions (closures, key functions): they may run at any time
        body = ctx.walk_function(node)
        if not any(isinstance(sub, NESTED_SCOPES) for sub in body):
            return info  # every node was seen above
        seen = {id(sub) for sub in body}
        for sub in ast.walk(node):
            if id(sub) in seen or not isinstance(sub, ast.Attribute):
                continue
            if isinstance(sub.value, ast.Name) and sub.value.id == fn.self_name:
                kind, detail = classify_use(ctx, sub)
                info.uses.append(Use(sub.attr, kind if kind != "store" else "store", detail, sub.lineno, -2))
        return info

    @staticmethod
    def _after(ctx, fn_node, stmt):
        """Where a statement after ``stmt`` goes (row, col, prefix, indent), or None."""
        if stmt.lineno == fn_node.lineno:
            return None
        first = ctx.lines[stmt.lineno - 1] if stmt.lineno <= len(ctx.lines) else ""
        indent = first[: len(first) - len(first.lstrip())]
        if first[len(indent):].startswith(("else", "elif", "except", "finally")) or not indent:
            return None
        row = stmt.end_lineno
        line = ctx.lines[row - 1] if row <= len(ctx.lines) else ""
        if line[stmt.end_col_offset or 0 :].strip().startswith(";"):
            return None
        if row >= len(ctx.lines) and not ctx.text.endswith(("\n", "\r")):
            return (row, len(line) + 1, "\n", indent)
        return (row + 1, 1, "", indent)

    def _resolve(self, project, t: T, facts, cls_ref, depth: int = 0) -> T:
        """A deferred call's return summary (project functions and methods), else unknown."""
        if t.kind == "container" and t.defer and depth <= 3:
            inner = self._resolve(project, T("call", defer=t.defer, data=t.data), facts, cls_ref, depth + 1)
            if inner.kind in ("container", "iter"):
                return T("container", t.ctype, elem_of(inner), data=inner.data or t.data, source=t.source)
            return T("container", t.ctype, UNKNOWN, data="", source=t.source)  # an unknown call: size unknown
        if t.kind != "call" or depth > 3:
            return t
        index = project.index
        target = None
        if t.defer.startswith("self."):
            if cls_ref is not None:
                target = index.find_method(cls_ref, t.defer[5:])
        else:
            found = index.resolve(t.defer, facts.root)
            if found is not None and hasattr(found, "fn"):
                target = found
        if target is None:
            return UNKNOWN
        payload = target.file.payloads.get(self.code) or {}
        ret = payload.get("returns", {}).get(target.fn.qualname)
        if ret is None:
            return UNKNOWN
        owner = index.class_of(target) if target.fn.cls else None
        ret = self._resolve(project, ret, target.file, cls_ref if owner is not None else None, depth + 1)
        if t.items:  # one item of a returned tuple
            i = t.items[0]
            if ret.kind != "tuple" or not isinstance(i, int) or i >= len(ret.items):
                return UNKNOWN
            ret = self._resolve(project, ret.items[i], target.file, cls_ref if owner is not None else None, depth + 1)
        return ret

    def check(self, project):
        index = project.index
        reported: set = set()
        ext_uses: dict[str, list] = {}
        for facts, payload in project.payloads(self.code):
            for attr, uses in payload["ext_uses"].items():
                ext_uses.setdefault(attr, []).extend((facts.path, k, d, r) for k, d, r in uses)
        # subclasses of every class, computed once (index.subclasses_of is quadratic per call)
        self._subs: dict = {}
        self._mros: dict = {}
        self._ctor_index = None  # class key -> calls of it, built on first need
        for c in index.classes():
            chain = index.mro(c)
            self._mros[c.key] = chain
            for r in chain[1:]:
                self._subs.setdefault(r.key, []).append(c)
        for cls in index.dataset_classes():
            try:
                found = list(self._check_class(project, cls, ext_uses, reported))
            except RecursionError:  # pragma: no cover - pathological hierarchies
                continue
            yield from found

    def _methods(self, project, refs) -> list:
        out = []
        for ref in refs:
            if ref.fn.cls is None:
                continue
            payload = ref.file.payloads.get(self.code)
            if not payload:
                continue
            info = payload["classes"].get(ref.fn.cls, {}).get(ref.fn.qualname)
            if info is not None:
                out.append((ref, info))
        return out

    def _check_class(self, project, cls, ext_uses, reported):
        index = project.index
        keys = {cls.key} | {s.key for s in self._subs.get(cls.key, ())}
        loaders = [ld for ld in index.loaders if any(d.key in keys for d in ld.datasets)]
        if loaders and all(ld.workers == "no" for ld in loaders):
            return
        mro = index.mro(cls)
        mro_keys = {(r.file.path, r.cls.qualname) for r in mro}
        init = index.find_method(cls, "__init__")
        if init is None:
            return
        init_fns = [r for r, _ in index.reachable([init], cls).values() if (r.file.path, r.fn.cls) in mro_keys]
        worker_fns = [r for r, _ in index.worker_functions(cls).values() if (r.file.path, r.fn.cls) in mro_keys]
        init_keys = {r.key for r in init_fns}
        worker_reads: dict[str, str] = {}
        key_only: dict[str, bool] = {}
        for ref, info in self._methods(project, worker_fns):
            for use in info.uses:
                if use.kind in ("len", "store", "noop"):
                    continue  # len() reads the container's header, not its elements
                worker_reads.setdefault(use.attr, ref.fn.name)
                key_only[use.attr] = key_only.get(use.attr, True) and use.kind == "key"
        if not worker_reads:
            return
        builds: dict[str, list] = {}
        for ref, info in self._methods(project, init_fns):
            for b in info.builds:
                if b.attr in worker_reads:
                    builds.setdefault(b.attr, []).append((ref, info, b))
        if loaders:
            methods = set()
            for ld in loaders:
                if ld.workers != "no":
                    methods |= set(ld.start_methods)
        else:
            methods = set(project.settings.default_start_methods())
        spawn_only = bool(methods) and methods <= {"spawn", "forkserver"}
        # every class whose `self` can be this object, for uses of the attribute
        family = {r.key: r for r in mro}
        for sub in self._subs.get(cls.key, ()):
            for r in self._mros.get(sub.key) or index.mro(sub):
                family.setdefault(r.key, r)
        for attr, items in builds.items():
            if _attr_words(attr) & CONFIG_WORDS:
                continue
            diag = self._finding(project, cls, attr, items, worker_reads[attr], family, ext_uses, init_keys, spawn_only, key_only[attr])
            if diag is None:
                continue
            key = (diag.path, diag.span, attr)
            if key in reported:
                continue
            reported.add(key)
            yield diag

    def _from_callers(self, project, cls, init_ref, pname: str) -> T:
        """``self.X = param`` in ``__init__``: what the project's calls of the class pass as ``param``."""
        index = project.index
        owner = index.class_of(init_ref)
        if owner is None or pname not in init_ref.fn.params:
            return UNKNOWN
        targets = {owner.key}
        for sub in self._subs.get(owner.key, ()):
            found = index.find_method(sub, "__init__")
            if found is not None and found.key == init_ref.key:
                targets.add(sub.key)
        position = init_ref.fn.params.index(pname) - 1
        out: T | None = None
        unknown_site = False
        if self._ctor_index is None:
            self._ctor_index = {}
            resolved_names: dict = {}
            for facts, payload in project.payloads(self.code):
                for call in payload.get("ctor_calls", ()):
                    name_key = (call[0], facts.root)
                    if name_key not in resolved_names:
                        found = index.resolve(call[0], facts.root)
                        resolved_names[name_key] = getattr(found, "key", None) if hasattr(found, "cls") else None
                    key = resolved_names[name_key]
                    if key is not None:
                        self._ctor_index.setdefault(key, []).append((facts, call))
        sites = [site for key in targets for site in self._ctor_index.get(key, ())]
        for facts, (callee, row, args, starred) in sites:
            if True:
                value = next((t for k, t in args if k == pname or k == position), "absent")
                if value == "absent":
                    unknown_site = unknown_site or starred
                    continue
                if value is not None and value.kind == "call":
                    value = self._resolve(project, value, facts, None)
                if value is None or value.kind not in ("container",) or not value.ctype:
                    unknown_site = True
                    continue
                where = f"{_base(facts.path)}:{row}"
                value = replace(value, data=f"{value.data} passed as `{pname}` ({where})" if value.data else "", source="callers")
                out = join(out, value)
        if out is None or out.kind != "container":
            return UNKNOWN
        out = replace(out, source="callers")
        if unknown_site:
            out = replace(out, elem=T("mixed"))  # some caller passes something else: no fix
        return out

    def _finding(self, project, cls, attr, items, reader, family, ext_uses, init_keys, spawn_only, key_only=False):
        resolved = []
        for ref, info, b in items:
            t = self._resolve(project, b.t, ref.file, cls)
            if t.kind == "unknown" and t.defer.startswith("param:") and ref.fn.name == "__init__" and b.op == "assign":
                t = self._from_callers(project, cls, ref, t.defer[6:])
            resolved.append((ref, info, b, t))
        # a bare parameter in one branch (`if isinstance(odgt, list): self.X = odgt`) does not hide
        # the data-sized container of the other; the element type is unknown then (no fix)
        params = [x for x in resolved if x[2].op == "assign" and x[3].kind == "unknown" and x[3].defer.startswith("param:")]
        if params and len(params) < len(resolved):
            resolved = [x if x not in params else (x[0], x[1], x[2], T("container", "", T("mixed"))) for x in resolved]
        assigns = [x for x in resolved if x[2].op == "assign"]
        if any(_kind_of_t(t) not in ("container", "empty") for _, _, _, t in assigns):
            return None  # rebound to (or built as) something else: an array, an unknown call's result ...
        total: T | None = None
        for ref, info, b, t in resolved:
            if b.op == "mutate":
                t = replace(t, data=t.data or b.loop)
            total = join(total, t)
        if total is None or total.kind != "container" or not total.data:
            return None
        if total.elem is not None and total.elem.kind == "file":
            return None  # open file handles: DL104's finding (handle-opened-in-init), not a table to compact
        if key_only and total.ctype in ("JSON data", "dict", "OrderedDict", "defaultdict", "Counter"):
            return None  # only named entries are read in workers (self.meta["mean"]): a config, not a table
        anchors = (
            [x for x in assigns if x[3].kind == "container" and x[3].data]
            or [x for x in assigns if x[3].kind == "container"]
            or assigns
            or resolved
        )
        anchor = min(anchors, key=lambda x: (x[0].file.path != cls.file.path, x[2].span.row))
        ref, info, b, _ = anchor
        ctype = total.ctype or "container"
        elem = total.elem or UNKNOWN
        dtype = {"str": "str_", "int": "int64", "float": "float64"}.get(elem.kind) if ctype in ("list", "tuple") else None
        what = f"a {ctype} of {_elem_words(elem)}" if ctype in ("list", "tuple", "set", "deque") else f"a {ctype}"
        if ctype == "JSON data":
            what = "JSON data (nested lists/dicts)"
        if ctype == "object array":
            what = f"an object array of {_elem_words(elem)}"
        better = _better(ctype, elem)
        if spawn_only:
            head = (
                f"`self.{attr}` holds {what} built from {total.data}, read in `{reader}`: with spawn/forkserver "
                f"workers each worker holds a full pickled copy (no growth, but one copy per worker); {better}"
            )
        else:
            head = (
                f"`self.{attr}` holds {what} built from {total.data}, read in `{reader}`: forked workers copy every "
                f"element they touch (refcount writes), so memory grows toward one copy per worker; {better}"
            )
        fix = None
        if dtype is not None:
            verdict, why = self._fix_verdict(attr, resolved, family, ext_uses, elem, project, cls)
            if verdict == "safe" and any(x[3].source == "callers" for x in resolved):
                verdict, why = "unsafe", f"the element type comes from this project's calls of `{cls.cls.name}`; other callers may pass other values"

            if verdict == "none":
                head += f" (no automatic fix: {why})"
            else:
                fix = self._build_fix(project, attr, resolved, dtype, verdict, ref.file)
                if fix is None:
                    head += " (no automatic fix: cannot place the conversion)"
                elif verdict == "unsafe":
                    head += f" (fix is unsafe: {why})"
        details = (("class", cls.cls.qualname), ("attribute", attr))
        return Diagnostic(self.code, head, ref.file.path, b.span, fix=fix, severity=self.severity, details=details)

    @staticmethod
    def _plan(attr, resolved):
        """Where the conversion goes: (why not, build method info, index of the top-level statement
        after which it goes, one-shot wrap?). List-only uses right after the build in the same
        method (``if not self.X: raise``, ``self.X.sort()``) stay before the conversion."""
        if len({x[0].key for x in resolved}) != 1:
            return f"`self.{attr}` is built in several methods", None, -1, False
        info = resolved[0][1]
        if any(x[2].top < 0 for x in resolved):
            return "built inside a nested function", None, -1, False
        last_top = max(x[2].top for x in resolved)
        one_shot = len(resolved) == 1 and resolved[0][2].op == "assign"
        for use in info.uses:
            if use.attr == attr and use.top > last_top and use.kind not in SAFE_USES and use.kind not in ("noop", "elemtype"):
                last_top = use.top
                one_shot = False
        if not one_shot and info.has_return:
            return "the building method returns early", None, -1, False
        return "", info, last_top, one_shot

    def _fix_verdict(self, attr, resolved, family, ext_uses, elem, project, cls):
        why, info, last_top, one_shot = self._plan(attr, resolved)
        if why:
            return "none", why
        ref = resolved[0][0]
        unsafe: list[str] = []
        breaking: list[str] = []
        for key, r in family.items():
            payload = r.file.payloads.get(self.code)
            if not payload:
                continue
            for qual, minfo in payload["classes"].get(r.cls.qualname, {}).items():
                is_build = (r.file.path, qual) == ref.key
                for use in minfo.uses:
                    if use.attr != attr:
                        continue
                    if is_build and 0 <= use.top <= last_top:
                        if use.top == last_top and one_shot and use.row > resolved[0][2].span.end_row:
                            pass  # after the assignment, same statement: unusual; judge it
                        else:
                            continue  # the building phase, before the conversion
                    where = f"line {use.row}" + ("" if r.file.path == ref.file.path else f" of {_base(r.file.path)}")
                    self._judge(use.kind, use.detail, where, elem, unsafe, breaking, attr)
            for qual, minfo in payload["classes"].get(r.cls.qualname, {}).items():
                if (r.file.path, qual) == ref.key:
                    continue
                for b in minfo.builds:
                    if b.attr == attr and (r.file.path, qual) not in {x[0].key for x in resolved}:
                        unsafe.append(f"reassigned outside `__init__` (line {b.span.row})")
        for path, kind, detail, row in ext_uses.get(attr, ()):
            where = f"line {row} of {_base(path)}"
            self._judge(kind, detail, where, elem, unsafe, breaking, attr, receiver="`.%s`" % attr)
        if breaking:
            return "none", breaking[0]
        if unsafe:
            return "unsafe", unsafe[0]
        return "safe", ""

    @staticmethod
    def _judge(kind, detail, where, elem, unsafe, breaking, attr, receiver=None):
        subject = receiver or f"`self.{attr}`"
        if kind in SAFE_USES or kind == "noop":
            return
        if kind == "index_loose":
            if elem.kind == "int":
                unsafe.append(f"{detail} at {where}")
            return
        if kind == "elemtype":
            if elem.kind == "int" or "`type`" in detail:
                unsafe.append(f"{detail} at {where} (elements become numpy scalars)")
            return
        if kind == "store":
            unsafe.append(f"{subject} is reassigned at {where}")
            return
        if kind in BREAKING_USES or kind == "elemmethod":
            breaking.append(f"{subject} is {detail or kind} at {where}" if kind != "method" else f"{subject} uses {detail} at {where}")
            return
        if kind == "slice":
            unsafe.append(f"{subject} is sliced at {where} (a slice is an array; default_collate rejects str arrays)")
            return
        unsafe.append(f"{subject} is {detail or 'used in an unknown way'} at {where}")

    def _build_fix(self, project, attr, resolved, dtype, verdict, facts):
        ref, info = resolved[0][0], resolved[0][1]
        payload = facts.payloads.get(self.code) or {}
        np_name = info.numpy
        edits = []
        if np_name is None:
            plan = payload.get("import")
            if plan is None or not info.np_free:
                return None
            np_name = "np"
            row, col, prefix = plan
            edits.append(Edit(f"{prefix}import numpy as np\n" if not prefix else f"{prefix}import numpy as np", Span(row, col, row, col)))
        _, info, last_top, one_shot = self._plan(attr, resolved)
        if info is None:
            return None
        if one_shot and resolved[0][2].value is not None and resolved[0][2].value_paren:
            v = resolved[0][2].value
            edits.append(Edit(f"{np_name}.array(", Span(v.row, v.col, v.row, v.col)))
            edits.append(Edit(f", dtype={np_name}.{dtype})", Span(v.end_row, v.end_col, v.end_row, v.end_col)))
        else:
            if last_top < 0 or last_top >= len(info.tops) or info.tops[last_top] is None:
                return None
            row, col, prefix, indent = info.tops[last_top]
            s = info.self_name
            line = f"{indent}{s}.{attr} = {np_name}.array({s}.{attr}, dtype={np_name}.{dtype})"
            edits.append(Edit(f"{prefix}{line}" if prefix else f"{line}\n", Span(row, col, row, col)))
        edits.sort(key=lambda e: (e.span.row, e.span.col))
        return Fix(verdict, f"Convert `self.{attr}` to a numpy array (dtype={np_name}.{dtype})", tuple(edits))


def _is_module_ref(ctx, node) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    if not isinstance(node, ast.Name):
        return False
    binding = ctx.lookup(node.id, ctx.scope_of(node))
    return binding is not None and binding.kind in ("import", "class", "def")


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _elem_words(elem: T) -> str:
    k = elem.kind
    if k in ("str", "int", "float", "bytes", "bool"):
        return k
    if k == "path":
        return "Path objects"
    if k == "tuple":
        return "tuples"
    if k in ("dict", "json"):
        return "dicts"
    if k == "container":
        return "JSON documents" if elem.ctype == "JSON data" else f"{elem.ctype or 'container'}s"  # not "JSON datas"
    if k == "entry":
        return "DirEntry objects"
    if k == "mixed":
        return "mixed values"
    return "objects"


def _better(ctype: str, elem: T) -> str:
    k = elem.kind
    if ctype in ("list", "tuple", "deque", "set") and k == "str":
        return "store a numpy str array (`np.array(..., dtype=np.str_)`)"
    if ctype in ("list", "tuple", "deque", "set") and k == "int":
        return "store a numpy int64 array"
    if ctype in ("list", "tuple", "deque", "set") and k == "float":
        return "store a numpy float64 array"
    if k == "path":
        return "store the paths as a numpy str array (`np.array([str(p) for p in ...], dtype=np.str_)`)"
    if k == "tuple":
        return "store one numpy array per field (or a structured array)"
    if ctype in ("dict", "OrderedDict", "defaultdict", "Counter"):
        return "store keys and values as numpy arrays, or pickle the items into one uint8 buffer with int64 offsets"
    return "pickle the items into one uint8 numpy buffer with int64 offsets (a serialized list) or use a pyarrow table"
