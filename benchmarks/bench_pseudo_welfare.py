"""P3 of paper 002 per job: ``kkt`` (exact) vs ``cvxpy`` (Clarabel, exponential cone) vs
``alm`` (Algorithm 2; Table II defaults and the CONVERGENT settings) as |R_n| grows.

    python benchmarks/bench_pseudo_welfare.py            # default, ~1 minute
    python benchmarks/bench_pseudo_welfare.py --full     # more jobs and sizes

Per size: median runtimes over the jobs (each job timed as the median of repeats; wall time
and process CPU time), the ratio cvxpy/kkt and alm/kkt measured side by side in the same run,
the largest relative objective gap to kkt, and ALM's outer/inner iteration counts and
convergence rate. ``kkt`` and ``cvxpy`` are timed through ``optsched.solve`` (model objective,
re-verification and result included); ``kernel`` is ``kkt_solve`` alone, ``evals`` its passes
over the units. Jobs are Section IV draws (a ~ U[1,3], beta ~ U[0.1,0.5], C ~ N(20,2),
xbar ~ N(7,1)), rho ~ N(18,3) scaled with |R_n| / 24 so (4) stays binding, usage levels at
random, utility kinds mixed. The load average is printed before and after (shared machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, Callable

import numpy as np

import optsched
from optsched.generators import pseudo_welfare_job as job  # a Section IV job over n units
from optsched.models.pseudo_welfare import PseudoWelfare
from optsched.onsocmax import utilities
from optsched.solvers.pseudo_welfare_alm import CONVERGENT
from optsched.solvers.pseudo_welfare_kkt import kkt_solve


def clock(fn: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """Median wall and CPU seconds of ``fn`` over ``repeats`` calls, and its last value."""
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        cpus.append(time.process_time() - c)
        walls.append(time.perf_counter() - w)
    return statistics.median(walls), statistics.median(cpus), out


def timed(model: PseudoWelfare, backend: str, repeats: int, **options: Any) -> tuple[float, float, optsched.Result]:
    return clock(lambda: optsched.solve(model, backend, **options), repeats)


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(b))


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg()) + f" ({os.cpu_count()} CPUs)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args()
    sizes = [4, 8, 16, 32, 64, 128, 256] if args.full else [4, 8, 16, 32, 64, 128]
    alm_max = 64 if args.full else 32
    jobs_per = 9 if args.full else 6
    rng = np.random.default_rng(args.seed)
    warm = job(rng, 3, "log")
    optsched.solve(warm, "cvxpy")  # import and warm cvxpy outside the timings
    optsched.solve(warm, "kkt")  # import numba, load (or compile) the kernel outside the timings
    print(load())
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    header = (f"{'|R_n|':>5} {'kkt ms':>7} {'cpu':>6} {'kernel us':>9} {'evals':>5} {'cvxpy ms':>8} {'cpu':>6} "
              f"{'cvx/kkt':>7} {'cpu':>5} {'gap cvx':>8} "
              f"{'almII ms':>8} {'gap II':>8} {'II conv':>7} {'II out':>6} {'II inner':>8} "
              f"{'almC ms':>8} {'gap C':>8} {'C conv':>6} {'C out':>5} {'C inner':>7}")
    print(header)
    for n in sizes:
        rows: dict[str, list[Any]] = {k: [] for k in (
            "kkt", "kkt_cpu", "kern", "evals", "cvx", "cvx_cpu", "ratio", "ratio_cpu", "gap_cvx",
            "alm2", "gap2", "conv2", "out2", "inn2", "almc", "gapc", "convc", "outc", "innc")}
        for j in range(jobs_per):
            m = job(rng, n, utilities.KINDS[j % 3])
            args_k = m.kernel_args()
            t_k, c_k, r_k = timed(m, "kkt", 15)
            t_n, _, sol = clock(lambda: kkt_solve(*args_k), 15)
            t_c, c_c, r_c = timed(m, "cvxpy", 3)
            rows["kkt"].append(t_k)
            rows["kkt_cpu"].append(c_k)
            rows["kern"].append(t_n)
            rows["evals"].append(sol.iterations)
            rows["cvx"].append(t_c)
            rows["cvx_cpu"].append(c_c)
            rows["ratio"].append(t_c / t_k)
            rows["ratio_cpu"].append(c_c / max(c_k, 1e-9))
            rows["gap_cvx"].append(rel(r_c.objective, r_k.objective))
            if n <= alm_max:
                t2, _, r2 = timed(m, "alm", 1)
                tc, _, rc = timed(m, "alm", 1, **CONVERGENT)
                for key, t, r in (("2", t2, r2), ("c", tc, rc)):
                    rows["alm" + key].append(t)
                    rows["gap" + key].append(rel(r.objective, r_k.objective))
                    rows["conv" + key].append(bool(r.extra["converged"]))
                    rows["out" + key].append(r.extra["outer"])
                    rows["inn" + key].append(r.extra["inner"])
        med = {k: (statistics.median(v) if v else float("nan")) for k, v in rows.items()}
        line = (f"{n:>5} {1e3 * med['kkt']:>7.3f} {1e3 * med['kkt_cpu']:>6.3f} {1e6 * med['kern']:>9.1f} "
                f"{med['evals']:>5.0f} {1e3 * med['cvx']:>8.2f} {1e3 * med['cvx_cpu']:>6.2f} "
                f"{med['ratio']:>7.0f} {med['ratio_cpu']:>5.0f} {max(rows['gap_cvx']):>8.1e} ")
        if rows["alm2"]:
            line += (f"{1e3 * med['alm2']:>8.1f} {max(rows['gap2']):>8.1e} {sum(rows['conv2'])}/{len(rows['conv2']):<5} "
                     f"{med['out2']:>6.0f} {med['inn2']:>8.0f} "
                     f"{1e3 * med['almc']:>8.1f} {max(rows['gapc']):>8.1e} {sum(rows['convc'])}/{len(rows['convc']):<4} "
                     f"{med['outc']:>5.0f} {med['innc']:>7.0f}")
        else:
            line += f"(alm skipped above |R_n| = {alm_max})"
        print(line, flush=True)
    print(f"\ntotal {time.perf_counter() - start_wall:.1f} s wall, {time.process_time() - start_cpu:.1f} s CPU; {load()}")
    print("kkt / cvxpy ms: median over the jobs of optsched.solve's wall (cpu: process CPU) time per job")
    print("(each job: median of 15 / 3 runs); kernel us: kkt_solve alone; cvx/kkt: median per-job ratio;")
    print("gap: max relative objective gap to kkt; alm II = Table II defaults (max_outer 200), alm C = CONVERGENT;")
    print("conv = jobs where steps 9-11 returned; out / inner: median outer / inner iterations.")


if __name__ == "__main__":
    main()
