"""Regenerate README's rules table: ``python -m tests.update_readme`` (from the repository root)."""

import re
from pathlib import Path

from dllint.commands.rule import rule_table

path = Path(__file__).resolve().parent.parent / "README.md"
text = path.read_text(encoding="utf-8")
text = re.sub(
    r"<!-- rules:start -->\n.*?<!-- rules:end -->",
    lambda m: "<!-- rules:start -->\n" + rule_table() + "<!-- rules:end -->",
    text,
    flags=re.S,
)
path.write_text(text, encoding="utf-8")
