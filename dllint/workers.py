"""Setup of dllint's worker processes (the per-file analysis pool in ``engine.FactStore``).

A worker must never outlive dllint: when dllint is killed (SIGTERM, SIGKILL, a CI timeout) its
workers would otherwise keep running as orphans, and, holding the caller's standard output and
error, make a harness that reads them until end of file wait forever. So each worker

- asks Linux to kill it when its parent dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``),
- also watches its parent from a thread and leaves when the parent is gone (other systems, and a
  parent that died before the ``prctl``),
- lets go of the caller's standard input, output and error (they point to the null device: a
  worker reports through the pool's pipes only),
- and pauses the cyclic garbage collector, as the parent does during a run (see engine.py).

A worker also stores the facts it computes in the cache itself, but only when it has nothing else
to do (``store_when_idle``): encoding facts for the cache costs about a quarter of computing them
(NeMo: 1.0 of 4.3 s), and a cold run's parent waits for the workers' scan, while the workers
wait, idle, for the parent's planning that follows it. The writes are done before the worker
exits; the run waits for its workers to exit (``engine.FactStore.close``).
"""

from __future__ import annotations

import collections
import functools
import gc
import os
import sys
import threading
import time

POLL_SECONDS = 0.5
IDLE_POLL_SECONDS = 0.005  # how often a worker's pending cache writes look whether a job still runs
IDLE_SECONDS = 0.02  # a worker is idle when no job has run for this long (not between two jobs)
# the facts a worker holds for later writes, in bytes of the files they are of: beyond this, it
# writes the oldest at once. The facts of a file take about 7 times its size in memory, and a
# worker's memory is not given back until it exits: a cold run of NeMo (2,579 files) peaks at
# 354 MB (the worker processes and the parent together) writing at once, 386 MB with this bound
# and 425 MB without one, at 7.3, 6.95 and 6.6 s; diffusers: 3.25, 3.0 and 2.9 s
PENDING_BYTES = 2_000_000


def init_worker(creator: int) -> None:
    """The pool's initializer; ``creator`` is the pid of the process that made the pool."""
    gc.disable()
    parent = os.getppid()
    _die_with_parent()
    _release_standard_streams()
    if not _alive(creator) or os.getppid() != parent:
        os._exit(1)  # dllint died before the death signal was armed
    watcher = threading.Thread(target=_watch, args=(parent, creator), name="dllint-parent-watch", daemon=True)
    watcher.start()


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError, ImportError):
        pass  # the watcher thread still covers it


def _release_standard_streams() -> None:
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in (0, 1, 2):
        try:
            os.dup2(null, fd)
        except OSError:
            pass
    if null > 2:
        os.close(null)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _watch(parent: int, creator: int) -> None:
    import time

    while True:
        time.sleep(POLL_SECONDS)
        if os.getppid() != parent or not _alive(creator):
            os._exit(1)


# ---------------------------------------------------------------------------- deferred writes

_running = 0  # jobs of this worker running now (``job``)
_last_job = 0.0  # time.monotonic() when the last job ended
_pending: collections.deque = collections.deque()  # (writer, key, facts, size) to store
_pending_bytes = 0  # the sizes of the files of ``_pending``
_lock = threading.Lock()
_writing = False  # whether a thread is storing ``_pending``
_storing = False  # whether that thread is writing an entry now


def job(fn):
    """A pool job: while it runs, this worker's pending cache writes wait."""

    @functools.wraps(fn)
    def run(args):
        global _running, _last_job
        _running += 1
        try:
            return fn(args)
        finally:
            _running -= 1
            _last_job = time.monotonic()

    return run


def store_when_idle(writer, key: str, facts, size: int) -> None:
    """Store ``facts`` (of a file of ``size`` bytes) under ``key`` with ``writer``
    (``cache.FactWriter``) once no job of this worker runs, or at once while the facts held for
    later take more than ``PENDING_BYTES``. A thread does it and ends when nothing is left; it
    is not a daemon, so the worker process finishes it before it exits."""
    global _writing, _pending_bytes
    with _lock:
        _pending.append((writer, key, facts, size))
        _pending_bytes += size
    while _store_one(PENDING_BYTES, inline=True):  # too much held: the oldest are written now, here
        pass
    with _lock:
        if _writing or not _pending:
            return
        _writing = True
    threading.Thread(target=_store_pending, name="dllint-cache-writes").start()


def _store_one(above: int = -1, inline: bool = False) -> bool:
    """Write the oldest pending entry when the pending entries take more than ``above`` bytes;
    whether one was written. ``inline``: by a job, which does not wait for the thread's write
    in progress (that thread runs at the lowest priority: the job would wait for the time no
    other process wants; the bound is passed for a moment then)."""
    global _pending_bytes, _storing
    with _lock:
        if not _pending or _pending_bytes <= above or (inline and _storing):
            return False
        writer, key, facts, size = _pending.popleft()
        _pending_bytes -= size
        if not inline:
            _storing = True
    try:
        writer.store(key, facts)
    finally:
        if not inline:
            _storing = False
    return True


def _lower_priority() -> None:
    """On Linux, where a thread has a priority of its own: the lowest for this thread, so that
    its writes take only the time no other process wants (a cold run's parent is planning on
    the other core)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (OSError, AttributeError):
        pass


def wait_for_writes() -> None:
    """Return once this process has stored every pending entry (tests; a worker process does
    this by exiting)."""
    while True:
        with _lock:
            if not _writing:
                return
        time.sleep(IDLE_POLL_SECONDS)


def _store_pending() -> None:
    global _writing
    _lower_priority()
    while True:
        while _running or time.monotonic() - _last_job < IDLE_SECONDS:
            time.sleep(IDLE_POLL_SECONDS)
        with _lock:
            done = not _pending
        if done:
            _give_back_memory()  # (still writing, for ``wait_for_writes`` and a job adding more)
            with _lock:
                if not _pending:
                    _writing = False
                    return
            continue
        _store_one()


def _give_back_memory() -> None:
    """Once a worker has stored what it held: the cycles its jobs left (its collector is paused)
    collected, and the C heap's free memory given back to the system (glibc's ``malloc_trim``),
    for the worker stays while the parent plans, and the run's peak memory is the sum of its
    processes' (a cold run: NeMo 339 -> 324-334 MB, unilm 402 -> 384-401 MB)."""
    gc.collect()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass
