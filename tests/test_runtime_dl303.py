"""DL303 runtime proof: the flagged script, started under spawn, fails with the bootstrapping
RuntimeError the finding quotes; the same code moved under ``if __name__ == "__main__":`` (the
suggested change) runs."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from golden import run_dllint_process

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "dl303" / "positive_spawn.py"
PROJECT = ROOT / "fixtures" / "projects" / "dl30x_main_guard"
BOOTSTRAP = "An attempt has been made to start a new process before the current process has finished its bootstrapping phase"


def run(script: Path, timeout: int = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, script.name], cwd=script.parent, capture_output=True, text=True, timeout=timeout, check=False
    )


def flat(text: str) -> str:
    """multiprocessing wraps the message over several indented lines."""
    return " ".join(text.split())


def dl303(work: Path) -> list[dict]:
    out = run_dllint_process(work, "check", "--select", "DL303", "-q", "--output-format", "json")
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def guard_from(text: str, row: int) -> str:
    """Move every top-level statement from the one at ``row`` on under the main guard."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    start = next(s for s in tree.body if s.lineno <= row <= s.end_lineno).lineno
    head, tail = "".join(lines[: start - 1]), "".join(lines[start - 1 :])
    return head + 'if __name__ == "__main__":\n' + textwrap.indent(tail, "    ")


def test_unguarded_spawn_script_fails_and_guarded_form_runs(tmp_path):
    work = tmp_path / "case"
    work.mkdir()
    (work / ".git").mkdir()
    script = work / FIXTURE.name
    shutil.copy(FIXTURE, script)

    [diag] = dl303(work)
    assert BOOTSTRAP in diag["details"]["why"]  # the short message's explanation
    result = run(script)
    assert result.returncode != 0
    assert BOOTSTRAP in flat(result.stderr)
    assert "exited unexpectedly" in result.stderr  # what the parent process reports

    script.write_text(guard_from(script.read_text(), diag["location"]["row"]))
    assert dl303(work) == []
    result = run(script)
    assert result.returncode == 0, result.stderr
    assert "total 28" in result.stdout  # 0 + 1 + ... + 7, read through the spawned workers


def test_cross_file_entry_script_fails_under_forkserver_and_guarded_one_runs(tmp_path):
    """The project case: train.py calls a function of another module that iterates a 2-worker loader.
    Run with forkserver forced (the Linux default from Python 3.14, which the case targets)."""
    work = tmp_path / "case"
    shutil.copytree(PROJECT, work, ignore=shutil.ignore_patterns("expected.txt", "__pycache__"))
    (work / ".git").mkdir()
    flagged = {Path(d["filename"]).name for d in dl303(work)}
    assert flagged == {"train.py"}
    for name in ("train.py", "guarded.py"):
        launcher = work / f"launch_{name}"
        launcher.write_text(
            "import multiprocessing, runpy, sys\n"
            "multiprocessing.set_start_method('forkserver')\n"
            f"runpy.run_path({name!r}, run_name='__main__')\n"
        )
    # runpy keeps the script as __main__, so workers re-import it exactly like `python train.py`
    bad = run(work / "launch_train.py")
    good = run(work / "launch_guarded.py")
    assert good.returncode == 0, good.stderr
    assert good.stdout.strip() == str(sum(i * i for i in range(16)))
    assert bad.returncode != 0
    assert BOOTSTRAP in flat(bad.stderr)
