"""The project-wide join, tested on hand-written facts (no parsing), and name resolution in files."""

from __future__ import annotations

import ast

from dllint.config import Settings
from dllint.facts.context import FileContext
from dllint.facts.extract import extract
from dllint.discover import ModuleName
from dllint.program.layout import Layout
from dllint.program.model import ProgramModel
from dllint.program.values import _part_met
from dllint.model import CallRef, ClassFacts, FileFacts, FunctionFacts, LoaderCall, NO_SPAN, StartMethodCall, Value


def ref(q):
    return Value("ref", ref=q)


def call(q):
    return Value("call", ref=q)


def const(c):
    return Value("const", const=c)


def fn(qual, cls=None, calls=()):
    return FunctionFacts(qualname=qual, name=qual.rsplit(".", 1)[-1], cls=cls, span=NO_SPAN, calls=tuple(calls))


def file(path, module, root="/p", **kw):
    return FileFacts(path=path, module=module, root=root, **kw)


def build(*files, settings=None, all_modules=None):
    """A model of hand-written facts; ``all_modules`` (module -> paths) adds project files that
    exist but are not analysed."""
    facts = {f.path: f for f in files}
    layout = Layout.from_facts(facts)
    for module, paths in (all_modules or {}).items():
        for path in paths:
            layout.add(path)
            layout._names[path] = ModuleName(module, "/p", path.endswith("__init__.py"))
    return ProgramModel(facts, settings or Settings(), layout)


def project_two_files():
    base = file(
        "/p/pkg/base.py",
        "pkg.base",
        imports={"tud": "torch.utils.data"},
        classes={
            "pkg.base.Base": ClassFacts(
                "pkg.base.Base", "Base", NO_SPAN, bases=(ref("torch.utils.data.Dataset"),),
                methods={"__getitem__": "pkg.base.Base.__getitem__"},
            )
        },
        functions={
            "pkg.base.Base.__getitem__": fn("pkg.base.Base.__getitem__", "pkg.base.Base", [CallRef("self", "load", 1)])
        },
    )
    init = file("/p/pkg/__init__.py", "pkg", is_package=True, imports={"Base": "pkg.base.Base"})
    data = file(
        "/p/pkg/data.py",
        "pkg.data",
        imports={"Base": "pkg.Base"},
        classes={
            "pkg.data.Images": ClassFacts(
                "pkg.data.Images", "Images", NO_SPAN, bases=(ref("pkg.Base"),),
                methods={"load": "pkg.data.Images.load"},
            ),
            "pkg.data.NotData": ClassFacts("pkg.data.NotData", "NotData", NO_SPAN),
        },
        functions={
            "pkg.data.Images.load": fn("pkg.data.Images.load", "pkg.data.Images", [CallRef("ref", "pkg.data.decode", 2)]),
            "pkg.data.decode": fn("pkg.data.decode"),
        },
    )
    return base, init, data


def test_dataset_through_reexported_base_in_another_file():
    idx = build(*project_two_files())
    names = {c.cls.qualname for c in idx.dataset_classes()}
    assert names == {"pkg.base.Base", "pkg.data.Images"}


def test_worker_functions_bind_self_to_the_concrete_class():
    idx = build(*project_two_files())
    images = idx.resolve_class("pkg.data.Images", "/p")
    reached = {q for (_, q) in idx.worker_functions(images)}
    assert reached == {"pkg.base.Base.__getitem__", "pkg.data.Images.load", "pkg.data.decode"}
    base = idx.resolve_class("pkg.base.Base", "/p")
    assert {q for (_, q) in idx.worker_functions(base)} == {"pkg.base.Base.__getitem__"}


def loader_file(args, positional=1, unresolved=False, start_methods=(), imports=None):
    return file(
        "/p/train.py",
        "train",
        imports=imports or {"DataLoader": "torch.utils.data.DataLoader", "Images": "pkg.data.Images"},
        loaders=(
            LoaderCall("torch.utils.data.DataLoader", NO_SPAN, NO_SPAN, "train", args=args, positional=positional,
                       unresolved_kwargs=unresolved),
        ),
        start_methods=tuple(start_methods),
    )


def test_loader_workers_context_and_dataset():
    files = project_two_files()
    idx = build(*files, loader_file({"dataset": call("pkg.data.Images"), "num_workers": const(4)}))
    (loader,) = idx.loaders
    assert loader.workers == "yes" and loader.context is None
    assert [d.cls.qualname for d in loader.datasets] == ["pkg.data.Images"]
    assert loader.start_methods == frozenset({"fork"}) or Settings().python_range()[0] >= 14
    images = idx.resolve_class("pkg.data.Images", "/p")
    base = idx.resolve_class("pkg.base.Base", "/p")
    assert idx.loaders_using(images) == [loader]
    assert idx.loaders_using(base) == [loader]  # a subclass instance is used


def test_workers_verdicts():
    cases = [
        ({}, False, "no"),
        ({"num_workers": const(0)}, False, "no"),
        ({"num_workers": const(2)}, False, "yes"),
        ({"num_workers": Value("unknown")}, False, "maybe"),
        ({"num_workers": Value("union", options=(const(0), const(4)))}, False, "maybe"),
        ({}, True, "maybe"),
    ]
    for args, unresolved, expected in cases:
        idx = build(*project_two_files(), loader_file({"dataset": call("pkg.data.Images"), **args}, unresolved=unresolved))
        assert idx.loaders[0].workers == expected, (args, unresolved)


def test_context_verdicts():
    for value, expected in [
        (const("spawn"), "spawn"),
        (Value("call", ref="multiprocessing.get_context", const="forkserver"), "forkserver"),
        (Value("unknown"), "unknown"),
        (const(None), None),
    ]:
        idx = build(loader_file({"num_workers": const(2), "multiprocessing_context": value}))
        assert idx.loaders[0].context == expected
        if expected and expected != "unknown":
            assert idx.loaders[0].start_methods == frozenset({expected})


def test_set_start_method_in_an_importing_entry_script():
    data = loader_file({"num_workers": const(2)})
    main = file(
        "/p/main.py",
        "main",
        imported_modules=frozenset({"train"}),
        start_methods=(StartMethodCall("spawn", NO_SPAN, "main", True, False, False),),
    )
    idx = build(data, main)
    assert idx.loaders[0].start_methods == frozenset({"spawn"})
    # an unrelated script's call does not apply
    other = file("/p/other.py", "other", start_methods=(StartMethodCall("spawn", NO_SPAN, "other", True, False, False),))
    idx = build(data, other, settings=Settings(target_version="py311"))
    assert idx.loaders[0].start_methods == frozenset({"fork"})


def test_class_passed_to_loader_is_a_dataset_without_torch_base():
    plain = file(
        "/p/plain.py",
        "plain",
        classes={"plain.Rows": ClassFacts("plain.Rows", "Rows", NO_SPAN, methods={"__getitem__": "plain.Rows.__getitem__"})},
        functions={"plain.Rows.__getitem__": fn("plain.Rows.__getitem__", "plain.Rows")},
    )
    idx = build(plain, loader_file({"dataset": call("plain.Rows"), "num_workers": const(1)}))
    assert [c.cls.qualname for c in idx.dataset_classes()] == ["plain.Rows"]


def test_unparsed_project_module_is_reported_as_a_miss():
    idx = build(loader_file({"dataset": call("pkg.data.Images")}), all_modules={"pkg.data": ["/p/pkg/data.py"]})
    assert idx.loaders[0].datasets == []
    assert idx.misses == {"/p/pkg/data.py"}


def test_same_module_name_in_two_roots_prefers_the_importers_root():
    a = file("/a/data.py", "data", root="/a", classes={"data.DS": ClassFacts("data.DS", "DS", NO_SPAN, bases=(ref("torch.utils.data.Dataset"),))})
    b = file("/b/data.py", "data", root="/b", classes={"data.Other": ClassFacts("data.Other", "Other", NO_SPAN)})
    idx = build(a, b)
    assert idx.resolve_class("data.DS", "/a").file.path == "/a/data.py"
    assert idx.resolve_class("data.DS", "/b") is None


def test_package_binding_shadows_a_submodule_of_the_same_name():
    # pkg/Base.py defines Base; pkg/__init__.py does `from .Base import Base`: Python's
    # `from pkg import Base` looks the package attribute up first, which is the class
    mod = file(
        "/p/pkg/Base.py", "pkg.Base",
        classes={"pkg.Base.Base": ClassFacts("pkg.Base.Base", "Base", NO_SPAN, bases=(ref("torch.utils.data.Dataset"),))},
    )
    init = file("/p/pkg/__init__.py", "pkg", is_package=True, imports={"Base": "pkg.Base.Base"})
    user = file(
        "/p/app.py", "app", imports={"Base": "pkg.Base"},
        classes={"app.Images": ClassFacts("app.Images", "Images", NO_SPAN, bases=(ref("pkg.Base"),))},
    )
    idx = build(mod, init, user)
    assert idx.resolve_class("pkg.Base", "/p").cls.qualname == "pkg.Base.Base"
    assert {c.cls.qualname for c in idx.dataset_classes()} == {"pkg.Base.Base", "app.Images"}
    # `from . import Base` in the package: the submodule itself
    plain = file("/p/pkg/__init__.py", "pkg", is_package=True, imports={"Base": "pkg.Base"})
    assert idx.resolve("pkg.Base", "/p") is not None
    assert build(mod, plain, user).resolve("pkg.Base", "/p").path == "/p/pkg/Base.py"
    # a package that does not bind the name: the submodule
    bare = file("/p/pkg/__init__.py", "pkg", is_package=True)
    assert build(mod, bare, user).resolve("pkg.Base", "/p").path == "/p/pkg/Base.py"


# ------------------------------------------------------------------------- resolution in a file


def test_a_rebinding_hides_earlier_assignments_from_a_later_use():
    src = """
from torch.utils.data import DataLoader
from data import Slow, Fast, Either
ds = Slow()
ds = Fast()
DataLoader(ds, num_workers=4)
for epoch in range(3):
    DataLoader(ds, num_workers=4)
    ds = Either()
if cond:
    other = Slow()
else:
    other = Fast()
DataLoader(other)
def f(flag):
    x = Slow()
    if flag:
        x = Fast()
    DataLoader(x)
    x = Either()
    return DataLoader(x)
"""
    facts = facts_of(src)
    got = [sorted(a.ref for a in ld.args["dataset"].alternatives()) for ld in facts.loaders]
    assert got == [
        ["data.Fast"],  # the second assignment runs on every path to the loader
        ["data.Either", "data.Fast"],  # in a loop: the assignment after it reaches it on the next pass
        ["data.Fast", "data.Slow"],  # branches: both
        ["data.Fast", "data.Slow"],  # a conditional rebinding does not hide the first
        ["data.Either"],
    ]


def facts_of(src, module="m"):
    return extract(f"/x/{module}.py", module, "/x", False, src.encode())


def test_aliases_resolve_to_canonical_names():
    src = """
import torch.utils.data as tud
from torch.utils.data import DataLoader as DL
import torch
from torch.utils.data.dataloader import DataLoader as Inner
class A(tud.Dataset): pass
class B(torch.utils.data.dataset.Dataset): pass
def f(ds):
    DL(ds, num_workers=2)
    torch.utils.data.DataLoader(ds, 8, False, None, None, 3)
    Inner(ds)
    tud.DataLoader(dataset=ds)
"""
    facts = facts_of(src)
    assert [b.ref for c in facts.classes.values() for b in c.bases] == ["torch.utils.data.Dataset"] * 2
    assert [l.callee for l in facts.loaders] == ["torch.utils.data.DataLoader"] * 4
    assert facts.loaders[1].args["num_workers"].const == 3  # positional index 5


def test_relative_imports_and_local_shadowing():
    src = """
from .base import Base
from ..util import helper
def g():
    DataLoader = object
    DataLoader(1, num_workers=2)
"""
    facts = extract("/x/pkg/sub/m.py", "pkg.sub.m", "/x", False, src.encode())
    assert facts.imports == {"Base": "pkg.sub.base.Base", "helper": "pkg.util.helper"}
    assert facts.loaders == ()  # the local name is not torch's DataLoader


def test_kwargs_dict_and_mutations_are_resolved():
    src = """
from torch.utils.data import DataLoader
def make(ds, cfg):
    kw = {"batch_size": 4}
    kw["num_workers"] = 6
    kw.update(multiprocessing_context="spawn")
    a = DataLoader(ds, **kw)
    b = DataLoader(ds, **cfg)
    c = DataLoader(ds, **dict(num_workers=0))
"""
    a, b, c = facts_of(src).loaders
    assert a.args["num_workers"].const == 6 and a.args["multiprocessing_context"].const == "spawn"
    assert not a.unresolved_kwargs
    assert b.unresolved_kwargs
    assert c.args["num_workers"].const == 0


def test_self_attribute_values_and_module_constants():
    src = """
import torch
from torch.utils.data import DataLoader
WORKERS = 4
class Module:
    def setup(self):
        self.train_ds = MyDS()
    def train_dataloader(self):
        return DataLoader(self.train_ds, num_workers=WORKERS)
"""
    facts = facts_of(src)
    (loader,) = facts.loaders
    assert loader.args["dataset"].kind == "call"
    assert loader.args["num_workers"].const == 4  # the module constant, followed
    assert facts.constants["WORKERS"].const == 4


def test_positions_are_character_columns():
    src = 'x = "ééé"; import torch.multiprocessing as mp; mp.set_start_method("spawn")\n'
    facts = facts_of(src)
    (sm,) = facts.start_methods
    assert sm.span.col == src.index("mp.set_start_method") + 1
    assert sm.method == "spawn"


def test_form_feed_does_not_shift_rows():
    src = "import torch\n\x0c\ntorch.multiprocessing.set_start_method('fork')\n"
    (sm,) = facts_of(src).start_methods
    assert sm.span.row == 3


def test_an_overridden_method_without_super_writes_nothing_on_the_subclass():
    src = """
import numpy as np
from torch.utils.data import Dataset
class Lines(Dataset):
    def __init__(self, path):
        self.path = path
        self._load()
    def _load(self):
        with open(self.path) as f:
            self.items = [line.strip() for line in f]
    def __getitem__(self, idx):
        return self.items[idx]
class Packed(Lines):
    def _load(self):
        self.items = np.load(self.path)
class Cached(Lines):
    def _load(self):
        super()._load()
        self.cache = {}
"""
    facts = facts_of(src)
    idx = build(facts)
    by_name = {c.cls.name: c for c in idx.dataset_classes()}
    writers = lambda name: sorted(fn.fn.qualname.rsplit(".", 2)[-2] for fn, _ in idx.attr_writes(by_name[name], "items"))  # noqa: E731
    assert writers("Packed") == ["Packed"]  # Lines._load never runs on a Packed
    assert writers("Cached") == ["Lines"]  # it runs through super()._load()
    assert writers("Lines") == ["Lines"]
    assert idx.attr_value(by_name["Packed"], "items").kinds == frozenset({"ndarray"})


POSES = """
import json
import torch
from torch.utils.data import Dataset
class Poses(Dataset):
    def __init__(self, path, train=True):
        self.train_mode = train
        with open(path) as fh:
            self.anno = json.load(fh)
        self.train, self.valid = [], []
        for i, rec in enumerate(self.anno):
            if rec["val"]:
                self.valid.append(i)
            else:
                self.train.append(i)
        self.mean = self._mean()
    def _mean(self):
        total = torch.zeros(3)
        for i in self.train:
            total += torch.tensor(self.anno[i]["rgb"])
        return total / len(self.train)
    def __getitem__(self, k):
        i = self.train[k] if self.train_mode else self.valid[k]
        return torch.tensor(self.anno[i]["rgb"]) - self.mean
    def __len__(self):
        return len(self.train) if self.train_mode else len(self.valid)
"""


def test_what_an_attribute_holds_does_not_depend_on_what_was_asked_before_it():
    # ``self.train`` asked first: the worker code's reach (which methods the workers run) asks
    # what ``self.valid`` holds, whose loop index reads ``self.anno``, whose own writes ask the
    # worker code again, which asks ``self.train`` (with the workers' writes) while the loop
    # index is still being computed: that answer read it as nothing and must not be kept
    answers = _asked_after(POSES, "m.Poses", "train", ([], ["anno"], ["valid"], ["mean", "valid"], ["train_mode"]))
    for first, train in answers:
        assert train.kinds == frozenset({"list"}) and train.elem.kinds == frozenset({"int"}), first
    assert all(train == answers[0][1] for _, train in answers)


def _asked_after(src: str, cls: str, attr: str, orders) -> list:
    """[(questions asked first, what ``attr`` holds then)], each on a fresh settled model."""
    facts = facts_of(src)
    out = []
    for first in orders:
        idx = build(facts)
        idx.settle()
        ref = idx.resolve(cls, "/x")
        for other in first:
            idx.attr_value(ref, other)
        out.append((first, idx.attr_value(ref, attr)))
    return out


def test_a_list_sorted_back_into_itself_holds_what_was_appended_whichever_value_was_asked_first():
    # ``self.paths = natural(self.paths)`` reads the attribute back while its value is computed
    # (neutral: it holds what the loop appended). Asked first, the worker code's reach asks the
    # same attribute with the workers' writes inside that computation: the read back is still
    # the attribute's own, not unknown
    src = """
import os
from PIL import Image
from torch.utils.data import Dataset
def natural(names):
    return sorted(names, key=lambda n: (len(n), n))
class Scans(Dataset):
    def __init__(self, root, opt):
        self.opt = opt
        self.paths = []
        for folder, _, names in os.walk(root):
            for name in names:
                if name.endswith(".png"):
                    self.paths.append(os.path.join(folder, name))
        self.paths = natural(self.paths)
        self.n = len(self.paths)
    def __len__(self):
        return self.n
    def __getitem__(self, index):
        if self.opt.gray:
            return Image.open(self.paths[index]).convert("L")
        return Image.open(self.paths[index]).convert("RGB")
"""
    for first, paths in _asked_after(src, "m.Scans", "paths", ([], ["n"], ["opt"])):
        assert paths.kinds == frozenset({"list"}) and paths.elem.kinds == frozenset({"str"}) and paths.size == "data", first


def test_a_forwarding_subclass_passes_on_what_its_callers_pass_before_a_star():
    # ``Sub(files, *extra)`` through ``def __init__(self, *args, **kwargs)``: ``files`` is passed
    # positionally before the star, so it is what ``Base.__init__`` gets as ``files``
    src = """
import glob
from torch.utils.data import Dataset
class Base(Dataset):
    def __init__(self, files, flag=False):
        self.files = files
    def __getitem__(self, idx):
        return self.files[idx]
class Sub(Base):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
def build(extra):
    return Sub(glob.glob("/data/*.jpg"), *extra)
"""
    idx = build(facts_of(src))
    sub = next(c for c in idx.dataset_classes() if c.cls.name == "Sub")
    value = idx.attr_value(sub, "files")
    assert value.kinds == frozenset({"list"}) and value.size == "data"


def _cli_model(*sources):
    """A model of several modules written as source: (module, code) pairs under /x."""
    files = {}
    for module, src in sources:
        facts = facts_of(src, module)
        files[facts.path] = facts
    return build(*files.values())


CLI_LOADER = """
from torch.utils.data import DataLoader
from param import args

def loaders(ds, opt):
    a = DataLoader(ds, num_workers=args.num_workers)
    b = DataLoader(ds, num_workers=int(opt.threads))
    c = DataLoader(ds, num_workers=opt.data.num_workers)
    return a, b, c
"""


def test_worker_count_from_command_line_defaults():
    param = """
import argparse
def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--numWorkers", dest="num_workers", default=0)
    parser.add_argument("-t", "--threads", type=int, default=4)
    return parser.parse_args()
args = parse_args()
"""
    model = _cli_model(("param", param), ("loaders", CLI_LOADER))
    assert model.cli_default("num_workers") == 0
    assert model.cli_default("threads") == 4
    a, b, c = sorted(model.loaders, key=lambda ld: ld.call.span.row)
    assert [ld.workers for ld in (a, b, c)] == ["maybe", "maybe", "maybe"]
    # flat namespaces take the option's default; a nested config key is not an option
    assert [model.default_workers(ld) for ld in (a, b, c)] == ["no", "yes", "maybe"]


def test_a_worker_count_from_a_constant_or_an_option_takes_both_as_written():
    # a constant of another module is resolved as ``workers_of`` resolves it, the option takes
    # its default
    param = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=0)
args = parser.parse_args()
"""
    consts = """
DEBUG_WORKERS = 0
FAST_WORKERS = 8
"""
    loaders = """
from torch.utils.data import DataLoader
from param import args
from consts import DEBUG_WORKERS, FAST_WORKERS

def loaders(ds, debug):
    a = DataLoader(ds, num_workers=DEBUG_WORKERS if debug else args.workers)
    b = DataLoader(ds, num_workers=FAST_WORKERS if debug else args.workers)
    return a, b
"""
    model = _cli_model(("param", param), ("consts", consts), ("loaders", loaders))
    a, b = sorted(model.loaders, key=lambda ld: ld.call.span.row)
    assert [ld.workers for ld in (a, b)] == ["maybe", "maybe"]
    assert [model.default_workers(ld) for ld in (a, b)] == ["no", "maybe"]


def test_command_line_defaults_that_do_not_decide():
    declared_twice = """
import argparse
p = argparse.ArgumentParser()
p.add_argument("--num_workers", type=int, default=0)
q = argparse.ArgumentParser()
q.add_argument("--num_workers", type=int, default=8)
q.add_argument("--threads", type=int)
"""
    model = _cli_model(("param", declared_twice), ("loaders", CLI_LOADER))
    assert model.cli_default("num_workers") is None  # two defaults: either may run
    assert model.cli_default("threads") is None  # no default: None, not a count
    assigned = """
import argparse
from param import args
parser = argparse.ArgumentParser()
parser.add_argument("--num_workers", type=int, default=0)
args.num_workers = 8
"""
    model = _cli_model(("param", assigned), ("loaders", CLI_LOADER))
    assert model.cli_default("num_workers") is None
    updated = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--num_workers", type=int, default=0)
args = parser.parse_args()
args.__dict__.update(load_config(args))
"""
    model = _cli_model(("param", updated), ("loaders", CLI_LOADER))
    assert model.cli_default("num_workers") is None
    click_src = """
import click
@click.command()
@click.option("--num-workers", default=0)
def main(num_workers):
    pass
"""
    model = _cli_model(("cli", click_src))
    assert model.cli_default("num_workers") == 0


def test_a_scripts_own_parser_decides_its_worker_count():
    """Two training scripts declare `--workers` with different defaults: each loader reads its
    own script's namespace."""
    train_a = """
import argparse
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=0)
args = parser.parse_args()
loader = DataLoader(ds, num_workers=args.workers)
"""
    train_b = train_a.replace("default=0", "default=8")
    model = _cli_model(("train_a", train_a), ("train_b", train_b))
    assert model.cli_default("workers") is None  # the project holds both
    by_file = {ld.file.module: model.default_workers(ld) for ld in model.loaders}
    assert by_file == {"train_a": "no", "train_b": "yes"}


def test_a_scripts_own_parser_is_not_changed_by_another_programs_namespace():
    """A script reads `--num_workers` from its own parser; another script assigns a
    `num_workers` on its own config: that namespace is not this one, so the default decides.
    The script assigning its own option does not get a default (either value may run)."""
    train = """
import argparse
from torch.utils.data import DataLoader
parser = argparse.ArgumentParser()
parser.add_argument("--num_workers", type=int, default=8)
args = parser.parse_args()
loader = DataLoader(ds, num_workers=args.num_workers)
"""
    other = """
def tune(cfg):
    cfg.num_workers = 0
"""
    model = _cli_model(("train", train), ("other", other))
    (loader,) = model.loaders
    assert model.default_workers(loader) == "yes"
    assert model.cli_default("num_workers") is None  # asked for the project: someone assigns it
    own = train.replace("args = parser.parse_args()\n", "args = parser.parse_args()\nargs.num_workers = 0\n")
    model = _cli_model(("train", own), ("other", other))
    (loader,) = model.loaders
    assert model.default_workers(loader) == "maybe"


CORPUS_LOADERS = """
from torch.utils.data import ConcatDataset, DataLoader, Dataset

class Lines(Dataset):
    def __init__(self, path):
        self.lines = open(path).read().splitlines()
    def __getitem__(self, i):
        return self.lines[i]

class Pairs(Lines):
    pass

class Corpus:
    def __init__(self, train):
        self._train = train
    @property
    def train(self):
        return self._train

class LinesCorpus(Corpus):
    def __init__(self, files):
        super().__init__(ConcatDataset([Lines(f) for f in files]))

class PairsCorpus(Corpus):
    def __init__(self, path):
        super().__init__(Pairs(path))

class BatchLoader(DataLoader):
    def __init__(self, dataset, batch_size=1):
        super().__init__(dataset, batch_size=batch_size, num_workers=0, collate_fn=list)

def loaders(files, path):
    lines = LinesCorpus(files)
    pairs = PairsCorpus(path)
    a = DataLoader(lines.train, num_workers=2)
    b = BatchLoader(pairs.train, batch_size=8)
    return a, b
"""


def test_datasets_reach_a_loader_through_a_property_and_a_subclass_loader():
    # ``lines.train``: the property returns what LinesCorpus (not its sibling PairsCorpus) hands
    # to ``Corpus.__init__``: each ``Lines`` of a ConcatDataset built by a comprehension.
    # ``BatchLoader(pairs.train)``: the loader is the subclass's ``super().__init__``, given
    # what each caller passes as ``dataset``
    model = build(facts_of(CORPUS_LOADERS))
    by_row = sorted(model.loaders, key=lambda ld: ld.call.span.row)
    base_init, direct = by_row[0], by_row[1]
    assert [r.cls.name for r in direct.datasets] == ["Lines"]
    assert [r.cls.name for r in base_init.datasets] == ["Pairs"] and base_init.workers == "no"


DATA_PROCESSOR = """
import json
from torch.utils.data import DataLoader, Dataset

class Records(Dataset):
    def __init__(self, records):
        self.records = records
    def __getitem__(self, i):
        return self.records[i]

class Other(Records):
    pass

class Processor:
    def __init__(self, paths):
        self.splits = {}
        for split, path in paths.items():
            self.splits[split] = Records(json.load(open(path)))
        self.extra = []
        self.extra.append(Other([]))

    def get_splits(self):
        return self.splits["train"], self.extra[0]

class Runner:
    def __init__(self, paths):
        self.data = Processor(paths)

    def train(self):
        train, extra = self.data.get_splits()
        a = DataLoader(train, num_workers=0)
        b = DataLoader(extra, num_workers=2)
        return a, b
"""


def test_datasets_kept_in_a_dict_and_returned_by_a_method_reach_their_loaders():
    # ``train, extra = self.data.get_splits()``: the method of the class ``self.data`` holds
    # returns a tuple; its first item is what ``self.splits[split] = Records(...)`` stored, its
    # second what ``self.extra.append(Other(...))`` did
    model = build(facts_of(DATA_PROCESSOR))
    a, b = sorted(model.loaders, key=lambda ld: ld.call.span.row)
    assert [r.cls.name for r in a.datasets] == ["Records"]
    assert [r.cls.name for r in b.datasets] == ["Other"]


def test_a_dataclass_init_takes_the_base_fields_first_and_runs_post_init():
    # the generated ``__init__(self, root, files, limit)``: ``Sub("/d", listing)`` binds
    # ``files`` (the base's fields come first); ``__post_init__`` runs in the constructor
    src = """
import os
from dataclasses import dataclass, field
from torch.utils.data import Dataset

@dataclass
class Base(Dataset):
    root: str
    files: list = field(default_factory=list)

@dataclass
class Sub(Base):
    limit: int = 10
    def __post_init__(self):
        self.index = {f: i for i, f in enumerate(self.files)}
    def __getitem__(self, i):
        return self.files[i]

def build(root):
    return Sub(root, os.listdir(root))
"""
    idx = build(facts_of(src))
    sub = next(c for c in idx.dataset_classes() if c.cls.name == "Sub")
    files = idx.attr_value(sub, "files")
    assert files.kinds == frozenset({"list"}) and files.size == "data"
    assert idx.attr_value(sub, "root").size != "data"
    assert idx.attr_value(sub, "index").kinds == frozenset({"dict"})
    init = idx.find_method(sub, "__init__")
    assert init.fn.params == ("self", "root", "files", "limit")


def test_test_suite_files_are_told_by_their_place_under_the_project_root():
    from dllint.program.refs import is_test_path

    root = "/home/u/tests/proj"  # a project that itself lives under a folder named tests
    assert is_test_path(f"{root}/tests/test_data.py", root)
    assert is_test_path(f"{root}/pkg/unit_tests/helpers.py", root)
    assert is_test_path(f"{root}/pkg/data_test.py", root)
    assert is_test_path(f"{root}/conftest.py", root)
    assert not is_test_path(f"{root}/pkg/datasets.py", root)
    assert not is_test_path(f"{root}/pkg/testing_utils.py", root)  # a name, not a folder
    assert not is_test_path(f"{root}/latest/data.py", root)


GUARDED = """
import sys
from torch.utils.data import DataLoader
from data import Shards, Folder, Other
SHARDS = "--shards" in sys.argv
if SHARDS:
    ds = Shards()
else:
    ds = Folder()
if SHARDS:
    DataLoader(ds, num_workers=4)
else:
    DataLoader(ds)
DataLoader(ds, num_workers=2)
def f(fast, other):
    if fast:
        x = Folder()
    else:
        x = Shards()
    if not fast:
        DataLoader(x, num_workers=8)
    if other:
        DataLoader(x, num_workers=1)
"""


def test_an_assignment_in_the_other_arm_of_the_same_test_does_not_reach_the_loader():
    # the same flag tested twice: the arm of the first ``if`` that the loader's arm excludes
    # cannot reach it (``if not fast`` is the else arm of ``if fast``); another test, or no test
    # around the loader, keeps both
    facts = facts_of(GUARDED)
    loaders = sorted(facts.loaders, key=lambda ld: ld.span.row)
    got = [sorted(a.ref for a in ld.args["dataset"].alternatives()) for ld in loaders]
    assert got == [["data.Shards"], ["data.Folder"], ["data.Folder", "data.Shards"], ["data.Shards"], ["data.Folder", "data.Shards"]]
    model = build(facts)
    by_row = sorted(model.loaders, key=lambda ld: ld.call.span.row)
    assert [[r.cls.name for r in ld.datasets] for ld in by_row] == [[]] * 5  # (data.py is not analysed)
    assert [ld.args_ir["dataset"][0] for ld in loaders] == ["c", "c", "n", "c", "n"]


ALTERNATE_CONSTRUCTORS = """
import json
from torch.utils.data import DataLoader

def load_manifest(path):
    with open(path) as f:
        return [json.loads(line) for line in f]

class AudioSet:
    def __init__(self, meta):
        self.meta = meta
    def __getitem__(self, i):
        return self.meta[i]
    @classmethod
    def from_manifest(cls, path):
        return cls(load_manifest(path))

class MusicSet(AudioSet):
    def __init__(self, *args, card=16, **kwargs):
        super().__init__(*args, **kwargs)
        self.card = card
    @classmethod
    def from_folder(cls, root):
        return cls(load_manifest(root + "/music.jsonl"))

def loaders(path):
    music = MusicSet.from_manifest(path)
    return DataLoader(music, num_workers=2)
"""


def test_a_classmethod_constructor_builds_the_class_it_is_called_on():
    # ``MusicSet.from_manifest`` is the base's classmethod, found through the MRO; its
    # ``cls(...)`` constructs MusicSet; on the base, it calls ``AudioSet.__init__`` with the
    # manifest's records. MusicSet's keyword-only ``card`` (after ``*args``) takes no positional
    # argument of ``cls(records)``: only its default
    model = build(facts_of(ALTERNATE_CONSTRUCTORS))
    (loader,) = model.loaders
    assert [r.cls.name for r in loader.datasets] == ["MusicSet"]
    audio, music = sorted((c for c in model.classes() if c.cls.name.endswith("Set")), key=lambda c: c.cls.name)
    assert model.is_dataset(music)
    assert model.resolve("m.MusicSet.from_manifest", "/x").fn.qualname == "m.AudioSet.from_manifest"
    init = model.find_method(audio, "__init__")
    (site,) = [site for site in model.call_sites(init) if site[0].fn.fn.name == "from_manifest"]
    assert site[1][0][:2] == ("c", ("g", "m.load_manifest"))  # cls(load_manifest(path)): the records
    card = model.attr_value(music, "card")
    assert card.kinds == {"int"} and card.size == "bounded"


def test_a_library_loader_function_serves_the_datasets_it_is_given():
    # ``audiotools.loader(dataset, num_workers=...)``: a function outside the project named as a
    # loader, given a dataset and a worker count; a library call that is no loader gives nothing
    src = ALTERNATE_CONSTRUCTORS.replace("return DataLoader(music, num_workers=2)", "audiotools.evaluate(Plain(), num_workers=4)\n    return audiotools.data.loader(music, batch_size=4, num_workers=2)")
    src += "\nclass Plain:\n    def __getitem__(self, i):\n        return i\n"
    model = build(facts_of("import audiotools\n" + src))
    assert model.loaders == []
    (loader,) = model.library_loaders
    assert [r.cls.name for r in loader.datasets] == ["MusicSet"] and loader.workers == "yes"
    assert [c.cls.name for c in model.dataset_classes()] == ["AudioSet", "MusicSet"]
    music = next(c for c in model.classes() if c.cls.name == "MusicSet")
    assert model.loaders_using(music) == [loader]


LOADER_HELPER = """
from torch.utils.data import DataLoader, Dataset

def make_loader(dataset, workers=4):
    return DataLoader(dataset, num_workers=workers)

def passthrough(dataset, **kwargs):
    return DataLoader(dataset, **kwargs)

class Train(Dataset):
    def __getitem__(self, i):
        return i

class Eval(Train):
    pass

class Probe(Dataset):
    def __getitem__(self, i):
        return i

def main(args):
    make_loader(Train(), args.workers)
    make_loader(Eval(), workers=0)
    passthrough(Probe(), batch_size=2)
"""


def test_a_loader_helpers_worker_count_is_what_the_calls_passing_a_class_pass():
    # one DataLoader call in each helper; each class meets the count its own calls pass: Train
    # (with its subclass Eval's call) may get workers, Eval none, Probe none (**kwargs without it)
    model = build(facts_of(LOADER_HELPER))
    classes = {c.cls.name: c for c in model.classes()}
    verdicts = {name: [ld.workers for ld in model.deciding_loaders(ref)] for name, ref in classes.items()}
    assert verdicts == {"Train": ["maybe"], "Eval": ["no"], "Probe": ["no"]}
    assert sorted(ld.workers for ld in model.loaders) == ["maybe", "no"]  # the calls themselves: all their callers


def test_the_call_index_carried_between_planning_models_equals_a_fresh_one():
    # planning builds a model per round on more files; each function's calls, resolved by an
    # earlier model, are kept only while none of the files they met unparsed is parsed since
    # (``a.run`` calls ``b.Ds``: first unparsed, then parsed; ``a.again`` calls only ``a.run``:
    # kept) and no module name changed
    a = extract("/p/a.py", "a", "/p", False, b"from b import Ds, make\ndef run(p):\n    return make(Ds(p))\ndef again(p):\n    return run(p)\n")
    b = extract("/p/b.py", "b", "/p", False, b"class Ds:\n    def __init__(self, p):\n        self.p = p\ndef make(ds):\n    return ds\n")
    c = extract("/p/c.py", "c", "/p", False, b"from b import make\nmake(None)\n")
    layout = Layout.from_facts({f.path: f for f in (a, b, c)})
    carry: dict = {}
    first = ProgramModel({a.path: a, c.path: c}, Settings(), layout, carry)
    first.call_sites(first.resolve("a.run", "/p"))
    store = carry["call_index"][2]  # (layout, its version, path -> ...)
    assert sorted(store) == ["/p/a.py", "/p/c.py"]

    def part(path, fn):  # (entries, files met, unresolved calls) of one function (None: the module's code)
        _given, (flows, parts) = store[path]
        return parts[[f.qualname if f is not None else None for f, _ in flows].index(fn)]

    assert "/p/b.py" in _part_met(part("/p/a.py", "a.run"))  # what it met unparsed
    assert _part_met(part("/p/a.py", "a.again")) == set()
    kept_c, kept_again = part("/p/c.py", None), part("/p/a.py", "a.again")
    second = ProgramModel({a.path: a, b.path: b, c.path: c}, Settings(), layout, carry)
    fresh = ProgramModel({a.path: a, b.path: b, c.path: c}, Settings(), layout)

    def sites(model, name):
        return sorted((env.key, row) for env, _, _, row, _ in model.call_sites(model.resolve(name, "/p")))

    for name in ("b.Ds.__init__", "b.make", "a.run"):
        assert sites(second, name) == sites(fresh, name)
    assert [e[0] for e in sites(second, "b.make")] == [("/p/a.py", "a.run", None, None), ("/p/c.py", None, None, None)]
    assert part("/p/c.py", None) is not kept_c  # it met b.py unparsed: resolved again
    assert part("/p/a.py", "a.again") is kept_again  # it met nothing unparsed: kept
    layout.rename("/p/c.py", ModuleName("pkg.c", "/", False))  # a module name changed: nothing is kept
    third = ProgramModel({a.path: a, b.path: b, c.path: c}, Settings(), layout, carry)
    before = carry["call_index"]
    third.call_sites(third.resolve("b.make", "/p"))
    assert carry["call_index"] is not before


def test_a_call_that_cannot_be_resolved_is_met_only_by_questions_about_a_function_of_its_name():
    # the call index resolves every call of the parsed files; a call whose name leads into an
    # unparsed file (``lib.Pipeline.from_pretrained`` through ``lib/__init__.py``) can only be a
    # call site of a function of that last name, so asking for another function's call sites
    # does not meet that file (planning would parse it, and what it imports, for nothing)
    train = extract(
        "/p/train.py", "train", "/p", False,
        b"import lib\nfrom data import Images\n"
        b"def main(root):\n    pipe = lib.Pipeline.from_pretrained(root)\n    vae = lib.Vae(root)\n"
        b"    vae.encode(root)\n    return Images(root)\n",
    )
    data = extract("/p/data.py", "data", "/p", False, b"class Images:\n    def __init__(self, root):\n        self.root = root\n    def from_pretrained(self, root):\n        return root\n    def encode(self, x):\n        return x\n")
    lib = extract("/p/lib/__init__.py", "lib", "/p", True, b"from .pipe import Pipeline, Vae\n")
    layout = Layout.from_facts({f.path: f for f in (train, data, lib)})
    layout.add("/p/lib/pipe.py")  # a project module not parsed
    model = ProgramModel({train.path: train, data.path: data, lib.path: lib}, Settings(), layout)

    def met(name):
        with model._tracking() as deps:
            sites = model.call_sites(model.resolve(name, "/p"))
        return [(env.key[1], row) for env, _, _, row, _ in sites], sorted(deps)

    assert met("data.Images.__init__") == ([("train.main", 7)], [])  # resolved: nothing unparsed meets it
    # a method named as the unresolved calls are: one of them may run it
    assert met("data.Images.from_pretrained") == ([], ["/p/lib/pipe.py"])
    assert met("data.Images.encode") == ([], ["/p/lib/pipe.py"])


def test_the_planners_call_summaries_are_computed_once_per_file_facts():
    # planning's scans of every call (which calls pass a class or build one) read per-file
    # summaries of the calls, computed from a file's facts alone: the next planning model of the
    # run reuses them while the file's facts are the same object, and a file parsed again (new
    # facts) gets new ones
    from dllint.program.plan import _planned_calls

    src = b"from data import Images, build\nclass Trainer:\n    def fit(self):\n        return self.loader(Images('r'))\nds = build(Images)\nmaker = Images\nmaker('x')\n"
    a = extract("/p/a.py", "a", "/p", False, src)
    carry: dict = {}
    first = ProgramModel({a.path: a}, Settings(), None, carry)
    receivers, builds = _planned_calls(first, first.files[a.path])

    def where(fn):
        return fn.qualname if fn is not None else None

    # (module code first, then each function; in source order)
    assert [(where(r[0]), r[1], r[2], r[3]) for r in receivers] == [
        (None, "ref", "data.build", ["data.Images"]),  # a class passed
        ("a.Trainer.fit", "self", "loader", ["data.Images"]),  # an instance built of one
    ]
    assert [(where(b[0]), b[2], b[3], b[6]) for b in builds] == [
        (None, "ref", "data.build", ["data.build"]),
        (None, "ref", "a.maker", ["a.maker"]),
        ("a.Trainer.fit", "self", "loader", None),  # ``self.loader(...)``: the model answers
        ("a.Trainer.fit", "ref", "data.Images", ["data.Images"]),
    ]
    second = ProgramModel({a.path: a}, Settings(), None, carry)
    assert _planned_calls(second, second.files[a.path])[0] is receivers
    again = extract("/p/a.py", "a", "/p", False, src)
    third = ProgramModel({again.path: again}, Settings(), None, carry)
    assert _planned_calls(third, third.files[again.path])[0] is not receivers
    assert _planned_calls(third, third.files[again.path])[0] == receivers


def test_a_model_of_the_chase_takes_the_values_the_one_before_computed(monkeypatch):
    # planning's chase builds a model per file it parses and asks its questions again; each
    # model takes the values the one before computed (``carry_values``) instead of computing
    # every value again; a model that takes none computes them
    from dllint.program.values import Values

    a = extract("/p/a.py", "a", "/p", False, b"import os\nclass Ds:\n    def __init__(self, root):\n        self.items = sorted(os.listdir(root))\n")
    b = extract("/p/b.py", "b", "/p", False, b"from a import Ds\nds = Ds('x')\n")
    layout = Layout.from_facts({f.path: f for f in (a, b)})
    first = ProgramModel({a.path: a}, Settings(), layout)
    ds = first.resolve("a.Ds", "/p")
    known = first.attr_value(ds, "items")
    assert known.has("list")
    computed: list = []
    real = Values._apply_write
    monkeypatch.setattr(Values, "_apply_write", lambda self, *args: computed.append(1) or real(self, *args))
    second = ProgramModel({a.path: a, b.path: b}, Settings(), layout)
    second.carry_values(first)
    assert second.attr_value(second.resolve("a.Ds", "/p"), "items") is known and computed == []
    fresh = ProgramModel({a.path: a, b.path: b}, Settings(), layout)
    assert fresh.attr_value(fresh.resolve("a.Ds", "/p"), "items") == known and computed


def test_a_class_keeping_a_file_open_is_a_reader_and_one_that_keeps_a_path_is_not():
    src = """
import h5py

class BinReader:
    def __init__(self, path):
        self.path = path
        self.file = open(path, "rb")

class LazyH5:
    def __init__(self, path):
        self.path = path
        self.h5 = None
    def open(self):
        self.h5 = h5py.File(self.path, "r")

class Record:
    def __init__(self, path):
        self.path = path
        self.size = 0
"""
    idx = build(facts_of(src))
    by_name = {c.cls.name: c for c in idx.classes()}
    assert idx.holds_open_file(by_name["BinReader"])
    assert idx.holds_open_file(by_name["LazyH5"])  # (opened later: still one handle per object)
    assert not idx.holds_open_file(by_name["Record"])


def test_a_list_filled_by_a_function_defined_inside_holds_what_that_function_appends():
    src = """
import glob
from torch.utils.data import Dataset

class Images(Dataset):
    def __init__(self, root):
        found = []
        kept = []

        def add(path):
            for image in glob.glob(path + "/*.png"):
                found.append(image)

        def shadowing(path):
            kept = []
            kept.append(path)

        add(root)
        shadowing(root)
        self.images = found
        self.kept = kept
"""
    idx = build(facts_of(src))
    images = next(c for c in idx.dataset_classes() if c.cls.name == "Images")
    value = idx.attr_value(images, "images")
    assert value.kinds == frozenset({"list"}) and value.size == "data"
    assert value.why and "glob" in value.why[0][0]
    assert idx.attr_value(images, "kept").size == "empty"  # the inner function's own list


def test_a_list_filtered_by_reading_itself_back_keeps_the_size_the_code_gave_it():
    src = """
import glob
from torch.utils.data import Dataset

class Scenes(Dataset):
    def __init__(self, root, keep):
        self.names = ["a", "b", "c"]
        self.names = [n for n in self.names if n in keep]
        self.files = sorted(glob.glob(root + "/*.png"))
        self.files = [f for f in self.files if f.endswith(".png")]
        self.count = len(self.names)
    def __len__(self):
        return len(self.names)
    def __getitem__(self, i):
        return self.names[i], self.files[i]
"""
    idx = build(facts_of(src))
    scenes = next(c for c in idx.dataset_classes() if c.cls.name == "Scenes")
    assert idx.attr_value(scenes, "names").size == "bounded"
    assert idx.attr_value(scenes, "files").size == "data"
    assert idx.attr_value(scenes, "count").size == "bounded"  # len() of a list the code bounds


def test_a_loader_subclass_names_its_positional_arguments_by_its_own_init():
    src = """
from torch.utils.data import DataLoader, Dataset

class Items(Dataset):
    def __getitem__(self, i):
        return i

class SplitLoader(DataLoader):
    def __init__(self, dataset, batch_size, shuffle, num_workers):
        super().__init__(dataset=dataset, batch_size=batch_size, shuffle=shuffle, num_workers=num_workers)

class RankLoader(DataLoader):
    def __init__(self, rank, **kwargs):
        super().__init__(**kwargs)

def build():
    a = SplitLoader(Items(), 8, True, 4)
    b = RankLoader(0, dataset=Items(), num_workers=0)
    return a, b
"""
    idx = build(facts_of(src))
    by_row = {ld.call.span.row: ld for ld in idx.loaders if ld.call.scope == "m.build"}
    split, rank = by_row[17], by_row[18]
    assert split.workers == "yes"  # the fourth argument is SplitLoader's num_workers, not a sampler
    assert [c.cls.name for c in split.datasets] == ["Items"]
    assert rank.workers == "no" and [c.cls.name for c in rank.datasets] == ["Items"]  # ``dataset=`` kept


def test_records_walked_whole_beside_the_samples_are_co_walked():
    src = """
import json
from torch.utils.data import Dataset

class Moments(Dataset):
    def __init__(self, path):
        data = json.load(open(path))
        self.videos = [v for k, v in data.items()]
        self.video2idx = {k: v[1] for k, v in data.items()}
        self.label2idx = {v["label"]: i for i, v in enumerate(data)}
    def __getitem__(self, i):
        return self.videos[i]
"""
    idx = build(facts_of(src))
    moments = next(c for c in idx.dataset_classes() if c.cls.name == "Moments")
    walked = idx.co_walked(moments)
    assert walked.get("video2idx") == {"videos"} and walked.get("videos") == {"video2idx"}
    assert "label2idx" not in walked  # keyed by a field: a label map, not one entry per record


def test_cli_option_facts_count_attribute_stores_in_assignment_targets_only():
    """An option overridden by assigning its attribute (``args.workers = 8``, ``cfg.a.b += 1``,
    ``opts.n: int = 2``, in a target's tuple or subscript too) is recorded; the same attribute
    read in a value, stored by a ``for`` or ``with`` target, or set on ``self`` is not."""
    src = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=0)
args = parser.parse_args()
args.workers = 8
cfg.train.batch += 1
opts.n: int = 2
(a.first, [b.second, *c.third]) = 1, [2, 3]
table[[0 for d.in_slice in range(1)][0]] = 1
x = [0 for e.in_value in range(1)]
for f.loop in range(3):
    pass
with open("x") as g.handle:
    pass
class C:
    def __init__(self):
        self.mine = 1
        h.other = self.mine
"""
    stores = facts_of(src).signals["cli_options"]["stores"]
    assert stores == sorted(["workers", "batch", "n", "first", "second", "third", "in_slice", "other"])



def test_each_call_of_a_helper_gets_its_own_arguments():
    """A helper called from many places is evaluated with each call's arguments: its memoized
    answers under one call's binding never answer for another call. (A binding's id names it in
    the memo's keys; freed after its call, its id was soon another call's, and that call read
    the first one's arguments: here 22 of the 60 attributes took their neighbour's size.)"""
    calls = "\n".join(
        f"        self.a{i} = wrap(os.listdir(root))" if i % 2 else f"        self.a{i} = wrap(['x', 'y'])" for i in range(60)
    )
    src = f"""
import os
from torch.utils.data import Dataset

def wrap(v):
    out = []
    for x in v:
        out.append(x)
    return out

class Many(Dataset):
    def __init__(self, root):
{calls}
    def __getitem__(self, i):
        return self.a1[i]
"""
    idx = build(facts_of(src))
    (many,) = [c for c in idx.dataset_classes() if c.cls.name == "Many"]
    sizes = [idx.attr_value(many, f"a{i}").size for i in range(60)]
    assert sizes == ["bounded", "data"] * 30


def _helper_chain(levels: int) -> str:
    """A Dataset whose files pass through ``levels`` helpers, each calling the next three times
    with the same list and a different flag (``convert(x)`` calling ``convert_dtype``, ``to``,
    ``as_tensor``... with their arguments)."""
    defs = []
    for i in range(levels):
        if i == levels - 1:
            defs.append(f"def step{i}(paths, flag):\n    return list(paths)")
        else:
            defs.append(
                f"def step{i}(paths, flag):\n    a = step{i + 1}(paths, 1)\n    b = step{i + 1}(paths, 2)\n"
                f"    c = step{i + 1}(paths, 3)\n    return a + b + c"
            )
    return "\n".join(["import glob", "from torch.utils.data import Dataset", *defs]) + """
class Images(Dataset):
    def __init__(self, root):
        self.files = step0(glob.glob(root + "/*.jpg"), 0)
    def __getitem__(self, i):
        return self.files[i]
"""


def _count_bound_evaluations(monkeypatch) -> list[int]:
    """How many times a function's returns are evaluated under one call's arguments."""
    from dllint.program.values import Values

    count = [0]
    original = Values._returned

    def counted(self, fnref, flow, env, depth, fresh):
        count[0] += bool(fresh)
        return original(self, fnref, flow, env, depth, fresh)

    monkeypatch.setattr(Values, "_returned", counted)
    return count


def test_calls_with_equal_arguments_are_evaluated_once(monkeypatch):
    """Helpers calling helpers three times each: every call's arguments are the same values as
    another's, so each (helper, arguments) is evaluated once -- 13 evaluations for five levels,
    not the 121 of one evaluation per path of calls (3^4 + 3^3 + ...), which made MONAI's type
    conversions cost 30 s -- and the value is the one a path gives."""
    count = _count_bound_evaluations(monkeypatch)
    idx = build(facts_of(_helper_chain(5)))
    (images,) = [c for c in idx.dataset_classes() if c.cls.name == "Images"]
    value = idx.attr_value(images, "files")
    assert value.kinds == frozenset({"list"}) and value.size == "data"
    assert "glob.glob" in value.why[0][0]
    assert count[0] <= 3 * 5


def test_a_call_cut_short_deep_down_is_evaluated_again_higher_up(monkeypatch):
    """Six levels reach the evaluator's depth limit on the first path (``a``) but not on the
    last (``c``, evaluated higher up): the memoized answer of a call cut short deep down does
    not answer for the same call asked higher up, so the listing still comes through."""
    _count_bound_evaluations(monkeypatch)
    idx = build(facts_of(_helper_chain(6)))
    (images,) = [c for c in idx.dataset_classes() if c.cls.name == "Images"]
    value = idx.attr_value(images, "files")
    assert "list" in value.kinds and value.size == "data"


def test_a_question_past_the_budget_of_calls_is_unknown(monkeypatch):
    """Past MAX_BOUND_CALLS evaluations under call arguments in one question, a call's value is
    unknown (the question ends, its answer says nothing of the data)."""
    from dllint.program import values

    count = _count_bound_evaluations(monkeypatch)
    monkeypatch.setattr(values, "MAX_BOUND_CALLS", 3)
    idx = build(facts_of(_helper_chain(5)))
    (images,) = [c for c in idx.dataset_classes() if c.cls.name == "Images"]
    value = idx.attr_value(images, "files")
    assert value.size != "data"
    assert count[0] <= 3


def test_a_dict_updated_with_keywords_has_constant_keys():
    """``meta.update(ac=..., cat=1)`` is the display ``{"ac": ..., "cat": 1}``: its keys are
    constants. (They were the bare names, and a name read as an IR node crashed the run on
    Ascend's model zoo: ``"ac"`` passed for an attribute node whose base ``"c"`` passed for a call.)"""
    src = """
import glob
from torch.utils.data import Dataset
class Images(Dataset):
    def __init__(self, root):
        meta = {}
        meta.update(ac=glob.glob(root), cat=1)
        self.meta = meta
    def __getitem__(self, i):
        return self.meta
"""
    facts = facts_of(src)
    (write,) = facts.functions["m.Images.__init__"].flow.muts["meta"]
    assert [k for k, _ in write[1][1]] == [("k", "ac"), ("k", "cat")]
    idx = build(facts)
    (images,) = [c for c in idx.dataset_classes() if c.cls.name == "Images"]
    value = idx.attr_value(images, "meta")
    assert value.kinds == frozenset({"dict"}) and value.key.kinds == frozenset({"str"})


def test_planning_models_are_freed_once_done(monkeypatch, tmp_path):
    """Each planning model (a round of demands, a chase step) is freed by reference counting when
    the next is built, although the run pauses the cyclic collector: a recursive closure in
    ``Symbols._mro`` referred to itself and to the model, and that cycle kept every planning
    model and its memos until the run ended (unilm: 20 MB a model, the process tree's peak 494
    -> 411 MB). The findings are those of a run that keeps every model."""
    import gc
    import weakref

    from projectgen import generate

    from dllint.engine import Engine

    generate(str(tmp_path), seed=3, files=120)
    built: list = []
    kept: list | None = []
    real_init = ProgramModel.__init__

    def recording(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        built.append(weakref.ref(self))
        if kept is not None:
            kept.append(self)

    monkeypatch.setattr(ProgramModel, "__init__", recording)

    def run():
        engine = Engine(Settings(), str(tmp_path), jobs=1, cache=None)
        engine.edits = False
        return engine.analyse(engine.project_files(), {r.code for r in engine.rules})

    was = gc.isenabled()
    gc.disable()
    try:
        findings = [d.sort_key() for d in run().diagnostics]  # every model kept
        assert findings
        built.clear()
        kept = None  # (recording() keeps no model now)
        result = run()
        assert len(built) >= 2  # a round of demands (and chase steps), then the final model
        assert [r() for r in built if r() is not None] == [result.project.index]
        assert [d.sort_key() for d in result.diagnostics] == findings
    finally:
        if was:
            gc.enable()


def test_planning_asks_no_loader_its_start_methods_and_the_final_models_loaders_answer_them(monkeypatch, tmp_path):
    """A planning model builds every loader of the parsed files, but planning never asks one
    which start methods its workers get (which entry scripts reach its file, what they set):
    those are computed when a rule asks, on the final model. The final model's loaders answer
    them after the run as they would have been computed at once, also once the run is over and
    only the loaders are kept."""
    import gc

    from projectgen import generate

    from dllint.engine import Engine
    from dllint.program.loaders import Loaders

    generate(str(tmp_path), seed=3, files=120)
    asked: list[bool] = []  # per computation: whether a planning model computed it
    real = Loaders.global_start_methods

    def recording(self, facts):
        asked.append(self.planning and not self.settled)
        return real(self, facts)

    monkeypatch.setattr(Loaders, "global_start_methods", recording)
    engine = Engine(Settings(), str(tmp_path), jobs=1, cache=None)
    engine.edits = False
    result = engine.analyse(engine.project_files(), {r.code for r in engine.rules})
    index = result.project.index
    assert index.planning and index.settled
    assert asked and not any(asked)  # the rules asked; no planning model did
    loaders = list(index.loaders)
    unasked = [ld for ld in loaders if callable(ld.methods)]
    assert unasked  # (some left for this test to ask)
    expected = [frozenset({ld.context}) if ld.context is not None else real(index, ld.file) for ld in loaders]
    del result, index
    gc.collect()
    assert [ld.start_methods for ld in loaders] == expected


def test_a_function_a_star_import_binds_is_reached_from_the_code_calling_it():
    # ``from partition_utils import *`` binds ``get_partition_list``: the constructor runs it, so
    # what runs from the constructor reaches it (and, its file unparsed, meets that file: planning
    # parses it, and the list it returns is the value stored)
    data = extract(
        "/p/sampler.py", "sampler", "/p", False,
        b"from partition_utils import *\n\nclass Iter:\n    def __init__(self, g, n):\n"
        b"        self.parts = get_partition_list(g, n)\n    def __getitem__(self, i):\n        return self.parts[i]\n",
    )
    utils = extract("/p/partition_utils.py", "partition_utils", "/p", False, b"def get_partition_list(g, n):\n    return [g for _ in range(n)]\n")
    layout = Layout.from_facts({f.path: f for f in (data, utils)})
    alone = ProgramModel({data.path: data}, Settings(), Layout.from_facts({f.path: f for f in (data, utils)}))
    init = alone.find_method(alone.resolve("sampler.Iter", "/p"), "__init__")
    alone.reachable([init], alone.class_of(init))
    assert "/p/partition_utils.py" in alone.misses
    model = ProgramModel({data.path: data, utils.path: utils}, Settings(), layout)
    init = model.find_method(model.resolve("sampler.Iter", "/p"), "__init__")
    assert ("/p/partition_utils.py", "partition_utils.get_partition_list") in model.reachable([init], model.class_of(init))


def test_a_files_importers_through_a_cycle_of_imports_are_the_files_reaching_it():
    # a <-> b import each other, c imports a, d imports c, e imports nothing: the files importing a
    # file directly or through others, itself left out, in path order (closures of a strongly
    # connected part computed once for every file asked about)
    sources = {
        "a": b"import b\n", "b": b"import a\n", "c": b"import a\n", "d": b"from c import *\n", "e": b"x = 1\n",
    }
    files = {f"/p/{m}.py": extract(f"/p/{m}.py", m, "/p", False, src) for m, src in sources.items()}
    model = ProgramModel(files, Settings(), Layout.from_facts(files))

    def importers(module):
        return [f.module for f in model.importers(f"/p/{module}.py")]

    assert importers("a") == ["b", "c", "d"]
    assert importers("b") == ["a", "c", "d"]
    assert importers("c") == ["d"]
    assert importers("d") == [] and importers("e") == []


def _modules(**sources: bytes) -> tuple[dict, Layout]:
    """(path -> facts, their layout) of top-level modules of a project at /p, by name."""
    files = {f"/p/{name}.py": extract(f"/p/{name}.py", name, "/p", False, src) for name, src in sources.items()}
    return files, Layout.from_facts(files)


def _counting(monkeypatch, cls, name: str) -> list:
    """The first argument after ``self`` of each call of ``cls.name`` (monkeypatched)."""
    calls: list = []
    real = getattr(cls, name)

    def counted(self, *args, **kwargs):
        calls.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, counted)
    return calls


def test_a_resolution_that_met_no_unparsed_file_is_kept_for_the_runs_later_planning_models(monkeypatch):
    # files are only added while a run plans: a name resolved through parsed files alone means
    # the same in every later model of the same layout, which takes the answer as it is (the same
    # objects); one that met an unparsed file is resolved again once that file is parsed
    from dllint.program.symbols import Symbols

    files, layout = _modules(
        a=b"from torch.utils.data import Dataset\nclass Ds(Dataset):\n    pass\n",
        b=b"from a import Ds\nfrom x import Thing\n",
        x=b"class Thing:\n    pass\n",
    )
    a, b, x = files.values()
    carry: dict = {}
    first = ProgramModel({a.path: a, b.path: b}, Settings(), layout, carry)
    ds = first.resolve("b.Ds", "/p")
    assert ds.key == ("/p/a.py", "a.Ds") and first.resolve("b.Thing", "/p") is None
    assert first.misses == {"/p/x.py"}
    resolved = _counting(monkeypatch, Symbols, "_resolve")
    second = ProgramModel({a.path: a, b.path: b, x.path: x}, Settings(), layout, carry)
    assert second.resolve("b.Ds", "/p") is ds and resolved == []
    assert second.resolve("b.Thing", "/p").key == ("/p/x.py", "x.Thing") and "b.Thing" in resolved
    assert not second.misses
    # without the run's carry, a model resolves it itself
    alone = ProgramModel({a.path: a, b.path: b, x.path: x}, Settings(), layout)
    assert alone.resolve("b.Ds", "/p").key == ds.key and resolved.count("b.Ds") == 1


def test_a_resolution_inside_a_cycle_of_re_exports_is_not_kept_for_later_models(monkeypatch):
    # ``from q import X`` in p.py and ``from p import X`` in q.py: a resolution in progress
    # resolves to nothing, and what met it depends on which was asked first; not kept, nor is
    # the MRO of a class whose base is such a name
    from dllint.program.symbols import Symbols

    files, layout = _modules(p=b"from q import X\n", q=b"from p import X\n", c=b"from p import X\nclass C(X):\n    pass\n")
    carry: dict = {}
    first = ProgramModel(files, Settings(), layout, carry)
    assert first.resolve("p.X", "/p") is None
    cls = first.resolve("c.C", "/p")
    assert [r.key for r in first.mro(cls)] == [cls.key]
    resolved = _counting(monkeypatch, Symbols, "_resolve")
    ordered = _counting(monkeypatch, Symbols, "_mro")
    second = ProgramModel(files, Settings(), layout, carry)
    assert second.resolve("p.X", "/p") is None and "p.X" in resolved
    assert [r.key for r in second.mro(second.resolve("c.C", "/p"))] == [cls.key] and len(ordered) == 1


def test_a_classes_mro_through_parsed_files_is_kept_for_the_runs_later_planning_models(monkeypatch):
    from dllint.program.symbols import Symbols

    files, layout = _modules(
        a=b"class Base:\n    def __getitem__(self, i):\n        return i\n", b=b"from a import Base\nclass Ds(Base):\n    pass\n"
    )
    carry: dict = {}
    first = ProgramModel(files, Settings(), layout, carry)
    chain = first.mro(first.resolve("b.Ds", "/p"))
    ordered = _counting(monkeypatch, Symbols, "_mro")
    second = ProgramModel(files, Settings(), layout, carry)
    again = second.mro(second.resolve("b.Ds", "/p"))
    assert [r.key for r in again] == [r.key for r in chain] == [("/p/b.py", "b.Ds"), ("/p/a.py", "a.Base")]
    assert ordered == [] and all(x is y for x, y in zip(again, chain))
    assert second.find_method(again[0], "__getitem__").key == ("/p/a.py", "a.Base.__getitem__")


def test_a_resolution_cut_by_the_nesting_limit_is_not_kept_for_later_models():
    # fifteen modules re-exporting one class, each from the next: from the first, the chain is
    # longer than the resolver follows (nothing), from the third it is not; the third's answer
    # met the limit when the first was asked, and a later model asks it again
    sources = {f"m{i}": f"from m{i + 1} import X\n".encode() for i in range(14)}
    files, layout = _modules(**sources, m14=b"class X:\n    pass\n")
    carry: dict = {}
    first = ProgramModel(files, Settings(), layout, carry)
    assert first.resolve("m0.X", "/p") is None and first.resolve("m2.X", "/p") is None
    second = ProgramModel(files, Settings(), layout, carry)
    assert second.resolve("m2.X", "/p").key == ("/p/m14.py", "m14.X")
    assert ProgramModel(files, Settings(), layout).resolve("m2.X", "/p").key == ("/p/m14.py", "m14.X")


def test_a_call_site_asked_while_the_call_index_is_built_is_none_not_a_second_build(monkeypatch):
    # a question of the index's build that reaches for call sites (none should: each path found
    # is closed, ``_called_classes(returns=False)``) is answered as no call site, rather than
    # building the index again inside itself until the stack runs out
    from dllint.program.values import Values

    files, layout = _modules(a=b"def f(x):\n    return x\n\ndef g():\n    return f(1)\n")
    model = ProgramModel(files, Settings(), layout)
    fn = model.resolve("a.f", "/p")
    inner: list = []
    real = Values._flow_part

    def part(self, facts, function, flow):
        inner.append(self.call_sites(fn))
        return real(self, facts, function, flow)

    monkeypatch.setattr(Values, "_flow_part", part)
    sites = model.call_sites(fn)
    assert inner and all(found == [] for found in inner)
    assert [row for _env, _args, _kwargs, row, _skip in sites] == [5]

