"""Loader facts, once per loader: every DataLoader construction with the Dataset classes that flow
into it, its worker count, its start methods, its collate_fn and worker_init_fn; and the start
method in force for a file (its own ``set_start_method``, the entry scripts importing it, or the
targets' default).
"""

from __future__ import annotations

import re
import weakref
from dataclasses import replace
from functools import cached_property, partial

from dllint.facts.context import resolve_relative
from dllint.model import FileFacts, LoaderCall, Span, Value
from dllint.names import CLICK_OPTIONS, DATALOADER_PARAMS, DATALOADER_POSITIONAL, DATASET_WRAPPERS, GET_CONTEXT, START_METHODS, canonical
from dllint.program.layout import script_root
from dllint.program.refs import ClassRef, FuncRef, Loader
from dllint.program.values import _MISSING, Env, _bind_arg


OPTION_READ = re.compile(r"(?:int\()?(?:self\.)?([A-Za-z_]\w*)\.([A-Za-z_]\w*)\)?")
# a receiver named as a configuration object (OmegaConf, yacs, a dataclass): not a namespace of
# command-line options (``data_cfg.num_workers``, ``self.config.workers``)
CONFIG_RECEIVER = re.compile(r"cfg|conf", re.IGNORECASE)


MAX_HELPER_SITES = 64  # a loader helper called more often keeps its own verdict (``for_class``)
# where a file the analysis did not parse has its ``if __name__ == "__main__":`` (its bytes say it
# has one, not where: ``importers_through``)
_ENTRY = Span(1, 1, 1, 1)
# decorators that leave a function's calls as written
PLAIN_DECORATORS = frozenset({"builtins.staticmethod", "builtins.classmethod", "staticmethod", "classmethod"})


def option_read(loader: Loader, alt: Value) -> str | None:
    """The command-line option a loader's worker count reads: an attribute of a flat namespace
    (``args.workers``, ``int(opt.n_threads)``, ``self.args.num_workers``; not a nested config
    such as ``cfg.data.workers``, nor a receiver named as a config: ``data_cfg.num_workers``),
    or a parameter of a click command (``@click.option("--num-workers")`` filling
    ``num_workers``)."""
    text = alt.text or ""
    match = OPTION_READ.fullmatch(text)
    if match is not None and text.startswith("int(") == text.endswith(")"):
        return None if CONFIG_RECEIVER.search(match.group(1)) else match.group(2)
    if alt.kind == "param" and alt.ref:
        fn = loader.file.functions.get(loader.call.scope or "")
        if fn is not None and CLICK_OPTIONS & set(fn.decorators):
            return alt.ref
    return None


def _forwards_kwargs(fn, call: LoaderCall) -> bool:
    """The loader call passes on its function's own ``**kwargs`` (``def get_dataloader(ds,
    **kwargs): return DataLoader(ds, **kwargs)``), not a named parameter holding a dict."""
    splat = call.args_ir.get("**")
    return isinstance(splat, tuple) and splat[:1] == ("p",) and splat[1] not in fn.params


def _forwarded_count(kwargs):
    """The ``num_workers`` a call's keywords hand to a function forwarding ``**kwargs``: 0 when
    they do not name it, its literal, or None (not a literal, or a ``**`` at the call hides it)."""
    if any(k is None for k, _ in kwargs):
        return None
    passed = next((v for k, v in kwargs if k == "num_workers"), None)
    return 0 if passed is None else passed[1] if passed[0] == "k" else None


class _Importers:
    """The files importing a file directly or through others, over a reverse import graph
    (``rev``: path -> the files importing it), as bit masks over the graph's files in path order
    (``decoded`` gives them back in that order). A model asks it of every file building a
    loader (NeMo: about 115 per planning model, most reached by a thousand files): each query
    walked the graph again; now each strongly connected part of the graph is walked once per
    model (Tarjan's algorithm, from the files asked about), its closure kept, and a question
    such as "which of them set a start method" reads only the files it needs (``mask``)."""

    __slots__ = ("_direct", "_index", "_masks", "_memo", "facts", "rev")

    def __init__(self, rev: dict[str, list[FileFacts]]):
        by_path: dict[str, FileFacts] = {}
        for importers in rev.values():
            for f in importers:
                by_path[f.path] = f
        order = sorted(set(rev) | set(by_path))
        self._index = {p: i for i, p in enumerate(order)}
        self.facts = [by_path.get(p) for p in order]
        self.rev = rev
        self._memo: dict[str, int] = {}  # path -> the closure of its strongly connected part
        self._direct: dict[str, int] = {}
        self._masks: dict[str, int] = {}

    def bit(self, path: str) -> int:
        i = self._index.get(path)
        return 1 << i if i is not None else 0

    def mask(self, name: str, test) -> int:
        """The files of the graph passing ``test`` (memoized by ``name``)."""
        found = self._masks.get(name)
        if found is None:
            found = 0
            for i, f in enumerate(self.facts):
                if f is not None and test(f):
                    found |= 1 << i
            self._masks[name] = found
        return found

    def decoded(self, mask: int) -> list[FileFacts]:
        out = []
        while mask:
            low = mask & -mask
            out.append(self.facts[low.bit_length() - 1])
            mask ^= low
        return out

    def direct(self, path: str) -> int:
        """The files importing ``path`` themselves."""
        found = self._direct.get(path)
        if found is None:
            found = 0
            for f in self.rev.get(path, ()):
                found |= self.bit(f.path)
            self._direct[path] = found
        return found

    def of(self, path: str) -> int:
        """The files importing ``path`` directly or through others (``path`` itself left out)."""
        memo = self._memo
        if path not in memo:
            self._walk(path)
        return memo[path] & ~self.bit(path)

    def _walk(self, start: str) -> None:
        rev, memo = self.rev, self._memo
        index = {start: 0}
        low = {start: 0}
        stack, on = [start], {start}
        work = [(start, iter(rev.get(start, ())))]
        while work:
            v, it = work[-1]
            for f in it:
                w = f.path
                if w in memo:
                    continue  # (its part was closed in an earlier walk)
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(rev.get(w, ()))))
                    break
                if w in on and index[w] < low[v]:
                    low[v] = index[w]
            else:
                work.pop()
                if work and low[v] < low[work[-1][0]]:
                    low[work[-1][0]] = low[v]
                if low[v] == index[v]:  # v closes a strongly connected part: its closure
                    members = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        members.append(w)
                        if w == v:
                            break
                    inside = set(members)
                    mask = 0
                    for m in members:
                        for f in rev.get(m, ()):
                            mask |= self.bit(f.path)
                            if f.path not in inside:
                                mask |= memo[f.path]
                    for m in members:
                        memo[m] = mask


def _sets_start_method(facts: FileFacts) -> bool:
    return bool(facts.start_methods)


def _is_entry(facts: FileFacts) -> bool:
    """An entry script: a module with a ``__main__`` guard."""
    return facts.main_guard is not None


def _count_verdict(counts) -> str:
    """"no" / "yes" when every worker count a loader may get is a known int <= 0 / > 0 (None or
    anything else: not known), else "maybe"."""
    verdicts = {
        "maybe" if not isinstance(c, int) or isinstance(c, bool) else "no" if c <= 0 else "yes"
        for c in counts
    }
    return verdicts.pop() if len(verdicts) == 1 else "maybe"


def _start_methods_in(model_ref, facts: FileFacts) -> frozenset[str]:
    """``Loaders.global_start_methods`` of a loader's model (``Loader.start_methods``)."""
    model = model_ref()
    if model is None:
        raise RuntimeError("a loader's start methods asked after its model was freed")
    return model.global_start_methods(facts)


class Loaders:
    @cached_property
    def loaders(self) -> list[Loader]:
        out: list[Loader] = []
        # what a loader is given may reach unparsed files (a Dataset returned by a helper in
        # another file, which calls one in a third): the planner follows it link by link
        # (``chase``) instead of a round of demands per link; a loader's arguments matter,
        # wherever it is first asked for (loudly)
        with self._chained(("loaders",)), self.quietly(False):
            for facts in self.files.values():
                for call in facts.loaders:
                    if not self.is_loader_class(call.callee, facts.root):
                        continue
                    out.append(self._loader(facts, self._own_signature(facts, call)))
        return out

    def _own_signature(self, facts: FileFacts, call: LoaderCall) -> LoaderCall:
        """The call with the DataLoader arguments it passes by position named by the project
        subclass's own ``__init__`` where that takes them in other places than torch's
        DataLoader (``def __init__(self, dataset, batch_size, shuffle, num_workers)``: the fourth
        is the worker count, not a sampler). Only a position whose own parameter is named as a
        DataLoader parameter is read again (``def __init__(self, local_rank, **kwargs)`` called
        ``X(rank, dataset=ds)`` passes no dataset by position); where the positions cannot be
        told (``*args``, more arguments than named parameters) the call is left as recorded."""
        if not call.positional or canonical(call.callee) in self.loader_classes:
            return call
        with self.quietly():
            ref = self.resolve_class(call.callee, facts.root)
            init = self.find_method(ref, "__init__") if ref is not None else None
        if init is None:
            return call
        params = init.fn.params[: len(init.fn.params) - init.fn.kwonly]
        params = params[1:] if init.fn.cls is not None and params else params  # (self)
        given = DATALOADER_POSITIONAL[: call.positional]
        if call.positional > len(params):
            return call
        moved = [(old, new) for old, new in zip(given, params) if old != new and new in DATALOADER_PARAMS and old in call.args]
        if not moved:
            return call
        args, args_ir = dict(call.args), dict(call.args_ir)
        for old, _new in moved:
            if old not in params:
                args.pop(old, None)
                args_ir.pop(old, None)
        for old, new in moved:
            args[new] = call.args[old]
            if old in call.args_ir:
                args_ir[new] = call.args_ir[old]
        return replace(call, args=args, args_ir=args_ir)

    def loaders_in(self, path: str) -> list[Loader]:
        """The loaders built in one file (rules ask per loop and per call: not a scan each time)."""
        by_path = self.__dict__.get("_loaders_by_path")
        if by_path is None:
            by_path = self.__dict__["_loaders_by_path"] = {}
            for loader in self.loaders:
                by_path.setdefault(loader.file.path, []).append(loader)
        return by_path.get(path, [])

    @cached_property
    def library_loaders(self) -> list[Loader]:
        """The DataLoaders a library function builds from a dataset and a worker count
        (``flashy.distrib.loader(dataset, batch_size=16, num_workers=8)``, ``create_loader(...)``):
        a call of a name outside the project, not a DataLoader class, named as a loader, given
        ``num_workers`` and a dataset. They tell which classes a loader serves and with how many
        workers (``loaders_using``); not among ``loaders``, whose calls rules check and fix as
        torch's DataLoader."""
        out: list[Loader] = []
        with self.quietly(False):
            for facts in self.files.values():
                for call in facts.loaders:
                    if self._library_loader(facts, call):
                        out.append(self._loader(facts, call))
        return out

    def _library_loader(self, facts: FileFacts, call: LoaderCall) -> bool:
        if "num_workers" not in call.args or "dataset" not in call.args:
            return False
        if "loader" not in call.callee.rpartition(".")[2].lower() or self.is_loader_class(call.callee, facts.root):
            return False
        with self.quietly():  # (a project name: not a library's, whether its file is parsed or not)
            return isinstance(self.resolve(call.callee, facts.root), str)

    @cached_property
    def _used_as_dataset(self) -> set[tuple[str, str]]:
        keys: set[tuple[str, str]] = set()
        # what a loader is given matters (loudly), and is followed link by link as well when it
        # meets unparsed files (``loaders``)
        with self._chained(("used_as_dataset",)), self.quietly(False):
            for facts in self.files.values():
                for call in facts.loaders:
                    if not self.is_loader_class(call.callee, facts.root) and not self._library_loader(facts, call):
                        continue
                    for ref in self._dataset_refs(facts, call)[0]:
                        serves = self.find_method(ref, "__getitem__") or self.find_method(ref, "__iter__")
                        if serves:
                            keys.add(ref.key)
                            # the project base that serves the samples (a duck-typed base with
                            # ``__getitem__``, not a torch Dataset): its other subclasses are
                            # Datasets too (``datasets.__dict__[name](...)`` builds them)
                            base = self.class_of(serves)
                            if base is not None:
                                keys.add(base.key)
        return keys

    def _dataset_refs(self, facts: FileFacts, call: LoaderCall) -> tuple[list[ClassRef], list[str]]:
        value = call.args.get("dataset")
        if value is None:
            return [], []
        project: list[ClassRef] = []
        external: list[str] = []
        traced: list[ClassRef] = []  # what the values model traces from the argument, asked once

        def follow() -> list[ClassRef]:
            if not traced:
                traced.append(self.instance_classes(call.args_ir["dataset"], self._call_env(facts, call)))
            return traced[0]

        for alt in self.expand(value, facts):
            # ``Subset(ds, idx)``, ``ConcatDataset([a, b])``: the wrapped datasets serve the samples
            wrapper = alt.kind == "call" and bool(alt.ref) and canonical(alt.ref) in DATASET_WRAPPERS
            if alt.kind == "call" and alt.ref and not (wrapper and call.args_ir.get("dataset") is not None):
                found = self.resolve(alt.ref, facts.root)
                if isinstance(found, ClassRef):
                    project.append(found)
                elif isinstance(found, str):
                    external.append(found)
            elif alt.kind == "param" and alt.ref and call.args_ir.get("dataset") != ("self",):
                project.extend(self._passed_datasets(facts, call.scope, alt.ref))
                ir = call.args_ir.get("dataset")
                if ir == ("p", alt.ref) or (isinstance(ir, tuple) and ir[:1] in (("s",), ("a",))):
                    # each caller's classes kept apart (a join keeps one): ``BatchLoader(corpus.train)``
                    # of a subclass whose ``__init__`` hands ``dataset`` to its base; a trainer's
                    # ``self.train_set``, the parameter its constructor stored (``_passed_datasets``
                    # asks the loader's own function, which has no such parameter)
                    project.extend(follow())
            elif (wrapper or alt.kind in ("unknown", "param") or (alt.kind == "call" and not alt.ref)) and call.args_ir.get("dataset") is not None:
                # (``DataLoader(dataset=self)`` in a method: the class's own instances)
                # a wrapper's attribute, a registry, a factory's result: the values model follows it
                project.extend(follow())
            elif alt.kind == "subset" and alt.options:
                # ``dataset[train_idx]`` of a PyG dataset: a dataset of the same class
                for base in self.expand(alt.options[0], facts):
                    found = self.resolve(base.ref, facts.root) if base.kind == "call" and base.ref else None
                    if isinstance(found, ClassRef) and any(b.startswith("torch_geometric.") for b in self.external_bases(found)):
                        project.append(found)
                if call.args_ir.get("dataset") is not None:
                    # ``self.datasets[split]`` of a dict filled with ``self.datasets[s] = Lines(...)``
                    project.extend(follow())
        return list({ref.key: ref for ref in project}.values()), external

    def _call_env(self, facts: FileFacts, call: LoaderCall) -> Env:
        """The environment a loader call's arguments are evaluated in: its function and class."""
        fn = facts.functions.get(call.scope)
        fnref = self._funcref(facts, fn) if fn is not None else None
        return Env(facts, fnref, self.class_of(fnref) if fnref is not None else None)

    def _passed_datasets(self, facts: FileFacts, scope: str, name: str) -> list[ClassRef]:
        """The project classes whose instances the callers of ``scope`` pass as its parameter
        ``name`` (``def fit(dataset): DataLoader(dataset, ...)`` called as ``fit(Images(...))``)."""
        fn = facts.functions.get(scope)
        if fn is None or name not in fn.params:
            return []
        got = self.param_value(self._funcref(facts, fn), name)
        if got.has("instance") and isinstance(got.cls, ClassRef):
            return [got.cls]
        return []

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
            return self._forwarded_workers(facts, call) if call.unresolved_kwargs else "no"
        counts: list = []
        for alt in value.alternatives():
            if alt.kind == "param" and alt.ref:
                counts.extend(self._parameter_counts(facts, call, alt.ref))
            else:
                counts.append(self._written_count(alt, facts))
        return _count_verdict(counts)

    def _parameter_counts(self, facts: FileFacts, call: LoaderCall, name: str) -> list:
        """The worker counts a parameter brings (``num_workers=num_workers`` in a helper, or
        ``num_workers=self.num_worker`` stored by a trainer's constructor): its literal default
        where a call site leaves it out, the literal each site passes; [None] (not known) when
        a site passes anything else or no call site is seen."""
        source = self._param_source(facts, facts.functions.get(call.scope), call.args_ir.get("num_workers"))
        if source is None or source[1] != name:
            return [None]
        owner, _ = source
        sites = self.call_sites(owner)
        if not sites:
            return [None]
        params = list(owner.fn.params)
        return [_passed_count(owner.fn, params[1:] if skip_self and params else params, name, args, kwargs) for _e, args, kwargs, _r, skip_self in sites]

    def workers_parameter(self, loader: Loader) -> FuncRef | None:
        """The function whose parameter gives ``loader`` its worker count (``def get_loader(root,
        num_workers=0): DataLoader(..., num_workers=num_workers)``): its callers decide it."""
        facts = loader.file
        source = self._param_source(facts, facts.functions.get(loader.call.scope), loader.call.args_ir.get("num_workers"))
        return source[0] if source is not None else None

    def _param_source(self, facts: FileFacts, fn, ir):
        """(function, parameter) whose argument a loader argument ``ir`` is, in the loader's
        function ``fn``: its own parameter, or an attribute of its class that one constructor
        (or other method) stores from its parameter and nothing else writes (a trainer's
        ``self.train_set``); None otherwise."""
        if fn is None or fn.flow is None or not isinstance(ir, tuple):
            return None
        if ir[:1] == ("p",):
            if any(d not in PLAIN_DECORATORS for d in fn.decorators):
                return None  # (``@configurable(from_config=...)`` rewrites its calls' arguments)
            return (self._funcref(facts, fn), ir[1]) if ir[1] in fn.params else None
        if ir[:1] != ("s",):
            return None
        cls = self.class_of(self._funcref(facts, fn))
        writes = self.attr_writes(cls, ir[1]) if cls is not None else []
        if len(writes) != 1:
            return None
        owner, write = writes[0]
        stored = write[1]
        if write[0] != "=" or not (isinstance(stored, tuple) and stored[:1] == ("p",)) or owner.fn.flow is None:
            return None
        if any(d not in PLAIN_DECORATORS for d in owner.fn.decorators):
            return None
        return (owner, stored[1]) if stored[1] in owner.fn.params else None

    def _written_count(self, alt: Value, facts: FileFacts):
        """A worker count written in the code: a literal, or a module constant (None: neither)."""
        if alt.kind == "const":
            return alt.const
        if alt.kind == "ref":
            c = self.constant(alt, facts.root)
            return c.const if c is not None else None
        return None

    def _forwarded_workers(self, facts: FileFacts, call: LoaderCall) -> str:
        """The worker count of ``DataLoader(ds, **kwargs)`` in a function that forwards its own
        ``**kwargs`` (``def get_dataloader(ds, **kwargs)``): what its call sites pass, "no" when
        none of them passes ``num_workers``; "maybe" when a site's keywords are not all seen or
        no call site is."""
        fn = facts.functions.get(call.scope)
        if fn is None or not _forwards_kwargs(fn, call):
            return "maybe"  # (a named parameter holding a dict: its callers pass it whole)
        sites = self.call_sites(self._funcref(facts, fn))
        if not sites:
            return "maybe"
        return _count_verdict(_forwarded_count(kwargs) for _env, _args, kwargs, _row, _skip in sites)

    def for_class(self, loader: Loader, ref: ClassRef) -> Loader:
        """The loader as the instances of ``ref`` meet it. A loader helper (``def
        make_loader(dataset, workers): return DataLoader(dataset, num_workers=workers)``, or one
        forwarding ``**kwargs``) gets its dataset and its worker count from each call: the count is
        then what the calls passing a ``ref`` instance pass (``make_loader(Eval(...), 0)`` starts
        no workers for ``Eval`` whatever ``make_loader(Train(...), 8)`` does). The loader itself
        when its call is not such a helper's, or a call cannot be matched."""
        call = loader.call
        dataset = call.args_ir.get("dataset")
        scope = loader.file.functions.get(call.scope)
        source = self._param_source(loader.file, scope, dataset)
        if source is None:
            return loader
        fnref, dataset_param = source
        fn = fnref.fn
        count = call.args_ir.get("num_workers")
        if count is not None:
            counted = self._param_source(loader.file, scope, count)
            if counted is None or counted[0].key != fnref.key:
                return loader
            by_name = counted[1]
        else:
            if fn is not scope or not (call.unresolved_kwargs and _forwards_kwargs(fn, call)):
                return loader
            by_name = None  # through the helper's **kwargs
        wanted = {ref.key, *(c.key for c in self.subclasses_of(ref))}
        sites = self.call_sites(fnref)
        if len(sites) > MAX_HELPER_SITES:
            return loader
        counts = []
        for env, args, kwargs, _row, skip_self in sites:
            params = list(fn.params[1:] if skip_self and fn.params else fn.params)
            passed = _bind_arg(params, dataset_param, args, kwargs, fn.kwonly)
            if passed is None:
                return loader  # (``*args`` / ``**kw`` at a call: which dataset it passes is unseen)
            if passed is _MISSING or not any(c.key in wanted for c in self.instance_classes(passed, env)):
                continue
            if by_name is None:
                counts.append(_forwarded_count(kwargs))
                continue
            counts.append(_passed_count(fn, params, by_name, args, kwargs))
        if not counts:
            return loader
        workers = _count_verdict(counts)
        return loader if workers == loader.workers else replace(loader, workers=workers)

    @cached_property
    def _cli_options(self) -> tuple[dict[str, set], frozenset[str], bool]:
        """The project's command-line options (dllint/facts/starts.py ``cli_option_defaults``):
        option -> the defaults its declarations give (None: not a literal int), the option names
        some file assigns on a namespace, and whether a file updates a namespace wholesale
        (``vars(args).update(config)``: every option's default is then undecided)."""
        options: dict[str, set] = {}
        stores: set[str] = set()
        bulk = False
        for facts in self.files.values():
            found = facts.signals.get("cli_options")
            if not found:
                continue
            for dest, default in found["options"].items():
                options.setdefault(dest, set()).add(default)
            stores.update(found["stores"])
            bulk = bulk or found["bulk"]
        return options, frozenset(stores), bulk

    def cli_default(self, option: str, facts: FileFacts | None = None) -> int | None:
        """The value of a command-line option when the program runs with its defaults: the
        declaration in ``facts`` (the file reading the option: its own parser), unless that file
        assigns the option or updates its namespace wholesale (a namespace of another program's
        parser, assigned elsewhere, is not this one); else every declaration of it in the
        project, when they give the same int and no code assigns it; else None."""
        own = facts.signals.get("cli_options") if facts is not None else None
        if own and option in own["options"]:
            if own["bulk"] or option in own["stores"]:
                return None
            return own["options"][option]
        options, stores, bulk = self._cli_options
        if bulk or option in stores:
            return None
        found = options.get(option)
        if not found or len(found) != 1:
            return None
        return next(iter(found))

    def default_workers(self, loader: Loader) -> str:
        """``loader.workers`` when the program runs with its command-line defaults: a count read
        from a flat option namespace (``args.workers``, ``int(opt.n_threads)``,
        ``self.args.num_workers``) takes the option's default (``cli_default``: its own file's
        parser, else the project's declarations)."""
        if loader.workers != "maybe" or loader.call.unresolved_kwargs:
            return loader.workers
        value = loader.call.args.get("num_workers")
        if value is None:
            return loader.workers
        counts = []
        for alt in value.alternatives():
            const = self._written_count(alt, loader.file)
            if const is None:
                option = option_read(loader, alt)
                const = self.cli_default(option, loader.file) if option else None
            counts.append(const)
        return _count_verdict(counts)

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
        methods = frozenset({context}) if context is not None else self.loader_start_methods(facts)
        project, external = self._dataset_refs(facts, call)
        return Loader(facts, call, workers, context, methods, project, external)

    def loader_start_methods(self, facts: FileFacts):
        """``Loader.methods`` of a loader built in ``facts`` with no context of its own: the start
        methods in force there (``global_start_methods``). A planning model builds its loaders and
        asks none their start methods (which entry scripts reach a loader's file, and what they
        set, are the rules' questions): there, a function computing them if asked (NeMo, a cold
        run: 0.3 -> 0.1 s), through a weak reference: a loader referring to its model would keep
        each planning model, its loaders and memos, alive until the run ends (the cyclic
        collector is paused); ``ProgramModel.settle`` makes the final model's loaders refer to it."""
        if self.planning and not self.settled:
            return partial(_start_methods_in, weakref.ref(self), facts)
        return self.global_start_methods(facts)

    def global_start_methods(self, facts: FileFacts) -> frozenset[str]:
        """The start method set by set_start_method for code in ``facts``, else the defaults (as
        well, when a call runs only under a condition: ``if num_gpus > 1:``)."""
        found = self.start_method_calls(facts)
        if found:
            methods = frozenset(s.method if s.method in START_METHODS else "unknown" for _, s in found)
            if self.default_also_applies(facts) or any(s.conditional for _, s in found):
                methods |= self.settings.default_start_methods()
            return methods
        return self.settings.default_start_methods()

    def default_also_applies(self, facts: FileFacts) -> bool:
        """The applying set_start_method calls come from some entry scripts importing ``facts``,
        but another entry script (a module with a ``__main__`` guard that no other importer
        imports) reaches it without setting one: there the target's default applies."""
        if facts.start_methods or not self.start_method_calls(facts):
            return False
        graph = self._importer_graph
        callers = graph.of(facts.path)
        starts = graph.mask("starts", _sets_start_method)
        if not callers & starts:
            return False  # the calls run on import: they apply to every entry
        setters = self._import_time_setters
        for entry in graph.decoded(callers & graph.mask("entries", _is_entry) & ~starts):
            # (an entry script another of them imports is not where a run starts)
            if graph.direct(entry.path) & callers:
                continue
            if not (self.imports_of(entry) & setters):
                return True
        return False

    @cached_property
    def _import_time_setters(self) -> frozenset[str]:
        """The analysed files calling ``set_start_method`` on import (at module level, not under
        the main guard)."""
        return frozenset(f.path for f in self.files.values() if any(s.module_level and not s.in_main_guard for s in f.start_methods))

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
        graph = self._importer_graph
        callers = graph.of(facts.path)
        found = [(f, s) for f in graph.decoded(callers & graph.mask("starts", _sets_start_method)) for s in f.start_methods]
        if found:
            return found
        reached = callers | graph.bit(facts.path)
        out = []
        for path in sorted(self._import_time_setters):  # (path order, as ``files``)
            f = self.files[path]
            if f is facts or not graph.direct(path) & reached:
                continue
            out.extend((f, s) for s in f.start_methods if s.module_level and not s.in_main_guard)
        return out

    def imports_of(self, facts: FileFacts) -> frozenset[str]:
        """The project files a file imports, resolved as Python would (importing ``pkg.data``
        runs ``pkg/__init__.py`` first: parent packages count, the file's own included)."""
        memo = self.__dict__.get("_imports_memo")
        if memo is None:
            # a file's imports are a function of its facts and the layout: carried from the run's
            # earlier planning models (NeMo, a cold run: each of 6 models read them all again)
            memo = self.__dict__["_imports_memo"] = self.carried_store("imports", on_layout=True)
        found = self.kept(memo, facts.path)
        if found is not None:
            return found
        stand_in = self.__dict__.get("_stand_ins", {}).get(facts.path)  # (a file not analysed)
        if stand_in is not None and stand_in[0] is facts:
            return stand_in[1]
        return self.keep(memo, facts.path, self._resolved_imports(facts))

    def _resolved_imports(self, facts: FileFacts) -> frozenset[str]:
        paths: set[str] = set()
        own = facts.module if facts.is_package else facts.module.rpartition(".")[0]
        # (module, root) -> the files importing it loads (it and its parent packages): the same
        # modules are imported by many files (carried while the layout stays)
        loaded = self.__dict__.get("_loaded_memo")
        if loaded is None:
            loaded = self.__dict__["_loaded_memo"] = self.carried_store("loaded", on_layout=True)
        root = facts.root
        project_top = self.layout.may_be_project_top
        for m in (*facts.imported_modules, *([own] if own else [])):
            found = loaded.get((m, root))
            if found is None:
                if not project_top(m.partition(".")[0]):  # (a library: most imports of an ML project)
                    loaded[(m, root)] = ()
                    continue
                found = self._loaded(m, root, loaded)
            paths.update(found)
        paths.discard(facts.path)
        return frozenset(paths)

    def _loaded(self, module: str, root: str, loaded: dict) -> tuple[str, ...]:
        """The project files ``import module`` loads from ``root``: the module and its parent
        packages (``layout.find`` of each prefix), from its parent's (``loaded``: (module, root)
        -> the answer; a file's ``from pkg.sub import a, b, c`` names pkg.sub.a, .b and .c, whose
        prefixes are found once)."""
        found = loaded.get((module, root))
        if found is None:
            parent = module.rpartition(".")[0]
            head = self._loaded(parent, root, loaded) if parent else ()
            path = self.layout.find(module, root)
            found = loaded[(module, root)] = (*head, path) if path else head
        return found

    @cached_property
    def _reverse_imports(self) -> dict[str, list[FileFacts]]:
        """Path -> analysed files importing it (built once)."""
        rev: dict[str, list[FileFacts]] = {}
        for facts in self.files.values():
            for path in self.imports_of(facts):  # (in no order: ``_Importers`` orders them)
                rev.setdefault(path, []).append(facts)
        return rev

    def importers(self, path: str) -> list[FileFacts]:
        """Analysed files that import the file at ``path`` (directly or through other analysed
        files), in path order."""
        memo = self.__dict__.setdefault("_importers_memo", {})
        if path not in memo:
            graph = self._analysed_importers
            memo[path] = graph.decoded(graph.of(path))
        return memo[path]

    def importers_through(self, path: str) -> list[FileFacts]:
        """Project files that import the file at ``path``, directly or through other project
        files, analysed or not (in path order): the analysed ones' facts, and for the others what
        their bytes say (``unparsed_imports``: what they import, whether they are entry scripts;
        no class, function or start method: a file calling ``set_start_method`` is analysed).
        Which start method applies to a module depends on every entry script reaching it
        (``start_method_calls``, ``default_also_applies``), and those reach it through modules
        the analysis needs for nothing else (``demo/predictor.py`` setting spawn on import,
        importing ``fastreid.engine``, whose ``__init__`` imports the module building the loaders)."""
        graph = self._importer_graph
        return graph.decoded(graph.of(path))

    def in_import_reach(self, path: str, targets: list[str]) -> bool:
        """Whether the file at ``path`` imports one of the files ``targets``, directly or through
        other files (``importers_through``), or is imported by one of them or by a file importing
        one (a module setting the start method on import): where a ``set_start_method`` call may
        apply to their code."""
        graph = self._importer_graph
        memo = self.__dict__.setdefault("_reach_memo", {})
        key = tuple(targets)
        reached = memo.get(key)
        if reached is None:
            reached = 0
            for target in targets:
                reached |= graph.of(target) | graph.bit(target)
            memo[key] = reached
        return bool((graph.bit(path) | graph.direct(path)) & reached)

    @cached_property
    def _importer_graph(self) -> _Importers:
        """The importers ``importers_through`` follows (``_Importers``)."""
        return _Importers(self._reverse_imports_all) if self.unparsed_imports else self._analysed_importers

    @cached_property
    def _analysed_importers(self) -> _Importers:
        """The importers ``importers`` follows: the analysed files only."""
        return _Importers(self._reverse_imports)

    @cached_property
    def _reverse_imports_all(self) -> dict[str, list[FileFacts]]:
        """``_reverse_imports`` with the files not analysed too (``unparsed_imports``), each as
        facts holding only its imports and whether it is an entry script."""
        rev = {target: list(importers) for target, importers in self._reverse_imports.items()}
        # (carried from the run's earlier planning models while the layout stays: a function of
        # what the bytes say, the same object for the whole run, and the layout)
        carried = self.carried_store("stand_ins", on_layout=True)
        stand_ins = self.__dict__["_stand_ins"] = {}
        for path in sorted(self.unparsed_imports):
            if path in self.files:
                continue
            scanned = self.unparsed_imports[path]
            found = carried.get(path)
            if found is None or found[0] is not scanned:
                found = carried[path] = (scanned, *self._stand_in(path, scanned))
            facts, imports = stand_ins[path] = found[1:]
            for target in imports:  # (in no order: ``_Importers`` orders the files by path)
                rev.setdefault(target, []).append(facts)
        return rev

    def _stand_in(self, path: str, scanned) -> tuple[FileFacts, frozenset[str]]:
        """(facts holding only what a file not analysed imports and whether it is an entry
        script, the project files it imports)."""
        name = self.layout.name(path)
        statements, entry = scanned
        modules: set[str] = set()
        for level, module, names in statements:
            base = resolve_relative(name.module, name.is_package, level, module or None)
            if base is None:
                continue
            modules.add(base)
            modules.update(f"{base}.{n}" for n in names if n != "*")
        facts = FileFacts(path, name.module, name.root, name.is_package, imported_modules=frozenset(modules), main_guard=_ENTRY if entry else None)
        facts = replace(facts, root=script_root(facts))
        return facts, self._resolved_imports(facts)

    def loaders_using(self, ref: ClassRef) -> list[Loader]:
        """Loaders whose dataset is this class or one of its subclasses."""
        by_dataset = self.__dict__.get("_loaders_by_dataset")
        if by_dataset is None:  # dataset class key -> {position: loader}, built once
            by_dataset = self.__dict__["_loaders_by_dataset"] = {}
            for i, ld in enumerate(self.loaders + self.library_loaders):
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


def _passed_count(fn, params: list, name: str, args, kwargs):
    """The literal worker count a call passes for parameter ``name`` of ``fn`` (its literal
    default when the call leaves it out); None when it is not a literal or cannot be matched."""
    got = _bind_arg(params, name, args, kwargs, fn.kwonly)
    if got is _MISSING:
        got = fn.flow.defaults.get(name)
    return got[1] if isinstance(got, tuple) and got[:1] == ("k",) else None
