"""Messages and help read right: no typo, no help text cut mid-sentence, no deprecated click API
(the suite turns warnings raised in dllint's own modules into errors: pyproject.toml)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import click
from click.testing import CliRunner

from dllint.cli import cli

ROOT = Path(__file__).resolve().parent.parent


def test_every_command_has_a_whole_short_help():
    result = CliRunner().invoke(cli, ["--help"])
    listing = result.output.split("Commands:", 1)[1].strip().splitlines()
    assert len(listing) >= 5
    for line in listing:
        name, _, text = line.strip().partition(" ")
        text = text.strip()
        # click cuts a long docstring at its first full stop ("Explain a rule (e.g.") or with "..."
        assert text.endswith(".") and not text.endswith("...") and "(e.g." not in text, line


def test_no_plural_of_data_in_a_message(project):
    (project / "ds.py").write_text(
        "import glob\nimport json\n\nfrom torch.utils.data import DataLoader, Dataset\n\n\n"
        "class Records(Dataset):\n    def __init__(self, root):\n"
        '        self.records = [json.load(open(p)) for p in glob.glob(root + "/*.json")]\n\n'
        "    def __len__(self):\n        return len(self.records)\n\n"
        "    def __getitem__(self, i):\n        return self.records[i]\n\n\n"
        'loader = DataLoader(Records("d"), num_workers=4, multiprocessing_context="fork")\n'
    )
    out = CliRunner().invoke(cli, ["--select", "DL101", "ds.py"]).output
    assert "ds.py:9:9: DL101" in out
    assert not re.search(r"\bdatas\b", out), out


def test_explain_reads_stdin_without_deprecated_click_api(monkeypatch):
    from dllint.explain import explain

    def deprecated(*args, **kwargs):  # what current click does
        warnings.warn("get_text_stream is deprecated", DeprecationWarning, stacklevel=2)
        return click.utils.get_text_stream(*args, **kwargs)

    monkeypatch.setattr(click, "get_text_stream", deprecated)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", module="dllint")
        result = CliRunner().invoke(explain, [], input="RuntimeError: Cannot re-initialize CUDA in forked subprocess.\n")
    assert result.exception is None, result.exception
    assert result.exit_code == 0 and "cuda" in result.output.lower()


def test_the_suite_turns_dllint_warnings_into_errors():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "error:::dllint" in options["filterwarnings"]
