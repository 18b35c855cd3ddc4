"""Runtime proofs for DL105 and DL203 with real torch (CPU, two workers, two epochs).

DL203: a worker_init_fn that seeds from the worker id replays the same draws every epoch; the
golden unsafe fix (seed from torch.initial_seed()) makes epochs differ.
DL105: a RNG object built in __init__ gives every worker the same draws, every epoch; the fixed
form (created per worker from get_worker_info().seed) differs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from golden import FIXTURES, Case, copy_case, findings, import_fixture

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402


def epochs(loader, n=2):
    out = []
    for _ in range(n):
        out.append([tuple(tuple(float(v) for v in field) for field in batch) for batch in loader])
    return out


# ---------------------------------------------------------------------------- DL203

DL203 = FIXTURES / "dl203" / "positive.py"


def test_dl203_constant_seed_replays_every_epoch(tmp_path):
    mod = import_fixture(DL203, tmp_path, "dl203_positive")
    torch.manual_seed(0)
    for index in (0, 1, 2, 3):  # worker_init_fn, partial(seed_worker), helper, lambda (torch stream)
        loader = mod.loaders()[index]
        first, second = epochs(loader)
        if index == 3:  # the lambda reseeds torch, which Draws does not read: checked below
            continue
        numpy_draws = [[batch[0] for batch in epoch] for epoch in (first, second)]
        assert numpy_draws[0] == numpy_draws[1], f"loader {index}: numpy draws differ although the seed is constant"
    # a nested worker_init_fn closing over the seed (fork: no pickling needed)
    first, second = epochs(mod.nested_loader(7))
    assert [b[0] for b in first] == [b[0] for b in second]
    # worker_init_fn=numpy.random.seed: numpy reseeded with the worker id, every epoch
    first, second = epochs(mod.direct_loader())
    assert [b[0] for b in first] == [b[0] for b in second]
    # the lambda form: torch's stream replays
    ds = TorchDraws()
    loader = DataLoader(ds, batch_size=2, num_workers=2, worker_init_fn=lambda wid: torch.manual_seed(wid))
    a, b = ([tuple(x.tolist()) for x in loader] for _ in range(2))
    assert a == b


class TorchDraws(torch.utils.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        return torch.rand(1)


def test_dl203_fixed_form_draws_differ_per_epoch(tmp_path):
    fixed = import_fixture(Path(f"{DL203}.unsafe-fixed"), tmp_path, "dl203_fixed")
    torch.manual_seed(0)
    for index in (0, 1, 2, 4):
        first, second = epochs(fixed.loaders()[index])
        assert first != second, f"loader {index}: epochs replay after the fix"
    # and within an epoch, the two workers draw different numbers
    batches = epochs(fixed.loaders()[0], 1)[0]
    assert batches[0] != batches[1]


def test_dl203_golden_findings_point_at_the_seed_calls(tmp_path):
    case = Case("dl203/positive", DL203)
    out = findings(copy_case(case, tmp_path), case)
    rows = sorted(int(line.split(":")[1]) for line in out.splitlines() if " DL203 " in line)
    text = DL203.read_text().splitlines()
    assert [text[r - 1].strip().split("(")[0] for r in rows] == [
        "np.random.seed", "random.seed", "np.random.seed", "set_seed", "DataLoader", "return DataLoader", "np.random.seed"
    ]


# ---------------------------------------------------------------------------- DL105

DL105 = FIXTURES / "dl105" / "positive.py"


def draws(loader, n_epochs=2):
    return [[batch.tolist() for batch in loader] for _ in range(n_epochs)]


@pytest.mark.parametrize("name", ["NumpyNoise", "PyNoise", "TorchNoise", "SeededTorchNoise"])
def test_dl105_rng_object_gives_workers_identical_draws(tmp_path, name):
    mod = import_fixture(DL105, tmp_path, "dl105_positive")
    torch.manual_seed(0)
    first, second = draws(mod.loader(getattr(mod, name)()))
    # batch 0 comes from worker 0, batch 1 from worker 1: the same draws
    assert first[0] == first[1]
    # and the next epoch restarts from the parent's copy: the same draws again
    assert first == second


def test_dl105_per_worker_generator_differs(tmp_path):
    mod = import_fixture(DL105, tmp_path, "dl105_positive_fixed")
    torch.manual_seed(0)
    first, second = draws(mod.loader(mod.PerWorkerNoise()))
    assert first[0] != first[1]
    assert first != second


def test_dl105_flags_exactly_the_copied_generators(tmp_path):
    case = Case("dl105/positive", DL105)
    out = findings(copy_case(case, tmp_path), case)
    flagged = sorted(line.split("`")[1] for line in out.splitlines() if " DL105 " in line)
    assert flagged == ["self.gen", "self.gen", "self.random", "self.rng"]
