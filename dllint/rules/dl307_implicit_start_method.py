"""DL307 implicit-start-method."""

from __future__ import annotations

from dllint.model import Diagnostic
from dllint.rules.base import Rule

_PLATFORM_NAMES = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}


def target_methods(settings) -> list[tuple[str, str]]:
    """[(start method, where)] the configured targets give a loader with no explicit context."""
    lo, hi = settings.python_range()
    out: list[tuple[str, str]] = []
    for platform in settings.platforms:
        name = _PLATFORM_NAMES.get(platform, platform)
        if platform == "linux":
            if lo <= 13:
                span = f"3.{lo}" if min(hi, 13) == lo else f"3.{lo}-3.{min(hi, 13)}"
                out.append(("fork", f"{name}, Python {span}"))
            if hi >= 14:
                first = max(lo, 14)
                span = f"3.{first}" if hi == first else f"3.{first}-3.{hi}"
                out.append(("forkserver", f"{name}, Python {span}"))
        else:
            out.append(("spawn", name))
    return out


def what_differs(methods: set[str]) -> str:
    fork = "fork" in methods
    other = "/".join(sorted(methods & {"spawn", "forkserver"}))
    if fork and other:
        return (
            f"fork shares the parent's memory (CUDA state, threads, open handles) while {other} pickles the "
            "dataset, collate_fn and worker_init_fn into each worker and re-imports the main module"
        )
    if fork:
        return (
            "fork shares the parent's memory (CUDA state, threads, open handles); Python 3.14 (forkserver) and "
            "macOS/Windows (spawn) pickle the dataset and re-import the main module instead"
        )
    return (
        f"{other or 'it'} pickles the dataset, collate_fn and worker_init_fn into each worker and re-imports the "
        "main module; Linux before Python 3.14 forks instead"
    )


class ImplicitStartMethod(Rule):
    code = "DL307"
    name = "implicit-start-method"
    default = False
    severity = "info"
    summary = "A loader that may start workers without an explicit `multiprocessing_context` (off by default)."
    docs = {
        "What it does": """
            Reports every DataLoader call (however imported, project subclasses included) that may
            start workers -- `num_workers` a literal above 0 or an expression, by keyword, at
            position 5 or through a `**kwargs` dict built in the same function -- and passes no
            `multiprocessing_context`, with no `set_start_method(...)` applying to it (in its own
            module, in an entry script importing it, or run on import by a module they import).
            Silent when `num_workers` is provably 0 or absent, and when a `**kwargs` cannot be
            resolved (the context may be in it). The message names the start methods the targets
            give (`--target-version`, `requires-python`, `platforms`): fork on Linux up to Python
            3.13, forkserver from 3.14, spawn on macOS and Windows.
            """,
        "Why is this bad?": """
            The same loader behaves differently across platforms and Python versions. Under fork
            workers share the parent's pages copy-on-write and need nothing pickled, but inherit
            CUDA state, thread pools and open handles; under spawn and forkserver the dataset,
            `collate_fn` and `worker_init_fn` must pickle, the main module is re-imported in every
            worker, and startup is slower. Python 3.14 switched Linux from fork to forkserver,
            which broke code that silently relied on fork.
            """,
        "Example": """
            ```python
            loader = DataLoader(ds, batch_size=32, num_workers=8)
            ```
            """,
        "Use instead": """
            ```python
            loader = DataLoader(ds, batch_size=32, num_workers=8, multiprocessing_context="forkserver")
            ```
            """,
        "Fix safety": "No automatic fix: which start method is right depends on the dataset.",
        "References": """
            - https://docs.python.org/3/library/multiprocessing.html#contexts-and-start-methods
            - https://pytorch.org/docs/stable/data.html#platform-specific-behaviors
            - metatensor/metatrain#1243
            """,
    }

    def check(self, project):
        index = project.index
        targets = target_methods(project.settings)
        for loader in index.loaders:
            if loader.file.path not in project.targets:
                continue
            if not loader.may_start_workers or loader.context is not None:
                continue
            if index.start_method_calls(loader.file) and not index.default_also_applies(loader.file):
                continue
            methods = set(loader.start_methods)
            given = "; ".join(f"{m} ({where})" for m, where in targets if m in methods) or ", ".join(sorted(methods))
            verb = "starts" if loader.workers == "yes" else "may start"
            yield Diagnostic(
                self.code,
                f"DataLoader {verb} workers without `multiprocessing_context` ({'/'.join(sorted(methods))} on the targets)",
                loader.file.path,
                loader.call.func_span,
                severity=self.severity,
                details=(("start methods", given), ("why", f"{what_differs(methods)}; pass `multiprocessing_context=` to choose")),
            )
