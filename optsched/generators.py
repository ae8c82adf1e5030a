"""Seeded random instances of every model kind, one generator per kind, in a registry.

``generate(kind, size, rng)`` returns one valid model of ``kind``; the same ``rng`` state
gives the same instance. ``size`` is the generator's natural size parameter (the docstring
of each kind's generator says what it counts and how instances are drawn); ``model.size`` of
the result is the number the benchmarks plot against, and for most kinds the two are equal.

Each kind's generator sits in its model module (``@register_generator("name")`` from
:mod:`optsched.models.base` on a function ``(size, rng) -> Model``); this module is the entry
point. Generators draw only from ``rng`` (never from global state) and import nothing heavy.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from optsched.models.base import Model, generators

MAX_SIZE = 10**6  # the largest ``size`` (set packing's element limit; every kind's arrays stay small)


def generator_kinds() -> list[str]:
    """Model kinds that have a generator, in registration order."""
    return list(generators())


def generate(kind: str, size: int, rng: np.random.Generator) -> Model:
    """One random instance of ``kind`` at ``size`` drawn from ``rng``."""
    known = generators()
    if kind not in known:
        raise ValueError(f"model: no generator for {kind!r} (known: {', '.join(known)})")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 1 <= size <= MAX_SIZE:
        raise ValueError(f"size: expected a whole number in 1..{MAX_SIZE}, got {size!r}")
    try:
        return known[kind](int(size), rng)
    except ValueError as exc:  # a model's own limit met at this size (budgeted_ip from about 3000: max_budget)
        raise ValueError(f"size: {kind} cannot be generated at size {int(size)} ({exc})") from None


# --- hard instances: what a time limit must stop (tests/test_solver_limits, bench_time_limits) ----
def chu_beasley(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Correlated 0-1 multidimensional knapsack (Chu & Beasley 1998): hard for exact MIP."""
    w = rng.integers(1, 1001, (k, n)).astype(float)
    capacity = np.floor(0.5 * w.sum(axis=1))
    values = np.floor(w.sum(axis=0) / k + 500 * rng.random(n))
    return values, w, capacity


def hard_mknap() -> Model:
    from optsched.models.budgeted_ip import BudgetedIP

    return BudgetedIP(*chu_beasley(np.random.default_rng(7), 250, 10))


def hard_family() -> Model:
    from optsched.models.budget_family import BudgetFamily

    v, w, c = chu_beasley(np.random.default_rng(7), 250, 10)
    return BudgetFamily(v, w, c, budget_coeffs=np.ones(250), max_budget=3)


def hard_escb() -> Model:
    from optsched.models.escb_index import EscbIndex

    rng = np.random.default_rng(8)
    _, w, c = chu_beasley(rng, 100, 5)
    return EscbIndex(mean=rng.random(100), variance=0.3 * rng.random(100), weights=w, capacity=c)


def _wide_knapsack(rng: np.random.Generator, n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """One resource, weights up to 10^5, capacity 4 x 10^5: a DP table of ~8 x 10^7 capacity cells."""
    return rng.integers(1, 100_000, (1, n)).astype(float), np.array([4e5])


def hard_table() -> Model:  # dp: about 10 s with the default method
    from optsched.models.budgeted_ip import BudgetedIP

    rng = np.random.default_rng(0)
    w, c = _wide_knapsack(rng)
    return BudgetedIP(rng.integers(1, 1000, w.shape[1]).astype(float), w, c)


def hard_escb_table() -> Model:  # aescb: its DP over the same capacity cells
    from optsched.models.escb_index import EscbIndex

    rng = np.random.default_rng(13)
    w, c = _wide_knapsack(rng)
    return EscbIndex(mean=rng.random(w.shape[1]), variance=0.3 * rng.random(w.shape[1]), weights=w, capacity=c)


def hard_enumeration() -> Model:
    from optsched.models.budgeted_ip import BudgetedIP

    rng = np.random.default_rng(9)
    return BudgetedIP(rng.uniform(0, 10, 22), rng.integers(1, 10, (3, 22)), [40, 40, 40])


def big_projection(n: int = 20_000) -> Model:
    from optsched.models.capacity_projection import CapacityProjection

    rng = np.random.default_rng(10)
    groups = max(1, n // 100)
    return CapacityProjection(rng.normal(1, 2, n), rng.uniform(0, 4, n), rng.integers(0, groups, n),
                              rng.uniform(0, 50, groups))


def big_job(n: int = 5000) -> Model:
    from optsched.models.pseudo_welfare import PseudoWelfare

    rng = np.random.default_rng(11)
    cap = np.abs(rng.normal(20, 2, n)) + 1
    return PseudoWelfare(utility="log", a=rng.uniform(1, 3, n), beta=rng.uniform(0.1, 0.5, n), capacity=cap,
                         xbar=np.abs(rng.normal(7, 1, n)), usage=cap * rng.uniform(0, 0.9, n), rho=0.3 * n)


def big_stationary() -> Model:  # y* of (10) at the large preset's size (15,000 variables)
    return generate("stationary_allocation", 1024, np.random.default_rng(12))


# backend -> instances it cannot finish within a short time limit
HARD_INSTANCES: dict[str, tuple[Callable[[], Model], ...]] = {
    "highs": (hard_mknap,),
    "cpsat": (hard_mknap,),
    "pyomo": (hard_mknap,),
    "scip": (hard_mknap,),
    "budget_exact": (hard_family,),
    "escb_oa": (hard_escb,),
    "brute_force": (hard_enumeration,),
    "dp": (hard_table,),
    "aescb": (hard_escb_table,),
    "cvxpy": (big_projection, big_job),
    "alm": (big_job,),
    "stationary_alm": (big_stationary,),
}
