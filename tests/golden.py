"""Golden fixtures: every case under ``fixtures/`` with its whole expected output.

A case is either one file ``fixtures/<group>/<case>.py`` or a directory
``fixtures/projects/<case>/`` (several files, optionally its own pyproject.toml). Next to it:

- ``<case>.py.expected`` / ``<case>/expected.txt``: the exact findings of
  ``dllint --select <RULE> --output-format concise -q`` run on an isolated copy of the case, with
  paths relative to the case (an empty file: the case must stay silent). ``<RULE>`` is the rule
  the case's folder is named after (``fixtures/dl104/`` -> DL104), so a rule's fixtures show that
  rule alone; project cases (``fixtures/projects/``), notebooks and DL001's cases (which is about
  the other rules' suppressions) run with ``ALL``;
- ``<case>.py.fixed`` / ``<case>/fixed/<path>``: the file after ``--fix`` (only when a safe fix
  exists); ``<case>.py.unsafe-fixed``: after ``--fix --unsafe-fixes``.

A single-file case may start with ``# dllint-args: --target-version py314`` to pass options.
Cases run with ``--target-version py311`` unless they say otherwise, so the golden output does
not depend on the Python running the tests.

Regenerate (then review the diff!) with ``DLLINT_UPDATE_GOLDEN=1 python -m pytest tests/test_fixtures.py``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from dllint.cli import cli

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
UPDATE = os.environ.get("DLLINT_UPDATE_GOLDEN") == "1"
SKIP_DIRS = {"probe", "runtime"}  # helper modules used by runtime tests, not golden cases


@dataclass(frozen=True)
class Case:
    name: str  # e.g. "dl101/positive_glob" or "projects/cross_file"
    source: Path  # the .py file or the project directory

    @property
    def is_project(self) -> bool:
        return self.source.is_dir()

    @property
    def expected_path(self) -> Path:
        return self.source / "expected.txt" if self.is_project else Path(f"{self.source}.expected")

    def fixed_path(self, unsafe: bool = False) -> Path:
        if self.is_project:
            return self.source / ("unsafe-fixed" if unsafe else "fixed")
        return Path(f"{self.source}.{'unsafe-fixed' if unsafe else 'fixed'}")

    @property
    def select(self) -> str:
        """The rule a case is about (its folder's name), or ALL for projects, notebooks, DL001."""
        group = self.name.split("/", 1)[0]
        if re.fullmatch(r"dl\d{3}", group) and group != "dl001":
            return group.upper()
        return "ALL"

    def args(self) -> list[str]:
        args: list[str] = []
        if not self.is_project:
            first = self.source.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
            if first.startswith("# dllint-args:"):
                args = shlex.split(first.split(":", 1)[1])
        if "--target-version" not in args and not (self.is_project and (self.source / "pyproject.toml").exists()):
            args += ["--target-version", "py311"]
        return args


def cases() -> list[Case]:
    out = []
    for group in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name not in SKIP_DIRS):
        if group.name == "projects":
            out.extend(Case(f"projects/{d.name}", d) for d in sorted(group.iterdir()) if d.is_dir())
        else:
            out.extend(Case(f"{group.name}/{f.stem}", f) for f in sorted(group.glob("*.py")))
    return out


def copy_case(case: Case, dest: Path) -> Path:
    """An isolated copy: its own project root, so nothing else in the repository is indexed."""
    work = dest / "case"
    if case.is_project:
        shutil.copytree(
            case.source, work, ignore=shutil.ignore_patterns("expected.txt", "fixed", "unsafe-fixed", "__pycache__")
        )
    else:
        work.mkdir(parents=True)
        shutil.copy(case.source, work / case.source.name)
    (work / ".git").mkdir(exist_ok=True)  # marks the project root
    return work


def run_dllint(work: Path, args: list[str]) -> tuple[int, str]:
    old = os.getcwd()
    os.chdir(work)
    try:
        result = CliRunner().invoke(cli, [*args, "."], catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.output


def findings(work: Path, case: Case) -> str:
    code, out = run_dllint(work, ["check", "--select", case.select, "--output-format", "concise", "-q", "--no-fix", *case.args()])
    assert code in (0, 1), out
    return out


def python_files(work: Path) -> dict[str, str]:
    return {
        str(p.relative_to(work)): p.read_text(encoding="utf-8")
        for p in sorted(work.rglob("*.py"))
        if ".git" not in p.parts
    }


def check_or_update(path: Path, actual: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden file {path} (run with DLLINT_UPDATE_GOLDEN=1 and review it)"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{path} differs:\n--- expected\n{expected}\n--- actual\n{actual}"


def import_fixture(path: Path, tmp_path: Path, name: str):
    """Import a fixture file under a unique module name that worker processes can import too
    (spawned children get ``sys.path``)."""
    import importlib.util

    shutil.copy(path, tmp_path / f"{name}.py")
    if str(tmp_path) not in sys.path:
        sys.path.insert(0, str(tmp_path))
    spec = importlib.util.spec_from_file_location(name, tmp_path / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_python(code: str, cwd: Path, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def run_dllint_process(work: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """``python -m dllint ARGS .`` in ``work`` as a separate process (a real CLI run)."""
    return subprocess.run(
        [sys.executable, "-m", "dllint", *args, "."], cwd=work, capture_output=True, text=True, timeout=timeout
    )
