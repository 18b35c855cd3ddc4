"""How a file uses attributes (``self.files``, ``ds.files``): read off one file, for the questions
"does any code treat this attribute as something other than a read-only sequence?" (DL101's fix
is safe only when nothing does).

Only the uses that a read-only sequence could not answer the same way are recorded (a method call,
an item assignment, passing the whole object on, comparing it, binding it to another name, an
element changed in place ...); indexing, slicing, ``len``, iteration and ``in`` are not.
"""

from __future__ import annotations

import ast
import re

# uses a read-only sequence answers like a list: not recorded
SAFE = frozenset({"index", "slice", "len", "iter", "in", "truth", "store", "noop", "call"})
ITER_FUNCS = frozenset(
    {
        "builtins.len", "builtins.list", "builtins.tuple", "builtins.sorted", "builtins.set", "builtins.frozenset",
        "builtins.enumerate", "builtins.zip", "builtins.map", "builtins.filter", "builtins.reversed",
        "builtins.iter", "builtins.sum", "builtins.min", "builtins.max", "builtins.any", "builtins.all",
        "random.choice", "random.sample", "itertools.chain", "itertools.islice", "itertools.cycle",
    }
)
ELEM_MUTATORS = frozenset(
    {"append", "extend", "insert", "update", "add", "pop", "remove", "clear", "sort", "reverse", "setdefault", "popitem"}
)


# the detail of a ``table`` use: the key of the named table walked or measured
# (``for im in self.ann["images"]``), or looked up (``self.ann["images"][i]``)
TABLE_READ = "a named table read (`{}`)"
TABLE_LOOKUP = "a named table looked up (`{}`)"


def table_key(detail: str) -> str | None:
    """The key a ``table`` use's detail (``TABLE_READ``, ``TABLE_LOOKUP``) names."""
    found = re.fullmatch(r"a named table (?:read|looked up) [(]`(.*)`[)]", detail)
    return found.group(1) if found else None


def table_lookup(detail: str) -> bool:
    """Whether a ``table`` use looks the named table up with a key (``TABLE_LOOKUP``)."""
    return detail.startswith("a named table looked up")


def classify(ctx, node: ast.Attribute) -> tuple[str, str]:
    """How ``<receiver>.X`` (node) is used: (kind, detail)."""
    parent = ctx.parent(node)
    if isinstance(node.ctx, ast.Store):
        return "store", ""
    if isinstance(node.ctx, ast.Del):
        return "del", "deleted"
    if isinstance(parent, ast.Subscript) and parent.value is node:
        if isinstance(parent.ctx, ast.Store):
            return "setitem", "an item assigned"
        if isinstance(parent.ctx, ast.Del):
            return "setitem", "an item deleted"
        if isinstance(parent.slice, ast.Slice):
            return "slice", ""
        return _element_use(ctx, parent)
    if isinstance(parent, ast.Attribute) and parent.value is node:
        grand = ctx.parent(parent)
        if isinstance(grand, ast.Call) and grand.func is parent:
            return "method", f"`.{parent.attr}()`"
        return "attr", f"`.{parent.attr}`"
    if isinstance(parent, ast.Call):
        if parent.func is node:
            return "call", ""
        if node in parent.args:
            callee = ctx.call_name(parent)
            if callee in ITER_FUNCS:
                return ("len", "") if callee == "builtins.len" else ("iter", "")
            name = callee.rsplit(".", 1)[-1] if callee else ctx.segment(parent.func, 30)
            return "passed", f"passed to `{name}`"
        return "passed", "passed on"
    if isinstance(parent, ast.keyword):
        return "passed", f"passed as `{parent.arg}=`"
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is node:
        return "iter", ""
    if isinstance(parent, ast.Compare):
        if node in parent.comparators:
            i = parent.comparators.index(node)
            if isinstance(parent.ops[i], (ast.In, ast.NotIn)):
                return "in", ""
        return "compare", "compared"
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and getattr(parent, "test", None) is node:
        return "truth", ""
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return "truth", ""
    if isinstance(parent, ast.BoolOp):
        return "boolop", "used in `and`/`or`"
    if isinstance(parent, ast.BinOp):
        return "binop", "used with an operator"
    if isinstance(parent, ast.AugAssign) and parent.target is node:
        return "augassign", "extended in place"
    if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
        return "returned", "returned whole"
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and getattr(parent, "value", None) is node:
        return "alias", "bound to another name"
    if isinstance(parent, ast.Starred):
        return "iter", ""
    if isinstance(parent, ast.Expr):
        return "noop", ""
    return "other", "used in an expression"


def _element_use(ctx, sub: ast.Subscript) -> tuple[str, str]:
    """``recv.X[i]``: an element read; recorded when the element is changed in place (directly,
    or through a local name it is bound to), since each read of a packed list returns a new copy;
    and ``recv.X["name"]`` used as a table (indexed, walked, measured) is recorded as "table"."""
    grand = ctx.parent(sub)
    if isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str):
        if isinstance(grand, ast.Subscript) and grand.value is sub:
            return "table", TABLE_LOOKUP.format(sub.slice.value[:40])
        if (
            (isinstance(grand, (ast.For, ast.AsyncFor, ast.comprehension)) and grand.iter is sub)
            or (isinstance(grand, ast.Call) and sub in grand.args and ctx.call_name(grand) in ITER_FUNCS)
            or (
                isinstance(grand, ast.Attribute)
                and grand.attr in ("values", "items", "keys")
                and isinstance(ctx.parent(grand), ast.Call)
            )
        ):
            return "table", TABLE_READ.format(sub.slice.value[:40])
    if isinstance(grand, ast.Subscript) and grand.value is sub and isinstance(grand.ctx, (ast.Store, ast.Del)):
        return "elem", "an element changed in place"
    if isinstance(grand, ast.Attribute) and grand.value is sub:
        gg = ctx.parent(grand)
        if isinstance(gg, ast.Call) and gg.func is grand and grand.attr in ELEM_MUTATORS:
            return "elem", f"an element changed with `.{grand.attr}()`"
        if isinstance(grand.ctx, ast.Store):
            return "elem", "an element's attribute assigned"
    if isinstance(grand, ast.AugAssign) and grand.target is sub:
        return "setitem", "an item changed in place"
    if isinstance(grand, ast.Assign) and grand.value is sub and len(grand.targets) == 1 and isinstance(grand.targets[0], ast.Name):
        name = grand.targets[0].id
        fn = ctx.enclosing_function(sub)
        body = ctx.walk_function(fn.node) if fn is not None else ()
        for n in body:
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)) and isinstance(n.value, ast.Name) and n.value.id == name:
                return "elem", "an element changed in place (through a local name)"
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == name
                and n.func.attr in ELEM_MUTATORS
            ):
                return "elem", f"an element changed with `.{n.func.attr}()` (through a local name)"
    return "index", ""


def attribute_uses(ctx) -> dict[str, list]:
    """attr -> [(kind, detail, row, receiver is the method's self, enclosing function)] of the uses a read-only
    sequence would not answer like a list."""
    out: dict[str, list] = {}
    for node in ctx.nodes(ast.Attribute):
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in ctx.module_scope.bindings and ctx.module_scope.bindings[root.id].kind == "import":
            continue  # an attribute of a module (os.path, np.random): not an object's data
        kind, detail = classify(ctx, node)
        if kind in SAFE:
            continue
        on_self = ctx.is_self_attr(node)
        fn = ctx.enclosing_function(node)
        out.setdefault(node.attr, []).append((kind, detail, node.lineno, on_self, fn.qualname if fn else ctx.module))
    return out


def membership_tests(ctx) -> dict[str, list[str]]:
    """attr -> [enclosing function] of each ``x in self.attr`` / ``x not in self.attr``: a list
    filled under such a test holds distinct values (``if n not in self.names: self.names.append(n)``)."""
    out: dict[str, list[str]] = {}
    for cmp in ctx.nodes(ast.Compare):
        for op, node in zip(cmp.ops, cmp.comparators):
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(node, ast.Attribute) and ctx.is_self_attr(node):
                fn = ctx.enclosing_function(node)
                out.setdefault(node.attr, []).append(fn.qualname if fn else ctx.module)
    return out


def length_asserts(ctx) -> dict[str, list[str]]:
    """attr -> [enclosing function] of each ``assert len(self.attr) == 1`` (``<=``, ``<`` a
    literal int, either side, under ``and`` too): the code fixes the container's size."""
    out: dict[str, list[str]] = {}
    for stmt in ctx.nodes(ast.Assert):
        tests = stmt.test.values if isinstance(stmt.test, ast.BoolOp) and isinstance(stmt.test.op, ast.And) else [stmt.test]
        for test in tests:
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
                continue
            left, op, right = test.left, test.ops[0], test.comparators[0]
            if isinstance(left, ast.Constant):  # 1 == len(self.x)
                left, right = right, left
                op = {ast.GtE: ast.LtE(), ast.Gt: ast.Lt()}.get(type(op), op)
            if not isinstance(op, (ast.Eq, ast.LtE, ast.Lt)):
                continue
            if not (isinstance(right, ast.Constant) and type(right.value) is int):
                continue
            if not (isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len" and len(left.args) == 1):
                continue
            node = left.args[0]
            if isinstance(node, ast.Attribute) and ctx.is_self_attr(node):
                fn = ctx.enclosing_function(node)
                out.setdefault(node.attr, []).append(fn.qualname if fn else ctx.module)
    return out


# calls that only read what they are given (its length, its items): a local passed to one is
# used where it is, not handed on
READING_CALLS = frozenset(
    {f"builtins.{n}" for n in ("len", "iter", "next", "enumerate", "list", "tuple", "sorted", "print", "isinstance",
                               "zip", "map", "filter", "reversed", "min", "max", "sum", "any", "all", "repr", "str")}
    | {"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.std.tqdm", "tqdm.notebook.tqdm", "itertools.islice", "itertools.chain",
       "rich.progress.track"}
)


def local_fates(ctx) -> dict[str, dict[str, tuple]]:
    """scope (function qualname, or the module) -> {local: (handed_on, callees)} for each local
    name assigned a call's result (``ds = Images(root)``): ``handed_on`` when the function
    returns or yields it, stores it in a container or an attribute, or binds it to another name;
    ``callees``: the qualified names of the calls it is passed to ("?" when the callee has no
    name: ``trainer.fit(model, ds)``). Indexing it, measuring it, walking it and calling its
    methods use it where it is (``ds[i]``, ``len(ds)``, ``ds.get_data()``): not recorded. A
    module variable that a function of the file reads is handed on."""
    candidates: dict[str, set[str]] = {}
    for node in ctx.nodes(ast.Assign):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call):
            fn = ctx.enclosing_function(node)
            candidates.setdefault(fn.qualname if fn else ctx.module, set()).add(node.targets[0].id)
    if not candidates:
        return {}
    names = set().union(*candidates.values())
    found: dict[str, dict[str, tuple[bool, set]]] = {}
    for node in ctx.nodes(ast.Name):
        if node.id not in names or not isinstance(node.ctx, ast.Load):
            continue
        fn = ctx.enclosing_function(node)
        scope = fn.qualname if fn else ctx.module
        if node.id not in candidates.get(scope, ()):
            if fn is not None and node.id in candidates.get(ctx.module, ()) and ctx.lookup(node.id, ctx.scope_of(node)) is ctx.module_scope.bindings.get(node.id):
                # a function reading a module variable assigned a call's result: it leaves the
                # statement that builds it (``train()`` giving the global ``dataset`` to a loader)
                callees = found.setdefault(ctx.module, {}).get(node.id, (False, set()))[1]
                found[ctx.module][node.id] = (True, callees)
            continue
        parent = ctx.parent(node)
        if isinstance(parent, ast.keyword):
            parent = ctx.parent(parent)
            passed = True
        else:
            passed = isinstance(parent, ast.Call) and node in parent.args
        if isinstance(parent, (ast.Subscript, ast.Attribute)) and parent.value is node:
            continue  # ds[i], ds.get_data(i), ds.files
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is node:
            continue
        if isinstance(parent, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.If, ast.Assert)):
            continue  # ``if ds is None``
        handed, callees = found.setdefault(scope, {}).setdefault(node.id, (False, set()))
        if passed and isinstance(parent, ast.Call):
            callee = ctx.call_name(parent)
            if callee in READING_CALLS:
                continue  # ``len(ds)``, ``for x in tqdm(ds)``
            callees.add(callee or "?")
        else:
            found[scope][node.id] = (True, callees)
    return {
        scope: {name: (handed, tuple(sorted(callees))) for name, (handed, callees) in fates.items()}
        for scope, fates in found.items()
    }
