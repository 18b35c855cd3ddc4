"""The configuration is read as TOML (every valid spelling of ``tool.dllint`` counts), and every
value dllint cannot use is a usage error naming its key (exit 2), never ignored or an internal error."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dllint.cli import cli
from dllint.config import ConfigError, find_config, load_settings

CODES = ["DL000", "DL101", "DL102", "DL201", "DL301", "DL302", "DL307"]
SHARING = 'import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\n'


def run(*args):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


SPELLINGS = {
    "table": '[tool.dllint]\nignore = ["DL302"]\n',
    "spaced header": '[ tool.dllint ]\nignore = ["DL302"]\n',
    "quoted key": '[tool."dllint"]\nignore = ["DL302"]\n',
    "tool table, dotted key": '[tool]\ndllint.ignore = ["DL302"]\n',
    "top-level dotted key": 'tool.dllint.ignore = ["DL302"]\n',
    "inline table": '[tool]\ndllint = { ignore = ["DL302"] }\n',
    "after other tables": '[project]\nname = "x"\n\n[tool.black]\nline-length = 100\n\n[tool]\ndllint = { ignore = ["DL302"] }\n',
}


@pytest.mark.parametrize("text", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_every_toml_spelling_of_the_table_is_honoured(project, text):
    (project / "pyproject.toml").write_text(text)
    found, _ = find_config(str(project))
    assert found == str(project / "pyproject.toml")
    assert load_settings(found, CODES).ignore == ("DL302",)
    (project / "a.py").write_text(SHARING)
    assert run("a.py") == (0, "All checks passed!\n")


def test_a_pyproject_without_the_table_is_passed_over(project):
    (project / "pyproject.toml").write_text('[tool.dllint]\nignore = ["DL302"]\n')
    sub = project / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('# dllint is configured above\n[tool.other]\ndllint = 1\n')
    found, nearest = find_config(str(sub))
    assert (found, nearest) == (str(project / "pyproject.toml"), str(sub / "pyproject.toml"))


BAD = {
    "project is a string": ('project = "x"\n[tool.dllint]\n', "`project`"),
    "project is a string (no dllint table)": ('project = "x"\n', "`project`"),
    "table is a number": ("tool.dllint = 0\n", "[tool.dllint]"),
    "banana": ('[project]\nrequires-python = "banana"\n', "`project.requires-python`"),
    "empty": ('[project]\nrequires-python = ""\n', "`project.requires-python`"),
    "a list": ('[project]\nrequires-python = ["3.10"]\n', "`project.requires-python`"),
    "an empty range": ('[project]\nrequires-python = ">=3.12,<3.10"\n', "admits no Python 3 version"),
    "python 2 only": ('[project]\nrequires-python = "<3.0"\n', "admits no Python 3 version"),
    "invalid TOML naming dllint": ("[tool.dllint\nignore = 1\n", "not valid TOML"),
}


@pytest.mark.parametrize("text,key", BAD.values(), ids=BAD.keys())
def test_a_bad_value_is_an_error_naming_its_key(project, text, key):
    (project / "pyproject.toml").write_text(text)
    (project / "a.py").write_text(SHARING)
    code, out = run("a.py")
    assert code == 2, out
    assert out.startswith("dllint: error: ") and key in out and "internal error" not in out, out


def test_requires_python_is_read_with_pep_440():
    from dllint.config import parse_requires_python

    assert parse_requires_python(">= 3.10") == (10, None)
    assert parse_requires_python("~=3.10.2") == (10, 10)
    assert parse_requires_python("<3.14.1") == (None, 14)
    assert parse_requires_python(">=3.8,!=3.9.*") == (8, None)
    for bad in ("banana", "", "3.10", ">=3.12,<3.10", "<3.0", ">=4"):
        with pytest.raises(ValueError):
            parse_requires_python(bad)


def test_load_settings_rejects_a_bad_requires_python_in_the_nearest_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nrequires-python = "banana"\n')
    with pytest.raises(ConfigError, match="requires-python"):
        load_settings(None, CODES, str(tmp_path / "pyproject.toml"))
