"""Output formats (github, json-lines, concise/text, full), --statistics, --show-fixes,
--exit-non-zero-on-fix."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from dllint.cli import cli
from dllint.model import Diagnostic, Edit, Fix, Span
from dllint.report import ReportContext, render
from dllint.report.github import escape_data, escape_property

HEAD = "import torch.multiprocessing as mp\n"
BAD = 'mp.set_sharing_strategy("file_system")\n'
STALE = 'mp.set_sharing_strategy("file_descriptor")  # noqa: DL302\n'  # DL001, safe fix


def run(*args):
    result = CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# ---------------------------------------------------------------------------- github

# The workflow-command grammar (actions/toolkit command.ts): "::" name [" " key=value ("," key=value)*] "::" data
COMMAND = re.compile(r"^::(?P<name>error|warning|notice) (?P<props>[^:]*)::(?P<data>.*)$")


def unescape(text: str, prop: bool) -> str:
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else []) + [("%25", "%")]
    for a, b in pairs:
        text = text.replace(a, b)
    return text


def parse_command(line: str) -> tuple[str, dict, str]:
    m = COMMAND.match(line)
    assert m, line
    props = dict(p.split("=", 1) for p in m.group("props").split(","))
    return m.group("name"), {k: unescape(v, True) for k, v in props.items()}, unescape(m.group("data"), False)


def test_github_escaping():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    # `%` first: an already-escaped-looking text must survive a round trip
    assert escape_data("%0A") == "%250A"


def test_github_annotation_round_trips_through_the_grammar(tmp_path):
    ctx = ReportContext(cwd=str(tmp_path))
    diags = [
        Diagnostic("DL302", "50% of\nthe: workers, gone", str(tmp_path / "dir,x" / "a:b.py"), Span(3, 5, 4, 9), severity="error"),
        Diagnostic("DL302", "w", str(tmp_path / "a.py"), Span(1, 1, 1, 2), severity="warning"),
        Diagnostic("DL302", "i", str(tmp_path / "a.py"), Span(1, 1, 1, 2), severity="info"),
    ]
    lines = render("github", diags, ctx).splitlines()
    assert len(lines) == 3
    name, props, data = parse_command(lines[0])
    assert name == "error"
    assert props == {
        "file": "dir,x/a:b.py", "line": "3", "col": "5", "endLine": "4", "endColumn": "9",
        "title": "DL302 (file-system-sharing-strategy)",
    }
    assert data == "50% of\nthe: workers, gone"
    assert [parse_command(x)[0] for x in lines[1:]] == ["warning", "notice"]


def test_github_end_to_end(project):
    (project / "a.py").write_text(HEAD + BAD)
    code, out, _ = run("--output-format", "github", "a.py")
    assert code == 1
    assert out.startswith(
        "::warning file=a.py,line=2,col=1,endLine=2,endColumn=39,title=DL302 (file-system-sharing-strategy)::Sharing strategy"
    )
    assert len(out.splitlines()) == 1  # no summary line: the runner would print it as log noise


# ---------------------------------------------------------------------------- json-lines, text


def test_json_lines_is_json_one_per_line(project):
    (project / "a.py").write_text(HEAD + BAD + STALE)
    code, out, _ = run("--select", "ALL", "--output-format", "json-lines", "a.py")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2
    _, as_json, _ = run("--select", "ALL", "--output-format", "json", "a.py")
    assert [json.loads(x) for x in lines] == json.loads(as_json)


def test_json_lines_empty_run_prints_nothing(project):
    (project / "a.py").write_text(HEAD)
    assert run("--output-format", "json-lines", "a.py")[:2] == (0, "")


def test_text_is_concise(project):
    (project / "a.py").write_text(HEAD + BAD + STALE)
    assert run("--select", "ALL", "a.py")[1] == run("--select", "ALL", "--output-format", "concise", "a.py")[1]


# ---------------------------------------------------------------------------- full


def test_full_shows_source_caret_and_fix_diff(project):
    (project / "a.py").write_text(HEAD + BAD + STALE)
    code, out, _ = run("--select", "ALL", "--output-format", "full", "a.py")
    assert code == 1
    blocks = out.split("\n\n")
    first = blocks[0].splitlines()
    assert first[0].startswith("a.py:2:1: DL302 Sharing strategy")
    assert "2 | " + BAD.rstrip() in first
    caret_line = first[first.index("2 | " + BAD.rstrip()) + 1]
    assert caret_line == "  | " + "^" * len(BAD.rstrip()) + " DL302"
    assert "help" not in blocks[0]  # DL302 has no fix
    second = "\n\n".join(blocks[1:])
    assert "a.py:3:45: DL001 [*] Unused `noqa` directive" in second
    assert "  |" + " " * 45 + "^" * len("# noqa: DL302") + " DL001" in second
    assert "= help: Remove unused `noqa` directive" in second
    assert "Safe fix:" in second
    assert re.search(r"^\s+3\s+\|- " + re.escape(STALE.rstrip()) + "$", second, re.M)
    assert re.search(r"^\s+3 \|\+ " + re.escape('mp.set_sharing_strategy("file_descriptor")') + "$", second, re.M)
    assert out.rstrip().endswith("Found 2 errors (1 fixable with --fix).")


def test_full_tabs_and_multiline_spans(tmp_path):
    text = "def f():\n\tx = [\n\t\t1,\n\t]\n"
    path = tmp_path / "a.py"
    path.write_text(text)
    ctx = ReportContext(cwd=str(tmp_path), show_summary=False)
    d = Diagnostic("DL302", "m", str(path), Span(2, 6, 4, 3))  # `[` .. `]` with tabs before
    lines = render("full", [d], ctx).splitlines()
    assert lines == [
        "a.py:2:6: DL302 m",
        "  |",
        "1 | def f():",
        "2 |     x = [",
        "  |         ^",
        "3 |         1,",
        "  |         ^^",
        "4 |     ]",
        "  |     ^ DL302",
        "  |",
        "",
    ]


def test_full_unsafe_fix_is_labelled(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    ctx = ReportContext(cwd=str(tmp_path), show_summary=False)
    fix = Fix("unsafe", "Use two", (Edit("2", Span(1, 5, 1, 6)),))
    out = render("full", [Diagnostic("DL302", "m", str(path), Span(1, 5, 1, 6), fix=fix)], ctx)
    assert "Unsafe fix (enable with --unsafe-fixes):" in out
    assert "1   |- x = 1" in out and "  1 |+ x = 2" in out


def test_full_survives_an_unreadable_source(tmp_path):
    ctx = ReportContext(cwd=str(tmp_path), show_summary=False)
    out = render("full", [Diagnostic("DL000", "cannot read file", str(tmp_path / "gone.py"), Span(1, 1, 1, 1))], ctx)
    assert out.startswith("gone.py:1:1: DL000 cannot read file")


# ---------------------------------------------------------------------------- statistics, fixes, exit codes


def test_statistics(project):
    (project / "a.py").write_text(HEAD + BAD + BAD + STALE)
    code, out, _ = run("--select", "ALL", "--statistics", "a.py")
    assert code == 1
    assert out.splitlines() == ["2\tDL302\t    file-system-sharing-strategy", "1\tDL001\t[*] unused-noqa"]
    code, out, _ = run("--select", "ALL", "--statistics", "--output-format", "json", "a.py")
    assert json.loads(out) == [
        {"code": "DL302", "name": "file-system-sharing-strategy", "count": 2, "fixable": False, "fixable_count": 0},
        {"code": "DL001", "name": "unused-noqa", "count": 1, "fixable": True, "fixable_count": 1},
    ]


def test_exit_non_zero_on_fix(project):
    (project / "a.py").write_text(HEAD + STALE)
    assert run("--fix", "a.py")[0] == 0  # fixed, nothing remains
    (project / "a.py").write_text(HEAD + STALE)
    assert run("--fix", "--exit-non-zero-on-fix", "a.py")[0] == 1
    assert run("--fix", "--exit-non-zero-on-fix", "a.py")[0] == 0  # nothing left to fix
    (project / "a.py").write_text(HEAD + STALE)
    assert run("--fix", "--exit-non-zero-on-fix", "--exit-zero", "a.py")[0] == 0


def test_exit_non_zero_on_fix_with_stdin(project):
    result = CliRunner().invoke(cli, ["check", "--fix", "--exit-non-zero-on-fix", "-"], input=HEAD + STALE)
    assert result.exit_code == 1
    assert result.stdout == HEAD + 'mp.set_sharing_strategy("file_descriptor")\n'


def test_show_fixes(project):
    (project / "a.py").write_text(HEAD + STALE + STALE)
    (project / "b.py").write_text(HEAD + STALE)
    code, out, _ = run("--fix", "--show-fixes", ".")
    assert code == 0
    assert out.startswith("Fixed 3 errors:\n- a.py:\n    2 × DL001 (unused-noqa)\n- b.py:\n    1 × DL001 (unused-noqa)\n")
    code, out, err = run("--fix", "--show-fixes", ".")
    assert "No errors were fixed." in out


def test_show_fixes_keeps_machine_output_clean(project):
    (project / "a.py").write_text(HEAD + STALE + BAD)
    code, out, err = run("--fix", "--show-fixes", "--output-format", "json", "a.py")
    assert code == 1
    assert [d["code"] for d in json.loads(out)] == ["DL302"]
    assert "1 × DL001" in err


# ---------------------------------------------------------------------------- notebooks


def test_notebook_findings_name_the_cell(tmp_path):
    # rows 1-5 are earlier cells; the finding is on line 2 of cell 3 (row 7 of the concatenation)
    source = "import torch\n\n\n\n\nx = 1\ny = 2  # noqa: DL302\nz = 3\n"
    ctx = ReportContext(cwd=str(tmp_path), show_summary=False, sources={str(tmp_path / "n.ipynb"): source})
    fix = Fix("safe", "Remove unused `noqa` directive", (Edit("", Span(7, 6, 7, 21)),))
    d = Diagnostic("DL001", "Unused", str(tmp_path / "n.ipynb"), Span(7, 8, 7, 21), fix=fix, cell=3, cell_row_offset=5)
    name, props, data = parse_command(render("github", [d], ctx).strip())
    assert props == {"file": "n.ipynb", "title": "DL001 (unused-noqa)"}  # no line: .ipynb lines are JSON
    assert data == "cell 3:line 2:8: Unused"  # the coordinates of the text output
    full = render("full", [d], ctx)
    assert "1 | x = 1\n2 | y = 2  # noqa: DL302\n  |        ^^^^^^^^^^^^^ DL001\n" in full
    assert "import torch" not in full.split("Safe fix:")[0]  # context stays inside the cell
    assert "    |- y = 2  # noqa: DL302\n    |+ y = 2\n" in full  # no row numbers across cells


# ---------------------------------------------------------------------------- fixable marks


def test_text_marks_the_findings_whose_fixes_the_json_output_carries(tmp_path):
    """A text run builds no fix edits (``Engine.edits``: DL101 decides from ``ast`` whether its
    conversion applies); its `[*]` marks are the findings the json output gives edits for, with
    the cache (stored results keyed by the mode) as without it."""
    import os

    root = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "dl101")
    code, out, _ = run("--no-cache", "--exit-zero", "--unsafe-fixes", "--select", "DL101", "-q", root)
    out_text = out
    marked = {(os.path.basename(p), int(r)) for p, r in re.findall(r"^(\S+?):(\d+):\d+: DL101 \[\*\]", out, re.M)}
    unmarked = {(os.path.basename(p), int(r)) for p, r in re.findall(r"^(\S+?):(\d+):\d+: DL101 (?!\[\*\])", out, re.M)}
    lines = len(re.findall(r"^\S+?:\d+:\d+: DL101 ", out, re.M))
    code, out, _ = run("--no-cache", "--exit-zero", "--unsafe-fixes", "--select", "DL101", "--output-format", "json", root)
    items = json.loads(out)
    with_edits = {(os.path.basename(d["filename"]), d["location"]["row"]) for d in items if d["fix"] and d["fix"]["edits"]}
    assert marked and unmarked  # both kinds occur in the fixtures
    assert marked == with_edits
    assert len(items) == lines
    # a text run's stored results (fixes without edits) do not serve a json run
    cache = ["--cache-dir", str(tmp_path / "cache")]
    code, warm_text, _ = run(*cache, "--exit-zero", "--unsafe-fixes", "--select", "DL101", "-q", root)
    code, warm_json, _ = run(*cache, "--exit-zero", "--unsafe-fixes", "--select", "DL101", "--output-format", "json", root)
    assert warm_text == out_text
    assert json.loads(warm_json) == items
