"""dllint probe on the fixtures: each pitfall is confirmed, each fixed form is silent."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

torch = pytest.importorskip("torch")

from dllint import probe as pr
from dllint.probe import CONFIRMED, OK, SKIPPED, MiB, run_probe

ROOT = Path(__file__).resolve().parents[1]
FIX = "fixtures/probe/datasets.py"

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs fork and /proc smaps_rollup")


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(ROOT)


def finding(report, code):
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, [(f.code, f.status) for f in report.findings]
    return found[0]


def run(name, **kw):
    return run_probe(f"{FIX}:{name}", **kw)


# ----------------------------------------------------------------------------- DL101


@linux_only
def test_copy_on_read_growth_is_confirmed_and_fixed_form_is_silent():
    kw = {"batch_size": 4096, "seconds": 60, "checks": ("memory",)}
    bad = run("copy_on_read_list", **kw)
    # the fixed form stays silent even with no growth threshold at all: nothing on it holds Python objects
    good = run("copy_on_read_array", **kw, min_growth_mb=0)
    for r in (bad, good):
        assert r.items_read == 500_000 and r.epoch_done
        assert len(r.memory) == 2 and all(m.items > 50_000 for m in r.memory)
    bad_growth = min(m.growth_bytes for m in bad.memory)
    good_growth = max(m.growth_bytes for m in good.memory)
    # 500k short str objects are ~47 MiB; each worker reads half of them and copies the pages.
    assert bad_growth >= 8 * MiB
    assert bad_growth >= 3 * max(good_growth, 1 * MiB), (bad_growth / MiB, good_growth / MiB)
    bad_rate = min(m.per_1000_items_bytes for m in bad.memory)
    good_rate = max(m.per_1000_items_bytes for m in good.memory)
    assert bad_rate >= 3 * max(good_rate, 4096)
    f = finding(bad, "DL101")
    assert f.status == CONFIRMED and "paths (list, 500,001 Python objects" in f.message
    f = finding(good, "DL101")
    assert f.status == OK and "no dataset attribute holds many Python objects" in f.message
    # the live object counts that point at the culprit
    assert bad.attributes[0].name == "paths" and bad.attributes[0].objects == 500_001
    assert good.attributes[0].name == "paths" and good.attributes[0].objects == 1


@linux_only
def test_batches_limit_and_samples_over_time():
    r = run("copy_on_read_list", batch_size=256, batches=40, checks=("memory",))
    assert r.batches_read == 40 and not r.epoch_done
    assert 40 * 256 <= r.items_read <= 500_000
    for m in r.memory:
        assert m.samples, "memory is sampled while the loader runs"
        assert m.samples[-1][2] == m.end_bytes
        assert [s[1] for s in m.samples] == sorted(s[1] for s in m.samples)  # items only grow


@linux_only
def test_short_run_is_inconclusive_or_projected():
    few = run("copy_on_read_list", batch_size=64, batches=3, checks=("memory",))
    f = finding(few, "DL101")
    assert f.status == OK and f.message.startswith("inconclusive") and "run longer" in f.message
    # a third of the epoch: the projection over the whole epoch is what confirms it
    part = run("copy_on_read_list", batch_size=4096, batches=30, seconds=None, checks=("memory",),
               min_growth_mb=9)
    f = finding(part, "DL101")
    assert not part.epoch_done and 30 * 4096 <= part.items_read < 500_000
    assert f.status == CONFIRMED, f.message
    assert f.details["projected_epoch_growth_bytes"] >= 18 * MiB


@linux_only
def test_loader_with_its_own_batch_sampler():
    r = run("batch_sampler_loader", checks=("memory",), seconds=60)
    assert r.batches_read == -(-500_000 // 4096) and r.epoch_done
    assert finding(r, "DL101").status == CONFIRMED
    assert "batch_sampler" in r.notes[0]


@linux_only
def test_cli_batches_without_seconds():
    res = cli(f"{FIX}:copy_on_read_list", "-k", "3", "--skip", "rng", "--skip", "pickle", "--json")
    data = json.loads(res.stdout)
    assert data["batches_read"] == 3 and not data["epoch_done"]


# ----------------------------------------------------------------------------- DL103


def test_lambda_on_self_is_named():
    f = finding(run("unpicklable", checks=("pickle",)), "DL103")
    assert f.status == CONFIRMED
    (failure,) = f.details["failures"]
    assert failure["attribute"] == "dataset.scale"
    assert "Can't pickle local object 'LambdaOnSelf.__init__.<locals>.<lambda>'" in failure["error"]


def test_nested_culprit_path():
    f = finding(run("nested_unpicklable", checks=("pickle",)), "DL103")
    assert f.status == CONFIRMED
    assert f.details["failures"][0]["attribute"] == "dataset.transform.steps[1]"


def test_loader_collate_fn_lambda():
    f = finding(run("unpicklable_loader", checks=("pickle",)), "DL103")
    assert f.status == CONFIRMED
    assert [x["object"] for x in f.details["failures"]] == ["collate_fn"]


def test_local_class_is_named():
    f = finding(run("random_module_dataset", checks=("pickle",)), "DL103")
    assert f.status == CONFIRMED and "defined inside a function" in f.message


def test_picklable_form_is_silent():
    f = finding(run("picklable", checks=("pickle",)), "DL103")
    assert f.status == OK and f.details["pickled_bytes"]["dataset"] > 0


def test_try_pickle_matches_spawn():
    assert pr.try_pickle(multiprocessing.get_context("spawn").Lock())[0]  # fine when a worker starts
    ok, err, _ = pr.try_pickle(threading.Lock())
    assert not ok and "_thread.lock" in err
    ok, _, size = pr.try_pickle(np.zeros(1_000_000))  # buffer out of band: not copied
    assert ok and size < 10_000
    where, err = pr.find_unpicklable({"a": [1, 2, (3, threading.RLock())]}, "x")
    assert where == "x['a'][2][1]" and "RLock" in err


# ----------------------------------------------------------------------------- DL105 / DL203


@linux_only
def test_rng_object_in_init_gives_identical_worker_streams():
    f = finding(run("rng_in_init", checks=("rng",)), "DL105")
    assert f.status == CONFIRMED
    assert "identical random streams" in f.message and "every epoch repeats" in f.message
    assert f.details["rng_attributes"] == ["rng (numpy.random._generator.Generator)"]
    e0 = f.details["streams"][0]
    assert e0["0"] == e0["1"] and len(set(e0["0"])) == 4


@linux_only
def test_rng_per_worker_is_silent():
    f = finding(run("rng_per_worker", checks=("rng",)), "DL105")
    assert f.status == OK and "differ between workers and between epochs" in f.message


@linux_only
def test_constant_seed_repeats_every_epoch():
    r = run("constant_seed_loader", checks=("rng",))
    (f,) = r.findings
    assert f.code == "DL203" and f.status == CONFIRMED


@linux_only
def test_deterministic_dataset_has_no_rng_finding():
    f = finding(run("picklable", checks=("rng",)), "DL105")
    assert f.status == OK and "same on every draw" in f.message


# ----------------------------------------------------------------------------- DL202


@linux_only
def test_unsharded_stream_duplicates():
    f = finding(run("unsharded_stream", checks=("duplicates",)), "DL202")
    assert f.status == CONFIRMED
    assert f.details["unique"] == 400 and f.details["in_several_workers"] == 400


@linux_only
def test_sharded_stream_is_silent():
    f = finding(run("sharded_stream", checks=("duplicates",)), "DL202")
    assert f.status == OK and f.details["in_several_workers"] == 0 and f.details["items"] == 400


def test_map_style_skips_duplicates_and_iterable_skips_rng():
    assert [f.code for f in run("picklable", checks=("duplicates",)).findings] == []
    assert [f.code for f in run("sharded_stream", checks=("rng",)).findings] == []
    assert pr.rng_finding(pr.resolve(pr.load_target(f"{FIX}:sharded_stream")(), None)).status == SKIPPED


# ----------------------------------------------------------------------------- helpers


def test_count_objects():
    n, _, capped = pr.count_objects([("a", 1), ("b", 2)])
    assert (n, capped) == (7, False)  # list, 2 tuples, 2 str, 2 int
    assert pr.count_objects(np.arange(10**6))[0] == 1
    assert pr.count_objects(np.array(["x", "y"], dtype=object))[0] == 3
    n, nbytes, capped = pr.count_objects(list(range(1000, 100_000)), cap=500)
    assert (n, capped) == (500, True) and nbytes >= 99_000 * 8  # the list's own pointer array counts


def test_fingerprint():
    assert pr.fingerprint(torch.arange(4)) == pr.fingerprint(torch.arange(4))
    assert pr.fingerprint(torch.arange(4)) != pr.fingerprint(torch.arange(4).float())
    assert pr.fingerprint({"x": np.ones(3), "y": [1, "a"]}) == pr.fingerprint({"y": [1, "a"], "x": np.ones(3)})


@linux_only
def test_read_private_bytes():
    assert pr.read_private_bytes() > 1 * MiB
    assert pr.read_private_bytes(2**31 - 1) is None


def test_load_target_errors():
    with pytest.raises(pr.TargetError, match="no attribute"):
        pr.load_target(f"{FIX}:missing")
    with pytest.raises(pr.TargetError, match="no such file"):
        pr.load_target("nope/missing.py:f")
    with pytest.raises(pr.TargetError, match="MODULE:CALLABLE"):
        pr.load_target("justamodule")
    with pytest.raises(pr.TargetError, match="not a Dataset"):
        run_probe(f"{FIX}:not_a_dataset")


def test_module_that_exits_at_import(tmp_path):
    script = tmp_path / "train_script.py"
    script.write_text("import sys\nsys.exit('usage: train.py --data DIR')\ndef make():\n    pass\n")
    with pytest.raises(pr.TargetError, match="SystemExit: usage: train.py"):
        pr.load_target(f"{script}:make")


# ----------------------------------------------------------------------------- CLI


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def cli(*args):
    """The probe command in this process (workers fork from here): CliRunner, stdout and stderr apart."""
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 always keeps them apart
        runner = CliRunner()
    res = runner.invoke(pr.probe, list(args), catch_exceptions=False)
    return Result(res.exit_code, res.stdout, res.stderr)


def cli_subprocess(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "dllint", "probe", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@linux_only
def test_cli_copy_on_read_exit_codes_and_json():
    # through `python -m dllint`, as a user runs it
    res = cli_subprocess(f"{FIX}:copy_on_read_list", "--batch-size", "4096", "--seconds", "60", "--json")
    assert res.returncode == 1, res.stderr
    data = json.loads(res.stdout)
    assert data["confirmed"] == ["DL101"]
    dl101 = next(f for f in data["findings"] if f["code"] == "DL101")
    assert dl101["name"] == "copy-on-read-container"
    assert dl101["details"]["median_growth_bytes"] >= 8 * MiB
    res = cli(f"{FIX}:copy_on_read_array", "--batch-size", "4096", "--seconds", "60", "--skip", "rng")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().splitlines()[-1] == "0 problem(s) confirmed"
    assert "ok   DL101 copy-on-read-container" in res.stdout


@linux_only
def test_cli_dotted_module_and_text_report():
    res = cli("fixtures.probe.datasets:rng_in_init", "--skip", "memory")
    assert res.returncode == 1
    assert "FAIL DL105 rng-object-copied-to-workers" in res.stdout
    assert res.stdout.strip().splitlines()[-1] == "1 problem(s) confirmed: DL105"


@linux_only
def test_dataset_that_raises_is_reported_not_crashed():
    res = cli(f"{FIX}:broken")
    assert res.returncode == 2
    lines = res.stdout.strip().splitlines()
    assert lines[-1] == "0 problem(s) confirmed; 2 experiment(s) could not run"
    assert any(line.startswith("ok   DL103") for line in lines)
    err = [line for line in lines if line.startswith("err  ")]
    assert [line.split()[1] for line in err] == ["DL101", "DL105"]
    assert all(line.endswith("KeyError: 'missing label for item 0'") for line in err)


def test_cli_bad_target_exits_2():
    res = cli(f"{FIX}:not_a_dataset")
    assert res.returncode == 2 and "not a Dataset" in res.stderr


def test_cli_without_torch_exits_2():
    code = (
        "import sys; sys.modules['torch'] = None\nfrom dllint.cli import main\n"
        f"main(['probe', '{FIX}:picklable'])\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "needs torch" in res.stderr


@linux_only
def test_probe_confirms_then_is_silent_after_dllint_fix(tmp_path):
    """The issue's end-to-end loop: probe (exit 1) -> dllint --fix converts the list -> probe (exit 0)."""
    src = (ROOT / "fixtures" / "probe" / "cow_fixable.py").read_text()
    before, after = tmp_path / "before", tmp_path / "after"
    for d in (before, after):
        d.mkdir()
        (d / "cow_fixable.py").write_text(src)
    fix = subprocess.run([sys.executable, "-m", "dllint", "check", "--select", "DL101", "--fix", "cow_fixable.py"],
                         cwd=after, capture_output=True, text=True, timeout=120)
    fixed = (after / "cow_fixable.py").read_text()
    if fixed == src:
        pytest.skip(f"dllint --fix did not convert the list in this tree: {fix.stdout}{fix.stderr}")
    assert "_CompactList(self.paths)" in fixed
    args = ["--batch-size", "4096", "--seconds", "60", "--skip", "rng", "--json"]
    res = cli(f"{before / 'cow_fixable.py'}:make", *args)
    assert res.returncode == 1, res.stdout + res.stderr
    grown = json.loads(res.stdout)
    res = cli(f"{after / 'cow_fixable.py'}:make", *args)
    assert res.returncode == 0, res.stdout + res.stderr
    flat = json.loads(res.stdout)
    assert flat["confirmed"] == []
    growth = lambda r: min(m["growth_bytes"] for m in r["memory"])
    assert growth(grown) >= 3 * max(growth(flat), MiB)
