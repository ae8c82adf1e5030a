"""Every backend on generated models whose numbers are scaled: a survey of statuses and certificates.

    python scripts/scaled_fuzz.py [--kinds K ...] [--instances N] [--seed S]

Each instance is ``optsched.generators.generate(kind, size, rng)`` with every numeric field but
those of ``INDEX_FIELDS`` (indices, kinds, masks, budgets, budget coefficients, the mesh's times)
multiplied, with probability 1/2, by its own factor 10^U(-4, 4); what the model
refuses (a ValueError) is skipped. Every available backend that fits solves it through
``optsched.solve`` (verification on). Printed per kind and backend: how many instances ended in
each termination, and, across backends, the counts of

- ``disagree``: two backends that both say ``optimal`` and whose objectives do not agree by the
  seam's rule (``optsched.result.agrees_at_scale``);
- ``bound past``: a bound on the wrong side of another backend's verified objective by more
  than that rule allows (a false certificate);

each with the first few seeds, so that a case can be replayed (``--seed``, ``--instances 1``).
The tests' fuzz (tests/test_fuzz.py) draws unscaled data. At 200 seeds a kind, this survey found
at 1d9e9f7 the first-order y* stalling (``stationary_alm`` ``iteration_limit`` on 5 instances, 0
since its budget rule) and integer programs whose optimum is to choose nothing left uncertified
by HiGHS, SCIP and Pyomo (``feasible``: 12 budget families, 2 knapsacks, 7-8 integral P1s; 0
since ``certificates.nothing_can_be_chosen``). What it still shows is
cvxpy/Clarabel losing digits on scaled data (``feasible``, or ``error`` where it says infeasible
or fails), and mixed-integer programs whose proofs stay short by what the solvers' tolerances
leave unproven (``certificates.branch_and_bound_proof``: ``feasible``).
"""

from __future__ import annotations

import argparse
import collections
import time
from typing import Any

import numpy as np

import optsched
from optsched.generators import generate
from optsched.models.base import kind_specs, model_from_dict
from optsched.result import Termination, agrees_at_scale
from optsched.solvers.registry import fitting_backends

INDEX_FIELDS = frozenset({"model", "group", "port", "resource", "kind", "utility", "sets", "mask", "integrality",
                          "budget", "max_budget", "budget_coeffs", "sense", "nodes", "arrival", "deadline"})


def scaled_model(kind: str, seed: int) -> tuple[Any, list[str]] | None:
    """The instance of ``seed`` and the fields it scaled, or None where the model refuses it."""
    rng = np.random.default_rng(seed)
    data = generate(kind, int(rng.integers(2, 3 * kind_specs()[kind].tiny + 6)), rng).to_dict()
    changed = []
    for key, value in data.items():
        if key in INDEX_FIELDS:
            continue
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            continue
        if not arr.size or rng.random() < 0.5:
            continue
        factor = 10.0 ** rng.uniform(-4, 4)
        data[key] = (arr * factor).tolist()
        changed.append(f"{key} x {factor:.2g}")
    try:
        return model_from_dict(data), changed
    except ValueError:
        return None


def survey(kind: str, instances: int, first_seed: int) -> None:
    statuses: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    disagree: list[int] = []
    bound_past: list[int] = []
    n = 0
    start = time.perf_counter()
    for seed in range(first_seed, first_seed + instances):
        built = scaled_model(kind, seed)
        if built is None:
            continue
        model, _ = built
        n += 1
        results = {b.NAME: optsched.solve(model, b.NAME) for b in fitting_backends(model)}
        for name, r in results.items():
            statuses[name][r.termination.value] += 1
        optimal = [r.objective for r in results.values() if r.termination is Termination.OPTIMAL]
        if any(not agrees_at_scale(model, a, b) for a in optimal for b in optimal):
            disagree.append(seed)
        verified = [r.objective for r in results.values() if r.ok and r.objective is not None]
        best = (max if model.maximize else min)(verified, default=None)
        if best is not None and any(
                r.bound is not None and (r.bound < best if model.maximize else r.bound > best)
                and not agrees_at_scale(model, best, r.bound) for r in results.values()):
            bound_past.append(seed)
    print(f"\n== {kind}: {n} instances ({time.perf_counter() - start:.0f} s)")
    for name, counts in statuses.items():
        print(f"  {name:<16}" + ", ".join(f"{status} {count}" for status, count in counts.most_common()))
    print(f"  disagree {len(disagree)} {disagree[:8]}; bound past {len(bound_past)} {bound_past[:8]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="*", default=sorted(kind_specs()))
    ap.add_argument("--instances", type=int, default=200, help="seeds a kind")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    args = ap.parse_args()
    for kind in args.kinds:
        survey(kind, args.instances, args.seed)


if __name__ == "__main__":
    main()
