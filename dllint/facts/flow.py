"""Value flow of one function (or module body) as plain data: the expressions that build its
locals, its ``self`` attributes and its return values, written in a small IR that the program
model evaluates across functions and files (dllint/program/values.py).

The IR is nested tuples, tag first (cheap to build, to pickle and to store as JSON):

  ("k", v)                  a literal (str, int, float, bool, None); ("kb",) bytes
  ("fs", prefix[, values])  an f-string: its literal start, the values it formats (at most 4)
  ("g", qualname)           a module-level name, import, builtin or definition, resolved
  ("n", name)               a local of this function (its assignments are in ``Flow.locals``)
  ("nk", name, dead, dead_changes)  a local of which some assignments (positions in
                            ``Flow.locals[name]``) and changes (in ``Flow.muts[name]``) cannot reach
                            this use: a later assignment runs on every path to it
  ("p", name)               a parameter of this function
  ("self",)                 the instance (the method's first parameter)
  ("s", attr)               ``self.attr``
  ("a", base, attr)         an attribute of another value
  ("c", func, args, kwargs, row)   a call; ``args``: IR tuple ("*", ir) for ``*x``; ``kwargs``: ((name or None, ir), ...)
  ("i", base, index)        a subscript; index ("sl", lo, hi) for a slice
  ("L", kind, elts, row)    list / tuple / set display (at most MAX_ELTS elements kept, ("more", n) after)
  ("D", items, row)         dict display, items ((key or None, value), ...)
  ("C", kind, elt, iters, row)  comprehension: kind list|set|dict|gen; elt for dict is ("kv", k, v);
                            iters: the iterables of its ``for`` clauses, outermost first
  ("C", kind, elt, iters, row, within)  one whose ``if`` keeps only the elements found in other
                            containers (``if name in self.classes``): ``within``, their IRs
  ("e", iterable, path)     an element of an iterable, unpacked along ``path`` (tuple targets)
  ("b", op, left, right)    a binary operation
  ("u", options)            one of several values (if-expression, ``or``)
  ("lam", row, col, end_row, end_col)  a lambda;  ("fn", qualname) a function defined inside a function
  ("gen", row)              a generator expression; ("cmp",) a comparison or ``not`` (a bool)
  ("?",)                    anything else

Writes to ``self`` attributes keep how they happen (``=``, ``+=``, ``append`` ...) and the
iterables of the loops around them: ``for line in f: self.items.append(line)`` is a write of one
element per line of ``f``.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field

from dllint.facts.context import NODE_FIELDS, node_fields
from dllint.model import pickled_by_fields
from dllint.names import CUDA_INIT_FUNCTIONS, SHARDING_NAMES

MAX_ELTS = 8
MAX_KEYS = 64
MAX_DEPTH = 10
UNKNOWN = ("?",)
MUTATORS = frozenset(
    {"append", "extend", "insert", "update", "add", "appendleft", "extendleft", "setdefault", "__setitem__"}
)
# top-level modules whose calls never bind a project function's parameters (the standard library
# and common libraries): their calls are not recorded
LIBRARY_ROOTS = frozenset(sys.stdlib_module_names) | frozenset(
    {
        "builtins", "torch", "numpy", "np", "pandas", "scipy", "sklearn", "cv2", "PIL", "h5py", "lmdb",
        "yaml", "tqdm", "torchvision", "torchaudio", "transformers", "datasets", "matplotlib", "einops",
        "librosa", "soundfile", "skimage", "imageio", "albumentations", "timm", "pytorch_lightning",
        "lightning", "hydra", "omegaconf", "wandb", "tensorboardX", "accelerate", "safetensors",
    }
)
_OPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.BitOr: "|", ast.BitAnd: "&", ast.MatMult: "@",
}


@pickled_by_fields
@dataclass(slots=True)
class Flow:
    """What one function does with values (plain data)."""

    locals: dict[str, tuple] = field(default_factory=dict)  # name -> IR of each assignment
    defaults: dict[str, tuple] = field(default_factory=dict)  # parameter -> IR of its default
    # parameter -> the Python container its annotation names ("list", "dict", "tuple", "set"):
    # ``items: List[str]``, ``ann: Optional[dict]``
    annotated: dict[str, str] = field(default_factory=dict)
    # local name -> ((how, IR of the argument, loops), ...): ``x.append(v)``, ``x[k] = v``, ``x += v``
    muts: dict[str, tuple] = field(default_factory=dict)
    # attr -> ((how, IR, row, col, loops, end_row, end_col, value span, text, blocks), ...); how: "=", "+=",
    # "append", "extend", "setitem", ... (the position is the statement's, or the mutating call's;
    # the value span (row, col, end_row, end_col) is the assigned expression's; blocks: the
    # conditional blocks around it, outermost first, so a later write in the same or an enclosing
    # block is known to replace it)
    writes: dict[str, tuple] = field(default_factory=dict)
    returns: tuple = ()
    yields: bool = False
    # what a generator yields: ((IR of the value, iterables of the loops around it), ...)
    yielded: tuple = ()
    # self.attr[index] reads: attr -> (IR of the index, ...); "m()" for ``self.m()[index]``
    indexes: dict[str, tuple] = field(default_factory=dict)  # ("elt", ix): an element's index (self.x[k][ix])
    iterates: frozenset[str] = frozenset()  # self attributes walked by a for loop / comprehension
    # those a for loop walks with another loop (or ``yield from``) in its body: several items per
    # element (a shard file's records, a recording's chunks)
    iterates_nested: frozenset[str] = frozenset()
    deletes: frozenset[str] = frozenset()  # self attributes deleted (``del self.x``)
    # calls whose arguments matter across functions: (kind, target, args, kwargs, row) with kind
    # "self" (self.m(...)), "super" (super().m(...)), "super_from" (super(Base, self).m(...) naming
    # another class: target (Base, m)), "ref" (a resolved name), "lmeth" (``x.m(...)`` on a local:
    # target (x, m)), "local" (a local holding a class or
    # function) or "attr"
    # (self.x.m(...): target is (x, m))
    calls: tuple = ()
    # places the hazard queries look at (sources and sinks), each
    # (tag, (row, col, end_row, end_col), text, IR or None, lambda row or 0):
    #   cuda     a call that initializes CUDA (.cuda(), torch.cuda.set_device(), .pin_memory() ...)
    #   load     torch.load(...) without map_location (tensors saved on a GPU come back on it)
    #   to       a call moving data to a device given by the IR (.to(x), device=x, map_location=x)
    #   cv2      an OpenCV call (text: the callee)
    #   shard    a call that asks which worker it runs in or splits a stream by worker
    sites: tuple = ()


def _mentions_local(ir, depth: int = 0) -> bool:
    """Whether an IR reads a local of the function (``("n", name)``), at any depth."""
    if not isinstance(ir, tuple) or depth > 12:
        return False
    if ir and ir[0] in ("n", "nk") and len(ir) >= 2 and isinstance(ir[1], str):
        return True
    return any(_mentions_local(x, depth + 1) for x in ir if isinstance(x, tuple))


def instance_helper(fn) -> bool:
    """A module-level function written to take a class's instance first (``def load_image(self,
    index):`` called as ``load_image(self, index)`` from ``__getitem__``): its ``self.x`` reads
    are recorded as a method's are (the model binds them to the caller's class)."""
    node = fn.node
    parent = fn.scope.parent
    if fn.cls is not None or parent is None or parent.kind != "module" or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    first = (node.args.posonlyargs + node.args.args)[:1]
    return bool(first) and first[0].arg == "self"


class FlowBuilder:
    """Builds the Flow of one function body (or of the module body when ``fn`` is None)."""

    def __init__(self, ctx, fn=None):
        self.ctx = ctx
        self.fn = fn
        self.self_name = fn.self_name if fn is not None else None
        if fn is not None and self.self_name is None and instance_helper(fn):
            self.self_name = "self"
        self.flow = Flow()
        self._locals: dict[str, list] = {}
        self._def_stmts: dict[str, list] = {}  # the statement of each entry of ``_locals``
        self._mut_rows: dict[str, list] = {}  # the (line, column) of each entry of ``_muts``
        self._row = (0, 0)  # the statement being read
        self._muts: dict[str, list] = {}
        self._writes: dict[str, list] = {}
        self._returns: list = []
        self._indexes: dict[str, list] = {}
        self._iterates: set[str] = set()
        self._iterates_nested: set[str] = set()
        self._iter_of: dict[tuple, str] = {}  # ("n", local) / ("s", attr) -> the self attribute of ``iter(self.x)``
        self._deletes: set[str] = set()
        self._calls: list = []
        self._yielded: list = []
        self._sites: list = []
        self._lambda = 0  # the row of the lambda being scanned (0: none)
        self._loops: list = []  # iterables of the enclosing loops, outermost first
        self._blocks: list[int] = []  # the conditional blocks (branches, loop bodies) around a statement
        self._block_ids = 0
        self._comp: list[dict[str, tuple]] = []  # comprehension targets in scope

    # ------------------------------------------------------------------ statements

    def build(self) -> Flow:
        if self.fn is not None:
            args = self.fn.node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            self.flow.defaults = {a.arg: self.expr(d) for a, d in pairs}
            for a in (*positional, *args.kwonlyargs):
                kind = _annotated_container(self.ctx, a.annotation) if a.annotation is not None else None
                if kind is not None:
                    self.flow.annotated[a.arg] = kind
        body = self.fn.node.body if self.fn is not None else self.ctx.tree.body
        self.block(body)
        f = self.flow
        f.locals = {k: tuple(v) for k, v in self._locals.items()}
        f.muts = {k: tuple(v) for k, v in self._muts.items()}
        f.writes = {k: tuple(v) for k, v in self._writes.items()}
        f.returns = tuple(self._returns)
        f.indexes = {k: tuple(v) for k, v in self._indexes.items()}
        f.iterates = frozenset(self._iterates)
        f.iterates_nested = frozenset(self._iterates_nested)
        f.deletes = frozenset(self._deletes)
        f.calls = tuple(self._calls)
        f.yielded = tuple(self._yielded)
        f.sites = tuple(sorted(self._sites, key=lambda site: site[1]))
        return f

    def block(self, stmts) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def branch(self, stmts) -> None:
        """A block that may not run (a branch, a loop body, a handler)."""
        self._block_ids += 1
        self._blocks.append(self._block_ids)
        try:
            self.block(stmts)
        finally:
            self._blocks.pop()

    def stmt(self, s) -> None:
        kind = type(s)
        self._row = (s.lineno, s.col_offset)
        if kind is ast.Assign:
            value = self.expr(s.value)
            for target in s.targets:
                self.bind(target, value, s, value_node=s.value)
                self._note_iterator(target, s.value)
            self.scan(s.value)
        elif kind is ast.AnnAssign:
            if s.value is not None:
                self.bind(s.target, self.expr(s.value), s, value_node=s.value)
                self.scan(s.value)
        elif kind is ast.AugAssign:
            value = self.expr(s.value)
            self.scan(s.value)
            op = _OPS.get(type(s.op), "?")
            t = s.target
            if isinstance(t, ast.Name):
                self._mut(t.id, f"{op}=", value)
            elif self._is_self_attr(t):
                self._write(t.attr, f"{op}=", value, s)
            elif isinstance(t, ast.Subscript):
                self.scan(t)
        elif kind in (ast.For, ast.AsyncFor):
            iterable = self.expr(s.iter)
            self.scan(s.iter)
            walked = self._note_iteration(s.iter)
            if walked and any(
                isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.YieldFrom, ast.comprehension)) for b in s.body for n in ast.walk(b)
            ):
                self._iterates_nested.update(walked)
            self.bind(s.target, ("e", iterable, ()), s, element=True)
            self._loops.append(iterable)
            self.branch(s.body)
            self._loops.pop()
            self.branch(s.orelse)
        elif kind is ast.While:
            self.scan(s.test)
            source = _readline_source(s)
            self._loops.append(self.expr(source) if source is not None else ("while",))
            self.branch(s.body)
            self._loops.pop()
            self.branch(s.orelse)
        elif kind is ast.If:
            self.scan(s.test)
            self.branch(s.body)
            self.branch(s.orelse)
        elif kind in (ast.With, ast.AsyncWith):
            for item in s.items:
                value = self.expr(item.context_expr)
                self.scan(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, ("with", value), s)
            self.block(s.body)
        elif kind is ast.Try or kind.__name__ == "TryStar":
            self.branch(s.body)
            for h in s.handlers:
                if h.name:
                    self._local(h.name, UNKNOWN, h)
                self.branch(h.body)
            self.branch(s.orelse)
            self.block(s.finalbody)
        elif kind is ast.Return:
            if s.value is not None:
                self._returns.append(self.expr(s.value))
                self.scan(s.value)
        elif kind is ast.Expr:
            self.scan(s.value)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            if self.fn is not None:
                info = self.ctx.func_by_node.get(id(s)) if kind is not ast.ClassDef else None
                qual = info.qualname if info is not None else f"{self.fn.qualname}.<locals>.{s.name}"
                self._local(s.name, ("fn", qual), s)
                if kind is not ast.ClassDef:
                    self._closure_reads(s)
                    self._closure_mutations(s, qual)
        elif kind is ast.Match:
            self.scan(s.subject)
            for case in s.cases:
                self.branch(case.body)
        elif kind is ast.Delete:
            for t in s.targets:
                if self._is_self_attr(t):
                    self._deletes.add(t.attr)
                else:
                    self.scan(t)
        elif kind in (ast.Raise, ast.Assert):
            for sub in ast.iter_child_nodes(s):
                self.scan(sub)

    def _local(self, name: str, value, stmt) -> None:
        self._locals.setdefault(name, []).append(value)
        self._def_stmts.setdefault(name, []).append(stmt)

    def _killed(self, node: ast.Name) -> tuple | None:
        """(positions in ``_locals[name]``, positions in ``_muts[name]``) of the assignments and
        changes that cannot reach this use: an assignment runs on every path between them and
        the use (``ids = []; ids.append(x); ids = torch.tensor(ids); return dict(input_ids=ids)``
        gives the tensor). Later ones only add (through a loop), so what is killed here stays
        killed (facts/context.py ``_reaching``). None when nothing is."""
        stmts = self._def_stmts.get(node.id, ())
        if len(stmts) < 2:
            return None
        reaching = self.ctx._reaching(node, [s for s in stmts if s is not None])
        alive = {id(s) for s in reaching}
        killed = tuple(i for i, s in enumerate(stmts) if s is not None and id(s) not in alive)
        if not killed:
            return None
        here = (node.lineno, node.col_offset)
        # the killing assignment: the earliest one still alive before the use
        firsts = [(s.lineno, s.col_offset) for s in reaching if (s.lineno, s.col_offset) <= here]
        start = min(firsts) if firsts else here
        rows = self._mut_rows.get(node.id, ())
        muts = tuple(i for i, r in enumerate(rows) if r < start)
        return killed, muts

    def bind(self, target, value, stmt, element: bool = False, value_node=None) -> None:
        if isinstance(target, ast.Name):
            self._local(target.id, value, stmt)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = value_node.elts if isinstance(value_node, (ast.Tuple, ast.List)) and len(value_node.elts) == len(target.elts) else None
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    self.bind(elt.value, UNKNOWN, stmt)
                    continue
                self.bind(elt, _unpack(value, i), stmt, value_node=elts[i] if elts else value_node)
        elif self._is_self_attr(target):
            self._write(target.attr, "=", value, stmt, value_node)
        elif isinstance(target, ast.Subscript):
            base = target.value
            key = self.expr(target.slice)
            if isinstance(base, ast.Name):
                self._mut(base.id, "setitem", ("kv", key, value))
            elif self._is_self_attr(base):
                self._write(base.attr, "setitem", ("kv", key, value), stmt)
            elif isinstance(base, ast.Subscript) and _mentions_local(outer := self.expr(base.slice)):
                # ``images[path][k] = label`` (a defaultdict filled per line): an entry of
                # ``images`` at ``path`` (a key that changes: it names a local), holding something
                # changed in place; not ``self.maps[self.field][tok] = i`` (one entry, filled)
                root = base.value
                if isinstance(root, ast.Name):
                    self._mut(root.id, "setitem", ("kv", outer, UNKNOWN))
                elif self._is_self_attr(root):
                    self._write(root.attr, "setitem", ("kv", outer, UNKNOWN), stmt)
            self.scan(target)
        elif isinstance(target, ast.Attribute):
            self.scan(target.value)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, UNKNOWN, stmt)

    def _write(self, attr: str, how: str, value, node, value_node=None) -> None:
        loops = tuple(self._loops)
        span = self.ctx.span(node)
        v = self.ctx.span(value_node) if value_node is not None else span
        text = self.ctx.segment(value_node if value_node is not None else node, 60)
        self._writes.setdefault(attr, []).append(
            (how, value, span.row, span.col, loops, span.end_row, span.end_col, (v.row, v.col, v.end_row, v.end_col), text, tuple(self._blocks))
        )

    def _mut(self, name: str, how: str, value) -> None:
        self._muts.setdefault(name, []).append((how, value, tuple(self._loops)))
        self._mut_rows.setdefault(name, []).append(self._row)

    def _is_self_attr(self, node) -> bool:
        return (
            self.self_name is not None
            and isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == self.self_name
        )

    # ------------------------------------------------------------------ expressions seen for effects

    def scan(self, node) -> None:
        """Effects inside an expression: mutating method calls (``x.append(v)``), calls whose
        arguments matter, ``self.x[i]`` reads and iteration over ``self.x``."""
        if node is None:
            return
        stack = [node]
        pop = stack.pop
        push = stack.append
        table = NODE_FIELDS
        special = _SCAN_SPECIAL
        leaves = _LEAVES  # no children, no effects: not pushed
        while stack:
            n = pop()
            t = type(n)
            if t in special:
                if t is ast.Call:
                    self._call_effects(n)
                elif t is ast.Subscript:
                    if self._is_self_attr(n.value) and isinstance(n.ctx, ast.Load):
                        self._indexes.setdefault(n.value.attr, []).append(self.expr(n.slice))
                    elif (
                        isinstance(n.value, ast.Subscript) and self._is_self_attr(n.value.value)
                        and isinstance(n.ctx, ast.Load) and isinstance(n.slice, ast.Name)
                    ):
                        # self.images_lr[self.idx_scale][idx]: its elements are indexed by the name
                        self._indexes.setdefault(n.value.value.attr, []).append(("elt", self.expr(n.slice)))
                    elif (
                        isinstance(n.value, ast.Call) and self._is_self_attr(n.value.func)
                        and not n.value.args and not n.value.keywords and isinstance(n.ctx, ast.Load)
                    ):
                        # self.get_items()[i]: an accessor's result indexed (key "get_items()")
                        self._indexes.setdefault(n.value.func.attr + "()", []).append(self.expr(n.slice))
                elif t is ast.comprehension:
                    self._note_iteration(n.iter)
                elif t is ast.YieldFrom or t is ast.Yield:
                    self.flow.yields = True
                    if not self._lambda:
                        value = self.expr(n.value) if n.value is not None else ("k", None)
                        if t is ast.YieldFrom:  # each element of the iterable, once per element
                            self._yielded.append((("e", value, ()), (*self._loops, value)))
                        else:
                            self._yielded.append((value, tuple(self._loops)))
                elif t is ast.NamedExpr:
                    if isinstance(n.target, ast.Name):
                        self._local(n.target.id, self.expr(n.value), n)
                elif t is ast.Lambda:
                    saved, self._lambda = self._lambda, n.lineno
                    try:
                        self.scan(n.body)
                    finally:
                        self._lambda = saved
                    continue
                else:  # a def or class: its own code is not this function's
                    continue
            fields = table.get(t)
            if fields is None:
                fields = node_fields(t)
            for name, many in fields:  # pushed in order: popped last child first
                value = getattr(n, name, None)
                if value is None:
                    continue
                if many is True:
                    for v in value:
                        if v is not None and type(v) not in leaves:
                            push(v)
                elif many is False:
                    if type(value) not in leaves:
                        push(value)
                elif isinstance(value, list):
                    stack.extend(v for v in value if isinstance(v, ast.AST))
                elif isinstance(value, ast.AST):
                    push(value)

    def _closure_reads(self, fdef) -> None:
        """A function defined inside a method that reads the method's ``self`` (a helper the
        method calls): its ``self.x[k]`` reads and walks count as the method's."""
        if self.self_name is None:
            return
        a = fdef.args
        own = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}
        if self.self_name in own:
            return
        for n in ast.walk(fdef):
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and self._is_self_attr(n.value):
                self._indexes.setdefault(n.value.attr, []).append(self.expr(n.slice))
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
                self._note_iteration(n.iter)

    def _closure_mutations(self, fdef, qual: str) -> None:
        """A function defined here that grows one of this function's lists (``def add(p):
        imgs.append(p)``, called any number of times, recursively): the local is extended by
        what that function adds to it (``("cm", its qualname, the name)``), as if in a loop of
        unknown length."""
        bound: set[str] = set()
        declared: set[str] = set()  # nonlocal names: bound in this function, not the inner one
        mutated: dict[str, None] = {}  # the names it grows, in order
        for n in ast.walk(fdef):
            if n is not fdef and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(n.name)
            elif isinstance(n, ast.arg):
                bound.add(n.arg)
            elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                bound.add(n.id)
            elif isinstance(n, ast.Nonlocal):
                declared.update(n.names)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS:
                recv = n.func.value
                if isinstance(recv, ast.Name) and (n.args or n.keywords):
                    mutated[recv.id] = None
        if not mutated:
            return
        bound -= declared
        self._loops.append(("while",))
        try:
            for name in mutated:
                if name not in bound and name in self._locals:
                    self._mut(name, "extend", ("cm", qual, name))
        finally:
            self._loops.pop()

    def _note_iterator(self, target, value) -> None:
        """``self.source = iter(self.data)`` / ``it = iter(self.data)``: walking the iterator
        later in the function walks ``self.data``."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "iter" and len(value.args) == 1):
            return
        arg = value.args[0]
        if not self._is_self_attr(arg):
            return
        if isinstance(target, ast.Name):
            self._iter_of[("n", target.id)] = arg.attr
        elif self._is_self_attr(target):
            self._iter_of[("s", target.attr)] = arg.attr

    def _note_iteration(self, node) -> set[str]:
        """Record the self attributes that walking ``node`` walks; returns them."""
        walked: set[str] = set()
        while isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Name) and node.func.id in (
            "enumerate", "zip", "sorted", "list", "reversed", "iter", "tqdm",
        ):
            node = node.args[0]
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and self._is_self_attr(node.value):
            node = node.value  # ``for r in self.recordings[self.start : self.end]``: a stretch of it
        if isinstance(node, ast.Name) and ("n", node.id) in self._iter_of:
            walked.add(self._iter_of[("n", node.id)])
        if self._is_self_attr(node):
            walked.add(node.attr)
            if ("s", node.attr) in self._iter_of:
                walked.add(self._iter_of[("s", node.attr)])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and self._is_self_attr(node.func.value):
            if node.func.attr in ("items", "keys", "values"):
                walked.add(node.func.value.attr)
        self._iterates.update(walked)
        return walked

    def _site(self, tag: str, node, text: str, ir=None) -> None:
        span = self.ctx.span(node)
        self._sites.append((tag, (span.row, span.col, span.end_row, span.end_col), text, ir, self._lambda))

    def _device_sites(self, call: ast.Call, qual: str | None) -> None:
        """CUDA-initializing calls and calls that move data to a device (sinks of the CUDA rules)."""
        func = call.func
        ctx = self.ctx
        if qual is not None:
            if qual in CUDA_INIT_FUNCTIONS or (qual.startswith("torch.cuda.") and qual.endswith("Tensor")):
                self._site("cuda", call, f"`{qual}()`")
                return
            if qual == "torch.load":
                loc = call_argument(call, "map_location", 1)
                if loc is not None:
                    self._site("to", call, f"`torch.load(..., map_location={ctx.segment(loc, 30)})`", self.expr(loc))
                elif not any(k.arg is None for k in call.keywords):
                    self._site("load", call, f"`{ctx.segment(call, 50)}` without `map_location`")
                return
        method = func.attr if isinstance(func, ast.Attribute) else None
        if method in _DEVICE_METHODS and not _imported_receiver(ctx, func):
            if method == "cuda":
                self._site("cuda", call, f"`{ctx.segment(call, 50)}`")
                return
            if method == "pin_memory":
                self._site("cuda", call, f"`{ctx.segment(call, 50)}` (pinned memory)")
                return
            if method == "to":
                dev = call_argument(call, "device", 0)
                if dev is not None:
                    self._site("to", call, f"`{ctx.segment(call, 50)}`", self.expr(dev))
                return
        device = None
        for k in call.keywords:
            if k.arg == "device":
                device = k.value
                break
        if device is not None and qual != "torch.device":
            factory = qual is not None and qual.startswith("torch.") and not qual.startswith("torch.cuda.")
            tensor_method = method is not None and method.startswith("new_") and not _imported_receiver(ctx, func)
            if factory or tensor_method:
                self._site("to", call, f"`{ctx.segment(call, 50)}`", self.expr(device))

    def _call_effects(self, call: ast.Call) -> None:
        func = call.func
        qual = self.ctx.qualname(func)
        self._device_sites(call, qual)
        if qual is not None and (qual.startswith("cv2.") or ".cv2." in qual) and qual not in ("cv2.setNumThreads", "cv2.getNumThreads"):
            self._site("cv2", call, qual)
        name = qual.rsplit(".", 1)[-1] if qual else func.attr if isinstance(func, ast.Attribute) else None
        if name in SHARDING_NAMES and not (qual or "").startswith("builtins."):
            self._site("shard", call, name)
        if (
            qual == "builtins.setattr" and len(call.args) == 3 and self.self_name is not None
            and isinstance(call.args[0], ast.Name) and call.args[0].id == self.self_name
            and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str)
            and call.args[1].value.isidentifier()
        ):
            # setattr(self, "name", value): an assignment of self.name
            self._write(call.args[1].value, "=", self.expr(call.args[2]), call, call.args[2])
        if isinstance(func, ast.Attribute):
            method = func.attr
            recv = func.value
            if method in MUTATORS and (call.args or call.keywords):
                args = tuple([self.expr(a) for a in call.args])
                if method == "update" and call.keywords:
                    # ``d.update(a=1, **more)``: the display ``{"a": 1, **more}`` (keys as constants)
                    args = (("D", tuple([(("k", k.arg) if k.arg is not None else None, self.expr(k.value)) for k in call.keywords]), call.lineno),)
                value = args[-1] if args else UNKNOWN
                if method == "insert" and len(args) == 2:
                    value = args[1]
                if method == "setdefault" and args:
                    value = ("kv", args[0], args[1] if len(args) > 1 else ("k", None))
                if isinstance(recv, ast.Name):
                    self._mut(recv.id, method, value)
                elif self._is_self_attr(recv):
                    self._write(recv.attr, method, value, call)
                elif isinstance(recv, ast.Subscript) and self._is_self_attr(recv.value):
                    # self.by_class[c].append(x): the dict's values grow
                    self._write(recv.value.attr, "setitem-" + method, ("kv", self.expr(recv.slice), value), call)
                elif isinstance(recv, ast.Subscript) and isinstance(recv.value, ast.Name):
                    # names_lr[si].append(x): the list's (or dict's) elements grow
                    self._mut(recv.value.id, "setitem-" + method, ("kv", self.expr(recv.slice), value))
                elif isinstance(recv, ast.Subscript) and isinstance(recv.value, ast.Subscript):
                    # self.labels[video][frame].append(box) on nested defaultdicts, at a key that
                    # changes (it names a local): the nested tables grow, and with them the outer
                    # one (recorded as its own entries growing); not ``self.by[self.field][k]``
                    first = recv.value
                    while isinstance(first.value, ast.Subscript):
                        first = first.value
                    outer = self.expr(first.slice)
                    if _mentions_local(outer):
                        if self._is_self_attr(first.value):
                            self._write(first.value.attr, "setitem-" + method, ("kv", outer, value), call)
                        elif isinstance(first.value, ast.Name):
                            self._mut(first.value.id, "setitem-" + method, ("kv", outer, value))
            if self.self_name is not None and isinstance(recv, ast.Name) and recv.id == self.self_name:
                self._calls.append(("self", method, *self._args(call), call.lineno))
                return
            if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super":
                start = self.ctx.qualname(recv.args[0]) if recv.args else None
                own = self.fn.cls.qualname if self.fn is not None and self.fn.cls is not None else None
                if start is not None and own is not None and start != own:
                    # ``super(Base, self).m()`` in a subclass of Base: the method after Base in the
                    # MRO, not Base's own
                    self._calls.append(("super_from", (start, method), *self._args(call), call.lineno))
                else:
                    self._calls.append(("super", method, *self._args(call), call.lineno))
                return
            if self._is_self_attr(recv):
                self._calls.append(("attr", (recv.attr, method), *self._args(call), call.lineno))
                return
            if isinstance(recv, ast.Name) and qual is None and recv.id != self.self_name and (call.args or call.keywords):
                # ``solver.train(dataset)`` on a local: a project instance's method is bound here
                # (the model reads what the local's assignments construct)
                self._calls.append(("lmeth", (recv.id, method), *self._args(call), call.lineno))
                return
        if qual is None and isinstance(func, ast.Name):
            qual = self._star_global(func)
        if qual is not None and (call.args or call.keywords) and not self._library(qual):
            self._calls.append(("ref", qual, *self._args(call), call.lineno))
        elif qual is None and isinstance(func, ast.Name) and (call.args or call.keywords):
            # ``dataset_cls(train_json)`` with ``dataset_cls = A if lazy else B``: a call of whatever
            # the local holds (the model reads its assignments)
            self._calls.append(("local", func.id, *self._args(call), call.lineno))

    def _star_global(self, node: ast.Name) -> str | None:
        """A name no statement of the file binds, in a file with ``from pkg import *``: the
        module global the star import binds (``VOCDetection`` after ``from data import *``), as
        ``<this module>.<name>``, which the model resolves through the file's star imports."""
        ctx = self.ctx
        if not ctx.star_imports or ctx.lookup(node.id, ctx.scope_of(node)) is not None:
            return None
        return f"{ctx.module}.{node.id}"

    def _library(self, qual: str) -> bool:
        """A call into the standard library or a common library (not recorded: it binds no
        project parameter), unless the project has a module of that name too (its own
        ``datasets/`` package: ``FileContext.shadowed``)."""
        top = qual.split(".", 1)[0]
        return top in LIBRARY_ROOTS and top not in self.ctx.shadowed

    def _args(self, call: ast.Call):
        args = tuple([("*", self.expr(a.value)) if type(a) is ast.Starred else self.expr(a) for a in call.args])
        kwargs = tuple([(k.arg, self.expr(k.value)) for k in call.keywords])
        return args, kwargs

    # ------------------------------------------------------------------ expressions as IR

    def expr(self, node, depth: int = 0):
        if node is None:
            return ("k", None)
        if depth > MAX_DEPTH:
            return UNKNOWN
        t = type(node)
        d = depth + 1
        if t is ast.Constant:
            v = node.value
            if isinstance(v, (bytes, bytearray)):
                return ("kb",)
            if v is Ellipsis or isinstance(v, complex):
                return UNKNOWN
            if isinstance(v, str) and len(v) > 200:
                return ("k", v[:200])
            return ("k", v)
        if t is ast.Name:
            return self.name(node)
        if t is ast.Attribute:
            if self._is_self_attr(node):
                return ("s", node.attr)
            if self._rooted_at_import(node):
                qual = self.ctx.qualname(node)
                if qual is not None:
                    return ("g", qual)
            return ("a", self.expr(node.value, d), node.attr)
        if t is ast.Call:
            func = node.func
            if isinstance(func, (ast.Name, ast.Attribute, ast.Subscript)):  # REGISTRY[name](...) too
                callee = self.expr(func, d)
            else:
                callee = UNKNOWN
            args = tuple(
                [("*", self.expr(a.value, d)) if type(a) is ast.Starred else self.expr(a, d) for a in node.args[:12]]
            ) if node.args else ()
            kwargs = tuple([(k.arg, self.expr(k.value, d)) for k in node.keywords[:MAX_KEYS]]) if node.keywords else ()
            return ("c", callee, args, kwargs, node.lineno)
        if t is ast.Subscript:
            sl = node.slice
            if isinstance(sl, ast.Slice):
                index = ("sl", self.expr(sl.lower, d) if sl.lower else None, self.expr(sl.upper, d) if sl.upper else None)
            else:
                index = self.expr(sl, d)
            return ("i", self.expr(node.value, d), index)
        if t in (ast.List, ast.Tuple, ast.Set):
            kind = "list" if t is ast.List else "tuple" if t is ast.Tuple else "set"
            elts = [("*", self.expr(e.value, d)) if isinstance(e, ast.Starred) else self.expr(e, d) for e in node.elts[:MAX_ELTS]]
            if len(node.elts) > MAX_ELTS:
                # past the bound, the elements holding a lambda are still kept (a transform list
                # ending in ``Lambda(lambda x: ...)`` cannot be pickled; its other steps can)
                held = [e for e in node.elts[MAX_ELTS:] if kind != "tuple" and not isinstance(e, ast.Starred) and _has_lambda(e)][:MAX_ELTS]
                elts.extend(self.expr(e, d) for e in held)
                elts.append(("more", len(node.elts) - MAX_ELTS - len(held)))
            return ("L", kind, tuple(elts), node.lineno)
        if t is ast.Dict:
            # a dict with literal keys is a record (a config): every key is kept, up to a bound
            limit = MAX_KEYS if all(isinstance(k, ast.Constant) for k in node.keys) else MAX_ELTS
            items = tuple(
                [
                    (self.expr(k, d) if k is not None else None, self.expr(v, d))
                    for k, v in list(zip(node.keys, node.values))[:limit]
                ]
            )
            if len(node.keys) > limit:
                items += ((("more", len(node.keys) - limit), UNKNOWN),)
            return ("D", items, node.lineno)
        if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            return self.comprehension(node, d)
        if t is ast.BinOp:
            return ("b", _OPS.get(type(node.op), "?"), self.expr(node.left, d), self.expr(node.right, d))
        if t is ast.IfExp:
            return ("u", (self.expr(node.body, d), self.expr(node.orelse, d)))
        if t is ast.BoolOp:
            return ("u", tuple([self.expr(v, d) for v in node.values[:4]]))
        if t is ast.JoinedStr:
            first = node.values[0] if node.values else None
            prefix = first.value[:20] if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
            parts = tuple(self.expr(v.value, d) for v in node.values if isinstance(v, ast.FormattedValue))[:4]
            return ("fs", prefix, parts) if parts else ("fs", prefix)
        if t is ast.Compare or (t is ast.UnaryOp and isinstance(node.op, ast.Not)):
            return ("cmp",)
        if t is ast.UnaryOp:
            inner = self.expr(node.operand, d)
            if inner[0] == "k" and isinstance(inner[1], (int, float)) and isinstance(node.op, ast.USub):
                return ("k", -inner[1])
            return ("b", "u", inner, ("k", None))
        if t is ast.Lambda:
            span = self.ctx.span(node)
            return ("lam", span.row, span.col, span.end_row, span.end_col)
        if t is ast.NamedExpr:
            return self.expr(node.value, d)
        if t is ast.Starred:
            return ("*", self.expr(node.value, d))
        if t is ast.Await:
            return self.expr(node.value, d)
        return UNKNOWN

    def _rooted_at_import(self, node) -> bool:
        """``a.b.c`` whose ``a`` is an import, a definition or a builtin (a qualified name), not a
        variable (whose attributes are attributes of its value)."""
        while isinstance(node, ast.Attribute):
            node = node.value
        if not isinstance(node, ast.Name):
            return False
        if self._comp and any(node.id in env for env in self._comp):
            return False
        binding = self.ctx.lookup(node.id, self.ctx.scope_of(node))
        return binding is None or binding.kind in ("import", "def", "class")

    def name(self, node: ast.Name):
        ident = node.id
        if self._comp:
            for env in reversed(self._comp):
                if ident in env:
                    return env[ident]
        if self.self_name is not None and ident == self.self_name:
            return ("self",)
        ctx = self.ctx
        scope = ctx.scope_of(node)
        binding = ctx.lookup(ident, scope)
        if binding is None:
            if ident == "__file__":
                return ("g", "__file__")  # the module's own file: paths beside the code (values ``_shipped``)
            qual = ctx.qualname(node) or self._star_global(node)
            if qual is None and ident in ctx.global_writers:
                return ("g", f"{ctx.module}.{ident}")  # a module variable only functions assign (``global``)
            return ("g", qual) if qual else UNKNOWN
        if binding.kind == "param":
            if self.fn is not None and binding is self.fn.scope.bindings.get(ident):
                return ("p", ident) if not binding.values else ("u", (("p", ident), ("n", ident)))
            return UNKNOWN  # a parameter of an enclosing function (a closure)
        if binding.kind == "local":
            if self.fn is not None and binding is self.fn.scope.bindings.get(ident):
                killed = self._killed(node)
                return ("nk", ident, *killed) if killed else ("n", ident)
            if binding is ctx.module_scope.bindings.get(ident):
                return ("n", ident) if self.fn is None else ("g", f"{ctx.module}.{ident}")
            return UNKNOWN  # a closure variable
        if binding.kind in ("import", "def", "class"):
            qual = ctx.qualname(node)
            if qual is None:
                return UNKNOWN
            if ".<locals>." in qual:
                return ("fn", qual)
            return ("g", qual)
        if binding.kind == "global":
            return ("g", f"{ctx.module}.{ident}")
        return UNKNOWN

    def comprehension(self, node, depth: int):
        kind = {ast.ListComp: "list", ast.SetComp: "set", ast.GeneratorExp: "gen", ast.DictComp: "dict"}[type(node)]
        env: dict[str, tuple] = {}
        self._comp.append(env)
        iters = []
        within = []
        try:
            for gen in node.generators:
                iterable = self.expr(gen.iter, depth)
                iters.append(iterable)
                _bind_env(env, gen.target, ("e", iterable, ()))
                if isinstance(gen.target, ast.Name):
                    within += [self.expr(c, depth) for c in _membership_tests(gen.ifs, gen.target.id)]
            if kind == "dict":
                elt = ("kv", self.expr(node.key, depth), self.expr(node.value, depth))
            else:
                elt = self.expr(node.elt, depth)
        finally:
            self._comp.pop()
        if within:
            return ("C", kind, elt, tuple(iters), node.lineno, tuple(within))
        return ("C", kind, elt, tuple(iters), node.lineno)


def _membership_tests(ifs, name: str) -> list:
    """The containers an ``if`` of a comprehension requires its element ``name`` to be in:
    ``x in C`` alone or as one operand of an ``and`` (``if isdir(x) and x in self.classes``)."""
    out = []
    todo = list(ifs)
    while todo:
        test = todo.pop(0)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            todo.extend(test.values)
        elif (
            isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In)
            and isinstance(test.left, ast.Name) and test.left.id == name
        ):
            out.append(test.comparators[0])
    return out


ANNOTATED_CONTAINERS = {
    "builtins.list": "list", "typing.List": "list", "builtins.dict": "dict", "typing.Dict": "dict",
    "typing.OrderedDict": "dict", "collections.OrderedDict": "dict", "typing.DefaultDict": "dict",
    "collections.defaultdict": "dict", "builtins.tuple": "tuple", "typing.Tuple": "tuple",
    "builtins.set": "set", "typing.Set": "set",
}
_OPTIONAL = frozenset({"typing.Optional", "typing.Union"})


def _annotated_container(ctx, node, depth: int = 0) -> str | None:
    """The Python container a parameter's annotation names (``List[str]``, ``dict``,
    ``Optional[List[dict]]``, ``list[str] | None``, ``"List[str]"``); None for anything else
    (``Sequence``, ``Mapping``, arrays: they may be compact)."""
    if depth > 4 or node is None:
        return None
    if isinstance(node, ast.Constant):
        if node.value is None:
            return "none"
        if isinstance(node.value, str) and len(node.value) < 200:
            try:
                inner = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
            if isinstance(inner, (ast.Name, ast.Attribute, ast.Subscript, ast.BinOp)):
                # a string annotation names what the module imports (looked up in the module scope)
                return _annotated_container(ctx, inner, depth + 1)
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _one_kind([_annotated_container(ctx, node.left, depth + 1), _annotated_container(ctx, node.right, depth + 1)])
    if isinstance(node, ast.Subscript):
        head = ctx.qualname(node.value) if isinstance(node.value, (ast.Name, ast.Attribute)) else None
        if head in _OPTIONAL:
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            kinds = [_annotated_container(ctx, p, depth + 1) for p in parts]
            return _one_kind(kinds + (["none"] if head == "typing.Optional" else []))
        return ANNOTATED_CONTAINERS.get(head)
    if isinstance(node, (ast.Name, ast.Attribute)):
        if isinstance(node, ast.Name) and node.id in ("list", "dict", "tuple", "set"):
            return node.id
        return ANNOTATED_CONTAINERS.get(ctx.qualname(node))
    return None


def _one_kind(kinds) -> str | None:
    """The one container of a union with None (``Optional[List[str]]``)."""
    real = {k for k in kinds if k != "none"}
    if len(real) == 1 and None not in real:
        return real.pop()
    return None


def _bind_env(env: dict, target, value) -> None:
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        for i, elt in enumerate(target.elts):
            if not isinstance(elt, ast.Starred):
                _bind_env(env, elt, _unpack(value, i))


def _unpack(value, i: int):
    """Item ``i`` of a value being unpacked (``a, b = value``): of a display directly; of an
    iteration element, a longer element path; else ``value[i]``."""
    if value[0] == "L" and value[1] in ("tuple", "list") and i < len(value[2]) and all(e[0] not in ("*", "more") for e in value[2]):
        return value[2][i]
    if value[0] == "e":
        return ("e", value[1], value[2] + (i,))
    return ("i", value, ("k", i))


_LEAVES = frozenset({ast.Name, ast.Constant})
_DEVICE_METHODS = frozenset({"cuda", "pin_memory", "to"})  # tensor methods that put data on a device
# the node types scan() does more for than walking into their fields
_SCAN_SPECIAL = frozenset(
    {ast.Call, ast.Subscript, ast.comprehension, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef}
)

def call_argument(call: ast.Call, name: str, position: int | None):
    """The argument a call passes for parameter ``name`` (by keyword, or at ``position`` when no
    ``*args`` comes before it); None when it passes none that can be seen."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    if position is not None and len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
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


def function_flow(ctx, fn) -> Flow:
    return FlowBuilder(ctx, fn).build()


def module_flow(ctx) -> Flow:
    return FlowBuilder(ctx, None).build()


_ENV_READS = frozenset({"get", "getenv", "pop"})


def _disables_threads(ctx, node) -> bool:
    """``cv2.setNumThreads(0|1|<expr>)`` or setting ``OMP_NUM_THREADS``."""
    if isinstance(node, ast.Call):
        callee = ctx.call_name(node)
        if callee == "cv2.setNumThreads":
            value = ctx.const(node.args[0], None) if node.args else None
            return not (isinstance(value, int) and value > 1)  # an expression: trust it
        if any(k.arg == "OMP_NUM_THREADS" for k in node.keywords):
            return True
        if node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "OMP_NUM_THREADS":
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            return name not in _ENV_READS
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "OMP_NUM_THREADS"
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == "OMP_NUM_THREADS" for k in node.keys)
    return False


# the words a file turning OpenCV's threads off holds: a signal of the whole project (one such file
# counts for all: dllint/program/hazards.py, ``opencv_sites``), so a named file's run parses every
# file holding one, as a whole run does (DL204's trigger words)
THREADS_OFF_WORDS = (b"setNumThreads", b"OMP_NUM_THREADS")


def file_signals(ctx) -> dict:
    """File-level signals: ``cv2_threads_off`` when the file turns OpenCV's threads off."""
    out = {}
    text = ctx.text
    if any(w.decode() in text for w in THREADS_OFF_WORDS) and any(
        _disables_threads(ctx, node) for node in ctx.nodes(ast.Call, ast.Subscript, ast.Dict)
    ):
        out["cv2_threads_off"] = True
    return out


def _has_lambda(node) -> bool:
    return any(isinstance(n, ast.Lambda) for n in ast.walk(node))


# ---------------------------------------------------------------------------- dataclasses

DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass", "pydantic.dataclasses.dataclass"})
_NOT_FIELDS = frozenset({"typing.ClassVar", "dataclasses.InitVar", "dataclasses.KW_ONLY"})


def is_dataclass(ctx, node) -> bool:
    """``@dataclass`` / ``@dataclass(...)`` that generates ``__init__`` (not ``init=False``)."""
    for d in node.decorator_list:
        func = d.func if isinstance(d, ast.Call) else d
        if ctx.qualname(func) not in DATACLASS_DECORATORS:
            continue
        if isinstance(d, ast.Call):
            for kw in d.keywords:
                if kw.arg == "init" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                    return False
        return True
    # a project decorator that makes the class a dataclass (pytorch3d's ``@expand_args_fields``
    # calls ``dataclasses.dataclass``): its fields say so, ``images: List[Tensor] = field()`` (a
    # ``dataclasses.field`` is nothing outside a dataclass)
    return bool(node.decorator_list) and any(
        type(stmt) is ast.AnnAssign
        and type(stmt.value) is ast.Call
        and ctx.qualname(stmt.value.func) == "dataclasses.field"
        for stmt in node.body
    )


def dataclass_fields(ctx, info, depth: int = 0) -> dict | None:
    """name -> the field's statement (``data: list[Row]``, ``n: int = 0``), in the order of the
    generated ``__init__``'s parameters: the fields of the dataclass bases defined in the same
    file first, then the class's own. A base from another file is taken to give no fields (a
    dataclass base there would put its fields first: a positional argument could then bind to
    the wrong field; keywords bind right). {} when the class is not a dataclass generating
    ``__init__``."""
    if depth > 8:
        return None
    node = info.node
    fields: dict = {}
    by_name = {c.qualname: c for c in ctx.classes}
    for base in node.bases:
        target = base.value if isinstance(base, ast.Subscript) else base
        qual = ctx.qualname(target) if isinstance(target, (ast.Name, ast.Attribute)) else None
        if qual in by_name:
            for name, stmt in (dataclass_fields(ctx, by_name[qual], depth + 1) or {}).items():
                fields.setdefault(name, stmt)
    if not is_dataclass(ctx, node):
        return fields
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.simple):
            continue
        head = stmt.annotation.value if isinstance(stmt.annotation, ast.Subscript) else stmt.annotation
        if isinstance(head, (ast.Name, ast.Attribute)) and ctx.qualname(head) in _NOT_FIELDS:
            continue
        value = stmt.value
        if (
            isinstance(value, ast.Call) and ctx.qualname(value.func) == "dataclasses.field"
            and any(kw.arg == "init" and isinstance(kw.value, ast.Constant) and kw.value.value is False for kw in value.keywords)
        ):
            fields.pop(stmt.target.id, None)
            continue
        fields[stmt.target.id] = stmt  # (a redeclared field keeps its place, takes the new default)
    return fields


def dataclass_init_flow(ctx, info, fields: dict) -> Flow:
    """The Flow of the ``__init__`` a dataclass generates: each field's parameter stored on
    ``self`` at the field's line, its default, then ``self.__post_init__()``."""
    builder = FlowBuilder(ctx, None)
    flow = Flow()
    for name, stmt in fields.items():
        value = stmt.value
        default = None
        if isinstance(value, ast.Call) and ctx.qualname(value.func) == "dataclasses.field":
            for kw in value.keywords:
                if kw.arg == "default":
                    default = builder.expr(kw.value)
                elif kw.arg == "default_factory":
                    default = ("c", builder.expr(kw.value), (), (), stmt.lineno)
        elif value is not None:
            default = builder.expr(value)
        if default is not None:
            flow.defaults[name] = default
        kind = _annotated_container(ctx, stmt.annotation)
        if kind is not None:
            flow.annotated[name] = kind
        span = ctx.span(stmt)
        flow.writes[name] = (
            ("=", ("p", name), span.row, span.col, (), span.end_row, span.end_col,
             (span.row, span.col, span.end_row, span.end_col), ctx.segment(stmt, 60), ()),
        )
    row = ctx.name_span(info.node).row
    flow.calls = (("self", "__post_init__", (), (), row),)
    return flow


_LINE_CLEANERS = frozenset({"strip", "rstrip", "lstrip", "decode"})


def _readline_of(node) -> ast.expr | None:
    """The file ``f`` of ``f.readline()`` (or ``f.readline().strip()``)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _LINE_CLEANERS:
        node = node.func.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "readline" and not node.args:
        return node.func.value
    return None


def _readline_source(loop: ast.While) -> ast.expr | None:
    """The file a ``while`` loop reads line by line: ``while line: ...; line = f.readline()``,
    ``while (line := f.readline()):``, ``while True: line = f.readline(); if not line: break``.
    One turn per line of ``f``, as ``for line in f`` would be."""
    test = loop.test
    if isinstance(test, ast.NamedExpr):
        return _readline_of(test.value)
    if isinstance(test, ast.Name):
        name = test.id
    elif isinstance(test, ast.Constant) and test.value is True:
        name = next(
            (
                st.test.operand.id
                for st in loop.body
                if isinstance(st, ast.If) and isinstance(st.test, ast.UnaryOp) and isinstance(st.test.op, ast.Not)
                and isinstance(st.test.operand, ast.Name) and st.body and isinstance(st.body[0], ast.Break)
            ),
            None,
        )
        if name is None:
            return None
    else:
        return None
    for st in loop.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) and st.targets[0].id == name:
            found = _readline_of(st.value)
            if found is not None:
                return found
    return None
