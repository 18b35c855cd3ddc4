"""Where a script starts DataLoader workers, read off one file: what its module-level code
iterates or calls (outside ``if __name__ == "__main__":``), what each function iterates (its own
loops, its parameters) and which calls pass a variable on; and the argparse defaults a script's
``num_workers=args.x`` reads. The program model joins these with the loaders (dllint/program/starts.py).
"""

from __future__ import annotations

import ast

from dllint.facts.context import FUNC_TYPES, is_main_guard_test
from dllint.facts.loops import loop_source, unwrap_iter
from dllint.names import CLICK_OPTIONS

CONSUMERS = frozenset({"builtins.iter", "builtins.next", "builtins.list", "builtins.tuple", "builtins.enumerate", "builtins.zip", "builtins.sorted"})
CONSUMER_NAMES = frozenset(c.rsplit(".", 1)[1] for c in CONSUMERS)
MAX_CALL_DEPTH = 5
TRAINERS = frozenset({"lightning.Trainer", "lightning.pytorch.Trainer", "pytorch_lightning.Trainer"})
FIT_METHODS = frozenset({"fit", "validate", "test", "predict"})
LIGHTNING_HOOKS = ("train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader")

def _module_statements(tree: ast.Module):
    """(statement, the top-level statement holding it) for the statements that run at import
    time, outside the main guard, defs and classes. The top-level statement is what must move
    under ``if __name__ == "__main__":``."""
    stack = [(s, s) for s in reversed(tree.body)]
    while stack:
        stmt, top = stack.pop()
        if isinstance(stmt, (*FUNC_TYPES, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.If) and is_main_guard_test(stmt.test):
            stack.extend((s, s) for s in reversed(stmt.orelse))
            continue
        yield stmt, top
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                stack.extend((s, top) for s in reversed(block))


def _own_nodes(stmt: ast.AST):
    """The expressions of a statement itself (not of nested statements, defs or lambdas)."""
    stack = []
    for name, value in ast.iter_fields(stmt):
        if name in ("body", "orelse", "finalbody", "handlers"):
            continue
        if isinstance(value, ast.AST):
            stack.append(value)
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, ast.AST))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.Lambda, *FUNC_TYPES, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _iterations(ctx, nodes):
    """(iterated expression, span) for each place in ``nodes`` that iterates something."""
    for node in nodes:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            src, _ = unwrap_iter(ctx, node.iter, node.target)
            yield src, ctx.span(node.iter)
        elif isinstance(node, ast.comprehension):
            src, _ = unwrap_iter(ctx, node.iter, node.target)
            yield src, ctx.span(node.iter)
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.func, ast.Name)
            and node.func.id in CONSUMER_NAMES
            and ctx.call_name(node) in CONSUMERS
        ):
            src, _ = unwrap_iter(ctx, node.args[0], None)
            yield src, ctx.span(node)


def _call_args(ctx, call: ast.Call) -> list:
    """Arguments of a call that name a local or global: (position or keyword, loop source)."""
    out = []
    pairs = [(i, a) for i, a in enumerate(call.args)] + [(k.arg, k.value) for k in call.keywords if k.arg]
    for key, arg in pairs:
        if isinstance(arg, ast.Starred):
            break
        if isinstance(arg, (ast.Name, ast.Attribute)) and _built_by_call(ctx, arg):
            source = loop_source(ctx, arg)
            if source is not None:
                out.append((key, source))
    return out


def _built_by_call(ctx, arg) -> bool:
    """A name assigned from a call (a loader is built by one); ``self.x`` always qualifies."""
    if isinstance(arg, ast.Attribute):
        return isinstance(arg.value, ast.Name)
    binding = ctx.lookup(arg.id, ctx.scope_of(arg))
    return binding is not None and binding.kind == "local" and any(isinstance(v, ast.Call) for v in binding.values)


_NAMED = (ast.Name, ast.Attribute)


def _names_an_argument(call: ast.Call) -> bool:
    """An argument (positional or keyword) that is a name or an attribute."""
    for a in call.args:
        if type(a) in _NAMED:
            return True
    for k in call.keywords:
        if type(k.value) in _NAMED:
            return True
    return False


def _calls_with_args(ctx, nodes) -> list:
    out = []
    for node in nodes:
        if type(node) is ast.Call and _names_an_argument(node):
            args = _call_args(ctx, node)
            if not args:
                continue
            callee = ctx.call_name(node)
            if callee and not callee.startswith("builtins."):
                out.append((callee, args))
    return out


def _trainer_call(ctx, call: ast.Call) -> dict | None:
    """``trainer.fit(model, loader)`` where ``trainer = lightning.Trainer(...)``: what it is given
    (loaders by name, and the classes of objects built at module level, whose *_dataloader()
    methods Lightning calls)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in FIT_METHODS and isinstance(func.value, ast.Name)):
        return None
    binding = ctx.lookup(func.value.id, ctx.scope_of(func.value))
    if binding is None or binding.kind != "local" or len(binding.values) != 1:
        return None
    made = binding.values[0]
    if not (isinstance(made, ast.Call) and ctx.call_name(made) in TRAINERS):
        return None
    sources, classes = [], []
    for arg in (*call.args, *(k.value for k in call.keywords)):
        if isinstance(arg, ast.Name):
            source = loop_source(ctx, arg)
            if source is not None:
                sources.append(source)
            value = ctx.value(arg)
            for alt in value.alternatives():
                if alt.kind == "call" and alt.ref:
                    classes.append(alt.ref)
    return {"kind": "trainer", "sources": sources, "classes": classes, "span": ctx.span(call), "text": ctx.segment(func, 60)}


def extract_starts(ctx) -> dict | None:
    module_sites = []  # what module-level code iterates or calls, in source order
    for stmt, top in _module_statements(ctx.tree):
        first = len(module_sites)
        nodes = [stmt, *_own_nodes(stmt)] if isinstance(stmt, (ast.For, ast.AsyncFor)) else list(_own_nodes(stmt))
        for src, span in _iterations(ctx, nodes):
            if isinstance(src, ast.Call):
                module_sites.append({"kind": "direct", "call": (ctx.span(src).row, ctx.span(src).col), "span": span, "text": ctx.segment(src, 60)})
            else:
                source = loop_source(ctx, src)
                if source is not None:
                    module_sites.append({"kind": "iter", "source": source, "span": span, "text": ctx.segment(src, 60)})
        for node in nodes:
            if isinstance(node, ast.Call):
                trainer = _trainer_call(ctx, node)
                if trainer is not None:
                    module_sites.append(trainer)
                    continue
                callee = ctx.call_name(node)
                if callee and not callee.startswith("builtins."):
                    site = {"kind": "call", "callee": callee, "span": ctx.span(node), "text": ctx.segment(node.func, 60), "args": _call_args(ctx, node)}
                    parent = ctx.parent(node)
                    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
                        site["target"] = parent.targets[0].id  # ``trainer = Trainer(model, loader)``
                    func = node.func
                    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                        # ``trainer.fit(...)``: a method of an object a module-level name holds
                        receiver = loop_source(ctx, func.value)
                        if receiver is not None:
                            site["receiver"], site["method"] = receiver, func.attr
                    module_sites.append(site)
        top_span = ctx.span(top)
        line = ctx.lines[top_span.row - 1] if top_span.row <= len(ctx.lines) else ""
        for site in module_sites[first:]:
            site["top"] = (top_span.row, top_span.col, top_span.row, len(line.rstrip()) + 1)
    functions: dict[str, dict] = {}
    for fn in ctx.functions:
        iters, params = [], []
        param_names = [a.arg for a in (*fn.node.args.posonlyargs, *fn.node.args.args, *fn.node.args.kwonlyargs)]
        for node in ctx.function_nodes(fn.node, ast.For, ast.AsyncFor, ast.comprehension, ast.Call):
            if type(node) is ast.Call and not (node.args and type(node.func) is ast.Name and node.func.id in CONSUMER_NAMES):
                continue  # not an iteration (_iterations)
            for src, _ in _iterations(ctx, (node,)):
                if isinstance(src, ast.Call):
                    iters.append(("direct", (ctx.span(src).row, ctx.span(src).col)))
                elif isinstance(src, ast.Name) and src.id in param_names:
                    binding = ctx.lookup(src.id, ctx.scope_of(src))
                    if binding is not None and binding.kind == "param":
                        params.append(src.id)
                        continue
                source = loop_source(ctx, src) if not isinstance(src, ast.Call) else None
                if source is not None:
                    iters.append(("source", source))
        passes = _calls_with_args(ctx, ctx.function_nodes(fn.node, ast.Call))
        if iters or params or passes:
            functions[fn.qualname] = {"iters": iters, "params": params, "param_names": param_names, "passes": passes}
    if not module_sites and not functions:
        return None
    return {"module": module_sites, "functions": functions}


PARSERS = frozenset({"argparse.ArgumentParser"})
GROUP_METHODS = frozenset({"add_argument_group", "add_mutually_exclusive_group"})


def _is_parser(ctx, node, depth: int = 0) -> bool:
    """``node`` is an ``argparse.ArgumentParser(...)`` (or one of its argument groups)."""
    if depth > 3:
        return False
    if isinstance(node, ast.Call):
        if ctx.call_name(node) in PARSERS:
            return True
        func = node.func
        return isinstance(func, ast.Attribute) and func.attr in GROUP_METHODS and _is_parser(ctx, func.value, depth + 1)
    if isinstance(node, ast.Name):
        binding = ctx.lookup(node.id, ctx.scope_of(node))
        if binding is not None and binding.kind == "local" and len(binding.values) == 1 and binding.values[0] is not None:
            return _is_parser(ctx, binding.values[0], depth + 1)
    return False


def _option_dest(call: ast.Call) -> str | None:
    dest = next((k.value for k in call.keywords if k.arg == "dest"), None)
    if dest is not None:
        return dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    longs = [n for n in names if n.startswith("--")]
    if longs:
        return longs[0][2:].replace("-", "_")
    if names and not names[0].startswith("-"):
        return names[0]
    return None


def _is_worker_option(dest: str) -> bool:
    """An option that sets a DataLoader's worker count (``--num_workers``, ``--workers``, ``-j``
    spelled ``--data-workers``)."""
    return dest.endswith(("workers", "num_worker"))


def argparse_worker_options(ctx) -> dict:
    """Module-level argparse namespaces with a worker-count option whose default is an int > 0:
    name -> (option, default). A script that declares one and hands the namespace to code that
    trains starts that many workers by default."""
    namespaces, defaults = _argparse(ctx)
    found = {k: v for k, v in defaults.items() if _is_worker_option(k) and isinstance(v, int) and not isinstance(v, bool) and v > 0}
    if not found:
        return {}
    parsers: dict[int, tuple[str, int]] = {}  # id of the ArgumentParser(...) call -> its worker option
    for node in ctx.nodes(ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            dest = _option_dest(node)
            root = _parser_root(ctx, node.func.value)
            if dest in found and root is not None:
                parsers.setdefault(id(root), (dest, found[dest]))
    out = {}
    for name, parsed in namespaces.items():
        root = _parser_root(ctx, parsed.func.value)
        if root is not None and id(root) in parsers:
            out[name] = parsers[id(root)]
    return out


def _parser_root(ctx, node, depth: int = 0):
    """The ``argparse.ArgumentParser(...)`` call a parser (or one of its groups) comes from."""
    if depth > 3:
        return None
    if isinstance(node, ast.Call):
        if ctx.call_name(node) in PARSERS:
            return node
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in GROUP_METHODS:
            return _parser_root(ctx, func.value, depth + 1)
        return None
    if isinstance(node, ast.Name):
        binding = ctx.lookup(node.id, ctx.scope_of(node))
        if binding is not None and binding.kind == "local" and len(binding.values) == 1 and binding.values[0] is not None:
            return _parser_root(ctx, binding.values[0], depth + 1)
    return None


def _argparse(ctx):
    """(module-level namespace names -> their ``parse_args()`` call, option -> int default)."""
    namespaces: dict[str, ast.AST] = {}  # module-level name -> the parser it was parsed from
    for name, binding in ctx.module_scope.bindings.items():
        if binding.kind != "local" or len(binding.values) != 1:
            continue
        value = binding.values[0]
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr in ("parse_args", "parse_known_args")
            and _is_parser(ctx, value.func.value)
        ):
            namespaces[name] = value
    if not namespaces:
        return {}, {}
    defaults: dict[str, object] = {}
    for node in ctx.nodes(ast.Call):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
            and _is_parser(ctx, node.func.value)
        ):
            dest = _option_dest(node)
            if dest is None:
                continue
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            value = default.value if isinstance(default, ast.Constant) else None
            defaults[dest] = value if dest not in defaults else None  # declared twice: unknown
    return namespaces, defaults


def argparse_workers(ctx) -> dict:
    """Loader calls whose num_workers is a module-level ``args.x`` (or ``int(args.x)``) where
    ``args = parser.parse_args()`` and the option's default is an int: call position -> (default, text).
    """
    namespaces, defaults = _argparse(ctx)
    if not namespaces:
        return {}
    out = {}
    for node in ctx.nodes(ast.Call):
        nw = next((k.value for k in node.keywords if k.arg == "num_workers"), None)
        if nw is None and len(node.args) > 5:
            nw = node.args[5]
        inner = nw
        if isinstance(inner, ast.Call) and ctx.call_name(inner) == "builtins.int" and len(inner.args) == 1:
            inner = inner.args[0]
        if not (isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name)):
            continue
        if inner.value.id not in namespaces:
            continue
        binding = ctx.lookup(inner.value.id, ctx.scope_of(inner.value))
        if binding is not ctx.module_scope.bindings.get(inner.value.id):
            continue
        default = defaults.get(inner.attr)
        if isinstance(default, int) and not isinstance(default, bool):
            span = ctx.span(node)
            out[(span.row, span.col)] = (default, ctx.segment(nw, 60))
    return out


# ----------------------------------------------------------------------------- command-line defaults

OPTION_METHODS = frozenset({"add_argument", "add_option"})  # argparse, optparse (any parser object)
ABSL_INTEGERS = frozenset({"absl.flags.DEFINE_integer", "gflags.DEFINE_integer", "tensorflow.compat.v1.flags.DEFINE_integer"})


def _int_default(node) -> int | None:
    """A non-negative int literal (``0``, ``4``); None for anything else (no default is None)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value if node.value >= 0 else None
    return None


def _click_dest(call: ast.Call) -> str | None:
    """The parameter a ``click.option`` fills: an explicit name, else the first long flag."""
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    plain = [n for n in names if not n.startswith("-")]
    if plain:
        return plain[0]
    longs = [n for n in names if n.startswith("--")]
    return longs[0][2:].replace("-", "_") if longs else None


def cli_option_defaults(ctx) -> dict | None:
    """The command-line options a file declares, wherever its parser lives (a module-level
    parser, one built in ``parse_args()``, a group, a parser handed in as a parameter): option
    name (argparse's ``dest``) -> its default when that is a non-negative int literal, else None
    (no default, a computed one, declared twice differently, ``set_defaults(**config)``). And the
    attribute names the file assigns on a name other than ``self`` (``args.workers = 8``), which
    override a default. The program model joins these over the project (``cli_default``)."""
    options: dict[str, int | None] = {}
    overridden = False

    def declare(dest: str | None, default) -> None:
        if not dest or not dest.isidentifier():
            return
        if dest in options and options[dest] != default:
            default = None
        options[dest] = default

    stores: set[str] = set()
    for node in ctx.nodes(ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in OPTION_METHODS:
            if not any(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args[:1]):
                continue
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            declare(_option_dest(node), _int_default(default))
        elif isinstance(func, ast.Attribute) and func.attr == "update" and _namespace_dict(func.value):
            overridden = True  # vars(args).update(config), args.__dict__.update(...): any option may change
        elif isinstance(func, ast.Attribute) and func.attr == "set_defaults":
            for k in node.keywords:
                if k.arg is None:
                    overridden = True
                else:
                    declare(k.arg, _int_default(k.value))
        else:
            name = ctx.call_name(node)
            if name in CLICK_OPTIONS:
                default = next((k.value for k in node.keywords if k.arg == "default"), None)
                declare(_click_dest(node), _int_default(default))
            elif name in ABSL_INTEGERS and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant):
                declare(node.args[0].value if isinstance(node.args[0].value, str) else None, _int_default(node.args[1]))
    for t in ctx.nodes(ast.Attribute):
        # an attribute stored by an assignment (anywhere in one of its targets), not on ``self``
        if type(t.ctx) is ast.Store and not (isinstance(t.value, ast.Name) and t.value.id == "self") and _in_assign_target(ctx, t):
            stores.add(t.attr)
    if not options and not stores and not overridden:
        return None
    return {"options": options, "stores": sorted(stores), "bulk": overridden}


def _in_assign_target(ctx, node) -> bool:
    """Whether ``node`` lies in a target of an assignment (``=``, ``+=``, an annotated one), not
    in its value or in another statement (a ``for`` target)."""
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        child, parent = parent, ctx.parent(parent)
    if isinstance(parent, ast.Assign):
        return any(child is t for t in parent.targets)
    if isinstance(parent, (ast.AugAssign, ast.AnnAssign)):
        return child is parent.target
    return False


def _namespace_dict(node) -> bool:
    """``vars(x)`` or ``x.__dict__``: a namespace's options as a dict."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars":
        return True
    return isinstance(node, ast.Attribute) and node.attr == "__dict__"
