"""Where the project ends and which file a module name means, as Python would decide it.

**The project.** The nearest folder above the named paths that holds ``pyproject.toml``,
``setup.py``, ``setup.cfg`` or ``.git`` is the project root: its files (discovered with the
excludes and ``.gitignore``) are the project. With no marker there is no project beyond the named
paths: only they and the modules they import (found on the file system as the interpreter would
find them) are read, never their parents' other files.

**Import roots per file** (pyright's execution roots, CPython's ``sys.path``): for a file, the
folder its top-level package sits in (for a script outside any package, its own folder: that is
``sys.path[0]`` when it runs), then the configured ``src`` roots (default: the project root and
its ``src/``). A module name is looked up root by root; the first root holding a regular module or
package wins, and namespace packages (folders without ``__init__.py``) are merged across roots as
the interpreter merges them. When no root holds it, a module that exactly one project file
provides is taken (scripts run with a changed ``sys.path``); two or more candidates with nothing to
choose between them are ``AMBIGUOUS``, and nothing that depends on the answer is reported.

**A module's name** comes from its path (the folders with ``__init__.py`` above it), unless its
own relative imports reach higher: ``from ..base import X`` in ``lib/pkg/sub/m.py`` without any
``__init__.py`` runs only as ``pkg.sub.m`` of namespace packages rooted at ``lib``
(dllint/facts/extract.py ``namespace_name``; the engine renames the file once its facts say so).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from dllint.discover import ModuleName, module_name
from dllint.facts.flow import LIBRARY_ROOTS
from dllint.names import ML_DATASET_LIBRARIES

# library names a project's own data module beside its scripts often has, also in a package
# folder (``reid/datasets.py`` beside ``reid/train.py``; Hugging Face's ``datasets``). Other library
# names in package folders (``pkg/torch.py``, ``pkg/lightning/``) are imported as parts of their
# package: counting them would keep every ``torch.*`` call in every file's facts.
SIBLING_MODULE_NAMES = frozenset({"datasets"})

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


class _Ambiguous:
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "AMBIGUOUS"

    def __bool__(self) -> bool:
        return False


AMBIGUOUS = _Ambiguous()


class ScriptRoot(str):
    """The package root of a module that also runs as a script (``python pkg/eval/run.py``, a
    package module with ``if __name__ == "__main__":``): run so, its own folder is ``sys.path[0]``,
    searched before the package root, and ``import utils`` there means its sibling
    ``pkg/eval/utils.py``. Names of its own package (``pkg.eval.run.Images``: how the model
    names the file's own definitions, and the package's absolute imports) are looked up from the
    package root only. A ``str`` (the package root) that remembers that folder and package; two
    are the same root only with the same folder (the resolution memo is keyed by root)."""

    def __new__(cls, root: str, script_dir: str, package: str):
        obj = super().__new__(cls, root)
        obj.script_dir = script_dir
        obj.package = package
        return obj

    def __eq__(self, other) -> bool:
        return str.__eq__(self, other) and getattr(other, "script_dir", None) == self.script_dir

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((str(self), self.script_dir))

    def __reduce__(self):
        return (ScriptRoot, (str(self), self.script_dir, self.package))


def script_root(facts) -> str:
    """The import root of an analysed file: a package module with a main guard also runs as a
    script (``ScriptRoot``); any other file's package root."""
    if facts.main_guard is None or "." not in facts.module or facts.is_package or isinstance(facts.root, ScriptRoot):
        return facts.root
    return ScriptRoot(facts.root, os.path.dirname(facts.path), facts.module.split(".")[0])


def find_project_root(paths: list[str]) -> str | None:
    """The nearest folder above the paths holding a project marker, or None."""
    starts = [os.path.abspath(p) for p in paths] or [os.getcwd()]
    base = os.path.commonpath(starts) if len(starts) > 1 else starts[0]
    if not os.path.isdir(base):
        base = os.path.dirname(base)
    cur = base
    while True:
        if any(os.path.exists(os.path.join(cur, marker)) for marker in MARKERS):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def scope_root(paths: list[str]) -> str:
    """The folder relative paths are shown from and the cache lives in, for a run without a
    project marker: the folder the named paths share."""
    starts = [os.path.abspath(p) for p in paths] or [os.getcwd()]
    base = os.path.commonpath(starts) if len(starts) > 1 else starts[0]
    return base if os.path.isdir(base) else os.path.dirname(base)


@dataclass
class Layout:
    """The project's files and the import search roots.

    ``files``: the project's source files (absolute paths). ``bounded``: True when a project
    marker was found (then a module is a project module only if it is one of ``files``); False
    for a run without a marker (then modules are found on the file system, and
    :meth:`find` adds what it finds to ``files``)."""

    root: str
    files: set[str] = field(default_factory=set)
    bounded: bool = True
    src: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self._names: dict[str, ModuleName] = {}
        self._by_module: dict[str, list[str]] | None = None
        self._tops: set[str] | None = None  # ``_known_tops``
        self._find_memo: dict[tuple[str, str], object] = {}
        self._dirs: set[str] | None = None
        self._script_dirs: set[str] | None = None
        self._by_suffix: tuple[dict, dict[str, list[str]]] | None = None  # ``_inside_root``
        # (where, path end, folder of the file adding it) of the folders project files put on
        # sys.path (dllint/facts/syspath.py)
        self.search_tails: set[tuple[str, tuple[str, ...], str]] = set()
        self._tail_dirs: dict[str, list[tuple[str, bool]]] | None = None
        # changes when a module name or a file is added or renamed: what was found by name
        # before may be found differently now (the call index keeps its per-file entries only
        # while this stays: dllint/program/values.py ``_build_call_index``)
        self.version = 0
        if not self.src:
            self.src = (self.root, os.path.join(self.root, "src"))

    @classmethod
    def from_facts(cls, files: dict, root: str | None = None) -> "Layout":
        """A layout of exactly these analysed files, their module names as their facts give them
        (the model's unit tests build models from hand-written facts)."""
        roots = sorted({f.root for f in files.values()})
        layout = cls(root or (roots[0] if roots else "/"), set(files), True)
        for path, facts in files.items():
            layout._names[path] = ModuleName(facts.module, facts.root, facts.is_package)
        return layout

    # ------------------------------------------------------------------ names

    def name(self, path: str) -> ModuleName:
        found = self._names.get(path)
        if found is None:
            found = self._names[path] = module_name(path)
        return found

    def rename(self, path: str, name: ModuleName) -> None:
        """The module name a file's own code shows (dllint/facts/extract.py ``namespace_name``:
        relative imports above the packages its path shows)."""
        if self.name(path) != name:
            self._names[path] = name
            self.version += 1
            self._by_module = self._tops = None
            self._find_memo.clear()

    def add(self, path: str) -> None:
        if path not in self.files:
            self.files.add(path)
            self.version += 1
            self._by_module = self._tops = None
            self._dirs = None
            self._script_dirs = None
            self._tail_dirs = None
            self._find_memo.clear()

    def add_search_tails(self, path: str, tails) -> None:
        """(where, path end) of folders the file ``path`` puts on ``sys.path`` (its facts'
        ``sys_path``)."""
        origin = os.path.dirname(os.path.abspath(path))
        new = {(where, tuple(t), origin) for where, t in tails} - self.search_tails
        if new:
            self.search_tails |= new
            self._tail_dirs = None
            self.version += 1
            self._find_memo.clear()

    def by_module(self) -> dict[str, list[str]]:
        """Module name (as its file's package root gives it) -> the project files providing it."""
        if self._by_module is None:
            out: dict[str, list[str]] = {}
            for path in sorted(self.files):
                if path.endswith(".py") or path.endswith(".ipynb"):
                    out.setdefault(self.name(path).module, []).append(path)
            self._by_module = out
        return self._by_module

    def shadowing(self, names: frozenset[str] = LIBRARY_ROOTS) -> frozenset[str]:
        """Those of ``names`` (libraries' top-level names: ``datasets``, ``logging``) that a
        project folder or module may also be imported as: an import of one may load the project's
        own (a script beside its ``datasets/`` package imports that one first), so the facts keep
        the calls into it (dllint/facts/flow.py). A folder or module counts when the folder
        holding it is not a package (no ``__init__.py``): it is then importable by that name from
        that folder as a search root (``nemo/collections/`` is ``nemo.collections``, not
        ``collections``). Without a marker, the named files' folders are listed."""
        top = os.path.abspath(self.root)
        inside = [d for d in self._folders() if d.startswith(top + os.sep)]
        found: set[str] = set()
        for path in (*self.files, *inside):
            stem, ext = os.path.splitext(os.path.basename(path))
            if stem in names and ext in ("", ".py", ".pyi") and (
                (stem in SIBLING_MODULE_NAMES and ext == ".py")
                or not self._isfile(os.path.join(os.path.dirname(path), "__init__.py"))
            ):
                # (its folder is not a package; or a data module beside a package's scripts,
                # ``reid/datasets.py``, which ``reid/train.py`` imports by that name: its folder is
                # ``sys.path[0]``)
                found.add(stem)
        if not self.bounded:
            for folder in {os.path.dirname(p) for p in self.files}:
                try:
                    entries = os.listdir(folder)
                except OSError:
                    continue
                found.update(n for n in (os.path.splitext(e)[0] for e in entries) if n in names)
        return frozenset(found)

    def roots_for(self, file_root: str, top: str | None = None) -> tuple[str, ...]:
        """The import search roots of a file whose package root is ``file_root``, in order, for
        a module whose top-level name is ``top``."""
        out = [str(file_root)]
        script_dir = getattr(file_root, "script_dir", None)
        if script_dir is not None and script_dir not in out and top != file_root.package:
            out.insert(0, script_dir)
        for r in self.src:
            if str(r) not in out:
                out.append(str(r))
        return tuple(out)

    # ------------------------------------------------------------------ finding modules

    def _isfile(self, path: str) -> bool:
        if self.bounded:
            return path in self.files
        if path in self.files:
            return True
        return os.path.isfile(path)

    def _isdir(self, path: str) -> bool:
        if self.bounded:
            return path in self._folders()
        return os.path.isdir(path)

    def _folders(self) -> set[str]:
        """Every folder holding a known file, and their ancestors."""
        if self._dirs is None:
            dirs: set[str] = set()
            for f in self.files:
                d = os.path.dirname(f)
                while d not in dirs and len(d) > 1:
                    dirs.add(d)
                    d = os.path.dirname(d)
            self._dirs = dirs
        return self._dirs

    def _module_file(self, base: str) -> str | None:
        """``base.py`` or ``base/__init__.py`` when present (a regular module or package)."""
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if self._isfile(candidate):
                return candidate
        return None

    def find(self, module: str, file_root: str) -> str | None | _Ambiguous:
        """The file that ``import module`` loads in a file whose package root is ``file_root``:
        a path, None (not a project module: a library, the standard library, a namespace package
        with no module file), or AMBIGUOUS."""
        key = (module, file_root)
        memo = self._find_memo
        if key in memo:
            return memo[key]  # type: ignore[return-value]
        found = self._find(module, file_root)
        if found and not self.bounded and found not in self.files:
            self.files.add(found)  # without a marker the project grows by what is imported
            self._by_module = self._tops = None
        memo[key] = found
        return found

    def may_be_project_top(self, name: str) -> bool:
        """False when no module whose dotted name starts with ``name`` can be a project module
        (``find`` gives None for each, whatever the root): a bounded project's top-level names
        (``_known_tops``)."""
        return not self.bounded or name in self._known_tops()

    def _known_tops(self) -> set[str]:
        """Every name a bounded project's files and folders are known by (each part of each
        path, with and without its extension) and the first part of every module name: a module
        whose top-level name is none of them is no project module, whatever the root (most
        imports of an ML project are of libraries: diffusers looks up about 9,000 (module, root)
        pairs a run)."""
        if self._tops is None:
            tops: set[str] = set()
            for path in self.files:
                for part in path.split(os.sep):
                    tops.add(part)
                    stem, dot, _ext = part.rpartition(".")
                    if dot:
                        tops.add(stem)
            tops.update(m.split(".", 1)[0] for m in self.by_module())
            self._tops = tops
        return self._tops

    def _find(self, module: str, file_root: str):
        parts = module.split(".")
        if self.bounded and parts[0] not in self._known_tops():
            return None
        if not all(p.isidentifier() for p in parts):
            # a script whose file name is not a module name (train-net.py): nothing imports it,
            # but its own names (``train-net.Images``) are its module's
            return self._fallback(module, None)
        # the top-level name: the first root with a regular module/package wins; namespace
        # portions are merged in root order
        portions: list[str] = []
        for root in self.roots_for(file_root, parts[0]):
            base = os.path.join(root, parts[0])
            hit = self._module_file(base)
            if hit is not None:
                found = self._descend(hit, base, parts[1:])
                if found is None and parts[1:] and not hit.endswith("__init__.py"):
                    # ``train.data_utils`` where this root holds the script ``train.py``: a module
                    # holds no submodules, so the import fails from here; the program runs with
                    # another root first (``python -m train.train`` from the project root)
                    continue
                return found
            if self._isdir(base):
                portions.append(base)
        for base in portions:
            found = self._descend(None, base, parts[1:])
            if found:
                return found
        if portions:
            return None  # a namespace package without that submodule: not decided by a guess
        return self._fallback(module, file_root)

    def _on_added_paths(self, module: str):
        """The module as found in the project folders that some project file puts on sys.path
        (their path ends: ``search_tails``): the file, AMBIGUOUS when two such folders hold it, or
        None. Asked only where no search root holds the module: such a folder's modules are
        otherwise not importable. A folder appended to the path does not shadow an installed
        library (the standard library's and common libraries' names: ``torch.utils.data`` is
        torch's); one inserted before does (TorchSeg's ``furnace/datasets/`` is its ``datasets``)."""
        parts = module.split(".")
        if not self.search_tails or not all(p.isidentifier() for p in parts):
            return None
        library = parts[0] in LIBRARY_ROOTS or parts[0] in ML_DATASET_LIBRARIES
        if self._tail_dirs is None:
            self._tail_dirs = self._added_folders()
        found = set()
        for folder, first in self._tail_dirs.get(parts[0], ()):
            if library and not first:
                continue
            base = os.path.join(folder, parts[0])
            hit = self._module_file(base)
            got = self._descend(hit, base, parts[1:]) if hit is not None or self._isdir(base) else None
            if got:
                found.add(got)
        if len(found) > 1:
            return AMBIGUOUS
        return found.pop() if found else None

    def _added_folders(self) -> dict[str, list[tuple[str, bool]]]:
        """The folders put on sys.path (``search_tails``) by the names they hold: name -> [(folder,
        inserted first)]."""
        # the folder a path names is an ancestor of the file adding it, or that file's own
        # folder, joined with the path's end: the part written in the code (a root computed
        # from ``__file__`` or the working folder, then ``'furnace'``); a folder of the same
        # name elsewhere (another sub-project of a monorepo) is not it
        top = os.path.abspath(self.root)
        where_of: dict[str, bool] = {}  # folder -> inserted first
        for where, tail, origin in self.search_tails:
            folder = origin
            while folder == top or folder.startswith(top + os.sep):
                candidate = os.path.join(folder, *tail)
                if self._isdir(candidate):
                    where_of[candidate] = where_of.get(candidate, False) or where == "first"
                if folder == top:
                    break
                folder = os.path.dirname(folder)
        # each such folder by the names it holds (``datasets`` for furnace/datasets/): a
        # module's first name picks the folders to look in
        children: dict[str, list[tuple[str, bool]]] = {}
        if where_of:
            below: dict[str, set[str]] = {}
            for entry in (*self.files, *self._folders()):
                below.setdefault(os.path.dirname(entry), set()).add(os.path.basename(entry))
            for folder, first in sorted(where_of.items()):
                names = below.get(folder, set())
                if not self.bounded:  # (the file system's, beyond the files read so far)
                    try:
                        names = names | set(os.listdir(folder))
                    except OSError:
                        pass
                for name in names:
                    stem = name.removesuffix(".py")
                    children.setdefault(stem, []).append((folder, first))
        return children

    def _descend(self, hit: str | None, base: str, rest: list[str]):
        if not rest:
            return hit
        if hit is not None and not hit.endswith("__init__.py"):
            return None  # a module, not a package: ``mod.attr`` is an attribute, not a submodule
        cur = base
        for i, part in enumerate(rest):
            cur = os.path.join(cur, part)
            found = self._module_file(cur)
            if found is None:
                if self._isdir(cur):
                    continue  # a namespace subpackage
                return None
            if i == len(rest) - 1:
                return found
            if not found.endswith("__init__.py"):
                return None
        return None

    def _inside_root(self, module: str, file_root: str):
        """``from data import srdata`` in ``code/data/div2k.py`` of a package whose root is above
        ``code/`` (a stray ``code/__init__.py``): no root holds ``data``, but ``python main.py``
        in ``code/`` puts that folder first on ``sys.path``. The one file of the same package
        root whose module name ends with the imported name (``code.data.srdata``); AMBIGUOUS for
        several; None for none, or for the name of a library or the standard library (a folder
        named so inside a package is not what ``import datasets`` loads)."""
        if module.split(".", 1)[0] in LIBRARY_ROOTS:
            return None
        by_module = self.by_module()
        if self._by_suffix is None or self._by_suffix[0] is not by_module:
            index: dict[str, list[str]] = {}
            for name, paths in by_module.items():
                parts = name.split(".")
                for k in range(1, len(parts)):
                    index.setdefault(".".join(parts[k:]), []).extend(paths)
            self._by_suffix = (by_module, index)
        found = [p for p in self._by_suffix[1].get(module, ()) if str(self.name(p).root) == str(file_root)]
        if len(found) == 1:
            return found[0]
        return AMBIGUOUS if found else None

    def _fallback(self, module: str, file_root: str | None):
        """No root holds the module: one project file that provides it, or AMBIGUOUS; else the
        nearest folder of scripts above the file's own root that holds it by path (``lib/trainer.py``, a
        module of a folder without ``__init__.py``, imported by ``python ddp_main.py`` beside
        ``lib/`` and ``datasets/``: its ``from datasets.scannet.data import X`` is found from
        the script's folder, ``sys.path[0]``, which is above the module's own)."""
        added = self._on_added_paths(module)
        if added is not None:
            return added
        candidates = self.by_module().get(module, [])
        if len(candidates) == 1:
            return candidates[0]
        if len(candidates) > 1:
            return AMBIGUOUS
        if file_root is None:
            return None
        inner = self._inside_root(module, file_root)
        if inner is not None:
            return inner
        parts = module.split(".")
        top = os.path.abspath(self.root)
        folder = os.path.dirname(os.path.abspath(str(file_root)))
        if self._script_dirs is None:
            self._script_dirs = {os.path.dirname(f) for f in self.files if f.endswith(".py")}
        while len(folder) > len(top) and folder.startswith(top + os.sep):
            # only a folder of scripts is sys.path[0]; a package's folder is not
            # (``src/gluonts/torch/`` is no ``torch`` for ``src/gluonts/nursery/x.py``)
            if folder in self._script_dirs and not self._isfile(os.path.join(folder, "__init__.py")):
                base = os.path.join(folder, parts[0])
                hit = self._module_file(base)
                found = self._descend(hit, base, parts[1:]) if hit is not None or self._isdir(base) else None
                if found:
                    return found
            folder = os.path.dirname(folder)
        return None
