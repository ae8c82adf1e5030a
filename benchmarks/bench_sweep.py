"""Sweep speedup: the same sweep (40 max-weight runs of about 1 s each) in-process, on a
process pool of 1 worker and on a pool of 2 workers, measured side by side in one run
(alternating order over ``--repeats`` rounds), with the 1-minute load average before and
after each measurement. Every measurement must give a byte-identical ``results.csv``.

    python benchmarks/bench_sweep.py [--frames 4000] [--seeds 5] [--repeats 2] [--workers 2]

``--executors`` instead times the executors the way a user meets them, each sweep a fresh
``python -m optsched sweep`` process: ``examples/sweeps/esdp_alpha.toml`` (48 ESDP runs of a
few ms to 0.1 s) and the same grid with horizon 2000 (runs about 10x longer: their own seconds
sum to ~10x), serially (``--workers 1``), on the pool and on a Dask LocalCluster
(``--workers 2``), interleaved over ``--repeats`` rounds.
Per sweep: median wall, speedup over serial, and the executor's overhead per run, (wall x
workers - the runs' own seconds) / runs, which holds process start-up, imports, the cluster's
start and every task's round trip.

    python benchmarks/bench_sweep.py --executors [--repeats 3]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import tempfile
import time
from pathlib import Path

from optsched.sweep import run_sweep

SWEEP = """
kind = "experiment"
experiment = "maxweight"
seeds = {seeds}
[base]
frames = {frames}
n_workers = 3
[grid]
n_apps = [2, 3]
task_prob = [0.3, 0.5]
"""


def _busy(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def machine_scaling(workers: int, n: int = 20_000_000) -> float:
    """The machine's own ceiling: a pure-CPU loop on ``workers`` processes vs one, same minute."""
    from concurrent.futures import ProcessPoolExecutor

    start = time.perf_counter()
    _busy(n)
    one = time.perf_counter() - start
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_busy, [n]))  # start the workers first
        start = time.perf_counter()
        list(pool.map(_busy, [n] * workers))
        many = time.perf_counter() - start
    return workers * one / many


def executor_comparison(repeats: int, workers: int) -> None:
    import subprocess
    import sys

    root = Path(tempfile.mkdtemp(prefix="bench_sweep_exec_"))
    base = (Path(__file__).resolve().parents[1] / "examples" / "sweeps" / "esdp_alpha.toml").read_text()
    longer = root / "esdp_alpha_10x.toml"
    longer.write_text(base.replace("horizon = 60", "horizon = 2000"))  # runs about 10x longer in all
    (root / "esdp_alpha.toml").write_text(base)
    setups = {"serial": ["--workers", "1"], "pool": ["--workers", str(workers)],
              "dask": ["--dask", "local", "--workers", str(workers)]}
    print(f"# {os.cpu_count()} cores; machine ceiling: a busy loop on {workers} processes runs "
          f"{machine_scaling(workers):.2f}x one process")
    for sweep in ("esdp_alpha.toml", "esdp_alpha_10x.toml"):
        walls: dict[str, list[float]] = {name: [] for name in setups}
        own: dict[str, list[float]] = {name: [] for name in setups}
        reference: bytes | None = None
        n_runs = 0
        for rep in range(repeats):
            order = list(setups) if rep % 2 == 0 else list(reversed(setups))
            for name in order:
                out = root / f"{sweep}-{name}-{rep}"
                cmd = [sys.executable, "-m", "optsched", "sweep", str(root / sweep), "--out", str(out), *setups[name]]
                start = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "TQDM_DISABLE": "1"})
                walls[name].append(time.perf_counter() - start)
                data = (out / "results.csv").read_bytes()
                reference = reference or data
                assert data == reference, f"{sweep} {name}: results.csv differs"
                with open(out / "timings.csv", newline="") as fh:
                    times = [float(r["runtime_s"]) for r in csv.DictReader(fh)]
                own[name].append(sum(times))
                n_runs = len(times)
        print(f"\n# {sweep}: {n_runs} runs, median over {repeats} rounds (results.csv identical in every measurement)")
        serial = statistics.median(walls["serial"])
        for name in setups:
            wall = statistics.median(walls[name])
            procs = 1 if name == "serial" else workers
            overhead = (wall * procs - statistics.median(own[name])) / n_runs
            print(f"{name:>8}: wall {wall:6.2f} s, speedup over serial {serial / wall:5.2f}x, runs' own "
                  f"{statistics.median(own[name]):6.2f} s, overhead per run {1e3 * overhead:7.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--executors", action="store_true", help="serial vs pool vs Dask on esdp_alpha.toml and a 10x longer grid")
    ap.add_argument("--frames", type=int, default=4000)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if args.executors:
        executor_comparison(args.repeats, args.workers)
        return
    root = Path(tempfile.mkdtemp(prefix="bench_sweep_"))
    cfg = root / "sweep.toml"
    cfg.write_text(SWEEP.format(seeds=list(range(args.seeds)), frames=args.frames))
    setups = {"serial": ("serial", 1), "pool-1": ("pool", 1), f"pool-{args.workers}": ("pool", args.workers)}
    walls: dict[str, list[float]] = {name: [] for name in setups}
    run_cpu: dict[str, list[float]] = {name: [] for name in setups}
    loads: list[str] = []
    reference: bytes | None = None
    n_runs = 0
    print(f"# {os.cpu_count()} cores; sweep in {root}")
    print(f"# machine ceiling: a busy loop on {args.workers} processes runs {machine_scaling(args.workers):.2f}x one process")
    for rep in range(args.repeats):
        order = list(setups) if rep % 2 == 0 else list(reversed(setups))
        for name in order:
            executor, workers = setups[name]
            out = root / f"{name}-{rep}"
            before = os.getloadavg()[0]
            start = time.perf_counter()
            report = run_sweep(cfg, out, executor=executor, workers=workers, progress=False)
            wall = time.perf_counter() - start
            after = os.getloadavg()[0]
            n_runs = report.total
            data = (out / "results.csv").read_bytes()
            reference = reference or data
            assert data == reference, f"{name}: results.csv differs"
            with open(out / "timings.csv", newline="") as fh:
                cpu = sum(float(r["cpu_s"]) for r in csv.DictReader(fh))
            walls[name].append(wall)
            run_cpu[name].append(cpu)
            loads.append(f"{name}#{rep}: {before:.2f} -> {after:.2f}")
            print(f"{name:>8} round {rep}: wall {wall:7.2f} s, CPU in runs {cpu:7.2f} s, "
                  f"load avg (1 min) {before:.2f} -> {after:.2f}", flush=True)
    print(f"\n# {n_runs} runs; median wall over {args.repeats} rounds (results.csv identical in every measurement)")
    med = {name: statistics.median(w) for name, w in walls.items()}
    base = med["pool-1"]
    for name in setups:
        per_run = med[name] / n_runs
        print(f"{name:>8}: {med[name]:7.2f} s ({per_run:.3f} s/run), speedup vs pool-1 {base / med[name]:.2f}x, "
              f"vs serial {med['serial'] / med[name]:.2f}x, CPU in runs {statistics.median(run_cpu[name]):.2f} s")


if __name__ == "__main__":
    main()
