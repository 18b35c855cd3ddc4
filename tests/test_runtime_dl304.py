"""DL304 runtime proof: the DataLoader constructor raises the ValueError each finding predicts,
and the file after the real ``dllint --fix`` constructs every loader (and, with workers, the same
options as before)."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from golden import run_dllint_process

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "dl304"


def dllint(work: Path, *args: str) -> subprocess.CompletedProcess:
    return run_dllint_process(work, "check", "--select", "DL304", "-q", *args)


def copy(tmp_path: Path, name: str) -> Path:
    work = tmp_path / "case"
    work.mkdir()
    (work / ".git").mkdir()
    shutil.copy(FIXTURES / name, work / name)
    return work


def findings(work: Path) -> list[dict]:
    out = dllint(work, "--output-format", "json")
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def predicted(diag) -> list[str]:
    """The ValueError texts the finding predicts (one per offending option, in its details)."""
    return [e.split("ValueError: ", 1)[1] for e in diag["details"]["error"]]


def run_statements(path: Path) -> dict[int, BaseException | None]:
    """Execute the module's top-level statements one by one: first row -> the exception it raised."""
    tree = ast.parse(path.read_text())
    namespace: dict = {"__name__": "fixture"}
    results: dict[int, BaseException | None] = {}
    for stmt in tree.body:
        code = compile(ast.Module([stmt], []), str(path), "exec")
        try:
            exec(code, namespace)
            results[stmt.lineno] = None
        except Exception as exc:  # noqa: BLE001 - recorded and asserted on
            results[stmt.lineno] = exc
    return results


def statement_rows(path: Path) -> dict[int, int]:
    """Any row inside a top-level statement -> the statement's first row."""
    rows = {}
    for stmt in ast.parse(path.read_text()).body:
        for r in range(stmt.lineno, stmt.end_lineno + 1):
            rows[r] = stmt.lineno
    return rows


def test_literal_zero_raises_what_the_rule_predicts_and_the_fix_removes_it(tmp_path):
    work = copy(tmp_path, "positive_literal.py")
    path = work / "positive_literal.py"
    diags = findings(work)
    assert diags, "the fixture must be flagged"
    rows = statement_rows(path)
    before = run_statements(path)
    flagged = {rows[d["location"]["row"]] for d in diags}
    for d in diags:
        exc = before[rows[d["location"]["row"]]]
        assert isinstance(exc, ValueError), (d["message"], exc)
        # the statement raises one of the errors predicted for it (torch checks in a fixed order)
        same_stmt = [p for x in diags if rows[x["location"]["row"]] == rows[d["location"]["row"]] for p in predicted(x)]
        assert any(str(exc).startswith(p) for p in same_stmt), (str(exc), same_stmt)
    # statements not flagged run fine
    assert all(exc is None for row, exc in before.items() if row not in flagged)

    fixed = dllint(work, "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    after = run_statements(path)
    assert all(exc is None for exc in after.values()), after
    assert findings(work) == []


def _build(path: Path, workers: int):
    """Import the expression fixture with ``--workers N`` and call build() with N everywhere."""
    namespace: dict = {"__name__": "fixture"}
    old = sys.argv
    sys.argv = ["fixture", "--workers", str(workers)]
    try:
        exec(compile(path.read_text(), str(path), "exec"), namespace)
    finally:
        sys.argv = old
    cfg = SimpleNamespace(workers=str(workers), data=SimpleNamespace(workers=workers))
    return namespace["build"](cfg, workers)


def _raising_row(path: Path, workers: int) -> int | None:
    try:
        _build(path, workers)
    except ValueError as exc:
        tb = exc.__traceback__
        rows = []
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == str(path):
                rows.append(tb.tb_lineno)
            tb = tb.tb_next
        return rows[-1]
    return None


def test_expression_may_be_zero_and_fix_keeps_options_with_workers(tmp_path):
    work = copy(tmp_path, "positive_expression.py")
    path = work / "positive_expression.py"
    diags = findings(work)
    flagged_rows = sorted({d["location"]["row"] for d in diags})
    unfixable_rows = sorted({d["location"]["row"] for d in diags if d["fix"] is None})
    assert flagged_rows and unfixable_rows

    # with 0 workers the original crashes at the first flagged call; with 2 it builds fine
    assert _raising_row(path, 0) == flagged_rows[0]
    original = _build(path, 2)

    assert dllint(work, "--fix").returncode in (0, 1)
    # after the fix, only the call the rule could not fix still raises
    assert _raising_row(path, 0) == unfixable_rows[0]
    fixed = _build(path, 2)
    for a, b in zip(original, fixed):
        assert a.prefetch_factor == b.prefetch_factor
        assert a.persistent_workers == b.persistent_workers
        assert type(a.multiprocessing_context) is type(b.multiprocessing_context)
    # the fixed fork-started loaders run (one batch each, 2 workers; `val` uses spawn, which would
    # need the fixture importable by name)
    for loader in (fixed[0], fixed[2]):
        assert len(next(iter(loader))) > 0


def test_negative_fixture_constructs_without_error():
    """What the rule leaves alone really is fine: the guarded/None forms construct with 0 workers."""
    from torch.utils.data import DataLoader, TensorDataset

    ds = TensorDataset(torch.arange(4))
    for w in (0, 2):
        DataLoader(ds, num_workers=w, persistent_workers=w > 0)
        DataLoader(ds, num_workers=w, prefetch_factor=2 if w > 0 else None)
        DataLoader(ds, prefetch_factor=None, persistent_workers=False, multiprocessing_context=None)
