"""Algorithm 2 (``dp``, the whole budget family in one table) vs exact backends per budget.

Instances are ESDP's P4(s, t) family at slot t (default 2000), built as in the paper's
Section 4 defaults: |E| channels (|L| x |R| x edge probability = 8 x 40 x 0.1 = 32 by default),
K = 3 resources with requirements A in {1, 2}, capacity c_k = ceil(alpha * sum_e A[k, e])
(alpha = 0.5, the rule of optsched.esdp.env), v_hat ~ U[0, 1], channel counts n_e ~ U{1..t/|E|},
sigma2_hat = g(t) / (2 n_e), m = ceil(alpha |E|), delta(t) = 1/(ln(ln(t+1)+1)+1),
xi = ceil(m / delta), S = xi * m, Upsilon = ceil(xi v_hat), Sigma2 = ceil(xi^2 sigma2_hat).

Columns (medians of repeats, all measured in this run through ``optsched.solve``, verify off):
  pareto, dense the whole family s = 0..S by one DP (``dp`` with method pareto / dense); the
                table sizes are the dense cells and the Pareto points actually stored;
  exact/s       one P4(s) by HiGHS and by CP-SAT (median over sampled budgets s);
  per-budget    (S+1) x exact/s of the faster of the two: "one exact solve per budget";
                measured in full for rows marked '*', otherwise estimated from the sample;
  reuse         ``budget_exact`` with reuse (skips budgets an optimum already covers), measured;
  ratios        per-budget / pareto, reuse / pareto, dense / pareto.
Where the dense table exceeds --max-cells its column says so.

    python benchmarks/bench_budget_dp.py [--repeats 3] [--sample 12] [--t 2000]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

import optsched
from optsched.models.budget_family import BudgetFamily
from optsched.result import Status
from optsched.solvers.budget_dp import plan_budget_family

# (|E|, capacity factor alpha_c, measure the per-budget loop in full)
ROWS = [(16, 0.5, True), (32, 0.5, True), (48, 0.5, False), (64, 0.5, False),
        (32, 0.25, False), (32, 0.75, False), (32, 1.0, False)]


def family_at_slot(rng: np.random.Generator, n_edges: int, alpha_c: float, t: int, alpha: float = 0.5) -> BudgetFamily:
    A = rng.integers(1, 3, (3, n_edges))
    capacity = np.maximum(1, np.ceil(alpha_c * A.sum(axis=1))).astype(int)
    m = max(1, math.ceil(alpha * n_edges))
    delta = 1.0 / (math.log(math.log(t + 1) + 1) + 1)
    xi = math.ceil(m / delta)
    g = math.log(t + 1) + 4 * math.log(math.log(t + 1) + 1) * m
    counts = rng.integers(1, max(2, t // n_edges), n_edges)
    v_hat = rng.random(n_edges)
    upsilon = np.ceil(xi * v_hat)
    sigma2 = np.ceil(xi**2 * g / (2 * counts))
    return BudgetFamily(sigma2, A, capacity, upsilon, xi * m)


def timed(model, backend: str, repeats: int, **options) -> tuple[float, object]:
    runs = [optsched.solve(model, backend, verify=False, **options) for _ in range(repeats)]
    return statistics.median(r.runtime_s for r in runs), runs[-1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sample", type=int, default=12, help="budgets sampled for exact/s")
    ap.add_argument("--t", type=int, default=2000)
    ap.add_argument("--max-cells", type=float, default=1.5e9)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    for m in ("pareto", "dense"):  # compile / load the numba cache
        optsched.solve(BudgetFamily([1.0], [[1]], [1], [1], 1), "dp", method=m)

    print(f"# ESDP budget family at t = {args.t}; medians of {args.repeats} repeats "
          f"({max(1, args.repeats // 2)} for dense tables over 1e8 cells); K = 3")
    print(f"{'|E|':>4} {'c/sumA':>6} {'c_k':>10} {'S':>5} {'dense cells':>11} {'pareto pts':>10} "
          f"{'pareto s':>8} {'dense s':>8} {'highs/s':>8} {'cpsat/s':>8} {'per-budget s':>13} {'reuse s':>8} "
          f"{'#solves':>7} {'per-budget/pareto':>17} {'reuse/pareto':>12} {'dense/pareto':>12}")
    for n_edges, alpha_c, full in ROWS:
        fam = family_at_slot(rng, n_edges, alpha_c, args.t)
        S = fam.max_budget
        plan = plan_budget_family(fam.values, fam.weights, fam.capacity, fam.budget_coeffs, S)
        methods = ["pareto"] + (["dense"] if plan.dense_cells <= args.max_cells else [])
        runs: dict[str, list] = {m: [] for m in methods}
        repeats = args.repeats if plan.dense_cells < 1e8 else max(1, args.repeats // 2)
        for _ in range(repeats):  # interleaved, so load from other processes hits both alike
            for m in methods:
                runs[m].append(optsched.solve(fam, "dp", verify=False, method=m, max_table_cells=args.max_cells))
        dp = runs["pareto"][-1]
        assert dp.status is Status.OPTIMAL
        pareto_s = statistics.median(r.runtime_s for r in runs["pareto"])
        dense_s = None
        if "dense" in runs:
            dense_s = statistics.median(r.runtime_s for r in runs["dense"])
            assert runs["dense"][-1].extra["values"] == dp.extra["values"]
        budgets = np.unique(np.linspace(0, S, args.sample).astype(int))
        per_s = {}
        for be in ("highs", "cpsat"):
            times = []
            for s in budgets:
                dt, r = timed(fam.member(int(s)), be, 1)
                times.append(dt)
                if r.status is Status.OPTIMAL:  # cross-check while we are here
                    assert abs(r.objective - dp.extra["values"][s]) <= 1e-6 * max(1.0, r.objective), (be, s)
                else:
                    assert r.status is Status.INFEASIBLE and dp.extra["values"][s] is None
            per_s[be] = statistics.median(times)
        best = min(per_s, key=per_s.get)
        if full:
            start = time.perf_counter()
            loop = optsched.solve(fam, "budget_exact", inner=best, reuse=False, verify=False)
            per_budget, mark = time.perf_counter() - start, "*"
            assert loop.status is Status.OPTIMAL and loop.iterations == S + 1
            same(dp.extra["values"], loop.extra["values"])
        else:
            per_budget, mark = per_s[best] * (S + 1), " "
        reuse_s, reuse = timed(fam, "budget_exact", 1, inner=best)
        same(dp.extra["values"], reuse.extra["values"])
        cap = "x".join(str(int(c)) for c in fam.capacity)
        dense_col = f"{dense_s:8.3f}" if dense_s is not None else f"{'too big':>8}"
        dense_ratio = f"{dense_s / pareto_s:.1f}" if dense_s is not None else "-"
        print(f"{n_edges:4d} {alpha_c:6.2f} {cap:>10} {S:5d} {plan.dense_cells:11.2e} {dp.extra['table_cells']:10.2e} "
              f"{pareto_s:8.3f} {dense_col} {per_s['highs']:8.4f} {per_s['cpsat']:8.4f} {per_budget:12.2f}{mark} "
              f"{reuse_s:8.2f} {reuse.iterations:7d} {per_budget / pareto_s:17.1f} {reuse_s / pareto_s:12.1f} "
              f"{dense_ratio:>12}", flush=True)
    print("* per-budget loop measured in full (budget_exact, reuse=False); otherwise (S+1) x median exact/s.")


def same(a: list, b: list) -> None:
    for x, y in zip(a, b, strict=True):
        assert (x is None) == (y is None) and (x is None or abs(x - y) <= 1e-6 * max(1.0, abs(x)))


if __name__ == "__main__":
    main()
