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
"""

from __future__ import annotations

import gc
import os
import sys
import threading

POLL_SECONDS = 0.5


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
