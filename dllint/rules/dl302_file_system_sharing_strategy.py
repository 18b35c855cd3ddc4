"""DL302 file-system-sharing-strategy."""

from __future__ import annotations

import ast

from dllint.model import Diagnostic
from dllint.rules.base import Rule

SET_SHARING_STRATEGY = frozenset(
    {"torch.multiprocessing.set_sharing_strategy", "torch.multiprocessing.spawn.set_sharing_strategy"}
)


class FileSystemSharingStrategy(Rule):
    code = "DL302"
    name = "file-system-sharing-strategy"
    severity = "warning"
    triggers = (b"set_sharing_strategy",)
    summary = '`set_sharing_strategy("file_system")`: leaks /dev/shm when a worker dies; fix the cause of "Too many open files" instead.'
    docs = {
        "What it does": """
            Flags `torch.multiprocessing.set_sharing_strategy("file_system")` (however imported).
            Stays silent for `"file_descriptor"` and when every target platform is macOS or
            Windows, where `file_system` is the only strategy.
            """,
        "Why is this bad?": """
            On Linux the default strategy is `file_descriptor`. Users switch to `file_system` to get
            past "Too many open files. Communication with the workers is no longer possible"
            or "received 0 items of ancdata". PyTorch's docs: `file_system` "is prone to shared
            memory leaks ... If the processes fatally crash, or are killed ... the files will
            remain in the system ... until the system is restarted" -- a crashed job fills
            /dev/shm for every later job on the machine. The usual root cause is batch tensors
            kept across iterations (DL305): each holds a shared-memory descriptor.
            """,
        "Example": """
            ```python
            import torch.multiprocessing as mp
            mp.set_sharing_strategy("file_system")
            ```
            """,
        "Use instead": """
            Keep the default strategy; `.clone()` (or `.item()`, `.tolist()`) what you keep from
            each batch, and raise the descriptor limit (`ulimit -n 65536`) if you truly need more.
            """,
        "Fix safety": "No fix: the right change is elsewhere (DL305, `ulimit -n`).",
        "References": """
            - https://pytorch.org/docs/stable/multiprocessing.html#sharing-strategies
            - pytorch/pytorch#973, PR #34768, #30225
            """,
    }

    def extract(self, ctx):
        out = []
        # a call resolving to set_sharing_strategy names it in this file (an import, an alias)
        for node in ctx.nodes(ast.Call) if "set_sharing_strategy" in ctx.text else ():
            if ctx.call_name(node) in SET_SHARING_STRATEGY:
                arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "new_strategy"), None)
                if ctx.const(arg, None) == "file_system":
                    out.append(ctx.span(node))
        return out or None

    def check(self, project):
        if "linux" not in project.settings.platforms:
            return
        for facts, spans in project.payloads(self.code):
            for span in spans:
                yield Diagnostic(
                    self.code,
                    'Sharing strategy "file_system" leaks /dev/shm segments when a worker is killed',
                    facts.path,
                    span,
                    severity=self.severity,
                    details=(("why", "find what keeps batch tensors alive (DL305) and raise `ulimit -n` instead"),),
                )
