"""Exact backends answer for the model's own feasible set: its ``violations`` at
``FEASIBILITY_TOL``, which lets a row be passed by ``row_slack`` (1e-9 of its side or load).

An item within that slack over its capacity is feasible to the model (brute force takes it).
HiGHS, Pyomo and cvxpy, given the rows as written, said "optimal 0" beside brute force's 1
(probe BI, 2026-11-28): a bound on a smaller set than the model's. The solvers now get the rows
at the model's tolerance (``StandardForm.widened``), and a point they return from beyond it is
not certified (``certificates.outside_model_tolerance``). Each test below failed before.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import optsched
from optsched.models.budgeted_ip import BudgetedIP, over_capacity
from optsched.models.escb_index import EscbIndex
from optsched.models.forms import StandardForm
from optsched.models.linear_program import LinearProgram
from optsched.models.validate import FEASIBILITY_TOL, row_slack
from optsched.result import Termination, agrees_at_scale
from optsched.solvers.registry import fitting_backends

EXACT_MIP = ("highs", "scip", "pyomo", "cvxpy", "cpsat", "dp", "escb_oa")


def _backends(model) -> list[str]:
    fitting = {b.NAME for b in fitting_backends(model)}
    return [b for b in EXACT_MIP if b in fitting]


def _check_against_brute_force(model) -> dict[str, Termination]:
    """Every exact backend that fits ``model`` against brute force over the model's own
    feasible set: ``infeasible`` where brute force says so, else a verified point, an
    ``optimal`` agreeing with brute force's optimum and a bound that never cuts it off.
    Returns each backend's termination."""
    truth = optsched.solve(model, "brute_force")
    assert truth.termination in (Termination.OPTIMAL, Termination.INFEASIBLE)
    said = {}
    for name in _backends(model):
        res = optsched.solve(model, name)
        said[name] = res.termination
        if res.termination is Termination.FEASIBLE:  # only a point in the solver's own tolerance past the model's
            assert model.violations(res.solution, tol=2 * FEASIBILITY_TOL) == [], name
        if truth.termination is Termination.INFEASIBLE:
            assert res.termination in (Termination.INFEASIBLE, Termination.FEASIBLE), (name, res.termination, res.message)
            continue
        assert res.ok, (name, res.message)
        if res.termination is Termination.OPTIMAL:
            assert agrees_at_scale(model, res.objective, truth.objective), (name, res.objective, truth.objective)
            assert model.violations(res.solution, tol=FEASIBILITY_TOL) == [], name
        if res.bound is not None:
            assert res.bound >= truth.objective or agrees_at_scale(model, res.bound, truth.objective), \
                (name, res.bound, truth.objective)
    return said


@pytest.mark.parametrize("value", [1.0, 1e4])
@pytest.mark.parametrize("over", [5e-10, -5e-10, 2e-9])
def test_an_item_at_its_capacity_is_judged_by_the_models_tolerance(value, over):
    """Probe BI's knapsack: two items weighing 1000 (1 + over) and a capacity of 1000. At
    over = 5e-10 the model takes one item (within its slack 1e-9 of the load): HiGHS, Pyomo and
    cvxpy said optimal 0, brute force and SCIP 1 (value 1e4: 0 against 1e4). At 2e-9 the item
    is past the slack and the optimum is 0."""
    weight = 1000.0 * (1 + over)
    model = BudgetedIP(values=[value, value], weights=[[weight, weight]], capacity=[1000.0])
    said = _check_against_brute_force(model)
    assert said, "no exact MIP backend available"
    if over < 1e-9:  # within the slack: the answer is one item, and every solver proves it
        assert all(t is Termination.OPTIMAL for t in said.values()), said


def test_a_budget_within_its_slack_is_met():
    """The budget row's side: a selection 5e-10 short of the budget meets it (the model's
    slack is 1e-9 of the budget); the rows as written called that selection infeasible."""
    budget = 2000.0
    short = budget * (1 - 5e-10) / 2
    model = BudgetedIP(values=[3.0, 2.0, 1.0], weights=[[1.0, 1.0, 1.0]], capacity=[2.0],
                       budget_coeffs=[short, short, 0.0], budget=budget)
    said = _check_against_brute_force(model)
    assert all(t is Termination.OPTIMAL for t in said.values()), said


def test_whole_number_rows_move_by_a_whole_unit_where_the_slack_reaches_one():
    """Integer rows (CP-SAT, the DP of ``dp``): weight 1e9 + 1 on a capacity of 1e9 is within
    the slack (1e-9 of the load, 1.000000001), so the item fits; both, given the capacity 1e9,
    said optimal 1 (the other item) where 5 is."""
    model = BudgetedIP(values=[5.0, 1.0], weights=[[1e9 + 1, 1.0]], capacity=[1e9])
    assert model.violations([0]) == []
    said = _check_against_brute_force(model)
    assert said.get("cpsat") is Termination.OPTIMAL and said.get("dp") is Termination.OPTIMAL, said


@pytest.mark.parametrize("over", [5e-10, 2e-9])
def test_the_escb_index_rows_are_the_models(over):
    """ESCB's P3, whose routes build their rows themselves (``escb_oa``, SCIP): at 5e-10 over
    its capacity an item fits the model, and escb_oa said optimal 0 where brute force 1.707."""
    model = EscbIndex(mean=[1.0, 1.0], variance=[0.5, 0.2], weights=[[1000.0 * (1 + over)] * 2], capacity=[1000.0])
    said = _check_against_brute_force(model)
    if over < 1e-9:
        assert all(t is Termination.OPTIMAL for t in said.values()), said


def test_a_linear_program_is_solved_as_written():
    """``LinearProgram`` (``ROW_SLACK = None``): its violations' slack grows with the box, an
    allowance for a solver's point, not the rows. x0 + x1 <= 1 - 1e-7 over integer columns of
    range 1e3 passes x0 = 1 (slack 1e-9 of the reach 2e3), yet the program's optimum is 0;
    widened by that slack the solvers said 1 (and 1002 for x0 + x1 <= 1 with x0 up to 1e12)."""
    model = LinearProgram(c=[1.0, 0.5], A=[[1.0, 1.0]], row_lower=[-np.inf], row_upper=[1 - 1e-7],
                          col_lower=[0.0, 0.0], col_upper=[1e3, 1e3], integrality=[True, True], sense="max")
    assert model.violations([1.0, 0.0]) == []
    assert model.to_standard_form().widened(slack=LinearProgram.ROW_SLACK) is model.to_standard_form()
    for name in _backends(model):
        res = optsched.solve(model, name)
        assert res.termination is Termination.OPTIMAL and res.objective == 0.0, (name, res.objective)


def _band_knapsack(rng: np.random.Generator) -> BudgetedIP:
    """Items some of whose subsets weigh within a few 1e-9 of the capacity, either side."""
    n, k = int(rng.integers(3, 8)), int(rng.integers(1, 3))
    scale = 10.0 ** rng.uniform(-3, 6)
    weights = rng.uniform(0.1, 1.0, (k, n)) * scale
    subset = rng.random(n) < 0.5
    load = weights[:, subset].sum(axis=1)
    capacity = np.where(load > 0, load, scale) * (1 + rng.choice([-3e-9, -1.2e-9, -4e-10, 4e-10, 1.2e-9, 3e-9], k))
    values = rng.uniform(0.5, 2.0, n) * 10.0 ** rng.uniform(-2, 4)
    if rng.random() < 0.4:  # a budget near a subset's sum too
        coeffs = rng.uniform(0.1, 1.0, n) * scale
        budget = coeffs[rng.random(n) < 0.5].sum() * (1 + rng.choice([-2e-9, -5e-10, 5e-10, 2e-9]))
        return BudgetedIP(values=values, weights=weights, capacity=capacity, budget_coeffs=coeffs, budget=budget)
    return BudgetedIP(values=values, weights=weights, capacity=capacity)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_knapsacks_at_the_edge_of_their_rows_agree_with_brute_force(seed):
    """Random budgeted IPs whose subsets sit within 3e-9 of their sides: every exact backend's
    optimal is brute force's, no bound cuts brute force's optimum off."""
    _check_against_brute_force(_band_knapsack(np.random.default_rng(seed)))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), signs=st.booleans())
def test_widened_rows_accept_what_the_model_accepts(seed, signs):
    """``StandardForm.widened`` against the 0-1 kinds' row test, activity <= u + row_slack(tol,
    u, load) with load = sum_j |a_j| x_j: every selection the model accepts fits the widened row,
    and on a row of nonnegative weights exactly those (``over_capacity``, ``violations``' rows)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    w = rng.uniform(0.0, 1.0, n) * 10.0 ** rng.uniform(-6, 9)
    if signs:
        w *= rng.choice([-1.0, 1.0], n)
    x = (rng.random(n) < 0.6).astype(float)
    activity, load = float(w @ x), float(np.abs(w) @ x)
    side = activity * (1 + rng.uniform(-3e-9, 3e-9)) if activity else float(rng.uniform(-1, 1))
    form = StandardForm(maximize=True, c=np.ones(n), A=sp.csr_matrix(w[None, :]), row_lower=np.array([-np.inf]),
                        row_upper=np.array([side]), col_lower=np.zeros(n), col_upper=np.ones(n),
                        integrality=np.ones(n, dtype=bool))
    model_says = activity <= side + row_slack(FEASIBILITY_TOL, side, load)
    fits = activity <= form.widened().row_upper[0]
    if not signs:
        assert model_says == (not over_capacity(np.array([activity]), np.array([side]))[0])
        assert fits == model_says
    elif model_says:
        assert fits


def test_a_continuous_program_is_not_widened():
    form = StandardForm(maximize=True, c=np.ones(1), A=sp.csr_matrix(np.ones((1, 1))), row_lower=np.array([0.0]),
                        row_upper=np.array([1.0]), col_lower=np.zeros(1), col_upper=np.ones(1),
                        integrality=np.zeros(1, dtype=bool))
    assert form.widened() is form


def test_tightened_bounds_keep_a_point_met_exactly_beside_a_large_side():
    """Probe BK: in floating point 1e12 - 5e-5 is 1e12, and ``tightened`` bounded x1 by 0 where
    x1 = 50 meets -x0 + 1e-6 x1 + 5e-5 x2 <= 1e12 exactly (x0 = -1e12, x2 = -1): HiGHS said
    optimal 0 where 60 is. Each bound is now moved out by 1e-9 of the magnitudes it came from."""
    model = LinearProgram(c=[0.0, 1.0, 0.0], A=[[-1.0, 1e-6, 5e-5]], row_lower=[-np.inf], row_upper=[1e12],
                          col_lower=[-1e12, 0, -1], col_upper=[-1e12, 60, 0], integrality=[True, True, True],
                          sense="max")
    assert model.to_standard_form().tightened().col_upper[1] >= 50
    for name in _backends(model):
        res = optsched.solve(model, name)
        assert res.termination is Termination.OPTIMAL and res.objective == 60.0, (name, res.objective)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_tightened_bounds_keep_every_integer_point_the_rows_admit_exactly(seed):
    """``StandardForm.tightened`` against exact rational arithmetic of the stored floats: every
    integer point of the box that meets the rows exactly stays within the tightened bounds
    (coefficients from 1e-9 to 1e16, sides at a point's exact activity, sometimes one ulp in)."""
    import itertools
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 4)), int(rng.integers(1, 3))
    lo = rng.integers(-3, 2, n).astype(float)
    hi = lo + rng.integers(0, 4, n)
    a = rng.integers(-5, 6, (m, n)) * 10.0 ** rng.integers(-9, 17, (m, n)) if rng.random() < 0.5 \
        else rng.uniform(-3, 3, (m, n))
    points = np.array(list(itertools.product(*[range(int(p), int(q) + 1) for p, q in zip(lo, hi)])), dtype=float)
    pick = (points @ a.T)[rng.integers(len(points))]
    up = np.where(rng.random(m) < 0.7, pick, np.inf)
    up = np.where(rng.random(m) < 0.2, np.nextafter(up, -np.inf), up)
    low = np.minimum(np.where(rng.random(m) < 0.3, pick - rng.integers(0, 3, m), -np.inf), up)
    form = StandardForm(maximize=True, c=rng.uniform(-1, 1, n), A=sp.csr_matrix(a), row_lower=low, row_upper=up,
                        col_lower=lo, col_upper=hi, integrality=np.ones(n, dtype=bool))
    tight = form.tightened()
    exact = [[Fraction(v) for v in row] for row in a]
    for p in points:
        activity = [sum(exact[i][j] * Fraction(p[j]) for j in range(n)) for i in range(m)]
        meets = all((not np.isfinite(up[i]) or activity[i] <= Fraction(up[i]))
                    and (not np.isfinite(low[i]) or activity[i] >= Fraction(low[i])) for i in range(m))
        if meets:
            assert (p >= tight.col_lower).all() and (p <= tight.col_upper).all(), (p, tight.col_lower, tight.col_upper)


@pytest.mark.parametrize("weight, capacity", [(17.0, 16.999999983), (999999968.0, 999999967.0)])
def test_a_whole_load_the_models_own_test_accepts_fits_the_solvers_rows(weight, capacity):
    """Probe BK: the model's test, in floats, passes a weight of 17 on a capacity of 16.999999983
    (16.999999983 + 1e-9 x 17 is 17.0), but the whole side handed to the solvers was the floor
    of 16.999999983 / (1 - 1e-9) = 16.999999999999996: 16, and HiGHS, SCIP, Pyomo and cvxpy said
    optimal 0 where brute force said 1 (with 999999968 on 999999967 also the DP and CP-SAT)."""
    model = BudgetedIP(values=[1.0], weights=[[weight]], capacity=[capacity])
    assert model.violations([0]) == []
    said = _check_against_brute_force(model)
    assert said and all(t is Termination.OPTIMAL for t in said.values()), said
