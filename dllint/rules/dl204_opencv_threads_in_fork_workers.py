"""DL204 opencv-threads-in-fork-workers."""

from __future__ import annotations

import ast

from dllint.model import Diagnostic, Edit, Fix, Span
from dllint.rules.base import Rule
from dllint.rules.dl201_cuda_in_worker import owners, start_methods_of, worker_uses

_THREAD_CALLS = frozenset({"cv2.setNumThreads", "cv2.getNumThreads"})
_ENV_READS = frozenset({"get", "getenv", "pop"})


def _disables_threads(ctx, node) -> bool:
    """``cv2.setNumThreads(0|1|<expr>)`` or setting ``OMP_NUM_THREADS``."""
    if isinstance(node, ast.Call):
        callee = ctx.call_name(node)
        if callee == "cv2.setNumThreads":
            value = ctx.const(node.args[0], None) if node.args else None
            return not (isinstance(value, int) and value > 1)  # an expression: trust it
        if any(k.arg == "OMP_NUM_THREADS" for k in node.keywords):
            return True
        if node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "OMP_NUM_THREADS":
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            return name not in _ENV_READS
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "OMP_NUM_THREADS"
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == "OMP_NUM_THREADS" for k in node.keys)
    return False


class OpencvThreadsInForkWorkers(Rule):
    code = "DL204"
    name = "opencv-threads-in-fork-workers"
    default = False
    severity = "info"
    fix = "unsafe"
    triggers = (b"setNumThreads", b"OMP_NUM_THREADS")
    summary = "OpenCV called in forked DataLoader workers without `cv2.setNumThreads(0)` (off by default)."
    docs = {
        "What it does": """
            Reports `cv2.*` calls in DataLoader worker code (a Dataset's `__getitem__` /
            `__iter__`, `collate_fn`, `worker_init_fn` and what they call) when a loader running
            it may start its workers with fork (Linux before Python 3.14; with no loader in sight,
            the target's default) and nothing in the project calls `cv2.setNumThreads(0)` or sets
            `OMP_NUM_THREADS`. Off by default: many pipelines never hit the hang.
            """,
        "Why is this bad?": """
            OpenCV keeps a thread pool (pthreads or GNU OpenMP). After fork only the forking
            thread exists in the child, but the pool's state says its workers are there: a
            worker's first parallel OpenCV call can hang forever (the DataLoader then times out
            or waits). PyTorch's workers call `torch.set_num_threads(1)` but leave OpenCV alone.
            """,
        "Example": """
            ```python
            import cv2

            class Frames(Dataset):
                def __getitem__(self, i):
                    return cv2.resize(cv2.imread(self.paths[i]), (224, 224))
            ```
            """,
        "Use instead": """
            ```python
            import cv2
            cv2.setNumThreads(0)  # OpenCV's thread pool is not fork-safe
            ```
            or `multiprocessing_context="spawn"` on the loader, or `OMP_NUM_THREADS=1`.
            """,
        "Fix safety": """
            Inserts `cv2.setNumThreads(0)` after the module's `import cv2`: unsafe, because it also
            makes OpenCV single-threaded in the main process (slower OpenCV code outside the
            loader). `OMP_NUM_THREADS` set outside Python (a shell script) is not seen.
            """,
        "References": """
            - pytorch/pytorch#45198, #1355, #1838
            - opencv/opencv#5150
            - open-mmlab/mmfewshot#36
            """,
    }

    def extract(self, ctx):
        calls: dict[str, list] = {}
        # a callee named cv2.* comes from this file's own imports, so the file says "cv2"
        for fn in ctx.functions if "cv2" in ctx.text else ():
            for node in ctx.walk_function(fn.node):
                if isinstance(node, ast.Call):
                    callee = ctx.call_name(node)
                    if not callee or callee in _THREAD_CALLS:
                        continue
                    if callee.startswith("cv2."):
                        calls.setdefault(fn.qualname, []).append((callee, ctx.span(node), None))
                    elif ".cv2." in callee:
                        # `from utils.general import cv2`: a re-export, resolved in check()
                        prefix = callee[: callee.index(".cv2.") + 4]
                        calls.setdefault(fn.qualname, []).append((callee, ctx.span(node), prefix))
        text = ctx.text
        disabled = ("setNumThreads" in text or "OMP_NUM_THREADS" in text) and any(
            _disables_threads(ctx, node) for node in ctx.all_nodes()
        )
        point = None
        for stmt in ctx.tree.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.name == "cv2":
                        row = stmt.end_lineno
                        line = ctx.lines[row - 1] if row <= len(ctx.lines) else ""
                        if line.rstrip().endswith("\\"):
                            continue
                        point = (alias.asname or "cv2", row, len(line) + 1)
                        break
            if point:
                break
        if not calls and not disabled:
            return None
        return {"calls": calls, "disabled": disabled, "import": point}

    def _sites(self, project):
        if any(payload["disabled"] for _, payload in project.payloads(self.code)):
            return []
        defaults = project.settings.default_start_methods()
        sites = []
        for (path, qualname), uses in worker_uses(project.index).items():
            payload = project.payload(self.code, path)
            if not payload or qualname not in payload["calls"]:
                continue
            if any(u.loaders for u in uses):
                methods = start_methods_of(uses, project.settings)
            else:
                methods = set(defaults)
            if "fork" not in methods:
                continue
            for callee, span, via in payload["calls"][qualname]:
                if via is not None:
                    if project.index.resolve(via, project.files[path].root) != "cv2":
                        continue
                    callee = "cv2" + callee[len(via):]
                sites.append((path, callee, span, uses, payload["import"]))
        return sites

    def check(self, project):
        for path, callee, span, uses, point in self._sites(project):
            fix = None
            if point is not None:
                name, row, col = point
                fix = Fix(
                    "unsafe",
                    f"Add `{name}.setNumThreads(0)` after `import cv2` (OpenCV becomes single-threaded everywhere)",
                    (Edit(f"\n{name}.setNumThreads(0)  # OpenCV's thread pool is not fork-safe", Span(row, col, row, col)),),
                )
            yield Diagnostic(
                self.code,
                f"`{callee}` runs in forked DataLoader workers ({owners(uses)}) with OpenCV's thread pool inherited "
                "from the parent, which can hang the worker; call `cv2.setNumThreads(0)` after importing cv2 "
                "(or set OMP_NUM_THREADS=1, or use multiprocessing_context=\"spawn\")",
                path,
                span,
                fix=fix,
                severity=self.severity,
            )

    def fork_hazards(self, project):
        out: dict[str, list] = {}
        for path, callee, span, uses, point in self._sites(project):
            for use in uses:
                out.setdefault(use.owner_qualname, []).append(
                    (f"`{callee}` uses OpenCV's thread pool, not fork-safe without `cv2.setNumThreads(0)` (DL204)", path, span.row)
                )
        return out
