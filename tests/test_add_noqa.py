"""--add-noqa: a directive on every finding's row, merged with what is there, idempotent."""

from __future__ import annotations

import ast

from click.testing import CliRunner

from dllint.cli import cli
from dllint.noqa_edit import add_noqa

HEAD = "import torch.multiprocessing as mp\n"
BAD = 'mp.set_sharing_strategy("file_system")'


def run(*args):
    result = CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_adds_merges_and_preserves_comments(project):
    source = (
        HEAD
        + f"{BAD}\n"
        + f"{BAD}  # keep this comment\n"
        + f"{BAD}  # noqa: E501 (line too long)\n"
        + f"{BAD}  # type: ignore  # noqa:F401\n"
        + f"{BAD}   \n"  # trailing blanks are replaced, not kept before the comment
    )
    (project / "a.py").write_text(source)
    code, out, err = run("--add-noqa", "a.py")
    assert code == 0, err
    assert "Added 5 noqa directives in 1 file." in err
    after = (project / "a.py").read_text()
    assert after == (
        HEAD
        + f"{BAD}  # noqa: DL302\n"
        + f"{BAD}  # keep this comment  # noqa: DL302\n"
        + f"{BAD}  # noqa: E501, DL302 (line too long)\n"
        + f"{BAD}  # type: ignore  # noqa:F401, DL302\n"
        + f"{BAD}  # noqa: DL302\n"
    )
    ast.parse(after)
    # every finding is now suppressed, and the directives are used (no DL001 either)
    assert run("--select", "ALL", "a.py")[0] == 0
    # idempotent
    code, out, err = run("--add-noqa", "a.py")
    assert code == 0 and "Added 0 noqa directives" in err
    assert (project / "a.py").read_text() == after


def test_only_enabled_rules_and_never_dl000_or_dl001(project):
    (project / "a.py").write_text(HEAD + f"{BAD}\n" + 'mp.set_sharing_strategy("file_descriptor")  # noqa: DL302\n')
    (project / "broken.py").write_text("def f(:\n")
    code, _, err = run("--add-noqa", "--select", "DL001,DL000", ".")
    assert code == 0 and "Added 0 noqa directives" in err
    assert (project / "broken.py").read_text() == "def f(:\n"
    assert "# noqa: DL001" not in (project / "a.py").read_text()


def test_keeps_crlf_and_encoding(project):
    data = ("# -*- coding: latin-1 -*-\r\n" + HEAD.replace("\n", "\r\n") + "s = 'café'\r\n" + BAD + "\r\n").encode("latin-1")
    (project / "a.py").write_bytes(data)
    assert run("--add-noqa", "a.py")[0] == 0
    assert (project / "a.py").read_bytes() == data.replace(b'"file_system")\r\n', b'"file_system")  # noqa: DL302\r\n')


def test_refuses_fix_and_stdin(project):
    (project / "a.py").write_text(HEAD + BAD + "\n")
    assert run("--add-noqa", "--fix", "a.py")[0] == 2
    result = CliRunner().invoke(cli, ["check", "--add-noqa", "-"], input=HEAD)
    assert result.exit_code == 2
    assert (project / "a.py").read_text() == HEAD + BAD + "\n"


def test_rows_where_a_comment_cannot_go_are_skipped():
    text = 's = """\nline\n"""\nq = 1 + \\\n    2\nx = 1\n'
    result = add_noqa(text, {2: {"DL101"}, 4: {"DL101"}, 6: {"DL101"}, 99: {"DL101"}})
    assert result.text == 's = """\nline\n"""\nq = 1 + \\\n    2\nx = 1  # noqa: DL101\n'
    assert result.added == 1
    assert [s.split(":")[0] for s in result.skipped] == ["row 2", "row 4", "row 99"]


def test_last_row_of_a_multiline_string_and_bare_noqa():
    text = 's = """\nline\n"""\ny = 2  # noqa\n'
    result = add_noqa(text, {3: {"DL101", "DL202"}, 4: {"DL101"}})
    assert result.text == 's = """\nline\n"""  # noqa: DL101, DL202\ny = 2  # noqa\n'
    assert result.added == 1


def test_last_line_without_newline():
    result = add_noqa("x = 1", {1: {"DL101"}})
    assert result.text == "x = 1  # noqa: DL101"


def test_directive_the_engine_would_not_read_is_not_written():
    # the engine takes the first `# noqa` text on a row, here the one inside the string
    text = 'x = "# noqa: E1"  # noqa: DL101\ny = 1\n'
    result = add_noqa(text, {1: {"DL302"}, 2: {"DL302"}})
    assert result.text == 'x = "# noqa: E1"  # noqa: DL101\ny = 1  # noqa: DL302\n'
    assert result.added == 1 and result.skipped[0].startswith("row 1:")
