"""What a rule's ``check`` sees: the settings, the project index and every analysed file's facts."""

from __future__ import annotations

from typing import Any, Callable, Iterator

from dllint.facts.extract import decode_source
from dllint.program.model import ProgramModel
from dllint.model import FileFacts


# name -> a pure function (project, path, *inputs) of the text of ``path`` and ``inputs`` whose
# answer a rule asks through ``Project.remember`` (a fix's edits): registered by ``replayable``
REPLAYABLE: dict[str, Callable] = {}


def replayable(name: str):
    """Registers a function for ``Project.remember`` under ``name`` (the early cutoff asks it again
    on an edited file's new text: dllint/engine.py ``_cutoff``)."""
    def register(fn):
        REPLAYABLE[name] = fn
        return fn
    return register


class Project:
    def __init__(self, settings, index: ProgramModel, files: dict[str, FileFacts], sources: dict[str, bytes], targets: set[str]):
        self.settings = settings
        self.index = index
        self.files = files
        self._bytes = sources
        self.targets = targets  # paths findings are reported for
        self._text: dict[str, str] = {}
        self.read: set[str] = set()  # the files whose text was asked for (the engine's early cutoff)
        # (path, name, inputs, answer) of each ``remember``: the cutoff asks those again instead
        self.replays: list[tuple[str, str, tuple, Any]] = []
        self._remembering = 0
        self.derived = None  # a dllint.cache.Derived: fixes remember their answers across runs
        # whether fixes carry their edits (dllint.engine.Engine.edits); when not, a rule may give
        # a Fix with no edits that only says one exists, when it knows that without building them
        self.edits = True
        # attr -> [(path, facts)] of the project's files outside the analysis whose code may use
        # ``x.attr``, their facts computed on demand (dllint/engine.py); None: no such files
        self.elsewhere: Callable[[str], list[tuple[str, FileFacts]]] | None = None

    def payloads(self, code: str) -> Iterator[tuple[FileFacts, Any]]:
        for facts in self.files.values():
            payload = facts.payloads.get(code)
            if payload is not None:
                yield facts, payload

    def payload(self, code: str, path: str) -> Any:
        facts = self.files.get(path)
        return facts.payloads.get(code) if facts else None

    def uses_elsewhere(self, attr: str) -> Iterator[tuple[str, tuple]]:
        """(path, use) of each use of an attribute named ``attr`` that the facts' ``attr_uses``
        record (a use a read-only list would not answer alike) in the project's files the analysis
        did not take in. A safe fix's proof covers every file of the project, not only those
        analysed: a file named alone (a pre-commit hook's staged file) is analysed with few others,
        and the whole project's run leaves out files without trigger words. The files whose bytes
        name ``.attr`` are parsed for it (their facts, cached as any file's)."""
        if self.elsewhere is None:
            return
        for path, facts in self.elsewhere(attr):
            for use in facts.signals.get("attr_uses", {}).get(attr, ()):
                yield path, use

    def remember(self, name: str, path: str, inputs: tuple, check):
        """``REPLAYABLE[name](self, path, *inputs)``, a pure function of the text of ``path`` and
        ``inputs`` (a fix's edits): remembered across runs when there is a cache
        (``cache.Derived.remember``; ``check`` accepts a stored answer's shape), and recorded in
        ``replays``. Its reading of the file is not in ``read``: after an edit that changes no
        fact, the early cutoff asks the function again on the new text, and the stored findings
        stand if every answer is the same."""
        compute = REPLAYABLE[name]
        self._remembering += 1
        try:
            if self.derived is None:
                value = compute(self, path, *inputs)
            else:
                value = self.derived.remember(name, (self.source(path), *inputs), lambda: compute(self, path, *inputs), check)
        finally:
            self._remembering -= 1
        self.replays.append((path, name, inputs, value))
        return value

    def source(self, path: str) -> str:
        """The decoded text of an analysed file (for building fix edits)."""
        if not self._remembering:
            self.read.add(path)
        text = self._text.get(path)
        if text is None:
            data = self._bytes.get(path)
            if data is None:
                with open(path, "rb") as fh:
                    data = fh.read()
            text = self._text[path] = decode_source(data)
        return text
