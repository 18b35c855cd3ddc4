"""The command line: exit codes, output shapes, selection, noqa, odd files, standard input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from dllint.cli import cli

BAD = 'import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\n'
GOOD = 'import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_descriptor")\n'


def run(*args, input=None):
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.output


def test_finding_exit_1_and_ruff_style_line(project):
    (project / "a.py").write_text(BAD)
    code, out = run("a.py")
    assert code == 1
    assert out.splitlines()[0].startswith("a.py:2:1: DL302 ")
    assert out.rstrip().endswith("Found 1 error.")


def test_clean_file_exit_0(project):
    (project / "a.py").write_text(GOOD)
    code, out = run("a.py")
    assert code == 0
    assert "All checks passed!" in out


def test_default_path_is_current_directory(project):
    (project / "sub").mkdir()
    (project / "sub" / "a.py").write_text(BAD)
    code, out = run()
    assert code == 1 and "sub/a.py:2:1: DL302" in out


def test_exit_zero(project):
    (project / "a.py").write_text(BAD)
    code, out = run("--exit-zero", "a.py")
    assert code == 0 and "DL302" in out


def test_check_subcommand_is_the_same(project):
    (project / "a.py").write_text(BAD)
    assert run("check", "a.py")[0] == 1


def test_missing_path_is_usage_error(project):
    code, out = run("nope.py")
    assert code == 2
    assert "path does not exist: nope.py" in out


def test_bad_option_is_usage_error(project):
    assert run("--no-such-option", ".")[0] == 2


def test_select_ignore_and_prefixes(project):
    (project / "a.py").write_text(BAD)
    assert run("--ignore", "DL302", "a.py")[0] == 0
    assert run("--ignore", "DL3", "a.py")[0] == 0
    assert run("--select", "DL0", "a.py")[0] == 0
    assert run("--select", "DL3", "a.py")[0] == 1
    assert run("--select", "ALL", "a.py")[0] == 1
    assert run("--select", "DL0", "--extend-select", "DL302", "a.py")[0] == 1
    # the more specific selector wins, as in ruff
    assert run("--ignore", "DL3", "--extend-select", "DL302", "a.py")[0] == 1


def test_unknown_selector_is_error(project):
    (project / "a.py").write_text(BAD)
    code, out = run("--select", "DL999", "a.py")
    assert code == 2 and "DL999" in out
    code, out = run("--ignore", "E501", "a.py")
    assert code == 2 and "E501" in out


def test_noqa_forms(project):
    lines = [
        "import torch.multiprocessing as mp",
        'mp.set_sharing_strategy("file_system")  # noqa',
        'mp.set_sharing_strategy("file_system")  # noqa: DL302',
        'mp.set_sharing_strategy("file_system")  # noqa:DL101,DL302',
        'mp.set_sharing_strategy("file_system")  # noqa: DL101',
        'mp.set_sharing_strategy("file_system")  # NOQA: E501',
    ]
    (project / "a.py").write_text("\n".join(lines) + "\n")
    code, out = run("a.py")
    rows = sorted(int(line.split(":")[1]) for line in out.splitlines() if "DL302" in line)
    assert rows == [5, 6]


def test_file_level_noqa(project):
    (project / "a.py").write_text("# dllint: noqa\n" + BAD)
    assert run("a.py")[0] == 0
    (project / "b.py").write_text("# dllint: noqa: DL101\n" + BAD)
    assert run("b.py")[0] == 1
    (project / "c.py").write_text("# dllint: noqa: DL302\n" + BAD)
    assert run("c.py")[0] == 0


def test_json_shape(project):
    (project / "a.py").write_text(BAD)
    code, out = run("--output-format", "json", "a.py")
    assert code == 1
    data = json.loads(out)
    assert isinstance(data, list) and len(data) == 1
    item = data[0]
    assert {"code", "message", "filename", "location", "end_location", "fix", "noqa_row", "url"} <= set(item)
    assert item["code"] == "DL302"
    assert item["location"] == {"row": 2, "column": 1}
    assert item["end_location"] == {"row": 2, "column": 39}
    assert item["filename"] == str(project / "a.py")
    assert item["fix"] is None
    assert item["noqa_row"] == 2
    assert item["url"].endswith("DL302-file-system-sharing-strategy")


def test_json_empty_list_when_clean(project):
    (project / "a.py").write_text(GOOD)
    code, out = run("--output-format", "json", "a.py")
    assert code == 0 and json.loads(out) == []


def test_syntax_error_is_reported_and_run_goes_on(project):
    (project / "broken.py").write_text("from torch.utils.data import Dataset\nclass A(Dataset)\n    pass\n")
    (project / "a.py").write_text(BAD)
    code, out = run(".")
    assert code == 1
    assert "broken.py:2:17: DL000 syntax error" in out
    assert "a.py:2:1: DL302" in out


def test_binary_empty_and_non_utf8_files(project):
    (project / "empty.py").write_text("")
    (project / "binary.py").write_bytes(b"Dataset\x00\x01\x02")
    (project / "latin.py").write_bytes(b"# no coding cookie\nname = '\xe9t\xe9'  # Dataset\n")
    (project / "cookie.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'  # Dataset\n")
    # a codec a package registers at run time (future-fstrings) over UTF-8 bytes: analysed as UTF-8
    (project / "fstrings.py").write_bytes(
        b"# -*- coding: future_fstrings -*-\nimport torch.multiprocessing as mp\nmp.set_sharing_strategy('file_system')  # \xc3\xa9\n"
    )
    (project / "unknown.py").write_bytes(b"# -*- coding: no_such_codec -*-\nname = '\xe9'  # Dataset\n")
    (project / "a.py").write_text(BAD)
    code, out = run(".")
    assert code == 1
    assert "binary.py:1:1: DL000 cannot read file: binary file" in out
    assert "latin.py:1:1: DL000 cannot read file: cannot decode" in out
    assert "cookie.py" not in out  # a declared encoding is honoured
    assert "fstrings.py:3:1: DL302" in out
    assert "unknown.py:1:1: DL000 cannot read file: cannot decode" in out
    assert "empty.py" not in out
    assert "a.py:2:1: DL302" in out


def test_explicit_file_is_always_parsed(project):
    # no trigger word at all, but named on the command line: a syntax error is still reported
    (project / "plain.py").write_text("def f(:\n")
    code, out = run("plain.py")
    assert code == 1 and "plain.py:1:" in out and "DL000" in out


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read files without read permission")
def test_unreadable_file(project):
    p = project / "secret.py"
    p.write_text(BAD)
    p.chmod(0)
    try:
        code, out = run("secret.py")
    finally:
        p.chmod(0o644)
    assert code == 1 and "DL000 cannot read file" in out


def test_unreadable_file_via_directory_entry(project):
    # a dangling symlink named *.py: discovered, cannot be read, reported, run goes on
    os.symlink(project / "missing-target.py", project / "dangling.py")
    (project / "a.py").write_text(BAD)
    code, out = run("dangling.py", "a.py")
    assert code == 1
    assert "dangling.py:1:1: DL000 cannot read file" in out
    assert "a.py:2:1: DL302" in out


def test_stdin(project):
    code, out = run("-", "--stdin-filename", "pkg/train.py", input=BAD)
    assert code == 1
    assert out.splitlines()[0].startswith("pkg/train.py:2:1: DL302")
    code, out = run("-", input=GOOD)
    assert code == 0


def test_stdin_cannot_mix_with_paths(project):
    (project / "a.py").write_text(BAD)
    code, out = run("-", "a.py", input=BAD)
    assert code == 2


def test_config_errors_exit_2(project):
    (project / "a.py").write_text(BAD)
    (project / "pyproject.toml").write_text("[tool.dllint]\nselct = ['DL1']\n")
    code, out = run("a.py")
    assert code == 2 and "unknown key `selct`" in out
    (project / "pyproject.toml").write_text("[tool.dllint]\nselect = 'DL1'\n")
    code, out = run("a.py")
    assert code == 2 and "`select`" in out and "list" in out
    (project / "pyproject.toml").write_text("[tool.dllint]\nignore = ['DL9']\n")
    code, out = run("a.py")
    assert code == 2 and "DL9" in out
    (project / "pyproject.toml").write_text("[tool.dllint]\ntarget-version = 'py27'\n")
    code, out = run("a.py")
    assert code == 2 and "target-version" in out
    (project / "pyproject.toml").write_text("[tool.dllint\n")
    code, out = run("a.py")
    assert code == 2 and "not valid TOML" in out


def test_config_is_applied(project):
    (project / "a.py").write_text(BAD)
    (project / "tests").mkdir()
    (project / "tests" / "t.py").write_text(BAD)
    (project / "pyproject.toml").write_text(
        '[tool.dllint]\nper-file-ignores = { "tests/*" = ["DL302"] }\n'
    )
    code, out = run(".")
    assert "a.py:2:1" in out and "tests/t.py" not in out
    (project / "pyproject.toml").write_text('[tool.dllint]\nignore = ["DL302"]\n')
    assert run(".")[0] == 0
    # --config points at another file
    other = project / "other.toml"
    other.write_text("[tool.dllint]\nselect = ['DL302']\n")
    assert run("--config", str(other), ".")[0] == 1
    assert run("--config", "missing.toml", ".")[0] == 2


def test_excludes_and_gitignore(project):
    for name in ("keep", "gen", "build", ".venv", "ignored_dir"):
        (project / name).mkdir()
        (project / name / "a.py").write_text(BAD)
    (project / ".gitignore").write_text("ignored_dir/\n")
    (project / "pyproject.toml").write_text('[tool.dllint]\nextend-exclude = ["gen"]\n')
    code, out = run(".")
    paths = {line.split(":")[0] for line in out.splitlines() if "DL302" in line}
    assert paths == {"keep/a.py"}
    # a file named explicitly is checked even when excluded (as ruff does)
    assert run("gen/a.py")[0] == 1


def test_rule_command(project):
    code, out = run("rule", "DL302")
    assert code == 0 and "file-system-sharing-strategy" in out and "## Why is this bad?" in out
    code, out = run("rule", "--all")
    assert code == 0 and "DL302" in out and "DL000" in out
    code, out = run("rule", "DL999")
    assert code == 2


def test_console_script_runs_as_subprocess(project):
    (project / "a.py").write_text(BAD)
    proc = subprocess.run([sys.executable, "-m", "dllint", "a.py"], capture_output=True, text=True, cwd=project)
    assert proc.returncode == 1 and "DL302" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "dllint", "--version"], capture_output=True, text=True, cwd=project)
    assert proc.returncode == 0 and "dllint" in proc.stdout


def test_python_m_dllint_in_a_project_with_modules_named_as_the_standard_librarys(project):
    """``python -m dllint`` from a project's root puts that folder first on ``sys.path``: its own
    ``logging.py`` and ``signal/`` (pytest's, scipy's) were imported in place of the standard
    library's, and the run ended in an internal error. They are the project's files, read."""
    (project / "a.py").write_text(BAD)
    (project / "logging.py").write_text("raise SystemExit('the project module was imported')\n")
    (project / "signal").mkdir()
    (project / "signal" / "__init__.py").write_text("raise SystemExit('the project package was imported')\n")
    proc = subprocess.run([sys.executable, "-m", "dllint", "check", "--no-cache", "."], capture_output=True, text=True, cwd=project)
    assert proc.returncode == 1 and "DL302" in proc.stdout and "imported" not in proc.stdout + proc.stderr


def test_no_color_when_not_a_terminal(project):
    (project / "a.py").write_text(BAD)
    code, out = run("a.py")
    assert "\x1b[" not in out


def test_core_import_does_not_pull_torch_or_libcst(project):
    code = (
        "import sys, dllint.cli, dllint.engine, dllint.rules; dllint.rules.all_rules();"
        "print('torch' in sys.modules, 'libcst' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.split() == ["False", "False"], proc.stderr


def test_program_exit_skips_teardown_but_keeps_output_and_status(project):
    # as a program (`python -m dllint`), check leaves through os._exit after flushing
    calls = "\n".join(f'def f{i}():\n    mp.set_sharing_strategy("file_system")\n' for i in range(300))
    (project / "many.py").write_text("import torch.multiprocessing as mp\n" + calls)
    (project / "clean.py").write_text(GOOD)
    proc = subprocess.run(
        [sys.executable, "-m", "dllint", "check", "--output-format", "json", "--no-cache", "many.py"],
        cwd=project, capture_output=True, text=True,
    )
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)  # complete: nothing lost in an unflushed buffer
    assert len(findings) == 300
    clean = subprocess.run([sys.executable, "-m", "dllint", "check", "--no-cache", "clean.py"], cwd=project, capture_output=True, text=True)
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_main_with_arguments_returns_to_its_host(project):
    # called as a library (argv given), main raises SystemExit instead of ending the process
    from dllint.cli import main

    (project / "bad.py").write_text(BAD)
    with pytest.raises(SystemExit) as exc:
        main(["check", "--no-cache", "."])
    assert exc.value.code == 1


def test_program_under_a_profiler_exits_normally(project):
    # cProfile (and coverage) write their results at exit: the fast exit steps aside for them
    (project / "bad.py").write_text(BAD)
    proc = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", "prof.out", "-m", "dllint", "check", "--no-cache", "."],
        cwd=project, capture_output=True, text=True,
    )
    assert "DL302" in proc.stdout, proc.stderr  # (cProfile itself reports status 0)
    assert (project / "prof.out").stat().st_size > 0


def test_check_as_the_program_keeps_the_collector_paused_to_the_end(project, monkeypatch):
    """Run as the program (``dllint.cli.main()``), check leaves the cyclic garbage collector
    paused after the engine's run (the process exits right after); inside a host process (here,
    click's runner) the engine restores it."""
    import gc

    from dllint import cli as cli_module

    (project / "a.py").write_text(BAD)
    assert gc.isenabled()
    assert run("a.py")[0] == 1
    assert gc.isenabled()
    monkeypatch.setattr(cli_module, "PROGRAM", True)
    try:
        assert run("a.py")[0] == 1
        assert not gc.isenabled()
    finally:
        gc.enable()
