"""DL306 stale-state-persistent-workers.

With ``persistent_workers=True`` each worker keeps the copy of the dataset it got when it
started; changes the main process makes to its own dataset object afterwards (``ds.epoch = e``,
``ds.set_epoch(e)``) never reach the workers.

``extract`` finds calls with ``persistent_workers=`` whose dataset (argument 0 or ``dataset=``) is
a plain name, and the later mutations of that name -- or of ``<loader>.dataset`` -- in the same
function: attribute assignments and method calls. ``check`` keeps the loaders that really have
persistent workers, and method calls that write state: a project Dataset method that assigns a
``self`` attribute (directly or through the methods it calls), or ``set_epoch`` on a class we
cannot see.
"""

from __future__ import annotations

import ast

from dllint.program.refs import ClassRef
from dllint.model import Diagnostic
from dllint.rules.base import Rule
from dllint.facts.loops import call_key, loop_source

EXTERNAL_MUTATORS = frozenset({"set_epoch"})
LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _loops(ctx, node) -> list[tuple[int, int]]:
    out = []
    for anc in ctx.ancestors(node):
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            break
        if isinstance(anc, LOOPS):
            out.append((anc.lineno, anc.end_lineno))
    return out


def _function(ctx, node) -> str | None:
    fn = ctx.enclosing_function(node)
    return fn.qualname if fn is not None else None


def _dataset_arg(call: ast.Call):
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return next((kw.value for kw in call.keywords if kw.arg == "dataset"), None)


def extract_mutations(ctx) -> dict | None:
    calls = {}
    for node in ctx.nodes(ast.Call):
        if not any(kw.arg == "persistent_workers" for kw in node.keywords):
            continue
        ds = _dataset_arg(node)
        ds_source = loop_source(ctx, ds) if isinstance(ds, (ast.Name, ast.Attribute)) else None
        parent = ctx.parent(node)
        loader_source = None
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], (ast.Name, ast.Attribute)):
            loader_source = loop_source(ctx, parent.targets[0])
        if ds_source is None and loader_source is None:
            continue
        calls[call_key(ctx.span(node))] = {
            "ds": ds_source,
            "ds_text": ctx.segment(ds, 60) if ds is not None else None,
            "loader": loader_source,
            "row": node.lineno,
            "fn": _function(ctx, node),
            "loops": _loops(ctx, node),
            "mutations": [],
        }
    writers = _state_writers(ctx)
    if not calls:
        return {"calls": {}, "writers": writers} if writers else None
    wanted = {}
    for key, entry in calls.items():
        if entry["ds"]:
            wanted.setdefault(("ds", tuple(entry["ds"])), []).append(key)
        if entry["loader"]:
            wanted.setdefault(("loader", tuple(entry["loader"])), []).append(key)
    for node in ctx.nodes(ast.Assign, ast.AugAssign, ast.Call):
        target = None
        kind = None
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute):
                    target, kind, name = t, "set", t.attr
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target, kind, name = node.func, "call", node.func.attr
        if target is None:
            continue
        obj = target.value
        via = "ds"
        if isinstance(obj, ast.Attribute) and obj.attr == "dataset":
            obj, via = obj.value, "loader"
        if not isinstance(obj, (ast.Name, ast.Attribute)):
            continue
        source = loop_source(ctx, obj)
        if source is None:
            continue
        for key in wanted.get((via, tuple(source)), ()):
            calls[key]["mutations"].append(
                {
                    "kind": kind,
                    "name": name,
                    "row": node.lineno,
                    "span": ctx.span(node),
                    "text": ctx.segment(node, 60),
                    "loops": _loops(ctx, node),
                    "fn": _function(ctx, node),
                    "via": via,
                }
            )
    calls = {k: v for k, v in calls.items() if v["mutations"]}
    return {"calls": calls, "writers": writers} if calls or writers else None


def _state_writers(ctx) -> list[str]:
    """Methods that update an attribute of ``self`` in place (``self.n += 1``); plain and annotated
    assignments are in the core facts already (``FunctionFacts.self_writes``)."""
    out = set()
    for node in ctx.nodes(ast.AugAssign):
        if isinstance(node.target, ast.Attribute):
            fn = ctx.method_of(node)
            if fn is not None and ctx.is_self_attr(node.target, fn):
                out.add(fn.qualname)
    return sorted(out)


def writes_state(index, ref: ClassRef, method: str) -> bool:
    """The method (or what it calls on self) assigns a ``self`` attribute."""
    fn = index.find_method(ref, method)
    if fn is None:
        return False
    for found, _depth in index.reachable([fn], ref).values():
        payload = found.file.payloads.get("DL306")
        if found.fn.self_writes or (payload and found.fn.qualname in payload["writers"]):
            return True
    return False


class StaleStatePersistentWorkers(Rule):
    code = "DL306"
    name = "stale-state-persistent-workers"
    default = False
    severity = "warning"
    fix = "none"
    triggers = (b"persistent_workers",)
    summary = "Dataset changed after its loader started persistent workers (`ds.set_epoch(e)`): the workers never see it."
    docs = {
        "What it does": """
            Flags a change to a loader's dataset object made after the loader was created with
            `persistent_workers=True`: an attribute assignment (`ds.epoch = e`,
            `loader.dataset.epoch = e`) or a call of a method that assigns dataset state
            (`ds.set_epoch(e)`; for a project Dataset, any method that writes a `self`
            attribute, also through the methods it calls; for a class we cannot see, only
            `set_epoch`).

            Silent for `sampler.set_epoch(e)` (the sampler runs in the main process), for loaders
            recreated in the same loop as the change, for changes before the loader exists, and
            when persistent_workers is not certainly on.
            """,
        "Why is this bad?": """
            Each worker process gets its own copy of the dataset when it starts (a fork snapshot,
            or a pickle under spawn/forkserver). Without persistent workers they restart every
            epoch and pick up the new state; with `persistent_workers=True` they live for the
            whole run and keep the state of epoch 0, so epoch-seeded shuffles, curricula and
            augmentations silently freeze (pytorch/pytorch#97326; huggingface/datasets#6673, fixed
            with shared memory in PR #6710; starVLA/starVLA#470, ~27% of frames never sampled;
            NVIDIA-NeMo/Megatron-Bridge#5762).
            """,
        "Example": """
            ```python
            loader = DataLoader(ds, num_workers=4, persistent_workers=True)
            for epoch in range(10):
                ds.set_epoch(epoch)
                for batch in loader:
                    ...
            ```
            """,
        "Use instead": """
            Pass the epoch through something the workers read from the main process -- a
            sampler (`sampler.set_epoch(epoch)`), or a `multiprocessing.Value` / shared tensor
            held by the dataset -- or drop `persistent_workers` so workers restart each epoch.
            """,
        "Fix safety": "No fix: the right change depends on what the state is for.",
        "References": """
            - https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader (persistent_workers)
            - pytorch/pytorch#97326, huggingface/datasets#6673
            """,
    }

    def extract(self, ctx):
        return extract_mutations(ctx)

    def check(self, project):
        index = project.index
        for loader in index.loaders:
            if loader.workers == "no":
                continue
            pw = loader.call.args.get("persistent_workers")
            if pw is None or not all(a.kind == "const" and a.const for a in pw.alternatives()):
                continue
            payload = project.payload(self.code, loader.file.path)
            entry = payload["calls"].get(call_key(loader.call.span)) if payload else None
            if entry is None:
                continue
            loader_loops = {tuple(x) for x in entry["loops"]}
            for m in entry["mutations"]:
                if m["fn"] == entry["fn"] and m["row"] <= entry["row"]:
                    continue  # before the loader exists
                if m["fn"] != entry["fn"] and m["fn"] is None:
                    continue  # module-level code next to a loader built in a function: order unknown
                if loader_loops & {tuple(x) for x in m["loops"]}:
                    continue  # the loader (and its workers) is recreated in the same loop
                if m["kind"] == "call" and not self._mutator(index, loader, m["name"]):
                    continue
                ds = entry["ds_text"] or "the dataset"
                yield Diagnostic(
                    self.code,
                    f"`{m['text']}` changes `{ds}`; its persistent workers keep their old copy",
                    loader.file.path,
                    m["span"],
                    severity=self.severity,
                    details=(
                        ("loader", f"persistent_workers=True, line {entry['row']}"),
                        ("why", "each worker keeps the copy it started with and never sees the change; pass it "
                         "through the sampler or shared memory, or drop persistent_workers"),
                    ),
                )

    @staticmethod
    def _mutator(index, loader, method: str) -> bool:
        if loader.datasets:
            return any(writes_state(index, ref, method) for ref in loader.datasets)
        return method in EXTERNAL_MUTATORS
