"""Writing fixes: only over the bytes that were read, in place (links, inode, owner and mode
kept), never through a temporary file, one file's failure is that file's warning; standard input
and files on disk come back byte for byte except for the fix (encoding, BOM, line endings)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import dllint.commands.check as check_command
from dllint.cli import cli
from golden import ROOT

FIXABLE = "x = 1  # noqa: DL101\n"  # DL001: the unused directive is removed (a safe fix)
FIXED = "x = 1\n"


def run(*args, input=None):
    result = CliRunner().invoke(cli, ["check", "--no-cache", *args], input=input, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def run_bytes(*args, input: bytes):
    result = CliRunner().invoke(cli, ["check", "--no-cache", *args], input=input, catch_exceptions=False)
    return result.exit_code, result.stdout_bytes, result.stderr


def during_fix(monkeypatch, action):
    """Run ``action()`` after the fixes are computed and before they are written."""
    real = check_command.fix_loop

    def fix_loop(*args, **kwargs):
        out = real(*args, **kwargs)
        action()
        return out

    monkeypatch.setattr(check_command, "fix_loop", fix_loop)


# ---------------------------------------------------------------------------- item 1: races


def test_file_saved_during_the_run_is_not_overwritten(project, monkeypatch):
    a, b = project / "a.py", project / "b.py"
    a.write_text(FIXABLE)
    b.write_text(FIXABLE)
    saved = "x = 2  # noqa: DL101  (the user's edit)\n"
    during_fix(monkeypatch, lambda: a.write_text(saved))
    code, out, err = run("--fix", ".")
    assert a.read_text() == saved  # the user's edit survives
    assert b.read_text() == FIXED  # the other file is fixed
    assert "a.py" in err and "changed" in err and "not fixed" in err
    assert code == 1 and "a.py:1:8: DL001" in out  # and its finding is not reported as fixed


def test_file_deleted_during_the_run_is_not_recreated(project, monkeypatch):
    a, b = project / "a.py", project / "b.py"
    a.write_text(FIXABLE)
    b.write_text(FIXABLE)
    during_fix(monkeypatch, a.unlink)
    code, out, err = run("--fix", ".")
    assert not a.exists()
    assert b.read_text() == FIXED
    assert "a.py" in err and "deleted" in err
    assert code == 0, out


def test_a_killed_fix_leaves_no_temporary_file(project):
    """kill -9 just after dllint opens a file of the tree for writing (at the next audited event):
    nothing new is left in the tree, and the file holds either its old or its fixed text."""
    sub = project / "pkg"
    sub.mkdir()
    (sub / "a.py").write_text(FIXABLE)
    before = sorted(p.name for p in sub.iterdir())
    hook = textwrap.dedent(
        """
        import os, signal, sys
        TREE = sys.argv[1]
        opened = []

        def hook(event, args):
            if opened:
                opened.clear()
                os.kill(os.getpid(), signal.SIGKILL)
            if event == "open" and isinstance(args[0], str) and args[0].startswith(TREE):
                flags = args[2] if isinstance(args[2], int) else 0
                mode = args[1] if isinstance(args[1], str) else ""
                if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) or any(c in mode for c in "wax+"):
                    opened.append(args[0])

        sys.addaudithook(hook)
        sys.argv = ["dllint", "--fix", "--no-cache", TREE]
        from dllint.cli import main
        main()
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", hook, str(sub)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode in (0, -9), proc.stderr
    assert sorted(p.name for p in sub.iterdir()) == before
    left = (sub / "a.py").read_text()
    # the old text, or the fixed one (a shorter fix is padded with blanks until it is truncated)
    assert left == FIXABLE or left.rstrip(" ") == FIXED, left


# ---------------------------------------------------------------------------- item 2: links, owner, mode


def test_symlinked_file_fixes_the_target_and_keeps_the_link(tmp_path, monkeypatch):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (tree / ".git").mkdir()
    target = outside / "real.py"
    target.write_text(FIXABLE)
    (tree / "link.py").symlink_to(target)
    monkeypatch.chdir(tree)
    code, out, err = run("--fix", ".")
    assert code == 0, out + err
    assert (tree / "link.py").is_symlink()
    assert target.read_text() == FIXED


def test_hard_link_inode_and_mode_are_kept(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").mkdir()
    a = tree / "a.py"
    a.write_text(FIXABLE)
    os.chmod(a, 0o640)
    other = tmp_path / "other_name.py"
    os.link(a, other)
    ino = a.stat().st_ino
    monkeypatch.chdir(tree)
    code, out, err = run("--fix", ".")
    assert code == 0, out + err
    assert a.stat().st_ino == ino
    assert other.read_text() == FIXED  # the other name sees the fix
    assert stat.S_IMODE(a.stat().st_mode) == 0o640


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a file away")
def test_owner_is_kept(project):
    a = project / "a.py"
    a.write_text(FIXABLE)
    os.chown(a, 65534, 65534)
    code, out, err = run("--fix", ".")
    assert code == 0, out + err
    assert a.read_text() == FIXED
    assert (a.stat().st_uid, a.stat().st_gid) == (65534, 65534)


def test_read_only_file_is_reported_and_left_alone(project):
    a, b = project / "a.py", project / "b.py"
    a.write_text(FIXABLE)
    b.write_text(FIXABLE)
    os.chmod(a, 0o444)
    try:
        code, out, err = run("--fix", ".")
    finally:
        os.chmod(a, 0o644)
    assert a.read_text() == FIXABLE
    assert b.read_text() == FIXED
    assert "a.py" in err and "not writable" in err
    assert code == 1 and "a.py:1:8: DL001" in out  # still a finding, the run went on


def _without_dac_override():
    """In a child process started by root: give up the capabilities that let root ignore file
    permissions (so it is refused like any user). Nothing to do for another user."""
    if os.geteuid() != 0:
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_as_a_user(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m dllint ARGS`` as a process bound by file permissions (even when run by root)."""
    return subprocess.run(
        [sys.executable, "-m", "dllint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=_without_dac_override,
    )


def can_drop_permissions() -> bool:
    if sys.platform != "linux":
        return False
    try:
        proc = subprocess.run([sys.executable, "-c", "pass"], preexec_fn=_without_dac_override, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


needs_permissions = pytest.mark.skipif(not can_drop_permissions(), reason="file permissions cannot be enforced here")


@needs_permissions
def test_read_only_directory_and_file_do_not_abort_the_run(project):
    ro = project / "ro"
    ro.mkdir()
    (ro / "w.py").write_text(FIXABLE)  # writable, in a read-only directory
    (ro / "r.py").write_text(FIXABLE)  # read-only
    (project / "z.py").write_text(FIXABLE)
    os.chmod(ro / "r.py", 0o444)
    os.chmod(ro, 0o555)
    try:
        proc = run_as_a_user(project, "--fix", "--no-cache", ".")
    finally:
        os.chmod(ro, 0o755)
        os.chmod(ro / "r.py", 0o644)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert (ro / "w.py").read_text() == FIXED
    assert (project / "z.py").read_text() == FIXED
    assert (ro / "r.py").read_text() == FIXABLE
    assert "r.py" in proc.stderr and "not writable" in proc.stderr
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith("ro/r.py:1:8: DL001")


@needs_permissions
def test_unreadable_directory_is_skipped_with_a_warning(project):
    (project / "a.py").write_text("x = 1\n")
    secret = project / "secret"
    secret.mkdir()
    (secret / "b.py").write_text(FIXABLE)
    os.chmod(secret, 0)
    try:
        proc = run_as_a_user(project, "--no-cache", ".")
    finally:
        os.chmod(secret, 0o755)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning" in proc.stderr and "secret" in proc.stderr and "Permission denied" in proc.stderr


@needs_permissions
def test_unreadable_file_named_explicitly_is_dl000(project):
    (project / "a.py").write_text("x = 1\n")
    secret = project / "secret.py"
    secret.write_text("x = 1\n")
    os.chmod(secret, 0)
    try:
        named = run_as_a_user(project, "--no-cache", "secret.py")
        walked = run_as_a_user(project, "--no-cache", ".")
    finally:
        os.chmod(secret, 0o644)
    assert named.returncode == 1, named.stdout + named.stderr
    assert named.stdout.splitlines()[0].startswith("secret.py:1:1: DL000 cannot read file")
    assert walked.stdout.splitlines()[0] == named.stdout.splitlines()[0]


# ---------------------------------------------------------------------------- item 7: bytes kept


def test_stdin_latin1_comes_back_in_latin1():
    data = "# -*- coding: latin-1 -*-\nname = 'café'  # noqa: DL101\n".encode("latin-1")
    code, out, err = run_bytes("--fix", "-", "--stdin-filename", "m.py", input=data)
    assert out == "# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1"), err


def test_stdin_undecodable_is_echoed_unchanged():
    data = b"x = '\xff\xfe'  # noqa: DL101\n"
    code, out, err = run_bytes("--fix", "-", "--stdin-filename", "m.py", input=data)
    assert out == data
    assert "DL000" in err


def test_stdin_bom_is_kept():
    data = b"\xef\xbb\xbfx = 1  # noqa: DL101\r\ny = 2\r\n"
    code, out, err = run_bytes("--fix", "-", "--stdin-filename", "m.py", input=data)
    assert out == b"\xef\xbb\xbfx = 1\r\ny = 2\r\n", err


def test_stdin_without_fixes_comes_back_byte_for_byte():
    data = "# coding: latin-1\r\ns = 'é'\r\n".encode("latin-1")
    code, out, err = run_bytes("--fix", "-", "--stdin-filename", "m.py", input=data)
    assert out == data


def test_file_on_disk_keeps_encoding_bom_and_line_endings(project):
    latin = project / "latin.py"
    latin.write_bytes("# coding: latin-1\r\ns = 'é'  # noqa: DL101\r\n".encode("latin-1"))
    bom = project / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfs = '\xc3\xa9'  # noqa: DL101\n")
    code, out, err = run("--fix", ".")
    assert code == 0, out + err
    assert latin.read_bytes() == "# coding: latin-1\r\ns = 'é'\r\n".encode("latin-1")
    assert bom.read_bytes() == b"\xef\xbb\xbfs = '\xc3\xa9'\n"


def test_fix_the_encoding_cannot_hold_is_not_applied():
    from dllint.fix import encode_like

    with pytest.raises(ValueError, match="latin-1|iso-8859-1"):
        encode_like(b"# coding: latin-1\n", "# coding: latin-1\ns = '\u20ac'\n")


# ---------------------------------------------------------------------------- found by bench/fuzz.py

COOKIE_CASE = """# -*- coding: latin-1 -*-
LABEL = 'caf\u00e9'
from torch.utils.data import DataLoader, Dataset


def pad(value, batch):
    return batch


class Items(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return i


if __name__ == "__main__":
    DataLoader(Items(), num_workers=2, collate_fn=lambda b: pad(1, b))
"""


def test_an_added_import_goes_below_the_coding_cookie_and_shebang(project):
    import ast

    latin = project / "latin.py"
    latin.write_bytes(COOKIE_CASE.encode("latin-1"))
    script = project / "script.py"
    script.write_text("#!/usr/bin/env python\n" + COOKIE_CASE.split("\n", 1)[1].replace("caf\u00e9", "cafe"))
    code, out, err = run("--fix", "--unsafe-fixes", "--select", "DL103", ".")
    for path in (latin, script):
        data = path.read_bytes()
        ast.parse(data)  # the bytes, read the way Python reads them
        assert b"functools.partial(pad, 1)" in data, err
    assert latin.read_bytes().startswith(b"# -*- coding: latin-1 -*-\n")
    assert "caf\u00e9".encode("latin-1") in latin.read_bytes()
    assert script.read_text().startswith("#!/usr/bin/env python\n")


def test_a_fix_whose_bytes_would_read_back_differently_is_refused():
    from dllint.fix import encode_checked

    original = "# coding: latin-1\ns = '\u00e9'\n".encode("latin-1")
    assert encode_checked(original, "# coding: latin-1\ns = '\u00e8'\n") == "# coding: latin-1\ns = '\u00e8'\n".encode("latin-1")
    with pytest.raises(ValueError, match="coding declaration"):
        encode_checked(original, "import functools\n# coding: latin-1\ns = '\u00e9'\n")
