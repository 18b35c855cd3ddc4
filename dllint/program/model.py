"""The program model: one object built once per run from every analysed file's facts, the settings
and the layout; every rule asks it, none re-derives what it answers.

Where each question is answered:

- which file a name means, where the project ends: ``layout.py`` (import roots per file), ``symbols.py``
- what a value may hold, with evidence: ``values.py`` (evaluates the flow IR of facts/flow.py)
- loader facts (datasets, worker counts, start methods, collate_fn / worker_init_fn): ``loaders.py``
- what runs inside a worker, and which loaders run it: ``workers.py``
- how a Dataset uses an attribute per sample (len, index, iteration): ``datasets.py``
- which loaders a loop iterates, where scripts start workers: ``starts.py``
- fork hazards and the other worker hazards' sites: ``hazards.py``
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from dllint.model import FileFacts
from dllint.names import DATALOADER_CLASSES
from dllint.program.datasets import SampleUses
from dllint.program.hazards import Hazards
from dllint.program.layout import Layout, script_root
from dllint.program.loaders import Loaders
from dllint.program.refs import ClassRef, FuncRef, Loader  # noqa: F401 (re-exported)
from dllint.program.starts import Starts
from dllint.program.symbols import MAX_RESOLVE_STEPS, Symbols
from dllint.program.values import NO_CYCLE, Values
from dllint.program.workers import Workers


class ProgramModel(Symbols, Loaders, Starts, Workers, SampleUses, Hazards, Values):
    """One model of the program, built once per run from every analysed file's facts.

    Rules ask it; they never re-derive what it answers. ``files`` are the analysed files' facts,
    ``layout`` the project's files and import roots (dllint/program/layout.py)."""

    def __init__(self, files: dict[str, FileFacts], settings, layout: Layout | None = None, carry: dict | None = None, unparsed_imports: dict | None = None):
        self._given = files
        # what the models of one run's planning hand on to the next (same layout, more files):
        # answers about a file's own code that no file parsed since can change (``carried_store``)
        self._carry = carry if carry is not None else {}
        # path order: deterministic answers; a package module that runs as a script also imports
        # from its own folder (layout.ScriptRoot): that copy of its facts is made once a run, so
        # every planning model holds the same objects (answers one hands on name them)
        rooted = self.carried_store("rooted")
        self.files = {path: self.kept(rooted, path) or self.keep(rooted, path, _with_import_root(files[path])) for path in sorted(files)}
        self.settings = settings
        self.layout = layout if layout is not None else Layout.from_facts(self.files)
        # what the project's files that are not analysed import, read from their bytes by the
        # engine (dllint/prefilter.py ``module_imports``: path -> (imports, an entry script?)):
        # which start method applies to a module depends on every entry script importing it,
        # through any chain of modules (dllint/program/loaders.py, ``importers_through``)
        self.unparsed_imports = unparsed_imports or {}
        self.dataset_bases = frozenset(settings.dataset_bases)
        self.loader_classes = DATALOADER_CLASSES | frozenset(settings.dataloader_classes)
        # whether any project file's code names DataLoader workers, parsed or not: the engine
        # knows every file (dllint/prefilter.py ``names_workers``, cached per content hash; it
        # analyses a project naming none whole, even from a named file) and sets it; a model
        # built without it assumes they may be named
        self.project_names_workers = True
        # Planning (dllint/program/plan.py) asks structural questions on a partial model and
        # parses what they need before the final model is built. ``misses``: paths of unparsed
        # project files an answer needed. Only questions about code that matters record them:
        # what a Dataset or loader runs, what a loader is given. Classifying an arbitrary class
        # ("is this a Dataset?") is asked quietly: a class whose ancestry leaves the parsed files
        # through a file without trigger words cannot be a Dataset or a DataLoader (that file
        # would hold the trigger word, or the name of a project Dataset or loader class, which
        # the planner's name demand finds). Memoized answers remember the unparsed files they met
        # (``_deps``), so a quiet answer reused by a loud question still records them.
        self.misses: set[str] = set()
        # the questions asked loudly that met unparsed files (class ancestry, name resolution,
        # attribute and parameter values, worker code): the planner follows their chains (``chase``)
        self.chains: set[tuple] = set()
        # set by the engine once planning is over (the model the rules ask: ``settle``): from
        # then on, answers that only differ in the misses and chains they record may be memoized
        self.settled = False
        # a model of the engine's planning (each round's): what planning never asks is left to
        # be computed when asked (``Loaders._loader``)
        self.planning = False
        self._quiet = 0
        self._deps: list[set[str]] = []  # one collector per memoized computation in progress
        # (name, root) -> (what it resolves to, the unparsed files it met, whether it met a cycle)
        self._resolve_memo: dict[tuple[str, str | None], tuple[object, frozenset[str], bool]] = {}
        self._resolve_budget = MAX_RESOLVE_STEPS
        # the resolutions and MROs in progress (``_Settling``: whether each met a cycle), and the
        # answers final for the run that planning's models hand on (``resolve``, ``mro``)
        self._open_answers: list = []
        self._final_resolutions: dict = self.carried_store("resolve", on_layout=True)
        self._final_mros: dict = self.carried_store("mro", on_layout=True)
        self._dataset_memo: dict[tuple[str, str], bool] = {}
        self._loader_class_memo: dict[tuple[str, str], bool] = {}
        # the value evaluator's state (dllint/program/values.py): its memo, the values being
        # computed by nesting level, what is provisional on a cycle still open, and its budgets
        self._val_memo: dict = {}
        self._active: dict = {}
        self._reentered: dict = {}  # expressions being evaluated -> their level (values.py)
        self._provisional: list = []
        self._prov_low: dict = {}
        self._low = NO_CYCLE
        self._nesting = 0
        self._calls_active = 0
        self._bound_calls = 0


    # ------------------------------------------------------------------ answers kept for the run

    def settle(self) -> None:
        """Planning is over: this model is the one the rules ask (``settled``). Its loaders'
        start methods, left to be computed when asked, refer to it from now on: the loaders may
        be kept longer than a run's model is (an Analysis's project)."""
        self.settled = True
        for name in ("loaders", "library_loaders"):
            for loader in self.__dict__.get(name, ()):
                if callable(loader.methods):
                    loader.methods = partial(self.global_start_methods, loader.file)

    def carried_store(self, name: str, on_layout: bool = False) -> dict:
        """The store of answers about single files that the run's planning models hand on
        (path -> (the facts the engine holds for the file, the answer): ``kept``, ``keep``).
        ``on_layout``: answers that depend on the layout too, dropped when it changes (a module
        renamed: ``Layout.version``)."""
        found = self._carry.get(name)
        if on_layout:
            if found is None or found[0] is not self.layout or found[1] != self.layout.version:
                found = self._carry[name] = (self.layout, self.layout.version, {})
            return found[2]
        if found is None:
            found = self._carry[name] = {}
        return found

    def kept(self, store: dict, path: str):
        """The answer ``store`` holds for a file, while the engine holds the same facts object
        for it (a file's facts do not change under a run; a script's model copy does, so the
        engine's is the key); None otherwise."""
        found = store.get(path)
        if found is not None and found[0] is self._given.get(path) and found[0] is not None:
            return found[1]
        return None

    def keep(self, store: dict, path: str, answer):
        """``answer``, kept in ``store`` for the file (``kept``)."""
        store[path] = (self._given.get(path), answer)
        return answer


def _with_import_root(facts: FileFacts) -> FileFacts:
    root = script_root(facts)
    return facts if root is facts.root else replace(facts, root=root)
