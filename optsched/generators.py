"""Seeded random instances of every model kind, one generator per kind, in a registry.

``generate(kind, size, rng)`` returns one valid model of ``kind``; the same ``rng`` state
gives the same instance. ``size`` is the generator's natural size parameter (the table
below); ``model.size`` of the result is the number the benchmarks plot against, and for most
kinds the two are equal.

=============================  ===========================  ==============================================
kind                           ``size``                     distribution
=============================  ===========================  ==============================================
``set_packing``                N = M (sets = elements)      :meth:`SetPacking.random`, set sizes 1..4,
                                                            weights U[0, 1) (benchmarks/bench_set_packing)
``set_packing_batch``          N = M                        the same family, 8 weight vectors U[0, 1)
                                                            (a max-weight frame of 8 requirement vectors)
``budgeted_ip``                |E| (items)                  one member P4(s) of the ESDP budget family at
                                                            slot t = 2000, s ~ U{0..0.3 S} (below)
``budget_family``              |E| (items)                  ESDP's P4(s, t) family at t = 2000: K = 3,
                                                            A in {1, 2}, c_k = ceil(sum_e A_ke / 2),
                                                            S = xi m (benchmarks/bench_budget_dp)
``escb_index``                 |E| (items)                  ESDP-like P3 at t = 2000: v_hat ~ U[0, 1],
                                                            sigma2_hat = g(t) / (2 n_e) (bench_aescb_gap)
``capacity_projection``        n (variables)                positive-leaning z, caps U[0, 3], groups of
                                                            about 10, 70 % of capacities binding
                                                            (benchmarks/bench_projection)
``stationary_allocation``      |R| (nodes)                  y* of (10) on a Table II scenario of paper 003
                                                            (|L| = 10, K = 6, mixed utilities) with
                                                            N_l ~ Binomial(2000, 0.7); ``model.size`` is
                                                            the number of variables (about 15 |R|)
``pseudo_welfare``             |R_n| (units)                a Section IV job of paper 002 at random usage
                                                            levels, utility kind at random
                                                            (benchmarks/bench_pseudo_welfare)
``pseudo_welfare_integral``    |R_n| (units)                the same job, non-partitionable (III-D)
``onsocmax_offline``           jobs (10 nodes, 24 slots)    :class:`MeshGenerator` Section IV defaults,
                                                            utility kind at random; ``model.size`` is the
                                                            number of (job, unit) pairs
``onsocmax_offline_integral``  jobs                         a mesh of ceil(size / 4) >= 2 nodes and
                                                            ceil(size / 1.5) >= 4 slots, <= 2 nodes and
                                                            mean duration 1 slot per job: few pairs per
                                                            job, so brute force applies at small sizes
=============================  ===========================  ==============================================

Add a kind with ``@register_generator("name")`` on a function ``(size, rng) -> Model``.
Generators draw only from ``rng`` (never from global state) and import nothing heavy.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from optsched.models.base import Model

GeneratorFn = Callable[[int, np.random.Generator], Model]
MAX_SIZE = 10**6  # the largest ``size`` (set packing's element limit; every kind's arrays stay small)
_GENERATORS: dict[str, GeneratorFn] = {}

ESDP_SLOT = 2000  # the paper's horizon T: statistics are drawn as at slot t = T


def register_generator(kind: str) -> Callable[[GeneratorFn], GeneratorFn]:
    """Decorator: register ``fn(size, rng) -> Model`` as the generator of model kind ``kind``."""

    def deco(fn: GeneratorFn) -> GeneratorFn:
        if kind in _GENERATORS:
            raise RuntimeError(f"generator {kind!r} registered twice")
        _GENERATORS[kind] = fn
        return fn

    return deco


def generator_kinds() -> list[str]:
    """Model kinds that have a generator, in registration order."""
    return list(_GENERATORS)


def generate(kind: str, size: int, rng: np.random.Generator) -> Model:
    """One random instance of ``kind`` at ``size`` drawn from ``rng``."""
    if kind not in _GENERATORS:
        raise ValueError(f"model: no generator for {kind!r} (known: {', '.join(_GENERATORS)})")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 1 <= size <= MAX_SIZE:
        raise ValueError(f"size: expected a whole number in 1..{MAX_SIZE}, got {size!r}")
    return _GENERATORS[kind](int(size), rng)


# --- paper 004 --------------------------------------------------------------------------------
@register_generator("set_packing")
def set_packing(size: int, rng: np.random.Generator) -> Model:
    from optsched.models.set_packing import SetPacking

    return SetPacking.random(rng, size, size, max_size=4)


BATCH_COPIES = 8  # weight vectors of a generated set_packing_batch


@register_generator("set_packing_batch")
def set_packing_batch(size: int, rng: np.random.Generator) -> Model:
    """A max-weight frame: ``size`` jobs over ``size`` workers (sets of 1..4 elements) and
    ``BATCH_COPIES`` weight vectors U[0, 1)."""
    from optsched.models.set_packing import SetPacking, SetPackingBatch

    one = SetPacking.random(rng, size, size, max_size=4)
    return SetPackingBatch(one.n_elements, one.family, rng.random((BATCH_COPIES, size)))  # type: ignore[arg-type]


# --- paper 000 (ESDP) -------------------------------------------------------------------------
def esdp_slot_statistics(
    rng: np.random.Generator, n_edges: int, t: int = ESDP_SLOT, alpha: float = 0.5
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(A, v_hat, sigma2_hat, xi, m) as ESDP sees them at slot t: K = 3 resources, A in {1, 2},
    m = ceil(alpha |E|), delta(t) = 1 / (ln(ln(t+1)+1)+1), xi = ceil(m / delta),
    g(t) = ln(t+1) + 4 ln(ln(t+1)+1) m, channel counts n_e ~ U{1..t/|E|}."""
    A = rng.integers(1, 3, (3, n_edges))
    m = max(1, math.ceil(alpha * n_edges))
    delta = 1.0 / (math.log(math.log(t + 1) + 1) + 1)
    xi = math.ceil(m / delta)
    g = math.log(t + 1) + 4 * math.log(math.log(t + 1) + 1) * m
    counts = rng.integers(1, max(2, t // n_edges), n_edges)
    v_hat = rng.random(n_edges)
    return A, v_hat, g / (2 * counts), xi, m


def esdp_budget_family(
    rng: np.random.Generator, n_edges: int, alpha_c: float = 0.5, t: int = ESDP_SLOT, alpha: float = 0.5
) -> Model:
    """P4(s, t) for s = 0..xi m: Upsilon = ceil(xi v_hat), Sigma2 = ceil(xi^2 sigma2_hat),
    capacity c_k = max(1, ceil(alpha_c sum_e A_ke))."""
    from optsched.models.budget_family import BudgetFamily

    A, v_hat, sigma2, xi, m = esdp_slot_statistics(rng, n_edges, t, alpha)
    capacity = np.maximum(1, np.ceil(alpha_c * A.sum(axis=1))).astype(int)
    return BudgetFamily(np.ceil(xi**2 * sigma2), A, capacity, np.ceil(xi * v_hat), xi * m)


def esdp_escb_index(rng: np.random.Generator, n_edges: int, t: int = ESDP_SLOT) -> tuple[Model, int, int]:
    """(P3 model, xi, S = xi m) at slot t, capacity c_k = ceil(sum_e A_ke / 2)."""
    from optsched.models.escb_index import EscbIndex

    A, v_hat, sigma2, xi, m = esdp_slot_statistics(rng, n_edges, t)
    capacity = np.ceil(0.5 * A.sum(axis=1)).astype(int)
    return EscbIndex(v_hat, sigma2, A, capacity), xi, xi * m


@register_generator("budget_family")
def budget_family(size: int, rng: np.random.Generator) -> Model:
    return esdp_budget_family(rng, size)


@register_generator("budgeted_ip")
def budgeted_ip(size: int, rng: np.random.Generator) -> Model:
    fam = esdp_budget_family(rng, size)
    s = int(rng.integers(0, int(0.3 * fam.max_budget) + 1))  # type: ignore[attr-defined]
    return fam.member(s)  # type: ignore[attr-defined]


@register_generator("escb_index")
def escb_index(size: int, rng: np.random.Generator) -> Model:
    return esdp_escb_index(rng, size)[0]


# --- paper 003 (OGASched) ---------------------------------------------------------------------
def projection_instance(rng: np.random.Generator, n: int, group_size: int = 10) -> Model:
    """Positive-leaning z (as after a gradient step), unequal caps, 70 % binding capacities."""
    from optsched.models.capacity_projection import CapacityProjection

    n_groups = max(1, n // group_size)
    z = rng.normal(1.0, 2.0, n)
    upper = rng.uniform(0.0, 3.0, n)
    group = rng.integers(0, n_groups, n)
    load = np.bincount(group, weights=np.clip(z, 0, upper), minlength=n_groups)
    binding = rng.random(n_groups) < 0.7
    binding[0] = True  # a single group always binds
    capacity = np.where(binding, rng.uniform(0.1, 0.9, n_groups) * load, load + 1.0)
    return CapacityProjection(z=z, upper=upper, group=group, capacity=capacity)


@register_generator("capacity_projection")
def capacity_projection(size: int, rng: np.random.Generator) -> Model:
    return projection_instance(rng, size)


@register_generator("stationary_allocation")
def stationary_allocation(size: int, rng: np.random.Generator) -> Model:
    from optsched.ogasched.offline import stationary_model
    from optsched.ogasched.scenario import synthetic_scenario

    scn = synthetic_scenario(rng, n_nodes=size)
    return stationary_model(scn, rng.binomial(2000, 0.7, scn.n_ports).astype(np.float64))


# --- paper 002 (ONSOCMAX) ---------------------------------------------------------------------
def pseudo_welfare_job(rng: np.random.Generator, n: int, kind: str, *, integral: bool = False) -> Model:
    """Section IV draws (a ~ U[1,3], beta ~ U[0.1,0.5], C ~ N(20,2), xbar ~ N(7,1)), rho ~
    N(18,3) scaled by |R_n| / 24 so (4) stays binding, usage levels U[0, 0.9] C."""
    from optsched.models.pseudo_welfare import PseudoWelfare, PseudoWelfareIntegral

    cls = PseudoWelfareIntegral if integral else PseudoWelfare
    cap = np.abs(rng.normal(20, 2, n)) + 1
    return cls(
        utility=kind, a=rng.uniform(1, 3, n), beta=rng.uniform(0.1, 0.5, n), capacity=cap,
        xbar=np.abs(rng.normal(7, 1, n)), usage=cap * rng.uniform(0, 0.9, n),
        rho=float(abs(rng.normal(18, 3))) * max(1.0, n / 24),
    )


def _utility_kind(rng: np.random.Generator) -> str:
    from optsched.models.utilities import KINDS

    return str(KINDS[int(rng.integers(len(KINDS)))])


@register_generator("pseudo_welfare")
def pseudo_welfare(size: int, rng: np.random.Generator) -> Model:
    return pseudo_welfare_job(rng, size, _utility_kind(rng))


@register_generator("pseudo_welfare_integral")
def pseudo_welfare_integral(size: int, rng: np.random.Generator) -> Model:
    return pseudo_welfare_job(rng, size, _utility_kind(rng), integral=True)


@register_generator("onsocmax_offline")
def onsocmax_offline(size: int, rng: np.random.Generator) -> Model:
    from optsched.onsocmax.env import MeshGenerator
    from optsched.models.onsocmax_offline import OfflineWelfare

    return OfflineWelfare(MeshGenerator(n_jobs=size, kind=_utility_kind(rng)).draw(rng))


@register_generator("onsocmax_offline_integral")
def onsocmax_offline_integral(size: int, rng: np.random.Generator) -> Model:
    from optsched.onsocmax.env import MeshGenerator
    from optsched.models.onsocmax_offline import OfflineWelfareIntegral

    gen = MeshGenerator(n_nodes=max(2, math.ceil(size / 4)), n_slots=max(4, math.ceil(size / 1.5)), n_jobs=size,
                        max_nodes=2, mean_duration=1.0, kind=_utility_kind(rng))
    return OfflineWelfareIntegral(gen.draw(rng))


# --- generic programs (MPS / LP files) -------------------------------------------------------------
@register_generator("linear_program")
def linear_program(size: int, rng: np.random.Generator) -> Model:
    """A bounded program in ``size`` variables: a multidimensional knapsack (0-1, whole data) half
    the time, else a mixed program (integer and continuous columns, fractional data, equality rows)."""
    from optsched.models.linear_program import LinearProgram

    k = max(1, size // 4)
    if rng.random() < 0.5:
        w = rng.integers(0, 10, (k, size)).astype(float)
        return LinearProgram(rng.integers(1, 20, size).astype(float), w, np.full(k, -np.inf),
                             np.floor(0.5 * w.sum(axis=1)), np.zeros(size), np.ones(size), np.ones(size), "max")
    A = np.round(rng.uniform(-1, 3, (k, size)), 3)
    upper = np.round(rng.uniform(1, 5, size), 2)
    rhs = np.round(0.4 * np.abs(A).sum(axis=1) * upper.mean(), 3)
    lower_rows = np.where(rng.random(k) < 0.2, rhs, -np.inf)  # some equalities (feasible: x = 0 not required)
    lower_rows = np.where(np.isfinite(lower_rows), np.minimum(lower_rows, 0.0), lower_rows)
    return LinearProgram(np.round(rng.uniform(-2, 5, size), 3), A, lower_rows, rhs, np.zeros(size), upper,
                         rng.random(size) < 0.5, str(rng.choice(["min", "max"])))


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
    "cvxpy": (big_projection, big_job),
    "alm": (big_job,),
    "stationary_alm": (big_stationary,),
}
