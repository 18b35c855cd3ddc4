"""DL304's fix keeps what each option means: evaluated with workers (nw > 0) the fixed expression
gives the original value, without (nw == 0) it gives what DataLoader accepts (None, or False for
persistent_workers). And code that expects the ValueError is left alone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from golden import run_dllint

# value expression, the names it reads
SHAPES = [
    ("4", {}),
    ("4 if fast else 2", {"fast": False}),
    ("4 if fast else 2", {"fast": True}),
    ("(4 if fast else 2)", {"fast": False}),
    ("4 if fast else 3 if slow else 2", {"fast": False, "slow": False}),
    ("True if fast else 1", {"fast": False}),
    ("(\n    4  # deep\n)", {}),
    ('"fork" if fast else "spawn"', {"fast": False}),
    ("lambda: 4", {}),
    ("a or b", {"a": 0, "b": 3}),
    ("a and b", {"a": 1, "b": 3}),
    ("not a", {"a": 0}),
    ("(k := 4)", {}),
    ("(1, 2)", {}),
    ("x + 1 if y else z", {"x": 1, "y": 0, "z": 5}),
    ("[*a]", {"a": (1, 2)}),
    ("f(x)", {"f": lambda v: v * 2, "x": 3}),
    ("a if b else (lambda: c)", {"a": 1, "b": 0, "c": 7}),
]
OPTIONS = ["prefetch_factor", "persistent_workers", "multiprocessing_context"]
WITHOUT = {"prefetch_factor": None, "persistent_workers": False, "multiprocessing_context": None}


def observe(value):
    """What DataLoader sees of a value (a lambda: what it returns)."""
    if callable(value):
        return ("callable", value())
    return (type(value), value)


def keyword_values(text: str, name: str) -> list[str]:
    """The source of ``name=`` in every call of the module, in order."""
    tree = ast.parse(text)
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    return [ast.get_source_segment(text, k.value) for c in calls for k in c.keywords if k.arg == name]


def check_meaning(original: str, fixed: str, name: str, env: dict) -> None:
    for nw in (2, 0):
        scope = {**env, "nw": nw}
        got = eval(f"({fixed})", dict(scope))
        if nw > 0:
            assert observe(got) == observe(eval(f"({original})", dict(scope))), (original, fixed)
        else:
            assert got is WITHOUT[name], (original, fixed, got)


@pytest.mark.parametrize("name", OPTIONS)
@pytest.mark.parametrize("shape", range(len(SHAPES)), ids=[s for s, _ in SHAPES])
def test_guard_keeps_the_value_with_workers_and_drops_it_without(shape, name):
    """Every value shape, through the fix builder itself (most shapes are not flagged by the rule,
    whose values must be constants, but the builder must be right for any)."""
    from dllint.fixes.cst import CstSource
    from dllint.fix import apply_edits
    from dllint.model import Diagnostic, Fix, Span

    value, env = SHAPES[shape]
    text = f"DataLoader(ds, num_workers=nw, {name}={value})\n"
    call = ast.parse(text).body[0].value
    span = Span(call.lineno, call.col_offset + 1, call.end_lineno, call.end_col_offset + 1)
    from dllint.fixes.keywords import guard_keyword

    edits = guard_keyword(CstSource(text), span, name, "nw")
    assert edits, value
    fixed_text, _ = apply_edits(text, [Diagnostic("DL304", "m", "p", span, fix=Fix("safe", "m", edits))])
    (fixed,) = keyword_values(fixed_text, name)
    (original,) = keyword_values(text, name)
    check_meaning(original, fixed, name, env)


FLAGGED = [  # values the rule flags (constants, or conditional choices between constants)
    ("prefetch_factor", "4"),
    ("prefetch_factor", "4 if fast else 2"),
    ("prefetch_factor", "(4 if fast else 2)"),
    ("prefetch_factor", "4 if fast else 3 if slow else 2"),
    ("prefetch_factor", "(\n            4  # deep\n        )"),
    ("persistent_workers", "True"),
    ("persistent_workers", "1"),
    ("persistent_workers", "True if fast else 1"),
    ("multiprocessing_context", '"spawn"'),
    ("multiprocessing_context", '"fork" if fast else "spawn"'),
]


def test_rule_fix_keeps_the_meaning_of_every_flagged_shape(tmp_path):
    """End to end: the flagged shapes, fixed by `dllint --fix`, evaluated with and without workers
    (the old fix wrote `4 if fast else 2 if nw > 0 else None`: 4 when fast, even without workers)."""
    lines = ["from torch.utils.data import DataLoader, TensorDataset", "", "ds = TensorDataset()", "", "", "def build(nw, fast, slow):", "    return ["]
    lines += [f"        DataLoader(ds, num_workers=nw, {name}={value})," for name, value in FLAGGED]
    text = "\n".join([*lines, "    ]", ""])
    (tmp_path / ".git").mkdir()
    (tmp_path / "shapes.py").write_text(text)
    code, out = run_dllint(tmp_path, ["check", "--select", "DL304", "--fix", "-q", "--target-version", "py311"])
    assert code == 0, out
    fixed_text = (tmp_path / "shapes.py").read_text()
    for name in OPTIONS:
        before, after = keyword_values(text, name), keyword_values(fixed_text, name)
        assert len(before) == len(after) == sum(1 for n, _ in FLAGGED if n == name)
        for original, fixed in zip(before, after):
            assert original != fixed
            for fast in (False, True):
                check_meaning(original, fixed, name, {"fast": fast, "slow": False})


EXPECTING = '''\
import contextlib
import unittest

import pytest
from pytest import raises
from torch.utils.data import DataLoader, TensorDataset

ds = TensorDataset()


def test_raises():
    with pytest.raises(ValueError, match="prefetch"):
        DataLoader(ds, prefetch_factor=2)
    with raises(ValueError):
        DataLoader(ds, persistent_workers=True)
    pytest.raises(ValueError, lambda: DataLoader(ds, persistent_workers=True))


class T(unittest.TestCase):
    def test_assert_raises(self):
        with self.assertRaises(ValueError):
            DataLoader(ds, num_workers=0, multiprocessing_context="spawn")
        with self.assertRaisesRegex(ValueError, "persistent"):
            DataLoader(ds, persistent_workers=True)
        self.assertRaises(ValueError, lambda: DataLoader(ds, prefetch_factor=2))


def fallback(n):
    try:
        return DataLoader(ds, num_workers=n, prefetch_factor=4)
    except (TypeError, ValueError):
        return DataLoader(ds, num_workers=n)


def suppressed():
    with contextlib.suppress(ValueError):
        return DataLoader(ds, persistent_workers=True)


def plain():
    return DataLoader(ds, persistent_workers=True)
'''


def test_code_that_expects_the_error_is_not_fixed(tmp_path):
    (tmp_path / ".git").mkdir()
    path = tmp_path / "test_loaders.py"
    path.write_text(EXPECTING)
    code, out = run_dllint(tmp_path, ["check", "--select", "DL304", "--output-format", "concise", "-q", "--target-version", "py311"])
    rows = {int(line.split(":")[1]): line for line in out.splitlines()}
    # tests asserting the ValueError: no finding; a try / suppress catching it: a finding, no fix
    assert sorted(rows) == [30, 37, 41], out
    assert "[*]" not in rows[30] and "[*]" not in rows[37] and "[*]" in rows[41]
    run_dllint(tmp_path, ["check", "--select", "DL304", "--fix", "-q", "--target-version", "py311"])
    assert path.read_text() == EXPECTING.replace(
        "def plain():\n    return DataLoader(ds, persistent_workers=True)", "def plain():\n    return DataLoader(ds)"
    )
