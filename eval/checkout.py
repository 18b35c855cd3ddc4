"""Write the source files of a fetched repository snapshot at one commit into a folder.

    python eval/checkout.py GIT_DIR COMMIT DEST

``GIT_DIR`` is the git directory the tool library's ``fetch`` brings (``/work/.mirror/owner+name/repo``;
fetch ``github:owner/name`` first). Only what a linter reads is written: ``*.py``, ``*.pyi``,
``*.ipynb`` and the project markers (``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``.gitignore``);
blobs missing from the snapshot (large files are left out of snapshots) are skipped. A ``.git``
marker folder is created so DEST is the project root, as in the repository itself. Nothing fetched
is committed to dllint: labels name (repo, commit, path, line) and this command recreates the code.
"""

from __future__ import annotations

import os
import subprocess
import sys

KEEP_SUFFIXES = (".py", ".pyi", ".ipynb")
KEEP_NAMES = ("pyproject.toml", "setup.py", "setup.cfg", ".gitignore")


def checkout(git_dir: str, commit: str, dest: str) -> int:
    listing = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", commit], check=True, capture_output=True
    ).stdout.split(b"\0")
    wanted: list[tuple[str, str]] = []
    for entry in listing:
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, sha = meta.split()
        name = path.decode("utf-8", "surrogateescape")
        if kind != b"blob" or mode == b"120000":
            continue
        if name.endswith(KEEP_SUFFIXES) or os.path.basename(name) in KEEP_NAMES:
            wanted.append((sha.decode(), name))
    proc = subprocess.Popen(
        ["git", "--git-dir", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    written = 0
    assert proc.stdin is not None and proc.stdout is not None
    for sha, name in wanted:
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue
        blob = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after the content
        target = os.path.join(dest, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(blob)
        written += 1
    proc.stdin.close()
    proc.wait()
    os.makedirs(os.path.join(dest, ".git"), exist_ok=True)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    n = checkout(*sys.argv[1:])
    print(f"{n} files written to {sys.argv[3]}")
