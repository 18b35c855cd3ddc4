"""Where workers start: which loaders a loop iterates (a variable assigned a loader in the same
scope, ``self.loader`` in the same class, a loader returned by a project function, a loader passed
as an argument to a function that loops over that parameter, a Lightning ``Trainer.fit``), the worker
count a script's argparse default gives, and whether a DataLoader subclass passes its arguments
through to torch's checks. DL303 and DL305 ask these questions.
"""

from __future__ import annotations

from contextlib import nullcontext

from dllint.names import DATALOADER, canonical
from dllint.model import LoaderCall, Value
from dllint.program.refs import ClassRef, FuncRef, Loader
from dllint.program.values import Env
from dllint.facts.starts import LIGHTNING_HOOKS, MAX_CALL_DEPTH


# methods that run an object's training or evaluation loop (over the loaders it was built with)
RUN_METHODS = frozenset({"train", "fit", "run", "validate", "evaluate", "test", "predict", "train_model", "fit_model"})
# calls handed a loader that keep, log or wrap it without iterating it
NON_ITERATING = frozenset(
    {
        "append", "extend", "insert", "add", "update", "setdefault", "put", "put_nowait", "info", "debug",
        "warning", "warn", "error", "log", "print", "pprint", "prepare", "prepare_data_loader",
        "setup_dataloaders", "wrap", "watch", "register", "deepcopy", "copy", "save", "dump", "tqdm", "track",
    }
)
NON_ITERATING_CALLS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm", "rich.progress.track"})


class Starts:
    def effective_workers(self, loader) -> tuple[str, str]:
        """("yes"/"no"/"maybe", how num_workers reads): a script's argparse default decides "maybe"."""
        nw = loader.call.args.get("num_workers")
        shown = f"num_workers={nw.text}" if nw is not None and nw.text else "workers"
        if loader.workers != "maybe":
            return loader.workers, shown
        found = loader.file.signals.get("argparse_workers", {}).get((loader.call.span.row, loader.call.span.col))
        if found is not None:
            default, text = found
            return ("yes" if default > 0 else "no"), f"num_workers={text}, {default} by default"
        by_default = self.default_workers(loader)  # an option declared in another file, a click option
        if by_default == "maybe":
            return "maybe", shown
        return by_default, f"{shown}, {'0' if by_default == 'no' else 'more than 0'} by default"


    def passing_calls(self, facts) -> list:
        """(callee, [(position or keyword, loop source)]) of the calls a file makes, at module level
        and in its functions, with arguments naming a variable (from DL303's extract)."""
        payload = facts.signals.get("starts")
        if not payload:
            return []
        calls = [(site["callee"], site["args"]) for site in payload["module"] if site["kind"] == "call"]
        for entry in payload["functions"].values():
            calls.extend(entry.get("passes", ()))
        return calls


    def loaders_for(self, facts, source) -> list:
        """The project's loaders a loop source refers to (same file)."""
        kind, scope, name = source
        found = []
        for loader in self.loaders_in(facts.path):
            call = loader.call
            if kind == "name" and call.target == name and call.scope == scope:
                found.append(loader)
            elif kind == "self" and call.target == f"self.{name}":
                fn = facts.functions.get(call.scope)
                if fn is not None and fn.cls == scope:
                    found.append(loader)
        return found

    def passes_through(self, loader) -> tuple[bool, bool]:
        """(torch's checks run on these arguments, positional arguments follow torch's order)."""
        callee = canonical(loader.call.callee)
        if callee == DATALOADER:
            return True, True
        ref = self.resolve_class(callee, loader.file.root)
        if ref is not None:
            # a project subclass: only when it keeps DataLoader's own __init__
            if self.find_method(ref, "__init__") is not None:
                return False, False
            bases = {canonical(b) for b in self.external_bases(ref)}
            return True, DATALOADER in bases
        return True, False  # a library DataLoader subclass: keywords pass through

    def site_loaders(self, facts, site) -> list:
        if site["kind"] == "direct":
            return [ld for ld in self.loaders_in_file(facts) if (ld.call.span.row, ld.call.span.col) == tuple(site["call"]) and self._yes(ld)]
        if site["kind"] == "iter":
            source = tuple(site["source"])
            return self.source_loaders(facts, source) or self._factory_source(facts, source)
        if site["kind"] == "trainer":
            return self._trainer_loaders(facts, site)
        found = self.resolve(site["callee"], facts.root)
        if isinstance(found, ClassRef):
            return []
        if not isinstance(found, FuncRef) and site.get("receiver"):
            found = self.receiver_method(facts, tuple(site["receiver"]), site["method"]) or found
        if isinstance(found, FuncRef):
            out = list(self.function_loaders(found, 0, frozenset()))
            out.extend(self._passed_loaders(facts, found, site["args"]))
            return out
        return self._opaque_call_loaders(facts, site)

    # ------------------------------------------------------------------ code we cannot see into

    def _opaque_call_loaders(self, facts, site) -> list:
        """A module-level call of a function we cannot see into (a library's, a project module
        that is not analysed): handed a loader with workers, it runs it (``train_one_epoch(model,
        loader)``, ``trainer.fit(loader)``), unless it only stores, logs or wraps it; a training
        method (``trainer.train()``) of an object built with workers (``Trainer(...,
        num_workers=2)``) or handed such a loader (``Trainer(model, loader)``) runs them."""
        name = site["callee"].rsplit(".", 1)[-1]
        out = []
        if site.get("receiver") and site.get("method") in RUN_METHODS:
            out.extend(self._built_with_workers(facts, tuple(site["receiver"])))
        if name[:1].isupper() or name in NON_ITERATING or canonical(site["callee"]) in NON_ITERATING_CALLS:
            return out
        for _pos, source in site["args"]:
            source = tuple(source)
            out.extend(self.source_loaders(facts, source) or self._factory_source(facts, source))
        return out

    def receiver_method(self, facts, receiver, method: str):
        """``obj.method`` where a module-level name holds an instance of a project class."""
        kind, scope, name = receiver
        if kind != "name" or scope != facts.module:
            return None
        if facts.flow is None:
            return None
        env = Env(facts, None, None)
        with self.quietly():
            found = [self.value(ir, env) for ir in facts.flow.locals.get(name, ())]
        classes = {v.cls.key: v.cls for v in found if v.cls is not None and v.has("instance")}
        if len(found) != 1 or len(classes) != 1:
            return None
        return self.find_method(next(iter(classes.values())), method)

    def _built_with_workers(self, facts, receiver) -> list:
        """Loaders an object held by a module-level name was built with: ``num_workers`` given to
        its constructor or factory, or a loader with workers passed to it."""
        kind, scope, name = receiver
        if kind != "name" or scope != facts.module:
            return []
        out = self._factory_source(facts, receiver)
        options = facts.signals.get("argparse_worker_options") or {}
        for site in (facts.signals.get("starts") or {}).get("module", ()):
            if site["kind"] == "call" and site.get("target") == name:
                for _pos, source in site["args"]:
                    source = tuple(source)
                    out.extend(self.source_loaders(facts, source))
                    if source[0] == "name" and source[1] == facts.module and source[2] in options:
                        # ``exp = Exp(args)`` where the script's ``--num_workers`` defaults to N > 0
                        out.append(self._namespace_loader(facts, site, source[2], *options[source[2]]))
        return out

    def _namespace_loader(self, facts, site, namespace: str, option: str, default: int) -> Loader:
        """The loader an object built from a script's argparse namespace makes, as far as the
        script says: ``--<option>`` workers, ``default`` by default."""
        text = f"{namespace}.{option}, {default} by default"
        call = LoaderCall(
            callee=site["callee"], span=site["span"], func_span=site["span"], scope=facts.module,
            args={"num_workers": Value("const", text, site["span"], const=default)}, module_level=True, target=site.get("target"),
        )
        return Loader(facts, call, "yes", None, self.loader_start_methods(facts))

    def factory_loaders(self, facts) -> list:
        """What calls of code we cannot see into build when given ``num_workers`` (a loader
        factory ``get_loader(..., num_workers=4)`` from a module that is not analysed, a library
        trainer ``Trainer(..., num_workers=2)``), as loaders with no Dataset known: iterating or
        training with their result starts workers. Not among ``loaders`` (no other rule sees a
        DataLoader there)."""
        memo = self.__dict__.setdefault("_factory_memo", {})
        found = memo.get(facts.path)
        if found is None:
            found = []
            for call in facts.loaders:
                if "num_workers" not in call.args or self.is_loader_class(call.callee, facts.root):
                    continue
                with self.quietly():
                    target = self.resolve(call.callee, facts.root)
                if isinstance(target, (FuncRef, ClassRef)) or canonical(call.callee) in NON_ITERATING_CALLS:
                    continue  # project code is followed where it is written
                found.append(self._loader(facts, call))
            memo[facts.path] = found
        return found

    def _factory_source(self, facts, source) -> list:
        """Factory-built loaders (``factory_loaders``) a module-level name holds."""
        kind, scope, name = source
        if kind != "name" or scope != facts.module:
            return []
        found = [ld for ld in self.factory_loaders(facts) if ld.call.target == name and ld.call.module_level]
        return found if found and all(self._yes(ld) for ld in found) else []

    def _trainer_loaders(self, facts, site) -> list:
        out = []
        for source in site["sources"]:
            out.extend(self.source_loaders(facts, tuple(source)))
        for qualname in site["classes"]:
            ref = self.resolve_class(qualname, facts.root)
            if ref is None:
                continue
            for hook in LIGHTNING_HOOKS:
                method = self.find_method(ref, hook)
                if method is None:
                    continue
                loaders = [ld for ld in self.loaders_in_file(method.file) if ld.call.scope == method.fn.qualname]
                out.extend(ld for ld in loaders if self._yes(ld))
        return out

    def _passed_loaders(self, facts, callee: FuncRef, args) -> list:
        """Loaders passed as arguments to a function that iterates that parameter."""
        entry = self._fn_entry(callee)
        if not entry or not entry["params"]:
            return []
        names = entry["param_names"]
        if callee.fn.cls is not None and names and names[0] in ("self", "cls"):
            names = names[1:]  # called as a bound method
        out = []
        for pos, source in args:
            param = names[pos] if isinstance(pos, int) and pos < len(names) else pos
            if param in entry["params"]:
                out.extend(self.source_loaders(facts, tuple(source)))
        return out

    def loaders_in_file(self, facts):
        return list(self.loaders_in(facts.path))

    def source_loaders(self, facts, source) -> list:
        loaders = self.loaders_for(facts, source)
        if not loaders and source[0] == "name" and source[1] == facts.module:
            loaders = self.returned_loaders(facts, source[2])
        if not loaders or not all(self._yes(ld) for ld in loaders):
            return []
        return loaders

    def _yes(self, loader) -> bool:
        return self.effective_workers(loader)[0] == "yes"

    def returned_loaders(self, facts, name) -> list:
        """``loader = make_loader()`` at module level: the loaders make_loader returns."""
        value = facts.constants.get(name)
        if value is None or value.kind != "call" or not value.ref:
            return []
        found = self.resolve(value.ref, facts.root)
        if not isinstance(found, FuncRef):
            return []
        out = []
        for ret in found.fn.returns:
            for alt in ret.alternatives():
                if alt.kind != "call":
                    continue
                out.extend(
                    ld for ld in self.loaders_in(found.file.path) if ld.call.span == alt.span
                )
        return out

    def _fn_entry(self, fn: FuncRef):
        facts = self.files.get(fn.file.path)
        starts = facts.signals.get("starts") if facts is not None else None
        return starts["functions"].get(fn.fn.qualname) if starts else None

    def function_loaders(self, fn: FuncRef, depth: int, seen: frozenset):
        """Loaders with workers that ``fn`` (or what it calls) iterates."""
        memo = self.__dict__.setdefault("_function_loaders_memo", {})
        key = fn.key
        if key in memo:
            return memo[key]
        if key in seen or depth > MAX_CALL_DEPTH:
            return []
        seen = seen | {key}
        out = []
        entry = self._fn_entry(fn)
        if entry:
            for kind, value in entry["iters"]:
                if kind == "direct":
                    out.extend(ld for ld in self.loaders_in_file(fn.file) if (ld.call.span.row, ld.call.span.col) == tuple(value) and self._yes(ld))
                else:
                    out.extend(self.source_loaders(fn.file, tuple(value)))
        for call in fn.fn.calls:
            if call.kind != "ref":
                continue
            target = self.resolve(call.target, fn.file.root)
            if isinstance(target, FuncRef):
                out.extend(self.function_loaders(target, depth + 1, seen))
        for callee, args in (entry or {}).get("passes", ()):
            target = self.resolve(callee, fn.file.root)
            if isinstance(target, FuncRef):
                out.extend(self._passed_loaders(fn.file, target, args))
        memo[key] = out
        return out

    def caller_map(self) -> dict:
        """Callee function key -> [(caller facts, [(position or keyword, loop source)], callee)]:
        the calls that pass a variable built by a call (a loader) on to a project function."""
        found = self.__dict__.get("_caller_map")
        if found is not None:
            return found
        out: dict = {}
        for facts in self.files.values():
            for callee, args in self.passing_calls(facts):
                if not args:
                    continue
                # only a call that may pass a loader needs its callee's file parsed (planning)
                passes_loader = any(self.loaders_for(facts, source) for _pos, source in args)
                with self.quietly(not passes_loader) if not self._quiet else nullcontext():
                    target = self.resolve(callee, facts.root)
                if isinstance(target, FuncRef):
                    out.setdefault(target.key, []).append((facts, args, callee))
        self.__dict__["_caller_map"] = out
        return out

    def passed_loader(self, facts, source) -> str | None:
        """How a worker-backed loader reaches a parameter loop: through a call that passes one."""
        _kind, qualname, name = source
        fn = facts.functions.get(qualname)
        if fn is None or name not in fn.params:
            return None
        params = list(fn.params)
        if fn.cls is not None and params and params[0] in ("self", "cls"):
            params = params[1:]
        for caller, args, callee in self.caller_map().get((facts.path, qualname), ()):
            for pos, arg_source in args:
                param = params[pos] if isinstance(pos, int) and pos < len(params) else pos
                if param != name:
                    continue
                loaders = self.loaders_for(caller, tuple(arg_source))
                verdicts = [self.effective_workers(ld) for ld in loaders]
                if loaders and all(v == "yes" for v, _ in verdicts):
                    return f"passed by `{callee.rsplit('.', 1)[-1]}(...)` with {verdicts[0][1]}"
        return None
