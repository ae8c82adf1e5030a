"""cvxpy: convex models in DCP form, solved by the conic/QP solver each model names.

Warm starts are always off: re-solves with ``warm_start=True`` gave OSQP answers off by 8e-4.
``Result.duals`` are the constraints' dual values in the order of the model's cvxpy problem.
What cvxpy warns during a solve ("Solution may be inaccurate" for an ``*_inaccurate`` status)
is not printed: the status says it (``STATUS_TABLE``), and the messages are in
``extra["solver_warnings"]``.
"""

from __future__ import annotations

import time
import warnings
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import HIGHS_MIP_ORACLE_OPTIONS, as_cvxpy, cvxpy_objective_scale, mip_objective_scale
from optsched.result import Result, Termination
from optsched.solvers.certificates import (CVXPY_DUAL_BOUNDS, branch_and_bound_proof, certified_cvxpy, highs_pruning,
                                          scip_pruning)
from optsched.solvers.c_output import captured_c_output
from optsched.solvers.highs import check_highs_options, highs_loosens, mip_presolve_uncertified
from optsched.solvers.registry import Backend, Option, below_tolerance_scale, register_backend, remaining, tolerance_keys

STATUS_TABLE: dict[str, Termination] = {
    "optimal": Termination.OPTIMAL,
    "optimal_inaccurate": Termination.FEASIBLE,
    "infeasible": Termination.INFEASIBLE,
    "infeasible_inaccurate": Termination.INFEASIBLE,
    "unbounded": Termination.UNBOUNDED,
    "unbounded_inaccurate": Termination.UNBOUNDED,
    "user_limit": Termination.TIME_LIMIT,
}


# The name of each solver's wall-clock limit (seconds) in cvxpy's solver options; a solver
# not listed here runs without a limit. cvxpy says "user_limit" for a time limit and for an
# iteration cap alike: the result is time_limit when the limit's time had passed, else
# iteration_limit, with the last iterate only when it is feasible.
TIME_LIMIT_KEYS: dict[str, str | None] = {
    "CLARABEL": "time_limit",
    "OSQP": "time_limit",
    "SCS": "time_limit_secs",
    "HIGHS": "time_limit",
    "ECOS": None,
}


# Solver options cvxpy may forward (``solver_options``), for the solvers above: tolerances,
# iteration limits and algorithm switches, each with the values its solver takes (a negative
# eps_abs or a rho of 0 failed in the solver, as a result, where it is bad input; combinations,
# such as OSQP's eps_abs and eps_rel both 0, are the solver's to refuse, as a result). Nothing
# that writes files or prints is forwarded. HiGHS checks its own (``check_highs_options``).
_POSITIVE = Option(None, float, minimum=0.0, open_minimum=True)
_NONNEGATIVE = Option(None, float, minimum=0.0)
_COUNT = Option(None, int, minimum=0, maximum=2**31 - 1)
_SWITCH = Option(None, bool)
_OSQP_SWITCH = Option(None, int, minimum=0, maximum=1, bools=True)  # OSQP takes 0/1 and true/false
SOLVER_OPTIONS: dict[str, Mapping[str, Option | None]] = {
    "CLARABEL": {
        "tol_gap_abs": _NONNEGATIVE, "tol_gap_rel": _NONNEGATIVE, "tol_feas": _NONNEGATIVE,
        "tol_infeas_abs": _NONNEGATIVE, "tol_infeas_rel": _NONNEGATIVE, "tol_ktratio": _NONNEGATIVE,
        "max_iter": _COUNT, "equilibrate_enable": _SWITCH,
        "max_step_fraction": Option(None, float, minimum=0.0, open_minimum=True, maximum=1.0),
        "presolve_enable": _SWITCH, "direct_solve_method": Option(None, str, choices=("auto", "qdldl", "faer")),
        "static_regularization_enable": _SWITCH},
    "OSQP": {
        "eps_abs": _NONNEGATIVE, "eps_rel": _NONNEGATIVE, "eps_prim_inf": _POSITIVE, "eps_dual_inf": _POSITIVE,
        "rho": _POSITIVE, "sigma": _POSITIVE,
        "alpha": Option(None, float, minimum=0.0, open_minimum=True, maximum=2.0, open_maximum=True),
        "adaptive_rho": Option(None, int, minimum=0, maximum=3, bools=True),  # off, or one of OSQP 1.x's three rules
        "polishing": _OSQP_SWITCH, "polish_refine_iter": _COUNT, "scaling": _COUNT, "check_termination": _COUNT},
    "SCS": {"max_iters": Option(None, int, minimum=1, maximum=2**31 - 1), "normalize": _SWITCH, "scale": _POSITIVE,
            "acceleration_lookback": _COUNT, "use_indirect": _SWITCH, "eps_abs": _NONNEGATIVE, "eps_rel": _NONNEGATIVE},
    "HIGHS": dict.fromkeys((
        "mip_rel_gap", "mip_abs_gap", "presolve", "presolve_rule_off", "primal_feasibility_tolerance",
        "dual_feasibility_tolerance", "mip_feasibility_tolerance", "small_matrix_value")),
}


def check_solver_options(solver: str, table: Mapping[str, Any]) -> None:
    """``table`` (checked keys and scalar types) against ``solver``'s own values; ValueError naming the option."""
    where = f"options: backend 'cvxpy' option 'solver_options' for {solver}"
    if solver == "HIGHS":
        check_highs_options(table, where)
        return
    for key, value in table.items():
        spec = SOLVER_OPTIONS[solver].get(key)
        if spec is not None:
            spec.check(f"{where} {key!r}", value)


ALLOWED_SOLVER_OPTIONS = frozenset().union(*map(frozenset, SOLVER_OPTIONS.values()))
MIP_SOLVERS = frozenset({"HIGHS", "SCIP"})
QP_SOLVERS = frozenset({"OSQP", "HIGHS"})  # linear and quadratic programs only (no cone)
SOLVERS = ("CLARABEL", "OSQP", "SCS", "HIGHS")
# cvxpy reports no bound. For a kind of ``certificates.CVXPY_DUAL_BOUNDS`` the solver's multipliers
# prove one, and that bound alone makes an answer optimal, whichever solver gave it. For the
# other kinds "optimal" rests on the solver's tolerances: the model's own solver with the tight
# ones of ``cvxpy_default_solver`` is an oracle (tests/test_fuzz.py); another solver at its
# defaults (SCS was off by up to 5 % on P3) is not certified. Tolerances and gaps
# (``Option.loosens``) leave ``feasible``, gaps alone not where the multipliers prove the bound (the seam).
_FEASIBILITY_KEYS = ("tol_feas", "tol_infeas_abs", "tol_infeas_rel", "tol_ktratio", "eps_abs", "eps_rel", "eps_prim_inf",
                     "eps_dual_inf", "primal_feasibility_tolerance", "dual_feasibility_tolerance",
                     "mip_feasibility_tolerance", "small_matrix_value")
_GAP_KEYS = ("tol_gap_abs", "tol_gap_rel", "mip_rel_gap", "mip_abs_gap")
_TOLERANCES = tolerance_keys(ALLOWED_SOLVER_OPTIONS, *_FEASIBILITY_KEYS, *_GAP_KEYS)
_FEASIBILITY_TOLERANCES = tolerance_keys(ALLOWED_SOLVER_OPTIONS, *_FEASIBILITY_KEYS)


def cvxpy_loosens(table: Any) -> bool:
    """``Option.loosens`` of ``solver_options``: a tolerance or a gap, or HiGHS's presolve rule 13 back on."""
    return _TOLERANCES(table) or highs_loosens(table)


def cvxpy_loosens_feasibility(table: Any) -> bool:
    """``Option.loosens_feasibility`` of ``solver_options``: as :func:`cvxpy_loosens` without the
    gaps (``mip_rel_gap`` and the conic ``tol_gap_*`` leave an infeasibility proof alone)."""
    return _FEASIBILITY_TOLERANCES(table) or highs_loosens(table)


@register_backend
class CvxpyBackend(Backend):
    NAME = "cvxpy"
    DESCRIPTION = "cvxpy DCP formulation (solver chosen per model: OSQP, Clarabel, HiGHS)"
    EXACT = True
    FORM = "cvxpy"
    SUPPORTS_TIME_LIMIT = True  # for the solvers in TIME_LIMIT_KEYS (every model's default solver)
    REQUIRES = ("cvxpy",)
    PRIORITY = 60
    SETUP_S_PER_ELEMENT = 7e-6  # building and compiling the cvxpy problem (13.8 s at 10^6 variables)
    BYTES_PER_ELEMENT = 2000.0
    OPTIONS: Mapping[str, Option] = {
        "solver": Option(None, str, "cvxpy solver (default: the model's own choice, with tight tolerances)",
                         choices=SOLVERS, nullable=True),
        "solver_options": Option(None, dict, "options of that solver (allow-listed; nothing that writes files)",
                                 nullable=True, allowed=ALLOWED_SOLVER_OPTIONS, loosens=cvxpy_loosens,
                                 loosens_feasibility=cvxpy_loosens_feasibility),
    }

    def check_option_values(self, options: Mapping[str, Any]) -> None:
        """A named solver's ``solver_options`` against its own values (the model's own solver is
        known when it runs: :meth:`run` checks them there)."""
        if options["solver"] is not None and options["solver_options"]:
            check_solver_options(options["solver"], options["solver_options"])

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        import cvxpy as cp

        start = time.perf_counter()
        problem, to_solution = as_cvxpy(model).to_cvxpy()
        own_solver, solver_options = as_cvxpy(model).cvxpy_default_solver()
        solver = own_solver
        certified = options["solver"] in (None, solver)  # the model's own solver, with its tight options
        if not certified:
            solver, solver_options = options["solver"], {}
        foreign = sorted(set(options["solver_options"] or {}) - set(SOLVER_OPTIONS.get(solver, {})))
        if foreign:  # the table is checked against every solver's keys; these are another's
            raise ValueError(f"options: backend 'cvxpy' option 'solver_options': {foreign[0]!r} is not among the "
                             f"options forwarded to {solver}, the solver this model is solved with (allowed: "
                             f"{', '.join(sorted(SOLVER_OPTIONS.get(solver, {}))) or 'none'})")
        if options["solver"] is None:  # a named solver's were checked when prepared
            check_solver_options(solver, options["solver_options"] or {})
        if problem.is_mixed_integer() and solver not in MIP_SOLVERS:
            raise ValueError(f"options: backend 'cvxpy' option 'solver': {solver} does not solve integer programs "
                             f"(HIGHS does)")
        if solver in QP_SOLVERS and not problem.is_qp():  # a cone cvxpy would refuse at every solve (probe BR)
            raise ValueError(f"options: backend 'cvxpy' option 'solver': {solver} solves linear and quadratic "
                             f"programs only, and this {model.name} has conic terms (CLARABEL and SCS solve it)")
        solver_options = {**solver_options, **(options["solver_options"] or {})}
        if problem.is_mixed_integer():  # what a HiGHS or SCIP MIP needs (models/forms.py)
            if solver == "HIGHS":
                solver_options = {**HIGHS_MIP_ORACLE_OPTIONS, **solver_options}
            scale = mip_objective_scale(model)
            if "mip_abs_gap" in solver_options:  # the caller's, in the program's units
                solver_options["mip_abs_gap"] = solver_options["mip_abs_gap"] * scale
        else:
            scale = cvxpy_objective_scale(model)
        if scale != 1.0:
            problem = cp.Problem(type(problem.objective)(problem.objective.expr * scale), problem.constraints)
        # OSQP prints a setting it refuses (printf); the captured block is also one thread's turn,
        # which the process-wide warning filters need
        with captured_c_output() as printed, warnings.catch_warnings(record=True) as caught:
            left = remaining(time_limit, start)  # after waiting for the turn: the wait counts against the limit
            if left is not None and TIME_LIMIT_KEYS.get(solver) is not None:
                # OSQP reads 0 as "no limit": the smallest positive limit stops after one check
                solver_options[TIME_LIMIT_KEYS[solver]] = max(left, 1e-6)
            warnings.simplefilter("always")
            try:
                problem.solve(solver=solver, warm_start=False, **solver_options)
                failure = None
            except (cp.error.SolverError, ValueError) as exc:  # cvxpy raises ValueError on a point it cannot unpack
                failure = exc
        said = {"solver_output": printed[0]} if printed[0] else {}
        if failure is not None and "solver interrupted" in f"{failure} {printed[0]}".lower():
            raise KeyboardInterrupt  # OSQP caught the caller's Ctrl-C and said so
        if failure is not None:
            detail = f"; the solver said: {printed[0].splitlines()[0]}" if printed[0] else ""
            return Result(Termination.ERROR, extra={"message": f"{type(failure).__name__}: {failure}{detail}",
                                                    **_warned(caught), **said})
        termination = STATUS_TABLE.get(problem.status, Termination.ERROR)
        if termination is Termination.TIME_LIMIT and (left is None or time.perf_counter() - start < left):
            termination = Termination.ITERATION_LIMIT  # "user_limit" before the clock ran out: an iteration cap
        uncertified: dict[str, Any] = {}
        solution = duals = None
        if termination in (Termination.OPTIMAL, Termination.FEASIBLE):
            # The objective is the model's own value of the returned point (the seam computes
            # it): ``to_solution`` may clip the solver's x into the bounds, and the solver's
            # value belongs to the unclipped x. (A job whose units are all full, upper = 0:
            # Clarabel reported 2.0e-6 for the point x = 0 of value 0.)
            solution = to_solution()
            duals = tuple(None if c.dual_value is None else np.asarray(c.dual_value, dtype=np.float64) / scale
                          for c in problem.constraints)
        elif termination in (Termination.TIME_LIMIT, Termination.ITERATION_LIMIT):
            solution = _point_if_feasible(model, to_solution)
        bound = None
        if solution is not None and duals is not None and model.name in CVXPY_DUAL_BOUNDS \
                and not problem.is_mixed_integer():
            # duals certify, tolerances do not: the solver's multipliers prove the point optimal
            # or leave it feasible, whatever it said and whichever solver (certificates.certified_cvxpy)
            termination, bound = certified_cvxpy(model, solution, duals, uncertified, solver=solver)
        elif termination is Termination.OPTIMAL and not certified:
            termination = Termination.FEASIBLE
            uncertified["optimality"] = (f"not certified: {solver} at its default tolerances is not this model's "
                                         f"oracle ({own_solver} with tight ones)")
        elif (termination is Termination.OPTIMAL and problem.is_mixed_integer() and solver == "HIGHS"
              and mip_presolve_uncertified(solver_options, uncertified, "cvxpy's HIGHS")):
            termination = Termination.FEASIBLE
        elif (termination is Termination.OPTIMAL and solution is not None and problem.is_mixed_integer()
              and not self.loosened(options)):
            pruning = (scip_pruning(solver_options.get("scip_params") or {}, "cvxpy's SCIP") if solver == "SCIP"
                       else highs_pruning(solver_options, f"cvxpy's {solver}"))
            termination, bound = branch_and_bound_proof(model, solution, model.objective(solution), None, uncertified, scale=scale,
                                                        **pruning)
        tiny = below_tolerance_scale(model)
        if termination is Termination.OPTIMAL and tiny is not None:
            termination, uncertified["optimality"] = Termination.FEASIBLE, tiny
        stats = problem.solver_stats
        return Result(
            termination,
            bound=bound,
            solution=solution,
            duals=duals,
            iterations=getattr(stats, "num_iters", None),
            extra={"solver_status": problem.status, "solver": solver,
                   "solver_objective": None if problem.value is None else float(problem.value) / scale, **_warned(caught),
                   **uncertified, **said},
        )


def _warned(caught: list[warnings.WarningMessage]) -> dict[str, list[str]]:
    """``{"solver_warnings": [messages]}`` when cvxpy or its solver warned, else nothing."""
    return {"solver_warnings": [str(w.message) for w in caught]} if caught else {}


def _point_if_feasible(model: Model, to_solution: Any) -> Any:
    """The solver's last iterate after a stop, when it has one and it is feasible."""
    try:
        point = to_solution()
    except (TypeError, ValueError):  # no values (cvxpy leaves them None)
        return None
    if not np.isfinite(np.asarray(point, dtype=np.float64)).all() or model.violations(point, tol=1e-9):
        return None
    return point
