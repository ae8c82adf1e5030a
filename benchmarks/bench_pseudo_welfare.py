"""P3 of paper 002 per job: ``kkt`` (exact) vs ``cvxpy`` (Clarabel, exponential cone) vs
``alm`` (Algorithm 2; Table II defaults and the CONVERGENT settings) as |R_n| grows; then the
causes of ALM's gap on the jobs ONSOCMAX really solves, and a trace of Algorithm 2.

    python benchmarks/bench_pseudo_welfare.py            # default, a few minutes
    python benchmarks/bench_pseudo_welfare.py --full     # more jobs and sizes
    python benchmarks/bench_pseudo_welfare.py --alm-only # only the ALM sections (2, 3)

Section 2 (ALM's gap, cause by cause): every P3 that ONSOCMAX solves online on Section IV
instances (``--instances`` of them, kinds in turn) is solved by ``kkt`` and by ``alm`` under
settings that remove the causes one at a time: Table II as printed with the cap max_outer = 200
(not in the paper), the cap raised to 2000, then also sigma_0 = 1.01 instead of 0.97 (with
sigma < 1, step 19 divides eta_k and eps_k by sigma, so the tolerances grow without bound), then
also tight final tolerances eta = epsilon = 1e-6 instead of 0.1 and 10, and CONVERGENT. Per
setting: jobs where steps 9-11 returned, median / 90th percentile / largest relative gap to kkt,
median ms, and the median of the per-job time ratio alm / kkt (measured side by side).

Section 3 (trace): Algorithm 2 with Table II on one job where steps 9-11 never return, one row
per outer iteration (sigma, eta_k, eps_k, violation (25), projected gradient norm, step 8's
verdict), recorded from the backend's own run by wrapping its step-6 and step-7 functions.

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
import contextlib
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

import optsched
from optsched.models.pseudo_welfare import pseudo_welfare_job as job  # a Section IV job over n units
from optsched.models.pseudo_welfare import PseudoWelfare
from optsched.models import utilities
from optsched.models.mesh import MeshGenerator
from optsched.onsocmax.env import replay
from optsched.onsocmax.policy import Onsocmax
from optsched.solvers import pseudo_welfare_alm as alm
from optsched.solvers.pseudo_welfare_alm import CONVERGENT, TABLE_II
from optsched.solvers.pseudo_welfare_kkt import kkt_solve
from optsched.io import load_instances
from optsched.observe import Observer

# Section 2: each setting removes one more cause of Table II's gap.
ALM_SETTINGS: dict[str, dict[str, Any]] = {
    "Table II, max_outer 200 (default)": {},
    "Table II, max_outer 2000": {"max_outer": 2000},
    "  + sigma0 1.01": {"max_outer": 2000, "sigma0": 1.01},
    "  + eta = epsilon = 1e-6": {"max_outer": 2000, "sigma0": 1.01, "eta": 1e-6, "epsilon": 1e-6},
    "CONVERGENT": dict(CONVERGENT),
}


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


def section_iv_jobs(instances: int, seed: int) -> list[PseudoWelfare]:
    """The P3 programs ONSOCMAX solves online on Section IV instances (kinds in turn), as
    models: captured from the policy's own solver calls (``Observer``, as ``run --capture``)."""
    with tempfile.TemporaryDirectory() as tmp:
        with Observer(capture_dir=tmp):
            for i in range(instances):
                inst = MeshGenerator(kind=utilities.KINDS[i % 3]).draw(np.random.default_rng([seed, i]))
                replay(inst, Onsocmax())
        jobs = load_instances(Path(tmp) / f"{PseudoWelfare.name}.jsonl")
    assert all(isinstance(m, PseudoWelfare) for m in jobs)
    return jobs


def alm_causes(jobs: list[PseudoWelfare]) -> dict[str, list[bool]]:
    """Section 2; returns, per setting, whether steps 9-11 returned on each job."""
    print(f"\n== 2. ALM's gap to kkt, cause by cause: {len(jobs)} P3 jobs of ONSOCMAX on Section IV instances "
          f"(|R_n| {min(m.n_units for m in jobs)}-{max(m.n_units for m in jobs)}, median "
          f"{statistics.median(m.n_units for m in jobs):.0f}); {load()}")
    kkt = [timed(m, "kkt", 5) for m in jobs]
    print(f"kkt: median {1e3 * statistics.median(t for t, _, _ in kkt):.3f} ms per job")
    out: dict[str, list[bool]] = {}
    print(f"{'alm setting':36s} {'returned':>9} {'gap med':>8} {'gap p90':>8} {'gap max':>8} {'ms med':>7} "
          f"{'alm/kkt':>8} {'outer med':>9}")
    for label, options in ALM_SETTINGS.items():
        gaps, ms, ratio, outer, returned = [], [], [], [], []
        for m, (t_k, _, r_k) in zip(jobs, kkt):
            t, _, r = timed(m, "alm", 1, **options)
            assert r.ok and m.violations(r.solution) == [], (label, r.status, r.extra)
            gaps.append(rel(r.objective, r_k.objective))
            ms.append(1e3 * t)
            ratio.append(t / t_k)
            outer.append(r.extra["outer"])
            returned.append(bool(r.extra["converged"]))
        out[label] = returned
        print(f"{label:36s} {sum(returned):>4}/{len(jobs):<4} {statistics.median(gaps):>8.1e} "
              f"{float(np.percentile(gaps, 90)):>8.1e} {max(gaps):>8.1e} {statistics.median(ms):>7.1f} "
              f"{statistics.median(ratio):>8.0f} {statistics.median(outer):>9.0f}", flush=True)
    return out


@contextlib.contextmanager
def traced_alm() -> Iterator[list[dict[str, float]]]:
    """Record every outer iteration of the ``alm`` backend: step 6 (``_minimize``: sigma, eta_k,
    the gradient norm it stopped at, inner steps) and step 7 (the violation (25))."""
    rows: list[dict[str, float]] = []
    minimize, violation = alm._minimize, alm._Program.violation

    def step6(prog: Any, x: Any, mu: float, y: Any, z: Any, s: float, tol: float, *rest: Any, **kw: Any) -> Any:
        out = minimize(prog, x, mu, y, z, s, tol, *rest, **kw)
        rows.append({"sigma": s, "eta_k": tol, "mu": mu, "norm": out[1], "inner": out[2]})
        return out

    def step7(self: Any, *args: Any) -> float:
        rows[-1]["v"] = value = violation(self, *args)
        return value

    alm._minimize, alm._Program.violation = step6, step7  # type: ignore[method-assign]
    try:
        yield rows
    finally:
        alm._minimize, alm._Program.violation = minimize, violation  # type: ignore[method-assign]


def alm_trace(m: PseudoWelfare, show: int = 12) -> None:
    """Section 3: Table II's outer iterations on ``m``; eps_k is replayed from steps 3, 19 and
    24, and each row's step-8 verdict is checked against the next row's sigma."""
    with traced_alm() as rows:
        r = optsched.solve(m, "alm")
    exact = optsched.solve(m, "kkt").objective
    p = TABLE_II
    eps = 1.0 / p["sigma0"] ** p["theta1"]
    kind = utilities.KINDS[int(np.asarray(m.utility).reshape(-1)[0])]
    print(f"\n== 3. Trace of Algorithm 2 with Table II on a {m.n_units}-unit {kind} job: "
          f"{r.extra['outer']} outer / {r.extra['inner']} inner steps, steps 9-11 returned: {r.extra['converged']}, "
          f"gap to kkt {rel(r.objective, exact):.2e}")
    print(f"{'k':>5} {'sigma':>8} {'eta_k':>10} {'eps_k':>10} {'v (25)':>10} {'||grad||':>9} {'inner':>6} step 8")
    for k, row in enumerate(rows, 1):
        accept = row["v"] <= eps
        if k < len(rows):  # step 8 accepted <=> sigma unchanged (step 23 multiplies it by p otherwise)
            assert accept == (rows[k]["sigma"] == row["sigma"]), (k, row, rows[k])
        if k <= show or k % max(1, len(rows) // 8) == 0 or k == len(rows):
            print(f"{k:>5} {row['sigma']:>8.4f} {row['eta_k']:>10.3e} {eps:>10.3e} {row['v']:>10.3e} "
                  f"{row['norm']:>9.2e} {row['inner']:>6} {'accept' if accept else 'sigma *= p'}")
        eps = eps / row["sigma"] ** p["theta2"] if accept else 1.0 / (p["p"] * row["sigma"]) ** p["theta1"]
    print("(eta_k, eps_k grow by 1/sigma per accepted step while sigma < 1; step 9 needs ||grad|| <= eta = 0.1, "
          "which the inner loop, stopping at eta_k, no longer reaches)")


def solver_sizes(args: argparse.Namespace) -> None:
    """Section 1: kkt, cvxpy, alm per job as |R_n| grows."""
    sizes = [4, 8, 16, 32, 64, 128, 256] if args.full else [4, 8, 16, 32, 64, 128]
    alm_max = 64 if args.full else 32
    jobs_per = 9 if args.full else 6
    rng = np.random.default_rng(args.seed)
    warm = job(rng, 3, "log")
    optsched.solve(warm, "cvxpy")  # import and warm cvxpy outside the timings
    optsched.solve(warm, "kkt")  # import numba, load (or compile) the kernel outside the timings
    print(f"== 1. P3 solvers as |R_n| grows ({jobs_per} generated jobs per size); {load()}")
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--alm-only", action="store_true", help="only sections 2 and 3")
    ap.add_argument("--instances", type=int, default=3, help="Section IV instances for section 2")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args()
    if not args.alm_only:
        solver_sizes(args)
    jobs = section_iv_jobs(args.instances, args.seed)
    returned = alm_causes(jobs)
    # jobs where only sigma_0 < 1 stops steps 9-11: they return once sigma_0 = 1.01
    by_sigma = [m for m, capped, fixed in zip(jobs, returned["Table II, max_outer 2000"], returned["  + sigma0 1.01"])
                if fixed and not capped]
    alm_trace(max(by_sigma, key=lambda m: m.n_units) if by_sigma else jobs[0])


if __name__ == "__main__":
    main()
