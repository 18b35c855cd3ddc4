"""``dllint doctor``: check the machine a DataLoader job runs on.

Each check is a plain function ``check_x(machine, plan) -> Check`` reading the machine only through
a :class:`Machine` object, so tests replace the readers (a fake ``/dev/shm``, a fake rlimit, a fake
cgroup) and see every verdict. torch is imported lazily, only by ``Machine.torch()``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import click

OK, WARN, FAIL = "ok", "warn", "fail"
MiB = 1024**2
GiB = 1024**3

# The order in which checks run and print; explain refers to them by these names.
CHECK_NAMES = (
    "torch",
    "sharing-strategy",
    "nofile",
    "open-fds",
    "shm",
    "container",
    "start-method",
    "cuda",
    "cpus",
    "memory",
)

DOCKER_DEFAULT_SHM = 64 * MiB


class TorchMissing(Exception):
    """torch cannot be imported."""


@dataclass
class Check:
    name: str
    verdict: str  # ok / warn / fail
    message: str
    fix: str = ""
    rules: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Plan:
    """What the user intends to run (from the command line)."""

    num_workers: int | None = None
    prefetch_factor: int = 2


def _fmt_bytes(n: float) -> str:
    if n >= GiB:
        return f"{n / GiB:.1f} GiB"
    if n >= MiB:
        return f"{n / MiB:.0f} MiB"
    return f"{n / 1024:.0f} KiB"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


class Machine:
    """Everything doctor reads about the machine. Tests subclass it or set attributes."""

    platform: str = sys.platform
    python: tuple[int, int] = sys.version_info[:2]
    shm_path: str = "/dev/shm"
    proc: str = "/proc"
    cgroup_root: str = "/sys/fs/cgroup"
    environ: dict[str, str] | os._Environ = os.environ
    pid: int | None = None  # --pid: a running job to inspect (fds, limits, workers, CUDA), else this process

    def _proc(self, *parts: str) -> str:
        return os.path.join(self.proc, str(self.pid) if self.pid else "self", *parts)

    def torch(self):
        try:
            import torch  # lazy on purpose: importing dllint never imports torch
        except ImportError as exc:  # also raised when sys.modules["torch"] is None
            raise TorchMissing(str(exc)) from exc
        return torch

    def statvfs(self, path: str) -> tuple[int, int] | None:
        """(total, free) bytes of a filesystem, None when absent."""
        try:
            st = os.statvfs(path)
        except OSError:
            return None
        return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize

    def rlimit_nofile(self) -> tuple[int, int] | None:
        if self.pid:
            return parse_limits_nofile(self.read(self._proc("limits")) or "")
        try:
            import resource
        except ImportError:  # Windows
            return None
        return resource.getrlimit(resource.RLIMIT_NOFILE)

    def open_fds(self, pid: int | None = None) -> int | None:
        path = os.path.join(self.proc, str(pid), "fd") if pid else self._proc("fd")
        try:
            return len(os.listdir(path))
        except OSError:
            return None

    def children(self) -> list[int]:
        """Child processes of the inspected process (DataLoader workers among them)."""
        out: list[int] = []
        try:
            tasks = os.listdir(self._proc("task"))
        except OSError:
            return out
        for tid in tasks:
            text = self.read(self._proc("task", tid, "children")) or ""
            out.extend(int(x) for x in text.split() if x.isdigit())
        return sorted(set(out))

    def cmdline(self) -> str:
        raw = self.read(self._proc("cmdline")) or ""
        return " ".join(raw.split("\x00")).strip()

    def affinity(self) -> int | None:
        try:
            return len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            return None

    def cpu_count(self) -> int | None:
        return os.cpu_count()

    def read(self, path: str) -> str | None:
        return _read(path)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)


# --------------------------------------------------------------------------- readers


def parse_limits_nofile(text: str) -> tuple[int, int] | None:
    """The soft and hard RLIMIT_NOFILE from a /proc/<pid>/limits text (-1 for unlimited)."""
    for line in text.splitlines():
        if line.startswith("Max open files"):
            parts = line[len("Max open files"):].split()
            if len(parts) >= 2:
                vals = [-1 if p == "unlimited" else int(p) for p in parts[:2] if p == "unlimited" or p.isdigit()]
                if len(vals) == 2:
                    return vals[0], vals[1]
    return None


def cgroup_cpu_limit(m: Machine) -> float | None:
    """CPUs allowed by the cgroup quota (v2 cpu.max, v1 cfs quota/period); None when unlimited."""
    text = m.read(os.path.join(m.cgroup_root, "cpu.max"))
    if text:
        parts = text.split()
        if len(parts) >= 2 and parts[0] != "max":
            try:
                return int(parts[0]) / int(parts[1])
            except (ValueError, ZeroDivisionError):
                return None
        return None
    for sub in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        quota = m.read(os.path.join(m.cgroup_root, sub, "cpu.cfs_quota_us"))
        period = m.read(os.path.join(m.cgroup_root, sub, "cpu.cfs_period_us"))
        if quota and period:
            try:
                q, p = int(quota), int(period)
            except ValueError:
                return None
            return q / p if q > 0 and p > 0 else None
    return None


def cgroup_memory_limit(m: Machine) -> int | None:
    text = m.read(os.path.join(m.cgroup_root, "memory.max"))
    if text is None:
        text = m.read(os.path.join(m.cgroup_root, "memory", "memory.limit_in_bytes"))
    if not text:
        return None
    text = text.strip()
    if text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value < 2**60 else None  # v1 "unlimited" is a huge page-aligned number


def meminfo(m: Machine) -> dict[str, int]:
    out: dict[str, int] = {}
    text = m.read(os.path.join(m.proc, "meminfo")) or ""
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[key.strip()] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
    return out


def container_kind(m: Machine) -> str | None:
    if m.exists("/.dockerenv"):
        return "docker"
    if m.exists("/run/.containerenv"):
        return "podman"
    if m.environ.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    env = m.environ.get("container")
    if env:
        return env
    cg = m.read(os.path.join(m.proc, "1", "cgroup")) or ""
    for marker, kind in (("kubepods", "kubernetes"), ("docker", "docker"), ("containerd", "containerd"),
                         ("lxc", "lxc"), ("libpod", "podman")):
        if marker in cg:
            return kind
    return None


def default_start_method(platform_name: str, python: tuple[int, int]) -> str:
    """The multiprocessing default start method (CPython: forkserver on POSIX but macOS from 3.14)."""
    if platform_name.startswith("win") or platform_name == "darwin":
        return "spawn"
    return "forkserver" if python >= (3, 14) else "fork"


# --------------------------------------------------------------------------- checks


def check_torch(m: Machine, plan: Plan) -> Check:
    torch = m.torch()
    version = str(torch.__version__)
    try:
        major, minor = (int(x) for x in version.split("+")[0].split(".")[:2])
    except ValueError:
        return Check("torch", WARN, f"torch {version}: version not understood")
    if (major, minor) < (1, 9):
        return Check(
            "torch", WARN, f"torch {version} does not reseed numpy in workers (all workers draw the same numbers)",
            fix="upgrade to torch >= 1.9, or seed numpy from torch.initial_seed() in worker_init_fn",
            rules=["DL203"], data={"version": version},
        )
    if major < 2:
        return Check(
            "torch", WARN, f"torch {version}: prefetch_factor must stay 2 with torch < 2.0",
            fix="upgrade torch", rules=["DL304"], data={"version": version},
        )
    return Check("torch", OK, f"torch {version}", data={"version": version})


def check_sharing_strategy(m: Machine, plan: Plan) -> Check:
    mp = m.torch().multiprocessing
    current = mp.get_sharing_strategy()
    available = sorted(mp.get_all_sharing_strategies())
    data = {"current": current, "available": available}
    if current == "file_system" and "file_descriptor" in available:
        return Check(
            "sharing-strategy", WARN,
            f"sharing strategy is file_system (available: {', '.join(available)}): shared memory leaks in "
            "/dev/shm when processes crash",
            fix="keep the default file_descriptor; fix retained batch tensors (DL305) and raise `ulimit -n`",
            rules=["DL302", "DL305"], data=data,
        )
    return Check("sharing-strategy", OK, f"sharing strategy {current} (available: {', '.join(available)})", data=data)


def fds_needed(plan: Plan) -> int:
    """A rough budget: every tensor in flight holds one fd under file_descriptor.

    Assumes 32 tensors per batch, workers x prefetch batches in flight, plus 1024 for the
    process itself (files, sockets, libraries). It is an estimate, said as such.
    """
    workers = plan.num_workers if plan.num_workers is not None else 8
    return 1024 + workers * max(plan.prefetch_factor, 1) * 32


def check_nofile(m: Machine, plan: Plan) -> Check:
    lim = m.rlimit_nofile()
    if lim is None:
        return Check("nofile", OK, "no RLIMIT_NOFILE on this platform")
    soft, hard = lim
    need = fds_needed(plan)
    assumed = "" if plan.num_workers is not None else " (assuming 8 workers; pass --num-workers)"
    inf = getattr(__import__("resource"), "RLIM_INFINITY", -1)

    def fmt(v: int) -> str:
        return "unlimited" if v == inf or v < 0 else str(v)

    data = {"soft": soft, "hard": hard, "needed_estimate": need}
    soft_ok = soft == inf or soft < 0 or soft >= need
    hard_ok = hard == inf or hard < 0 or hard >= need
    who = f"pid {m.pid}: " if m.pid else ""
    text = (f"{who}ulimit -n soft {fmt(soft)}, hard {fmt(hard)}; ~{need} needed for {plan.prefetch_factor} "
            f"prefetch{assumed}")
    if soft_ok:
        return Check("nofile", OK, text, data=data)
    if hard_ok:
        return Check(
            "nofile", WARN, text + ": the soft limit is low ('Too many open files', 'received 0 items of ancdata')",
            fix=f"ulimit -n {fmt(hard) if hard != inf and hard >= 0 else need} before starting the job",
            rules=["DL305"], data=data,
        )
    return Check(
        "nofile", FAIL, text + ": even the hard limit is too low ('Too many open files')",
        fix=f"raise the hard limit (limits.conf nofile, docker --ulimit nofile={need}:{need}); do not keep batch "
        "tensors alive across iterations (DL305)",
        rules=["DL305", "DL302"], data=data,
    )


def check_open_fds(m: Machine, plan: Plan) -> Check:
    n = m.open_fds()
    who = f"pid {m.pid}" if m.pid else "this process"
    if n is None:
        return Check("open-fds", WARN if m.pid else OK, f"open descriptors of {who} not readable (permissions?)")
    lim = m.rlimit_nofile()
    soft = lim[0] if lim else -1
    data: dict[str, Any] = {"pid": m.pid, "open": n, "soft_limit": soft}
    workers = ""
    if m.pid:
        kids = {pid: m.open_fds(pid) for pid in m.children()}
        data["children"] = kids
        data["cmdline"] = m.cmdline()
        if kids:
            workers = f"; {len(kids)} child process(es) (workers?): " + ", ".join(
                f"pid {pid} {fds if fds is not None else '?'} fds" for pid, fds in list(kids.items())[:8])
    if soft > 0 and n > soft * 0.5:
        return Check(
            "open-fds", WARN, f"{who}: {n} descriptors open, {n / soft:.0%} of the soft limit {soft}{workers}",
            fix=f"find what holds them (ls -l /proc/{m.pid or '<pid>'}/fd); batch tensors kept alive across "
                "iterations are the usual cause (DL305)",
            rules=["DL305"], data=data,
        )
    return Check("open-fds", OK, f"{who}: {n} descriptors open" + (f" of {soft}" if soft > 0 else "") + workers,
                 data=data)


def shm_needed(plan: Plan) -> int:
    return 1 * GiB


def check_shm(m: Machine, plan: Plan) -> Check:
    if not m.platform.startswith("linux"):
        return Check("shm", OK, f"no /dev/shm check on {m.platform} (shared memory is not a tmpfs mount there)")
    st = m.statvfs(m.shm_path)
    kind = container_kind(m)
    how = (
        "run the container with --shm-size=8g (or --ipc=host); docker-compose: shm_size: '8gb'; "
        "Kubernetes: mount an emptyDir {medium: Memory} at /dev/shm"
    )
    if st is None:
        return Check("shm", FAIL, f"{m.shm_path} is missing: workers cannot share batches", fix=how)
    total, free = st
    data = {"path": m.shm_path, "size": total, "free": free, "container": kind}
    text = f"{m.shm_path} {_fmt_bytes(total)}, {_fmt_bytes(free)} free"
    if total <= 128 * MiB:
        why = " (Docker's default)" if abs(total - DOCKER_DEFAULT_SHM) <= 4 * MiB else ""
        return Check(
            "shm", FAIL,
            f"{m.shm_path} is {_fmt_bytes(total)}{why}: workers die with 'Bus error' / 'exited unexpectedly' "
            "as soon as batches in flight exceed it",
            fix=how, data=data,
        )
    if free < 256 * MiB or free < total * 0.1:
        return Check(
            "shm", FAIL if free < 64 * MiB else WARN, text + ": almost full (leaked torch_* files? ls -la /dev/shm)",
            fix="remove stale /dev/shm/torch_* files of dead jobs; " + how, rules=["DL302"], data=data,
        )
    if total < shm_needed(plan):
        return Check(
            "shm", WARN, text + ": small for large batches x workers x prefetch",
            fix=how, data=data,
        )
    return Check("shm", OK, text, data=data)


def check_container(m: Machine, plan: Plan) -> Check:
    kind = container_kind(m)
    if kind is None:
        return Check("container", OK, "not in a container", data={"container": None})
    mem = cgroup_memory_limit(m)
    extra = f"; memory limit {_fmt_bytes(mem)}" if mem else ""
    return Check(
        "container", OK, f"running in a container ({kind}){extra}: /dev/shm and memory limits come from its runtime",
        data={"container": kind, "memory_limit": mem},
    )


def check_start_method(m: Machine, plan: Plan) -> Check:
    mp = m.torch().multiprocessing
    default = default_start_method(m.platform, m.python)
    current = mp.get_start_method(allow_none=True)
    try:
        available = list(mp.get_all_start_methods())
    except Exception:  # pragma: no cover - very old torch
        available = []
    effective = current or default
    data = {"default": default, "set": current, "effective": effective, "available": available,
            "platform": m.platform, "python": ".".join(map(str, m.python))}
    pyver = ".".join(map(str, m.python))
    text = (
        f"start method {effective} ({'set by set_start_method' if current else 'not set'}; "
        f"default on {m.platform} Python {pyver} is {default}"
    )
    if default == "fork" and m.platform.startswith("linux"):
        text += ", forkserver from Python 3.14"
    text += ")"
    if current is None and m.platform.startswith("linux") and default == "forkserver":
        return Check(
            "start-method", WARN,
            text + ": datasets, collate_fn and worker_init_fn must be picklable and the entry script needs a main guard",
            fix="pass multiprocessing_context explicitly to each DataLoader (DL307); dllint <path> --select DL103,DL303",
            rules=["DL103", "DL303", "DL307"], data=data,
        )
    return Check("start-method", OK, text, data=data)


def check_cuda(m: Machine, plan: Plan) -> Check:
    torch = m.torch()
    nvml = m.environ.get("PYTORCH_NVML_BASED_CUDA_CHECK")
    built = bool(getattr(torch.backends, "cuda", None) and torch.backends.cuda.is_built())
    initialized = bool(torch.cuda.is_initialized())
    try:
        bad_fork = bool(torch.cuda._is_in_bad_fork())
    except Exception:
        bad_fork = False
    mp = torch.multiprocessing
    effective = mp.get_start_method(allow_none=True) or default_start_method(m.platform, m.python)
    data = {"built": built, "initialized": initialized, "in_bad_fork": bad_fork,
            "PYTORCH_NVML_BASED_CUDA_CHECK": nvml, "start_method": effective}
    if m.pid:
        maps = m.read(m._proc("maps"))
        if maps is not None:
            loaded = "libcuda.so" in maps
            data["driver_loaded_in_pid"] = loaded
            if loaded:
                return Check(
                    "cuda", OK,
                    f"the CUDA driver is loaded in pid {m.pid}: workers it starts by fork cannot use CUDA "
                    "(they must return CPU tensors)", rules=["DL201"], data=data,
                )
            return Check("cuda", OK, f"the CUDA driver is not loaded in pid {m.pid}", data=data)
    if not built:
        return Check("cuda", OK, "torch built without CUDA", data=data)
    nvml_text = f"PYTORCH_NVML_BASED_CUDA_CHECK={nvml}" if nvml else "PYTORCH_NVML_BASED_CUDA_CHECK unset"
    if initialized and effective == "fork":
        return Check(
            "cuda", WARN,
            f"CUDA is initialized in this process and workers start by fork ({nvml_text}): any CUDA call in a "
            "worker fails with 'Cannot re-initialize CUDA in forked subprocess'",
            fix="keep CUDA out of dataset/collate code (DL201, DL102) or use multiprocessing_context='spawn' (DL301)",
            rules=["DL201", "DL102", "DL301"], data=data,
        )
    hint = "" if nvml == "1" else "; torch.cuda.is_available() in the parent poisons later forks unless =1"
    return Check("cuda", OK, f"CUDA built, not initialized in this process ({nvml_text}{hint})", data=data)


def usable_cpus(m: Machine) -> tuple[int | None, float | None, int | None]:
    aff = m.affinity()
    quota = cgroup_cpu_limit(m)
    counts = [c for c in (aff, m.cpu_count()) if c]
    usable = min(counts) if counts else None
    if quota is not None:
        q = max(1, math.floor(quota))
        usable = min(usable, q) if usable else q
    return usable, quota, aff


def check_cpus(m: Machine, plan: Plan) -> Check:
    usable, quota, aff = usable_cpus(m)
    total = m.cpu_count()
    data = {"usable": usable, "affinity": aff, "cgroup_quota": quota, "cpu_count": total,
            "num_workers": plan.num_workers}
    parts = [f"{usable} usable CPUs"]
    if aff is not None:
        parts.append(f"affinity {aff}")
    if quota is not None:
        parts.append(f"cgroup quota {quota:g}")
    parts.append(f"os.cpu_count() {total}")
    text = ", ".join(parts)
    if usable is None:
        return Check("cpus", OK, "CPU count not readable", data=data)
    if plan.num_workers is not None:
        if plan.num_workers > 4 * usable:
            return Check(
                "cpus", FAIL,
                f"{text}: --num-workers {plan.num_workers} is more than 4x the usable CPUs (torch warns the loader "
                "may run slow or even freeze)",
                fix=f"use num_workers <= {max(1, usable - 1)} per process (and divide by the ranks per machine)",
                rules=["DL308"], data=data,
            )
        if plan.num_workers > usable:
            return Check(
                "cpus", WARN, f"{text}: --num-workers {plan.num_workers} oversubscribes them (torch warns and may slow down)",
                fix=f"use num_workers <= {max(1, usable - 1)} per process",
                rules=["DL308"], data=data,
            )
    if total and total > usable:
        return Check(
            "cpus", WARN, f"{text}: os.cpu_count() overstates the CPUs this process may use",
            fix="size num_workers from len(os.sched_getaffinity(0)) / the quota, not os.cpu_count() (DL308)",
            rules=["DL308"], data=data,
        )
    suffix = f"; --num-workers {plan.num_workers} fits" if plan.num_workers is not None else ""
    return Check("cpus", OK, text + suffix, data=data)


def check_memory(m: Machine, plan: Plan) -> Check:
    info = meminfo(m)
    total, avail = info.get("MemTotal"), info.get("MemAvailable")
    swap_total, swap_free = info.get("SwapTotal", 0), info.get("SwapFree", 0)
    limit = cgroup_memory_limit(m)
    if total is None or avail is None:
        return Check("memory", OK, "memory not readable here")
    if limit is not None and limit < total:
        total = limit
        avail = min(avail, limit)
    data = {"total": total, "available": avail, "swap_total": swap_total, "swap_free": swap_free,
            "cgroup_limit": limit}
    text = (f"{_fmt_bytes(total)} memory{' (cgroup limit)' if limit is not None and limit == total else ''}, "
            f"{_fmt_bytes(avail)} available, "
            + (f"swap {_fmt_bytes(swap_total)} ({_fmt_bytes(swap_free)} free)" if swap_total else "no swap"))
    fix = ("every worker duplicates the Python objects it reads (DL101): keep big lists/dicts as numpy arrays; "
           "dllint probe module:factory measures it")
    if avail < 1 * GiB:
        return Check("memory", FAIL, text + ": workers will be OOM-killed ('killed by signal: Killed')",
                     fix=fix, rules=["DL101"], data=data)
    if avail < 4 * GiB or avail < total * 0.1:
        return Check("memory", WARN, text + ": little headroom for workers", fix=fix, rules=["DL101"], data=data)
    return Check("memory", OK, text, data=data)


# The command builds its Machine through this name, so tests can hand it a fake one.
make_machine: Callable[[], Machine] = Machine

CHECKS: dict[str, Callable[[Machine, Plan], Check]] = {
    "torch": check_torch,
    "sharing-strategy": check_sharing_strategy,
    "nofile": check_nofile,
    "open-fds": check_open_fds,
    "shm": check_shm,
    "container": check_container,
    "start-method": check_start_method,
    "cuda": check_cuda,
    "cpus": check_cpus,
    "memory": check_memory,
}
assert tuple(CHECKS) == CHECK_NAMES


def run_checks(machine: Machine | None = None, plan: Plan | None = None,
               only: list[str] | None = None) -> list[Check]:
    """Run the checks; raises TorchMissing when torch cannot be imported."""
    machine = machine or Machine()
    plan = plan or Plan()
    machine.torch()  # fail early and clearly
    results = []
    for name, fn in CHECKS.items():
        if only and name not in only:
            continue
        try:
            results.append(fn(machine, plan))
        except TorchMissing:
            raise
        except Exception as exc:  # a check that cannot run says so; it does not hide the others
            results.append(Check(name, WARN, f"check could not run: {type(exc).__name__}: {exc}"))
    return results


def summarize(checks: list[Check]) -> dict[str, int]:
    return {v: sum(c.verdict == v for c in checks) for v in (OK, WARN, FAIL)}


def format_checks(checks: list[Check]) -> str:
    lines = []
    for c in checks:
        lines.append(f"{c.verdict:<4} {c.name:<16} {c.message}")
        if c.fix and c.verdict != OK:
            rules = f" [{', '.join(c.rules)}]" if c.rules else ""
            lines.append(f"{'':4} {'':<16} fix: {c.fix}{rules}")
    s = summarize(checks)
    lines.append(f"{s[OK]} ok, {s[WARN]} warn, {s[FAIL]} fail" + (" -- fix the failures above" if s[FAIL] else ""))
    return "\n".join(lines)


@click.command("doctor", short_help="Check this machine for DataLoader trouble (shared memory, fds).")
@click.option("--num-workers", "-n", type=click.IntRange(min=0), default=None,
              help="The num_workers you plan to use (checked against CPUs and the fd limit).")
@click.option("--prefetch-factor", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@click.option("--check", "only", multiple=True, type=click.Choice(CHECK_NAMES), help="Run only these checks.")
@click.option("--pid", type=click.IntRange(min=1), default=None,
              help="Inspect a running job (Linux): its fd limits and open fds, its worker processes, "
                   "whether it loaded the CUDA driver.")
def doctor(num_workers: int | None, prefetch_factor: int, as_json: bool, only: tuple[str, ...],
           pid: int | None) -> None:
    """Check this machine for DataLoader trouble: shared memory, fd limits, start method, CPUs, memory.

    Exit status: 0 when nothing fails, 1 when a check fails, 2 when torch is missing or --pid is not running.
    """
    plan = Plan(num_workers=num_workers, prefetch_factor=prefetch_factor)
    machine = make_machine()
    if pid is not None:
        if not os.path.exists(os.path.join(machine.proc, str(pid))):
            click.echo(f"dllint doctor: no process {pid} (or no /proc here)", err=True)
            sys.exit(2)
        machine.pid = pid
    try:
        checks = run_checks(machine, plan, list(only) or None)
    except TorchMissing as exc:
        click.echo(f"dllint doctor needs torch, which cannot be imported here ({exc}); "
                   "install torch in this environment (pip install torch)", err=True)
        sys.exit(2)
    if as_json:
        payload = {
            "checks": [asdict(c) for c in checks],
            "summary": summarize(checks),
            "machine": {"platform": sys.platform, "python": platform.python_version()},
        }
        click.echo(json.dumps(payload, indent=2, default=str))
    else:
        click.echo(format_checks(checks))
    sys.exit(1 if any(c.verdict == FAIL for c in checks) else 0)
