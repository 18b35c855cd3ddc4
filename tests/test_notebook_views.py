"""Notebooks as their user sees them: every output, message, diff and fix edit in cell coordinates
and the cells' own text (never the merged, masked module dllint analyses), and bad notebooks
anywhere in the project as one notebook's error, never a crashed run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from golden import run_dllint

from dllint.notebook import read_notebook

CELL_MAGIC_AND_NOQA = [
    ("markdown", "# Title\n"),
    ("code", "%matplotlib inline\nimport torch.multiprocessing as mp\n"),
    ("code", "!pip install numpy\nx = 1  # noqa: DL302\ny = 2\n"),
]


def notebook(cells, indent=1, **dump) -> str:
    doc = {
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": src.splitlines(True), **({"execution_count": None, "outputs": []} if kind == "code" else {})}
            for kind, src in cells
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(doc, indent=indent, ensure_ascii=False, **dump) + "\n"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "nb.ipynb").write_text(notebook(CELL_MAGIC_AND_NOQA), encoding="utf-8")
    return tmp_path


def run(work: Path, *args: str) -> tuple[int, str]:
    """``dllint ARGS`` in ``work`` (only the paths given: run_dllint always adds ``.``)."""
    from click.testing import CliRunner

    from dllint.cli import cli

    old = os.getcwd()
    os.chdir(work)
    try:
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.output


def check(work: Path, *args: str) -> tuple[int, str]:
    return run_dllint(work, ["check", "--select", "ALL", "--target-version", "py311", *args])


# ---------------------------------------------------------------------------- outputs


def test_diff_shows_each_changed_cell_in_its_own_text(work):
    code, out = check(work, "--diff")
    assert code == 1
    # one diff per changed cell, named by cell, holding the cell's own lines: the shell escape as
    # written, not the `pass` that stands for it in the analysed module
    assert "--- nb.ipynb:cell 3\n+++ nb.ipynb:cell 3\n" in out
    assert " !pip install numpy\n-x = 1  # noqa: DL302\n+x = 1\n y = 2\n" in out
    assert "\n pass\n" not in out and "cell 2" not in out


def test_full_output_shows_the_cells_own_text(work):
    _, out = check(work, "--output-format", "full")
    assert "nb.ipynb:cell 3:line 2:8: DL001" in out
    assert "1 | !pip install numpy" in out and "| pass" not in out
    # the fix, numbered within its cell
    assert "  cell 3\n" in out and "  2   |- x = 1  # noqa: DL302" in out and "    2 |+ x = 1" in out


def test_json_fix_edits_are_in_cell_coordinates(work):
    _, out = check(work, "--output-format", "json")
    [finding] = json.loads(out)
    assert (finding["cell"], finding["location"], finding["noqa_row"]) == (3, {"row": 2, "column": 8}, 2)
    [edit] = finding["fix"]["edits"]
    # merged rows would say row 4: the row in cell 3 is 2
    assert edit == {"content": "", "location": {"row": 2, "column": 6}, "end_location": {"row": 2, "column": 21}, "cell": 3}
    _, lines = check(work, "--output-format", "json-lines")
    assert json.loads(lines.splitlines()[0])["fix"]["edits"] == [edit]


def test_github_and_sarif_name_the_text_outputs_coordinates(work):
    _, text = check(work, "--output-format", "concise", "-q")
    assert text.startswith("nb.ipynb:cell 3:line 2:8: DL001")
    _, github = check(work, "--output-format", "github")
    assert "::cell 3:line 2:8: Unused" in github
    _, sarif = check(work, "--output-format", "sarif")
    [result] = json.loads(sarif)["runs"][0]["results"]
    assert result["message"]["text"].startswith("cell 3:line 2:8: Unused")
    assert result["locations"][0]["properties"]["cellRegion"]["startLine"] == 2


def test_add_noqa_writes_into_the_notebooks_cells(work):
    path = work / "nb.ipynb"
    path.write_text(notebook([("code", '%matplotlib inline\nimport torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\n')]))
    before = json.loads(path.read_text())
    code, out = check(work, "--add-noqa")
    assert code == 0 and "Added 1 noqa directive in 1 file." in out, out
    after = json.loads(path.read_text())
    assert after["cells"][0]["source"] == [
        "%matplotlib inline\n", "import torch.multiprocessing as mp\n", 'mp.set_sharing_strategy("file_system")  # noqa: DL302\n'
    ]
    assert {k: v for k, v in after["cells"][0].items() if k != "source"} == {k: v for k, v in before["cells"][0].items() if k != "source"}
    assert check(work, "-q") == (0, "")


# ---------------------------------------------------------------------------- locations in messages


def test_a_message_names_a_notebook_location_by_cell_and_line(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "nb.ipynb").write_text(notebook([
        ("code", "%matplotlib inline\nimport torch\nfrom torch.utils.data import DataLoader, Dataset\n"),
        ("code", "!pip install x\nclass DS(Dataset):\n    def __init__(self):\n        self.mean = torch.zeros(3).cuda()\n"
                 "    def __len__(self):\n        return 10\n    def __getitem__(self, i):\n        return self.mean + i\n"),
        ("code", "loader = DataLoader(DS(), num_workers=4)\n"),
    ]))
    _, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "--output-format", "json"])
    [finding] = json.loads(out)
    # the hazard is line 4 of cell 2 (row 7 of the merged module), named in the details
    [hazard] = finding["details"]["hazards"]
    assert "nb.ipynb:cell 2:line 4" in hazard, hazard
    assert "nb.ipynb:7" not in json.dumps(finding)


def test_message_locations_every_spelling(tmp_path, monkeypatch):
    from dllint.notebook import MessageLocations

    nb = read_notebook(notebook([("markdown", "x"), ("code", "a = 1\nb = 2\n"), ("code", "c = 3\nd = 4\n")]).encode())
    monkeypatch.chdir(tmp_path)
    path = str(tmp_path / "sub" / "nb.ipynb")
    rewrite = MessageLocations({path: nb})
    assert rewrite("hazard at sub/nb.ipynb:3; pass", "/x.py") == "hazard at sub/nb.ipynb:cell 3:line 1; pass"
    assert rewrite("passed as `x` (nb.ipynb:4)", "/x.py") == "passed as `x` (nb.ipynb:cell 3:line 2)"
    assert rewrite(f"at {path}:2:5 here", "/x.py") == f"at {path}:cell 2:line 2:5 here"
    assert rewrite("read at line 4 of nb.ipynb.", "/x.py") == "read at cell 3, line 2 of nb.ipynb."
    # a bare "line N" is a row of the finding's own file: rewritten in a notebook's finding only
    assert rewrite("reassigned (line 3)", path) == "reassigned (cell 3, line 1)"
    assert rewrite("reassigned (line 3)", "/x.py") == "reassigned (line 3)"
    # other files, longer names and rows outside the cells stay as they are
    assert rewrite("line 3 of data.py; xnb.ipynb:3; nb.ipynb:9", path) == "line 3 of data.py; xnb.ipynb:3; nb.ipynb:9"


# ---------------------------------------------------------------------------- bad notebooks


def _deep(tmp_path: Path) -> str:
    return '{"cells": [], "metadata": ' + "[" * 100000 + "]" * 100000 + "}"


def _language_string(tmp_path: Path) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": ["import torch\n"]}],
                       "metadata": {"language_info": "python", "kernelspec": "python3"}, "nbformat": 4})


def _surrogate(tmp_path: Path) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": ["import torch\n", "x = '\ud800'\n"]}],
                       "metadata": {}, "nbformat": 4})


@pytest.mark.parametrize("make,why", [
    (_deep, "nested too deeply"),
    (_language_string, None),  # read as a Python notebook: nothing to report
    (_surrogate, "lone surrogate"),
])
def test_a_bad_notebook_never_crashes_a_run(tmp_path, make, why):
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "bad.ipynb").write_text(make(tmp_path), encoding="utf-8")
    # a run that never named it: not reported, no crash
    assert run(tmp_path, "check", "train.py") == (0, "All checks passed!\n")
    assert run(tmp_path, "check", ".") == (0, "All checks passed!\n") if why is None else run(tmp_path, "check", ".")[0] == 1
    code, out = run(tmp_path, "check", "--output-format", "concise", "-q", "bad.ipynb")
    if why is None:
        assert (code, out) == (0, "")
    else:
        assert code == 1 and out.startswith("bad.ipynb:1:1: DL000") and why in out, out


def test_a_string_where_a_cell_should_be_does_not_crash_fix(tmp_path):
    (tmp_path / ".git").mkdir()
    doc = json.loads(notebook([("code", "import torch.multiprocessing as mp\nx = 1  # noqa: DL302\n")]))
    doc["cells"].insert(0, "not a cell")
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    code, out = run_dllint(tmp_path, ["check", "--fix"])
    assert code == 0 and "internal error" not in out, out
    after = json.loads(path.read_text())
    assert after["cells"][0] == "not a cell" and after["cells"][1]["source"] == ["import torch.multiprocessing as mp\n", "x = 1\n"]


def test_a_notebook_with_a_bom_is_fixed_and_keeps_it(tmp_path):
    (tmp_path / ".git").mkdir()
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + notebook([("code", "import torch.multiprocessing as mp\nx = 1  # noqa: DL302\n")]).encode())
    code, out = run_dllint(tmp_path, ["check", "--fix"])
    assert code == 0 and "cannot be reproduced" not in out, out
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and json.loads(raw[3:])["cells"][0]["source"][1] == "x = 1\n"


def test_a_fix_a_notebook_cannot_take_is_never_counted_as_fixable(tmp_path):
    (tmp_path / ".git").mkdir()
    path = tmp_path / "nb.ipynb"
    # a JSON layout json.dumps cannot reproduce: dllint never rewrites this notebook
    path.write_text(notebook([("code", "import torch.multiprocessing as mp\nx = 1  # noqa: DL302\n")], indent=2, separators=(",", " : ")))
    before = path.read_bytes()
    for args in ([], ["--fix"]):
        code, out = run_dllint(tmp_path, ["check", "--output-format", "concise", *args])
        assert code == 1
        assert "nb.ipynb:cell 1:line 2:8: DL001 Unused" in out, out  # no [*]
        assert "fixable" not in out and out.rstrip().endswith("Found 1 error.")
    assert path.read_bytes() == before
    _, out = run_dllint(tmp_path, ["check", "--output-format", "json"])
    assert json.loads(out)[0]["fix"]["applicability"] == "display"
    assert "formatting cannot be reproduced" in json.loads(out)[0]["fix"]["message"]


def test_a_fix_that_fix_could_not_apply_is_shown_as_a_suggestion():
    """A fix --fix tried and could not apply (it would not parse; it would change a notebook line
    holding IPython syntax) is reported after the run as a suggestion, not as fixable."""
    from dllint.commands.check import not_applied
    from dllint.model import Diagnostic, Edit, Fix, Span

    d = Diagnostic("DL001", "m", "/p.ipynb", Span(1, 1, 1, 2), fix=Fix("safe", "Remove", (Edit("", Span(1, 1, 1, 2)),)))
    [kept] = not_applied([d], {("/p.ipynb", "DL001", 1, 1): "the notebook cannot take it (IPython line)"})
    assert kept.fix.applicability == "display" and kept.fix.edits == d.fix.edits
    assert kept.message.endswith("(fix withheld: the notebook cannot take it (IPython line))")
    assert not_applied([d], {}) == [d]
