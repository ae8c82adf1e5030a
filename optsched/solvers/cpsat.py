"""OR-Tools CP-SAT for integer programs in :class:`StandardForm` (integral constraint data).

With ``warm_start`` the last solution of a :class:`~optsched.solve.Prepared` is given to the
next solve of the same size as a solution hint (CP-SAT builds its model afresh each time). Off
by default: on the policies' captured trajectories it changed nothing measurable (1.01-1.08x,
docs/solvers.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import as_standard
from optsched.result import Result, Termination
import time

from optsched.solvers.registry import Backend, Option, PrepareFn, register_backend, remaining

STATUS_TABLE: dict[str, Termination] = {
    "OPTIMAL": Termination.OPTIMAL,
    "FEASIBLE": Termination.FEASIBLE,
    "INFEASIBLE": Termination.INFEASIBLE,
    "MODEL_INVALID": Termination.ERROR,
    "UNKNOWN": Termination.TIME_LIMIT,
}

_BIG = 2**53


@dataclass
class CpSatSession:
    """The last solution of one Prepared (the hint of the next solve)."""

    last_x: np.ndarray | None = None


@register_backend
class CpSatBackend(Backend):
    NAME = "cpsat"
    DESCRIPTION = "OR-Tools CP-SAT: exact pure-integer programs with whole-number constraints"
    EXACT = True
    FORM = "standard"
    CONTINUOUS_CAPABLE = False
    QP_CAPABLE = False
    SUPPORTS_TIME_LIMIT = True
    REQUIRES = ("ortools",)
    PRIORITY = 10
    SETUP_S_PER_ELEMENT = 3e-6  # the Python loop that builds the CP-SAT model
    BYTES_PER_ELEMENT = 400.0
    # CP-SAT stops at an absolute gap of 1e-4 by default, which with a fractional objective
    # gave "OPTIMAL" answers 2.5e-5 below the optimum: an oracle needs 0.
    # CP-SAT scales a fractional objective to integers at mip_wanted_precision (default 1e-6):
    # with weights 1 and 1e-9 it dropped the 1e-9 and answered 1.0 "optimal" for 1.000000001
    # (fuzz long run, set packing with extreme weights); 1e-12 keeps such weights.
    OPTIONS: Mapping[str, Option] = {
        "num_workers": Option(1, int, "CP-SAT search workers (1 is fastest on small models, 2 cores)",
                              minimum=1, maximum=256),
        "random_seed": Option(0, int, "CP-SAT random seed", minimum=0, maximum=2**31 - 1),
        "absolute_gap_limit": Option(0.0, float, "absolute gap at which CP-SAT stops", minimum=0.0),
        "mip_wanted_precision": Option(1e-12, float, "precision of the integer scaling of a fractional objective",
                                       minimum=0.0, maximum=1e-2, open_minimum=True),
        "warm_start": Option(False, bool, "hint the last solution of this Prepared (same size only)"),
        "log": Option(False, bool, "keep the solver's log in Result.extra['log'] (never printed)"),
    }

    def fits_instance(self, model: Model) -> str | None:
        form = as_standard(model).to_standard_form()  # integer variables only: checked by the traits
        if not form.is_integral_data:
            return "cpsat: constraint coefficients and bounds must be whole numbers"
        if not (np.isfinite(form.col_lower).all() and np.isfinite(form.col_upper).all()):
            return "cpsat: every variable needs finite bounds"
        return None

    def new_state(self, kind: type[Model], options: Mapping[str, Any], *, prepare: PrepareFn) -> CpSatSession:
        return CpSatSession()

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        from ortools.sat.python import cp_model

        start = time.perf_counter()
        form = as_standard(model).to_standard_form()
        m = cp_model.CpModel()
        lo, hi = form.col_lower.astype(np.int64), form.col_upper.astype(np.int64)
        xs = [
            m.new_bool_var(f"x{j}") if (lo[j], hi[j]) == (0, 1) else m.new_int_var(int(lo[j]), int(hi[j]), f"x{j}")
            for j in range(form.n_vars)
        ]
        a = form.A.tocsr()
        for i in range(form.n_rows):
            cols = a.indices[a.indptr[i] : a.indptr[i + 1]]
            coefs = a.data[a.indptr[i] : a.indptr[i + 1]].astype(np.int64)
            expr = cp_model.LinearExpr.weighted_sum([xs[j] for j in cols], coefs.tolist())
            rlo = int(form.row_lower[i]) if np.isfinite(form.row_lower[i]) else -_BIG
            rhi = int(form.row_upper[i]) if np.isfinite(form.row_upper[i]) else _BIG
            m.add_linear_constraint(expr, rlo, rhi)
        nz = np.flatnonzero(form.c)
        objective = cp_model.LinearExpr.weighted_sum([xs[j] for j in nz], form.c[nz].tolist()) + form.offset
        (m.maximize if form.maximize else m.minimize)(objective)
        session: CpSatSession = state if state is not None else CpSatSession()
        if options["warm_start"] and session.last_x is not None and session.last_x.shape[0] == form.n_vars:
            for var, value in zip(xs, session.last_x.astype(np.int64).tolist()):
                m.add_hint(var, value)

        solver = cp_model.CpSolver()
        solver.parameters.num_workers = int(options["num_workers"])
        solver.parameters.random_seed = int(options["random_seed"])
        solver.parameters.absolute_gap_limit = float(options["absolute_gap_limit"])
        solver.parameters.mip_wanted_precision = float(options["mip_wanted_precision"])
        lines: list[str] = []
        if options["log"]:
            solver.parameters.log_search_progress = True
            solver.parameters.log_to_stdout = False
            solver.log_callback = lines.append
        left = remaining(time_limit, start)
        if left is not None:
            solver.parameters.max_time_in_seconds = max(left, 1e-3)
        code = solver.solve(m)
        name = solver.status_name(code)
        termination = STATUS_TABLE.get(name, Termination.ERROR)
        solution = objective_value = bound = None
        if name in ("OPTIMAL", "FEASIBLE"):
            x = np.array([solver.value(v) for v in xs], dtype=np.float64)
            session.last_x = x if options["warm_start"] else None
            solution = as_standard(model).solution_from_vector(x)
            objective_value = float(solver.objective_value)
            bound = float(solver.best_objective_bound)
            if name == "OPTIMAL" and options["absolute_gap_limit"] == 0:
                # proven optimal at gap 0; CP-SAT leaves best_objective_bound stale when presolve
                # alone solves the model (bound 17 for the optimum 0 of a 1-item knapsack whose
                # item does not fit), so the proof, not that number, is the bound
                bound = objective_value
            if name == "FEASIBLE":  # CP-SAT stops short of a proof only at a limit, and time is the only one set
                termination = Termination.TIME_LIMIT
        return Result(termination, objective=objective_value, bound=bound, solution=solution,
                      iterations=int(solver.num_branches),
                      extra={"solver_status": name, "solver_time_s": solver.wall_time,
                             **({"log": "\n".join(lines)} if options["log"] else {})})
