"""Greedy (Algorithm 2) vs CP-SAT vs HiGHS vs Pyomo on random set packing, N = M growing.

Runtimes are medians over instances x repeats, measured side by side in one run through
``optsched.solve`` (verification off); ratios are against CP-SAT in the same run. Two
timings per backend: interleaved (every backend once per round, so load and cold CPU caches
hit all alike; a microsecond kernel called right after a millisecond solver runs cold) and
back to back (the backend's repeats in a row, warm: how a policy loop calls it). Also prints
the distribution of greedy's objective / optimum.

    python benchmarks/bench_set_packing.py [--sizes 10 20 50 100 200] [--instances 5] [--repeats 3]

``--seam N`` (default 50) then times greedy against CP-SAT (one worker) the way a caller pays
for them: ``optsched.solve`` with verification on, fresh instances of
``generate("set_packing", N)``, each backend's ``Result.runtime_s`` (the backend call) and the
wall time of the whole call, interleaved (``--seeds`` x 3 instances, greedy right after CP-SAT:
cold caches) and back to back (warm: each backend over a block of ``--seeds`` x 3 / 2 fresh
instances in a row, as a policy's loop calls it, the blocks' order swapped for the second half;
until 2026-11-27 three instances a block, so the median was near the block's cold first call),
medians and their ratio; and where greedy's whole call goes (``prepare``, the
backend call, the re-check of ``finish``: the model's compiled ``audit``; in parentheses the
numpy ``violations`` and ``objective`` it replaces). Measured
(2 cores; ``--seam 50 --seeds 60``; 2026-11-26, two runs beside commit 67022cc): runtime_s
CP-SAT / greedy 151-159x interleaved, 415-420x back to back; whole call 68-69x interleaved,
189x back to back (67022cc: 56-58x / 139x). The whole call's ~14.5 us warm: admits ~1.3 us,
the backend call ~4.4 us (kernel ~2.8 us on instances not in cache, the result ~0.9 us), the
compiled audit ~2 us (its kernel ~1.4 us), the result's one copy ~0.7 us, the seam's rules and
solve()'s reuse ~3 us; cold caches add ~25 us to any call right after a CP-SAT solve.
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
    ap.add_argument("--seam", type=int, default=50, help="N = M of the verified-call comparison (0: skip)")
    ap.add_argument("--seeds", type=int, default=60, help="instances of the verified-call comparison")
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


    if args.seam:
        seam_comparison(args.seam, args.seeds)


def seam_comparison(n: int, seeds: int) -> None:
    """Greedy vs CP-SAT through ``optsched.solve`` with verification (module docstring)."""
    import time

    from optsched.generators import generate
    from optsched.solve import prepare

    backends = ("greedy", "cpsat")
    for b in backends:  # imports and compiled kernels outside the timings
        optsched.solve(generate("set_packing", n, np.random.default_rng(10**6)), b)
    runtime: dict[str, dict[str, list[float]]] = {mode: {b: [] for b in backends} for mode in ("interleaved", "warm")}
    wall: dict[str, dict[str, list[float]]] = {mode: {b: [] for b in backends} for mode in ("interleaved", "warm")}

    def timed(model: SetPacking, b: str, mode: str) -> None:
        start = time.perf_counter()
        res = optsched.solve(model, b)
        wall[mode][b].append(time.perf_counter() - start)
        runtime[mode][b].append(res.runtime_s)
        assert res.ok, (b, res.message)

    for seed in range(seeds):
        models = [generate("set_packing", n, np.random.default_rng(seed)) for _ in range(3)]  # fresh: nothing cached
        for model in models:
            for b in backends:
                timed(model, b, "interleaved")
    # back to back, as a policy's loop calls its backend: each backend over its own block of fresh
    # instances in a row (the first call of a block runs on caches the other backend filled), the
    # blocks' order swapped halfway so drift in the machine's speed hits both alike
    warm_models = [generate("set_packing", n, np.random.default_rng([seed, 1])) for seed in range(3 * seeds)]
    half = len(warm_models) // 2
    for order, part in ((backends, warm_models[:half]), (backends[::-1], warm_models[half:])):
        for b in order:
            for model in part:
                timed(model, b, "warm")
    print(f"\n# optsched.solve with verification, N = M = {n}, {seeds} instances (medians; CP-SAT one worker)")
    print(f"{'':<12}{'greedy us':>11}{'cpsat ms':>10}{'cpsat/greedy':>14}")
    for mode in ("interleaved", "warm"):
        for label, data in (("runtime_s", runtime[mode]), ("whole call", wall[mode])):
            g, c = statistics.median(data["greedy"]), statistics.median(data["cpsat"])
            print(f"{mode[:6] + ' ' + label:<22}{1e6 * g:>9.1f}{1e3 * c:>10.3f}{c / g:>12.0f}x")
    # where greedy's whole call goes (warm)
    models = [generate("set_packing", n, np.random.default_rng(s)) for s in range(2000)]
    prepared = prepare("set_packing", "greedy")
    backend = prepared.backend
    chosen = [backend.run(m, time_limit=None, options={}, state=None).solution for m in models]
    parts = {
        "optsched.solve": lambda m, x: optsched.solve(m, "greedy"),
        "  prepare": lambda m, x: prepare(m, "greedy"),
        "  Prepared.solve": lambda m, x: prepared.solve(m),
        "    admits": lambda m, x: backend.admits(m),
        "    backend.run": lambda m, x: backend.run(m, time_limit=None, options={}, state=None),
        "    audit": lambda m, x: m.audit(x, tol=1e-6),
        "  (violations": lambda m, x: m.violations(x),
        "  (objective": lambda m, x: m.objective(x),
    }
    print(f"# greedy's whole call, warm (us per call over {len(models)} instances)")
    for label, fn in parts.items():
        start = time.perf_counter()
        for m, x in zip(models, chosen):
            fn(m, x)
        print(f"{label:<20}{1e6 * (time.perf_counter() - start) / len(models):>8.2f}")


if __name__ == "__main__":
    main()
