"""DL104 runtime proof with real torch (CPU, two forked workers): a handle opened in __init__ is
one open file description shared by the workers (one worker's read moves the other's offset);
the lazy form opens one handle per worker, each with its own offset."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from golden import FIXTURES, Case, copy_case, findings, import_fixture

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

FIXTURE = FIXTURES / "dl104" / "positive.py"
RECORDS = [f"rec{i:05d}" for i in range(4)]  # 8 bytes each


def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "records.bin"
    path.write_bytes("".join(RECORDS).encode())
    return path


def per_worker(dataset) -> dict[int, list[str]]:
    loader = DataLoader(dataset, batch_size=None, num_workers=2, multiprocessing_context="fork")
    out: dict[int, list[str]] = collections.defaultdict(list)
    for pid, record in loader:
        out[int(pid)].append(record)
    return dict(out)


def test_handle_opened_in_init_is_shared_by_forked_workers(tmp_path):
    mod = import_fixture(FIXTURE, tmp_path, "dl104_positive")
    seen = per_worker(mod.Lines(data_file(tmp_path), n=4))
    assert len(seen) == 2  # two worker processes
    # one shared offset: together the workers read each record exactly once, so what a worker
    # gets for an index depends on how far the other one has read
    assert sorted(r for records in seen.values() for r in records) == RECORDS


def test_lazy_open_gives_each_worker_its_own_handle(tmp_path):
    mod = import_fixture(FIXTURE, tmp_path, "dl104_positive_lazy")
    seen = per_worker(mod.LazyLines(data_file(tmp_path), n=4))
    assert len(seen) == 2
    # each worker starts at offset 0 of its own handle
    assert all(records == RECORDS[:2] for records in seen.values())


def test_golden_unsafe_fix_opens_one_handle_per_worker(tmp_path):
    """The rule's own fix (property opening once per pid) behaves like the hand-written lazy form."""
    fixed = import_fixture(Path(f"{FIXTURE}.unsafe-fixed"), tmp_path, "dl104_positive_fixed")
    seen = per_worker(fixed.Lines(data_file(tmp_path), n=4))
    assert len(seen) == 2
    assert all(records == RECORDS[:2] for records in seen.values())
    # Archive reads its member list in __init__ (the parent opens its own handle) and still
    # gives each worker a fresh one: every member comes back intact
    import zipfile

    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for i in range(6):
            zf.writestr(f"m{i}", f"member-{i}" * 50)
    archive = fixed.Archive(path)
    loader = DataLoader(archive, batch_size=None, num_workers=2, multiprocessing_context="fork")
    assert [bytes(b).decode() for b in loader] == [f"member-{i}" * 50 for i in range(6)]


def test_main_process_handle_unaffected_by_lazy_form(tmp_path):
    mod = import_fixture(FIXTURE, tmp_path, "dl104_positive_main")
    ds = mod.LazyLines(data_file(tmp_path), n=4)
    assert [r for _, r in (ds[i] for i in range(4))] == RECORDS


def test_rule_flags_the_handles_not_the_lazy_form(tmp_path):
    case = Case("dl104/positive", FIXTURE)
    out = findings(copy_case(case, tmp_path), case)
    flagged = sorted(line.split("`")[1] for line in out.splitlines() if " DL104 " in line)
    assert flagged == ["self.conn", "self.fh", "self.files", "self.zf"]


def test_handle_sites_for_dl301(tmp_path):
    """The model answers DL104's handle sites once (DL301 reacts to them): the Dataset class that
    owns each handle, the file and the row of the assignment."""
    import os

    from dllint.config import Settings
    from dllint.engine import Engine

    work = copy_case(Case("dl104/positive", FIXTURE), tmp_path)
    engine = Engine(Settings(target_version="py311"), str(work))
    path = os.path.join(str(work), "positive.py")
    model = engine.analyse([path], {"DL104"}).project.index
    sites = model.handle_sites()
    owners = {qual for site in sites for (_, qual) in site.owners}
    assert owners == {"positive.Lines", "positive.Archive", "positive.Table", "positive.Shards"}
    lines = next(s for s in sites if ("positive.Lines" in {q for _, q in s.owners}))
    assert lines.detail["attr"] == "fh" and lines.path == path
    assert FIXTURE.read_text().splitlines()[lines.row - 1].strip().startswith("self.fh = open(")


def test_no_fork_no_dl104_but_dl103_reports_the_handle(tmp_path):
    """On macOS (spawn) no descriptor is inherited: DL104 stays silent and DL103 reports the
    same handles as pickling errors."""
    import os

    from dllint.config import Settings
    from dllint.engine import Engine

    work = copy_case(Case("dl104/positive", FIXTURE), tmp_path)
    path = os.path.join(str(work), "positive.py")
    for platforms, expect_dl104 in ((("darwin",), False), (("linux",), True)):
        engine = Engine(Settings(target_version="py311", platforms=platforms), str(work))
        diags = engine.analyse([path], {"DL103", "DL104"}).diagnostics
        dl104 = {d.span.row for d in diags if d.code == "DL104"}
        dl103 = {d.span.row: d.severity for d in diags if d.code == "DL103"}
        assert bool(dl104) is expect_dl104
        assert dl103 and set(dl103.values()) == {"error" if platforms == ("darwin",) else "warning"}
        if expect_dl104:
            assert dl104 <= set(dl103)  # the same assignments, seen from the other start method
