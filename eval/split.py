"""Which part of a corpus a repository or project belongs to: ``dev`` or ``holdout``.

    python eval/split.py NAME [NAME ...]

A fifth of the names are held aside, decided by a hash of the name alone (``owner/repo``, lower
case), so the split is fixed before anything is labeled and cannot be tuned.
"""

from __future__ import annotations

import hashlib
import sys


def split_of(name: str) -> str:
    digest = hashlib.sha256(name.strip().lower().encode()).digest()
    return "holdout" if digest[0] % 5 == 0 else "dev"


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}\t{split_of(arg)}")
