"""budgeted_ip / budget_family (paper 000, P4) and the ``dp`` backend (Algorithm 2).

The DP is checked against brute force (the model's own math, no formulation) for every budget
s of many random small instances, and against the exact MILP/CP backends, one budget at a time.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.models.base import model_from_dict
from optsched.models.budget_family import BudgetFamily
from optsched.models.budgeted_ip import BudgetedIP
from optsched.result import Termination
from optsched.solvers.budget_dp import TableTooLarge, plan_budget_family, solve_budget_family


@st.composite
def families(draw: st.DrawFn, max_items: int = 8, integral_values: bool = False) -> BudgetFamily:
    n = draw(st.integers(1, max_items))
    k = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 20, n).astype(float)
    if not integral_values:
        values += np.round(rng.random(n), 3)
    weights = rng.integers(0, 5, (k, n))
    capacity = rng.integers(0, 3 * n, k)
    budget_coeffs = rng.integers(0, 7, n)
    mask = rng.random(n) < 0.85
    max_budget = int(rng.integers(0, budget_coeffs.sum() + 3))
    budget = int(rng.integers(0, max_budget + 1))
    return BudgetFamily(values, weights, capacity, budget_coeffs, max_budget, budget, mask)


def brute_force_values(fam: BudgetFamily) -> np.ndarray:
    """V(s) for every s straight from the model's evaluate_binary over all 2^n vectors."""
    member = fam.member(0)
    n = fam.n_items
    rows = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(bool)
    feasible, value = member.evaluate_binary(rows)
    upsilon = rows.astype(float) @ fam.budget_coeffs
    return np.array([
        value[feasible & (upsilon >= s)].max() if (feasible & (upsilon >= s)).any() else -np.inf
        for s in range(fam.max_budget + 1)
    ])


def check_family_result(fam: BudgetFamily, r: optsched.Result) -> None:
    """The family's termination says whether its designated member P4(budget) is feasible
    (``optimal``, with every member's x) or not (``infeasible``: the per-budget values only)."""
    if r.extra["values"][fam.budget] is None:
        assert r.termination is Termination.INFEASIBLE and r.solution is None, r
    else:
        assert r.termination is Termination.OPTIMAL, r
        check_family_solution(fam, r.extra["values"], r.solution)


def check_family_solution(fam: BudgetFamily, values: list, solution: tuple) -> None:
    """Every member's x is feasible for its own P4(s) and attains the reported value."""
    assert len(solution) == fam.max_budget + 1
    for s, (v, x) in enumerate(zip(values, solution)):
        assert (v is None) == (x is None)
        if x is not None:
            member = fam.member(s)
            assert member.violations(x) == []
            assert member.objective(x) == pytest.approx(v, rel=1e-12, abs=1e-12)


@settings(max_examples=150)
@given(families())
@pytest.mark.parametrize("method", ["pareto", "dense"])
def test_dp_equals_brute_force_for_every_budget(method: str, fam: BudgetFamily) -> None:
    r = optsched.solve(fam, "dp", method=method)
    expect = brute_force_values(fam)
    got = np.array([-np.inf if v is None else v for v in r.extra["values"]])
    np.testing.assert_allclose(got, expect, rtol=1e-12)
    check_family_result(fam, r)
    if np.isfinite(expect[fam.budget]):
        assert r.objective == pytest.approx(expect[fam.budget])


@settings(max_examples=25)
@given(families(max_items=7, integral_values=True))
@pytest.mark.parametrize("inner", ["highs", "cpsat"])
def test_dp_equals_exact_backends_for_every_budget(inner: str, fam: BudgetFamily) -> None:
    dp = optsched.solve(fam, "dp")
    exact = optsched.solve(fam, "budget_exact", inner=inner, reuse=False)
    assert exact.iterations == fam.max_budget + 1  # one solve per budget
    for a, b in zip(dp.extra["values"], exact.extra["values"]):
        assert (a is None) == (b is None)
        if a is not None:
            assert a == pytest.approx(b, rel=1e-9, abs=1e-6)
    check_family_result(fam, exact)


@settings(max_examples=6)
@given(families(max_items=6))
def test_dp_equals_pyomo_for_every_budget(fam: BudgetFamily) -> None:
    dp = optsched.solve(fam, "dp")
    exact = optsched.solve(fam, "budget_exact", inner="pyomo")
    assert exact.termination is (Termination.OPTIMAL if dp.extra["values"][fam.budget] is not None
                                 else Termination.INFEASIBLE)
    for a, b in zip(dp.extra["values"], exact.extra["values"]):
        assert (a is None) == (b is None)
        if a is not None:
            assert a == pytest.approx(b, rel=1e-9, abs=1e-6)


@settings(max_examples=40)
@given(families(max_items=10))
def test_budget_exact_reuse_matches_dp(fam: BudgetFamily) -> None:
    dp = optsched.solve(fam, "dp")
    exact = optsched.solve(fam, "budget_exact", inner="highs")
    check_family_result(fam, exact)
    assert exact.iterations <= fam.max_budget + 1
    for a, b in zip(dp.extra["values"], exact.extra["values"]):
        assert (a is None) == (b is None)
        if a is not None:
            assert a == pytest.approx(b, rel=1e-9, abs=1e-6)


@settings(max_examples=60)
@given(families(max_items=9), st.sampled_from(["dp", "highs", "cpsat", "brute_force"]))
def test_single_budget_backends_agree(fam: BudgetFamily, backend: str) -> None:
    member = fam.member(fam.budget)
    expect = brute_force_values(fam)[fam.budget]
    r = optsched.solve(member, backend)
    if np.isfinite(expect):
        assert r.termination is Termination.OPTIMAL, r.extra
        assert member.violations(r.solution) == []
        assert r.objective == pytest.approx(expect, rel=1e-9, abs=1e-6)
    else:
        assert r.termination is Termination.INFEASIBLE


def test_small_family_by_hand() -> None:
    # items (value, weight, upsilon): (5,2,1) (4,1,3) (3,1,2); capacity 3.
    fam = BudgetFamily([5, 4, 3], [[2, 1, 1]], [3], [1, 3, 2], 7)
    r = optsched.solve(fam, "dp")
    # s=0,1: {0,1} = 9 (upsilon 4); s=2..4: {0,1} still (upsilon 4); s=5: {1,2} = 7 (upsilon 5);
    # s=6: nothing fits with upsilon >= 6 (all three need capacity 4)
    assert r.extra["values"] == [9.0, 9.0, 9.0, 9.0, 9.0, 7.0, None, None]
    assert [None if x is None else x.tolist() for x in r.solution][:6] == [[0, 1]] * 5 + [[1, 2]]


def test_mask_excludes_items() -> None:
    fam = BudgetFamily([5, 4, 3], [[2, 1, 1]], [3], [1, 3, 2], 3, mask=[1, 0, 1])
    r = optsched.solve(fam, "dp")
    assert r.extra["values"] == [8.0, 8.0, 8.0, 8.0]
    assert all(1 not in x for x in r.solution)


@pytest.mark.parametrize("method", ["pareto", "dense"])
def test_solve_budget_family_interface(method: str) -> None:
    out = solve_budget_family([5.0, 4.0, 3.0], [[2, 1, 1]], [3], [1, 3, 2], 7, mask=None, method=method)
    assert out.values.shape == (8,) and out.choices.shape == (8, 3) and out.choices.dtype == bool
    assert out.values.tolist()[:6] == [9.0, 9.0, 9.0, 9.0, 9.0, 7.0]
    assert np.isneginf(out.values[6:]).all() and not out.choices[6:].any()
    assert out.table_cells > 0 and out.paper_cells == 3 * 8 * 4
    with pytest.raises(ValueError, match="method"):
        solve_budget_family([5.0], [[2]], [3], [1], 1, method="magic")


def test_all_items_masked_or_too_heavy() -> None:
    out = solve_budget_family([5.0, 4.0], [[2, 9]], [3], [1, 1], 2, mask=[False, True])
    assert out.values.tolist() == [0.0, -np.inf, -np.inf] and not out.choices.any()


def test_tables_are_smaller_than_the_papers_bound() -> None:
    rng = np.random.default_rng(0)
    n, k = 30, 3
    args = (rng.random(n), rng.integers(1, 3, (k, n)), [20, 20, 20], rng.integers(0, 30, n), 450)
    plan = plan_budget_family(*args)
    assert plan.dense_cells < plan.paper_cells
    pareto, dense = solve_budget_family(*args), solve_budget_family(*args, method="dense")
    assert pareto.table_cells < dense.table_cells == plan.dense_cells
    np.testing.assert_array_equal(pareto.values, dense.values)
    with pytest.raises(TableTooLarge):
        solve_budget_family(*args, method="dense", max_cells=plan.dense_cells - 1)
    with pytest.raises(TableTooLarge):
        solve_budget_family(*args, max_cells=pareto.table_cells - 1)


def test_dp_refuses_fractional_data_and_reports_oversized_tables() -> None:
    frac = BudgetedIP([1.0, 2.0], [[0.5, 1.0]], [1.0])
    with pytest.raises(ValueError, match="whole numbers"):
        optsched.solve(frac, "dp")
    with pytest.raises(ValueError, match="whole numbers"):
        optsched.solve(frac, "cpsat")
    assert optsched.solve(frac, "highs").objective == pytest.approx(2.0)
    big = BudgetFamily(np.ones(20), np.ones((3, 20)), [10, 10, 10], np.ones(20), 20)
    with pytest.raises(ValueError, match=r"capacity cells exceed the limit of 100 \(max_table_cells\)"):
        optsched.solve(big, "dp", max_table_cells=100)  # refused as the default limit is, before the solve


def test_max_table_cells_raises_the_dp_limit_as_well_as_lowering_it() -> None:
    """Probe BD: the table's size was checked at the default limit (2e8) before the option was
    read: max_table_cells=1e10 still refused a table of 3e8 cells. The default choice still
    passes dp by where its default limit refuses the table."""
    from optsched.solvers.budget_dp import DEFAULT_MAX_CELLS

    big = BudgetFamily(np.ones(20), np.ones((3, 20)), [10, 10, 10], np.ones(20), 20)  # 11^3 cells a level
    cells = 20 * 11**3
    r = optsched.solve(big, "dp", max_table_cells=float(cells))
    assert r.ok and r.objective == optsched.solve(big, "dp").objective  # at its own size: not refused
    over = BudgetedIP([3, 4, 5, 6], [[100000007, 200000011, 200000033, 300000019]], [300000000], [1, 1, 1, 1], 2)
    with pytest.raises(ValueError, match=r"3e\+08 capacity cells exceed the limit of 2e\+08 \(max_table_cells\)"):
        optsched.solve(over, "dp")
    assert DEFAULT_MAX_CELLS == 2e8 and optsched.prepare(over, "dp", max_table_cells=1e10).fits(over) is None
    assert "dp" not in optsched.backends(over)  # the default choice passes it by


def test_json_round_trip_and_solution_json() -> None:
    data = {"model": "budgeted_ip", "values": [3, 2, 4], "weights": [[1, 1, 1], [2, 0, 1]],
            "capacity": [2, 2], "budget_coeffs": [1, 2, 0], "budget": 2, "mask": [1, 1, 0]}
    m = model_from_dict(json.loads(json.dumps(data)))
    r = optsched.solve(m, "highs")
    assert r.solution.tolist() == [0, 1] and r.objective == 5.0  # item 2 is masked out
    assert model_from_dict(m.to_dict()).to_dict() == m.to_dict()
    shared = {k: v for k, v in data.items() if k not in ("model", "budget")}
    fam = model_from_dict({"model": "budget_family", **shared, "max_budget": 4})
    rf = optsched.solve(fam, "dp")
    as_json = json.loads(json.dumps(fam.solution_to_json(rf.solution)))
    assert as_json[3] == [0, 1] and as_json[4] is None  # upsilon of {0, 1} is 3; 4 is out of reach


@pytest.mark.parametrize(
    "change, field",
    [
        ({"values": [1, float("nan"), 2]}, "values"),
        ({"weights": [[1, 1]]}, "weights"),
        ({"weights": [[1, -1, 1]]}, "weights"),
        ({"capacity": [1, 2]}, "capacity"),
        ({"capacity": [-1]}, "capacity"),
        ({"budget_coeffs": [1, 1]}, "budget_coeffs"),
        ({"budget": -1}, "budget"),
        ({"budget": "many"}, "budget"),
        ({"mask": [1, 2, 0]}, "mask"),
        ({"mask": [1, 0]}, "mask"),
        ({"weights": "abc"}, "weights"),
    ],
)
def test_bad_input_names_the_field(change: dict, field: str) -> None:
    data = {"values": [1, 2, 3], "weights": [[1, 1, 1]], "capacity": [2], **change}
    with pytest.raises(ValueError, match=field):
        BudgetedIP(**data)


def test_bad_family_input_names_the_field() -> None:
    with pytest.raises(ValueError, match="max_budget"):
        BudgetFamily([1], [[1]], [1], [1], -1)
    with pytest.raises(ValueError, match="budget"):
        BudgetFamily([1], [[1]], [1], [1], 2, budget=3)
    with pytest.raises(ValueError, match="unknown key"):
        model_from_dict({"model": "budget_family", "values": [1], "weights": [[1]], "capacity": [1],
                         "budget_coeffs": [1], "max_budget": 1, "extra": 1})
    with pytest.raises(ValueError, match="max_budget"):
        solve_budget_family([1.0], [[1]], [1], [1], 1.5)
    with pytest.raises(ValueError, match="weights"):
        solve_budget_family([1.0], [[0.5]], [1], [1], 1)


def test_family_violations_catch_wrong_members() -> None:
    fam = BudgetFamily([5, 4, 3], [[2, 1, 1]], [3], [1, 3, 2], 3)
    good = optsched.solve(fam, "dp").solution
    assert fam.violations(good) == []
    assert fam.violations(good[:-1])  # wrong length
    bad = list(good)
    bad[3] = np.array([0])  # upsilon 1 < 3
    assert "s = 3" in fam.violations(bad)[0]
    bad[3] = np.array([0, 1, 2])  # over capacity
    assert fam.violations(bad)


def test_default_backends_and_table_limit() -> None:
    fam = BudgetFamily([5, 4, 3], [[2, 1, 1]], [3], [1, 3, 2], 7)
    assert optsched.solve(fam).backend == "dp"
    huge = BudgetedIP(np.ones(30), np.ones((8, 30)), np.full(8, 15), np.ones(30), 10)
    with pytest.raises(ValueError, match="exceed the limit"):
        optsched.solve(huge, "dp")
    assert optsched.solve(huge).backend in ("cpsat", "highs")
    with pytest.raises(TableTooLarge):
        solve_budget_family(np.ones(30), np.ones((8, 30)), np.full(8, 15), np.ones(30), 10)


def test_budget_exact_time_limit_returns_a_status() -> None:
    rng = np.random.default_rng(2)
    n = 40
    fam = BudgetFamily(rng.random(n), rng.integers(1, 3, (3, n)), [25, 25, 25], rng.integers(0, 40, n), 600)
    r = optsched.solve(fam, "budget_exact", time_limit=0.0)
    assert r.termination in (Termination.TIME_LIMIT, Termination.OPTIMAL)
    if r.termination is Termination.TIME_LIMIT:
        assert r.solution is None and "P4(" in r.extra["message"]


@pytest.mark.parametrize("options", [{}, {"solver": "HIGHS"}])
def test_cvxpy_highs_mip_has_the_parallel_rows_presolve_rule_off(options: dict) -> None:
    """HiGHS 1.14's presolve rule 13 said 6 is optimal here (8 is: items 0-3); every HiGHS MIP
    switches it off, through cvxpy too (found by the fuzz long run, budgeted_ip "ties")."""
    model = BudgetedIP(values=[2.0] * 9, weights=[[1.0] * 9] * 3, capacity=[4.0] * 3,
                       budget_coeffs=[0, 3, 3, 3, 3, 1, 0, 2, 2], budget=7.0, mask=[1, 1, 1, 1, 1, 1, 1, 0, 1])
    assert optsched.solve(model, "brute_force").objective == 8.0
    res = optsched.solve(model, "cvxpy", **options)
    assert res.termination is Termination.OPTIMAL and res.objective == 8.0
    problem, _ = model.to_standard_form().to_cvxpy()
    solver, solver_options = model.to_standard_form().cvxpy_solver()
    problem.solve(solver=solver, **solver_options)  # the form's own advice, for a cvxpy user
    assert problem.value == pytest.approx(8.0)


def test_a_member_the_inner_backend_cannot_hold_is_an_error_result_not_an_exception() -> None:
    """Values past HiGHS's infinity: budget_exact fits the family (the inner backend is an
    option), so ``compare`` and ``bench`` solve with it; the member's refusal is its result's
    message (it raised ValueError after the checks had passed)."""
    fam = BudgetFamily([5e21, 1.0, 2.0], [[1, 1, 1]], [2], [1, 1, 1], 2)
    r = optsched.solve(fam, "budget_exact")
    assert r.termination is Termination.ERROR
    assert "P4(0): the inner backend 'highs' does not take it: highs: this instance holds the value 5e+21" in r.message
    assert optsched.solve(fam, "budget_exact", inner="cpsat").termination is Termination.ERROR
    assert optsched.solve(fam, "budget_exact", inner="brute_force").ok
    table = optsched.compare(fam)
    assert set(table["backend"]) >= {"budget_exact", "dp"}


@pytest.mark.parametrize("coeff", [2.0**63, 1e13, 1e11, 1e9])
def test_budget_exact_solves_each_budget_at_most_once_whatever_the_inner_answer(coeff, monkeypatch) -> None:
    """A budget coefficient of 1e11 and more: HiGHS's row scaling put the budget row's shortfall of
    1 below its feasibility tolerance, so it called x "optimal" for P4(6) with budget_coeffs.x = 5,
    and the loop, taking its next budget from that x, solved P4(6) for ever (the fuzz run's hang).
    Now the members are verified and the budget grows every pass: at most S + 1 solves, and the
    answer is right (against brute force member by member) or an error result naming the member."""
    from optsched.solve import Prepared

    fam = BudgetFamily(values=[2.0, 2.0, 2.0], weights=[[2.0, 2.0, 2.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]],
                       capacity=[3.0, 2.0, 2.0], budget_coeffs=[5.0, coeff, 4.0], max_budget=14, budget=0, mask=[1, 1, 1])
    reference = optsched.solve(fam, "budget_exact", inner="brute_force", reuse=False)
    calls = []
    original = Prepared.solve

    def counted(self, model, **kwargs):
        if model.name == "budgeted_ip":
            calls.append(model)
            assert len(calls) <= fam.max_budget + 1, "budget_exact solved more members than there are budgets"
        return original(self, model, **kwargs)

    monkeypatch.setattr(Prepared, "solve", counted)
    r = optsched.solve(fam, "budget_exact", inner="highs")
    assert r.termination in (Termination.OPTIMAL, Termination.FEASIBLE, Termination.ERROR)
    if r.termination is Termination.ERROR:
        assert r.message.startswith("P4(")
    elif r.termination is Termination.OPTIMAL:
        assert r.extra["values"] == reference.extra["values"]
    else:  # members HiGHS could not prove: verified points, worth at most the optima
        assert all((v is None) == (w is None) and (v is None or v <= w) for v, w in zip(r.extra["values"], reference.extra["values"]))


def test_a_member_left_feasible_makes_the_family_feasible_not_an_error() -> None:
    """Values 1 and 1e12, the item of 1e12 excluded where the budget asks for the item of 1 (one
    row holds one of the two): HiGHS proves P4(1)'s optimum 1 only within 385 (its pruning
    tolerance at the scale of 1e12), so the member ends feasible, and budget_exact returned an
    error with no solution (7 of 300 such fuzzed families). It keeps the verified member now:
    feasible, the right values, a bound that holds; and AESCB through it claims no Theorem 1
    bound on a family not solved exactly. (An item of 1e12 that fits no row alone is fixed at 0
    before HiGHS sees it, ``StandardForm.tightened``, and such a member is proved: the first
    version of this test. With the item of value 1 masked, the member's optimum is to choose
    nothing, proved since without the search: ``certificates.nothing_can_be_chosen``.)"""
    from optsched.models.escb_index import EscbIndex

    fam = BudgetFamily(values=[1.0, 1e12], weights=[[1.0, 1.0]], capacity=[1.0], budget_coeffs=[2.0, 0.0],
                       max_budget=1, budget=1)
    exact = optsched.solve(fam, "dp")
    assert exact.termination is Termination.OPTIMAL and exact.extra["values"] == [1e12, 1.0]
    r = optsched.solve(fam, "budget_exact")
    assert r.termination is Termination.FEASIBLE and r.extra["values"] == [1e12, 1.0]
    assert r.objective == 1.0 and r.bound is not None and r.bound >= 1.0
    fitting_nowhere = BudgetFamily(values=[1.0, 1e12], weights=[[0.0, 2.0], [2.0, 2.0]], capacity=[1.0, 2.0],
                                   budget_coeffs=[0.0, 2.0], max_budget=1, budget=0)
    proved = optsched.solve(fitting_nowhere, "budget_exact")
    assert proved.termination is Termination.OPTIMAL and proved.extra["values"] == [1.0, None]
    masked = BudgetFamily(values=[1.0, 1e12], weights=[[0.0, 2.0], [2.0, 2.0]], capacity=[1.0, 2.0],
                          budget_coeffs=[0.0, 2.0], max_budget=1, budget=0, mask=[0, 1])
    nothing = optsched.solve(masked, "budget_exact")
    assert nothing.termination is Termination.OPTIMAL and nothing.extra["values"] == [0.0, None] and nothing.bound == 0.0
    assert r.extra["optimality"].endswith("proved no optimum for 1 budget (1)")
    assert optsched.solve(fam, "budget_exact", inner="brute_force").termination is Termination.OPTIMAL
    # scaled variances 1 and 1e12 at xi = 1; the mean of 2 puts item 0 in the budget's members
    index = EscbIndex(mean=[2.0, 0.0], variance=[1.0, 1e12], weights=[[1, 1]], capacity=[1])
    for backend, proven in (("dp", True), ("budget_exact", False)):
        res = optsched.solve(index, "aescb", family_backend=backend, xi=1)
        assert res.ok and (res.bound is not None) == proven, (backend, res)
