"""The on-disk cache (``.dllint_cache/`` under the project root, self-ignoring like ruff's).

Two things are kept:

- **facts** (``facts/<k[:2]>/<k>``, one pickle per entry): a file's ``FileFacts`` under a key made of
  everything facts depend on: the content hash, the path, module name, module root and package flag,
  the configured loader classes, and a fingerprint of the code computing them (every source file of
  the installed dllint package, the dllint version and the Python version). An edit to any rule's
  ``extract`` therefore invalidates every entry; nothing has to remember to bump a version.
- **the file index** (``files.pickle``): per path, ``(mtime_ns, size) -> content hash`` plus the
  verdicts of the byte pre-filter (keyed by a digest of the pattern), so a warm run neither reads
  nor scans an unchanged file. An entry is only trusted when mtime and size both match, and entries
  for files modified within ``RACY_NS`` of the moment they were recorded are not stored at all (a
  later same-size write within the same clock tick would be invisible: git's "racy" problem).

Every write goes to a temporary file in the same directory and is renamed into place, so
concurrent runs never see a torn entry; the file index is last-writer-wins (it is only an
accelerator: a lost entry means a file is read again). Any I/O or unpickling error disables or
bypasses the cache; it never fails a run.
"""

from __future__ import annotations

import copyreg
import dataclasses
import functools
import hashlib
import io
import os
import pickle
import sys
import time

from dllint.fix import write_atomic

CACHE_DIR = ".dllint_cache"
INDEX_FILE = "files.pickle"
FORMAT = 2
RACY_NS = 2_000_000_000  # files modified this recently are not remembered by (mtime, size)

_fingerprint: str | None = None


def content_hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def code_fingerprint() -> str:
    """Digest of the dllint sources, version and Python version: what computing facts depends on."""
    global _fingerprint
    if _fingerprint is None:
        import dllint

        h = hashlib.blake2b(digest_size=16)
        h.update(f"{FORMAT}|{dllint.__version__}|{sys.version}|{sys.implementation.cache_tag}".encode())
        base = os.path.dirname(os.path.abspath(dllint.__file__))
        for directory, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(directory, name)
                    h.update(os.path.relpath(path, base).encode() + b"\0")
                    try:
                        with open(path, "rb") as fh:
                            h.update(fh.read())
                    except OSError:
                        h.update(b"?")
        _fingerprint = h.hexdigest()
    return _fingerprint


# ---------------------------------------------------------------------------- fast pickling
#
# Slotted dataclasses (Span, Value, FunctionFacts ...) unpickle through dataclasses'
# _dataclass_setstate, which calls fields() for every object: 19 s of a 30 s warm run on the torch
# tree. Reduced to ``cls(*values)`` they load about ten times faster; the format stays plain pickle.

_table: dict | None = None


def _plain_dataclass(cls: type) -> bool:
    if not (dataclasses.is_dataclass(cls) and "__slots__" in cls.__dict__) or hasattr(cls, "__post_init__"):
        return False
    return all(f.init and not getattr(f, "kw_only", False) for f in dataclasses.fields(cls))


def _reduce(cls, names, obj):
    return cls, tuple([getattr(obj, n) for n in names])


def _dispatch_table() -> dict:
    global _table
    if _table is None:
        table = dict(copyreg.dispatch_table)
        for name, module in list(sys.modules.items()):
            if module is None or not (name == "dllint" or name.startswith("dllint.")):
                continue
            for obj in list(vars(module).values()):
                if isinstance(obj, type) and obj.__module__ == name and _plain_dataclass(obj):
                    names = tuple(f.name for f in dataclasses.fields(obj))
                    table[obj] = functools.partial(_reduce, obj, names)
        _table = table
    return _table


def dumps(obj) -> bytes:
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _dispatch_table()
    pickler.dump(obj)
    return buf.getvalue()


def default_cache_dir(root: str) -> str:
    return os.environ.get("DLLINT_CACHE_DIR") or os.path.join(root, CACHE_DIR)


class FactCache:
    """Facts by key, and per-path stat entries; see the module docstring."""

    def __init__(self, directory: str, settings_key: str = ""):
        self.directory = os.path.abspath(directory)
        self.fingerprint = code_fingerprint()
        self.settings_key = settings_key
        self.enabled = True
        self.hits = 0
        self.misses = 0
        # path -> [mtime_ns, size, hash, {pattern digest: verdict}]
        self._files: dict[str, list] = {}
        self._dirty = False
        self._load_index()

    # ------------------------------------------------------------------ file index

    def _index_path(self) -> str:
        return os.path.join(self.directory, INDEX_FILE)

    def _load_index(self) -> None:
        try:
            with open(self._index_path(), "rb") as fh:
                stored = pickle.load(fh)
        except FileNotFoundError:
            return
        except Exception:  # a torn or foreign file: start again
            return
        if isinstance(stored, dict) and stored.get("fingerprint") == (FORMAT, self.fingerprint):
            files = stored.get("files")
            if isinstance(files, dict):
                self._files = files

    def lookup(self, path: str, st: os.stat_result) -> list | None:
        """The entry for ``path`` when its mtime and size still match, else None."""
        entry = self._files.get(path)
        if entry is not None and entry[0] == st.st_mtime_ns and entry[1] == st.st_size:
            return entry
        return None

    def remember(self, path: str, st: os.stat_result | None, digest: bytes) -> list:
        """Record a file just read; returns its (possibly fresh) entry for verdicts."""
        entry = self._files.get(path)
        if st is None:
            return [0, -1, digest, {}]  # not on disk as read (an overlay): not remembered
        if entry is None or entry[0] != st.st_mtime_ns or entry[1] != st.st_size or entry[2] != digest:
            entry = [st.st_mtime_ns, st.st_size, digest, {}]
            if time.time_ns() - st.st_mtime_ns > RACY_NS:
                self._files[path] = entry
                self._dirty = True
        return entry

    def set_verdict(self, entry: list, key: bytes, verdict: bool) -> None:
        if entry[3].get(key) != verdict:
            entry[3][key] = verdict
            self._dirty = True

    def forget_missing(self, present: set[str]) -> None:
        stale = [p for p in self._files if p not in present]
        for p in stale:
            del self._files[p]
        if stale:
            self._dirty = True

    # ------------------------------------------------------------------ facts

    def facts_key(self, digest: bytes, path: str, module: str, root: str, is_package: bool) -> str:
        h = hashlib.blake2b(digest_size=20)
        h.update(f"{self.fingerprint}\0{self.settings_key}\0{path}\0{module}\0{root}\0{int(is_package)}\0".encode())
        h.update(digest)
        return h.hexdigest()

    def _facts_path(self, key: str) -> str:
        return os.path.join(self.directory, "facts", key[:2], key)

    def load_facts(self, key: str):
        if not self.enabled:
            return None
        try:
            with open(self._facts_path(key), "rb") as fh:
                facts = pickle.load(fh)
        except FileNotFoundError:
            self.misses += 1
            return None
        except Exception:  # torn, truncated or from an incompatible version: recompute
            self.misses += 1
            return None
        self.hits += 1
        return facts

    def store_facts(self, key: str, facts) -> None:
        if not self.enabled:
            return
        try:
            self._write(self._facts_path(key), dumps(facts))
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass

    # ------------------------------------------------------------------ whole results

    def result_key(self, parts: list) -> str:
        """Key of a whole run's result: everything it depends on (see Engine.analyse)."""
        h = hashlib.blake2b(digest_size=20)
        h.update(f"{self.fingerprint}\0{self.settings_key}\0".encode())
        for part in parts:
            h.update(part if isinstance(part, bytes) else repr(part).encode())
            h.update(b"\0")
        return h.hexdigest()

    def load_result(self, key: str):
        if not self.enabled:
            return None
        try:
            with open(os.path.join(self.directory, "results", key), "rb") as fh:
                return pickle.load(fh)
        except Exception:  # missing, torn or incompatible: analyse normally
            return None

    def store_result(self, key: str, result) -> None:
        if not self.enabled:
            return
        directory = os.path.join(self.directory, "results")
        try:
            if os.path.isdir(directory):  # keep only the latest few results
                old = sorted(os.scandir(directory), key=lambda e: e.stat().st_mtime_ns)
                for entry in old[:-7]:
                    os.unlink(entry.path)
            self._write(os.path.join(directory, key), dumps(result))
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass

    # ------------------------------------------------------------------ writing

    def _ensure_dir(self) -> None:
        if not os.path.isdir(self.directory):
            os.makedirs(self.directory, exist_ok=True)
        marker = os.path.join(self.directory, ".gitignore")
        if not os.path.exists(marker):
            self._atomic(marker, b"# Automatically created by dllint.\n*\n")
            tag = os.path.join(self.directory, "CACHEDIR.TAG")
            self._atomic(tag, b"Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by dllint.\n")

    def _write(self, path: str, payload: bytes) -> None:
        try:
            self._atomic(path, payload)
        except FileNotFoundError:
            self._ensure_dir()
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self._atomic(path, payload)

    @staticmethod
    def _atomic(path: str, payload: bytes) -> None:
        write_atomic(path, payload)

    def save(self) -> None:
        """Write the file index (when it changed). Errors are ignored: the cache is optional."""
        if not self.enabled or not self._dirty:
            return
        payload = {"fingerprint": (FORMAT, self.fingerprint), "files": self._files}
        try:
            self._ensure_dir()
            self._write(self._index_path(), pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
            self._dirty = False
        except OSError:
            self.enabled = False
