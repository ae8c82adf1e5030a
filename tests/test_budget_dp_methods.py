"""The DP methods of Algorithm 2 against each other and brute force, and the envelope pick.

* ``reach`` (the default: Pareto fronts on the capacity cells visited from the root) gives
  every budget's optimum (brute force) and the same x per budget as ``pareto`` (the fronts on
  the whole capacity box): both break ties the same way.
* ``envelope`` (``aescb_index``'s default, ESDP's per-slot pick) returns the same x as the
  full family followed by (17), on instances built to have many ties (small whole values) and
  on ESDP-like scaled instances, with S small enough that budgets cap.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.solvers.budget_dp import plan_budget_family, solve_budget_family
from optsched.solvers.escb_aescb import aescb_index


def _brute_force(values, weights, capacity, coeffs, S, mask) -> np.ndarray:
    n = values.shape[0]
    rows = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(bool)
    ok = np.all(rows.astype(np.int64) @ weights.T <= capacity, axis=1) & ~np.any(rows & ~mask, axis=1)
    val = rows.astype(float) @ values
    up = rows.astype(np.int64) @ coeffs
    return np.array([val[ok & (up >= s)].max() if (ok & (up >= s)).any() else -np.inf for s in range(S + 1)])


@st.composite
def instances(draw: st.DrawFn, max_items: int = 9, small_values: bool = False):
    n = draw(st.integers(0, max_items))
    k = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.integers(0, 4 if small_values else 50, n).astype(float)
    weights = rng.integers(0, 4, (k, n))
    capacity = rng.integers(0, 3 * n + 2, k)
    coeffs = rng.integers(0, 4 if small_values else 9, n)
    mask = rng.random(n) < 0.9
    S = int(rng.integers(0, coeffs.sum() + 3))
    return values, weights, capacity, coeffs, S, mask


@settings(max_examples=150)
@given(instances())
def test_reach_equals_brute_force_and_pareto(inst) -> None:
    values, weights, capacity, coeffs, S, mask = inst
    reach = solve_budget_family(values, weights, capacity, coeffs, S, mask)
    pareto = solve_budget_family(values, weights, capacity, coeffs, S, mask, method="pareto")
    np.testing.assert_array_equal(reach.values, _brute_force(values, weights, capacity, coeffs, S, mask))
    np.testing.assert_array_equal(reach.choices, pareto.choices)
    assert reach.table_cells <= pareto.table_cells
    for s in np.flatnonzero(np.isfinite(reach.values)):
        x = reach.choices[s]
        assert not (x & ~mask).any() and np.all(weights @ x <= capacity) and coeffs @ x >= s
        assert values @ x == reach.values[s]


def _full_family_pick(values, weights, capacity, coeffs, S, mask, method: str) -> np.ndarray:
    fam = solve_budget_family(values, weights, capacity, coeffs, S, mask, method=method)
    score = np.arange(S + 1) + np.sqrt(np.where(np.isfinite(fam.values), fam.values, 0.0))
    score[~np.isfinite(fam.values)] = -np.inf
    return fam.choices[int(np.argmax(score))]


@settings(max_examples=200)
@given(instances(max_items=12, small_values=True), st.sampled_from(["reach", "pareto"]))
def test_envelope_pick_equals_the_full_family_pick_with_ties(inst, method: str) -> None:
    values, weights, capacity, coeffs, S, mask = inst
    from optsched.solvers.escb_aescb import envelope_pick

    plan = plan_budget_family(values, weights, capacity, coeffs, S, mask)
    x = np.zeros(values.shape[0], dtype=bool)
    x[plan.items] = envelope_pick(plan)[0]
    np.testing.assert_array_equal(x, _full_family_pick(values, weights, capacity, coeffs, S, mask, method))


@settings(max_examples=20)
@given(instances(max_items=8))
def test_a_plan_s_arrays_are_read_only(inst) -> None:
    """One argument type for the numba kernels, and a plan that cannot change under a table."""
    import dataclasses

    plan = plan_budget_family(*inst)
    arrays = {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan)
              if isinstance(getattr(plan, f.name), np.ndarray)}
    assert {"items", "values", "weights", "capacity", "lo", "hi"} <= set(arrays)
    assert not [name for name, a in arrays.items() if a.flags.writeable]


@settings(max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(10, 24), st.sampled_from([1, 4, 16, 50]), st.booleans())
def test_envelope_equals_full_family_on_esdp_like_instances(seed: int, n: int, xi: int, cap_budget: bool) -> None:
    rng = np.random.default_rng(seed)
    mean = rng.random(n)
    variance = 40.0 / (2 * rng.integers(1, 200, n))
    weights = rng.integers(1, 3, (3, n))
    capacity = np.ceil(0.5 * weights.sum(axis=1)).astype(int)
    mask = rng.random(n) < 0.9
    m = math.ceil(0.5 * n)
    S = xi * m // (3 if cap_budget else 1)
    x_env, value = aescb_index(mean, variance, weights, capacity, xi, max_budget=S, mask=mask)
    for method in ("reach", "pareto"):
        x_full, value_full = aescb_index(mean, variance, weights, capacity, xi, max_budget=S, mask=mask, method=method)
        np.testing.assert_array_equal(x_env, x_full)
        assert value == value_full


def test_envelope_unknown_method_and_empty_instances() -> None:
    with pytest.raises(ValueError, match="method"):
        aescb_index([0.5], [0.1], [[1]], [1], 4, method="magic")
    x, value = aescb_index([0.5, 0.2], [0.1, 0.3], [[1, 1]], [1], 4, mask=[False, False])
    assert not x.any() and value == 0.0
    x, value = aescb_index([0.5, 0.2], [0.1, 0.3], [[2, 2]], [1], 4)
    assert not x.any() and value == 0.0


def test_a_family_of_a_million_budgets_is_solved_and_checked_run_by_run() -> None:
    """10^8 budgets were accepted: budget_exact assigned every budget's entry in a Python loop
    and the seam's check visited each (over 120 s with a time limit of 2 s). Budgets stop at
    10^6, a reused optimum is one object over its run of budgets, and a run is checked once, at
    its largest budget, where its budget row is tightest."""
    import optsched
    from optsched.models.budget_family import MAX_BUDGET, BudgetFamily
    from optsched.result import Termination

    data = {"values": [1.0, 2.0], "weights": [[1, 1]], "capacity": [2], "budget_coeffs": [MAX_BUDGET, 1]}
    with pytest.raises(ValueError, match="max_budget: must be <= 1000000"):
        BudgetFamily(**data, max_budget=MAX_BUDGET + 1)
    family = BudgetFamily(**data, max_budget=MAX_BUDGET)
    result = optsched.solve(family, "budget_exact", time_limit=2)
    assert result.termination is Termination.OPTIMAL and result.extra["solves"] == 1
    both = result.solution[0]
    assert all(entry is both for entry in result.solution)
    short = np.array([1])  # budget_coeffs.x = 1: P4(s) for s <= 1 only
    problems = family.violations((short,) * 3 + (None,) * (MAX_BUDGET - 2))
    assert problems and problems[0].startswith("s = 2: budget_coeffs.x = 1 < 2")
    assert family.violations((short, short) + (None,) * (MAX_BUDGET - 1)) == []
