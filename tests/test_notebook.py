"""Notebooks: code cells linted as one module, findings at cell and line, fixes written back into
only the changed cells, and DL106 (plus the runtime proof of the failure it reports)."""

from __future__ import annotations

import difflib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from golden import run_dllint

from dllint.notebook import NotebookError, mask_cell, read_notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "fixtures" / "notebooks"


def project(tmp_path: Path, *names: str) -> Path:
    """An isolated project (its own root, default settings) holding copies of the notebooks."""
    work = tmp_path / "proj"
    work.mkdir()
    (work / ".git").mkdir()
    for name in names:
        shutil.copy(NOTEBOOKS / name, work / name)
    return work


def lint(work: Path, *args: str) -> tuple[int, str]:
    return run_dllint(work, ["check", "--select", "ALL", "--output-format", "concise", "-q", "--target-version", "py311", *args])


def notebook(cells: list[tuple[str, str]], language: str = "python") -> str:
    doc = {
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": src.splitlines(True), **({"execution_count": None, "outputs": []} if kind == "code" else {})}
            for kind, src in cells
        ],
        "metadata": {"language_info": {"name": language}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------- masking


def test_masking_keeps_every_line_and_position():
    cell = [
        "%matplotlib inline",
        "import os",
        "!pip install \\",
        "    numpy",
        "files = !ls data",
        "os.path.join?",
        "??os",
        "for i in range(3):",
        "    !echo {i}",
        "    t = %timeit -o i",
        "x = 1",
    ]
    masked = mask_cell(cell)
    assert len(masked) == len(cell)
    assert masked[1] == "import os" and masked[-1] == "x = 1" and masked[7] == "for i in range(3):"
    assert masked[0] == "pass" and masked[2] == "pass" and masked[3] == ""
    assert masked[4] == "files = get_ipython()"  # the name's value is unknown, not a constant
    assert masked[5] == "pass" and masked[6] == "pass"
    assert masked[8] == "    pass" and masked[9] == "    t = get_ipython()"
    compile("\n".join(masked), "<cell>", "exec")


def test_magics_called_without_percent_are_masked_when_not_python():
    """Jupyter runs ``ls ./data``, ``cd ..`` or ``pip install x`` as magics (automagic): they are
    masked like ``%ls``. A line that is Python by itself stays (``time = 3``, ``pwd``, ``ls(x)``,
    ``ls -la``), and so does every line of a cell that parses."""
    cell = ["ls ./embeddings/", "cd ..", "    pip install -U numpy", "time = 3", "pwd", "ls(x)", "ls -la", "y = time"]
    masked = mask_cell(["for _ in x:"] + cell[:3] + ["print(y"])  # (a cell that does not parse)
    assert masked == ["for _ in x:", "pass", "pass", "    pass", "print(y"]
    masked = mask_cell(cell)
    assert masked == ["pass", "pass", "    pass", "time = 3", "pwd", "ls(x)", "ls -la", "y = time"]
    assert mask_cell(cell[3:]) == cell[3:]  # valid Python: untouched
    assert mask_cell(["run train.py --epochs 3", "import os"]) == ["pass", "import os"]


def test_a_notebook_with_automagic_lines_is_no_syntax_error(tmp_path):
    work = project(tmp_path)
    cells = [("code", "from torch.utils.data import DataLoader\nls ./embeddings/"), ("code", "cd data\nx = 1")]
    (work / "n.ipynb").write_text(notebook(cells))
    assert lint(work) == (0, "")
    # a cell that still does not parse once `cd data` is masked: that error is reported
    (work / "n.ipynb").write_text(notebook([cells[0], ("code", "cd data\nx = (")]))
    assert lint(work) == (1, "n.ipynb:cell 2:line 2:5: DL000 syntax error: '(' was never closed\n")


def test_cell_magic_skips_the_cell_and_valid_cells_are_untouched():
    assert mask_cell(["%%bash", "echo (", "ls"]) == ["", "", ""]
    # a valid cell is never masked, even where a line of a string starts with %
    text = ['s = """', "%d items", '"""', "y = s % 3"]
    assert mask_cell(text) == text


# ---------------------------------------------------------------------------- positions


def test_finding_named_by_cell_and_line_in_text_and_json(tmp_path):
    work = project(tmp_path, "sharing_strategy.ipynb")
    code, out = lint(work)
    # cell 4 (markdown cell 1 counts), line 4: after a loop holding a shell escape and a line magic;
    # the %%bash cell (not Python) and the magics of cell 2 neither fail nor shift anything
    assert out == (
        'sharing_strategy.ipynb:cell 4:line 4:1: DL302 Sharing strategy "file_system" leaks /dev/shm segments '
        "when a worker is killed\n"
    )
    assert code == 1
    code, out = run_dllint(work, ["check", "--output-format", "json", "--target-version", "py311"])
    [finding] = json.loads(out)
    assert finding["cell"] == 4
    assert finding["location"] == {"row": 4, "column": 1}
    assert finding["end_location"] == {"row": 4, "column": 39}
    src = json.loads((work / "sharing_strategy.ipynb").read_text(encoding="utf-8"))["cells"][3]["source"]
    assert src[3].startswith('mp.set_sharing_strategy("file_system")')


def test_row_to_cell_mapping_counts_every_cell():
    nb = read_notebook(notebook([("markdown", "# t\n"), ("code", "a = 1\nb = 2\n"), ("code", ""), ("code", "c = 3")]).encode())
    assert nb.text == "a = 1\nb = 2\nc = 3\n"
    assert [nb.cell_position(r) for r in (1, 2, 3)] == [(2, 1), (2, 2), (4, 1)]
    assert nb.cell_row_offset(3) == (4, 2)


def test_python_files_and_notebooks_are_discovered_together(tmp_path):
    work = project(tmp_path, "sharing_strategy.ipynb")
    (work / "script.py").write_text('import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\n')
    (work / ".ipynb_checkpoints").mkdir()
    shutil.copy(NOTEBOOKS / "sharing_strategy.ipynb", work / ".ipynb_checkpoints" / "x.ipynb")  # excluded
    code, out = lint(work, ".")
    assert code == 1
    lines = out.splitlines()
    assert [ln.split(" DL302")[0] for ln in lines] == ["script.py:2:1:", "sharing_strategy.ipynb:cell 4:line 4:1:"]


def test_broken_or_foreign_notebooks_never_crash(tmp_path):
    work = tmp_path / "p"
    work.mkdir()
    (work / ".git").mkdir()
    (work / "broken.ipynb").write_text("{not json")
    (work / "r.ipynb").write_text(notebook([("code", 'set_sharing_strategy("file_system")\nlibrary(torch)\n')], language="R"))
    (work / "bad_cell.ipynb").write_text(notebook([("code", "import torch\ndef f(:\n")]))
    code, out = lint(work, "broken.ipynb", "r.ipynb", "bad_cell.ipynb")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("bad_cell.ipynb:cell 1:line 2:") and "DL000" in lines[0]
    assert lines[1].startswith("broken.ipynb:1:1: DL000") and "not a notebook" in lines[1]
    assert len(lines) == 2  # the R notebook holds no Python: nothing to say


# ---------------------------------------------------------------------------- writing back


def test_fix_changes_only_that_cells_source(tmp_path):
    work = project(tmp_path, "unused_noqa.ipynb")
    path = work / "unused_noqa.ipynb"
    before_bytes = path.read_bytes()
    code, out = lint(work)
    assert out == "unused_noqa.ipynb:cell 3:line 1:21: DL001 [*] Unused `noqa` directive (unused: `DL302`)\n"
    code, out = run_dllint(work, ["check", "--select", "ALL", "--fix", "-q", "--target-version", "py311"])
    assert code == 0, out
    after_bytes = path.read_bytes()
    before, after = json.loads(before_bytes), json.loads(after_bytes)
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [2]
    assert {k: v for k, v in after["cells"][2].items() if k != "source"} == {
        k: v for k, v in before["cells"][2].items() if k != "source"
    }  # outputs, execution count, metadata kept
    assert after["cells"][2]["source"] == ["x = torch.zeros(3)\n", "print(x)"]  # no newline added at the end
    assert after["metadata"] == before["metadata"] and list(after) == list(before)
    # byte-level: the only changed line of the file is that source line; indent, non-ASCII text
    # (kept unescaped) and the trailing newline are as they were
    diff = [
        ln
        for ln in difflib.unified_diff(before_bytes.decode().splitlines(), after_bytes.decode().splitlines(), n=0, lineterm="")
        if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))
    ]
    assert diff == ['-    "x = torch.zeros(3)  # noqa: DL302\\n",', '+    "x = torch.zeros(3)\\n",']
    assert "Température" in after_bytes.decode() and after_bytes.endswith(b"}\n")
    # converged: a second run changes nothing
    run_dllint(work, ["check", "--select", "ALL", "--fix", "-q", "--target-version", "py311"])
    assert path.read_bytes() == after_bytes


def test_fix_from_stdin_prints_the_notebook(tmp_path):
    work = project(tmp_path, "unused_noqa.ipynb")
    raw = (work / "unused_noqa.ipynb").read_text(encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "dllint", "check", "-", "--stdin-filename", "unused_noqa.ipynb", "--fix", "--select", "ALL", "-q"],
        cwd=work, input=raw, capture_output=True, text=True, timeout=120, check=False,
    )
    fixed = json.loads(proc.stdout)
    assert fixed["cells"][2]["source"][0] == "x = torch.zeros(3)\n"
    assert proc.stdout == raw.replace("  # noqa: DL302", "")


def test_write_back_places_inserted_lines_in_their_cell_and_restores_magics():
    raw = notebook([("code", "%matplotlib inline\nimport os\n"), ("markdown", "m"), ("code", "a = 1\nb = 2")]).encode()
    nb = read_notebook(raw)
    assert nb.text == "pass\nimport os\na = 1\nb = 2\n"
    cells = json.loads(nb.with_python("pass\nimport os, sys\na = 1\nb = 2\n"))["cells"]
    assert cells[0]["source"] == ["%matplotlib inline\n", "import os, sys\n"]  # the magic line is restored
    assert cells[2]["source"] == ["a = 1\n", "b = 2"]
    cells = json.loads(nb.with_python("pass\nimport os\nc = 0\na = 1\nb = 3\n"))["cells"]
    assert cells[0]["source"] == ["%matplotlib inline\n", "import os\n"]
    assert cells[2]["source"] == ["c = 0\n", "a = 1\n", "b = 3"]  # an insertion before a cell's first line joins that cell
    assert json.loads(nb.with_python(nb.text + "d = 4\n"))["cells"][2]["source"] == ["a = 1\n", "b = 2\n", "d = 4"]
    with pytest.raises(NotebookError, match="IPython syntax"):
        nb.with_python("x = 1\nimport os\na = 1\nb = 2\n")  # would overwrite the magic line
    with pytest.raises(NotebookError, match="more than one cell"):
        nb.with_python("pass\nimport os, a\n")


def test_insertions_never_go_above_a_cell_magic():
    nb = read_notebook(notebook([("code", "%%bash\necho hi\n"), ("code", "a = 1\n")]).encode())
    assert nb.text == "\n\na = 1\n"
    cells = json.loads(nb.with_python("import os\n" + nb.text))["cells"]
    assert cells[0]["source"] == ["%%bash\n", "echo hi\n"]  # the magic stays the cell's first line
    assert cells[1]["source"] == ["import os\n", "a = 1\n"]


def test_windows_newlines_and_escaped_unicode_are_kept():
    doc = json.loads(notebook([("code", "a = 1  # é\n"), ("code", "b = 2\n")]))
    raw = (json.dumps(doc, indent=2, ensure_ascii=True).replace("\n", "\r\n") + "\r\n").encode()
    nb = read_notebook(raw)
    out = nb.with_python(nb.text.replace("b = 2", "b = 3"))
    assert out == raw.replace(b'"b = 2\\n"', b'"b = 3\\n"')
    compact = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()  # one line, no spaces, no newline
    nb = read_notebook(compact)
    assert nb.with_python(nb.text.replace("b = 2", "b = 3")) == compact.replace(b'"b = 2\\n"', b'"b = 3\\n"')


def test_unreproducible_json_is_never_rewritten():
    doc = json.loads(notebook([("code", "a = 1\n")]))
    raw = json.dumps(doc, indent=2, separators=(",", " : ")).encode()  # a formatting json cannot reproduce
    nb = read_notebook(raw)
    assert nb.with_python(nb.text) == raw  # no change: the bytes as they are
    with pytest.raises(NotebookError, match="formatting"):
        nb.with_python("a = 2\n")


# ---------------------------------------------------------------------------- rules in notebooks


def test_dl106_notebook_dataset_under_spawn(tmp_path):
    work = project(tmp_path, "main_module_dataset.ipynb")
    code, out = lint(work)
    assert code == 1
    # the spawn loader (cell 4, line 2, after a shell escape) is reported; the fork loader is not
    assert out == (
        "main_module_dataset.ipynb:cell 4:line 2:10: DL106 `Squares` (dataset class) is defined in the notebook: "
        "spawn workers cannot load it\n"
    )


def test_dl106_silent_when_the_dataset_is_imported(tmp_path):
    work = tmp_path / "p"
    work.mkdir()
    (work / ".git").mkdir()
    (work / "squares.py").write_text(
        "from torch.utils.data import Dataset\n\n\nclass Squares(Dataset):\n"
        "    def __len__(self):\n        return 8\n\n    def __getitem__(self, i):\n        return i * i\n"
    )
    (work / "nb.ipynb").write_text(notebook([
        ("code", "from torch.utils.data import DataLoader\nfrom squares import Squares\n"),
        ("code", 'loader = DataLoader(Squares(), num_workers=2, multiprocessing_context="spawn")\n'),
    ]))
    code, out = lint(work)
    assert (code, out) == (0, "")


def test_dl106_notebook_follows_the_targets_start_method(tmp_path):
    work = project(tmp_path, "copy_on_read.ipynb")
    _, py311 = lint(work)  # Linux, Python 3.11: fork, so the notebook's class is inherited
    assert "DL106" not in py311
    _, py314 = lint(work, "--target-version", "py314")  # forkserver: pickled by reference
    assert "copy_on_read.ipynb:cell 6:line 1:10: DL106 `Frames` (dataset class) is defined in the notebook: forkserver workers" in py314


def test_copy_on_read_in_a_notebook_at_cell_and_line(tmp_path):
    if importlib.util.find_spec("dllint.rules.dl101_copy_on_read_container") is None:
        pytest.skip("DL101 (copy-on-read-container) is not in this checkout yet")
    work = project(tmp_path, "copy_on_read.ipynb")
    code, out = lint(work)
    assert code == 1
    dl101 = [ln for ln in out.splitlines() if " DL101" in ln]
    # `self.files = sorted(glob.glob(...))` is line 3 of cell 3 (cell 1 is markdown, cell 5 a
    # %%time cell); the loader with 4 workers is in cell 6
    assert len(dl101) == 1 and dl101[0].startswith("copy_on_read.ipynb:cell 3:line 3:9: DL101 [*] `self.files`"), out
    path = work / "copy_on_read.ipynb"
    before_bytes = path.read_bytes()
    before = json.loads(before_bytes)
    run_dllint(work, ["check", "--select", "ALL", "--fix", "-q", "--target-version", "py311"])
    after = json.loads(path.read_bytes())
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [2]  # only the Dataset's cell
    assert {k: v for k, v in after["cells"][2].items() if k != "source"} == {k: v for k, v in before["cells"][2].items() if k != "source"}
    new_source = "".join(after["cells"][2]["source"])
    assert "class _CompactList" in new_source and "self.files = _CompactList(self.files)" in new_source
    assert after["cells"][4]["source"] == ["%%time\n", "print('timing')\n"]  # the magic cell is untouched
    _, again = lint(work)
    assert " DL101" not in again


# ---------------------------------------------------------------------------- the runtime proof (DL106)

DATASET = textwrap.dedent(
    """
    class Squares(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return i * i
    """
)
LOADER = 'print(sorted(int(x) for x in DataLoader(Squares(), num_workers=1, multiprocessing_context="spawn")))'
IMPORTS = "from torch.utils.data import DataLoader, Dataset\n"


def _run(args, cwd, **kw):
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=240, env=env, check=False, **kw)


def test_runtime_main_module_dataset_fails_under_spawn(tmp_path):
    pytest.importorskip("torch")
    # like a notebook kernel, `python -c` has a __main__ without a file: the worker cannot find it
    proc = _run(["-c", IMPORTS + DATASET + LOADER], tmp_path)
    assert proc.returncode != 0
    assert "AttributeError: Can't get attribute 'Squares' on <module '__main__'" in proc.stderr
    # a script defining the class under the main guard: the worker's __mp_main__ lacks it
    script = tmp_path / "guarded.py"
    script.write_text(IMPORTS + 'if __name__ == "__main__":\n' + textwrap.indent(DATASET + LOADER, "    ") + "\n")
    proc = _run([str(script)], tmp_path)
    assert proc.returncode != 0
    assert "AttributeError: Can't get attribute 'Squares' on <module '__mp_main__'" in proc.stderr
    # and dllint reports both layouts it can see (the guarded script; the -c code as a notebook cell)
    (tmp_path / ".git").mkdir()
    (tmp_path / "nb.ipynb").write_text(notebook([("code", IMPORTS + DATASET + LOADER)]))
    _, out = lint(tmp_path, "guarded.py", "nb.ipynb")
    assert [ln.split(":")[0] for ln in out.splitlines() if "DL106" in ln] == ["guarded.py", "nb.ipynb"]


def test_runtime_importable_dataset_works_under_spawn(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "squares.py").write_text("from torch.utils.data import Dataset\n" + DATASET)
    proc = _run(["-c", "from torch.utils.data import DataLoader\nfrom squares import Squares\n" + LOADER], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[0, 1, 4, 9]"
    # a class at the top level of a script (loader under the guard) works too: DL106 stays silent
    script = tmp_path / "toplevel.py"
    script.write_text(IMPORTS + DATASET + 'if __name__ == "__main__":\n    ' + LOADER + "\n")
    proc = _run([str(script)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[0, 1, 4, 9]"
    # and under forkserver (Python 3.14's Linux default), which preloads the script as __mp_main__
    forkserver = tmp_path / "toplevel_forkserver.py"
    forkserver.write_text(script.read_text().replace('"spawn"', '"forkserver"'))
    proc = _run([str(forkserver)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[0, 1, 4, 9]"
    (tmp_path / ".git").mkdir()
    assert lint(tmp_path, "toplevel.py", "toplevel_forkserver.py") == (0, "")
