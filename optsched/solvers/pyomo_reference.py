"""Pyomo: solves a model's reference formulation with any solver Pyomo's new
(``contrib.solver``) interface reaches; HiGHS by default."""

from __future__ import annotations

from typing import Any, Mapping

from optsched.models.base import Model
from optsched.result import Result, Status
from optsched.solvers.registry import Availability, Backend, modules_available, register_backend

# Pyomo TerminationCondition name -> optsched status. Every optsched model is bounded, so
# "infeasibleOrUnbounded" can only mean infeasible.
STATUS_TABLE: dict[str, Status] = {
    "convergenceCriteriaSatisfied": Status.OPTIMAL,
    "maxTimeLimit": Status.TIME_LIMIT,
    "iterationLimit": Status.TIME_LIMIT,
    "interrupted": Status.TIME_LIMIT,
    "provenInfeasible": Status.INFEASIBLE,
    "locallyInfeasible": Status.INFEASIBLE,
    "infeasibleOrUnbounded": Status.INFEASIBLE,
}


@register_backend
class PyomoBackend(Backend):
    NAME = "pyomo"
    DESCRIPTION = "Pyomo reference formulation, solved by a contrib.solver backend (default HiGHS)"
    EXACT = True
    FORM = "pyomo"
    SUPPORTS_TIME_LIMIT = True
    REQUIRES = ("pyomo", "highspy")
    PRIORITY = 90
    OPTIONS: Mapping[str, Any] = {"solver": "highs", "solver_options": None, "rel_gap": 0.0}

    def available(self) -> Availability:
        return modules_available(*self.REQUIRES)

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any]) -> Result:
        import pyomo.environ  # noqa: F401  (registers the solver plugins)
        from pyomo.contrib.solver.common.factory import SolverFactory

        solver = SolverFactory(options["solver"])
        if solver is None or not solver.available():
            raise ValueError(f"options: Pyomo solver {options['solver']!r} is not available")
        m = model.pyomo_model()  # type: ignore[attr-defined]
        kwargs: dict[str, Any] = {
            "load_solutions": False,
            "raise_exception_on_nonoptimal_result": False,
            "solver_options": dict(options["solver_options"] or {}),
        }
        if getattr(model, "is_mip_formulation", True):
            kwargs["rel_gap"] = float(options["rel_gap"])
            if options["solver"] == "highs":  # HiGHS 1.14 presolve fault: see optsched/solvers/highs.py
                from optsched.solvers.highs import MIP_PRESOLVE_RULE_OFF, ORACLE_TOLERANCES

                kwargs["solver_options"].setdefault("presolve_rule_off", MIP_PRESOLVE_RULE_OFF)
                kwargs["solver_options"].setdefault("mip_abs_gap", 0.0)  # as the highs backend
                for key, value in ORACLE_TOLERANCES.items():
                    kwargs["solver_options"].setdefault(key, value)
        if time_limit is not None:
            kwargs["time_limit"] = float(time_limit)
        res = solver.solve(m, **kwargs)
        term = res.termination_condition.name
        status = STATUS_TABLE.get(term, Status.ERROR)
        solution = objective = bound = None
        if res.solution_status.name in ("optimal", "feasible"):
            res.solution_loader.load_vars()
            solution = model.solution_from_pyomo(m)  # type: ignore[attr-defined]
            objective = float(res.incumbent_objective)
            if res.objective_bound is not None and abs(res.objective_bound) != float("inf"):
                bound = float(res.objective_bound)
        if status is Status.OPTIMAL and solution is None:
            status = Status.ERROR
        return Result(
            status=status,
            model=model.name,
            backend=self.NAME,
            objective=objective,
            bound=bound,
            solution=solution,
            extra={"solver_status": term, "solver": options["solver"]},
        )
