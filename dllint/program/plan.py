"""Which files to parse: planned before the final model is built, from the structure of the
program (imports and the class hierarchy), never by a rule and never by a query of the final model.

The engine parses the files with data-loading words in their code, then asks ``demands`` on a model
of what is parsed so far; it answers:

1. **Files a structural question reached** (``model.misses``): the bases of a Dataset and what its
   worker code, its constructor and the helpers they call run (another file's function, a mixin, a
   base class in a file without trigger words); what a loader is given (a Dataset class, a collate
   function); the functions a loader is passed to (their loops may keep its batches).
2. **Files that may use a project class or function by name**: subclasses and constructions of the
   project's Dataset and DataLoader classes (their call sites bind the constructor's parameters),
   and callers of the functions that start workers (the entry scripts that reach them). A file is
   taken only if it names the class or function as a whole word *and* names its module (a
   component of its dotted name), so a Dataset called ``D`` in ``solo.py`` does not pull in every
   file that says ``D``; and only if its imports can reach the file defining it, resolved as
   Python would from the file's own roots (``Lookups.homes``: a launcher's ``from main import
   main`` in another folder means that folder's ``main.py``).

Rounds repeat until nothing new is needed; the final model is then built once.
"""

from __future__ import annotations

from dllint.names import canonical
from dllint.program.loaders import option_read
from dllint.program.refs import ClassRef, FuncRef
from dllint.program.values import Env, called_names


def demands(model, focus: frozenset[str] | None = None) -> tuple[set[str], dict[str, frozenset[str]], dict[str, frozenset[str]], "Lookups"]:
    """(paths the structural questions reached, {name: module words} to look for in files, the
    same for names looked for only in files with trigger words, what the engine needs to look
    them up: ``Lookups``).

    ``focus``: the files named on the command line, when the analysis starts from them (a
    pre-commit hook's staged files, the editor's document). Then only what is connected to them is
    followed (``_connected``), never every Dataset of every file parsed on the way: what their code
    reaches, the files that use their classes and functions by name, and, one step further, the
    loaders and entry scripts of the Datasets that use them."""
    keep = None
    if focus is not None:
        keep = _connected(model, focus)
        _reached_from(model, focus, keep)
    classes, functions, callers, loaders = keep if keep is not None else (None, None, None, None)
    for loader in model.loaders:
        if loaders is not None and id(loader) not in loaders:
            continue
        for targets in model.loader_callables(loader).values():
            for fn, _ in _reach(model, targets, None, focus).values():
                _device_modules(model, fn, None)
    names: dict[str, set[str]] = {}
    homes: dict[str, set] = {}  # name -> the files defining it (None: a name of no definition)
    lookups = Lookups(homes)
    _option_files(model, loaders, names, homes)
    # a loader helper whose worker count is its parameter (``get_loader(root, num_workers=0)``):
    # the files calling it bind the count
    for loader in model.loaders:
        if loaders is not None and id(loader) not in loaders:
            continue
        helper = model.workers_parameter(loader)
        if helper is not None and not helper.fn.nested and helper.fn.cls is None:
            _want(names, homes, helper.fn.name, module_words(helper.file.module), helper.file.path)
    for cls in model.dataset_classes():
        if classes is not None and cls.key not in classes:
            continue
        for fn, _ in model.worker_functions(cls).values():
            _device_modules(model, fn, cls)
        init = model.find_method(cls, "__init__")
        if init is not None:
            # a Dataset of a named file, or deriving from a class of one: what its constructor
            # reaches, as a whole run follows it (what it stores is reported in the named file);
            # another connected one: a few calls deep
            _reach(model, [init], cls, None if _derives_from_focus(model, cls, focus) else focus)
        _want(names, homes, cls.cls.name, module_words(cls.file.module), cls.file.path)
    _argument_modules(model, classes)
    _class_receivers(model, classes)
    for cls in model.classes():
        if classes is not None and cls.key not in classes:
            continue
        if model.is_loader_class(cls.cls.qualname, cls.file.root):
            _want(names, homes, cls.cls.name, module_words(cls.file.module), cls.file.path)
    used: dict[str, set[str]] = {}
    if focus is not None:
        # the files using what the named files define (a Dataset, a builder, a collate function,
        # a helper its worker code calls), among those a whole run selects by their trigger
        # words: a file without any is parsed by a whole run only for the names above (Datasets,
        # DataLoader classes) or a structural question, which this run asks as well
        for path in focus:
            facts = model.files.get(path)
            if facts is None:
                continue
            words = _import_words(facts.module, own=True)
            for cls in facts.classes.values():
                if not cls.local:
                    _want(used, homes, cls.name, words, path)
            for fn in facts.functions.values():
                if fn.cls is None and not fn.nested:
                    _want(used, homes, fn.name, words, path)
        # and by the names the parsed modules re-export them under (``from .coco import build``
        # in a package's ``__init__``: its users write ``from pkg import build``)
        for name, words, home in _reexports(model, focus):
            _want(used, homes, name, words, home)
        _serving_siblings(model, focus, used, lookups)
        # the callers of the functions connected to them (an entry script setting the start
        # method), among the files with trigger words as well: a whole run parses a file without
        # any for such a call only when the function starts workers (below)
        for path, qualname in functions:
            fn = model.files[path].functions.get(qualname) if path not in focus else None
            if fn is not None and fn.cls is None:
                _want(used, homes, fn.name, _import_words(model.files[path].module), path)
    # functions a loader with workers is passed to; functions that start workers, and their callers
    with model.quietly(False):
        model.caller_map()
    for facts in list(model.files.values()):
        starts = facts.signals.get("starts")
        if not starts:
            continue
        for qualname in starts["functions"]:
            fn = facts.functions.get(qualname)
            if fn is None or fn.nested or (callers is not None and (facts.path, qualname) not in callers):
                continue
            with model.quietly():  # which of the parsed functions start workers: no new files
                starts_workers = model.function_loaders(FuncRef(facts, fn), 0, frozenset())
            if starts_workers:
                _want(names, homes, fn.name, module_words(facts.module), facts.path)
    if focus is None:
        # a method called at module level, where it may start workers, on an instance of a project
        # class (``trainer.start()``: DL303 asks which loaders it runs): its class's bases, which a
        # package ``__init__`` without trigger words may re-export (pixel-nerf's ``trainlib.Trainer``),
        # as a named file's run asks its classes' (``_reached_from``)
        with model.quietly(False):
            for facts in list(model.files.values()):
                for site in (facts.signals.get("starts") or {}).get("module", ()):
                    if site.get("receiver") and site.get("method"):
                        model.receiver_method(facts, tuple(site["receiver"]), site["method"])
    # a project module an analysed file imports only for what importing it does: it may put a
    # folder on sys.path (``import _init_paths``) that the file's other imports resolve through
    for facts in list(model.files.values()):
        for name in facts.signals.get("side_effect_imports", ()):
            with model.quietly(False):
                model.module(name, facts.root)
    used = {k: v for k, v in used.items() if k not in names}
    if lookups.bases:
        lookups.loader_classes = frozenset(
            c.cls.name for c in model.classes() if not c.cls.local and model.is_loader_class(c.cls.qualname, c.file.root)
        )
    return set(model.misses), {k: frozenset(v) for k, v in names.items()}, {k: frozenset(v) for k, v in used.items()}, lookups


def stored_values(model, focus: frozenset[str]) -> set[str]:
    """The unparsed files met by the values the Datasets of the named files, and those deriving
    from their classes, store on ``self`` (what the rules judge them by: a list of paths, a
    handle, a generator), asked loudly."""
    model.misses.clear()
    with model.quietly():
        datasets = [ref for ref in model.dataset_classes() if _derives_from_focus(model, ref, focus)]
    with model.quietly(False):
        for ref in datasets:
            attrs = set()
            for fn in model.hierarchy_methods(ref):
                attrs.update(fn.fn.flow.writes)
            for attr in sorted(attrs):
                model.attr_value(ref, attr)
    return set(model.misses)


OPTION_WORDS = frozenset({"add_argument", "add_option", "set_defaults", "click", "DEFINE_integer"})


def _option_files(model, loaders, names: dict, homes: dict) -> None:
    """The files that may declare the command-line option a loader's worker count reads
    (``num_workers=args.workers``) when the loader's own file does not: those naming the option
    and a parser's word (the program model takes the option's default,
    ``Loaders.default_workers``)."""
    for loader in model.loaders:
        if loader.workers != "maybe" or (loaders is not None and id(loader) not in loaders):
            continue
        value = loader.call.args.get("num_workers")
        own = loader.file.signals.get("cli_options") or {"options": {}}
        for alt in value.alternatives() if value is not None else ():
            option = option_read(loader, alt)
            if option and option not in own["options"]:  # (its own file's parser decides)
                _want(names, homes, option, OPTION_WORDS, None)


class Lookups:
    """What the engine needs to look up ``names`` and ``used`` in the files, and what a named
    file's analysis asks beyond them:

    - ``bases``: the serving bases of the named files' classes (``_serving_siblings``), {class
      name: module words}, looked for in the unparsed files as ``names`` are; ``subclasses`` the
      names of the parsed classes deriving from one; ``loader_classes`` the names of the
      project's DataLoader classes parsed so far. The engine parses only the files naming a base
      that matter (``Engine._sibling_files``).
    - ``homes``: for each name of ``names`` and ``used``, the files defining what it is looked
      for (None among them: a name of no definition, an option's): a file naming it is taken
      only if it can import one of them (``Engine._may_import``: a script's ``main`` is another
      folder's ``main`` there)."""

    def __init__(self, homes: dict[str, set]):
        self.homes = homes
        self.bases: dict[str, frozenset[str]] = {}
        self.subclasses: frozenset[str] = frozenset()
        self.loader_classes: frozenset[str] = frozenset()


def _want(found: dict, homes: dict, name: str, words, home: str | None) -> None:
    """Look for ``name`` with one of ``words`` in the files (``names`` or ``used``), where it
    means what ``home`` defines (None: not a definition, an option's name)."""
    found.setdefault(name, set()).update(words)
    homes.setdefault(name, set()).add(home)


def _serving_siblings(model, focus: frozenset[str], used: dict, lookups: "Lookups") -> None:
    """A named file's class that is not a Dataset by its own bases but derives from a project
    class serving samples (``__getitem__`` / ``__iter__``, duck-typed): it is a Dataset when a
    loader is given a sibling deriving from that base (dllint/program/loaders.py). So the files
    defining a sibling are wanted where a loader may be given one: the files naming the base
    (``Lookups.bases``, which the engine narrows; ``Lookups.subclasses``: the names of the parsed
    classes deriving from one, which another file's class statement may name), then the files
    naming a sibling among the files with trigger words (``used``): a loader is in one, where a
    whole run meets the sibling too. The files naming the base are looked for everywhere: a sibling's file may have
    no trigger word, and the whole run parses it when its loader does. (ParlAI's
    ``parlai/core/teachers.py`` alone: 242 files parsed when every sibling was looked for
    everywhere, 80 now; the whole run parses 64.)"""
    named: dict[str, set[str]] = {}
    with model.quietly():
        bases = set()
        for path in focus:
            facts = model.files.get(path)
            if facts is None:
                continue
            for cls in facts.classes.values():
                ref = ClassRef(facts, cls)
                if cls.local or model.is_dataset(ref):
                    continue
                for base in model.mro(ref)[1:]:
                    if _serves_samples(base):
                        bases.add(base.key)
                        named.setdefault(base.cls.name, set()).update(module_words(base.file.module))
        if not bases:
            return
        subclasses = set()
        for ref in model.classes():
            if ref.key not in bases and not ref.cls.local and any(b.key in bases for b in model.mro(ref)[1:]):
                _want(used, lookups.homes, ref.cls.name, module_words(ref.file.module), ref.file.path)
                subclasses.add(ref.cls.name)
    lookups.bases = {k: frozenset(v) for k, v in named.items()}
    lookups.subclasses = frozenset(subclasses)


FOCUS_CALL_DEPTH = 2


def _derives_from_focus(model, cls, focus) -> bool:
    """Whether ``cls`` or one of its bases is defined in a named file (False in a whole run)."""
    if focus is None:
        return False
    with model.quietly():
        return any(c.file.path in focus for c in model.mro(cls))


def _reach(model, roots: list, bound, focus) -> dict:
    """What ``roots`` run. In a named file's analysis, only the files of the functions the roots
    call, and of the functions those call, are wanted (``FOCUS_CALL_DEPTH`` calls away: a helper
    reading a manifest through another helper; not the call graph through a library's helpers and
    the values it stores)."""
    if focus is None:
        return model.reachable(roots, bound)
    with model.quietly():
        found = model.reachable(roots, bound)
        # a root's own helper methods (``self._load_manifest()`` in ``__init__``) are the root's
        # code: their calls count from there
        owners = [c for c in (bound, *(model.class_of(r) for r in roots)) if c is not None]
        classes = {c.key for owner in owners for c in model.mro(owner)}
        helpers = [fn for fn, _ in found.values() if fn.fn.cls is not None and getattr(model.class_of(fn), "key", None) in classes]
    frontier = list(roots) + helpers
    for _ in range(FOCUS_CALL_DEPTH):
        callees = []
        for fn in frontier:
            for call in fn.fn.calls:
                if call.kind == "ref":
                    target = model.resolve(call.target, fn.file.root)
                    if isinstance(target, FuncRef):
                        callees.append(target)
        frontier = callees
    return found


def _reached_from(model, focus: frozenset[str], keep) -> None:
    """Ask loudly what the named files reach: their classes' bases (which are Datasets), and the
    functions their module-level code calls (one may start workers at import time). The modules
    they import that may set the start method are the engine's to find (by their trigger words)."""
    classes, _, callers, _ = keep
    with model.quietly(False):
        for cls in model.classes():
            if cls.key in classes:
                model.mro(cls)
        for path in sorted({key[0] for key in (*classes, *callers)}):  # a project DataLoader subclass
            facts = model.files[path]
            for call in facts.loaders:
                model.is_loader_class(call.callee, facts.root, ask=True)
        for path in focus:
            facts = model.files.get(path)
            if facts is None:
                continue
            for site in (facts.signals.get("starts") or {}).get("module", ()):
                if site.get("callee"):
                    model.resolve(site["callee"], facts.root)


def _connected(model, focus: frozenset[str]) -> tuple[set, set, set, set]:
    """What is connected to the files of ``focus``: (class keys, function keys, caller keys, ids of
    loaders).

    - classes: theirs, the classes deriving from them, the classes with a method that calls one of
      their functions or classes (a Dataset whose ``__getitem__`` calls their helper);
    - functions: theirs, and the functions elsewhere that return what they build from one of
      those Dataset classes or such a function, without making a loader themselves (builders:
      ``get_dataset(cfg)`` returning ``CocoDataset(...)``);
    - callers: those functions and the functions that call one of them or hold a connected loader
      (an entry script that reaches a loader may set its start method; callers further away are
      not followed: the analysis of one file stays small);
    - loaders: in the named files, in a caller, or given one of the connected Dataset classes."""
    classes: set = set()
    functions: set = set()
    mine_refs: list[ClassRef] = []  # the named files' classes
    others: list[ClassRef] = []
    calls: list[tuple[tuple, bool, list, str | None]] = []
    with model.quietly():
        for facts in list(model.files.values()):
            mine = facts.path in focus
            for cls in facts.classes.values():
                ref = ClassRef(facts, cls)
                if mine:
                    classes.add(ref.key)
                    mine_refs.append(ref)
                else:
                    others.append(ref)
            # (a loader call's record is any call that may build one: the model decides which do)
            scopes = {call.scope for call in facts.loaders if model.is_loader_class(call.callee, facts.root)}
            for fn in facts.functions.values():
                if mine:
                    functions.add((facts.path, fn.qualname))
                elif fn.calls or fn.returns:
                    targets = [model.resolve(c.target, facts.root) for c in fn.calls if c.kind == "ref"]
                    builder = bool(fn.returns) and not fn.nested and fn.qualname not in scopes
                    keys = [t.key for t in targets if isinstance(t, (ClassRef, FuncRef))]
                    if builder:
                        keys += _registry_classes(model, facts, fn)
                    calls.append(((facts.path, fn.qualname), builder, keys, fn.cls))
        changed = True
        while changed:
            changed = False
            for ref in others:
                if ref.key not in classes and any(base.key in classes for base in model.mro(ref)[1:]):
                    classes.add(ref.key)
                    changed = True
        datasets = {c.key for c in model.dataset_classes() if c.key in classes}
        # (a class serving samples by duck typing is a Dataset once a loader is given it: one
        # built through a builder the named file's analysis must find)
        datasets |= {ref.key for ref in (*others, *mine_refs) if ref.key in classes and _serves(model, ref)}
        changed = True
        while changed:
            changed = False
            for key, builder, targets, _ in calls:
                if builder and key not in functions and any(t in datasets or t in functions for t in targets):
                    functions.add(key)
                    changed = True
        callers = set(functions)
        for key, _, targets, cls in calls:  # one call away
            if any(t in functions or t in classes for t in targets):
                callers.add(key)
                if cls is not None:
                    classes.add((key[0], cls))
        loaders = set()
        for loader in model.loaders:
            if loader.file.path in focus or (loader.file.path, loader.call.scope) in callers:
                loaders.add(id(loader))
            elif any(fn.key in functions for targets in model.loader_callables(loader).values() for fn in targets):
                loaders.add(id(loader))  # it runs one of their functions (collate_fn, worker_init_fn)
                callers.add((loader.file.path, loader.call.scope))
        for loader in model.loaders:  # what a connected loader is given is connected
            if id(loader) in loaders:
                classes.update(d.key for d in loader.datasets)
        for cls in model.dataset_classes():
            if cls.key in classes:
                for loader in model.loaders_using(cls):
                    loaders.add(id(loader))
                    callers.add((loader.file.path, loader.call.scope))
    return classes, functions, callers, loaders


def _reexports(model, focus) -> list[tuple[str, set[str], str]]:
    """(name, words of the package, path of its ``__init__``) for each parsed package binding by
    import a class or function of a named file, or a name another such package binds (a chain of
    packages), under that name: what its users import from it."""
    defined = {}
    for path in focus:
        facts = model.files.get(path)
        if facts is None:
            continue
        for cls in facts.classes.values():
            if not cls.local:
                defined[cls.qualname] = path
        for fn in facts.functions.values():
            if fn.cls is None and not fn.nested:
                defined[fn.qualname] = path
    out = []
    changed = True
    while changed:
        changed = False
        for facts in model.files.values():
            if not facts.is_package:
                continue
            bound = [(name, canonical(target)) for name, target in facts.imports.items()]
            for star in facts.star_imports:  # ``from .coco import *``: its public names
                prefix = canonical(star) + "."
                bound.extend(
                    (q[len(prefix):], q) for q in list(defined)
                    if q.startswith(prefix) and "." not in q[len(prefix):] and not q[len(prefix):].startswith("_")
                )
            for name, target in bound:
                full = f"{facts.module}.{name}"
                if full not in defined and target in defined:
                    defined[full] = facts.path
                    out.append((name, _import_words(facts.module, own=True), facts.path))
                    changed = True
    return out


def _serves_samples(ref) -> bool:
    """Whether a class defines ``__getitem__`` or ``__iter__`` itself."""
    return "__getitem__" in ref.cls.methods or "__iter__" in ref.cls.methods


def _serves(model, ref) -> bool:
    """Whether a class or one of its bases serves samples (``_serves_samples``)."""
    return any(_serves_samples(c) for c in model.mro(ref))


def _registry_classes(model, facts, fn) -> list:
    """The keys of the classes a function returns an instance of through a registry or a table
    (``return DATASETS[name](**kwargs)``, ``{"ade": ADE20K, ...}[name](...)``): a builder of each,
    though its calls name none of them."""
    flow = fn.flow
    if flow is None:
        return []
    keys = []
    env = None
    for ret in flow.returns:
        if isinstance(ret, tuple) and ret[:1] == ("c",) and isinstance(ret[1], tuple) and ret[1][:1] == ("i",):
            if env is None:
                ref = FuncRef(facts, fn)
                env = Env(facts, ref, model.class_of(ref))
            keys.extend(c.key for c in model.instance_classes(ret, env))
    return keys


def _device_modules(model, fn: FuncRef, cls) -> None:
    """The project modules holding the device that worker code moves data to: a module-level
    ``DEVICE`` in a config module (read directly, or through a ``self`` attribute the class
    hierarchy assigns from it) is parsed so its value is known."""
    flow = fn.fn.flow
    if flow is None:
        return
    for tag, _span, _text, ir, _lam in flow.sites:
        if tag != "to" or ir is None:
            continue
        attrs: set[str] = set()
        _module_names(model, ir, fn.file.root, attrs)
        if cls is not None:
            for attr in sorted(attrs):
                for wfn, write in model.attr_writes(cls, attr, include_workers=True):
                    _module_names(model, write[1], wfn.file.root, set())


def _dataset_words(model, keep) -> tuple[set, set]:
    """(keys of the project's Dataset classes, of the connected ones when ``keep`` is given; their
    class names): what the planner looks for in calls."""
    datasets = {c.key for c in model.dataset_classes() if keep is None or c.key in keep}
    return datasets, {key[1].rpartition(".")[2] for key in datasets}


def _planned_calls(model, facts) -> tuple[list, list]:
    """What the planner's scans of a file's calls look at, computed from its facts alone and
    carried through the run's planning models while its facts are the same object (each round
    scanned every call of every file again: NeMo's cold run, 22,000 calls a round):
    ([(function or None, kind, target, the global names the arguments name)] of the ``self`` and
    ``ref`` calls passing any (``_class_receivers``), [(function or None, flow, kind, target,
    args, kwargs, the names the call may call; None: a ``self.x(...)`` call of a method, which
    the model answers)] of the calls that may build a class (``_argument_modules``)), in source
    order."""
    store = model.carried_store("planned_calls")
    found = model.kept(store, facts.path)
    if found is not None:
        return found
    receivers: list = []
    builds: list = []
    for fn in (None, *facts.functions.values()):
        flow = facts.flow if fn is None else fn.flow
        for kind, target, args, kwargs, _row in flow.calls if flow is not None else ():
            if kind == "self" or kind == "ref":
                passed = [q for a in (*args, *(v for _, v in kwargs)) for q in _named(a, flow)]
                if passed:
                    receivers.append((fn, kind, target, passed))
            if kind == "local":  # ``dataset_cls(...)``: the classes the local may hold
                builds.append((fn, flow, kind, target, args, kwargs, called_names(flow, facts, target)))
            elif kind == "self":
                if fn is not None and fn.cls is not None and fn.cls in facts.classes:
                    builds.append((fn, flow, kind, target, args, kwargs, None))
            elif kind == "ref":
                builds.append((fn, flow, kind, target, args, kwargs, [target]))
    return model.keep(store, facts.path, (receivers, builds))


def _named(ir, flow, depth=0) -> list[str]:
    """The global names an argument names: a class (``GraphDataset``), an instance built of one
    (``VQADataset(path)``), or a local holding either."""
    if ir[:1] == ("g",):
        return [ir[1]]
    if ir[:1] == ("c",) and ir[1][:1] == ("g",):
        return [ir[1][1]]
    if ir[:1] in (("n",), ("nk",)) and depth == 0:
        return [q for v in flow.locals.get(ir[1], ()) for q in _named(v, flow, 1)]
    return []


def _class_receivers(model, keep) -> None:
    """The functions a Dataset class or an instance of it is handed to
    (``self.load_dataset(GraphDataset)``, whose ``dataset_class(...)`` builds it for a loader;
    ``utils.prepare_eval_samples(VQADataset(path), n)``, directly or through a local): their
    files hold the loaders that decide how the class runs. Resolving them loudly records the
    unparsed files (a helper module, a base class's module)."""
    with model.quietly():
        datasets, words = _dataset_words(model, keep)
        found = []
        for facts in list(model.files.values()):
            for fn, kind, target, passed in _planned_calls(model, facts)[0]:
                passed = [q for q in passed if q.rpartition(".")[2] in words]
                if any(getattr(model.resolve(q, facts.root), "key", None) in datasets for q in passed):
                    found.append((facts, fn, kind, target))
    with model.quietly(False):
        for facts, fn, kind, target in found:
            if kind == "ref":
                model.resolve(target, facts.root)
            elif fn is not None and fn.cls is not None and fn.cls in facts.classes:
                model.find_method(ClassRef(facts, facts.classes[fn.cls]), target)


def _argument_modules(model, keep) -> None:
    """The project modules of what Dataset constructions pass: ``Images(load_items(p))``,
    ``items = load_items(p); Images(items)``, ``Images(train_items)`` with ``train_items`` a
    module variable a ``global`` statement lets ``main()`` assign, ``Images(items)`` in a loader
    builder whose ``items`` parameter its callers fill (``build_loader(data_source=
    build_dataset(cfg).val)``): the helpers building the values live in files without
    data-loading words (parsed so the values are known). ``keep``: the connected classes of a
    named file's analysis (None: all)."""
    with model.quietly():
        datasets, words = _dataset_words(model, keep)
        sites = []
        for facts in list(model.files.values()):
            for fn, flow, kind, target, args, kwargs, targets in _planned_calls(model, facts)[1]:
                if targets is None:  # ``self.dataset(...)`` with ``self.dataset = DATASETS[name]``
                    owner = ClassRef(facts, facts.classes[fn.cls])
                    if model.find_method(owner, target) is not None:
                        continue
                    held = [c for c in model.held_classes(owner, target) if c.key in datasets]
                    if held:
                        sites.append((facts, fn, flow, args, kwargs))
                    continue
                for name in targets:
                    if name.rpartition(".")[2] in words:
                        found = model.resolve(name, facts.root)
                        if isinstance(found, ClassRef) and found.key in datasets:
                            sites.append((facts, fn, flow, args, kwargs))
                            break
    with model.quietly(False):
        for facts, fn, flow, args, kwargs in sites:
            scope = FuncRef(facts, fn) if fn is not None else None
            todo = [(a[1] if a[0] == "*" else a, facts, scope, flow, 0) for a in (*args, *(v for _, v in kwargs))]
            seen: set = set()
            while todo:
                ir, where, fnref, flow_, depth = todo.pop()
                if (id(ir), id(flow_)) in seen or depth > 2:
                    continue
                seen.add((id(ir), id(flow_)))
                _module_names(model, ir, where.root, set())
                for tag, name in _names_in(ir):
                    if tag in ("n", "nk") and flow_ is not None:
                        todo.extend((x, where, fnref, flow_, depth + 1) for x in flow_.locals.get(name, ()))
                    elif tag == "p" and fnref is not None:
                        with model.quietly():  # (the call index asks for no unparsed file)
                            passed = model.passed_arguments(fnref, name)
                        todo.extend((arg, env.facts, env.fn, env.flow, depth + 1) for arg, env in passed)
                    elif tag == "g" and name.rpartition(".")[0] == where.module:
                        short = name.rpartition(".")[2]
                        if where.flow is not None:
                            todo.extend((x, where, None, where.flow, depth + 1) for x in where.flow.locals.get(short, ()))
                        for qualname in where.signals.get("global_writes", {}).get(short, ()):
                            writer = where.functions.get(qualname)
                            if writer is not None and writer.flow is not None:
                                todo.extend((x, where, FuncRef(where, writer), writer.flow, depth + 1) for x in writer.flow.locals.get(short, ()))


def _names_in(ir) -> list[tuple[str, str]]:
    """The local ("n"), parameter ("p") and global ("g") names an IR reads."""
    out = []
    stack = [ir]
    while stack:
        node = stack.pop()
        if not isinstance(node, tuple) or not node:
            continue
        if node[0] in ("n", "g", "p") and len(node) == 2 and isinstance(node[1], str):
            out.append((node[0], node[1]))
        else:
            stack.extend(x for x in node[1:] if isinstance(x, tuple))
    return out


def _module_names(model, ir, root, attrs: set[str]) -> None:
    """Ask for the modules of the global names in an IR (recorded as misses when unparsed)."""
    stack = [ir]
    while stack:
        node = stack.pop()
        if not isinstance(node, tuple) or not node:
            continue
        if node[0] == "g" and isinstance(node[1], str) and "." in node[1]:
            model.module(node[1].rpartition(".")[0], root)
        elif node[0] == "s" and isinstance(node[1], str):
            attrs.add(node[1])
        else:
            stack.extend(x for x in node[1:] if isinstance(x, tuple))


def _import_words(module: str, own: bool = False) -> set[str]:
    """The words a file importing from ``module`` names: the module's own name or its package's
    (``from pkg.coco import X``, ``from pkg import X`` re-exported, ``from . import coco``), not
    the top-level package every file of a library imports from (a named file's users only).
    ``own``: the module's own name only (what any of its classes and functions is imported by,
    unless a package re-exports it; the Datasets among them are looked for more widely)."""
    parts = [p for p in module.split(".") if p and p != "__init__"]
    if own:
        return set(parts[-1:])
    if len(parts) >= 3:
        parts = parts[1:]
    return set(parts[-2:])


def module_words(module: str) -> set[str]:
    """The words of a module's dotted name (``pkg.data`` -> pkg, data), ``__init__`` left out."""
    return {part for part in module.split(".") if part and part != "__init__"}
