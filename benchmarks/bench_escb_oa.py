"""The exact ESCB index (``escb_oa``) on instance families beyond the ESDP indices it was tuned on.

``escb_oa``'s HiGHS settings (no RINS / RENS / root reduced-cost heuristics, the best x so far
as each MILP's incumbent) were chosen on indices captured from an ESDP ``scale4x`` run. This
times it, through one ``Prepared.solve`` loop, on other families, and records every objective
and termination, so that two commits can be compared:

- ``gen<n>``: ``generate("escb_index", n)`` (ESDP-like, not captured from a run), 8 each;
- ``fuzz-<variant>``: the fuzz builder's random / ties / fractional / zero_mean variants, 15 each;
- ``heavyvar<n>``: the sqrt term dominating (mean ~ U[0, 0.2], variance ~ U[0, 5]), 4 knapsack
  rows with weights in 1..9 and c = ceil(0.4 sum_e A_ke), 8 each: the most MILPs per index.

    python benchmarks/bench_escb_oa.py --out head.json [--only gen16,heavyvar40]
    python benchmarks/bench_escb_oa.py --compare base.json head.json

``--compare`` prints CPU seconds per family, their ratio (second / first) and the largest
relative difference of the objectives. Measured 2026-11-27 (2 cores), 97b10c3 (before the
HiGHS settings) against c97e43f, two interleaved pairs: total 0.93x / 0.94x; ``gen16``-``gen96``
0.50-0.80x, the fuzz families 0.68-0.95x (``fuzz-ties``: 13 ms in all), ``heavyvar40`` 0.66x /
0.68x, ``heavyvar80`` 1.03x / 1.02x (index by index 0.51x to 2.1x either way: HiGHS's search,
not a trend); every objective the same, every termination optimal.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from optsched.generators import generate
from optsched.models.escb_index import EscbIndex, fuzz_escb_index
from optsched.solve import prepare


def families() -> list[tuple[str, EscbIndex]]:
    out: list[tuple[str, EscbIndex]] = []
    for size in (16, 32, 48, 64, 96):
        out += [(f"gen{size}", generate("escb_index", size, np.random.default_rng([size, s]))) for s in range(8)]
    for variant in ("random", "ties", "fractional", "zero_mean"):
        out += [(f"fuzz-{variant}", fuzz_escb_index(np.random.default_rng([7, s]), variant)) for s in range(15)]
    for n in (40, 80):
        for s in range(8):
            rng = np.random.default_rng([n, s, 3])
            weights = rng.integers(1, 10, (4, n))
            out.append((f"heavyvar{n}", EscbIndex(mean=rng.uniform(0.0, 0.2, n), variance=rng.uniform(0.0, 5.0, n),
                                                  weights=weights, capacity=np.ceil(0.4 * weights.sum(axis=1)).astype(int))))
    return out


def measure(path: str, only: set[str]) -> None:
    prepared = prepare("escb_index", "escb_oa")
    record: dict[str, dict[str, list]] = {}
    for name, model in families():
        if only and name not in only:
            continue
        start = time.process_time()
        result = prepared.solve(model)
        entry = record.setdefault(name, {"cpu_s": [], "objective": [], "termination": []})
        entry["cpu_s"].append(time.process_time() - start)
        entry["objective"].append(result.objective)
        entry["termination"].append(result.termination.value)
    with open(path, "w") as fh:
        json.dump(record, fh)
    print(f"wrote {path}: {sum(len(v['cpu_s']) for v in record.values())} indices, "
          f"{sum(sum(v['cpu_s']) for v in record.values()):.2f} s CPU")


def compare(first: str, second: str) -> None:
    with open(first) as fh:
        a = json.load(fh)
    with open(second) as fh:
        b = json.load(fh)
    print(f"{'family':<18}{'first s':>9}{'second s':>10}{'ratio':>7}{'max rel obj diff':>18}  terminations")
    for name in a:
        ta, tb = sum(a[name]["cpu_s"]), sum(b[name]["cpu_s"])
        diff = max(abs(x - y) / max(1.0, abs(x)) for x, y in zip(a[name]["objective"], b[name]["objective"]))
        terms = sorted(set(a[name]["termination"]) | set(b[name]["termination"]))
        print(f"{name:<18}{ta:>9.3f}{tb:>10.3f}{tb / ta:>7.2f}{diff:>18.1e}  {', '.join(terms)}")
    ta = sum(sum(v["cpu_s"]) for v in a.values())
    tb = sum(sum(v["cpu_s"]) for v in b.values())
    print(f"{'total':<18}{ta:>9.3f}{tb:>10.3f}{tb / ta:>7.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", help="JSON file of this commit's times, objectives and terminations")
    group.add_argument("--compare", nargs=2, metavar=("FIRST", "SECOND"), help="two such files")
    ap.add_argument("--only", default="", help="comma-separated families (default: all)")
    args = ap.parse_args()
    if args.out:
        measure(args.out, {name for name in args.only.split(",") if name})
    else:
        compare(*args.compare)


if __name__ == "__main__":
    main()
