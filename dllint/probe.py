"""``dllint probe MODULE:CALLABLE``: confirm on the real dataset what the static rules suspect.

The callable returns a Dataset or a DataLoader. The probe runs four experiments, each a plain
function returning a :class:`Finding`:

- memory (DL101): the dataset runs through a DataLoader with N fork workers; the main process
  reads each worker's private memory (Private_Clean + Private_Dirty of ``/proc/<pid>/smaps_rollup``,
  i.e. its USS) over time, while the workers count the items they read in a shared array.
  Growth is reported per worker and per 1,000 items, next to the dataset attributes that hold the
  most Python objects (counted on the live dataset). It is "confirmed" when the median worker grew
  by at least ``min_growth_mb`` and some attribute holds enough Python objects to explain it.
- pickling (DL103): the dataset, collate_fn and worker_init_fn are pickled as spawn/forkserver
  would; on failure the probe walks the object's state and names the innermost attribute that fails.
- random streams (DL105 / DL203): item 0 is drawn 4 times in each of 2 workers, in 2 epochs
  (non-persistent workers, as by default). A dataset that is random but whose two workers draw
  identical streams holds an RNG object copied into every worker (DL105); streams that differ
  between workers but repeat every epoch come from a constant seed in worker_init_fn (DL203).
- duplicates (DL202, IterableDataset only): 2 workers iterate the dataset; items (fingerprinted in
  the worker) seen by more than one worker are duplicates of an unsharded stream.

torch is imported inside the functions, never at module import.
"""

from __future__ import annotations

import gc
import hashlib
import importlib
import importlib.util
import json
import os
import pickle
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import click

from dllint.explain import RULE_NAMES

MiB = 1024**2
CONFIRMED, OK, SKIPPED, ERROR = "confirmed", "ok", "skipped", "error"


def short_error(exc: BaseException) -> str:
    """One line for an exception; for a worker's re-raised error, its original last line."""
    text = str(exc)
    if "Original Traceback" in text:
        lines = [line for line in text.splitlines() if line.strip()]
        first = lines[0].strip() if lines else ""
        return f"{first} {lines[-1].strip()}" if len(lines) > 1 else first
    return f"{type(exc).__name__}: {text}".strip()


class TorchMissing(Exception):
    pass


class TargetError(Exception):
    """The MODULE:CALLABLE target cannot be loaded or does not return a dataset."""


def _torch():
    try:
        import torch  # lazy on purpose: importing dllint never imports torch
        import torch.utils.data
    except ImportError as exc:
        raise TorchMissing(str(exc)) from exc
    return torch


# --------------------------------------------------------------------------- report types


@dataclass
class Finding:
    code: str
    status: str  # confirmed / ok / skipped (not applicable) / error (could not run)
    message: str
    fix: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return RULE_NAMES.get(self.code, "")


@dataclass
class AttributeSize:
    name: str
    type: str
    objects: int  # Python objects reachable through containers (capped)
    bytes: int  # estimated
    capped: bool = False


@dataclass
class WorkerMemory:
    worker_id: int
    pid: int
    start_bytes: int  # private memory when the worker started (in worker_init_fn)
    end_bytes: int
    items: int
    growth_bytes: int
    per_1000_items_bytes: float | None
    samples: list[tuple[float, int, int]] = field(default_factory=list)  # (seconds, items read, private bytes)


@dataclass
class ProbeReport:
    target: str
    dataset_type: str
    iterable: bool
    length: int | None
    workers: int
    seconds: float | None = None
    batches_read: int = 0
    items_read: int = 0
    epoch_done: bool = False
    memory: list[WorkerMemory] = field(default_factory=list)
    attributes: list[AttributeSize] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def confirmed(self) -> list[Finding]:
        return [f for f in self.findings if f.status == CONFIRMED]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for f, fd in zip(self.findings, d["findings"]):
            fd["name"] = f.name
        d["confirmed"] = [f.code for f in self.confirmed]
        return d


# --------------------------------------------------------------------------- loading the target


def _module_from_path(path: Path) -> Any:
    path = path.resolve()
    cwd = Path.cwd().resolve()
    # Prefer a dotted name importable from cwd (what a spawn worker would need to unpickle).
    try:
        rel = path.with_suffix("").relative_to(cwd)
        parts = rel.parts
    except ValueError:
        parts = ()
    if parts and all(p.isidentifier() for p in parts):
        dotted = ".".join(parts)
        if str(cwd) not in sys.path:
            sys.path.insert(0, str(cwd))
        try:
            mod = importlib.import_module(dotted)
            if Path(getattr(mod, "__file__", "") or "").resolve() == path:
                return mod
        except ImportError:
            pass
    name = path.stem if path.stem.isidentifier() else "_dllint_probe_target"
    existing = sys.modules.get(name)
    if existing is not None and Path(getattr(existing, "__file__", "") or "").resolve() != path:
        name = f"_dllint_probe_{abs(hash(str(path)))}"
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_target(spec: str) -> Callable[[], Any]:
    """``pkg.module:factory`` (importable from cwd) or ``path/to/file.py:factory``."""
    module_part, sep, attr = spec.rpartition(":")
    if not sep or not module_part or not attr:
        raise TargetError(f"expected MODULE:CALLABLE or FILE.py:CALLABLE, got {spec!r}")
    try:
        if module_part.endswith(".py") or os.sep in module_part or "/" in module_part:
            path = Path(module_part)
            if not path.is_file():
                raise TargetError(f"no such file: {module_part}")
            mod = _module_from_path(path)
        else:
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            mod = importlib.import_module(module_part)
    except TargetError:
        raise
    except (Exception, SystemExit) as exc:  # the user's module failed to import: say so, do not crash
        raise TargetError(f"importing {module_part} failed: {type(exc).__name__}: {exc}") from exc
    obj = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{module_part} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TargetError(f"{spec} is not callable")
    return obj


@dataclass
class Target:
    dataset: Any
    collate_fn: Callable | None
    worker_init_fn: Callable | None
    batch_size: int | None
    from_loader: bool
    batch_sampler: Any = None  # a DataLoader's own batch_sampler (its batch_size is None then)


def resolve(obj: Any, batch_size: int | None) -> Target:
    torch = _torch()
    DataLoader = torch.utils.data.DataLoader
    if isinstance(obj, DataLoader):
        if batch_size is None and obj.batch_size is None and obj.batch_sampler is not None:
            # a custom batch_sampler: keep it, its collate_fn expects its batches
            return Target(obj.dataset, obj.collate_fn, obj.worker_init_fn, None, True, obj.batch_sampler)
        bs = batch_size if batch_size is not None else obj.batch_size
        return Target(obj.dataset, obj.collate_fn, obj.worker_init_fn, bs, True)
    if hasattr(obj, "__getitem__") or hasattr(obj, "__iter__"):
        return Target(obj, None, None, batch_size if batch_size is not None else 64, False)
    raise TargetError(f"the callable returned {type(obj).__name__}, not a Dataset or a DataLoader")


# --------------------------------------------------------------------------- memory readers


def read_private_bytes(pid: int | str = "self") -> int | None:
    """USS of a process: Private_Clean + Private_Dirty from smaps_rollup (smaps as fallback)."""
    for name in ("smaps_rollup", "smaps"):
        try:
            with open(f"/proc/{pid}/{name}", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        total = 0
        for line in data.splitlines():
            if line.startswith((b"Private_Clean:", b"Private_Dirty:")):
                total += int(line.split()[1]) * 1024
        return total
    return None


# --------------------------------------------------------------------------- attribute sizes

_RNG_TYPES = ("numpy.random._generator.Generator", "numpy.random.mtrand.RandomState", "random.Random",
              "torch._C.Generator", "torch.Generator")


def _qualname(t: type) -> str:
    return f"{t.__module__}.{t.__qualname__}"


def count_objects(root: Any, cap: int = 2_000_000) -> tuple[int, int, bool]:
    """Python objects reachable through containers from ``root``, their estimated bytes, capped?

    Follows list/tuple/set/frozenset/dict/deque, numpy object arrays, pandas object columns and
    instance ``__dict__``s; a non-object numpy array or a tensor counts as one object (its buffer
    is not refcounted, so fork shares it).
    """
    seen: set[int] = set()
    stack = [root]
    count = 0
    nbytes = 0
    while stack:
        obj = stack.pop()
        oid = id(obj)
        if oid in seen:
            continue
        seen.add(oid)
        count += 1
        if count >= cap:
            return count, nbytes, True
        try:
            nbytes += sys.getsizeof(obj)
        except Exception:
            pass
        t = type(obj)
        if t in (str, bytes, int, float, bool, type(None), complex):
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)) or t.__name__ == "deque":
            stack.extend(obj)
        elif t.__module__ == "numpy" and t.__name__ == "ndarray":
            if obj.dtype == object:
                stack.extend(obj.ravel().tolist())
            else:
                nbytes += int(obj.nbytes)
        elif t.__module__.startswith("pandas") and hasattr(obj, "dtypes") and hasattr(obj, "columns"):
            for col in obj.columns:
                ser = obj[col]
                if ser.dtype == object:
                    stack.extend(ser.tolist())
        elif t.__module__.startswith("torch") and hasattr(obj, "element_size") and hasattr(obj, "nelement"):
            nbytes += int(obj.element_size() * obj.nelement())
        elif hasattr(obj, "__dict__") and not isinstance(obj, type) and not callable(obj):
            stack.extend(vars(obj).values())
    return count, nbytes, False


def attribute_sizes(dataset: Any, top: int = 5, cap: int = 2_000_000) -> list[AttributeSize]:
    try:
        attrs = dict(vars(dataset))
    except TypeError:
        return []
    out = []
    for name, value in attrs.items():
        n, b, capped = count_objects(value, cap=cap)
        out.append(AttributeSize(name, type(value).__name__, n, b, capped))
    out.sort(key=lambda a: (-a.objects, -a.bytes))
    return out[:top]


def rng_attributes(dataset: Any, depth: int = 2) -> list[str]:
    """Dotted paths of RNG objects held by the dataset (and its attributes, ``depth`` levels)."""
    found: list[str] = []

    def walk(obj: Any, path: str, level: int) -> None:
        try:
            items = vars(obj).items()
        except TypeError:
            return
        for name, value in items:
            q = _qualname(type(value))
            if q in _RNG_TYPES or (type(value).__name__ in ("Generator", "RandomState")
                                   and type(value).__module__.startswith(("numpy", "torch"))):
                found.append(f"{path}{name} ({type(value).__module__}.{type(value).__name__})")
            elif level < depth and hasattr(value, "__dict__") and not isinstance(value, type) \
                    and not callable(value):
                walk(value, f"{path}{name}.", level + 1)

    walk(dataset, "", 0)
    return found


# --------------------------------------------------------------------------- pickling (DL103)


class _Sink:
    def __init__(self) -> None:
        self.n = 0

    def write(self, b: bytes) -> int:
        self.n += len(b)
        return len(b)


class _SpawningPopen:
    """Stands in for a spawning Popen so multiprocessing primitives pickle as they would at start."""

    def duplicate_for_child(self, fd: int) -> int:
        return fd


def try_pickle(obj: Any) -> tuple[bool, str, int]:
    """(ok, error, size). Streams into a counting sink; numpy buffers go out of band (no copy)."""
    from multiprocessing import context

    sink = _Sink()
    previous = context.get_spawning_popen()
    context.set_spawning_popen(_SpawningPopen())
    try:
        pickle.Pickler(sink, protocol=5, buffer_callback=lambda buf: None).dump(obj)
        return True, "", sink.n
    except RecursionError:
        return False, "RecursionError: object graph too deep to pickle", sink.n
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}", sink.n
    finally:
        context.set_spawning_popen(previous)


def _children(obj: Any, limit: int = 10_000) -> list[tuple[str, Any]]:
    import functools

    if isinstance(obj, functools.partial):
        return [(".func", obj.func)] + [(f".args[{i}]", a) for i, a in enumerate(obj.args)] + [
            (f".keywords[{k!r}]", v) for k, v in obj.keywords.items()]
    if isinstance(obj, dict):
        return [(f"[{k!r}]", v) for k, v in list(obj.items())[:limit]]
    if isinstance(obj, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(obj[:limit])]
    getstate = getattr(type(obj), "__getstate__", None)
    if getstate is not None and getstate is not getattr(object, "__getstate__", None):
        try:
            state = obj.__getstate__()
        except Exception:
            state = None
        if isinstance(state, dict):
            return [(f".{k}", v) for k, v in state.items()]
        if isinstance(state, tuple):
            out = []
            for part in state:
                if isinstance(part, dict):
                    out.extend((f".{k}", v) for k, v in part.items())
            return out
        return []
    out = []
    if hasattr(obj, "__dict__"):
        out.extend((f".{k}", v) for k, v in vars(obj).items())
    for slot in getattr(type(obj), "__slots__", ()) or ():
        if isinstance(slot, str) and hasattr(obj, slot):
            out.append((f".{slot}", getattr(obj, slot)))
    return out


def find_unpicklable(obj: Any, path: str, depth: int = 6) -> tuple[str, str]:
    """The innermost failing attribute path under ``obj`` (which fails to pickle), and its error."""
    ok, err, _ = try_pickle(obj)
    if ok:
        return path, ""
    if depth > 0:
        for name, child in _children(obj):
            cok, _, _ = try_pickle(child)
            if not cok:
                return find_unpicklable(child, path + name, depth - 1)
    return path, err


def pickle_finding(target: Target) -> Finding:
    parts = [("dataset", target.dataset), ("collate_fn", target.collate_fn), ("worker_init_fn", target.worker_init_fn)]
    failures = []
    sizes = {}
    for label, obj in parts:
        if obj is None:
            continue
        ok, err, size = try_pickle(obj)
        if ok:
            sizes[label] = size
            continue
        where, inner = find_unpicklable(obj, label)
        cls = type(obj)
        if label == "dataset" and "<locals>" in cls.__qualname__:
            where, inner = label, f"{err} (the class {cls.__qualname__} is defined inside a function)"
        failures.append({"object": label, "attribute": where, "error": inner or err})
    if failures:
        lines = [f"{f['attribute']} cannot be pickled: {f['error']}" for f in failures]
        return Finding(
            "DL103", CONFIRMED,
            "spawn/forkserver workers (macOS, Windows, Linux from Python 3.14) would fail: " + "; ".join(lines),
            fix="replace lambdas and nested functions with module-level functions or functools.partial; open "
                "files/handles lazily in the worker; or drop them in __getstate__",
            details={"failures": failures, "pickled_bytes": sizes},
        )
    text = ", ".join(f"{k} {v / MiB:.1f} MiB" if v >= MiB else f"{k} {v} B" for k, v in sizes.items())
    return Finding("DL103", OK, f"pickles as spawn/forkserver would ({text}); each worker gets this copy",
                   details={"pickled_bytes": sizes})


# --------------------------------------------------------------------------- worker-side helpers


def fingerprint(obj: Any) -> str:
    h = hashlib.sha1()
    _feed(h, obj, 0)
    return h.hexdigest()[:16]


def _feed(h: Any, obj: Any, depth: int) -> None:
    t = type(obj)
    h.update(t.__name__.encode())
    if depth > 20:
        h.update(repr(obj).encode())
        return
    if isinstance(obj, (list, tuple)):
        h.update(b"[")
        for x in obj:
            _feed(h, x, depth + 1)
        h.update(b"]")
    elif isinstance(obj, dict):
        h.update(b"{")
        for k in sorted(obj, key=repr):
            h.update(repr(k).encode())
            _feed(h, obj[k], depth + 1)
        h.update(b"}")
    elif t.__module__ == "numpy" and t.__name__ == "ndarray":
        h.update(str(obj.dtype).encode() + str(obj.shape).encode())
        h.update(obj.tobytes() if obj.dtype != object else repr(obj.tolist()).encode())
    elif t.__module__.startswith("torch") and hasattr(obj, "detach") and hasattr(obj, "numpy"):
        x = obj.detach().cpu().contiguous()
        h.update(str(x.dtype).encode() + str(tuple(x.shape)).encode())
        h.update(x.view(-1).view(_torch().uint8).numpy().tobytes() if x.numel() else b"")
    elif isinstance(obj, (bytes, bytearray)):
        h.update(bytes(obj))
    else:
        h.update(repr(obj).encode())


class _InitHook:
    """worker_init_fn: note the worker's pid and starting private memory, then call the user's."""

    def __init__(self, pids: Any, base: Any, user_fn: Callable | None) -> None:
        self.pids, self.base, self.user_fn = pids, base, user_fn

    def __call__(self, worker_id: int) -> None:
        self.pids[worker_id] = os.getpid()
        self.base[worker_id] = read_private_bytes() or 0
        if self.user_fn is not None:
            self.user_fn(worker_id)


_get_worker_info: Callable[[], Any] | None = None


def _worker_id() -> int:
    info = _get_worker_info() if _get_worker_info is not None else None
    return info.id if info is not None else -1


def _make_wrappers():
    """Dataset wrappers, built after torch is imported (they subclass torch's Dataset types)."""
    global _get_worker_info
    data = _torch().utils.data
    _get_worker_info = data.get_worker_info

    class CountingMap(data.Dataset):
        def __init__(self, ds: Any, counts: Any) -> None:
            self.ds, self.counts = ds, counts

        def __len__(self) -> int:
            return len(self.ds)

        def __getitem__(self, i: Any) -> Any:
            self.counts[_worker_id()] += 1
            return self.ds[i]

    class CountingIter(data.IterableDataset):
        def __init__(self, ds: Any, counts: Any) -> None:
            self.ds, self.counts = ds, counts

        def __iter__(self):
            wid = _worker_id()
            for x in self.ds:
                self.counts[wid] += 1
                yield x

    class TaggedMap(data.Dataset):
        def __init__(self, ds: Any) -> None:
            self.ds = ds

        def __len__(self) -> int:
            return len(self.ds)

        def __getitem__(self, i: Any) -> tuple[int, str]:
            return _worker_id(), fingerprint(self.ds[i])

    class TaggedIter(data.IterableDataset):
        def __init__(self, ds: Any) -> None:
            self.ds = ds

        def __iter__(self):
            wid = _worker_id()
            for x in self.ds:
                yield wid, fingerprint(x)

    return CountingMap, CountingIter, TaggedMap, TaggedIter


def _identity(x: Any) -> Any:
    return x


def _fork_context():
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")


# --------------------------------------------------------------------------- memory (DL101)


def measure_memory(target: Target, report: ProbeReport, workers: int, batches: int | None, seconds: float | None,
                   min_growth_mb: float, sample_every: float = 0.05) -> Finding:
    torch = _torch()
    ctx = _fork_context()
    if ctx is None or read_private_bytes() is None:
        return Finding("DL101", SKIPPED, "memory growth needs fork and /proc/<pid>/smaps_rollup (Linux)")
    if workers < 1:
        return Finding("DL101", SKIPPED, "memory growth needs --workers >= 1")
    CountingMap, CountingIter, _, _ = _make_wrappers()
    counts = ctx.Array("q", workers, lock=False)
    pids = ctx.Array("q", workers, lock=False)
    base = ctx.Array("q", workers, lock=False)
    iterable = isinstance(target.dataset, torch.utils.data.IterableDataset)
    wrapped = (CountingIter if iterable else CountingMap)(target.dataset, counts)
    kwargs: dict[str, Any] = {}
    if target.collate_fn is not None:
        kwargs["collate_fn"] = target.collate_fn
    if target.batch_sampler is not None and not iterable:
        kwargs["batch_sampler"] = target.batch_sampler
    else:
        kwargs.update(batch_size=target.batch_size, shuffle=False)
    loader = torch.utils.data.DataLoader(
        wrapped, num_workers=workers, worker_init_fn=_InitHook(pids, base, target.worker_init_fn),
        multiprocessing_context=ctx, timeout=max(120.0, (seconds or 0) * 2), **kwargs,
    )
    samples: dict[int, list[tuple[float, int, int]]] = {w: [] for w in range(workers)}

    def sample(now: float) -> None:
        for w in range(workers):
            pid = pids[w]
            if not pid:
                continue
            uss = read_private_bytes(pid)
            if uss is not None:
                samples[w].append((round(now, 3), int(counts[w]), uss))

    t0 = time.monotonic()
    last = -1.0
    nb = 0
    all_read = False
    length = report.length if not iterable else None
    it = iter(loader)
    try:
        for _batch in it:
            nb += 1
            now = time.monotonic() - t0
            # Workers read ahead; once they have read every item, sample before the iterator ends
            # and shuts them down (the last batches are only prefetched data by then).
            if not all_read and length is not None and sum(counts) >= length:
                all_read = True
                sample(now)
                last = now
            elif now - last >= sample_every:
                sample(now)
                last = now
            if (batches is not None and nb >= batches) or (seconds is not None and now >= seconds):
                break
        else:
            report.epoch_done = True
        sample(time.monotonic() - t0)
    finally:
        shutdown = getattr(it, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()
        del it
    report.seconds = round(time.monotonic() - t0, 3)
    report.batches_read = nb
    report.items_read = int(sum(counts))
    for w in range(workers):
        s = samples[w]
        if not s or not pids[w]:
            continue
        start = int(base[w]) or s[0][2]
        end = s[-1][2]
        items = s[-1][1]
        # The rate is taken between the first and last samples (the start of a worker carries its own
        # setup cost); with fewer than 1,000 items in between it would be noise, so none is given.
        per_1000 = None
        if len(s) >= 2 and s[-1][1] - s[0][1] >= 1000:
            per_1000 = (s[-1][2] - s[0][2]) / (s[-1][1] - s[0][1]) * 1000
        elif items >= 1000:
            per_1000 = (end - start) / items * 1000
        if len(s) > 60:  # keep the report short: about 60 points over time
            step = len(s) / 60
            s = [s[int(i * step)] for i in range(60)] + [s[-1]]
        report.memory.append(WorkerMemory(w, int(pids[w]), start, end, items, end - start, per_1000, s))
    if not report.memory:
        return Finding("DL101", SKIPPED, "no worker memory could be read")
    growths = [m.growth_bytes for m in report.memory]
    median = statistics.median(growths)
    rates = [m.per_1000_items_bytes for m in report.memory if m.per_1000_items_bytes is not None]
    rate = statistics.median(rates) if rates else None
    big = [a for a in report.attributes if a.objects >= 10_000]
    details: dict[str, Any] = {"median_growth_bytes": int(median), "per_1000_items_bytes": rate,
                               "attributes": [a.name for a in big]}
    projection = ""
    projected = None
    if rate is not None and report.length and not report.epoch_done:
        projected = rate * report.length / workers / 1000
        details["projected_epoch_growth_bytes"] = int(projected)
        projection = f"; a full epoch ({report.length:,} items) projects to +{projected / MiB:.0f} MiB per worker"
    rate_text = f", {rate / 1024:+.1f} KiB per 1,000 items" if rate is not None else ""
    growth_text = f"median worker private memory {median / MiB:+.1f} MiB after {report.items_read:,} items{rate_text}"
    threshold = min_growth_mb * MiB
    per_worker_items = statistics.median(m.items for m in report.memory)
    # A stopped run is judged on its projection only when the rate rests on many items (the first
    # batches carry the worker's own start-up noise) and clears twice the threshold.
    projected_hit = projected is not None and per_worker_items >= 20_000 and projected >= 2 * threshold
    if big and (median >= threshold or projected_hit):
        names = ", ".join(f"{a.name} ({a.type}, {a.objects:,}{'+' if a.capped else ''} Python objects, "
                          f"~{a.bytes / MiB:.0f} MiB)" for a in big[:3])
        return Finding(
            "DL101", CONFIRMED,
            f"copy-on-read: {growth_text}{projection}; held by {names}. Every worker and every rank pays this again.",
            fix="store these as numpy arrays with a fixed dtype (np.asarray(x, dtype=np.str_) for paths; "
                "dllint --fix does it when provably safe), pyarrow arrays, or a serialized buffer + offsets",
            details=details,
        )
    if median >= min_growth_mb * MiB:
        return Finding(
            "DL101", OK,
            f"{growth_text}, but no dataset attribute holds many Python objects: not copy-on-read of the dataset "
            "(allocator caches, decoded data, module globals?)",
            details=details,
        )
    if big and report.length and not report.epoch_done and report.items_read < 0.1 * report.length:
        return Finding(
            "DL101", OK,
            f"inconclusive: {growth_text}, only {report.items_read / report.length:.0%} of the dataset read while "
            f"{big[0].name} holds {big[0].objects:,} Python objects; run longer (--seconds, --batch-size)",
            details=details,
        )
    return Finding("DL101", OK, growth_text + projection + f" (below the {min_growth_mb:g} MiB threshold)",
                   details=details)


# --------------------------------------------------------------------------- random streams (DL105)


def _run_tagged(loader_factory: Callable[[], Any], epochs: int) -> list[dict[int, list[str]]]:
    out = []
    for _ in range(epochs):
        per: dict[int, list[str]] = {}
        it = iter(loader_factory())
        try:
            for wid, fp in it:
                per.setdefault(int(wid), []).append(fp)
        finally:  # shut the workers down now, also when one raised (else joins time out later)
            shutdown = getattr(it, "_shutdown_workers", None)
            if shutdown is not None:
                shutdown()
            del it
        out.append(per)
    return out


def rng_finding(target: Target, draws: int = 4, workers: int = 2) -> Finding:
    torch = _torch()
    ds = target.dataset
    if isinstance(ds, torch.utils.data.IterableDataset):
        return Finding("DL105", SKIPPED, "random streams are compared on map-style datasets (see DL202)")
    try:
        n = len(ds)
    except TypeError:
        n = None
    if n == 0:
        return Finding("DL105", SKIPPED, "empty dataset")
    ctx = _fork_context()
    if ctx is None:
        return Finding("DL105", SKIPPED, "needs the fork start method")
    _, _, TaggedMap, _ = _make_wrappers()
    tagged = TaggedMap(ds)

    def make():
        return torch.utils.data.DataLoader(
            tagged, batch_size=None, sampler=[0] * (draws * workers), num_workers=workers,
            collate_fn=_identity, worker_init_fn=target.worker_init_fn, multiprocessing_context=ctx, timeout=120,
        )

    try:
        epochs = _run_tagged(make, 2)
    except Exception as exc:
        return Finding("DL105", ERROR, f"drawing item 0 in workers failed: {short_error(exc)}")
    rngs = rng_attributes(ds)
    details: dict[str, Any] = {"streams": [{str(k): v for k, v in e.items()} for e in epochs], "rng_attributes": rngs}
    e0, e1 = epochs
    all_fps = {fp for e in epochs for seq in e.values() for fp in seq}
    if len(all_fps) == 1:
        return Finding("DL105", OK, "item 0 is the same on every draw (no randomness in __getitem__)", details=details)
    if 0 not in e0 or 1 not in e0:
        return Finding("DL105", SKIPPED, "could not draw from two workers", details=details)
    same_workers = e0[0] == e0[1] and len(set(e0[0])) > 1
    same_epochs = e0.get(0) == e1.get(0) and e0.get(1) == e1.get(1)
    held = f"; RNG objects on the dataset: {', '.join(rngs)}" if rngs else ""
    fix = ("create the generator lazily in the worker, seeded from torch.utils.data.get_worker_info().seed "
           "(or torch.initial_seed()), instead of in __init__")
    if same_workers:
        extra = " and every epoch repeats the previous one" if same_epochs else ""
        return Finding(
            "DL105", CONFIRMED,
            f"workers 0 and 1 drew identical random streams for item 0{extra}{held}",
            fix=fix, details=details,
        )
    if same_epochs:
        return Finding(
            "DL203", CONFIRMED,
            "random draws differ between workers but repeat exactly every epoch: the seed does not change per "
            f"epoch (constant seed in worker_init_fn?){held}",
            fix="seed from torch.initial_seed() % 2**32 or get_worker_info().seed, not worker_id or a constant",
            details=details,
        )
    return Finding("DL105", OK, "random draws differ between workers and between epochs", details=details)


# --------------------------------------------------------------------------- duplicates (DL202)


def duplicates_finding(target: Target, workers: int = 2, max_items: int = 4000, seconds: float = 10.0) -> Finding:
    torch = _torch()
    ds = target.dataset
    if not isinstance(ds, torch.utils.data.IterableDataset):
        return Finding("DL202", SKIPPED, "map-style dataset: the sampler splits indices between workers")
    ctx = _fork_context()
    if ctx is None:
        return Finding("DL202", SKIPPED, "needs the fork start method")
    _, _, _, TaggedIter = _make_wrappers()
    loader = torch.utils.data.DataLoader(
        TaggedIter(ds), batch_size=None, num_workers=max(2, workers), collate_fn=_identity,
        worker_init_fn=target.worker_init_fn, multiprocessing_context=ctx, timeout=120,
    )
    seen: dict[str, set[int]] = {}
    per_worker: dict[int, int] = {}
    total = 0
    t0 = time.monotonic()
    it = iter(loader)
    try:
        for wid, fp in it:
            total += 1
            per_worker[int(wid)] = per_worker.get(int(wid), 0) + 1
            seen.setdefault(fp, set()).add(int(wid))
            if total >= max_items or time.monotonic() - t0 > seconds:
                break
    except Exception as exc:
        return Finding("DL202", ERROR, f"iterating in workers failed: {short_error(exc)}")
    finally:
        shutdown = getattr(it, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()
    unique = len(seen)
    dup = sum(1 for ws in seen.values() if len(ws) > 1)
    frac = dup / unique if unique else 0.0
    details = {"items": total, "unique": unique, "in_several_workers": dup, "per_worker": per_worker}
    text = (f"{total:,} items from {len(per_worker)} workers, {unique:,} distinct, {dup:,} yielded by more than "
            f"one worker ({frac:.0%})")
    if unique >= 2 and frac >= 0.5 and len(per_worker) >= 2:
        return Finding(
            "DL202", CONFIRMED, f"unsharded stream: {text}: every worker yields the whole dataset",
            fix="in __iter__, split the work with torch.utils.data.get_worker_info() (id, num_workers), e.g. "
                "itertools.islice(stream, info.id, None, info.num_workers), or shard the files per worker",
            details=details,
        )
    return Finding("DL202", OK, text, details=details)


# --------------------------------------------------------------------------- driver


CHECKS = ("memory", "pickle", "rng", "duplicates")


def run_probe(spec_or_obj: Any, workers: int = 2, batches: int | None = None, seconds: float | None = 10.0,
              batch_size: int | None = None, min_growth_mb: float = 8.0,
              checks: tuple[str, ...] = CHECKS, label: str | None = None) -> ProbeReport:
    """Run the probe on ``MODULE:CALLABLE`` (a string), a factory, or a Dataset/DataLoader object."""
    torch = _torch()
    if isinstance(spec_or_obj, str):
        factory = load_target(spec_or_obj)
        label = label or spec_or_obj
        try:
            obj = factory()
        except (Exception, SystemExit) as exc:
            raise TargetError(f"calling {spec_or_obj} failed: {type(exc).__name__}: {exc}") from exc
    elif callable(spec_or_obj) and not hasattr(spec_or_obj, "__getitem__") and not hasattr(spec_or_obj, "__iter__"):
        obj = spec_or_obj()
    else:
        obj = spec_or_obj
    target = resolve(obj, batch_size)
    ds = target.dataset
    iterable = isinstance(ds, torch.utils.data.IterableDataset)
    try:
        length = len(ds)
    except TypeError:
        length = None
    report = ProbeReport(
        target=label or type(ds).__name__, dataset_type=_qualname(type(ds)), iterable=iterable, length=length,
        workers=workers,
    )
    report.attributes = attribute_sizes(ds)

    def guarded(code: str, what: str, fn: Callable[[], Finding]) -> None:
        # An experiment that cannot run (the dataset raises in a worker, a worker dies) is reported
        # as skipped with the error; it does not hide the others.
        try:
            report.findings.append(fn())
        except Exception as exc:
            report.findings.append(Finding(code, ERROR, f"{what} failed: {short_error(exc)}"))
        # A worker's re-raised error keeps its loader iterator alive in a reference cycle; collect it
        # here, or the next experiment's forked workers inherit it and run its __del__ themselves.
        gc.collect()

    if "pickle" in checks:
        guarded("DL103", "pickling", lambda: pickle_finding(target))
    if "memory" in checks:
        guarded("DL101", "reading the dataset in workers",
                lambda: measure_memory(target, report, workers, batches, seconds, min_growth_mb))
    if "rng" in checks and not iterable:
        guarded("DL105", "drawing item 0 in workers", lambda: rng_finding(target))
    if "duplicates" in checks and iterable:
        guarded("DL202", "iterating in workers", lambda: duplicates_finding(target, workers))
    if target.from_loader:
        used = "batch_sampler" if target.batch_sampler is not None else "batch_size"
        report.notes.append(f"probed the DataLoader's dataset, collate_fn, worker_init_fn and {used} with "
                            f"{workers} fork workers (its own context and worker count are not used"
                            + (")" if target.batch_sampler is not None else "; nor its sampler: items in order)"))
    return report


def _mib(n: float) -> str:
    return f"{n / MiB:.1f} MiB"


def format_report(r: ProbeReport) -> str:
    kind = "iterable" if r.iterable else "map-style"
    size = f", {r.length:,} items" if r.length is not None else ""
    lines = [f"probe {r.target}  ({r.dataset_type}, {kind}{size})"]
    if r.memory:
        epoch = "the whole epoch" if r.epoch_done else f"{r.batches_read} batches"
        lines.append(f"memory: {r.workers} fork workers read {r.items_read:,} items ({epoch}) in {r.seconds:.1f} s")
        for m in r.memory:
            rate = f", {m.per_1000_items_bytes / 1024:+.1f} KiB per 1,000 items" if m.per_1000_items_bytes is not None else ""
            lines.append(f"  worker {m.worker_id} (pid {m.pid}): private {_mib(m.start_bytes)} -> {_mib(m.end_bytes)} "
                         f"({m.growth_bytes / MiB:+.1f} MiB) over {m.items:,} items{rate}")
    if r.attributes:
        lines.append("largest attributes: " + "; ".join(
            f"{a.name} ({a.type}): {a.objects:,}{'+' if a.capped else ''} objects ~{a.bytes / MiB:.1f} MiB"
            for a in r.attributes[:3]))
    for f in r.findings:
        verdict = {CONFIRMED: "FAIL", OK: "ok  ", SKIPPED: "skip", ERROR: "err "}[f.status]
        lines.append(f"{verdict} {f.code} {f.name}: {f.message}")
        if f.status == CONFIRMED and f.fix:
            lines.append(f"     fix: {f.fix}")
    for n in r.notes:
        lines.append(f"note: {n}")
    c = r.confirmed
    errors = [f for f in r.findings if f.status == ERROR]
    lines.append(f"{len(c)} problem(s) confirmed" + (f": {', '.join(f.code for f in c)}" if c else "")
                 + (f"; {len(errors)} experiment(s) could not run" if errors else ""))
    return "\n".join(lines)


@click.command("probe", short_help="Run a dataset in real workers and measure what goes wrong.")
@click.argument("target")
@click.option("--workers", "-w", type=click.IntRange(min=1), default=2, show_default=True,
              help="Worker processes for the memory measurement (fork).")
@click.option("--batches", "-k", type=click.IntRange(min=1), default=None, help="Stop after K batches.")
@click.option("--seconds", "-s", type=click.FloatRange(min=0.1), default=None,
              help="Stop reading after S seconds (default 10 unless --batches is given); always at the end of "
                   "one epoch.")
@click.option("--batch-size", type=click.IntRange(min=1), default=None,
              help="Batch size when the callable returns a Dataset (default 64) or to override a DataLoader's.")
@click.option("--min-growth-mb", type=click.FloatRange(min=0), default=8.0, show_default=True,
              help="Median worker growth from which copy-on-read is confirmed.")
@click.option("--skip", multiple=True, type=click.Choice(CHECKS), help="Skip an experiment.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def probe(target: str, workers: int, batches: int | None, seconds: float | None, batch_size: int | None,
          min_growth_mb: float, skip: tuple[str, ...], as_json: bool) -> None:
    """Run a dataset in real workers: memory growth (DL101), pickling (DL103), RNG streams (DL105), duplicates (DL202).

    TARGET is MODULE:CALLABLE (importable from the current directory) or FILE.py:CALLABLE; the callable
    returns a Dataset or a DataLoader. Exit status: 0 nothing confirmed, 1 a problem confirmed, 2 usage error,
    torch missing, or an experiment that could not run (the dataset raised in a worker).
    """
    try:
        _torch()
    except TorchMissing as exc:
        click.echo(f"dllint probe needs torch, which cannot be imported here ({exc}); install torch in the "
                   "environment that runs the job", err=True)
        sys.exit(2)
    checks = tuple(c for c in CHECKS if c not in skip)
    if seconds is None and batches is None:
        seconds = 10.0
    try:
        report = run_probe(target, workers=workers, batches=batches, seconds=seconds, batch_size=batch_size,
                           min_growth_mb=min_growth_mb, checks=checks)
    except TargetError as exc:
        click.echo(f"dllint probe: {exc}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        click.echo(format_report(report))
    if report.confirmed:
        sys.exit(1)
    sys.exit(2 if any(f.status == ERROR for f in report.findings) else 0)
