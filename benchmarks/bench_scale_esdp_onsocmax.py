"""ESDP at 4x the paper's graph and ONSOCMAX at 10^4 jobs over 100 nodes, next to the papers' sizes.

    python benchmarks/bench_scale_esdp_onsocmax.py                 # all four parts, ~10 min
    python benchmarks/bench_scale_esdp_onsocmax.py --parts onsocmax-paper onsocmax-scale

Each part runs an ``optsched run`` preset end to end (instances, every policy, the oracle or the
certified offline optimum, CSV + PNG + JSON) in a fresh child process, so its peak RSS
(``resource.getrusage``) is its own; the parent prints one table:

  esdp-paper      Table 2's system (|L| = 8, |R| = 40, |E| ~ 33), T = 2000: preset ``fig2-4``
                  with ESDP-exact added (the route ESDP takes at 4x; see below)
  esdp-scale4x    preset ``scale4x``: |L| = 16, |R| = 80 (|E| ~ 124), T = 2000
  onsocmax-paper  Section IV (10 nodes, 24 slots, 20 jobs), mean duration 4, 30 instances per
                  utility kind (the paper's instance is too small to time alone)
  onsocmax-scale  preset ``scale``: 10^4 jobs, 100 nodes, 540 slots, one instance per kind

Columns: wall and CPU seconds of the whole part, peak RSS, the load average (1 min) before and
after (the machine is shared), then per policy the time per slot (ESDP: CPU seconds of the
policy's run over T, environment and oracle bookkeeping included) or per job (ONSOCMAX: CPU
seconds of the online run over the number of jobs), and its ratio to the paper-size part.

Before the ESDP parts, the DP route (the paper's Algorithm 2) is tried at 4x for a few slots:
its Pareto table exceeds the cell limit there, which is why ``scale4x`` runs ESDP-exact.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PARTS: dict[str, tuple[str, str | None, dict[str, Any]]] = {
    # name -> (experiment, preset, overrides)
    "esdp-paper": ("esdp", "fig2-4", {"policies": ["ESDP", "ESDP-exact", "HSWF", "LCF", "LCF-channel", "LWTF",
                                                   "Oracle"]}),
    "esdp-scale4x": ("esdp", "scale4x", {}),
    "onsocmax-paper": ("onsocmax", None, {"values": [4.0], "repeats": 30}),
    "onsocmax-scale": ("onsocmax", "scale", {}),
}
PAPER_OF = {"esdp-scale4x": "esdp-paper", "onsocmax-scale": "onsocmax-paper"}


def run_part(name: str) -> dict[str, Any]:
    """In the child: run the part's preset end to end; wall, CPU, RSS and per-policy times."""
    from optsched.papers import get_paper

    experiment, preset, overrides = PARTS[name]
    exp = get_paper(experiment)
    cfg = exp.make_config(overrides, preset=preset)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as out:
        wall, cpu = time.perf_counter(), time.process_time()
        exp.run(cfg, Path(out))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        per_unit = _per_unit(experiment, Path(out), cfg)
    return {"part": name, "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "load_before": load_before, "load_after": os.getloadavg()[0], "per_unit": per_unit, "size": _size(name, cfg)}


def _per_unit(experiment: str, out: Path, cfg: Any) -> dict[str, float]:
    """Seconds per slot (ESDP, from the run's JSON) or per job (ONSOCMAX, from its timing CSV)."""
    if experiment == "esdp":
        meta = json.loads((out / "esdp_asw.json").read_text())
        return {key.split("#")[0]: cpu / cfg.horizon for key, cpu in meta["cpu_s"].items()}
    import pandas as pd

    t = pd.read_csv(out / f"onsocmax_{cfg.sweep}_timing.csv")
    per = {p: float(part["cpu_s"].sum() / part["n_jobs"].sum()) for p, part in t.groupby("policy")}
    first = t.drop_duplicates(["value", "kind", "repeat"])
    per["offline OPT"] = float(first["opt_cpu_s"].sum() / first["n_jobs"].sum())
    return per


def _size(name: str, cfg: Any) -> str:
    if name.startswith("esdp"):
        return f"|L|={cfg.n_ports} |R|={cfg.n_servers} T={cfg.horizon}"
    return f"{cfg.n_jobs} jobs x {len(cfg.kinds)} kinds x {cfg.repeats}, {cfg.n_nodes} nodes, {cfg.n_slots} slots"


def dp_route_at_4x(slots: int = 300) -> str:
    """Run the paper's DP route (policy ESDP) on the scale4x system until its table is too large."""
    from optsched.esdp.env import DispatchEnv
    from optsched.esdp.experiments import make_instance
    from optsched.esdp.policy import EsdpPolicy
    from optsched.observe import SubproblemError
    from optsched.papers import get_paper
    from optsched.policy import evaluate

    cfg = get_paper("esdp").make_config(preset="scale4x")
    inst = make_instance(cfg, 0)
    policy = EsdpPolicy(alpha=cfg.alpha)
    start = time.process_time()
    try:
        evaluate(DispatchEnv(inst), policy, slots, seed=0)
    except SubproblemError as exc:  # aescb's result: an error naming the table's cell limit
        return (f"ESDP's DP route at 4x (|E| = {inst.n_edges}, c = {inst.capacity.tolist()}): {exc} in slot "
                f"{len(policy.budget_levels) + 1}, after {time.process_time() - start:.1f} s CPU "
                f"(the last slots took {1e3 * max(policy.act_cpu_seconds[-5:]):.0f} ms CPU at most)")
    return f"ESDP's DP route at 4x ran {slots} slots in {time.process_time() - start:.1f} s CPU (|E| = {inst.n_edges})"


def _child(name: str) -> str | None:
    """Run ``--child name`` in a fresh process: its output, or None after printing why it failed."""
    proc = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"{name}: failed\n{proc.stderr[-2000:]}", flush=True)
        return None
    return proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", nargs="+", choices=list(PARTS), default=list(PARTS))
    ap.add_argument("--child", choices=[*PARTS, "dp-route"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "dp-route":
        print(dp_route_at_4x())
        return
    if args.child:
        print(json.dumps(run_part(args.child)))
        return
    if any(p.startswith("esdp") for p in args.parts):
        # in a child of its own: its tables reach several GB, and a process forked from one that
        # held them starts with that peak (every part's peak RSS read 7.2 GB)
        if (said := _child("dp-route")) is not None:
            print(said.strip(), flush=True)
    results = {}
    for part in args.parts:
        if (out := _child(part)) is None:
            continue
        results[part] = json.loads(out.strip().splitlines()[-1])
        r = results[part]
        print(f"\n{part} ({r['size']}): wall {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s, peak RSS "
              f"{r['peak_rss_mb']:.0f} MB, load {r['load_before']:.2f} -> {r['load_after']:.2f}", flush=True)
        paper = results.get(PAPER_OF.get(part, ""), {}).get("per_unit", {})
        unit = "slot" if part.startswith("esdp") else "job"
        for policy, sec in r["per_unit"].items():
            ratio = f"  x{sec / paper[policy]:.1f} the paper size" if policy in paper else ""
            print(f"  {policy:12s} {1e3 * sec:9.3f} ms CPU per {unit}{ratio}")


if __name__ == "__main__":
    main()
