"""ONSOCMAX end to end: the default ``optsched run onsocmax`` experiment, and the cost of each
stage on one Section IV instance per utility kind (medians of repeats, measured side by side).

    python benchmarks/bench_onsocmax.py [--repeats 3] [--stage-repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

import optsched
from optsched.papers import get_paper
from optsched.onsocmax.baselines import EqualShare, MaxFirst
from optsched.models.mesh import MeshGenerator
from optsched.models.onsocmax_offline import OfflineWelfareIntegral
from optsched.onsocmax.offline import certified_optimum
from optsched.onsocmax.policy import Onsocmax, run_online


def median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def end_to_end(repeats: int) -> None:
    exp = get_paper("onsocmax")
    cfg = exp.make_config()
    n = len(cfg.values) * len(cfg.kinds) * cfg.repeats
    with tempfile.TemporaryDirectory() as tmp:
        t = median_time(lambda: exp.run(cfg, Path(tmp)), repeats)
    print(f"default experiment (sweep {cfg.sweep}, {n} instances, 3 policies + certified OPT each):")
    print(f"  median {t:.2f} s over {repeats} runs, {t / n * 1e3:.1f} ms per instance\n")


def stages(repeats: int) -> None:
    print("per stage on one Section IV instance (10 nodes, 24 slots, 20 jobs); median seconds")
    head = f"{'kind':7s} {'pairs':>5s} {'ONSOCMAX kkt':>12s} {'ONSOCMAX cvxpy':>14s} {'cvxpy/kkt':>9s} " \
           f"{'MAX-FIRST':>9s} {'EQ-SHARE':>9s} {'OPT P1':>8s} {'OPT/kkt':>8s} {'int P1 MIP':>10s}"
    print(head)
    for kind in ("linear", "log", "sqrt"):
        inst = MeshGenerator(kind=kind).draw(np.random.default_rng(0))
        t_kkt = median_time(lambda: run_online(inst, Onsocmax()), repeats)
        t_cvx = median_time(lambda: run_online(inst, Onsocmax(backend="cvxpy")), max(1, repeats // 2))
        t_mf = median_time(lambda: run_online(inst, MaxFirst()), repeats)
        t_es = median_time(lambda: run_online(inst, EqualShare()), repeats)
        t_opt = median_time(lambda: certified_optimum(inst), repeats)
        t_mip = median_time(lambda: optsched.solve(OfflineWelfareIntegral(inst), "highs"), repeats)
        print(f"{kind:7s} {inst.n_pairs:5d} {t_kkt:12.4f} {t_cvx:14.4f} {t_cvx / t_kkt:9.1f} "
              f"{t_mf:9.4f} {t_es:9.4f} {t_opt:8.4f} {t_opt / t_kkt:8.2f} {t_mip:10.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3, help="runs of the whole default experiment")
    parser.add_argument("--stage-repeats", type=int, default=5, help="runs of each stage")
    args = parser.parse_args()
    end_to_end(args.repeats)
    stages(args.stage_repeats)


if __name__ == "__main__":
    main()
