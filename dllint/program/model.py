"""The program model: a pure function of every analysed file's facts, the settings and the layout.

It answers: what does a qualified name refer to in this project; which classes are Datasets
(through the project's own bases in other files); which calls build DataLoaders, with how many
workers and under which start method; which functions run inside workers.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property

from dllint.model import ClassFacts, FileFacts, FunctionFacts, LoaderCall, Value
from dllint.program import values as _values
from dllint.program.layout import AMBIGUOUS, Layout
from dllint.program.values import Values
from dllint.names import (
    DATALOADER_CLASSES,
    GET_CONTEXT,
    ITERABLE_BASES,
    START_METHODS,
    WORKER_ENTRY_METHODS,
    canonical,
    is_dataset_base,
)

MAX_REACH_DEPTH = 6
MAX_REACH_NODES = 400
MAX_RESOLVE_STEPS = 300  # name lookups one resolution may take (re-exports, star imports)


@dataclass(frozen=True, slots=True)
class ClassRef:
    file: FileFacts
    cls: ClassFacts

    @property
    def key(self) -> tuple[str, str]:
        return (self.file.path, self.cls.qualname)


@dataclass(frozen=True, slots=True)
class FuncRef:
    file: FileFacts
    fn: FunctionFacts

    @property
    def key(self) -> tuple[str, str]:
        return (self.file.path, self.fn.qualname)


@dataclass(slots=True)
class Loader:
    file: FileFacts
    call: LoaderCall
    workers: str  # "no" | "yes" | "maybe"
    context: str | None  # explicit method, "unknown" for a non-literal context, None when absent
    start_methods: frozenset[str]  # methods workers may start with ("unknown" if undecidable)
    datasets: list[ClassRef] = field(default_factory=list)
    dataset_external: list[str] = field(default_factory=list)

    @property
    def may_start_workers(self) -> bool:
        return self.workers != "no"


class ProgramModel(Values):
    """One model of the program, built once per run from every analysed file's facts.

    Rules ask it; they never re-derive what it answers. ``files`` are the analysed files' facts,
    ``layout`` the project's files and import roots (dllint/program/layout.py)."""

    def __init__(self, files: dict[str, FileFacts], settings, layout: Layout | None = None):
        self.files = {path: files[path] for path in sorted(files)}  # path order: deterministic answers
        self.settings = settings
        self.layout = layout if layout is not None else Layout.from_facts(self.files)
        self.dataset_bases = frozenset(settings.dataset_bases)
        self.loader_classes = DATALOADER_CLASSES | frozenset(settings.dataloader_classes)
        # Planning (dllint/program/plan.py) asks structural questions on a partial model and
        # parses what they need before the final model is built. ``misses``: paths of unparsed
        # project files an answer needed. Only questions about code that matters record them:
        # what a Dataset or loader runs, what a loader is given. Classifying an arbitrary class
        # ("is this a Dataset?") is asked quietly: a class whose ancestry leaves the parsed files
        # through a file without trigger words cannot be a Dataset or a DataLoader (that file
        # would hold the trigger word, or the name of a project Dataset or loader class, which
        # the planner's name demand finds). Memoized answers remember the unparsed files they met
        # (``_deps``), so a quiet answer reused by a loud question still records them.
        self.misses: set[str] = set()
        self._quiet = 0
        self._deps: list[set[str]] = []  # one collector per memoized computation in progress
        self._resolve_memo: dict[tuple[str, str | None], tuple[object, frozenset[str]]] = {}
        self._resolve_budget = MAX_RESOLVE_STEPS
        self._dataset_memo: dict[tuple[str, str], bool] = {}
        self._loader_class_memo: dict[tuple[str, str], bool] = {}

    def _funcref(self, facts: FileFacts, fn: FunctionFacts) -> "FuncRef":
        return FuncRef(facts, fn)

    # ------------------------------------------------------------------ symbols

    def module(self, name: str, root: str | None = None) -> FileFacts | None:
        """The analysed file ``import name`` loads from a file whose package root is ``root``;
        None for a library module, an ambiguous name, or a project file not analysed (recorded as
        a miss for the planner)."""
        path = self.layout.find(name, root or self.layout.root)
        if not path:
            return None
        facts = self.files.get(path)
        if facts is None and not path.endswith(".pyi"):
            self._missed(frozenset((path,)))
        return facts

    def is_project_module(self, name: str, root: str | None) -> bool | None:
        """True: a project module; False: not one (a library); None: ambiguous."""
        found = self.layout.find(name, root or self.layout.root)
        if found is AMBIGUOUS:
            return None
        return bool(found)

    def _missed(self, paths: frozenset[str]) -> None:
        if not paths:
            return
        for deps in self._deps:
            deps.update(paths)
        if not self._quiet:
            self.misses.update(paths)

    @contextmanager
    def _tracking(self):
        """Collects the unparsed files met by the computation inside (for its memo entry)."""
        deps: set[str] = set()
        self._deps.append(deps)
        try:
            yield deps
        finally:
            self._deps.pop()
            for outer in self._deps:
                outer.update(deps)

    @contextmanager
    def quietly(self, quiet: bool = True):
        """Questions inside do not ask for unparsed files (``quiet=False``: they do again)."""
        saved = self._quiet
        self._quiet = 1 if quiet else 0
        try:
            yield
        finally:
            self._quiet = saved

    def resolve(self, qualname: str | None, root: str | None = None, _depth: int = 0):
        """-> ClassRef | FuncRef | FileFacts (a module) | str (an external name) | None.

        Memoized per (name, root): star-import and re-export chains are followed once each, and a
        cycle resolves to nothing."""
        if qualname is None or _depth > 12:
            return None
        key = (qualname, root)
        memo = self._resolve_memo
        found = memo.get(key)
        if found is not None:
            self._missed(found[1])
            return found[0]
        if _depth == 0:
            self._resolve_budget = MAX_RESOLVE_STEPS
        self._resolve_budget -= 1
        if self._resolve_budget < 0:
            return None  # star-import webs: give up (not memoized: a later, cheaper path may work)
        memo[key] = (None, frozenset())  # in progress: a cycle resolves to nothing
        with self._tracking() as deps:
            result = self._resolve(qualname, root, _depth)
        if result is None and self._resolve_budget < 0:
            del memo[key]
        else:
            memo[key] = (result, frozenset(deps))
        return result

    def _resolve(self, qualname: str, root: str | None, _depth: int):
        qualname = canonical(qualname)
        parts = qualname.split(".")
        for i in range(len(parts), 0, -1):
            modname = ".".join(parts[:i])
            project = self.is_project_module(modname, root)
            if project is None:
                return None  # two project files could be meant: nothing depends on a guess
            if not project:
                continue
            facts = self.module(modname, root)
            if facts is None:
                return None  # a project module we have not (yet) parsed
            rest = parts[i:]
            if not rest:
                return facts
            return self._resolve_in(facts, rest, _depth)
        return qualname  # not a project module: an external name

    def _resolve_in(self, facts: FileFacts, rest: list[str], depth: int):
        name = rest[0]
        if len(rest) > 1:  # a nested or function-local class: Outer.Inner, test_x.<locals>.Loader
            nested = facts.classes.get(f"{facts.module}.{'.'.join(rest)}")
            if nested is not None:
                return ClassRef(facts, nested)
        full = f"{facts.module}.{name}"
        cls = facts.classes.get(full)
        if cls is not None:
            if len(rest) == 1:
                return ClassRef(facts, cls)
            method = cls.methods.get(rest[1])
            if method and len(rest) == 2:
                return FuncRef(facts, facts.functions[method])
            return None
        fn = facts.functions.get(full)
        if fn is not None:
            return FuncRef(facts, fn) if len(rest) == 1 else None
        target = facts.imports.get(name)
        if target is not None:
            return self.resolve(".".join([target, *rest[1:]]), facts.root, depth + 1)
        const = facts.constants.get(name)
        if const is not None and const.kind == "ref" and len(rest) == 1:
            return self.resolve(const.ref, facts.root, depth + 1)
        for star in facts.star_imports:
            found = self.resolve(".".join([star, *rest]), facts.root, depth + 1)
            if found is not None and not isinstance(found, str):
                return found
        # a submodule of a package: pkg.sub
        if facts.is_package and self.is_project_module(f"{facts.module}.{name}", facts.root):
            return self.resolve(f"{facts.module}.{'.'.join(rest)}", facts.root, depth + 1)
        return None

    def resolve_class(self, qualname: str | None, root: str | None) -> ClassRef | None:
        found = self.resolve(qualname, root)
        return found if isinstance(found, ClassRef) else None

    def constant(self, value: Value, root: str | None):
        """A module constant imported from another file: ``from config import WORKERS``."""
        if value.kind != "ref" or not value.ref:
            return None
        parts = value.ref.rsplit(".", 1)
        if len(parts) != 2:
            return None
        facts = self.module(parts[0], root)
        if facts is None:
            return None
        const = facts.constants.get(parts[1])
        return const if const is not None and const.kind == "const" else None

    # ------------------------------------------------------------------ classes

    def classes(self):
        for facts in self.files.values():
            for cls in facts.classes.values():
                yield ClassRef(facts, cls)

    def bases(self, ref: ClassRef) -> tuple[list[ClassRef], list[str]]:
        """(project base classes, external base names) of a class."""
        project: list[ClassRef] = []
        external: list[str] = []
        for base in ref.cls.bases:
            if base.kind != "ref" or not base.ref:
                continue
            found = self.resolve(base.ref, ref.file.root)
            if isinstance(found, ClassRef):
                project.append(found)
            elif isinstance(found, str):
                external.append(found)
        return project, external

    def mro(self, ref: ClassRef) -> list[ClassRef]:
        """The class and its project ancestors, depth-first left-to-right without repeats."""
        memo = self.__dict__.setdefault("_mro_memo", {})  # facts do not change under an index
        found = memo.get(ref.key)
        if found is None:
            with self._tracking() as deps:
                chain = self._mro(ref)
            found = memo[ref.key] = (chain, frozenset(deps))
        else:
            self._missed(found[1])
        return list(found[0])

    def _mro(self, ref: ClassRef) -> list[ClassRef]:
        out: list[ClassRef] = []
        seen: set = set()

        def visit(r: ClassRef, depth: int) -> None:
            if r.key in seen or depth > 20:
                return
            seen.add(r.key)
            out.append(r)
            for base in self.bases(r)[0]:
                visit(base, depth + 1)

        visit(ref, 0)
        return out

    def external_bases(self, ref: ClassRef) -> set[str]:
        out: set[str] = set()
        for r in self.mro(ref):
            out.update(self.bases(r)[1])
        return out

    def find_method(self, ref: ClassRef, name: str, after: ClassRef | None = None) -> FuncRef | None:
        chain = self.mro(ref)
        if after is not None:
            keys = [r.key for r in chain]
            chain = chain[keys.index(after.key) + 1 :] if after.key in keys else []
        for r in chain:
            qual = r.cls.methods.get(name)
            if qual:
                return FuncRef(r.file, r.file.functions[qual])
        return None

    def subclasses_of(self, ref: ClassRef) -> list[ClassRef]:
        subclasses = self.__dict__.get("_subclasses")
        if subclasses is None:  # one pass over all classes instead of one per call
            subclasses = self.__dict__["_subclasses"] = {}
            with self.quietly():  # a subclass in another file names its base: the name demand finds it
                for c in self.classes():
                    for m in self.mro(c):
                        if m.key != c.key:
                            subclasses.setdefault(m.key, {}).setdefault(c.key, c)
        return list(subclasses.get(ref.key, {}).values())

    def is_dataset(self, ref: ClassRef) -> bool:
        key = ref.key
        if key in self._dataset_memo:
            return self._dataset_memo[key]
        self._dataset_memo[key] = False  # cycles
        used = self._used_as_dataset  # asks for the files of classes given to loaders
        with self.quietly():
            result = any(is_dataset_base(b, self.dataset_bases) for b in self.external_bases(ref))
            if not result:
                result = key in used
            if not result:
                result = any(key != r.key and self.is_dataset(r) for r in self.mro(ref)[1:])
        self._dataset_memo[key] = result
        return result

    def is_iterable_dataset(self, ref: ClassRef) -> bool:
        if any(canonical(b) in ITERABLE_BASES for b in self.external_bases(ref)):
            return True
        return self.find_method(ref, "__getitem__") is None and self.find_method(ref, "__iter__") is not None

    def dataset_classes(self) -> list[ClassRef]:
        return [c for c in self.classes() if self.is_dataset(c)]

    def is_loader_class(self, qualname: str, root: str | None) -> bool:
        qualname = canonical(qualname) or ""
        if qualname in self.loader_classes:
            return True
        with self.quietly():
            return self._is_loader_class(qualname, root)

    def _is_loader_class(self, qualname: str, root: str | None) -> bool:
        ref = self.resolve_class(qualname, root)
        if ref is None:
            return False
        if ref.key in self._loader_class_memo:
            return self._loader_class_memo[ref.key]
        self._loader_class_memo[ref.key] = False
        result = any(canonical(b) in self.loader_classes for b in self.external_bases(ref))
        self._loader_class_memo[ref.key] = result
        return result

    # ------------------------------------------------------------------ loaders

    @cached_property
    def loaders(self) -> list[Loader]:
        out: list[Loader] = []
        with self.quietly(False):  # a loader's arguments matter, wherever it is first asked for
            for facts in self.files.values():
                for call in facts.loaders:
                    if not self.is_loader_class(call.callee, facts.root):
                        continue
                    out.append(self._loader(facts, call))
        return out

    def loaders_in(self, path: str) -> list[Loader]:
        """The loaders built in one file (rules ask per loop and per call: not a scan each time)."""
        by_path = self.__dict__.get("_loaders_by_path")
        if by_path is None:
            by_path = self.__dict__["_loaders_by_path"] = {}
            for loader in self.loaders:
                by_path.setdefault(loader.file.path, []).append(loader)
        return by_path.get(path, [])

    @cached_property
    def _used_as_dataset(self) -> set[tuple[str, str]]:
        keys: set[tuple[str, str]] = set()
        with self.quietly(False):  # what a loader is given matters
            for facts in self.files.values():
                for call in facts.loaders:
                    if not self.is_loader_class(call.callee, facts.root):
                        continue
                    for ref in self._dataset_refs(facts, call)[0]:
                        if self.find_method(ref, "__getitem__") or self.find_method(ref, "__iter__"):
                            keys.add(ref.key)
        return keys

    def _dataset_refs(self, facts: FileFacts, call: LoaderCall) -> tuple[list[ClassRef], list[str]]:
        value = call.args.get("dataset")
        if value is None:
            return [], []
        project: list[ClassRef] = []
        external: list[str] = []
        for alt in self.expand(value, facts):
            if alt.kind == "call" and alt.ref:
                found = self.resolve(alt.ref, facts.root)
                if isinstance(found, ClassRef):
                    project.append(found)
                elif isinstance(found, str):
                    external.append(found)
        return project, external

    def expand(self, value: Value, facts: FileFacts, depth: int = 0) -> list[Value]:
        """A value's alternatives, looking through calls of project functions to what they return."""
        out: list[Value] = []
        for alt in value.alternatives():
            if alt.kind == "call" and alt.ref and depth < 3:
                found = self.resolve(alt.ref, facts.root)
                if isinstance(found, FuncRef) and found.fn.returns:
                    for ret in found.fn.returns:
                        out.extend(self.expand(ret, found.file, depth + 1))
                    continue
            out.append(alt)
        return out

    def workers_of(self, facts: FileFacts, call: LoaderCall) -> str:
        value = call.args.get("num_workers")
        if value is None:
            return "maybe" if call.unresolved_kwargs else "no"
        verdicts = set()
        for alt in value.alternatives():
            const = alt.const if alt.kind == "const" else None
            if const is None and alt.kind == "ref":
                c = self.constant(alt, facts.root)
                const = c.const if c is not None else None
            if isinstance(const, int) and not isinstance(const, bool):
                verdicts.add("no" if const <= 0 else "yes")
            else:
                verdicts.add("maybe")
        if verdicts == {"no"}:
            return "no"
        if verdicts == {"yes"}:
            return "yes"
        return "maybe"

    def context_of(self, facts: FileFacts, call: LoaderCall) -> str | None:
        value = call.args.get("multiprocessing_context")
        if value is None:
            return "unknown" if call.unresolved_kwargs else None
        methods = set()
        for alt in value.alternatives():
            if alt.kind == "const":
                if alt.const is None:
                    methods.add("none")
                elif alt.const in START_METHODS:
                    methods.add(alt.const)
                else:
                    methods.add("unknown")
            elif alt.kind == "call" and canonical(alt.ref) in GET_CONTEXT:
                methods.add(alt.const if alt.const in START_METHODS else "unknown")
            else:
                methods.add("unknown")
        if methods == {"none"}:
            return None
        methods.discard("none")
        return methods.pop() if len(methods) == 1 else "unknown"

    def _loader(self, facts: FileFacts, call: LoaderCall) -> Loader:
        workers = self.workers_of(facts, call)
        context = self.context_of(facts, call)
        if context is not None:
            methods = frozenset({context})
        else:
            methods = self.global_start_methods(facts)
        project, external = self._dataset_refs(facts, call)
        return Loader(facts, call, workers, context, methods, project, external)

    def global_start_methods(self, facts: FileFacts) -> frozenset[str]:
        """The start method set by set_start_method for code in ``facts``, else the defaults."""
        found = self.start_method_calls(facts)
        if found:
            methods = frozenset(s.method if s.method in START_METHODS else "unknown" for _, s in found)
            if self.default_also_applies(facts):
                methods |= self.settings.default_start_methods()
            return methods
        return self.settings.default_start_methods()

    def default_also_applies(self, facts: FileFacts) -> bool:
        """The applying set_start_method calls come from some entry scripts importing ``facts``,
        but another entry script (a module with a ``__main__`` guard that no other importer
        imports) reaches it without setting one: there the target's default applies."""
        if facts.start_methods or not self.start_method_calls(facts):
            return False
        callers = self.importers(facts.path)
        if not any(c.start_methods for c in callers):
            return False  # the calls run on import: they apply to every entry
        imported = set().union(*(self.imports_of(c) for c in callers))
        setters = {
            f.path for f in self.files.values() if any(s.module_level and not s.in_main_guard for s in f.start_methods)
        }
        for entry in callers:
            if entry.main_guard is None or entry.path in imported or entry.start_methods:
                continue
            if not (self.imports_of(entry) & setters):
                return True
        return False

    def start_method_calls(self, facts: FileFacts) -> list:
        """[(file, StartMethodCall)] of the ``set_start_method`` calls that apply to code in
        ``facts``: its own; else those of the entry scripts importing it; else module-level calls
        (run on import) in a project module that it or those entry scripts import."""
        memo = self.__dict__.setdefault("_start_calls_memo", {})
        if facts.path not in memo:
            memo[facts.path] = self._start_method_calls(facts)
        return memo[facts.path]

    def _start_method_calls(self, facts: FileFacts) -> list:
        own = [(facts, s) for s in facts.start_methods]
        if own:
            return own
        callers = self.importers(facts.path)
        found = [(f, s) for f in callers for s in f.start_methods]
        if found:
            return found
        imported = set().union(*(self.imports_of(c) for c in (facts, *callers)))
        out = []
        for f in self.files.values():
            if f is facts or f.path not in imported:
                continue
            out.extend((f, s) for s in f.start_methods if s.module_level and not s.in_main_guard)
        return out

    def imports_of(self, facts: FileFacts) -> frozenset[str]:
        """The project files a file imports, resolved as Python would (importing ``pkg.data``
        runs ``pkg/__init__.py`` first: parent packages count, the file's own included)."""
        memo = self.__dict__.setdefault("_imports_memo", {})
        found = memo.get(facts.path)
        if found is None:
            paths: set[str] = set()
            own = facts.module if facts.is_package else facts.module.rpartition(".")[0]
            for m in (*facts.imported_modules, *([own] if own else [])):
                parts = m.split(".")
                for i in range(1, len(parts) + 1):
                    path = self.layout.find(".".join(parts[:i]), facts.root)
                    if path:
                        paths.add(path)
            paths.discard(facts.path)
            found = memo[facts.path] = frozenset(paths)
        return found

    @cached_property
    def _reverse_imports(self) -> dict[str, list[FileFacts]]:
        """Path -> analysed files importing it (built once)."""
        rev: dict[str, list[FileFacts]] = {}
        for facts in self.files.values():
            for path in sorted(self.imports_of(facts)):
                rev.setdefault(path, []).append(facts)
        return rev

    def importers(self, path: str) -> list[FileFacts]:
        """Analysed files that import the file at ``path`` (directly or through other analysed
        files), in path order."""
        memo = self.__dict__.setdefault("_importers_memo", {})
        if path in memo:
            return memo[path]
        rev = self._reverse_imports
        found: dict[str, FileFacts] = {}
        seen = {path}
        frontier = [path]
        while frontier:
            target = frontier.pop()
            for facts in rev.get(target, ()):
                if facts.path in seen:
                    continue
                seen.add(facts.path)
                found[facts.path] = facts
                frontier.append(facts.path)
        out = [found[p] for p in sorted(found)]
        memo[path] = out
        return out

    def loaders_using(self, ref: ClassRef) -> list[Loader]:
        """Loaders whose dataset is this class or one of its subclasses."""
        by_dataset = self.__dict__.get("_loaders_by_dataset")
        if by_dataset is None:  # dataset class key -> {position: loader}, built once
            by_dataset = self.__dict__["_loaders_by_dataset"] = {}
            for i, ld in enumerate(self.loaders):
                for d in ld.datasets:
                    by_dataset.setdefault(d.key, {})[i] = ld
        found: dict[int, Loader] = {}
        for key in (ref.key, *(s.key for s in self.subclasses_of(ref))):
            found.update(by_dataset.get(key, {}))
        return [found[i] for i in sorted(found)]  # in the loaders' order

    # ------------------------------------------------------------------ worker code

    def callable_targets(self, value: Value, facts: FileFacts, scope_cls: ClassRef | None = None) -> list[FuncRef]:
        """Functions a callable value (collate_fn=, worker_init_fn=, a transform) runs."""
        out: list[FuncRef] = []
        for alt in value.alternatives():
            if alt.kind in ("ref", "partial") and alt.ref:
                found = self.resolve(alt.ref, facts.root)
                if isinstance(found, FuncRef):
                    out.append(found)
                elif isinstance(found, ClassRef):
                    m = self.find_method(found, "__call__")
                    if m:
                        out.append(m)
            elif alt.kind == "call" and alt.ref:
                found = self.resolve(alt.ref, facts.root)
                if isinstance(found, ClassRef):
                    m = self.find_method(found, "__call__") or self.find_method(found, "forward")
                    if m:
                        out.append(m)
            elif alt.kind == "lambda":
                for r in alt.refs:
                    found = self.resolve(r, facts.root)
                    if isinstance(found, FuncRef):
                        out.append(found)
            elif alt.kind == "self_method" and scope_cls is not None and alt.ref:
                m = self.find_method(scope_cls, alt.ref)
                if m:
                    out.append(m)
        return out

    def class_of(self, fn: FuncRef) -> ClassRef | None:
        if fn.fn.cls is None:
            return None
        cls = fn.file.classes.get(fn.fn.cls)
        return ClassRef(fn.file, cls) if cls else None

    def reachable(self, roots: list[FuncRef], bound: ClassRef | None = None) -> dict[tuple[str, str], tuple[FuncRef, int]]:
        """Functions run by ``roots`` (and what they call in the project), with their depth.

        ``bound`` is the concrete class ``self`` is an instance of, so ``self.load()`` in a base
        class finds the subclass's override."""
        out: dict[tuple[str, str], tuple[FuncRef, int]] = {}
        frontier: list[tuple[FuncRef, int, ClassRef | None]] = [(r, 0, bound or self.class_of(r)) for r in roots]
        while frontier and len(out) < MAX_REACH_NODES:
            fn, depth, self_cls = frontier.pop(0)
            if fn.key in out:
                continue
            out[fn.key] = (fn, depth)
            if depth >= MAX_REACH_DEPTH:
                continue
            for call in fn.fn.calls:
                for target, cls in self._call_targets(fn, call, self_cls):
                    if target.key not in out:
                        frontier.append((target, depth + 1, cls))
        return out

    def _call_targets(self, fn: FuncRef, call, self_cls: ClassRef | None):
        if call.kind == "self" and self_cls is not None:
            method = self.find_method(self_cls, call.target)
            if method is not None:
                return [(method, self_cls)]
            values = self.self_attr_values(self_cls, call.target)
            return [(t, self.class_of(t)) for v in values for t in self.callable_targets(v, self._file_of_value(self_cls), self_cls)]
        if call.kind == "super" and self_cls is not None:
            owner = self.class_of(fn)
            method = self.find_method(self_cls, call.target, after=owner) if owner else None
            return [(method, self_cls)] if method else []
        if call.kind == "ref":
            found = self.resolve(call.target, fn.file.root)
            if isinstance(found, FuncRef):
                return [(found, self.class_of(found) if found.fn.cls else None)]
            if isinstance(found, ClassRef):
                init = self.find_method(found, "__init__")
                return [(init, found)] if init else []
        return []

    def _file_of_value(self, cls: ClassRef) -> FileFacts:
        return cls.file

    def self_attr_values(self, ref: ClassRef, attr: str) -> list[Value]:
        values: list[Value] = []
        for r in self.mro(ref):
            for qual in r.cls.methods.values():
                values.extend(r.file.functions[qual].self_writes.get(attr, ()))
        return values

    def worker_functions(self, ref: ClassRef) -> dict[tuple[str, str], tuple[FuncRef, int]]:
        """Code a Dataset class runs inside workers: its entry methods and what they call
        (memoized: every worker-code rule asks; the unparsed files it met are replayed)."""
        memo = self.__dict__.setdefault("_worker_memo", {})
        found = memo.get(ref.key)
        if found is None:
            with self._tracking() as deps:
                roots = [m for name in WORKER_ENTRY_METHODS if (m := self.find_method(ref, name))]
                reach = self.reachable(roots, ref)
            found = memo[ref.key] = (reach, frozenset(deps))
        else:
            self._missed(found[1])
        return dict(found[0])

    def loader_callables(self, loader: Loader) -> dict[str, list[FuncRef]]:
        """collate_fn / worker_init_fn functions of a loader."""
        scope_fn = loader.file.functions.get(loader.call.scope)
        scope_cls = self.class_of(FuncRef(loader.file, scope_fn)) if scope_fn else None
        out = {}
        for arg in ("collate_fn", "worker_init_fn"):
            value = loader.call.args.get(arg)
            if value is not None:
                out[arg] = self.callable_targets(value, loader.file, scope_cls)
        return out



_values.ClassRefType[0] = ClassRef
_values.FuncRefType[0] = FuncRef
