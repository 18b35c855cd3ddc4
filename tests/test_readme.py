"""README stays true: its rules table is generated from the rules' own metadata, and it starts
with the two set-up commands that .ci/run executes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from dllint.commands.rule import rule_table

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_rules_table_is_generated_from_the_rules():
    m = re.search(r"<!-- rules:start -->\n(.*?)<!-- rules:end -->", README, re.S)
    assert m, "README lacks the rules table markers"
    assert m.group(1) == rule_table(), "README's rules table is stale: run `python -m tests.update_readme`"


def test_readme_starts_with_two_setup_commands_that_ci_runs():
    block = re.search(r"```sh\n(.*?)```", README, re.S).group(1)
    commands = [line for line in block.splitlines() if line.strip()]
    assert len(commands) == 2
    assert "pip install -e ." in commands[0] and "dllint" in commands[0] and "fixtures/" in commands[0]
    assert commands[1].startswith("pip install torch==2.13.0") and "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install torch==2.13.0" in ci and "README.md" in ci
    # the core install must not pull torch
    pyproject = (ROOT / "pyproject.toml").read_text()
    core = re.search(r"dependencies = \[(.*?)\]", pyproject, re.S).group(1)
    assert "torch" not in core and "libcst" in core and "click" in core
