"""Greedy (Algorithm 2) vs CP-SAT vs HiGHS vs Pyomo on random set packing, N = M growing.

Runtimes are medians over instances x repeats, measured side by side in one run through
``optsched.solve`` (verification off); ratios are against CP-SAT in the same run. Two
timings per backend: interleaved (every backend once per round, so load and cold CPU caches
hit all alike; a microsecond kernel called right after a millisecond solver runs cold) and
back to back (the backend's repeats in a row, warm: how a policy loop calls it). Also prints
the distribution of greedy's objective / optimum.

    python benchmarks/bench_set_packing.py [--sizes 10 20 50 100 200] [--instances 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import optsched
from optsched.models.set_packing import SetPacking
from optsched.result import Termination

BACKENDS = ("greedy", "cpsat", "highs", "pyomo")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 50, 100, 200])
    ap.add_argument("--instances", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-size", type=int, default=4, help="largest set (job) size")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    print(f"# random set packing, set sizes 1..{args.max_size}, {args.instances} instances x {args.repeats} repeats")
    print(f"{'N=M':>5} " + " ".join(f"{b + ' ms':>11}" for b in BACKENDS) + "   cpsat/greedy  highs/cpsat  pyomo/cpsat  greedy/opt(min,median)"
          + "  | warm greedy ms  warm cpsat ms  warm cpsat/greedy")
    rng = np.random.default_rng(args.seed)
    ratios_all = []
    for n in args.sizes:
        times: dict[str, list[float]] = {b: [] for b in BACKENDS}
        warm: dict[str, list[float]] = {b: [] for b in ("greedy", "cpsat")}
        ratios = []
        for _ in range(args.instances):
            model = SetPacking.random(rng, n, n, max_size=args.max_size)
            values = {}
            for _ in range(args.repeats):
                for b in BACKENDS:  # interleaved, so load affects every backend alike
                    res = optsched.solve(model, b, verify=False)
                    times[b].append(res.runtime_s)
                    values[b] = res
            for b in warm:
                for _ in range(args.repeats):
                    warm[b].append(optsched.solve(model, b, verify=False).runtime_s)
            for b in ("cpsat", "highs", "pyomo"):
                assert values[b].termination is Termination.OPTIMAL, (n, b)
            opt = values["highs"].objective
            ratios.append(values["greedy"].objective / opt if opt > 0 else 1.0)
        med = {b: statistics.median(t) for b, t in times.items()}
        ratios_all += ratios
        print(
            f"{n:>5} " + " ".join(f"{1e3 * med[b]:>11.3f}" for b in BACKENDS)
            + f"   {med['cpsat'] / med['greedy']:>12.0f}x {med['highs'] / med['cpsat']:>11.2f}x {med['pyomo'] / med['cpsat']:>11.2f}x"
            + f"  {min(ratios):.3f}, {statistics.median(ratios):.3f}"
            + f"  | {1e3 * statistics.median(warm['greedy']):>14.4f} {1e3 * statistics.median(warm['cpsat']):>14.3f}"
            + f" {statistics.median(warm['cpsat']) / statistics.median(warm['greedy']):>17.0f}x"
        )
    r = np.array(ratios_all)
    print(f"# greedy/opt over {r.size} instances: min {r.min():.3f}, p10 {np.percentile(r, 10):.3f}, "
          f"median {np.median(r):.3f}, mean {r.mean():.3f}; optimal in {np.mean(r > 1 - 1e-9):.0%}")


if __name__ == "__main__":
    main()
