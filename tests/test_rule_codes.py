"""Every rule code dllint prints or documents is a registered rule: explain's causes, doctor's
checks, messages, docs and the README cite only codes ``dllint rule CODE`` can explain."""

from __future__ import annotations

import re
from pathlib import Path

from dllint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
CODE = re.compile(r"\bDL\d{3}\b")


def registered() -> dict[str, str]:
    return {r.code: r.name for r in all_rules()}


def cited() -> dict[str, list[str]]:
    """code -> the files (package source, docs, README) that name it."""
    files = [*sorted((ROOT / "dllint").rglob("*.py")), *sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
    out: dict[str, list[str]] = {}
    for path in files:
        for code in set(CODE.findall(path.read_text(encoding="utf-8"))):
            out.setdefault(code, []).append(str(path.relative_to(ROOT)))
    return out


def test_every_cited_code_is_a_registered_rule():
    unknown = {code: where for code, where in cited().items() if code not in registered()}
    assert unknown == {}


def test_explain_and_doctor_cite_registered_rules_by_their_names():
    from dllint import doctor, explain

    rules = registered()
    assert {code: name for code, name in explain.RULE_NAMES.items() if rules.get(code) != name} == {}
    for cause in explain.CAUSES:
        assert set(cause.rules) <= set(rules), cause.id
    # doctor's checks name rules in the source (rules=[...]): every one is registered
    for code in re.findall(r"rules=\[([^\]]*)\]", Path(doctor.__file__).read_text(encoding="utf-8")):
        assert set(re.findall(r"DL\d{3}", code)) <= set(rules)
