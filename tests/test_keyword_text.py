"""A run printing no edits (``check`` in the text formats) decides whether a finding has a fix
without libcst: the keyword fixes from the call's facts (``dllint/facts/keyword_text.py``, DL301;
a `#`-free call for DL304), DL103's partial from its plan. These tests compare those answers with
what the libcst builders give, and check that such a run never imports libcst."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap

import pytest

from dllint.facts.context import FileContext
from dllint.facts.keyword_text import keyword_edit_facts
from golden import run_dllint
from test_fix_cst import CV2_DATASET

CALLS = [
    "DataLoader(ds, num_workers=args.workers)",
    "DataLoader(ds, num_workers=(args.workers))",
    "DataLoader(ds, num_workers = ( args . workers ) )",
    "DataLoader(ds, num_workers=(  # why\n    args.workers))",
    "DataLoader(ds, num_workers=  # why\n    (args.workers))",
    "DataLoader(ds, num_workers=args.\\\n    workers)",
    "DataLoader(\n    ds,\n    num_workers=cfg.workers,  # from the config\n)",
    "DataLoader(ds, 4, True, None, None, nw)",
    "DataLoader(ds, 4, True, None, None, (nw), x)",
    "DataLoader(ds, 4, True, *a, None, nw)",
    "DataLoader(ds, 4, True, None, None, **kw)",
    "DataLoader(ds, 4, True, None, (None), nw.a.b)",
    "DataLoader(ds, 4, True, None, None)",
    "DataLoader(ds, num_workers=a[0])",
    "DataLoader(ds, num_workers=(a).b)",
    "DataLoader(ds, num_workers=f(x))",
    "DataLoader(ds, num_workers=4)",
    "DataLoader(ds, num_workers=ńw.é)",
    "DataLoader(ds, multiprocessing_context=None, num_workers=n)",
    "DataLoader(x for x in y)",
    "DataLoader((x for x in y))",
    "DataLoader (x for x in y)",
    "DataLoader(ds, **{'num_workers': n})",
    # a lone carriage return ends a line inside the parentheses (libcst's check looks for "\n")
    "DataLoader(ds,\r num_workers=(\r a.b))",
    "DataLoader(ds,\r1,2,3,4,\r(\ra),\r)",
    # a keyword given twice: ast reads it, the compiler rejects it (bench/fuzz.py writes such calls)
    "DataLoader(ds, 1, 2, 3, 4, nw, num_workers=a, num_workers=b)",
    "DataLoader(ds, num_workers=a, num_workers=b, multiprocessing_context=None, multiprocessing_context=None)",
]


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("indent", ["", "    "])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_keyword_facts_give_what_the_libcst_builders_give(call, indent, newline):
    from dllint.fixes.cst import CstSource
    from dllint.fixes.keywords import add_keyword, simple_argument

    body = textwrap.indent(f"x = {call}\n", indent)
    text = (f"if True:\n{body}" if indent else body).replace("\n", newline)
    tree = ast.parse(text)
    ctx = FileContext("t.py", "t", text, tree)
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "DataLoader")
    keywords, bare_generator, nw = keyword_edit_facts(ctx, node)
    src = CstSource(text)
    span = ctx.span(node)
    theirs = simple_argument(src, span, "num_workers", 5)
    if "\r" in call:
        # (libcst prints a value broken by a lone "\r" in an indented block without the block's
        # indentation; the text only goes into a message a run printing no edits never shows)
        assert (nw is None) == (theirs is None)
    else:
        assert nw == theirs
    adds = add_keyword(src, span, "multiprocessing_context", '"spawn"')
    assert ("multiprocessing_context" not in keywords and not bare_generator) == bool(adds)


PROJECT = {
    "train.py": textwrap.dedent(
        """\
        import functools
        from torch.utils.data import DataLoader, Dataset
        import torch


        def pad(value, batch):
            return batch


        class Frames(Dataset):
            def __init__(self, path):
                self.device = torch.device("cuda")
                torch.zeros(1).cuda()
                self.index = open(path)
                self.model = torch.load(path)

            def __getitem__(self, i):
                self.index.seek(i)
                return self.model(torch.zeros(1).cuda())

            def __len__(self):
                return 3


        def main(workers):
            a = DataLoader(Frames("x"), num_workers=workers, collate_fn=lambda b: pad(0, b))
            b = DataLoader(Frames("x"), num_workers=0, persistent_workers=True, prefetch_factor=2)
            c = DataLoader(Frames("x"), num_workers=workers, persistent_workers=True)
            return a, b, c


        if __name__ == "__main__":
            main(2)
        """
    ),
    "frames.py": CV2_DATASET,  # DL204 and DL301 (tests/test_fix_cst.py)
    "pyproject.toml": "",
}


def _write(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)


def test_a_run_printing_no_edits_marks_the_same_fixes_without_libcst(tmp_path):
    """The text output's `[*]` marks are those of the JSON output's fixes, and the text run never
    imports libcst (0.1 s); the JSON run builds the edits with it."""
    _write(tmp_path, PROJECT)
    probe = textwrap.dedent(
        """\
        import json, sys
        from dllint.cli import main
        try:
            main(sys.argv[1:])
        except SystemExit:
            pass
        print("LIBCST" if "libcst" in sys.modules else "NO-LIBCST", file=sys.stderr)
        """
    )
    base = [sys.executable, "-c", probe, "check", "--no-cache", "--select", "ALL", "--unsafe-fixes", "--target-version", "py311", "."]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    text = subprocess.run(base, cwd=tmp_path, capture_output=True, text=True, env=env)
    data = subprocess.run([*base, "--output-format", "json"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert text.stderr.strip().endswith("NO-LIBCST"), text.stderr
    assert data.stderr.strip().endswith("LIBCST") and not data.stderr.strip().endswith("NO-LIBCST"), data.stderr
    import json

    findings = json.loads(data.stdout)
    with_fix = {(os.path.relpath(d["filename"], tmp_path), d["code"], d["location"]["row"], d["location"]["column"]) for d in findings if d["fix"]}
    marked = set()
    for line in text.stdout.splitlines():
        if " [*] " in line:
            path, row, col, rest = line.split(":", 3)
            marked.add((path, rest.split()[0], int(row), int(col)))
    codes = {c for _, c, _, _ in with_fix}
    assert {"DL102", "DL103", "DL104", "DL204", "DL301", "DL304"} <= codes, with_fix
    assert marked == with_fix, (marked, with_fix)


def test_a_keyword_given_twice_has_no_mark_where_libcst_finds_no_edit(tmp_path):
    """``ast`` reads a call naming a keyword twice (the compiler rejects it); libcst's keyword
    lookup then finds none: a run printing no edits asks libcst for such a call, so its DL304
    finding has no `[*]`, as the JSON run has no fix (found by bench/fuzz.py's mutated calls)."""
    _write(tmp_path, {"frames.py": CV2_DATASET, "repeated.py": REPEATED, "pyproject.toml": ""})
    text = run_dllint(tmp_path, ["check", "--no-cache", "--select", "DL304", "repeated.py"])[1]
    data = run_dllint(tmp_path, ["check", "--no-cache", "--select", "DL304", "--output-format", "json", "repeated.py"])[1]
    import json

    assert "DL304" in text and "[*]" not in text, text
    assert [d["fix"] for d in json.loads(data)] == [None]


REPEATED = textwrap.dedent(
    """\
    from torch.utils.data import DataLoader
    from frames import Frames

    if __name__ == "__main__":
        DataLoader(Frames(), multiprocessing_context="fork", multiprocessing_context="spawn")
    """
)
