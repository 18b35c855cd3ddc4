"""Where the project ends and which file a module name means (dllint/program/layout.py), on
projects written as users write them."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from dllint.config import Settings
from dllint.engine import Engine
from dllint.program.layout import AMBIGUOUS, Layout, find_project_root
from golden import run_dllint


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def analyse(root: Path, targets: list[str], bounded: bool = True):
    engine = Engine(Settings(target_version="py311"), str(root), jobs=1, bounded=bounded)
    return engine.analyse([str(root / t) for t in targets], {"DL201", "DL301"}, explicit={str(root / t) for t in targets})


CLEAN_DATA = """
    from torch.utils.data import Dataset

    class Images(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return i
"""

CUDA_DATA = """
    import torch
    from torch.utils.data import Dataset

    class Images(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return torch.zeros(3).cuda()
"""

TRAIN = """
    from torch.utils.data import DataLoader
    from data import Images

    if __name__ == "__main__":
        loader = DataLoader(Images(), num_workers=2)
        for batch in loader:
            pass
"""


# ------------------------------------------------------------------------- same-named modules


def test_same_named_modules_resolve_to_the_scripts_own_folder(tmp_path):
    """exp_a/train.py runs with exp_a on sys.path[0]: `from data import Images` is exp_a/data.py,
    never exp_b/data.py (whose Images initializes CUDA)."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "exp_a/data.py": CLEAN_DATA,
            "exp_a/train.py": TRAIN,
            "exp_b/data.py": CUDA_DATA,
            "exp_b/train.py": TRAIN,
        },
    )
    code, out = run_dllint(tmp_path, ["check", "--select", "DL201,DL301", "--target-version", "py311", "-q", "."])
    assert "exp_a/" not in out, out
    assert "exp_b/data.py:9:16: DL201" in out and "exp_b/train.py:5:14: DL301" in out, out


def test_the_importers_folder_wins_even_when_the_other_file_alone_is_analysed(tmp_path):
    """Only exp_a/train.py is named: exp_a/data.py is the module it imports, whatever else the
    project holds."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "exp_a/data.py": CLEAN_DATA,
            "exp_a/train.py": TRAIN,
            "exp_b/data.py": CUDA_DATA,
        },
    )
    analysis = analyse(tmp_path, ["exp_a/train.py"])
    (loader,) = analysis.project.index.loaders
    assert [os.path.relpath(d.file.path, tmp_path) for d in loader.datasets] == ["exp_a/data.py"]
    assert analysis.diagnostics == []


def test_two_candidates_outside_the_search_roots_are_ambiguous_and_silent(tmp_path):
    """A package module importing `data`, which only exp_a/ and exp_b/ provide (scripts that
    change sys.path): nothing tells which one is meant, so nothing depending on it is reported."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "exp_a/data.py": CLEAN_DATA,
            "exp_b/data.py": CUDA_DATA,
            "pkg/__init__.py": "",
            "pkg/run.py": TRAIN,
        },
    )
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    assert layout.find("data", str(tmp_path)) is AMBIGUOUS
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "-q", "pkg/run.py"])
    assert code == 0 and out == "", out


def test_one_candidate_outside_the_search_roots_is_taken(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "libs/data.py": CUDA_DATA,
            "pkg/__init__.py": "",
            "pkg/run.py": TRAIN,
        },
    )
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "-q", "pkg/run.py"])
    assert "pkg/run.py:5:14: DL301" in out, out


def test_a_module_of_a_folder_without_init_imports_from_the_scripts_folder_above_it(tmp_path):
    """`python main.py` in exp/votenet/, whose `lib/trainer.py` (no `__init__.py`) imports
    `datasets.scan.data`: Python finds it from the script's folder (sys.path[0]), above the
    module's own folder; so does dllint, and the loader in lib/ sees the Dataset."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "exp/votenet/main.py": "from lib.trainer import train\n\nif __name__ == '__main__':\n    train()\n",
            "exp/votenet/lib/trainer.py": """
                from torch.utils.data import DataLoader


                def train():
                    from datasets.scan.data import Images

                    loader = DataLoader(Images(), num_workers=2)
                    for batch in loader:
                        pass
            """,
            "exp/votenet/datasets/scan/data.py": CUDA_DATA,
            # a package's subpackage named like a library is not what its tools import
            "gl/__init__.py": "",
            "gl/torch/__init__.py": "",
            "gl/torch/utils/data.py": "",
            "gl/nursery/tool.py": "from torch.utils.data import DataLoader\n",
        },
    )
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    found = layout.find("datasets.scan.data", str(tmp_path / "exp/votenet/lib"))
    assert found == str(tmp_path / "exp/votenet/datasets/scan/data.py")
    assert layout.find("datasets.scan.missing", str(tmp_path / "exp/votenet/lib")) is None
    assert layout.find("torch.utils.data", str(tmp_path / "gl/nursery")) is None
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "-q", "."])
    assert "exp/votenet/lib/trainer.py:7:14: DL301" in out, out


def test_a_package_imported_by_its_bare_name_from_a_script_folder_inside_the_package_root(tmp_path):
    """RCAN: `code/` holds `main.py` and a stray `code/__init__.py`, so the package root of
    `code/data/div2k.py` is above `code/`; `python main.py` puts `code/` first on sys.path and
    `from data import base` there is `code/data/base.py`. The one module of the same package
    root whose name ends with the import is taken; two are ambiguous; a library's name is not
    taken for a project folder."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "sr/code/__init__.py": "",
            "sr/code/main.py": """
                from torch.utils.data import DataLoader
                from data.div2k import DIV2K

                loader = DataLoader(DIV2K(), num_workers=4)
                for batch in loader:
                    pass
            """,
            "sr/code/data/__init__.py": "",
            "sr/code/data/base.py": CUDA_DATA,
            "sr/code/data/div2k.py": "from data import base\n\n\nclass DIV2K(base.Images):\n    pass\n",
            "sr/code/datasets/__init__.py": "",
            "sr/code/twice/__init__.py": "",
            "sr/code/twice/a/__init__.py": "",
            "sr/code/twice/a/common.py": "",
            "sr/code/twice/b/__init__.py": "",
            "sr/code/twice/b/common.py": "",
        },
    )
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    root = str(tmp_path / "sr")
    assert layout.find("data.base", root) == str(tmp_path / "sr/code/data/base.py")
    assert layout.find("data", root) == str(tmp_path / "sr/code/data/__init__.py")
    assert layout.find("common", root) is AMBIGUOUS
    assert layout.find("datasets", root) is None  # the library, not sr/code/datasets
    assert layout.find("data.base", str(tmp_path / "elsewhere")) is None  # another root's files are not taken so
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "-q", "."])
    assert "sr/code/main.py:4:10: DL301" in out, out


def test_a_library_import_is_not_taken_for_a_project_subpackage_with_the_same_tail(tmp_path):
    """`import lightning.pytorch as pl` in a project whose package `nemo` holds
    `lightning/pytorch/` (NeMo): the library, not `nemo.lightning.pytorch`. Matching a dotted
    import to the one project module ending with it (a package put on sys.path by a config) was
    tried and withdrawn for this: nothing in the files tells the two apart."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "nemo/__init__.py": "",
            "nemo/lightning/__init__.py": "",
            "nemo/lightning/pytorch/__init__.py": "",
            "nemo/lightning/pytorch/trainer.py": "class Trainer:\n    pass\n",
            "examples/train.py": "import lightning.pytorch as pl\nfrom lightning.pytorch.trainer import Trainer\n",
        },
    )
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    for module in ("lightning.pytorch", "lightning.pytorch.trainer"):
        assert layout.find(module, str(tmp_path / "examples")) is None
        assert layout.find(module, str(tmp_path)) is None


def test_a_package_module_run_as_a_script_imports_from_its_own_folder(tmp_path):
    """pkg/eval/run.py has a main guard: run as `python pkg/eval/run.py`, its folder is
    sys.path[0] and `from data import Images` is pkg/eval/data.py, before the project root's
    data.py. A package module without a main guard does not search its folder."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "data.py": CLEAN_DATA,
            "pkg/__init__.py": "",
            "pkg/eval/__init__.py": "",
            "pkg/eval/data.py": CUDA_DATA,
            "pkg/eval/run.py": TRAIN,
            "pkg/eval/lib.py": "from data import Images\n",
        },
    )
    analysis = analyse(tmp_path, ["pkg/eval/run.py", "pkg/eval/lib.py"])
    model = analysis.project.index
    (loader,) = model.loaders
    assert [os.path.relpath(d.file.path, tmp_path) for d in loader.datasets] == ["pkg/eval/data.py"]
    lib = model.files[str(tmp_path / "pkg/eval/lib.py")]
    found = model.resolve(lib.imports["Images"], lib.root)
    assert os.path.relpath(found.file.path, tmp_path) == "data.py"
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "-q", "."])
    assert "pkg/eval/run.py:5:14: DL301" in out, out


def test_a_script_in_a_package_keeps_its_own_names_when_a_sibling_shares_the_package_name(tmp_path):
    """diffusion/diffusion.py beside diffusion/guided.py (a script with a main guard): the
    model names guided.py's own definitions `diffusion.guided.X`; those are found from the
    package root, never in the sibling module diffusion/diffusion.py."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "diffusion/__init__.py": "",
            "diffusion/diffusion.py": "X = 1\n",
            "diffusion/guided.py": """
                from torch.utils.data import DataLoader, Dataset

                class Dataset(Dataset):
                    def __len__(self):
                        return 4

                    def __getitem__(self, i):
                        return i

                if __name__ == "__main__":
                    for batch in DataLoader(Dataset(), num_workers=2):
                        pass
            """,
        },
    )
    analysis = analyse(tmp_path, ["diffusion/guided.py"])
    model = analysis.project.index
    assert [ref.cls.qualname for ref in model.dataset_classes()] == ["diffusion.guided.Dataset"]


def test_a_script_named_like_its_folder_imports_the_folder_as_a_namespace_package(tmp_path):
    """train/train.py doing `from train.data import Images`: from train/ (its own folder) `train`
    is the script itself, a module without submodules, where the import fails; the program runs
    from the project root (`python -m train.train`), where `train` is the folder."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "train/data.py": CLEAN_DATA,
            "train/train.py": TRAIN.replace("from data import", "from train.data import"),
        },
    )
    analysis = analyse(tmp_path, ["train/train.py"])
    (loader,) = analysis.project.index.loaders
    assert [os.path.relpath(d.file.path, tmp_path) for d in loader.datasets] == ["train/data.py"]


# ------------------------------------------------------------------------- namespace packages


def test_namespace_package_modules_resolve(tmp_path):
    """`ns` has no __init__.py (a namespace package); `ns.vision` is a regular package in it."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "src/ns/vision/__init__.py": "",
            "src/ns/vision/data.py": CUDA_DATA,
            "train.py": TRAIN.replace("from data import Images", "from ns.vision.data import Images"),
        },
    )
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    assert layout.find("ns.vision.data", str(tmp_path)) == str(tmp_path / "src/ns/vision/data.py")
    assert layout.find("ns.missing", str(tmp_path)) is None
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "-q", "--output-format", "full", "train.py"])
    assert "train.py:5:14: DL301" in out and "= hazards: DL201 src/ns/vision/data.py:9" in out, out


def test_relative_imports_name_a_module_of_namespace_packages(tmp_path):
    """`lib/pkg/` and `lib/pkg/sub/` have no __init__.py: `from ..base import X` in
    `lib/pkg/sub/m.py` runs only as `pkg.sub.m` (rooted at `lib`), so `..base` is
    `lib/pkg/base.py` and the CUDA call in its Dataset reaches the loader's workers."""
    from dllint.facts.extract import namespace_name
    import ast

    text = "from ..base import Images\n"
    m = str(tmp_path / "lib/pkg/sub/m.py")
    sub = str(tmp_path / "lib/pkg/sub")
    assert namespace_name(m, "m", sub, False, text, ast.parse(text)) == ("pkg.sub.m", str(tmp_path / "lib"))
    plain = "from base import Images\n"
    assert namespace_name(m, "m", sub, False, plain, ast.parse(plain)) == ("m", sub)
    doc = '"""\nfrom ..base import Images (an example)\n"""\n'
    assert namespace_name(m, "m", sub, False, doc, ast.parse(doc)) == ("m", sub)  # prose, not an import
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "lib/pkg/base.py": CUDA_DATA,
            "lib/pkg/sub/m.py": "from ..base import Images\n\n\nclass Coco(Images):\n    pass\n",
            "train.py": TRAIN.replace("from data import Images", "import sys\n    sys.path.insert(0, 'lib')\n    from pkg.sub.m import Coco as Images"),
        },
    )
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "-q", "--output-format", "full", "train.py"])
    assert "train.py:7:14: DL301" in out and "= hazards: DL201 lib/pkg/base.py:9" in out, out


def test_a_namespace_package_spread_over_two_roots_is_merged(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "ns/a.py": "A = 1\n",
            "src/ns/b.py": "B = 2\n",
        },
    )
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    assert layout.find("ns.a", str(tmp_path)) == str(tmp_path / "ns/a.py")
    assert layout.find("ns.b", str(tmp_path)) == str(tmp_path / "src/ns/b.py")


def test_a_regular_package_in_an_earlier_root_shadows_a_later_one(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "pkg/__init__.py": "",
            "pkg/data.py": "X = 1\n",
            "src/pkg/__init__.py": "",
            "src/pkg/data.py": "X = 2\n",
            "src/pkg/only_here.py": "X = 3\n",
        },
    )
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    assert layout.find("pkg.data", str(tmp_path)) == str(tmp_path / "pkg/data.py")
    # Python would not look in src/pkg once pkg/ is found: not a project module
    assert layout.find("pkg.only_here", str(tmp_path)) is None


# ------------------------------------------------------------------------- where the project ends


def test_without_a_marker_only_the_named_file_and_its_imports_are_read(tmp_path):
    if find_project_root([str(tmp_path)]) is not None:
        pytest.skip("a project marker above the temporary folder")
    files = {"x.py": TRAIN, "data.py": CUDA_DATA}
    for i in range(50):  # an unrelated crowd of Dataset files beside it
        files[f"crowd/mod{i}.py"] = CUDA_DATA
    write(tmp_path, files)
    code, out = run_dllint(tmp_path, ["check", "--select", "DL301", "--target-version", "py311", "--no-cache", "--output-format", "full", "x.py"])
    assert "x.py:5:14: DL301" in out and "= hazards: DL201 data.py:9" in out, out
    analysis = analyse(tmp_path, ["x.py"], bounded=False)
    assert sorted(os.path.relpath(p, tmp_path) for p in analysis.project.files) == ["data.py", "x.py"]


def test_the_project_root_is_the_nearest_marker(tmp_path):
    for marker in ("setup.py", "setup.cfg", "pyproject.toml", ".git"):
        root = tmp_path / marker.replace(".", "_")
        (root / "a" / "b").mkdir(parents=True)
        if marker == ".git":
            (root / marker).mkdir()
        else:
            (root / marker).write_text("")
        assert find_project_root([str(root / "a" / "b")]) == str(root)


def test_a_common_class_name_does_not_pull_in_every_file_that_says_it(tmp_path):
    """A Dataset called ``D`` in ``solo.py``: the files analysed follow imports and the class
    hierarchy, so library files saying ``D`` (a class, a variable, an import) stay unread, while a
    file importing ``solo`` and subclassing ``D`` is read."""
    solo = """
        import torch
        from torch.utils.data import DataLoader, Dataset

        class D(Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                return torch.zeros(3).cuda()

        if __name__ == "__main__":
            for batch in DataLoader(D(), num_workers=2):
                pass
    """
    files = {".git/HEAD": "", "solo.py": solo}
    for i in range(120):  # library-like files using the same short name
        files[f"lib/pkg{i % 6}/mod{i}.py"] = f"from .base import D\n\nclass Box{i}(D):\n    size = {i}\n\nd = D()\n"
    for k in range(6):
        files[f"lib/pkg{k}/base.py"] = "class D:\n    pass\n"
    files["use_solo.py"] = "from solo import D\n\nclass E(D):\n    pass\n"
    write(tmp_path, files)
    analysis = analyse(tmp_path, ["solo.py"])
    read = sorted(os.path.relpath(p, tmp_path) for p in analysis.project.files)
    assert read == ["solo.py", "use_solo.py"], read
    assert any(d.code == "DL301" and d.path.endswith("solo.py") for d in analysis.diagnostics)


# ---------------------------------------------------------------------------- folders put on sys.path


def _tails(src: str):
    from dllint.facts.extract import extract

    return extract("/p/cfg.py", "cfg", "/p", False, textwrap.dedent(src).encode()).signals.get("sys_path", [])


def test_the_ends_of_folders_a_file_puts_on_sys_path_are_recorded():
    assert _tails("""
        import os.path as osp
        import sys

        def add_path(path):
            if path not in sys.path:
                sys.path.insert(0, path)

        ROOT = osp.realpath(".")
        add_path(osp.join(ROOT, "furnace"))
        add_path(path=osp.join(ROOT, "lib", "ops"))
    """) == [("first", ("furnace",)), ("first", ("lib", "ops"))]
    assert _tails("""
        import sys
        from pathlib import Path
        HERE = Path(__file__).resolve().parent
        sys.path.append(str(HERE / "third_party" / "yolov5"))
        sys.path.append("../models")
        sys.path.extend(["tools"])
    """) == [("last", ("models",)), ("last", ("third_party", "yolov5")), ("last", ("tools",))]
    # nothing written at the end: nothing recorded
    assert _tails("""
        import os, sys
        sys.path.append("..")
        sys.path.insert(0, os.getcwd())
        sys.path.append(os.path.dirname(os.path.abspath(__file__)))
        path = "x"  # not the sys module's path
        path.insert(0, "lib")
    """) == []


TORCHSEG = {
    "pyproject.toml": "[project]\nname = 'x'\n",
    "furnace/__init__.py": "",
    "furnace/datasets/__init__.py": "from .voc.voc import VOC\n",
    "furnace/datasets/base.py": """
        from torch.utils.data import Dataset


        class BaseDataset(Dataset):
            def __init__(self, source):
                with open(source) as f:
                    self._file_names = [line.strip().split("\\t") for line in f.readlines()]

            def __len__(self):
                return len(self._file_names)

            def __getitem__(self, index):
                return self._file_names[index]


        if __name__ == "__main__":
            print(len(BaseDataset("train.txt")))
    """,
    "furnace/datasets/voc/__init__.py": "",
    "furnace/datasets/voc/voc.py": "from datasets.base import BaseDataset\n\n\nclass VOC(BaseDataset):\n    pass\n",
    "model/voc.dfn/config.py": """
        import os.path as osp
        import sys

        def add_path(path):
            if path not in sys.path:
                sys.path.insert(0, path)

        root_dir = osp.realpath(".")[: osp.realpath(".").index("TorchSeg") + 8]
        add_path(osp.join(root_dir, "furnace"))
        num_workers = 8
    """,
    "model/voc.dfn/train.py": """
        from torch.utils.data import DataLoader
        from config import num_workers
        from datasets import VOC

        if __name__ == "__main__":
            loader = DataLoader(VOC("train.txt"), num_workers=num_workers)
            for batch in loader:
                pass
    """,
}


def test_a_folder_a_config_inserts_on_sys_path_holds_the_modules_its_scripts_import(tmp_path):
    """TorchSeg's layout: `model/*/config.py` inserts `<repo>/furnace` first on sys.path, so
    `from datasets import VOC` and furnace's own `from datasets.base import BaseDataset` mean
    `furnace/datasets/` (before any installed `datasets`); its base class is then a Dataset
    imported by the project, not a demo class of a script."""
    write(tmp_path, TORCHSEG)
    code, out = run_dllint(tmp_path, ["check", "--select", "DL101", "-q", "."])
    assert code == 1 and "furnace/datasets/base.py:7:13: DL101" in out, out
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    voc_root = str(tmp_path)  # furnace/ is a package: its modules' root is the repository
    assert layout.find("datasets.base", voc_root) is None  # nothing known of sys.path yet
    layout.add_search_tails(str(tmp_path / "model/voc.dfn/config.py"), [("first", ("furnace",))])
    assert layout.find("datasets.base", voc_root) == str(tmp_path / "furnace/datasets/base.py")
    assert layout.find("datasets", str(tmp_path / "model/voc.dfn")) == str(tmp_path / "furnace/datasets/__init__.py")
    assert layout.find("datasets.missing", voc_root) is None


def test_an_appended_folder_does_not_shadow_a_library_and_two_folders_are_ambiguous(tmp_path):
    """The folder a path names is the path's end below an ancestor of the file adding it (a root
    computed from ``__file__`` or the working folder): ``a/run.py`` appending ``lib`` adds
    ``a/lib``, not ``d/lib`` of another sub-project."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "a/lib/__init__.py": "",  # (its modules are lib.torch ...: no other fallback finds torch.utils)
            "a/lib/torch/__init__.py": "",
            "a/lib/torch/utils.py": "",
            "a/lib/data/coco.py": "",
            "b/lib/data/coco.py": "",
            "c/tools/data/voc.py": "",
            "d/lib/data/voc2.py": "",
        },
    )
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    layout.add_search_tails(str(tmp_path / "a/run.py"), [("last", ("lib",))])
    layout.add_search_tails(str(tmp_path / "c/x/run.py"), [("last", ("tools",))])
    assert layout.find("torch.utils", str(tmp_path)) is None  # the installed torch wins
    assert layout.find("data.coco", str(tmp_path)) == str(tmp_path / "a/lib/data/coco.py")
    assert layout.find("data.voc", str(tmp_path)) == str(tmp_path / "c/tools/data/voc.py")
    assert layout.find("data.voc2", str(tmp_path)) is None  # d/lib: no file adds it
    layout.add_search_tails(str(tmp_path / "b/tools/run.py"), [("last", ("lib",))])
    assert layout.find("data.coco", str(tmp_path)) is AMBIGUOUS  # a/lib or b/lib: not decided
    layout.add_search_tails(str(tmp_path / "a/run.py"), [("first", ("lib",))])
    assert layout.find("torch.utils", str(tmp_path)) == str(tmp_path / "a/lib/torch/utils.py")


def test_a_folder_put_on_sys_path_is_searched_without_a_project_marker_too(tmp_path):
    """Without a marker the layout knows only the files read so far: the folder's modules are
    found on the file system."""
    write(tmp_path, {"run.py": "", "vendor/lib/data/coco.py": "", "vendor/lib/data/__init__.py": ""})
    layout = Layout(str(tmp_path), {str(tmp_path / "run.py")}, bounded=False)
    assert layout.find("data.coco", str(tmp_path)) is None
    layout.add_search_tails(str(tmp_path / "run.py"), [("first", ("vendor", "lib"))])
    assert layout.find("data.coco", str(tmp_path)) == str(tmp_path / "vendor/lib/data/coco.py")


# ------------------------------------------------------------------------- libraries' names


def test_a_project_package_named_like_a_library_has_its_calls_kept(tmp_path):
    """A research repository's own `datasets/` package (Hugging Face's library name) or
    `logging/` folder (the standard library's): a script beside it imports the project's package, so the
    calls into it bind the project's parameters. `Images(files)` in `main.py` passes a listing to
    the constructor of `datasets/folder.py`; `other/tool.py` (no such folder) keeps nothing."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n",
            "datasets/__init__.py": "",
            "datasets/folder.py": """
                from torch.utils.data import Dataset

                class Images(Dataset):
                    def __init__(self, files):
                        self.files = files

                    def __len__(self):
                        return len(self.files)

                    def __getitem__(self, i):
                        return self.files[i]
            """,
            "main.py": """
                import glob
                from torch.utils.data import DataLoader
                from datasets.folder import Images

                if __name__ == "__main__":
                    loader = DataLoader(Images(sorted(glob.glob("data/*.png"))), num_workers=4)
                    for batch in loader:
                        pass
            """,
            "tools/logging/helpers.py": "",
        },
    )
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    assert layout.shadowing() == {"datasets", "logging"}  # (folders of those names anywhere)
    assert Layout(str(tmp_path), {str(tmp_path / "main.py")}, bounded=False).shadowing() == {"datasets"}
    code, out = run_dllint(tmp_path, ["check", "--select", "DL101", "-q", "."])
    assert code == 1 and "datasets/folder.py:5:9: DL101" in out and "(main.py:6)" in out, out


def test_a_datasets_module_beside_a_packages_scripts_shadows_the_library_other_names_do_not(tmp_path):
    """``reid/train.py`` run from its folder imports ``reid/datasets.py`` as ``datasets`` even
    though ``reid`` is a package; a package's ``torch.py`` or ``lightning/`` are parts of it
    (counting them would keep every ``torch.*`` call in the facts)."""
    write(
        tmp_path,
        {
            "reid/__init__.py": "",
            "reid/datasets.py": "",
            "reid/train.py": "from datasets import ClsDataset\n",
            "core/__init__.py": "",
            "core/torch.py": "",
            "core/lightning/__init__.py": "",
        },
    )
    layout = Layout(str(tmp_path), {str(p) for p in tmp_path.rglob("*.py")})
    assert layout.shadowing() == {"datasets"}
