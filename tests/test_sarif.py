"""SARIF output: valid against the official 2.1.0 schema, and saying the same as the other formats."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dllint.cli import cli
from dllint.model import Diagnostic, Edit, Fix, Span
from dllint.report import ReportContext, render
from dllint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT.parent / "shared" / "data" / "sarif-schema-2.1.0.json"

SOURCE = (
    "import torch.multiprocessing as mp\n"
    "é = 'ü'; mp.set_sharing_strategy('file_system')\n"  # non-ASCII before the span: columns are characters
    "mp.set_sharing_strategy('file_descriptor')  # noqa: DL302, E501\n"
    "mp.set_sharing_strategy('file_descriptor')  # noqa: DL302\n"
)


@pytest.fixture()
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "my dir").mkdir()
    (tmp_path / "my dir" / "train,v2.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args):
    result = CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def sarif(*args) -> dict:
    code, out = run("--output-format", "sarif", *args)
    assert code in (0, 1), out
    return json.loads(out)


def validator():
    if not SCHEMA.exists():
        pytest.skip(f"the SARIF 2.1.0 schema is not at {SCHEMA} (shared/data beside the checkout); not validating")
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def test_output_validates_against_the_official_schema(project):
    log = sarif("--select", "ALL", ".")
    assert log["runs"][0]["results"], "the case must produce findings, with and without fixes"
    assert any("fixes" in r for r in log["runs"][0]["results"])
    assert any("fixes" not in r for r in log["runs"][0]["results"])
    errors = sorted(validator().iter_errors(log), key=str)
    assert not errors, "\n".join(str(e) for e in errors[:5])


def test_the_validator_rejects_a_broken_log(project):
    # guards the test above: the schema really is applied
    v = validator()
    log = sarif("--select", "ALL", ".")
    broken = copy.deepcopy(log)
    broken["runs"][0]["results"][0]["level"] = "warn"
    assert list(v.iter_errors(broken))
    broken = copy.deepcopy(log)
    del broken["runs"][0]["tool"]["driver"]["name"]
    assert list(v.iter_errors(broken))


def test_empty_run_validates(project):
    log = sarif("--select", "DL302", "--ignore", "DL302", ".")
    assert log["runs"][0]["results"] == []
    assert not list(validator().iter_errors(log))


def test_one_rule_descriptor_per_code():
    ctx = ReportContext()
    log = json.loads(render("sarif", [], ctx))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()]
    for descriptor, rule in zip(rules, all_rules()):
        assert descriptor["name"] == rule.name
        assert descriptor["helpUri"] == rule.url
        assert descriptor["shortDescription"]["text"]
        assert descriptor["fullDescription"]["text"]
        assert descriptor["help"]["markdown"] == rule.render_docs()
        level = {"error": "error", "warning": "warning", "info": "note"}[rule.severity]
        assert descriptor["defaultConfiguration"]["level"] == level


def test_results_match_the_concise_output(project):
    log = sarif("--select", "ALL", ".")
    run_ = log["runs"][0]
    assert run_["columnKind"] == "unicodeCodePoints"
    rules = run_["tool"]["driver"]["rules"]
    _, concise = run("--select", "ALL", "--output-format", "concise", "-q", ".")
    expected = []
    for line in concise.splitlines():
        head, _, rest = line.partition(": ")
        path, row, col = head.rsplit(":", 2)
        expected.append((path, int(row), int(col), rest.split()[0]))
    got = []
    for r in run_["results"]:
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        region = loc["region"]
        got.append((loc["artifactLocation"]["uri"], region["startLine"], region["startColumn"], r["ruleId"]))
    assert got == [("my%20dir/train%2Cv2.py", row, col, code) for _, row, col, code in expected]
    dl302 = next(r for r in run_["results"] if r["ruleId"] == "DL302")
    # `mp.set_sharing_strategy('file_system')` starts after "é = 'ü'; " (9 characters, 11 bytes)
    assert dl302["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2, "startColumn": 10, "endLine": 2, "endColumn": 48
    }


def _apply(text: str, replacements: list[dict]) -> str:
    lines = text.splitlines(keepends=True)

    def offset(line: int, col: int) -> int:
        return sum(len(x) for x in lines[: line - 1]) + col - 1

    for rep in sorted(replacements, key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]), reverse=True):
        reg = rep["deletedRegion"]
        a = offset(reg["startLine"], reg["startColumn"])
        b = offset(reg["endLine"], reg["endColumn"])
        text = text[:a] + rep["insertedContent"]["text"] + text[b:]
    return text


def test_fixes_reproduce_what_fix_writes(project):
    log = sarif("--select", "ALL", ".")
    replacements = []
    for r in log["runs"][0]["results"]:
        for fix in r.get("fixes", []):
            assert fix["properties"]["applicability"] == "safe"
            for change in fix["artifactChanges"]:
                assert change["artifactLocation"]["uri"] == "my%20dir/train%2Cv2.py"
                replacements.extend(change["replacements"])
    assert len(replacements) == 2
    predicted = _apply(SOURCE, replacements)
    assert run("--select", "ALL", "--fix", ".")[0] == 1  # DL302 has no fix and remains
    assert (project / "my dir" / "train,v2.py").read_text(encoding="utf-8") == predicted
    assert "# noqa: E501\n" in predicted and "# noqa: DL302" not in predicted


def test_levels_follow_each_finding_severity(tmp_path):
    ctx = ReportContext(cwd=str(tmp_path))
    fix = Fix("unsafe", "insert", (Edit("x", Span(1, 1, 1, 1)),))
    diags = [
        Diagnostic("DL302", "e", str(tmp_path / "a.py"), Span(1, 1, 1, 2), severity="error"),
        Diagnostic("DL302", "w", str(tmp_path / "a.py"), Span(1, 1, 1, 2), severity="warning"),
        Diagnostic("DL302", "i", str(tmp_path / "a.py"), Span(1, 1, 1, 2), severity="info", fix=fix),
    ]
    results = json.loads(render("sarif", diags, ctx))["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "warning", "note"]
    assert results[2]["fixes"][0]["properties"]["applicability"] == "unsafe"
    insertion = results[2]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert insertion["deletedRegion"] == {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1}
    # a file outside the working directory gets an absolute file URI
    outside = Diagnostic("DL302", "o", "/elsewhere/b.py", Span(1, 1, 1, 2))
    loc = json.loads(render("sarif", [outside], ctx))["runs"][0]["results"][0]["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"] == {"uri": "file:///elsewhere/b.py"}


def test_notebook_findings_have_no_region_and_no_fix(tmp_path):
    ctx = ReportContext(cwd=str(tmp_path))
    fix = Fix("safe", "remove", (Edit("", Span(7, 6, 7, 21)),))
    d = Diagnostic("DL001", "Unused", str(tmp_path / "n.ipynb"), Span(7, 8, 7, 21), fix=fix, cell=3, cell_row_offset=5)
    log = json.loads(render("sarif", [d], ctx))
    r = log["runs"][0]["results"][0]
    loc = r["locations"][0]
    assert "region" not in loc["physicalLocation"] and "fixes" not in r
    assert loc["logicalLocations"] == [{"name": "cell 3", "kind": "module"}]
    assert loc["properties"]["cellRegion"] == {"startLine": 2, "startColumn": 8, "endLine": 2, "endColumn": 21}
    assert r["message"]["text"] == "cell 3:line 2:8: Unused"  # the coordinates of the text output
    assert not list(validator().iter_errors(log))
