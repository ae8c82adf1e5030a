"""Pyomo: solves a model's reference formulation (``to_pyomo()``) with any solver Pyomo's new
(``contrib.solver``) interface reaches; HiGHS by default (``--option solver=scip_direct`` for
programs mixing integer and continuous columns, which HiGHS 1.14 and 1.16 get wrong). Kinds that state
their math only as a standard form get the Pyomo statement of its matrices
(:meth:`optsched.models.forms.StandardForm.to_pyomo`)."""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import SCIP_ORACLE_PARAMS, SOLVER_INFINITY, as_pyomo, as_standard
from optsched.result import Result, Termination
from optsched.solvers.c_output import captured_c_output, output_turn
from optsched.solvers.certificates import branch_and_bound_proof, certified_continuous, highs_pruning, scip_pruning
from optsched.solvers.highs import (ALLOWED_HIGHS_OPTIONS, check_highs_options, highs_loosens,
                                    highs_options_misfit, mip_presolve_uncertified)
from optsched.solvers.registry import Backend, Option, PrepareFn, below_tolerance_scale, register_backend, remaining

# Pyomo TerminationCondition name -> termination. Every optsched model is bounded, so
# "infeasibleOrUnbounded" can only mean infeasible.
STATUS_TABLE: dict[str, Termination] = {
    "convergenceCriteriaSatisfied": Termination.OPTIMAL,
    "maxTimeLimit": Termination.TIME_LIMIT,
    "iterationLimit": Termination.ITERATION_LIMIT,
    "interrupted": Termination.TIME_LIMIT,
    "provenInfeasible": Termination.INFEASIBLE,
    "locallyInfeasible": Termination.INFEASIBLE,
    "infeasibleOrUnbounded": Termination.INFEASIBLE,  # for a bounded kind; see run
    "unbounded": Termination.UNBOUNDED,
}



def _is_qp(model: Model) -> bool:
    return "standard" in type(model).FORMS and as_standard(model).to_standard_form().hessian is not None


def _is_continuous(model: Model) -> bool:
    """An LP or QP whose solution is the standard form's vector (its optimal is certified)."""
    return "standard" in type(model).FORMS and not as_standard(model).to_standard_form().is_mip


def _integral(model: Model) -> bool:
    return "standard" in type(model).FORMS and as_standard(model).to_standard_form().is_mip


# The tolerances each branch-and-bound solver's proof rests on, from the options it was given
# (certificates.branch_and_bound_proof), by the solver's family (_family)
_PRUNING: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "highs": lambda given: highs_pruning(given, "Pyomo's HiGHS"),
    "scip": lambda given: scip_pruning(given, "Pyomo's SCIP"),
}


def _family(solver: Any) -> str | None:
    """``highs`` or ``scip`` for a Pyomo solver object of those (``scip_persistent`` is a
    ``scip_direct``; a name alone let it pass unchecked: its "optimal" stood with SCIP's
    default tolerances, and bounds below the optimum); None for any other solver, whose
    integer programs' optimality optsched cannot check."""
    from pyomo.contrib.solver.solvers.highs import Highs
    from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect

    return "highs" if isinstance(solver, Highs) else "scip" if isinstance(solver, ScipDirect) else None


def _row_duals(m: Any, res: Any, n_rows: int) -> np.ndarray | None:
    """The row duals of a Pyomo model whose constraints are indexed by the standard form's row
    numbers (the generic ``rows[i]``, a projection's ``cap[g]``), in HiGHS's sign; None when the
    solver gives none or the constraints are not so indexed."""
    try:
        duals = res.solution_loader.get_duals()
    except Exception:  # noqa: BLE001 - a solver interface without duals
        return None
    y = np.zeros(n_rows)
    for constraint, value in duals.items():
        index = constraint.index()
        if not isinstance(index, int) or not 0 <= index < n_rows:
            return None
        y[index] = float(value)
    return y


@register_backend
class PyomoBackend(Backend):
    NAME = "pyomo"
    DESCRIPTION = "Pyomo reference formulation, solved by a contrib.solver backend (default HiGHS)"
    EXACT = True
    FORM = "pyomo"
    SUPPORTS_TIME_LIMIT = True
    REQUIRES = ("pyomo", "highspy")
    PRIORITY = 90
    SETUP_S_PER_ELEMENT = 4e-5  # building the Pyomo model (7.5 s at 10^5 projection variables)
    BYTES_PER_ELEMENT = 3000.0
    INFINITE_FROM = SOLVER_INFINITY
    OPTIONS: Mapping[str, Option] = {
        "solver": Option("auto", str, "a Pyomo contrib.solver name (checked against Pyomo's availability); "
                                      "auto: highs, or scip_direct for programs mixing integer and continuous columns"),
        "solver_options": Option(None, dict, "options of that solver (HiGHS: allow-listed; others: none)",
                                 nullable=True, allowed=ALLOWED_HIGHS_OPTIONS, loosens=highs_loosens),
        "rel_gap": Option(0.0, float, "relative MIP gap at which the solver stops", minimum=0.0),
        "log": Option(False, bool, "keep the solver's log in Result.extra['log'] (never printed)"),
    }

    def check_option_values(self, options: Mapping[str, Any]) -> None:
        if options["solver"] not in ("auto", "highs") and options["solver_options"]:
            raise ValueError("options: backend 'pyomo' forwards solver_options to HiGHS only")
        check_highs_options(options["solver_options"], "options: backend 'pyomo' option 'solver_options'")
        if options["solver"] != "auto":
            self._solver(options["solver"])

    def fits_with(self, model: Model, options: Mapping[str, Any]) -> str | None:
        if "standard" not in type(model).FORMS:
            return None
        if options["solver"] == "highs" and self._mixed(model):
            return ("pyomo: option solver: HiGHS returns wrong 'optimal' answers on programs mixing integer and "
                    "continuous columns (1.14 and 1.16, solvers/highs.py); use solver=auto or scip_direct")
        return highs_options_misfit(model, options["solver_options"], "pyomo: option solver_options")

    @staticmethod
    def _solver(name: str) -> Any:
        import pyomo.environ  # noqa: F401  (registers the solver plugins)
        from pyomo.contrib.solver.common.factory import SolverFactory

        try:
            solver = SolverFactory(name)
        except Exception:  # noqa: BLE001 - Pyomo raises several types for an unknown name
            solver = None
        if solver is None or not solver.available():
            raise ValueError(f"options: Pyomo solver {name!r} is not available")
        return solver

    def new_state(self, kind: type[Model], options: Mapping[str, Any], *, prepare: PrepareFn) -> dict[str, Any]:
        return {}  # solver name -> the Pyomo solver object, made on first use

    @staticmethod
    def _mixed(model: Model) -> bool:
        if "standard" not in type(model).FORMS:
            return False
        form = as_standard(model).to_standard_form()
        return form.is_mip and not bool(form.integrality.all())

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        start = time.perf_counter()
        name = options["solver"]
        mixed = self._mixed(model)
        if name == "auto":
            name = "scip_direct" if mixed else "highs"
        if name != "highs" and options["solver_options"]:  # they would be dropped unseen
            raise ValueError(f"options: backend 'pyomo' option 'solver_options' holds HiGHS options, and this "
                             f"program mixing integer and continuous columns is solved by {name}")
        solvers = state if state is not None else {}
        try:
            solver = solvers.get(name) or solvers.setdefault(name, self._solver(name))
        except ValueError as exc:
            return Result(Termination.ERROR, extra={"message": str(exc)})
        family = _family(solver)
        m = as_pyomo(model).to_pyomo()
        scale = 1.0
        kwargs: dict[str, Any] = {
            "load_solutions": False,
            "raise_exception_on_nonoptimal_result": False,
            "solver_options": dict(options["solver_options"] or {}) if name == "highs" else {},
        }
        if getattr(model, "is_mip_formulation", True):
            kwargs["rel_gap"] = float(options["rel_gap"])
            import pyomo.environ as pyo

            from optsched.models.forms import HIGHS_MIP_ORACLE_OPTIONS, mip_objective_scale

            if family == "highs":  # what a HiGHS MIP needs to be an oracle (models/forms.py)
                kwargs["solver_options"].setdefault("mip_abs_gap", 0.0)  # as the highs backend
                for key, value in HIGHS_MIP_ORACLE_OPTIONS.items():
                    if key != "presolve" or _integral(model):  # an LP keeps HiGHS's presolve
                        kwargs["solver_options"].setdefault(key, value)
            scale = mip_objective_scale(model)  # costs of order 1, for HiGHS and SCIP alike
            if scale != 1.0:
                objective = next(m.component_data_objects(pyo.Objective, active=True))
                objective.set_value(objective.expr * scale)
            if "mip_abs_gap" in kwargs["solver_options"]:  # the caller's, in the program's units
                kwargs["solver_options"]["mip_abs_gap"] *= scale
        if family == "scip":
            kwargs["solver_options"].update(SCIP_ORACLE_PARAMS)
        buffer = None
        if options["log"]:
            import io

            buffer = io.StringIO()
            kwargs["tee"] = [buffer]
        printed = [""]
        qp = _is_qp(model)
        # Pyomo's own output capture (common/tee.py) swaps sys.stdout: one such block at a time in
        # the process, Pyomo's or optsched's (four Pyomo threads deadlocked; cvxpy beside one failed)
        with output_turn():
            left = remaining(time_limit, start)  # after waiting for the turn: the wait counts against the limit
            if left is not None:
                kwargs["time_limit"] = max(left, 1e-3)
            if buffer is None and qp:  # HiGHS's QP solver printf's "dimension mismatch" (stdout)
                with captured_c_output() as printed:
                    res = solver.solve(m, **kwargs)
            else:
                res = solver.solve(m, **kwargs)
        term = res.termination_condition.name
        termination = STATUS_TABLE.get(term, Termination.ERROR)
        if term == "infeasibleOrUnbounded" and not model.bounded:  # a free column: not told apart
            return Result(Termination.ERROR, extra={"solver_status": term, "solver": name, "message":
                          f"{name} says infeasible or unbounded without telling which (the highs backend does)"})
        solution = objective = bound = None
        if res.solution_status.name in ("optimal", "feasible"):
            res.solution_loader.load_vars()
            solution = as_pyomo(model).solution_from_pyomo(m)
            objective = float(res.incumbent_objective) / scale
            if res.objective_bound is not None and abs(res.objective_bound) < SOLVER_INFINITY:  # SCIP's "none" is 1e20
                bound = float(res.objective_bound) / scale
        extra: dict[str, Any] = {"solver_status": term, "solver": name, **({"solver_output": printed[0]} if printed[0] else {})}
        continuous = _is_continuous(model)
        integral = _integral(model)
        if termination is Termination.OPTIMAL and solution is not None and integral and family is None:
            termination = Termination.FEASIBLE
            extra["optimality"] = f"optsched does not know the tolerances {name}'s optimality proof rests on"
            if bound is not None:
                extra["unproven_bound"], bound = bound, None
        elif (termination is Termination.OPTIMAL and integral and family == "highs"
              and mip_presolve_uncertified(kwargs["solver_options"], extra, "Pyomo's HiGHS")):
            termination = Termination.FEASIBLE
            if bound is not None:
                extra["unproven_bound"], bound = bound, None
        elif termination is Termination.OPTIMAL and solution is not None and integral and not self.loosened(options):
            assert family is not None
            termination, bound = branch_and_bound_proof(model, solution, objective, bound, extra, scale=scale,
                                                        **_PRUNING[family](kwargs["solver_options"]))
        elif termination is Termination.OPTIMAL and solution is not None and continuous:
            # an LP's or QP's optimal is checked as the highs backend checks it (certificates.certified_continuous)
            form = as_standard(model).to_standard_form()
            x = np.asarray(solution, dtype=np.float64)  # a QP kind's solution is its vector x
            duals = _row_duals(m, res, form.n_rows) if x.shape == (form.n_vars,) else None
            if duals is not None:
                duals = duals / scale  # the duals of the objective as Pyomo solved it, times scale
            termination, bound = certified_continuous(model, solution, x, duals, extra, solver=f"Pyomo's {name}")
        elif continuous and bound is not None:  # a continuous program's bound is what its duals prove
            extra["unproven_bound"], bound = bound, None
        tiny = below_tolerance_scale(model)
        if termination is Termination.OPTIMAL and tiny is not None:  # after the proof: its bound stands
            termination = Termination.FEASIBLE
            extra["optimality"] = tiny
        if buffer is not None:
            extra["log"] = buffer.getvalue()
        return Result(termination, objective=objective, bound=bound, solution=solution, extra=extra)
