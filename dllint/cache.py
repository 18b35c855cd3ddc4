"""The on-disk cache (``.dllint_cache/`` under the project root, self-ignoring like ruff's).

The cache only ever makes a run faster: loading it never runs code, and nothing in it can fail a
run or change its findings. Every file is plain data in ``dllint.serial``'s checked, tagged JSON
(never pickle: a project can ship a ``.dllint_cache/``, and unpickling runs code); a file that is
torn, from another format version, of the wrong shape or not dllint's at all is ignored (and
rewritten); a pickle found there is reported once. See ``check.py`` for the last line of defence: a
run that fails while using cached data is run again without reading the cache.

Three things are kept:

- **facts** (``facts/<k[:2]>/<k>``, one file per entry): a file's ``FileFacts`` under a key made of
  everything facts depend on: the content hash (a notebook's: of its code cells), the path, module name, module root and package flag,
  the configured loader classes, and a fingerprint of the code computing them (every source file of
  the installed dllint package, the dllint version and the Python version). An edit to any rule's
  ``extract`` therefore invalidates every entry; nothing has to remember to bump a version. The
  worker processes that computed facts write their entries themselves, once idle (``FactWriter``,
  ``workers.store_when_idle``); the run waits for them before it ends.
- **the plan** (``plans/<key>``): the files the last whole run analysed (the pre-filter's
  and planning's answer), keyed by the settings and the targets. A later run starts from them
  (those that still exist) and plans only what an edit adds: parsing more files than needed never
  changes a finding (the engine's invariant, tests/test_prefilter_equivalence.py), it only saves
  the planning rounds.
- **the early-cutoff record** (``cutoff/<key>``): a whole run's findings, the hashes of the
  project's files, the files it analysed and those whose text a rule read (fixes). A later run
  whose only edits leave the edited files' facts exactly as they were (a comment, a blank line at
  the end) reuses those findings without building the model (``Engine._cutoff`` says why that is
  sound); any other edit runs in full.
- **derived answers** (``derived/<k[:2]>/<k>``): pure functions of a file's text that fixes
  compute (DL101's converted constructor), keyed by every input, so a full run after an edit
  elsewhere does not run libcst again.
- **the imports of files not analysed** (``imports``): what each file a run did not analyse
  imports, read from its bytes (``prefilter.module_imports``), by its content hash; written by a
  run that needed them (a project setting a start method: dllint/engine.py
  ``_unparsed_imports``), for the files of that run only.
- **the file index** (``files.json``): per path, its stat signature -> content hash, plus the
  verdicts of the byte pre-filter (keyed by a digest of the pattern), so a warm run neither reads
  nor scans an unchanged file. The signature is what git compares: modification time, status-change
  time (ctime, which every write sets and no tool can set back, so a same-size edit whose mtime was
  restored by ``cp -p``, ``rsync -t`` or ``touch -r`` is seen), size and inode. Entries for files
  modified within ``RACY_NS`` of the moment they were recorded are not stored at all (a later
  same-size write within the same clock tick would be invisible: git's "racy" problem). Where ctime
  is not a change time (Windows: creation time) the signature is not trusted and files are read and
  hashed every run (facts and verdicts are still reused by content hash). Always hashing instead
  costs about 0.15 s per 50 MB of source in the page cache (the torch tree: +30 % on a warm run).

Every write goes to a temporary file in ``tmp/`` and is renamed into place (temporary files a
killed run left there are removed by a later run after an hour), so
concurrent runs never see a torn entry; the file index is last-writer-wins (it is only an
accelerator: a lost entry means a file is read again). Any I/O error disables or bypasses the
cache; it never fails a run.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time

from dllint import serial
from dllint.fix import write_atomic
from dllint.serial import CacheDataError

CACHE_DIR = ".dllint_cache"
INDEX_FILE = "files.json"
IMPORTS_FILE = "imports"  # (``load_imports``)
FORMAT = 3
RACY_NS = 2_000_000_000  # files modified this recently are not remembered by their stat signature
TRUST_STAT = os.name == "posix"
STALE_TMP_S = 3600  # temporary files older than this in <cache>/tmp are from killed runs  # ctime is a change time (see the module docstring)

_fingerprint: str | None = None


def content_hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def code_fingerprint() -> str:
    """Digest of the dllint sources, version and Python version: what computing facts depends on."""
    global _fingerprint
    if _fingerprint is None:
        import dllint

        h = hashlib.blake2b(digest_size=16)
        h.update(f"{FORMAT}|{serial.FORMAT}|{dllint.__version__}|{sys.version}|{sys.implementation.cache_tag}".encode())
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


def dumps(obj) -> bytes:
    """A cache file holding ``obj`` (plain data: see dllint.serial)."""
    return serial.dumps(obj)


def loads(blob: bytes):
    """The data of a cache file; CacheDataError when it is not a valid one."""
    return serial.loads(blob)


def default_cache_dir(root: str) -> str:
    return os.environ.get("DLLINT_CACHE_DIR") or os.path.join(root, CACHE_DIR)


class FactCache:
    """Facts by key, and per-path stat entries; see the module docstring."""

    def __init__(self, directory: str, settings_key: str = ""):
        self.directory = os.path.abspath(directory)
        self.fingerprint = code_fingerprint()
        self.settings_key = settings_key
        self.enabled = True
        self.read_enabled = True  # False: entries are written but never read (see check.py)
        self.hits = 0
        self.misses = 0
        self.served = False  # whether anything read from the cache was used
        self.foreign: list[str] = []  # cache files that are not dllint's (pickles): reported once
        # path -> [mtime_ns, size, hash, {pattern digest: verdict}, ctime_ns, inode]
        self._files: dict[str, list] = {}
        self._dirty = False
        self._load_index()

    def _read(self, path: str):
        """The data of one cache file, or None (missing, damaged, another version, not ours)."""
        if not self.read_enabled:
            return None
        try:
            with open(path, "rb") as fh:
                blob = fh.read()
            return serial.loads(blob) if not path.endswith(".json") else serial.loads_json(blob)
        except OSError:
            return None
        except CacheDataError as exc:
            if exc.kind == "foreign":
                self.foreign.append(path)
            return None

    def warnings(self) -> list[str]:
        """What to tell the user about the cache (once per run)."""
        if not self.foreign:
            return []
        n = len(set(self.foreign))
        return [
            f"ignored {n} file{'s' if n != 1 else ''} in the cache {self.directory} holding pickled data "
            "(dllint never loads pickles: they can run code); they are replaced by dllint's own"
        ]

    # ------------------------------------------------------------------ file index

    def _index_path(self) -> str:
        return os.path.join(self.directory, INDEX_FILE)

    def _load_index(self) -> None:
        stored = self._read(self._index_path())
        if not (isinstance(stored, dict) and stored.get("format") == FORMAT and stored.get("fingerprint") == self.fingerprint):
            return
        files = stored.get("files")
        if not isinstance(files, dict):
            return
        for path, raw in files.items():
            entry = _index_entry(raw)
            if entry is not None:
                self._files[path] = entry

    def lookup(self, path: str, st: os.stat_result) -> list | None:
        """The entry for ``path`` when its stat signature still matches, else None."""
        entry = self._files.get(path)
        if entry is not None and TRUST_STAT and entry[0] == st.st_mtime_ns and entry[1] == st.st_size and entry[4] == st.st_ctime_ns and entry[5] == st.st_ino:
            self.served = True
            return entry
        return None

    def remember(self, path: str, st: os.stat_result | None, digest: bytes) -> list:
        """Record a file just read; returns its (possibly fresh) entry for verdicts."""
        entry = self._files.get(path)
        if st is None:
            return [0, -1, digest, {}, 0, 0]  # not on disk as read (an overlay): not remembered
        if entry is not None and entry[2] == digest:
            self.served = True  # its verdicts may be used
        if entry is None or entry[2] != digest or [entry[0], entry[1], entry[4], entry[5]] != [st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino]:
            verdicts = entry[3] if entry is not None and entry[2] == digest else {}
            entry = [st.st_mtime_ns, st.st_size, digest, verdicts, st.st_ctime_ns, st.st_ino]
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

    def facts_key(self, digest: bytes, path: str, module: str, root: str, is_package: bool, shadowed=()) -> str:
        """(Asked of a cache that is off too: its runs still look their facts up, finding none.)"""
        return FactWriter(self.directory, self.fingerprint, self.settings_key).key(digest, path, module, root, is_package, shadowed)

    def writer(self) -> FactWriter | None:
        """What a worker process needs to store the facts it computes itself (``FactWriter``);
        None when the cache is off."""
        if not self.enabled:
            return None
        return FactWriter(self.directory, self.fingerprint, self.settings_key)

    def _facts_path(self, key: str) -> str:
        return _facts_path(self.directory, key)

    def load_facts(self, key: str):
        if not self.enabled:
            return None
        from dllint.model import FileFacts

        facts = self._read(self._facts_path(key))
        if not isinstance(facts, FileFacts):
            self.misses += 1
            return None
        self.hits += 1
        self.served = True
        return facts

    def store_facts(self, key: str, facts) -> None:
        if not self.enabled:
            return
        try:
            self._write(self._facts_path(key), serial.dumps(facts))
        except (OSError, TypeError, ValueError, RecursionError):
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

    def load_result(self, key: str, n_paths: int = 0):
        """A stored (diagnostics, files analysed), or (diagnostics, files analysed, indices of the
        files analysed, indices of the files whose text a rule read, replays, questions asked of
        the other files) as the early cutoff keeps them (indices into the run's ``n_paths``
        files; see ``_replays``, ``_asked``); or None."""
        if not self.enabled:
            return None
        from dllint.model import Diagnostic

        found = self._read(os.path.join(self.directory, "results", key))
        if not (isinstance(found, tuple) and len(found) in (2, 6) and type(found[1]) is int and isinstance(found[0], list)):
            return None
        if not all(type(d) is Diagnostic for d in found[0]):
            return None
        if len(found) == 6 and not (
            _positions(found[2], n_paths) and _positions(found[3], n_paths) and _replays(found[4], n_paths) and _asked(found[5], n_paths)
        ):
            return None
        self.served = True
        return found

    def load_cutoff(self, key: str, n_paths: int):
        """The record of the last whole run for the early cutoff (``Engine._cutoff``): (findings,
        files analysed, the files' hashes, indices of the files analysed, indices of the files
        whose text a rule read, replays, the questions asked of the other files' bytes), or None."""
        if not self.enabled:
            return None
        from dllint.model import Diagnostic

        found = self._read(os.path.join(self.directory, "cutoff", key))
        if not (isinstance(found, tuple) and len(found) == 7):
            return None
        result, analysed, hashes, analysed_at, read_at, replays, asked = found
        if not (isinstance(result, list) and all(type(d) is Diagnostic for d in result) and type(analysed) is int and type(hashes) is bytes):
            return None
        if not (_positions(analysed_at, n_paths) and _positions(read_at, n_paths) and _replays(replays, n_paths) and _asked(asked, n_paths)):
            return None
        self.served = True
        return found

    def store_cutoff(self, key: str, record) -> None:
        if not self.enabled:
            return
        self._store_latest("cutoff", key, record)

    def load_plan(self, key: str) -> list[str] | None:
        """The files the last run with this key analysed (planning's answer), or None."""
        if not self.enabled:
            return None
        found = self._read(os.path.join(self.directory, "plans", key))
        if not (isinstance(found, list) and all(type(p) is str for p in found)):
            return None
        return found

    def store_plan(self, key: str, paths: list[str]) -> None:
        if not self.enabled:
            return
        self._store_latest("plans", key, sorted(paths))

    def load_imports(self) -> dict[str, tuple]:
        """What the files a run did not analyse import, read from their bytes
        (``prefilter.module_imports``), by the hex content hash of each file: the entries of the
        right shape."""
        if not self.enabled:
            return {}
        found = self._read(os.path.join(self.directory, IMPORTS_FILE))
        if type(found) is not dict:
            return {}
        return {k: v for k, v in found.items() if type(k) is str and _imports_shape(v)}

    def store_imports(self, table: dict[str, tuple]) -> None:
        """``table`` (``load_imports``), the answers of the files of the last run that read them."""
        if not self.enabled:
            return
        try:
            self._write(os.path.join(self.directory, IMPORTS_FILE), serial.dumps(table))
        except (OSError, TypeError, ValueError, RecursionError):
            pass

    def store_result(self, key: str, result) -> None:
        if not self.enabled:
            return
        self._store_latest("results", key, result)

    def _store_latest(self, folder: str, key: str, value) -> None:
        """Write ``value`` under ``folder/key``, keeping only the latest few entries of the folder."""
        directory = os.path.join(self.directory, folder)
        try:
            if os.path.isdir(directory):
                old = sorted(os.scandir(directory), key=lambda e: e.stat().st_mtime_ns)
                for entry in old[:-7]:
                    os.unlink(entry.path)
            self._write(os.path.join(directory, key), serial.dumps(value))
        except (OSError, TypeError, ValueError, RecursionError):
            pass

    # ------------------------------------------------------------------ writing

    def _ensure_dir(self) -> None:
        _ensure_dir(self.directory)

    def _write(self, path: str, payload: bytes) -> None:
        _write(self.directory, path, payload)

    def _clean_tmp(self) -> None:
        try:
            entries = list(os.scandir(os.path.join(self.directory, "tmp")))
        except OSError:
            return
        now = time.time()
        for entry in entries:
            try:
                if entry.name.startswith(".dllint-") and now - entry.stat().st_mtime > STALE_TMP_S:
                    os.unlink(entry.path)
            except OSError:
                pass

    def save(self) -> None:
        """Write the file index (when it changed). Errors are ignored: the cache is optional."""
        if not self.enabled or not self._dirty:
            return
        files = {
            path: [e[0], e[1], e[2].hex(), {k.hex(): v for k, v in e[3].items()}, e[4], e[5]]
            for path, e in self._files.items()
        }
        payload = {"format": FORMAT, "fingerprint": self.fingerprint, "files": files}
        try:
            self._ensure_dir()
            self._write(self._index_path(), serial.dumps_json(payload))
            self._dirty = False
        except OSError:
            self.enabled = False
        self._clean_tmp()


class FactWriter:
    """The facts part of a cache, as a worker process writes it: the key of a file's facts
    (``FactCache.facts_key``) and the writing of an entry, from plain values that travel to the
    worker with its jobs (``engine.FactStore``: a worker stores the facts it computed when it
    has nothing else to do, ``workers.store_when_idle``)."""

    __slots__ = ("directory", "fingerprint", "settings_key")

    def __init__(self, directory: str, fingerprint: str, settings_key: str):
        self.directory = directory
        self.fingerprint = fingerprint
        self.settings_key = settings_key

    def key(self, digest: bytes, path: str, module: str, root: str, is_package: bool, shadowed=()) -> str:
        h = hashlib.blake2b(digest_size=20)
        h.update(f"{self.fingerprint}\0{self.settings_key}\0{path}\0{module}\0{root}\0{int(is_package)}\0".encode())
        h.update(",".join(sorted(shadowed)).encode() + b"\0")
        h.update(digest)
        return h.hexdigest()

    def store(self, key: str, facts) -> None:
        """Write ``facts`` under ``key``; any error leaves the entry out (the cache is optional,
        and a worker's thread storing entries must not stop: ``workers.store_when_idle``)."""
        try:
            _write(self.directory, _facts_path(self.directory, key), serial.dumps(facts))
        except Exception:
            pass


def _facts_path(directory: str, key: str) -> str:
    return os.path.join(directory, "facts", key[:2], key)


def _ensure_dir(directory: str) -> None:
    if not os.path.isdir(directory):
        os.makedirs(directory, exist_ok=True)
    marker = os.path.join(directory, ".gitignore")
    if not os.path.exists(marker):
        _atomic(directory, marker, b"# Automatically created by dllint.\n*\n")
        tag = os.path.join(directory, "CACHEDIR.TAG")
        _atomic(directory, tag, b"Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by dllint.\n")


def _write(directory: str, path: str, payload: bytes) -> None:
    try:
        _atomic(directory, path, payload)
    except FileNotFoundError:
        _ensure_dir(directory)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _atomic(directory, path, payload)


def _atomic(directory: str, path: str, payload: bytes) -> None:
    # temporary files go to one folder of the cache, where a run killed while writing leaves
    # them; the next save removes those older than STALE_TMP_S
    tmp = os.path.join(directory, "tmp")
    try:
        write_atomic(path, payload, tmp)
    except FileNotFoundError:
        if os.path.isdir(tmp) or not os.path.isdir(directory):
            raise
        os.makedirs(tmp, exist_ok=True)
        write_atomic(path, payload, tmp)


class Derived:
    """Answers of pure functions of a file's text (a fix's new text), remembered across runs in
    the cache (``derived/<k[:2]>/<k>``): the key holds every input (texts by their hash) and, as
    every key here, dllint's own code. A value read back is plain data; the caller checks its shape."""

    def __init__(self, cache: FactCache):
        self.cache = cache

    def key(self, *parts) -> str:
        return self.cache.result_key(["derived", *(content_hash(p.encode("utf-8", "surrogatepass")) if type(p) is str else p for p in parts)])

    def get(self, key: str):
        if not self.cache.enabled:
            return None
        found = self.cache._read(os.path.join(self.cache.directory, "derived", key[:2], key))
        if found is not None:
            self.cache.served = True
        return found

    def put(self, key: str, value) -> None:
        if not self.cache.enabled:
            return
        try:
            self.cache._write(os.path.join(self.cache.directory, "derived", key[:2], key), serial.dumps(value))
        except (OSError, TypeError, ValueError, RecursionError):
            pass

    def remember(self, name: str, inputs: tuple, compute, check):
        """``compute()``, remembered under ``name`` and ``inputs`` (every input of the answer; texts
        by their hash): a stored answer is used when ``check`` accepts its shape. None is an answer
        too (stored as a 1-tuple, so that a miss and a None differ)."""
        key = self.key(name, *inputs)
        found = self.get(key)
        if type(found) is tuple and len(found) == 1 and (found[0] is None or check(found[0])):
            return found[0]
        value = compute()
        self.put(key, (value,))
        return value


def _imports_shape(value) -> bool:
    """``prefilter.module_imports``'s answer: (((level, module, (name, ...)), ...), entry script?)."""
    if not (type(value) is tuple and len(value) == 2 and type(value[0]) is tuple and type(value[1]) is bool):
        return False
    return all(
        type(item) is tuple and len(item) == 3 and type(item[0]) is int and type(item[1]) is str
        and type(item[2]) is tuple and all(type(n) is str for n in item[2])
        for item in value[0]
    )


def _positions(value, n_paths: int) -> bool:
    """A list of indices into a run's ``n_paths`` files."""
    return isinstance(value, list) and all(type(i) is int and 0 <= i < n_paths for i in value)


def _replays(value, n_paths: int) -> bool:
    """A list of (file index, function name, inputs, answer): the ``Project.remember`` questions
    of a run (the answer is compared, never used, by the early cutoff)."""
    return isinstance(value, list) and all(
        type(r) is tuple and len(r) == 4 and type(r[0]) is int and 0 <= r[0] < n_paths and type(r[1]) is str and type(r[2]) is tuple
        for r in value
    )


def _asked(value, n_paths: int) -> bool:
    """A list of (question, answers): the questions a run asked of the bytes of the files it did
    not analyse, the answers as file indices or (file index, answer) pairs (the answers are
    compared, never used, and a question the engine cannot ask again means a full run)."""
    return isinstance(value, list) and all(
        type(q) is tuple and len(q) == 2 and type(q[0]) is tuple and q[0] and type(q[0][0]) is str and type(q[1]) is list
        and all((type(a) is int and 0 <= a < n_paths) or (type(a) is tuple and len(a) == 2 and type(a[0]) is int and 0 <= a[0] < n_paths) for a in q[1])
        for q in value
    )


def _index_entry(raw) -> list | None:
    """An index entry read back from JSON, or None when it does not have the shape save() writes."""
    if not (type(raw) is list and len(raw) == 6):
        return None
    mtime, size, digest, verdicts, ctime, ino = raw
    if not (type(mtime) is int and type(size) is int and type(ctime) is int and type(ino) is int):
        return None
    if not (type(digest) is str and len(digest) == 32 and type(verdicts) is dict):
        return None
    try:
        out = {bytes.fromhex(k): v for k, v in verdicts.items() if type(v) is bool}
        return [mtime, size, bytes.fromhex(digest), out, ctime, ino]
    except ValueError:
        return None
