"""DL102 cuda-state-on-dataset: a query on the program model's CUDA-state sites
(dllint/program/hazards.py)."""

from __future__ import annotations

import ast

from dllint.facts.keyword_text import bare_generator
from dllint.model import Diagnostic, Fix
from dllint.rules.base import Rule, planned_fix
from dllint.textutil import clip_code


class CudaStateOnDataset(Rule):
    code = "DL102"
    name = "cuda-state-on-dataset"
    severity = "error"
    fix = "unsafe"
    summary = "CUDA tensors or modules created in a Dataset's `__init__` and read in worker code: fails under fork."
    docs = {
        "What it does": """
            Finds CUDA state created in a Dataset's `__init__` and kept on the instance --
            `self.x = t.cuda()`, `self.x = t.to("cuda")`, `self.x = torch.randn(..., device="cuda")`,
            `self.model = Net().cuda()`, `self.model = model.to(device)` with a CUDA device (or a
            `device` parameter whose callers are not in sight: "may"), a model already on the GPU
            handed to the constructor, `self.data = torch.load(path)` without `map_location`
            (tensors saved from a GPU come back on the GPU) -- and reports it when worker code
            (`__getitem__`, `__iter__` and what they call) reads that attribute. Each object is
            reported once, where it is made: `self.x = self.x[keep]` later is not reported again.
            Not reported: a device kept on the Dataset (`self.device`), and parts taken out of a
            loaded file (`obj = torch.load(path); self.x = obj["x"]`): what a file holds is not
            seen. Severity follows the loaders using the class: error under fork, warning under
            spawn/forkserver, info when no loader with workers was seen; silent when every loader
            has no workers.
            """,
        "Why is this bad?": """
            The tensor lives on the GPU of the parent process. A forked worker that touches it
            needs CUDA, which cannot be re-initialized after fork: `RuntimeError: Cannot
            re-initialize CUDA in forked subprocess`. Under spawn each worker receives the
            tensor through CUDA IPC and creates its own CUDA context.
            """,
        "Example": """
            ```python
            class Embeddings(Dataset):
                def __init__(self, path):
                    self.table = torch.load(path)            # saved from a GPU
                def __getitem__(self, i):
                    return self.table[i]
            ```
            """,
        "Use instead": """
            ```python
            class Embeddings(Dataset):
                def __init__(self, path):
                    self.table = torch.load(path, map_location="cpu")
                def __getitem__(self, i):
                    return self.table[i]
            ```
            """,
        "Fix safety": """
            `torch.load(...)` gets `map_location="cpu"`: unsafe, because the loaded object is
            then on the CPU for every user of the attribute, also code in the main process that
            expected it on the GPU. Other CUDA state has no automatic fix (keep it on the CPU, or
            create it in the training loop).
            """,
        "References": """
            - https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing
            - https://pytorch.org/docs/stable/generated/torch.load.html
            - pytorch/pytorch#40403
            """,
    }

    def extract(self, ctx):
        """The `torch.load(path)` calls that can take `map_location="cpu"`: call span by start."""
        out = {}
        for node in ctx.nodes(ast.Call) if "load" in ctx.text else ():
            if ctx.call_name(node) != "torch.load" or not node.args or len(node.args) > 1:
                continue
            if any(k.arg in ("map_location", None) for k in node.keywords) or bare_generator(ctx, node):
                continue  # (``torch.load(x for x in y)``: the keyword needs the generator's parentheses)
            span = ctx.span(node)
            out[(span.row, span.col)] = span
        return out or None

    def check(self, project):
        model = project.index
        for site in model.cuda_state_sites():
            loader = site.detail.get("loader")
            if loader is not None:
                severity = "error" if "fork" in loader.start_methods else "warning"
            else:
                severity = model.fork_severity(site.uses)
            if severity is None:
                continue
            state = "is CUDA state" if site.kind == "cuda" else "may be CUDA state"
            if loader is not None:
                where = f"kept by `{site.detail.get('name', 'TensorDataset')}` of a loader with workers"
            else:
                where = f"kept on the Dataset as `self.{site.detail['attr']}`, read in `{site.detail['reader']}`"
            why = {"error": "fails in forked workers", "warning": "each worker creates a CUDA context"}.get(severity, "no loader with workers seen")
            short = f"`self.{site.detail['attr']}`" if loader is None and site.detail.get("attr") else f"`{site.detail.get('name', 'TensorDataset')}`"
            message = f"{site.what} {state} kept on {short}: {why}"
            if len(message) > 100:
                message = f"{clip_code(site.what, 100 - len(message) + len(site.what))} {state} kept on {short}: {why}"
            yield Diagnostic(
                self.code,
                message,
                site.path,
                site.span,
                fix=self._fix(project, site),
                severity=severity,
                details=(("owner", model.owners(site.uses)), ("where", where)),
            )

    def _fix(self, project, site) -> Fix | None:
        call = (project.payload(self.code, site.path) or {}).get((site.span.row, site.span.col))
        if call is None:
            return None
        from dllint.fixes.cst import statement_source
        from dllint.fixes.keywords import add_keyword

        # (the facts say what ``add_keyword`` would: the call is taken only where it applies)
        return planned_fix(
            project, "unsafe", 'Add `map_location="cpu"` (the object is then on the CPU in the main process too)',
            lambda: add_keyword(statement_source(project, site.path, call), call, "map_location", '"cpu"'),
        )
