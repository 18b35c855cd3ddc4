"""GPU proof for DL201 / DL102 / DL301: the flagged fixtures fail in forked workers with
"Cannot re-initialize CUDA in forked subprocess", and the DL301-fixed form
(`multiprocessing_context="spawn"`, as `dllint --fix --unsafe-fixes` writes it) runs.

Needs a CUDA device; skipped elsewhere. Run on a GPU machine with
`python -m pytest tests/gpu -q` (about half a minute: spawn starts are slow).

Each run happens in a fresh interpreter: the parent initializes CUDA first (as a training script
does by putting its model on the GPU), then the fork start method is made the default (the
Linux default before Python 3.14, which is what DL301 assumes), then the fixture's loader is
iterated.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
    pytest.mark.skipif(sys.platform != "linux", reason="fork start method"),
]

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FORK_ERRORS = ("Cannot re-initialize CUDA in forked subprocess", "CUDA error: initialization error")

# (fixture file, its DL301-fixed form, module name, how to iterate its loader, batches)
CASES = {
    # DL201: __getitem__ calls .cuda()
    "dl201": (
        FIXTURES / "projects/dl3_context_requires_python/train.py",
        FIXTURES / "projects/dl3_context_requires_python/unsafe-fixed/train.py",
        "train",
        "batches = train.main()",
        8,
    ),
    # DL102: a CUDA tensor made in __init__ and indexed in __getitem__ (pytorch/pytorch#40403)
    "dl102": (
        FIXTURES / "dl102/positive_noise.py",
        FIXTURES / "dl102/positive_noise.py.unsafe-fixed",
        "positive_noise",
        "batches = list(positive_noise.make_loader())",
        4,
    ),
}

HARNESS = """
import torch, torch.multiprocessing as mp
torch.zeros(1, device="cuda")              # the parent has initialized CUDA
mp.set_start_method("fork", force=True)    # the default DL301 assumes (Linux, Python <= 3.13)
import {module}
{run}
print("batches:", len(batches))
"""


def run_case(folder: Path, module: str, run: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(folder))
    code = textwrap.dedent(HARNESS).format(module=module, run=run)
    return subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fork_fails_and_spawn_fix_runs(name, tmp_path):
    original, fixed, module, run, count = CASES[name]
    for kind, source in (("original", original), ("fixed", fixed)):
        folder = tmp_path / kind
        folder.mkdir()
        shutil.copy(source, folder / f"{module}.py")
    assert "multiprocessing_context=\"spawn\"" in (tmp_path / "fixed" / f"{module}.py").read_text()

    before = run_case(tmp_path / "original", module, run)
    assert before.returncode != 0, before.stdout
    assert any(err in before.stderr for err in FORK_ERRORS), before.stderr[-3000:]

    after = run_case(tmp_path / "fixed", module, run)
    assert after.returncode == 0, after.stderr[-3000:]
    assert f"batches: {count}" in after.stdout
    assert not any(err in after.stderr for err in FORK_ERRORS)
