"""OR-Tools CP-SAT for integer programs in :class:`StandardForm` (integral constraint data).

With ``warm_start`` the last solution of a :class:`~optsched.solve.Prepared` is given to the
next solve of the same size as a solution hint (CP-SAT builds its model afresh each time). Off
by default: on the policies' captured trajectories it changed nothing measurable (1.01-1.08x,
docs/solvers.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import SOLVER_INFINITY, StandardForm, as_standard, solver_form
from optsched.result import Result, Termination
from optsched.solvers.certificates import judged, outside_model_tolerance
from optsched.solvers.interrupt import interruptible
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


# CP-SAT holds integers in 64 bits and refuses a model in which a domain, or the largest
# value a constraint's left-hand side can take, exceeds 2^62 (measured: x1 + x2 <= b with
# x in [0, b] solved at b = 2.3e18 and failed at 2.5e18).
CPSAT_LARGEST_ACTIVITY = 2.0**62


def _largest_activity(form: StandardForm, bound: np.ndarray) -> float:
    """max over variables of b_j, over rows of sum_j |a_ij| b_j (b_j = max(|lower_j|, |upper_j|))
    and of the rows' finite bounds (a budget of 2^63 failed to reach CP-SAT's int64 domain)."""
    rows = abs(form.A) @ bound if form.n_rows else np.zeros(0)
    sides = np.abs(np.concatenate([form.row_lower, form.row_upper]))
    sides = sides[np.isfinite(sides)]
    return float(max(bound.max(initial=0.0), rows.max(initial=0.0), sides.max(initial=0.0)))


def _objective_scaling_error(form: StandardForm, bound: np.ndarray) -> tuple[float, float]:
    """(worst-case error, largest |activity|) of the objective after CP-SAT's scaling: it
    multiplies the coefficients by the largest power of two f that keeps sum_j |c_j f| b_j
    within 2^53 (``mip_max_activity_exponent``; b_j = max(|lower_j|, |upper_j|)) and rounds
    them to integers; the error is sum_j |round(c_j f) / f - c_j| b_j. Measured: max x1 + x2
    over x in [0, b] with x1 + x2 <= b: right at b = 5e15, and from b = 1e16 (scaled by 2^-2)
    both coefficients rounded to 0 and CP-SAT said "optimal" at x = 0 (its log warns and goes
    on). ``fits_instance`` refuses from an error above 1e-9 of the activity: at b = 5e15 already (f = 1/2
    doubles every coefficient, which happens to keep the optimum), on the safe side."""
    activity = float(np.abs(form.c) @ bound)
    if activity == 0.0:
        return 0.0, 0.0
    f = 2.0 ** min(np.floor(53.0 - np.log2(activity)), 1000.0)  # finite for any activity > 0
    scaled = np.sign(form.c) * np.floor(np.abs(form.c) * f + 0.5)  # std::round: halves away from zero
    return float(np.abs(scaled / f - form.c) @ bound), activity


def _rounding_error(scaled: StandardForm, precision: float) -> float:
    """How far CP-SAT's objective can be from ``scaled``'s: it rounds the coefficients after
    multiplying them by a factor that keeps the worst-case absolute error within ``precision``
    (its log: "Objective worst-case absolute error") unless the activity limit 2^53 forbids it;
    at that limit the error is at most sum_j b_j * activity * 2^-54 (b_j = max |bound_j|)."""
    bound = np.maximum(np.abs(scaled.col_lower), np.abs(scaled.col_upper))
    used = scaled.c != 0
    activity = float(np.abs(scaled.c[used]) @ bound[used])
    return max(precision, float(bound[used].sum()) * activity * 2.0**-54)


def _rows_moved(form: StandardForm, written: StandardForm) -> bool:
    """Whether the solver's rows differ from the model's (:meth:`StandardForm.widened` moved a
    side): then an optimum is checked against the model's own tolerance."""
    return not (np.array_equal(form.row_lower, written.row_lower) and np.array_equal(form.row_upper, written.row_upper))


@register_backend
class CpSatBackend(Backend):
    NAME = "cpsat"
    DESCRIPTION = "OR-Tools CP-SAT: exact pure-integer programs with whole-number constraints"
    EXACT = True
    FORM = "standard"
    INFINITE_FROM = SOLVER_INFINITY
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
                                       minimum=0.0, maximum=1e-2, open_minimum=True,
                                       loosens=lambda precision: precision > 1e-12,
                                       loosens_feasibility=lambda _precision: False),  # the objective's only
        "warm_start": Option(False, bool, "hint the last solution of this Prepared (same size only)"),
        "log": Option(False, bool, "keep the solver's log in Result.extra['log'] (never printed)"),
    }

    def fits_instance(self, model: Model) -> str | None:
        form = as_standard(model).to_standard_form()  # integer variables only: checked by the traits
        if not form.is_integral_data:
            return "cpsat: constraint coefficients and bounds must be whole numbers"
        if not (np.isfinite(form.col_lower).all() and np.isfinite(form.col_upper).all()):
            return "cpsat: every variable needs finite bounds"
        bound = np.maximum(np.abs(form.col_lower), np.abs(form.col_upper))
        reach = _largest_activity(form, bound)
        if reach > CPSAT_LARGEST_ACTIVITY:
            return (f"cpsat: a variable's domain or a constraint's activity reaches {reach:.3g}, beyond CP-SAT's "
                    f"{CPSAT_LARGEST_ACTIVITY:.3g} (2^62)")
        error, activity = _objective_scaling_error(form, bound)
        if error > 1e-9 * max(1.0, activity):
            return (f"cpsat: its integer scaling of the objective (activity up to {activity:.3g}, scaled into 2^53) "
                    f"would be off by up to {error:.3g}")
        return None

    def new_state(self, kind: type[Model], options: Mapping[str, Any], *, prepare: PrepareFn) -> CpSatSession:
        return CpSatSession()

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        from ortools.sat.python import cp_model

        start = time.perf_counter()
        # the rows at the model's tolerance in whole numbers (1e9 + 1 on a capacity of 1e9), the
        # integer bounds they imply and no cost on a column they fix at 0 (an item of 1e12 that
        # fits nowhere set the objective's scale, and CP-SAT's rounding lost the item of 1 beside
        # it: feasible 0 where 1 is, until 2026-11-28): what every exact MIP route is given
        form = solver_form(model)
        moved = model.memo("cpsat_rows_moved", lambda: _rows_moved(form, as_standard(model).to_standard_form()))
        m = cp_model.CpModel()
        a = form.A.tocsr()
        lo, hi = form.col_lower.astype(np.int64), form.col_upper.astype(np.int64)
        xs = [
            m.new_bool_var(f"x{j}") if (lo[j], hi[j]) == (0, 1) else m.new_int_var(int(lo[j]), int(hi[j]), f"x{j}")
            for j in range(form.n_vars)
        ]
        for i in range(form.n_rows):
            cols = a.indices[a.indptr[i] : a.indptr[i + 1]]
            coefs = a.data[a.indptr[i] : a.indptr[i + 1]].astype(np.int64)
            expr = cp_model.LinearExpr.weighted_sum([xs[j] for j in cols], coefs.tolist())
            rlo = int(form.row_lower[i]) if np.isfinite(form.row_lower[i]) else -_BIG
            rhi = int(form.row_upper[i]) if np.isfinite(form.row_upper[i]) else _BIG
            m.add_linear_constraint(expr, rlo, rhi)
        # costs of order 1: mip_wanted_precision is absolute (weights of 1e-12 came back "optimal" 37 % short)
        scaled, back = form.scaled_objective()
        nz = np.flatnonzero(scaled.c)
        objective = cp_model.LinearExpr.weighted_sum([xs[j] for j in nz], scaled.c[nz].tolist()) + scaled.offset
        (m.maximize if form.maximize else m.minimize)(objective)
        session: CpSatSession = state if state is not None else CpSatSession()
        if options["warm_start"] and session.last_x is not None and session.last_x.shape[0] == form.n_vars:
            for var, value in zip(xs, session.last_x.astype(np.int64).tolist()):
                m.add_hint(var, value)

        solver = cp_model.CpSolver()
        solver.parameters.num_workers = int(options["num_workers"])
        # OR-Tools 9.15's presolve said "optimal" 17 where 19 is on a 6-item knapsack with a budget
        # row and weights of 1e9 (probe BK), 6 of 1,500 random such knapsacks of weights 1e8-3e10
        # (2 of 1,500 of 1e2-1e10): its inclusion detection; 0 of each with it off (0.97-1.03x the
        # time on the clique graphs; presolve off took 15x on keller4)
        solver.parameters.presolve_inclusion_work_limit = 0
        solver.parameters.random_seed = int(options["random_seed"])
        solver.parameters.absolute_gap_limit = float(options["absolute_gap_limit"]) * back.objective  # the program's units
        solver.parameters.mip_wanted_precision = float(options["mip_wanted_precision"])
        # CP-SAT's own SIGINT handler ended a solve as if by its time limit (exit 0 after Ctrl-C)
        # and left SIGINT at SIG_DFL; Python's stays, and stops the solve (solvers/interrupt.py)
        solver.parameters.catch_sigint_signal = False
        lines: list[str] = []
        if options["log"]:
            solver.parameters.log_search_progress = True
            solver.parameters.log_to_stdout = False
            solver.log_callback = lines.append
        left = remaining(time_limit, start)
        if left is not None:
            solver.parameters.max_time_in_seconds = max(left, 1e-3)
        code = interruptible(lambda: solver.solve(m), solver.stop_search)
        name = solver.status_name(code)
        termination = STATUS_TABLE.get(name, Termination.ERROR)
        solution = objective_value = bound = None
        extra: dict[str, Any] = {}
        if name in ("OPTIMAL", "FEASIBLE"):
            x = np.array([solver.value(v) for v in xs], dtype=np.float64)
            session.last_x = x if options["warm_start"] else None
            solution = as_standard(model).solution_from_vector(x)
            objective_value = back.value(solver.objective_value)
            bound = back.value(solver.best_objective_bound)
            if name == "OPTIMAL":
                # proven optimal within absolute_gap_limit for the objective CP-SAT rounded to
                # integers; CP-SAT leaves best_objective_bound stale when presolve alone solves the
                # model (bound 17 for the optimum 0 of a 1-item knapsack whose item does not fit),
                # so the proof, widened by the gap and twice the rounding's worst case, bounds it
                # too (values -1e8 and 1e-4 lost the 1e-4, and CP-SAT said optimal 0 where 1e-4 is)
                sign = 1.0 if form.maximize else -1.0
                proven = solver.objective_value + sign * solver.parameters.absolute_gap_limit
                if options["absolute_gap_limit"] > 0:  # the tighter of the two proofs
                    proven = sign * min(sign * proven, sign * solver.best_objective_bound)
                bound = back.value(proven + sign * 2.0 * _rounding_error(scaled, float(options["mip_wanted_precision"])))
                if options["absolute_gap_limit"] == 0:  # else the seam says gap_limit (the option loosens the proof)
                    termination, bound = judged(model, objective_value, bound, extra,
                                                "CP-SAT's proof, less its integer rounding of the objective, proves")
                if termination is Termination.OPTIMAL and moved and outside_model_tolerance(model, solution, extra, "CP-SAT"):
                    termination = Termination.FEASIBLE
            if name == "FEASIBLE":  # CP-SAT stops short of a proof only at a limit, and time is the only one set
                termination = Termination.TIME_LIMIT
        return Result(termination, objective=objective_value, bound=bound, solution=solution,
                      iterations=int(solver.num_branches),
                      extra={"solver_status": name, "solver_time_s": solver.wall_time, **extra,
                             **({"log": "\n".join(lines)} if options["log"] else {})})
