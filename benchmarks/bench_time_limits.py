"""How closely every backend that declares ``time_limit`` keeps it, set-up included.

For each such backend (from the registry) and each of its hard instances
(``optsched.generators.HARD_INSTANCES``, plus a 10^6-variable projection for the QP/conic
backends), the wall time of one ``Prepared.solve(model, time_limit=L)`` (the backend prepared
first, as a policy would) for L in ``--limits``. Target: wall <= 1.5 L + 1 s. A solve whose
estimated set-up alone exceeds L is not started (termination time_limit at once); the table
says which.

    python benchmarks/bench_time_limits.py [--limits 0.2 1] [--big 1000000]
"""

from __future__ import annotations

import argparse
import os
import time

import optsched
from optsched.generators import HARD_INSTANCES, big_projection
from optsched.solvers.registry import all_backends


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limits", type=float, nargs="+", default=[0.2, 1.0])
    ap.add_argument("--big", type=int, default=1_000_000, help="variables of the big projection")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores shared); {time.strftime('%Y-%m-%d %H:%M')}")
    big = big_projection(args.big)
    print(f"{'backend':13s} {'instance':22s} {'size':>8s} {'limit s':>7s} {'wall s':>8s} {'wall/limit':>10s} "
          f"{'<= 1.5L+1':>9s}  termination / note")
    for name, backend in sorted(all_backends().items()):
        if not backend.SUPPORTS_TIME_LIMIT or not backend.available():
            continue
        models = [build() for build in HARD_INSTANCES[name]]
        if backend.fits(big) is None:
            models.append(big)
        for model in models:
            prepared = optsched.prepare(model, name)
            for limit in args.limits:
                start = time.perf_counter()
                r = prepared.solve(model, time_limit=limit)
                wall = time.perf_counter() - start
                note = r.message[:60] if "set-up" in r.message else ""
                print(f"{name:13s} {model.name:22s} {model.size:8d} {limit:7.2f} {wall:8.2f} {wall / limit:10.2f} "
                      f"{str(wall <= 1.5 * limit + 1):>9s}  {r.termination.value} {note}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
