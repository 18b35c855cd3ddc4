"""Large files: a fix re-parses with libcst only the statements it wrote (not the whole module),
edits are applied in one pass, and a file over `max-file-size` is a DL000 finding, not analysed.
`bench/large_file.py` measures time and memory against size."""

from __future__ import annotations

from click.testing import CliRunner

from dllint.cli import cli
from dllint.fix import apply_edits_with_ranges, verify
from dllint.model import Diagnostic, Edit, Fix, Span

HEAD = """from torch.utils.data import DataLoader, Dataset


class Table(Dataset):
    def __len__(self):
        return 3

    def __getitem__(self, i):
        return i


loader = DataLoader(Table(), num_workers=0, persistent_workers=True)
"""
FILLER = "".join(f"def generated_{i}(a):\n    return a + {i}\n\n\n" for i in range(2000))


def run(*args):
    result = CliRunner().invoke(cli, ["check", "--no-cache", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_fix_verifies_only_the_statements_it_changed(project, monkeypatch):
    import libcst

    seen: list[str] = []
    real = libcst.parse_module

    def parse_module(source, *args, **kwargs):
        seen.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", parse_module)
    (project / "gen.py").write_text(HEAD + "\n\n" + FILLER)
    code, out, err = run("--fix", "gen.py")
    assert code == 0, out + err
    assert "loader = DataLoader(Table(), num_workers=0)\n" in (project / "gen.py").read_text()
    assert seen and all(len(s) < 200 for s in seen), [len(s) for s in seen]
    assert any("loader = DataLoader(Table(), num_workers=0)" in s for s in seen)


def test_verify_still_rejects_what_libcst_cannot_parse(monkeypatch):
    import libcst

    def parse_module(source, *args, **kwargs):
        if "bad" in source:
            raise libcst.ParserSyntaxError("refused", lines=[source], raw_line=1, raw_column=0)
        return None

    monkeypatch.setattr(libcst, "parse_module", parse_module)
    text = "a = 1\n\n@deco\ndef f():\n    bad = 2\n\nz = 3; y = 4\n"
    inside = text.index("bad")
    assert verify(text, "m.py", [(inside, inside + 3)]) is not None  # the decorated def is checked
    z = text.index("z = 3")
    assert verify(text, "m.py", [(z, z + 1)]) is None  # the statements on row 7 only
    assert verify(text, "m.py", [(0, 1)]) is None
    assert verify(text, "m.py") is not None  # no ranges: the whole module


def test_edits_are_applied_with_the_ranges_they_wrote():
    text = "a = 1\nb = 2\nc = 3\n"
    diags = [
        Diagnostic("DL001", "m", "p.py", Span(row, 1, row, 2), fix=Fix("safe", "m", (Edit(new, Span(row, 1, row, 2)),)))
        for row, new in ((1, "aa"), (3, ""))
    ]
    new_text, applied, ranges = apply_edits_with_ranges(text, diags)
    assert new_text == "aa = 1\nb = 2\n = 3\n"
    assert len(applied) == 2
    assert [new_text[a:b] for a, b in ranges] == ["aa", ""]
    assert ranges[1][0] == new_text.index(" = 3")


def test_file_over_the_size_limit_is_dl000(project):
    (project / "pyproject.toml").write_text("[tool.dllint]\nmax-file-size = 0.01\n")  # 10 kB
    (project / "gen.py").write_text(HEAD + FILLER)  # about 60 kB
    (project / "small.py").write_text(HEAD)
    code, out, err = run("--select", "ALL", ".")
    assert code == 1, err
    lines = out.splitlines()
    assert lines[0].startswith("gen.py:1:1: DL000 file too large to analyse (0.1 MB > 0.01 MB")
    assert any(line.startswith("small.py:") and "DL304" in line for line in lines)
    assert not any(line.startswith("gen.py:") and "DL304" in line for line in lines)


def test_stdin_over_the_size_limit_is_echoed_unchanged(project):
    (project / "pyproject.toml").write_text("[tool.dllint]\nmax-file-size = 0.01\n")
    data = (HEAD + FILLER).encode()
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--fix", "-", "--stdin-filename", "gen.py"], input=data)
    assert result.stdout_bytes == data
    assert "DL000 file too large to analyse" in result.stderr


def test_max_file_size_must_be_a_positive_number(project):
    (project / "pyproject.toml").write_text("[tool.dllint]\nmax-file-size = -1\n")
    (project / "a.py").write_text("x = 1\n")
    code, out, err = run(".")
    assert code == 2 and "max-file-size" in err
