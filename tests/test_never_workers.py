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


# ------------------------------------------------------------------ kept in the main process


@pytest.mark.parametrize(
    "marker, packaged",
    [
        ({}, False),
        ({"pyproject.toml": "[tool.black]\nline-length = 100\n"}, False),  # tools' settings only
        ({"setup.py": "from setuptools import setup\nsetup(name='lib')\n"}, True),
        ({"pyproject.toml": "[project]\nname = 'lib'\n"}, True),
        ({"pyproject.toml": "[build-system]\nrequires = ['setuptools']\n"}, True),
    ],
)
def test_a_class_only_indexed_where_it_is_built_is_quiet_unless_the_project_is_a_package(tmp_path, marker, packaged):
    """`recon.py` builds `EvalImages` and indexes it itself (pifuhd's shape): no worker copies
    it. In a distributable package the class is its users' too, whose loaders are unseen: the
    common case (workers, fork) decides, as for any library class."""
    from dllint.config import is_packaged

    from golden import run_dllint

    files = {
        "lib/data.py": (
            "import glob\n\nfrom torch.utils.data import Dataset\n\n\n"
            "class EvalImages(Dataset):\n"
            "    def __init__(self, root):\n        self.files = sorted(glob.glob(root + '/*.png'))\n\n"
            "    def __len__(self):\n        return len(self.files)\n\n"
            "    def __getitem__(self, i):\n        return self.files[i]\n"
        ),
        "recon.py": (
            "from lib.data import EvalImages\n\n\n"
            "def main(root):\n    ds = EvalImages(root)\n    for i in range(len(ds)):\n        print(ds[i])\n\n\n"
            "if __name__ == '__main__':\n    main('data')\n"
        ),
        **marker,
    }
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert is_packaged(str(tmp_path)) is packaged
    code, out = run_dllint(tmp_path, ["check", "--select", "DL101", "-q", "."])
    assert (code == 1 and "lib/data.py:8:9: DL101" in out) is packaged, out


def test_a_module_variable_a_function_reads_is_not_kept_where_it_is_built(tmp_path):
    """`dataset = Images(...)` at module level, given to a loader by `train()` reading the
    global: the instance leaves the statement that builds it (dgl's jtnn `vaetrain_dgl.py`)."""
    from golden import run_dllint

    (tmp_path / ".git").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/data.py").write_text(
        "import glob\n\nfrom torch.utils.data import Dataset\n\n\n"
        "class Images(Dataset):\n"
        "    def __init__(self, root):\n        self.files = sorted(glob.glob(root + '/*.png'))\n\n"
        "    def __len__(self):\n        return len(self.files)\n\n"
        "    def __getitem__(self, i):\n        return self.files[i]\n"
    )
    (tmp_path / "train.py").write_text(
        "import lightning\n\nfrom lib.data import Images\n\ndataset = Images('data')\nprint(len(dataset))\n\n\n"
        "def train():\n    lightning.Trainer().fit(None, train_dataloaders=dataset)\n\n\n"
        "if __name__ == '__main__':\n    train()\n"
    )
    code, out = run_dllint(tmp_path, ["check", "--select", "DL101", "-q", "."])
    assert code == 1 and "lib/data.py:8:9: DL101" in out, out
