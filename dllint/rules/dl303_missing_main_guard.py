"""DL303 missing-main-guard.

Under spawn and forkserver every worker re-imports the main module (as ``__mp_main__``). Code that
starts DataLoader workers at module level -- outside ``if __name__ == "__main__":`` -- then runs
again inside each worker while it is still bootstrapping, and multiprocessing raises
``RuntimeError: An attempt has been made to start a new process before the current process has
finished its bootstrapping phase``.

``extract`` records, per file: the module-level places that start iterating something (``for``,
comprehensions, ``iter()``/``next()``/``list()``), the module-level calls of functions, and for
every function which names it iterates and which of its parameters it iterates. ``check`` joins
them with the project's loaders (workers > 0) and follows calls across files.
"""

from __future__ import annotations

from dllint.model import Diagnostic, Span
from dllint.rules.base import Rule
from dllint.textutil import clip


SPAWN_LIKE = ("spawn", "forkserver")
WHY = {
    "spawn": "spawn (the default on macOS and Windows)",
    "forkserver": "forkserver (the default on Linux from Python 3.14)",
}
BOOTSTRAP = (
    "RuntimeError: An attempt has been made to start a new process before the current process has "
    "finished its bootstrapping phase"
)


class MissingMainGuard(Rule):
    code = "DL303"
    name = "missing-main-guard"
    severity = "error"
    fix = "none"
    triggers = (b"workers",)  # a factory or trainer given num_workers=, a script declaring --num_workers
    summary = "Workers started at module level without `if __name__ == \"__main__\":`: spawn/forkserver workers re-run it and crash."
    docs = {
        "What it does": """
            Flags module-level code (outside `if __name__ == "__main__":`, functions and classes)
            that starts DataLoader workers: iterating a loader with `num_workers` > 0 (`for`,
            a comprehension, `iter()`/`next()`/`list()`), or calling a project function -- in
            this file or another -- that does (also through the functions it calls, or by
            iterating the loader passed to it), or Lightning's `trainer.fit(...)` /
            `validate` / `test` / `predict` given such a loader or a model whose
            `*_dataloader()` hook builds one. Code it cannot read counts too: a loader with
            workers handed to a function of a library or of a module outside the run
            (`train_one_epoch(model, loader)`, `trainer.fit(loader)`; not calls that only keep,
            log or wrap it, such as `loaders.append(loader)`, `accelerator.prepare(...)`,
            `tqdm(loader)`), iterating what such a function returns when it was given
            `num_workers` > 0 (`get_loader(..., num_workers=4)`), and a training method
            (`train`, `fit`, `evaluate`, ...) of an object built with `num_workers` > 0, with
            such a loader, or with the script's argparse namespace whose worker option
            (`--num_workers`, `--workers`) defaults to more than 0 (`Experiment(args).train()`).
            One finding per top-level statement, at its first line.
            In a script, `num_workers=args.workers` counts with the `argparse` default.

            Error when the loader can start with spawn or forkserver (an explicit
            `multiprocessing_context`, `set_start_method`, or the target's default: every Linux
            target from Python 3.14, macOS, Windows); info when only fork applies (it works
            today and breaks on those targets). Silent for loaders proven to run without
            workers, undecidable worker counts, and notebooks (no module to re-import).
            """,
        "Why is this bad?": """
            Under spawn and forkserver each worker re-imports the main module as `__mp_main__`.
            Module-level code that starts workers runs again inside every worker, before it has
            finished bootstrapping, and fails with `RuntimeError: An attempt has been made to
            start a new process before the current process has finished its bootstrapping
            phase. ... you have forgotten to use the proper idiom in the main module` (the
            main process then reports `DataLoader worker (pid(s) N) exited unexpectedly`). Even
            with the guard, the rest of the module-level code runs once per worker (and per
            epoch without persistent workers): keep heavy work there to a minimum.
            Python 3.14 made forkserver the Linux default, so scripts that worked under fork
            break on upgrade.
            """,
        "Example": """
            ```python
            loader = DataLoader(ds, batch_size=32, num_workers=4)
            for batch in loader:
                train_step(batch)
            ```
            """,
        "Use instead": """
            ```python
            def main():
                loader = DataLoader(ds, batch_size=32, num_workers=4)
                for batch in loader:
                    train_step(batch)

            if __name__ == "__main__":
                main()
            ```
            """,
        "Fix safety": """
            No automatic fix (suggestion only): moving module-level code into a function or
            under the guard changes which names are global (functions that read them, pickled
            references to module-level objects), so it needs a person.
            """,
        "References": """
            - https://pytorch.org/docs/stable/data.html#platform-specific-behaviors
            - https://pytorch.org/docs/stable/notes/windows.html#multiprocessing-error-without-if-clause-protection
            - https://docs.python.org/3/library/multiprocessing.html#the-spawn-and-forkserver-start-methods ("Safe importing of main module")
            """,
    }

    # ------------------------------------------------------------------ join

    def check(self, project):
        model = project.index
        for facts in model.files.values():
            payload = facts.signals.get("starts")
            if not payload or facts.path not in project.targets:
                continue
            hits = []
            for site in payload["module"]:
                loaders = model.site_loaders(facts, site)
                if loaders:
                    hits.append((site, loaders))
            # one finding per top-level statement that starts workers (what must move under the guard)
            by_top: dict = {}
            for site, loaders in sorted(hits, key=lambda h: (h[0]["span"].row, h[0]["span"].col)):
                span = site["span"]
                by_top.setdefault(tuple(site.get("top") or (span.row, span.col, span.end_row, span.end_col)), (site, loaders))
            for top, (site, loaders) in by_top.items():
                yield self._diagnostic(model, facts, site, loaders, 0, Span(*top))

    def _diagnostic(self, model, facts, site, loaders, more: int, at=None) -> Diagnostic:
        methods = set()
        for ld in loaders:
            methods |= set(ld.start_methods)
        spawnish = [m for m in SPAWN_LIKE if m in methods]
        loader = loaders[0]
        nw_text = model.effective_workers(loader)[1]
        where = "" if loader.file.path == facts.path else f" (in {loader.file.module})"
        if site["kind"] in ("call", "trainer"):
            what = f"`{clip(site['text'], 30)}()` starts workers"
        else:
            what = f"Iterating `{clip(site['text'], 30)}` starts workers"
        found = f"{nw_text}{where}"
        tail = f" ({more} more such place{'s' if more > 1 else ''} below)" if more else ""
        if spawnish:
            how = " or ".join(WHY[m] if loader.context is None else f"multiprocessing_context={m!r}" for m in spawnish)
            message = f"{what} outside the main guard: {'/'.join(spawnish)} workers fail"
            why = (
                f"at import time, outside `if __name__ == \"__main__\":`, under {how} every worker re-imports this module and "
                f"fails with {BOOTSTRAP}; move it under the guard{tail}"
            )
            severity = "error"
        else:
            now = "fine under fork, but" if methods == {"fork"} else "the start method is not known here;"
            message = f"{what} at import time, outside the main guard"
            why = (
                f"outside `if __name__ == \"__main__\":`: {now} under spawn/forkserver (macOS, Windows, Linux "
                f"from Python 3.14) every worker re-imports this module and fails with {BOOTSTRAP}; move it "
                f"under the guard{tail}"
            )
            severity = "info"
        return Diagnostic(
            self.code, message, facts.path, at or site["span"], severity=severity, details=(("workers", found), ("why", why))
        )
