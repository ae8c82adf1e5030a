"""cvxpy: convex models in DCP form, solved by the conic/QP solver each model names.

Warm starts are always off: re-solves with ``warm_start=True`` gave OSQP answers off by 8e-4.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.result import Result, Status
from optsched.solvers.registry import Backend, register_backend

STATUS_TABLE: dict[str, Status] = {
    "optimal": Status.OPTIMAL,
    "optimal_inaccurate": Status.FEASIBLE,
    "infeasible": Status.INFEASIBLE,
    "infeasible_inaccurate": Status.INFEASIBLE,
    "user_limit": Status.TIME_LIMIT,
}


# The name of each solver's wall-clock limit (seconds) in cvxpy's solver options; a solver
# not listed here runs without a limit. A stopped solve is cvxpy status "user_limit", which
# carries no point, so the result is time_limit without a solution.
TIME_LIMIT_KEYS: dict[str, str | None] = {
    "CLARABEL": "time_limit",
    "OSQP": "time_limit",
    "SCS": "time_limit_secs",
    "HIGHS": "time_limit",
    "ECOS": None,
}


@register_backend
class CvxpyBackend(Backend):
    NAME = "cvxpy"
    DESCRIPTION = "cvxpy DCP formulation (solver chosen per model: OSQP, Clarabel, HiGHS)"
    EXACT = True
    FORM = "cvxpy"
    SUPPORTS_TIME_LIMIT = True  # for the solvers in TIME_LIMIT_KEYS (every model's default solver)
    REQUIRES = ("cvxpy",)
    PRIORITY = 60
    OPTIONS: Mapping[str, Any] = {"solver": None, "solver_options": None}

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any]) -> Result:
        import cvxpy as cp

        problem, to_solution = model.cvxpy_problem()  # type: ignore[attr-defined]
        solver, solver_options = model.cvxpy_default_solver()  # type: ignore[attr-defined]
        if options["solver"] is not None:
            solver, solver_options = options["solver"], {}
        solver_options = {**solver_options, **(options["solver_options"] or {})}
        if time_limit is not None and TIME_LIMIT_KEYS.get(solver) is not None:
            # OSQP reads 0 as "no limit": the smallest positive limit stops after one check
            solver_options[TIME_LIMIT_KEYS[solver]] = max(float(time_limit), 1e-6)
        try:
            problem.solve(solver=solver, warm_start=False, **solver_options)
        except cp.error.SolverError as exc:
            return Result(Status.ERROR, model.name, self.NAME, extra={"message": str(exc)})
        status = STATUS_TABLE.get(problem.status, Status.ERROR)
        solution = objective = None
        if status in (Status.OPTIMAL, Status.FEASIBLE):
            solution = to_solution()
            # The model's own value of the returned point: ``to_solution`` may clip the solver's
            # x into the bounds, and the solver's value belongs to the unclipped x. (A job whose
            # units are all full, upper = 0: Clarabel reported 2.0e-6 for the point x = 0 of value 0.)
            objective = float(model.objective(solution))
        elif status is Status.TIME_LIMIT:
            solution = _point_if_feasible(model, to_solution)
            objective = None if solution is None else float(model.objective(solution))
        stats = problem.solver_stats
        return Result(
            status=status,
            model=model.name,
            backend=self.NAME,
            objective=objective,
            solution=solution,
            iterations=getattr(stats, "num_iters", None),
            extra={"solver_status": problem.status, "solver": solver,
                   "solver_objective": None if problem.value is None else float(problem.value)},
        )


def _point_if_feasible(model: Model, to_solution: Any) -> Any:
    """The solver's last iterate after a stop, when it has one and it is feasible."""
    try:
        point = to_solution()
    except (TypeError, ValueError):  # no values (cvxpy leaves them None)
        return None
    if not np.isfinite(np.asarray(point, dtype=np.float64)).all() or model.violations(point, tol=1e-9):
        return None
    return point
