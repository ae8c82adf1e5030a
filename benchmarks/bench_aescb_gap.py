"""The AESCB route (``aescb``) vs the exact ESCB index (``escb_oa``, brute force when tiny):
approximation gap against the Theorem 1 bound, and runtimes side by side.

Part 1, small random instances (n <= 12, exact by brute force), xi in {1, 2, 4, 8, 16}:
counts where AESCB is suboptimal, the largest gap as a fraction of the bound
(|x| + sqrt|x|) / xi, and how often the paper's own bound |x| / xi (which drops the sqrt term
the ceiling in (14) adds) is exceeded.

Part 2, ESDP-like instances at the paper's default size (|E| = 32, K = 3, A in {1, 2},
c_k = ceil(0.5 sum_e A_ke), v_hat ~ U[0, 1], sigma2_hat = g(t) / (2 n_e), xi = ceil(m / delta(t)),
S = xi m): gap of AESCB to the exact optimum and runtimes (medians), per slot t.

    python benchmarks/bench_aescb_gap.py [--instances 300] [--slots 10 100 1000 2000] [--per-slot 20]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import optsched
from optsched.models.escb_index import esdp_escb_index
from optsched.models.escb_index import EscbIndex
from optsched.result import Termination
from optsched.solvers.escb_aescb import theorem1_gap


def part1(rng: np.random.Generator, instances: int) -> None:
    xis = (1, 2, 4, 8, 16)
    methods = ("pareto", "dense")  # the two DP methods break ties differently: both are reported
    suboptimal = dict.fromkeys(methods, 0)
    paper_exceeded = dict.fromkeys(methods, 0)
    worst = dict.fromkeys(methods, 0.0)
    total = 0
    for _ in range(instances):
        n, k = int(rng.integers(3, 13)), int(rng.integers(1, 4))
        model = EscbIndex(rng.random(n), rng.random(n) * rng.choice([0.01, 0.3, 3.0]),
                          rng.integers(1, 3, (k, n)), rng.integers(1, 2 * n, k))
        opt = optsched.solve(model, "brute_force").objective
        for xi in xis:
            total += 1
            for method in methods:
                r = optsched.solve(model, "aescb", xi=xi, method=method)
                gap, chosen = opt - r.objective, len(r.solution)
                suboptimal[method] += gap > 1e-9
                paper_exceeded[method] += gap > chosen / xi + 1e-9
                if chosen:
                    worst[method] = max(worst[method], gap / theorem1_gap(chosen, xi))
                assert gap <= theorem1_gap(chosen, xi) + 1e-9
    for method in methods:
        print(f"part 1 ({method} DP): {total} (instance, xi) pairs, xi in {xis}: AESCB suboptimal in "
              f"{suboptimal[method]}; largest gap = {worst[method]:.2f} x (|x|+sqrt|x|)/xi; "
              f"paper's |x|/xi bound exceeded {paper_exceeded[method]} times")


def esdp_instance(rng: np.random.Generator, t: int, n_edges: int = 32) -> tuple[EscbIndex, int, int]:
    return esdp_escb_index(rng, n_edges, t)  # (P3 model, xi, S = xi m); see optsched.generators


def part2(rng: np.random.Generator, slots: list[int], per_slot: int) -> None:
    optsched.solve(EscbIndex([1.0], [1.0], [[1]], [1]), "aescb")  # load the numba cache
    print("part 2: ESDP-like P3 at |E| = 32 (medians over instances)")
    print(f"{'t':>6} {'xi':>4} {'S':>5} {'aescb s':>8} {'escb_oa s':>9} {'oa/aescb':>8} {'OA MILPs':>8} "
          f"{'gap':>9} {'gap/OPT':>9} {'bound':>7} {'optimal':>7}")
    for t in slots:
        rows = []
        for _ in range(per_slot):
            model, xi, S = esdp_instance(rng, t)
            a = optsched.solve(model, "aescb", xi=xi, max_budget=S)
            e = optsched.solve(model, "escb_oa")
            assert e.termination is Termination.OPTIMAL and a.ok
            rows.append((xi, a.runtime_s, e.runtime_s, e.iterations, e.objective - a.objective,
                         (e.objective - a.objective) / e.objective, theorem1_gap(len(a.solution), xi)))
            assert rows[-1][4] <= rows[-1][6] + 1e-9
        col = list(zip(*rows))
        med = [statistics.median(c) for c in col]
        optimal = sum(g <= 1e-9 for g in col[4])
        print(f"{t:6d} {rows[0][0]:4d} {S:5d} {med[1]:8.3f} {med[2]:9.3f} {med[2] / med[1]:8.1f} "
              f"{med[3]:8.0f} {med[4]:9.2e} {med[5]:9.2e} {med[6]:7.3f} {optimal:>4}/{per_slot}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=300)
    ap.add_argument("--slots", type=int, nargs="+", default=[10, 100, 1000, 2000])
    ap.add_argument("--per-slot", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    part1(rng, args.instances)
    part2(rng, args.slots, args.per_slot)


if __name__ == "__main__":
    main()
