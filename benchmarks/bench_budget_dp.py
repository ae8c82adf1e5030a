"""Algorithm 2 (``dp``, the whole budget family in one table) vs exact backends per budget.

Instances are ESDP's P4(s, t) family at slot t (default 2000), built as in the paper's
Section 4 defaults: |E| channels (|L| x |R| x edge probability = 8 x 40 x 0.1 = 32 by default),
K = 3 resources with requirements A in {1, 2}, capacity c_k = ceil(alpha * sum_e A[k, e])
(alpha = 0.5, the rule of optsched.esdp.env), v_hat ~ U[0, 1], channel counts n_e ~ U{1..t/|E|},
sigma2_hat = g(t) / (2 n_e), m = ceil(alpha |E|), delta(t) = 1/(ln(ln(t+1)+1)+1),
xi = ceil(m / delta), S = xi * m, Upsilon = ceil(xi v_hat), Sigma2 = ceil(xi^2 sigma2_hat).

Columns (medians of repeats, all measured in this run through ``optsched.solve``, verify off;
CPU seconds of the solve, with os.getloadavg() printed per row since the machine is shared):
  reach         the whole family s = 0..S by ``dp`` (default method: Pareto fronts on the
                capacity cells visited from the root, reused pools); its points stored;
  pareto, dense the same by the previous methods (fronts on the whole capacity box; the
                table as printed, one entry per s); the dense table size;
  exact/s       one P4(s) by HiGHS and by CP-SAT (median over sampled budgets s);
  per-budget    (S+1) x exact/s of the faster of the two: "one exact solve per budget";
                measured in full for rows marked '*', otherwise estimated from the sample;
  reuse         ``budget_exact`` with reuse (skips budgets an optimum already covers), measured;
  ratios        per-budget / reach, reuse / reach, pareto / reach, dense / reach.
Columns say "skip" where the table exceeds --max-cells (dense) or the box exceeds
--pareto-box (pareto), and where the per-budget estimate is all that is run.

    python benchmarks/bench_budget_dp.py [--repeats 3] [--sample 12] [--t 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import optsched
from optsched.models.budget_family import BudgetFamily
from optsched.result import Termination
from optsched.models.budget_family import esdp_budget_family as family_at_slot  # P4(s, t) at slot t
from optsched.solvers.budget_dp import plan_budget_family

# (|E|, capacity factor alpha_c, measure the per-budget loop in full)
ROWS = [(16, 0.5, True), (32, 0.5, True), (48, 0.5, False), (64, 0.5, False), (80, 0.5, False),
        (96, 0.5, False), (32, 0.25, False), (32, 0.75, False), (32, 1.0, False)]


def timed(model, backend: str, repeats: int, **options) -> tuple[float, object, float]:
    """(median CPU s, last result, median wall s) of ``repeats`` solves."""
    runs = []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        r = optsched.solve(model, backend, verify=False, **options)
        runs.append((time.process_time() - c0, r, time.perf_counter() - w0))
    return statistics.median(t for t, _, _ in runs), runs[-1][1], statistics.median(w for _, _, w in runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sample", type=int, default=12, help="budgets sampled for exact/s")
    ap.add_argument("--t", type=int, default=2000)
    ap.add_argument("--max-cells", type=float, default=1.5e9)
    ap.add_argument("--pareto-box", type=float, default=3e6, help="largest capacity box run by method pareto")
    ap.add_argument("--reuse-upto", type=int, default=64, help="largest |E| run by budget_exact with reuse")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    for m in ("reach", "pareto", "dense"):  # compile / load the numba cache
        optsched.solve(BudgetFamily([1.0], [[1]], [1], [1], 1), "dp", method=m)

    print(f"# ESDP budget family at t = {args.t}; CPU s, medians of {args.repeats} repeats "
          f"({max(1, args.repeats // 2)} for tables over 1e8 cells); K = 3")
    print(f"{'|E|':>4} {'c/sumA':>6} {'c_k':>10} {'S':>5} {'dense cells':>11} {'reach pts':>10} "
          f"{'reach s':>8} {'pareto s':>8} {'dense s':>8} {'highs/s':>8} {'cpsat/s':>8} {'per-budget s':>13} "
          f"{'reuse s':>8} {'#solves':>7} {'per-budget/reach':>16} {'reuse/reach':>11} {'pareto/reach':>12} "
          f"{'dense/reach':>11} {'per-budget/reach wall':>21}  load")
    for n_edges, alpha_c, full in ROWS:
        fam = family_at_slot(rng, n_edges, alpha_c, args.t)
        S = fam.max_budget
        plan = plan_budget_family(fam.values, fam.weights, fam.capacity, fam.budget_coeffs, S, max_cells=args.max_cells)
        methods = ["reach"] + (["pareto"] if plan.capacity_cells <= args.pareto_box else []) + \
            (["dense"] if plan.dense_cells <= args.max_cells else [])
        runs: dict[str, list] = {m: [] for m in methods}
        repeats = args.repeats if plan.dense_cells < 1e8 else max(1, args.repeats // 2)
        for _ in range(repeats):  # interleaved, so load from other processes hits all alike
            for m in methods:
                runs[m].append(timed(fam, "dp", 1, method=m, max_table_cells=args.max_cells))
        dp = runs["reach"][-1][1]
        assert dp.termination is Termination.OPTIMAL, dp.extra
        sec = {m: statistics.median(t for t, _, _ in runs[m]) for m in methods}
        reach_wall = statistics.median(w for _, _, w in runs["reach"])
        for m in methods[1:]:
            assert runs[m][-1][1].extra["values"] == dp.extra["values"], m
        budgets = np.unique(np.linspace(0, S, args.sample).astype(int))
        per_s, per_s_wall = {}, {}
        for be in ("highs", "cpsat"):
            times = []
            for s in budgets:
                dt, r, wall = timed(fam.member(int(s)), be, 1)
                times.append((dt, wall))
                if r.termination is Termination.OPTIMAL:  # cross-check while we are here
                    assert abs(r.objective - dp.extra["values"][s]) <= 1e-6 * max(1.0, r.objective), (be, s)
                else:
                    assert r.termination is Termination.INFEASIBLE and dp.extra["values"][s] is None
            per_s[be] = statistics.median(t for t, _ in times)
            per_s_wall[be] = statistics.median(w for _, w in times)
        best = min(per_s, key=per_s.get)
        if full:
            per_budget, loop, per_budget_wall = timed(fam, "budget_exact", 1, inner=best, reuse=False)
            mark = "*"
            assert loop.termination is Termination.OPTIMAL and loop.iterations == S + 1, (loop.termination, loop.iterations, S, loop.extra.get("message"))
            same(dp.extra["values"], loop.extra["values"])
        else:
            per_budget, per_budget_wall, mark = per_s[best] * (S + 1), per_s_wall[best] * (S + 1), " "
        if n_edges <= args.reuse_upto:
            reuse_s, reuse, _ = timed(fam, "budget_exact", 1, inner=best)
            same(dp.extra["values"], reuse.extra["values"])
            reuse_cols = f"{reuse_s:8.2f} {reuse.iterations:7d}"
            reuse_ratio = f"{reuse_s / sec['reach']:11.1f}"
        else:
            reuse_cols, reuse_ratio = f"{'skip':>8} {'-':>7}", f"{'-':>11}"
        cap = "x".join(str(int(c)) for c in fam.capacity)

        def col(m: str, width: int = 8) -> str:
            return f"{sec[m]:{width}.3f}" if m in sec else f"{'skip':>{width}}"

        def ratio(m: str, width: int) -> str:
            return f"{sec[m] / sec['reach']:{width}.1f}" if m in sec else f"{'-':>{width}}"

        print(f"{n_edges:4d} {alpha_c:6.2f} {cap:>10} {S:5d} {plan.dense_cells:11.2e} {dp.extra['table_cells']:10.2e} "
              f"{col('reach')} {col('pareto')} {col('dense')} {per_s['highs']:8.4f} {per_s['cpsat']:8.4f} "
              f"{per_budget:12.2f}{mark} {reuse_cols} {per_budget / sec['reach']:16.1f} {reuse_ratio} "
              f"{ratio('pareto', 12)} {ratio('dense', 11)} {per_budget_wall / reach_wall:21.1f}  {'/'.join(f'{x:.1f}' for x in os.getloadavg())}",
              flush=True)
    print("* per-budget loop measured in full (budget_exact, reuse=False); otherwise (S+1) x median exact/s.")


def same(a: list, b: list) -> None:
    for x, y in zip(a, b, strict=True):
        assert (x is None) == (y is None) and (x is None or abs(x - y) <= 1e-6 * max(1.0, abs(x)))


if __name__ == "__main__":
    main()
