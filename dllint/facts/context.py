"""One parsed file: the syntax tree plus scope-aware name resolution and expression summaries.

Facts are read with the standard library's ``ast`` (about ten times faster than a CST parse, and
fast enough to run on every file that can matter); libcst is used where code is rewritten.
Every rule's ``extract`` receives a FileContext and returns plain data.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterator

from dllint.model import NOCONST, Span, Value
from dllint.names import canonical
from dllint.textutil import split_lines

FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPE_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_BUILTINS = frozenset(dir(builtins))
# module names a star import commonly hands on (the code uses them unbound otherwise)
STAR_MODULE_ALIASES = {"cv2": "cv2", "np": "numpy", "numpy": "numpy", "torch": "torch", "h5py": "h5py", "lmdb": "lmdb"}
MAX_DEPTH = 6
# Fields never visited: the expression context and operator singletons (ast.Load, ast.Add ...)
# carry no names, and are shared objects (id-keyed tables cannot hold them).
_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _SKIPPED_FIELDS)
    return fields


# the fields that can hold nodes, from the node classes' signatures ("Name(identifier id, expr_context
# ctx)"): identifiers, strings, constants and ints never are; reversed (a stack pops them in order)
_SCALAR_FIELD_TYPES = frozenset({"identifier", "string", "constant", "int"})
NODE_FIELDS: dict[type, tuple[tuple[str, bool | None], ...]] = {}
_NODE_FIELDS_REVERSED: dict[type, tuple[tuple[str, bool | None], ...]] = {}
_SIGNATURE = re.compile(r"^\w+\((.*)\)$")


def node_fields(kind: type) -> tuple[tuple[str, bool | None], ...]:
    """(field, holds a list) for each field of ``kind`` that can hold a node, in order (a list may
    hold None: a dict's ``**`` key, a missing keyword-only default). A class whose signature does
    not name every field: all its fields, each (field, None) (to be checked)."""
    found = NODE_FIELDS.get(kind)
    if found is not None:
        return found
    types: dict[str, str] = {}
    m = _SIGNATURE.match((kind.__doc__ or "").strip())
    if m:
        for part in m.group(1).split(","):
            words = part.split()
            if len(words) == 2:
                types[words[1]] = words[0]
    out: list | None = []
    for name in _child_fields(kind):
        tp = types.get(name)
        if tp is None:
            out = None
            break
        if tp.rstrip("*?") in _SCALAR_FIELD_TYPES:
            continue
        out.append((name, tp.endswith("*")))
    found = tuple(out) if out is not None else tuple((name, None) for name in _child_fields(kind))
    NODE_FIELDS[kind] = found
    return found


def _node_fields_reversed(kind: type) -> tuple[tuple[str, bool | None], ...]:
    found = _NODE_FIELDS_REVERSED[kind] = tuple(reversed(node_fields(kind)))
    return found


def child_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.iter_child_nodes`` without the context and operator singletons."""
    for name in _child_fields(type(node)):
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    yield item


_SEGMENT_LINES = ("segment", "lines")


@dataclass(slots=True)
class Binding:
    kind: str  # import | def | class | param | local | global
    qualname: str | None = None
    values: list = field(default_factory=list)  # value nodes of local assignments (None: unknown)
    default: ast.expr | None = None  # a parameter's default value


# sets of node types asked for together (in source order) by the facts: each function's nodes of
# these types are listed during the visit too (ctx.function_nodes)
COMBINED_KINDS = (
    frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign}),  # self assignments
    frozenset({ast.Assign, ast.AnnAssign}),  # _function_facts' self writes
    frozenset({ast.For, ast.AsyncFor, ast.comprehension, ast.Call}),  # starts: what a function iterates
)
_COMBINED = frozenset(COMBINED_KINDS)
_COMBINED_BY_KIND: dict[type, tuple[frozenset, ...]] = {}
for _kinds in COMBINED_KINDS:
    for _kind in _kinds:
        _COMBINED_BY_KIND[_kind] = (*_COMBINED_BY_KIND.get(_kind, ()), _kinds)


_UNRESOLVED = object()


class Scope:
    __slots__ = ("kind", "node", "parent", "qualname", "bindings", "cls", "body_nodes", "by_type", "resolved")

    def __init__(self, kind: str, node: ast.AST, parent: "Scope | None", qualname: str, cls=None):
        self.kind = kind  # module | function | class | lambda
        self.node = node
        self.parent = parent
        self.qualname = qualname
        self.bindings: dict[str, Binding] = {}
        self.resolved: dict[str, Binding | None] = {}  # FileContext.lookup's answers
        self.cls = cls  # for a method's scope: the ClassInfo it belongs to
        # the nodes a walk of this function's body yields (lambdas share their function's list)
        # and the same nodes by type (each list in pre-order)
        if kind == "function":
            self.body_nodes: list | None = []
            self.by_type: dict | None = defaultdict(list)
        elif kind == "lambda" and parent is not None:
            self.body_nodes = parent.body_nodes
            self.by_type = parent.by_type
        else:
            self.body_nodes = None
            self.by_type = None


@dataclass(slots=True)
class ClassInfo:
    node: ast.ClassDef
    qualname: str
    scope: Scope  # the scope the class statement is in
    local: bool
    methods: dict[str, ast.AST] = field(default_factory=dict)
    self_assigns: dict[str, list] = field(default_factory=dict)  # attr -> value nodes (None: unknown)


@dataclass(slots=True)
class FuncInfo:
    node: ast.AST
    qualname: str
    scope: Scope  # the function's own scope
    cls: ClassInfo | None  # set for methods
    self_name: str | None  # the instance parameter of a method


def module_package(module: str, is_package: bool) -> str:
    if is_package:
        return module
    return module.rpartition(".")[0]


def _property_accessor(node) -> str | None:
    """``setter`` / ``deleter`` for a method decorated ``@<its name>.setter`` (or ``.deleter``)."""
    for dec in node.decorator_list:
        if (
            isinstance(dec, ast.Attribute)
            and dec.attr in ("setter", "deleter")
            and isinstance(dec.value, ast.Name)
            and dec.value.id == node.name
        ):
            return dec.attr
    return None


def resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str | None:
    if level == 0:
        return name
    package = module_package(module, is_package)
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    base = ".".join(parts)
    if name:
        return f"{base}.{name}" if base else name
    return base or None


def _flag_test(test) -> bool:
    """An ``if`` test that reads the same wherever it is asked again: names, attributes and
    constants, negated or compared (no call, no subscript)."""
    for node in ast.walk(test):
        if not isinstance(node, (ast.Name, ast.Attribute, ast.Constant, ast.UnaryOp, ast.Not, ast.Compare, ast.BoolOp,
                                 ast.Load, ast.cmpop, ast.boolop, ast.unaryop)):
            return False
    return True


def _contradict(a: dict[str, bool], b: dict[str, bool]) -> bool:
    """Two statements in opposite arms of the same test."""
    return any(test in b and b[test] != arm for test, arm in a.items())


def _bodies(node: ast.AST) -> list[list]:
    """The statement lists a compound statement (or a module / def) holds."""
    out = [getattr(node, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(node, f, None), list)]
    for h in getattr(node, "handlers", ()) or ():
        out.append(h.body)
    for case in getattr(node, "cases", ()) or ():
        out.append(case.body)
    return out


class FileContext:
    """A parsed module with scopes, parents, classes and functions indexed."""

    def __init__(self, path: str, module: str, text: str, tree: ast.Module, is_package: bool = False):
        self.path = path
        self.module = module
        self.text = text
        self.tree = tree
        self.is_package = is_package
        self.lines = split_lines(text)
        self._parents: dict[int, ast.AST] = {}
        self._scope_of_node: dict[int, Scope] = {}
        self._node_scope: dict[int, Scope] = {}  # every visited node -> the scope its names use
        self._preorder: list[ast.AST] = []  # every visited node, in source (pre-)order
        self._groups: dict[type, list[ast.AST]] = defaultdict(list)  # the same nodes by type
        self.classes: list[ClassInfo] = []
        self.functions: list[FuncInfo] = []
        self.class_by_node: dict[int, ClassInfo] = {}
        self.func_by_node: dict[int, FuncInfo] = {}
        self.imported_modules: set[str] = set()
        self.star_imports: list[str] = []
        self.module_scope = Scope("module", tree, None, module)
        self._cache: dict = {}
        self._qualnames: dict[ast.AST, str | None] = {}
        # a class's bases naming the class itself (``class Dataset(Dataset)``): Python evaluates
        # them before the class statement binds its name, so they mean the earlier binding
        self._earlier: dict[ast.AST, Binding] = {}
        self._declared: set[str] = set()  # names some scope declares global / nonlocal
        # module name -> [(where another kind of binding replaced it, the import / def / class
        # it replaced)]: ``_in_force``
        self._replaced: dict[str, list] = {}
        self._at: ast.AST | None = None  # the node whose bindings are being recorded
        self.global_writers: dict[str, set[str]] = {}  # module name -> functions declaring it global
        # libraries' top-level names the project has modules of as well (Layout.shadowing)
        self.shadowed: frozenset[str] = frozenset()
        self._build()

    # ------------------------------------------------------------------ building

    def _build(self) -> None:
        """Record parents, scopes and bindings, in one pass over the tree (source pre-order).

        An explicit stack, not recursion: a node's handler (``_VISITORS``) records what it binds
        and returns the children to visit when they differ from its fields' (a new scope), in
        order; every other node's children are its node-holding fields (``_node_fields``)."""
        tree = self.tree
        self._scope_of_node[id(tree)] = self.module_scope
        parents = self._parents
        node_scope = self._node_scope
        preorder = self._preorder
        groups = self._groups
        combos = _COMBINED_BY_KIND
        visitors = _VISITORS
        table = _NODE_FIELDS_REVERSED
        scope0 = self.module_scope
        stack = [(stmt, tree, scope0) for stmt in reversed(tree.body)]
        pop = stack.pop
        push = stack.append
        while stack:
            node, parent, scope = pop()
            nid = id(node)
            parents[nid] = parent
            node_scope[nid] = scope
            preorder.append(node)
            kind = type(node)
            groups[kind].append(node)
            body = scope.body_nodes
            if body is not None:
                body.append(node)
                by_type = scope.by_type
                by_type[kind].append(node)
                combined = combos.get(kind)
                if combined is not None:
                    for key in combined:
                        by_type[key].append(node)
            handler = visitors.get(kind)
            if handler is not None:
                self._at = node
                children = handler(self, node, parent, scope)
                if children is not None:  # its own children, in order (a new scope)
                    stack.extend(reversed(children))
                    continue
            fields = table.get(kind)
            if fields is None:
                fields = _node_fields_reversed(kind)
            for name, many in fields:  # reversed: popped in source order
                value = getattr(node, name, None)
                if value is None:
                    continue
                if many is True:
                    for item in reversed(value):
                        if item is not None:
                            push((item, node, scope))
                elif many is False:
                    push((value, node, scope))
                elif isinstance(value, ast.AST):  # a field not in the signature
                    push((value, node, scope))
                elif isinstance(value, list):
                    for item in reversed(value):
                        if isinstance(item, ast.AST):
                            push((item, node, scope))
        for fn in self.functions:  # methods' self assignments, for self.attr values
            if fn.cls is not None and fn.self_name:
                self._collect_self_assigns(fn)

    def _visit_def(self, node, parent, scope) -> list:
        qual = f"{scope.qualname}.{node.name}" if scope.kind != "function" else f"{scope.qualname}.<locals>.{node.name}"
        accessor = _property_accessor(node) if scope.kind == "class" else None
        if accessor is not None:
            # ``@samples.setter def samples(...)``: the property keeps its getter under the name;
            # the setter is the class's method ``samples.setter``
            qual = f"{qual}.{accessor}"
        else:
            self._bind(scope, node.name, Binding("def", qual))
        children = [(dec, node, scope) for dec in node.decorator_list]
        self._visit_args_defaults(node.args, node, scope, children)
        if node.returns is not None:
            children.append((node.returns, node, scope))
        cls_info = self.class_by_node.get(id(parent)) if scope.kind == "class" else None
        fscope = Scope("function", node, scope, qual, cls=cls_info)
        self._scope_of_node[id(node)] = fscope
        self._bind_params(fscope, node.args)
        self_name = None
        if cls_info is not None:
            cls_info.methods[node.name if accessor is None else f"{node.name}.{accessor}"] = node
            decos = {self._decorator_name(d) for d in node.decorator_list}
            if "staticmethod" not in decos and "classmethod" not in decos:
                all_args = node.args.posonlyargs + node.args.args
                if all_args:
                    self_name = all_args[0].arg
        info = FuncInfo(node, qual, fscope, cls_info, self_name)
        self.functions.append(info)
        self.func_by_node[id(node)] = info
        children.extend((stmt, node, fscope) for stmt in node.body)
        return children

    def _visit_class(self, node, parent, scope) -> list:
        qual = f"{scope.qualname}.{node.name}" if scope.kind != "function" else f"{scope.qualname}.<locals>.{node.name}"
        old = scope.bindings.get(node.name)
        if old is not None and old.kind in ("import", "def", "class"):
            for base in (*node.bases, *node.keywords):
                for sub in ast.walk(base):
                    if isinstance(sub, ast.Name) and sub.id == node.name:
                        self._earlier[sub] = old
        self._bind(scope, node.name, Binding("class", qual))
        children = [(child, node, scope) for child in (*node.decorator_list, *node.bases, *node.keywords)]
        info = ClassInfo(node, qual, scope, local=self._in_function(scope))
        self.classes.append(info)
        self.class_by_node[id(node)] = info
        cscope = Scope("class", node, scope, qual)
        self._scope_of_node[id(node)] = cscope
        children.extend((stmt, node, cscope) for stmt in node.body)
        return children

    def _visit_lambda(self, node, parent, scope) -> list:
        lscope = Scope("lambda", node, scope, f"{scope.qualname}.<lambda>")
        self._scope_of_node[id(node)] = lscope
        children: list = []
        self._visit_args_defaults(node.args, node, scope, children)
        self._bind_params(lscope, node.args)
        children.append((node.body, node, lscope))
        return children

    def _visit_import(self, node, parent, scope) -> None:
        for alias in node.names:
            self.imported_modules.add(alias.name)
            if alias.asname:
                self._bind(scope, alias.asname, Binding("import", alias.name))
            else:
                top = alias.name.split(".")[0]
                self._bind(scope, top, Binding("import", top))

    def _visit_import_from(self, node, parent, scope) -> None:
        base = resolve_relative(self.module, self.is_package, node.level, node.module)
        if base is not None:
            self.imported_modules.add(base)
            for alias in node.names:
                if alias.name == "*":
                    self.star_imports.append(base)
                    continue
                self.imported_modules.add(f"{base}.{alias.name}")
                self._bind(scope, alias.asname or alias.name, Binding("import", f"{base}.{alias.name}"))

    def _visit_assign(self, node, parent, scope) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = getattr(node, "value", None)
        for target in targets:
            self._bind_target(scope, target, None if isinstance(node, ast.AugAssign) else value)

    def _visit_for(self, node, parent, scope) -> None:
        self._bind_target(scope, node.target, None)

    def _visit_with(self, node, parent, scope) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind_target(scope, item.optional_vars, None)

    def _visit_handler(self, node, parent, scope) -> None:
        if node.name:
            self._bind(scope, node.name, Binding("local"))

    def _visit_named(self, node, parent, scope) -> None:
        self._bind_target(scope, node.target, node.value)

    def _visit_global(self, node, parent, scope) -> None:
        for name in node.names:
            scope.bindings[name] = Binding("global")
            self._declared.add(name)
            if isinstance(node, ast.Global) and scope.kind == "function":
                self.global_writers.setdefault(name, set()).add(scope.qualname)

    def _visit_comprehension(self, node, parent, scope) -> None:
        self._bind_target(scope, node.target, None, comprehension=True)

    def _visit_args_defaults(self, args: ast.arguments, parent: ast.AST, scope: Scope, children: list) -> None:
        for default in (*args.defaults, *[d for d in args.kw_defaults if d is not None]):
            children.append((default, parent, scope))
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                self._parents[id(arg)] = parent
                if arg.annotation is not None:
                    children.append((arg.annotation, arg, scope))

    def _bind_params(self, scope: Scope, args: ast.arguments) -> None:
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for arg, default in zip(positional, defaults):
            scope.bindings[arg.arg] = Binding("param", default=default)
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            scope.bindings[arg.arg] = Binding("param", default=default)
        for arg in (args.vararg, args.kwarg):
            if arg is not None:
                scope.bindings[arg.arg] = Binding("param")

    def _bind(self, scope: Scope, name: str, binding: Binding) -> None:
        old = scope.bindings.get(name)
        if old is None or old.kind == "global":
            if old is not None and old.kind == "global":
                return  # assignments go to the global; keep the marker
            scope.bindings[name] = binding
            return
        if old.kind == "local" and binding.kind == "local":
            old.values.extend(binding.values)
        elif old.kind == "param" and binding.kind == "local":
            old.values.extend(binding.values)  # a parameter reassigned in the body
        else:
            # rebinding with another kind (import then assignment, two defs...): keep the latest,
            # but remember the earlier assignment values so nothing is claimed too strongly
            if binding.kind == "local":
                binding.values = [None, *binding.values]
            if scope is self.module_scope and old.kind in ("import", "def", "class") and self._at is not None:
                # module code before this point still meant the old one (``_in_force``)
                at = self._at
                self._replaced.setdefault(name, []).append(((at.lineno, at.col_offset), old))
            scope.bindings[name] = binding

    def _bind_target(self, scope: Scope, target: ast.AST, value, comprehension: bool = False) -> None:
        if isinstance(target, ast.Name):
            self._bind(scope, target.id, Binding("local", values=[value]))
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    self._bind_target(scope, t, v)
            else:
                for t in target.elts:
                    self._bind_target(scope, t, None)
        elif isinstance(target, ast.Starred):
            self._bind_target(scope, target.value, None)

    @staticmethod
    def _decorator_name(dec: ast.AST) -> str:
        if isinstance(dec, ast.Name):
            return dec.id
        if isinstance(dec, ast.Attribute):
            return dec.attr
        if isinstance(dec, ast.Call):
            return FileContext._decorator_name(dec.func)
        return ""

    @staticmethod
    def _in_function(scope: Scope | None) -> bool:
        while scope is not None:
            if scope.kind in ("function", "lambda"):
                return True
            scope = scope.parent
        return False

    def _collect_self_assigns(self, fn: FuncInfo) -> None:
        assigns = fn.cls.self_assigns
        for node in self.function_nodes(fn.node, ast.Assign, ast.AnnAssign, ast.AugAssign):
            kind = type(node)
            if kind is ast.Assign:
                for target in node.targets:
                    self._self_target(fn, target, node.value, assigns)
            elif kind is ast.AnnAssign:
                self._self_target(fn, node.target, node.value, assigns)
            else:
                self._self_target(fn, node.target, None, assigns)

    def _self_target(self, fn: FuncInfo, target, value, assigns) -> None:
        if self.is_self_attr(target, fn):
            assigns.setdefault(target.attr, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            for i, t in enumerate(target.elts):
                self._self_target(fn, t, value.elts[i] if same else None, assigns)

    # ------------------------------------------------------------------ navigation

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(id(node))

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        node = self._parents.get(id(node))
        while node is not None:
            yield node
            node = self._parents.get(id(node))

    def scope_of(self, node: ast.AST) -> Scope:
        """The innermost scope a node's names are looked up in."""
        known = self._node_scope.get(id(node))
        if known is not None:
            return known
        for anc in (node, *self.ancestors(node)):
            if anc is node and isinstance(anc, SCOPE_TYPES):
                continue  # a def's own name/decorators live in the enclosing scope
            scope = self._scope_of_node.get(id(anc))
            if scope is not None:
                return scope
        return self.module_scope

    def _function_scope(self, node: ast.AST, through_classes: bool) -> FuncInfo | None | bool:
        """The function whose body holds ``node`` (looking through lambdas), from the scope chain;
        False when that cannot be told from scopes (a node the visit did not record)."""
        scope = self._node_scope.get(id(node))
        if scope is None:
            return False
        while scope is not None:
            if scope.kind == "function":
                return self.func_by_node.get(id(scope.node))
            if scope.kind == "class" and not through_classes:
                return None
            scope = scope.parent
        return None

    def enclosing_function(self, node: ast.AST) -> FuncInfo | None:
        fast = self._function_scope(node, through_classes=True)
        if fast is not False:
            return fast
        for anc in self.ancestors(node):
            if isinstance(anc, FUNC_TYPES):
                return self.func_by_node.get(id(anc))
        return None

    def walk_function(self, fn_node: ast.AST) -> list[ast.AST]:
        """Nodes of a function body, not descending into nested defs or classes (lambdas included).

        Computed once per function and shared by every rule (a cached list, in pre-order)."""
        key = ("walk", id(fn_node))
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        scope = self._scope_of_node.get(id(fn_node))
        if scope is not None and scope.kind == "function" and scope.body_nodes is not None:
            self._cache[key] = scope.body_nodes  # recorded during the visit
            return scope.body_nodes
        out: list[ast.AST] = []
        stack = list(reversed(fn_node.body)) if hasattr(fn_node, "body") and isinstance(fn_node.body, list) else [fn_node.body]
        stop = (*FUNC_TYPES, ast.ClassDef)
        while stack:
            node = stack.pop()
            out.append(node)
            if isinstance(node, stop):
                continue
            stack.extend(reversed(list(child_nodes(node))))
        self._cache[key] = out
        return out

    def function_nodes(self, fn_node: ast.AST, *kinds: type) -> "list[ast.AST] | tuple":
        """The nodes of the given types in ``walk_function(fn_node)``, in the same order (a shared
        list: not to be changed). One type, or one of the sets in ``COMBINED_KINDS``, is a list
        recorded during the visit; other sets are read off the function's nodes once."""
        scope = self._scope_of_node.get(id(fn_node))
        if scope is None or scope.kind != "function" or scope.by_type is None:
            return [n for n in self.walk_function(fn_node) if type(n) in kinds]
        by_type = scope.by_type
        key = kinds[0] if len(kinds) == 1 else frozenset(kinds)
        if len(kinds) == 1 or key in _COMBINED:
            found = by_type.get(key)
            return found if found is not None else ()
        memo_key = ("function-nodes", id(fn_node), key)
        found = self._cache.get(memo_key)
        if found is None:
            found = self._cache[memo_key] = [n for n in scope.body_nodes if type(n) in kinds]
        return found

    def function_nodes_within(self, fn_node: ast.AST, kinds: tuple, first: ast.AST, last: ast.AST) -> list[ast.AST]:
        """``function_nodes(fn_node, *kinds)`` from the start of ``first`` to the end of ``last``
        (statements of the function, in source order), found by bisection on their positions
        (computed once per function and kinds): a training loop nests many loops in thousands of
        lines."""
        memo_key = ("function-nodes-at", id(fn_node), frozenset(kinds))
        found = self._cache.get(memo_key)
        if found is None:
            nodes = sorted(self.function_nodes(fn_node, *kinds), key=lambda n: (n.lineno, n.col_offset))
            found = self._cache[memo_key] = (nodes, [(n.lineno, n.col_offset) for n in nodes])
        nodes, positions = found
        lo = bisect.bisect_left(positions, (first.lineno, first.col_offset))
        hi = bisect.bisect_right(positions, (last.end_lineno, last.end_col_offset))
        return nodes[lo:hi]

    def all_nodes(self) -> list[ast.AST]:
        """Every node of the module (source pre-order), recorded once and shared by every rule."""
        return self._preorder

    def nodes(self, *types: type) -> list[ast.AST]:
        """The module's nodes of the given types, in source order (of each type; one type after
        the other)."""
        groups = self._groups  # recorded during the visit
        if len(types) == 1:
            found = groups.get(types[0])
            return found if found is not None else []
        return [n for t in types for n in groups.get(t, ())]

    def in_main_guard(self, node: ast.AST) -> bool:
        for anc in self.ancestors(node):
            if isinstance(anc, ast.If) and is_main_guard_test(anc.test):
                return True
        return False

    # ------------------------------------------------------------------ positions

    def _char_col(self, row: int, byte_col: int) -> int:
        if 1 <= row <= len(self.lines):
            line = self.lines[row - 1]
            if not line.isascii():
                return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")) + 1
        return byte_col + 1

    def span(self, node: ast.AST) -> Span:
        row = getattr(node, "lineno", 1)
        end_row = getattr(node, "end_lineno", None) or row
        col = self._char_col(row, getattr(node, "col_offset", 0))
        end_col = self._char_col(end_row, getattr(node, "end_col_offset", None) or 0)
        return Span(row, col, end_row, end_col)

    def name_span(self, node: ast.AST) -> Span:
        """The name of a def or class (where ruff points for definition-level findings)."""
        row = node.lineno
        line = self.lines[row - 1] if row <= len(self.lines) else ""
        idx = line.find(node.name, self._char_col(row, node.col_offset) - 1)
        if idx < 0:
            return self.span(node)
        return Span(row, idx + 1, row, idx + 1 + len(node.name))

    def segment(self, node: ast.AST, limit: int = 80) -> str:
        try:
            text = self._source_segment(node)
        except Exception:  # pragma: no cover - odd positions
            text = ""
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def _source_segment(self, node: ast.AST) -> str:
        """``ast.get_source_segment(self.text, node)``, without re-splitting the whole file on every
        call (that made extraction quadratic in the file size: minutes on large files)."""
        end_row = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if end_row is None or end_col is None:
            return ""
        lines = self._cache.get(_SEGMENT_LINES)
        if lines is None:
            lines = self._cache[_SEGMENT_LINES] = split_lines(self.text, keepends=True)  # as ast.get_source_segment splits
        row, col = node.lineno - 1, node.col_offset
        # offsets count UTF-8 bytes: an ASCII line is sliced as it is
        if row == end_row - 1:
            line = lines[row]
            return line[col:end_col] if line.isascii() else line.encode()[col:end_col].decode()
        line = lines[row]
        first = line[col:] if line.isascii() else line.encode()[col:].decode()
        line = lines[end_row - 1]
        last = line[:end_col] if line.isascii() else line.encode()[:end_col].decode()
        return "".join([first, *lines[row + 1 : end_row - 1], last])

    # ------------------------------------------------------------------ names

    def lookup(self, name: str, scope: Scope) -> Binding | None:
        """Python's lookup: this scope, enclosing functions (not classes), the module (memoized
        per scope: asked only once the visit has recorded every binding)."""
        if scope is None:
            return None
        resolved = scope.resolved
        found = resolved.get(name, _UNRESOLVED)
        if found is _UNRESOLVED:
            found = resolved[name] = self._lookup(name, scope)
        return found

    def _lookup(self, name: str, scope: Scope) -> Binding | None:
        first = True
        while scope is not None:
            if first or scope.kind != "class":
                binding = scope.bindings.get(name)
                if binding is not None:
                    if binding.kind == "global":
                        return self.module_scope.bindings.get(name)
                    return binding
            first = False
            scope = scope.parent
        return None

    def qualname(self, node: ast.AST) -> str | None:
        """The fully qualified name a Name/Attribute chain refers to, or None (memoized per node:
        every rule asks for the callee of the same calls)."""
        memo = self._qualnames  # keyed by the node itself: it stays alive, its id is never reused
        if node in memo:
            return memo[node]
        found = memo[node] = self._qualname(node)
        return found

    def _qualname(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            binding = self._earlier.get(node) or self.lookup(node.id, self.scope_of(node))
            if binding is None:
                for star in self.star_imports:
                    if star.startswith("torch"):
                        return canonical(f"{star}.{node.id}")
                if self.star_imports and node.id in STAR_MODULE_ALIASES:
                    # `from utils import *` handing on `import cv2`: the name is undefined otherwise
                    return STAR_MODULE_ALIASES[node.id]
                if node.id in _BUILTINS:
                    return f"builtins.{node.id}"
                return None
            if binding.kind == "local" and node.id in self._replaced and binding is self.module_scope.bindings.get(node.id):
                binding = self._in_force(node) or binding
            if binding.kind in ("import", "def", "class"):
                return canonical(binding.qualname)
            if binding.kind == "local" and binding is self.module_scope.bindings.get(node.id):
                return f"{self.module}.{node.id}"
            return None
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            if base is None:
                return None
            return canonical(f"{base}.{node.attr}")
        return None

    def _in_force(self, node: ast.Name):
        """The import, def or class a module-level name meant where module code runs it, when
        the module rebinds the name only further down: ``import torch.utils.data as data``,
        ``class Faces(data.Dataset)``, and in the ``__main__`` block ``for data in loader:``
        (the class statement ran long before the loop). None when the use is in a function or
        a loop (it may run after the rebinding), or a function declares the name global."""
        if node.id in self._declared:
            return None
        for anc in self.ancestors(node):
            if isinstance(anc, (*FUNC_TYPES, ast.Lambda, ast.For, ast.AsyncFor, ast.While)):
                return None
        here = (node.lineno, node.col_offset)
        later = [(at, old) for at, old in self._replaced[node.id] if at > here]
        return min(later, key=lambda pair: pair[0])[1] if later else None

    def call_name(self, call: ast.Call) -> str | None:
        return self.qualname(call.func)

    # ------------------------------------------------------------------ self attributes

    def method_of(self, node: ast.AST) -> FuncInfo | None:
        """The method (with an instance parameter) a node is in, looking through nested lambdas."""
        fast = self._function_scope(node, through_classes=False)
        if fast is not False:
            return fast if fast is not None and fast.self_name else None
        for anc in self.ancestors(node):
            if isinstance(anc, FUNC_TYPES):
                fn = self.func_by_node.get(id(anc))
                if fn is not None and fn.self_name:
                    return fn
                if fn is not None and fn.cls is None:
                    return None
            if isinstance(anc, ast.ClassDef):
                return None
        return None

    def is_self_attr(self, node: ast.AST, fn: FuncInfo | None = None) -> bool:
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            return False
        fn = fn or self.method_of(node)
        return fn is not None and fn.self_name == node.value.id

    # ------------------------------------------------------------------ values

    def value(self, node: ast.AST | None, depth: int = 0) -> Value:
        """Summarize an expression, following local assignments a few steps."""
        if node is None:
            return Value("unknown")
        span = self.span(node)
        text = self.segment(node)
        if depth > MAX_DEPTH:
            return Value("unknown", text, span)
        if isinstance(node, ast.Constant):
            return Value("const", text, span, const=node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            if isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
                return Value("const", text, span, const=-node.operand.value)
        if isinstance(node, ast.IfExp):
            return Value("union", text, span, options=(self.value(node.body, depth + 1), self.value(node.orelse, depth + 1)))
        if isinstance(node, ast.Lambda):
            refs = tuple(
                q
                for sub in ast.walk(node.body)
                if isinstance(sub, ast.Call) and (q := self.qualname(sub.func))
            )
            return Value("lambda", text, span, refs=refs)
        if isinstance(node, ast.Call):
            callee = self.qualname(node.func)
            if callee in ("functools.partial",) and node.args:
                inner = self.value(node.args[0], depth + 1)
                return Value("partial", text, span, ref=inner.ref, options=(inner,))
            if callee is None and isinstance(node.func, ast.Attribute) and self.is_self_attr(node.func):
                return Value("call", text, span, ref=None, refs=(f"self.{node.func.attr}",))
            first = node.args[0] if node.args else None
            const = first.value if isinstance(first, ast.Constant) else NOCONST
            return Value("call", text, span, ref=callee, const=const)
        if isinstance(node, ast.Name):
            scope = self.scope_of(node)
            binding = self._earlier.get(node) or self.lookup(node.id, scope)
            if binding is None:
                q = self.qualname(node)
                return Value("ref", text, span, ref=q) if q else Value("unknown", text, span)
            if binding.kind in ("import", "def", "class"):
                return Value("ref", text, span, ref=canonical(binding.qualname))
            if binding.kind == "param":
                default = self.value(binding.default, depth + 1) if binding.default is not None else None
                param = Value("param", text, span, ref=node.id, options=(default,) if default else ())
                if binding.values:
                    return Value("union", text, span, options=(param, *self._values_of(binding.values, depth)))
                return param
            if binding.kind == "local" and binding.values:
                values = binding.values
                if len(values) > 1 and scope.bindings.get(node.id) is binding and node.id not in self._declared:
                    values = self._reaching(node, values)
                return self._union(text, span, self._values_of(values, depth))
            return Value("unknown", text, span)
        if isinstance(node, ast.Subscript) and not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            return Value("subset", text, span, options=(self.value(node.value, depth + 1),))
        if isinstance(node, ast.Attribute):
            fn = self.method_of(node)
            if fn is not None and fn.self_name == getattr(node.value, "id", None):
                if node.attr in fn.cls.methods:
                    return Value("self_method", text, span, ref=node.attr)
                values = fn.cls.self_assigns.get(node.attr)
                if values:
                    return self._union(text, span, self._values_of(values, depth))
                return Value("unknown", text, span)
            q = self.qualname(node)
            if q is not None:
                return Value("ref", text, span, ref=q)
            return Value("unknown", text, span)
        return Value("unknown", text, span)

    def _reaching(self, use: ast.AST, values: list) -> list:
        """The assignments of a local that may reach ``use``. One written after ``use`` reaches it
        only through a loop around both. An assignment statement in a block that encloses
        ``use``, before the statement holding it, runs on every path to ``use`` (structured code
        enters a block at its start), so the assignments written before it cannot reach ``use``:
        ``dataset = A(); dataset = B(); DataLoader(dataset)`` gives B (notebook cells re-binding
        a name, too). Assignments in branches around ``use``, and those whose statement is
        unknown, are kept."""
        blocks, loops = self._path_to(use)
        here = self._statement_of(use)
        where = (here.lineno, here.col_offset) if here is not None else (0, 0)

        def may_reach(stmt) -> bool:
            if stmt is None or (stmt.lineno, stmt.col_offset) <= where:
                return True
            return bool(loops) and any(id(a) in loops for a in self.ancestors(stmt))

        pairs = [(v, self._statement_of(v)) for v in values]
        pairs = [(v, stmt) for v, stmt in pairs if may_reach(stmt)]
        arms = self._arms(here)
        if arms:
            # ``if WEBDATASET: ds = wds(...) else: ds = Images(...)`` and later, under the same
            # test, ``if WEBDATASET: WebLoader(ds)``: the other arm's assignment does not reach
            pairs = [(v, stmt) for v, stmt in pairs if stmt is None or not _contradict(arms, self._arms(stmt))]
        killer = None
        for _v, stmt in pairs:
            if isinstance(stmt, (ast.With, ast.AsyncWith)) and self._binds_around(stmt, use):
                # ``with open(b) as fid:`` around the use: that binding runs on every path to it
                if killer is None or (stmt.lineno, stmt.col_offset) > (killer.lineno, killer.col_offset):
                    killer = stmt
                continue
            if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                continue
            slot = self._slot(stmt)
            if slot is not None:
                at = blocks.get(slot[0])
                if at is not None and slot[1] < at:
                    if killer is None or (stmt.lineno, stmt.col_offset) > (killer.lineno, killer.col_offset):
                        killer = stmt
        if killer is None:
            return [v for v, _stmt in pairs]
        return [v for v, stmt in pairs if stmt is None or (stmt.lineno, stmt.col_offset) >= (killer.lineno, killer.col_offset)]

    def _binds_around(self, stmt, use: ast.AST) -> bool:
        """``stmt`` (a ``with``) binds the name ``use`` reads and holds ``use`` in its body."""
        name = getattr(use, "id", None)
        if name is None or not any(
            isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == name for item in stmt.items
        ):
            return False
        node = self.parent(use)
        while node is not None and not isinstance(node, SCOPE_TYPES):
            if node is stmt:
                return True
            node = self.parent(node)
        return False

    def _path_to(self, use: ast.AST) -> tuple[dict, set]:
        """(id(body list) -> index of the statement on the path to ``use``, the loops around
        ``use`` in its scope), computed once per statement (or scope) holding the use: the
        expressions between them hold no statement list and no loop."""
        start = use
        while start is not None and not isinstance(start, ast.stmt) and not isinstance(start, SCOPE_TYPES):
            start = self.parent(start)
        if isinstance(start, SCOPE_TYPES) and start is not use:
            return {}, set()  # in a lambda, a default or a decorator: no block of its scope holds it
        memo = self.__dict__.setdefault("_path_memo", {})
        found = memo.get(id(start)) if start is not None else None
        if found is not None:
            return found
        blocks: dict = {}
        loops: set = set()
        node = start if start is not None else use
        parent = self.parent(node)
        while parent is not None:
            if isinstance(node, ast.stmt):
                slot = self._slot(node)
                if slot is not None:
                    blocks[slot[0]] = slot[1]
            if isinstance(parent, SCOPE_TYPES + (ast.Module,)):
                break
            if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)):
                loops.add(id(parent))
            node, parent = parent, self.parent(parent)
        if start is not None:
            memo[id(start)] = (blocks, loops)
        return blocks, loops

    def _arms(self, stmt) -> dict[str, bool]:
        """The branches of ``if`` statements a statement is in, in its scope: the test (a plain
        flag: names, attributes, constants, comparisons of those) -> True in its body, False in
        its ``else`` (computed once per statement)."""
        memo = self.__dict__.setdefault("_arms_memo", {})
        found = memo.get(id(stmt))
        if found is None:
            found = memo[id(stmt)] = self._arms_of(stmt)
        return found

    def _arms_of(self, stmt) -> dict[str, bool]:
        """The enclosing node's arms, and the arm of ``stmt`` in its own ``if`` (the innermost
        test wins when the same test is met twice)."""
        parent = self.parent(stmt) if stmt is not None else None
        if parent is None or isinstance(parent, SCOPE_TYPES + (ast.Module,)):
            return {}
        outer = self._arms(parent)
        if type(parent) is not ast.If:
            return outer
        test = self._flag_key(parent)
        if test is None:
            return outer
        key, arm = test
        slot = self._slot(stmt)
        if slot is None or slot[0] not in (id(parent.body), id(parent.orelse)):
            return outer
        if slot[0] == id(parent.orelse):
            arm = not arm
        if outer.get(key) is arm:
            return outer
        return {**outer, key: arm}

    def _flag_key(self, node: ast.If) -> tuple[str, bool] | None:
        """(the dump of an ``if``'s flag test, the arm its body runs under), computed once per
        ``if``; None when the test is not a plain flag (``_flag_test``)."""
        memo = self.__dict__.setdefault("_flag_memo", {})
        if id(node) in memo:
            return memo[id(node)]
        found = None
        if _flag_test(node.test):
            test, arm = node.test, True
            while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):  # ``if not FAST``
                test, arm = test.operand, not arm
            found = (ast.dump(test), arm)
        memo[id(node)] = found
        return found

    def _slot(self, stmt) -> tuple[int, int] | None:
        """(id of the statement list holding ``stmt``, its index there), from one pass over its
        parent's lists, kept for every statement of them; None when no list holds it."""
        memo = self.__dict__.setdefault("_slot_memo", {})
        found = memo.get(id(stmt), False)
        if found is not False:
            return found
        parent = self.parent(stmt)
        if parent is not None:
            for body in _bodies(parent):
                bid = id(body)
                for i, item in enumerate(body):
                    memo.setdefault(id(item), (bid, i))
        return memo.setdefault(id(stmt), None)

    def reaching_values(self, node: ast.Name) -> list | None:
        """The value nodes of a local's assignments that may reach this use of it, when some of
        its assignments cannot (see ``_reaching``); None when all can, or the name is not a local
        assigned in this scope."""
        scope = self.scope_of(node)
        binding = self.lookup(node.id, scope)
        if binding is None or binding.kind != "local" or len(binding.values) < 2 or scope.bindings.get(node.id) is not binding:
            return None
        if node.id in self._declared:
            return None
        reaching = self._reaching(node, binding.values)
        return reaching if len(reaching) < len(binding.values) else None

    def _statement_of(self, node) -> ast.stmt | None:
        while node is not None and not isinstance(node, ast.stmt):
            node = self.parent(node)
        return node

    def _values_of(self, nodes, depth: int) -> tuple[Value, ...]:
        return tuple(self.value(n, depth + 1) if n is not None else Value("unknown") for n in nodes)

    @staticmethod
    def _union(text: str, span: Span, values: tuple[Value, ...]) -> Value:
        if len(values) == 1:
            return values[0]
        return Value("union", text, span, options=values)

    def const(self, node: ast.AST | None, default=NOCONST):
        """The literal a node certainly evaluates to, else ``default``."""
        if node is None:
            return default
        alts = self.value(node).alternatives()
        if len(alts) == 1 and alts[0].kind == "const":
            return alts[0].const
        return default


def is_main_guard_test(test: ast.AST) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    left, right = test.left, test.comparators[0]
    pair = {type(left), type(right)}
    if pair != {ast.Name, ast.Constant}:
        return False
    name = left if isinstance(left, ast.Name) else right
    const = right if isinstance(right, ast.Constant) else left
    return name.id == "__name__" and const.value == "__main__"


# node type -> FileContext method recording what it binds; True: it visited the children itself
_VISITORS = {
    ast.FunctionDef: FileContext._visit_def,
    ast.AsyncFunctionDef: FileContext._visit_def,
    ast.ClassDef: FileContext._visit_class,
    ast.Lambda: FileContext._visit_lambda,
    ast.Import: FileContext._visit_import,
    ast.ImportFrom: FileContext._visit_import_from,
    ast.Assign: FileContext._visit_assign,
    ast.AnnAssign: FileContext._visit_assign,
    ast.AugAssign: FileContext._visit_assign,
    ast.For: FileContext._visit_for,
    ast.AsyncFor: FileContext._visit_for,
    ast.With: FileContext._visit_with,
    ast.AsyncWith: FileContext._visit_with,
    ast.ExceptHandler: FileContext._visit_handler,
    ast.NamedExpr: FileContext._visit_named,
    ast.Global: FileContext._visit_global,
    ast.Nonlocal: FileContext._visit_global,
    ast.comprehension: FileContext._visit_comprehension,
}
