"""References into the analysed files: a class, a function, a DataLoader construction."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from dllint.model import ClassFacts, FileFacts, FunctionFacts, LoaderCall


@dataclass(frozen=True, slots=True)
class ClassRef:
    file: FileFacts
    cls: ClassFacts

    @property
    def key(self) -> tuple[str, str]:
        return (self.file.path, self.cls.qualname)


@dataclass(frozen=True, slots=True)
class FuncRef:
    file: FileFacts
    fn: FunctionFacts

    @property
    def key(self) -> tuple[str, str]:
        return (self.file.path, self.fn.qualname)


@dataclass(slots=True)
class Loader:
    file: FileFacts
    call: LoaderCall
    workers: str  # "no" | "yes" | "maybe"
    context: str | None  # explicit method, "unknown" for a non-literal context, None when absent
    # the methods workers may start with ("unknown" if undecidable): a frozenset, or a function
    # computing it when first asked (``start_methods``)
    methods: frozenset[str] | Callable[[], frozenset[str]]
    datasets: list[ClassRef] = field(default_factory=list)
    dataset_external: list[str] = field(default_factory=list)

    @property
    def start_methods(self) -> frozenset[str]:
        """The methods workers may start with. Computed when first asked: planning builds every
        loader of each of its models but asks none of them (which entry scripts reach a loader's
        file, and what they set, is the rules' question)."""
        found = self.methods
        if callable(found):
            found = self.methods = found()
        return found

    @property
    def may_start_workers(self) -> bool:
        return self.workers != "no"

    @property
    def self_test(self) -> bool:
        """Built under ``if __name__ == "__main__":`` of a module inside a package: a module's
        self-test, not how the project loads its data."""
        in_package = "." in self.file.module or self.file.is_package or self.file.signals.get("relative_imports", False)
        return self.call.in_main_guard and in_package


_TEST_DIRS = frozenset({"test", "tests", "testing", "unittests", "unit_tests"})


def is_test_path(path: str, root: str) -> bool:
    """A file of a test suite (``tests/``, ``test_*.py``, ``*_test.py``, ``conftest.py``), by the
    pytest / unittest conventions for its name and its folders under the project root."""
    rel = os.path.relpath(path, root) if os.path.isabs(path) and os.path.isabs(root) else path
    parts = rel.replace(os.sep, "/").split("/")
    name = parts[-1]
    return (
        name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
        or any(p in _TEST_DIRS for p in parts[:-1])
    )
