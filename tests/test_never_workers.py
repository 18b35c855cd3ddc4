"""A project that never starts DataLoader workers (``ProgramModel.never_starts_workers``): every
loader keeps ``num_workers`` at its default 0 and no project file's code names workers. A Dataset
that reaches its loaders unseen (unpickled) then runs in the main process: DL101 stays quiet.
The answer covers every project file, parsed or not, and a named file's analysis gives it too."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dllint.cli import cli
from dllint.prefilter import names_workers

DATASET = (
    "import os\nimport pickle\n\nimport torch\n\n\n"
    "class Graphs(torch.utils.data.Dataset):\n"
    "    def __init__(self, root):\n"
    "        self.items = [os.path.join(root, n) for n in sorted(os.listdir(root))]\n\n"
    "    def __len__(self):\n        return len(self.items)\n\n"
    "    def __getitem__(self, idx):\n        return self.items[idx]\n\n\n"
    "def load(path):\n    with open(path, 'rb') as f:\n        return pickle.load(f)\n"
)
MAIN = (
    "from torch.utils.data import DataLoader\n\nfrom graphs import load\n\n\n"
    "def main():\n    # TODO: try more workers\n"
    "    loader = DataLoader(load('train.pkl'), batch_size=32{extra})\n"
    "    for batch in loader:\n        pass\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)


def _project(root: Path, extra: str = "", others: dict[str, str] | None = None) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "graphs.py").write_text(DATASET)
    (root / "main.py").write_text(MAIN.format(extra=extra))
    for rel, text in (others or {}).items():
        (root / rel).write_text(text)
    return root


def _dl101(root: Path, monkeypatch, *paths: str) -> str:
    monkeypatch.chdir(root)
    args = ["check", "--select", "DL101", "--output-format", "concise", "-q", "--no-cache", *(paths or ["."])]
    return CliRunner().invoke(cli, args).output


def test_names_workers_reads_code_words_not_comments_or_prose():
    assert names_workers(b"DataLoader(ds, num_workers=args.workers)\n")
    assert names_workers(b"cfg = {'workers_per_gpu': 2}\n")
    assert names_workers(b"def seed(worker_id):\n    pass\n")
    assert not names_workers(b"# more workers later\nx = 1\n")
    assert not names_workers(b'"""Runs without workers."""\nx = 1\n')
    assert names_workers(b"def broken(:\n  n_workers = 2\n")  # does not compile: any mention counts


def test_a_project_that_never_names_workers_keeps_unseen_datasets_quiet(tmp_path, monkeypatch):
    root = _project(tmp_path / "proj")
    assert _dl101(root, monkeypatch) == ""
    assert _dl101(root, monkeypatch, "graphs.py") == ""  # a named file: the same answer


@pytest.mark.parametrize(
    "extra, others",
    [
        (", num_workers=4", None),
        (", num_workers=0", None),  # names workers: not proven for the loaders dllint cannot see
        ("", {"settings.py": "NUM_WORKERS = 8\n"}),  # a file without data-loading words
    ],
)
def test_a_project_naming_workers_anywhere_judges_unseen_datasets_with_workers(tmp_path, monkeypatch, extra, others):
    root = _project(tmp_path / "proj", extra, others)
    assert "graphs.py:9:9: DL101" in _dl101(root, monkeypatch)
    assert "graphs.py:9:9: DL101" in _dl101(root, monkeypatch, "graphs.py")
