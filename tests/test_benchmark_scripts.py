"""The benchmark and picture scripts still run against the package as it is now.

A script is only run by hand, so an API change can leave it broken without a failing test
(``bench_pseudo_welfare.py`` and ``bench_onsocmax.py`` still called ``Onsocmax(solver=...)``
after the seam replaced it). Every script is imported here (its module-level imports and
names); with ``-m slow`` each benchmark runs end to end on its smallest arguments."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), *ROOT.glob("scripts/*.py")])

# The smallest run of each benchmark (seconds each); every benchmark has one.
TINY_RUNS: dict[str, list[str]] = {
    "bench_aescb_gap": ["--instances", "3", "--slots", "10", "--per-slot", "2"],
    "bench_all": ["--quick", "--out", "{tmp}"],
    "bench_cliques": ["--graphs", "johnson8-2-4", "MANN_a9", "--repeats", "3"],
    "bench_budget_dp": ["--repeats", "1", "--sample", "2", "--t", "50", "--max-cells", "1e8", "--pareto-box", "1e4",
                        "--reuse-upto", "8"],
    "bench_esdp": ["--horizon", "50", "--old-horizon", "20", "--repeats", "1"],
    "bench_escb_oa": ["--out", "{tmp}", "--only", "gen16,fuzz-ties"],
    "bench_ogasched": ["--repeats", "1", "--large-slots", "20"],
    "bench_onsocmax": ["--repeats", "1", "--stage-repeats", "1"],
    "bench_projection": ["--sizes", "1000", "--repeats", "1", "--cvxpy-max", "1000", "--paper", "5"],
    "bench_pseudo_welfare": ["--instances", "1"],
    "bench_scale": ["--only", "esdp-paper", "--out", "{tmp}"],
    "bench_scale_esdp_onsocmax": ["--parts", "esdp-paper", "onsocmax-paper"],
    "bench_seam": ["--repeats", "1", "--only", "per-call"],
    "bench_set_packing": ["--sizes", "10", "--instances", "1", "--repeats", "1", "--seam", "10", "--seeds", "2"],
    "bench_sweep": ["--frames", "100", "--seeds", "1", "--repeats", "1"],
    "bench_time_limits": ["--limits", "0.2", "--big", "10000"],
}


NEEDS_SHARED_DATA = {"bench_cliques"}


def test_every_benchmark_has_a_tiny_run() -> None:
    assert set(TINY_RUNS) == {p.stem for p in SCRIPTS if p.parent.name == "benchmarks"}


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_script_imports(path: Path) -> None:
    spec = importlib.util.spec_from_file_location(f"_script_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)  # the ``__main__`` guard keeps it from running
    finally:
        del sys.modules[spec.name]
    assert callable(getattr(module, "main", None)) or path.stem == "bench_all"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TINY_RUNS))
def test_benchmark_tiny_run(name: str, tmp_path: Path) -> None:
    if name in NEEDS_SHARED_DATA and not SHARED_DATA.is_dir():
        pytest.skip(f"shared data directory {SHARED_DATA} is absent")
    args = [a.replace("{tmp}", str(tmp_path / "out")) for a in TINY_RUNS[name]]
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{name}.py"), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "OPTSCHED_SHARED_DATA": str(SHARED_DATA)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
