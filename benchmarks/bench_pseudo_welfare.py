"""P3 of paper 002 per job: ``kkt`` (exact) vs ``cvxpy`` (Clarabel, exponential cone) vs
``alm`` (Algorithm 2; Table II defaults and the CONVERGENT settings) as |R_n| grows.

    python benchmarks/bench_pseudo_welfare.py            # default, ~2-3 minutes
    python benchmarks/bench_pseudo_welfare.py --full     # more jobs and sizes

Per size: median runtimes over the jobs (each job timed as the median of repeats), the ratio
cvxpy/kkt and alm/kkt measured side by side in the same run, the largest relative objective
gap to kkt, and ALM's outer/inner iteration counts and convergence rate. Jobs are Section IV
draws (a ~ U[1,3], beta ~ U[0.1,0.5], C ~ N(20,2), xbar ~ N(7,1)), rho ~ N(18,3) scaled with
|R_n| / 24 so (4) stays binding, usage levels at random, utility kinds mixed.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import optsched
from optsched.models.pseudo_welfare import PseudoWelfare
from optsched.onsocmax import utilities
from optsched.solvers.pseudo_welfare_alm import CONVERGENT


def job(rng: np.random.Generator, n: int, kind: str) -> PseudoWelfare:
    cap = np.abs(rng.normal(20, 2, n)) + 1
    return PseudoWelfare(
        utility=kind, a=rng.uniform(1, 3, n), beta=rng.uniform(0.1, 0.5, n), capacity=cap,
        xbar=np.abs(rng.normal(7, 1, n)), usage=cap * rng.uniform(0, 0.9, n),
        rho=float(abs(rng.normal(18, 3))) * max(1.0, n / 24),
    )


def timed(model: PseudoWelfare, backend: str, repeats: int, **options) -> tuple[float, optsched.Result]:
    times, result = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        result = optsched.solve(model, backend, **options)
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args()
    sizes = [4, 8, 16, 32, 64, 128, 256] if args.full else [4, 8, 16, 32, 64, 128]
    alm_max = 64 if args.full else 32
    jobs_per = 9 if args.full else 6
    rng = np.random.default_rng(args.seed)
    optsched.solve(job(rng, 3, "log"), "cvxpy")  # import and warm cvxpy outside the timings
    header = (f"{'|R_n|':>5} {'kkt ms':>8} {'cvxpy ms':>9} {'cvx/kkt':>8} {'gap cvx':>8} "
              f"{'almII ms':>9} {'II/kkt':>7} {'gap II':>8} {'II conv':>7} {'II outer':>8} "
              f"{'almC ms':>8} {'C/kkt':>7} {'gap C':>8} {'C conv':>6} {'C outer':>7} {'C inner':>7}")
    print(header)
    for n in sizes:
        rows = {k: [] for k in ("kkt", "cvx", "ratio_cvx", "gap_cvx", "alm2", "ratio2", "gap2", "conv2", "out2",
                                "almc", "ratioc", "gapc", "convc", "outc", "innc")}
        for j in range(jobs_per):
            m = job(rng, n, utilities.KINDS[j % 3])
            t_k, r_k = timed(m, "kkt", 7)
            t_c, r_c = timed(m, "cvxpy", 3)
            rows["kkt"].append(t_k)
            rows["cvx"].append(t_c)
            rows["ratio_cvx"].append(t_c / t_k)
            rows["gap_cvx"].append(rel(r_c.objective, r_k.objective))
            if n <= alm_max:
                t2, r2 = timed(m, "alm", 1)
                tc, rc = timed(m, "alm", 1, **CONVERGENT)
                rows["alm2"].append(t2)
                rows["ratio2"].append(t2 / t_k)
                rows["gap2"].append(rel(r2.objective, r_k.objective))
                rows["conv2"].append(bool(r2.extra["converged"]))
                rows["out2"].append(r2.extra["outer"])
                rows["almc"].append(tc)
                rows["ratioc"].append(tc / t_k)
                rows["gapc"].append(rel(rc.objective, r_k.objective))
                rows["convc"].append(bool(rc.extra["converged"]))
                rows["outc"].append(rc.extra["outer"])
                rows["innc"].append(rc.extra["inner"])
        med = {k: (statistics.median(v) if v else float("nan")) for k, v in rows.items()}
        line = (f"{n:>5} {1e3 * med['kkt']:>8.2f} {1e3 * med['cvx']:>9.2f} {med['ratio_cvx']:>8.1f} "
                f"{max(rows['gap_cvx']):>8.1e} ")
        if rows["alm2"]:
            line += (f"{1e3 * med['alm2']:>9.1f} {med['ratio2']:>7.0f} {max(rows['gap2']):>8.1e} "
                     f"{sum(rows['conv2'])}/{len(rows['conv2']):<5} {med['out2']:>8.0f} "
                     f"{1e3 * med['almc']:>8.1f} {med['ratioc']:>7.0f} {max(rows['gapc']):>8.1e} "
                     f"{sum(rows['convc'])}/{len(rows['convc']):<4} {med['outc']:>7.0f} {med['innc']:>7.0f}")
        else:
            line += f"{'(alm skipped above |R_n| = ' + str(alm_max) + ')':>40}"
        print(line, flush=True)
    print("\nkkt ms / cvxpy ms: median wall time of optsched.solve per job (each job: median of 7 / 3 runs);")
    print("cvx/kkt, II/kkt, C/kkt: median per-job runtime ratios; gap: max relative objective gap to kkt;")
    print("alm II = Table II defaults (max_outer 200); alm C = CONVERGENT settings; conv = jobs where step 9-11 returned.")


if __name__ == "__main__":
    main()
