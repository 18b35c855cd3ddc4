"""What runs inside a DataLoader worker: one call graph from a Dataset's ``__getitem__`` /
``__getitems__`` / ``__iter__`` / ``__next__`` (and the methods a library base's ``__getitem__``
hands the work to, such as torch_geometric's ``get``), a loader's collate_fn and worker_init_fn, and
the transforms and models a Dataset stores and calls (``self.transform(x)`` reaches the stored
object's ``__call__``, ``self.model(x)`` its ``forward``, ``self.tokenizer.encode(x)`` that
method), across files, ``self.m()`` bound to the concrete class.

Also who runs a function in workers (``worker_uses``): through which Dataset or loader callable,
with which loaders, so rules can tell the start methods the code meets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from dllint.names import OPENMMLAB_ENTRY_METHODS, WORKER_ENTRY_METHODS, canonical, is_openmmlab_dataset
from dllint.program.refs import ClassRef, FuncRef, is_test_path

MAX_REACH_DEPTH = 6
MAX_REACH_NODES = 400

# Library Dataset bases whose own __getitem__ hands the work to a method the user writes.
LIBRARY_ENTRY_METHODS = {
    "torch_geometric.data.Dataset": ("get",),
    "torch_geometric.data.dataset.Dataset": ("get",),
    "torch_geometric.data.InMemoryDataset": ("get",),
    "monai.data.Dataset": ("_transform",),
    "dgl.data.DGLDataset": ("__getitem__",),
    # texar-pytorch's DataIterator hands ``dataset.collate`` to its DataLoader as the collate_fn
    "texar.torch.data.DatasetBase": ("collate",),
    "texar.torch.data.DataBase": ("collate",),
    "texar.torch.data.TextDataBase": ("collate",),
}


def library_entry_methods(base: str) -> tuple[str, ...]:
    """The methods a library Dataset base's ``__getitem__`` calls, which the user writes."""
    found = LIBRARY_ENTRY_METHODS.get(base)
    if found is not None:
        return found
    if is_openmmlab_dataset(base):
        return OPENMMLAB_ENTRY_METHODS
    return ()


@dataclass
class Use:
    """One way a function runs in DataLoader workers."""

    owner: str  # "dataset `Ds`" / "collate_fn `pad`"
    owner_key: tuple  # (path, qualname) of the Dataset class or the callable
    loaders: list = field(default_factory=list)  # loaders that may run it with workers
    no_loader: bool = False  # a Dataset no loader was seen using


class Workers:
    # ------------------------------------------------------------------ the call graph

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
            for target, cls in self._callees_of(fn, self_cls):
                if target.key not in out:
                    frontier.append((target, depth + 1, cls))
        return out

    def constructor_deletes(self, cls: ClassRef) -> frozenset[str]:
        """The attributes ``del self.x`` removes while an instance is built: in its ``__init__``
        or a function that runs (statistics gathered per sample, then dropped before the
        workers start)."""
        init = self.find_method(cls, "__init__")
        if init is None:
            return frozenset()
        out: set[str] = set()
        for fn, _ in self.reachable([init], cls).values():
            if fn.fn.flow is not None:
                out.update(fn.fn.flow.deletes)
        return frozenset(out)

    def _callees_of(self, fn: FuncRef, self_cls: ClassRef | None):
        for call in fn.fn.calls:
            yield from self._call_targets(fn, call.kind, call.target, self_cls)
        flow = fn.fn.flow
        if flow is None:
            return
        facts = fn.file
        # a function a star import binds (``from partition_utils import *``), which the flow
        # names by the module's own name (``called_names``): it runs too
        own = f"{facts.module}." if facts.star_imports else None
        seen: set[str] = set()
        for kind, target, *_ in flow.calls:
            if kind == "attr" and self_cls is not None:
                yield from self._stored_method(self_cls, target[0], target[1])
            elif own is not None and kind == "ref" and target not in seen and target.startswith(own):
                seen.add(target)
                if target not in facts.functions:  # (one of its own: the calls above name it)
                    yield from self._call_targets(fn, "ref", target, self_cls)

    def _call_targets(self, fn: FuncRef, kind: str, target: str, self_cls: ClassRef | None):
        if kind == "self" and self_cls is not None:
            method = self.find_method(self_cls, target)
            if method is not None:
                return [(method, self_cls)]
            return self._stored_callable(self_cls, target)
        if kind == "super" and self_cls is not None:
            owner = self.class_of(fn)
            method = self.find_method(self_cls, target, after=owner) if owner else None
            return [(method, self_cls)] if method else []
        if kind == "ref":
            found = self.resolve(target, fn.file.root)
            if isinstance(found, FuncRef):
                return [(found, self.class_of(found) if found.fn.cls else None)]
            if isinstance(found, ClassRef):
                init = self.find_method(found, "__init__")
                return [(init, found)] if init else []
        return []

    def _stored_callable(self, cls: ClassRef, attr: str):
        """``self.transform(x)``: what the object stored in ``self.transform`` runs when called."""
        out, seen = [], set()
        for v in self._stored_values(cls, attr):
            for m, c in self._callable_targets_of(v):
                if (m.key, c.key if c is not None else None) not in seen:
                    seen.add((m.key, c.key if c is not None else None))
                    out.append((m, c))
        return out

    def _stored_values(self, cls: ClassRef, attr: str) -> list:
        """What ``self.<attr>`` may hold, one value per source: a value keeps one project class,
        so a parameter stored as is (``self.transform = transform``) is taken caller by caller
        (``Images(transform=Train())`` and ``Images(transform=Val())`` both run)."""
        from dllint.program.values import _MISSING, Env, _bind_arg

        values = [self.attr_value(cls, attr, include_workers=True)]
        for fn, write in self.attr_writes(cls, attr, include_workers=True):
            ir = write[1]
            if write[0] != "=" or ir[0] != "p":
                continue
            params = list(fn.fn.params)
            for env, args, kwargs, _row, skip_self in self.call_sites(fn):
                found = _bind_arg(params[1:] if skip_self and params else params, ir[1], args, kwargs, fn.fn.kwonly)
                if found is _MISSING or found is None:
                    continue
                values.append(self.value(found, env))
            default = fn.fn.flow.defaults.get(ir[1]) if fn.fn.flow is not None else None
            if default is not None:
                values.append(self.value(default, Env(fn.file, fn, cls)))
        return values

    def _callable_targets_of(self, v) -> list:
        out = []
        for part in (v, v.elem) if v.elem is not None else (v,):
            if part.fn is not None and part.has("function", "method"):
                out.append((part.fn, part.cls if part.has("method") else self.class_of(part.fn)))
            if part.cls is not None and part.has("instance"):
                m = self.find_method(part.cls, "__call__") or self.find_method(part.cls, "forward")
                if m is not None:
                    out.append((m, part.cls))
        return out

    def _stored_method(self, cls: ClassRef, attr: str, method: str):
        """``self.tokenizer.encode(x)``: the method of the project object stored in the attribute."""
        out, seen = [], set()
        for v in self._stored_values(cls, attr):
            for part in (v, v.elem) if v.elem is not None else (v,):
                if part.cls is not None and part.has("instance"):
                    m = self.find_method(part.cls, method)
                    if m is not None and (m.key, part.cls.key) not in seen:
                        seen.add((m.key, part.cls.key))
                        out.append((m, part.cls))
        return out

    def self_attr_values(self, ref: ClassRef, attr: str) -> list:
        """The per-file value summaries (dllint.model.Value) assigned to ``self.attr`` in the class
        hierarchy (the flow IR and ``attr_value`` say more)."""
        values: list = []
        for r in self.mro(ref):
            for qual in r.cls.methods.values():
                values.extend(r.file.functions[qual].self_writes.get(attr, ()))
        return values

    def worker_functions(self, ref: ClassRef) -> dict[tuple[str, str], tuple[FuncRef, int]]:
        """Code a Dataset class runs inside workers: its entry methods, the methods a library
        base's ``__getitem__`` calls, and what they call (memoized: every worker-code rule asks;
        the unparsed files it met are replayed)."""
        memo = self.__dict__.setdefault("_worker_memo", {})
        found = memo.get(ref.key)
        outermost = self._outermost()
        if found is None:
            with self._tracking() as deps:
                names = list(WORKER_ENTRY_METHODS)
                names.extend(self.library_entries(ref))
                roots = []
                for name in dict.fromkeys(names):
                    m = self.find_method(ref, name)
                    if m is not None:
                        roots.append(m)
                reach = self.reachable(roots, ref)
            found = memo[ref.key] = (reach, frozenset(deps))
        else:
            self._missed(found[1])
        if outermost and found[1]:
            self.chains.add(("worker_functions", ref.key))
        return dict(found[0])

    def library_entries(self, ref: ClassRef) -> list[str]:
        """The methods of the class that its library base's ``__getitem__`` calls (``get`` of a
        PyG dataset, ``get_data_info`` of an OpenMMLab one)."""
        out: list[str] = []
        for base in sorted(self.external_bases(ref)):
            out.extend(library_entry_methods(canonical(base) or base))
        return list(dict.fromkeys(out))

    def in_hierarchy(self, ref: ClassRef):
        """A predicate: is a function a method of this class or of one of its project bases?"""
        own = {r.key for r in self.mro(ref)}

        def member(fn) -> bool:
            cls = self.class_of(fn)
            return cls is not None and cls.key in own

        return member

    def setup_functions(self, ref: ClassRef, init: FuncRef) -> list:
        """The class's own methods run from ``__init__`` (before workers start), worker code excluded."""
        member = self.in_hierarchy(ref)
        workers = set(self.worker_functions(ref))
        return [f for f, _ in self.reachable([init], ref).values() if member(f) and f.key not in workers]

    # ------------------------------------------------------------------ who runs it, with which loaders

    def deciding_loaders(self, ref: ClassRef) -> list:
        """The loaders using a class that say whether it runs with workers: a module's own
        self-test without workers (``if __name__ == "__main__":`` in a package module), or a
        test suite's loader without workers for a class defined outside the tests, does not
        prove the project never uses workers. A class of a module that no analysed file imports
        is that module's own: its ``__main__`` code is how the class is used, so those loaders
        decide (``python -m pkg.eval.run`` defining its Dataset and loaders in one file)."""
        own = not self.importers(ref.file.path) and not self._package_fragment(ref.file)
        root = self.layout.root
        outside_tests = not is_test_path(ref.file.path, root)
        found = [
            ld for ld in (self.for_class(ld, ref) for ld in self.loaders_using(ref))
            if not ((ld.self_test or (outside_tests and is_test_path(ld.file.path, root))) and ld.workers == "no")
            or (own and ld.file.path == ref.file.path)
        ]
        if found and outside_tests:
            # a loader given an instance of a class computed at run time (``dataset.__dict__[
            # cfg.type](**param)``) may be given this one too: a debugging script's loader without
            # workers does not decide alone (PSENet's ``check_dataloader.py`` beside ``train.py``)
            # (one whose classes the model names, ``{"a": A}[key](...)``, gives those only)
            found += [ld for ld in self._named_class_loaders if not ld.datasets and ld not in found]
        return found

    def _package_fragment(self, facts) -> bool:
        """A package module whose relative imports name modules of its package that are not
        there (``from .albu import IsotropicResize`` with no ``albu``): a piece of a package
        whose other modules (the training code importing it) were not given, not a module run
        on its own."""
        if not facts.signals.get("relative_imports"):
            return False
        package = facts.module.rpartition(".")[0]
        if not package:
            return False
        find = self.layout.find
        return any(
            target.startswith(package + ".") and not find(target, facts.root) and not find(target.rpartition(".")[0], facts.root)
            for target in facts.imports.values()
        )

    def script_only(self, ref: ClassRef) -> bool:
        """A class defined in an entry script (it has ``if __name__ == "__main__":``) that no project
        file imports and no loader uses, and that the script itself builds: the script indexes it
        in its own process, so nothing hands it to DataLoader workers (``tools/demo.py``-style
        classes)."""
        facts = ref.file
        if facts.main_guard is None or self.loaders_using(ref) or self.importers(facts.path):
            return False
        # and the script builds it itself (a name rebound by an import builds another class),
        # keeping each instance to itself: one handed to a library (a trainer: its loader has
        # workers), returned or stored goes where the script does not show
        built, _called = self._built_and_called()
        sites = [site for site in built.get(ref.key, ()) if site[0] is facts]
        with self.quietly():
            return bool(sites) and not any(self._handed_on(*site) for site in sites)

    @cached_property
    def _runtime_class_loaders(self) -> list:
        return self._loaders_of_runtime_classes(False)

    @cached_property
    def _named_class_loaders(self) -> list:
        """The loaders given an instance of a class looked up by name at run time, in the
        strict sense: a registry's entry, ``getattr(module, name)``, a class-importing helper's
        result (``import_class(name)(...)``), also returned by a project function."""
        return self._loaders_of_runtime_classes(True)

    def _loaders_of_runtime_classes(self, strict: bool) -> list:
        """The loaders given an instance of a class the code computes at run time: ``Feeder =
        import_class(cfg.feeder)`` then ``DataLoader(dataset=Feeder(**args))``,
        ``getattr(datasets, name)(root)``, ``DATASETS[name](root)``. Any project Dataset may be
        the one it builds (the helper that imports by name may be out of sight)."""
        out = []
        for loader in self.loaders:
            ir = loader.call.args_ir.get("dataset")
            flow = self._call_env(loader.file, loader.call).flow if ir is not None else None

            def callee_flow(name, root=loader.file.root):
                with self.quietly():
                    found = self.resolve(name, root)
                return found.fn.flow if isinstance(found, FuncRef) and found.fn.cls is None else None

            if flow is not None and _runtime_class_instance(ir, flow, 0, callee_flow if strict else None, strict):
                out.append(loader)
        return out

    @property
    def _loader_builds_runtime_class(self) -> bool:
        return bool(self._runtime_class_loaders)

    def kept_in_main_process(self, ref: ClassRef) -> bool:
        """A class no loader uses whose every instance the project builds outside its test suite
        is kept by the function building it: assigned to a name that is indexed, measured, walked
        or given to project functions there, never returned, stored or handed to a library
        (pifuhd's ``recon.py``: ``test_dataset = EvalDataset(opt)``, then ``test_dataset[i]``).
        Not in a distributable package (``Settings.packaged``: its users build its classes too,
        with loaders the project does not show), nor a class registered for configuration (a
        decorator), in a project that imports classes by name (``importlib.import_module``,
        ``__import__``, Hydra's ``instantiate``: ST-GCN's ``import_class(cfg.feeder)``) or whose loader
        builds a class computed at run time (the helper importing by name out of sight), one whose
        methods code outside it calls through the class (``Cls.from_config(...)``: an
        alternative constructor), or one built nowhere outside the tests (a library's class: its
        users' loaders are the common case). A module variable counts as kept only in an entry
        script that nothing imports, and only while none of its functions reads it."""
        if self.settings.packaged or self.loaders_using(ref) or ref.cls.decorators or ref.cls.local:
            return False
        if any(f.signals.get("dynamic_imports") for f in self.files.values()) or self._loader_builds_runtime_class:
            return False  # classes built from names in configuration: not every construction is seen
        built, called = self._built_and_called()
        root = self.layout.root
        sites = [site for site in built.get(ref.key, ()) if not is_test_path(site[0].path, root)]
        if not sites or any((ref.file.path, q) in called for q in ref.cls.methods.values()):
            return False
        with self.quietly():
            return not any(self._handed_on(*site, assigned=True) for site in sites)

    def _built_and_called(self) -> tuple[dict, set]:
        """({class key: [(facts, scope, flow, callee name, row)] of the calls building it by name},
        {keys of the project functions called by name outside their own class, outside the test
        suite}): one pass over the calls, for ``script_only`` and ``kept_in_main_process``."""
        found = self.__dict__.get("_built_called_memo")
        if found is not None:
            return found
        built: dict = {}
        called: set = set()
        root = self.layout.root
        with self.quietly():
            for facts in self.files.values():
                test = is_test_path(facts.path, root)
                for fn in (None, *facts.functions.values()):
                    flow = facts.flow if fn is None else fn.flow
                    scope = facts.module if fn is None else fn.qualname
                    for kind, target, _args, _kwargs, row in flow.calls if flow is not None else ():
                        if kind != "ref":
                            continue
                        found_ref = self.resolve(target, facts.root)
                        if isinstance(found_ref, ClassRef):
                            built.setdefault(found_ref.key, []).append((facts, scope, flow, target, row))
                        elif not test and isinstance(found_ref, FuncRef) and found_ref.fn.cls is not None and (fn is None or fn.cls != found_ref.fn.cls):
                            called.add(found_ref.key)
                    # ``{"voc": VOCSegments, "coco": CocoSegments}[args.dataset](root)``: each class of
                    # the table is built there
                    for values in flow.locals.values() if flow is not None else ():
                        for value in values:
                            for target in _table_classes(value):
                                found_ref = self.resolve(target, facts.root)
                                if isinstance(found_ref, ClassRef):
                                    built.setdefault(found_ref.key, []).append((facts, scope, flow, target, value[-1]))
        if self.settled:
            self.__dict__["_built_called_memo"] = (built, called)
        return built, called

    def _handed_on(self, facts, scope, flow, target, row, assigned: bool = False) -> bool:
        """Whether the instance a construction builds may leave the function: a name it is
        assigned to is returned, stored, rebound or passed to a call that is not a project
        function. ``assigned``: a construction not assigned to a plain name counts as handed on
        (``train(Images(root))``, ``self.ds = Images(root)``)."""
        built_here = ("c", ("g", target))
        names = [
            n for n, values in flow.locals.items()
            if any(isinstance(v, tuple) and v and v[-1] == row and (v[:2] == built_here or target in _table_classes(v)) for v in values)
        ]
        if assigned and not names:
            return True
        if assigned and scope == facts.module and (facts.main_guard is None or self.importers(facts.path)):
            return True  # a module variable other modules may import (``from data import train_set``)
        fates = facts.signals.get("local_fates", {})
        for name in names:
            handed, callees = fates.get(scope, {}).get(name, (False, ()))
            if handed or any(not isinstance(self.resolve(c, facts.root), FuncRef) for c in callees):
                return True
        return False

    @cached_property
    def never_starts_workers(self) -> bool:
        """The project never starts DataLoader workers: it builds loaders, every one of them with
        ``num_workers`` left at its default 0, and no project file's code names workers at all (no
        ``num_workers`` keyword, variable, option, config key or ``worker_init_fn``; parsed or
        not). Then a Dataset that reaches its loaders unseen (unpickled, built by a registry) runs
        in the main process too. Only a whole-project view can say so: the engine analyses such a
        project whole even from a named file."""
        if self.project_names_workers or not self.loaders:
            return False
        return all(ld.workers == "no" for ld in self.loaders)

    def dataset_use(self, ref: ClassRef) -> Use | None:
        """How a Dataset class runs in workers; None when every loader using it has no workers."""
        loaders = self.deciding_loaders(ref)
        active = [ld for ld in loaders if ld.may_start_workers]
        if loaders and not active:
            return None  # every loader using it runs in the main process
        if not loaders and self.never_starts_workers:
            return None
        return Use(f"dataset `{ref.cls.name}`", ref.key, active, not loaders)

    def worker_uses(self) -> dict[tuple[str, str], list[Use]]:
        """Function key -> how it runs in workers: through a Dataset class (its entry methods and
        what they call) or through a loader's collate_fn / worker_init_fn. A Dataset whose every
        loader provably has no workers contributes nothing. Computed once."""
        found = self.__dict__.get("_worker_uses")
        if found is not None:
            return found
        out: dict[tuple[str, str], list[Use]] = {}
        for ref in self.dataset_classes():
            use = self.dataset_use(ref)
            if use is None:
                continue
            for key in self.worker_functions(ref):
                out.setdefault(key, []).append(use)
        for loader in self.loaders:
            if not loader.may_start_workers:
                continue
            for arg, targets in self.loader_callables(loader).items():
                for target in targets:
                    use = Use(f"{arg} `{target.fn.name}`", target.key, [loader])
                    for key in self.reachable([target]):
                        out.setdefault(key, []).append(use)
        self.__dict__["_worker_uses"] = out
        return out

    def proven_without_workers(self, ref: ClassRef) -> bool:
        """True when some loader uses the class and every one of them starts no workers."""
        loaders = self.deciding_loaders(ref)
        return bool(loaders) and all(ld.workers == "no" for ld in loaders)

    def worker_loaders(self, ref: ClassRef) -> list:
        return [ld for ld in self.loaders_using(ref) if ld.may_start_workers]

    def start_methods_for(self, ref: ClassRef, loaders=None) -> frozenset[str]:
        """Start methods workers of this class may get: from the loaders that use it, else the
        start method the class's own file (or the scripts importing it) sets, else the defaults."""
        loaders = self.worker_loaders(ref) if loaders is None else loaders
        methods: set[str] = set()
        for ld in loaders:
            methods |= ld.start_methods
        if not methods:
            methods = set(self.global_start_methods(ref.file))
        return frozenset(methods)

    @staticmethod
    def start_methods_of(uses: list[Use]) -> set[str]:
        methods: set[str] = set()
        for use in uses:
            for loader in use.loaders:
                methods.update(loader.start_methods)
        return methods

    def fork_severity(self, uses: list[Use]) -> str | None:
        """error when a loader running the code may start its workers with fork, warning for
        spawn/forkserver, info when no loader with workers was seen."""
        if any(use.loaders for use in uses):
            return "error" if "fork" in self.start_methods_of(uses) else "warning"
        if any(use.no_loader for use in uses):
            return "info"
        return None

    @staticmethod
    def owners(uses: list[Use]) -> str:
        names = sorted({u.owner for u in uses})
        return names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"


def _runtime_class_instance(ir, flow, depth: int = 0, callee_flow=None, strict: bool = False) -> bool:
    """``ir`` (in ``flow``) builds an instance of a class computed at run time: a call of a call's
    result or of a subscript (``import_class(name)(...)``, ``REGISTRY[name](...)``), also through
    locals (``Feeder = import_class(name)``; ``ds = Feeder(...)``) and the returns of a project
    function called so (``build_data_loader(cfg)`` returning ``dataset.__dict__[cfg.type](**param)``;
    ``callee_flow``: the flow of the project function a qualified name names, or None)."""
    if not isinstance(ir, tuple) or not ir or depth > 3:
        return False
    if ir[0] == "n":
        return any(_runtime_class_instance(v, flow, depth + 1, callee_flow, strict) for v in flow.locals.get(ir[1], ()))
    if ir[0] != "c":
        return False
    callee = ir[1]
    if callee[0] in ("c", "i"):
        return True
    if callee[0] == "g" and callee_flow is not None:
        inner = callee_flow(callee[1])
        return inner is not None and any(_runtime_class_instance(r, inner, depth + 1, callee_flow, strict) for r in inner.returns)
    if callee[0] == "n":
        values = flow.locals.get(callee[1], ())
        if strict:
            # a class looked up by name (``Feeder = DATASETS[name]``, ``getattr(module, name)``),
            # not any object made by a call (``transform = AddReverse()``, then ``transform(g)``)
            return bool(values) and all(
                isinstance(v, tuple) and v and (v[0] == "i" or (v[0] == "c" and v[1] == ("g", "builtins.getattr")))
                for v in values
            )
        return bool(values) and all(isinstance(v, tuple) and v and v[0] in ("c", "i") for v in values)
    return False


def _table_classes(ir) -> tuple:
    """The names a call of an entry of a literal dict of names builds (``{"a": A, "b": B}[key](...)``)."""
    if not (isinstance(ir, tuple) and len(ir) >= 3 and ir[0] == "c" and isinstance(ir[1], tuple) and ir[1][:1] == ("i",)):
        return ()
    table = ir[1][1]
    if not (isinstance(table, tuple) and table[:1] == ("D",) and len(table) >= 2):
        return ()
    return tuple(v[1] for _k, v in table[1] if isinstance(v, tuple) and v[:1] == ("g",))
