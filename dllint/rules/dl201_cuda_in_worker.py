"""DL201 cuda-in-worker: a query on the program model's CUDA sites (dllint/program/hazards.py)."""

from __future__ import annotations

from dllint.model import Diagnostic
from dllint.rules.base import Rule
from dllint.textutil import clip_code


def start_method_phrase(severity: str, methods: set[str] | None = None) -> str:
    if severity == "error":
        how = "fork here" if not methods or set(methods) == {"fork"} else "fork on some targets"
        return f"workers start with {how}: \"Cannot re-initialize CUDA in forked subprocess\""
    if severity == "warning":
        return "each spawn/forkserver worker creates its own CUDA context"
    return "no loader with workers seen; forked workers would fail"


class CudaInWorker(Rule):
    code = "DL201"
    name = "cuda-in-worker"
    severity = "error"
    summary = "CUDA initialized in DataLoader worker code (`__getitem__`, collate_fn, worker_init_fn): fails under fork."
    docs = {
        "What it does": """
            Finds calls that initialize CUDA in code that runs inside DataLoader workers: a
            Dataset's `__getitem__`, `__getitems__`, `__iter__`, `__next__` (and what a library
            base hands the work to: torch_geometric's `get`, texar's `collate`), a loader's
            `collate_fn` and `worker_init_fn` (also installed later, `loader.collate_fn = f`),
            the transforms and models a Dataset stores and calls (their `__call__` / `forward`),
            and the project functions and methods they call (also in other files). Initializing
            calls: `.cuda()`, `.to("cuda")` / `.to(torch.device("cuda"))` / `.to(self.device)`
            where the device is CUDA, factories with `device="cuda"` (`torch.tensor(...,
            device=device)`), `.pin_memory()`, `torch.cuda.current_device / set_device /
            synchronize / get_device_properties / get_device_name`,
            `torch.Generator(device="cuda")`, `torch.load(..., map_location="cuda")`.

            The device is followed where it comes from: a module constant, `self.device` set in
            the constructor (or kept by a library base given `device=`), a constructor parameter
            with what its callers pass and its default. "May" in the message: the
            `"cuda" if torch.cuda.is_available() else "cpu"` idiom, callers passing CUDA and CPU
            devices, or a parameter named as a device (`device`, `dev`, `*_device`) whose callers
            are not in sight (a dataset for others to use: they choose the device). A
            collate_fn / worker_init_fn gets only the batch / worker id from the loader: its
            other parameters keep their defaults or what `functools.partial` binds. Not
            flagged: `torch.device("cuda")` alone, `torch.cuda.manual_seed(_all)`,
            `torch.cuda.is_available()` / `device_count()`, cudnn flags, `.to(device)` when
            every caller in sight passes a CPU device (or the default is the CPU and no caller
            passes another), `.to(x.device)`, a dtype.

            Severity: error when a loader running the code may start its workers with fork
            (Linux, Python <= 3.13, no `multiprocessing_context`); warning under spawn or
            forkserver; info when no loader with workers was seen. Silent when every loader
            using the Dataset provably runs without workers.
            """,
        "Why is this bad?": """
            A forked child cannot use CUDA once the parent has touched it (and
            `DataLoader(pin_memory=True)` or `torch.cuda.is_available()` already does): the
            worker dies with `RuntimeError: Cannot re-initialize CUDA in forked subprocess. To
            use CUDA with multiprocessing, you must use the 'spawn' start method`. Under spawn it
            works, but every worker creates its own CUDA context (hundreds of MB of GPU memory
            each), and `pin_memory=True` then fails on CUDA tensors.
            """,
        "Example": """
            ```python
            class Images(Dataset):
                def __getitem__(self, i):
                    return load(self.paths[i]).cuda()

            loader = DataLoader(Images(paths), num_workers=4)
            ```
            """,
        "Use instead": """
            ```python
            class Images(Dataset):
                def __getitem__(self, i):
                    return load(self.paths[i])          # CPU tensor

            loader = DataLoader(Images(paths), num_workers=4, pin_memory=True)
            for batch in loader:
                batch = batch.to("cuda", non_blocking=True)
            ```
            """,
        "Fix safety": "No automatic fix: moving work out of the worker changes the training loop.",
        "References": """
            - https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing
            - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
            - pytorch/pytorch#40403, #77159, #2971
            """,
    }

    def check(self, project):
        model = project.index
        for site in model.cuda_sites():
            severity = model.fork_severity(site.uses)
            if severity is None:
                continue
            verb = "initializes CUDA" if site.kind == "cuda" else "may initialize CUDA"
            short = {"error": "forked workers fail", "warning": "each spawn/forkserver worker makes a CUDA context"}.get(severity, "no loader with workers seen")
            message = f"{site.what} {verb} in worker code: {short}"
            if len(message) > 100:
                message = f"{clip_code(site.what, 100 - len(message) + len(site.what))} {verb} in worker code: {short}"
            yield Diagnostic(
                self.code,
                message,
                site.path,
                site.span,
                severity=severity,
                details=(
                    ("owner", model.owners(site.uses)),
                    ("why", start_method_phrase(severity, model.start_methods_of(site.uses))),
                ),
            )
