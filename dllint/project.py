"""What a rule's ``check`` sees: the settings, the project index and every analysed file's facts."""

from __future__ import annotations

from typing import Any, Iterator

from dllint.facts.extract import decode_source
from dllint.program.model import ProgramModel
from dllint.model import FileFacts


class Project:
    def __init__(self, settings, index: ProgramModel, files: dict[str, FileFacts], sources: dict[str, bytes], targets: set[str]):
        self.settings = settings
        self.index = index
        self.files = files
        self._bytes = sources
        self.targets = targets  # paths findings are reported for
        self._text: dict[str, str] = {}
        self.read: set[str] = set()  # the files whose text was asked for (the engine's early cutoff)
        self.derived = None  # a dllint.cache.Derived: fixes remember their answers across runs

    def payloads(self, code: str) -> Iterator[tuple[FileFacts, Any]]:
        for facts in self.files.values():
            payload = facts.payloads.get(code)
            if payload is not None:
                yield facts, payload

    def payload(self, code: str, path: str) -> Any:
        facts = self.files.get(path)
        return facts.payloads.get(code) if facts else None

    def remember(self, name: str, path: str, inputs: tuple, compute, check):
        """``compute()``, a pure function of the text of ``path`` and ``inputs`` (a fix's edits),
        remembered across runs when there is a cache (``cache.Derived.remember``)."""
        if self.derived is None:
            return compute()
        return self.derived.remember(name, (self.source(path), *inputs), compute, check)

    def source(self, path: str) -> str:
        """The decoded text of an analysed file (for building fix edits)."""
        self.read.add(path)
        text = self._text.get(path)
        if text is None:
            data = self._bytes.get(path)
            if data is None:
                with open(path, "rb") as fh:
                    data = fh.read()
            text = self._text[path] = decode_source(data)
        return text
