"""Solver limits and statuses: ``time_limit`` on every backend that declares it,
``infeasible`` from every backend on budgets no selection reaches, and numbers beyond what a
solver holds (its infinity, CP-SAT's 64-bit activities).

Time limits: each backend with ``SUPPORTS_TIME_LIMIT`` (taken from the registry, so a new one
must get a hard instance here) is run with ``time_limit = 0.05`` s on an instance it cannot
finish in that time (a 250 x 10 Chu-Beasley-style knapsack for the MIP solvers, 2^22 vectors
for brute force, 20,000-variable QP / 5,000-unit conic programs for cvxpy and ALM). The result must
say ``time_limit`` (never ``optimal``), any solution it returns must be feasible with the
reported objective, and a bound, when present, must be on the right side of it. There are
no timing assertions: "never hangs" means the test finishes.
"""

from __future__ import annotations

import re
import warnings
from typing import Callable

import numpy as np
import pytest

import optsched
from optsched.generators import HARD_INSTANCES, generate, hard_enumeration, hard_mknap
from optsched.models.base import Model
from optsched.models.budget_family import BudgetFamily
from optsched.models.budgeted_ip import BudgetedIP
from optsched.models.escb_index import EscbIndex
from optsched.models.linear_program import LinearProgram
from optsched.models.set_packing import SetPacking
from optsched.result import Termination
from optsched.solvers.registry import all_backends, fitting_backends, get_backend

LIMIT = 0.05


HARD = HARD_INSTANCES  # backend -> instances it cannot finish within LIMIT
# Backends without a time limit: one pass of bounded work (sorts and scans), so there is nothing
# to stop early. (dp and aescb were here: "bounded" by max_table_cells, a 200-item knapsack ran
# 25 s under a 0.05 s limit.)
BOUNDED_WORK = {"greedy", "enumerate", "fast", "paper", "kkt"}
# Backends whose solver reports a proven bound with any incumbent it returns.
BOUND_WITH_INCUMBENT = {"highs", "cpsat"}


def test_every_backend_declaring_a_time_limit_has_a_hard_instance() -> None:
    declared = {name for name, b in all_backends().items() if b.SUPPORTS_TIME_LIMIT}
    assert declared == set(HARD)
    assert set(all_backends()) - declared == BOUNDED_WORK


@pytest.mark.parametrize("backend, build", [(b, f) for b, fs in HARD.items() for f in fs],
                         ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_time_limit_stops_with_status_time_limit(backend: str, build: Callable[[], Model]) -> None:
    model = build()
    assert backend in [b.NAME for b in fitting_backends(model)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cvxpy: "Solution may be inaccurate" after a stop
        r = optsched.solve(model, backend, time_limit=LIMIT)
    assert r.termination is Termination.TIME_LIMIT, (r.termination, r.extra)
    if r.solution is not None:
        assert model.violations(r.solution, tol=1e-6) == []
        assert r.objective == pytest.approx(model.objective(r.solution), rel=1e-9, abs=1e-9)
        if backend in BOUND_WITH_INCUMBENT:
            assert r.bound is not None
    else:
        assert r.objective is None
    if r.bound is not None and r.objective is not None:
        assert (r.bound >= r.objective - 1e-9) if model.maximize else (r.bound <= r.objective + 1e-9)


def test_backends_without_time_limit_say_they_ignored_it() -> None:
    model = SetPacking(n_elements=3, sets=[[0, 1], [1, 2], [2]], weights=[3.0, 2.0, 4.0])
    r = optsched.solve(model, "greedy", time_limit=LIMIT)
    assert r.termination in (Termination.OPTIMAL, Termination.FEASIBLE) and r.extra["time_limit"].startswith("ignored")
    assert "time_limit" not in optsched.solve(model, "highs", time_limit=LIMIT).extra


@pytest.mark.parametrize("backend", ["dp", "aescb"])
def test_ctrl_c_stops_a_dp_table_at_once(backend: str, monkeypatch: pytest.MonkeyPatch, python_sigint: None) -> None:
    """The DP's numba kernels held the GIL for the whole table: Ctrl-C waited for its end (10 s
    and more on the hard instances). They now poll a stop flag and run without the GIL: the
    KeyboardInterrupt comes from a table the flag stopped, not from one that ran to its end."""
    import os
    import signal
    import threading

    from optsched.solvers import budget_dp

    model = HARD[backend][0]()
    optsched.solve(model, backend, time_limit=0.01)  # kernels compiled outside the wait
    stopped: list[str] = []
    table = budget_dp._table

    def watched(*args, **kwargs):
        try:
            return table(*args, **kwargs)
        except budget_dp.Stopped:
            stopped.append(args[0].__name__)
            raise

    monkeypatch.setattr(budget_dp, "_table", watched)
    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        optsched.solve(model, backend)
    assert stopped, "the table ran to its end"
    r = optsched.solve(model, backend, time_limit=LIMIT)  # the next solve is not stopped at once by a stale flag
    assert r.termination is Termination.TIME_LIMIT and r.runtime_s >= LIMIT


def test_a_dense_table_of_few_capacity_cells_stops_at_its_time_limit() -> None:
    """7,701 capacity cells but 3.1e8 dense cells (budget coefficients up to 1000): a gate on
    capacity cells alone ran the dense table to its end, "optimal" after 1.6 s under 0.05 s."""
    rng = np.random.default_rng(0)
    n = 200
    values, budget_coeffs = rng.random(n), rng.integers(1, 1000, n).astype(float)
    model = BudgetedIP(values, np.ones((1, n)), np.array([150.0]), budget_coeffs=budget_coeffs,
                       budget=float(budget_coeffs.sum() // 2))
    optsched.solve(BudgetedIP(values[:5], np.ones((1, 5)), [150.0], budget_coeffs=budget_coeffs[:5], budget=100.0), "dp",
                   method="dense")  # compiled outside the limit
    r = optsched.solve(model, "dp", time_limit=LIMIT, method="dense", max_table_cells=1e9)
    assert r.termination is Termination.TIME_LIMIT and r.solution is None, (r.termination, r.runtime_s)


@pytest.mark.parametrize("backend", ["dp", "aescb"])
def test_a_time_limit_past_any_wait_is_no_limit(backend: str) -> None:
    """A limit of 1e300 s started the DP's timer, whose thread died on OverflowError (timestamp
    out of range); such a limit never comes."""
    import threading

    died: list[BaseException] = []
    hook, threading.excepthook = threading.excepthook, lambda args: died.append(args.exc_value)
    try:
        small = generate("escb_index" if backend == "aescb" else "budgeted_ip", 6, np.random.default_rng(0))
        r = optsched.solve(small, backend, time_limit=1e300)  # a timer starts for any table under a limit
        threading.Event().wait(0.2)  # a timer thread that dies does so at once
    finally:
        threading.excepthook = hook
    assert not died, died
    assert r.ok


def test_time_limit_zero_is_a_status_not_an_exception() -> None:
    model = hard_mknap()
    for backend in ("highs", "cpsat", "brute_force"):
        m = hard_enumeration() if backend == "brute_force" else model
        r = optsched.solve(m, backend, time_limit=0.0)
        assert r.termination in (Termination.TIME_LIMIT, Termination.OPTIMAL), (backend, r.termination, r.extra)
        assert r.termination is not Termination.ERROR


def test_brute_force_time_limit_keeps_the_best_vector_so_far() -> None:
    model = hard_enumeration()
    r = optsched.solve(model, "brute_force", time_limit=LIMIT)
    assert r.termination is Termination.TIME_LIMIT and r.bound is None
    assert r.solution is not None and model.is_feasible(r.solution)  # x = 0 is in the first chunk
    assert 0 < r.iterations < 1 << 22


# --- infeasible instances -------------------------------------------------------------------------
INFEASIBLE: dict[str, BudgetedIP] = {
    # the budget exceeds what every item together brings
    "budget above the total": BudgetedIP([3, 4, 5], [[1, 2, 2]], [5], budget_coeffs=[1, 1, 2], budget=5),
    # the budget is reachable only by selections over capacity (two items weigh 6 > 5)
    "budget only over capacity": BudgetedIP([1, 1, 1], [[3, 3, 3]], [5], budget_coeffs=[2, 2, 2], budget=4),
    # every item masked out
    "all items masked": BudgetedIP([1, 2], [[1, 1]], [2], budget_coeffs=[1, 1], budget=1, mask=[0, 0]),
    # zero capacity and every item has weight
    "zero capacity": BudgetedIP([1, 2], [[1, 1], [0, 2]], [0, 0], budget_coeffs=[1, 1], budget=1),
    # fractional data: dp and cpsat do not fit, the others must still say infeasible
    "fractional data": BudgetedIP([1.0, 2.0], [[1.5, 2.5]], [3.0], budget_coeffs=[1.0, 1.0], budget=2.0),
    # a fractional budget just above what the items give
    "fractional budget": BudgetedIP([1, 1], [[1, 1]], [2], budget_coeffs=[1, 1], budget=2.5),
}


@pytest.mark.parametrize("name", sorted(INFEASIBLE))
def test_infeasible_budget_is_infeasible_from_every_backend(name: str) -> None:
    model = INFEASIBLE[name]
    names = [b.NAME for b in fitting_backends(model)]
    integral = {"fractional data": set(), "fractional budget": {"dp"}}.get(name, {"dp", "cpsat"})  # CP-SAT: whole bounds
    expected = {"highs", "pyomo", "scip", "brute_force", "cvxpy"} | integral
    assert set(names) == expected
    for backend in names:
        r = optsched.solve(model, backend)
        assert r.termination is Termination.INFEASIBLE, (backend, r.termination, r.extra)
        assert r.solution is None and r.objective is None, backend


def test_infeasible_budgets_with_a_time_limit_are_still_infeasible() -> None:
    model = INFEASIBLE["budget only over capacity"]
    for backend in ("highs", "cpsat", "pyomo", "brute_force"):
        assert optsched.solve(model, backend, time_limit=10.0).termination is Termination.INFEASIBLE, backend


def test_budget_family_levels_no_selection_reaches() -> None:
    """Levels above what any feasible selection reaches: every family backend marks them
    infeasible (value None, entry None), and each level as a budgeted_ip is infeasible from
    every backend; the reachable levels agree."""
    fam = BudgetFamily([3, 4, 5, 1], [[1, 2, 2, 1]], [4], budget_coeffs=[1, 2, 3, 1], max_budget=8, budget=7)
    # within weight 4 the largest budget is 5 ({0, 2, 3} or {1, 2}): levels 6, 7, 8 are out of reach
    family_backends = [b.NAME for b in fitting_backends(fam)]
    assert set(family_backends) == {"dp", "budget_exact"}
    for backend in family_backends:
        r = optsched.solve(fam, backend)
        values = r.extra["values"]
        assert [v is None for v in values] == [False] * 6 + [True] * 3, (backend, values)
        # the designated budget 7 is out of reach: the family is infeasible there (no objective)
        assert r.termination is Termination.INFEASIBLE and r.objective is None and r.solution is None, r
        at_five = optsched.solve(BudgetFamily([3, 4, 5, 1], [[1, 2, 2, 1]], [4], budget_coeffs=[1, 2, 3, 1],
                                              max_budget=8, budget=5), backend)
        assert at_five.termination is Termination.OPTIMAL, (backend, at_five.extra)
        assert [e is None for e in at_five.solution] == [v is None for v in values]
    for s in range(fam.max_budget + 1):
        member = fam.member(s)
        statuses = {b.NAME: optsched.solve(member, b.NAME).termination for b in fitting_backends(member)}
        want = Termination.INFEASIBLE if s > 5 else Termination.OPTIMAL
        assert set(statuses.values()) == {want}, (s, statuses)


def test_highs_parallel_column_presolve_fault_is_avoided() -> None:
    """HiGHS 1.14.0 presolve (rule 'parallel rows and columns') answered 6 "optimal" here;
    the optimum is 8 (x0..x3). Found by the fuzz long run; see optsched/solvers/highs.py."""
    model = BudgetedIP([2.0] * 7, [[1.0] * 7], [4.0], budget_coeffs=[3, 3, 3, 3, 1, 0, 2], budget=7.0)
    for backend in ("highs", "pyomo", "cpsat", "dp", "brute_force"):
        r = optsched.solve(model, backend)
        assert r.termination is Termination.OPTIMAL and r.objective == pytest.approx(8.0), (backend, r.objective)


def test_highs_presolve_fault_in_escb_outer_approximation_is_avoided() -> None:
    """The first MILP of escb_oa here came back "optimal" at x = {0, 1} (1.2127) with HiGHS
    presolve on; the optimum of P3 is x = {1, 2} (1.3066). Found by the fuzz long run."""
    model = EscbIndex(mean=[0.34784851794561833, 0.558369776141778, 0.509161033564461],
                      variance=[0.03677982254163061, 0.057130209508872154, 0.0], weights=[[1.147, 0.538, 1.202]],
                      capacity=[2.834])
    oa, enum = optsched.solve(model, "escb_oa"), optsched.solve(model, "brute_force")
    assert oa.termination is Termination.OPTIMAL and enum.termination is Termination.OPTIMAL
    assert oa.objective == pytest.approx(enum.objective, rel=1e-9) == pytest.approx(1.3065500756846788)


# --- numbers a solver cannot hold ------------------------------------------------------------------
@pytest.mark.parametrize("scale", [1e19, 1e20, 1e25, 1e99])
def test_values_beyond_a_solvers_infinity_are_refused_or_solved_never_crash(scale: float) -> None:
    """Set packing weights up to 3e99 (models refuse numbers beyond 1e100): HiGHS, CP-SAT (and
    Pyomo over them) take values from 1e20 on as infinite, so they do not fit such an instance
    (``admits`` says why, and solving with one is a ValueError naming the backend); SCIP is
    given the objective scaled to order 1, so it fits. Every backend that fits returns a result
    without a warning (cvxpy's ValueError on a point it cannot unpack is an error result), and
    every exact one that returns a solution has the brute-force optimum."""
    m = SetPacking(4, [[0, 1], [1, 2], [2, 3]], [scale, 1.0, 3.0 * scale])
    optimum = 4.0 * scale
    fitting = {b.NAME for b in fitting_backends(m)}
    for name in ("highs", "scip", "cpsat", "pyomo"):
        if not get_backend(name).available():
            continue
        assert (name in fitting) == (scale < 1e20 or name == "scip"), name
        if name not in fitting:
            with pytest.raises(ValueError, match=re.escape(f"{name}: this instance holds the value {3.0 * scale:.3g}")):
                optsched.solve(m, name)
    for name in sorted(fitting):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = optsched.solve(m, name)
        if result.ok and get_backend(name).EXACT:
            assert result.objective == pytest.approx(optimum, rel=1e-9), name
        elif result.termination is Termination.ERROR:
            assert result.message, name
    assert optsched.solve(m, "brute_force").objective == pytest.approx(optimum, rel=1e-12)


@pytest.mark.parametrize("bound", [1e12, 1e14, 1e15, 1.0000000000000002e15, 1e17, 2.0**64, 9e19])
def test_scip_refuses_values_it_treats_as_huge(bound: float) -> None:
    """max x0 + 2 x1 s.t. x0 + x1 <= 1, x0 in [0, b], x1 in {0, 1}: from b = 1e17 SCIP (raw
    PySCIPOpt too) said "optimal" 1 where 2 is, past its numerics/hugeval of 1e15. The backend
    refuses values from there on, naming the reason; below, it solves to HiGHS's optimum. The
    objective and rows it scales itself are not limited (weights of 1e19 above). Since SCIP is
    given each integer column's bounds as its rows imply them (``StandardForm.tightened``), the
    row x0 + x1 <= 1 bounds x0 by 1 and SCIP solves it at every b; a bound of b that no row
    tightens (the row x1 <= 1 alone) is still refused."""
    if not get_backend("scip").available():
        pytest.skip("pyscipopt is not installed")
    lp = LinearProgram(c=[1.0, 2.0], A=[[1.0, 1.0]], row_lower=[None], row_upper=[1.0], col_lower=[0, 0],
                       col_upper=[bound, 1.0], integrality=[True, True], sense="max")
    result = optsched.solve(lp, "scip")
    assert result.termination is Termination.OPTIMAL and result.objective == pytest.approx(2.0, abs=1e-9)
    assert optsched.solve(lp, "highs").objective == pytest.approx(2.0, abs=1e-9)
    loose = LinearProgram(c=[-1.0, 2.0], A=[[0.0, 1.0]], row_lower=[None], row_upper=[1.0], col_lower=[0, 0],
                          col_upper=[bound, 1.0], integrality=[True, True], sense="max")
    if np.floor(bound) > 1e15:  # an integer column's bound goes to SCIP as a whole number (1e15 + 0.2: 1e15)
        assert "numerics/hugeval" in get_backend("scip").admits(loose)
        with pytest.raises(ValueError, match="scip: this instance holds the value"):
            optsched.solve(loose, "scip")
    else:
        assert optsched.solve(loose, "scip").objective == pytest.approx(2.0, abs=1e-9)


@pytest.mark.parametrize("bound,reason", [(1e15, None), (1e16, "integer scaling of the objective"),
                                          (2.5e18, "beyond CP-SAT's")])
def test_cpsat_refuses_what_its_64_bit_integers_cannot_hold(bound: float, reason: str | None) -> None:
    """max x1 + x2 s.t. x1 + x2 <= b, x in [0, b] integer. CP-SAT scales a floating objective
    into 2^53: from b = 1e16 both coefficients rounded to 0 and it said "optimal" at x = 0; from
    2.5e18 the row's activity 2b passes 2^62 and it failed. The backend refuses both with the
    reason, and solves b = 1e15 to HiGHS's optimum."""
    lp = LinearProgram(c=[1.0, 1.0], A=[[1.0, 1.0]], row_lower=[None], row_upper=[bound], col_lower=[0, 0],
                       col_upper=[bound, bound], integrality=[True, True], sense="max")
    refusal = get_backend("cpsat").admits(lp)
    if reason is None:
        assert refusal is None
        assert optsched.solve(lp, "cpsat").objective == optsched.solve(lp, "highs").objective == bound
    else:
        assert refusal is not None and reason in refusal


def test_values_near_the_smallest_floats_solve_without_a_warning() -> None:
    """Weights of 1e-300 down to the smallest subnormal: every backend that fits returns a
    verified solution without a numpy warning (CP-SAT's scaling check once divided inf by inf),
    within the absolute tolerance below 1 of the brute-force optimum."""
    m = SetPacking(4, [[0, 1], [1, 2], [2, 3]], [1e-300, 2e-300, 5e-324])
    optimum = optsched.solve(m, "brute_force").objective
    for backend in fitting_backends(m):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = optsched.solve(m, backend.NAME)
        assert result.ok, (backend.NAME, result.message)
        assert abs(result.objective - optimum) <= 1e-6, backend.NAME


# --- the memory limit (OPTSCHED_MEMORY_LIMIT_GB) ------------------------------------------------
@pytest.mark.parametrize("raw", ["abc", "0", "-1", "nan", ""])
def test_memory_limit_variable_is_read_at_each_solve_and_a_bad_one_is_named(monkeypatch: pytest.MonkeyPatch,
                                                                            raw: str) -> None:
    model = SetPacking(3, [[0], [1, 2]], [1.0, 2.0])
    assert optsched.solve(model, "greedy").ok  # prepared and kept by solve() before the variable changes
    monkeypatch.setenv("OPTSCHED_MEMORY_LIMIT_GB", raw)
    if raw == "":  # unset in effect: the default limit
        assert optsched.solve(model, "greedy").ok
        return
    with pytest.raises(ValueError, match="^OPTSCHED_MEMORY_LIMIT_GB: "):
        optsched.solve(model, "greedy")
    # the default choice and the list of fitting backends name it too (probe BD: each backend's
    # admits failed on it, read as "does not fit": "no available backend solves ...")
    for call in (lambda: optsched.solve(model), lambda: optsched.backends(model), lambda: optsched.compare(model)):
        with pytest.raises(ValueError, match="^OPTSCHED_MEMORY_LIMIT_GB: "):
            call()
    monkeypatch.delenv("OPTSCHED_MEMORY_LIMIT_GB")
    assert optsched.solve(model, "greedy").ok


def test_memory_limit_refuses_an_instance_named_and_leaves_the_backend_out(monkeypatch: pytest.MonkeyPatch) -> None:
    model = SetPacking(3, [[0], [1, 2]], [1.0, 2.0])
    need = get_backend("greedy").memory_bytes(model)
    assert need > 0
    monkeypatch.setenv("OPTSCHED_MEMORY_LIMIT_GB", repr(0.5 * need / 2**30))
    with pytest.raises(ValueError, match=r"^backend: greedy: this instance needs about .* \(OPTSCHED_MEMORY_LIMIT_GB\)$"):
        optsched.solve(model, "greedy")
    assert "greedy" not in [b.NAME for b in fitting_backends(model)]
    monkeypatch.setenv("OPTSCHED_MEMORY_LIMIT_GB", repr(2.0 * need / 2**30))
    assert optsched.solve(model, "greedy").ok
    assert "greedy" in [b.NAME for b in fitting_backends(model)]


def test_cvxpy_iteration_cap_is_iteration_limit_not_time_limit() -> None:
    """cvxpy says "user_limit" for Clarabel's max_iter and for a time limit alike; a cap met
    before the clock ran out is an iteration limit, with or without a time limit set."""
    model = generate("pseudo_welfare", 30, np.random.default_rng(3))
    for limit in (None, 60.0):
        r = optsched.solve(model, "cvxpy", time_limit=limit, solver_options={"max_iter": 1})
        assert r.termination is Termination.ITERATION_LIMIT, (r.termination, r.extra)
        assert r.extra["solver_status"] == "user_limit"
        assert r.solution is None or model.violations(r.solution, tol=1e-6) == []


# --- options that loosen a proof, and option values the solver refuses ------------------------------
RULE_13_INSTANCE = dict(values=[2.0] * 7, weights=[[1.0] * 7], capacity=[4.0], budget_coeffs=[3, 3, 3, 3, 1, 0, 2],
                        budget=7.0)  # HiGHS's presolve rule 13 says 6 "optimal"; the optimum is 8 (solvers/highs.py)


@pytest.mark.parametrize(("backend", "key"), [("highs", "highs_options"), ("pyomo", "solver_options"),
                                              ("cvxpy", "solver_options")])
def test_presolve_rule_13_switched_back_on_is_not_certified(backend: str, key: str) -> None:
    """``presolve_rule_off`` is allow-listed, and 0 brought HiGHS's wrong optimum back as
    ``optimal`` 6 on every route to HiGHS; a value that keeps rule 13 off stays an oracle."""
    model = BudgetedIP(**RULE_13_INSTANCE)
    back_on = optsched.solve(model, backend, **{key: {"presolve_rule_off": 0}})
    assert back_on.termination is not Termination.OPTIMAL and "not certified" in back_on.extra["optimality"]
    kept_off = optsched.solve(model, backend, **{key: {"presolve_rule_off": (1 << 13) | 1}})
    assert kept_off.termination is Termination.OPTIMAL and kept_off.objective == pytest.approx(8.0)


def test_a_loosened_solver_neither_proves_infeasible_nor_bounds() -> None:
    """SCIP at numerics/epsilon 1e-3 said ``infeasible`` for a feasible budgeted IP, and gave a
    bound of 1e6 below its own objective 1000100 (``gap_limit``): neither is a proof."""
    from optsched.models.base import kind_specs

    if not get_backend("scip").available():
        pytest.skip("pyscipopt is not installed")
    loose = {"scip_params": {"numerics/epsilon": 1e-3}}
    feasible = kind_specs()["budgeted_ip"].fuzz(np.random.default_rng(1), "ties")
    assert optsched.solve(feasible, "scip").termination is Termination.OPTIMAL
    said = optsched.solve(feasible, "scip", **loose)
    assert said.termination is not Termination.INFEASIBLE
    if said.termination is Termination.ERROR:
        assert "change what that proves" in said.message
    packing = SetPacking(n_elements=3, sets=[[0, 1], [2]], weights=[1e6, 100.0])
    result = optsched.solve(packing, "scip", **loose)
    assert result.bound is None and result.termination is not Termination.OPTIMAL
    assert result.objective == pytest.approx(1000100.0) and "unproven_bound" in result.extra


def test_a_bound_its_own_verified_objective_beats_is_dropped() -> None:
    """The seam's rule for any backend: a maximisation's bound below a verified solution's
    objective is not a bound, and an ``optimal`` resting on it is not certified."""
    from optsched.result import Result
    from optsched.solve import finish

    model = SetPacking(n_elements=3, sets=[[0, 1], [2]], weights=[1e6, 100.0])
    chosen = np.array([0, 1])
    for said in (Termination.OPTIMAL, Termination.GAP_LIMIT, Termination.FEASIBLE):
        out = finish(model, Result(said, objective=1000100.0, bound=1e6, solution=chosen))
        assert out.bound is None and out.extra["unproven_bound"] == 1e6 and out.objective == 1000100.0
        assert out.termination is (Termination.FEASIBLE if said is Termination.OPTIMAL else said)
    kept = finish(model, Result(Termination.OPTIMAL, objective=1000100.0, bound=1000100.0 * (1 + 1e-9), solution=chosen))
    assert kept.termination is Termination.OPTIMAL and kept.bound is not None


@pytest.mark.parametrize(("backend", "options", "words"), [
    ("pyomo", {"solver_options": {"mip_max_nodes": -1}}, "HiGHS rejects option 'mip_max_nodes' = -1"),
    ("pyomo", {"solver_options": {"presolve": "maybe"}}, "HiGHS rejects option 'presolve'"),
    ("cvxpy", {"solver": "HIGHS", "solver_options": {"mip_rel_gap": -1.0}}, "HiGHS rejects option 'mip_rel_gap'"),
    ("cvxpy", {"solver": "OSQP", "solver_options": {"eps_abs": -1}}, "'eps_abs' must be >= 0"),
    ("cvxpy", {"solver": "OSQP", "solver_options": {"rho": 0}}, "'rho' must be > 0"),
    ("cvxpy", {"solver": "SCS", "solver_options": {"max_iters": 0}}, "'max_iters' must be >= 1"),
    ("cvxpy", {"solver": "CLARABEL", "solver_options": {"max_iter": -1}}, "'max_iter' must be >= 0"),
    ("cvxpy", {"solver_options": {"eps_rel": -1e-3}}, "'eps_rel' must be >= 0"),  # the model's own solver (OSQP)
])
def test_a_solver_option_value_the_solver_refuses_is_bad_input(backend: str, options: dict, words: str) -> None:
    """Pyomo's HiGHS ignored out-of-range values in silence (``optimal``, exit 0), and cvxpy's
    solvers failed on them as a result (``error``, exit 0): each is a ValueError naming it."""
    model = generate("capacity_projection", 6, np.random.default_rng(0))
    if backend == "pyomo" or options.get("solver") == "HIGHS":
        model = SetPacking(n_elements=3, sets=[[0, 1], [2]], weights=[1.0, 2.0])
    with pytest.raises(ValueError, match=re.escape(words)):
        optsched.solve(model, backend, **options)


@pytest.mark.parametrize("kind", ["pseudo_welfare", "stationary_allocation"])
@pytest.mark.parametrize("solver", ["OSQP", "HIGHS"])
def test_cvxpy_refuses_a_qp_solver_for_a_conic_program_naming_the_option(kind: str, solver: str) -> None:
    """Probe BR: cvxpy with OSQP or HiGHS on a program with cones (logs, powers) passed prepare
    and ended error at every solve ("cannot solve this problem", 683 runs); it is refused as a
    non-MIP solver is refused for an integer program (ValueError naming ``solver``). A QP
    (the projection) still goes to both."""
    if not get_backend("cvxpy").available():
        pytest.skip("cvxpy is not available here")
    model = generate(kind, 6, np.random.default_rng(0))
    with pytest.raises(ValueError, match=f"option 'solver': {solver} solves linear and quadratic programs only"):
        optsched.solve(model, "cvxpy", solver=solver)
    projection = generate("capacity_projection", 6, np.random.default_rng(0))
    assert optsched.solve(projection, "cvxpy", solver=solver).ok


def test_pyomo_says_when_its_highs_options_would_go_unused() -> None:
    mixed = LinearProgram(c=[1.0, 2.0], A=[[1.0, 1.0]], row_lower=[None], row_upper=[1.0], col_lower=[0, 0],
                          col_upper=[1, 1], integrality=[1, 0], sense="max")
    with pytest.raises(ValueError, match="holds HiGHS options, and this program .* is solved by scip_direct"):
        optsched.solve(mixed, "pyomo", solver_options={"mip_rel_gap": 0.0})


@pytest.mark.parametrize(("backend", "options"), [("cpsat", {"absolute_gap_limit": 1.0}), ("scip", {"absgap": 1.0}),
                                                  ("highs", {"mip_abs_gap": 1.0})])
def test_an_absolute_gap_is_in_the_programs_units(backend: str, options: dict) -> None:
    """The backends solve a MIP's objective scaled to order 1, and passed an absolute gap of 1
    as it was: on weights of 1e4 CP-SAT stopped 28,219 from its bound, SCIP 8,520."""
    if not get_backend(backend).available():
        pytest.skip(f"{backend} is not installed")
    base = generate("set_packing", 50, np.random.default_rng(13))
    model = SetPacking(base.n_elements, base.family, base.weights * 1e4)
    result = optsched.solve(model, backend, **options)
    assert result.ok and result.bound is not None
    assert abs(result.bound - result.objective) <= 1.0 + 1e-9 * abs(result.objective)


def test_every_allow_listed_solver_parameter_exists() -> None:
    """``heuristics/emphasis/off`` was on SCIP's list and always refused ("Not a valid parameter name")."""
    import highspy

    from optsched.solvers.highs import ALLOWED_HIGHS_OPTIONS
    from optsched.solvers.scip import ALLOWED_SCIP_PARAMS

    h = highspy.Highs()
    for key in ALLOWED_HIGHS_OPTIONS:
        status, _ = h.getOptionValue(key)
        assert status == highspy.HighsStatus.kOk, key
    if get_backend("scip").available():
        import pyscipopt

        m = pyscipopt.Model()
        for key in ALLOWED_SCIP_PARAMS:
            m.getParam(key)  # raises KeyError for a name SCIP does not have


def test_compare_checks_its_time_limit_before_any_solve() -> None:
    model = SetPacking(n_elements=3, sets=[[0, 1], [2]], weights=[1.0, 2.0])
    for bad in (-1.0, float("nan"), "1"):
        with pytest.raises(ValueError, match="time_limit"):
            optsched.compare(model, ["greedy", "highs"], time_limit=bad)


def test_gap_and_precision_options_leave_an_infeasibility_proof_alone() -> None:
    """Any loosening option turned ``infeasible`` into ``error`` (review of this change): a gap
    or the objective's precision does not change what infeasible proves; a feasibility
    tolerance (looser or tighter than the solver's own) does."""
    model = LinearProgram(c=[1, 2], A=[[2, 2]], row_lower=[3], row_upper=[3], col_lower=[0, 0], col_upper=[5, 5],
                          integrality=[1, 1], sense="max")  # 2 x0 + 2 x1 = 3 has no integer point
    for backend, options in (("cpsat", {"mip_wanted_precision": 1e-6}), ("cvxpy", {"solver_options": {"mip_rel_gap": 0.01}}),
                             ("highs", {"highs_options": {"mip_rel_gap": 0.01}}), ("highs", {})):
        assert optsched.solve(model, backend, **options).termination is Termination.INFEASIBLE, (backend, options)
    loose = optsched.solve(model, "highs", highs_options={"mip_feasibility_tolerance": 1e-3})
    assert loose.termination is Termination.ERROR and "change what that proves" in loose.message


@pytest.mark.parametrize(("solver", "options"), [("OSQP", {"adaptive_rho": True}), ("OSQP", {"adaptive_rho": 3}),
                                                 ("OSQP", {"polishing": 1}), ("OSQP", {"polishing": False}),
                                                 ("CLARABEL", {"tol_gap_abs": 0.0, "tol_feas": 0.0}),
                                                 ("SCS", {"acceleration_lookback": 0})])
def test_cvxpy_solver_options_the_solver_takes_pass_the_schema(solver: str, options: dict) -> None:
    """The first schema refused OSQP's switches as booleans or as 0/1 and Clarabel's zero tolerances."""
    model = generate("capacity_projection", 6, np.random.default_rng(0))
    assert optsched.solve(model, "cvxpy", solver=solver, solver_options=options).termination is not Termination.ERROR


@pytest.mark.parametrize("options", [{"scip_params": {"limits/solutions": 1}}, {"gap": 1e300, "absgap": 1e300}])
def test_scip_stopped_before_any_bound_reports_none(options: dict) -> None:
    """SCIP says "no dual bound" with its infinity, 1e20, a finite float: it came back as a proven
    bound of 1e20 (gap to own bound 1.0) when a solution limit or a huge gap stopped it first."""
    model = generate("set_packing", 25, np.random.default_rng(0))
    res = optsched.solve(model, "scip", **options)
    assert res.termination.stopped_early and res.ok
    assert res.bound is None or res.objective <= res.bound < 1e19


def test_an_error_without_a_message_names_the_solvers_status(monkeypatch) -> None:
    """A HiGHS solve that ends in an error status without a message said only "the backend
    failed". (HiGHS 1.14's interior point on a QP ended so; 1.16 runs its QP solver instead:
    the status is set here on a real solve.)"""
    import highspy

    monkeypatch.setattr(highspy.Highs, "getModelStatus", lambda self: highspy.HighsModelStatus.kSolveError)
    model = generate("capacity_projection", 6, np.random.default_rng(0))
    res = optsched.solve(model, "highs")
    assert res.termination is Termination.ERROR and "its solver's status: kSolveError" in res.message
    assert res.iterations is None or res.iterations >= 0  # HiGHS's counters a solve never set are -1: summed, -3


@pytest.mark.parametrize("backend, key", [("highs", "highs_options"), ("pyomo", "solver_options")])
@pytest.mark.parametrize("solver", ["ipm", "IPM", "ipx", "simplex", "pdlp", "qpasm", "QPASM", "Choose"])
def test_a_highs_solver_choice_a_qp_would_not_run_is_refused_naming_the_option(backend: str, key: str,
                                                                                solver: str) -> None:
    """HiGHS solves a QP with its active-set solver only: ``solver = ipm`` on a QP ended
    kModelError in 1.14, and 1.16 runs the active-set solver whatever ``solver`` says (no
    iteration of the one chosen), so such a choice is refused as an option; ``qpasm`` and
    ``choose`` reach the default optimum, in any case as HiGHS reads them (probe BO: "QPASM" was
    refused). On an LP every choice stays valid."""
    for seed in range(3):
        qp = generate("capacity_projection", 6 + 7 * seed, np.random.default_rng(seed))
        if solver.lower() not in ("qpasm", "choose"):  # HiGHS reads the name in any case
            with pytest.raises(ValueError, match=rf"{key}\.solver = '{solver}'.*active-set solver only"):
                optsched.solve(qp, backend, **{key: {"solver": solver}})
            continue
        reference = optsched.solve(qp, backend)
        r = optsched.solve(qp, backend, **{key: {"solver": solver}})
        assert reference.termination is Termination.OPTIMAL and r.termination is Termination.OPTIMAL
        assert r.objective == pytest.approx(reference.objective, rel=1e-9, abs=1e-12), (seed, r)
    lp = LinearProgram(c=[1.0, 2.0], A=[[1.0, 1.0]], row_lower=[-np.inf], row_upper=[1.0], col_lower=[0.0, 0.0],
                       col_upper=[1.0, 1.0], sense="max")
    r = optsched.solve(lp, backend, **{key: {"solver": solver}})
    assert r.termination is Termination.OPTIMAL and r.objective == pytest.approx(2.0)
    assert r.iterations is None or r.iterations >= 0


def test_a_scip_parameter_it_would_hold_otherwise_is_refused() -> None:
    """scip_params limits/nodes = 1.5 was accepted and held as 1 (SCIP's C setter casts)."""
    model = generate("set_packing", 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^options: .*scip_params: SCIP holds 'limits/nodes' = 1.5 as 1|^scip_params: SCIP holds"):
        optsched.solve(model, "scip", scip_params={"limits/nodes": 1.5})
    assert optsched.solve(model, "scip", scip_params={"limits/nodes": 100}).ok


def test_the_memory_limit_follows_an_environment_replaced_by_another_mapping() -> None:
    """Probe BA: memory_limit_bytes asks os.environ's own store whether the variable is set
    (os.environ.get of an unset one costs a KeyError); an os.environ replaced by a plain mapping,
    as a test may, was not asked at all (8 GiB where the mapping said 1)."""
    import os
    from unittest import mock

    from optsched.solvers.registry import memory_limit_bytes

    with mock.patch.object(os, "environ", {"OPTSCHED_MEMORY_LIMIT_GB": "1"}):
        assert memory_limit_bytes() == 2**30
