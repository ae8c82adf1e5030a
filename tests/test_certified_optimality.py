"""What a result may claim when the caller changes what the solver's proof rests on.

Pass-through option tables (HiGHS, Pyomo, SCIP, cvxpy) take booleans, strings and finite numbers
only: a NaN tolerance crashed HiGHS (segmentation fault), an infinite one made it answer
"infeasible" for a feasible instance. Options that loosen the proof (tolerances, CP-SAT's
objective scaling, another cvxpy solver at its defaults) leave ``feasible`` where the solver said
optimal, with ``extra["optimality"]`` saying why; a kind whose variables are bounded is never
``unbounded``. Found by probing every backend's options with values the tests had not tried.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import optsched
from optsched.generators import generate
from optsched.models.budgeted_ip import BudgetedIP
from optsched.models.linear_program import LinearProgram
from optsched.models.set_packing import SetPacking, SetPackingBatch
from optsched.result import Result, Termination
from optsched.solve import finish
from optsched.solvers.registry import fitting_backends, get_backend

TABLES = [("highs", "highs_options", "mip_feasibility_tolerance"), ("pyomo", "solver_options", "mip_feasibility_tolerance"),
          ("cvxpy", "solver_options", "mip_feasibility_tolerance"), ("scip", "scip_params", "numerics/feastol")]


def _knapsack() -> BudgetedIP:
    return generate("budgeted_ip", 8, np.random.default_rng(3))


@pytest.mark.parametrize("backend,option,key", TABLES)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 10**400, [1e-6], {"a": 1}, None])
def test_pass_through_tables_refuse_what_is_not_a_finite_number_a_flag_or_a_word(backend, option, key, value):
    if not get_backend(backend).available():
        pytest.skip(f"{backend} is not installed")
    with pytest.raises(ValueError, match=f"option '{option}' '{key}'"):
        optsched.solve(_knapsack(), backend, **{option: {key: value}})


@pytest.mark.parametrize("backend,option,key", TABLES)
def test_a_loosened_tolerance_leaves_feasible_and_says_why(backend, option, key):
    if not get_backend(backend).available():
        pytest.skip(f"{backend} is not installed")
    model = _knapsack()
    exact = optsched.solve(model, "brute_force")
    loose = optsched.solve(model, backend, **{option: {key: 1e-5}})
    assert loose.ok and loose.termination is Termination.FEASIBLE
    assert option in loose.extra["optimality"]
    assert loose.objective <= exact.objective + 1e-9  # still verified feasible
    assert optsched.solve(model, backend).termination is Termination.OPTIMAL


def test_options_that_do_not_touch_the_proof_keep_optimal():
    model = _knapsack()
    assert optsched.solve(model, "highs", highs_options={"presolve": "off", "random_seed": 7}).termination \
        is Termination.OPTIMAL
    prepared = optsched.prepare(model, "highs")
    assert prepared.solve(model, highs_options={"primal_feasibility_tolerance": 1e-4}).termination \
        is Termination.FEASIBLE  # a per-solve override is judged too
    assert prepared.solve(model).termination is Termination.OPTIMAL


def test_cpsat_coarse_objective_scaling_is_never_called_optimal():
    rng = np.random.default_rng(0)
    for _ in range(20):
        model = generate("set_packing", 12, rng)
        coarse = optsched.solve(model, "cpsat", mip_wanted_precision=1e-2)
        assert coarse.ok and coarse.termination is Termination.FEASIBLE
        assert coarse.objective <= optsched.solve(model, "brute_force").objective + 1e-9


def test_cvxpy_with_another_solver_than_the_models_own_is_not_certified():
    if not get_backend("cvxpy").available():
        pytest.skip("cvxpy is not installed")
    model = generate("capacity_projection", 20, np.random.default_rng(1))  # its own: OSQP, tight options
    assert optsched.solve(model, "cvxpy").termination is Termination.OPTIMAL
    assert optsched.solve(model, "cvxpy", solver="OSQP").termination is Termination.OPTIMAL  # named, same
    other = optsched.solve(model, "cvxpy", solver="SCS")
    assert other.termination in (Termination.FEASIBLE, Termination.ERROR)
    if other.ok:
        assert "SCS" in other.extra["optimality"]


def test_unbounded_is_an_error_for_a_bounded_kind_and_a_status_for_a_free_program():
    model = _knapsack()
    out = finish(model, Result(Termination.UNBOUNDED))
    assert out.termination is Termination.ERROR and "bounded variables" in out.message
    lp = LinearProgram(c=[1.0], A=[[1.0]], row_lower=[0.0], row_upper=[None], col_lower=[0.0], col_upper=[None],
                       sense="max")
    assert not lp.BOUNDED
    assert finish(lp, Result(Termination.UNBOUNDED)).termination is Termination.UNBOUNDED
    assert optsched.solve(lp, "highs").termination is Termination.UNBOUNDED


@pytest.mark.parametrize("option,value", [("num_workers", 2**64), ("random_seed", -(2**70)),
                                          ("absolute_gap_limit", 10**400)])
def test_numeric_options_beyond_the_machines_numbers_are_value_errors(option, value):
    with pytest.raises(ValueError, match=f"option '{option}'"):
        optsched.solve(_knapsack(), "cpsat", **{option: value})


def test_a_budget_beyond_what_the_coefficients_reach_is_infeasible_everywhere():
    model = BudgetedIP(values=[3, 2, 4], weights=[[1, 1, 1]], capacity=[2], budget_coeffs=[1, 1, 1], budget=2**63)
    names = [b.NAME for b in fitting_backends(model)]
    assert "dp" in names and "highs" in names
    for name in names:
        result = optsched.solve(model, name, time_limit=30)
        assert result.termination is Termination.INFEASIBLE, (name, result.message)
    assert "cpsat" not in names  # a row bound of 2^63 is beyond CP-SAT's int64 domain
    assert "2^62" in get_backend("cpsat").admits(model)


def test_counts_are_at_most_2_to_the_53():
    for cls, weights in ((SetPacking, [1.0]), (SetPackingBatch, [[1.0]])):
        with pytest.raises(ValueError, match="^n_elements: must be <= "):
            cls(10**400, [[0]], weights)


def test_infeasible_is_checked_against_the_zero_solution():
    """cvxpy with OSQP's infeasibility tolerance at 1e3 called a projection infeasible whose
    y = 0 is feasible; the seam tests every "infeasible" on the kind's zero solution."""
    if not get_backend("cvxpy").available():
        pytest.skip("cvxpy is not installed")
    model = generate("capacity_projection", 12, np.random.default_rng(0))
    assert model.violations(model.zero_solution()) == []
    result = optsched.solve(model, "cvxpy", solver_options={"eps_prim_inf": 1e3})
    assert result.termination is not Termination.INFEASIBLE
    assert finish(model, Result(Termination.INFEASIBLE)).termination is Termination.ERROR
    knapsack = BudgetedIP(values=[1.0], weights=[[1.0]], capacity=[1.0], budget_coeffs=[1.0], budget=2.0)
    assert knapsack.violations(knapsack.zero_solution())  # x = 0 misses the budget: no witness
    assert optsched.solve(knapsack, "highs").termination is Termination.INFEASIBLE


def test_highs_tells_an_unbounded_integer_program_from_an_infeasible_one():
    """min -x0 s.t. x0 - x1 <= 1, x >= 0 integer: HiGHS's presolve says "unbounded or
    infeasible", which was read as infeasible although x = 0 is feasible."""
    unbounded = LinearProgram(c=[-1.0, 0.0], A=[[1.0, -1.0]], row_lower=[None], row_upper=[1.0], col_lower=[0.0, 0.0],
                              col_upper=[None, None], integrality=[True, True], sense="min")
    assert optsched.solve(unbounded, "highs").termination is Termination.UNBOUNDED
    infeasible = LinearProgram(c=[-1.0, 0.0], A=[[1.0, -1.0], [1.0, 0.0]], row_lower=[None, 3.0], row_upper=[1.0, None],
                               col_lower=[0.0, 0.0], col_upper=[None, 1.0], integrality=[True, True], sense="min")
    assert optsched.solve(infeasible, "highs").termination is Termination.INFEASIBLE
    if get_backend("pyomo").available():
        assert optsched.solve(unbounded, "pyomo").termination in (Termination.UNBOUNDED, Termination.ERROR)


def test_cvxpy_options_of_another_solver_and_integer_programs_on_a_conic_solver_are_value_errors():
    if not get_backend("cvxpy").available():
        pytest.skip("cvxpy is not installed")
    projection = generate("capacity_projection", 6, np.random.default_rng(0))  # solved with OSQP
    with pytest.raises(ValueError, match="'tol_feas' is not an option of OSQP"):
        optsched.solve(projection, "cvxpy", solver_options={"tol_feas": 1e-8})
    with pytest.raises(ValueError, match="SCS does not solve integer programs"):
        optsched.solve(_knapsack(), "cvxpy", solver="SCS")


def test_scip_integer_parameters_beyond_its_c_int_are_value_errors():
    if not get_backend("scip").available():
        pytest.skip("scip is not installed")
    with pytest.raises(ValueError, match="SCIP rejects 'limits/solutions'"):
        optsched.solve(_knapsack(), "scip", scip_params={"limits/solutions": 2**40})


@pytest.mark.parametrize("alpha", [1.0, 500.5, 1e4])
def test_price_exponents_that_overflow_are_refused(alpha):
    model = generate("pseudo_welfare", 3, np.random.default_rng(0))
    data = {**model.to_dict(), "alpha": alpha}
    data.pop("model")
    with pytest.raises(ValueError, match=r"^alpha: must be in \(1, 500\]"):
        type(model)(**data)


@pytest.mark.parametrize("backend,option,value", [("budget_exact", "inner", "nope"), ("budget_exact", "inner", "greedy"),
                                                  ("aescb", "family_backend", "nope")])
def test_options_naming_a_backend_name_the_option(backend, option, value):
    kind = "budget_family" if backend == "budget_exact" else "escb_index"
    with pytest.raises(ValueError, match=f"option '{option}' must be an exact"):
        optsched.prepare(kind, backend, **{option: value})
