"""One feasibility rule per model: every vectorised test of a model's rows (brute force's
``evaluate_binary``, the DP's budget) accepts exactly what the
model's own ``violations`` accepts at its default tolerance (``FEASIBILITY_TOL``), on every
vector where the model's objective is defined.

A strict float test is not the model's math: with weights 0.1 and 0.2 and a capacity of 0.3
the sum is 0.30000000000000004, and brute force called a worse selection "optimal" while every
solver and ``violations`` took both items. The instances here sit on their rows' boundaries:
capacities and budgets are sums of random subsets of decimal data, summed in another order
and moved by a few ulps or by 1e-12 of the row either way."""

from __future__ import annotations

import numpy as np
import pytest

import optsched
from optsched.generators import generate
from optsched.models import BudgetedIP, EscbIndex
from optsched.models.forms import all_binary_rows, as_binary
from optsched.models.pseudo_welfare import PseudoWelfareIntegral
from optsched.result import Termination

DECIMALS = np.array([0.1, 0.2, 0.3, 0.7, 1.1, 2.675, 1e-3, 0.35])


def _boundary(rng: np.random.Generator, data: np.ndarray) -> float:
    """A subset's sum of ``data`` in reverse order, moved by a few ulps or 1e-12 relative."""
    subset = data[rng.random(data.shape[0]) < 0.5][::-1]
    total = float(sum(subset.tolist()))
    move = rng.choice([0.0, 1.0, -1.0, 2.0, -2.0, 1e3, -1e3, 1e4, -1e4])
    if total == 0.0:  # an empty subset stays 0: solvers' absolute feasibility tolerance (1e-9)
        return 0.0  # takes a side of 4e-16 as 0, where the model's relative one does not
    return max(0.0, total + move * np.spacing(total))


def boundary_models(seed: int) -> list:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    w = rng.choice(DECIMALS, size=(2, n))
    values = rng.choice(DECIMALS, size=n) * rng.choice([-1.0, 1.0], size=n)
    b = rng.choice(DECIMALS, size=n)
    capacity = [_boundary(rng, w[k]) for k in range(2)]
    models = [
        BudgetedIP(values=values, weights=w, capacity=capacity, budget_coeffs=b, budget=_boundary(rng, b)),
        EscbIndex(mean=np.abs(values), variance=rng.choice(DECIMALS, size=n), weights=w, capacity=capacity),
    ]
    xbar = rng.choice(DECIMALS, size=n)
    usage = rng.choice(DECIMALS, size=n) * (rng.random(n) < 0.5)
    capacity = np.array([usage[r] + xbar[r] for r in range(n)]) * rng.choice([1.0, 1 + 1e-12, 1 - 1e-12], size=n)
    models.append(PseudoWelfareIntegral(utility="linear", a=np.full(n, 2.0), beta=np.full(n, 0.3), capacity=capacity,
                                        xbar=xbar, rho=_boundary(rng, xbar), usage=usage))
    return models


@pytest.mark.parametrize("seed", range(40))
def test_brute_force_rows_are_the_models_own_rule(seed: int) -> None:
    for model in boundary_models(seed):
        form = as_binary(model)
        rows = all_binary_rows(form.n_binary, 0, 1 << form.n_binary)
        feasible, values = form.evaluate_binary(rows)
        for row, ok, value in zip(rows, feasible, values):
            if isinstance(model, PseudoWelfareIntegral) and (row & ~model.takeable).any():
                continue  # a unit past C_r: its price, hence its value, is not defined there
            solution = form.solution_from_vector(row.astype(np.float64))
            assert bool(ok) == (model.violations(solution) == []), (model.name, row, model.violations(solution))
            if ok:
                assert value == pytest.approx(model.objective(solution), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_brute_force_and_highs_agree_on_the_boundary(seed: int) -> None:
    """Decimal rows (the DP needs whole weights: it does not fit these)."""
    _agree_on_the_boundary(boundary_models(seed)[0], ("brute_force", "highs"))


@pytest.mark.parametrize("seed", range(40))
def test_brute_force_dp_and_highs_agree_on_whole_boundaries(seed: int) -> None:
    """Whole weights and budget coefficients, each row's side a subset's sum moved by -1, 0 or +1:
    the DP's table meets the rows exactly where the model's rule does."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    w = rng.integers(1, 10, size=(2, n)).astype(np.float64)
    b = rng.integers(1, 10, size=n).astype(np.float64)

    def side(data: np.ndarray) -> float:
        return max(0.0, float(data[rng.random(n) < 0.5].sum() + rng.integers(-1, 2)))

    model = BudgetedIP(values=rng.choice(DECIMALS, size=n) * rng.choice([-1.0, 1.0], size=n), weights=w,
                       capacity=[side(w[0]), side(w[1])], budget_coeffs=b, budget=side(b))
    _agree_on_the_boundary(model, ("brute_force", "highs", "dp"))


def _agree_on_the_boundary(model: BudgetedIP, backends: tuple[str, ...]) -> None:
    fitting = optsched.backends(model)
    assert set(backends) <= set(fitting), fitting
    results = {b: optsched.solve(model, b) for b in backends}
    terms = {b: r.termination for b, r in results.items()}
    if any(t is Termination.OPTIMAL for t in terms.values()):
        assert all(t is Termination.OPTIMAL for t in terms.values()), terms
        best = results["brute_force"].objective
        assert all(r.objective == pytest.approx(best, rel=1e-9, abs=1e-9) for r in results.values())
    else:
        assert all(t is Termination.INFEASIBLE for t in terms.values()), terms


def test_decimal_weights_that_sum_to_the_capacity() -> None:
    """The reviewer's case: 0.1 + 0.2 meets 0.3; brute force said "optimal" 2 instead of 3."""
    for model in (BudgetedIP(values=[1, 2, 3], weights=[[0.1, 0.2, 0.7]], capacity=[0.3]),
                  EscbIndex(mean=[1, 2, 3], variance=[0, 0, 0], weights=[[0.1, 0.2, 0.7]], capacity=[0.3])):
        result = optsched.solve(model, "brute_force")
        assert result.termination is Termination.OPTIMAL and result.objective == 3.0


@pytest.mark.parametrize(("values", "budget", "optimum"), [([-1.0, -2.0], 1e-12, -1.0), ([1.0, 2.0], 2 + 1e-12, 3.0)])
def test_a_budget_a_hair_past_a_number_is_the_rows_own(values: list[float], budget: float, optimum: float) -> None:
    """The DP took ceil(budget): 2 + 1e-12 became a budget of 3 (infeasible), which the model's
    own budget row does not ask for. A budget of 1e-12 does ask for an item: the row's slack is
    relative to its side and its sum (HiGHS, whose feasibility tolerance is absolute, returns
    x = 0 there, and the seam says so: an error naming the budget)."""
    model = BudgetedIP(values=values, weights=[[1, 1]], capacity=[2], budget_coeffs=[1, 1], budget=budget)
    for backend in ("dp", "brute_force", "highs"):
        result = optsched.solve(model, backend)
        if backend == "highs" and result.termination is Termination.ERROR:
            assert "budget" in result.message
            continue
        assert result.termination is Termination.OPTIMAL and result.objective == optimum, backend


def test_dp_refuses_sums_its_int64_table_cannot_hold_instead_of_raising_overflow() -> None:
    model = BudgetedIP(values=[1, 2, 3], weights=[[1, 1, 1]], capacity=[3], budget_coeffs=[2**62, 2**62, 1], budget=2**63)
    assert "dp" not in optsched.backends(model)
    # the default backend (HiGHS) answers; its optimal is no proof beside a budget entry of 1 next
    # to 2^62 (certificates.branch_and_bound_proof), so it says feasible, with the optimum
    answer = optsched.solve(model)
    assert answer.termination is Termination.FEASIBLE and answer.objective == 6.0
    assert "feasibility tolerance" in answer.extra["optimality"]
    with pytest.raises(ValueError, match="budget_coeffs: they .or max_budget. reach 2\\^62"):
        optsched.solve(model, "dp")
    heavy = BudgetedIP(values=[1, 2], weights=[[2**62, 2**62]], capacity=[2**62])
    assert "dp" not in optsched.backends(heavy) and optsched.solve(heavy, "highs").objective == 2.0


def test_a_selections_row_slack_scales_with_what_it_sums_not_with_unused_entries() -> None:
    """From the cross-check of every exact backend on data spanning 1e-8..1e8 (row_slack):

    * a masked item's weight of 1e8 let SCIP's load of 10003 pass a capacity of 10001 ("optimal");
    * a budget coefficient of 1e8 made x = 0 meet a budget of 1, so every solver's correct
      "infeasible" was turned into an error."""
    masked = BudgetedIP(values=[1, 12], weights=[[1e8, 10003]], capacity=[10001], mask=[0, 1])
    assert masked.violations([1]) != []
    for backend in optsched.backends(masked):
        res = optsched.solve(masked, backend)
        assert res.termination is not Termination.OPTIMAL or res.objective == 0.0, backend
    infeasible = BudgetedIP(values=[1], weights=[[1]], capacity=[0], budget_coeffs=[1e8], budget=1)
    assert infeasible.violations([]) != []
    assert optsched.solve(infeasible, "highs").termination is Termination.INFEASIBLE


def test_a_row_of_tiny_data_keeps_a_slack_of_its_own_scale():
    """The continuous kinds' rows had a floor of tol (1e-6 at the seam's check) whatever their
    scale: a job whose workloads, rho and capacities are 1e-9 could carry 1e-6, a thousand times
    its rho, and pass. The floor is now the smaller of 1 and what the row's variables can sum to;
    a solver's residual at the job's own scale still passes."""
    from optsched.models.base import model_from_dict
    from optsched.solve import VERIFY_TOL

    job = generate("pseudo_welfare", 6, np.random.default_rng(0))
    data = job.to_dict()
    for key in ("rho", "xbar", "capacity", "usage"):
        data[key] = (np.asarray(data[key], dtype=float) * 1e-9).tolist()
    tiny = model_from_dict(data)
    over = np.full(tiny.n_units, 1e-6 / tiny.n_units)  # sums to 1e-6, a thousand times rho
    assert any(v.startswith("(4)") for v in tiny.violations(over, tol=VERIFY_TOL))
    solved = optsched.solve(tiny, "kkt")
    assert solved.ok and not tiny.violations(solved.solution + 1e-22, tol=VERIFY_TOL)

    offline = generate("onsocmax_offline", 6, np.random.default_rng(0))
    data = offline.to_dict()
    for key in ("rho", "xbar", "capacity"):
        data[key] = (np.asarray(data[key], dtype=float) * 1e-9).tolist()
    small = model_from_dict(data)
    pairs = small.instance.n_pairs
    assert any(v.startswith("(4)") or v.startswith("(6)") or v.startswith("(7)")
               for v in small.violations(np.full(pairs, 1e-6), tol=VERIFY_TOL))
