"""Per-file facts: what one file says, as plain data (no syntax nodes), computed independently of
every other file so it can run in parallel and be cached by content."""

from __future__ import annotations

import ast
import io
import os
import re
import sys
import tokenize
import warnings

from dllint.facts.context import FUNC_TYPES, FileContext, is_main_guard_test
from dllint.facts.keyword_text import keyword_edit_facts
from dllint.facts.flow import FlowBuilder, dataclass_fields, dataclass_init_flow, file_signals, function_flow, is_dataclass, module_flow
from dllint.facts.starts import argparse_worker_options, argparse_workers, cli_option_defaults, extract_starts
from dllint.facts.syspath import sys_path_tails
from dllint.facts.uses import attribute_uses, length_asserts, local_fates, membership_tests
from dllint.model import (
    CallRef,
    ClassFacts,
    FileFacts,
    FunctionFacts,
    LoaderCall,
    ParseError,
    StartMethodCall,
    Value,
)
from dllint.textutil import split_lines
from dllint.names import (
    DATALOADER_CLASSES,
    DATALOADER_POSITIONAL,
    LOADER_ONLY_KEYWORDS,
    SET_START_METHOD,
)

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(
    r"^\s*#\s*dllint\s*:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?\s*$", re.IGNORECASE
)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


def decode_source(data: bytes) -> str:
    """Decode like the interpreter does: a coding cookie or BOM, else UTF-8 (strict). A cookie
    naming a codec Python does not ship (``# -*- coding: future_fstrings -*-``: a package
    registers it at run time to rewrite the source) over bytes that are valid UTF-8: the UTF-8
    text, which is the program those codecs run on a current Python."""
    if b"\0" in data:
        raise ValueError("binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "unknown encoding" in str(exc):
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        raise ValueError(f"cannot decode: not valid UTF-8 and no usable coding declaration ({exc})") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise ValueError(f"cannot decode as {encoding}: {exc}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def noqa_map(text: str) -> tuple[dict[int, frozenset[str] | None], frozenset[str] | None]:
    """Row -> codes a ``# noqa`` comment on that row suppresses (None: every code); file-level codes."""
    rows: dict[int, frozenset[str] | None] = {}
    file_codes: set[str] = set()
    file_all = False
    if "noqa" not in text and "NOQA" not in text:
        return rows, frozenset()
    for i, line in enumerate(split_lines(text), 1):
        if "noqa" not in line.lower():
            continue
        whole = _FILE_NOQA.match(line)
        if whole:
            if whole.group("codes"):
                file_codes.update(c.upper() for c in _CODE.findall(whole.group("codes")))
            else:
                file_all = True
            continue
        m = _NOQA.search(line)
        if m:
            codes = m.group("codes")
            rows[i] = frozenset(c.upper() for c in _CODE.findall(codes)) if codes else None
    return rows, (None if file_all else frozenset(file_codes))


def extract(
    path: str,
    module: str,
    root: str,
    is_package: bool,
    data: bytes,
    rules=(),
    loader_classes: frozenset[str] = frozenset(),
    shadowed: frozenset[str] = frozenset(),
    parsed: tuple[str, ast.Module] | None = None,
    accept=None,
) -> FileFacts | None:
    """The facts of one file; ``parsed``: its text and tree when the caller has parsed it
    already (``parse``). ``accept`` (with ``parsed``): asked of the file's ``FileContext`` once
    built, before any fact; False: no facts, None returned (the engine's scan decides from the
    context's nodes whether a file is analysed at all: ``prefilter.node_words``)."""
    facts = FileFacts(path=path, module=module, root=root, is_package=is_package)
    if parsed is not None:
        text, tree = parsed
        facts.noqa, facts.file_noqa = noqa_map(text)
        return _extract_tree(facts, path, module, root, is_package, text, tree, rules, loader_classes, shadowed, accept)
    try:
        text = decode_source(data)
    except ValueError as exc:
        facts.error = ParseError(f"cannot read file: {exc}", 1, 1)
        return facts
    facts.noqa, facts.file_noqa = noqa_map(text)
    try:
        tree = parse(text, path)
    except SyntaxError as exc:
        row = exc.lineno or 1
        col = exc.offset or 1
        facts.error = ParseError(f"syntax error: {exc.msg}", row, max(col, 1))
        return facts
    except (ValueError, MemoryError, RecursionError) as exc:
        facts.error = ParseError(f"cannot parse file: {type(exc).__name__}: {exc}", 1, 1)
        return facts
    return _extract_tree(facts, path, module, root, is_package, text, tree, rules, loader_classes, shadowed)


def parse(text: str, path: str) -> ast.Module:
    """The syntax tree of a file's decoded text (``SyntaxError``, ``ValueError``, ``MemoryError``,
    ``RecursionError`` when there is none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=path)


def _extract_tree(facts, path, module, root, is_package, text, tree, rules, loader_classes, shadowed, accept=None) -> FileFacts | None:
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 20000))
    try:
        if "from ." in text:
            module, root = namespace_name(path, module, root, is_package, text, tree)
            facts.module, facts.root = module, root
        ctx = FileContext(path, module, text, tree, is_package)
        ctx.shadowed = shadowed
        if accept is not None and not accept(ctx):
            return None
        _core_facts(ctx, facts, loader_classes)
        for rule in rules:
            payload = rule.extract(ctx)
            if payload is not None:
                facts.payloads[rule.code] = payload
    except RecursionError:
        facts.error = ParseError("cannot analyse file: nesting too deep", 1, 1)
    finally:
        sys.setrecursionlimit(old_limit)
    return facts


# ---------------------------------------------------------------------------- module name

_RELATIVE = re.compile(r"^[ \t]*from[ \t]+(\.+)", re.M)


def namespace_name(path: str, module: str, root: str, is_package: bool, text: str, tree) -> tuple[str, str]:
    """(module, root) of a file whose relative imports reach above the packages its path shows:
    ``from ..generic_dataset import Base`` in ``lib/dataset/datasets/coco.py`` where neither
    folder has an ``__init__.py`` runs only as a module of namespace packages, at least
    ``dataset.datasets.coco`` (the importer put ``lib`` on ``sys.path``). The module is named
    with as many folders as its deepest relative import needs; without such imports, or when a
    folder is not a name, the path's answer stands."""
    quick = max((len(m) for m in _RELATIVE.findall(text)), default=0)
    package = module if is_package else module.rpartition(".")[0]
    depth = len(package.split(".")) if package else 0
    if quick <= depth:
        return module, root
    need = max((n.level for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)), default=0)
    if need <= depth:
        return module, root
    parts = module.split(".")
    cur = root
    for _ in range(need - depth):
        parent, name = os.path.split(cur)
        if not name.isidentifier() or parent == cur:
            return module, root
        parts.insert(0, name)
        cur = parent
    return ".".join(parts), cur


# ---------------------------------------------------------------------------- core facts


# per-file signals (plain data) kept when not empty: name -> what computes it from the context
_FILE_SIGNALS = (
    ("argparse_workers", argparse_workers),
    ("cli_options", cli_option_defaults),
    ("argparse_worker_options", argparse_worker_options),
    ("attr_uses", attribute_uses),
    ("member_tests", membership_tests),
    ("length_asserts", length_asserts),
    ("local_fates", local_fates),
    ("sys_path", sys_path_tails),
)


# calls that find a class or module from a name in configuration: the program may build any of
# its classes where its code does not name them (ST-GCN's ``import_class(cfg.feeder)``)
DYNAMIC_IMPORTS = frozenset(
    {
        "builtins.__import__", "importlib.import_module", "importlib.util.spec_from_file_location",
        "pydoc.locate", "hydra.utils.instantiate", "hydra.utils.get_class", "hydra.utils.get_method",
        "hydra.utils.call",
    }
)


def _core_facts(ctx: FileContext, facts: FileFacts, loader_classes: frozenset[str]) -> None:
    facts.imports = {
        name: b.qualname for name, b in ctx.module_scope.bindings.items() if b.kind == "import" and b.qualname
    }
    facts.star_imports = tuple(ctx.star_imports)
    facts.imported_modules = frozenset(ctx.imported_modules)
    for name, binding in ctx.module_scope.bindings.items():
        if binding.kind == "local" and len(binding.values) == 1 and binding.values[0] is not None:
            value = ctx.value(binding.values[0])
            if value.kind in ("const", "ref", "call"):
                facts.constants[name] = value

    for info in ctx.classes:
        node = info.node
        facts.classes[info.qualname] = ClassFacts(
            qualname=info.qualname,
            name=node.name,
            span=ctx.name_span(node),
            bases=tuple(ctx.value(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases),
            methods={name: f"{info.qualname}.{name}" for name in info.methods},
            class_attrs=_class_attrs(ctx, node),
            local=info.local,
            attrs_ir=_class_attrs_ir(ctx, node),
            decorators=tuple(ctx.qualname(d.func if isinstance(d, ast.Call) else d) or "" for d in node.decorator_list),
        )

    for fn in ctx.functions:
        facts.functions[fn.qualname] = _function_facts(ctx, fn)
    for info in ctx.classes:
        _dataclass_init(ctx, info, facts)
    facts.flow = module_flow(ctx)
    facts.signals = file_signals(ctx)
    if not ctx.path.endswith(".ipynb"):
        starts = extract_starts(ctx)
        if starts:
            facts.signals["starts"] = starts
    for name, signal in _FILE_SIGNALS:
        found = signal(ctx)
        if found:
            facts.signals[name] = found
    # module variables assigned in functions that declare them global (``global train_data``):
    # their values come from those functions' assignments too
    writers = {name: sorted(q for q in quals if q in facts.functions) for name, quals in sorted(ctx.global_writers.items())}
    writers = {name: quals for name, quals in writers.items() if quals}
    if writers:
        facts.signals["global_writes"] = writers
    if any(node.level for node in ctx.nodes(ast.ImportFrom)):
        facts.signals["relative_imports"] = True  # a module of a package, whatever its path says
    side_effects = _side_effect_imports(ctx)
    if side_effects:
        facts.signals["side_effect_imports"] = side_effects

    loaders: list[LoaderCall] = []
    start_methods: list[StartMethodCall] = []
    local_classes = {info.qualname for info in ctx.classes}
    for node in ctx.tree.body:
        if isinstance(node, ast.If) and is_main_guard_test(node.test):
            facts.main_guard = facts.main_guard or ctx.span(node)
    for node in ctx.nodes(ast.Call):
        base = _base_init(ctx, node)
        if base is not None:
            # ``super().__init__(dataset, collate_fn=...)`` in a DataLoader subclass: what every
            # instance is built with (the index decides whether the base is a DataLoader)
            loaders.append(_loader_call(ctx, node, base[0], skip=base[1]))
            continue
        callee = ctx.call_name(node)
        if callee is None:
            callee = _class_alias(ctx, node.func)
        if callee is None:
            continue
        if callee in SET_START_METHOD:
            start_methods.append(_start_method(ctx, node))
            continue
        if callee in DYNAMIC_IMPORTS:
            facts.signals["dynamic_imports"] = True  # classes built from names in configuration
        keywords = {kw.arg for kw in node.keywords}
        if (
            callee in DATALOADER_CLASSES
            or callee in loader_classes
            or (keywords & LOADER_ONLY_KEYWORDS and callee.split(".")[0] != "builtins")
            or (callee in local_classes and (node.args or keywords))
            # a project DataLoader subclass from another file called positionally only
            # (num_workers is position 5): recorded, the index decides whether it is a loader
            or (len(node.args) > 5 and not callee.startswith("builtins."))
            # ... or with no worker keyword: a call named as a loader or given a batch size
            # (``EvalDataLoader(ds, batch_size=1)``, ``ProbeLoader(ds)``), whose default of no
            # workers tells that its Datasets run in the main process; the model resolves the callee
            or ((node.args or keywords) and _loader_named(callee, keywords))
        ):
            loaders.append(_loader_call(ctx, node, callee))
    facts.loaders = tuple(loaders)
    facts.start_methods = tuple(start_methods)


def _loader_named(callee: str, keywords: set) -> bool:
    """A call that may build a project DataLoader subclass: its name ends in ``Loader`` or it is
    given ``batch_size`` (a candidate only: ``Loaders.loaders`` keeps the calls of DataLoader classes)."""
    if callee.startswith("builtins."):
        return False
    return "batch_size" in keywords or callee.rsplit(".", 1)[-1].endswith("Loader")


def _side_effect_imports(ctx: FileContext) -> tuple[str, ...]:
    """Modules imported at module level for what importing them does (``import _init_paths``,
    which puts ``lib/`` on ``sys.path``; a module registering classes): ``import x`` whose name
    the file never uses."""
    imported: dict[str, str] = {}
    for node in ctx.tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is None:
                    imported.setdefault(alias.name.split(".")[0], alias.name)
    if not imported:
        return ()
    used = {n.id for n in ctx.nodes(ast.Name)}
    return tuple(sorted(name for top, name in imported.items() if top not in used))


def _base_init(ctx: FileContext, call: ast.Call) -> tuple[str, int] | None:
    """(base class, arguments before the DataLoader's own) for a base class's constructor called
    in a class's ``__init__`` with a DataLoader argument (``collate_fn=``, ``num_workers=``, ...):
    ``super().__init__(...)``, ``super(C, self).__init__(...)`` (the first base that is a known
    DataLoader class, else the first base), ``Base.__init__(self, ...)``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "__init__"):
        return None
    if not ({kw.arg for kw in call.keywords} & LOADER_ONLY_KEYWORDS or len(call.args) > 5):
        return None
    fn = ctx.enclosing_function(call)
    if fn is None or fn.cls is None or fn.node.name != "__init__":
        return None
    recv = func.value
    if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super":
        bases = [ctx.qualname(b) for b in fn.cls.node.bases]
        bases = [b for b in bases if b]
        if not bases:
            return None
        return next((b for b in bases if b in DATALOADER_CLASSES), bases[0]), 0
    if isinstance(recv, (ast.Name, ast.Attribute)):
        qual = ctx.qualname(recv)
        bases = {ctx.qualname(b) for b in fn.cls.node.bases}
        if qual and qual in bases:
            return qual, 1
    return None


def _class_alias(ctx: FileContext, func: ast.AST) -> str | None:
    """``loader = DataLoader if a else InfiniteDataLoader; loader(...)``: a local name whose every
    value is a class reference; the first that is a known DataLoader class, else the first."""
    if not isinstance(func, ast.Name):
        return None
    binding = ctx.lookup(func.id, ctx.scope_of(func))
    if binding is not None and binding.kind == "param" and binding.default is not None:
        # ``def loader(dataset, *args, klass=DataLoader, **kwargs): return klass(dataset, ...)``:
        # the class its default names (callers may pass another: the default is what it builds)
        default = ctx.value(binding.default)
        if default.kind == "ref" and default.ref and default.ref.rsplit(".", 1)[-1][:1].isupper():
            return default.ref
        return None
    if binding is None or binding.kind != "local" or not binding.values:
        return None
    alts = ctx.value(func).alternatives()
    refs = [a.ref for a in alts if a.kind == "ref" and a.ref]
    if not refs or len(refs) != len(alts) or not all(r.rsplit(".", 1)[-1][:1].isupper() for r in refs):
        return None
    return next((r for r in refs if r in DATALOADER_CLASSES), refs[0])


def _class_attrs(ctx: FileContext, node: ast.ClassDef) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            out[stmt.targets[0].id] = ctx.value(stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            out[stmt.target.id] = ctx.value(stmt.value)
    return out


def _class_attrs_ir(ctx: FileContext, node: ast.ClassDef) -> dict:
    builder = FlowBuilder(ctx, None)
    out = {}
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            out[stmt.targets[0].id] = builder.expr(stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            out[stmt.target.id] = builder.expr(stmt.value)
    return out


def _function_facts(ctx: FileContext, fn) -> FunctionFacts:
    node = fn.node
    args = node.args
    params = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
    calls: list[CallRef] = []
    reads: set[str] = set()
    writes: dict[str, list[Value]] = {}
    returns: list[Value] = []
    self_name = fn.self_name
    for sub in ctx.function_nodes(node, ast.Call):
        ref = _call_ref(ctx, fn, sub)
        if ref is not None:
            calls.append(ref)
    if self_name:
        Load, Name = ast.Load, ast.Name
        for sub in ctx.function_nodes(node, ast.Attribute):
            value = sub.value
            if type(value) is Name and value.id == self_name and type(sub.ctx) is Load:
                reads.add(sub.attr)
    for sub in ctx.function_nodes(node, ast.Return):
        if sub.value is not None:
            returns.append(ctx.value(sub.value))
    if self_name:
        for sub in ctx.function_nodes(node, ast.Assign, ast.AnnAssign):
            targets = sub.targets if type(sub) is ast.Assign else [sub.target]
            for target in targets:
                if ctx.is_self_attr(target, fn):
                    writes.setdefault(target.attr, []).append(ctx.value(sub.value))
    return FunctionFacts(
        qualname=fn.qualname,
        name=node.name,
        cls=fn.cls.qualname if fn.cls else None,
        span=ctx.name_span(node),
        params=params,
        kwonly=len(args.kwonlyargs),
        calls=tuple(calls),
        self_reads=frozenset(reads),
        self_writes={k: tuple(v) for k, v in writes.items()},
        returns=tuple(returns),
        decorators=tuple(ctx.qualname(d.func if isinstance(d, ast.Call) else d) or "" for d in node.decorator_list),
        nested=".<locals>." in fn.qualname,
        flow=function_flow(ctx, fn),
    )


def _dataclass_init(ctx: FileContext, info, facts: FileFacts) -> None:
    """The ``__init__`` a dataclass generates, as if written: one parameter per field (the
    bases' first), each stored on ``self`` at the field's line, then ``__post_init__``."""
    if "__init__" in info.methods or not is_dataclass(ctx, info.node):
        return
    fields = dataclass_fields(ctx, info)
    if not fields:
        return
    qualname = f"{info.qualname}.__init__"
    span = ctx.name_span(info.node)
    facts.functions[qualname] = FunctionFacts(
        qualname=qualname,
        name="__init__",
        cls=info.qualname,
        span=span,
        params=("self", *fields),
        calls=(CallRef("self", "__post_init__", span.row),),
        self_writes={name: (Value("param", name, ctx.span(stmt), ref=name),) for name, stmt in fields.items()},
        flow=dataclass_init_flow(ctx, info, fields),
    )
    facts.classes[info.qualname].methods["__init__"] = qualname


def _call_ref(ctx: FileContext, fn, call: ast.Call) -> CallRef | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        if fn.self_name and isinstance(func.value, ast.Name) and func.value.id == fn.self_name:
            return CallRef("self", func.attr, call.lineno)
        if (
            isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "super"
        ):
            return CallRef("super", func.attr, call.lineno)
    qual = ctx.qualname(func)
    if qual is not None and not qual.startswith("builtins."):
        return CallRef("ref", qual, call.lineno)
    return None


def _start_method(ctx: FileContext, call: ast.Call) -> StartMethodCall:
    method_node = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "method"), None)
    method = ctx.const(method_node, None)
    force = ctx.const(next((k.value for k in call.keywords if k.arg == "force"), None), False)
    fn = ctx.enclosing_function(call)
    return StartMethodCall(
        method=method if isinstance(method, str) else None,
        span=ctx.span(call),
        scope=fn.qualname if fn else ctx.module,
        in_main_guard=ctx.in_main_guard(call),
        module_level=fn is None,
        force=bool(force),
        conditional=_conditional(ctx, call),
    )


def _conditional(ctx: FileContext, node: ast.AST) -> bool:
    """``node`` runs only when an ``if`` test holds, in its function (or the module): a test other
    than the main guard or one asking for the start method already set."""
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, (*FUNC_TYPES, ast.ClassDef, ast.Lambda)):
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
            test = parent.test
            asks_method = any(
                isinstance(n, ast.Call) and (ctx.call_name(n) or "").rsplit(".", 1)[-1] == "get_start_method" for n in ast.walk(test)
            )
            if not is_main_guard_test(test) and not asks_method:
                return True
        child, parent = parent, ctx.parent(parent)
    return False


def _argument_ir(ctx: FileContext, builder: FlowBuilder, node: ast.expr):
    """A loader argument's IR. A local name assigned in several places, some of which cannot
    reach the call (an assignment in the other arm of the same ``if`` test as the call:
    ``ctx.reaching_values``), is the union of those that can."""
    ir = builder.expr(node)
    reaching = ctx.reaching_values(node) if isinstance(node, ast.Name) else None
    if reaching is None:
        return ir
    kept = []
    for value in reaching:
        stmt = ctx.parent(value) if value is not None else None
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.value is value):
            return ir  # (an unpacking, a loop target ...: the local's own IR decides)
        kept.append(builder.expr(value))
    if not kept:
        return ir
    return kept[0] if len(kept) == 1 else ("u", tuple(kept))


def _loader_call(ctx: FileContext, call: ast.Call, callee: str, skip: int = 0) -> LoaderCall:
    args: dict[str, Value] = {}
    fn_info = ctx.enclosing_function(call)
    builder = FlowBuilder(ctx, fn_info)
    args_ir: dict = {}
    unresolved = False
    positional = 0
    for i, arg in enumerate(call.args[skip:]):
        if isinstance(arg, ast.Starred):
            unresolved = True
            args_ir["**"] = ("?",)  # positions unknown: nothing is forwarded by name only
            break
        positional += 1
        if i < len(DATALOADER_POSITIONAL):
            args[DATALOADER_POSITIONAL[i]] = ctx.value(arg)
            args_ir[DATALOADER_POSITIONAL[i]] = _argument_ir(ctx, builder, arg)
    for kw in call.keywords:
        if kw.arg is not None:
            args[kw.arg] = ctx.value(kw.value)
            args_ir[kw.arg] = _argument_ir(ctx, builder, kw.value)
            continue
        # what the dict holds under a literal key is among what it may pass:
        # ``kw["worker_init_fn"] = lambda i: ...; DataLoader(**kw)``
        stored: dict = {}
        for key, node in _stored_items(ctx, kw.value):
            stored.setdefault(key, []).append(builder.expr(node))
        for key, irs in stored.items():
            if key not in args_ir:
                args_ir[key] = irs[0] if len(irs) == 1 else ("u", tuple(irs))
        resolved = _resolve_kwargs(ctx, kw.value)
        if resolved is None:
            unresolved = True
            # the mapping the keywords come from (``**kwargs`` of the enclosing function: its
            # callers' keywords; the program model looks there, ``Loaders.workers_of``)
            args_ir["**"] = builder.expr(kw.value) if "**" not in args_ir else ("?",)
        else:
            for key, value in resolved.items():
                args.setdefault(key, value)
    fn = ctx.enclosing_function(call)
    parent = ctx.parent(call)
    target = None
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
        t = parent.targets[0]
        if isinstance(t, ast.Name):
            target = t.id
        elif isinstance(t, ast.Attribute) and ctx.is_self_attr(t):
            target = f"self.{t.attr}"
    if target is not None:
        _assigned_callables(ctx, call, target, fn, builder, args, args_ir)
    return LoaderCall(
        callee=callee,
        span=ctx.span(call),
        func_span=ctx.span(call.func),
        scope=fn.qualname if fn else ctx.module,
        args=args,
        positional=positional,
        unresolved_kwargs=unresolved,
        in_main_guard=ctx.in_main_guard(call),
        module_level=fn is None,
        target=target,
        args_ir=args_ir,
        edit_facts=_edit_facts(ctx, call),
    )


def _edit_facts(ctx: FileContext, call: ast.Call):
    """``keyword_edit_facts``, or None (then a run printing no edits asks libcst, as one building
    them does) when the call's text is read in a way these twins do not foresee (a lone ``\r``
    line end inside the call, say): a file's facts never fail for a fix's mark."""
    try:
        return keyword_edit_facts(ctx, call)
    except Exception:  # (a position or token these twins do not foresee)
        return None


ASSIGNABLE_CALLABLES = ("collate_fn", "worker_init_fn")


def _assigned_callables(ctx: FileContext, call: ast.Call, target: str, fn, builder, args: dict, args_ir: dict) -> None:
    """``loader.collate_fn = collate`` after ``loader = DataLoader(...)`` in the same function:
    the loader's workers run it as if it had been passed (a later assignment replaces the
    argument, as DataLoader's ``__setattr__`` allows for these two)."""
    for node in ctx.nodes(ast.Assign):
        if len(node.targets) != 1 or node.lineno <= call.lineno:
            continue
        t = node.targets[0]
        if not (isinstance(t, ast.Attribute) and t.attr in ASSIGNABLE_CALLABLES):
            continue
        base = t.value
        if isinstance(base, ast.Name):
            name = base.id
        elif isinstance(base, ast.Attribute) and ctx.is_self_attr(base):
            name = f"self.{base.attr}"
        else:
            continue
        if name != target or ctx.enclosing_function(node) is not fn:
            continue
        args[t.attr] = ctx.value(node.value)
        args_ir[t.attr] = builder.expr(node.value)


def _resolve_kwargs(ctx: FileContext, node: ast.AST, depth: int = 0) -> dict[str, Value] | None:
    """``**kw`` where kw is a dict built in the same function: its keys and values, else None."""
    if depth > 4:
        return None
    if isinstance(node, ast.IfExp):
        # {"num_workers": 1} if use_cuda else {}: a key missing on one side may be absent (None)
        body, orelse = _resolve_kwargs(ctx, node.body, depth + 1), _resolve_kwargs(ctx, node.orelse, depth + 1)
        if body is None or orelse is None:
            return None
        absent = Value("const", "", const=None)
        return {
            key: Value("union", "", options=(body.get(key, absent), orelse.get(key, absent)))
            for key in {**body, **orelse}
        }
    if isinstance(node, ast.Dict):
        return _dict_items(ctx, node)
    if isinstance(node, ast.Call) and ctx.call_name(node) == "builtins.dict" and not node.args:
        return {kw.arg: ctx.value(kw.value) for kw in node.keywords if kw.arg} if all(kw.arg for kw in node.keywords) else None
    if not isinstance(node, ast.Name):
        return None
    scope = ctx.scope_of(node)
    binding = ctx.lookup(node.id, scope)
    if binding is None or binding.kind != "local" or len(binding.values) != 1 or binding.values[0] is None:
        return None
    items = _resolve_kwargs(ctx, binding.values[0], depth + 1)
    if items is None:
        return None
    # later mutations in the same scope: kw["k"] = v, kw.update(k=v); anything else is unknown
    fn_node = scope.node
    body = ctx.walk_function(fn_node) if isinstance(fn_node, FUNC_TYPES) else ast.walk(fn_node)
    for sub in body:
        if isinstance(sub, ast.Assign):
            for t in sub.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == node.id:
                    key = ctx.const(t.slice, None)
                    if not isinstance(key, str):
                        return None
                    items[key] = ctx.value(sub.value)
        elif (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and isinstance(sub.func.value, ast.Name)
            and sub.func.value.id == node.id
        ):
            if sub.func.attr == "update" and not sub.args and all(k.arg for k in sub.keywords):
                items.update({k.arg: ctx.value(k.value) for k in sub.keywords})
            elif sub.func.attr == "update" and len(sub.args) == 1 and not sub.keywords:
                # kw.update(other) with other a dict built here (a common idiom)
                other = _resolve_kwargs(ctx, sub.args[0], depth + 1)
                if other is None:
                    return None
                items.update(other)
            elif sub.func.attr in ("pop", "setdefault") and sub.args and isinstance(ctx.const(sub.args[0], None), str):
                key = ctx.const(sub.args[0], None)
                if key in ("num_workers", "multiprocessing_context"):
                    return None  # may drop or add what the rules decide on
                if sub.func.attr == "setdefault" and len(sub.args) > 1:
                    items.setdefault(key, ctx.value(sub.args[1]))
            elif sub.func.attr in ("get", "copy", "items", "keys", "values"):
                continue
            else:
                return None
    return items


def _stored_items(ctx: FileContext, node: ast.AST) -> list:
    """``(key, value node)`` of the ``name["key"] = value`` stores into a dict variable, in its
    scope, for the DataLoader parameters whose values a rule asks about (a callable, the dataset)."""
    if isinstance(node, ast.Dict):
        return [(k.value, v) for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and k.value in STORED_LOADER_ARGS]
    if not isinstance(node, ast.Name):
        return []
    scope = ctx.scope_of(node)
    fn_node = scope.node
    body = ctx.walk_function(fn_node) if isinstance(fn_node, FUNC_TYPES) else ast.walk(fn_node)
    out = []
    binding = ctx.lookup(node.id, scope)
    if binding is not None and binding.kind == "local":
        for value in binding.values:
            if isinstance(value, ast.Dict):
                out.extend(_stored_items(ctx, value))
    for sub in body:
        if isinstance(sub, ast.Assign) and len(sub.targets) == 1:
            t = sub.targets[0]
            if (
                isinstance(t, ast.Subscript)
                and isinstance(t.value, ast.Name)
                and t.value.id == node.id
                and ctx.scope_of(t.value) is scope
                and ctx.const(t.slice, None) in STORED_LOADER_ARGS
            ):
                out.append((ctx.const(t.slice, None), sub.value))
    return out


STORED_LOADER_ARGS = frozenset({"collate_fn", "worker_init_fn", "dataset"})


def _dict_items(ctx: FileContext, node: ast.Dict) -> dict[str, Value] | None:
    out: dict[str, Value] = {}
    for key, value in zip(node.keys, node.values):
        if key is None:  # {**other}
            return None
        k = ctx.const(key, None)
        if not isinstance(k, str):
            return None
        out[k] = ctx.value(value)
    return out
