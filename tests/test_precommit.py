"""The real pre-commit tool, with this checkout as the hook repository: a finding blocks the
commit, a clean file passes. Needs git and network access to PyPI (pre-commit installs the hook
into a fresh virtualenv, as users get it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def git(*args, cwd, env=None):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_pre_commit_hook_blocks_a_finding_and_passes_a_clean_file(tmp_path):
    head = git("rev-parse", "HEAD", cwd=ROOT)
    if head.returncode != 0:
        pytest.skip("this checkout has no commit to use as the hook revision")
    rev = head.stdout.strip()
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    assert git("init", "-q", cwd=repo, env=env).returncode == 0
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {rev}\n    hooks:\n      - id: dllint\n"
    )
    run = lambda *a: subprocess.run([sys.executable, "-m", "pre_commit", *a], cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    installed = run("install")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    (repo / "train.py").write_text('import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\n')
    git("add", ".", cwd=repo, env=env)
    blocked = git("commit", "-q", "-m", "bad", cwd=repo, env=env)
    output = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0, output
    assert "train.py:2:1: DL302" in output
    assert git("rev-parse", "HEAD", cwd=repo, env=env).returncode != 0  # nothing was committed

    (repo / "train.py").write_text('import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_descriptor")\n')
    git("add", ".", cwd=repo, env=env)
    passed = git("commit", "-q", "-m", "good", cwd=repo, env=env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "dllint" in (passed.stdout + passed.stderr)
