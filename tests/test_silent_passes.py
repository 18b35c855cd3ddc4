"""Never pass silently: nothing to check is said, a file that cannot be parsed is reported
whatever is selected, and a selector that selects nothing is a usage error."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from dllint.cli import cli

BROKEN = "from torch.utils.data import Dataset\nclass D(Dataset)\n    pass\n"


def run(*args):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_no_python_files_is_said_on_stderr(project):
    (project / "docs").mkdir()
    (project / "docs" / "notes.txt").write_text("DataLoader\n")
    proc = subprocess.run([sys.executable, "-m", "dllint", "docs"], cwd=project, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert "No Python files found under the given path(s)" in proc.stderr
    assert "No Python files" not in proc.stdout
    # with files, no such warning
    (project / "docs" / "a.py").write_text("x = 1\n")
    assert "No Python files" not in run("docs")[1]


def test_a_missing_file_or_directory_is_a_usage_error(project):
    (project / "a.py").write_text("x = 1\n")
    assert run("a.py", "gone/")[0] == 2 and "path does not exist: gone/" in run("a.py", "gone/")[1]
    assert run("gone.py")[0] == 2


def test_a_file_that_does_not_parse_is_reported_whatever_is_selected(project):
    (project / "bad.py").write_text(BROKEN)
    for args in (["--select", "DL101"], ["--select", "DL3"], ["--ignore", "ALL"], ["--select", "DL101", "--ignore", "DL1"]):
        code, out = run("--output-format", "concise", *args, "bad.py")
        assert code == 1 and "bad.py:2:17: DL000" in out, (args, out)


def test_ignoring_dl000_has_no_effect_and_says_so(project):
    (project / "bad.py").write_text(BROKEN + "x = 1  # noqa: DL000\n")
    (project / "pyproject.toml").write_text('[tool.dllint]\nper-file-ignores = { "bad.py" = ["DL0", "ALL"] }\n')
    code, out = run("--ignore", "DL000", "bad.py")
    assert code == 1 and "bad.py:2:17: DL000" in out
    assert "`ignore` / `--ignore` names DL000, which cannot be ignored" in out


def test_an_empty_selector_is_a_usage_error(project):
    (project / "a.py").write_text('import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\n')
    for option in ("--select", "--extend-select", "--ignore"):
        code, out = run(option, "", "a.py")
        assert code == 2 and f"empty rule selector in `{option}`" in out, (option, out)
    assert run("--select", ",", "a.py")[0] == 2


def test_a_named_file_is_always_parsed_and_reported(project):
    """README: under a directory, a file without a data-loading word is not parsed; named, it is."""
    (project / "notes.py").write_text("def helper(:\n    return 1\n")  # no trigger word
    (project / "train.py").write_text("from torch.utils.data import DataLoader\nloader = DataLoader([1], num_workers=0\n")
    code, out = run("--output-format", "concise", "-q", ".")
    assert code == 1 and out.startswith("train.py:2:") and "DL000" in out
    assert "notes.py" not in out  # not parsed: documented in the README
    for args in (["notes.py"], ["notes.py", "train.py"], ["--select", "DL302", "notes.py"]):
        code, out = run("--output-format", "concise", "-q", *args)
        assert code == 1 and "notes.py:1:12: DL000" in out, (args, out)
