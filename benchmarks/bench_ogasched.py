"""OGASched (paper 003) end-to-end timings.

Paper: T = 8000 at the default scale took one hour; the large scale (|L| = 100, |R| = 1024,
K = 6, T = 10000) took 15 hours, on a 48-core server. Targets here: <= 10 s and <= 60 s per
run of the five policies, and <= 10 s CPU for the ``large`` preset end to end.

Prints, for each scale, the wall and CPU seconds of every policy over the horizon (median of
``--repeats`` runs), the per-slot cost of OGASched's three steps (gradient (30), projection
(32), reward (7)) side by side with their ratio to the projection, and y* of (10) by the
first-order ``stationary_alm`` backend and by cvxpy/Clarabel, interleaved (``--repeats``
times each, median CPU; cvxpy imported and the numba kernels compiled before timing), with
the certified duality gap and the objective difference. The large scale is run for ``--large-slots`` slots and scaled to
T = 10000 (per-slot costs do not depend on t), to keep the default run under 3 minutes;
pass ``--large-slots 10000`` for the full horizon.

    python benchmarks/bench_ogasched.py [--repeats 3] [--large-slots 1000] [--preset-large]
    python benchmarks/bench_ogasched.py --y-star-scenarios 4 [--repeats 2]

``--preset-large`` also runs ``optsched run ogasched --preset large`` end to end (five policies
over T = 10000, y* of (10), CSVs and plots) in this process and reports its wall and CPU time.
The load average is printed with every scale: the 2-core machine is shared, so wall time
mostly measures the other jobs and the CPU column is the comparable one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from optsched.ogasched.baselines import BASELINES, BaselinePolicy
from optsched.ogasched.env import SchedulingEnv
from optsched.ogasched.offline import stationary_model
from optsched.ogasched.policy import OGASched
from optsched.ogasched.scenario import synthetic_scenario
from optsched.ogasched.utilities import gradient, reward_parts
from optsched.policy import evaluate
from optsched.solvers.projection_fast import project_capacity

SCALES = {
    "default (|L|=10, |R|=128, K=6)": dict(n_ports=10, n_nodes=128, contention=10.0),
    "large (|L|=100, |R|=1024, K=6)": dict(n_ports=100, n_nodes=1024, contention=5.0),
}


def timed(fn, repeats: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def step_costs(scn, repeats: int = 200) -> dict[str, float]:
    rng = np.random.default_rng(1)
    y = rng.random((scn.n_edges, scn.n_resources)) * scn.upper * 0.5
    x = (rng.random(scn.n_ports) < 0.7).astype(float)
    z = (y + 25.0 * gradient(scn, x, y)).reshape(-1)
    up, cap = scn.upper.reshape(-1), scn.capacity.reshape(-1)
    ys = [y * (1 + 1e-3 * i) for i in range(repeats)]  # fresh arrays: no reuse of the last reward's k*
    fresh = iter(ys * 3)

    def one_slot() -> None:  # the environment's reward, then OGASched's gradient at the same y
        reward_parts(scn, x, y)
        gradient(scn, x, y)

    steps = {
        "gradient (30)": lambda: gradient(scn, x, next(fresh)),
        "projection (32)": lambda: project_capacity(z, up, scn.group, cap),
        "reward (7)": lambda: reward_parts(scn, x, next(fresh)),
        "reward + gradient, same y (one slot of OGASched)": one_slot,
    }
    out = {}
    for name, fn in steps.items():
        c = time.process_time()
        for _ in range(repeats):
            fn()
        out[name] = (time.process_time() - c) / repeats * 1e6
    return out


def offline_side_by_side(scn, totals, repeats: int) -> None:
    """y* of (10) by both backends, interleaved; CPU medians, their ratio, gap and agreement."""
    import cvxpy  # noqa: F401  (its import, ~2 s, is not solve time)

    import optsched

    model = stationary_model(scn, totals)
    optsched.solve(model, "stationary_alm", max_outer=1)  # compile the kernels
    cpu: dict[str, list[float]] = {"stationary_alm": [], "cvxpy": []}
    results = {}
    for _ in range(repeats):
        for backend in cpu:
            c = time.process_time()
            results[backend] = optsched.solve(model, backend)
            cpu[backend].append(time.process_time() - c)
    alm, ref = results["stationary_alm"], results["cvxpy"]
    med = {b: statistics.median(v) for b, v in cpu.items()}
    print(f"y* of (10), {model.n_vars} variables: stationary_alm {med['stationary_alm']:.3f} s CPU "
          f"({alm.termination.value}, certified gap {alm.extra['relative_gap']:.1e}, {alm.iterations} outer / "
          f"{alm.extra['inner_steps']} projected steps), cvxpy {med['cvxpy']:.3f} s CPU ({ref.termination.value}); "
          f"cvxpy / first order = {med['cvxpy'] / med['stationary_alm']:.1f}x; "
          f"objectives differ by {abs(alm.objective - ref.objective) / abs(ref.objective):.1e} relative")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--large-slots", type=int, default=1000)
    ap.add_argument("--preset-large", action="store_true", help="also run the large preset end to end")
    ap.add_argument("--y-star-scenarios", type=int, default=0, metavar="K",
                    help="only y* of (10), both backends, on K large scenarios (seeds 0..K-1, binomial arrival "
                         "totals over T = 10,000)")
    args = ap.parse_args()
    if args.y_star_scenarios:
        for seed in range(args.y_star_scenarios):
            scn = synthetic_scenario(np.random.default_rng(seed), **SCALES["large (|L|=100, |R|=1024, K=6)"])
            print(f"seed {seed}: ", end="")
            offline_side_by_side(scn, np.random.default_rng(seed).binomial(10_000, 0.7, scn.n_ports).astype(float),
                                 args.repeats)
        return
    horizons = {"default (|L|=10, |R|=128, K=6)": 8000, "large (|L|=100, |R|=1024, K=6)": args.large_slots}
    targets = {"default (|L|=10, |R|=128, K=6)": (8000, 10.0), "large (|L|=100, |R|=1024, K=6)": (10000, 60.0)}
    # import numba and load the cached placement and projection kernels once, outside the timings
    warm = synthetic_scenario(np.random.default_rng(0), n_nodes=8)
    evaluate(SchedulingEnv(warm, horizon=2), BaselinePolicy("BINPACKING"), 2, seed=0)
    evaluate(SchedulingEnv(warm, horizon=2), OGASched(), 2, seed=0)
    for label, kw in SCALES.items():
        scn = synthetic_scenario(np.random.default_rng(0), **kw)
        T = horizons[label]
        T_full, target = targets[label]
        scale = T_full / T
        print(f"\n== {label}: {scn.n_edges} channels, {scn.n_edges * scn.n_resources} variables; "
              f"run T = {T}, reported for T = {T_full}{' (scaled)' if scale != 1 else ''}; "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'policy':<12}{'wall s':>10}{'CPU s':>10}{'CPU / OGASched':>16}")
        rows = {}
        env = SchedulingEnv(scn, horizon=T)
        for pol in [OGASched(), *(BaselinePolicy(n) for n in BASELINES)]:
            wall, cpu = timed(lambda: evaluate(env, pol, T, seed=1), args.repeats)
            rows[pol.name] = (wall * scale, cpu * scale)
        for name, (wall, cpu) in rows.items():
            print(f"{name:<12}{wall:>10.2f}{cpu:>10.2f}{cpu / rows['OGASched'][1]:>16.2f}")
        total_wall = sum(w for w, _ in rows.values())
        total_cpu = sum(c for _, c in rows.values())
        print(f"{'all five':<12}{total_wall:>10.2f}{total_cpu:>10.2f}")
        print(f"OGASched target <= {target:.0f} s: wall {rows['OGASched'][0]:.2f} s, CPU {rows['OGASched'][1]:.2f} s")
        costs = step_costs(scn)
        print(f"{'OGASched step':<50}{'CPU us/slot':>12}{'/ projection':>14}")
        for name, us in costs.items():
            print(f"{name:<50}{us:>12.1f}{us / costs['projection (32)']:>14.2f}")
        offline_side_by_side(scn, env.arrivals.sum(axis=0), args.repeats)
        print(f"load average {os.getloadavg()[0]:.1f}")
    if args.preset_large:
        from optsched.papers import get_paper

        exp = get_paper("ogasched")
        cfg = exp.make_config(preset="large")
        load0 = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as out:
            wall, cpu = timed(lambda: exp.run(cfg, out), 1)
        print(f"\n== --preset large end to end (5 policies, T = {cfg.horizon}, y*, CSV + PNG): "
              f"wall {wall:.1f} s, CPU {cpu:.1f} s (target <= 10 s CPU); load average {load0:.1f} -> "
              f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
