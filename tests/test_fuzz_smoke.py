"""A short version of the generated-program run (`bench/fuzz.py`): mutated fixtures and generated
data-loading modules through dllint with default rules, `--select ALL`, the cache, and `--fix
--unsafe-fixes` twice: no crash, fixed files re-parse and keep their encoding, fixes converge."""

from __future__ import annotations

import importlib.util
import sys

from golden import ROOT


def load_fuzz():
    spec = importlib.util.spec_from_file_location("dllint_bench_fuzz", ROOT / "bench" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_generated_programs_smoke():
    fuzz = load_fuzz()
    stats = fuzz.run(40, 20, seed=0, use_hypothesmith=False, out=None, log=lambda *_: None)
    assert stats.modules == 40 and stats.projects == 2
    assert stats.findings > 0 and stats.files_fixed > 0  # the programs exercise rules and fixes
    assert stats.problems == [], stats.problems
