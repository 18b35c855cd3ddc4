"""The README's pre-commit `rev:` names the current version, and that version's tag exists (see
RELEASING.md): pre-commit users pin the tag, so a missing one breaks their install."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import dllint

ROOT = Path(__file__).resolve().parent.parent


def version() -> str:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'(?m)^version = "([^"]+)"', pyproject).group(1)


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60)


def test_readme_rev_is_the_current_version():
    revs = re.findall(r"(?m)^\s*rev: (\S+)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert revs == [f"v{version()}"]
    assert dllint.__version__ == version()


def test_the_current_version_is_tagged():
    if shutil.which("git") is None or git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    if not git("tag", "--list").stdout.strip():
        pytest.skip("this checkout has no tags (a shallow or archive copy)")
    tag = f"v{version()}"
    assert git("cat-file", "-t", tag).stdout.strip() == "tag", f"{tag} is missing or not an annotated tag (RELEASING.md)"
    tagged = git("show", f"{tag}:pyproject.toml").stdout
    assert f'version = "{version()}"' in tagged, f"{tag} is not on a commit with version {version()}"
