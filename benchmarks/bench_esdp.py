"""ESDP (paper 000) benchmarks, measured side by side in one run.

1. End to end: the default system (Table 2: |L| = 8, |R| = 40, K = 3, edge probability 0.1,
   rho = 0.9, alpha = 0.5) for T slots (default 2000), ESDP and each baseline and the oracle;
   wall and CPU seconds, the ratio to the 60 s target and to the LCF baseline.
2. One decision (slot t) of ESDP's index step, the AESCB route (DP of Algorithm 2 over every
   budget) vs the exact P3 (``escb_oa``: outer approximation + HiGHS through ``optsched.solve``),
   on growing graphs (|R| = 40, 60, 80 at edge probability 0.1), with statistics drawn as after
   t slots of play. Medians of repeats; the P3 value gap of the AESCB route and its Theorem 1
   bound (|x| + sqrt|x|) / xi; the DP table size (cells filled; the paper's bound). The
   statistics are synthetic (counts spread evenly), which understates the DP's cost inside a
   real run; section 1 is the end-to-end measure.

Run: ``python benchmarks/bench_esdp.py [--horizon 2000] [--repeats 3] [--skip-end-to-end]``.
CPU seconds are reported next to wall seconds because the machine may be shared.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import optsched
from optsched.esdp.env import DispatchEnv, generate_instance
from optsched.esdp.experiments import POLICIES, EsdpConfig
from optsched.esdp.oracle import MkpOracle
from optsched.esdp.statistics import DELTA_SEQUENCES, G_SEQUENCES, max_selection, scaling_size
from optsched.models.escb_index import EscbIndex
from optsched.policy import evaluate
from optsched.solvers.budget_dp import aescb_index, escb_scaled_coefficients, solve_budget_family


def end_to_end(horizon: int) -> None:
    cfg = EsdpConfig(horizon=horizon)
    inst = generate_instance(np.random.default_rng([cfg.seed, 0]))
    env = DispatchEnv(inst, MkpOracle.for_instance(inst))
    print(f"\n== 1. end to end, T = {horizon}, |E| = {inst.n_edges}, capacities {inst.capacity.tolist()} ==")
    print(f"{'policy':<8} {'wall_s':>9} {'cpu_s':>9} {'cpu/60s':>8} {'cpu/LCF':>9} {'ASW':>10} {'regret':>9}")
    rows = {}
    for name in ("LCF", "HSWF", "LWTF", "Oracle", "ESDP"):
        policy = POLICIES[name](cfg)
        w0, c0 = time.perf_counter(), time.process_time()
        out = evaluate(env, policy, horizon, seed=0)
        rows[name] = (time.perf_counter() - w0, time.process_time() - c0, out)
    lcf_cpu = rows["LCF"][1]
    for name, (wall, cpu, out) in rows.items():
        regret = float((out["oracle_welfare"] - out["expected_welfare"]).sum())
        print(f"{name:<8} {wall:9.2f} {cpu:9.2f} {cpu / 60:8.2f} {cpu / lcf_cpu:9.1f} "
              f"{out['welfare'].sum():10.1f} {regret:9.1f}")


def _statistics(inst, t: int, rng: np.random.Generator, alpha: float = 0.5):
    """v_hat, sigma2_hat as after t slots: counts spread over the channels, noisy means."""
    m = max_selection(alpha, inst.n_edges)
    counts = np.maximum(1, rng.multinomial(max(inst.n_edges, t * m), np.full(inst.n_edges, 1 / inst.n_edges)))
    v_hat = np.clip(inst.true_means + rng.normal(0, 0.5 / np.sqrt(counts)), 0, 1)
    sigma2 = G_SEQUENCES["default"](t, m) / (2 * counts)
    xi = scaling_size(m, DELTA_SEQUENCES["loglog"](t))
    return v_hat, sigma2, xi, m


def one_decision(repeats: int) -> None:
    print("\n== 2. one ESDP index step: AESCB route (DP) vs exact P3 (escb_oa), medians of repeats ==")
    print(f"{'|R|':>4} {'|E|':>4} {'t':>5} {'xi':>4} {'S+1':>5} {'cells_M':>8} {'paper_M':>9} {'dp_cpu_s':>9} "
          f"{'oa_cpu_s':>9} {'dp/oa':>7} {'P3 gap':>9} {'thm1':>7}")
    for n_servers in (40, 60, 80):
        inst = generate_instance(np.random.default_rng([0, n_servers]), n_servers=n_servers)
        rng = np.random.default_rng(1)
        mask = inst.channel_mask(rng.random(inst.n_ports) < 0.9)
        for t in (100, 2000):
            v_hat, sigma2, xi, m = _statistics(inst, t, rng)
            dp_times, oa_times, gaps, thm = [], [], [], []
            ups, sig = escb_scaled_coefficients(v_hat, sigma2, xi)
            c0 = time.process_time()
            fam = solve_budget_family(sig.astype(float), inst.requirements, inst.capacity, ups, xi * m, mask)
            cells = (fam.table_cells, fam.paper_cells, time.process_time() - c0)
            for _ in range(repeats):
                c0 = time.process_time()
                x, value = aescb_index(v_hat, sigma2, inst.requirements, inst.capacity, xi, max_budget=xi * m, mask=mask)
                dp_times.append(time.process_time() - c0)
                model = EscbIndex(mean=v_hat[mask], variance=sigma2[mask], weights=inst.requirements[:, mask],
                                  capacity=inst.capacity)
                c0 = time.process_time()
                exact = optsched.solve(model, "escb_oa")
                oa_times.append(time.process_time() - c0)
                assert exact.status is optsched.Status.OPTIMAL
                gaps.append(exact.objective - value)
                thm.append((x.sum() + math.sqrt(x.sum())) / xi)
            dp, oa = float(np.median(dp_times)), float(np.median(oa_times))
            print(f"{n_servers:4d} {inst.n_edges:4d} {t:5d} {xi:4d} {xi * m + 1:5d} {cells[0] / 1e6:8.1f} "
                  f"{cells[1] / 1e6:9.1f} {dp:9.4f} {oa:9.4f} {dp / oa:7.2f} {np.median(gaps):9.2e} {np.median(thm):7.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--horizon", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-end-to-end", action="store_true")
    args = ap.parse_args()
    # compile / load the numba kernels once, outside every measurement
    inst = generate_instance(np.random.default_rng(0), n_ports=2, n_servers=3, edge_prob=1.0)
    aescb_index(inst.true_means, inst.true_means, inst.requirements, inst.capacity, 2)
    one_decision(args.repeats)
    if not args.skip_end_to_end:
        end_to_end(args.horizon)


if __name__ == "__main__":
    main()
