"""DL308 workers-oversubscribe-cpus.

``num_workers=os.cpu_count()`` counts every CPU of the machine: it ignores the CPU set the
process may use (containers, ``taskset``, SLURM) and, under DDP, is multiplied by the number of
ranks on the node. ``extract`` reads the num_workers expression of each loader-like call (through
one local or module-level assignment); ``check`` keeps real DataLoaders.
"""

from __future__ import annotations

import ast

from dllint.model import Diagnostic
from dllint.rules.base import Rule
from dllint.facts.loops import call_key
from dllint.names import NUM_WORKERS_POSITION

CPU_COUNT = frozenset({"os.cpu_count", "multiprocessing.cpu_count", "torch.multiprocessing.cpu_count"})


def _cpu_count_call(ctx, node) -> bool:
    return isinstance(node, ast.Call) and not node.args and ctx.call_name(node) in CPU_COUNT


def _whole_machine(ctx, node, depth: int = 0) -> str | None:
    """The cpu_count() text when ``node`` is ``cpu_count()`` or ``cpu_count() +/- k``."""
    if depth > 2 or node is None:
        return None
    if _cpu_count_call(ctx, node):
        return ctx.segment(node, 60)
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, (ast.Add, ast.Sub))
        and _cpu_count_call(ctx, node.left)
        and isinstance(node.right, ast.Constant)
        and isinstance(node.right.value, int)
        and (isinstance(node.op, ast.Add) or node.right.value <= 2)
    ):
        return ctx.segment(node, 60)
    if isinstance(node, ast.Name):
        binding = ctx.lookup(node.id, ctx.scope_of(node))
        if binding is not None and binding.kind == "local" and len(binding.values) == 1:
            return _whole_machine(ctx, binding.values[0], depth + 1)
    return None


def extract_cpu_counts(ctx) -> dict | None:
    out = {}
    for node in ctx.nodes(ast.Call):
        nw = next((kw.value for kw in node.keywords if kw.arg == "num_workers"), None)
        positional = False
        if nw is None and len(node.args) > NUM_WORKERS_POSITION:
            nw, positional = node.args[NUM_WORKERS_POSITION], True
        text = _whole_machine(ctx, nw)
        if text:
            shown = f"`{ctx.segment(nw, 60)}`"
            if shown != f"`{text}`":
                shown = f"{shown} (= `{text}`)"
            out[call_key(ctx.span(node))] = {"text": shown, "span": ctx.span(nw), "positional": positional}
    return out or None


class WorkersOversubscribeCpus(Rule):
    code = "DL308"
    name = "workers-oversubscribe-cpus"
    default = False
    severity = "info"
    fix = "none"
    triggers = ()  # the loader call holds the expression: its file is analysed for the loader
    summary = "`num_workers=os.cpu_count()`: ignores the CPU set and multiplies per DDP rank; workers oversubscribe the CPUs."
    docs = {
        "What it does": """
            Flags a DataLoader whose `num_workers` is `os.cpu_count()`,
            `multiprocessing.cpu_count()` or `torch.multiprocessing.cpu_count()` (also `+ k`,
            `- 1`, `- 2`, and through one assignment). Silent for capped or divided forms
            (`min(8, os.cpu_count())`, `os.cpu_count() // world_size`) and for
            `len(os.sched_getaffinity(0))`.
            """,
        "Why is this bad?": """
            `os.cpu_count()` is every CPU of the machine, not the ones this process may use
            (a container's cpuset, `taskset`, SLURM allocations), and under DDP every rank starts
            that many workers. Each worker runs its own intra-op, OpenMP/MKL and OpenCV threads
            (torch sets only `torch.set_num_threads(1)` in workers). torch itself warns: "This
            DataLoader will create N worker processes in total. Our suggested max number of worker
            in current system is M ... excessive worker creation might get DataLoader running slow
            or even freeze" (it counts `len(os.sched_getaffinity(0))`). Workers killed for memory
            ("DataLoader worker (pid N) is killed by signal: Killed.") are a common result.
            """,
        "Example": """
            ```python
            loader = DataLoader(ds, batch_size=64, num_workers=os.cpu_count())
            ```
            """,
        "Use instead": """
            ```python
            cpus = len(os.sched_getaffinity(0)) // max(1, local_world_size)
            loader = DataLoader(ds, batch_size=64, num_workers=min(8, cpus))
            ```
            """,
        "Fix safety": "No fix: the right number depends on the machine, the ranks per node and the per-worker cost.",
        "References": """
            - `torch/utils/data/dataloader.py` (`_check_worker_number_rationality`), `torch/_utils.py`
            - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
            """,
    }

    def extract(self, ctx):
        return extract_cpu_counts(ctx)

    def check(self, project):
        index = project.index
        for loader in index.loaders:
            payload = project.payload(self.code, loader.file.path)
            entry = payload.get(call_key(loader.call.span)) if payload else None
            if entry is None:
                continue
            checked, positional_ok = index.passes_through(loader)
            if not checked or (entry["positional"] and not positional_ok):
                continue
            yield Diagnostic(
                self.code,
                f"num_workers={entry['text']} counts every CPU of the machine, not this process's",
                loader.file.path,
                entry["span"],
                severity=self.severity,
                details=(
                    ("why", "it ignores the CPU set this process may use and is multiplied by the ranks of a DDP "
                     "job, so workers (each with its own threads) oversubscribe the CPUs; use "
                     "`len(os.sched_getaffinity(0))` divided by the local ranks, capped"),
                ),
            )
