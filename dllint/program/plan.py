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
   file that says ``D``.

Rounds repeat until nothing new is needed; the final model is then built once.
"""

from __future__ import annotations

from dllint.program.refs import ClassRef, FuncRef


def demands(model, focus: frozenset[str] | None = None) -> tuple[set[str], dict[str, frozenset[str]]]:
    """(paths the structural questions reached, {name: module words} to look for in files).

    ``focus``: the files named on the command line, when the analysis starts from them (a
    pre-commit hook's staged files, the editor's document). Then only what is connected to them is
    followed: their classes and functions, the classes deriving from those, and the functions that
    call those (a builder returning their Dataset, an entry script calling their loader's function),
    never every Dataset of every file parsed on the way."""
    keep = _connected(model, focus) if focus is not None else None
    if keep is not None:  # the bases of the named files' classes decide which are Datasets
        with model.quietly(False):
            for cls in model.classes():
                if cls.key in keep[0]:
                    model.mro(cls)
    for loader in model.loaders:
        if keep is not None and loader.file.path not in focus:
            continue
        for targets in model.loader_callables(loader).values():
            for fn, _ in model.reachable(targets).values():
                _device_modules(model, fn, None)
    names: dict[str, set[str]] = {}
    for cls in model.dataset_classes():
        if keep is not None and cls.key not in keep[0]:
            continue
        for fn, _ in model.worker_functions(cls).values():
            _device_modules(model, fn, cls)
        init = model.find_method(cls, "__init__")
        if init is not None:
            model.reachable([init], cls)
        names.setdefault(cls.cls.name, set()).update(_module_words(cls.file.module))
    for cls in model.classes():
        if keep is not None and cls.key not in keep[0]:
            continue
        if model.is_loader_class(cls.cls.qualname, cls.file.root):
            names.setdefault(cls.cls.name, set()).update(_module_words(cls.file.module))
    if keep is not None:  # functions that return what they build from one of those Datasets
        for path, qualname in keep[1]:
            if path not in focus and "." not in qualname:
                names.setdefault(qualname, set()).update(_module_words(model.files[path].module))
    # functions a loader with workers is passed to; functions that start workers, and their callers
    with model.quietly(False):
        model.caller_map()
    for facts in list(model.files.values()):
        starts = facts.signals.get("starts")
        if not starts:
            continue
        for qualname in starts["functions"]:
            fn = facts.functions.get(qualname)
            if fn is None or fn.nested or (keep is not None and (facts.path, qualname) not in keep[2]):
                continue
            with model.quietly():  # which of the parsed functions start workers: no new files
                starts_workers = model.function_loaders(FuncRef(facts, fn), 0, frozenset())
            if starts_workers:
                names.setdefault(fn.name, set()).update(_module_words(facts.module))
    return set(model.misses), {k: frozenset(v) for k, v in names.items()}


def _connected(model, focus: frozenset[str]) -> tuple[set, set, set]:
    """(class keys, function keys, caller keys) connected to the files of ``focus``: their classes
    and the classes deriving from them; their functions and the functions elsewhere that return
    what they build from one of those Dataset classes or such a function (builders), without making
    a loader themselves (``get_dataset(cfg)`` returning ``CocoDataset(...)``); those functions and
    the functions that call one of them (an entry script that reaches a loader may set its start
    method; callers further away are not followed: the analysis of one file stays small)."""
    classes: set = set()
    functions: set = set()
    others: list[ClassRef] = []
    calls: list[tuple[tuple, list]] = []
    with model.quietly():
        for facts in list(model.files.values()):
            mine = facts.path in focus
            for cls in facts.classes.values():
                ref = ClassRef(facts, cls)
                if mine:
                    classes.add(ref.key)
                else:
                    others.append(ref)
            scopes = {call.scope for call in facts.loaders}
            for fn in facts.functions.values():
                if mine:
                    functions.add((facts.path, fn.qualname))
                elif fn.calls and not fn.nested:
                    targets = [model.resolve(c.target, facts.root) for c in fn.calls if c.kind == "ref"]
                    builder = bool(fn.returns) and fn.qualname not in scopes
                    calls.append(((facts.path, fn.qualname), builder, [t.key for t in targets if isinstance(t, (ClassRef, FuncRef))]))
        changed = True
        while changed:
            changed = False
            for ref in others:
                if ref.key not in classes and any(base.key in classes for base in model.mro(ref)[1:]):
                    classes.add(ref.key)
                    changed = True
        datasets = {c.key for c in model.dataset_classes() if c.key in classes}
        callers = set(functions)
        changed = True
        while changed:
            changed = False
            for key, builder, targets in calls:
                if builder and key not in functions and any(t in datasets or t in functions for t in targets):
                    functions.add(key)
                    changed = True
        for key, _, targets in calls:  # one call away: a named file's caller, not its callers' callers
            if any(t in functions for t in targets):
                callers.add(key)
    return classes, functions, callers


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


def _module_words(module: str) -> set[str]:
    return {part for part in module.split(".") if part and part != "__init__"}
