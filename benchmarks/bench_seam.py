"""What the solver seam costs, and what warm starts buy, on the subproblems the policies meet.

Three measurements, each side by side in one run (interleaved, the order rotated each round):

1. ``per-call`` - for the compiled kernels the policies use by default (``greedy`` on a max-weight
   frame, ``fast`` on OGASched's projection, ``aescb`` on ESDP's index, ``kkt`` on ONSOCMAX's
   P3), on subproblems captured from a short seeded run of each paper: the bare kernel on the
   raw arrays against the whole seam as a policy calls it (build the model from the same arrays,
   ``Prepared.solve`` with verification). Median microseconds per call and the ratio.
2. ``end-to-end`` (with ``--baseline DIR``, a checkout of the commit before the seam, whose
   policies call the kernels directly) - each paper's default ``optsched run`` in a fresh
   process, this tree against the baseline, interleaved; median wall and CPU, ratio.
   ``--large`` adds OGASched's ``large`` preset (one run each).
3. ``warm-start`` - captured trajectories (every subproblem of a short run, in order) replayed
   through one Prepared exact backend with ``warm_start`` on and off: HiGHS (data changed in
   place when the structure repeats, MIP start), CP-SAT (solution hints). Total solve seconds,
   ratio warm / cold, and a check that both reach the same objectives.

    python benchmarks/bench_seam.py [--repeats 5] [--baseline /tmp/base] [--large]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import optsched
from optsched.papers import get_paper
from optsched.io import load_instances
from optsched.observe import Observer
from optsched.solvers.registry import get_backend

# paper -> (settings of a short seeded run, capture every K-th subproblem)
CAPTURE_RUNS: dict[str, tuple[dict[str, Any], int]] = {
    "maxweight": ({"study": "fig3", "frames": 400, "grid_step": 0.05}, 20),
    "ogasched": ({"horizon": 300, "offline": False}, 5),
    "esdp": ({"horizon": 300, "policies": ["ESDP", "Oracle"]}, 5),
    "onsocmax": ({"values": [2.0, 6.0], "repeats": 2}, 2),
}
TRAJECTORY_RUNS: dict[str, dict[str, Any]] = {  # every subproblem, in order
    "ogasched": {"horizon": 150, "offline": False},
    "maxweight": {"study": "fig3", "frames": 150, "grid_step": 0.1},
    "esdp": {"horizon": 400, "policies": ["Oracle"], "n_ports": 12},
    "onsocmax": {"study": "ratio", "integral": True, "instances": 6},
}


def capture(paper: str, settings: dict[str, Any], every: int, tmp: Path) -> dict[str, list[Any]]:
    exp = get_paper(paper)
    with Observer(capture_dir=tmp / paper, capture_every=every):
        exp.run(exp.make_config(settings), tmp / paper / "run")
    return {f.stem: load_instances(f) for f in sorted((tmp / paper).glob("*.jsonl"))}


def _median_us(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def per_call_cases(models: dict[str, list[Any]]) -> list[tuple[str, str, Callable[[Any], Any], Callable[[Any], Any]]]:
    """(kind, backend, direct(model), seam(model)): the bare kernel on the model's raw arrays,
    and what a policy does through the seam with the same arrays."""
    from optsched.models.escb_index import EscbIndex
    from optsched.models.pseudo_welfare import PseudoWelfare
    from optsched.models.set_packing import SetPackingBatch
    from optsched.solvers.escb_aescb import aescb_index
    from optsched.solvers.greedy_set_packing import greedy_packing_batch
    from optsched.solvers.projection_fast import project_capacity
    from optsched.solvers.pseudo_welfare_kkt import kkt_solve

    prepared = {name: optsched.prepare(kind, name) for kind, name in
                [("set_packing_batch", "greedy"), ("capacity_projection", "fast"), ("escb_index", "aescb"),
                 ("pseudo_welfare", "kkt")]}
    cases = [
        ("set_packing_batch", "greedy",
         lambda m: greedy_packing_batch(m.family.dense, m.weights),
         lambda m: prepared["greedy"].solve(SetPackingBatch.from_incidence(m.family.dense, m.weights))),
        ("capacity_projection", "fast",
         lambda m: project_capacity(m.z, m.upper, m.group, m.capacity),
         lambda m: prepared["fast"].solve(m.with_z(m.z))),  # as OGASched rebuilds its slot's model
        ("escb_index", "aescb",
         lambda m: aescb_index(m.mean, m.variance, m.weights, m.capacity, 32),
         lambda m: prepared["aescb"].solve(EscbIndex(mean=m.mean, variance=m.variance, weights=m.weights,
                                                     capacity=m.capacity))),
        ("pseudo_welfare", "kkt",
         lambda m: kkt_solve(*m.kernel_args()).x,
         lambda m: prepared["kkt"].solve(PseudoWelfare(utility=m.utility, a=m.a, beta=m.beta, capacity=m.capacity,
                                                       xbar=m.xbar, rho=m.rho, usage=m.usage, iota=m.iota,
                                                       upsilon=m.upsilon, alpha=m.alpha))),
    ]
    return [c for c in cases if c[0] in models]


def per_call(repeats: int, tmp: Path) -> None:
    models: dict[str, list[Any]] = {}
    for paper, (settings, every) in CAPTURE_RUNS.items():
        models.update(capture(paper, settings, every, tmp))
    print("\n== per call: bare kernel vs the seam (model built from the same arrays + Prepared.solve, verified)")
    print(f"{'model':22s} {'backend':8s} {'instances':>9s} {'size':>10s} {'kernel us':>10s} {'seam us':>9s} {'ratio':>6s}")
    for kind, backend, direct, seam in per_call_cases(models):
        items = models[kind][:30]
        for m in items[:2]:  # compile and warm caches outside the timings
            direct(m), seam(m)
        d, s = [], []
        for r in range(repeats):
            for m in items:
                pair = [("d", direct), ("s", seam)] if r % 2 == 0 else [("s", seam), ("d", direct)]
                for tag, fn in pair:
                    (d if tag == "d" else s).append(_median_us(lambda: fn(m), 1))
        sizes = [m.size for m in items]
        print(f"{kind:22s} {backend:8s} {len(items):9d} {f'{min(sizes)}-{max(sizes)}':>10s} "
              f"{statistics.median(d):10.1f} {statistics.median(s):9.1f} {statistics.median(s) / statistics.median(d):6.2f}")


def projection_at_scale(repeats: int, slots: int = 300) -> None:
    """OGASched's projection at the ``large`` preset's size (|L| = 100, |R| = 1024, K = 6:
    15,210 variables in 6,144 groups) on the points z the policy really projects (its first
    ``slots`` slots, recorded), the way it meets them: each replayed z is a fresh copy
    (in cache, as the gradient step leaves it), then the bare kernel on the raw arrays against
    ``Prepared.solve(polytope.with_z(z))`` (what the policy calls: validation of z, the
    backend, the seam's rules) with and without verification, and ``optsched.solve(model,
    "fast")`` on a model made from z just before (the issue's "through solve": the seam without
    the model's construction), interleaved slot by slot with the order rotated; median
    microseconds per slot over ``repeats`` replays."""
    from optsched.ogasched.experiments import PRESETS, OgaConfig, build_env
    from optsched.ogasched.policy import OGASched
    from optsched.policy import evaluate
    from optsched.solvers.projection_kernel import project

    cfg = OgaConfig(**PRESETS["large"])
    policy = OGASched(eta0=cfg.eta0, decay=cfg.decay, step=cfg.step, horizon=cfg.horizon)
    env = build_env(cfg, 0)
    points: list[np.ndarray] = []
    reset = policy.reset

    def recording_reset(env: Any, rng: np.random.Generator) -> None:
        reset(env, rng)
        with_z = policy._polytope.with_z
        object.__setattr__(policy._polytope, "with_z", lambda z: points.append(np.array(z)) or with_z(z))

    policy.reset = recording_reset  # type: ignore[method-assign]
    evaluate(env, policy, slots, seed=0)
    poly = policy._polytope
    del poly.__dict__["with_z"]  # recording done
    verified, unverified = optsched.prepare(poly, "fast"), optsched.prepare(poly, "fast", verify=False)
    calls: dict[str, Callable[[Any], Any]] = {
        "bare kernel": lambda z: project(z, poly.upper, poly.group, poly.capacity),
        "solve, verify off": lambda z: unverified.solve(poly.with_z(z)),
        "solve, verify on": lambda z: verified.solve(poly.with_z(z)),
        "optsched.solve, model built": lambda model: optsched.solve(model, "fast"),
    }
    built = {"optsched.solve, model built"}  # timed on a model made from z just before (z in cache)
    times: dict[str, list[float]] = {k: [] for k in calls}
    names = list(calls)
    for _ in range(repeats):
        for t, point in enumerate(points):
            for k in range(len(names)):
                name = names[(t + k) % len(names)]
                arg = poly.with_z(point) if name in built else point.copy()
                start = time.perf_counter()
                calls[name](arg)
                times[name].append(time.perf_counter() - start)
    bare = statistics.median(times["bare kernel"])
    print(f"\n== OGASched's projection at the large preset ({poly.n_vars} variables, {poly.n_groups} groups), "
          f"the policy's first {len(points)} points x {repeats} replays, median per slot")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:28s} {1e6 * med:9.1f} us {med / bare:6.2f}x the bare kernel")


def end_to_end(baseline: Path, repeats: int, large: bool, tmp: Path) -> None:
    print(f"\n== end to end: default `optsched run PAPER`, this tree vs the baseline {baseline} (fresh processes)")
    here = Path(__file__).resolve().parents[1]
    runs = [(p, []) for p in ("maxweight", "ogasched", "esdp", "onsocmax")]
    if large:
        runs.append(("ogasched", ["--preset", "large"]))
    print(f"{'run':26s} {'this wall s':>11s} {'base wall s':>11s} {'ratio':>6s} {'this cpu s':>10s} {'base cpu s':>10s} "
          f"{'ratio':>6s}")
    for paper, extra in runs:
        n = 1 if extra else repeats
        result: dict[str, list[tuple[float, float]]] = {"this": [], "base": []}
        for r in range(n + 1):  # round 0 warms the numba caches of both trees
            order = ["this", "base"] if r % 2 == 0 else ["base", "this"]
            for which in order:
                root = here if which == "this" else baseline
                env = {**os.environ, "PYTHONPATH": str(root), "TQDM_DISABLE": "1"}
                cmd = [sys.executable, "-m", "optsched", "run", paper, *extra, "--out", str(tmp / f"e2e-{which}")]
                start = time.perf_counter()
                before = os.times()
                subprocess.run(cmd, env=env, cwd=root, check=True, stdout=subprocess.DEVNULL)
                after = os.times()
                if r:
                    result[which].append((time.perf_counter() - start,
                                          after.children_user + after.children_system
                                          - before.children_user - before.children_system))
        tw, bw = (statistics.median(x[0] for x in result[k]) for k in ("this", "base"))
        tc, bc = (statistics.median(x[1] for x in result[k]) for k in ("this", "base"))
        label = paper + (" " + " ".join(extra) if extra else "")
        print(f"{label:26s} {tw:11.2f} {bw:11.2f} {tw / bw:6.2f} {tc:10.2f} {bc:10.2f} {tc / bc:6.2f}")


def warm_start(repeats: int, tmp: Path) -> None:
    print("\n== warm starts on captured trajectories (every subproblem of a short run, in order)")
    print(f"{'trajectory':34s} {'backend':7s} {'solves':>6s} {'cold s':>8s} {'warm s':>8s} {'warm/cold':>9s} {'same optima':>11s}")
    for paper, settings in TRAJECTORY_RUNS.items():
        for kind, models in capture(paper, settings, 1, tmp / "traj").items():
            models = models[:300]
            for backend in ("highs", "cpsat"):
                if any(get_backend(backend).fits(m) is not None for m in models):
                    continue
                totals: dict[bool, list[float]] = {True: [], False: []}
                objectives: dict[bool, list[float]] = {}
                for r in range(repeats):
                    for warm in ((True, False) if r % 2 == 0 else (False, True)):
                        prepared = optsched.prepare(kind, backend, warm_start=warm)
                        results = [prepared.solve(m) for m in models]
                        totals[warm].append(sum(x.runtime_s for x in results))
                        objectives[warm] = [x.objective for x in results]
                same = np.allclose(objectives[True], objectives[False], rtol=1e-6, atol=1e-9)
                cold, hot = statistics.median(totals[False]), statistics.median(totals[True])
                print(f"{paper + ': ' + kind:34s} {backend:7s} {len(models):6d} {cold:8.3f} {hot:8.3f} "
                      f"{hot / cold:9.2f} {str(same):>11s}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline", type=Path, default=None, help="checkout of the commit before the seam")
    ap.add_argument("--large", action="store_true", help="also OGASched's large preset end to end")
    ap.add_argument("--only", choices=("per-call", "at-scale", "end-to-end", "warm-start"), default=None)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores shared); {time.strftime('%Y-%m-%d %H:%M')}")
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "per-call"):
            per_call(args.repeats, Path(tmp))
        if args.only in (None, "at-scale"):
            projection_at_scale(args.repeats)
        if args.only in (None, "warm-start"):
            warm_start(args.repeats, Path(tmp))
        if args.baseline is not None and args.only in (None, "end-to-end"):
            end_to_end(args.baseline, args.repeats, args.large, Path(tmp))
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
