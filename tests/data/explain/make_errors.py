"""Make torch raise the real DataLoader errors on this machine: `python make_errors.py MODE [MODE...]`.

Used by tests/test_explain.py: the error text it prints must be explained with the right cause.
With several modes (worker deaths only), each runs in turn and its traceback follows a line
``=== MODE``, so one torch import serves them all.
"""

import os
import signal
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

MODES = sys.argv[1:] or ["ok"]
MODE = MODES[0]


class DS(Dataset):
    def __init__(self):
        if MODE == "pickle":
            self.f = lambda x: x

    def __len__(self):
        return 64

    def __getitem__(self, i):
        if MODE == "kill":  # what the OOM killer does
            os.kill(os.getpid(), signal.SIGKILL)
        if MODE == "segv":
            import ctypes

            ctypes.string_at(0)
        if MODE == "bus":  # what a write past a full /dev/shm does
            os.kill(os.getpid(), signal.SIGBUS)
        if MODE == "sleep":
            time.sleep(5)
        if MODE == "keyerror":
            raise KeyError("label")
        if MODE == "fds":
            return torch.zeros(4)
        if MODE == "bigshm":
            return torch.ones(4_000_000)
        return i


def main():
    kw = dict(num_workers=2, batch_size=4)
    if MODE in ("pickle", "bootstrap"):
        kw["multiprocessing_context"] = "spawn"
    if MODE in ("kill", "segv", "bus"):  # one worker: no second dying worker printing into the next mode
        kw["num_workers"] = 1
    if MODE == "sleep":
        kw["timeout"] = 1
    if MODE == "prefetch":
        kw = dict(num_workers=0, prefetch_factor=2)
    if MODE == "persistent":
        kw = dict(num_workers=0, persistent_workers=True)
    if MODE == "bigshm":
        kw["batch_size"] = 8
    if MODE == "fds":  # keep every batch tensor alive under a low fd limit
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        kept = []
        for _ in range(40):
            for b in DataLoader(DS(), num_workers=2, batch_size=1):
                kept.append(b)
        return
    for _ in DataLoader(DS(), **kw):
        pass


if MODE == "bootstrap":  # no main guard, spawn workers
    main()
elif __name__ == "__main__" and len(MODES) == 1:
    main()
elif __name__ == "__main__":
    import traceback

    for MODE in MODES:
        print(f"=== {MODE}", file=sys.stderr, flush=True)
        try:
            main()
        except Exception:
            traceback.print_exc()
        sys.stderr.flush()
        time.sleep(0.2)  # let a dying worker's own message land before the next marker
