"""Rules of the solver-backend layer that no test held: each test fails on a mutant of the
backends, certificates, registry or seam that the rest of the suite let pass (mutation testing,
2026-11-28; the mutant each guards against is named in its docstring)."""

from __future__ import annotations

import numpy as np
import pytest

import optsched
from optsched.generators import generate
from optsched.models.budgeted_ip import BudgetedIP
from optsched.models.escb_index import EscbIndex
from optsched.models.linear_program import LinearProgram
from optsched.result import OBJECTIVE_RTOL, Termination
from optsched.solvers.registry import get_backend


def _need(*names: str) -> None:
    for name in names:
        if not get_backend(name).available():
            pytest.skip(f"{name} is not installed")


def _mixed_costs_lp() -> LinearProgram:
    """max 1e9 x0 + x1, x0 integer fixed at 0 by its row, x1 continuous in [0, 1]: optimum 1."""
    return LinearProgram(c=[1e9, 1.0], A=[[1.0, 0.0]], row_lower=[-np.inf], row_upper=[0.0], col_lower=[0.0, 0.0],
                         col_upper=[1.0, 1.0], integrality=[True, False], sense="max")


@pytest.mark.parametrize("seed", [0, 1, 4])
def test_a_relative_gap_stop_is_never_called_optimal(seed):
    """C06 (certificates.branch_and_bound_proof, max/min of bound and objective swapped): HiGHS
    stopped by mip_rel_gap said optimal at the incumbent, 4 % short, with bound = objective."""
    _need("highs")
    model = generate("budgeted_ip", 60, np.random.default_rng(seed))
    exact = optsched.solve(model, "highs")
    assert exact.termination is Termination.OPTIMAL
    early = optsched.solve(model, "highs", mip_rel_gap=0.5)
    assert early.ok
    if early.termination is Termination.OPTIMAL:
        assert early.objective == pytest.approx(exact.objective, rel=1e-9)
    else:
        assert early.termination is Termination.GAP_LIMIT
    assert early.bound is not None and early.bound >= exact.objective * (1 - 1e-9)


@pytest.mark.parametrize("backend", ["highs", "scip", "cvxpy", "pyomo"])
def test_costs_a_whole_grain_apart_are_optimal_at_any_spread(backend):
    """C10 (the grain case returns the widened bound): optimal 1 became gap_limit with bound 1.21.
    (At a spread of 1e9 SCIP no longer proves it: the cost 1, scaled to 9.3e-10, is below its dual
    tolerance of 1e-9, and its proof widens past the grain; a spread of 1e6 it resolves.)"""
    _need(backend)
    model = BudgetedIP(values=[1e6 if backend == "scip" else 1e9, 1.0], weights=[[2.0, 1.0]], capacity=[1.0])
    r = optsched.solve(model, backend)
    assert r.termination is Termination.OPTIMAL
    assert r.objective == 1.0 and r.bound == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("backend", ["highs", "scip", "pyomo"])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 10.0])
def test_an_optimum_of_nothing_with_large_values_is_optimal(backend, scale):
    """An integer program whose optimum is to choose nothing (every weight above its capacity):
    with values of 3e3 and more HiGHS's proof, 1e-10 of its objective scaled to costs of order 1,
    reached only 3.9e-6 to 4.8e-5 above 0, and the exact backends ended ``feasible`` (at values of
    3, optimal with the widened bound 3.8e-9; scaled fuzz, 2026-11-28). No point can choose an
    item (``nothing_can_be_chosen``), so 0 is the optimum, exactly."""
    _need(backend)
    values = [3170.1818262681513 * scale, 9510.545478804454 * scale, 6340.363652536303 * scale]
    model = BudgetedIP(values=values, weights=[[41.5, 20.8, 20.8]], capacity=[3.0])
    r = optsched.solve(model, backend)
    assert r.termination is Termination.OPTIMAL, r.message
    assert r.objective == 0.0 and r.bound == 0.0


def test_nothing_can_be_chosen_only_where_every_item_breaks_a_row_clearly():
    """``nothing_can_be_chosen``: every priced integer column >= 0 breaks a row at 1 (or its bound
    is below 1) by more than the margin; an item that breaks its row by 5e-10 relative, which the
    models call feasible, does not count (probe BI: the first rule, on the solvers' bounds,
    certified 0 there where that item is worth 12345.678)."""
    from optsched.solvers.certificates import nothing_can_be_chosen

    def form(weights, capacity, *, lower=0.0, upper=1.0, integrality=True, c=(3170.5, 9510.25)):
        n = len(c)
        return LinearProgram(c=list(c), A=[weights], row_lower=[-np.inf], row_upper=[capacity], col_lower=[lower] * n,
                             col_upper=[upper] * n, integrality=[integrality] * n, sense="max").to_standard_form()

    assert nothing_can_be_chosen(form([41.5, 20.8], 3.0))
    assert nothing_can_be_chosen(form([41.5, 20.8], 3.0, c=(3170.5, -9510.25)))  # any cost: nothing fits
    assert nothing_can_be_chosen(form([1.0, 1.0], 0.0))  # a budget of 0
    assert nothing_can_be_chosen(form([1.0, 1.0], 10.0, upper=0.5))  # integer below 1: 0
    assert not nothing_can_be_chosen(form([1000.0000005, 2e3], 1000.0))  # within any tolerance of fitting
    assert not nothing_can_be_chosen(form([41.5, 2.0], 3.0))  # the second fits
    assert not nothing_can_be_chosen(form([41.5, 20.8], 3.0, lower=-1.0))  # a column can go below 0
    assert not nothing_can_be_chosen(form([41.5, 20.8], 3.0, integrality=False))  # 0.07 of an item fits
    both = LinearProgram(c=[5.0, 0.0], A=[[10.0, -10.0]], row_lower=[-np.inf], row_upper=[3.0], col_lower=[0.0, 0.0],
                         col_upper=[1.0, 1.0], integrality=[True, False], sense="max").to_standard_form()
    assert not nothing_can_be_chosen(both)  # the unpriced column makes room
    wide = LinearProgram(c=[-12345.678, -23456.789], A=[[1.0, 1.0]], row_lower=[-np.inf], row_upper=[0.9999],
                         col_lower=[0.0, 0.0], col_upper=[1e6, 1e6], integrality=[True, True], offset=7.25, sense="min")
    assert wide.violations(np.array([1.0, 0.0])) == []  # slack 1e-9 of the reach 2e6: x0 = 1 passes
    assert not nothing_can_be_chosen(wide.to_standard_form())


@pytest.mark.parametrize("backend", ["highs", "scip", "pyomo", "cvxpy"])
def test_an_item_within_tolerance_of_fitting_is_never_certified_away(backend):
    """Probe BI: item 0 outweighs the capacity by 5e-10 relative; the model calls it feasible,
    worth 12345.678 (brute force). The solvers drop it (HiGHS checks rows to 1e-10 absolute), and
    their answer of 0 must not be ``optimal``."""
    _need(backend)
    m = BudgetedIP(values=[12345.678, 23456.789, 34567.891], weights=[[1000.0000005, 2e3, 2e3]], capacity=[1000.0])
    assert m.violations(np.array([0])) == []
    r = optsched.solve(m, backend)
    if r.termination is Termination.OPTIMAL:
        assert r.objective == pytest.approx(12345.678, rel=1e-9)


@pytest.mark.parametrize("backend", ["scip", "pyomo", "cvxpy"])
def test_a_continuous_priced_column_gets_no_grain(backend):
    """C11 (objective_grain ignores continuous columns): Pyomo's SCIP answered 0 where 1 is the
    optimum, and the grain rule called it optimal."""
    _need(backend)
    r = optsched.solve(_mixed_costs_lp(), backend)
    assert r.ok
    if r.termination is Termination.OPTIMAL:
        assert r.objective == pytest.approx(1.0, rel=1e-9)


def test_an_iteration_limit_with_an_infeasible_point_is_a_limit_not_an_error():
    """H11 (highs: primal_solution_status >= 1 accepted): the infeasible simplex point reached the
    seam, and the result was error ("returned solution is infeasible") instead of iteration_limit."""
    _need("highs")
    rng = np.random.default_rng(0)
    n, m = 30, 20
    lp = LinearProgram(c=rng.uniform(1, 2, n), A=rng.uniform(0.5, 2.0, size=(m, n)), row_lower=np.full(m, 10.0),
                       row_upper=np.full(m, np.inf), col_lower=np.zeros(n), col_upper=np.full(n, 10.0))
    r = optsched.solve(lp, "highs", highs_options={"presolve": "off", "simplex_iteration_limit": 1})
    assert r.termination is Termination.ITERATION_LIMIT
    assert r.solution is None or not lp.violations(r.solution)


def test_cpsat_stopped_before_any_solution_is_a_time_limit_not_an_error():
    """P01 (cpsat STATUS_TABLE "UNKNOWN" -> error): a subset-sum equality CP-SAT cannot settle in
    0.5 s came back as error ("the backend failed") instead of time_limit. Whatever CP-SAT
    manages in the time, the result is never an error."""
    _need("cpsat")
    rng = np.random.default_rng(1)
    n = 60
    a = rng.integers(10**9, 2 * 10**9, size=n).astype(float)
    b = float(np.floor(a.sum() / 2))
    lp = LinearProgram(c=rng.integers(1, 10, n).astype(float), A=[a], row_lower=[b], row_upper=[b],
                       col_lower=np.zeros(n), col_upper=np.ones(n), integrality=np.ones(n, bool), sense="max")
    r = optsched.solve(lp, "cpsat", time_limit=0.5)
    assert r.termination is not Termination.ERROR, r.message


@pytest.mark.parametrize("small", [(1.0e-7, 1.3e-7), (1.3e-7, 1.0e-7)])
def test_cpsat_keeps_small_values_beside_a_large_one(small):
    """P10 (mip_wanted_precision not passed to CP-SAT, default 1e-6): optimal 0.0 with bound 4e-12
    where 1.3e-7 is the optimum."""
    _need("cpsat")
    m = BudgetedIP(values=[1.0, *small], weights=[[10.0, 1.0, 1.0]], capacity=[1.0])
    r = optsched.solve(m, "cpsat")
    assert r.ok
    assert r.bound is None or r.bound >= 1.3e-7 * (1 - 1e-9)
    if r.termination is Termination.OPTIMAL:
        assert r.objective == pytest.approx(1.3e-7, rel=1e-9)


def test_cpsat_keeps_rows_whose_activity_can_be_negative():
    """P13 (cpsat: a row's missing lower side became 0, not -2^53): max x0 s.t. -x0 <= 5 came
    back optimal 0 where 3 is."""
    _need("cpsat")
    lp = LinearProgram(c=[1.0], A=[[-1.0]], row_lower=[-np.inf], row_upper=[5.0], col_lower=[0.0], col_upper=[3.0],
                       integrality=[True], sense="max")
    r = optsched.solve(lp, "cpsat")
    assert r.termination is Termination.OPTIMAL and r.objective == 3.0


def test_scip_gap_option_stops_early():
    """S04 (scip: limits/gap not set from the gap option): gap=0.5 was ignored; SCIP ran to
    optimal (seed 0: it stops at 6337949 with bound 8908341.7 at HEAD)."""
    _need("scip")
    model = generate("budgeted_ip", 60, np.random.default_rng(0))
    r = optsched.solve(model, "scip", gap=0.5)
    assert r.termination is Termination.GAP_LIMIT


def test_cvxpy_absolute_gap_is_in_the_programs_units():
    """V06 (cvxpy: mip_abs_gap divided by the objective scale instead of multiplied): with
    mip_abs_gap = 1 the answer came back 6.05e6 (68 %) short of the optimum 8906592."""
    _need("cvxpy", "highs")
    knap = generate("budgeted_ip", 60, np.random.default_rng(0))
    exact = optsched.solve(knap, "highs")
    r = optsched.solve(knap, "cvxpy", solver_options={"mip_abs_gap": 1.0})
    assert r.ok and r.objective >= exact.objective - 1.0 - 1e-6


def test_pyomo_highs_gets_no_relative_gap():
    """Y06 (pyomo: rel_gap not passed; HiGHS's own 1e-4 applies): budgeted_ip(100, seed 3) came
    back gap_limit (79218257 with bound 79224469) where HEAD says optimal, no gap option given."""
    _need("pyomo")
    k = generate("budgeted_ip", 100, np.random.default_rng(3))
    r = optsched.solve(k, "pyomo")
    assert r.termination is Termination.OPTIMAL and r.objective == 79218257.0


def test_a_missing_solver_package_is_unavailable():
    """R01 (registry.modules_available: find_spec check dropped): a backend whose package is not
    installed was reported available (then failed at its first solve)."""
    from optsched.solvers.registry import modules_available

    avail = modules_available("optsched_probe_no_such_module")
    assert not avail and "not installed" in avail.reason


def test_the_time_already_spent_counts_against_the_limit():
    """R02 (registry.remaining: set-up time not deducted): a solver got the whole limit after its
    set-up. Deterministic: a start 5 s in the past leaves at most 5 s of a 10 s limit."""
    import time

    from optsched.solvers.registry import remaining

    left = remaining(10.0, time.perf_counter() - 5.0)
    assert left is not None and left <= 5.0


def test_the_default_backend_is_the_exact_one_of_lowest_priority():
    """R05 (fitting_backends sorted by -PRIORITY): the default for a knapsack became brute_force."""
    from optsched.solvers.registry import fitting_backends

    knap = generate("budgeted_ip", 8, np.random.default_rng(3))
    exact = [b for b in fitting_backends(knap) if b.EXACT]
    assert [b.PRIORITY for b in exact] == sorted(b.PRIORITY for b in exact)
    assert optsched.solve(knap).backend == exact[0].NAME


def test_a_qp_instance_does_not_fit_a_backend_without_quadratic_objectives():
    """R08 (trait_reason's quadratic test dropped): scip was listed for a projection QP and,
    solving it without its Hessian, answered gap_limit at 26.38 where 25.92 is the optimum."""
    from optsched.solvers.registry import fitting_backends

    proj = generate("capacity_projection", 10, np.random.default_rng(0))
    names = [b.NAME for b in fitting_backends(proj, available_only=False)]
    assert "scip" not in names and "cpsat" not in names
    with pytest.raises(ValueError, match="quadratic"):
        optsched.solve(proj, "scip")


def test_a_plugin_saying_false_is_unavailable():
    """R11 (backend_available: a bare False from a plugin's available() read as available)."""
    from optsched.solvers.registry import Backend, backend_available

    class Absent(Backend):  # never registered
        NAME = "probe_be_absent"
        DESCRIPTION = "probe"
        EXACT = False

        def available(self):
            return False

    assert not backend_available(Absent())


def test_unbounded_under_a_loosened_feasibility_tolerance_is_an_error():
    """E13 (solve.finish: the loosened-feasibility rule applied to infeasible only): a free LP with
    a looser primal tolerance came back unbounded instead of error."""
    _need("highs")
    lp = LinearProgram(c=[-1.0, 0.0], A=[[1.0, -1.0]], row_lower=[-np.inf], row_upper=[1.0], col_lower=[0.0, 0.0],
                       col_upper=[np.inf, np.inf])
    assert optsched.solve(lp, "highs").termination is Termination.UNBOUNDED
    r = optsched.solve(lp, "highs", highs_options={"primal_feasibility_tolerance": 1e-5})
    assert r.termination is Termination.ERROR and "highs_options" in r.message


def test_a_set_index_past_the_end_is_a_value_error():
    """A05 (validate.solution_indices: idx.max() > n): Model.objective of a selection naming set n
    raised IndexError instead of the ValueError naming the solution."""
    m = generate("set_packing", 6, np.random.default_rng(0))
    with pytest.raises(ValueError, match="solution"):
        m.objective([m.n_sets])


@pytest.mark.parametrize("big", [1e7, 1e9, 1e12])
@pytest.mark.parametrize("backend", ["scip", "pyomo", "cvxpy"])
def test_a_bound_covers_continuous_columns_below_the_dual_tolerance(backend, big):
    """max big x0 + x1 (x0 integer fixed at 0 by its row, x1 continuous in [0, 1]; optimum 1):
    scaled to costs of order 1, x1's cost falls below the solver's dual tolerance, and Pyomo's
    SCIP left it at 0, answered 0 and reported the bound 0.00215, below the optimum
    (branch_and_bound_proof widened only by the pruning tolerance). Whatever a route answers,
    its bound is a bound, and 0 is never optimal."""
    _need(backend)
    lp = LinearProgram(c=[big, 1.0], A=[[1.0, 0.0]], row_lower=[-np.inf], row_upper=[0.0], col_lower=[0.0, 0.0],
                       col_upper=[1.0, 1.0], integrality=[True, False], sense="max")
    r = optsched.solve(lp, backend)
    assert r.ok, r.message
    assert r.bound is None or r.bound >= 1.0 - 1e-9, (r.termination, r.objective, r.bound)
    if r.termination is Termination.OPTIMAL:
        assert r.objective == pytest.approx(1.0, rel=1e-9)


# --- probe BF: a search's bound must hold where its LPs' dual tolerance hides costs. The
# widening once counted cost x range per column, not the tolerance on each reduced cost: a
# column of scaled cost 7e-14 over a range of 1e7 counted as seen, and SCIP's bound lay past
# the optimum (every case below failed at e5bcf8f and at the first fix alike).
@pytest.mark.parametrize("backend", ["scip", "pyomo", "cvxpy"])
def test_mip_bound_below_optimum_min(backend):
    m = LinearProgram(c=[1e8, -1e-5], A=[[1.0, 0.0]], row_lower=[-np.inf], row_upper=[1.0],
                      col_lower=[0, 0], col_upper=[1, 1e7], integrality=[1, 0], sense="min")
    optimum = -100.0  # x = (0, 1e7)
    assert m.objective(np.array([0.0, 1e7])) == pytest.approx(optimum)
    assert not m.violations(np.array([0.0, 1e7]))
    r = optsched.solve(m, backend)
    if r.bound is not None:
        assert r.bound <= optimum + 1e-6 * abs(optimum), (r.termination, r.objective, r.bound)
    if r.termination is Termination.OPTIMAL:
        assert r.objective == pytest.approx(optimum, rel=1e-6)


def test_mip_pyomo_optimal_short_max():
    m = LinearProgram(c=[1e9, 1.0], A=[[1.0, 0.0]], row_lower=[-np.inf], row_upper=[1.0],
                      col_lower=[0, 0], col_upper=[1, 1e6], integrality=[1, 0], sense="max")
    optimum = 1e9 + 1e6
    r = optsched.solve(m, "pyomo")
    assert r.bound is None or r.bound >= optimum * (1 - 1e-9), (r.termination, r.objective, r.bound)
    if r.termination is Termination.OPTIMAL:
        assert r.objective == pytest.approx(optimum, rel=1e-6)


MIP_CASES = [
    # max; x = (0, 1, 0, 99657.88...) is feasible with 54828.05; scip and pyomo say optimal 54169.23, bound 54169.25
    ({"c": [-0.00023502218755799592, 54169.228989603835, -4900738984.912814, 0.0066108366883141775],
      "A": [[0.4, 0.0, 2.4, 0.9]], "ru": [89692.09558869175], "cu": [1.0, 1.0, 0.22475353071270449, 261397.09657823708],
      "ni": 2, "sense": "max"}, [0.0, 1.0, 0.0, 99657.88398743527]),
    # max; x = (1, 3, 0, 0) (all at integer columns) gives 0.0768242; all three report the bound 0.0768112
    ({"c": [0.07674410619735958, 2.668236860913609e-05, -108.42250594324173, -19486700.376289442],
      "A": [[2.8, -0.1, 0.1, -2.6], [-0.0, 2.5, -2.4, -2.2]], "ru": [3344258.4659098135, 1375452.2751053697],
      "cu": [1.0, 3.0, 1.0, 2554266.7594938045], "ni": 3, "sense": "max"}, [1.0, 3.0, 0.0, 0.0]),
]


@pytest.mark.parametrize("backend", ["scip", "pyomo", "cvxpy"])
@pytest.mark.parametrize("case", range(len(MIP_CASES)))
def test_mip_bound_not_beaten_by_feasible_point(backend, case):
    d, point = MIP_CASES[case]
    n = len(d["c"])
    m = LinearProgram(c=d["c"], A=d["A"], row_lower=[-np.inf] * len(d["ru"]), row_upper=d["ru"], col_lower=[0.0] * n,
                      col_upper=d["cu"], integrality=[1 if j < d["ni"] else 0 for j in range(n)], sense=d["sense"])
    x = np.array(point)
    assert not m.violations(x, tol=1e-12)
    value = m.objective(x)
    r = optsched.solve(m, backend)
    if r.bound is not None:
        assert r.bound >= value - 1e-9 * abs(value), (r.termination, r.objective, r.bound, value)
    if r.termination is Termination.OPTIMAL:
        assert r.objective >= value - 1e-6 * abs(value)


# --- the long run (slow): general-integer programs of wide costs, highs against CP-SAT
def _wide_cost_program(rng: np.random.Generator) -> LinearProgram:
    """1-5 integer columns with bounds up to 1e6 wide (15 % fixed), 1-3 rows of whole
    coefficients in [-7, 7] (30 % equalities, 30 % of sides open), costs of 1 to 1e12 in
    magnitude (probe BM's generator, where HiGHS 1.14 said "optimal" short of the optimum)."""
    n, m = int(rng.integers(1, 6)), int(rng.integers(1, 4))
    lo = -rng.integers(0, 10 ** int(rng.integers(1, 7)), n)
    hi = lo + rng.integers(0, 10 ** int(rng.integers(1, 7)), n)
    fixed = rng.random(n) < 0.15
    hi[fixed] = lo[fixed]
    A = rng.integers(-7, 8, (m, n)) * (rng.random((m, n)) < 0.8)
    rl = rng.integers(-50, 50, m).astype(float)
    ru = rl + rng.integers(0, 100, m)
    eq = rng.random(m) < 0.3
    ru[eq] = rl[eq]
    rl[rng.random(m) < 0.3] = -np.inf
    ru[rng.random(m) < 0.3] = np.inf
    c = rng.choice([-1, 1], n) * np.round(10.0 ** rng.uniform(0, 12, n))
    return LinearProgram(c=c, A=A.astype(float), row_lower=rl, row_upper=ru, col_lower=lo.astype(float),
                         col_upper=hi.astype(float), integrality=np.ones(n, bool),
                         sense="max" if rng.integers(0, 2) else "min")


@pytest.mark.slow
def test_highs_on_general_integer_programs_of_wide_costs() -> None:
    """Over ``OPTSCHED_FUZZ_INSTANCES`` (3,000 by default, about 35 s) random programs of
    :func:`_wide_cost_program`, against the best point CP-SAT and SCIP find (checked by the
    model): the highs route calls none infeasible, its optimal is within the seam's 1e-6 of that
    point or better (with a point the model accepts), and its bound is not past the point by more
    than that 1e-6 either. HiGHS 1.14 failed this on 4 of 3,000 (seeds 10 and 11 of the survey,
    2026-11-28: up to 3.3e-4 short). HiGHS 1.16 passes, though not at a tighter bound check: it
    put the bound past the point by 8.3e-7 and 6.9e-8 here (programs 987 and 2871, optimal as
    far short), with the integer bounds the rows imply (``StandardForm.tightened``); without them
    it said "optimal" 1.5 % short on a program of seed 2, so the tightening stays."""
    import os

    _need("highs", "cpsat", "scip")
    n = int(os.environ.get("OPTSCHED_FUZZ_INSTANCES", "3000"))
    rng = np.random.default_rng(20261128)
    compared = 0
    for i in range(n):
        lp = _wide_cost_program(rng)
        sign = 1.0 if lp.maximize else -1.0
        others = [optsched.solve(lp, b, time_limit=20) for b in ("cpsat", "scip")]
        points = [r.objective for r in others if r.solution is not None and not lp.violations(r.solution)]
        if not points:  # both prove it infeasible (55 % of them): so must highs, or give no point
            r = optsched.solve(lp, "highs", time_limit=20)
            if all(o.termination is Termination.INFEASIBLE for o in others):
                assert r.solution is None or lp.violations(r.solution), (i, r.termination, r.objective)
            continue
        compared += 1
        best = max(points, key=lambda v: sign * v)
        r = optsched.solve(lp, "highs", time_limit=20)
        where = (i, r.termination, r.objective, r.bound, best)
        assert r.termination is not Termination.INFEASIBLE, where
        if r.bound is not None:
            assert sign * (r.bound - best) >= -OBJECTIVE_RTOL * max(1.0, abs(best)), where
        if r.termination is Termination.OPTIMAL:
            assert not lp.violations(r.solution), where
            assert sign * (r.objective - best) >= -OBJECTIVE_RTOL * max(1.0, abs(best)), where
    assert compared >= n // 3
    print(f"\nwide-cost integer programs: {compared} of {n} with a point; every highs bound and optimal held")


# --- the long run (slow): random small mixed programs, every route's bound against brute force
def _random_mixed_program(rng: np.random.Generator) -> tuple[LinearProgram, np.ndarray, np.ndarray]:
    """1-3 integer columns of range 1-3, 1-3 continuous ones, costs of 1e-6..1e10 in magnitude,
    1-2 rows of packing form (probe BF's generator); with its integer points enumerated."""
    ni, nc = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    n = ni + nc
    integ = np.arange(n) < ni
    c = 10.0 ** rng.uniform(-6, 10, n) * rng.choice([-1.0, 1.0], n)
    upper = np.where(integ, rng.integers(1, 4, n), 10.0 ** rng.uniform(-3, 7, n)).astype(float)
    m = int(rng.integers(1, 3))
    A = np.round(rng.uniform(-3, 3, (m, n)), 1) * (rng.random((m, n)) < 0.7)
    row_upper = np.abs(A) @ upper * rng.uniform(0.2, 0.8, m)
    lp = LinearProgram(c=c, A=A, row_lower=np.full(m, -np.inf), row_upper=row_upper, col_lower=np.zeros(n),
                       col_upper=upper, integrality=integ, sense=str(rng.choice(["min", "max"])))
    return lp, integ, upper


def _best_point(lp: LinearProgram, integ: np.ndarray, upper: np.ndarray) -> float | None:
    """The best objective over the integer points, each completed by an LP over the continuous
    columns (scipy's HiGHS on the costs divided by their largest), checked by the model's own
    math at 1e-12: a feasible value, so OPT is at least as good."""
    import itertools

    from scipy.optimize import linprog

    form = lp.to_standard_form()
    A = form.A.toarray()
    ii, cc = np.flatnonzero(integ), np.flatnonzero(~integ)
    sign = 1.0 if lp.maximize else -1.0
    best = None
    for values in itertools.product(*(range(int(upper[j]) + 1) for j in ii)):
        fixed = A[:, ii] @ np.array(values, dtype=float)
        costs = -sign * form.c[cc]
        r = linprog(costs / max(np.abs(costs).max(), 1e-300), A_ub=A[:, cc], b_ub=form.row_upper - fixed,
                    bounds=list(zip(np.zeros(cc.size), upper[cc])), method="highs")
        if r.status != 0:
            continue
        x = np.zeros(integ.size)
        x[ii], x[cc] = values, np.clip(r.x, 0.0, upper[cc])
        if lp.violations(x, tol=1e-12):
            continue
        value = lp.objective(x)
        if best is None or sign * value > sign * best:
            best = value
    return best


@pytest.mark.slow
def test_random_mixed_programs_every_bound_holds() -> None:
    """Every route's bound is on the right side of a feasible point's value, and every optimal is
    within 1e-6 of the best point, over random mixed programs (``OPTSCHED_FUZZ_INSTANCES``, 300 by
    default). Probe BF found 27 of 400 such programs with a bound a feasible point beat, before
    the search's proof was widened by the dual tolerance times the columns' ranges. At 2,000
    programs SCIP failed it at programs 730, 775 and 1905 until its objective propagator was
    switched off (``test_scip_runs_without_its_objective_propagator``)."""
    import os

    n = int(os.environ.get("OPTSCHED_FUZZ_INSTANCES", "300"))
    rng = np.random.default_rng(20261128)
    routes = [("scip", {}), ("pyomo", {}), ("pyomo", {"solver": "highs"}), ("cvxpy", {}), ("cvxpy", {"solver": "HIGHS"})]
    routes = [(b, o) for b, o in routes if get_backend(b).available()]
    checked = 0
    for i in range(n):
        lp, integ, upper = _random_mixed_program(rng)
        best = _best_point(lp, integ, upper)
        if best is None:
            continue
        checked += 1
        tol = 1e-6 * max(1.0, abs(best))
        for backend, options in routes:
            r = optsched.solve(lp, backend, **options)
            where = (i, backend, options, r.termination, r.objective, r.bound, best)
            if r.bound is not None:
                assert (r.bound >= best - tol) if lp.maximize else (r.bound <= best + tol), where
            if r.termination is Termination.OPTIMAL:
                assert abs(r.objective - best) <= tol or (r.objective > best if lp.maximize else r.objective < best), where
    assert checked >= n // 2
    print(f"\nrandom mixed programs: {checked} of {n} feasible, {len(routes)} routes each, every bound held")


# 0-1 knapsacks on which HiGHS 1.14's MIP presolve answered a wrong "optimal" (2026-11-28): a
# reduction to the empty program that dropped item 0 (3.4088 where 4.0323 is), and one of 2,000
# random knapsacks (seed 815 of a survey); 1.16 solves those two with presolve on, and the third
# fails on 1.14 and 1.16 alike: presolve on says 0.5173 ({0, 2}) where 0.6883 ({0, 1, 3}) is (probe
# BN: 3 of 14,250 random knapsacks on 1.16)
_PRESOLVE_WRONG = [
    BudgetedIP(values=[0.6234723612533449, 0.7024352023570626, 0.9097558837718259, 0.8725634873933383,
                       0.877222376339866, 0.7492925796020096],
               weights=[[130436.48109507673, 944348.7944949856, 695338.1827891759, 194714.09908094854,
                         96677.79012286018, 631314.3601998942]], capacity=[2401437.825783446]),
    BudgetedIP(values=[4.28716768559491, 3.496705632505374, 3.7597623290214877, 3.7123381742945107, 3.7934980635909357],
               weights=[[38945.70838878938, 46600.29056436912, 87167.5195148505, 37635.692387577175, 69446.56957182185],
                        [74496.31043663048, 78465.86077335343, 16421.840876356644, 58780.04885504379,
                         47368.26189129285]], capacity=[245751.98898875143, 117948.60148624924]),
    BudgetedIP(values=[0.2665686463053362, 0.23092714057977964, 0.25076674502794416, 0.19084632518335165],
               weights=[[104371.569804978, 390345.52936926595, 512009.36392665416, 118291.88672425461]],
               capacity=[676886.1496377264]),
]


@pytest.mark.parametrize("index", range(len(_PRESOLVE_WRONG)))
def test_highs_mips_run_without_presolve(index):
    """Every route to a HiGHS MIP (highs, cvxpy, Pyomo) solves without presolve
    (``HIGHS_MIP_ORACLE_OPTIONS``) and finds brute force's optimum; presolve switched back on
    by the caller is not certified."""
    model = _PRESOLVE_WRONG[index]
    truth = optsched.solve(model, "brute_force")
    for backend in ("highs", "cvxpy", "pyomo"):
        if not get_backend(backend).available():
            continue
        r = optsched.solve(model, backend)
        assert r.termination is Termination.OPTIMAL and r.objective == pytest.approx(truth.objective, rel=1e-12), \
            (backend, r.objective, truth.objective)
    _need("highs")
    again = optsched.solve(model, "highs", highs_options={"presolve": "on"})
    assert again.termination is not Termination.OPTIMAL


# General-integer programs (costs up to 1e12, bounds up to 1e6) on which HiGHS 1.13 and 1.14,
# presolve off, said "optimal" short of the optimum with a bound past it: 4 of 3,000 random ones
# and probe BM's (2026-11-28, with x3 = 2856 where 2857 fits); HiGHS 1.12, 1.15 and 1.16 solve
# them. (c, A, row bounds, column bounds, maximize)
_GENERAL_INTEGER_WRONG = [
    ([-1296281870.0, -20984.0, -265411724.0, 65964992788.0], [[6, -3, 4, 5], [0, 0, -2, -7]], [20.0, -np.inf],
     [91.0, -7.0], [-436, -955, -827, -815], [45554, 28335, 23914, -815], False),
    ([-3289796913.0, 473634938.0, -3.0, 1367.0], [[-6, 5, 5, 6], [0, 7, 5, 0]], [48.0, 46.0], [48.0, np.inf],
     [-6849, -552, -274, -7343], [2578, 4946, 9172, -7343], False),
    ([-274435.0, 7954158.0, -384132576567.0, -1.0, -381297005.0], [[4, 0, 4, -6, -2], [-3, 0, 0, 4, -6]],
     [-27.0, -17.0], [-18.0, -10.0], [-8658, -8959, -2196, -1534, -5303], [903377, 853324, 889612, 716874, 105580],
     False),
    ([-986634884413.0, -7206.0, 89283352836.0, 565804640776.0, -54774.0], [[4, 1, -1, -7, 0]], [12.0], [26.0],
     [-169403, -105746, -148249, -517480, -826624], [-169403, -105746, 652562, 219114, -826624], True),
    ([28203863344.0, 253246189.0, -156865.0, -487500151.0, 30.0], [[-6, 0, 4, -2, 0], [1, 2, -7, 3, -5],
     [6, 1, -2, -3, -3]], [-38.0, -np.inf, -48.0], [57.0, np.inf, -48.0], [-70, -46, -46, -12, -84],
     [541978, 499684, 469338, 342198, 87304], True),
]


@pytest.mark.parametrize("index", range(len(_GENERAL_INTEGER_WRONG)))
def test_highs_proves_the_optimum_of_general_integer_programs_of_wide_costs(index):
    """The highs route's optimal is CP-SAT's (its point feasible, objectives within 1e-12) and
    its bound is on the right side of CP-SAT's point."""
    _need("highs", "cpsat")
    c, A, rl, ru, lo, hi, maximize = _GENERAL_INTEGER_WRONG[index]
    model = LinearProgram(c=c, A=np.array(A, float), row_lower=rl, row_upper=ru, col_lower=np.array(lo, float),
                          col_upper=np.array(hi, float), integrality=np.ones(len(c), bool),
                          sense="max" if maximize else "min")
    truth = optsched.solve(model, "cpsat")
    assert truth.termination is Termination.OPTIMAL and not model.violations(truth.solution)
    r = optsched.solve(model, "highs")
    assert r.termination is Termination.OPTIMAL and not model.violations(r.solution)
    assert r.objective == pytest.approx(truth.objective, rel=1e-12), (r.objective, truth.objective)
    assert (r.bound >= truth.objective) if maximize else (r.bound <= truth.objective)


def test_scip_runs_without_its_objective_propagator():
    """Program 730 of the mixed generator (seed 20261128; ``test_random_mixed_programs_every_bound_holds``
    at 2,000): at epsilon 1e-12 SCIP's pseudoobj propagator divided the rounding of an O(1)
    difference by the scaled cost -4.5e-12 of x1, cut off the root, and SCIP answered the
    trivial heuristic's middle point "optimal": -3.48e8, every column halved, where x2 = 2 gives
    -6.96e8 (probe BP). With the propagator off (``SCIP_ORACLE_PARAMS``), on every route to SCIP."""
    model = LinearProgram(c=[9123412.870943824, -0.002403346540323681, -347988552.8092096, -6.272148135390164e-06,
                             -0.0018268697152506316],
                          A=[[2.9, 0.6, -0.7, -0.4, -1.9], [0.7, 0.5, 0.9, 1.6, 1.7]], row_lower=[-np.inf, -np.inf],
                          row_upper=[5.460054681784159, 29.85691412773022], col_lower=np.zeros(5),
                          col_upper=[1.0, 3.0, 2.0, 22.00437361119397, 0.19040395536666768],
                          integrality=[True, True, True, False, False], sense="min")
    best = _best_point(model, np.array([True, True, True, False, False]), model.to_standard_form().col_upper)
    assert best is not None and best < -6.9e8
    for backend, options in [("scip", {}), ("pyomo", {"solver": "scip_direct"}), ("cvxpy", {})]:  # cvxpy: SCIP for it
        if not get_backend(backend).available():
            continue
        r = optsched.solve(model, backend, **options)
        where = (backend, r.termination, r.objective, r.bound, best)
        assert r.termination is Termination.OPTIMAL and r.objective <= best + OBJECTIVE_RTOL * abs(best), where
        assert r.bound <= best + OBJECTIVE_RTOL * abs(best), where


def test_scip_runs_without_its_dominated_columns_presolver():
    """At numerics/epsilon 1e-12 (``SCIP_ORACLE_PARAMS``) SCIP's dominated-columns presolver
    dropped item 3, which fits (26,656 + 8,914 + 15,305 <= 74,013), and said optimal 739.9 where
    871.8 is (5 of 2,000 random knapsacks, 2026-11-28); with it off, on the routes to SCIP."""
    model = BudgetedIP(values=[341.7615251625559, 225.09366450809952, 447.723377142045, 131.88330557784235,
                               292.18445243839557, 286.042424300612],
                       weights=[[93532.15640884197, 67400.74786623853, 26655.830962063104, 8913.835323784595,
                                 15304.938827241305, 75444.25892327291]], capacity=[74013.1745712997])
    truth = optsched.solve(model, "brute_force")
    assert sorted(truth.solution) == [2, 3, 4]
    routes = [("scip", {}), ("pyomo", {"solver": "scip_direct"})]
    for backend, options in routes:
        if not get_backend(backend).available():
            continue
        r = optsched.solve(model, backend, **options)
        assert r.termination is Termination.OPTIMAL and r.objective == pytest.approx(truth.objective, rel=1e-12), \
            (backend, r.objective)


def test_a_column_no_row_admits_is_fixed_before_the_solver_sees_its_cost():
    """Values 1 and 1e12, the item of 1e12 fitting no row (weight 2, capacity 1): its cost set
    the objective's scale, and the item of 1 fell below the search's resolution: HiGHS without
    presolve, its cvxpy and Pyomo routes and SCIP said feasible 0 (bounds 385-1651) where 1 is,
    CP-SAT feasible 0 (bound 2.2) until 2026-11-28. ``StandardForm.tightened`` fixes it at 0
    and drops its cost first: each proves 1."""
    from optsched.models.budget_family import BudgetFamily

    member = BudgetFamily(values=[1.0, 1e12], weights=[[0.0, 2.0], [2.0, 2.0]], capacity=[1.0, 2.0],
                          budget_coeffs=[0.0, 2.0], max_budget=1, budget=0).member(0)
    assert member.to_standard_form().widened().tightened().col_upper.tolist() == [1.0, 0.0]
    for backend in ("highs", "cvxpy", "pyomo", "scip", "cpsat"):
        if not get_backend(backend).available():
            continue
        r = optsched.solve(member, backend)
        assert r.termination is Termination.OPTIMAL and r.objective == 1.0, (backend, r.termination, r.objective)


def _spread_knapsack(seed: int) -> BudgetedIP:
    """A whole-number knapsack of 3-8 items and 1-2 rows (weights up to 10^U(0, 10)), half of
    them with an item that fits no row, values spread over 10^U(-3, 3), one of them times
    10^U(6, 12) in half, and a budget row in 40 %."""
    rng = np.random.default_rng([seed, 23])
    n, k = int(rng.integers(3, 9)), int(rng.integers(1, 3))
    mag = 10 ** rng.uniform(0, 10)
    w = np.floor(rng.uniform(0.05, 1.0, (k, n)) * mag)
    c = np.floor(w.sum(axis=1) * rng.uniform(0.1, 0.9, k))
    if rng.random() < 0.5:
        w[:, rng.integers(n)] = c + 1 + np.floor(rng.uniform(0, mag, k))
    v = rng.uniform(0.5, 2.0, n) * 10.0 ** rng.uniform(-3, 3, n)
    if rng.random() < 0.5:
        v[rng.integers(n)] *= 10.0 ** rng.uniform(6, 12)
    budget = {}
    if rng.random() < 0.4:
        b = np.floor(rng.uniform(0, mag, n))
        budget = dict(budget_coeffs=b, budget=float(np.floor(b.sum() * rng.uniform(0, 0.4))))
    return BudgetedIP(values=v, weights=w, capacity=c, **budget)


def _cpsat_against_brute_force(seeds: range) -> int:
    """CP-SAT on :func:`_spread_knapsack`: every answer is checked against brute force (an
    optimal agrees with it, a bound is not below it, infeasible only where it finds nothing);
    returns how many ended feasible (uncertified)."""
    from optsched.result import agrees_at_scale

    uncertified = 0
    for seed in seeds:
        model = _spread_knapsack(seed)
        truth = optsched.solve(model, "brute_force")
        r = optsched.solve(model, "cpsat")
        if truth.termination is Termination.INFEASIBLE:
            assert r.termination is Termination.INFEASIBLE, (seed, r.termination)
            continue
        assert r.termination is not Termination.INFEASIBLE and r.ok, (seed, r.termination, r.message)
        if r.termination is Termination.OPTIMAL:
            assert agrees_at_scale(model, r.objective, truth.objective), (seed, r.objective, truth.objective)
        if r.bound is not None:
            assert r.bound >= truth.objective or agrees_at_scale(model, r.bound, truth.objective), (seed, r.bound)
        uncertified += r.termination is Termination.FEASIBLE
    return uncertified


def test_cpsat_certifies_knapsacks_whose_values_spread_over_orders_of_magnitude():
    """Before 2026-11-28 CP-SAT got no bounds from the rows: an item that fits nowhere kept its
    cost, which set the objective's scale, and CP-SAT's rounding lost the small values beside
    it. Of seeds 0-1499 of the generator, 162 ended feasible at f5f91d9 (17 of seeds 0-99), 13
    now (0 of seeds 0-99); none wrong before or after (the survey of docs/solvers.md)."""
    _need("cpsat")
    assert _cpsat_against_brute_force(range(100)) == 0
    assert _cpsat_against_brute_force(range(100, 1500)) <= 13


def test_cpsat_runs_without_its_inclusion_presolve():
    """Probe BK (2026-11-28): OR-Tools 9.15's presolve said optimal 17 where 19 is on a 6-item
    knapsack with a budget row ({0, 1, 2, 4}: load 8.62e9 of 1.01e10, far inside every row), the
    capacity being the model's widened side; its inclusion detection is off now."""
    _need("cpsat")
    model = BudgetedIP(values=[4.0, 8.0, 5.0, 1.0, 2.0, 2.0],
                       weights=[[3242974313.0, 1509849459.0, 3591408106.0, 3304766537.0, 279193832.0, 2489239634.0]],
                       capacity=[10139148957.0],
                       budget_coeffs=[211816349.0, 845850902.0, 624937252.0, 614534662.0, 601943934.0, 967237718.0],
                       budget=1451288265.0)
    assert optsched.solve(model, "brute_force").objective == 19.0
    r = optsched.solve(model, "cpsat")
    assert r.termination is Termination.OPTIMAL and r.objective == 19.0, (r.termination, r.objective)


@pytest.mark.parametrize("backend, options", [("highs", {"highs_options": {"presolve": "on"}}),
                                              ("highs", {"highs_options": {"presolve": "choose"}}),
                                              ("cvxpy", {"solver": "HIGHS", "solver_options": {"presolve": "on"}}),
                                              ("pyomo", {"solver_options": {"presolve": "on"}})])
def test_presolve_on_leaves_an_lp_certified(backend, options):
    """Probe BK: presolve switched back on counted as loosening for every program, so an LP's
    optimal came back feasible and an infeasible LP an error; only a MIP's presolve is unsound."""
    _need(backend)
    lp = LinearProgram(c=[1.0, 2.0], A=[[1.0, 1.0]], row_lower=[-np.inf], row_upper=[1.0], col_lower=[0.0, 0.0],
                       col_upper=[1.0, 1.0], sense="max")
    r = optsched.solve(lp, backend, **options)
    assert r.termination is Termination.OPTIMAL and r.objective == pytest.approx(2.0), (r.termination, r.message)
    empty = LinearProgram(c=[1.0], A=[[1.0]], row_lower=[2.0], row_upper=[np.inf], col_lower=[0.0], col_upper=[1.0],
                          sense="max")
    assert optsched.solve(empty, backend, **options).termination is Termination.INFEASIBLE
    mip = _PRESOLVE_WRONG[0]
    assert optsched.solve(mip, backend, **options).termination is not Termination.OPTIMAL


def test_scip_keeps_its_root_cuts_on_the_escb_index():
    """Probe BQ: with its root separation off (as on the linear routes), SCIP said "optimal"
    5.4555 for this P3 of 13 items, its bound below the optimum 5.6242 (brute force); so on 31 of
    4,500 generated P3 of 4-16 items and 17 of the 60 indices of an ESDP run. P3's row t^2 <=
    variance.x is outer-approximated in those rounds; P3 keeps them (``scip.ESCB_PARAMS``)."""
    _need("scip")
    model = EscbIndex(
        mean=[0.052611273896911226, 0.3747053414903774, 0.0260662123752462, 0.16435428091318915, 0.5129460488417883,
              0.606912785040707, 0.7099542481684628, 0.4214273639851942, 0.3336846531971349, 0.05568336161946019,
              0.05116390616226607, 0.773200807944694, 0.04559594167601866],
        variance=[0.30024473183249806, 1.0281107483961296, 0.7068261395223391, 0.5063829059264519, 1.6156026046224894,
                  0.30024473183249806, 0.30024473183249806, 0.3728313702974976, 0.8078013023112447, 0.9424348526964521,
                  1.169919127485251, 0.5140553741980648, 1.6963827348536138],
        weights=[[1, 2, 1, 1, 1, 1, 2, 2, 1, 2, 1, 2, 2], [1, 2, 2, 1, 1, 2, 2, 1, 2, 2, 2, 2, 1],
                 [1, 1, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 2]],
        capacity=[10.0, 11.0, 8.0])
    truth = optsched.solve(model, "brute_force")
    assert truth.objective == pytest.approx(5.6241849773089, rel=1e-12)
    r = optsched.solve(model, "scip")
    assert r.termination is Termination.OPTIMAL and r.objective == pytest.approx(truth.objective, rel=1e-9), \
        (r.termination, r.objective, truth.objective)
    assert r.bound >= truth.objective * (1 - 1e-9)


@pytest.mark.slow
def test_scip_on_generated_escb_indices_against_brute_force():
    """1,000 generated P3 of 4-16 items (seed 3): SCIP's optimal is brute force's and its bound
    never lies below it (probe BQ's fault, ``test_scip_keeps_its_root_cuts_on_the_escb_index``:
    7 of these 1,000 with root separation off)."""
    _need("scip")
    rng = np.random.default_rng(3)
    for i in range(1000):
        model = generate("escb_index", int(rng.integers(4, 17)), rng)
        truth = optsched.solve(model, "brute_force").objective
        r = optsched.solve(model, "scip", time_limit=60)
        where = (i, r.termination, r.objective, r.bound, truth)
        assert r.termination is Termination.OPTIMAL and r.objective == pytest.approx(truth, rel=1e-9), where
        assert r.bound >= truth - OBJECTIVE_RTOL * max(1.0, abs(truth)), where


@pytest.mark.parametrize("index", [0, 1])
def test_scip_runs_without_its_linear_presolve_and_root_cuts(index):
    """With its dominated-columns presolver off, SCIP's linear-constraint presolve and root cuts
    still cut off optima at epsilon 1e-12 (3 of 1,000 knapsacks whose subsets sit at their
    capacities): "optimal" 20570.76 where {0, 1, 5} gives 22683.45, 1.723 where {0, 2} gives
    2.765, both points well inside their rows; both are off (``SCIP_ORACLE_PARAMS``)."""
    _need("scip")
    model = [
        BudgetedIP(values=[6906.673996691606, 9017.420271111423, 3737.2638210875516, 11553.336973498304,
                           3851.2188482189013, 6759.354349339961],
                   weights=[[1164.782349468278, 442.3869310536485, 2305.0671277339507, 2630.934100055408,
                             2602.769643921002, 1582.8809295732701],
                            [373.8149884013051, 692.8278909795732, 1532.2426900645305, 1068.0490934990846,
                             1941.277912128607, 571.6601083694375]],
                   capacity=[4238.103367863025, 2134.691979284039],
                   budget_coeffs=[1229.497226006966, 1226.425506267984, 1752.9297717418929, 2382.629186429008,
                                  1901.341845202908, 2155.9624696588608], budget=2979.3552839685876),
        BudgetedIP(values=[1.0413832594378563, 1.0956206583865467, 1.7233050229172737],
                   weights=[[18959.59435438284, 68097.32068673539, 42344.13091076381]], capacity=[73064.61391591138],
                   budget_coeffs=[65005.10823772914, 15195.586818573029, 20910.798421236985], budget=20910.798379415388),
    ][index]
    truth = optsched.solve(model, "brute_force")
    r = optsched.solve(model, "scip")
    assert r.ok and (r.termination is not Termination.OPTIMAL or r.objective == pytest.approx(truth.objective, rel=1e-9)), \
        (r.termination, r.objective, truth.objective)
    assert r.bound is None or r.bound >= truth.objective * (1 - 1e-9)
