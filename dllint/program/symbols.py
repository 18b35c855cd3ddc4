"""Names, modules and classes: what a qualified name refers to in this project (through re-exports,
relative and star imports, the layout's import roots), the class hierarchy across files, which
classes are Datasets and DataLoaders, and which files import which.

Planning (dllint/program/plan.py) asks structural questions on a partial model and parses what
they need before the final model is built: ``misses`` are the unparsed project files an answer
needed. Only questions about code that matters record them (what a Dataset or loader runs, what a
loader is given); classifying an arbitrary class ("is this a Dataset?") is asked quietly.
"""

from __future__ import annotations

from functools import cached_property

from dllint.model import FileFacts, FunctionFacts, Value
from dllint.names import ITERABLE_BASES, canonical, is_dataset_base
from dllint.program.layout import AMBIGUOUS
from dllint.program.refs import ClassRef, FuncRef

MAX_RESOLVE_STEPS = 300  # name lookups one resolution may take (re-exports, star imports)
_RESOLVING = (None, frozenset(), True)  # a resolution's memo entry while it is in progress
_NOT_KEPT = object()


class Symbols:
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
        for deps in self.__dict__.get("_call_deps", ()):  # calls being evaluated (values.py)
            deps.update(paths)
        if not self._quiet:
            self.misses.update(paths)

    def _tracking(self) -> _Tracking:
        """Collects the unparsed files met by the computation inside (for its memo entry)."""
        return _Tracking(self)

    def _settling(self) -> _Settling:
        """Collects the unparsed files met by the resolution or MRO inside, and whether it met
        one in progress (``_unsettled``): what decides whether it is kept for the run."""
        return _Settling(self)

    def _apart(self) -> _Apart:
        """The computation inside meets unparsed files for itself only (``_Apart``)."""
        return _Apart(self)

    def _chained(self, question: tuple) -> _Chained:
        """The computation inside, when it meets unparsed files, is a question the planner asks
        again on the next model (``chains``, ``chase``)."""
        return _Chained(self, question)

    def quietly(self, quiet: bool = True) -> _Quietly:
        """Questions inside do not ask for unparsed files (``quiet=False``: they do again)."""
        return _Quietly(self, quiet)

    def resolve(self, qualname: str | None, root: str | None = None, _depth: int = 0):
        """-> ClassRef | FuncRef | FileFacts (a module) | str (an external name) | None.

        Memoized per (name, root): star-import and re-export chains are followed once each, and a
        cycle resolves to nothing."""
        if qualname is None:
            return None
        if _depth > 12:
            self._unsettled()  # (what is in progress resolves differently asked from higher up)
            return None
        key = (qualname, root)
        memo = self._resolve_memo
        found = memo.get(key)
        if found is not None:
            if found is _RESOLVING or found[2]:  # in progress (a cycle resolves to nothing), or met one
                self._unsettled()
                if found is _RESOLVING:
                    return None
            if found[1]:
                self._missed(found[1])
                if not self._quiet and _depth == 0:
                    self.chains.add(("resolve", qualname, root))
            return found[0]
        final = self._final_resolutions
        found = final.get(key, _NOT_KEPT)
        if found is not _NOT_KEPT:  # an earlier planning model's answer, final for the run
            memo[key] = (found, frozenset(), False)
            return found
        if _depth == 0:
            self._resolve_budget = MAX_RESOLVE_STEPS
        self._resolve_budget -= 1
        if self._resolve_budget < 0:
            return None  # star-import webs: give up (not memoized: a later, cheaper path may work)
        memo[key] = _RESOLVING
        with self._settling() as answer:
            result = self._resolve(qualname, root, _depth)
        deps = answer.deps
        if result is None and self._resolve_budget < 0:
            del memo[key]
        else:
            memo[key] = (result, frozenset(deps), answer.unsettled)
            if answer.final:
                # it met no unparsed file and no resolution in progress: parsing more files
                # cannot change it, and the run's later planning models (same layout, more
                # files) take it as it is (the files' facts objects are the same in each:
                # ``ProgramModel.__init__``)
                final[key] = result
        if deps and not self._quiet and _depth == 0:
            self.chains.add(("resolve", qualname, root))
        return result

    def _outermost(self) -> bool:
        """A question asked loudly by the planner or a rule, not inside another's computation."""
        # (a call being evaluated under its arguments is memoized as an answer in progress, but
        # its questions are asked as they were before calls were memoized: ``_call_function``)
        active = self._active
        return not self._quiet and not self._deps and (not active or len(active) == self._calls_active)

    def _class_of(self, key):
        facts = self.files.get(key[0])
        cls = facts.classes.get(key[1]) if facts is not None else None
        return ClassRef(facts, cls) if cls is not None else None

    def _function_of(self, key):
        facts = self.files.get(key[0])
        fn = facts.functions.get(key[1]) if facts is not None else None
        return FuncRef(facts, fn) if fn is not None else None

    def chase(self, questions) -> set[str]:
        """Ask again, loudly, the questions another model asked that met unparsed files (its
        ``chains``: class ancestry, name resolution, attribute and parameter values, worker code,
        the classes loaders are given):
        the unparsed files they meet now. A chain of base classes, re-exports or calls through
        files without trigger words needs one more file per link; the planner follows it on a
        fresh model of the files parsed so far, without a whole round of demands per link."""
        with self.quietly(False):
            for question in sorted(questions, key=repr):
                kind = question[0]
                if kind == "resolve":
                    self.resolve(question[1], question[2])
                elif kind == "used_as_dataset":
                    self._used_as_dataset  # noqa: B018 (computed: the unparsed files it meets)
                elif kind == "loaders":
                    self.loaders  # noqa: B018
                elif kind == "param_value":
                    fn = self._function_of(question[1])
                    bound = self._class_of(question[3]) if question[3] is not None else None
                    if fn is not None and (bound is not None or question[3] is None):
                        self.param_value(fn, question[2], bound)
                else:
                    ref = self._class_of(question[1])
                    if ref is None:
                        continue
                    if kind == "mro":
                        self.mro(ref)
                    elif kind == "attr_value":
                        self.attr_value(ref, question[2], question[3])
                    elif kind == "worker_functions":
                        self.worker_functions(ref)
        return set(self.misses)

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
                shadow = self._package_binding(qualname, parts, root, _depth)
                return shadow if shadow is not None else facts
            return self._resolve_in(facts, rest, _depth)
        return qualname  # not a project module: an external name

    def _package_binding(self, qualname: str, parts: list[str], root: str | None, depth: int):
        """``pkg.name`` when ``pkg/name.py`` exists and ``pkg/__init__.py`` binds ``name`` too
        (``from .PygDataset import PygDataset``): Python looks the package's attribute up first,
        and the package's own binding replaced the submodule there, so ``from pkg import name``
        gives the class. None when the package does not bind the name (the submodule is meant)."""
        if len(parts) < 2:
            return None
        parent = ".".join(parts[:-1])
        if not self.is_project_module(parent, root):
            return None
        pkg = self.module(parent, root)
        if pkg is None or not pkg.is_package:
            return None
        name = parts[-1]
        full = f"{pkg.module}.{name}"
        target = pkg.imports.get(name)
        if target is not None and canonical(target) == qualname:
            return None  # ``from . import name``: the submodule itself
        if target is None and full not in pkg.classes and full not in pkg.functions:
            return None
        found = self._resolve_in(pkg, [name], depth + 1)
        return found if isinstance(found, (ClassRef, FuncRef)) else None

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
            if len(rest) == 2:
                # a method the class inherits (``MusicDataset.from_meta`` defined on its base):
                # the attribute Python finds on the class, through its MRO
                return self.find_method(ClassRef(facts, cls), rest[1])
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
        key = ref.key
        found = memo.get(key)
        if found is None:
            chain = self._final_mros.get(key)
            if chain is not None:  # an earlier planning model's answer, final for the run
                found = memo[key] = (chain, frozenset(), False)
            else:
                with self._settling() as answer:
                    chain = self._mro(ref)
                found = memo[key] = (chain, frozenset(answer.deps), answer.unsettled)
                if answer.final:
                    self._final_mros[key] = chain  # (its bases' resolutions are final: ``resolve``)
        else:
            self._missed(found[1])
            if found[2]:
                self._unsettled()
        if found[1] and not self._quiet:
            self.chains.add(("mro", ref.key))
        return list(found[0])

    def _unsettled(self) -> None:
        """The answers in progress met a resolution in progress (a cycle of re-exports), the
        limit of nested resolutions, or an answer that did: what they find depends on which was
        asked first, and they are not kept for the run's later planning models (``resolve``,
        ``mro``)."""
        for answer in self._open_answers:
            answer.unsettled = True

    def hierarchy_methods(self, ref: ClassRef) -> list[FuncRef]:
        """The methods of the class and of its project ancestors (in ``mro`` order) whose flow
        is known."""
        out = []
        for r in self.mro(ref):
            for qual in r.cls.methods.values():
                fn = r.file.functions.get(qual)
                if fn is not None and fn.flow is not None:
                    out.append(FuncRef(r.file, fn))
        return out

    def _mro(self, ref: ClassRef) -> list[ClassRef]:
        """The class and its project bases, depth first, each once (a stack, not a recursive
        closure: one refers to itself, a cycle the paused collector keeps with the model)."""
        out: list[ClassRef] = []
        seen: set = set()
        stack: list[tuple[ClassRef, int]] = [(ref, 0)]
        while stack:
            r, depth = stack.pop()
            if r.key in seen or depth > 20:
                continue
            seen.add(r.key)
            out.append(r)
            stack.extend((base, depth + 1) for base in reversed(self.bases(r)[0]))
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
                result = self._registered_dataset(ref)
            if not result:
                result = any(key != r.key and self.is_dataset(r) for r in self.mro(ref)[1:])
        self._dataset_memo[key] = result
        return result

    def _registered_dataset(self, ref: ClassRef) -> bool:
        """A class put in a dataset registry (``@DATASETS.register_module()``, ``@register_dataset``)
        that serves samples (``__getitem__`` or ``__iter__``): configuration builds it for a loader
        (OpenMMLab, fairseq-style and similar registries), whether or not it subclasses Dataset."""
        for deco in ref.cls.decorators:
            parts = deco.lower().split(".")
            if len(parts) >= 2 and parts[-1] in ("register_module", "register") and "dataset" in parts[-2]:
                break
            if parts[-1] in ("register_dataset", "register_dataset_class"):
                break
        else:
            return False
        return self.find_method(ref, "__getitem__") is not None or self.find_method(ref, "__iter__") is not None

    def is_iterable_dataset(self, ref: ClassRef) -> bool:
        if any(canonical(b) in ITERABLE_BASES for b in self.external_bases(ref)):
            return True
        return self.find_method(ref, "__getitem__") is None and self.find_method(ref, "__iter__") is not None

    def dataset_classes(self) -> list[ClassRef]:
        return [c for c in self.classes() if self.is_dataset(c)]

    def is_loader_class(self, qualname: str, root: str | None, ask: bool = False) -> bool:
        """A DataLoader class (torch's, a library's, a project subclass). Asked quietly, unless
        ``ask`` (planning: the class's file is then wanted when it is not parsed)."""
        qualname = canonical(qualname) or ""
        if qualname in self.loader_classes:
            return True
        with self.quietly(not ask):
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

    def class_of(self, fn: FuncRef) -> ClassRef | None:
        if fn.fn.cls is None:
            return None
        cls = fn.file.classes.get(fn.fn.cls)
        return ClassRef(fn.file, cls) if cls else None


# The model's context managers, as classes: entered about 100,000 times in a cold run of a large
# project (resolutions, the call index, planning's scans), where a generator-based one cost
# several times as much per use.


class _Tracking:
    __slots__ = ("deps", "model")

    def __init__(self, model):
        self.model = model

    def __enter__(self) -> set[str]:
        deps = self.deps = set()
        self.model._deps.append(deps)
        return deps

    def __exit__(self, *exc) -> None:
        stack = self.model._deps
        stack.pop()
        deps = self.deps
        for outer in stack:
            outer.update(deps)


class _Settling(_Tracking):
    """``_Tracking``, and whether the answer met a resolution in progress or the limit of nested
    ones (``Symbols._unsettled``). ``final``: it met neither, nor an unparsed file, and the
    layout bounds the project (its files are known): the run's later planning models take it."""

    __slots__ = ("unsettled",)

    def __enter__(self) -> _Settling:
        self.unsettled = False
        super().__enter__()
        self.model._open_answers.append(self)
        return self

    def __exit__(self, *exc) -> None:
        self.model._open_answers.pop()
        super().__exit__(*exc)

    @property
    def final(self) -> bool:
        return not self.deps and not self.unsettled and self.model.layout.bounded


class _Apart:
    """A computation whose unparsed files the computations asking for it do not meet (its
    caller reports what they should meet: ``Values.call_sites``)."""

    __slots__ = ("model", "saved")

    def __init__(self, model):
        self.model = model

    def __enter__(self) -> None:
        model = self.model
        self.saved = (model._deps, model.__dict__.get("_call_deps"))
        model._deps, model._call_deps = [], []

    def __exit__(self, *exc) -> None:
        model = self.model
        model._deps = self.saved[0]
        model._call_deps = self.saved[1] if self.saved[1] is not None else []


class _Chained:
    __slots__ = ("before", "model", "question")

    def __init__(self, model, question: tuple):
        self.model = model
        self.question = question

    def __enter__(self) -> None:
        self.before = len(self.model.misses)

    def __exit__(self, kind, *exc) -> None:
        # (as the generator it replaces: an exception inside records no chain)
        if kind is None and len(self.model.misses) > self.before:
            self.model.chains.add(self.question)


class _Quietly:
    __slots__ = ("model", "quiet", "saved")

    def __init__(self, model, quiet: bool):
        self.model = model
        self.quiet = quiet

    def __enter__(self) -> None:
        model = self.model
        self.saved = model._quiet
        model._quiet = 1 if self.quiet else 0

    def __exit__(self, *exc) -> None:
        self.model._quiet = self.saved
