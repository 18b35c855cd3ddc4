"""A file named on the command line (``dllint check FILE``: a pre-commit hook's staged file, the
editor's open document) is analysed starting from that file: planning parses what it reaches and
the files that use its classes and functions by name, not the whole project. Its findings must be
those the whole-project run reports in that file, each with a fix of the same applicability (a
hook running ``--fix`` on staged files must not apply a fix the whole run holds back as unsafe).

Checked on every multi-file golden project and on generated "typical projects"
(tests/projectgen.py), file by file; ``bench/focus_check.py`` runs the same comparison on real
repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from golden import cases, copy_case
from projectgen import generate

PROJECTS = [c for c in cases() if c.is_project]


def _engine(root: Path):
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.discover import discover
    from dllint.engine import Engine

    settings, project_root = load_configuration([str(root)], None, Overrides(select=["ALL"]))
    targets = discover([str(root)], project_root, settings.all_excludes, settings.respect_gitignore)
    return (lambda: Engine(settings, project_root, jobs=1, cache=None)), targets, enabled_codes(settings)


def _package_inits(path: str, root: Path) -> list[str]:
    """The ``__init__.py`` files of the folders holding ``path``, up to ``root``."""
    out = []
    folder = Path(path).parent
    while folder != root and root in folder.parents:
        out.append(str(folder / "__init__.py"))
        folder = folder.parent
    return out


def _key(d):
    return (d.path, d.span.row, d.span.col, d.code, d.message, d.fix.applicability if d.fix is not None else None)


def _compare(root: Path, files: list[str] | None = None) -> tuple[int, int]:
    """(files compared, findings compared); asserts each file alone finds what the whole run finds there."""
    make, targets, enabled = _engine(root)
    whole = make().analyse(targets, enabled)
    by_file: dict[str, set] = {}
    for d in whole.diagnostics:
        by_file.setdefault(d.path, set()).add(_key(d))
    compared = findings = 0
    for path in files or [t for t in targets if t.endswith(".py")]:
        alone = make().analyse([path], enabled, None, {path})
        assert {_key(d) for d in alone.diagnostics} == by_file.get(path, set()), path
        # what it parses is what the whole run parses, but for the named file itself and the
        # ``__init__`` files of the packages holding it, read for what they re-export
        extra = set(alone.project.files) - set(whole.project.files)
        assert extra <= {path, *_package_inits(path, root)}, (path, sorted(extra))
        compared += 1
        findings += len(by_file.get(path, ()))
    return compared, findings


@pytest.mark.parametrize("case", PROJECTS, ids=[c.name for c in PROJECTS])
def test_each_file_of_a_fixture_project_alone(case, tmp_path):
    work = copy_case(case, tmp_path)
    compared, _ = _compare(work)
    assert compared >= 1


@pytest.mark.parametrize("seed", [0, 1])
def test_each_file_with_findings_of_a_generated_project_alone(seed, tmp_path):
    generate(str(tmp_path), seed=seed, files=80)
    make, targets, enabled = _engine(tmp_path)
    whole = make().analyse(targets, enabled)
    with_findings = sorted({d.path for d in whole.diagnostics})
    assert with_findings, "a generated project has findings (else the comparison proves nothing)"
    without = [t for t in targets if t.endswith(".py") and t not in with_findings][:10]
    compared, findings = _compare(tmp_path, with_findings + without)
    assert findings == len(whole.diagnostics)


def test_a_named_file_parses_only_what_it_reaches(tmp_path):
    """Two unrelated projects side by side under one root: a file of one, named alone, parses
    nothing of the other (the whole-project run parses both)."""
    import shutil

    from golden import FIXTURES

    shutil.copytree(FIXTURES / "projects" / "dl2_cross_file", tmp_path / "a", ignore=shutil.ignore_patterns("expected.txt", "*fixed"))
    shutil.copytree(FIXTURES / "projects" / "dl3_context_subclass_loader", tmp_path / "b", ignore=shutil.ignore_patterns("expected.txt", "*fixed"))
    (tmp_path / ".git").mkdir()
    make, targets, enabled = _engine(tmp_path)
    whole = make().analyse(targets, enabled)
    assert any("/b/" in p for p in whole.project.files) and any("/a/" in p for p in whole.project.files)
    for name in ("a/pkg/utils.py", "a/pkg/images.py", "a/pkg/base.py"):
        path = str(tmp_path / name)
        alone = make().analyse([path], enabled, None, {path})
        # b/train.py names `main` and `train` as a/train.py does: it is read as a possible caller
        # of the entry function that starts the workers, found unrelated and nothing else of b follows
        assert alone.project.files and not any("/b/" in p and not p.endswith("/b/train.py") for p in alone.project.files), sorted(alone.project.files)
        assert {_key(d) for d in alone.diagnostics} == {_key(d) for d in whole.diagnostics if d.path == path}


def test_a_notebook_put_aside_by_a_named_run_still_decides_a_fix(tmp_path):
    """A named file's run does not read the project's notebooks, yet a notebook growing a
    Dataset's list makes DL101's fix unsafe in the whole run (the notebook is analysed there):
    alone, the Dataset's file gets the same applicability (``Project.uses_elsewhere`` reads the
    notebooks put aside when they name the attribute)."""
    import json
    import shutil

    from golden import FIXTURES

    src = FIXTURES / "projects" / "dl101_attribute_used_elsewhere"
    for name in ("data.py", "train.py"):
        shutil.copy(src / name, tmp_path / name)
    (tmp_path / "pyproject.toml").write_text("")
    cells = [
        "from data import Clips\n\nclips = Clips('clips')",
        "clips.files.append('extra.txt')  # grown by hand, after the constructor",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c} for c in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    (tmp_path / "explore.ipynb").write_text(json.dumps(notebook))
    make, targets, enabled = _engine(tmp_path)
    whole = make().analyse(targets, enabled)
    data = str(tmp_path / "data.py")
    fixes = [(d.code, d.fix.applicability) for d in whole.diagnostics if d.path == data and d.code == "DL101"]
    assert fixes == [("DL101", "unsafe")], whole.diagnostics
    alone = make().analyse([data], enabled, None, {data})
    assert not any(p.endswith(".ipynb") for p in alone.project.files)  # not analysed, only read for the attribute
    assert {_key(d) for d in alone.diagnostics} == {_key(d) for d in whole.diagnostics if d.path == data}



# Shapes public repositories showed a named run getting wrong (``python bench/focus_check.py
# REPO --folders K``, the session of 2026-12-05, twelfth): evidence a whole run found in a third
# file, a Dataset built through a registry or a chain of builders, Datasets their package
# re-exports (by name, by a star import), a base class storing what a subclass's setup method
# hands it, OpenCV's threads turned off by a file the Dataset's does not reach. The whole run's findings are written out (``WHOLE``), so a named run agreeing with a
# whole run that lost them fails too.
CASES = {
    # a Dataset's constructor builds a reader of another file, whose own constructor reads a
    # list from a helper of a third file without trigger words
    "reach": ({
        "data/__init__.py": "",
        "data/ds.py": (
            "from torch.utils.data import Dataset\n\nfrom data.reader import Reader\n\n\n"
            "class Audio(Dataset):\n    def __init__(self, scp):\n        self.items = Reader(scp).items\n\n"
            "    def __len__(self):\n        return len(self.items)\n\n"
            "    def __getitem__(self, i):\n        return self.items[i]\n"
        ),
        "data/reader.py": (
            "from utils import util\n\n\nclass Reader:\n    def __init__(self, scp):\n"
            "        self.index = util.read_scp(scp)\n        self.items = []\n"
            "        for key in self.index:\n            self.items.append(self.index[key])\n"
        ),
        "utils/__init__.py": "",
        "utils/util.py": (
            "def read_scp(path):\n    out = {}\n    for line in open(path).readlines():\n"
            "        key, value = line.split()\n        out[key] = value\n    return out\n"
        ),
        "train.py": (
            "from torch.utils.data import DataLoader\n\nfrom data.ds import Audio\n\n\n"
            "def main():\n    return DataLoader(Audio('mix.scp'), num_workers=4)\n"
        ),
    }, ["data/ds.py"]),
    # a duck-typed Dataset built through a registry of classes, by a builder of its package
    "registry": ({
        "seg/__init__.py": (
            "from .ade import ADE\n\nDATASETS = {'ade': ADE}\n\n\n"
            "def get_dataset(name, **kwargs):\n    return DATASETS[name.lower()](**kwargs)\n"
        ),
        "seg/base.py": "class SegBase(object):\n    def __init__(self, root):\n        self.root = root\n\n    def __len__(self):\n        return 0\n",
        "seg/ade.py": (
            "import os\n\nfrom .base import SegBase\n\n\nclass ADE(SegBase):\n    def __init__(self, root='ade'):\n"
            "        super().__init__(root)\n        self.images = sorted(os.listdir(root))\n\n"
            "    def __getitem__(self, i):\n        return self.images[i]\n\n    def __len__(self):\n        return len(self.images)\n"
        ),
        "tools/train.py": (
            "from torch.utils import data\n\nfrom seg import get_dataset\n\n\n"
            "def main():\n    ds = get_dataset('ade', root='x')\n    return data.DataLoader(dataset=ds, num_workers=4)\n"
        ),
    }, ["seg/ade.py"]),
    # a builder returning another file's builder's Dataset, re-exported by its package
    "builders": ({
        "mydata/__init__.py": "from .videoqa import build_videoqa\n",
        "mydata/vqa.py": (
            "import torch\nfrom torch.utils.data import Dataset\n\n\nclass VQA(Dataset):\n"
            "    def __init__(self, path):\n        self.features = torch.load(path)\n\n"
            "    def __len__(self):\n        return len(self.features)\n\n"
            "    def __getitem__(self, i):\n        return self.features[i]\n\n\n"
            "def build_vqa(path):\n    return VQA(path)\n"
        ),
        "mydata/videoqa.py": (
            "from torch.utils.data import Dataset\n\nfrom mydata.vqa import build_vqa\n\n\n"
            "class VideoQA(Dataset):\n    def __init__(self, path):\n        self.path = path\n\n"
            "    def __len__(self):\n        return 1\n\n    def __getitem__(self, i):\n        return self.path\n\n\n"
            "def build_videoqa(name, path):\n    if name == 'vqa':\n        return build_vqa(path)\n    return VideoQA(path)\n"
        ),
        "train.py": (
            "from torch.utils.data import DataLoader\n\nfrom mydata import build_videoqa\n\n\n"
            "def main():\n    return DataLoader(build_videoqa('vqa', 'f.pt'), num_workers=4)\n"
        ),
    }, ["mydata/vqa.py"]),
    # Datasets re-exported by their package, one by name and one by a star import
    "reexport": ({
        "mydata/__init__.py": "from .coco import build_coco\nfrom .voc import *\n",
        "mydata/coco.py": (
            "import torch\nfrom torch.utils.data import Dataset\n\n\nclass Coco(Dataset):\n"
            "    def __init__(self, path):\n        self.features = torch.load(path)\n\n"
            "    def __len__(self):\n        return len(self.features)\n\n"
            "    def __getitem__(self, i):\n        return self.features[i]\n\n\n"
            "def build_coco(path):\n    return Coco(path)\n"
        ),
        "mydata/voc.py": (
            "import os\n\n\nclass VOC(object):\n    def __init__(self, root):\n        self.names = sorted(os.listdir(root))\n\n"
            "    def __len__(self):\n        return len(self.names)\n\n    def __getitem__(self, i):\n        return self.names[i]\n"
        ),
        "train.py": (
            "from torch.utils.data import DataLoader\n\nfrom mydata import VOC, build_coco\n\n\n"
            "def main():\n    a = DataLoader(build_coco('f.pt'), num_workers=4)\n"
            "    b = DataLoader(VOC('root'), num_workers=4)\n    return a, b\n"
        ),
    }, ["mydata/coco.py", "mydata/voc.py"]),
    # a base Dataset's method stores what a subclass's setup method hands it, a list another
    # Dataset file's helper makes
    "stored": ({
        "data/__init__.py": "",
        "data/base_dataset.py": (
            "from torch.utils import data\n\n\nclass BaseDataset(data.Dataset):\n"
            "    def init_index(self, paths):\n        self.counts = []\n        for p in paths:\n"
            "            self.counts.append(len(p))\n\n    def __len__(self):\n        return len(self.counts)\n"
        ),
        "data/image_folder.py": (
            "import os\n\nfrom torch.utils import data\n\n\ndef make_grouped(root):\n    out = []\n"
            "    for folder, _dirs, files in os.walk(root):\n        out.append(sorted(files))\n    return out\n\n\n"
            "class ImageFolder(data.Dataset):\n    def __init__(self, root):\n        self.root = root\n"
        ),
        "data/face_dataset.py": (
            "from data.base_dataset import BaseDataset\nfrom data.image_folder import make_grouped\n\n\n"
            "class FaceDataset(BaseDataset):\n    def initialize(self, root):\n"
            "        self.paths = sorted(make_grouped(root))\n        self.init_index(self.paths)\n\n"
            "    def __getitem__(self, i):\n        return self.paths[i], self.counts[i]\n"
        ),
        "train.py": (
            "from torch.utils.data import DataLoader\n\nfrom data.face_dataset import FaceDataset\n\n\n"
            "def main():\n    ds = FaceDataset()\n    ds.initialize('root')\n    return DataLoader(ds, num_workers=4)\n"
        ),
    }, ["data/base_dataset.py"]),
    # OpenCV in worker code, its threads turned off by a module no one imports from the Dataset
    "threads_off": ({
        "data/__init__.py": "",
        "data/images.py": (
            "import os\n\nimport cv2\nfrom torch.utils.data import Dataset\n\n\nclass Images(Dataset):\n"
            "    def __init__(self, root):\n        self.paths = sorted(os.listdir(root))\n\n"
            "    def __len__(self):\n        return len(self.paths)\n\n"
            "    def __getitem__(self, i):\n        return cv2.imread(self.paths[i])\n"
        ),
        "tools/env.py": "import cv2\n\n\ndef setup():\n    cv2.setNumThreads(0)\n",
        "train.py": (
            "from torch.utils.data import DataLoader\n\nfrom data.images import Images\n\n\n"
            "def main():\n    return DataLoader(Images('root'), num_workers=4)\n"
        ),
    }, ["data/images.py"]),
}


WHOLE = {
    "reach": {"data/ds.py": [(8, "DL101", "`self.items` holds a list of str from the lines of a file (util.py:3)")]},
    "registry": {"seg/ade.py": [(9, "DL101", "`self.images` holds a list of str from `os.listdir` (ade.py:9)")]},
    "builders": {"mydata/vqa.py": [(7, "DL102", "`torch.load(path)` may be CUDA state kept on `self.features`: fails in forked workers")]},
    "reexport": {
        "mydata/coco.py": [(7, "DL102", "`torch.load(path)` may be CUDA state kept on `self.features`: fails in forked workers")],
        "mydata/voc.py": [(6, "DL101", "`self.names` holds a list of str from `os.listdir` (voc.py:6)")],
    },
    "stored": {"data/base_dataset.py": [(6, "DL101", "`self.counts` holds a list of ints from `os.walk` (image_folder.py:8)")]},
    # (no DL204: a file of the project turns OpenCV's threads off)
    "threads_off": {"data/images.py": [(9, "DL101", "`self.paths` holds a list of str from `os.listdir` (images.py:9)")]},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_named_file_of_a_shape_real_repositories_showed(case, tmp_path):
    files, named = CASES[case]
    (tmp_path / ".git").mkdir()
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    make, targets, enabled = _engine(tmp_path)
    whole = make().analyse(targets, enabled)
    for rel in named:
        found = [(d.span.row, d.code, d.message) for d in whole.diagnostics if d.path == str(tmp_path / rel)]
        assert found == WHOLE[case][rel]
    assert _compare(tmp_path, [str(tmp_path / rel) for rel in named])[0] == len(named)
