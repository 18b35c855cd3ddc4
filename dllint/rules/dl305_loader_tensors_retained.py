"""DL305 loader-tensors-retained.

Batches that worker processes send arrive in shared memory; under the default ``file_descriptor``
strategy every received storage keeps a descriptor open for as long as the tensor (or a view of
it) lives. Keeping batch tensors across iterations (``outputs.append(batch[0])``) therefore keeps
one descriptor per batch until "Too many open files".

``extract`` finds ``for ... in <name>:`` loops (through ``enumerate``/``tqdm``/``iter``), follows the
loop variable through the body (views and ``.cpu()``/``.detach()``/``.numpy()`` keep sharing;
``.clone()``, ``.item()``, ``.tolist()``, reductions, copies and any other call do not), and records
what is stored into a list or dict that outlives the iteration. ``check`` joins the loop with the
loader the name was assigned from (same function, module, or ``self.attr`` in the same class).
"""

from __future__ import annotations

import ast

from dllint.facts.context import FUNC_TYPES
from dllint.facts.loops import loop_source, unwrap_iter
from dllint.model import Diagnostic, Edit, Fix
from dllint.rules.base import Rule
from dllint.textutil import clip

# tensor methods whose result shares storage with the tensor (a view or the tensor itself)
SHARING_METHODS = frozenset(
    {
        "cpu", "detach", "detach_", "numpy", "view", "view_as", "reshape", "reshape_as", "squeeze",
        "unsqueeze", "flatten", "permute", "transpose", "t", "contiguous", "narrow", "select",
        "expand", "expand_as", "unflatten", "movedim", "swapaxes", "as_strided", "requires_grad_",
        "share_memory_", "pin_memory_",
    }
)
CONTAINERS = frozenset(
    {"builtins.dict", "builtins.list", "collections.defaultdict", "collections.OrderedDict", "collections.deque"}
)
CONCAT = frozenset(
    {
        "torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack",
        "numpy.concatenate", "numpy.stack", "numpy.vstack", "numpy.hstack",
    }
)


def _names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


class _Taint:
    """Which names hold (views of) batch tensors, statement by statement."""

    def __init__(self, ctx):
        self.ctx = ctx

    def tainted(self, node: ast.AST, names: frozenset[str]) -> bool:
        if isinstance(node, ast.Name):
            return node.id in names
        if isinstance(node, ast.Subscript):
            return self.tainted(node.value, names)
        if isinstance(node, ast.Attribute):
            return self.tainted(node.value, names)
        if isinstance(node, ast.Starred):
            return self.tainted(node.value, names)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(self.tainted(e, names) for e in node.elts)
        if isinstance(node, ast.Dict):
            return any(v is not None and self.tainted(v, names) for v in node.values)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if method in SHARING_METHODS:
                return self.tainted(node.func.value, names)
            if method == "to" and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "cpu":
                return self.tainted(node.func.value, names)
        return False

    def assign(self, target: ast.AST, value: ast.AST | None, names: set[str]) -> None:
        if isinstance(target, ast.Name):
            if value is not None and self.tainted(value, frozenset(names)):
                names.add(target.id)
            else:
                names.discard(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts):
                    self.assign(t, v, names)
            else:
                whole = value is not None and self.tainted(value, frozenset(names))
                for t in target.elts:
                    for n in _names(t):
                        (names.add if whole else names.discard)(n)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, names)


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


class _LoopScan:
    def __init__(self, ctx, loop: ast.AST, target: ast.AST):
        names = _names(target)
        self.whole = target.id if isinstance(target, ast.Name) else None  # the bare batch object
        self.ctx = ctx
        self.loop = loop
        self.taint = _Taint(ctx)
        self.sinks: list[dict] = []
        self.assigned_in_loop = self._assigned(loop)
        self.start = names

    def _assigned(self, loop) -> set[str]:
        """Texts of containers (re)bound inside the loop body: they do not outlive an iteration."""
        out: set[str] = set()
        for node in self._assignments_in(loop):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Store):
                        out.add(self.ctx.segment(sub, 200))
        return out

    def _assignments_in(self, loop) -> list:
        """The assignments of the loop's body (not in nested functions or classes): in a
        function, its own assignments between the body's first and last positions
        (``FileContext.function_nodes_within``); elsewhere by a walk of the body."""
        ctx = self.ctx
        scope = ctx.scope_of(loop)
        if scope.kind != "function" or scope.by_type is None or not loop.body:
            return [n for stmt in loop.body for n in self._walk(stmt) if isinstance(n, (ast.Assign, ast.AnnAssign))]
        return ctx.function_nodes_within(scope.node, (ast.Assign, ast.AnnAssign), loop.body[0], loop.body[-1])

    @staticmethod
    def _walk(node):
        stack = [node]
        while stack:
            n = stack.pop()
            yield n
            if isinstance(n, (*FUNC_TYPES, ast.ClassDef, ast.Lambda)):
                continue
            stack.extend(ast.iter_child_nodes(n))

    def run(self) -> list[dict]:
        self.block(self.loop.body, set(self.start))
        return self.sinks

    def block(self, stmts, names: set[str]) -> set[str]:
        for stmt in stmts:
            names = self.stmt(stmt, names)
        return names

    def stmt(self, stmt, names: set[str]) -> set[str]:
        if isinstance(stmt, (*FUNC_TYPES, ast.ClassDef)):
            return names
        if isinstance(stmt, ast.If):
            a = self.block(stmt.body, set(names))
            b = self.block(stmt.orelse, set(names))
            return a & b
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            inner = set(names)
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                for n in _names(stmt.target):
                    inner.discard(n)
            inner = self.block(stmt.body, inner)
            self.block(stmt.orelse, set(names))
            return names & inner
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            return self.block(stmt.body, names)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            body = self.block(stmt.body, set(names))
            for handler in stmt.handlers:
                self.block(handler.body, set(names))
            body = self.block(stmt.orelse, body)
            return self.block(stmt.finalbody, body & names)
        if isinstance(stmt, ast.Assign):
            self._sink_assign(stmt, names)
            for target in stmt.targets:
                self.taint.assign(target, stmt.value, names)
            return names
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.taint.assign(stmt.target, stmt.value, names)
            return names
        if isinstance(stmt, ast.AugAssign):
            self._sink_augassign(stmt, names)
            return names
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._sink_call(stmt.value, names)
        return names

    def _outlives(self, container: ast.AST) -> bool:
        text = self.ctx.segment(container, 200)
        root = _root_name(container)
        if root is None:
            return False
        if text in self.assigned_in_loop or root in self.assigned_in_loop:
            return False
        return True

    def _add(self, container: ast.AST, value: ast.AST, how: str, names: set[str]) -> None:
        if not self._outlives(container):
            return
        self.sinks.append(
            {
                "container": self.ctx.segment(container, 200),
                "root": _root_name(container),
                "how": how,
                "value": self.ctx.segment(value, 80),
                "span": self.ctx.span(value),
                "clone": self._clonable(value, names),
            }
        )

    def _clonable(self, value: ast.AST, names: set[str]) -> bool:
        """Where ``.clone()`` is likely a tensor method: an element, a field, a view (not numpy)."""
        if isinstance(value, (ast.Subscript, ast.Attribute)):
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            return value.func.attr != "numpy" and not any(
                isinstance(n, ast.Attribute) and n.attr == "numpy" for n in ast.walk(value.func.value)
            )
        return isinstance(value, ast.Name) and value.id != self.whole

    def _sink_call(self, call: ast.Call, names: set[str]) -> None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return
        frozen = frozenset(names)
        if func.attr == "append" and len(call.args) == 1 and self.taint.tainted(call.args[0], frozen):
            self._add(func.value, call.args[0], "append", names)
        elif func.attr == "insert" and len(call.args) == 2 and self.taint.tainted(call.args[1], frozen):
            self._add(func.value, call.args[1], "insert", names)
        elif func.attr == "setdefault" and len(call.args) == 2 and self.taint.tainted(call.args[1], frozen):
            self._add(func.value, call.args[1], "setdefault", names)

    def _is_mapping(self, node: ast.AST) -> bool:
        """``node`` certainly holds a dict or list (``x[i] = t`` into a tensor or array copies)."""
        values = None
        if isinstance(node, ast.Name):
            binding = self.ctx.lookup(node.id, self.ctx.scope_of(node))
            values = binding.values if binding is not None and binding.kind == "local" else None
        elif isinstance(node, ast.Attribute):
            fn = self.ctx.method_of(node)
            if fn is not None and self.ctx.is_self_attr(node, fn):
                values = fn.cls.self_assigns.get(node.attr)
        if not values:
            return False
        for value in values:
            if isinstance(value, (ast.Dict, ast.List, ast.DictComp, ast.ListComp)):
                continue
            if isinstance(value, ast.Call) and self.ctx.call_name(value) in CONTAINERS:
                continue
            return False
        return True

    def _sink_assign(self, stmt: ast.Assign, names: set[str]) -> None:
        if not self.taint.tainted(stmt.value, frozenset(names)):
            return
        for target in stmt.targets:
            if isinstance(target, ast.Subscript):
                if self._is_mapping(target.value):
                    self._add(target.value, stmt.value, "store", names)
            elif isinstance(target, ast.Attribute) and _root_name(target) == "self":
                self._add(target, stmt.value, "store", names)

    def _sink_augassign(self, stmt: ast.AugAssign, names: set[str]) -> None:
        if isinstance(stmt.op, ast.Add) and isinstance(stmt.value, (ast.List, ast.Tuple)):
            for elt in stmt.value.elts:
                if self.taint.tainted(elt, frozenset(names)):
                    self._add(stmt.target, elt, "+=", names)


def _concatenated_after(ctx, loop: ast.AST, root: str) -> bool:
    """``torch.cat(container)`` / ``np.stack(...)`` after the loop, in the same function or module."""
    fn = ctx.enclosing_function(loop)
    body = ctx.walk_function(fn.node) if fn is not None else ctx.nodes(ast.Call)
    for node in body:
        if (
            isinstance(node, ast.Call)
            and node.lineno > loop.end_lineno
            and node.args
            and ctx.call_name(node) in CONCAT
            and _root_name(node.args[0]) == root
        ):
            return True
    return False


def _param_source(ctx, node: ast.AST):
    """("param", function qualname, name) for a parameter the function never rebinds."""
    if not isinstance(node, ast.Name):
        return None
    scope = ctx.scope_of(node)
    binding = scope.bindings.get(node.id) if scope.kind == "function" else None
    if binding is None or binding.kind != "param" or binding.values:
        return None
    return ("param", scope.qualname, node.id)


def extract_loops(ctx) -> list[dict]:
    out = []
    for node in ctx.nodes(ast.For, ast.AsyncFor):
        source_node, target = unwrap_iter(ctx, node.iter, node.target)
        if target is None:
            continue
        source = loop_source(ctx, source_node) or _param_source(ctx, source_node)
        if source is None:
            continue
        sinks = _LoopScan(ctx, node, target).run()
        sinks = [s for s in sinks if not _concatenated_after(ctx, node, s["root"])]
        if sinks:
            out.append({"source": source, "row": node.lineno, "iter": ctx.segment(source_node, 60), "sinks": sinks})
    return out


class LoaderTensorsRetained(Rule):
    code = "DL305"
    name = "loader-tensors-retained"
    severity = "warning"
    fix = "unsafe"
    triggers = ()
    summary = "Batch tensors from a worker-backed loader kept in a list/dict: one shared-memory fd each -> \"Too many open files\"."
    docs = {
        "What it does": """
            Inside `for batch in loader:` where the loader starts workers (`num_workers` > 0),
            flags batch tensors -- the loop variable, its items and fields, and views of them
            (`.cpu()`, `.detach()`, `.numpy()`, `.view()`, slicing) -- stored into a list or dict
            that outlives the iteration (`outs.append(x)`, `cache[i] = x`, `outs += [x]`,
            `self.buf.append(x)`). The loop may be over a parameter when a caller (in any
            file) passes such a loader; in a script, `num_workers=args.workers` counts with the
            `argparse` default.

            Silent for copies and scalars (`.clone()`, `.item()`, `.tolist()`, `copy.deepcopy`,
            `np.array(x)`, reductions such as `.sum()`, model outputs, any other call), for
            containers created inside the loop, for lists concatenated after the loop
            (`torch.cat(outs)`), for item assignment into a tensor or array (a copy), for
            `list(loader)` and comprehensions (in practice tests and small data), for loaders
            proven to run without workers, and when the loader
            behind the loop cannot be identified (a parameter no caller fills with a known
            loader, workers undecidable).
            """,
        "Why is this bad?": """
            Worker processes send batches through shared memory. Under the default
            `file_descriptor` sharing strategy (Linux) each received storage keeps a file
            descriptor open while the tensor -- or any view of it, including `.cpu()` on a CPU
            tensor and `.numpy()` -- is alive. Keeping one per batch exhausts the descriptor
            limit: `RuntimeError: Too many open files. Communication with the workers is no longer
            possible.` or `received 0 items of ancdata` (pytorch/pytorch#11201, #41465). Switching
            to the `file_system` strategy hides it and leaks /dev/shm instead (DL302).
            """,
        "Example": """
            ```python
            loader = DataLoader(ds, batch_size=64, num_workers=4)
            labels = []
            for x, y in loader:
                labels.append(y)
            ```
            """,
        "Use instead": """
            ```python
            for x, y in loader:
                labels.append(y.clone())      # or y.tolist(), y.item(), y.sum().item()
            ```
            """,
        "Fix safety": """
            Unsafe: appends `.clone()` to the stored expression. The batch element's type is not
            known statically (a list or dict has no `.clone()`), and a clone costs memory and time.
            Offered only for an element, a field or a view of the batch (not for the bare loop
            variable, a tuple or a `.numpy()` array).
            """,
        "References": """
            - https://pytorch.org/docs/stable/multiprocessing.html#file-descriptor-file-descriptor
            - pytorch/pytorch#11201, #41465, #973
            """,
    }

    def extract(self, ctx):
        loops = extract_loops(ctx)
        return {"loops": loops} if loops else None

    def check(self, project):
        model = project.index
        for facts, payload in project.payloads(self.code):
            for loop in payload["loops"]:
                source = tuple(loop["source"])
                if source[0] == "param":
                    found = model.passed_loader(facts, source)
                    if found is None:
                        continue
                    shown = found
                else:
                    loaders = model.loaders_for(facts, source)
                    verdicts = [model.effective_workers(ld) for ld in loaders]
                    if not loaders or any(v != "yes" for v, _ in verdicts):
                        continue
                    shown = verdicts[0][1]
                for sink in loop["sinks"]:
                    fix = None
                    if sink["clone"]:
                        span = sink["span"]
                        end = type(span)(span.end_row, span.end_col, span.end_row, span.end_col)
                        fix = Fix("unsafe", "Store a copy: `.clone()`", (Edit(".clone()", end),))
                    if sink["how"] == "append":
                        stored = f"`{sink['container']}.append({sink['value']})`"
                    else:
                        stored = f"`{sink['value']}` stored in `{sink['container']}`"
                    yield Diagnostic(
                        self.code,
                        f"{stored} keeps batch tensors from `{clip(loop['iter'], 20)}` alive",
                        facts.path,
                        sink["span"],
                        fix=fix,
                        severity=self.severity,
                        details=(
                            ("loader", shown),
                            ("why", "each holds a shared-memory file descriptor -> \"Too many open files\"; "
                             "store `.clone()`, `.item()` or `.tolist()` instead"),
                        ),
                    )
