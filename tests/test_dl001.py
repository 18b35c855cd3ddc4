"""DL001 unused-noqa: what is judged, what is left alone, and what --fix writes."""

from __future__ import annotations

from click.testing import CliRunner

from dllint.cli import cli
from dllint.rules.dl001_unused_noqa import noqa_comments

HEAD = "import torch.multiprocessing as mp\n"
GOOD = 'mp.set_sharing_strategy("file_descriptor")'
BAD = 'mp.set_sharing_strategy("file_system")'


def run(*args):
    result = CliRunner().invoke(cli, ["check", "--output-format", "concise", "-q", *args], catch_exceptions=False)
    return result.exit_code, result.output


def codes(out: str) -> list[tuple[int, str]]:
    return [(int(line.split(":")[1]), line.split()[1]) for line in out.splitlines() if line.strip()]


def test_unused_and_used_directives(project):
    (project / "a.py").write_text(HEAD + f"{GOOD}  # noqa: DL302\n{BAD}  # noqa: DL302\n")
    code, out = run("a.py")
    assert code == 1
    assert codes(out) == [(2, "DL001")]
    assert "(unused: `DL302`)" in out


def test_codes_of_rules_not_enabled_are_not_judged(project):
    (project / "a.py").write_text(HEAD + f"{GOOD}  # noqa: DL302\n")
    assert run("--select", "DL001", "a.py") == (0, "")
    assert codes(run("--select", "DL001,DL302", "a.py")[1]) == [(2, "DL001")]
    assert run("--ignore", "DL302", "a.py") == (0, "")


def test_per_file_ignores_are_not_judged(project):
    (project / "pyproject.toml").write_text('[tool.dllint.per-file-ignores]\n"a.py" = ["DL302"]\n')
    (project / "a.py").write_text(HEAD + f"{GOOD}  # noqa: DL302\n")
    (project / "b.py").write_text(HEAD + f"{GOOD}  # noqa: DL302\n")
    code, out = run(".")
    assert [line.split(":")[0] for line in out.splitlines()] == ["b.py"]


def test_only_target_files_are_reported(project):
    (project / "a.py").write_text(HEAD + f"{GOOD}  # noqa: DL302\n")
    (project / "b.py").write_text(HEAD + f"{GOOD}\n")
    assert run("b.py") == (0, "")


def test_file_with_only_a_stale_directive_is_analysed(project):
    # no Dataset / DataLoader / set_start_method anywhere: the directive alone makes it worth parsing
    (project / "a.py").write_text("x = 1  # noqa: DL302\n")
    assert codes(run(".")[1]) == [(1, "DL001")]


def test_unparsable_file_is_not_judged(project):
    (project / "a.py").write_text(HEAD + f"{GOOD}  # noqa: DL302\ndef broken(:\n")
    assert [c for _, c in codes(run("a.py")[1])] == ["DL000"]


def test_fix_keeps_crlf_and_other_comments(project):
    text = HEAD + f"{GOOD}  # noqa: DL302, E501\n{GOOD}  # noqa: DL302  # why\n{GOOD}  # noqa: DL302\n"
    (project / "a.py").write_bytes(text.replace("\n", "\r\n").encode())
    code, out = run("--fix", "a.py")
    assert code == 0, out
    after = (project / "a.py").read_bytes().decode()
    expected = HEAD + f"{GOOD}  # noqa: E501\n{GOOD}  # why\n{GOOD}\n"
    assert after == expected.replace("\n", "\r\n")
    assert run("a.py") == (0, "")


def test_fix_removes_own_line_directive_without_newline_at_end(project):
    (project / "a.py").write_text(HEAD + f"{GOOD}\n# noqa: DL302")
    assert run("--fix", "a.py")[0] == 0
    assert (project / "a.py").read_text() == HEAD + f"{GOOD}\n"


def test_directive_inside_string_is_not_a_comment():
    text = 's = "# noqa: DL302"\nt = """\n# noqa: DL101\n"""\nx = 1  # noqa: DL302, e501\n'
    found = noqa_comments(text)
    assert [(c.row, c.codes) for c in found] == [(5, ("DL302", "E501"))]
    c = found[0]
    assert c.comment[c.start : c.end] == "# noqa: DL302, e501"


def test_untokenizable_text_gives_nothing():
    assert noqa_comments('x = (1,  # noqa: DL302\n') == []


def test_dl001_silences_itself(project):
    (project / "a.py").write_text(HEAD + f"{GOOD}  # noqa: DL302, DL001\n")
    assert run("a.py") == (0, "")
