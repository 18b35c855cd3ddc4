"""``dllint explain "<error text>"``: from an error message or a whole traceback to its likely causes.

The logic is a table of causes, each with weighted signatures (regular expressions written so that
pids, paths, numbers and class names may vary). ``explain_text`` scores every cause against the
text and returns them ranked; the click command only formats the result. Nothing here imports
torch: explain must work on a machine where the job did not even start.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass, field

import click

# Rule codes and names, as in ../shared/PITFALLS.md section 1 (shared with doctor and probe).
RULE_NAMES: dict[str, str] = {
    "DL101": "copy-on-read-container",
    "DL102": "cuda-state-on-dataset",
    "DL103": "unpicklable-worker-state",
    "DL104": "handle-opened-in-init",
    "DL105": "rng-object-copied-to-workers",
    "DL106": "main-module-worker-code",
    "DL201": "cuda-in-worker",
    "DL202": "unsharded-iterable-dataset",
    "DL203": "constant-worker-seed",
    "DL204": "opencv-threads-in-fork-workers",
    "DL301": "missing-multiprocessing-context",
    "DL302": "file-system-sharing-strategy",
    "DL303": "missing-main-guard",
    "DL304": "worker-only-args-without-workers",
    "DL305": "loader-tensors-retained",
    "DL306": "stale-state-persistent-workers",
    "DL307": "implicit-start-method",
    "DL308": "workers-oversubscribe-cpus",
}


@dataclass(frozen=True)
class Signature:
    pattern: str
    weight: float
    flags: int = re.IGNORECASE

    def compiled(self) -> re.Pattern[str]:
        return _compile(self.pattern, self.flags)


_CACHE: dict[tuple[str, int], re.Pattern[str]] = {}


def _compile(pattern: str, flags: int) -> re.Pattern[str]:
    key = (pattern, flags)
    if key not in _CACHE:
        _CACHE[key] = re.compile(pattern, flags)
    return _CACHE[key]


@dataclass(frozen=True)
class Cause:
    id: str
    title: str
    why: str
    rules: tuple[str, ...]
    doctor: tuple[str, ...]
    commands: tuple[str, ...]
    signatures: tuple[Signature, ...]


@dataclass
class RankedCause:
    id: str
    title: str
    score: float
    why: str
    rules: list[dict[str, str]]
    doctor_checks: list[str]
    commands: list[str]
    matched: list[str] = field(default_factory=list)


@dataclass
class Explanation:
    causes: list[RankedCause]
    details: dict[str, str]  # facts pulled from the text: worker pids, the inner exception, ...

    @property
    def top(self) -> RankedCause | None:
        return self.causes[0] if self.causes else None

    def to_dict(self) -> dict:
        return {"causes": [asdict(c) for c in self.causes], "details": self.details}


# A pid list as torch prints it: "pid 123", "pid(s) 1, 2, 3".
_PIDS = r"pid(?:\(s\))?\s*[\d,\s]+"
_WORKER_EXITED = r"DataLoader worker \(" + _PIDS + r"\) exited unexpectedly"
_KILLED_BY = r"DataLoader worker (?:\(pid \d+\) )?is killed by signal:?\s*"

CAUSES: tuple[Cause, ...] = (
    Cause(
        id="shm-too-small",
        title="Shared memory (/dev/shm) too small or full: workers die passing batches to the main process",
        why=(
            "Workers hand every batch to the main process through /dev/shm. Docker gives containers a "
            "64 MB /dev/shm by default; a batch that does not fit raises SIGBUS in the worker "
            "('Bus error') and the main process only sees that the worker exited."
        ),
        rules=(),  # a machine's limit, not a code pattern: `dllint doctor --check shm` measures it
        doctor=("shm", "container"),
        commands=(
            "dllint doctor",
            "df -h /dev/shm",
            "docker run --shm-size=8g ... (or --ipc=host); docker-compose: shm_size: '8gb'; "
            "Kubernetes: an emptyDir {medium: Memory} volume mounted at /dev/shm",
        ),
        signatures=(
            Signature(r"insufficient shared memory", 10),
            Signature(r"Unexpected bus error encountered in worker", 10),
            Signature(_KILLED_BY + r"Bus error", 10),
            Signature(r"\bBus error\b", 6),
            Signature(r"\bSIGBUS\b", 6),
            Signature(r"unable to write to file\s*</torch_", 9),
            Signature(r"No space left on device.*(?:/dev/shm|torch_)|(?:/dev/shm|torch_).*No space left", 8),
            Signature(r"unable to (?:open|mmap|allocate) shared memory", 10),
            Signature(_WORKER_EXITED, 3.0),
        ),
    ),
    Cause(
        id="oom-killed",
        title="Out of host memory: the kernel OOM killer ended a worker (often copy-on-read growth)",
        why=(
            "'Killed' is SIGKILL, almost always the OOM killer. Each forked worker slowly turns the "
            "parent's Python objects it reads (lists/dicts of paths, annotations, DataFrames with object "
            "columns) into private copies, because reading an object writes its refcount: memory grows "
            "with every batch until the machine or the container limit is hit. Too many workers "
            "multiplies it."
        ),
        rules=("DL101", "DL308"),
        doctor=("memory", "cpus"),
        commands=(
            "dllint <path> --select DL101",
            "dllint probe module:factory --workers 2 --seconds 30",
            "dmesg -T | grep -i -E 'killed process|out of memory'",
            "dllint doctor --num-workers N",
        ),
        signatures=(
            Signature(_KILLED_BY + r"Killed", 10),
            Signature(r"(?<!CUDA )\bout of memory\b", 5),
            Signature(r"\bOOM[- ]?kill", 7),
            Signature(r"Killed process \d+", 7),
            Signature(r"^\s*MemoryError\b", 6, re.IGNORECASE | re.MULTILINE),
            Signature(r"Cannot allocate memory", 5),
            Signature(r"\bSIGKILL\b", 4),
            Signature(_WORKER_EXITED, 2.5),
        ),
    ),
    Cause(
        id="native-crash",
        title="A native library crashed or deadlocked in a forked worker (file handles, OpenCV threads)",
        why=(
            "A worker died with SIGSEGV/SIGABRT, or hung. Under fork, workers inherit open handles "
            "(h5py, lmdb, sqlite, zip files) opened in the Dataset's __init__ and the thread pools of "
            "libraries such as OpenCV/OpenMP, which are not fork-safe."
        ),
        rules=("DL104", "DL204", "DL301"),
        doctor=("start-method",),
        commands=(
            "dllint <path> --select DL104,DL204,DL301",
            "rerun with num_workers=0 to see whether the crash is in the dataset code itself",
            "try DataLoader(..., multiprocessing_context='spawn') or cv2.setNumThreads(0)",
        ),
        signatures=(
            Signature(_KILLED_BY + r"Segmentation fault", 10),
            Signature(r"Unexpected segmentation fault encountered in worker", 10),
            Signature(r"Segmentation fault|\bSIGSEGV\b|segfault", 7),
            Signature(_KILLED_BY + r"Aborted", 8),
            Signature(r"\bSIGABRT\b|core dumped", 4),
            Signature(r"MDB_BAD_RSLOT|MDB_READERS_FULL", 9),
            Signature(r"h5py.*(?:OSError|errno)|Can't (?:read|synchronously read) data", 5),
            Signature(r"Bad CRC-32|CRC check failed", 6),
            # a described symptom rather than an error text
            Signature(r"\b(?:hangs?|hanging|hung|stuck|freez(?:e|es|ing)|deadlock(?:s|ed)?)\b", 4),
            Signature(_WORKER_EXITED, 2.0),
        ),
    ),
    Cause(
        id="cuda-in-forked-worker",
        title="CUDA used in a worker started by fork after the parent touched CUDA",
        why=(
            "CUDA cannot be re-initialized in a forked child. The worker (dataset __getitem__, transforms, "
            "collate_fn) calls .cuda()/.to('cuda') or reads CUDA tensors kept on the dataset, and the parent "
            "already initialized CUDA (torch.cuda.is_available() and pin_memory=True are enough)."
        ),
        rules=("DL201", "DL102", "DL301"),
        doctor=("start-method", "cuda"),
        commands=(
            "dllint <path> --select DL201,DL102,DL301",
            "return CPU tensors from the dataset and move batches with .to(device, non_blocking=True) "
            "in the training loop; or DataLoader(..., multiprocessing_context='spawn')",
            "dllint doctor",
        ),
        signatures=(
            Signature(r"Cannot re-initialize CUDA in forked subprocess", 12),
            Signature(r"CUDA error: initialization error", 9),
            Signature(r"cuda runtime error \(3\)", 9),
            Signature(r"To use CUDA with multiprocessing, you must use the 'spawn' start method", 8),
        ),
    ),
    Cause(
        id="cuda-tensors-from-workers",
        title="Workers return CUDA tensors, which pin_memory cannot pin",
        why=(
            "pin_memory=True only pins dense CPU tensors. A dataset that returns CUDA tensors "
            "(created in workers, or kept on the dataset) breaks pinning, and creates a CUDA context "
            "in every worker."
        ),
        rules=("DL201", "DL102"),
        doctor=("cuda",),
        commands=(
            "dllint <path> --select DL201,DL102",
            "return CPU tensors from __getitem__; move the batch to the GPU in the training loop",
        ),
        signatures=(
            Signature(r"cannot pin 'torch\.cuda\.\w+'", 12),
            Signature(r"only dense CPU tensors can be pinned", 10),
        ),
    ),
    Cause(
        id="unpicklable-worker-state",
        title="Dataset, collate_fn or worker_init_fn cannot be pickled for spawn/forkserver workers",
        why=(
            "With spawn or forkserver (macOS, Windows, and Linux from Python 3.14) the dataset, collate_fn "
            "and worker_init_fn are pickled into every worker. Lambdas, nested functions, open files, "
            "locks, generators, h5py/lmdb handles cannot be pickled."
        ),
        rules=("DL103", "DL104", "DL307"),
        doctor=("start-method",),
        commands=(
            "dllint <path> --select DL103,DL104",
            "dllint probe module:factory   (names the attribute that fails to pickle)",
            "replace lambdas/nested functions with module-level functions or functools.partial; "
            "open handles lazily in the worker",
        ),
        signatures=(
            Signature(r"Can't pickle local object '[^']*'", 12),
            Signature(r"Can't pickle local object <(?:function|class) ", 12),
            Signature(r"Can't pickle <(?:function|class) [^>]*>", 11),
            Signature(r"cannot pickle '[^']+' object", 11),
            Signature(r"Can't pickle \S+", 8),
            Signature(r"Got pickle error when attempting to start a worker", 11),
            Signature(r"objects cannot be pickled", 9),
            Signature(r"PicklingError", 6),
            Signature(r"unable to resize file <filename not specified> to the right size", 8),
            Signature(r"Can't get local object '[^']*'", 9),
        ),
    ),
    Cause(
        id="class-not-importable",
        title="A worker cannot import the Dataset/collate class: it is defined in __main__ only (notebook, function)",
        why=(
            "Spawn/forkserver workers unpickle the dataset by importing the module that defines its class. "
            "Classes and functions defined in a notebook, an interactive session or inside a function "
            "do not exist in the worker's __main__."
        ),
        rules=("DL106", "DL103"),
        doctor=("start-method",),
        commands=(
            "move the Dataset/collate_fn/worker_init_fn definitions to an importable .py module",
            "dllint <path> --select DL106,DL103",
        ),
        signatures=(
            Signature(r"Can't get attribute '[^']+' on <module '__main__'", 12),
            Signature(r"Can't get attribute '[^']+' on <module", 8),
            Signature(r"No module named '__mp_main__'", 6),
        ),
    ),
    Cause(
        id="too-many-open-files",
        title="File descriptors exhausted: batch tensors are retained while shared by fd",
        why=(
            "With the default file_descriptor sharing strategy every tensor that arrives from a worker "
            "keeps a shared-memory fd open for as long as it lives. Keeping batch tensors (or .numpy() "
            "views of them) in a list across iterations runs out of fds. Fix the retention first "
            "(.clone(), .item(), .tolist()), then raise `ulimit -n`; switching to the file_system "
            "strategy leaks shared memory when processes crash."
        ),
        rules=("DL305", "DL302"),
        doctor=("nofile", "open-fds", "sharing-strategy"),
        commands=(
            "dllint <path> --select DL305,DL302",
            "ulimit -n   (soft) and ulimit -Hn (hard); raise with: ulimit -n <hard>",
            "dllint doctor --num-workers N",
        ),
        signatures=(
            Signature(r"Too many open files", 12),
            Signature(r"received 0 items of ancdata", 12),
            Signature(r"\[Errno 24\]", 10),
            Signature(r"Communication with the workers is no longer possible", 8),
        ),
    ),
    Cause(
        id="shm-leak-file-system",
        title="Leaked shared-memory files from the file_system sharing strategy",
        why=(
            "The file_system strategy names shared memory by files under /dev/shm (torch_*). When processes "
            "crash or are killed, or systemd's RemoveIPC removes them, they are left behind or vanish early."
        ),
        rules=("DL302",),
        doctor=("sharing-strategy", "shm"),
        commands=(
            "ls -la /dev/shm | grep torch_",
            "dllint <path> --select DL302,DL305",
        ),
        signatures=(
            Signature(r"could not unlink the shared memory file", 12),
            Signature(r"Couldn't open shared file mapping", 8),
        ),
    ),
    Cause(
        id="missing-main-guard",
        title="The entry script starts workers at import time (no `if __name__ == \"__main__\":`)",
        why=(
            "spawn/forkserver workers re-import the main module. Without the main guard, the import "
            "reaches the loop over the DataLoader again and tries to start workers from a worker."
        ),
        rules=("DL303", "DL307"),
        doctor=("start-method",),
        commands=(
            "dllint <path> --select DL303",
            "wrap the training code in def main(): ... and call it under if __name__ == '__main__':",
        ),
        signatures=(
            Signature(r"An attempt has been made to start a new process before\s+the\s+current process has finished its bootstrapping phase", 14),
            Signature(r"bootstrapping phase", 8),
            Signature(r"proper idiom in the main module", 8),
            Signature(r"freeze_support\(\)", 4),
        ),
    ),
    Cause(
        id="worker-only-args",
        title="A worker-only DataLoader argument is passed with num_workers=0",
        why=(
            "prefetch_factor, persistent_workers=True and multiprocessing_context require num_workers > 0; "
            "code that reads num_workers from a config crashes when it is set to 0."
        ),
        rules=("DL304",),
        doctor=(),
        commands=(
            "dllint <path> --select DL304 --fix",
            "pass prefetch_factor=P if num_workers > 0 else None, persistent_workers=PW and num_workers > 0",
        ),
        signatures=(
            Signature(r"prefetch_factor option could only be specified in multiprocessing", 14),
            Signature(r"persistent_workers option needs num_workers > 0", 14),
            Signature(r"multiprocessing_context can only be used with\s+multi-process loading", 14),
            Signature(r"let num_workers > 0 to enable multiprocessing", 8),
            Signature(r"(?:timeout|prefetch_factor|num_workers) option should be non-negative", 10),
        ),
    ),
    Cause(
        id="loader-timeout",
        title="DataLoader timeout: a worker did not deliver a batch in time (slow I/O or a hung worker)",
        why=(
            "Raised when timeout= is set and no batch arrives in time. Either loading is genuinely slow "
            "(network storage, huge items: raise timeout), or a worker is deadlocked, classically by "
            "OpenCV/OpenMP thread pools or shared handles inherited through fork."
        ),
        rules=("DL204", "DL104"),
        doctor=("cpus", "start-method"),
        commands=(
            "py-spy dump --pid <worker pid>   (see where the worker hangs)",
            "dllint <path> --select DL204,DL104",
            "rerun with num_workers=0 and time one batch",
        ),
        signatures=(
            Signature(r"DataLoader timed out after \d+(?:\.\d+)? seconds", 12),
        ),
    ),
    Cause(
        id="start-method-conflict",
        title="Start method set twice, or fork in a multi-threaded process",
        why=(
            "set_start_method() can only be called once per process (use force=True, or pass "
            "multiprocessing_context to the DataLoader); Python >= 3.12 warns when a multi-threaded "
            "process forks, which can deadlock workers."
        ),
        rules=("DL307", "DL204"),
        doctor=("start-method",),
        commands=("dllint <path> --select DL307", "pass multiprocessing_context= to each DataLoader"),
        signatures=(
            Signature(r"context has already been set", 12),
            Signature(r"is multi-threaded, use of fork\(\) may lead to deadlocks", 10),
        ),
    ),
    Cause(
        id="too-many-workers",
        title="More workers than usable CPUs",
        why=(
            "torch compares num_workers with len(os.sched_getaffinity(0)); os.cpu_count() ignores cpusets, "
            "container CPU quotas and the number of ranks per machine."
        ),
        rules=("DL308",),
        doctor=("cpus",),
        commands=("dllint doctor --num-workers N", "dllint <path> --select DL308"),
        signatures=(
            Signature(r"This DataLoader will create \d+ worker processes in total", 12),
            Signature(r"excessive worker creation might get DataLoader running slow or even freeze", 10),
        ),
    ),
    Cause(
        id="worker-startup-error",
        title="A worker exited with an error code before it could report: its start-up failed",
        why=(
            "The worker ended with a non-zero exit code, not a signal: a Python error while the worker "
            "started, typically unpickling the dataset/collate_fn in a spawn/forkserver worker (a class "
            "defined in __main__ or a notebook, an import that fails in the child). The worker printed "
            "the real error above this one."
        ),
        rules=("DL106", "DL103", "DL303"),
        doctor=("start-method",),
        commands=(
            "read the worker's own traceback printed before this error",
            "rerun with num_workers=0",
            "dllint <path> --select DL106,DL103,DL303",
        ),
        signatures=(Signature(r"exited unexpectedly with exit code \d+", 5),),
    ),
    Cause(
        id="error-in-dataset-code",
        title="An exception raised by your own dataset/transform/collate code inside a worker",
        why=(
            "torch re-raises in the main process what a worker raised ('Caught ... in DataLoader worker "
            "process N'); the original traceback below it points at the dataset code."
        ),
        rules=(),
        doctor=(),
        commands=("rerun with num_workers=0 to debug the dataset code in the main process",),
        signatures=(Signature(r"Caught \w+ in DataLoader worker process \d+", 2.0),),
    ),
    Cause(
        id="worker-died-unknown",
        title="A worker died without a Python error (cause hidden: rerun to see it)",
        why=(
            "The main process only learns that a worker disappeared. The real cause (shared memory, "
            "out-of-memory kill, native crash) is printed earlier in the log or in dmesg; with "
            "num_workers=0 the error surfaces in the main process."
        ),
        rules=("DL101", "DL104"),
        doctor=("shm", "memory"),
        commands=(
            "rerun with num_workers=0",
            "dmesg -T | tail -50",
            "dllint doctor",
        ),
        signatures=(Signature(_WORKER_EXITED, 1.5), Signature(r"Pin memory thread exited unexpectedly", 3)),
    ),
)

_INNER = re.compile(r"Caught (\w+) in DataLoader worker process (\d+)")
_PID_LIST = re.compile(r"DataLoader worker \(pid(?:\(s\))?\s*([\d,\s]+)\)")
_FINAL_EXC = re.compile(r"^(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Warning|Interrupt)):\s*(.*)$", re.MULTILINE)
_PICKLE_OBJ = re.compile(
    r"(?:Can't pickle local object|Can't get local object|Can't get attribute|cannot pickle) "
    r"(?:'([^']+)'|<(?:function|class) (\S+))",
    re.IGNORECASE,
)


def _details(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    m = _PID_LIST.search(text)
    if m:
        pids = [p for p in re.split(r"[,\s]+", m.group(1)) if p]
        out["worker_pids"] = ", ".join(pids)
    m = _INNER.search(text)
    if m:
        out["worker_exception"] = m.group(1)
        out["worker_id"] = m.group(2)
    finals = _FINAL_EXC.findall(text)
    if finals:
        name, msg = finals[-1]
        out["final_exception"] = f"{name}: {msg.strip()}"[:300]
    m = _PICKLE_OBJ.search(text)
    if m:
        out["object"] = re.sub(r"\s+", "", m.group(1) or m.group(2))
    # Python >= 3.14 notes which attribute failed: "when serializing dict item 'transform'".
    items = re.findall(r"when serializing dict item '([^']+)'", text)
    if items:
        out["attribute"] = ".".join(reversed(items))
    m = re.search(r"will create (\d+) worker processes", text)
    if m:
        out["num_workers"] = m.group(1)
    if re.search(r"popen_spawn|spawn\.py|spawn_main", text):
        out["start_method"] = "spawn"
    elif re.search(r"popen_forkserver|forkserver\.py", text):
        out["start_method"] = "forkserver"
    elif re.search(r"popen_fork\.py", text):
        out["start_method"] = "fork"
    return out


def _last_lines_bonus(text: str, pattern: re.Pattern[str]) -> float:
    """Matches in the final exception (the last lines of a traceback) count a little more."""
    tail = "\n".join(text.strip().splitlines()[-3:])
    return 0.5 if pattern.search(tail) else 0.0


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Prefixes that launchers and renderers put on every line: torchrun "[rank1]:", "[default0]:",
# e-mail/markdown quoting "> ", rich's box-drawing borders.
_LINE_PREFIX = re.compile(r"^\s*(?:\[(?:rank|default)\d+\]:\s?|rank\d+:\s|>\s?)+")
_BOX = re.compile(r"[\u2500-\u257f]")


def normalize(text: str) -> str:
    """Undo what terminals, launchers and copy-paste do to an error text."""
    text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    if "\n" not in text and "\\n" in text:  # a log pasted as an escaped string
        text = text.replace("\\n", "\n").replace("\\'", "'")
    text = _ANSI.sub("", text)
    lines = []
    for line in text.split("\n"):
        line = _BOX.sub(" ", _LINE_PREFIX.sub("", line))
        lines.append(re.sub(r"[ \t]+", " ", line).rstrip())
    return "\n".join(lines)


def explain_text(text: str) -> Explanation:
    """Rank the known causes for an error text (one line or a whole log)."""
    norm = normalize(text)
    flat = re.sub(r"\s+", " ", norm)
    ranked: list[RankedCause] = []
    for cause in CAUSES:
        score = 0.0
        best = 0.0
        matched: list[str] = []
        for sig in cause.signatures:
            pat = sig.compiled()
            m = pat.search(norm) or pat.search(flat)
            if not m:
                continue
            best = max(best, sig.weight)
            score += sig.weight
            matched.append(m.group(0).strip()[:120])
            score += _last_lines_bonus(norm, pat)
        if not matched:
            continue
        # The strongest signature decides; further ones only break ties (a log that repeats
        # a generic line must not outrank one specific message).
        final = best + min(score - best, best) * 0.1
        ranked.append(
            RankedCause(
                id=cause.id,
                title=cause.title,
                score=round(final, 2),
                why=cause.why,
                rules=[{"code": c, "name": RULE_NAMES[c]} for c in cause.rules],
                doctor_checks=list(cause.doctor),
                commands=list(cause.commands),
                matched=matched,
            )
        )
    order = {c.id: i for i, c in enumerate(CAUSES)}
    ranked.sort(key=lambda c: (-c.score, order[c.id]))
    details = _details(norm)
    if "num_workers" in details:  # make the suggested commands concrete
        for c in ranked:
            c.commands = [cmd.replace("--num-workers N", f"--num-workers {details['num_workers']}") for cmd in c.commands]
    if "worker_exception" in details and ranked and ranked[0].id == "error-in-dataset-code":
        ranked[0].why += f" Here the worker raised {details['worker_exception']}."
    return Explanation(causes=ranked, details=details)


def format_explanation(exp: Explanation, limit: int = 5) -> str:
    if not exp.causes:
        return (
            "no known DataLoader failure recognized in this text.\n"
            "next: rerun with num_workers=0 to see the error in the main process; dllint doctor; dllint <path>"
        )
    lines: list[str] = []
    for i, c in enumerate(exp.causes[:limit], 1):
        rules = ", ".join(f"{r['code']} {r['name']}" for r in c.rules) or "-"
        lines.append(f"{i}. {c.title}  [score {c.score:g}]")
        lines.append(f"   why:     {c.why}")
        lines.append(f"   matched: {'; '.join(repr(m) for m in c.matched[:3])}")
        lines.append(f"   rules:   {rules}")
        if c.doctor_checks:
            checks = " ".join(f"--check {name}" for name in c.doctor_checks)
            lines.append(f"   doctor:  {', '.join(c.doctor_checks)}  (dllint doctor {checks})")
        for cmd in c.commands:
            lines.append(f"   next:    {cmd}")
    if exp.details:
        lines.append("facts: " + "; ".join(f"{k}={v}" for k, v in exp.details.items()))
    more = len(exp.causes) - limit
    if more > 0:
        lines.append(f"({more} less likely cause(s) not shown; use --all)")
    return "\n".join(lines)


@click.command("explain", short_help="Explain a DataLoader error message or traceback.")
@click.argument("text", required=False)
@click.option("--file", "-f", "path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Read the error text (a log file) from PATH.")
@click.option("--json", "as_json", is_flag=True, help="Print the ranked causes as JSON.")
@click.option("--all", "show_all", is_flag=True, help="Show every matching cause, not only the top 5.")
def explain(text: str | None, path: str | None, as_json: bool, show_all: bool) -> None:
    """Explain a DataLoader error: paste the message or the whole traceback (argument, --file or stdin).

    Exit status: 0 when a known cause was recognized, 1 when none was, 2 when no text was given.
    """
    if path is not None:
        if text is not None:
            raise click.UsageError("give the error text either as an argument or with --file, not both")
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    if text is None or text == "-":
        stream = sys.stdin  # click.get_text_stream is deprecated in current click
        if text is None and stream.isatty():
            raise click.UsageError('give the error text as an argument or on standard input: dllint explain "<error>"')
        text = stream.read()
    if not text.strip():
        click.echo("dllint explain: empty error text", err=True)
        sys.exit(2)
    exp = explain_text(text)
    if as_json:
        click.echo(json.dumps(exp.to_dict(), indent=2))
    else:
        click.echo(format_explanation(exp, limit=len(exp.causes) if show_all else 5))
    sys.exit(0 if exp.causes else 1)
