"""The measuring tools of bench/ that read dllint's internals: they must keep working as the
engine changes (a broken tool silently measures nothing)."""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", os.path.join(ROOT, "bench", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def project(tmp_path):
    """A multi-file fixture project (a Dataset in one module, its loader in another), copied."""
    dest = tmp_path / "proj"
    shutil.copytree(os.path.join(ROOT, "fixtures", "projects", "dl1_dl3_spawn_cross_file"), dest)
    (dest / ".git").mkdir(exist_ok=True)
    return dest


def test_plan_bound_gives_the_final_plan_up_front_with_the_same_findings(project, monkeypatch):
    tool = _tool("plan_bound")
    monkeypatch.chdir(project)
    _spent, analysed, found = tool._run(["."], None)
    assert analysed and all(p.endswith(".py") for p in analysed)
    assert "DL" in found  # the fixture has findings
    demanded: list[set[str]] = []
    import dllint.engine as engine

    original = engine.FactStore.compute

    def compute(self, items, *rest):
        demanded.append({item[0] for item in items})
        return original(self, items, *rest)

    monkeypatch.setattr(engine.FactStore, "compute", compute)
    _spent, _, hinted = tool._run(["."], analysed)
    assert hinted == found
    # every analysed file was parsed by the first round of facts or the hint's round, none later
    assert set().union(*demanded[:2]) >= analysed
    assert all(not d for d in demanded[2:])


def test_facts_equiv_extracts_recorded_jobs_of_either_shape(project):
    tool = _tool("facts_equiv")
    from dllint.facts.extract import extract
    from dllint.rules import all_rules
    from dllint.serial import dumps

    path = str(project / "train.py")
    data = open(path, "rb").read()
    rules = all_rules()
    expected = dumps(extract(path, "train", str(project), False, data, rules, frozenset(), frozenset()))
    assert dumps(tool._extract((path, "train", str(project), False, data, frozenset(), frozenset()), rules)) == expected
    # recordings made before the shadowed library names were part of a job
    assert dumps(tool._extract((path, "train", str(project), False, data, frozenset()), rules)) == expected


def test_editless_check_compares_the_marks_with_the_built_fixes(tmp_path, capsys):
    """bench/editless_check.py: on a project with fixable findings, both runs agree (exit 0) and
    the fixes compared are counted; a mark without a fix behind it is reported (exit 1)."""
    tool = _tool("editless_check")
    shutil.copytree(os.path.join(ROOT, "fixtures", "dl304"), tmp_path / "p")
    (tmp_path / "p" / "pyproject.toml").write_text("")
    assert tool.main([str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out
    fixes = int(out.strip().splitlines()[-1].split(", ")[1].split()[0])
    assert fixes > 0, out
    import dllint.rules.dl304_worker_only_args_without_workers as dl304
    from dllint.model import Fix

    cls = next(c for c in vars(dl304).values() if isinstance(c, type) and hasattr(c, "_fixes"))
    original = cls._fixes

    def broken(self, project, *args):  # a mark the built run does not have
        found = original(self, project, *args)
        return Fix("safe", "made up", ()) if found is None and not project.edits else found

    cls._fixes = broken
    try:
        assert tool.main([str(tmp_path / "p")]) == 1
    finally:
        cls._fixes = original
    assert "FIX DIFFERS" in capsys.readouterr().out


def test_survey_times_each_repository_and_compares_outputs(tmp_path, capsys):
    """Each folder with enough Python files is timed beside the ruff command given; with
    ``--compare`` the other dllint's output is compared (here the same code: equal)."""
    tool = _tool("survey")
    repos = tmp_path / "repos"
    shutil.copytree(os.path.join(ROOT, "fixtures", "projects", "dl1_dl3_spawn_cross_file"), repos / "one")
    (repos / "small").mkdir()
    (repos / "small" / "a.py").write_text("x = 1\n")
    assert tool.main([str(repos), "--min-files", "2", "--ruff", shutil.which("true") or "true", "--compare", ROOT]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| one ")]
    assert len(rows) == 1 and rows[0].endswith(" yes |")
    assert "| small " not in out  # one Python file: below --min-files


def test_sweep_runs_each_repository_three_ways_and_reports_what_must_not_happen(tmp_path, capsys):
    """check, fix and cache (on copies), named and prefilter modes pass on a fixture project; a
    dllint that exits 2 with an internal error, whose output differs under ``--compare``, or whose
    findings differ with every file parsed, is reported (exit 1)."""
    tool = _tool("sweep")
    repos = tmp_path / "repos"
    shutil.copytree(os.path.join(ROOT, "fixtures", "projects", "dl101_subclass"), repos / "one", ignore=shutil.ignore_patterns("expected.txt", "fixed", "unsafe-fixed"))
    original = (repos / "one" / "data" / "base.py").read_text()
    for mode in ("check", "fix", "cache", "named", "prefilter"):
        assert tool.main([str(repos), "--mode", mode, "--slow", "1000"]) == 0, mode
        assert f"{mode}: 1 repositories, 0 problem(s)" in capsys.readouterr().out
    assert (repos / "one" / "data" / "base.py").read_text() == original  # fixed on a copy

    stub = tmp_path / "stub" / "dllint"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("")
    (stub / "__main__.py").write_text("import sys\nprint('other output')\nsys.stderr.write('dllint: internal error: KeyError\\n')\nsys.exit(2)\n")
    assert tool.main([str(repos), "--dllint", str(stub.parent)]) == 1
    assert "one: exit 2: dllint: internal error: KeyError" in capsys.readouterr().out
    assert tool.main([str(repos), "--compare", str(stub.parent)]) == 1
    assert "one: output differs from --compare's" in capsys.readouterr().out
    # a dllint whose cached runs print something else than its runs without the cache
    (stub / "__main__.py").write_text("import sys\nprint('fresh' if '--no-cache' in sys.argv else 'stale')\n")
    assert tool.main([str(repos), "--mode", "cache", "--dllint", str(stub.parent)]) == 1
    assert "one: warm: output differs from a run without the cache" in capsys.readouterr().out
    # a dllint whose findings depend on what it parses (DL000 of a file it need not parse aside)
    (stub / "__main__.py").write_text(
        "import sys\nevery = '--no-prefilter' in sys.argv\n"
        "print('a.py:3:1: DL101 ' + ('from b.py' if every else 'measured by __len__'))\n"
        "print('b.py:1:1: DL000 syntax error' if every else '')\n"
    )
    assert tool.main([str(repos), "--mode", "prefilter", "--show", "--dllint", str(stub.parent)]) == 1
    out = capsys.readouterr().out
    assert "one: findings differ: 1 only filtered, 1 only with every file parsed" in out
    assert "one:   every file: a.py:3:1: DL101 from b.py" in out and "DL000" not in out


def test_order_check_asks_each_datasets_attributes_in_both_orders(tmp_path, capsys):
    """The answers of two fresh models asked in opposite orders are compared, attribute by
    attribute (none differs: the evaluator's answers do not depend on the order)."""
    from test_index import POSES

    tool = _tool("order_check")
    repo = tmp_path / "poses"
    repo.mkdir()
    (repo / ".git").mkdir()
    (repo / "ds.py").write_text(POSES + "\nif __name__ == '__main__':\n    torch.utils.data.DataLoader(Poses('p.json'), num_workers=2)\n")
    assert tool.main([str(repo)]) == 0
    out = capsys.readouterr().out
    assert "poses: 5 attributes, 0 depend on the order" in out
    assert out.strip().endswith("total: 5 attributes, 0 depend on the order")


def test_facts_cost_measures_the_prefilter_and_the_facts_of_the_files_it_selects(project, capsys):
    tool = _tool("facts_cost")
    (project / "notes.py").write_text('"""Mentions a Dataset in prose only."""\nX = 1\n')
    found = tool.measure(str(project))
    names = {os.path.basename(path) for _spent, _size, path in found["costs"]}
    # (notes.py names a Dataset only in a docstring, the package's __init__.py not at all)
    assert names == {"train.py", "data.py"} and found["selected"] == 3 and found["files"] == 5
    assert found["undecided"] >= 1
    assert found["facts"] > 0 and found["bytes"] == sum(size for _spent, size, _path in found["costs"])
    assert [c[0] for c in found["costs"]] == sorted((c[0] for c in found["costs"]), reverse=True)
    assert tool.main([str(project), "--jobs", "2", "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert f"{found['selected']} selected by the pre-filter" in out and "the scan on 2 processes: at least" in out
