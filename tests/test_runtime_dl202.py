"""DL202 runtime proof: an unsharded IterableDataset with two workers yields every item twice;
the sharded form (get_worker_info) yields each item once. Real torch, CPU, fork or default."""

from __future__ import annotations

import collections

import pytest

from golden import FIXTURES, Case, copy_case, findings, import_fixture

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

FIXTURE = FIXTURES / "dl202" / "positive.py"


def items(dataset, workers=2):
    loader = DataLoader(dataset, batch_size=None, num_workers=workers)
    return collections.Counter(int(x) for x in loader)


def test_unsharded_dataset_yields_every_item_once_per_worker(tmp_path):
    mod = import_fixture(FIXTURE, tmp_path, "dl202_positive")
    counts = items(mod.Numbers(8))
    assert counts == {i: 2 for i in range(8)}  # each item twice: both workers run the whole range
    assert items(mod.Numbers(8), workers=0) == {i: 1 for i in range(8)}
    records = items(mod.Records(range(4)))
    assert records == {i: 2 for i in range(4)}


def test_sharded_form_yields_each_item_once(tmp_path):
    mod = import_fixture(FIXTURE, tmp_path, "dl202_positive")
    assert items(mod.ShardedNumbers(8)) == {i: 1 for i in range(8)}
    assert items(mod.ShardedNumbers(9)) == {i: 1 for i in range(9)}  # uneven split too


def test_rule_flags_exactly_the_duplicating_classes(tmp_path):
    """The linter's verdict agrees with the runtime: Numbers and Records, not ShardedNumbers."""
    work = copy_case(Case("dl202/positive", FIXTURE), tmp_path)
    out = findings(work, Case("dl202/positive", FIXTURE))
    flagged = {line.split("`")[1] for line in out.splitlines() if " DL202 " in line}
    assert flagged == {"Numbers", "Records"}


# ---------------------------------------------------------------------------- docs examples
# The docs are tests too (for the five worker-state rules DL103, DL104, DL105, DL202, DL203):
# each rule's "Example" block is flagged by that rule, its "Use instead" block is not.

import re as _re  # noqa: E402

from dllint.rules import rule_by_code  # noqa: E402


def _code_block(text: str) -> str:
    import textwrap

    m = _re.search(r"```python\n(.*?)```", textwrap.dedent(text), _re.S)
    assert m, "the section has no python code block"
    return m.group(1)


@pytest.mark.parametrize("code", ["DL103", "DL104", "DL105", "DL202", "DL203"])
def test_docs_example_flagged_and_use_instead_silent(code, tmp_path):
    from golden import run_dllint

    rule = rule_by_code(code)
    for section, expect in (("Example", True), ("Use instead", False)):
        work = tmp_path / section.replace(" ", "_")
        work.mkdir()
        (work / ".git").mkdir()
        (work / "example.py").write_text(_code_block(rule.docs[section]))
        exit_code, out = run_dllint(work, ["check", "--select", code, "--output-format", "concise", "-q", "--no-fix", "--target-version", "py311"])
        assert exit_code in (0, 1), out
        assert (f" {code} " in out) is expect, f"{code} {section}:\n{out}"
