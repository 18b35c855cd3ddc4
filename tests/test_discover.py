"""File discovery: .gitignore semantics, excludes, virtualenvs, module names."""

from __future__ import annotations

import pytest

from dllint.discover import DEFAULT_EXCLUDES, discover, find_project_root, module_name, parse_gitignore


def matches(patterns, path, is_dir=False):
    result = False
    for rule in parse_gitignore(patterns):
        if rule.dir_only and not is_dir:
            continue
        if rule.regex.match(path):
            result = not rule.negate
    return result


def test_gitignore_patterns():
    assert matches("*.py", "a/b.py")
    assert matches("/gen", "gen") and not matches("/gen", "a/gen")
    assert matches("docs/*.py", "docs/x.py") and not matches("docs/*.py", "docs/sub/x.py")
    assert matches("**/tmp", "a/b/tmp")
    assert matches("out/", "out", is_dir=True) and not matches("out/", "out", is_dir=False)
    assert not matches("*.py\n!keep.py", "keep.py")
    assert matches("a/**/z.py", "a/b/c/z.py") and matches("a/**/z.py", "a/z.py")


def write(root, rel, text="x = 1\n"):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_discover_honours_gitignore_excludes_and_venvs(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "secret/\n*.gen.py\n")
    write(tmp_path, "sub/.gitignore", "local.py\n")
    keep = [write(tmp_path, "a.py"), write(tmp_path, "sub/b.py"), write(tmp_path, "pkg/c.pyi")]
    write(tmp_path, "secret/x.py")
    write(tmp_path, "x.gen.py")
    write(tmp_path, "sub/local.py")
    write(tmp_path, "env/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "env/lib/site.py")
    write(tmp_path, "build/out.py")
    write(tmp_path, "vendor/v.py")
    found = discover([str(tmp_path)], str(tmp_path), [*DEFAULT_EXCLUDES, "vendor"])
    assert found == sorted(str(p) for p in keep)
    # without gitignore
    found = discover([str(tmp_path)], str(tmp_path), list(DEFAULT_EXCLUDES), respect_gitignore=False)
    assert str(tmp_path / "secret/x.py") in found
    # starting below the root still applies the root's .gitignore
    found = discover([str(tmp_path / "secret")], str(tmp_path), list(DEFAULT_EXCLUDES))
    assert found == []


def test_module_names_and_project_root(tmp_path):
    write(tmp_path, "pyproject.toml", "")
    write(tmp_path, "src/pkg/__init__.py", "")
    write(tmp_path, "src/pkg/sub/__init__.py", "")
    mod = write(tmp_path, "src/pkg/sub/data.py")
    script = write(tmp_path, "scripts/train.py")
    m = module_name(str(mod))
    assert (m.module, m.root, m.is_package) == ("pkg.sub.data", str(tmp_path / "src"), False)
    m = module_name(str(tmp_path / "src/pkg/__init__.py"))
    assert (m.module, m.is_package) == ("pkg", True)
    assert module_name(str(script)).module == "train"
    assert find_project_root([str(script)]) == str(tmp_path)


def _rule_by_rule(entries, path: str, is_dir: bool) -> bool:
    """git's reading of stacked .gitignore files, one rule at a time: the last rule that matches
    decides (a `dir/` rule matches a file only through a directory holding it)."""
    import os

    result = False
    for base, rules in entries:
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        if rel.startswith(".."):
            continue
        parts = rel.split("/")[:-1]
        parents = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        for rule in rules:
            if rule.dir_only and not is_dir:
                if any(rule.regex.match(p) for p in parents):
                    result = not rule.negate
                continue
            if rule.regex.match(rel):
                result = not rule.negate
    return result


@pytest.mark.parametrize("negations", [False, True])
def test_combined_ignore_matching_equals_rule_by_rule(negations):
    """The stack matches each .gitignore in runs of rules of the same verdict, each one set of
    names and one regex, from the last run back; it must decide exactly as the rules do one by
    one, for files and directories, in nested ignore files, with and without `!` rules."""
    import random

    from dllint.discover import IgnoreStack

    words = ["build", "data", "out", "a", "b.py", "*.py", "*.log", "ckpt*", "x/y", "/top", "docs/", "a/", "**/gen", "c?t", "[ab].txt", "logs/**"]
    if negations:
        words += ["!b.py", "!data", "!docs/", "!x/y", "!*.log", "!a/"]
    names = ["build", "data", "out", "a", "b.py", "c.py", "top", "docs", "gen", "cat", "a.txt", "logs", "x", "y", "ckpt1", "q.log"]
    rnd = random.Random(7)
    checked = 0
    for _ in range(300):
        outer = parse_gitignore("\n".join(rnd.sample(words, rnd.randint(1, 8))))
        inner = parse_gitignore("\n".join(rnd.sample(words, rnd.randint(0, 5))))
        entries = (("/r", outer),) + ((("/r/sub", inner),) if inner else ())
        stack = IgnoreStack(entries)
        for _ in range(30):
            depth = rnd.randint(1, 4)
            path = "/r/" + "/".join(rnd.choice(names + ["sub"]) for _ in range(depth))
            for is_dir in (False, True):
                assert stack.ignored(path, is_dir) == _rule_by_rule(entries, path, is_dir), (path, is_dir, outer, inner)
                checked += 1
    assert checked == 300 * 30 * 2


def test_a_subpackage_hidden_by_gitignore_is_resolved_but_never_linted(tmp_path, monkeypatch):
    # `data/` in .gitignore (meant for downloaded data) also matches the package `pkg/data/`:
    # Python imports it all the same, so the model needs it, but it is not linted
    from click.testing import CliRunner

    from dllint.cli import cli

    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    write(root, ".gitignore", "data/\n")
    write(root, "data/raw/a.py", "x = 1\n")  # a top-level ignored folder: not a subpackage, skipped
    write(root, "pkg/__init__.py", "")
    write(root, "pkg/data/__init__.py", "from .base import Base\n")
    write(root, "pkg/data/base.py", (
        "import glob\nfrom torch.utils.data import Dataset\n\n\n"
        "class Base(Dataset):\n"
        "    def __init__(self, root):\n"
        "        self.extra = sorted(glob.glob(root + '/*.json'))\n\n"
        "    def __len__(self):\n        return len(self.extra)\n"
    ))
    write(root, "pkg/images.py", (
        "import glob\nfrom pkg.data import Base\n\n\n"
        "class Images(Base):\n"
        "    def __init__(self, root):\n"
        "        super().__init__(root)\n"
        "        self.files = sorted(glob.glob(root + '/*.png'))\n\n"
        "    def __getitem__(self, idx):\n        return self.files[idx]\n"
    ))
    found = discover([str(root)], str(root), [], True)
    assert str(root / "pkg/data/base.py") not in found  # what is linted
    hidden: set[str] = set()
    assert discover([str(root)], str(root), [], True, packages=hidden) == found
    assert str(root / "pkg/data/base.py") in hidden and str(root / "data/raw/a.py") not in hidden
    monkeypatch.chdir(root)
    out = CliRunner().invoke(cli, ["check", "--select", "DL101", "--output-format", "concise", "-q", "--no-cache", "."]).output
    assert "pkg/images.py:8:9: DL101" in out  # Images is a Dataset through the hidden base
    assert "pkg/data/" not in out
