"""ESDP (paper 000) benchmarks, measured side by side in one run.

1. One decision (slot t) of ESDP's index step on growing graphs (|R| = 40, 60, 80 at edge
   probability 0.1), with statistics drawn as after t slots of play: the AESCB route by the
   envelope DP (ESDP's default), by the full family on the visited cells (``reach``) and on
   the whole capacity box (``pareto``, the kernel before this change), against the exact P3
   (``escb_oa``: outer approximation + HiGHS). Medians of repeats; the P3 gap of the route and
   its Theorem 1 bound (|x| + sqrt|x|) / xi. The statistics are synthetic (counts spread evenly).
2. End to end: the default system (Table 2: |L| = 8, |R| = 40, K = 3, edge probability 0.1,
   rho = 0.9, alpha = 0.5) for T slots (default 2000): each baseline, the oracle, ESDP with
   the envelope DP (default) and with the full family (``reach``) for T slots, and ESDP with
   the previous kernel (``pareto``) for --old-horizon slots (default 300; 2000 takes ~7 CPU
   minutes). Wall and CPU seconds, the load average before and after each run, ASW, regret,
   and whether each ESDP variant chose the same action as the default in every common slot.
3. Per-slot DP time on the slots of that run: every DP call of the default ESDP run is
   recorded and replayed (every --replay-every-th slot) through ``envelope``, ``reach`` and
   ``pareto``; CPU ms per slot by range of t, and whether every pick is the same.

Run: ``python benchmarks/bench_esdp.py [--horizon 2000] [--old-horizon 300] [--repeats 3]``.
CPU seconds (time.process_time) are reported next to wall seconds and os.getloadavg()
because the machine is shared.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

import optsched
from optsched.esdp.env import DispatchEnv, generate_instance
from optsched.esdp.experiments import POLICIES, EsdpConfig
from optsched.esdp.oracle import MkpOracle
from optsched.esdp.policy import EsdpPolicy
from optsched.esdp.statistics import DELTA_SEQUENCES, G_SEQUENCES, max_selection, scaling_size
from optsched.models.escb_index import EscbIndex
from optsched.policy import evaluate
from optsched.solvers.budget_dp import solve_budget_family
from optsched.solvers.escb_aescb import aescb_index, escb_scaled_coefficients

ROUTE_METHODS = ("envelope", "reach", "pareto")


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _recording(policy: EsdpPolicy, calls: list) -> None:
    """Wrap the policy's subproblem solver so that every AESCB index it solves (the model, xi,
    the largest budget) and the pick are kept."""
    solution = policy.solver.solution

    def wrapped(model, *, params=None):
        x = solution(model, params=params)
        calls.append((model, params["xi"], params["max_budget"], np.asarray(x, dtype=np.int64).copy()))
        return x

    policy.solver.solution = wrapped


def end_to_end(horizon: int, old_horizon: int) -> tuple[list, list]:
    cfg = EsdpConfig(horizon=horizon)
    inst = generate_instance(np.random.default_rng([cfg.seed, 0]))
    env = DispatchEnv(inst, MkpOracle.for_instance(inst))
    print(f"\n== 2. end to end, T = {horizon}, |E| = {inst.n_edges}, capacities {inst.capacity.tolist()} ==")
    print(f"{'policy':<22} {'T':>5} {'wall_s':>8} {'cpu_s':>8} {'cpu/60s':>8} {'ASW':>10} {'regret':>8} "
          f"{'same x':>7}  load before -> after")
    calls: list = []
    runs = [(name, POLICIES[name](cfg), horizon) for name in ("LCF", "LCF-channel", "HSWF", "LWTF", "Oracle")]
    default = EsdpPolicy(alpha=cfg.alpha, delta=cfg.delta, g=cfg.g, mask=cfg.mask)
    _recording(default, calls)
    runs.append(("ESDP (envelope)", default, horizon))
    runs.append(("ESDP (reach)", EsdpPolicy(options={"method": "reach"}), horizon))
    if old_horizon > 0:
        runs.append(("ESDP (pareto, before)", EsdpPolicy(options={"method": "pareto"}), min(old_horizon, horizon)))
    actions: dict[str, np.ndarray] = {}
    summary = []
    for name, policy, T in runs:
        before = _load()
        w0, c0 = time.perf_counter(), time.process_time()
        out = evaluate(env, policy, T, seed=0)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        regret = float((out["oracle_welfare"] - out["expected_welfare"]).sum())
        same = ""
        if name.startswith("ESDP"):
            actions[name] = out["x"]
            ref = actions["ESDP (envelope)"]
            same = "yes" if np.array_equal(out["x"], ref[:T]) else "NO"
        print(f"{name:<22} {T:5d} {wall:8.2f} {cpu:8.2f} {cpu / 60:8.3f} {out['welfare'].sum():10.1f} "
              f"{regret:8.1f} {same:>7}  {before} -> {_load()}", flush=True)
        summary.append((name, T, wall, cpu))
    return calls, summary


def replay(calls: list, every: int) -> None:
    picked = list(range(0, len(calls), every))
    print(f"\n== 3. per-slot DP time on the recorded slots of the default ESDP run "
          f"({len(picked)} of {len(calls)} DP calls; CPU ms per call; load {_load()}) ==")
    times = {m: [] for m in ROUTE_METHODS}
    mismatches = {m: 0 for m in ROUTE_METHODS}
    for j in picked:
        model, xi, S, x = calls[j]
        for method in ROUTE_METHODS:  # interleaved, so load from other processes hits all alike
            c0 = time.process_time()
            got = aescb_index(model.mean, model.variance, model.weights, model.capacity, xi, max_budget=S,
                              method=method)[0]
            times[method].append(time.process_time() - c0)
            mismatches[method] += not np.array_equal(np.flatnonzero(got), x)
    slots = np.array(picked) + 1
    edges = [0, 250, 500, 1000, 1500, 2000, max(2000, int(slots.max()))]
    head = "".join(f" {f't {a + 1}-{b}':>12}" for a, b in zip(edges[:-1], edges[1:]) if ((slots > a) & (slots <= b)).any())
    print(f"{'method':<9} {'mean':>7} {'max':>7}{head}   total s  same pick")
    for method in ROUTE_METHODS:
        t = np.array(times[method]) * 1e3
        cols = "".join(f" {t[(slots > a) & (slots <= b)].mean():12.2f}"
                       for a, b in zip(edges[:-1], edges[1:]) if ((slots > a) & (slots <= b)).any())
        print(f"{method:<9} {t.mean():7.2f} {t.max():7.1f}{cols}   {t.sum() / 1e3:7.2f}  "
              f"{len(picked) - mismatches[method]}/{len(picked)}")
    env_mean = np.mean(times["envelope"])
    print(f"pareto / envelope = {np.mean(times['pareto']) / env_mean:.0f}x, "
          f"reach / envelope = {np.mean(times['reach']) / env_mean:.1f}x (mean CPU per DP call)")


def _statistics(inst, t: int, rng: np.random.Generator, alpha: float = 0.5):
    """v_hat, sigma2_hat as after t slots: counts spread over the channels, noisy means."""
    m = max_selection(alpha, inst.n_edges)
    counts = np.maximum(1, rng.multinomial(max(inst.n_edges, t * m), np.full(inst.n_edges, 1 / inst.n_edges)))
    v_hat = np.clip(inst.true_means + rng.normal(0, 0.5 / np.sqrt(counts)), 0, 1)
    sigma2 = G_SEQUENCES["default"](t, m) / (2 * counts)
    xi = scaling_size(m, DELTA_SEQUENCES["loglog"](t))
    return v_hat, sigma2, xi, m


def one_decision(repeats: int) -> None:
    print(f"\n== 1. one ESDP index step: AESCB route (DP) vs exact P3 (escb_oa), CPU s, medians of {repeats}; "
          f"load {_load()} ==")
    print(f"{'|R|':>4} {'|E|':>4} {'t':>5} {'xi':>4} {'S+1':>5} {'pts_M':>6} {'paper_M':>9} {'envelope':>9} "
          f"{'reach':>8} {'pareto':>8} {'escb_oa':>8} {'env/oa':>7} {'P3 gap':>9} {'thm1':>7} same")
    for n_servers in (40, 60, 80):
        inst = generate_instance(np.random.default_rng([0, n_servers]), n_servers=n_servers)
        rng = np.random.default_rng(1)
        mask = inst.channel_mask(rng.random(inst.n_ports) < 0.9)
        for t in (100, 2000):
            v_hat, sigma2, xi, m = _statistics(inst, t, rng)
            ups, sig = escb_scaled_coefficients(v_hat, sigma2, xi)
            fam = solve_budget_family(sig.astype(float), inst.requirements, inst.capacity, ups, xi * m, mask)
            times: dict[str, list] = {k: [] for k in (*ROUTE_METHODS, "oa")}
            gaps, thm, same = [], [], True
            for _ in range(repeats):
                xs = []
                for method in ROUTE_METHODS:
                    c0 = time.process_time()
                    x, value = aescb_index(v_hat, sigma2, inst.requirements, inst.capacity, xi, max_budget=xi * m,
                                           mask=mask, method=method)
                    times[method].append(time.process_time() - c0)
                    xs.append(x)
                same &= all(np.array_equal(xs[0], y) for y in xs[1:])
                model = EscbIndex(mean=v_hat[mask], variance=sigma2[mask], weights=inst.requirements[:, mask],
                                  capacity=inst.capacity)
                c0 = time.process_time()
                exact = optsched.solve(model, "escb_oa")
                times["oa"].append(time.process_time() - c0)
                assert exact.termination is optsched.Termination.OPTIMAL
                gaps.append(exact.objective - value)
                thm.append((x.sum() + math.sqrt(x.sum())) / xi)
            med = {k: float(np.median(v)) for k, v in times.items()}
            print(f"{n_servers:4d} {inst.n_edges:4d} {t:5d} {xi:4d} {xi * m + 1:5d} {fam.table_cells / 1e6:6.2f} "
                  f"{fam.paper_cells / 1e6:9.1f} {med['envelope']:9.4f} {med['reach']:8.4f} {med['pareto']:8.4f} "
                  f"{med['oa']:8.4f} {med['envelope'] / med['oa']:7.2f} {np.median(gaps):9.2e} {np.median(thm):7.3f} "
                  f"{'yes' if same else 'NO'}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--horizon", type=int, default=2000)
    ap.add_argument("--old-horizon", type=int, default=300, help="slots for ESDP with the previous kernel (0: skip)")
    ap.add_argument("--replay-every", type=int, default=10, help="replay every k-th DP call in section 3")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-end-to-end", action="store_true")
    args = ap.parse_args()
    # compile / load the numba kernels once, outside every measurement
    inst = generate_instance(np.random.default_rng(0), n_ports=2, n_servers=3, edge_prob=1.0)
    for method in ROUTE_METHODS:
        aescb_index(inst.true_means, inst.true_means, inst.requirements, inst.capacity, 2, method=method)
    one_decision(args.repeats)
    if not args.skip_end_to_end:
        calls, _ = end_to_end(args.horizon, args.old_horizon)
        replay(calls, args.replay_every)


if __name__ == "__main__":
    main()
