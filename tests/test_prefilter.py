"""The pre-filter's two stages and the model's quiet questions (dllint/prefilter.py, dllint/program/symbols.py).

What is parsed shrinks; what is found does not: each project here is also checked with every file
parsed, and the findings must be the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dllint.prefilter import NameTest, Triggers, code_words, module_imports, trie_alternation


def _analyse(root: Path, prefilter: bool = True, jobs: int = 1):
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.discover import discover
    from dllint.engine import Engine

    settings, project_root = load_configuration([str(root)], None, Overrides(select=["ALL"]))
    engine = Engine(settings, project_root, jobs=jobs)
    engine.prefilter = prefilter
    targets = discover([str(root)], project_root, settings.all_excludes, settings.respect_gitignore)
    return engine.analyse(targets, enabled_codes(settings))


def _write(root: Path, files: dict[str, str]) -> None:
    (root / ".git").mkdir()
    for name, text in files.items():
        (root / name).write_text(text)


def _findings(analysis) -> list[str]:
    return [f"{Path(d.path).name}:{d.span.row}:{d.code}" for d in analysis.diagnostics]


# ---------------------------------------------------------------------------- code words


def test_code_words_are_names_attributes_keywords_and_strings_without_spaces():
    source = b'''"""A module docstring that mentions DataLoader."""
# a comment that mentions Dataset
import torch.utils.data as tud
from torch.utils.data import DataLoader as DL

def make(ds, collate_fn=None):
    """Builds a loader (persistent_workers is not set here)."""
    env = {"OMP_NUM_THREADS": "1"}
    return DL(ds, worker_init_fn=seed, prefetch_factor=2, num_workers=tud.get_worker_info)

HELP = """Pass a set_start_method
spanning lines"""
'''
    words = set(code_words(source).split("\0"))
    assert {"DataLoader", "DL", "tud", "make", "ds", "collate_fn", "worker_init_fn", "prefetch_factor"} <= words
    assert {"get_worker_info", "OMP_NUM_THREADS", "env"} <= words
    text = "\0".join(words)
    assert "Dataset" not in text  # only in a comment
    assert "persistent_workers" not in text  # only in a docstring
    assert "set_start_method" not in text  # only in a multi-line string


def test_paths_and_urls_are_not_code_words():
    """diffusers' pipeline tests load reference images from
    ``https://huggingface.co/datasets/...``: a URL or a path names no code, so the word in it does
    not get the file analysed; a dotted name in a string (a config's ``_target_``) still does."""
    triggers = Triggers({b"datasets", b"DataLoader"}, set())
    url = b'def test_x():\n    image = load_image("https://huggingface.co/datasets/hf-internal-testing/a.png")\n'
    assert b"datasets" in url and not triggers(url)
    assert not triggers(b'ROOT = "data/datasets/coco"\nWIN = "C:\\\\DataLoader\\\\x"\n')
    assert triggers(b'cfg = {"_target_": "torch.utils.data.DataLoader"}\n')
    assert triggers(b"import datasets\n")
    words = set(code_words(url).split("\0"))
    assert "load_image" in words and not any("/" in w for w in words)
    # decided without compiling, as code_words decides: every mention sits in a path
    # (not compiled at all: a file that does not compile is then as one without the word)
    assert not triggers(b'x = 1 +\nURL = "hf.co/datasets/a"\n')
    # a mention in code beside it still counts
    assert triggers(b'import datasets\nURL = "hf.co/datasets/a"\n')


def test_code_words_of_code_that_does_not_compile_is_none():
    assert code_words(b"def f(:\n") is None
    assert code_words(b"return 1\n") is None  # parses, but is no module: analysed in full


def test_triggers_need_a_code_word_or_a_comment_trigger():
    triggers = Triggers({b"DataLoader", b"set_start_method"}, {b"noqa: DL"})
    assert triggers(b"from torch.utils.data import DataLoader\n")
    assert triggers(b"import multiprocessing as mp\nmp.set_start_method('spawn')\n")
    assert not triggers(b'def f():\n    """Wraps a torch DataLoader,\n    see the docs."""\n')
    assert not triggers(b"x = 1  # the DataLoader below\n")
    assert not triggers(b"x = 1\n")
    assert triggers(b"x = 1  # noqa: DL101\n")
    assert triggers(b"DataLoader(\n")  # a syntax error: analysed, so it is reported


def test_name_test_matches_whole_words_only():
    test = NameTest({"Frames", "Clips"})
    assert test(b"class Sub(Frames):\n")
    assert test(b"x = data.Clips()\n")
    assert not test(b"class FramesPlus:\n")
    assert not test(b"MyFrames = 1\n")
    many = NameTest({f"Name{i}" for i in range(40)} | {"Frames"})
    assert many(b"x = Frames\n") and not many(b"x = FramesX\n") and not many(b"x = XFrames\n")


def test_the_grouped_name_test_answers_as_one_find_per_name_does():
    # names sharing their last bytes (one scan for the group), shorter than the group's bytes,
    # with and without module words; texts built from their pieces, so near misses occur
    import random
    import re

    rng = random.Random(11)
    pieces = ["Dataset", "COCO", "My", "Data", "set", "main", "ain", "x", "_", " ", "(", ".", "data", "train", "\n"]
    for _ in range(300):
        names = {}
        for _ in range(rng.randint(1, 10)):
            name = "".join(rng.choice(pieces[:9]) for _ in range(rng.randint(1, 3)))
            if name.isidentifier():
                names[name] = frozenset(rng.sample(["data", "train", "COCO"], rng.randint(0, 2)))
        if not names:
            continue
        test = NameTest(names)
        text = "".join(rng.choice(pieces) for _ in range(40)).encode()

        def word(w: str) -> bool:
            return re.search(rb"\b" + re.escape(w.encode()) + rb"\b", text) is not None

        expected = any(word(n) and (not ws or any(word(m) for m in ws)) for n, ws in names.items())
        assert test(text) == expected, (names, text)



def test_the_factored_alternation_matches_what_the_flat_one_matches():
    # names that are prefixes of each other, share prefixes, differ in one letter; texts built
    # from their pieces, so every kind of near miss occurs
    import random
    import re

    rng = random.Random(7)
    pieces = ["Data", "Dataset", "Set", "Audio", "AudioDataset", "A", "Ab", "Abc", "x", "_", "1", " ", "(", "."]
    for _ in range(200):
        words = sorted({"".join(rng.choice(pieces[:10]) for _ in range(rng.randint(1, 3))).encode() for _ in range(rng.randint(1, 12))})
        flat = re.compile(rb"\b(?:" + b"|".join(re.escape(w) for w in words) + rb")\b")
        factored = re.compile(rb"\b(?:" + trie_alternation(words) + rb")\b")
        text = "".join(rng.choice(pieces) for _ in range(60)).encode()
        assert factored.findall(text) == flat.findall(text)
        for w in words:  # each name alone is matched whole, and not inside a longer word
            assert factored.fullmatch(w) and not factored.search(w + b"z")


# ---------------------------------------------------------------------------- what gets parsed


def test_a_docstring_mention_alone_does_not_get_a_file_analysed(tmp_path):
    _write(
        tmp_path,
        {
            "notes.py": 'def helper():\n    """Called before building the DataLoader."""\n    return 1\n',
            "train.py": "from torch.utils.data import DataLoader\nloader = DataLoader([1, 2], num_workers=2)\n",
        },
    )
    analysis = _analyse(tmp_path)
    parsed = {Path(p).name for p in analysis.project.files}
    assert parsed == {"train.py"}
    assert _findings(analysis) == _findings(_analyse(tmp_path, prefilter=False))


MIXIN_PROJECT = {
    # no trigger word: parsed only because the Dataset's worker code lives here
    "mixins.py": "import torch\n\n\nclass IndexMixin:\n    def __getitem__(self, i):\n        return torch.ones(3).cuda()\n",
    # no trigger word either, and nothing that matters needs it
    "other.py": "class Thing:\n    pass\n",
    "data.py": (
        "from torch.utils.data import DataLoader, Dataset\n\nimport other\nfrom mixins import IndexMixin\n\n\n"
        "class Frames(IndexMixin, Dataset):\n    pass\n\n\n"
        "class Helper(other.Thing):\n    pass\n\n\n"
        "def build(dataset):\n    return DataLoader(dataset, num_workers=4, multiprocessing_context='fork')\n"
    ),
}


def test_a_datasets_base_in_a_file_without_triggers_is_parsed_but_an_unrelated_base_is_not(tmp_path):
    _write(tmp_path, MIXIN_PROJECT)
    analysis = _analyse(tmp_path)
    parsed = {Path(p).name for p in analysis.project.files}
    # "is Helper a Dataset?" is asked quietly; Frames' MRO, reused from that question, still
    # asks for mixins.py when the worker code of Frames is wanted
    assert parsed == {"data.py", "mixins.py"}
    assert _findings(analysis) == ["mixins.py:6:DL201"]
    assert _findings(analysis) == _findings(_analyse(tmp_path, prefilter=False))


HELPER_CHAIN = {
    "main.py": "from torch.utils.data import DataLoader\n\nfrom h1 import make1\n\n\ndef main():\n    loader = DataLoader(make1(), num_workers=2)\n    return [b for b in loader]\n",
    "h1.py": "from h2 import make2\n\n\ndef make1():\n    return make2()\n",
    "h2.py": "from h3 import make3\n\n\ndef make2():\n    return make3()\n",
    "h3.py": "from shapes import Shapes\n\n\ndef make3():\n    return Shapes()\n",
    "shapes.py": "import os\n\n\nclass Shapes:\n    def __init__(self):\n        self.files = sorted(os.listdir('.'))\n\n    def __getitem__(self, i):\n        return self.files[i]\n\n    def __len__(self):\n        return len(self.files)\n",
}


def test_what_a_loader_is_given_is_followed_link_by_link_not_a_round_per_file(tmp_path, demand_rounds):
    """A Dataset a helper returns from a helper in another file, through three files without
    trigger words: the loaders' question (what each is given) is a chain the planner follows
    on cheap models, one file per link, instead of a whole round of demands per file (five
    rounds before, two now: the first and the one that finds nothing more); the same findings as
    a run parsing every file."""
    _write(tmp_path, HELPER_CHAIN)
    analysis = _analyse(tmp_path)
    assert {Path(p).name for p in analysis.project.files} == set(HELPER_CHAIN)
    assert "shapes.py:6:DL101" in _findings(analysis)
    assert len(demand_rounds) == 2
    assert _findings(analysis) == _findings(_analyse(tmp_path, prefilter=False))


def _watch_planning(monkeypatch) -> tuple[list, list, list]:
    """([(model, its files)] of every model built, the models that took an earlier one's values
    (``carry_values``), the models the rounds of demands asked), filled as a run plans."""
    from dllint.engine import Engine
    from dllint.program.model import ProgramModel

    built, takers, rounds = [], [], []
    real_init, real_carry, real_demands = ProgramModel.__init__, ProgramModel.carry_values, Engine._demands

    def init(self, files, *args, **kwargs):
        real_init(self, files, *args, **kwargs)
        built.append((self, frozenset(files)))

    def carry(self, earlier):
        takers.append(self)
        return real_carry(self, earlier)

    def demands(self, index, *args, **kwargs):
        rounds.append(index)
        return real_demands(self, index, *args, **kwargs)

    monkeypatch.setattr(ProgramModel, "__init__", init)
    monkeypatch.setattr(ProgramModel, "carry_values", carry)
    monkeypatch.setattr(Engine, "_demands", demands)
    return built, takers, rounds


def test_the_chase_hands_values_on_but_every_round_of_demands_starts_fresh(tmp_path, monkeypatch):
    """The models of planning's chase take the values the model before computed
    (``ProgramModel.carry_values``: a value that a file parsed since would change stays as it
    was), so the chase only chooses which files are parsed sooner. The rounds of demands, which
    decide when planning is over, are asked of models that take nothing: the files parsed are
    those a fresh evaluation of every question needs, and the findings those of a run parsing
    every file."""
    _built, takers, rounds = _watch_planning(monkeypatch)
    _write(tmp_path, HELPER_CHAIN)
    analysis = _analyse(tmp_path)
    assert takers and rounds  # (the chase ran, link by link)
    assert not {id(m) for m in takers} & {id(m) for m in rounds}
    assert {Path(p).name for p in analysis.project.files} == set(HELPER_CHAIN)
    assert _findings(analysis) == _findings(_analyse(tmp_path, prefilter=False))


def test_a_round_after_a_chase_that_asked_for_nothing_asks_the_chases_fresh_model(tmp_path, monkeypatch):
    """The chase's first model takes no values from another: when its questions ask for no
    file, it is a model of the files the next round asks, built as that round's would be, and
    the round asks it instead of building the same model again (dgl's cold run: 0.8 s a model).
    Every model a round asks is still one that took no values, and the findings are those of a
    run parsing every file."""
    built, takers, rounds = _watch_planning(monkeypatch)
    _write(tmp_path, MIXIN_PROJECT)  # the first round wants mixins.py; the chase, nothing more
    analysis = _analyse(tmp_path)
    assert len(rounds) == 2
    fresh = [(model, files) for model, files in built if model not in takers]
    # (no two models that took no values were built of the same files)
    assert len({files for _model, files in fresh}) == len(fresh)
    assert rounds[1] in [model for model, _files in fresh]
    assert rounds[1] is not rounds[0] and not set(map(id, rounds)) & set(map(id, takers))
    assert _findings(analysis) == ["mixins.py:6:DL201"]
    assert _findings(analysis) == _findings(_analyse(tmp_path, prefilter=False))


def test_planning_that_does_not_settle_says_so(tmp_path, monkeypatch, demand_rounds):
    """Planning stops after ``MAX_ROUNDS`` rounds of demands. A run stopped there while a round
    still found files to parse says so: ``Analysis.notes``, printed by ``dllint check`` as a
    warning; the exit code is the findings'. A run that settles says nothing. With the cache,
    the unsettled run's findings are not kept for the next run to reuse silently: the next one
    plans again, from the files the last one reached, and here settles."""
    import dllint.engine as engine_module
    from click.testing import CliRunner

    from dllint.cli import cli

    _write(tmp_path, MIXIN_PROJECT)  # two rounds: the first wants mixins.py, the second nothing
    assert _analyse(tmp_path).notes == []
    monkeypatch.setattr(engine_module, "MAX_ROUNDS", 1)
    analysis = _analyse(tmp_path)
    assert len(analysis.notes) == 1
    assert "did not settle in 1 rounds" in analysis.notes[0] and "mixins.py" in analysis.notes[0]
    monkeypatch.chdir(tmp_path)
    warned, planned = [], []
    for options in (["--no-cache"], ["--no-cache"], [], [], []):
        demand_rounds.clear()
        result = CliRunner().invoke(cli, ["check", "--select", "ALL", "--output-format", "concise", *options, "."], catch_exceptions=False)
        assert result.exit_code == 1 and "mixins.py:6:" in result.stdout
        warned.append(result.stderr.count("dllint: warning: planning did not settle"))
        planned.append(len(demand_rounds))
    assert warned == [1, 1, 1, 0, 0]
    assert planned == [1, 1, 1, 1, 0]  # the settled run's findings are kept and reused


TEACHERS = {
    # a duck-typed base (no trigger word): its subclasses are Datasets once a loader is given one
    "core/__init__.py": "",
    "core/base.py": (
        "class Teacher:\n    def __init__(self, path):\n        with open(path) as fh:\n"
        "            self.lines = fh.read().splitlines()\n\n    def __getitem__(self, i):\n"
        "        return self.lines[i]\n\n    def __len__(self):\n        return len(self.lines)\n"
    ),
    "tasks/__init__.py": "",
    "tasks/a.py": "from core.base import Teacher\n\n\nclass ATeacher(Teacher):\n    pass\n",
    "tasks/b.py": "from core import base\n\n\nclass BTeacher(base.Teacher):\n    pass\n",
    # a subclass through an alias, and one of a subclass defined in another file
    "tasks/c.py": "from core.base import Teacher as T\nfrom tasks.b import BTeacher\n\n\nclass CTeacher(T):\n    pass\n\n\nclass DTeacher(BTeacher):\n    pass\n",
    # a subclass of the named file's class, in a file naming the base as well
    "tasks/e.py": "from core.base import Teacher\nfrom tasks.mine import MineTeacher\n\nBASE = Teacher\n\n\nclass ETeacher(MineTeacher):\n    pass\n",
    "tasks/mine.py": (
        "import os\n\nfrom core.base import Teacher\n\n\nclass MineTeacher(Teacher):\n"
        "    def __init__(self, path):\n        super().__init__(path)\n"
        "        self.names = sorted(os.listdir(os.path.dirname(path)))\n"
    ),
}
TRAIN = (
    "from torch.utils.data import DataLoader\n\nfrom tasks.{module} import {cls}\n\n\ndef main():\n"
    "    loader = DataLoader({cls}('lines.txt'), num_workers=4)\n    return [batch for batch in loader]\n"
)
UNRELATED_TRAIN = (
    "from torch.utils.data import DataLoader\n\n\ndef main():\n"
    "    loader = DataLoader(list(range(8)), num_workers=4)\n    return [batch for batch in loader]\n"
)

# a script defining its own class of a sibling's name (every ParlAI task's ``DefaultTeacher``):
# it imports the siblings' package and a module of it, but not that name, so the sibling's file
# (tasks/a.py) is not parsed for it
OWN_TRAIN = (
    "from torch.utils.data import DataLoader\n\nfrom tasks import b\n\n\nclass ATeacher:\n    def __getitem__(self, i):\n        return i\n\n"
    "    def __len__(self):\n        return 8\n\n\ndef main():\n"
    "    loader = DataLoader(ATeacher(), num_workers=4)\n    return [batch for batch in loader]\n"
)


@pytest.mark.parametrize(
    "train, parsed",
    [
        (UNRELATED_TRAIN, set()),  # no loader is given a sibling: none of their files is parsed
        (OWN_TRAIN, set()),
        # (once MineTeacher is a Dataset, tasks/e.py is parsed as the file of its subclass)
        (TRAIN.format(module="a", cls="ATeacher"), {"tasks/a.py", "tasks/e.py", "train.py"}),
        (TRAIN.format(module="c", cls="CTeacher"), {"tasks/c.py", "tasks/e.py", "train.py"}),
        (TRAIN.format(module="c", cls="DTeacher"), {"tasks/b.py", "tasks/c.py", "tasks/e.py", "train.py"}),
        (TRAIN.format(module="e", cls="ETeacher"), {"tasks/e.py", "train.py"}),
    ],
)
def test_a_named_files_duck_typed_dataset_is_found_through_the_siblings_loaders_are_given(tmp_path, train, parsed):
    """A named file's class derives from a project base serving samples (``__getitem__``, no
    torch Dataset): it is a Dataset when a loader is given a sibling. The named run reads the
    class statements of the files naming the base (no facts) and parses only the files defining
    a sibling that a file with trigger words names, with that file; its findings for the named
    file are the whole run's (DL101 on ``self.names`` only when a loader is given a sibling)."""
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.engine import Engine

    (tmp_path / "core").mkdir()
    (tmp_path / "tasks").mkdir()
    _write(tmp_path, {**TEACHERS, "train.py": train})
    whole = [f for f in _findings(_analyse(tmp_path)) if f.startswith("mine.py")]
    assert whole == ([] if train in (UNRELATED_TRAIN, OWN_TRAIN) else ["mine.py:9:DL101"])
    target = str(tmp_path / "tasks" / "mine.py")
    settings, root = load_configuration([target], None, Overrides(select=["ALL"]))
    named = Engine(settings, root, jobs=1).analyse([target], enabled_codes(settings), explicit={target})
    assert _findings(named) == whole
    analysed = {Path(p).relative_to(tmp_path).as_posix() for p in named.project.files}
    assert analysed - {"tasks/mine.py", "core/base.py", "core/__init__.py", "tasks/__init__.py"} == parsed


SCRIPT_FOLDERS = {
    # two example folders, each a script main.py with its own main() and a launcher calling it
    "a/main.py": (
        "from torch.utils.data import DataLoader\n\n\ndef main(workers=2):\n"
        "    loader = DataLoader(list(range(8)), num_workers=workers)\n    return [b for b in loader]\n"
    ),
    "a/launch.py": "import torch.multiprocessing as mp\n\nfrom main import main\n\nmp.set_start_method('spawn')\nmain(workers=4)\n",
    "b/main.py": "from torch.utils.data import DataLoader\n\n\ndef main():\n    return DataLoader([1, 2], num_workers=2)\n",
    "b/launch.py": "import torch.multiprocessing as mp\n\nfrom main import main\n\nmp.set_start_method('fork')\nmain()\n",
    "c/run.py": "import sys\n\nsys.path.insert(0, '../a')\nfrom main import main  # noqa\n\nDataset = None\nmain()\n",
}


def test_a_named_script_is_used_only_by_the_files_that_can_import_it(tmp_path):
    """The files using what a named file defines are looked for by name; a file naming a
    script's ``main`` is taken only if ``main`` means that script from where it is (``Layout.
    find``: another folder's launcher imports its own ``main.py``), or if it changes
    ``sys.path``. The named script's findings are the whole run's."""
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.engine import Engine

    for folder in ("a", "b", "c"):
        (tmp_path / folder).mkdir()
    _write(tmp_path, SCRIPT_FOLDERS)
    whole = _analyse(tmp_path)
    assert _findings(whole) == ["launch.py:6:DL303", "run.py:7:DL303"]  # (a and c's: spawn without a main guard)
    target = str(tmp_path / "a" / "main.py")
    settings, root = load_configuration([target], None, Overrides(select=["ALL"]))
    named = Engine(settings, root, jobs=1).analyse([target], enabled_codes(settings), explicit={target})
    analysed = {Path(p).relative_to(tmp_path).as_posix() for p in named.project.files}
    assert analysed == {"a/main.py", "a/launch.py", "c/run.py"}  # not b's: its launcher imports b/main.py
    assert named.diagnostics == [d for d in whole.diagnostics if d.path == target]


FOLDER_USERS = {
    # script folders: a/utils.py defines a loader builder; files naming it with the word ``utils``
    "a/utils.py": (
        "from torch.utils.data import DataLoader\n\n\ndef make_loader(workers=2):\n"
        "    loader = DataLoader(list(range(8)), num_workers=workers)\n    return [b for b in loader]\n"
    ),
    "a/train.py": "from utils import make_loader\n\nmake_loader(4)\n",  # its own folder's utils.py
    "tools/run.py": "import a.utils\n\na.utils.make_loader(3)\n",  # through the module's folder
    # b's own utils.py and make_loader; ``utils`` after a dot only in ``torch.utils``
    "b/utils.py": "def make_loader():\n    return 1\n",
    "b/unrelated.py": "import torch.utils.data\n\nfrom utils import make_loader\n\nmake_loader()\n",
}


def test_a_module_named_after_a_dot_means_its_folder_or_a_relative_import(tmp_path):
    """A file naming what a named module defines is taken when it may import that module: by
    its module name from its own roots (``a/train.py``: ``from utils import``), or after a dot
    through the module's folder or relatively (``tools/run.py``: ``a.utils``; ``from .utils
    import``). ``torch.utils`` names no project module: ``b/unrelated.py``, which imports its
    own folder's ``utils.py``, is not parsed (any dot before ``utils`` took it). The named
    module's findings are the whole run's."""
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.engine import Engine, question_test

    for folder in ("a", "b", "tools"):
        (tmp_path / folder).mkdir()
    _write(tmp_path, FOLDER_USERS)
    whole = _analyse(tmp_path)
    target = str(tmp_path / "a" / "utils.py")
    settings, root = load_configuration([target], None, Overrides(select=["ALL"]))
    named = Engine(settings, root, jobs=1).analyse([target], enabled_codes(settings), explicit={target})
    analysed = {Path(p).relative_to(tmp_path).as_posix() for p in named.project.files}
    assert analysed == {"a/utils.py", "a/train.py", "tools/run.py"}
    assert named.diagnostics == [d for d in whole.diagnostics if d.path == target]
    dotted = question_test(("dotted", "utils", "pkg"), None)
    assert [bool(dotted(b)) for b in (b"from .utils import f", b"from ..utils import f", b"import pkg.utils", b"x.pkg.utils.f()")] == [True] * 4
    assert [bool(dotted(b)) for b in (b"import torch.utils.data", b"mypkg.utils", b"a.b.utils")] == [False] * 3


def _asked_alike(engine, analysis) -> set[str]:
    """Checks that each answer the run recorded (Engine._note) for a file it did not analyse is
    what ``ask_again`` answers from the file's bytes, as the early cutoff asks it again; the kinds
    of questions checked."""
    from dllint.engine import _plain, ask_again

    kinds = set()
    for question, answers in engine._asked.values():
        for path, answer in answers.items():
            if path not in analysis.project.files:
                blob = Path(path).read_bytes()
                assert _plain(ask_again(question, blob, engine.triggers)) == _plain(answer), (question[0], path)
                kinds.add(question[0])
    return kinds


def test_what_a_run_asks_of_the_files_it_does_not_analyse_is_asked_alike_again(tmp_path):
    """The questions planning and the rules ask of the files outside the analysis, recorded with
    their answers, get the same answers asked again from the bytes (what the early cutoff
    does: tests/test_cache.py): the siblings of a named file's duck-typed class (class
    statements, words of a loader), the users of a named script (import reach), whole runs."""
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.engine import Engine

    kinds: set[str] = set()
    cases = [
        ("teachers", {**TEACHERS, "train.py": TRAIN.format(module="a", cls="ATeacher")}, "tasks/mine.py"),
        ("scripts", SCRIPT_FOLDERS, "a/main.py"),
    ]
    for name, files, named in cases:
        root = tmp_path / name
        for folder in {Path(f).parent for f in files}:
            (root / folder).mkdir(parents=True, exist_ok=True)
        _write(root, files)
        for targets in ([str(p) for p in sorted(root.rglob("*.py"))], [str(root / named)]):
            settings, project_root = load_configuration(targets[-1:], None, Overrides(select=["ALL"]))
            engine = Engine(settings, project_root, jobs=1)
            explicit = set(targets) if len(targets) == 1 else set()
            kinds |= _asked_alike(engine, engine.analyse(targets, enabled_codes(settings), explicit=explicit))
    assert {"triggers", "names", "found", "headers", "may_hold", "dotted"} <= kinds


def test_class_headers_read_bases_and_aliases_or_say_they_cannot():
    from dllint.prefilter import class_headers, subclasses_by_name

    source = (
        b"from x import BaseOutput as Out\r\nimport y\nAlias = y.BaseOutput  # kept\n"
        b"class A(Out): pass\nclass B(\n    Alias,\n    Generic[K, V], metaclass=M,\n):\n    x = 1\n"
        b"class C(A):\n    class Inner(object):\n        pass\n"
        b"class \xce\xa9mega(utils.BaseOutput):\n    pass\n"
    )
    classes, aliases = class_headers(source)
    assert classes == [("A", ("Out",)), ("B", ("Alias", "Generic")), ("C", ("A",)), ("Inner", ("object",)), ("\u03a9mega", ("BaseOutput",))]
    assert ("Out", "BaseOutput") in aliases and ("Alias", "BaseOutput") in aliases
    assert subclasses_by_name({"f": (classes, aliases)}, {"BaseOutput"}) == {n: {"f"} for n in ("A", "B", "C", "\u03a9mega")}
    # a subclass of a subclass in another file; nothing for a class deriving from neither
    other = class_headers(b"class D(C):\n    pass\nclass E(Other):\n    pass\n")
    assert subclasses_by_name({"g": other, "f": (classes, aliases)}, {"BaseOutput"})["D"] == {"g"}
    # cannot tell: a call or a starred list as a base, a comment inside the parentheses, a line
    # of prose starting with the word class, a file that does not parse as text
    for unknown in (b"class E(make()):\n pass\n", b"class F(*bases):\n pass\n", b"class G(A,  # why\n B):\n pass\n",
                    b'"""\nclass of objects\n"""\n'):
        assert class_headers(unknown) is None


def test_name_test_finds_what_its_whole_word_regex_finds():
    """Many names (more than ``FIND_AT_MOST``) are found by the alternation without its leading
    ``\\b``, a match kept where a word starts: the same names as ``regex.findall``, non-ASCII
    letters (which are not word bytes) included."""
    import random

    from dllint.prefilter import NameTest

    rng = random.Random(3)
    pieces = ["a", "b", "_", "1", "\u03a9", "Da", "ta"]
    for _ in range(400):
        names = {"".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(40)}
        names = {n for n in names if n.isidentifier()}
        test = NameTest(names)
        assert test.words is None  # (the regex path)
        for _ in range(5):
            data = "".join(rng.choice([*pieces, " ", ".", "(", "\n"]) for _ in range(50)).encode()
            expected = {m.decode() for m in test.regex.findall(data)}
            assert test.found(data) == expected
            assert test(data) == bool(expected)


def test_many_ascii_names_are_found_from_their_last_bytes_as_the_whole_word_regex_finds_them():
    """Many names of ASCII word bytes (a project's Dataset classes, most ending ``Dataset``) are
    looked for by the places each group's last bytes occur (``NameTest.suffixes``): the same
    names as ``regex.findall``, names sharing their last bytes, of one byte and longer than the
    group's bytes, at the start and the end of the text."""
    import random

    from dllint.prefilter import NameTest

    rng = random.Random(5)
    pieces = ["Dataset", "Audio", "a", "_", "1", "Da", "ta", "set", "Data"]
    for _ in range(300):
        names = {"".join(rng.choice(pieces) for _ in range(rng.randint(1, 3))) for _ in range(30)}
        names = {n for n in names if n.isidentifier()}
        if len(names) <= NameTest.FIND_AT_MOST:
            continue
        test = NameTest(names)
        assert test.suffixes
        for _ in range(5):
            data = "".join(rng.choice([*pieces, " ", ".", "(", "\n", "\u03a9"]) for _ in range(60)).encode()
            expected = {m.decode() for m in test.regex.findall(data)}
            assert test.found(data) == expected, (sorted(names), data)
            assert test(data) == bool(expected)


def test_memoized_answers_replay_the_unparsed_files_they_met():
    from dllint.config import Settings
    from dllint.facts.extract import extract
    from dllint.program.layout import Layout
    from dllint.program.model import ProgramModel

    data = MIXIN_PROJECT["data.py"].encode()
    facts = extract("/p/data.py", "data", "/p", False, data)
    layout = Layout("/p", {"/p/data.py", "/p/mixins.py", "/p/other.py"})
    index = ProgramModel({"/p/data.py": facts}, Settings(), layout)
    frames = next(c for c in index.classes() if c.cls.name == "Frames")
    with index.quietly():
        index.mro(frames)
        index.resolve("data.IndexMixin", "/p")
    assert index.misses == set()
    index.mro(frames)  # the memo entry, asked loudly
    assert index.misses == {"/p/mixins.py"}
    index.misses.clear()
    index.resolve("data.IndexMixin", "/p")
    assert index.misses == {"/p/mixins.py"}


def test_cold_scan_in_worker_processes_decides_like_the_main_process(tmp_path):
    import json

    from dllint.engine import SCAN_PARALLEL_THRESHOLD

    files = {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(SCAN_PARALLEL_THRESHOLD)}
    files["doc.py"] = 'def g():\n    """Mentions a DataLoader in prose only."""\n'
    files["share.py"] = 'import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\n'
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": ["import torch.multiprocessing as mp\n", 'mp.set_sharing_strategy("file_system")\n']}
    files["nb.ipynb"] = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    _write(tmp_path, files)
    pooled = _analyse(tmp_path, jobs=2)  # the scan runs in worker processes
    serial = _analyse(tmp_path, jobs=1)
    everything = _analyse(tmp_path, prefilter=False)
    assert {Path(p).name for p in pooled.project.files} == {"share.py", "nb.ipynb"}
    assert _findings(pooled) == _findings(serial) == _findings(everything) == ["nb.ipynb:2:DL302", "share.py:2:DL302"]


def test_a_cold_run_reads_the_notebooks_while_the_workers_scan_the_other_files(tmp_path, monkeypatch):
    """The notebooks' code cells are read, and their trigger words tested, in the main process
    while the worker processes scan the other files (it used to be before the scan and after
    it, the workers idle); a notebook that cannot be read is reported as before. The same
    findings as a run without worker processes and as one parsing every file."""
    import json

    from dllint.engine import SCAN_PARALLEL_THRESHOLD, Engine, FactStore

    events: list[str] = []
    real_map, real_read = FactStore._map_meanwhile, Engine._read_notebooks

    def map_meanwhile(self, fn, jobs, meanwhile):
        events.append("scan")
        try:
            return real_map(self, fn, jobs, meanwhile)
        finally:
            events.append("scanned")

    def read_notebooks(data, read_errors):
        events.append("notebooks")
        return real_read(data, read_errors)

    monkeypatch.setattr(FactStore, "_map_meanwhile", map_meanwhile)
    monkeypatch.setattr(Engine, "_read_notebooks", staticmethod(read_notebooks))
    files = {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(SCAN_PARALLEL_THRESHOLD)}
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": ["import torch.multiprocessing as mp\n", 'mp.set_sharing_strategy("file_system")\n']}
    files["nb.ipynb"] = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    files["broken.ipynb"] = '{"cells": ['
    _write(tmp_path, files)
    pooled = _analyse(tmp_path, jobs=2)
    assert events == ["scan", "notebooks", "scanned"]
    assert {Path(p).name for p in pooled.project.files} == {"nb.ipynb"}
    found = ["broken.ipynb:1:DL000", "nb.ipynb:2:DL302"]
    assert _findings(pooled) == _findings(_analyse(tmp_path, jobs=1)) == _findings(_analyse(tmp_path, prefilter=False)) == found


RUNNER_PROJECT = {
    # ``self.handler(i)``: the call index asks which classes ``self.handler`` holds; its write is
    # an element of what a parameter's method returns, which only call sites could tell
    "runner.py": (
        "from torch.utils.data import DataLoader, Dataset\n\n\nclass Runner(Dataset):\n"
        "    def __init__(self, source):\n        for h in source.parts():\n            self.handler = h\n\n"
        "    def __getitem__(self, i):\n        return self.handler(i)\n\n    def __len__(self):\n        return 3\n\n\n"
        "def main():\n    return DataLoader(Runner(object()), num_workers=2)\n"
    ),
}


def test_building_the_call_index_asks_for_no_call_site(tmp_path, monkeypatch):
    """What a call of a stored object may construct, asked while the call index is built
    (``held_classes``), follows only what the code names (``_called_classes(returns=False)``),
    also through the elements of a loop over a method's result: that result's receiver is a
    parameter, and its classes are what the call sites pass. Asking for them built the index
    again inside itself, until the stack ran out (the torch package tree: a RecursionError)."""
    from dllint.program.values import Values

    during: list = []
    real = Values.call_sites

    def call_sites(self, fnref):
        if self.__dict__.get("_indexing"):
            during.append(fnref.key)  # (answered as none: ``call_sites``)
        return real(self, fnref)

    monkeypatch.setattr(Values, "call_sites", call_sites)
    _write(tmp_path, RUNNER_PROJECT)
    found = _findings(_analyse(tmp_path))
    assert during == []
    assert found == ["runner.py:17:DL307"]
    assert found == _findings(_analyse(tmp_path, prefilter=False))


def _fixture_sources():
    root = Path(__file__).parent.parent / "fixtures"
    return sorted(p for p in root.rglob("*.py") if "expected" not in p.name)


def test_node_words_give_the_verdicts_code_words_give():
    """The scan reads a file's code words from its FileContext (``node_words``) instead of
    compiling it: on every fixture file and on the cases below, the same trigger verdicts, and
    every trigger word of the nodes' words is one of ``code_words`` too."""
    import ast

    from dllint.config import Settings
    from dllint.engine import Engine
    from dllint.facts.context import FileContext
    from dllint.prefilter import node_words

    triggers = Engine(Settings(), ".").triggers
    cases = [
        b"def f():\n    x: DataLoader = make()\n    return x\n",  # a local annotation: not a code word
        b"class A:\n    loader: DataLoader\n",  # a class annotation is kept
        b"def f():\n    class B:\n        loader: DataLoader = None\n    return B\n",
        b"try:\n    pass\nexcept E as DataLoader:\n    pass\n",
        b"match x:\n    case Point(num_workers=w) as Dataset:\n        pass\n",
        b"f(num_workers=2)\n",
        b"from torch.utils import data as datasets\n",
        b"s = 'torch.utils.data.DataLoader'\n",
        b"s = 'the DataLoader'\n",
    ]
    sources = cases + [p.read_bytes() for p in _fixture_sources()]
    checked = 0
    for data in sources:
        words = code_words(data)
        try:
            tree = ast.parse(data)
        except SyntaxError:
            continue
        if words is None:
            continue
        ctx = FileContext("m.py", "m", data.decode(), tree)
        mine = node_words(ctx)
        assert triggers.in_words(mine) == triggers.in_words(words), data[:80]
        theirs = set(words.split("\0"))
        for word in mine.split("\0"):
            if any(t in word for t in triggers._code_text):
                assert word in theirs, (word, data[:80])
        checked += 1
    assert checked > 100


def test_the_scan_computes_the_facts_a_plain_extraction_computes(tmp_path):
    """A cold run's scan analyses the files its triggers accept in the same pass
    (``_scan_extract_job``): the same facts as ``extract`` of the file, the same cache file (which
    the worker writes itself, once idle), and no facts and no cache file for a file the triggers
    reject (a local annotation alone names the DataLoader), but what it imports when asked."""
    from dllint import serial
    from dllint.cache import FactWriter
    from dllint.config import Settings
    from dllint.engine import Engine, _scan_extract_job
    from dllint.workers import wait_for_writes
    from dllint.facts.extract import extract
    from dllint.rules import all_rules

    sources = {p.name + str(i): p for i, p in enumerate(_fixture_sources()[:60])}
    rows = []
    for name, src in sources.items():
        path = tmp_path / f"{name.replace('.', '_')}.py"
        path.write_bytes(src.read_bytes())
        rows.append((str(path), path.stem, str(tmp_path), False))
    quiet = tmp_path / "quiet.py"
    quiet.write_text("def f():\n    x: DataLoader = make()\n    return x\n")
    rows.append((str(quiet), "quiet", str(tmp_path), False))
    triggers = Engine(Settings(), str(tmp_path)).triggers
    loader_classes = frozenset({"torch.utils.data.DataLoader"})
    writer = FactWriter(str(tmp_path / "cache"), "print", "settings")
    out = {r[0]: r for r in _scan_extract_job((rows, triggers, frozenset(), loader_classes, writer, True))}
    wait_for_writes()
    accepted = 0
    for path, module, root, is_package in rows:
        _, digest, verdict, facts, imports = out[path]
        data = Path(path).read_bytes()
        stored = tmp_path / "cache" / "facts" / (key := writer.key(digest, path, module, root, is_package))[:2] / key
        assert verdict == triggers(data), path
        if not verdict:  # (what it imports, read from its bytes: the engine's ``_unparsed_imports``)
            assert facts is None and not stored.exists() and imports == module_imports(data)
            continue
        assert imports is None
        accepted += 1
        plain = extract(path, module, root, is_package, data, all_rules(), loader_classes, frozenset())
        assert serial.dumps(facts) == serial.dumps(plain) == stored.read_bytes(), path
    assert accepted > 20 and out[str(quiet)][2] is False


def test_grouped_byte_search_finds_the_words_one_search_per_word_finds():
    """``Triggers.from_bytes`` looks for a group of words sharing a prefix only where the prefix
    occurs: its answers are those of a search for every word, on texts holding each word, its
    prefix alone, or a word of another group."""
    words = {b"DataLoader", b"Dataset", b"DataBase", b"workers", b"worker_init_fn", b"set_start_method", b"OMP_NUM_THREADS"}
    comments = {b"noqa: DL", b"noqa:DL"}
    triggers = Triggers(words, comments)

    def plain(data: bytes):
        if any(w in data for w in comments):
            return True
        present = [w for w in words if w in data]
        if not present:
            return False
        from dllint.prefilter import _in_paths

        return False if all(_in_paths(data, w) for w in present) else None

    samples = [b"", b"x = 1", b"Data = 2", b"DataLoad", b"x = DataLoader(ds)", b'p = "a/Dataset/b"', b"worker = 1",
               b"set_s = 0", b"def f(workers): pass", b"x = 1  # noqa: E501", b"x = 1  # noqa:DL101", b"os.environ['OMP_NUM_THREADS']",
               b'u = "https://x/DataBase/"\nworker_init_fn = None']
    assert len(triggers._code_gates) < len(words)  # grouped: fewer passes than words
    for data in samples:
        assert triggers.from_bytes(data) == plain(data), data


def test_module_imports_reads_what_a_file_imports_from_its_bytes():
    """``module_imports``: the imports of a file the analysis does not parse, as its facts would
    record them (dllint/facts/context.py: every import statement, at any depth), and whether it
    is an entry script. Parenthesized names with comments (one holding a parenthesis), a
    continued line, ``as`` names and relative levels; an import in a string adds a module (a
    superset), text that is no import statement adds none. Not read: a second statement after a
    semicolon (``after_semicolon``)."""
    source = b"""import os, sys as system
import a.b.c as d
from . import x, y as z
from ..pkg.mod import (  # see (docs)
    one,  # first
    two as three,
)
from m import *
from q \\
    import r
text = "nothing to import here"


def f():
    import inner.mod
    from .sibling import helper; import after_semicolon


if __name__ == "__main__":
    f()
"""
    imports, entry = module_imports(source)
    assert imports == (
        (0, "os", ()), (0, "sys", ()), (0, "a.b.c", ()), (1, "", ("x", "y")), (2, "pkg.mod", ("one", "two")),
        (0, "m", ("*",)), (0, "q", ("r",)), (0, "inner.mod", ()), (1, "sibling", ("helper",)),
    )
    assert entry is True
    assert module_imports(b"if __name__ != '__main__':\n    pass\ndef main():\n    if __name__ == '__main__':\n        pass\n")[1] is False
    assert module_imports(b"if ('__main__' == __name__):\n    run()\n")[1] is True
    docs = module_imports(b'"""Usage:\n\n    from tools import run\n"""\n')
    assert docs == (((0, "tools", ("run",)),), False)


def test_a_named_files_run_asks_each_files_trigger_words_once(tmp_path, monkeypatch):
    """Planning from a named file asks whether unparsed files hold trigger words in several
    rounds and places (the files naming a base, the files naming a subclass); the answer, a
    compile of the file (``code_words``), is kept for the run (``Engine._matches``): without a
    cache, each file's bytes are tested once. The findings are the whole run's."""
    from collections import Counter

    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.engine import Engine

    (tmp_path / "core").mkdir()
    (tmp_path / "tasks").mkdir()
    _write(tmp_path, {**TEACHERS, "train.py": TRAIN.format(module="c", cls="DTeacher")})
    tested: Counter = Counter()
    real = Triggers.__call__

    def counting(self, data):
        tested[data] += 1
        return real(self, data)

    monkeypatch.setattr(Triggers, "__call__", counting)
    target = str(tmp_path / "tasks" / "mine.py")
    settings, root = load_configuration([target], None, Overrides(select=["ALL"]))
    named = Engine(settings, root, jobs=1).analyse([target], enabled_codes(settings), explicit={target})
    assert _findings(named) == ["mine.py:9:DL101"]
    tested.pop(b"", None)  # (the two empty ``__init__.py`` files: the same bytes)
    assert len(tested) >= 4  # (the files naming the base or a subclass)
    assert max(tested.values()) == 1


def test_a_cold_scan_reads_what_the_files_it_rejects_import_when_a_start_method_is_set(tmp_path, monkeypatch):
    """In a project where some file sets a start method, what each file not parsed imports is
    asked (``Engine._unparsed_imports``: which entry scripts reach a loader's module). A cold
    run's scan workers read it from the bytes they hold (``module_imports``), so the main process
    reads none of them again; the answers and the findings are a serial run's."""
    import dllint.engine as engine_module
    from dllint.engine import SCAN_PARALLEL_THRESHOLD

    files = {f"m{i}.py": f"import m{i - 1}\n\n\ndef f{i}():\n    return {i}\n" for i in range(1, SCAN_PARALLEL_THRESHOLD)}
    files["m0.py"] = "from loaders import make\n"
    files["loaders.py"] = (
        "from torch.utils.data import DataLoader\n\n\ndef make(ds):\n"
        "    return DataLoader(ds, num_workers=2)\n"
    )
    files["train.py"] = "import multiprocessing as mp\n\nimport m9\n\nmp.set_start_method('fork')\nm9.f9()\n"
    _write(tmp_path, files)
    read_here: list[bytes] = []
    real = engine_module.module_imports

    def counting(data):
        read_here.append(data)  # (in this process: a worker's calls stay in the worker)
        return real(data)

    monkeypatch.setattr(engine_module, "module_imports", counting)
    pooled = _analyse(tmp_path, jobs=2)
    assert read_here == []
    serial = _analyse(tmp_path, jobs=1)
    assert len(read_here) >= SCAN_PARALLEL_THRESHOLD - 1  # (no workers: read here)
    unparsed = pooled.project.index.unparsed_imports
    assert "m5.py" in {Path(p).name for p in unparsed}
    assert unparsed == serial.project.index.unparsed_imports
    assert _findings(pooled) == _findings(serial)
