"""A file named on the command line (``dllint check FILE``: a pre-commit hook's staged file, the
editor's open document) is analysed starting from that file: planning parses what it reaches and
the files that use its classes and functions by name, not the whole project. Its findings must be
those the whole-project run reports in that file, each with a fix of the same applicability (a
hook running ``--fix`` on staged files must not apply a fix the whole run holds back as unsafe).

Checked on every multi-file golden project and on generated "typical projects"
(tests/projectgen.py), file by file; ``bench/focus_check.py`` runs the same comparison on real
repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from golden import cases, copy_case
from projectgen import generate

PROJECTS = [c for c in cases() if c.is_project]


def _engine(root: Path):
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.discover import discover
    from dllint.engine import Engine

    settings, project_root = load_configuration([str(root)], None, Overrides(select=["ALL"]))
    targets = discover([str(root)], project_root, settings.all_excludes, settings.respect_gitignore)
    return (lambda: Engine(settings, project_root, jobs=1, cache=None)), targets, enabled_codes(settings)


def _key(d):
    return (d.path, d.span.row, d.span.col, d.code, d.message, d.fix.applicability if d.fix is not None else None)


def _compare(root: Path, files: list[str] | None = None) -> tuple[int, int]:
    """(files compared, findings compared); asserts each file alone finds what the whole run finds there."""
    make, targets, enabled = _engine(root)
    whole = make().analyse(targets, enabled)
    by_file: dict[str, set] = {}
    for d in whole.diagnostics:
        by_file.setdefault(d.path, set()).add(_key(d))
    compared = findings = 0
    for path in files or [t for t in targets if t.endswith(".py")]:
        alone = make().analyse([path], enabled, None, {path})
        assert {_key(d) for d in alone.diagnostics} == by_file.get(path, set()), path
        assert alone.analysed <= whole.analysed
        compared += 1
        findings += len(by_file.get(path, ()))
    return compared, findings


@pytest.mark.parametrize("case", PROJECTS, ids=[c.name for c in PROJECTS])
def test_each_file_of_a_fixture_project_alone(case, tmp_path):
    work = copy_case(case, tmp_path)
    compared, _ = _compare(work)
    assert compared >= 1


@pytest.mark.parametrize("seed", [0, 1])
def test_each_file_with_findings_of_a_generated_project_alone(seed, tmp_path):
    generate(str(tmp_path), seed=seed, files=80)
    make, targets, enabled = _engine(tmp_path)
    whole = make().analyse(targets, enabled)
    with_findings = sorted({d.path for d in whole.diagnostics})
    assert with_findings, "a generated project has findings (else the comparison proves nothing)"
    without = [t for t in targets if t.endswith(".py") and t not in with_findings][:10]
    compared, findings = _compare(tmp_path, with_findings + without)
    assert findings == len(whole.diagnostics)


def test_a_named_file_parses_only_what_it_reaches(tmp_path):
    """Two unrelated projects side by side under one root: a file of one, named alone, parses
    nothing of the other (the whole-project run parses both)."""
    import shutil

    from golden import FIXTURES

    shutil.copytree(FIXTURES / "projects" / "dl2_cross_file", tmp_path / "a", ignore=shutil.ignore_patterns("expected.txt", "*fixed"))
    shutil.copytree(FIXTURES / "projects" / "dl3_context_subclass_loader", tmp_path / "b", ignore=shutil.ignore_patterns("expected.txt", "*fixed"))
    (tmp_path / ".git").mkdir()
    make, targets, enabled = _engine(tmp_path)
    whole = make().analyse(targets, enabled)
    assert any("/b/" in p for p in whole.project.files) and any("/a/" in p for p in whole.project.files)
    for name in ("a/pkg/utils.py", "a/pkg/images.py", "a/pkg/base.py"):
        path = str(tmp_path / name)
        alone = make().analyse([path], enabled, None, {path})
        # b/train.py names `main` and `train` as a/train.py does: it is read as a possible caller
        # of the entry function that starts the workers, found unrelated and nothing else of b follows
        assert alone.project.files and not any("/b/" in p and not p.endswith("/b/train.py") for p in alone.project.files), sorted(alone.project.files)
        assert {_key(d) for d in alone.diagnostics} == {_key(d) for d in whole.diagnostics if d.path == path}


def test_a_notebook_put_aside_by_a_named_run_still_decides_a_fix(tmp_path):
    """A named file's run does not read the project's notebooks, yet a notebook growing a
    Dataset's list makes DL101's fix unsafe in the whole run (the notebook is analysed there):
    alone, the Dataset's file gets the same applicability (``Project.uses_elsewhere`` reads the
    notebooks put aside when they name the attribute)."""
    import json
    import shutil

    from golden import FIXTURES

    src = FIXTURES / "projects" / "dl101_attribute_used_elsewhere"
    for name in ("data.py", "train.py"):
        shutil.copy(src / name, tmp_path / name)
    (tmp_path / "pyproject.toml").write_text("")
    cells = [
        "from data import Clips\n\nclips = Clips('clips')",
        "clips.files.append('extra.txt')  # grown by hand, after the constructor",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c} for c in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    (tmp_path / "explore.ipynb").write_text(json.dumps(notebook))
    make, targets, enabled = _engine(tmp_path)
    whole = make().analyse(targets, enabled)
    data = str(tmp_path / "data.py")
    fixes = [(d.code, d.fix.applicability) for d in whole.diagnostics if d.path == data and d.code == "DL101"]
    assert fixes == [("DL101", "unsafe")], whole.diagnostics
    alone = make().analyse([data], enabled, None, {data})
    assert not any(p.endswith(".ipynb") for p in alone.project.files)  # not analysed, only read for the attribute
    assert {_key(d) for d in alone.diagnostics} == {_key(d) for d in whole.diagnostics if d.path == data}
