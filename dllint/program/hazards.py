"""Worker hazards, found once for every rule that reports them or reacts to them (DL301 reacts to
all fork hazards): CUDA initialized in worker code, CUDA state kept on a Dataset, handles opened
before the fork, OpenCV in forked workers. Each is a query over the flow sites of the analysed
files (sources and sinks recorded per file, dllint/facts/flow.py), the worker call graph and the
value model.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dllint.model import Span
from dllint.names import canonical
from dllint.program.refs import ClassRef, FuncRef
from dllint.program.values import UNKNOWN, Env, Val, element_of, val
from dllint.program.workers import Use

HANDLE_TEXT = {
    "builtins.open": "a file handle (`open()`)",
    "io.open": "a file handle (`io.open()`)",
    "codecs.open": "a file handle (`codecs.open()`)",
    "gzip.open": "a gzip file handle",
    "bz2.open": "a bz2 file handle",
    "lzma.open": "an lzma file handle",
}
PICKLE_HOOKS = ("__getstate__", "__reduce__", "__reduce_ex__")
# methods whose result keeps using the handle: an LMDB transaction, a cursor, an HDF5 group
DERIVED_METHODS = frozenset({"begin", "cursor", "get", "require_dataset", "require_group", "open_db"})
# what a device value is: a torch.device, its name, None, or a parameter its callers set
DEVICE_KINDS = frozenset({"device", "str", "none", "unknown", "param"})
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.StackDataset"})


@dataclass
class Site:
    """One hazard at one place."""

    rule: str  # the rule that reports it: DL201, DL102, DL104, DL204
    path: str
    span: Span
    what: str  # what is there, for messages ("`x.cuda()`", "an HDF5 file (`h5py.File`)")
    kind: str  # DL201/DL102: "cuda" | "maybe"; DL104: the constructor
    uses: list = field(default_factory=list)  # Use: how the code runs in workers
    owners: tuple = ()  # keys of the Dataset classes / callables the hazard belongs to
    detail: dict = field(default_factory=dict)  # rule-specific: attr, reader, function ...

    @property
    def row(self) -> int:
        return self.span.row


def _span(t) -> Span:
    return Span(*t)


def device_of(v: Val) -> str | None:
    """"cuda" / "maybe" when a value is (or may be) a CUDA device or on one."""
    if v.device:
        return v.device
    return None


class Hazards:
    # ------------------------------------------------------------------ helpers

    def function_env(self, fnref: FuncRef, self_cls: ClassRef | None = None) -> Env:
        return Env(fnref.file, fnref, self_cls if self_cls is not None else self.class_of(fnref))

    def scope_env(self, facts, scope: str) -> Env:
        """The environment of code in ``scope`` (a function's qualname, or the module's name)."""
        fn = facts.functions.get(scope)
        if fn is None:
            return Env(facts, None, None)
        ref = FuncRef(facts, fn)
        return Env(facts, ref, self.class_of(ref))

    def loader_arg(self, loader, name: str) -> Val | None:
        """The value a loader is given for a DataLoader parameter, evaluated where it is built."""
        ir = loader.call.args_ir.get(name)
        if ir is None:
            return None
        return self.value(ir, self.scope_env(loader.file, loader.call.scope))

    def dataset_keeps(self, loader) -> list[Val]:
        """The lambdas, local functions and local classes the loader's dataset keeps when it is
        not an instance of a project class (whose state DL103 reads attribute by attribute): a
        library Dataset built with one (``ImageFolder(root, transform=Compose([Lambda(lambda x:
        ...)]))``), each stage of a webdataset pipeline (``wds.WebDataset(urls).map(fn)``), or a
        dataset built by a call we cannot follow (a class chosen at run time,
        ``datasets.__dict__[name](root, transform=t)``), which keeps what it is given. A dataset
        that is a parameter is read at each call site on its own."""
        ir = loader.call.args_ir.get("dataset")
        if ir is None:
            return []
        env = self.scope_env(loader.file, loader.call.scope)
        if ir[0] == "p" and env.fn is not None:
            alternatives = [(self.value(a, e), a, e) for a, e in self.passed_arguments(env.fn, ir[1])]
        else:
            alternatives = [(self.value(ir, env), ir, env)]
        out: list[Val] = []
        for v, arg, where in alternatives:
            out.extend(self._kept(v, arg, where))
        return out

    def _kept(self, v: Val, ir, env, depth: int = 0) -> list[Val]:
        if v.has("instance"):
            return []
        if v.has("pipeline"):
            return list(v.items or ())
        if v.has("holder"):
            return [v]
        if not v.has("unknown", "ext", "iterator", "tuple") or depth > 3:
            return []
        if ir[0] in ("n", "nk") and env.flow is not None:
            values = env.flow.locals.get(ir[1], ())
            return self._kept(v, values[0], env, depth + 1) if len(values) == 1 else []
        if ir[0] in ("e", "i"):  # an item of what a call returns: ``for train, val in kfold.split(ds)``
            return self._kept(self.value(ir[1], env), ir[1], env, depth + 1)
        if ir[0] != "c":
            return []
        dynamic = ir[1][0] not in ("g", "s", "a")
        for arg in (*ir[2], *(a for _, a in ir[3])):
            arg = arg[1] if arg[0] == "*" else arg
            part = self.value(arg, env)
            if dynamic:  # a class chosen at run time keeps what it is given
                for p in (part, part.elem) if part.elem is not None else (part,):
                    if p.has("lambda", "localfn", "localcls"):
                        return [replace(p, kinds=p.kinds | {"holder"})]
            # a call we cannot follow given a dataset that keeps one (``random_split(ds, ...)``,
            # a k-fold splitter): what it returns holds that dataset
            found = self._kept(part, arg, env, depth + 1)
            if found:
                return found
        return []

    def passed_arguments(self, fnref: FuncRef, name: str) -> list:
        """[(argument IR, caller Env)]: what each project call site passes as parameter
        ``name`` (the value model joins them; a rule sometimes needs them one by one)."""
        from dllint.program.values import _MISSING, _bind_arg

        out = []
        params = list(fnref.fn.params)
        for env, args, kwargs, _row, skip_self in self.call_sites(fnref):
            plist = params[1:] if skip_self and params else params
            found = _bind_arg(plist, name, args, kwargs, fnref.fn.kwonly)
            if found is not _MISSING and found is not None:
                out.append((found, env))
        return out

    def _device_kind(self, ir, env) -> str | None:
        v = self.value(ir, env)
        if not v.device and ir[0] == "s" and env.self_cls is not None and v.kinds <= {"unknown"}:
            kept = self._kept_by_library_base(env.self_cls, ir[1])
            if kept is not None:
                return device_of(kept)
        return device_of(v)

    def _kept_by_library_base(self, cls: ClassRef, attr: str) -> Val | None:
        """``self.device`` that no project code assigns, in a class whose constructor hands
        ``device=...`` to a library base class's ``__init__``: the base keeps it under that name
        (texar's ``DatasetBase``, Hugging Face and Lightning classes do)."""
        if self.attr_writes(cls, attr, include_workers=True):
            return None
        for r in self.mro(cls):
            init = r.cls.methods.get("__init__")
            fn = r.file.functions.get(init) if init else None
            if fn is None or fn.flow is None:
                continue
            fnref = FuncRef(r.file, fn)
            for kind, target, _args, kwargs, _row in fn.flow.calls:
                if kind != "super" or target != "__init__" or self.find_method(cls, "__init__", after=r) is not None:
                    continue
                for k, v in kwargs:
                    if k == attr:
                        return self.value(v, Env(r.file, fnref, cls))
        return None

    # ------------------------------------------------------------------ DL201: CUDA in worker code

    def cuda_sites(self) -> list[Site]:
        """CUDA-initializing calls in code that runs inside workers."""
        found = self.__dict__.get("_cuda_sites")
        if found is not None:
            return found
        out: list[Site] = []
        for (path, qual), uses in self.worker_uses().items():
            facts = self.files.get(path)
            fn = facts.functions.get(qual) if facts is not None else None
            if fn is None or fn.flow is None:
                continue
            fnref = FuncRef(facts, fn)
            envs = None
            for tag, span, text, ir, _lam in fn.flow.sites:
                if tag == "cuda":
                    kind = "cuda"
                elif tag == "to":
                    envs = envs or self._worker_envs(fnref, uses)
                    kinds = {self._device_kind(ir, env) for env in envs}
                    kind = "cuda" if "cuda" in kinds else "maybe" if "maybe" in kinds else None
                    if kind is None:
                        continue
                else:
                    continue
                out.append(Site("DL201", path, _span(span), text, kind, list(uses), tuple(u.owner_key for u in uses)))
        out.extend(self._lambda_callable_sites())
        out.sort(key=lambda s: (s.path, s.span.row, s.span.col))
        self.__dict__["_cuda_sites"] = out
        return out

    def _worker_envs(self, fnref: FuncRef, uses: list[Use]) -> list[Env]:
        """The environments worker code runs in: ``self`` is an instance of the Dataset class that
        runs a method of its hierarchy (a transform's ``__call__`` keeps its own class); a
        collate_fn / worker_init_fn given to a loader gets its parameters from the loader's call
        (the batch, the others their defaults or what a ``functools.partial`` binds)."""
        own = self.class_of(fnref)
        envs: dict = {}
        for use in uses:
            binding = None
            cls = own
            if use.owner.startswith("dataset") and own is not None:
                path, qual = use.owner_key
                facts = self.files.get(path)
                if facts is not None and qual in facts.classes:
                    ref = ClassRef(facts, facts.classes[qual])
                    if any(r.key == own.key for r in self.mro(ref)):
                        cls = ref
            elif use.owner_key == fnref.key and use.loaders:
                binding = self._callable_binding(fnref, use)
            env = Env(fnref.file, fnref, cls, binding)
            envs.setdefault(env.key, env)
        if not envs:
            envs[None] = Env(fnref.file, fnref, own)
        return list(envs.values())

    def _callable_binding(self, fnref: FuncRef, use: Use) -> dict | None:
        """The parameters a loader's call binds for its collate_fn / worker_init_fn ``fnref``:
        the first (the batch, the worker id) stays open, the others take their defaults, or what
        a ``functools.partial(fn, ...)`` gives them. Memoized: an Env's key holds the binding's id."""
        memo = self.__dict__.setdefault("_callable_bindings", {})
        loader = use.loaders[0]
        arg = use.owner.split(" ", 1)[0]
        key = (loader.file.path, loader.call.span, arg, fnref.key)
        if key in memo:
            return memo[key]
        params = list(fnref.fn.params)
        cls = self.class_of(fnref)
        if cls is not None and params and params[0] in ("self", "cls") and not any(d.endswith("staticmethod") for d in fnref.fn.decorators):
            params = params[1:]
        ir = loader.call.args_ir.get(arg)
        scope = self.scope_env(loader.file, loader.call.scope)
        given: dict = {}
        if ir is not None and ir[0] == "c" and ir[1][0] == "g" and (canonical(ir[1][1]) or ir[1][1]) == "functools.partial":
            pos = list(ir[2][1:])
            if any(a[0] == "*" for a in pos) or any(k is None for k, _ in ir[3]):
                memo[key] = None
                return None
            for name, a in zip(params, pos):
                given[name] = a
            for k, a in ir[3]:
                given[k] = a
        binding: dict = {}
        open_params = [p for p in params if p not in given]
        defaults = fnref.fn.flow.defaults if fnref.fn.flow is not None else {}
        own_env = Env(fnref.file, fnref, cls)
        for name in params:
            if name in given:
                binding[name] = self.value(given[name], scope)
            elif open_params and name == open_params[0]:
                continue  # the batch / the worker id
            elif name in defaults:
                binding[name] = self.value(defaults[name], own_env)
            else:
                binding[name] = UNKNOWN
        memo[key] = binding or None
        return memo[key]

    def _lambda_callable_sites(self) -> list[Site]:
        """``collate_fn=lambda b: torch.stack(b).cuda()``: the lambda's own body runs in workers."""
        out = []
        for loader in self.loaders:
            if not loader.may_start_workers:
                continue
            for arg in ("collate_fn", "worker_init_fn"):
                value = loader.call.args.get(arg)
                for alt in value.alternatives() if value is not None else ():
                    if alt.kind != "lambda":
                        continue
                    facts = loader.file
                    flow = facts.functions[loader.call.scope].flow if loader.call.scope in facts.functions else facts.flow
                    if flow is None:
                        continue
                    env = self.scope_env(facts, loader.call.scope)
                    use = Use(f"{arg} lambda", (facts.path, f"{loader.call.scope}.<lambda>:{alt.span.row}"), [loader])
                    for tag, span, text, ir, lam in flow.sites:
                        if lam != alt.span.row:
                            continue
                        kind = "cuda" if tag == "cuda" else self._device_kind(ir, env) if tag == "to" else None
                        if kind:
                            out.append(Site("DL201", facts.path, _span(span), text, kind, [use], (use.owner_key,)))
        return out

    # ------------------------------------------------------------------ DL102: CUDA state on a Dataset

    def cuda_state_sites(self) -> list[Site]:
        """CUDA tensors and modules a Dataset builds before the workers start and its worker code
        reads; and CUDA tensors handed to a library Dataset (``TensorDataset(x.cuda())``) that a
        loader with workers uses."""
        found = self.__dict__.get("_cuda_state_sites")
        if found is not None:
            return found
        out: dict = {}
        for ref in self.dataset_classes():
            use = self.dataset_use(ref)
            if use is None:
                continue
            readers = self._worker_reads(ref)
            if not readers:
                continue
            for attr in sorted(readers):
                for fnref, write in self.attr_writes(ref, attr):
                    how, ir, row, col = write[:4]
                    if how != "=":
                        continue
                    vspan = write[7]
                    v = self.value(ir, Env(fnref.file, fnref, ref))
                    kind = device_of(v)
                    site = self._site_at(fnref, row, ("cuda", "to", "load"), vspan)
                    if not kind and site is not None and site[0] == "load" and tuple(site[1]) == tuple(vspan):
                        kind = "maybe"  # self.x = torch.load(path): tensors saved on a GPU come back there
                    if not kind or v.kinds <= DEVICE_KINDS:
                        continue  # a torch.device (or its name, or a device parameter) is not CUDA state
                    if site is None and _self_root(ir) == attr:
                        continue  # self.x = self.x[idx]: the CUDA state is reported where it is made
                    text = site[2] if site is not None else f"`{write[8]}`"
                    span = _span(site[1]) if site is not None else Span(*vspan)
                    key = (fnref.file.path, span)
                    entry = out.get(key)
                    if entry is None:
                        out[key] = Site("DL102", fnref.file.path, span, text, kind, [use], (ref.key,), {"attr": attr, "reader": readers[attr], "function": fnref})
                    elif ref.key not in entry.owners:
                        entry.uses.append(use)
                        entry.owners += (ref.key,)
                # self.model.cuda() / self.model.to("cuda") in the constructor: moved in place
                for fnref in self._setup(ref):
                    for kind_, target, args, kwargs, row in fnref.fn.flow.calls:
                        if kind_ != "attr" or target[0] != attr or target[1] not in ("cuda", "to"):
                            continue
                        env = Env(fnref.file, fnref, ref)
                        if target[1] == "cuda":
                            kind = "cuda"
                        else:
                            dev = args[0] if args else next((v for k, v in kwargs if k == "device"), None)
                            kind = self._device_kind(dev, env) if dev is not None else None
                        site = self._site_at(fnref, row, ("cuda", "to"))
                        if not kind or site is None:
                            continue
                        span = _span(site[1])
                        if (fnref.file.path, span) not in out:
                            out[(fnref.file.path, span)] = Site("DL102", fnref.file.path, span, site[2], kind, [use], (ref.key,), {"attr": attr, "reader": readers[attr], "function": fnref})
        result = sorted(out.values(), key=lambda s: (s.path, s.span.row, s.span.col))
        result.extend(self._tensor_dataset_sites())
        self.__dict__["_cuda_state_sites"] = result
        return result

    def _tensor_dataset_sites(self) -> list[Site]:
        out = []
        for loader in self.loaders:
            if not loader.may_start_workers:
                continue
            v = self.loader_arg(loader, "dataset")
            if v is None or not v.has("tensordataset") or not v.device:
                continue
            where = v.why[0] if v.why else None
            site = None
            if where is not None and where[1] == loader.file.path:
                site = self._site_in_scope(loader.file, loader.call.scope, where[2], ("cuda", "to"))
            span = _span(site[1]) if site is not None else loader.call.span
            what = site[2] if site is not None else "a CUDA tensor"
            use = Use("dataset", (loader.file.path, f"<dataset-call>{loader.call.span.row}:{loader.call.span.col}"), [loader])
            out.append(Site("DL102", loader.file.path, span, what, v.device, [use], (use.owner_key,), {"loader": loader, "name": "TensorDataset"}))
        return out

    def _site_at(self, fnref: FuncRef, row: int, tags, within=None):
        """The flow site of one of ``tags`` on ``row`` in a function (the expression's text); with
        ``within`` (a span), the outermost such site inside it."""
        found = None
        for site in fnref.fn.flow.sites if fnref.fn.flow is not None else ():
            if site[0] not in tags or not (site[1][0] <= row <= site[1][2]):
                continue
            if within is not None and not _inside(site[1], within):
                continue
            if found is None or _inside(found[1], site[1]):
                found = site
        return found

    def _site_in_scope(self, facts, scope: str, row: int, tags):
        fn = facts.functions.get(scope)
        flow = fn.flow if fn is not None else facts.flow
        for site in flow.sites if flow is not None else ():
            if site[0] in tags and site[1][0] <= row <= site[1][2]:
                return site
        return None

    def _setup(self, ref: ClassRef) -> list[FuncRef]:
        """The class hierarchy's methods that are not worker code (they run before the fork)."""
        workers = set(self.worker_functions(ref))
        return [fn for fn in self.hierarchy_methods(ref) if fn.key not in workers]

    def _worker_reads(self, ref: ClassRef) -> dict[str, str]:
        """attr -> the worker function (of the class hierarchy) that reads ``self.attr``."""
        member = self.in_hierarchy(ref)
        readers: dict[str, str] = {}
        for fn, _ in self.worker_functions(ref).values():
            if member(fn):
                for attr in sorted(fn.fn.self_reads):
                    readers.setdefault(attr, fn.fn.name)
        return readers

    # ------------------------------------------------------------------ DL104: handles opened before the fork

    def handle_sites(self) -> list[Site]:
        """File and database handles a Dataset opens before the workers start (constructor, a
        helper it calls, a base class's constructor in another file) and its worker code uses:
        forked workers share the descriptor."""
        found = self.__dict__.get("_handle_sites")
        if found is not None:
            return found
        out: dict = {}
        for ref in self.dataset_classes():
            if self.proven_without_workers(ref):
                continue
            if any(self.find_method(ref, hook) for hook in PICKLE_HOOKS):
                continue
            readers = self._worker_reads(ref)
            if not readers:
                continue
            setup = self._setup(ref)
            closed, children, worker_writes = self._handle_context(ref, setup)
            derived = {child for kids in children.values() for child in kids}
            for attr in sorted(self._handle_roots(ref, setup)):
                if attr in closed or attr in worker_writes or attr in derived:
                    continue
                family = {attr}
                frontier = [attr]
                while frontier:
                    for child in children.get(frontier.pop(), ()):
                        if child not in family:
                            family.add(child)
                            frontier.append(child)
                used = sorted(a for a in family if a in readers)
                if not used or family & worker_writes:
                    continue
                for fnref, write in self.attr_writes(ref, attr):
                    how, ir, row, col = write[:4]
                    if how != "=":
                        continue
                    v = self.value(ir, Env(fnref.file, fnref, ref))
                    handle = _handle_of(v)
                    if handle is None:
                        continue
                    ctor, several, text = handle
                    span = Span(row, col, write[5], write[6])
                    key = (fnref.file.path, row)
                    if key in out:
                        if ref.key not in out[key].owners:
                            out[key].owners += (ref.key,)
                        continue
                    use = self.dataset_use(ref) or Use(f"dataset `{ref.cls.name}`", ref.key, [], True)
                    out[key] = Site(
                        "DL104", fnref.file.path, span, text, ctor, [use], (ref.key,),
                        {"attr": attr, "function": fnref, "used": used, "reader": readers[used[0]], "several": several, "cls": ref},
                    )
        result = sorted(out.values(), key=lambda s: (s.path, s.span.row))
        self.__dict__["_handle_sites"] = result
        return result

    def _handle_roots(self, ref: ClassRef, setup: list[FuncRef]) -> set[str]:
        """Attributes assigned a handle in the setup code."""
        out = set()
        for fnref in setup:
            for attr, writes in fnref.fn.flow.writes.items():
                if any(w[0] == "=" and w[1][0] in ("c", "n", "i", "C", "L", "with", "u", "p", "s", "a") for w in writes):
                    out.add(attr)
        return out

    def _handle_context(self, ref: ClassRef, setup: list[FuncRef]):
        """(attrs closed or deleted while the instance is built, attr -> attrs derived from it,
        attrs assigned in worker code). Only code the constructor runs closes a handle before the
        fork: a ``close()`` method nobody calls there does not."""
        closed: set[str] = set()
        children: dict[str, set[str]] = {}
        init = self.find_method(ref, "__init__")
        built = {f.key for f in (self.setup_functions(ref, init) if init is not None else [])}
        for fnref in setup:
            flow = fnref.fn.flow
            if fnref.key in built:
                for kind, target, *_ in flow.calls:
                    if kind == "attr" and target[1] == "close":
                        closed.add(target[0])
                closed.update(flow.deletes)
            for attr, writes in flow.writes.items():
                for how, ir, *_ in writes:
                    root = derived_root(ir)
                    if root is not None and root != attr:
                        children.setdefault(root, set()).add(attr)
        member = self.in_hierarchy(ref)
        worker_writes: set[str] = set()
        for fn, _ in self.worker_functions(ref).values():
            if member(fn) and fn.fn.flow is not None:
                worker_writes.update(fn.fn.flow.writes)
        return closed, children, worker_writes

    # ------------------------------------------------------------------ DL204: OpenCV in forked workers

    def opencv_sites(self) -> list[Site]:
        """OpenCV calls in worker code that forked workers run, unless the project turns OpenCV's
        threads off somewhere (``cv2.setNumThreads(0)``, ``OMP_NUM_THREADS``)."""
        found = self.__dict__.get("_cv2_sites")
        if found is not None:
            return found
        out: list[Site] = []
        if not any(f.signals.get("cv2_threads_off") for f in self.files.values()):
            defaults = self.settings.default_start_methods()
            for (path, qual), uses in self.worker_uses().items():
                facts = self.files.get(path)
                fn = facts.functions.get(qual) if facts is not None else None
                if fn is None or fn.flow is None:
                    continue
                methods = self.start_methods_of(uses) if any(u.loaders for u in uses) else set(defaults)
                if "fork" not in methods:
                    continue
                for tag, span, callee, _ir, _lam in fn.flow.sites:
                    if tag != "cv2":
                        continue
                    if not callee.startswith("cv2."):
                        prefix = callee[: callee.index(".cv2.") + 4]
                        if self.resolve(prefix, facts.root) != "cv2":
                            continue  # not OpenCV re-exported
                        callee = "cv2" + callee[len(prefix):]
                    out.append(Site("DL204", path, _span(span), f"`{callee}`", "cv2", list(uses), tuple(u.owner_key for u in uses)))
        out.sort(key=lambda s: (s.path, s.span.row, s.span.col))
        self.__dict__["_cv2_sites"] = out
        return out

    # ------------------------------------------------------------------ DL301: a loader's fork hazards

    def fork_hazards(self, loader) -> list[tuple[str, Site]]:
        """[(owner, site)]: the fork hazards in what a loader runs (its Dataset classes and their
        worker code, a library Dataset given CUDA tensors, its collate_fn and worker_init_fn), the
        ones in the loader's own file first."""
        owners: dict[tuple, str] = {}
        for ref in loader.datasets:
            for r in (ref, *self.subclasses_of(ref)):
                owners.setdefault(r.key, f"dataset `{ref.cls.name}`")
        owners[(loader.file.path, f"<dataset-call>{loader.call.span.row}:{loader.call.span.col}")] = "dataset"
        for arg, targets in self.loader_callables(loader).items():
            for target in targets:
                owners.setdefault(target.key, f"{arg} `{target.fn.name}`")
        for arg in ("collate_fn", "worker_init_fn"):
            value = loader.call.args.get(arg)
            for alt in value.alternatives() if value is not None else ():
                if alt.kind == "lambda":
                    owners.setdefault((loader.file.path, f"{loader.call.scope}.<lambda>:{alt.span.row}"), f"{arg} lambda")
        found: list[tuple[str, Site]] = []
        seen = set()
        for site in (*self.cuda_sites(), *self.cuda_state_sites(), *self.handle_sites(), *self.opencv_sites()):
            for key in site.owners:
                owner = owners.get(key)
                if owner is None:
                    continue
                if site.rule == "DL102" and owner == "dataset" and site.detail.get("loader") is not loader:
                    continue
                if (site.path, site.span, site.rule) in seen:
                    continue
                seen.add((site.path, site.span, site.rule))
                name = site.detail.get("name")
                found.append((f"dataset `{name}(...)`" if owner == "dataset" and name else owner, site))
        here = loader.file.path
        found.sort(key=lambda f: (f[1].path != here, f[1].path, f[1].span.row))
        return found


def _self_root(ir) -> str | None:
    """The ``self`` attribute a value is read from: ``self.x[i]``, ``self.x.float()``, ``self.x.y``."""
    while True:
        if ir[0] == "s":
            return ir[1]
        if ir[0] in ("i", "a"):
            ir = ir[1]
        elif ir[0] == "c" and ir[1][0] == "a":
            ir = ir[1][1]
        else:
            return None


def _inside(a, b) -> bool:
    """Span ``a`` lies within span ``b`` (tuples row, col, end_row, end_col)."""
    return (a[0], a[1]) >= (b[0], b[1]) and (a[2], a[3]) <= (b[2], b[3])


def _handle_of(v: Val):
    """(constructor, several, text) when a value is a handle (or a container of handles)."""
    if v.has("handle", "file", "h5dataset"):
        ctor = v.detail if v.has("handle", "h5dataset") else "builtins.open"
        return ctor, False, _handle_text(ctor, v)
    e = v.elem
    if e is not None and v.has("list", "dict", "tuple") and e.has("handle", "file") and not e.has("str", "int"):
        ctor = e.detail if e.has("handle") else "builtins.open"
        text = _handle_text(ctor, e)
        return ctor, True, "one " + text.removeprefix("a ").removeprefix("an ") + " per item"
    return None


def _handle_text(ctor: str, v: Val) -> str:
    from dllint.program.values import HANDLE_CTORS

    if ctor in HANDLE_CTORS:
        return HANDLE_CTORS[ctor]
    if ctor in HANDLE_TEXT:
        return HANDLE_TEXT[ctor]
    if v.has("file"):
        return "a file handle (`open()`)"
    return f"a handle (`{ctor}`)"


def derived_root(ir) -> str | None:
    """The attribute a value keeps a handle through: ``self.h``, ``self.h["x"]``,
    ``self.env.begin()``; a slice reads the data out."""
    while True:
        if ir[0] == "s":
            return ir[1]
        if ir[0] == "i":
            if ir[2][0] == "sl":
                return None
            ir = ir[1]
        elif ir[0] == "c" and ir[1][0] == "a" and ir[1][2] in DERIVED_METHODS:
            ir = ir[1][1]
        else:
            return None
