"""Golden fixtures (see tests/golden.py): whole expected findings, and fixed files for --fix."""

from __future__ import annotations

import ast
import shutil

import pytest

from golden import UPDATE, Case, cases, check_or_update, copy_case, findings, python_files, run_dllint

CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_findings_match_golden(case: Case, tmp_path):
    work = copy_case(case, tmp_path)
    check_or_update(case.expected_path, findings(work, case))


@pytest.mark.parametrize("unsafe", [False, True], ids=["fix", "unsafe-fixes"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fix_matches_golden_and_converges(case: Case, unsafe: bool, tmp_path):
    work = copy_case(case, tmp_path)
    before = python_files(work)
    flags = ["--fix", "--unsafe-fixes"] if unsafe else ["--fix"]
    code, out = run_dllint(work, ["check", "--select", case.select, "-q", *flags, *case.args()])
    assert code in (0, 1), out
    after = python_files(work)
    changed = {k: v for k, v in after.items() if before.get(k) != v}
    golden = case.fixed_path(unsafe)
    if not changed:
        if UPDATE and golden.exists():
            shutil.rmtree(golden) if golden.is_dir() else golden.unlink()
        assert not golden.exists(), f"{golden} exists but {' '.join(flags)} changed nothing"
        return
    for name, text in changed.items():
        ast.parse(text)  # a fixed file always re-parses
        target = golden / name if case.is_project else golden
        check_or_update(target, text)
    # a second run changes nothing
    code, out = run_dllint(work, ["check", "--select", case.select, "-q", *flags, *case.args()])
    assert python_files(work) == after, "a second --fix changed the files again"
