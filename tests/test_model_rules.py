"""Rules of the models' own math that no test held: each test fails on a mutant of the models or
of the newer solvers that the rest of the suite let pass (probe BH, mutation testing, 2026-11-28;
the mutant each guards against is named in its docstring: ids of the probe's list)."""

from __future__ import annotations

import numpy as np
import pytest

import optsched
from optsched.models.budgeted_ip import BudgetedIP
from optsched.models.escb_index import EscbIndex
from optsched.models.forms import all_binary_rows
from optsched.models.linear_program import LinearProgram
from optsched.models.mesh import MeshInstance
from optsched.models.onsocmax_offline import OfflineWelfare
from optsched.models.pseudo_welfare import PseudoWelfare, PseudoWelfareIntegral
from optsched.models.set_packing import MAX_SETS, SetFamily, SetPackingBatch
from optsched.models.stationary_allocation import StationaryAllocation
from optsched.models.validate import not_whole_units
from optsched.result import Termination, agrees_at_scale
from optsched.solve import best_bound, prepare


def _stationary(**change):
    """Two variables of one port, resources 0 and 1, one group per variable."""
    data = dict(weight=[10.0, 10.0], alpha=[1.0, 1.0], kind=[1, 1], upper=[2.0, 3.0], group=[0, 1],
                capacity=[1.0, 5.0], port=[0, 0], resource=[0, 1], overhead=[[1.0, 2.0]])
    data.update(change)
    return StationaryAllocation(**data)


def test_batch_violations_report_an_element_in_two_chosen_sets():
    """SP5: a copy choosing two sets that share element 0 is infeasible."""
    m = SetPackingBatch(2, [[0], [0, 1]], [[1.0, 1.0], [1.0, 2.0]])
    bad = np.array([[True, True], [False, True]])
    assert m.violations(bad)
    assert m.violations(np.array([[True, False], [False, True]])) == []


def test_stationary_violations_report_a_group_over_its_capacity():
    """SA5: group 0 (capacity 1) loaded 1.005, 0.5 % over: infeasible (the check is at 1e-9)."""
    m = _stationary()
    assert m.violations(np.array([1.005, 0.0]))
    assert m.violations(np.array([1.0, 0.0])) == []


def test_stationary_violations_report_a_variable_over_its_upper_bound():
    """SA9: y_1 = 4 > u_1 = 3 (its group's capacity is 5): (5) is broken."""
    m = _stationary()
    assert m.violations(np.array([0.0, 4.0]))
    assert m.violations(np.array([0.0, 3.0])) == []


def test_stationary_objective_magnitude_bounds_the_objective_at_the_box_top():
    """SA3: objective_magnitude is documented as a bound on |Q(y)| over the feasible points; with
    an overhead far above the gain, Q at a feasible point is -(most of the overhead)."""
    m = _stationary(overhead=[[100.0, 200.0]])
    top = m.box.copy()
    assert not m.violations(top)
    assert m.objective_magnitude() >= abs(m.objective(top))


def test_set_family_refuses_more_than_max_sets_before_reading_them():
    """SP9: more than MAX_SETS sets are refused (by count, before each set is read)."""
    with pytest.raises(ValueError, match="more than"):
        SetFamily.from_sets(1, [["not an index"]] + [[]] * MAX_SETS)


def _tiny_job():
    """A linear job whose best welfare (every unit at xbar) is 5e-9."""
    return PseudoWelfare(utility="linear", a=[2.0, 1.5], beta=[0.1, 0.2], capacity=[20.0, 20.0], xbar=[1e-8, 2e-8],
                         rho=1.0)


def test_pseudo_welfare_agreement_is_relative_at_a_tiny_welfare():
    """PW1: a job of welfare 5e-9: half the optimum does not agree with it (the magnitude of the
    job, about 1e-7, sets the absolute floor, not 1)."""
    m = _tiny_job()
    value = m.objective(m.xbar)
    assert 0 < m.objective_magnitude() < 1e-6
    assert not agrees_at_scale(m, value, 0.5 * value)


def test_pseudo_welfare_tiny_job_by_cvxpy_is_not_called_optimal_at_a_gap():
    """PW1: Clarabel stops 4.5 % short of this job's optimum; the seam must not say optimal."""
    m = _tiny_job()
    r = optsched.solve(m, "cvxpy")
    if r.termination is Termination.OPTIMAL:
        assert r.objective >= m.objective(m.xbar) * (1 - 1e-6)


def test_integral_job_evaluate_binary_feasibility_is_violations():
    """PW5: brute force's feasibility (evaluate_binary) is the model's own rule: a unit whose
    usage + xbar passes its capacity cannot be taken."""
    m = PseudoWelfareIntegral(utility="log", a=[3.0, 3.0, 2.0], beta=[0.1, 0.2, 0.3], capacity=[20.0, 20.0, 20.0],
                              xbar=[5.0, 6.0, 4.0], usage=[18.0, 2.0, 0.0], rho=12.0)
    rows = all_binary_rows(3, 0, 8)
    feasible, _ = m.evaluate_binary(rows)
    plain = [not m.violations(m.solution_from_vector(r.astype(float))) for r in rows]
    assert feasible.tolist() == plain


def test_budgeted_ip_violations_report_a_masked_item():
    """BI2: item 1 is masked out; choosing it is infeasible."""
    m = BudgetedIP(values=[1.0, 2.0], weights=[[1.0, 1.0]], capacity=[2.0], mask=[1, 0])
    assert m.violations(np.array([1]))
    assert m.violations(np.array([0])) == []


def test_escb_agreement_is_relative_at_a_tiny_index_of_zero_means():
    """EI1: means 0 and variances of 1e-14: the index is 1e-7; half of it does not agree."""
    m = EscbIndex(mean=[0.0, 0.0], variance=[1e-14, 0.0], weights=[[1.0, 1.0]], capacity=[1.0])
    value = m.objective(np.array([0]))
    assert m.objective_magnitude() >= value > 0
    assert not agrees_at_scale(m, value, 0.5 * value)


def test_pseudo_welfare_refuses_upsilon_below_iota():
    """PW7: upsilon < iota is no price range (alpha given, so no other check refuses it)."""
    with pytest.raises(ValueError, match="upsilon: must be >= iota"):
        PseudoWelfare(utility="log", a=[2.0], beta=[0.1], capacity=[20.0], xbar=[5.0], rho=4.0, iota=2.0, upsilon=1.0,
                      alpha=2.0)


def test_prepared_escb_oa_with_remembered_cuts_matches_brute_force():
    """OA4: a Prepared escb_oa starts each model with the tangents of its earlier solves; they
    must be valid cuts (a policy's slots): every 'optimal' equals brute force."""
    rng = np.random.default_rng(7)
    p = prepare("escb_index", "escb_oa")
    for _ in range(3):
        n = 8
        m = EscbIndex(mean=rng.uniform(0, 1, n), variance=rng.uniform(0, 1, n),
                      weights=rng.integers(1, 4, (2, n)).astype(float), capacity=[6.0, 6.0])
        r = p.solve(m)
        best = optsched.solve(m, "brute_force").objective
        assert r.termination is Termination.OPTIMAL
        assert r.objective == pytest.approx(best, rel=1e-6)
        assert r.bound >= best * (1 - 1e-6)


def test_aescb_gives_no_theorem_bound_for_a_truncated_family():
    """AE3: Theorem 1 needs S >= Upsilon.x*; with max_budget = 0 the AESCB pick (the largest
    variance) is far below OPT = 1, and a bound value + (|x| + sqrt|x|)/xi would lie below OPT."""
    m = EscbIndex(mean=[1.0, 0.0], variance=[0.0, 0.01], weights=[[1.0, 1.0]], capacity=[1.0])
    r = optsched.solve(m, "aescb", max_budget=0)
    assert r.objective == pytest.approx(0.1)
    assert r.bound is None or r.bound >= 1.0
    assert best_bound(m, [r]) is None or best_bound(m, [r]) >= 1.0


def _one_pair(capacity, rho, xbar):

    return OfflineWelfare(MeshInstance(capacity=[[capacity]], tau=1.0, arrival=[0.0], deadline=[0.0], rho=[rho],
                                       nodes=[[0]], kind=["log"], xbar=[xbar], a=[2.0], beta=[0.1]))


def test_p1_violations_report_a_unit_over_its_capacity():
    """ME1: one pair on a unit of capacity 5 carrying 5.02 (0.4 % over), rho and xbar 10."""
    m = _one_pair(5.0, 10.0, 10.0)
    assert m.violations(np.array([5.02]))
    assert m.violations(np.array([5.0])) == []


def test_p1_violations_report_a_job_over_rho():
    """ME2: one job of rho = 5 processing 5.02, capacity and xbar 10."""
    m = _one_pair(10.0, 5.0, 10.0)
    assert m.violations(np.array([5.02]))
    assert m.violations(np.array([5.0])) == []


def test_p1_violations_report_a_workload_over_xbar():
    """ME3: xbar = 5 and the pair carries 5.02 (capacity and rho 10)."""
    m = _one_pair(10.0, 10.0, 5.0)
    assert m.violations(np.array([5.02]))
    assert m.violations(np.array([5.0])) == []


def test_linear_program_violations_report_a_fractional_integer_column():
    """LP1: x = 0.005 in an integer column is not integer."""
    lp = LinearProgram(c=[1.0], A=np.zeros((0, 1)), row_lower=[], row_upper=[], col_lower=[0.0], col_upper=[1.0],
                       integrality=[True])
    assert lp.violations(np.array([0.005]))
    assert lp.violations(np.array([0.0])) == []


def test_escb_violations_report_a_selection_over_capacity():
    """EI3: two items of weight 1 under capacity 1."""
    m = EscbIndex(mean=[0.5, 0.5], variance=[0.1, 0.1], weights=[[1.0, 1.0]], capacity=[1.0])
    assert m.violations(np.array([0, 1]))
    assert m.violations(np.array([1])) == []


def test_integral_job_violations_report_a_partial_unit():
    """PW14: x_r in {0, xbar_r} (43): half a unit is infeasible."""
    m = PseudoWelfareIntegral(utility="log", a=[3.0, 3.0], beta=[0.1, 0.2], capacity=[20.0, 20.0], xbar=[5.0, 6.0],
                              rho=12.0)
    assert m.violations(np.array([2.5, 0.0]))
    assert m.violations(np.array([5.0, 0.0])) == []


def test_whole_units_are_checked_at_the_tolerance():
    """VA1: 0.995 of a unit (0.5 % short of xbar) is neither 0 nor xbar at the default 1e-9."""
    assert not_whole_units(np.array([4.975]), np.array([5.0]), 1e-9).all()
    m = PseudoWelfareIntegral(utility="log", a=[3.0], beta=[0.1], capacity=[20.0], xbar=[5.0], rho=12.0)
    assert m.violations(np.array([4.975]))


def test_stationary_violations_report_a_negative_allocation():
    """SA10: y_0 = -1e-4 breaks y >= 0 (the check is at 1e-9)."""
    m = _stationary()
    assert m.violations(np.array([-1e-4, 0.0]))


def test_the_stationary_dual_bound_takes_only_simplex_rows():
    """Probe BH's real defect: ``dual_bound`` took rows of w summing to 1 + 9e-6 (np.allclose kept
    its rtol of 1e-5) and returned 0.4999955 where a feasible point is worth 0.5: no bound."""
    m = StationaryAllocation(weight=[1.0], alpha=[1.0], kind=[0], upper=[1.0], group=[0], capacity=[1.0], port=[0],
                             resource=[0], overhead=[[0.5]])
    y = np.array([1.0])
    assert m.violations(y) == [] and m.objective(y) == 0.5
    assert m.dual_bound([[1.0]], [0.0]) == 0.5
    for w in (1 + 9e-6, 1 - 9e-6, np.nan):
        with pytest.raises(ValueError, match="w:"):
            m.dual_bound([[w]], [0.0])
    assert m.dual_bound([[1 + 1e-10]], [0.0]) >= 0.5  # within rounding: divided by its sum
    for mu in (np.nan, np.inf, -1.0):  # probe BI: NaN and inf came back as a NaN "bound"
        with pytest.raises(ValueError, match="mu:"):
            m.dual_bound([[1.0]], [mu])


def test_the_envelope_pick_of_an_emptied_front_is_an_error_not_a_crash(monkeypatch):
    """Probe BH's AE4 (the envelope's threshold above its incumbent) pruned every root point, and
    the DP kernel's walk read past its arrays: the process died (SIGSEGV, exit 139). The kernel
    raises instead, and the seam makes that an ``error`` result."""
    from optsched.solvers import budget_dp_kernel, escb_aescb

    with pytest.raises(RuntimeError, match="no point"):
        budget_dp_kernel.front_pick(3, np.zeros(0), np.zeros(0), np.zeros(0, np.int64), 0, 0)
    real = escb_aescb.fill_fronts

    def above_every_point(plan, max_cells, visited, envelope, threshold, stop):
        return real(plan, max_cells, visited, envelope, threshold + 1e6, stop)

    monkeypatch.setattr(escb_aescb, "fill_fronts", above_every_point)
    m = EscbIndex(mean=[0.5, 0.2, 0.4], variance=[0.1, 0.3, 0.2], weights=[[1.0, 1.0, 1.0]], capacity=[2.0])
    r = optsched.solve(m, "aescb")
    assert r.termination is Termination.ERROR and "no point" in r.message
