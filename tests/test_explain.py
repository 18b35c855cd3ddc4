"""dllint explain: realistic error texts must rank the right cause first."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dllint.explain import CAUSES, RULE_NAMES, explain, explain_text

DATA = Path(__file__).parent / "data" / "explain"
ROOT = Path(__file__).resolve().parents[1]

# Whole tracebacks (as users paste them in issue threads) -> expected top cause and a rule it names.
TRACEBACKS = [
    ("cuda_fork.txt", "cuda-in-forked-worker", "DL201"),
    ("cuda_init_error.txt", "cuda-in-forked-worker", "DL201"),
    ("shm_bus.txt", "shm-too-small", None),  # a machine limit: no rule, `dllint doctor --check shm`
    ("bus_plain.txt", "shm-too-small", None),
    ("exited.txt", "shm-too-small", None),
    ("oom_killed.txt", "oom-killed", "DL101"),
    ("segfault.txt", "native-crash", "DL104"),
    ("too_many_files.txt", "too-many-open-files", "DL305"),
    ("ancdata.txt", "too-many-open-files", "DL305"),
    ("pickle_lambda.txt", "unpicklable-worker-state", "DL103"),
    ("pickle_py314.txt", "unpicklable-worker-state", "DL103"),
    ("bootstrap.txt", "missing-main-guard", "DL303"),
    ("prefetch.txt", "worker-only-args", "DL304"),
    ("persistent.txt", "worker-only-args", "DL304"),
    ("timeout.txt", "loader-timeout", "DL204"),
    ("main_attr.txt", "class-not-importable", "DL103"),
    # the same messages as they reach us from launchers, terminals and issue trackers
    ("ddp_bootstrap.txt", "missing-main-guard", "DL303"),  # torchrun "[rank0]:" prefixes
    ("wrapped_lambda.txt", "unpicklable-worker-state", "DL103"),  # quoted, hard-wrapped Windows log
    ("py314_notes.txt", "unpicklable-worker-state", "DL103"),  # Python 3.14 wording and notes
    ("rich_exited.txt", "shm-too-small", None),  # rich traceback boxes
    ("old_killed.txt", "oom-killed", "DL101"),
    ("escaped_killed.txt", "oom-killed", "DL101"),  # pasted as an escaped string, no pid (old torch)
]


# Captured from torch 2.13.0 on Linux by tests/data/explain/make_errors.py (raw stderr, NUL bytes included).
REAL = [
    ("real_kill.txt", "oom-killed"),
    ("real_segv.txt", "native-crash"),
    ("real_bus.txt", "shm-too-small"),
    ("real_bigshm.txt", "shm-too-small"),  # a 64 MiB /dev/shm and 16 MB batch tensors
    ("real_pickle.txt", "unpicklable-worker-state"),
    ("real_sleep.txt", "loader-timeout"),
    ("real_keyerror.txt", "error-in-dataset-code"),
    ("real_prefetch.txt", "worker-only-args"),
    ("real_persistent.txt", "worker-only-args"),
    ("real_fds.txt", "too-many-open-files"),
    ("real_bootstrap.txt", "missing-main-guard"),
    ("real_mainattr.txt", "class-not-importable"),
]
TRACEBACKS += [(name, cause, None) for name, cause in REAL]


@pytest.mark.parametrize("name,cause,rule", TRACEBACKS)
def test_traceback_ranks_right_cause_first(name: str, cause: str, rule: str) -> None:
    exp = explain_text((DATA / name).read_text())
    assert exp.top is not None
    assert exp.top.id == cause, [(c.id, c.score) for c in exp.causes]
    if rule is not None:
        assert rule in [r["code"] for r in exp.top.rules]
    # The top cause clearly beats the runner-up unless the text itself is generic.
    if len(exp.causes) > 1 and name not in ("exited.txt", "rich_exited.txt"):
        assert exp.top.score >= 2 * exp.causes[1].score


# Every message of PITFALLS.md section 3, as one line, with pids / numbers / names that vary.
ONE_LINERS = [
    ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
     "you must use the 'spawn' start method", "cuda-in-forked-worker"),
    ("RuntimeError: CUDA error: initialization error", "cuda-in-forked-worker"),
    ("RuntimeError: cuda runtime error (3) : initialization error at /pytorch/aten/src/THC/THCGeneral.cpp:50",
     "cuda-in-forked-worker"),
    ("RuntimeError: cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned",
     "cuda-tensors-from-workers"),
    ("_pickle.PicklingError: Can't pickle <function <lambda> at 0x7f3a2c1d5e50>: attribute lookup <lambda> "
     "on __main__ failed", "unpicklable-worker-state"),
    ("TypeError: cannot pickle 'generator' object", "unpicklable-worker-state"),
    ("TypeError: cannot pickle '_thread.RLock' object", "unpicklable-worker-state"),
    ("TypeError: h5py objects cannot be pickled", "unpicklable-worker-state"),
    ("TypeError: cannot pickle 'Environment' object", "unpicklable-worker-state"),
    ("UserWarning: Got pickle error when attempting to start a worker Process. This might be because the "
     "worker Process arguments are not picklable.", "unpicklable-worker-state"),
    ("RuntimeError: DataLoader worker (pid 7) is killed by signal: Killed.", "oom-killed"),
    ("RuntimeError: DataLoader worker (pid 1234567) is killed by signal: Killed.", "oom-killed"),
    ("RuntimeError: DataLoader worker (pid 31337) is killed by signal: Bus error. It is possible that "
     "dataloader's workers are out of shared memory.", "shm-too-small"),
    ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
     "(shm).", "shm-too-small"),
    ("RuntimeError: unable to write to file </torch_3412_1827336498_0>: No space left on device (28)",
     "shm-too-small"),
    ("RuntimeError: DataLoader worker (pid 99) is killed by signal: Segmentation fault.", "native-crash"),
    ("RuntimeError: DataLoader worker (pid(s) 12345, 12346) exited unexpectedly", "shm-too-small"),
    ("RuntimeError: DataLoader worker (pid(s) 8) exited unexpectedly", "shm-too-small"),
    ("OSError: [Errno 24] Too many open files: '/data/img/000123.jpg'", "too-many-open-files"),
    ("RuntimeError: received 0 items of ancdata", "too-many-open-files"),
    ("RuntimeError: An attempt has been made to start a new process before the current process has "
     "finished its bootstrapping phase.", "missing-main-guard"),
    ("ValueError: prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
     "to enable multiprocessing, otherwise set prefetch_factor to None.", "worker-only-args"),
    ("ValueError: persistent_workers option needs num_workers > 0", "worker-only-args"),
    ("ValueError: multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
     "but got num_workers=0", "worker-only-args"),
    ("RuntimeError: DataLoader timed out after 1800 seconds", "loader-timeout"),
    ("RuntimeError: DataLoader timed out after 5.5 seconds", "loader-timeout"),
    ("AttributeError: Can't get attribute 'CocoDetection' on <module '__main__' (built-in)>",
     "class-not-importable"),
    ("[W CudaIPCTypes.cpp] could not unlink the shared memory file /torch_1234_567_0", "shm-leak-file-system"),
    ("RuntimeError: context has already been set", "start-method-conflict"),
    ("RuntimeError: unable to resize file <filename not specified> to the right size: Invalid argument (22)",
     "unpicklable-worker-state"),
    ("training hangs forever at the first batch when num_workers=4, works with num_workers=0", "native-crash"),
    ("DeprecationWarning: This process (pid=4242) is multi-threaded, use of fork() may lead to deadlocks in the "
     "child.", "start-method-conflict"),
    ("UserWarning: This DataLoader will create 64 worker processes in total. Our suggested max number of "
     "worker in current system is 8, which is smaller than what this DataLoader is going to create.",
     "too-many-workers"),
]


@pytest.mark.parametrize("text,cause", ONE_LINERS)
def test_one_line_messages(text: str, cause: str) -> None:
    exp = explain_text(text)
    assert exp.top is not None and exp.top.id == cause, [(c.id, c.score) for c in exp.causes]


def test_generic_exit_lists_all_hidden_causes() -> None:
    exp = explain_text("RuntimeError: DataLoader worker (pid(s) 12345, 12346) exited unexpectedly")
    ids = [c.id for c in exp.causes]
    # shared memory, OOM, native crash and "rerun to see it" are all offered, in that order
    assert ids[:4] == ["shm-too-small", "oom-killed", "native-crash", "worker-died-unknown"]
    assert exp.details["worker_pids"] == "12345, 12346"


def test_specific_signal_beats_generic_exit_line() -> None:
    # A log where the generic line is repeated many times must not outrank the one specific line.
    text = "\n".join(["RuntimeError: DataLoader worker (pid(s) 1, 2) exited unexpectedly"] * 20)
    text += "\nRuntimeError: DataLoader worker (pid 2) is killed by signal: Segmentation fault."
    assert explain_text(text).top.id == "native-crash"


def test_details_name_the_object_and_start_method() -> None:
    exp = explain_text((DATA / "pickle_lambda.txt").read_text())
    assert exp.details["object"] == "MyDataset.__init__.<locals>.<lambda>"
    assert exp.details["start_method"] == "spawn"
    exp = explain_text((DATA / "pickle_py314.txt").read_text())
    assert exp.details["start_method"] == "forkserver"
    exp = explain_text((DATA / "cuda_fork.txt").read_text())
    assert exp.details["worker_exception"] == "RuntimeError"


def test_mangled_texts_keep_their_facts() -> None:
    exp = explain_text((DATA / "wrapped_lambda.txt").read_text())
    assert exp.details["object"] == "TrainAugmentation.__init__.<locals>.<lambda>"
    assert exp.details["start_method"] == "spawn"
    exp = explain_text((DATA / "py314_notes.txt").read_text())
    assert exp.details["object"] == "ImageFolderDS.__init__.<locals>.<lambda>"
    assert exp.details["attribute"] == "_dataset.target_transform"
    assert exp.details["start_method"] == "forkserver"
    exp = explain_text((DATA / "rich_exited.txt").read_text())
    assert exp.details["worker_pids"] == "164250"
    exp = explain_text("\x1b[31mRuntimeError: received 0 items of ancdata\x1b[0m")
    assert exp.top.id == "too-many-open-files"


def test_commands_use_numbers_from_the_text() -> None:
    exp = explain_text("UserWarning: This DataLoader will create 48 worker processes in total. Our suggested max "
                       "number of worker in current system is 8")
    assert exp.top.id == "too-many-workers"
    assert "dllint doctor --num-workers 48" in exp.top.commands


def test_worker_exception_in_user_code_is_recognized() -> None:
    text = (
        "KeyError: Caught KeyError in DataLoader worker process 1.\nOriginal Traceback (most recent call last):\n"
        '  File "ds.py", line 9, in __getitem__\n    return self.labels[name]\nKeyError: \'cat_0001\'\n'
    )
    exp = explain_text(text)
    assert exp.top.id == "error-in-dataset-code"
    assert "KeyError" in exp.top.why


def test_every_cause_references_known_rules_and_doctor_checks() -> None:
    from dllint.doctor import CHECK_NAMES

    for cause in CAUSES:
        for code in cause.rules:
            assert code in RULE_NAMES
        for check in cause.doctor:
            assert check in CHECK_NAMES, (cause.id, check)


def test_rule_names_agree_with_the_rule_registry() -> None:
    rules = pytest.importorskip("dllint.rules")
    registered = {r.code: r.name for r in rules.all_rules()}
    assert registered, "the registry lists rules"
    for code, name in registered.items():
        if code in RULE_NAMES:
            assert RULE_NAMES[code] == name, code


def test_unrelated_text_matches_nothing() -> None:
    exp = explain_text("ZeroDivisionError: division by zero")
    assert exp.causes == []


def test_cli_argument_and_exit_codes() -> None:
    runner = CliRunner()
    res = runner.invoke(explain, ["RuntimeError: DataLoader worker (pid 4321) is killed by signal: Killed."])
    assert res.exit_code == 0
    first = res.output.splitlines()[0]
    assert first.startswith("1. Out of host memory")
    assert "DL101 copy-on-read-container" in res.output
    assert "dllint probe module:factory" in res.output
    res = runner.invoke(explain, ["nothing to see here"])
    assert res.exit_code == 1 and "no known DataLoader failure" in res.output
    res = runner.invoke(explain, ["   "])
    assert res.exit_code == 2


def test_cli_stdin_json() -> None:
    runner = CliRunner()
    res = runner.invoke(explain, ["--json"], input=(DATA / "shm_bus.txt").read_text())
    assert res.exit_code == 0
    data = json.loads(res.output)
    top = data["causes"][0]
    assert top["id"] == "shm-too-small"
    assert top["rules"] == []  # no rule can see a machine's /dev/shm: the doctor check does
    assert "shm" in top["doctor_checks"]
    assert any("--shm-size" in c for c in top["commands"])
    assert data["details"]["worker_pids"] == "2817"


def test_cli_file_option_on_a_raw_log() -> None:
    runner = CliRunner()
    res = runner.invoke(explain, ["--file", str(DATA / "real_segv.txt")])
    assert res.exit_code == 0
    assert res.output.startswith("1. A native library crashed")
    assert "dllint doctor --check start-method" in res.output
    res = runner.invoke(explain, ["text", "--file", str(DATA / "real_segv.txt")])
    assert res.exit_code == 2 and "not both" in res.output


def test_works_without_torch() -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from dllint.cli import main\n"
        "main(['explain', 'RuntimeError: received 0 items of ancdata'])\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "DL305" in res.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork workers and POSIX signals")
def test_live_torch_errors_are_explained() -> None:
    """Run the installed torch now: worker deaths by SIGKILL, SIGSEGV and SIGBUS (one process, three loaders)."""
    pytest.importorskip("torch")
    expected = {"kill": "oom-killed", "segv": "native-crash", "bus": "shm-too-small"}
    res = subprocess.run([sys.executable, str(DATA / "make_errors.py"), *expected], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, timeout=180)
    err = res.stderr.decode("utf-8", "replace")
    sections = dict(re.findall(r"=== (\w+)\n(.*?)(?=\n=== |\Z)", err, re.DOTALL))
    assert set(sections) == set(expected), err[-2000:]
    for mode, text in sections.items():
        assert "exited unexpectedly" in text, (mode, text)
        exp = explain_text(text)
        assert exp.top is not None and exp.top.id == expected[mode], (mode, text)
        assert exp.details["worker_pids"]
