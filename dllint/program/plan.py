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

from dllint.program.refs import FuncRef


def demands(model) -> tuple[set[str], dict[str, frozenset[str]]]:
    """(paths the structural questions reached, {name: module words} to look for in files)."""
    for loader in model.loaders:
        for targets in model.loader_callables(loader).values():
            for fn, _ in model.reachable(targets).values():
                _device_modules(model, fn, None)
    names: dict[str, set[str]] = {}
    for cls in model.dataset_classes():
        for fn, _ in model.worker_functions(cls).values():
            _device_modules(model, fn, cls)
        init = model.find_method(cls, "__init__")
        if init is not None:
            model.reachable([init], cls)
        names.setdefault(cls.cls.name, set()).update(_module_words(cls.file.module))
    for cls in model.classes():
        if model.is_loader_class(cls.cls.qualname, cls.file.root):
            names.setdefault(cls.cls.name, set()).update(_module_words(cls.file.module))
    # functions a loader with workers is passed to; functions that start workers, and their callers
    with model.quietly(False):
        model.caller_map()
    for facts in list(model.files.values()):
        starts = facts.signals.get("starts")
        if not starts:
            continue
        for qualname in starts["functions"]:
            fn = facts.functions.get(qualname)
            if fn is None or fn.nested:
                continue
            with model.quietly():  # which of the parsed functions start workers: no new files
                starts_workers = model.function_loaders(FuncRef(facts, fn), 0, frozenset())
            if starts_workers:
                names.setdefault(fn.name, set()).update(_module_words(facts.module))
    return set(model.misses), {k: frozenset(v) for k, v in names.items()}


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
