"""cvxpy: convex models in DCP form, solved by the conic/QP solver each model names.

Warm starts are always off: re-solves with ``warm_start=True`` gave OSQP answers off by 8e-4.
"""

from __future__ import annotations

from typing import Any, Mapping

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


@register_backend
class CvxpyBackend(Backend):
    NAME = "cvxpy"
    DESCRIPTION = "cvxpy DCP formulation (solver chosen per model: OSQP, Clarabel, HiGHS)"
    EXACT = True
    FORM = "cvxpy"
    SUPPORTS_TIME_LIMIT = False
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
        try:
            problem.solve(solver=solver, warm_start=False, **solver_options)
        except cp.error.SolverError as exc:
            return Result(Status.ERROR, model.name, self.NAME, extra={"message": str(exc)})
        status = STATUS_TABLE.get(problem.status, Status.ERROR)
        solution = objective = None
        if status in (Status.OPTIMAL, Status.FEASIBLE):
            solution = to_solution()
            objective = float(problem.value)
        stats = problem.solver_stats
        return Result(
            status=status,
            model=model.name,
            backend=self.NAME,
            objective=objective,
            solution=solution,
            iterations=getattr(stats, "num_iters", None),
            extra={"solver_status": problem.status, "solver": solver},
        )
