"""DL301's spawn fix is offered only where spawn can work: every entry script reaching the loader
has a main guard, and the worker code is importable by name. Elsewhere the finding says what to
change first. (The golden cases in fixtures/dl301/ and fixtures/projects/dl301_* hold the whole
output; these tests name the behaviours.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from golden import FIXTURES, Case, copy_case, run_dllint

HAZARD = '''\
import cv2
import numpy as np
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return cv2.resize(np.full((8, 8), i, np.uint8), (4, 4))
'''


def run(work: Path, *args: str) -> tuple[int, str]:
    return run_dllint(work, ["check", "--target-version", "py311", *args])


def before_spawn(finding: dict) -> str:
    """What to change before spawn can be offered: in the finding's details (the message stays short)."""
    return finding.get("details", {}).get("before spawn", "")


def test_dataset_under_the_main_guard_gets_no_spawn_fix_and_no_new_finding(tmp_path):
    """The report's case: the old fix added multiprocessing_context="spawn" here, and the fixed
    script then failed in every worker (DL106: Can't get attribute 'Frames' on __mp_main__)."""
    work = copy_case(Case("dl301/no_fix_dataset_under_guard", FIXTURES / "dl301" / "no_fix_dataset_under_guard.py"), tmp_path)
    path = work / "no_fix_dataset_under_guard.py"
    before = path.read_text()
    code, out = run(work, "--fix", "--unsafe-fixes")
    assert path.read_text() == before
    assert " DL106 " not in out
    (line,) = [x for x in out.splitlines() if " DL301 " in x]
    assert "[*]" not in line
    code, out = run(work, "--select", "DL301", "--unsafe-fixes", "--output-format", "json")
    (finding,) = json.loads(out)
    assert 'define `Frames` at the top level of no_fix_dataset_under_guard.py, not under `if __name__ == "__main__":`' in before_spawn(finding)


def test_script_without_guard_says_to_add_one(tmp_path):
    work = copy_case(Case("dl301/no_fix_without_guard", FIXTURES / "dl301" / "no_fix_without_guard.py"), tmp_path)
    code, out = run(work, "--select", "DL301", "--unsafe-fixes", "--output-format", "json")
    (finding,) = json.loads(out)
    assert finding["fix"] is None
    assert before_spawn(finding) == (
        'add an `if __name__ == "__main__":` guard to no_fix_without_guard.py (spawn re-imports it in every worker)'
    )


def test_entry_script_importing_the_loader_module_needs_the_guard(tmp_path):
    """The loader is in a module of the program (data.py); the script that imports and runs it
    (train.py) has no guard: no fix, and the message names train.py."""
    work = copy_case(Case("projects/dl301_entry_without_guard", FIXTURES / "projects" / "dl301_entry_without_guard"), tmp_path)
    code, out = run(work, "--select", "DL301", "--unsafe-fixes", "--output-format", "json")
    (finding,) = json.loads(out)
    assert finding["fix"] is None and "guard to train.py" in before_spawn(finding)
    # with the guard, the same loader gets the fix
    (work / "train.py").write_text('import data\n\nif __name__ == "__main__":\n    data.run()\n')
    code, out = run(work, "--select", "DL301", "--unsafe-fixes", "--output-format", "json")
    (finding,) = json.loads(out)
    assert finding["fix"]["applicability"] == "unsafe"
    assert finding["fix"]["edits"][0]["content"] == ', multiprocessing_context="spawn"'


def test_module_of_definitions_imported_by_nobody_is_not_a_script(tmp_path):
    work = copy_case(Case("projects/dl301_library_module", FIXTURES / "projects" / "dl301_library_module"), tmp_path)
    code, out = run(work, "--select", "DL301", "--unsafe-fixes", "--output-format", "json")
    (finding,) = json.loads(out)
    assert finding["fix"] is not None


@pytest.mark.parametrize(
    "loader, advice",
    [
        ("DataLoader(Local(), num_workers=2)", "move `Local` out of `build()` to module level"),
        ("DataLoader(Frames(), num_workers=2, collate_fn=lambda b: b)", "replace the `collate_fn` lambda with a function defined at module level"),
    ],
)
def test_worker_code_spawn_cannot_import(tmp_path, loader, advice):
    (tmp_path / ".git").mkdir()
    source = HAZARD + f"\n\ndef build():\n    class Local(Frames):\n        pass\n\n    return {loader}\n"
    (tmp_path / "m.py").write_text(source)
    code, out = run(tmp_path, "--select", "DL301", "--unsafe-fixes", "--output-format", "json")
    (finding,) = json.loads(out)
    assert finding["fix"] is None and advice in before_spawn(finding)


def notebook(cells: list[str]) -> str:
    return json.dumps(
        {
            "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c.splitlines(keepends=True)} for c in cells],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    ) + "\n"


def test_dataset_defined_in_a_notebook_gets_no_spawn_fix(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "explore.ipynb").write_text(notebook([HAZARD, "loader = DataLoader(Frames(), num_workers=2)\n"]))
    code, out = run(tmp_path, "--select", "DL301", "--unsafe-fixes", "--output-format", "json")
    (finding,) = json.loads(out)
    assert finding["fix"] is None and "move `Frames` from the notebook into a module" in before_spawn(finding)
    # imported from a module, the same loader in a notebook can use spawn (a notebook is not re-imported)
    (tmp_path / "frames.py").write_text(HAZARD)
    (tmp_path / "explore.ipynb").write_text(notebook(["from torch.utils.data import DataLoader\nfrom frames import Frames\n", "loader = DataLoader(Frames(), num_workers=2)\n"]))
    code, out = run(tmp_path, "--select", "DL301", "--unsafe-fixes", "--output-format", "json")
    (finding,) = json.loads(out)
    assert finding["fix"] is not None


def test_workers_that_may_be_zero_get_a_context_only_with_workers(tmp_path):
    """`num_workers=workers` may be 0, where DataLoader rejects any context (DL304): the fix passes
    it only with workers, and the fixed loader builds with 0 workers as before."""
    pytest.importorskip("torch")
    pytest.importorskip("cv2")
    from golden import import_fixture

    work = copy_case(Case("dl301/positive_guarded_script", FIXTURES / "dl301" / "positive_guarded_script.py"), tmp_path)
    code, out = run(work, "--fix", "--unsafe-fixes")
    fixed = (work / "positive_guarded_script.py").read_text()
    assert 'num_workers=workers, multiprocessing_context="spawn" if workers > 0 else None)' in fixed
    assert " DL304 " not in out
    mod = import_fixture(work / "positive_guarded_script.py", tmp_path, "dl301_guarded_fixed")
    assert mod.make_loader(0).multiprocessing_context is None
    assert mod.make_loader(2).multiprocessing_context.get_start_method() == "spawn"


def test_rule_docs_say_when_the_fix_is_offered():
    from dllint.rules import rule_by_code

    text = rule_by_code("DL301").render_docs()
    safety = " ".join(text.split("## Fix safety", 1)[1].split("\n## ", 1)[0].split())
    for words in (
        'every entry script that reaches the loader has an `if __name__ == "__main__":` guard',
        "the worker code is importable by name",
        "defined in a notebook, under the main guard or inside a function",
        "is not a lambda",
        "Otherwise there is no fix and the finding's details say what to change first",
    ):
        assert words in safety, words
