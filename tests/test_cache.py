"""The fact cache: same findings cold, warm and after edits; unchanged files are not read; the
directory ignores itself; `dllint clean`, `--no-cache`, `--cache-dir`; damaged entries are harmless."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from click.testing import CliRunner

from dllint import serial
from dllint.cache import CACHE_DIR, INDEX_FILE, FactCache, RACY_NS
from dllint.cli import cli
from golden import run_dllint
from projectgen import generate

ARGS = ["check", "--select", "ALL", "--output-format", "concise", "-q", "--no-fix"]


def run(work: Path, *extra: str) -> str:
    code, output = run_dllint(work, [*ARGS, *extra])
    assert code in (0, 1), output
    return output


def run_named(work: Path, name: str, *extra: str) -> str:
    """The JSON output of ``dllint check`` naming one file of ``work`` (as a pre-commit hook
    names a staged file), not the folder."""
    old = os.getcwd()
    os.chdir(work)
    try:
        result = CliRunner().invoke(cli, [*ARGS, "--output-format", "json", *extra, name], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.output
    return result.output


def age(root: Path, seconds: float = 10) -> None:
    """Backdate every file, as if written a while ago (files modified just now are never
    remembered by mtime and size, see RACY_NS)."""
    past = time.time() - seconds
    for p in root.rglob("*.py"):
        os.utime(p, (past, past))


def analyse(root: Path, cache_dir: Path | None, jobs: int = 1, named: str | None = None):
    """The run of the whole project under ``root``, or of the file ``named`` alone (as the
    command line names it)."""
    from dllint.cache import FactCache
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.discover import discover
    from dllint.engine import Engine

    settings, project_root = load_configuration([str(root)], None, Overrides(select=["ALL"]))
    cache = FactCache(str(cache_dir)) if cache_dir else None
    engine = Engine(settings, project_root, jobs=jobs, cache=cache)
    if named is not None:
        return engine.analyse([named], enabled_codes(settings), explicit={named}), cache
    targets = discover([str(root)], project_root, settings.all_excludes, settings.respect_gitignore)
    return engine.analyse(targets, enabled_codes(settings)), cache


def test_cold_warm_and_edited_runs_match_no_cache(tmp_path):
    generate(str(tmp_path), seed=0, files=120)
    age(tmp_path)
    reference = run(tmp_path, "--no-cache")
    assert reference.strip()
    assert not (tmp_path / CACHE_DIR).exists()  # --no-cache writes nothing
    assert run(tmp_path) == reference  # cold: fills the cache
    assert (tmp_path / CACHE_DIR / INDEX_FILE).exists()
    assert run(tmp_path) == reference  # warm

    # an edit in one file changes findings in another: the index is rebuilt from facts
    config = tmp_path / "proj0" / "config.py"
    text = config.read_text()
    flipped = "NUM_WORKERS = 4" if "NUM_WORKERS = 0\n" in text else "NUM_WORKERS = 0"
    config.write_text(re.sub(r"NUM_WORKERS = \d+", flipped, text))
    age(tmp_path, 5)
    edited = run(tmp_path, "--no-cache")
    assert edited != reference
    assert run(tmp_path) == edited

    # a hazard removed from a dataset: its finding disappears warm too
    sets = next(p for p in sorted((tmp_path / "proj0" / "data").glob("sets_*.py")) if "lambda" in p.read_text())
    sets.write_text(sets.read_text().replace("lambda x: x * 2", "abs"))
    expected = run(tmp_path, "--no-cache")
    assert expected != edited
    assert run(tmp_path) == expected


def test_warm_run_reads_only_what_it_needs(tmp_path):
    generate(str(tmp_path), seed=1, files=80)
    age(tmp_path)
    cache_dir = tmp_path / "c"
    cold, cache = analyse(tmp_path, cache_dir)
    assert cache.misses > 0 and cache.hits == 0
    warm, cache = analyse(tmp_path, cache_dir)
    assert cache.misses == 0 and cache.hits == cold.analysed
    # unchanged analysed files are not read again, except the few with findings (fixes need their
    # bytes); starting from the last plan, the names of all its files are looked for in one test
    # whose verdicts are new: the files not analysed are read for that, once
    with_findings = {d.path for d in warm.diagnostics}
    assert set(warm.sources) & set(warm.project.files) == with_findings
    third, _ = analyse(tmp_path, cache_dir)
    assert set(third.sources) == with_findings  # those verdicts are cached now
    assert [d.sort_key() for d in warm.diagnostics] == [d.sort_key() for d in cold.diagnostics]

    touched = tmp_path / "proj1" / "models" / "mod_0.py"
    touched.write_text(touched.read_text() + "\n# touched\n")
    past = time.time() - 5
    os.utime(touched, (past, past))
    again, cache = analyse(tmp_path, cache_dir)
    # the edited run starts from the last plan (every file analysed last time) and asks the
    # names of all of them in one test, whose verdicts are not cached yet: it reads the files it
    # has not analysed to look for the names; no analysed file but the edited one is read
    read_analysed = set(again.sources) & set(again.project.files)
    assert read_analysed <= with_findings | {str(touched)} and str(touched) in again.sources
    assert with_findings <= set(again.sources)
    assert [d.sort_key() for d in again.diagnostics] == [d.sort_key() for d in cold.diagnostics]


def test_a_cold_parallel_run_stores_every_analysed_files_facts(tmp_path):
    """A cold run with worker processes scans, analyses and encodes most files in them: a warm
    run finds every analysed file's facts, equal to a run's without a cache."""
    generate(str(tmp_path), seed=3, files=300)
    age(tmp_path)
    cache_dir = tmp_path / "c"
    cold, cache = analyse(tmp_path, cache_dir, jobs=2)
    assert cache.misses > 0 and cache.hits == 0
    warm, cache = analyse(tmp_path, cache_dir)
    assert cache.misses == 0 and cache.hits == cold.analysed
    plain, _ = analyse(tmp_path, None)
    for path, facts in plain.project.files.items():
        assert serial.same_facts(facts, warm.project.files[path]), path
    assert [d.sort_key() for d in warm.diagnostics] == [d.sort_key() for d in cold.diagnostics] == [d.sort_key() for d in plain.diagnostics]


def test_the_program_leaves_once_its_workers_have_stored_every_analysed_files_facts(tmp_path):
    """The workers store the facts they computed once idle, and the program leaves without
    tearing down its objects (``cli._fast_exit``): it waits for them first. A cold run of the
    program itself, with worker processes, leaves every analysed file's facts in the cache."""
    import subprocess
    import sys

    generate(str(tmp_path), seed=3, files=300)
    age(tmp_path)
    cache_dir = tmp_path / "c"
    proc = subprocess.run(
        [sys.executable, "-m", "dllint", *ARGS, "--jobs", "2", "--cache-dir", str(cache_dir), str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr  # (exit 1 is also a crash's)
    warm, cache = analyse(tmp_path, cache_dir)
    assert cache.misses == 0 and cache.hits == warm.analysed > 20


def test_a_file_the_last_plan_analysed_is_not_asked_its_verdict_again(tmp_path, monkeypatch):
    """A code edit of a file the last run analysed: the run starts from that run's plan, which
    analyses the file whatever its pre-filter verdict, so its bytes are not compiled for their
    code words first (only parsed for its facts); the findings are a cold run's."""
    from dllint.prefilter import Triggers

    generate(str(tmp_path), seed=0, files=40)
    age(tmp_path)
    cache_dir = tmp_path / "c"
    analyse(tmp_path, cache_dir)
    edited = next(p for p in sorted((tmp_path / "proj0" / "data").glob("sets_*.py")) if "Dataset" in p.read_text())
    edited.write_text(edited.read_text() + "\n_edit = 1\n")
    asked: list[bytes] = []
    real = Triggers.__call__

    def counting(self, data):
        asked.append(data)
        return real(self, data)

    monkeypatch.setattr(Triggers, "__call__", counting)
    warm, _ = analyse(tmp_path, cache_dir)
    assert edited.read_bytes() not in asked
    assert str(edited) in warm.project.files
    plain, _ = analyse(tmp_path, None)
    assert [d.sort_key() for d in warm.diagnostics] == [d.sort_key() for d in plain.diagnostics]


def test_a_cache_turned_off_during_a_run_serves_the_next_run_of_the_engine(tmp_path):
    """A cache that an I/O error turned off (``FactCache.enabled``) stays with its engine for the
    next run (``--fix`` runs again, the language server): that run reads and writes nothing
    there, and finds what a run without a cache finds."""
    from dllint.cache import FactCache
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.discover import discover
    from dllint.engine import Engine

    generate(str(tmp_path), seed=0, files=40)
    age(tmp_path)
    settings, project_root = load_configuration([str(tmp_path)], None, Overrides(select=["ALL"]))
    cache = FactCache(str(tmp_path / "c"))
    engine = Engine(settings, project_root, jobs=1, cache=cache)
    targets = discover([str(tmp_path)], project_root, settings.all_excludes, settings.respect_gitignore)
    engine.analyse(targets, enabled_codes(settings))
    cache.enabled = False  # (as ``save`` does when the index cannot be written)
    again = engine.analyse(targets, enabled_codes(settings))
    plain, _ = analyse(tmp_path, None)
    assert [d.sort_key() for d in again.diagnostics] == [d.sort_key() for d in plain.diagnostics]


def test_same_size_edit_in_the_same_tick_is_seen(tmp_path):
    generate(str(tmp_path), seed=0, files=40)
    age(tmp_path)
    target = next(p for p in sorted((tmp_path / "proj0" / "data").glob("sets_*.py")) if "lambda" in p.read_text())
    soon = time.time_ns() + 60 * 10**9  # as if written in the same clock tick as the run reads it
    os.utime(target, ns=(soon, soon))
    before = run(tmp_path)
    text = target.read_text()
    old = "lambda x: x * 2"
    assert old in text
    target.write_text(text.replace(old, "abs".ljust(len(old))))  # same size, lambda gone
    os.utime(target, ns=(soon, soon))  # and the same mtime
    after = run(tmp_path)
    assert after == run(tmp_path, "--no-cache")
    assert after != before  # the DL103 finding on the lambda is gone


def test_racy_entries_are_not_remembered(tmp_path):
    cache = FactCache(str(tmp_path / "c"))
    path = tmp_path / "f.py"
    path.write_text("x = 1\n")
    st = path.stat()
    cache.remember(str(path), st, b"h" * 16)
    assert cache.lookup(str(path), st) is None  # modified within RACY_NS: not trusted
    old = time.time_ns() - 2 * RACY_NS
    os.utime(path, ns=(old, old))
    st = path.stat()
    cache.remember(str(path), st, b"h" * 16)
    assert cache.lookup(str(path), st) is not None


def test_cache_dir_ignores_itself_and_clean_removes_it(tmp_path):
    generate(str(tmp_path), seed=0, files=30)
    run(tmp_path)
    cache_dir = tmp_path / CACHE_DIR
    assert (cache_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["clean"], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code == 0
    assert not cache_dir.exists()


def test_cache_dir_option(tmp_path):
    generate(str(tmp_path / "p"), seed=0, files=30)
    elsewhere = tmp_path / "elsewhere"
    out = run(tmp_path / "p", "--cache-dir", str(elsewhere))
    assert (elsewhere / INDEX_FILE).exists()
    assert not (tmp_path / "p" / CACHE_DIR).exists()
    assert run(tmp_path / "p", "--cache-dir", str(elsewhere)) == out


def test_damaged_cache_is_ignored(tmp_path):
    generate(str(tmp_path), seed=1, files=40)
    age(tmp_path)
    reference = run(tmp_path, "--no-cache")
    run(tmp_path)
    cache_dir = tmp_path / CACHE_DIR
    entries = [p for p in (cache_dir / "facts").rglob("*") if p.is_file()]
    assert entries
    for p in entries[::2]:
        p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])  # torn
    for p in entries[1::2]:
        p.write_bytes(b"not a pickle")
    assert run(tmp_path) == reference
    (cache_dir / INDEX_FILE).write_bytes(b"\x80garbage")
    assert run(tmp_path) == reference


def test_key_depends_on_settings_and_code(tmp_path):
    cache = FactCache(str(tmp_path))
    base = cache.facts_key(b"h" * 16, "/p/a.py", "a", "/p", False)
    assert cache.facts_key(b"i" * 16, "/p/a.py", "a", "/p", False) != base  # content
    assert cache.facts_key(b"h" * 16, "/p/b.py", "a", "/p", False) != base  # path
    assert cache.facts_key(b"h" * 16, "/p/a.py", "pkg.a", "/", False) != base  # module and root
    cache.settings_key = "['my.Loader']"
    assert cache.facts_key(b"h" * 16, "/p/a.py", "a", "/p", False) != base  # configured loaders
    cache.settings_key = ""
    cache.fingerprint = "another dllint"
    assert cache.facts_key(b"h" * 16, "/p/a.py", "a", "/p", False) != base  # code / version


def test_index_from_another_dllint_is_not_used(tmp_path):
    cache = FactCache(str(tmp_path))
    path = tmp_path / "f.py"
    path.write_text("x = 1\n")
    old = time.time_ns() - 2 * RACY_NS
    os.utime(path, ns=(old, old))
    cache.remember(str(path), path.stat(), b"h" * 16)
    cache.save()
    assert FactCache(str(tmp_path)).lookup(str(path), path.stat()) is not None
    stored = serial.loads_json((tmp_path / INDEX_FILE).read_bytes())
    stored["fingerprint"] = "older code"
    (tmp_path / INDEX_FILE).write_bytes(serial.dumps_json(stored))
    assert FactCache(str(tmp_path)).lookup(str(path), path.stat()) is None


def test_cache_encoding_round_trips_facts(tmp_path):
    from dllint.cache import dumps, loads

    generate(str(tmp_path), seed=5, files=60)
    analysis, _ = analyse(tmp_path, None)
    assert analysis.project.files
    for facts in analysis.project.files.values():
        assert loads(dumps(facts)) == facts


def test_cache_encoding_keeps_shared_tuples_shared(tmp_path):
    """The facts come back with the objects shared as the extractor shared them: the value model
    memoizes by an IR node's identity, and ``a, b = self.load()`` shares the call's node between
    the two writes. Decoded unshared, a cached run reported a finding (``self.name_to_index``)
    that a run without the cache does not."""
    from dllint.cache import dumps, loads

    from dllint.facts.flow import Flow

    node = ("c", ("a", ("s", "x"), "load"), (), ())
    flow = Flow(locals={"a": ((node, 0),), "b": (node, ("n", "y"))}, returns=(node,))
    back = loads(dumps(flow))
    assert back.locals["a"][0][0] is back.locals["b"][0] is back.returns[0]
    assert back == flow

    (tmp_path / "ds.py").write_text(
        "import torch.utils.data as data\n\n\n"
        "class Features(data.Dataset):\n"
        "    def __init__(self, path):\n"
        "        self.path = path\n"
        "        self.index_to_name, self.name_to_index = self._load_dicts()\n\n"
        "    def _load_dicts(self):\n"
        "        with open(self.path) as handle:\n"
        "            self.index_to_name = handle.readlines()\n"
        "        self.index_to_name = [name[:-1] for name in self.index_to_name]\n"
        "        self.name_to_index = {name: index for index, name in enumerate(self.index_to_name)}\n"
        "        return self.index_to_name, self.name_to_index\n\n"
        "    def __getitem__(self, index):\n"
        "        return self.index_to_name[index]\n\n"
        "    def __len__(self):\n"
        "        return len(self.index_to_name)\n"
    )
    (tmp_path / "train.py").write_text("from torch.utils.data import DataLoader\n\nfrom ds import Features\n\nloader = DataLoader(Features('names.txt'), num_workers=4)\n")
    (tmp_path / ".git").mkdir()
    age(tmp_path)
    fresh = run(tmp_path, "--no-cache")
    assert run(tmp_path) == fresh  # (facts computed, stored)
    with open(tmp_path / "train.py", "a") as fh:  # ds.py's facts now come from the cache
        fh.write("\n_edited = 1\n")
    assert run(tmp_path) == run(tmp_path, "--no-cache") == fresh


def test_unchanged_project_reuses_the_result_and_any_change_invalidates_it(tmp_path):
    generate(str(tmp_path), seed=0, files=80)
    age(tmp_path)
    reference = run(tmp_path, "--no-cache")
    assert run(tmp_path) == reference
    results = tmp_path / CACHE_DIR / "results"
    assert len(list(results.iterdir())) == 1
    assert run(tmp_path) == reference  # served from the stored result
    assert run(tmp_path, "--output-format", "full") == run(tmp_path, "--no-cache", "--output-format", "full")
    # other options are other results
    assert run(tmp_path, "--ignore", "DL103") == run(tmp_path, "--no-cache", "--ignore", "DL103")
    # an edit anywhere invalidates the stored result
    sets = next(p for p in sorted((tmp_path / "proj0" / "data").glob("sets_*.py")) if "lambda" in p.read_text())
    sets.write_text(sets.read_text().replace("lambda x: x * 2", "abs"))
    past = time.time() - 5
    os.utime(sets, (past, past))
    expected = run(tmp_path, "--no-cache")
    assert expected != reference
    assert run(tmp_path) == expected
    assert run(tmp_path) == expected
    # --fix never uses a stored result: it needs the facts
    fixed = run(tmp_path, "--fix")
    assert fixed == run(tmp_path, "--no-cache")


def test_reused_result_is_not_a_stale_one_when_a_file_is_added(tmp_path):
    generate(str(tmp_path), seed=0, files=40)
    age(tmp_path)
    before = run(tmp_path)
    assert run(tmp_path) == before
    extra = tmp_path / "late.py"
    extra.write_text("import torch.multiprocessing as mp\nmp.set_sharing_strategy('file_system')\n")
    after = run(tmp_path)
    assert "late.py" in after and after == run(tmp_path, "--no-cache")


def test_output_is_the_same_for_any_jobs_cache_and_format(tmp_path):
    """Determinism: the JSON output (messages, details, fixes) is the same serial or parallel, cold
    or warm, with or without the cache, and whichever order the paths are named in."""
    generate(str(tmp_path), seed=3, files=80)
    age(tmp_path)
    json_args = ["--output-format", "json", "--exit-zero"]
    reference = run(tmp_path, "--no-cache", "--jobs", "1", *json_args)
    assert '"code": "DL' in reference
    assert run(tmp_path, "--no-cache", "--jobs", "2", *json_args) == reference
    assert run(tmp_path, "--jobs", "2", *json_args) == reference  # cold, fills the cache
    assert run(tmp_path, "--jobs", "1", *json_args) == reference  # warm
    names = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    code, reordered = run_dllint(tmp_path, [*ARGS, "--no-cache", *json_args, *reversed(names)])
    assert code == 0 and reordered == reference


def test_project_with_notebooks_reuses_the_result_and_a_notebook_edit_invalidates_it(tmp_path):
    import json
    import shutil

    generate(str(tmp_path), seed=0, files=40)
    notebook = Path(__file__).parent.parent / "fixtures" / "notebooks" / "sharing_strategy.ipynb"
    shutil.copy(notebook, tmp_path / "nb.ipynb")
    age(tmp_path)
    reference = run(tmp_path, "--no-cache")
    assert "nb.ipynb:cell 4:line 4" in reference
    assert run(tmp_path) == reference
    results = tmp_path / CACHE_DIR / "results"
    assert len(list(results.iterdir())) == 1
    assert run(tmp_path) == reference  # served from the stored result: notebooks are keyed by their bytes
    fmt = ["--output-format", "json"]
    assert run(tmp_path, *fmt) == run(tmp_path, "--no-cache", *fmt)
    assert run(tmp_path, *fmt) == run(tmp_path, "--no-cache", *fmt)  # the stored JSON result, cells included
    doc = json.loads((tmp_path / "nb.ipynb").read_text(encoding="utf-8"))
    doc["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": ["a new first cell"]})
    (tmp_path / "nb.ipynb").write_text(json.dumps(doc), encoding="utf-8")
    expected = run(tmp_path, "--no-cache")
    assert "nb.ipynb:cell 5:line 4" in expected
    assert run(tmp_path) == expected


def test_a_notebooks_facts_are_cached_by_its_code_cells(tmp_path, monkeypatch):
    """A notebook's facts are stored under the hash of its code cells: an edit elsewhere does not
    extract the notebook again, an edit of the notebook does."""
    import shutil

    from dllint import engine as engine_module

    generate(str(tmp_path), seed=0, files=20)
    shutil.copy(Path(__file__).parent.parent / "fixtures" / "notebooks" / "sharing_strategy.ipynb", tmp_path / "nb.ipynb")
    age(tmp_path)
    extracted: list[str] = []
    real = engine_module._extract_job

    def counting(args):
        extracted.append(args[0])
        return real(args)

    monkeypatch.setattr(engine_module, "_extract_job", counting)
    analysis, _ = analyse(tmp_path, tmp_path / "cache")
    reference = [d.sort_key() for d in analysis.diagnostics]
    assert any(p.endswith("nb.ipynb") for p in extracted)
    edited = sorted(tmp_path.glob("*.py"))[0]
    edited.write_text(edited.read_text() + "\nx_new = 1\n")
    extracted.clear()
    analysis, _ = analyse(tmp_path, tmp_path / "cache")
    assert not any(p.endswith("nb.ipynb") for p in extracted)
    assert [d.sort_key() for d in analysis.diagnostics] == reference
    with open(tmp_path / "nb.ipynb", "a") as fh:
        fh.write("\n")  # the same cells: still served from the cache
    extracted.clear()
    analyse(tmp_path, tmp_path / "cache")
    assert not any(p.endswith("nb.ipynb") for p in extracted)


CUTOFF_PROJECT = {
    "data.py": (
        "import os\n\nfrom torch.utils.data import Dataset\n\n\n"
        "class Images(Dataset):\n"
        "    def __init__(self, root):\n"
        "        self.files = [os.path.join(root, f) for f in os.listdir(root)]\n\n"
        "    def __len__(self):\n        return len(self.files)\n\n"
        "    def __getitem__(self, i):\n        return self.files[i]\n"
    ),
    "train.py": (
        "from torch.utils.data import DataLoader\n\nfrom data import Images\n\n\n"
        "def main():\n"
        "    loader = DataLoader(Images('/data'), num_workers=4)\n"
        "    for batch in loader:\n        print(batch)\n\n\n"
        "if __name__ == '__main__':\n    main()\n"
    ),
    "util.py": "def helper(x):\n    return x + 1\n",
}


def spy_cutoff(monkeypatch) -> list[bool]:
    """Records, for each run that tries the early cutoff (Engine._cutoff), whether it was taken."""
    from dllint.engine import Engine

    used: list[bool] = []
    real = Engine._cutoff

    def spy(self, *args):
        found = real(self, *args)
        used.append(found is not None)
        return found

    monkeypatch.setattr(Engine, "_cutoff", spy)
    return used


def edit_and_compare(root: Path, used: list[bool], name: str, text: str, cutoff: bool) -> None:
    """Write ``text`` to ``name``; the cached run prints what a run without the cache prints,
    and took the early cutoff or not as ``cutoff`` says (``spy_cutoff``'s ``used``); so does the
    stored result of that run."""
    fmt = ["--output-format", "json"]
    (root / name).write_text(text)
    used.clear()
    expected = run(root, "--no-cache", *fmt)
    assert run(root, *fmt) == expected
    assert used == [cutoff], (name, text)
    assert run(root, *fmt) == expected


def test_an_edit_that_changes_no_fact_reuses_the_findings_and_any_other_does_not(tmp_path, monkeypatch):
    """Early cutoff (Engine._cutoff): a comment appended to an analysed file gives the last run's
    findings without building the model, also in a file a fix was built from (the fix, asked
    again of the new text, is the same); an edit changing facts and an edit of a file the run did
    not analyse run in full. Every run prints what a run without the cache prints."""

    (tmp_path / ".git").mkdir()
    for name, text in CUTOFF_PROJECT.items():
        (tmp_path / name).write_text(text)
    age(tmp_path)
    used = spy_cutoff(monkeypatch)
    fmt = ["--output-format", "json"]
    reference = run(tmp_path, *fmt)
    assert '"DL101"' in reference and '"DL307"' in reference and '"edits"' in reference
    assert used == [False]  # nothing recorded yet
    used.clear()
    assert run(tmp_path, *fmt) == reference  # warm: the stored result
    assert used == []

    def edit(name: str, text: str, cutoff: bool) -> None:
        edit_and_compare(tmp_path, used, name, text, cutoff)

    train = CUTOFF_PROJECT["train.py"]
    edit("train.py", train + "# a comment\n", True)  # no fact changed, no rule read train.py's text
    edit("train.py", train + "# a comment\n\n# another\n", True)
    edit("data.py", CUTOFF_PROJECT["data.py"] + "# a comment\n", True)  # DL101's fix: the same edits
    edit("train.py", "\n" + train, False)  # every position moved: facts changed
    # that edit undone: the stored findings of those bytes, and later edits are compared with them
    (tmp_path / "train.py").write_text(train + "# a comment\n\n# another\n")
    used.clear()
    expected = run(tmp_path, "--no-cache", *fmt)
    assert run(tmp_path, *fmt) == expected and used == []
    edit("train.py", train + "# a comment\n\n# another\n# after the undo\n", True)
    edit("train.py", train.replace("num_workers=4", "num_workers=0"), False)
    edit("util.py", CUTOFF_PROJECT["util.py"] + "# noqa: DL101\n", False)  # a comment trigger: util.py is analysed now
    edit("train.py", train.replace("num_workers=4", "num_workers=0") + "# a comment\n", True)


def test_an_edit_of_a_file_outside_the_analysis_reuses_the_findings_when_every_question_asked_of_it_is_answered_alike(tmp_path, monkeypatch):
    """A file the last run did not analyse mattered to it only through what planning and the
    rules asked of its bytes (Engine._note): an edit that leaves every answer the same keeps the
    findings (the early cutoff), code edits included; an edit that changes one (a trigger word, a
    project class named where it can be imported, an attribute a fix's proof looks for in the
    files outside the analysis) runs in full. A file whose facts a rule read (it names such an
    attribute) keeps the findings only while its facts stay the same."""
    (tmp_path / ".git").mkdir()
    for name, text in CUTOFF_PROJECT.items():
        (tmp_path / name).write_text(text)
    age(tmp_path)
    used = spy_cutoff(monkeypatch)
    reference = run(tmp_path, "--output-format", "json")
    assert '"DL101"' in reference and '"edits"' in reference and "util.py" not in reference
    util = CUTOFF_PROJECT["util.py"]
    more = util + "\n\ndef twice(x):\n    return [x, x]\n"
    for text, cutoff in (
        (util + "# a comment\n", True),
        (more, True),  # code: facts it would have if parsed changed, no answer did
        (more.replace("[x, x]", "{'a': x}"), True),
        (more + "from torch.utils.data import DataLoader\n", False),  # a trigger word
        (more + "# back\n", False),  # (util.py was analysed by that run: its facts changed)
        (more + "# back\n# again\n", True),
        (more + "from data import Images\n", False),  # a project Dataset, importable from here
        (more + "# back again\n", False),
        (more + "\n\ndef size(d):\n    return len(d.files)\n", False),  # uses ``.files`` of some object
        (more + "\n\ndef size(d):\n    return len(d.files)\n# a comment\n", True),  # its facts alike
        (more + "\n\ndef size(d):\n    return len(d.files) + 1\n", False),  # its facts changed
    ):
        edit_and_compare(tmp_path, used, "util.py", text, cutoff)

    def named(*extra: str) -> str:  # data.py alone, as a pre-commit hook names a staged file
        return run_named(tmp_path, "data.py", *extra)

    (tmp_path / "util.py").write_text(util)  # (naming no ``.files``: its facts are not read)
    named()
    for text, cutoff in ((util + "\n\ndef thrice(x):\n    return [x, x, x]\n", True), (util + "\nfrom data import Images\n", False)):
        (tmp_path / "util.py").write_text(text)
        used.clear()
        assert named() == named("--no-cache")
        assert used == [cutoff], text


def _notebook(*cells: tuple[str, str]) -> str:
    """A notebook's JSON: (source, output text) per code cell, a markdown cell first."""
    import json

    def code(source: str, output: str) -> dict:
        outputs = [{"name": "stdout", "output_type": "stream", "text": [output]}] if output else []
        return {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": outputs, "source": source.splitlines(keepends=True)}

    body = [{"cell_type": "markdown", "metadata": {}, "source": ["# plots\n"]}, *(code(*c) for c in cells)]
    return json.dumps({"cells": body, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_a_notebook_outside_the_analysis_run_again_keeps_the_findings(tmp_path, monkeypatch):
    """A notebook without trigger words, run again (its outputs changed) or with a cell added,
    keeps the whole run's findings: its questions are asked again of its code cells. One gaining
    a DataLoader, or losing it, runs in full."""
    (tmp_path / ".git").mkdir()
    for name, text in CUTOFF_PROJECT.items():
        (tmp_path / name).write_text(text)
    plot = "import math\nprint(math.pi)\n"
    (tmp_path / "plots.ipynb").write_text(_notebook((plot, "3.14\n")))
    age(tmp_path)
    used = spy_cutoff(monkeypatch)
    reference = run(tmp_path, "--output-format", "json")
    for text, cutoff in (
        (_notebook((plot, "3.14159\n")), True),  # run again: other outputs
        (_notebook((plot, "3.14159\n"), ("print(2 * math.pi)\n", "")), True),  # a cell added
        (_notebook((plot, ""), ("from torch.utils.data import DataLoader\nDataLoader([1], num_workers=2)\n", "")), False),
        (_notebook((plot, "3\n"), ("from torch.utils.data import DataLoader\nDataLoader([1], num_workers=2)\n", "")), True),  # analysed, run again
        (_notebook((plot, "3.1\n")), False),  # (analysed by the last run)
        # still analysed (a run starts from the files the last one analysed), run again
        (_notebook((plot, "3.142\n")), True),
    ):
        edit_and_compare(tmp_path, used, "plots.ipynb", text, cutoff)
    assert run(tmp_path, "--output-format", "json") == reference


def test_an_analysed_notebook_run_again_keeps_its_findings(tmp_path, monkeypatch):
    """A notebook the run analyses, run again (other outputs, execution counts, metadata), keeps
    the whole run's findings, which show its cells: the code its cells make, their places and
    its JSON's writability are as they were (``notebook_digest``). A markdown cell inserted
    before the code (the finding's cell number moves), a code cell edited, and JSON that can no
    longer be written back (the fix only shown) run in full, and so does a named file's run."""
    import json

    (tmp_path / ".git").mkdir()
    for name, text in CUTOFF_PROJECT.items():
        (tmp_path / name).write_text(text)
    loader = (
        "import os\nfrom torch.utils.data import DataLoader\n"
        "workers = int(os.environ.get('WORKERS', '0'))\n"
        "loader = DataLoader(list(range(8)), num_workers=workers, persistent_workers=True)\n"
    )
    plot = "print(len(loader))\n"
    (tmp_path / "train.ipynb").write_text(_notebook((loader, ""), (plot, "8\n")))
    age(tmp_path)
    used = spy_cutoff(monkeypatch)
    reference = run(tmp_path, "--output-format", "json")
    assert '"cell": 2' in reference and "DL304" in reference  # its finding, in its second cell
    # what the run recorded of the notebook is what the cutoff asks again of its bytes
    from dllint.engine import NOTEBOOK_QUESTION, ask_again

    records = [serial.loads(p.read_bytes()) for p in (tmp_path / CACHE_DIR / "cutoff").iterdir() if p.is_file()]
    recorded = [a for r in records for q, answers in r[6] if q == NOTEBOOK_QUESTION for a in answers]
    raw = (tmp_path / "train.ipynb").read_bytes()
    assert recorded and all(a[1] == ask_again(NOTEBOOK_QUESTION, raw, None) for a in recorded)
    outputs = json.loads(_notebook((loader, "ok\n"), (plot, "8\n")))
    outputs["cells"][1]["execution_count"] = 7
    outputs["metadata"] = {"kernelspec": {"name": "python3"}}
    moved = json.loads(_notebook((loader, ""), (plot, "8\n")))
    moved["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": ["# training\n"]})
    edited = _notebook((loader.replace("range(8)", "range(9)"), ""), (plot, "8\n"))
    for text, cutoff in (
        (_notebook((loader, ""), (plot, "9\n")), True),  # run again
        (json.dumps(outputs, indent=1) + "\n", True),  # counts and metadata too
        (json.dumps(moved, indent=1) + "\n", False),  # the finding is in cell 3 now
        (json.dumps(moved, indent=1).replace('"8\\n"', '"10\\n"') + "\n", True),  # then run again
        (edited, False),  # code edited
        (edited.replace('"nbformat": 4', '"nbformat":  4'), False),  # JSON that cannot be written back
    ):
        edit_and_compare(tmp_path, used, "train.ipynb", text, cutoff)
    assert "not applied" in run(tmp_path, "--output-format", "json")
    (tmp_path / "train.ipynb").write_text(_notebook((loader, ""), (plot, "8\n")))
    assert run(tmp_path, "--output-format", "json") == reference

    run_named(tmp_path, "train.ipynb")  # the notebook alone, as a pre-commit hook names it
    (tmp_path / "train.ipynb").write_text(_notebook((loader, ""), (plot, "10\n")))
    used.clear()
    assert run_named(tmp_path, "train.ipynb") == run_named(tmp_path, "train.ipynb", "--no-cache")
    assert used == [False]


def test_many_files_outside_the_analysis_edited_at_once_keep_the_findings(tmp_path, monkeypatch):
    """A branch switched or a pull: more edited files than the early cutoff extracts facts for
    (``MAX_CUTOFF_FILES``), all outside the analysis, keep the findings when every question is
    answered alike; one of them gaining a trigger word means a full run."""
    from dllint.engine import MAX_CUTOFF_FILES

    (tmp_path / ".git").mkdir()
    for name, text in CUTOFF_PROJECT.items():
        (tmp_path / name).write_text(text)
    models = [f"model_{k}.py" for k in range(MAX_CUTOFF_FILES + 4)]
    for name in models:
        (tmp_path / name).write_text("def forward(x):\n    return x * 2\n")
    age(tmp_path)
    used = spy_cutoff(monkeypatch)
    fmt = ["--output-format", "json"]
    reference = run(tmp_path, *fmt)
    for k, name in enumerate(models):
        (tmp_path / name).write_text(f"def forward(x):\n    return x * {k + 3}\n\n\nSCALE = {k}\n")
    used.clear()
    assert run(tmp_path, *fmt) == run(tmp_path, "--no-cache", *fmt) == reference
    assert used == [True]
    (tmp_path / models[-1]).write_text("from torch.utils.data import DataLoader\n\nloader = DataLoader([1], num_workers=2)\n")
    for name in models[:-1]:
        (tmp_path / name).write_text("def forward(x):\n    return x\n")
    used.clear()
    expected = run(tmp_path, "--no-cache", *fmt)
    assert run(tmp_path, *fmt) == expected != reference
    assert used == [False]


def test_an_edit_that_changes_a_fix_but_no_fact_runs_in_full(tmp_path, monkeypatch):
    """The early cutoff asks each fix built from an edited file's text again (``Project.remember``
    replays): when the answer differs, the stored findings do not stand. (DL101's fix made to
    depend on the number of comments in the file, which no fact records.)"""
    from dllint import project as project_module
    from dllint.model import Edit

    real_fix = project_module.REPLAYABLE["dl101.convert_in_init"]

    def commented(project, path, *inputs):
        edits = real_fix(project, path, *inputs)
        marker = f"# {project.source(path).count('#')} comments\n"
        return (*edits[:-1], Edit(edits[-1].content + marker, edits[-1].span)) if edits else edits

    monkeypatch.setitem(project_module.REPLAYABLE, "dl101.convert_in_init", commented)
    used = spy_cutoff(monkeypatch)
    (tmp_path / ".git").mkdir()
    for name, text in CUTOFF_PROJECT.items():
        (tmp_path / name).write_text(text)
    age(tmp_path)
    fmt = ["--output-format", "json"]
    assert "0 comments" in run(tmp_path, *fmt)
    data = tmp_path / "data.py"
    for text, cutoff in ((CUTOFF_PROJECT["data.py"] + "# a comment\n", False), (CUTOFF_PROJECT["data.py"] + "# a comment\n\n", True)):
        data.write_text(text)
        used.clear()
        expected = run(tmp_path, "--no-cache", *fmt)
        assert run(tmp_path, *fmt) == expected and "1 comments" in expected
        assert used == [cutoff]


def test_a_broken_notebook_beside_cached_runs(tmp_path):
    """A notebook that cannot be read (DL000) gives the same findings cold, warm and after edits
    (notebooks are read only when the stored findings cannot be reused)."""
    import shutil

    (tmp_path / ".git").mkdir()
    for name, text in CUTOFF_PROJECT.items():
        (tmp_path / name).write_text(text)
    shutil.copy(Path(__file__).parent.parent / "fixtures" / "notebooks" / "sharing_strategy.ipynb", tmp_path / "good.ipynb")
    (tmp_path / "data.ipynb").write_text("{not json")  # its module name is data's, as data.py's
    age(tmp_path)
    fmt = ["--output-format", "json"]
    reference = run(tmp_path, "--no-cache", *fmt)
    assert "DL000" in reference and "good.ipynb" in reference
    assert run(tmp_path, *fmt) == reference
    assert run(tmp_path, *fmt) == reference
    train = tmp_path / "train.py"
    train.write_text(train.read_text() + "# a comment\n")
    assert run(tmp_path, *fmt) == run(tmp_path, "--no-cache", *fmt) == reference


def test_a_fix_computed_once_is_remembered_across_runs(tmp_path, monkeypatch):
    """DL101's fix (a libcst transform of the constructor) is kept in the cache by the file's text,
    the constructor and the attribute: a later full run over the same text reuses it and prints the
    same fix; an edit of that file computes it again."""
    from dllint.fixes import compact

    (tmp_path / ".git").mkdir()
    for name, text in CUTOFF_PROJECT.items():
        (tmp_path / name).write_text(text)
    age(tmp_path)
    calls: list[str] = []
    real = compact._convert_in_init

    def spy(text, qualparts, attr, memo):
        calls.append(attr)
        return real(text, qualparts, attr, memo)

    monkeypatch.setattr(compact, "_convert_in_init", spy)
    fmt = ["--output-format", "json"]
    reference = run(tmp_path, "--no-cache", *fmt)
    assert '"edits"' in reference and calls == ["files"]
    calls.clear()
    assert run(tmp_path, *fmt) == reference and calls == ["files"]
    train = tmp_path / "train.py"
    train.write_text(train.read_text().replace("print(batch)", "print(batch, 1)"))  # facts change: a full run
    calls.clear()
    assert run(tmp_path, *fmt) == run(tmp_path, "--no-cache", *fmt)
    assert calls == ["files"]  # the --no-cache run only
    data = tmp_path / "data.py"
    data.write_text(data.read_text().replace("os.listdir(root)", "sorted(os.listdir(root))"))
    calls.clear()
    assert run(tmp_path, *fmt) == run(tmp_path, "--no-cache", *fmt)
    assert calls == ["files", "files"]


def test_derived_answers_are_remembered_with_their_shape_checked(tmp_path):
    """Derived.remember: an answer (None included) is computed once per key; an entry whose shape
    the caller rejects is computed again, as a missing one is."""
    from dllint.cache import Derived, FactCache

    cache = FactCache(str(tmp_path / "c"))
    store = Derived(cache)
    calls = []

    def compute(value):
        def run():
            calls.append(value)
            return value
        return run

    def is_int(v):
        return type(v) is int

    assert store.remember("f", ("text", 1), compute(None), is_int) is None
    assert store.remember("f", ("text", 1), compute(5), is_int) is None  # None was the answer
    assert store.remember("f", ("text", 2), compute(7), is_int) == 7
    assert store.remember("f", ("text", 2), compute(8), is_int) == 7
    assert store.remember("f", ("other", 2), compute(9), is_int) == 9  # another text, another key
    store.put(store.key("f", "text", 3), ("not an int",))
    assert store.remember("f", ("text", 3), compute(4), is_int) == 4
    assert calls == [None, 7, 9, 4]


def test_an_edited_run_starts_from_the_last_plan(tmp_path, demand_rounds):
    """The files the last run analysed are kept (plans/): after an edit, planning starts
    from them and needs one round, and the findings equal a run without the cache; a file the
    edit newly needs is still planned."""
    generate(str(tmp_path), seed=2, files=120)
    age(tmp_path)
    cache_dir = tmp_path / "cachedir"
    cold, _ = analyse(tmp_path, cache_dir)
    assert list((cache_dir / "plans").iterdir())
    rounds = demand_rounds
    rounds.clear()  # (the cold run's)
    edited = sorted({d.path for d in cold.diagnostics})[0]
    with open(edited, "a", encoding="utf-8") as fh:
        fh.write("\n# an edit\n")
    warm, _ = analyse(tmp_path, cache_dir)
    assert len(rounds) == 1
    fresh, _ = analyse(tmp_path, None)
    assert [d.sort_key() for d in warm.diagnostics] == [d.sort_key() for d in fresh.diagnostics]
    assert warm.analysed == cold.analysed

    # a new module the project starts to use is planned although the last plan lacked it
    (tmp_path / "helper_mod_new.py").write_text("import torch\n\ndef to_gpu(x):\n    return x.cuda()\n")
    first = str(next(iter(sorted(p for p in cold.project.files if p.endswith(".py")))))
    with open(first, "a", encoding="utf-8") as fh:
        fh.write("\nfrom helper_mod_new import to_gpu  # noqa: F401\n")
    rounds.clear()
    again, _ = analyse(tmp_path, cache_dir)
    fresh, _ = analyse(tmp_path, None)
    assert [d.sort_key() for d in again.diagnostics] == [d.sort_key() for d in fresh.diagnostics]


def test_a_named_file_run_again_starts_from_its_last_plan(tmp_path, demand_rounds):
    """A file named on the command line (the editor's document, a file staged again) keeps its
    plan too: after a code edit the next run of that file starts from the files the last one
    analysed and needs one round of demands; its findings equal a run without the cache. After
    an edit that changes none of its facts, the last run's findings are reused."""
    from dllint.commands.check import enabled_codes, load_configuration
    from dllint.config import Overrides
    from dllint.engine import Engine

    generate(str(tmp_path), seed=3, files=120)
    age(tmp_path)
    cache_dir = tmp_path / "cachedir"
    whole, _ = analyse(tmp_path, cache_dir)
    settings, project_root = load_configuration([str(tmp_path)], None, Overrides(select=["ALL"]))

    def named(path: str, cache):
        engine = Engine(settings, project_root, jobs=1, cache=FactCache(str(cache)) if cache else None)
        engine.reuse_results = cache is not None  # as the command line runs it
        return engine.analyse([path], enabled_codes(settings), explicit={path})

    rounds = demand_rounds
    # the file whose analysis alone needs the most rounds
    best = None
    for path in sorted({d.path for d in whole.diagnostics}):
        rounds.clear()
        found = named(path, None)
        if best is None or len(rounds) > best[1]:
            best = (path, len(rounds), found)
    path, cold_rounds, fresh = best
    assert cold_rounds > 1
    first = named(path, cache_dir)
    assert [d.sort_key() for d in first.diagnostics] == [d.sort_key() for d in fresh.diagnostics]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n\ndef added_by_an_edit(x):\n    return x\n")
    rounds.clear()
    again = named(path, cache_dir)
    assert len(rounds) == 1
    rounds.clear()
    fresh = named(path, None)
    assert len(rounds) == cold_rounds
    assert [d.sort_key() for d in again.diagnostics] == [d.sort_key() for d in fresh.diagnostics]
    assert again.analysed == first.analysed
    # an edit that changes none of the file's facts (a comment): the last run's findings stand,
    # no round of demands (the early cutoff, as for a whole run)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n# a comment\n")
    rounds.clear()
    kept = named(path, cache_dir)
    assert rounds == []
    assert [d.sort_key() for d in kept.diagnostics] == [d.sort_key() for d in fresh.diagnostics]


def _applicability(analysis) -> list:
    return [(d.code, d.fix.applicability if d.fix else None) for d in analysis.diagnostics if d.code == "DL101"]


def test_a_file_outside_the_analysis_decides_a_fix_with_a_cache_too(tmp_path, monkeypatch):
    """DL101's fix is safe only if no project file uses the list as more than a read-only one,
    also the files no run analyses (``Project.uses_elsewhere``, which files name the attribute
    remembered in the cache): an edit of such a file that starts growing the attribute makes the
    next cached run hold the fix unsafe, for the whole project and for the Dataset's file named
    alone; the edit undone, safe again."""
    from dllint.prefilter import AttributeNamed

    src = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "dl101_attribute_used_elsewhere"
    root = tmp_path / "p"
    (root / "tools").mkdir(parents=True)
    for name in ("data.py", "train.py"):
        (root / name).write_text((src / name).read_text())
    (root / "pyproject.toml").write_text("")
    tool = root / "tools" / "playlist.py"
    reading = "def show(playlist):\n    return len(playlist.files)\n"
    growing = (src / "tools" / "playlist.py").read_text()
    data = str(root / "data.py")

    def both():
        return [_applicability(analyse(root, tmp_path / "cache", named=named)[0]) for named in (None, data)]

    for text, expected in ((reading, "safe"), (growing, "unsafe"), (reading, "safe")):
        tool.write_text(text)
        age(root)
        assert both() == [[("DL101", expected)]] * 2, text
        assert both() == [[("DL101", expected)]] * 2, "warm: " + text

    # an edit of an analysed file runs the rules again; which files outside name the attribute
    # is remembered (keyed by their contents), so none of them is searched again
    tool.write_text(growing)
    age(root)
    assert both() == [[("DL101", "unsafe")]] * 2
    searched = []
    monkeypatch.setattr(AttributeNamed, "__call__", lambda self, data: searched.append(data) or self.word in data)
    train = root / "train.py"
    train.write_text(train.read_text() + "\n\nEPOCHS = 3\n")
    age(root)
    assert both() == [[("DL101", "unsafe")]] * 2
    assert searched == []


START_METHOD_PROJECT = {
    # demo.py sets spawn and reaches the loader through pkg/__init__.py and pkg/engine.py, which
    # the analysis does not parse (no data-loading word): what they import, read from their
    # bytes, decides the start methods in force there (dllint/program/loaders.py ``importers_through``)
    "pkg/__init__.py": "from .engine import train\n",
    "pkg/engine.py": "from .loading import make_loader\n\n\ndef train():\n    for batch in make_loader():\n        print(batch)\n",
    "pkg/loading.py": (
        "import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass Points(Dataset):\n"
        "    def __len__(self):\n        return 8\n\n    def __getitem__(self, i):\n        return torch.zeros(2)\n\n\n"
        "def make_loader():\n    return DataLoader(Points(), num_workers=2)\n"
    ),
    "demo.py": 'import torch.multiprocessing as mp\n\nimport pkg\n\nif __name__ == "__main__":\n    mp.set_start_method("spawn")\n    pkg.train()\n',
    "train.py": 'from pkg import train\n\nif __name__ == "__main__":\n    train()\n',
}


def test_an_edit_of_what_a_file_outside_the_analysis_imports_runs_in_full(tmp_path, monkeypatch):
    """The imports of the files the analysis does not parse are a question asked of their bytes
    (``Engine._unparsed_imports``, when the project sets a start method): an edit keeping them
    keeps the findings; one changing them (the chain from an entry script to the loader cut, or
    made again) runs in full, and prints what a run without the cache prints."""
    (tmp_path / ".git").mkdir()
    for name, text in START_METHOD_PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    age(tmp_path)
    used = spy_cutoff(monkeypatch)
    reference = run(tmp_path, "--output-format", "json")  # (the format edit_and_compare runs)
    assert "(fork/spawn on the targets)" in reference, reference  # demo.py: spawn; train.py: the default
    engine = START_METHOD_PROJECT["pkg/engine.py"]
    cut = engine.replace("from .loading import make_loader\n", "make_loader = list\n")
    for name, text, cutoff in (
        ("pkg/engine.py", engine + "# a comment\n", True),
        ("pkg/engine.py", engine + "\n\ndef evaluate():\n    return 0\n", True),  # the same imports
        ("pkg/engine.py", cut, False),  # no entry script reaches the loader: the default alone
        ("pkg/engine.py", engine + "# the chain made again\n", False),
        ("train.py", START_METHOD_PROJECT["train.py"].replace("from pkg import train", "def train():\n    pass"), False),
    ):
        edit_and_compare(tmp_path, used, name, text, cutoff)
    (tmp_path / "pkg/engine.py").write_text(cut)
    assert "(fork on the targets)" in run(tmp_path, "--no-cache")
