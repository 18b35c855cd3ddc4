"""Fixes built with libcst (dllint/fixes/): exact text edits computed from the transformed module,
the layout of the code kept, several places and an import changed by one fix, and libcst used only
for files that have a finding with a fix."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from golden import run_dllint

from dllint.fixes.cst import edits_between
from dllint.model import Span
from dllint.textutil import line_starts, newline_of, offset


def apply(before: str, edits) -> str:
    """The edits applied the way dllint/fix.py applies them (contents use \\n)."""
    starts = line_starts(before)
    newline = newline_of(before)
    ranges = sorted(
        (offset(before, starts, e.span.row, e.span.col), offset(before, starts, e.span.end_row, e.span.end_col), e.content.replace("\n", newline))
        for e in edits
    )
    for (a, b, _), (x, _, _) in zip(ranges, ranges[1:]):
        assert b <= x, "edits overlap"
    out = before
    for a, b, content in reversed(ranges):
        out = out[:a] + content + out[b:]
    return out


def make_project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_bytes(text.encode())
    return tmp_path


def fix(work: Path, select: str, unsafe: bool = True) -> str:
    flags = ["--fix", "--unsafe-fixes"] if unsafe else ["--fix"]
    code, out = run_dllint(work, ["check", "--select", select, "-q", "--target-version", "py311", *flags])
    assert code in (0, 1), out
    return out


# ---------------------------------------------------------------------------- edits_between


@pytest.mark.parametrize(
    "before, after",
    [
        ("a = DL(ds, batch_size=2, prefetch_factor=4, persistent_workers=True)\n", "a = DL(ds, batch_size=2, persistent_workers=True)\n"),
        ("x = f(a)\n", 'x = f(a, k="v")\n'),
        ("import os\r\n\r\nx = f(lambda b: g(1, b))\r\n", "import os\r\nimport functools\r\n\r\nx = f(functools.partial(g, 1))\r\n"),
        ("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n"),
        ("", "x\n"),
        ("x = 1", "x = 1\ny = 2"),
    ],
)
def test_edits_reproduce_the_transformed_text(before, after):
    assert apply(before, edits_between(before, after)) == after


def test_edits_are_small_and_cut_no_word():
    before = "a = DL(ds, batch_size=2, prefetch_factor=4, persistent_workers=True)\n"
    (edit,) = edits_between(before, "a = DL(ds, batch_size=2, persistent_workers=True)\n")
    assert edit.content == "" and before[edit.span.col - 1 : edit.span.end_col - 1] == "prefetch_factor=4, "
    one, two = edits_between("import os\n\nx = 1\ny = f(lambda b: g(b))\n", "import os\nimport functools\n\nx = 1\ny = f(g)\n")
    assert (one.content, one.span.row) == ("import functools\n", 2)
    assert (two.content, two.span.row) == ("g", 4)


def test_random_changes_round_trip():
    rng = random.Random(7)
    words = ["x", "y = 1", "    pass", "", "import os", "f(a, b)", "# c", "def g():"]
    for _ in range(300):
        lines = [rng.choice(words) for _ in range(rng.randint(0, 8))]
        before = "\n".join(lines)
        for _ in range(rng.randint(1, 3)):
            i = rng.randint(0, len(lines))
            if rng.random() < 0.5 or not lines:
                lines.insert(i, rng.choice(words))
            else:
                lines[min(i, len(lines) - 1)] += rng.choice(["", "x", ", c"])
        after = "\n".join(lines)
        for newline in ("\n", "\r\n"):
            b, a = before.replace("\n", newline), after.replace("\n", newline)
            assert apply(b, edits_between(b, a)) == a


# ---------------------------------------------------------------------------- the rules' fixes


CV2_DATASET = '''\
import cv2
import numpy as np
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return cv2.resize(np.full((8, 8), i, np.uint8), (4, 4))


def make_loader():
    return DataLoader(
        Frames(),
        batch_size=2,
        num_workers=2,  # two workers
    )
'''


def test_dl301_keyword_goes_on_its_own_line_in_a_one_per_line_call(tmp_path):
    """The old text insertion put the keyword after `num_workers=2` on its line, before the comma
    and the comment; the libcst fix lays it out like the other arguments."""
    work = make_project(tmp_path, {"frames.py": CV2_DATASET})
    fix(work, "DL301")
    assert (work / "frames.py").read_text() == CV2_DATASET.replace(
        "        num_workers=2,  # two workers\n",
        '        num_workers=2,  # two workers\n        multiprocessing_context="spawn",\n',
    )


def test_dl102_map_location_in_a_multi_line_call(tmp_path):
    source = '''\
import torch
from torch.utils.data import DataLoader, Dataset


class Embeddings(Dataset):
    def __init__(self, path):
        self.table = torch.load(
            path,
        )

    def __len__(self):
        return len(self.table)

    def __getitem__(self, i):
        return self.table[i]


loader = DataLoader(Embeddings("t.pt"), num_workers=2)
'''
    work = make_project(tmp_path, {"emb.py": source})
    fix(work, "DL102")
    assert (work / "emb.py").read_text() == source.replace("            path,\n", '            path,\n            map_location="cpu",\n')


def test_dl104_lazy_open_uses_the_methods_own_self_name(tmp_path):
    """Three places change at once (the assignment, a property after __init__, the imports); the
    instance is called `this` here, which the old text template (always `self.`) broke."""
    source = '''\
"""Records."""

from torch.utils.data import DataLoader, Dataset


class Lines(Dataset):
    def __init__(this, path):
        this.fh = open(path, "rb")  # shared by forked workers

    def __len__(this):
        return 2

    def __getitem__(this, index):
        this.fh.seek(4 * index)
        return this.fh.read(4)


def loader(path):
    return DataLoader(Lines(path), num_workers=2)
'''
    work = make_project(tmp_path, {"lines.py": source})
    fix(work, "DL104")
    fixed = (work / "lines.py").read_text()
    assert fixed == source.replace(
        "from torch.utils.data import DataLoader, Dataset\n",
        "from torch.utils.data import DataLoader, Dataset\nimport functools\nimport os\n",
    ).replace(
        '        this.fh = open(path, "rb")  # shared by forked workers\n',
        '        this._fh_open = functools.partial(open, path, "rb")  # shared by forked workers\n'
        "        this._fh_handle, this._fh_pid = None, None\n"
        "\n"
        "    @property\n"
        "    def fh(self):\n"
        '        """Opened on first use in each process: a handle must not cross a fork."""\n'
        "        if self._fh_pid != os.getpid():\n"
        "            self._fh_handle, self._fh_pid = self._fh_open(), os.getpid()\n"
        "        return self._fh_handle\n",
    )
    data = tmp_path / "data.bin"
    data.write_bytes(b"abcdefgh")
    namespace: dict = {"__name__": "lines"}
    exec(compile(fixed, "lines.py", "exec"), namespace)
    assert namespace["Lines"](str(data))[1] == b"efgh"


def test_dl103_partial_and_its_import_in_a_crlf_file(tmp_path):
    source = '"""Doc."""\r\nfrom __future__ import annotations\r\n\r\nfrom torch.utils.data import DataLoader, TensorDataset\r\n\r\n\r\ndef pad(value, batch):\r\n    return batch\r\n\r\n\r\ndef main(ds):\r\n    return DataLoader(ds, num_workers=2, collate_fn=(lambda b: pad(0, b)))\r\n'
    work = make_project(tmp_path, {"m.py": source})
    fix(work, "DL103")
    fixed = (work / "m.py").read_bytes().decode()
    assert fixed == source.replace(
        "from torch.utils.data import DataLoader, TensorDataset\r\n",
        "from torch.utils.data import DataLoader, TensorDataset\r\nimport functools\r\n",
    ).replace("(lambda b: pad(0, b))", "(functools.partial(pad, 0))")


def test_dl204_after_an_import_sharing_its_line(tmp_path):
    source = CV2_DATASET.replace("import cv2\n", "import os; import cv2  # OpenCV\n")
    work = make_project(tmp_path, {"frames.py": source})
    fix(work, "DL204")
    assert (work / "frames.py").read_text() == source.replace(
        "import os; import cv2  # OpenCV\n", "import os; import cv2  # OpenCV\ncv2.setNumThreads(0)  # OpenCV's thread pool is not fork-safe\n"
    )


def test_libcst_parses_only_files_with_a_fixable_finding(tmp_path, monkeypatch):
    """A check building edits parses with libcst the files whose findings get a fix (a keyword fix
    only the statement it edits), and no other; one printing no edits parses none."""
    import libcst

    clean = "from torch.utils.data import DataLoader, TensorDataset\n\nloader = DataLoader(TensorDataset(), num_workers=2)\n"
    work = make_project(tmp_path, {"frames.py": CV2_DATASET, "clean.py": clean})
    parsed: list[str] = []
    real = libcst.parse_module

    def counting(text, *args, **kwargs):
        parsed.append("clean.py" if text == clean else "frames.py" if text == CV2_DATASET else text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", counting)
    code, out = run_dllint(work, ["check", "--select", "DL204,DL301", "--target-version", "py311", "--no-cache", "--output-format", "json"])
    assert "frames.py" in out and "clean.py" not in out
    # the whole file once per run (shared by the rules); a keyword fix parses only its statement
    assert parsed.count("frames.py") == 1 and "clean.py" not in parsed
    # (a statement nested in a function or class is parsed under a synthetic `if 1:` line)
    statements = [p.removeprefix("if 1:\n") for p in parsed if p != "frames.py"]
    assert statements and all(p in CV2_DATASET and len(p) < len(CV2_DATASET) / 2 for p in statements), parsed
    # a run printing no edits: whether the fixes exist comes from the facts, nothing is parsed
    parsed.clear()
    code, text_out = run_dllint(work, ["check", "--select", "DL204,DL301", "--target-version", "py311", "--no-cache", "--unsafe-fixes"])
    assert "DL301 [*]" in text_out and "DL204 [*]" in text_out and parsed == [], (parsed, text_out)


# ---------------------------------------------------------------------------- DL101's fix by slices

COMPACT_CASES = {
    "class_after_imports": 'import os\n\n\nclass Ds:\n    def __init__(self):\n        self.items = os.listdir(".")\n',
    "class_far_down": (
        '"""Doc."""\nimport os  # why\nfrom a import (\n    b,\n)\n\n# a comment about X\nX = 1\n\n\n'
        "def helper():\n    return 2\n\n\n@decorate\nclass Ds(Base):\n    # before init\n    def __init__(self):\n"
        "        if X:\n            self.items = []\n        # trailing, deeper\n    # trailing, same\n\n    def other(self):\n        pass\n"
    ),
    "two_space_head_without_blocks": "import os\nX = [\n  1,\n]\n\n\nclass Ds:\n  def __init__(self):\n    self.items = os.listdir('.')\n",
    "tabs": "import os\nY = 2\n\n\nclass Ds:\n\tdef __init__(self):\n\t\tself.items = os.listdir('.')\n",
    "crlf": "import os\r\nY = 2\r\n\r\n\r\nclass Ds:\r\n    def __init__(self):\r\n        self.items = []\r\n",
    "no_trailing_newline": "import os\nY = 2\nclass Ds:\n    def __init__(self):\n        self.items = []",
    "first_statement_is_the_class": "class Ds:\n    def __init__(self):\n        self.items = []\n",
    "only_imports_then_nested": "import os\n\nclass Outer:\n    class Ds:\n        def __init__(self):\n            self.items = []\n",
    "inside_if": "import sys\nif sys.version_info > (3,):\n    class Ds:\n        def __init__(self):\n            self.items = []\nelse:\n    class Ds:\n        def __init__(self):\n            return\n",
    "duplicate_first_blocked": "import os\nclass Ds:\n    def __init__(self):\n        return\nclass Ds:\n    def __init__(self):\n        self.items = []\n",
    "semicolons": 'import os; import sys\n"""x"""; import re\nclass Ds:\n    def __init__(self):\n        self.items = []\n',
    "helper_defined": "import os\n\nclass _CompactList:\n    pass\n\nclass Ds:\n    def __init__(self):\n        self.items = []\n",
    "yield_in_init": "class Ds:\n    def __init__(self):\n        self.items = [x for x in range(3)]\n        def gen():\n            yield 1\n",
    "in_function": "def make():\n    class Ds:\n        def __init__(self):\n            self.items = []\n    return Ds\n",
    "no_init": "import os\nclass Ds:\n    pass\n",
    "inner_def_init": "import os\nclass Ds:\n    def __init__(self):\n        def __init__():\n            pass\n        self.items = []\n",
    "yield_in_lambda": "class Ds:\n    def __init__(self):\n        self.items = []\n        self.f = lambda: (yield)\n",
    "other_classes_around": "import os\nclass A:\n    class Ds:\n        def __init__(self):\n            return\nclass Outer:\n    x = [i for i in range(3)]\n    class Ds:\n        def __init__(self):\n            self.items = []\n",
    "head_comment_only": "# header comment\n\n# another\nimport os\n\n\n# about Ds\n\nclass Ds:\n    def __init__(self):\n        self.items = []\n",
    "init_among_methods": (
        "import os\n\n\nclass Ds:\n    size = 3\n\n    @staticmethod\n    def make():\n        return Ds()\n\n"
        "    # the constructor\n    @some.decorator(1)\n    def __init__(self, root):  # note\n        self.items = []\n"
        "        for f in os.listdir(root):\n            self.items.append(f)\n        # trailing comment\n\n"
        "    def __len__(self):\n        return len(self.items)\n"
    ),
    "init_tail_shares_a_line": "class Ds:\n    def __init__(self):\n        self.items = []; self.n = 0\n    def f(self): pass\n",
    "init_one_line": "import os\nclass Ds:\n    def __init__(self): self.items = []\n    def f(self): pass\n",
    "init_crlf_tabs": "import os\r\nclass Ds:\r\n\tdef __init__(self):\r\n\t\tself.items = []\r\n\r\n\tdef f(self):\r\n\t\treturn 1\r\n",
    "init_one_line_after_a_long_signature": "class Ds:\n    def __init__(\n        self, root,\n    ): self.items = []\n",
    "init_one_line_after_unicode": "class Ds:\n    def __init__(self, é='ü'): self.items = []\n",
    "init_body_after_unicode_line": "class Ds:\n    def __init__(self, é='ü'):\n        self.ï = 1; self.items = []\n",
    # the words alone, in a comment, a string or a name, are no return statement
    "return_and_yield_words_only": "class Ds:\n    def __init__(self):\n        # return early?\n        self.returns = 'yield'\n        self.items = []\n",
    "return_on_the_last_row_after_a_continuation": "class Ds:\n    def __init__(self, a):\n        self.items = []\n        if a: \\\n            return\n",
    "yield_in_a_later_nested_class_method": "class Ds:\n    def __init__(self):\n        self.items = []\n        class G:\n            def g(self):\n                yield 1\n",
}


@pytest.mark.parametrize("name", sorted(COMPACT_CASES))
def test_compact_fix_by_slices_equals_the_whole_module_transform(name):
    from dllint.fixes.compact import convert_in_init, convert_whole

    text = COMPACT_CASES[name]
    paths = [["Ds"], ["Outer", "Ds"], ["Missing"]]
    memo: dict = {}
    for path in paths:
        for attr in ("items", "other"):
            assert convert_in_init(text, [*path, "__init__"], attr, memo) == convert_whole(text, path, attr), (name, path, attr)


@pytest.mark.parametrize("name", sorted(COMPACT_CASES))
def test_compact_fix_availability_is_known_without_the_edits(name):
    """What the `[*]` mark of an edit-less run says (``can_convert_in_init``, from ``ast``) is
    whether the conversion gives a new text."""
    import ast

    from dllint.fixes.compact import can_convert_in_init, convert_in_init, convertible_classes

    text = COMPACT_CASES[name]
    try:
        body = ast.parse(text).body
    except SyntaxError:
        body = None
    from_facts = convertible_classes(text, body) if body is not None else None
    for path in (["Ds"], ["Outer", "Ds"], ["Missing"], ["Ds", "<locals>", "X"]):
        qualparts = [*path, "__init__"]
        converts = convert_in_init(text, qualparts, "items", {}) is not None
        assert can_convert_in_init(text, qualparts, {}) == converts, (name, path)
        if from_facts is not None:  # the facts' answer (DL101's extract) is the same
            assert (tuple(path) in from_facts) == converts, (name, path)


def test_compact_fix_parses_only_the_constructor_of_a_long_class():
    """A class of many methods: the conversion parses the constructor's rows alone (under a
    synthetic ``if 1:``), never the class, and equals the whole-module transform."""
    from dllint.fixes.compact import CompactSlices, convert_whole

    methods = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(200))
    text = "import os\n\n\nclass Ds:\n" + methods + "    def __init__(self, root):\n        self.items = os.listdir(root)\n\n" + methods.replace("m", "n")
    slices = CompactSlices(text)
    assert slices.convert(["Ds"], "items") == convert_whole(text, ["Ds"], "items")
    parsed = [key for key, module in slices._parsed.items() if module is not None]
    assert any(key[0] == "init" for key in parsed)
    assert all(key[0] == "init" or key[1] - key[0] < 10 for key in parsed)  # the init, and the head


NESTED_STATEMENTS = (
    "import torch\n"
    "class A:\n"
    "    def f(self, ds):\n"
    "        if ds:\n"
    "            loader = DataLoader(ds, num_workers=0,\n"
    "                                persistent_workers=True)  # c\n"
    "        else: y = DataLoader(ds, persistent_workers=True)\n"
    "        a = 1; b = DataLoader(ds, persistent_workers=True)\n"
    "        @dec(DataLoader(ds, persistent_workers=True))\n"
    "        def g(): pass\n"
    "        with DataLoader(ds, persistent_workers=True) as w:\n"
    "            pass\n"
    "        try:\n"
    "            x = [DataLoader(ds, persistent_workers=True)]\n"
    "        except OSError:\n"
    "            z = DataLoader(ds, persistent_workers=True); q = 2 # t\n"
    "        return DataLoader(ds, persistent_workers=True)\n"
    "loader = DataLoader(ds, persistent_workers=True)\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("indent", ["    ", "\t"])
def test_statement_source_gives_the_edits_of_the_whole_module(newline, indent):
    """A statement nested in a class and function is parsed alone (under a synthetic `if 1:`),
    and every keyword edit made through it equals the edit made on the whole module."""
    import ast as _ast

    from dllint.fixes.cst import CstSource, statement_source
    from dllint.fixes.keywords import guard_keyword, remove_keyword

    text = NESTED_STATEMENTS.replace("    ", indent).replace("\n", newline)

    class Project:
        def source(self, path):
            return text

    project = Project()
    calls = [n for n in _ast.walk(_ast.parse(text)) if isinstance(n, _ast.Call) and getattr(n.func, "id", "") == "DataLoader"]
    assert len(calls) == 9
    narrowed = 0
    for node in calls:
        span = Span(node.lineno, node.col_offset + 1, node.end_lineno, node.end_col_offset + 1)
        part = statement_source(project, "m.py", span)
        narrowed += len(part.text) < len(text) / 3
        for make in (lambda s: remove_keyword(s, span, "persistent_workers"), lambda s: guard_keyword(s, span, "persistent_workers", "n")):
            assert make(part) == make(CstSource(text)) is not None
    assert narrowed >= 7  # all but those sharing a line with a compound statement's header


def test_dl101_fixed_goldens_define_the_helper_once():
    """Several DL101 fixes in one file share one `_CompactList` class (the edits of each fix are
    the changed lines only, so the helper's insertion is the same edit and is merged)."""
    root = Path(__file__).resolve().parent.parent / "fixtures"
    fixed = [p for p in root.rglob("*fixed*") if p.is_file() and p.suffix in (".fixed", ".py") or p.name.endswith("-fixed")]
    counted = [p.read_text(encoding="utf-8").count("class _CompactList") for p in fixed if p.is_file()]
    assert any(c == 1 for c in counted)
    assert all(c <= 1 for c in counted), [str(p) for p, c in zip(fixed, counted) if c > 1]


MODULE_HEADS = {
    "docstring, imports, code": '"""Doc."""\nimport os\nimport sys\n\nX = 1\n',
    "no blank line before code": "import os\nX = 1\nimport sys\n",
    "comment between": "import os\n# about X\nX = 1\n",
    "blank and comment": "import os\n\n# about X\n\ndef f():\n    return 1\n",
    "future first": "from __future__ import annotations\nimport os\n\nclass A:\n    pass\n",
    "decorated first": "import os\n@dec\n@dec2(1)\ndef f():\n    pass\n",
    "nothing imported": "X = 1\nY = 2\n",
    "docstring only code": '"""Doc."""\nX = 1\n',
    "only imports": "import os\nfrom a import b\n",
    "shared line": "import os; X = 1\nY = 2\n",
    "import after code": "X = 1\nimport functools\n",
    "already imported": "import functools\nX = 1\n",
    "shebang and encoding": "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport os\nX = 1\n",
    "strict flag": "__strict__ = True\nimport os\nX = 1\n",
    "concatenated docstring": '"a" "b"\nimport os\nX = 1\n',
    "conditional import": "import os\nif os.name:\n    import functools\nX = 1\n",
    "crlf": "import os\r\n\r\nX = 1\r\n",
    "empty": "",
}


@pytest.mark.parametrize("name", sorted(MODULE_HEADS))
def test_import_edits_on_the_head_equal_the_whole_module(name):
    """``import_edits`` adds imports on the module's head alone (text up to the first statement
    after the leading imports, `pass` standing for the rest): its edits are those of libcst's
    AddImportsVisitor run on the whole module, a long tail after the head included."""
    from dllint.fixes.cst import CstSource, add_imports, import_edits

    tail = "\n\ndef g():\n    return [\n        1,\n    ]\n" * 50
    text = MODULE_HEADS[name]
    newline = newline_of(text) if text else "\n"
    text += tail.replace("\n", newline) if text else ""

    class Project:
        def source(self, path):
            return text

    for modules in (["functools"], ["functools", "os"]):
        whole = CstSource(text)
        expected = edits_between(text, add_imports(whole.module, modules).code)
        assert import_edits(Project(), "m.py", modules) == expected, modules
