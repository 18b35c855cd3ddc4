"""The one-way flow: files -> per-file facts -> project index -> rules -> filtered diagnostics.

Only files that can matter are parsed: a cheap scan of the bytes for trigger words (``Dataset``,
``DataLoader``, ``set_start_method`` ..., each rule's own triggers, and the names of the project's
own Dataset and DataLoader subclasses as they are discovered), plus the project modules the index
needs to resolve a name (a base class, a dataset class, a function run in workers).
"""

from __future__ import annotations

import gc
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from dllint.config import ALWAYS_REPORTED, Settings
from dllint.discover import ModuleName, discover
from dllint.facts.context import resolve_relative
from dllint.facts.extract import decode_source, extract, parse
from dllint.facts.flow import THREADS_OFF_WORDS
from dllint.limits import too_large
from dllint.model import Diagnostic, FileFacts, Span
from dllint.serial import same_facts
from dllint.prefilter import (
    AnyWord, AttributeNamed, NameTest, Triggers, WorkerWords, class_headers, content_hash, module_imports, node_words, scan_job, subclasses_by_name,
)
from dllint.program.layout import Layout
from dllint.program.model import ProgramModel
from dllint.program.plan import demands, module_words, stored_values
from dllint.project import Project
from dllint.rules import all_rules
from dllint.workers import init_worker, store_when_idle
from dllint.workers import job as worker_job

WORKER_WORDS = WorkerWords()
PROJECT_WIDE = AnyWord(THREADS_OFF_WORDS)  # (dllint/facts/flow.py)
SETS_START_METHOD = AnyWord((b"set_start_method",))  # a project setting one: ``_unparsed_imports``
CORE_TRIGGERS = (b"Dataset", b"DataLoader", b"set_start_method", b"datasets", b"DataBase")
PARALLEL_THRESHOLD = 8
SCAN_PARALLEL_THRESHOLD = 256  # files whose bytes are scanned in worker processes (cold runs)
EARLY_POOL_READS = 64  # files read: the worker processes start then (``Engine._analyse``)
MAX_ROUNDS = 8
MAX_CUTOFF_FILES = 8  # edited files whose facts are extracted again to find the edit changed none
# edited files in all, most of them outside the analysis (asked planning's questions again: a
# branch switched, a pull), for which the early cutoff is tried
MAX_CUTOFF_EDITS = 256
MAX_PLANS = 512  # plans an engine keeps without a cache (``Engine.plans``)


@dataclass
class Analysis:
    diagnostics: list[Diagnostic]
    project: Project | None
    files_checked: int
    analysed: int
    sources: dict[str, bytes] = field(default_factory=dict)
    notebooks: dict = field(default_factory=dict)  # path -> dllint.notebook.NotebookSource
    # findings of the rules run only to check fixes (``analyse(watch=...)``), never reported
    watched: list[Diagnostic] = field(default_factory=list)
    # what the user should know about the run itself (planning stopped before it settled): the
    # command line prints each as a warning, the language server logs it
    notes: list[str] = field(default_factory=list)


def _extract_job(args):
    path, module, root, is_package, data, shadowed, loader_classes = args
    return extract(path, module, root, is_package, data, all_rules(), loader_classes, shadowed)


@worker_job
def _extract_store_job(args):
    """Facts (``_extract_job``) that the worker also stores in the cache (``writer``, a
    ``cache.FactWriter``; None: not stored) once it is idle (``workers.store_when_idle``)."""
    *job, writer = args
    facts = _extract_job(job)
    if writer is not None:
        path, module, root, is_package, data, shadowed, _ = job
        store_when_idle(writer, writer.key(content_hash(data), path, module, root, is_package, shadowed), facts, len(data))
    return facts


@worker_job
def _scan_extract_job(args) -> list[tuple[str, bytes, bool, FileFacts | None, tuple | None]]:
    """(path, content hash, verdict, facts, imports) for each file of a chunk, read here (a worker
    process; unreadable: skipped); facts are None when the triggers reject the file, and imports
    then what it imports (``module_imports``) when ``imports`` is set (a project setting a start
    method: the engine's ``_unparsed_imports`` asks it of every file not parsed). With a
    ``writer`` (``cache.FactWriter``), the facts are also stored in the cache once the worker is
    idle (``workers.store_when_idle``). A file whose bytes hold a
    trigger word is parsed once: its code words are read from the nodes of its ``FileContext``
    (``node_words``), and the same context gives its facts (a cold run used to compile each such
    file for its code words, then parse it again for its facts)."""
    chunk, triggers, shadowed, loader_classes, writer, imports = args
    rules = all_rules()
    out = []
    for path, module, root, is_package in chunk:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        digest = content_hash(data)
        verdict = triggers.from_bytes(data)
        parsed = accept = None
        if verdict is None:
            try:
                text = decode_source(data)
                parsed = (text, parse(text, path))
            except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError):
                verdict = triggers(data)  # as the compiler reads it (code that does not compile: analysed)
            else:
                # the code words from the nodes the context has just recorded; a file rejected
                # there is asked as before (``node_words``)
                def accept(ctx, data=data):
                    return triggers.in_words(node_words(ctx)) or triggers(data)

        if verdict is False:
            out.append((path, digest, False, None, module_imports(data) if imports else None))
            continue
        facts = extract(path, module, root, is_package, data, rules, loader_classes, shadowed, parsed, accept)
        if facts is None or (accept is not None and facts.error is not None and not triggers(data)):
            # (a context that could not be built: the verdict as the compiler reads the file)
            out.append((path, digest, False, None, module_imports(data) if imports else None))
            continue
        if writer is not None:
            store_when_idle(writer, writer.key(digest, path, module, root, is_package, shadowed), facts, len(data))
        out.append((path, digest, True, facts, None))
    return out


class FactStore:
    """Computes facts for files, in parallel when there are many (cache hooks in here).

    One process pool serves a whole run (the scan, then every round of facts); ``close()`` ends it."""

    def __init__(self, loader_classes: frozenset[str], jobs: int | None = None):
        self.loader_classes = loader_classes
        self.jobs = jobs if jobs is not None else (os.cpu_count() or 1)
        self._pool: ProcessPoolExecutor | None = None
        self._released: list[ProcessPoolExecutor] = []  # (``release``)
        self._exiting: list = []  # the processes of pools released, until they exit (``release``)
        self._broken = False

    def _map(self, fn, jobs: list, chunksize: int):
        """``fn`` over ``jobs`` in the pool; None when there is no pool here (then: serially)."""
        return self._in_pool(lambda pool: list(pool.map(fn, jobs, chunksize=chunksize)))

    def start(self) -> None:
        """Fork the worker processes now (a pool forks them at its first task; see
        ``Engine._analyse``)."""
        self._in_pool(lambda pool: pool.submit(int).result())

    def _in_pool(self, work):
        if self.jobs <= 1 or self._broken:
            return None
        try:
            if self._pool is None:
                # workers end with dllint and do not hold its standard streams (dllint/workers.py)
                self._pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=init_worker, initargs=(os.getpid(),))
            return work(self._pool)
        except (OSError, RuntimeError):  # no process pool here: do it serially
            self._give_up()
            return None

    def _give_up(self) -> None:
        """The pool cannot be used (none here, or it broke): the rest of the run is serial."""
        self._broken = True
        self.close()

    def close(self) -> None:
        """End the pool, once its workers have exited (and so stored what they computed)."""
        self.release()
        for pool in self._released:
            pool.shutdown()
        self._released.clear()
        for process in self._exiting:
            process.join()
        self._exiting.clear()

    def release(self) -> None:
        """Give the pool no more tasks: its workers store what they computed in the cache
        (``workers.store_when_idle``), then exit, while this process goes on (their memory is
        given back before the rules run); ``close`` waits for them. A later task starts a new
        pool. (``shutdown(wait=False)`` alone would not do: a later ``shutdown()`` does not wait
        for those workers, so the pool's processes are kept to be waited for.)"""
        pool = self._pool
        if pool is None:
            return
        self._pool = None
        processes = getattr(pool, "_processes", None)
        if isinstance(processes, dict):
            self._exiting.extend(processes.values())
            pool.shutdown(wait=False)
        else:  # (no processes to wait for: the workers stay until ``close``)
            self._released.append(pool)

    def compute(self, items: list[tuple[str, str, str, bool, bytes, frozenset[str]]], writer=None, stored: set[str] | None = None) -> dict[str, FileFacts]:
        """path -> facts. With a ``writer`` (``cache.FactWriter``), the facts computed by worker
        processes are stored in the cache by those workers, and their paths added to ``stored``;
        those computed here are left to the caller."""
        # largest first, one at a time: the workers finish together
        jobs = sorted(((*item, self.loader_classes) for item in items), key=lambda j: -len(j[4]))
        # a few files go to the worker processes too once they run (a named file's planning
        # parses its files in 15 batches of 1-20 files: NeMo's megatron_gpt_model.py 1.42 -> 1.37 s)
        if len(jobs) >= PARALLEL_THRESHOLD or (len(jobs) >= 2 and self._pool is not None):
            results = self._map(_extract_store_job, [(*job, writer) for job in jobs], 1)
            if results is not None:
                if writer is not None and stored is not None:
                    stored.update(f.path for f in results)
                return {f.path: f for f in results}
        return {job[0]: _extract_job(job) for job in jobs}

    def _map_meanwhile(self, fn, jobs: list, meanwhile) -> list | None:
        """``_map`` with chunks of one, calling ``meanwhile`` (when given) once the jobs are
        handed to the workers and before their results are collected; None (``meanwhile`` not
        called) when there is no pool here."""
        if meanwhile is None:
            return self._map(fn, jobs, 1)
        pending = self._in_pool(lambda pool: pool.map(fn, jobs, chunksize=1))
        if pending is None:
            return None
        meanwhile()
        try:
            return list(pending)
        except (OSError, RuntimeError):  # (the pool broke under the jobs: done serially by the caller)
            self._give_up()
            return None

    def scan(self, paths: list[str], triggers: Triggers, extract_as=None, writer=None, meanwhile=None, imports=False) -> dict[str, tuple] | None:
        """path -> (content hash, verdict, facts, imports), the files read by worker processes;
        None: no pool. ``extract_as`` (path -> (module, root, is_package), the shadowed
        library names, path -> size in bytes): the files the triggers accept are analysed in the same pass, largest
        first (``paths`` in that order), their facts returned and, with a ``writer``
        (``cache.FactWriter``), stored in the cache by the workers; without it facts are None.
        ``imports`` (with ``extract_as``): what each file the triggers reject imports is read
        there too (``module_imports``); else imports are None."""
        if len(paths) < SCAN_PARALLEL_THRESHOLD:
            return None
        if extract_as is None:
            size = max(32, len(paths) // (self.jobs * 8))
            chunks = [(paths[i : i + size], triggers) for i in range(0, len(paths), size)]
            results = self._map_meanwhile(scan_job, chunks, meanwhile)
            if results is None:
                return None
            return {path: (digest, verdict, None, None) for chunk in results for path, digest, verdict in chunk}
        names, shadowed, sizes = extract_as
        # chunks of about equal bytes (a large training script alone, small files together): a
        # chunk now costs what its files' facts cost, and the largest come first, so that the
        # workers finish together
        budget = max(1, sum(sizes.get(p, 0) for p in paths) // (self.jobs * 24))
        chunks, rows, held = [], [], 0
        for p in paths:
            rows.append((p, *names[p]))
            held += sizes.get(p, 0)
            if held >= budget or len(rows) >= 64:
                chunks.append((rows, triggers, shadowed, self.loader_classes, writer, imports))
                rows, held = [], 0
        if rows:
            chunks.append((rows, triggers, shadowed, self.loader_classes, writer, imports))
        results = self._map_meanwhile(_scan_extract_job, chunks, meanwhile)
        if results is None:
            return None
        return {path: (digest, verdict, facts, found) for chunk in results for path, digest, verdict, facts, found in chunk}


class Engine:
    def __init__(self, settings: Settings, root: str, jobs: int | None = None, cache=None, bounded: bool = True):
        self.settings = settings
        self.root = root
        # bounded: ``root`` holds a project marker and its files are the project; otherwise only
        # the named paths and what they import are read (dllint/program/layout.py)
        self.bounded = bounded
        self.cache = cache  # a dllint.cache.FactCache, or None
        if cache is not None:  # facts depend on the configured loader classes too
            cache.settings_key = repr(sorted(settings.dataloader_classes))
        # with a cache: when no file changed since a run with the same inputs, return its findings
        # without building the index (Analysis.project then holds no facts: not for fixing)
        self.reuse_results = False
        # whether findings carry their fixes' edits (--fix, --diff, the machine formats, the
        # editor); without them a fix says only that it exists (the `[*]` mark), which lets a rule
        # skip building edits it would throw away (DL101's libcst transforms: ``Project.edits``)
        self.edits = True
        # without a cache, the plans of the runs of this engine (the language server's: each
        # document's last run), by settings and targets; None: none kept (see ``_analyse``)
        self.plans: dict | None = None
        # the project's files when the caller has just walked the root itself (not walked twice)
        self.root_files: list[str] | None = None
        # DLLINT_NO_PREFILTER=1 (or check --no-prefilter): parse every file (equivalence tests)
        self.prefilter = os.environ.get("DLLINT_NO_PREFILTER", "") in ("", "0")
        self.rules = all_rules()
        extra = {q.rsplit(".", 1)[-1].encode() for q in (*settings.dataset_bases, *settings.dataloader_classes)}
        words = set(CORE_TRIGGERS) | extra
        comments: set[bytes] = set()
        for rule in self.rules:
            words.update(rule.triggers)
            comments.update(rule.comment_triggers)
        self.triggers = Triggers(words, comments)
        self.store = FactStore(frozenset(settings.dataloader_classes), jobs)

    def project_files(self) -> list[str]:
        if not self.bounded:
            return []  # no project beyond the named paths (and what they import)
        if self.root_files is not None:
            return list(self.root_files)
        # with the subpackages .gitignore alone hides: imported all the same (never linted)
        hidden: set[str] = set()
        found = discover([self.root], self.root, self.settings.all_excludes, self.settings.respect_gitignore, packages=hidden)
        return sorted({*found, *hidden})

    def analyse(
        self,
        targets: list[str],
        enabled: set[str],
        overlay: dict[str, bytes] | None = None,
        explicit: set[str] | None = None,
        watch: frozenset[str] = frozenset(),
    ) -> Analysis:
        """Lint ``targets`` (absolute paths) in the context of the whole project.

        ``overlay`` replaces file contents (standard input, fixed but unwritten files);
        ``explicit`` are files named on the command line: always parsed, so DL000 covers them;
        ``watch`` are more rules to run, whose findings (after noqa and per-file-ignores) go to
        ``Analysis.watched`` only: ``--fix`` checks that a fix adds none (dllint/fix.py).

        The cyclic garbage collector is paused for the run (and in its worker processes): a run
        allocates millions of syntax-tree objects, and each collection rescans all that is alive
        (on a large ML repository it doubled the parse time). Trees, contexts and facts are freed by
        reference counting; what cycles remain cost about 5 MB there (serial run, peak memory), and
        are collected with the oldest generation."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._analyse(targets, enabled, overlay, explicit, watch)
        finally:
            self.store.close()  # (a run that found its stored findings may have started it)
            if was_enabled:
                # the run's objects go to the oldest generation at once: left in the youngest, the
                # first collection after it would scan every one of them (diffusers: 0.15 s)
                gc.freeze()
                gc.enable()
                gc.unfreeze()

    def _analyse(self, targets, enabled, overlay, explicit, watch=frozenset()) -> Analysis:
        # facts the scan computed beside its verdicts, until the rounds of facts ask for them
        # (``_prescan``, ``_take_prefetched``)
        self._prefetched: dict[str, tuple] = {}
        # what planning and the rules asked of files' bytes, and the answers (``_note``)
        self._asked: dict = {}
        self._verdicts: dict = {}  # (test key, path) -> (the bytes, a byte test's answer) this run (``_matches``)
        self._setter_files: list[str] | None = None  # (``_setters_reaching``)
        self._file_imports: dict[str, tuple] = {}  # path -> what it imports (``_imports_read``)
        self._scanned_imports: dict[str, tuple] = {}  # the same, read by the scan's workers (``_prescan``)
        notes: list[str] = []  # ``Analysis.notes``
        overlay = overlay or {}
        explicit = explicit or set()
        focus = None
        target_set = set(targets)
        paths = sorted(set(self.project_files()) | target_set | set(overlay))
        # a run reading many files (a cold run of a folder) starts its worker processes early,
        # before it holds the files' bytes: each forked worker's memory counts what the parent
        # held when it forked (NeMo: 83 -> 33 MB a worker)
        named = target_set <= explicit | set(overlay)  # only files named on the command line
        early = self.prefilter and not named
        data: dict[str, bytes] = {}
        read_errors: dict[str, str] = {}
        cache = self.cache
        entries: dict[str, list] = {}  # with a cache: path -> [mtime_ns, size, hash, verdicts]
        for path in paths:
            if path in overlay:
                data[path] = overlay[path]
                continue
            st = None
            if cache is not None and not path.endswith(".ipynb"):
                try:
                    st = os.stat(path)
                except OSError:
                    st = None
                else:
                    entry = cache.lookup(path, st)
                    if entry is not None:  # unchanged since it was last read: not even read now
                        entries[path] = entry
                        continue
            if early and len(data) == EARLY_POOL_READS:
                self.store.start()
            try:
                with open(path, "rb") as fh:
                    data[path] = fh.read()
            except OSError as exc:
                read_errors[path] = exc.strerror or str(exc)
                continue
            if cache is not None and st is not None:
                entries[path] = cache.remember(path, st, content_hash(data[path]))
        oversized = too_large(data, entries, self.settings.max_file_size)  # DL000, not analysed (dllint/limits.py)
        # notebooks are always read (their JSON, not the stat cache): keyed by those bytes
        notebook_hashes = {p: content_hash(b) for p, b in data.items() if p.endswith(".ipynb")} if cache is not None else {}
        # files named on the command line (a pre-commit hook's staged files, the editor's open
        # document): the analysis starts from them, and planning brings in what they reach and the
        # files that use them by name (dllint/program/plan.py, ``focus``); the project's other
        # notebooks are not read
        seeded = self.prefilter and bool(target_set) and named
        # whether any project file's code names DataLoader workers (the model's
        # ``never_starts_workers``); a project naming none is analysed whole even from a named
        # file, so that a named file's findings are those of the whole run
        names_workers = any(
            self._matches(p, WORKER_WORDS, WORKER_WORDS.key, data, entries, read_errors) for p in paths if p not in oversized
        )
        seeded = seeded and names_workers
        if seeded:
            for path in [p for p in data if p.endswith(".ipynb") and p not in target_set]:
                del data[path]
        result_key = None
        if (
            cache is not None and self.reuse_results and not watch and not overlay and not read_errors
            and all(p in entries or p in notebook_hashes for p in paths)
        ):
            result_key = cache.result_key([
                repr(self.settings), self.prefilter, self.edits, sorted(target_set), sorted(enabled), sorted(explicit),
                b"".join(p.encode() + b"\0" + (entries[p][2] if p in entries else b"ipynb" + notebook_hashes[p]) for p in paths),
            ])
        cutoff_key = cutoff_hashes = None
        if result_key is not None:
            # (whether the project names workers is an input of the findings, not of any file's
            # facts: an edit changing it finds no record; a named file's run, which starts from its
            # last plan as a whole run does, keeps its record too)
            cutoff_key = cache.result_key([
                repr(self.settings), self.prefilter, self.edits, sorted(target_set), sorted(enabled), sorted(explicit), "cutoff", "\0".join(paths),
                names_workers,
            ])
            cutoff_hashes = b"".join(entries[p][2] if p in entries else _notebook_part(notebook_hashes[p]) for p in paths)
        if result_key is not None:
            found = cache.load_result(result_key, len(paths))
            if found is not None:
                if cutoff_key is not None and len(found) == 6:
                    # the files are as that run found them: later edits are compared with them
                    record = cache.load_cutoff(cutoff_key, len(paths))
                    if record is None or record[2] != cutoff_hashes:
                        cache.store_cutoff(cutoff_key, (found[0], found[1], cutoff_hashes, *found[2:]))
                cache.save()  # the files read and hashed here (when the index did not know them)
                return self._reused(found, data, target_set)
        layout = Layout(self.root, {*data, *entries}, self.bounded)
        names = _Names(layout, layout.shadowing())
        if cutoff_key is not None:
            # an edit that changes no fact: the last run's findings (see ``_cutoff``)
            found = self._cutoff(cutoff_key, cutoff_hashes, paths, names, data, entries, read_errors, seeded)
            if found is not None:
                cache.store_result(result_key, found)
                cache.save()
                return self._reused(found, data, target_set)
        notebooks: dict | None = None

        def read_notebooks() -> None:
            """The notebooks' code cells (``data`` updated in place), before any file is analysed:
            a cold run reads them while the worker processes scan the other files."""
            nonlocal notebooks, layout, names
            notebooks = self._read_notebooks(data, read_errors)
            if any(p.endswith(".ipynb") for p in read_errors):
                # a notebook that cannot be read is not a module of the layout (the cutoff above
                # only serves runs whose every notebook was read: its record needs a run without errors)
                layout = Layout(self.root, {*data, *entries}, self.bounded)
                names = _Names(layout, names.shadowed)

        def items(selected):
            return [(p, names[p].module, names[p].root, names[p].is_package, data[p], names.shadowed) for p in sorted(selected)]

        def facts_of(selected) -> dict[str, FileFacts]:
            """The facts of these files (cached), the layout untouched."""
            if cache is not None:
                return self._cached_facts(selected, names, data, entries, read_errors, items, overlay)
            out, _blobs, rest = self._take_prefetched(items(selected))
            if rest:
                out.update(self.store.compute(rest))
            return out

        def compute(selected) -> dict[str, FileFacts]:
            out = facts_of(selected)
            for path, found in out.items():  # a module of namespace packages its path cannot show
                layout.rename(path, ModuleName(found.module, found.root, found.is_package))
                layout.add_search_tails(path, found.signals.get("sys_path", ()))
            return out

        try:
            # the files the last run of these targets analysed (a named file's too: the editor's
            # document, a file staged again), kept in the cache or by the engine: planning then adds
            # only what an edit needs, and parsing more files changes no finding
            # (tests/test_prefilter_equivalence.py)
            plan_key = None
            planned: list[str] | tuple = ()
            if cache is not None:
                plan_key = cache.result_key([repr(self.settings), self.prefilter, "plan", sorted(target_set), seeded])
                planned = cache.load_plan(plan_key) or ()
            elif self.plans is not None:
                plan_key = (repr(self.settings), self.prefilter, tuple(sorted(target_set)), seeded)
                planned = self.plans.get(plan_key, ())
            again = {p for p in planned if (p in data or p in entries) and not _is_stub(p, explicit)}
            if seeded:
                read_notebooks()
                wanted = {p for p in target_set if (p in data or p in entries) and (p in explicit or not _is_stub(p, explicit))}
                focus = frozenset(wanted)
            elif not self.prefilter:
                read_notebooks()
                for path in list(entries):
                    self._read_into(path, data, entries, read_errors)
                wanted = {p for p in data if not _is_stub(p, explicit)}
            else:
                key = self.triggers.key
                asked: dict[str, bool] = {}

                def meanwhile() -> None:
                    # (the parent's own work on the notebooks, while the workers scan the files:
                    # it used to come before and after the scan, the workers idle)
                    read_notebooks()
                    for path in [p for p in data if p.endswith(".ipynb") and p not in explicit and p not in again and not _is_stub(p, explicit)]:
                        asked[path] = self._matches(path, self.triggers, key, data, entries, read_errors)

                scanned = self._prescan(
                    data, entries, overlay, explicit, names, meanwhile,
                    lambda: self._sets_start_method(paths, data, entries, read_errors, oversized),
                )
                if notebooks is None:  # (no worker processes: nothing to wait for)
                    read_notebooks()
                else:
                    scanned.update(asked)
                wanted = {
                    p
                    for p in {*data, *entries}
                    if p in explicit
                    or p in again  # (analysed whatever its verdict: not asked)
                    or (
                        not _is_stub(p, explicit)
                        and (scanned[p] if p in scanned else self._matches(p, self.triggers, key, data, entries, read_errors))
                    )
                }
            wanted |= {p for p in again if p in data or p in entries}  # (not a notebook that could not be read)
            facts = compute(wanted)
            seen_names: dict = {}
            carry: dict = {}  # what each planning model hands on to the next (ProgramModel)
            unparsed = self._unparsed_imports(paths, facts, data, entries, read_errors, oversized)

            def model(names=names_workers) -> ProgramModel:
                built = ProgramModel(facts, self.settings, layout, carry, unparsed)
                built.project_names_workers = names
                built.planning = True
                return built

            converged = False
            fresh = None  # a model of the files parsed so far that no question has carried values into
            for _ in range(MAX_ROUNDS):
                index = fresh if fresh is not None else model()
                fresh = None
                new = self._parseable(self._demands(index, data, facts, seen_names, entries, read_errors, focus), explicit, data, entries, read_errors)
                if not new and focus is not None:
                    # (a model of its own: the values it asks are not the answers the rules get)
                    new = self._parseable(self._probe(model(), facts, data, entries, read_errors, focus), explicit, data, entries, read_errors)
                if not new:
                    converged = True
                    break
                facts.update(compute(new))
                fresh = self._chase(index.chains, facts, data, entries, read_errors, explicit, compute, model)
                if not names_workers:
                    fresh = None  # (the chase's models assume workers may be named; the rounds' do not)
            else:
                index = model()
                notes.append(self._unsettled_note(new))
            index.settle()  # no more planning: what rules ask may be memoized
            if cache is not None:
                cache.store_plan(plan_key, list(facts))
            elif self.plans is not None:
                if len(self.plans) >= MAX_PLANS:  # a bound for long sessions
                    self.plans.clear()
                self.plans[plan_key] = list(facts)
        finally:
            # the rules run while the workers store the last facts; ``analyse`` waits for them
            self.store.release()
            self._prefetched = {}
        project = Project(self.settings, index, facts, data, target_set)
        project.edits = self.edits
        # (a named file's run has put the project's other notebooks aside: they are read if asked)
        outside = [p for p in paths if p not in facts and p not in oversized and p not in read_errors and not _is_stub(p, explicit)]
        project.elsewhere = self._elsewhere(outside, facts_of, data, entries)
        if cache is not None:
            from dllint.cache import Derived

            project.derived = Derived(cache)
        diagnostics: list[Diagnostic] = []
        for path, message in read_errors.items():
            if path in target_set:
                diagnostics.append(Diagnostic("DL000", f"cannot read file: {message}", path, Span(1, 1, 1, 1), severity="error"))
        for path, message in oversized.items():
            if path in target_set:
                diagnostics.append(Diagnostic("DL000", message, path, Span(1, 1, 1, 1), severity="error"))
        watched: list[Diagnostic] = []
        for rule in self.rules:
            if rule.code in enabled:
                diagnostics.extend(rule.check(project))
            elif rule.code in watch:  # only to check fixes (dllint/fix.py)
                watched.extend(rule.check(project))
        used: set[tuple[str, int, str]] = set()
        result = self._filter(diagnostics, enabled, target_set, facts, used)
        if watched:
            watched = self._filter(watched, watch, target_set, facts)
        late: list[Diagnostic] = []
        for rule in self.rules:  # rules judging the suppressions themselves (DL001)
            if rule.code in enabled and hasattr(rule, "check_noqa"):
                late.extend(rule.check_noqa(project, used, enabled, self.ignored))
        if late:
            result = sorted(result + self._filter(late, enabled, target_set, facts), key=Diagnostic.sort_key)
        if notebooks:  # cells, cell coordinates in messages, fixes a notebook cannot take
            from dllint.notebook import finalize

            result = finalize(result, notebooks)
        if cache is not None:
            for d in result:  # fixes and code-showing formats need the bytes of files with findings
                if d.path not in data and d.path in entries:
                    self._read_into(d.path, data, entries, read_errors)
            cache.forget_missing(set(paths))
            # an unsettled plan's findings are not kept: the next run plans (and says so) again
            if result_key is not None and converged:
                stored: tuple = (result, len(facts))
                if cutoff_key is not None and not read_errors:
                    position = {p: i for i, p in enumerate(paths)}
                    asked = self._asked_record(facts, position)
                    if asked is not None:  # (the analysed notebooks' cells: ``_cutoff``)
                        laid = sorted((position[p], notebook_digest(data[p], nb)) for p, nb in notebooks.items() if p in facts and p in position)
                        if laid:
                            asked.append((NOTEBOOK_QUESTION, laid))
                    if asked is not None and all(p in position for p in (*facts, *project.read, *(r[0] for r in project.replays))):
                        # (the files analysed, the files whose text a rule read, the questions
                        # asked of files' texts through Project.remember, the questions asked of
                        # the bytes of the files not analysed): for _cutoff
                        stored += (
                            sorted(position[p] for p in facts),
                            sorted(position[p] for p in project.read),
                            [(position[p], name, inputs, answer) for p, name, inputs, answer in project.replays],
                            asked,
                        )
                        cache.store_cutoff(cutoff_key, (*stored[:2], cutoff_hashes, *stored[2:]))
                cache.store_result(result_key, stored)
            cache.save()
        if watched and notebooks:
            from dllint.notebook import finalize

            watched = finalize(watched, notebooks)
        return Analysis(result, project, len(target_set), len(facts), data, notebooks, watched, notes)

    def _asked_record(self, facts, position: dict[str, int]) -> list | None:
        """What the run asked of the bytes of the files it did not analyse (``_note``), for the
        early cutoff: [(question, answers)], the answers as the sorted indices of the files
        answering True (``_ASKED_OF_ALL``) or as sorted (index, answer) pairs; None when a file
        asked is not one of the run's files (no record is kept then)."""
        out = []
        for question, answers in self._asked.values():
            if question[0] in _ASKED_OF_ALL:
                kept = [p for p, a in answers.items() if a is True and p not in facts]
                if any(p not in position for p in kept):
                    return None
                out.append((question, sorted(position[p] for p in kept)))
            else:
                kept = [p for p in answers if p not in facts]
                if any(p not in position for p in kept):
                    return None
                out.append((question, sorted((position[p], _plain(answers[p])) for p in kept)))
        return out

    def _unsettled_note(self, last: set[str]) -> str:
        """What a run whose planning reached ``MAX_ROUNDS`` says: each round of demands had found
        more files to parse (``last``: the last round's), so files a further round would want
        are not analysed, and findings that depend on what they define may be missing (never
        findings about what is unknown: the model's answers there stay "unknown")."""
        example = os.path.relpath(min(last), self.root) if last else "?"
        return (
            f"planning did not settle in {MAX_ROUNDS} rounds (the last one still added {len(last)} "
            f"file{'s' if len(last) != 1 else ''}, e.g. {example}); findings that depend on files "
            "it did not reach may be missing"
        )

    def _elsewhere(self, outside: list[str], facts_of, data, entries):
        """``Project.elsewhere``: attr -> [(path, facts)] of the files of ``outside`` (the project's
        modules the run did not analyse) whose bytes name ``.attr`` (``AttributeNamed``), their
        facts from ``facts_of`` (computed as any file's, cached; the model's layout untouched),
        not added to the model. Answers are kept for the run; with a cache, which files name it is
        remembered under the attribute and the content hashes of all of ``outside``
        (``cache.Derived``: an edit of an analysed file keeps it; one answer, not a verdict per
        file and attribute in the stat index)."""
        answers: dict[str, list] = {}
        notebooks: dict[str, bytes | None] = {}  # a named run's notebooks put aside, read here
        derived = None
        contents = None  # the paths and content hashes of ``outside``, built when first needed

        def blob_of(p: str) -> bytes | None:
            blob = data.get(p)
            if blob is not None:
                return blob
            if p in notebooks:
                return notebooks[p]
            try:
                with open(p, "rb") as fh:
                    blob = fh.read()
            except OSError:
                blob = None
            if p.endswith(".ipynb"):  # kept: converted below when it names the attribute
                notebooks[p] = blob
            return blob  # a module's bytes are not kept

        def search(test) -> list[int]:
            return [i for i, p in enumerate(outside) if (blob := blob_of(p)) is not None and test(blob)]

        def named_by(attr: str) -> list[str]:
            nonlocal derived, contents
            test = AttributeNamed(attr)
            if self.cache is None:
                hits = search(test)
            else:
                if derived is None:
                    from dllint.cache import Derived

                    derived = Derived(self.cache)
                    contents = b"".join(
                        p.encode("utf-8", "surrogatepass") + b"\0"
                        + (entries[p][2] if p in entries else content_hash(blob_of(p) or b""))
                        for p in outside
                    )
                key = derived.key("attribute named v1", attr, contents)
                stored = derived.get(key)
                if type(stored) is list and all(type(i) is int and 0 <= i < len(outside) for i in stored):
                    hits = stored
                else:
                    hits = search(test)
                    derived.put(key, hits)
            question = ("attr", attr)  # (asked of every file of ``outside``: ``_note``)
            self._asked.setdefault(question, (question, {}))
            for i in hits:
                self._note(question, question, outside[i], True)
            out = []
            for p in (outside[i] for i in hits):
                if p not in data and p.endswith(".ipynb"):  # a notebook put aside: its code cells
                    from dllint.notebook import NotebookError, notebook_python

                    try:
                        data[p] = notebook_python(blob_of(p) or b"")[0]
                    except NotebookError:
                        continue
                out.append(p)
            return out

        def elsewhere(attr: str) -> list[tuple[str, FileFacts]]:
            found = answers.get(attr)
            if found is None:
                hits = named_by(attr)
                found = answers[attr] = sorted(facts_of(hits).items()) if hits else []
            return found

        return elsewhere

    def _reused(self, found, data: dict[str, bytes], target_set: set[str]) -> Analysis:
        """The Analysis of stored findings (no facts: not for fixing). Only the notebooks with a
        finding are read as notebooks: the formats need their cells (the findings already name them)."""
        reused, analysed = found[0], found[1]
        shown = {d.path for d in reused}
        notebooks = self._read_notebooks({p: data[p] for p in shown if p in data and p.endswith(".ipynb")}, {})
        empty = Project(self.settings, ProgramModel({}, self.settings, Layout(self.root)), {}, {}, target_set)
        return Analysis(list(reused), empty, len(target_set), analysed, {}, notebooks)

    @staticmethod
    def _read_notebooks(data: dict[str, bytes], read_errors: dict[str, str]) -> dict:
        """Notebooks are analysed as their code cells' Python (``data`` is updated in place)."""
        from dllint.notebook import NotebookError, is_notebook, notebook_python

        out = {}
        for path in [p for p in data if is_notebook(p)]:
            try:
                data[path], out[path] = notebook_python(data[path])
            except NotebookError as exc:
                del data[path]
                read_errors[path] = str(exc)
        return out

    # ------------------------------------------------------------------ cache-aware reading

    def _read_into(self, path: str, data, entries, read_errors) -> bytes | None:
        """Read a file the cache let us skip so far (its entry stays, its hash is re-checked)."""
        if path in data:
            return data[path]
        try:
            with open(path, "rb") as fh:
                blob = fh.read()
        except OSError as exc:
            read_errors[path] = exc.strerror or str(exc)
            entries.pop(path, None)
            return None
        digest = content_hash(blob)
        entry = entries.get(path)
        if entry is not None and entry[2] != digest:  # changed since the stat: a fresh entry
            entries[path] = [0, -1, digest, {}]
        data[path] = blob
        return blob

    def _prescan(self, data, entries, overlay, explicit, names=None, meanwhile=None, imports=None) -> dict[str, bool]:
        """The trigger verdicts of many files just read (a cold run), computed in worker processes
        that read the files again: each verdict is kept only if they read the same bytes. With
        ``names`` (the module names), the accepted files' facts are computed in the same pass and
        kept for ``_prefetched`` (the first round of facts asks for most of them). ``meanwhile``:
        work of this process done while the workers scan (not done when there are none).
        ``imports``: whether ``_unparsed_imports`` will ask what every file not parsed imports
        (asked once the files to scan are chosen: it may read more); then the workers read it of
        each file the triggers reject."""
        pending = [
            p
            for p in data
            # a notebook's bytes here are its code cells, not the JSON a worker would read
            if p not in overlay and p not in explicit and not _is_stub(p, explicit) and not p.endswith(".ipynb")
        ]
        extract_as = None
        if names is not None:
            pending.sort(key=lambda p: -len(data[p]))  # largest first: the workers finish together
            extract_as = (
                {p: (names[p].module, names[p].root, names[p].is_package) for p in pending},
                names.shadowed,
                {p: len(data[p]) for p in pending},
            )
        writer = self._writer()
        found = self.store.scan(pending, self.triggers, extract_as, writer, meanwhile, imports is not None and imports())
        if not found:
            return {}
        out = {}
        stored = extract_as is not None and writer is not None  # by the workers
        for path, (digest, verdict, facts, imported) in found.items():
            entry = entries.get(path)
            if (entry[2] if entry is not None else content_hash(data[path])) != digest:
                continue  # changed in between: decided from the bytes read here
            out[path] = verdict
            if imported is not None:
                self._scanned_imports[path] = imported
            self._note(self.triggers.key, self.triggers.question, path, verdict)
            if facts is not None:  # (computed from the bytes held here: compared just above)
                self._prefetched[path] = ((*extract_as[0][path], extract_as[1]), facts, stored)
            if entry is not None and self.cache is not None:
                self.cache.set_verdict(entry, self.triggers.key, verdict)
        return out

    def _take_prefetched(self, items: list) -> tuple[dict[str, FileFacts], set[str], list]:
        """(facts, the paths of those the workers store in the cache, the items still to
        compute): the facts ``_prescan`` computed for these items (``items`` of ``_analyse``),
        when computed under the same module name (from the same bytes: ``_prescan`` keeps only
        those); each is handed out once."""
        facts: dict[str, FileFacts] = {}
        stored: set[str] = set()
        rest = []
        for item in items:
            path, module, root, is_package, _data, shadowed = item
            found = self._prefetched.pop(path, None)
            if found is not None and found[0] == (module, root, is_package, shadowed):
                facts[path] = found[1]
                if found[2]:
                    stored.add(path)
            else:
                rest.append(item)
        return facts, stored, rest

    def _writer(self):
        """The cache's ``FactWriter`` for the worker processes, or None (no cache, or off)."""
        return self.cache.writer() if self.cache is not None else None

    def _matches(self, path: str, test, key: bytes, data, entries, read_errors) -> bool:
        """Whether the bytes of ``path`` pass ``test``; remembered per content hash in the cache,
        and for the run (a file's bytes do not change during it: a named file's planning asks
        the trigger words of the same unparsed files in several rounds and places, each answer
        a compile of the file; ParlAI's ``teachers.py`` alone: 617 asked of 266 files)."""
        entry = entries.get(path)
        if entry is not None:
            verdict = entry[3].get(key)
            if verdict is not None and path not in data:
                if test.question is not None:
                    self._note(key, test.question, path, verdict)
                return verdict
        blob = data.get(path)
        known = self._verdicts.get((key, path))
        if known is not None and known[0] is blob:  # (the same bytes: a notebook's JSON is replaced by its code)
            if test.question is not None:
                self._note(key, test.question, path, known[1])
            return known[1]
        if blob is None:
            blob = self._read_into(path, data, entries, read_errors)
            if blob is None:
                return False
            entry = entries.get(path)
        verdict = test(blob)
        self._verdicts[(key, path)] = (blob, verdict)
        if entry is not None and self.cache is not None:
            self.cache.set_verdict(entry, key, verdict)
        if test.question is not None:
            self._note(key, test.question, path, verdict)
        return verdict

    def _note(self, key, question: tuple, path: str, answer) -> None:
        """Record that the run asked ``question`` (``ask_again`` can ask it again) of the bytes of
        ``path`` and got ``answer``. For the early cutoff (``_cutoff``): a file the run did not
        analyse mattered to it only through such answers, so after an edit that leaves every one
        the same, the run would make the same choices and find the same."""
        slot = self._asked.get(key)
        if slot is None:
            slot = self._asked[key] = (question, {})
        slot[1][path] = answer

    def _ask(self, question: tuple, path: str, blob: bytes, test=None):
        """``ask_again(question, blob)``, recorded (``_note``); ``test``: a NameTest the question
        is of (``test.spec``), whose ``found`` answers it without building the test again."""
        if test is None:
            answer = ask_again(question, blob, self.triggers)
            self._note(question, question, path, answer)
        else:
            answer = test.found(blob)
            self._note((question[0], test.key), question, path, answer)
        return answer

    def _cached_facts(self, selected, names, data, entries, read_errors, items, overlay=()) -> dict[str, FileFacts]:
        cache = self.cache
        out: dict[str, FileFacts] = {}
        missing: list[str] = []
        for path in sorted(selected):
            if path in self._prefetched:  # computed already (the scan, the early cutoff): at hand
                missing.append(path)
                continue
            entry = entries.get(path)
            if entry is None and path in data:
                entry = [0, -1, content_hash(data[path]), {}]
            if entry is None:
                continue
            mn = names[path]
            key = cache.facts_key(entry[2], path, mn.module, mn.root, mn.is_package, names.shadowed)
            found = cache.load_facts(key)
            if found is not None and found.path == path:
                out[path] = found
            else:
                missing.append(path)
        ready = [p for p in missing if self._read_into(p, data, entries, read_errors) is not None]
        if ready:
            # on disk (not an overlay; a notebook: its code cells): kept, keyed by the bytes just analysed
            kept = {p for p in ready if p in entries or (p not in overlay and p.endswith(".ipynb"))}
            fresh, stored, rest = self._take_prefetched(items(ready))
            if rest:
                writer = self._writer()
                fresh.update(self.store.compute([i for i in rest if i[0] in kept], writer, stored))
                fresh.update(self.store.compute([i for i in rest if i[0] not in kept]))
            for path in sorted(kept - stored):
                mn = names[path]
                key = cache.facts_key(content_hash(data[path]), path, mn.module, mn.root, mn.is_package, names.shadowed)
                cache.store_facts(key, fresh[path])
            out.update(fresh)
        return out

    def _cutoff(self, key: str, hashes: bytes, paths: list[str], names, data, entries, read_errors, seeded: bool = False):
        """The findings of the last whole run with the same inputs but a few edited files, when
        the edits changed none of their facts (an edited comment, a blank line at the end ...);
        else None. Early cutoff, as build systems do: a run's findings depend on a file's bytes
        only through its facts, its pre-filter verdicts and its text when a rule reads it (fixes).
        So the stored findings stand when every edited file was analysed by that run (its
        verdicts then choose nothing: the run started from the files the last run analysed and
        added none, ``converged``), no rule read its text, and its facts, extracted again now,
        equal the stored ones exactly (types included: ``same_facts``). The new facts are stored
        as any run stores them; a file whose facts changed means a full run. An edited file the
        run did not analyse (a notebook too, in a whole run: its code cells) stands when the
        questions the run asked of its bytes get the same answers again (``_same_observations``)."""
        cache = self.cache
        record = cache.load_cutoff(key, len(paths))
        if record is None:
            return None
        result, analysed, old_hashes, analysed_at, read_at, replays, asked = record
        width = len(hashes) // max(len(paths), 1)
        if len(old_hashes) != len(hashes) or width * len(paths) != len(hashes):
            return None
        def part(h: bytes, i: int) -> bytes:  # file i's content hash
            return h[i * width : (i + 1) * width]

        edited = [i for i in range(len(paths)) if part(hashes, i) != part(old_hashes, i)]
        analysed_set, read_set = set(analysed_at), set(read_at)
        if not edited or len(edited) > MAX_CUTOFF_EDITS or sum(i in analysed_set for i in edited) > MAX_CUTOFF_FILES:
            return None
        # (an analysed notebook's text, which a rule may have read, is the code of its cells:
        # compared below)
        if any((i in read_set and not (i in analysed_set and paths[i].endswith(".ipynb"))) or (paths[i].endswith(".ipynb") and seeded) for i in edited):
            return None
        tests: dict[int, object] = {}  # (each question's test, built once for all the files)
        extracted = 0
        for i in edited:
            path = paths[i]
            blob = self._read_into(path, data, entries, read_errors)
            notebook = path.endswith(".ipynb")
            if blob is None or (_notebook_part(content_hash(blob)) if notebook else content_hash(blob)) != part(hashes, i):
                return None
            if notebook:
                # a notebook outside the analysis (its JSON: outputs run again, a cell edited): a
                # whole run asked its questions of its code cells' Python; one whose facts a rule
                # read, or whose cells cannot be read, means a full run. An analysed notebook run
                # again: its findings stand while its code (so its facts), the places of its cells
                # and whether its JSON can be written back (``notebook_digest``) do
                from dllint.notebook import NotebookError, notebook_python

                try:
                    code, nb = notebook_python(blob)
                except NotebookError:
                    return None
                if i in analysed_set:
                    laid = next((answers for q, answers in asked if q == NOTEBOOK_QUESTION), ())
                    if _answer_of(laid, i) != notebook_digest(code, nb):  # (none recorded: never equal)
                        return None
                    continue
                if self._same_observations(i, code, asked, tests) is not False:
                    return None
                continue
            if i not in analysed_set:
                used = self._same_observations(i, blob, asked, tests)
                if used is None:
                    return None
                if not used:  # (its facts were not asked for either)
                    continue
            extracted += 1
            if extracted > MAX_CUTOFF_FILES:
                return None
            mn = names[path]
            old = cache.load_facts(cache.facts_key(part(old_hashes, i), path, mn.module, mn.root, mn.is_package, names.shadowed))
            if old is None or old.path != path:
                return None
            fresh = self.store.compute([(path, mn.module, mn.root, mn.is_package, blob, names.shadowed)])[path]
            cache.store_facts(cache.facts_key(content_hash(blob), path, mn.module, mn.root, mn.is_package, names.shadowed), fresh)
            # (a full run takes them from here rather than read them back: ``_take_prefetched``)
            self._prefetched[path] = ((mn.module, mn.root, mn.is_package, names.shadowed), fresh, True)
            if not same_facts(old, fresh):
                return None
            if not _same_answers(path, blob, [r for r in replays if r[0] == i], self.settings):
                return None
        cache.store_cutoff(key, (result, analysed, hashes, analysed_at, read_at, replays, asked))
        return result, analysed, analysed_at, read_at, replays, asked

    def _same_observations(self, i: int, blob: bytes, asked: list, tests: dict) -> bool | None:
        """Whether the questions the last run asked of the bytes of file ``i`` (which it did not
        analyse; ``_asked_record``), asked again of ``blob``, get the answers they got then: None
        when one does not, else whether the run used the file's facts too (a rule asking the
        files outside the analysis that may use an attribute: ``_elsewhere``). ``tests``: the
        questions' tests by their place in ``asked``, built when first needed."""
        used = False
        for n, (question, answers) in enumerate(asked):
            kind = question[0]
            if kind in _ASKED_OF_ALL:
                old = i in answers
            else:
                old = _answer_of(answers, i)
                if old is _NOT_ASKED:
                    continue
            try:
                test = tests.get(n)
                if test is None:
                    test = tests[n] = question_test(question, self.triggers)
                new = _plain(test(blob))
            except Exception:  # (a record this code cannot ask again: a full run decides)
                return None
            if (new is True if kind in _ASKED_OF_ALL else new) != old:
                return None
            used = used or (kind == "attr" and old)
        return used

    def _chase(self, chains, facts, data, entries, read_errors, explicit, compute, model) -> ProgramModel | None:
        """Follow the chains a round's questions were on when they met unparsed files (base
        classes, re-exports, values and worker code reaching into another file's function:
        ``ProgramModel.chase``), on cheap models of the files parsed so far: one file per link,
        without a whole round of demands per link. Each model takes the values the one before it
        computed (``ProgramModel.carry_values``).

        Returns the chase's first model when its questions asked for no file: a model of the
        files the next round asks, which took no values from another (a fresh one, as the rounds'
        are), so that round asks it instead of building the same model again (dgl: a model's
        worker code and loaders, 0.8 s); None otherwise."""
        earlier = None
        for _ in range(MAX_ROUNDS):
            if not chains:
                return None
            link = model(True)  # (the chase's models assume workers may be named)
            if earlier is not None:
                link.carry_values(earlier)
            new = self._parseable({p for p in link.chase(chains) if p not in facts}, explicit, data, entries, read_errors)
            chains = link.chains  # the questions that met the files parsed next: the rest ended
            if not new:
                return link if earlier is None else None
            facts.update(compute(new))
            earlier = link
        return None

    def _unparsed_imports(self, paths, facts, data, entries, read_errors, oversized) -> dict:
        """What the project's files not parsed so far import, read from their bytes (path ->
        ``module_imports``), when some project file sets a start method (else which entry
        scripts reach a module changes no answer: the targets' defaults apply everywhere).
        Recorded for the early cutoff: an edit changing a file's imports means a full run."""
        if not self._sets_start_method(paths, data, entries, read_errors, oversized):
            return {}
        modules = [p for p in paths if p.endswith(".py") and p not in oversized]  # (not a notebook: none imports it)
        cache = self.cache
        known = cache.load_imports() if cache is not None else {}  # (by content hash: ``data`` not read)
        table: dict[str, tuple] = {}
        out = {}
        for path in modules:
            if path in facts:
                continue
            entry = entries.get(path)
            found = known.get(entry[2].hex()) if entry is not None and path not in data else None
            if found is None:
                found = self._scanned_imports.get(path)  # (of the bytes held here: ``_prescan``)
            if found is None:
                blob = self._read_into(path, data, entries, read_errors)
                if blob is None:
                    continue
                found = module_imports(blob)
                entry = entries.get(path)  # (made by the read, with a cache)
            out[path] = self._imports_read(path, found)
            if entry is not None:
                table[entry[2].hex()] = found
        if cache is not None and table.keys() != known.keys():
            cache.store_imports(table)
        return out

    def _sets_start_method(self, paths, data, entries, read_errors, oversized) -> bool:
        """Whether some project module's bytes name ``set_start_method`` (``_unparsed_imports``
        then reads what every file not parsed imports; a cold run's scan reads it beforehand)."""
        return any(
            self._matches(p, SETS_START_METHOD, SETS_START_METHOD.key, data, entries, read_errors)
            for p in paths
            if p.endswith(".py") and p not in oversized  # (not a notebook: none imports it)
        )

    def _imports_read(self, path: str, found: tuple) -> tuple:
        """``found``, what the file at ``path`` imports (``module_imports`` of its bytes, or an
        earlier run's answer for the same bytes), kept for the run and recorded for the early
        cutoff: an edit changing a file's imports changes the answer."""
        self._file_imports[path] = found
        self._note(IMPORTS_QUESTION, IMPORTS_QUESTION, path, imports_digest(found))
        return found

    def _probe(self, index: ProgramModel, facts, data, entries, read_errors, focus) -> set[str]:
        """The files with trigger words that the values the named files' Datasets store meet
        unparsed (dllint/program/plan.py, ``stored_values``). A whole run parses every such file
        whatever it asks; a named file's planning follows what its Datasets reach, not each
        value's evidence (a list built by a function of another Dataset's file, through a
        subclass's setup method), so those values are asked here, and the files with trigger
        words they meet are parsed before the rules ask them."""
        return {
            p for p in stored_values(index, focus)
            if p not in facts and self._matches(p, self.triggers, self.triggers.key, data, entries, read_errors)
        }

    def _parseable(self, paths, explicit, data, entries, read_errors) -> set[str]:
        """The files of ``paths`` to parse: not a type stub, and readable (read now if needed)."""
        return {
            p for p in paths
            if not _is_stub(p, explicit) and (p in data or p in entries or self._read_into(p, data, entries, read_errors) is not None)
        }

    def _demands(self, index: ProgramModel, data, facts, seen_names: dict, entries=None, read_errors=None, focus=None) -> set[str]:
        """Files the analysis needs that are not parsed yet (dllint/program/plan.py decides);
        ``focus``: the named files an analysis starts from (see ``_analyse``)."""
        entries = entries if entries is not None else {}
        read_errors = read_errors if read_errors is not None else {}
        missed, names, used, lookups = demands(index, focus)
        new = {p for p in missed if p not in facts}
        if focus is not None:  # the modules a named file imports that a whole run would parse
            for path in focus:
                if path in index.files:
                    for imported in index.imports_of(index.files[path]):
                        if imported not in facts and self._matches(imported, self.triggers, self.triggers.key, data, entries, read_errors):
                            new.add(imported)
                new.update(p for p in self._reexporting(path, index.layout, data, entries, read_errors) if p not in facts)
        candidates = [p for p in (*data, *(e for e in entries if e not in data)) if p not in facts]
        if focus is not None and index.unparsed_imports:
            new.update(self._setters_reaching(index, focus, facts, data, entries, read_errors))
        if focus is not None and ("project-wide",) not in seen_names:
            # the files of a signal one file gives the whole project (OpenCV's threads turned off)
            seen_names[("project-wide",)] = True
            new.update(p for p in candidates if self._matches(p, PROJECT_WIDE, PROJECT_WIDE.key, data, entries, read_errors))
        homes = lookups.homes
        for found, triggered in ((names, False), (used, True)):
            found = {n: w for n, w in found.items() if seen_names.get((n, triggered)) != w}
            seen_names.update({(n, triggered): w for n, w in found.items()})
            if not found:
                continue
            test = NameTest(found)
            new.update(
                p for p in candidates
                if self._matches(p, test, test.key, data, entries, read_errors)
                and (not triggered or self._matches(p, self.triggers, self.triggers.key, data, entries, read_errors))
                and (not homes or self._may_import(p, test, homes, index.layout, data, entries, read_errors))
            )
        bases = {n: w for n, w in lookups.bases.items() if seen_names.get((n, "siblings")) != w}
        seen_names.update({(n, "siblings"): w for n, w in bases.items()})
        if bases:
            new |= self._sibling_files(bases, lookups, candidates, index.layout, data, entries, read_errors)
        return new

    def _setters_reaching(self, index: ProgramModel, focus, facts, data, entries, read_errors) -> set[str]:
        """The files a whole run parses for their trigger words that may set the start method
        in force for the named files' code: the files importing them, directly or through other
        files (``ProgramModel.importers_through``), and the files those import (a module setting
        it on import), whose bytes name ``set_start_method``. A whole run reads the start method
        of every entry script reaching a module; a named file's run would otherwise see only the
        target's default."""
        setters = self._setter_files
        if setters is None:  # (once per run: the files naming it are few, the files reaching a module many)
            setters = self._setter_files = [
                p for p in sorted({*data, *entries})
                if p.endswith(".py") and self._matches(p, SETS_START_METHOD, SETS_START_METHOD.key, data, entries, read_errors)
            ]
        targets = [p for p in focus if p in index.files]
        return {
            p for p in setters
            if p not in facts
            and index.in_import_reach(p, targets)
            and self._matches(p, self.triggers, self.triggers.key, data, entries, read_errors)
        }

    def _reexporting(self, path: str, layout, data, entries, read_errors) -> list[str]:
        """The ``__init__`` files of the packages holding a named module that import it (``from
        .coco import Coco``, ``from .coco import *``, ``from data.coco import Coco``), and the
        next one up while it imports that package in turn: its names are used through them
        elsewhere (``from data import Coco``: dllint/program/plan.py, ``_reexports``), and a whole
        run parses them when it resolves such a use. Found by their bytes (``dotted``); a package
        not importing it is left alone: its imports would link importers a whole run does not
        see (dllint/program/loaders.py, ``importers``)."""
        out = []
        own = os.path.splitext(os.path.basename(path))[0]
        if own == "__init__":  # a package named: the packages above it import it by its folder's name
            own = os.path.basename(os.path.dirname(path))
        for init in _package_inits(path, layout):
            blob = self._read_into(init, data, entries, read_errors)
            folder = os.path.basename(os.path.dirname(init))
            if blob is None or not self._ask(("dotted", own, folder), init, blob):
                break
            out.append(init)
            own = folder
        return out

    def _may_import(self, path: str, test: NameTest, homes: dict, layout, data, entries, read_errors) -> bool:
        """Whether ``path``, naming some of ``test``'s names, may use one from where it is defined
        (``Lookups.homes``): a name of no definition, or one whose file ``path`` can import by
        that file's module name from its own import roots (``Layout.find``, as
        Python would: a script's ``from main import run`` is its own folder's ``main.py``, and
        where it is none of the project's many ``main.py`` files, the import is ambiguous and
        the model links it to none). A file changing ``sys.path``, or naming the module after
        its package's folder and a dot or in a relative import (``pkg.main``, ``from .main``:
        through a package or a namespace package), may reach it otherwise: taken. (Any dot
        before the name took too much: a module named ``utils`` or ``data`` is named so in nearly
        every ML file, ``torch.utils.data``; naming 32 files of one model of Ascend's ModelZoo
        parsed 920 other files for it.)"""
        blob = self._read_into(path, data, entries, read_errors)
        if blob is None:
            return False
        found = self._ask(("found", test.spec), path, blob, test)
        if found and self._ask(("contains", b"sys.path"), path, blob):
            return True
        root = layout.name(path).root
        for name in found:
            for home in homes.get(name, (None,)):
                if home is None:
                    return True
                module = layout.name(home).module
                if layout.find(module, root) == home:  # (an ambiguous import links nothing in the model)
                    return True
                if self._ask(("dotted", module.rpartition(".")[2], _package_folder(home)), path, blob):
                    return True
        return False

    def _sibling_files(self, bases, lookups, candidates, layout, data, entries, read_errors) -> set[str]:
        """Of the unparsed files naming a serving base of a named file's class (``bases``: {name:
        module words}; dllint/program/plan.py, ``Lookups``), those a named file's analysis needs:
        the ones that may hold a loader themselves (trigger words, ``num_workers``, a project
        DataLoader class's name: ``_may_hold_loader``), and the ones
        defining a subclass of a base that an unparsed file with trigger words imports (it
        names the subclass, and its imports reach the subclass's module or a package above it:
        ``_imported_homes``), where a loader may be given it; that file too. The subclasses are read
        from each file's class statements (``class_headers``: one parse, no facts), by name,
        through the files in turn (a subclass of a subclass, of a parsed subclass:
        ``Lookups.subclasses``) and aliases; a file whose class
        statements cannot be read so is wanted. Parsing every file naming a base cost diffusers'
        files defining a ``BaseOutput`` 170 files, where none names a subclass."""
        test = NameTest(bases)
        naming = [p for p in candidates if self._matches(p, test, test.key, data, entries, read_errors)]
        wanted: set[str] = set()
        blobs = {}
        may_hold = ("may_hold", tuple(sorted(lookups.loader_classes)))
        for path in naming:
            blob = self._read_into(path, data, entries, read_errors)
            if blob is None:
                continue
            if self._matches(path, self.triggers, self.triggers.key, data, entries, read_errors) or self._ask(may_hold, path, blob):
                wanted.add(path)
            else:
                blobs[path] = blob
        headers = {}
        for path, blob in blobs.items():
            found = self._ask(("headers",), path, blob)
            if found is None:  # what its classes derive from is unknown: wanted
                wanted.add(path)
            else:
                headers[path] = found
        found = subclasses_by_name(headers, {*bases, *lookups.subclasses})
        if not found:
            return wanted
        words: dict[str, set[str]] = {}
        for name, paths in found.items():
            for path in paths:
                words.setdefault(name, set()).update(module_words(layout.name(path).module))
        test = NameTest({n: frozenset(w) for n, w in words.items()})
        for path in candidates:
            if path in wanted or path in headers:
                continue
            if not self._matches(path, test, test.key, data, entries, read_errors):
                continue
            if not self._matches(path, self.triggers, self.triggers.key, data, entries, read_errors):
                continue
            blob = self._read_into(path, data, entries, read_errors)
            for name in self._ask(("found", test.spec), path, blob, test) if blob is not None else ():
                reached = self._imported_homes(path, blob, name, found[name], layout)
                if reached:
                    wanted.update(reached)
                    wanted.add(path)
        return wanted

    def _imported_homes(self, path: str, blob: bytes, cls: str, homes, layout) -> set[str]:
        """Of ``homes`` (files defining a class named ``cls``, which ``path`` names), those
        ``path``'s imports may reach, read from its bytes (``module_imports``) and found as
        Python would (``Layout.find`` from its import roots): the module itself (``from
        tasks.anli.agents import DefaultTeacher``, ``from . import agents``), or a package above
        it, which may re-export the class (``from tasks.anli import DefaultTeacher``, ``import
        tasks``, a star import). A file defining its own class of that name (every ParlAI
        task's ``DefaultTeacher``) reaches none. A file changing ``sys.path`` may reach any."""
        homes = {h for h in homes if h != path}
        if not homes:
            return set()
        if self._ask(("contains", b"sys.path"), path, blob):
            return homes
        found = self._file_imports.get(path) or self._imports_read(path, module_imports(blob))
        name = layout.name(path)
        reached: set[str] = set()
        for level, module, names in found[0]:
            base = resolve_relative(name.module, name.is_package, level, module or None)
            if base is None:
                continue  # (more dots than packages: Python raises, nothing is imported)
            for target in (base, *(f"{base}.{n}" for n in names if n != "*")):
                file = layout.find(target, name.root)
                if not isinstance(file, str):
                    continue  # (a library, or an ambiguous import: the model links it to nothing)
                if file in homes:
                    reached.add(file)
                elif os.path.basename(file) == "__init__.py" and (target != base or not names or cls in names or "*" in names):
                    folder = os.path.dirname(file) + os.sep
                    reached.update(h for h in homes if h.startswith(folder))
        return reached

    def ignored(self, path: str, code: str) -> bool:
        """Whether per-file-ignores turn ``code`` off for ``path``."""
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        selectors = self.settings.ignored_for(rel)
        return code in selectors or _prefix_ignored(code, selectors)

    def _filter(self, diagnostics, enabled, targets, facts, used=None) -> list[Diagnostic]:
        """Selection, per-file-ignores and noqa; ``used`` collects (path, row, code) of each noqa match."""
        out = []
        seen = set()
        for d in diagnostics:
            if d.code not in enabled or d.path not in targets:
                continue
            rel = os.path.relpath(d.path, self.root).replace(os.sep, "/")
            if d.code != ALWAYS_REPORTED and (d.code in self.settings.ignored_for(rel) or _prefix_ignored(d.code, self.settings.ignored_for(rel))):
                continue
            f = facts.get(d.path)
            if f is not None and d.code != "DL000":
                if f.file_noqa is None or d.code in f.file_noqa:
                    continue
                row = d.noqa_row or d.span.row
                if row in f.noqa and (f.noqa[row] is None or d.code in f.noqa[row]):
                    if used is not None:
                        used.add((d.path, row, d.code))
                    continue
            key = (d.path, d.span, d.code, d.message)
            if key in seen:
                continue
            seen.add(key)
            out.append(d)
        out.sort(key=Diagnostic.sort_key)
        return out


def _same_answers(path: str, blob: bytes, replays: list, settings) -> bool:
    """Every question the last run asked of the text of ``path`` (``Project.remember``: a fix's
    edits), asked again of its new text, gets the answer it got then."""
    if not replays:
        return True
    from dllint.project import REPLAYABLE

    project = Project(settings, None, {}, {path: blob}, set())
    for _, name, inputs, answer in replays:
        compute = REPLAYABLE.get(name)
        if compute is None:
            return False
        try:
            if compute(project, path, *inputs) != answer:
                return False
        except Exception:  # a record this code cannot ask again: a full run decides
            return False
    return True


class _Names:
    """path -> ModuleName, from the layout (files found by following imports included); and the
    libraries' names the project's modules shadow (``Layout.shadowing``), which every file's facts
    are computed with."""

    def __init__(self, layout: Layout, shadowed: frozenset[str] = frozenset()):
        self.layout = layout
        self.shadowed = shadowed

    def __getitem__(self, path: str):
        return self.layout.name(path)


# questions asked of every file planning considers (a file outside the analysis not recorded as
# answering True answered False), so only the files answering True are kept; the others'
# answers are kept for the files they were asked of (``_cutoff``)
_ASKED_OF_ALL = ("triggers", "names", "attr", "any_of")
_NOT_ASKED = object()


def _answer_of(answers: list, i: int):
    """File ``i``'s answer among a recorded question's (index, answer) pairs, or _NOT_ASKED."""
    return next((a[1] for a in answers if type(a) is tuple and a[0] == i), _NOT_ASKED)


def ask_again(question: tuple, blob: bytes, triggers: Triggers):
    """The answer to one of the questions a run asks of a file's bytes, as the run asked it
    (``Engine._note``); ``triggers``: the engine's. Raises on a question it does not know."""
    return question_test(question, triggers)(blob)


def question_test(question: tuple, triggers: Triggers):
    """``ask_again``'s test for ``question``: a function of a file's bytes (built once, asked of
    many files)."""
    kind = question[0]
    if kind == "triggers":
        return triggers
    if kind == "names":
        return NameTest(dict(question[1]))
    if kind == "found":
        return NameTest(dict(question[1])).found
    if kind == "contains":
        return lambda blob, part=question[1]: part in blob
    if kind == "any_of":
        return AnyWord(question[1])
    if kind == "dotted":  # the module named after its package's folder (``pkg.main``) or relatively (``from .main``)
        name, package = re.escape(question[1].encode()), re.escape(question[2].encode())
        search = re.compile(rb"(?:(?<![\w.])\.+|\b" + package + rb"\.)" + name + rb"\b").search
        return lambda blob: search(blob) is not None
    if kind == "may_hold":
        return lambda blob, names=frozenset(question[1]): _may_hold_loader(blob, names)
    if kind == "headers":
        return class_headers
    if kind == IMPORTS_QUESTION[0]:
        return lambda blob: imports_digest(module_imports(blob))
    if kind == "attr":
        return AttributeNamed(question[1])
    if kind == NOTEBOOK_QUESTION[0]:  # (of an analysed notebook's JSON)
        from dllint.notebook import notebook_python

        return lambda blob: notebook_digest(*notebook_python(blob))
    raise ValueError(f"unknown question {kind!r}")


# what the early cutoff records of the files the run did not analyse when their imports mattered
# (``Engine._unparsed_imports``): a digest of each one's ``module_imports``
IMPORTS_QUESTION = ("imports",)


def imports_digest(found) -> str:
    return content_hash(repr(found).encode()).hex()


# what the early cutoff records of each analysed notebook (``notebook_digest``): a whole run's
# findings there depend on its JSON beyond the code its cells make
NOTEBOOK_QUESTION = ("notebook",)


def notebook_digest(code: bytes, nb) -> str:
    """What the findings of a whole run in an analysed notebook depend on besides the facts of
    its code (``code``, the Python its cells make): that code and the cells' own text (IPython
    lines as written), each code cell's place and shape (a finding's cell and line:
    ``notebook.finalize``), whether it is a Python notebook, and whether its JSON can be written
    back (a fix there is applied or only shown). Its outputs, execution counts and metadata are
    not among them: a notebook run again keeps the last findings."""
    cells = tuple((c.index, c.first_row, len(c.lines), c.list_source, c.trailing_newline) for c in nb.cells)
    text = content_hash(nb.source_text.encode("utf-8", "surrogatepass"))  # (IPython lines as written)
    return content_hash(repr((content_hash(code), text, cells, nb.python, nb.unwritable())).encode()).hex()


def _notebook_part(raw_hash: bytes) -> bytes:
    """A notebook's part of the early cutoff's hashes, from the content hash of its JSON."""
    return content_hash(b"ipynb" + raw_hash)


def _plain(answer):
    """An answer as the cache stores and compares it (sets sorted, lists as tuples)."""
    kind = type(answer)
    if kind is set or kind is frozenset:
        return tuple(sorted(answer))
    if kind is list or kind is tuple:
        return tuple(_plain(a) for a in answer)
    return answer


def _may_hold_loader(blob: bytes, loader_classes: frozenset[str]) -> bool:
    """Whether a file without trigger words may construct a DataLoader all the same (a library
    loader given ``num_workers``, a project DataLoader subclass): a superset, read from the
    bytes (``Engine._sibling_files``)."""
    if b"num_workers" in blob:
        return True
    return any(name.encode() in blob for name in loader_classes)


def _prefix_ignored(code: str, selectors: set[str]) -> bool:
    return any(sel == "ALL" or code.startswith(sel) for sel in selectors)


def _holding_folder(path: str) -> str:
    """The folder holding a module: its file's (``pkg`` for ``pkg/main.py``), or, for a package's
    ``__init__.py``, the one holding the package (``pkg`` for ``pkg/main/__init__.py``)."""
    folder = os.path.dirname(path)
    return os.path.dirname(folder) if os.path.basename(path) == "__init__.py" else folder


def _package_folder(path: str) -> str:
    """The name of the folder holding a module (``_holding_folder``): what an import through
    the package writes before the module's name."""
    return os.path.basename(_holding_folder(path))


def _package_inits(path: str, layout) -> list[str]:
    """The ``__init__.py`` files of the project packages holding a module, innermost first."""
    out = []
    folder = _holding_folder(path)
    while True:
        init = os.path.join(folder, "__init__.py")
        if init not in layout.files:
            return out
        out.append(init)
        folder = os.path.dirname(folder)


def _is_stub(path: str, explicit: set[str]) -> bool:
    """A type stub (.pyi) holds no runtime code: analysed only when named on the command line."""
    return path.endswith(".pyi") and path not in explicit
