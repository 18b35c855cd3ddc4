"""A fix that creates findings is not a fix: after fixing, dllint re-lints the fixed text; a fix
that adds a finding (any rule on by default or selected, compared by code and by location mapped
through the edits) or a syntax error is withheld -- only that fix, the others of the file stay --
and its finding is reported with the reason."""

from __future__ import annotations

import json
import os
from pathlib import Path

from golden import FIXTURES, run_dllint

from dllint.config import Settings
from dllint.engine import Engine
from dllint.fix import fix_loop
from dllint.model import Diagnostic, Edit, Fix, Span
from dllint.rules import all_rules
from dllint.rules.base import Rule

UNDER_GUARD = (FIXTURES / "dl301" / "no_fix_dataset_under_guard.py").read_text()


def test_spawn_fix_that_would_add_dl106_is_withheld(tmp_path, monkeypatch):
    """The real case: multiprocessing_context="spawn" for a Dataset defined under the main guard
    (spawn workers cannot unpickle it: DL106 appears). DL301's own precondition (it offers no fix
    there) is switched off, so the re-lint is what stops it."""
    import dllint.fixes.spawn

    monkeypatch.setattr(dllint.fixes.spawn, "spawn_blocker", lambda *args: None)
    (tmp_path / ".git").mkdir()
    path = tmp_path / "train.py"
    path.write_text(UNDER_GUARD)
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "--unsafe-fixes", "--output-format", "json"])
    (offered,) = json.loads(out)
    assert offered["fix"]["applicability"] == "unsafe"  # offered: the check alone does not re-lint

    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "--fix", "--unsafe-fixes", "--output-format", "json"])
    assert path.read_text() == UNDER_GUARD
    reason = "it would add DL106 at train.py:17"
    assert f"dllint: warning: train.py:17:18: DL301 fix withheld: {reason}" in out
    (finding,) = json.loads(out[out.index("[") :])
    assert finding["message"].endswith(f"(fix withheld: {reason})")
    assert finding["fix"]["applicability"] == "display"  # a suggestion, not fixable

    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "--diff", "--unsafe-fixes"])
    assert "+++" not in out and f"DL301 fix withheld: {reason}" in out


class Planted(Rule):
    """A synthetic rule: a finding on each line ending in ``# plant: KIND``; its fix marks the line
    done and is ``ok`` (harmless), ``sharing`` (adds DL302), ``syntax`` (breaks parsing) or
    ``shift`` (also adds a line at the top of the file: every other finding moves)."""

    code = "DL999"
    name = "planted"
    fix = "safe"

    def check(self, project):
        for path in sorted(project.targets):
            text = project.source(path)
            for row, line in enumerate(text.splitlines(), 1):
                if "# plant: " not in line:
                    continue
                kind = line.rsplit("# plant: ", 1)[1].strip()
                marker = Span(row, line.index("# plant: ") + 1, row, len(line) + 1)
                done = {
                    "ok": "# done: ok",
                    "sharing": '# done: sharing\ntorch.multiprocessing.set_sharing_strategy("file_system")',
                    "syntax": "+ (  # done: syntax",
                    "shift": "# done: shift",
                }[kind]
                edits = (Edit("# shifted\n", Span(1, 1, 1, 1)),) if kind == "shift" else ()
                edits += (Edit(done, marker),)
                yield Diagnostic(self.code, f"planted {kind}", path, Span(row, 1, row, 2), fix=Fix("safe", kind, edits))


PLANTED = '''\
import torch
from torch.utils.data import DataLoader, Dataset

torch.multiprocessing.set_sharing_strategy("file_system")

a = 1  # plant: ok
b = 2  # plant: sharing
c = 3  # plant: syntax
d = 4  # plant: ok
e = 5  # plant: shift
'''


def planted_run(tmp_path: Path, text: str, watch_all: bool = True):
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / "m.py"
    path.write_text(text)
    engine = Engine(Settings(target_version="py311"), str(tmp_path))
    engine.rules = (*all_rules(), Planted())
    watch = frozenset(r.code for r in all_rules() if r.default) if watch_all else frozenset()
    targets = [str(path)]
    result, analysis = fix_loop(lambda overlay: engine.analyse(targets, {"DL999"}, overlay, set(targets), watch), unsafe=False)
    return path, result, analysis


def test_synthetic_fixes_each_withheld_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path, result, analysis = planted_run(tmp_path, PLANTED)
    fixed = result.fixed[str(path)]
    # the independent fixes stay: both "ok" ones and the one that moves every finding down a line
    assert fixed == "# shifted\n" + PLANTED.replace("# plant: ok", "# done: ok").replace("# plant: shift", "# done: shift")
    why = {(k[1], k[2]): v for k, v in result.withheld.items()}
    # rows in the fixed text (one line was added at the top)
    assert why == {
        ("DL999", 8): "it would add DL302 at m.py:9",
        ("DL999", 9): "the fixed file would not parse ('(' was never closed)",
    }
    # the existing DL302 (row 4, row 5 after the shift) is not taken for a new finding
    remaining = {(d.code, d.span.row): d for d in analysis.diagnostics}
    assert set(remaining) == {("DL999", 8), ("DL999", 9)}


def test_added_finding_is_only_seen_when_its_rule_is_watched(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    """Without the watched rules (the old behaviour) the DL302-adding fix goes through."""
    path, result, _ = planted_run(tmp_path, PLANTED.replace("c = 3  # plant: syntax\n", ""), watch_all=False)
    assert 'set_sharing_strategy("file_system")\nd = 4' in result.fixed[str(path)]


def test_cli_reports_withheld_synthetic_fix(tmp_path, monkeypatch):
    """Through the command: the selection is DL999 only, yet the DL302 it would add is seen (rules
    on by default are watched whatever is selected); the message says why; the file keeps the
    other fixes."""
    import dllint.commands.check
    import dllint.config
    import dllint.engine
    import dllint.rules

    rules = (*all_rules(), Planted())
    for module in (dllint.engine, dllint.commands.check, dllint.rules):
        monkeypatch.setattr(module, "all_rules", lambda: rules)
    (tmp_path / ".git").mkdir()
    path = tmp_path / "m.py"
    path.write_text(PLANTED.replace("c = 3  # plant: syntax\n", "").replace("e = 5  # plant: shift\n", ""))
    code, out = run_dllint(tmp_path, ["check", "--select", "DL999", "--target-version", "py311", "--fix", "--show-fixes"])
    assert path.read_text().count("# done: ok") == 2 and path.read_text().count("set_sharing_strategy") == 1
    assert "m.py:7:1: DL999 planted sharing (fix withheld: it would add DL302 at m.py:8)" in out
    assert "Fixed 2 errors" in out
