"""DL204 at runtime: forked DataLoader workers inherit OpenCV's thread pool setting from the parent;
the form `dllint --fix --unsafe-fixes --select DL204` writes runs OpenCV single-threaded in them.

The hang itself (pytorch/pytorch#45198) depends on the OpenCV build and timing and is not
reproduced here; what the fix changes -- the thread count OpenCV uses inside a forked worker -- is.
OpenCV reports 1 from `getNumThreads()` after `setNumThreads(0)` (sequential execution).
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from golden import FIXTURES, run_dllint, run_python

cv2 = pytest.importorskip("cv2", reason="opencv-python(-headless) is not installed: pip install opencv-python-headless")
pytest.importorskip("torch")

PROBE = textwrap.dedent(
    """
    import json, sys
    import cv2
    from torch.utils.data import DataLoader
    import positive

    class Probe(positive.Frames):
        def __getitem__(self, i):
            super().__getitem__(i)              # the fixture's own OpenCV work, in the worker
            return cv2.getNumThreads()

    loader = DataLoader(Probe(4), batch_size=None, num_workers=2, multiprocessing_context="fork")
    print(json.dumps({"parent": cv2.getNumThreads(), "workers": sorted({int(n) for n in loader})}))
    """
)


def _worker_threads(folder: Path) -> dict:
    import json

    proc = run_python(PROBE, folder)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenCV uses one thread on a single CPU anyway")
def test_fix_makes_opencv_single_threaded_in_forked_workers(tmp_path):
    original = tmp_path / "original"
    fixed = tmp_path / "fixed"
    for folder in (original, fixed):
        folder.mkdir()
        (folder / ".git").mkdir()
        shutil.copy(FIXTURES / "dl204" / "positive.py", folder / "positive.py")

    code, out = run_dllint(fixed, ["check", "--select", "DL204", "--fix", "--unsafe-fixes", "-q", "--target-version", "py311"])
    assert code == 0, out
    text = (fixed / "positive.py").read_text()
    assert "cv2.setNumThreads(0)" in text
    # the rule no longer fires on the fixed file
    code, out = run_dllint(fixed, ["check", "--select", "DL204", "-q", "--target-version", "py311"])
    assert code == 0, out
    code, out = run_dllint(original, ["check", "--select", "DL204", "-q", "--target-version", "py311"])
    assert code == 1 and "DL204" in out, out

    before = _worker_threads(original)
    after = _worker_threads(fixed)
    # forked workers inherit the parent's multi-threaded OpenCV ...
    assert before["parent"] > 1
    assert before["workers"] == [before["parent"]]
    # ... and after the fix they run it sequentially
    assert after["workers"] == [1]
    assert after["parent"] == 1
