import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture()
def project(tmp_path, monkeypatch):
    """An empty project root (a `.git` marker), the current directory during the test."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture()
def demand_rounds(monkeypatch):
    """A list that gets one entry per round of planning demands (``Engine._demands``) the test's
    runs ask; ``clear()`` it between runs."""
    from dllint.engine import Engine

    rounds: list[int] = []
    real = Engine._demands

    def counting(self, *args, **kwargs):
        rounds.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Engine, "_demands", counting)
    return rounds
