"""What a DataLoader call's worker-only options (``prefetch_factor``, ``persistent_workers``,
``multiprocessing_context``) are when its ``num_workers`` is 0, read from one file's syntax.

An option reaches the call as a keyword or through a ``**kwargs`` dict (a dict display or
``dict(...)`` bound to a local or to a ``self`` attribute, ``kw["k"] = v``, ``kw.update(...)``,
``kw.setdefault(...)``), possibly under ``if`` statements. Its value is followed through local
assignments and ``self`` attributes of the class. Each store is judged with num_workers set to 0:

- ``raises``: the option is surely set (a literal, or the branch of an if-expression / ``if`` that
  runs when num_workers is 0: ``P if nw > 0 else 2``);
- ``may``: it is set by something that does not depend on num_workers: a configuration or
  command-line value (``args.persistent``, ``cfg["prefetch_factor"]``, ``self.hparams.x``), a
  constructor parameter kept on the object, a parameter whose default sets it, or a branch chosen
  by an unrelated test (``4 if not test else None``);
- ``safe``: None / False there (``2 if nw > 0 else None``, a store under ``if nw > 0:``);
- None: we cannot tell (a plain parameter of the function building the loader: its caller
  decides; a call; a test on num_workers we cannot evaluate). Silence.
"""

from __future__ import annotations

import ast

OPTIONS = ("prefetch_factor", "persistent_workers", "multiprocessing_context")
RAISES, MAY, SAFE, SKIP = "raises", "may", "safe", "skip"
INDEP = "indep"
MAX_DEPTH = 6
FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# roots of attribute chains that are libraries, not configuration
LIBRARY_ROOTS = frozenset({"torch", "os", "sys", "np", "numpy", "math", "multiprocessing", "platform"})


def _chain(node) -> bool:
    """``a``, ``a.b.c``, ``a["k"]``, ``a.b["k"].c``: a name with attributes / constant subscripts."""
    while True:
        if isinstance(node, ast.Name):
            return True
        if isinstance(node, ast.Attribute) or (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)):
            node = node.value
        else:
            return False


def _chains(node):
    """The outermost chains inside an expression (``args.workers``, not also ``args``)."""
    if _chain(node):
        yield node
        return
    for child in ast.iter_child_nodes(node):
        yield from _chains(child)


def _root(node) -> ast.Name:
    while not isinstance(node, ast.Name):
        node = node.value
    return node


_DICT_CHANGES = (ast.Assign, ast.Delete, ast.Call)  # what ``_name_dict`` follows


class OptionSources:
    def __init__(self, ctx, call: ast.Call):
        self.ctx = ctx
        self.call = call
        self.fn = ctx.enclosing_function(call)
        self.unknown_dict = False
        self.stores = self._passed()
        nw_nodes = [v for v, _tests in self.stores.get("num_workers", ())]
        self.nw_node = nw_nodes[0] if len(nw_nodes) == 1 else None
        self.zero: set[str] = set()  # texts that equal num_workers
        self.related: set[str] = set()  # every name / attribute chain num_workers is computed from
        for node in nw_nodes:
            self._collect_nw(node, direct=len(nw_nodes) == 1, depth=0)

    # ------------------------------------------------------------------ where options come from

    def _passed(self) -> dict[str, list]:
        """Option -> [(value node, tests)] for the keywords and ``**`` dicts of the call."""
        out: dict[str, list] = {}
        for kw in self.call.keywords:
            if kw.arg is not None:
                out.setdefault(kw.arg, []).append((kw.value, ()))
                continue
            found = self._dict_stores(kw.value, 0)
            if found is None:
                self.unknown_dict = True
                continue
            for key, stores in found.items():
                out.setdefault(key, []).extend(stores)
        if "num_workers" not in out and len(self.call.args) > 5 and not isinstance(self.call.args[5], ast.Starred):
            out["num_workers"] = [(self.call.args[5], ())]
        return out

    def via_dict(self, name: str) -> bool:
        return not any(kw.arg == name for kw in self.call.keywords)

    def _dict_stores(self, node, depth: int) -> dict[str, list] | None:
        """Key -> [(value node, tests)] a dict expression holds; None when we cannot see it."""
        if depth > MAX_DEPTH:
            return None
        ctx = self.ctx
        if isinstance(node, ast.Dict):
            out: dict[str, list] = {}
            for k, v in zip(node.keys, node.values):
                if k is None:
                    inner = self._dict_stores(v, depth + 1)
                    if inner is None:
                        return None
                    for key, stores in inner.items():
                        out.setdefault(key, []).extend(stores)
                elif isinstance(k, ast.Constant) and isinstance(k.value, str):
                    out.setdefault(k.value, []).append((v, ()))
            return out
        if isinstance(node, ast.Call) and ctx.call_name(node) == "builtins.dict":
            out = {}
            for arg in node.args:
                inner = self._dict_stores(arg, depth + 1)
                if inner is None:
                    return None
                for key, stores in inner.items():
                    out.setdefault(key, []).extend(stores)
            for kw in node.keywords:
                if kw.arg is None:
                    inner = self._dict_stores(kw.value, depth + 1)
                    if inner is None:
                        return None
                    for key, stores in inner.items():
                        out.setdefault(key, []).extend(stores)
                else:
                    out.setdefault(kw.arg, []).append((kw.value, ()))
            return out
        if isinstance(node, ast.Name):
            return self._name_dict(node, depth)
        if isinstance(node, ast.Attribute) and ctx.is_self_attr(node):
            return self._self_dict(node, depth)
        return None

    def _name_dict(self, node: ast.Name, depth: int) -> dict[str, list] | None:
        ctx = self.ctx
        scope = ctx.scope_of(node)
        binding = ctx.lookup(node.id, scope)
        if binding is None or binding.kind not in ("local", "param"):
            return None
        fn_node = scope.node
        out: dict[str, list] = {}
        for sub in self._dict_changes(fn_node):
            if ctx.scope_of(sub) is not scope or getattr(sub, "lineno", 0) > node.lineno:
                continue
            if isinstance(sub, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in sub.targets):
                inner = self._dict_stores(sub.value, depth + 1)
                if inner is None:
                    if isinstance(sub.value, ast.Call) and isinstance(sub.value.func, ast.Attribute) and sub.value.func.attr == "copy":
                        continue  # kw = other.copy(): what other holds is not known, its stores below are
                    return None
                self._merge(out, inner, self._tests(sub, fn_node))
            elif not self._mutation(sub, lambda t: isinstance(t, ast.Name) and t.id == node.id, out, fn_node, depth):
                return None
        return out

    def _dict_changes(self, fn_node) -> list:
        """The nodes of a function (or the module) that can bind or change a dict (assignments,
        deletions, calls), in source order: the only ones ``_name_dict`` looks at (a training
        script's ``main`` holds thousands of others; listed once per function)."""
        ctx = self.ctx
        if isinstance(fn_node, FUNCS):
            return ctx.function_nodes(fn_node, *_DICT_CHANGES)
        return [n for n in ctx.all_nodes() if type(n) in _DICT_CHANGES]

    def _self_dict(self, node: ast.Attribute, depth: int) -> dict[str, list] | None:
        ctx = self.ctx
        fn = ctx.method_of(node)
        if fn is None or fn.cls is None:
            return None
        out: dict[str, list] = {}

        def same(t):
            return isinstance(t, ast.Attribute) and t.attr == node.attr and ctx.is_self_attr(t)

        for method in fn.cls.methods.values():
            for sub in ctx.walk_function(method):
                if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                    targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                    if any(same(t) for t in targets):
                        if sub.value is None:
                            continue
                        inner = self._dict_stores(sub.value, depth + 1)
                        if inner is None:
                            return None
                        self._merge(out, inner, self._tests(sub, method))
                        continue
                if not self._mutation(sub, same, out, method, depth):
                    return None
        return out

    def _mutation(self, sub, same, out, fn_node, depth) -> bool:
        """Record ``d["k"] = v`` / ``d.update(...)`` / ``d.setdefault(k, v)`` of the dict ``same``
        matches; False when ``sub`` changes it in a way we cannot follow."""
        if isinstance(sub, ast.Assign):
            for t in sub.targets:
                if isinstance(t, ast.Subscript) and same(t.value):
                    if not (isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str)):
                        return False
                    out.setdefault(t.slice.value, []).append((sub.value, self._tests(sub, fn_node)))
            return True
        if isinstance(sub, ast.Delete):
            return not any(isinstance(t, ast.Subscript) and same(t.value) for t in sub.targets)
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and same(sub.func.value):
            method = sub.func.attr
            tests = self._tests(sub, fn_node)
            if method == "update":
                for arg in sub.args:
                    inner = self._dict_stores(arg, depth + 1)
                    if inner is None:
                        return False
                    self._merge(out, inner, tests)
                for kw in sub.keywords:
                    if kw.arg is None:
                        return False
                    out.setdefault(kw.arg, []).append((kw.value, tests))
                return True
            if method == "setdefault" and len(sub.args) == 2 and isinstance(sub.args[0], ast.Constant):
                out.setdefault(sub.args[0].value, []).append((sub.args[1], tests))
                return True
            if method in ("pop", "__delitem__") and sub.args and isinstance(sub.args[0], ast.Constant):
                return sub.args[0].value not in (*OPTIONS, "num_workers")
            return method in ("get", "copy", "items", "keys", "values", "__getitem__", "__contains__")
        return True

    @staticmethod
    def _merge(out, inner, tests) -> None:
        for key, stores in inner.items():
            out.setdefault(key, []).extend((v, tests + t) for v, t in stores)

    def _tests(self, node, stop) -> tuple:
        """((test, polarity), ...) of the ``if`` / ``while`` / if-expressions around ``node``, up to ``stop``."""
        out = []
        child = node
        for anc in self.ctx.ancestors(node):
            if anc is stop or isinstance(anc, (*FUNCS, ast.ClassDef, ast.Module)):
                break
            if isinstance(anc, (ast.If, ast.IfExp)) and child is not anc.test:
                body = anc.body if isinstance(anc.body, list) else [anc.body]
                out.append((anc.test, child in body))
            elif isinstance(anc, ast.While) and child in anc.body:
                out.append((anc.test, True))
            child = anc
        return tuple(reversed(out))

    # ------------------------------------------------------------------ num_workers

    def _collect_nw(self, node, direct: bool, depth: int) -> None:
        if depth > MAX_DEPTH or node is None:
            return
        ctx = self.ctx
        if _chain(node):
            text = ctx.segment(node, 200)
            self.related.add(text)
            if direct:
                self.zero.add(text)
            for value, _tests in self._assignments(node):
                self._collect_nw(value, direct and _chain(value) and len(self._assignments(node)) == 1, depth + 1)
            return
        for sub in _chains(node):
            self._collect_nw(sub, False, depth + 1)

    def _assignments(self, node) -> list:
        """[(value, tests)] assigned to a local name / ``self`` attribute (in the class); [] else."""
        ctx = self.ctx
        memo = self.__dict__.setdefault("_assign_memo", {})
        if id(node) in memo:
            return memo[id(node)]
        out: list = []
        memo[id(node)] = out
        if isinstance(node, ast.Name):
            scope = ctx.scope_of(node)
            binding = ctx.lookup(node.id, scope)
            if binding is not None and binding.kind == "local":
                owner = scope
                while owner is not None and node.id not in owner.bindings:
                    owner = owner.parent
                if owner is not None:
                    fn_node = owner.node
                    body = ctx.walk_function(fn_node) if isinstance(fn_node, FUNCS) else ctx.all_nodes()
                    for sub in body:
                        if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.value is not None:
                            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                            if any(isinstance(t, ast.Name) and t.id == node.id for t in targets) and ctx.scope_of(sub) is owner:
                                out.append((sub.value, self._tests(sub, fn_node)))
                        elif isinstance(sub, (ast.AugAssign, ast.For, ast.With, ast.NamedExpr)) and node.id in {
                            n.id for n in ast.walk(getattr(sub, "target", sub)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                        }:
                            out.append((None, ()))
        elif isinstance(node, ast.Attribute) and ctx.is_self_attr(node):
            fn = ctx.method_of(node)
            for method in fn.cls.methods.values():
                for sub in ctx.walk_function(method):
                    if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                        if any(isinstance(t, ast.Attribute) and t.attr == node.attr and ctx.is_self_attr(t) for t in targets):
                            value = None if isinstance(sub, ast.AugAssign) else sub.value
                            out.append((value, self._tests(sub, method)))
        return out

    # ------------------------------------------------------------------ num_workers == 0

    def _mentions(self, node) -> bool:
        return any(self.ctx.segment(sub, 200) in self.related for sub in _chains(node))

    def _eval(self, node):
        """The value ``node`` has when num_workers is 0 (int/bool/None), or ``...`` when unknown."""
        if isinstance(node, ast.Constant):
            return node.value
        if _chain(node) and self.ctx.segment(node, 200) in self.zero:
            return 0
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            v = self._eval(node.operand)
            return ... if v is ... else (not v)
        if isinstance(node, ast.BoolOp):
            values = [self._eval(v) for v in node.values]
            if isinstance(node.op, ast.And):
                if any(v is not ... and not v for v in values):
                    return False
                return True if all(v is not ... for v in values) else ...
            if any(v is not ... and v for v in values):
                return True
            return False if all(v is not ... for v in values) else ...
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a, b = self._eval(node.left), self._eval(node.comparators[0])
            if a is ... or b is ... or not all(isinstance(x, (int, float)) or x is None for x in (a, b)):
                return ...
            op = node.ops[0]
            try:
                if isinstance(op, ast.Gt):
                    return a > b
                if isinstance(op, ast.GtE):
                    return a >= b
                if isinstance(op, ast.Lt):
                    return a < b
                if isinstance(op, ast.LtE):
                    return a <= b
                if isinstance(op, (ast.Eq, ast.Is)):
                    return a == b
                if isinstance(op, (ast.NotEq, ast.IsNot)):
                    return a != b
            except TypeError:
                return ...
            return ...
        return ...

    def at_zero(self, test):
        """True/False: the test's outcome when num_workers is 0; INDEP: it does not depend on
        num_workers; None: it does, in a way we cannot evaluate."""
        if not self._mentions(test):
            return INDEP
        v = self._eval(test)
        return None if v is ... else bool(v)

    def verdict(self, name: str) -> str | None:
        """RAISES / MAY / SAFE / None for an option of the call (None also when it is not passed)."""
        stores = self.stores.get(name)
        if not stores:
            return None
        results = [self._store(name, value, tests, 0) for value, tests in stores]
        results = [r for r in results if r != SKIP]
        if not results:
            return SAFE
        if None in results or SAFE in results:
            return None if None in results or len(set(results)) > 1 else SAFE
        return RAISES if len(stores) == 1 and results == [RAISES] else MAY

    def _store(self, name, value, tests, depth) -> str | None:
        conditional = False
        for test, polarity in tests:
            r = self.at_zero(test)
            if r is None:
                return None
            if r == INDEP:
                conditional = True
            elif r != polarity:
                return SKIP  # the store does not run when num_workers is 0
        if value is None:
            return None
        got = self._value(name, value, depth)
        if conditional and got == RAISES:
            return MAY
        return got

    def _value(self, name, node, depth) -> str | None:
        if depth > MAX_DEPTH:
            return None
        ctx = self.ctx
        if isinstance(node, ast.Constant):
            return RAISES if self._offends(name, node.value) else SAFE
        if isinstance(node, ast.IfExp):
            r = self.at_zero(node.test)
            if r is None:
                return None
            if r != INDEP:
                return self._value(name, node.body if r else node.orelse, depth + 1)
            both = {self._value(name, node.body, depth + 1), self._value(name, node.orelse, depth + 1)}
            if both == {RAISES}:
                return RAISES
            if both & {RAISES, MAY}:
                return MAY
            return SAFE if both == {SAFE} else None
        if not _chain(node):
            is_get = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            if is_get and _chain(node.func.value) and node.args and isinstance(node.args[0], ast.Constant):
                return self._config(node.func.value)  # cfg.get("prefetch_factor", 2)
            return None
        if self._mentions(node):
            return None  # computed from num_workers itself
        assigned = self._assignments(node)
        if assigned:
            results = [self._store(name, v, t, depth + 1) for v, t in assigned]
            results = [r for r in results if r != SKIP]
            if not results or None in results or SAFE in results:
                return None if results else SAFE
            return RAISES if results == [RAISES] else MAY
        if isinstance(node, ast.Name):
            binding = ctx.lookup(node.id, ctx.scope_of(node))
            if binding is not None and binding.kind == "param":
                default = binding.default
                if default is not None and self._value(name, default, depth + 1) == RAISES:
                    return MAY  # callers that leave it out pass the default
                fn = ctx.enclosing_function(node)
                if fn is not None and self.fn is not None and fn.node is not self.fn.node:
                    return MAY  # a constructor parameter kept on the object: configuration
                return None  # the caller of the function building the loader decides
            return None
        return self._config(node)

    def _config(self, node) -> str | None:
        """An attribute / item of a configuration object: set apart from num_workers."""
        ctx = self.ctx
        if isinstance(node, ast.Name):
            return None
        root = _root(node)
        if root.id in LIBRARY_ROOTS:
            return None
        binding = ctx.lookup(root.id, ctx.scope_of(root))
        if binding is not None and binding.kind in ("def", "class"):
            return None
        if binding is not None and binding.kind == "import" and (binding.qualname or "").split(".")[0] in LIBRARY_ROOTS:
            return None
        return MAY

    @staticmethod
    def _offends(name: str, value) -> bool:
        if name == "prefetch_factor":
            return value is not None
        if name == "persistent_workers":
            return bool(value)
        return isinstance(value, str)
