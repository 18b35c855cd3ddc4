"""dllint's worker processes end with it: after SIGTERM or SIGKILL of dllint nothing keeps running
or holds the caller's standard output open; Ctrl-C exits 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from golden import ROOT

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the process table in /proc")


def slow_project(root: Path, files: int = 24, functions: int = 1500) -> None:
    """Files that all need parsing, each slow enough that the worker pool lives for seconds."""
    (root / ".git").mkdir()
    body = "".join(f"def f{i}(x):\n    return [x + {i} for _ in range(3)]\n\n" for i in range(functions))
    for n in range(files):
        (root / f"m{n}.py").write_text(f"from torch.utils.data import Dataset\n\n{body}")


def children(pid: int) -> set[int]:
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(entry))
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def start_with_workers(root: Path) -> tuple[subprocess.Popen, set[int]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dllint", "--no-cache", "--jobs", "2", "."],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.time() + 60
    workers: set[int] = set()
    while time.time() < deadline and proc.poll() is None:
        workers = children(proc.pid)
        if len(workers) >= 2:
            time.sleep(0.3)  # let them start their work
            return proc, children(proc.pid)
        time.sleep(0.01)
    proc.kill()
    pytest.fail(f"dllint never ran two worker processes ({proc.poll()=})")


def ends_with_parent(root: Path, sig: int) -> None:
    proc, workers = start_with_workers(root)
    assert workers
    os.kill(proc.pid, sig)
    try:
        proc.communicate(timeout=15)  # returns once nothing holds the pipes any more
    except subprocess.TimeoutExpired:
        for pid in workers:  # clean up for the next tests
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        proc.communicate()
        pytest.fail("a worker process kept the caller's output open after dllint died")
    deadline = time.time() + 10
    while time.time() < deadline and any(alive(pid) for pid in workers):
        time.sleep(0.05)
    assert not any(alive(pid) for pid in workers)


def test_workers_die_with_dllint_on_sigkill(tmp_path):
    slow_project(tmp_path)
    ends_with_parent(tmp_path, signal.SIGKILL)


def test_workers_die_with_dllint_on_sigterm(tmp_path):
    slow_project(tmp_path)
    ends_with_parent(tmp_path, signal.SIGTERM)


def test_ctrl_c_exits_130(tmp_path):
    slow_project(tmp_path)
    proc, workers = start_with_workers(tmp_path)
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Aborted!" not in err


def test_a_folder_run_forks_its_workers_before_it_holds_the_files(tmp_path, monkeypatch):
    """A forked worker's memory counts what its parent held when it forked: a run reading a
    folder starts the pool after reading EARLY_POOL_READS files, not after all of them; a run on
    named files (a pre-commit hook's) does not start it early; and the pool ends with the run."""
    import builtins

    import dllint.engine as engine_module
    from dllint.config import Settings
    from dllint.engine import EARLY_POOL_READS, Engine, FactStore

    (tmp_path / ".git").mkdir()
    for n in range(EARLY_POOL_READS + 30):
        (tmp_path / f"m{n}.py").write_text("from torch.utils.data import Dataset\nX = 1\n")
    reads = []
    started = []
    real_open = builtins.open

    def counting_open(path, mode="r", *args, **kwargs):
        if str(path).endswith(".py") and "b" in mode:
            reads.append(path)
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(engine_module, "open", counting_open, raising=False)
    real_start = FactStore.start
    monkeypatch.setattr(FactStore, "start", lambda self: (started.append(len(reads)), real_start(self)))
    targets = sorted(str(p) for p in tmp_path.glob("*.py"))
    engine = Engine(Settings(), str(tmp_path), jobs=2)
    engine.analyse(targets, {"DL101"})
    assert started == [EARLY_POOL_READS]
    assert engine.store._pool is None  # closed with the run
    reads.clear()
    started.clear()
    engine.analyse(targets[:1], {"DL101"}, explicit=set(targets[:1]))
    assert started == [] and len(reads) > EARLY_POOL_READS


def test_a_worker_collects_the_cycles_its_jobs_left_once_it_has_stored_what_it_held(tmp_path):
    """A worker's cyclic collector is paused (``init_worker``); once it has stored every entry it
    held, the cycles its jobs left are collected (and the C heap's free memory given back): it
    stays while the parent plans, and the run's peak memory is the sum of its processes'."""
    import gc
    import weakref

    from dllint.cache import FactWriter
    from dllint.model import FileFacts
    from dllint.workers import job, store_when_idle, wait_for_writes

    class Node:
        pass

    writer = FactWriter(str(tmp_path / "c"), "print", "")
    facts = FileFacts(path="/p/a.py", module="a", root="/p")
    left: list = []

    @job
    def work(_args):
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle, garbage once the job ends
        left.append(weakref.ref(a))
        store_when_idle(writer, writer.key(b"h" * 16, "/p/a.py", "a", "/p", False), facts, 10)

    was = gc.isenabled()
    gc.disable()
    try:
        work(None)
        assert left[0]() is not None  # (the collector paused: still there)
        wait_for_writes()
        assert left[0]() is None
    finally:
        if was:
            gc.enable()


def test_a_worker_stores_its_facts_in_the_cache_only_once_no_job_runs(tmp_path):
    """``workers.store_when_idle``: an entry a job hands over is written after that job (and any
    other) has ended, not while it runs, unless the entries held take more than
    ``PENDING_BYTES`` (of the files they are of); ``wait_for_writes`` returns once the entries
    are on disk, readable as the facts given."""
    from dllint import serial
    from dllint.cache import FactCache, FactWriter
    from dllint.model import FileFacts
    from dllint.workers import job, store_when_idle, wait_for_writes

    writer = FactWriter(str(tmp_path / "c"), "print", "")
    key = writer.key(b"h" * 16, "/p/a.py", "a", "/p", False)
    entry = tmp_path / "c" / "facts" / key[:2] / key
    facts = FileFacts(path="/p/a.py", module="a", root="/p", imports={"np": "numpy"})
    seen_during = []

    @job
    def work(_args):
        store_when_idle(writer, key, facts, 10)
        time.sleep(0.2)  # longer than the idle wait: the write would have happened by now
        seen_during.append(entry.exists())

    work(None)
    wait_for_writes()
    assert seen_during == [False] and entry.exists()

    # beyond PENDING_BYTES of files held for later, the oldest are written at once, in the job
    from dllint.workers import PENDING_BYTES

    big = tmp_path / "c" / "facts" / (big_key := writer.key(b"b" * 16, "/p/b.py", "b", "/p", False))[:2] / big_key

    @job
    def large(_args):
        store_when_idle(writer, key, facts, 10)
        store_when_idle(writer, big_key, facts, PENDING_BYTES)
        seen_during.append((entry.exists(), big.exists()))

    entry.unlink()
    large(None)
    wait_for_writes()
    assert seen_during[1:] == [(True, False)] and big.exists()
    assert serial.same_facts(serial.loads(entry.read_bytes()), facts)
    cache = FactCache(str(tmp_path / "c"))
    assert cache.writer().key(b"h" * 16, "/p/a.py", "a", "/p", False) != key  # another code print
    cache.fingerprint = "print"
    assert cache.facts_key(b"h" * 16, "/p/a.py", "a", "/p", False) == key
    assert serial.same_facts(cache.load_facts(key), facts)


def test_facts_travel_from_a_worker_as_their_fields_and_come_back_equal():
    """Facts cross from the worker processes to the parent by pickle: each dataclass goes as its
    class and its fields' values (dllint.model.pickled_by_fields), not as one dict of slot names per
    object, and comes back equal, of the same types, frozen where it was."""
    import dataclasses
    import pickle

    from dllint.engine import all_rules
    from dllint.facts.extract import extract
    from dllint.model import Span
    from dllint.names import DATALOADER_CLASSES
    from dllint.serial import same_facts

    src = b'''
import json
from torch.utils.data import DataLoader, Dataset

class Lines(Dataset):
    def __init__(self, path):
        self.items = [json.loads(x) for x in open(path)]  # noqa: DL101
    def __getitem__(self, i):
        return self.items[i]

if __name__ == "__main__":
    DataLoader(Lines("a.jsonl"), num_workers=4)
'''
    facts = extract("/p/m.py", "m", "/p", False, src, all_rules(), DATALOADER_CLASSES, frozenset())
    assert facts.error is None and facts.loaders and facts.classes and facts.noqa
    blob = pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL)
    back = pickle.loads(blob)
    assert back == facts and same_facts(back, facts)
    # no object carries its field names: a class and its values
    for name in (b"end_row", b"qualname", b"args_ir", b"imported_modules"):
        assert name not in blob
    span = pickle.loads(pickle.dumps(Span(3, 1, 4, 2)))
    assert span == Span(3, 1, 4, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        span.row = 1
