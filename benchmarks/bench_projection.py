"""Projection (32) of paper 003: the exact `fast` kernel against np.sort and cvxpy, and how
Algorithm 1 as printed (`paper`) compares with the exact answer.

    python benchmarks/bench_projection.py            # default, about 2 minutes on 2 cores
    python benchmarks/bench_projection.py --sizes 1000 10000 --cvxpy-max 10000 --paper 500

Part 1 (speed): for n = 10^3 .. 10^6 variables in groups of about 10 (OGASched's (r, k) pairs
with |L_r| ports) and in groups of about 1000, the median CPU time over repeats of the compiled
kernel ``project_capacity`` (after its first call, which imports numba and loads the cached
machine code; timed separately), of ``np.sort`` on the same z, and of ``solve(model, "cvxpy")`` (OSQP at
the model's default tolerances; only up to --cvxpy-max variables), all measured side by side.
Targets from issue 3: fast within 5x of np.sort, and >= 50x faster than cvxpy.

Part 2 (Algorithm 1 as printed): on random instances of several kinds, how often the paper's
projection is infeasible or suboptimal, and by how much, against the exact projection.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Callable

import numpy as np

import optsched
from optsched.models.capacity_projection import projection_instance as speed_instance  # z, caps, groups of ~group_size
from optsched.models.capacity_projection import CapacityProjection
from optsched.solvers.projection_fast import project_capacity
from optsched.solvers.projection_paper import paper_projection


def median_time(fn: Callable[[], object], repeats: int, min_batch_s: float = 0.05) -> float:
    """Median over ``repeats`` of the CPU time of one call (``time.process_time``: the
    machine is shared, so wall time would mostly measure the other jobs). Fast calls are
    timed in batches of at least ``min_batch_s`` so timer resolution does not matter."""
    start = time.process_time()
    fn()
    once = time.process_time() - start
    batch = max(1, int(min_batch_s / max(once, 1e-7)))
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(batch):
            fn()
        times.append((time.process_time() - start) / batch)
    return float(np.median(times))


def first_call() -> tuple[float, float]:
    """Wall and CPU seconds of the first call: importing numba and loading the compiled kernel
    from its cache (or compiling it, on the very first run after a change)."""
    w, c = time.perf_counter(), time.process_time()
    project_capacity(np.array([1.0]), np.array([1.0]), np.array([0]), np.array([0.5]))
    return time.perf_counter() - w, time.process_time() - c


def speed_table(sizes: list[int], repeats: int, cvxpy_max: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    wall, cpu = first_call()
    print(f"first call (numba import + cached kernel): wall {wall:.2f} s, CPU {cpu:.2f} s")
    print("Part 1: CPU milliseconds per call (median of repeats) and ratios, measured side by side")
    header = f"{'n':>8} {'G':>7} {'fast ms':>9} {'sort ms':>9} {'fast/sort':>9} {'cvxpy ms':>9} {'cvxpy/fast':>10} {'max|y-y_cvx|':>12}"
    print(header)
    print("-" * len(header))
    for n in sizes:
        for group_size in (10, 1000):
            m = speed_instance(rng, n, group_size)
            args = (m.z, m.upper, m.group, m.capacity)
            y = project_capacity(*args)  # warm-up
            assert not m.violations(y)
            t_fast = median_time(lambda: project_capacity(*args), repeats)
            t_sort = median_time(lambda: np.sort(m.z), repeats)
            cvx = ratio = diff = "-"
            if n <= cvxpy_max:
                results = []
                t_cvx = median_time(lambda: results.append(optsched.solve(m, "cvxpy")), max(1, repeats // 2))
                r = results[-1]
                cvx = f"{t_cvx * 1e3:9.1f}"
                ratio = f"{t_cvx / t_fast:10.0f}"
                diff = f"{np.abs(r.solution - y).max():12.1e}" if r.solution is not None else r.termination.value
            print(f"{n:>8} {m.n_groups:>7} {t_fast * 1e3:9.3f} {t_sort * 1e3:9.3f} {t_fast / t_sort:9.2f} {cvx:>9} "
                  f"{ratio:>10} {diff:>12}")


# --- Part 2: Algorithm 1 as printed ------------------------------------------------------------
def paper_instance(rng: np.random.Generator, kind: str) -> CapacityProjection:
    """One group of 2..10 members. Kinds: ``binding-equal`` (same a for every member, capacity
    binds), ``binding-unequal`` (a_l ~ U[0.2, 3]), ``nonbinding`` (capacity above
    sum clip(z, 0, a)), ``mixed`` (unequal a, capacity U[0, 1.5] * sum clip(z, 0, a))."""
    n = int(rng.integers(2, 11))
    upper = np.full(n, rng.uniform(0.2, 3.0)) if kind == "binding-equal" else rng.uniform(0.2, 3.0, n)
    load = 0.0
    while load <= 0.0:  # at least one z > 0, so that a capacity below the load binds
        z = rng.normal(1.0, 2.0, n)
        load = float(np.clip(z, 0, upper).sum())
    factor = {
        "binding-equal": rng.uniform(0.05, 0.95),
        "binding-unequal": rng.uniform(0.05, 0.95),
        "nonbinding": rng.uniform(1.05, 2.0),
        "mixed": rng.uniform(0.0, 1.5),
    }[kind]
    capacity = factor * load
    return CapacityProjection(z=z, upper=upper, group=np.zeros(n, int), capacity=[capacity])


def paper_table(count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    print(f"\nPart 2: Algorithm 1 as printed vs the exact projection, {count} one-group instances per kind")
    header = (f"{'kind':>16} {'exact':>7} {'infeasible':>10} {'med viol':>9} {'max viol':>9} "
              f"{'suboptimal':>10} {'med dist':>9} {'max dist':>9}")
    print(header)
    print("-" * len(header))
    for kind in ("binding-equal", "binding-unequal", "nonbinding", "mixed"):
        violation, distance = [], []
        for _ in range(count):
            m = paper_instance(rng, kind)
            y, _ = paper_projection(m.z, m.upper, m.group, m.capacity)
            exact = project_capacity(m.z, m.upper, m.group, m.capacity)
            # largest violated bound, relative to that bound (a_l or c_g)
            viol = max(float(np.max((y - m.upper) / np.maximum(m.upper, 1e-12))),
                       float(np.max((m.group_load(y) - m.capacity) / np.maximum(m.capacity, 1e-12))),
                       float(-y.min()))
            violation.append(viol)
            distance.append(float(np.linalg.norm(y - exact) / max(np.linalg.norm(m.z), 1e-12)))
        violation_a, distance_a = np.array(violation), np.array(distance)
        bad = violation_a > 1e-9
        sub = ~bad & (distance_a > 1e-9)
        ok = ~bad & ~sub

        def stat(values: np.ndarray, fn: Callable[[np.ndarray], float]) -> str:
            return f"{fn(values):9.3g}" if values.size else f"{'-':>9}"

        print(f"{kind:>16} {ok.mean():7.1%} {bad.mean():10.1%} {stat(violation_a[bad], np.median)} "
              f"{stat(violation_a[bad], np.max)} {sub.mean():10.1%} {stat(distance_a[sub], np.median)} "
              f"{stat(distance_a[sub], np.max)}")
    print("exact: within 1e-9 of the exact projection (relative distance). infeasible: some y_l > a_l or")
    print("the group over capacity; viol = the largest excess relative to its bound. suboptimal: feasible")
    print("but ||y - y*|| / ||z|| > 1e-9 (y* the exact projection); dist = that relative distance.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cvxpy-max", type=int, default=10_000, help="largest n solved with cvxpy")
    parser.add_argument("--paper", type=int, default=2000, help="instances per kind in part 2")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("load average at start: %.1f %.1f %.1f" % os.getloadavg())
    speed_table(args.sizes, args.repeats, args.cvxpy_max, args.seed)
    print("load average after part 1: %.1f %.1f %.1f" % os.getloadavg())
    paper_table(args.paper, args.seed)


if __name__ == "__main__":
    main()
