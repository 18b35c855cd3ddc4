"""The byte pre-filter (and demand-driven parsing) never changes a finding.

Each project is checked twice: normally, and with ``--no-prefilter`` (every file parsed). The
outputs must be identical. Run on every golden fixture case and on generated "typical projects"
(tests/projectgen.py), where Dataset subclasses live in files that never mention ``Dataset``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from golden import Case, cases, copy_case, run_dllint
from projectgen import generate

CASES = cases()
ARGS = ["check", "--select", "ALL", "--output-format", "concise", "-q", "--no-fix", "--no-cache"]


def run(work: Path, *extra: str) -> str:
    code, output = run_dllint(work, [*ARGS, *extra])
    assert code in (0, 1), output
    return output


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fixture_same_findings_without_prefilter(case: Case, tmp_path):
    work = copy_case(case, tmp_path)
    assert run(work, *case.args()) == run(work, "--no-prefilter", *case.args())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_project_same_findings_without_prefilter(seed, tmp_path):
    generate(str(tmp_path), seed=seed, files=120)
    filtered = run(tmp_path)
    everything = run(tmp_path, "--no-prefilter")
    assert filtered == everything
    assert filtered.strip(), "a generated project has findings (else the comparison proves nothing)"


def _analyse(root: Path, prefilter: bool):
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.discover import discover
    from dllint.engine import Engine

    settings, project_root = load_configuration([str(root)], None, Overrides(select=["ALL"]))
    engine = Engine(settings, project_root, jobs=1)
    engine.prefilter = prefilter
    targets = discover([str(root)], project_root, settings.all_excludes, settings.respect_gitignore)
    return engine.analyse(targets, enabled_codes(settings)), len(targets)


def test_prefilter_parses_fewer_files_and_widens_to_project_subclasses(tmp_path):
    generate(str(tmp_path), seed=3, files=120)
    filtered, total = _analyse(tmp_path, prefilter=True)
    everything, _ = _analyse(tmp_path, prefilter=False)
    assert everything.analysed == total
    assert filtered.analysed < total  # the pre-filter skipped files ...
    parsed = set(filtered.project.files)
    # ... but not a subclass of a project Dataset in a file that never says "Dataset"
    sub = tmp_path / "proj3" / "data" / "sets_0.py"
    assert b"Dataset" not in sub.read_bytes().replace(b"BaseDataset", b"")
    assert str(sub) in parsed
    assert [d.sort_key() for d in filtered.diagnostics] == [d.sort_key() for d in everything.diagnostics]


def test_env_var_disables_prefilter(tmp_path, monkeypatch):
    from dllint.commands.check import load_configuration
    from dllint.config import Overrides
    from dllint.engine import Engine

    generate(str(tmp_path), seed=4, files=20)
    monkeypatch.setenv("DLLINT_NO_PREFILTER", "1")

    settings, root = load_configuration([str(tmp_path)], None, Overrides())
    assert Engine(settings, root).prefilter is False
    monkeypatch.delenv("DLLINT_NO_PREFILTER")
    assert Engine(settings, root).prefilter is True
