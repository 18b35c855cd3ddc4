"""dllint doctor: every check shows ok, warn and fail on a faked machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from dllint import doctor as doc
from dllint.doctor import FAIL, OK, WARN, GiB, Machine, MiB, Plan

ROOT = Path(__file__).resolve().parents[1]


def fake_torch(version="2.13.0", strategy="file_descriptor", start=None, cuda_built=False, cuda_init=False):
    mp = SimpleNamespace(
        get_sharing_strategy=lambda: strategy,
        get_all_sharing_strategies=lambda: {"file_descriptor", "file_system"},
        get_start_method=lambda allow_none=False: start,
        get_all_start_methods=lambda: ["fork", "spawn", "forkserver"],
    )
    return SimpleNamespace(
        __version__=version,
        multiprocessing=mp,
        backends=SimpleNamespace(cuda=SimpleNamespace(is_built=lambda: cuda_built)),
        cuda=SimpleNamespace(is_initialized=lambda: cuda_init, _is_in_bad_fork=lambda: False),
    )


class FakeMachine(Machine):
    """A healthy Linux box unless a test changes a field."""

    def __init__(self, tmp: Path, **kw):
        self.platform = "linux"
        self.python = (3, 11)
        self.proc = str(tmp / "proc")
        self.cgroup_root = str(tmp / "cgroup")
        self.environ = {}
        self.files: dict[str, str] = {}
        self.shm = (32 * GiB, 31 * GiB)
        self.nofile = (65536, 65536)
        self.fds = 12
        self.aff = 16
        self.ncpu = 16
        self.torch_mod = fake_torch()
        self.meminfo_text = "MemTotal: 65536000 kB\nMemAvailable: 60000000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n"
        for k, v in kw.items():
            setattr(self, k, v)

    def torch(self):
        return self.torch_mod

    def statvfs(self, path):
        return self.shm

    def rlimit_nofile(self):
        return self.nofile

    def open_fds(self):
        return self.fds

    def affinity(self):
        return self.aff

    def cpu_count(self):
        return self.ncpu

    def read(self, path):
        if path == os.path.join(self.proc, "meminfo"):
            return self.meminfo_text
        return self.files.get(path)

    def exists(self, path):
        return path in self.files


@pytest.fixture
def m(tmp_path):
    return FakeMachine(tmp_path)


def by_name(checks):
    return {c.name: c for c in checks}


def test_healthy_machine_is_all_ok(m):
    checks = doc.run_checks(m, Plan(num_workers=4))
    assert [c.name for c in checks] == list(doc.CHECK_NAMES)
    assert {c.verdict for c in checks} == {OK}, [(c.name, c.verdict, c.message) for c in checks if c.verdict != OK]


# ----------------------------------------------------------------------------- shm


def test_shm_docker_default_fails_and_says_how_to_fix(m):
    m.shm = (64 * MiB, 63 * MiB)
    m.files["/.dockerenv"] = ""
    c = doc.check_shm(m, Plan())
    assert c.verdict == FAIL
    assert "64 MiB (Docker's default)" in c.message
    assert "--shm-size" in c.fix and "--ipc=host" in c.fix
    assert c.rules == []  # a machine limit: no rule code (there is no DL309)
    assert c.data["container"] == "docker"


def test_shm_small_warns_full_fails_missing_fails(m):
    m.shm = (512 * MiB, 500 * MiB)
    assert doc.check_shm(m, Plan()).verdict == WARN
    m.shm = (8 * GiB, 200 * MiB)  # leaked torch_* files filled it
    c = doc.check_shm(m, Plan())
    assert c.verdict == WARN and "almost full" in c.message
    m.shm = (8 * GiB, 10 * MiB)
    assert doc.check_shm(m, Plan()).verdict == FAIL
    m.shm = None
    c = doc.check_shm(m, Plan())
    assert c.verdict == FAIL and "missing" in c.message


def test_shm_reads_a_real_filesystem(tmp_path):
    machine = Machine()
    machine.shm_path = str(tmp_path)
    c = doc.check_shm(machine, Plan())
    st = os.statvfs(tmp_path)
    assert c.data["size"] == st.f_blocks * st.f_frsize
    assert c.data["path"] == str(tmp_path)


def test_shm_skipped_off_linux(m):
    m.platform = "darwin"
    m.shm = None
    assert doc.check_shm(m, Plan()).verdict == OK


# ----------------------------------------------------------------------------- fds


def test_nofile_verdicts(m):
    m.nofile = (1024, 1048576)
    c = doc.check_nofile(m, Plan(num_workers=8, prefetch_factor=4))
    assert c.verdict == WARN and c.fix.startswith("ulimit -n 1048576")
    assert c.data["needed_estimate"] == 1024 + 8 * 4 * 32
    m.nofile = (256, 256)
    c = doc.check_nofile(m, Plan(num_workers=2))
    assert c.verdict == FAIL and "DL305" in c.rules
    m.nofile = (4096, 4096)
    assert doc.check_nofile(m, Plan(num_workers=2)).verdict == OK


def test_open_fds(m):
    m.nofile = (1024, 1024)
    m.fds = 900
    c = doc.check_open_fds(m, Plan())
    assert c.verdict == WARN and "88%" in c.message
    m.fds = 20
    assert doc.check_open_fds(m, Plan()).verdict == OK


def test_sharing_strategy(m):
    m.torch_mod = fake_torch(strategy="file_system")
    c = doc.check_sharing_strategy(m, Plan())
    assert c.verdict == WARN and "DL302" in c.rules
    assert doc.check_sharing_strategy(FakeMachine(Path("/nonexistent")), Plan()).verdict == OK


def test_torch_version(m):
    m.torch_mod = fake_torch(version="1.8.1+cu111")
    assert doc.check_torch(m, Plan()).verdict == WARN
    m.torch_mod = fake_torch(version="2.4.0")
    assert doc.check_torch(m, Plan()).verdict == OK


# ----------------------------------------------------------------------------- start method / CUDA


def test_default_start_method_table():
    assert doc.default_start_method("linux", (3, 13)) == "fork"
    assert doc.default_start_method("linux", (3, 14)) == "forkserver"
    assert doc.default_start_method("freebsd14", (3, 14)) == "forkserver"
    assert doc.default_start_method("darwin", (3, 11)) == "spawn"
    assert doc.default_start_method("win32", (3, 10)) == "spawn"


def test_start_method_verdicts(m):
    c = doc.check_start_method(m, Plan())
    assert c.verdict == OK and c.data["effective"] == "fork" and c.data["set"] is None
    assert "forkserver from Python 3.14" in c.message
    m.python = (3, 14)
    c = doc.check_start_method(m, Plan())
    assert c.verdict == WARN and c.data["effective"] == "forkserver" and "DL303" in c.rules
    m.torch_mod = fake_torch(start="spawn")
    c = doc.check_start_method(m, Plan())
    assert c.verdict == OK and c.data["effective"] == "spawn"


def test_cuda_initialized_under_fork_warns(m):
    m.torch_mod = fake_torch(cuda_built=True, cuda_init=True)
    c = doc.check_cuda(m, Plan())
    assert c.verdict == WARN and "Cannot re-initialize CUDA" in c.message and "DL201" in c.rules
    m.torch_mod = fake_torch(cuda_built=True, cuda_init=True, start="spawn")
    assert doc.check_cuda(m, Plan()).verdict == OK
    m.torch_mod = fake_torch(cuda_built=True)
    m.environ = {"PYTORCH_NVML_BASED_CUDA_CHECK": "1"}
    c = doc.check_cuda(m, Plan())
    assert c.verdict == OK and "PYTORCH_NVML_BASED_CUDA_CHECK=1" in c.message


# ----------------------------------------------------------------------------- CPUs, memory, container


def test_cpus_against_num_workers(m):
    m.aff, m.ncpu = 4, 4
    assert doc.check_cpus(m, Plan(num_workers=3)).verdict == OK
    assert doc.check_cpus(m, Plan(num_workers=6)).verdict == WARN
    assert doc.check_cpus(m, Plan(num_workers=16)).verdict == WARN
    c = doc.check_cpus(m, Plan(num_workers=17))
    assert c.verdict == FAIL and c.rules == ["DL308"]


def test_cpus_cgroup_v2_quota(m):
    m.files[os.path.join(m.cgroup_root, "cpu.max")] = "200000 100000\n"
    m.aff, m.ncpu = 64, 64
    c = doc.check_cpus(m, Plan())
    assert c.data["usable"] == 2 and c.data["cgroup_quota"] == 2.0
    assert c.verdict == WARN and "os.cpu_count() overstates" in c.message
    assert doc.check_cpus(m, Plan(num_workers=8)).verdict == WARN
    assert doc.check_cpus(m, Plan(num_workers=9)).verdict == FAIL
    m.files[os.path.join(m.cgroup_root, "cpu.max")] = "max 100000\n"
    assert doc.check_cpus(m, Plan()).data["usable"] == 64


def test_cpus_cgroup_v1_quota(m):
    m.files[os.path.join(m.cgroup_root, "cpu", "cpu.cfs_quota_us")] = "350000\n"
    m.files[os.path.join(m.cgroup_root, "cpu", "cpu.cfs_period_us")] = "100000\n"
    assert doc.usable_cpus(m)[0] == 3
    m.files[os.path.join(m.cgroup_root, "cpu", "cpu.cfs_quota_us")] = "-1\n"
    assert doc.usable_cpus(m)[0] == 16


def test_memory_verdicts(m):
    assert doc.check_memory(m, Plan()).verdict == OK
    m.meminfo_text = "MemTotal: 65536000 kB\nMemAvailable: 2000000 kB\nSwapTotal: 1048576 kB\nSwapFree: 10 kB\n"
    c = doc.check_memory(m, Plan())
    assert c.verdict == WARN and "swap 1.0 GiB" in c.message
    m.meminfo_text = "MemTotal: 65536000 kB\nMemAvailable: 500000 kB\n"
    c = doc.check_memory(m, Plan())
    assert c.verdict == FAIL and "DL101" in c.rules
    # a container limit below the host's memory is what counts
    m.meminfo_text = "MemTotal: 65536000 kB\nMemAvailable: 60000000 kB\n"
    m.files[os.path.join(m.cgroup_root, "memory.max")] = str(512 * MiB)
    c = doc.check_memory(m, Plan())
    assert c.verdict == FAIL and c.data["cgroup_limit"] == 512 * MiB


def test_container_detection(m):
    assert doc.check_container(m, Plan()).data["container"] is None
    m.environ = {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}
    assert doc.container_kind(m) == "kubernetes"
    m.environ = {}
    m.files[os.path.join(m.proc, "1", "cgroup")] = "0::/system.slice/docker-abc123.scope\n"
    assert doc.container_kind(m) == "docker"


def test_a_broken_check_does_not_hide_the_others(m, monkeypatch):
    def boom(machine, plan):
        raise OSError("permission denied")

    monkeypatch.setitem(doc.CHECKS, "memory", boom)
    checks = by_name(doc.run_checks(m, Plan()))
    assert checks["memory"].verdict == WARN and "could not run" in checks["memory"].message
    assert checks["shm"].verdict == OK


# ----------------------------------------------------------------------------- CLI


def test_cli_fails_on_docker_shm(tmp_path, monkeypatch):
    bad = FakeMachine(tmp_path, shm=(64 * MiB, 64 * MiB))
    bad.files["/.dockerenv"] = ""
    monkeypatch.setattr(doc, "make_machine", lambda: bad)
    res = CliRunner().invoke(doc.doctor, ["--num-workers", "4"])
    assert res.exit_code == 1, res.output
    shm_line = next(line for line in res.output.splitlines() if line.startswith("fail shm"))
    assert "Docker's default" in shm_line
    assert "--shm-size=8g" in res.output
    assert res.output.splitlines()[-1].startswith("9 ok, 0 warn, 1 fail")


def test_cli_json_on_healthy_fake(tmp_path, monkeypatch):
    monkeypatch.setattr(doc, "make_machine", lambda: FakeMachine(tmp_path))
    res = CliRunner().invoke(doc.doctor, ["--json", "-n", "2"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["summary"] == {"ok": 10, "warn": 0, "fail": 0}
    assert [c["name"] for c in data["checks"]] == list(doc.CHECK_NAMES)


def test_cli_real_machine_exit_code_matches_verdicts():
    res = CliRunner().invoke(doc.doctor, ["--json"])
    data = json.loads(res.output)
    assert res.exit_code == (1 if data["summary"]["fail"] else 0)
    names = {c["name"] for c in data["checks"]}
    assert names == set(doc.CHECK_NAMES)
    torch_check = next(c for c in data["checks"] if c["name"] == "torch")
    import torch

    assert torch_check["data"]["version"] == str(torch.__version__)


def test_missing_torch_exits_2():
    code = "import sys; sys.modules['torch'] = None\nfrom dllint.cli import main\nmain(['doctor'])\n"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "needs torch" in res.stderr


def test_module_import_does_not_import_torch():
    code = "import sys, dllint.doctor, dllint.explain, dllint.probe; print('torch' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.stdout.strip() == "False", res.stderr


def _private_shm_namespace_works() -> bool:
    import shutil

    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    flags = ["-m"] if os.geteuid() == 0 else ["-r", "-m"]
    probe = subprocess.run(["unshare", *flags, "sh", "-c", "mount -t tmpfs -o size=64m tmpfs /dev/shm"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(not _private_shm_namespace_works(), reason="cannot mount a private /dev/shm (needs unshare -m)")
def test_real_64mb_shm_fails_and_a_real_loader_dies_as_explained():
    """In a private mount namespace /dev/shm is a real 64 MiB tmpfs, as in a default Docker container."""
    flags = "-m" if os.geteuid() == 0 else "-r -m"
    script = (
        "mount -t tmpfs -o size=64m tmpfs /dev/shm && "
        f"{sys.executable} -m dllint doctor --json --check shm; echo \"doctor-rc=$?\"; "
        f"{sys.executable} {ROOT / 'tests' / 'data' / 'explain' / 'make_errors.py'} bigshm 2>&1 >/dev/null | tail -5"
    )
    res = subprocess.run(f"unshare {flags} sh -c '{script}'", shell=True, cwd=ROOT, capture_output=True, text=True,
                         timeout=180)
    out = res.stdout
    payload, _, rest = out.partition("doctor-rc=")
    data = json.loads(payload)
    (shm,) = data["checks"]
    assert shm["verdict"] == FAIL and shm["data"]["size"] == 64 * MiB
    assert "Docker's default" in shm["message"] and "--shm-size" in shm["fix"]
    assert rest.startswith("1")
    from dllint.explain import explain_text

    exp = explain_text(rest)
    assert "No space left on device" in rest
    assert exp.top.id == "shm-too-small" and "shm" in exp.top.doctor_checks


LIMITS = """Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
"""


def test_parse_limits_nofile():
    assert doc.parse_limits_nofile(LIMITS) == (1024, 524288)
    assert doc.parse_limits_nofile(LIMITS.replace("1024                 524288", "unlimited unlimited")) == (-1, -1)
    assert doc.parse_limits_nofile("garbage") is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>")
def test_pid_inspects_a_running_job():
    """A 'job' with a low fd limit, 60 open files and one child process."""
    code = (
        "import resource, subprocess, sys, time\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (100, 4096))\n"
        "files = [open('/dev/null') for _ in range(60)]\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
        "child.kill()\n"
    )
    job = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert job.stdout.readline().strip() == "ready"
        res = CliRunner().invoke(doc.doctor, ["--pid", str(job.pid), "--json", "-n", "4",
                                              "--check", "nofile", "--check", "open-fds", "--check", "cuda"])
        data = json.loads(res.output)
        checks = by_name([doc.Check(**c) for c in data["checks"]])
        assert checks["nofile"].data["soft"] == 100 and checks["nofile"].data["hard"] == 4096
        assert checks["nofile"].verdict == WARN and checks["nofile"].fix.startswith("ulimit -n 4096")
        fds = checks["open-fds"]
        assert fds.verdict == WARN and fds.data["open"] >= 60 and fds.data["pid"] == job.pid
        if os.path.exists(f"/proc/self/task/{os.getpid()}/children"):  # CONFIG_PROC_CHILDREN
            assert len(fds.data["children"]) == 1
        assert checks["cuda"].data["driver_loaded_in_pid"] is False
        assert res.exit_code == 0
    finally:
        for pid in doc.Machine.children(_machine_for(job.pid)):
            os.kill(pid, 9)
        job.kill()
        job.wait()


def _machine_for(pid):
    m = Machine()
    m.pid = pid
    return m


def test_pid_that_does_not_exist_exits_2():
    res = CliRunner().invoke(doc.doctor, ["--pid", "4194304"])  # above Linux's pid_max
    assert res.exit_code == 2
