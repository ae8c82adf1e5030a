"""HiGHS through highspy: MILPs, LPs and convex QPs in :class:`StandardForm`."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import StandardForm
from optsched.result import Result, Status
from optsched.solvers.registry import Backend, register_backend

# HiGHS model status name -> optsched status (names, so the table needs no import).
STATUS_TABLE: dict[str, Status] = {
    "kOptimal": Status.OPTIMAL,
    "kInfeasible": Status.INFEASIBLE,
    # every optsched model is bounded (binary or boxed variables), so presolve's
    # "unbounded or infeasible" can only mean infeasible (as in the Pyomo table)
    "kUnboundedOrInfeasible": Status.INFEASIBLE,
    "kTimeLimit": Status.TIME_LIMIT,
    "kIterationLimit": Status.TIME_LIMIT,
    "kSolutionLimit": Status.FEASIBLE,
    "kInterrupt": Status.TIME_LIMIT,
    "kHighsInterrupt": Status.TIME_LIMIT,
}


# HiGHS 1.14.0 MIP presolve, rule 13 "parallel rows and columns" (bit 8192 of
# ``presolve_rule_off``), returns wrong "optimal" answers when 0-1 columns are duplicates: on
#   max 2 x0 + ... + 2 x6  s.t.  x0 + ... + x6 <= 4,  3x0 + 3x1 + 3x2 + 3x3 + x4 + 2x6 >= 7,  x binary
# it reports 6 (x1, x2, x3) where 8 (x0..x3) is optimal; with the rule off it finds 8. Found by the
# fuzz long run (tests/test_fuzz.py, budgeted_ip "ties"); the same class of fault as HiGHS
# issues #2204 and #3073. Every HiGHS MIP here (highs, escb_oa, pyomo with HiGHS) switches the
# rule off unless the caller sets ``presolve_rule_off`` itself.
MIP_PRESOLVE_RULE_OFF = 1 << 13


def _highs_status(name: str) -> Status:
    return STATUS_TABLE.get(name, Status.ERROR)


def set_option(h: Any, key: str, value: Any, where: str = "options") -> None:
    """``h.setOptionValue`` that turns HiGHS's refusal (unknown name, wrong type, out of range)
    into a ValueError naming the option, instead of silently keeping the default."""
    import highspy

    try:
        status = h.setOptionValue(key, value)
    except (TypeError, RuntimeError) as exc:
        raise ValueError(f"{where}: HiGHS rejects option {key!r} = {value!r} ({exc})") from None
    if status != highspy.HighsStatus.kOk:
        raise ValueError(f"{where}: HiGHS rejects option {key!r} = {value!r} (unknown name or value out of range)")


def _lower_triangle_csc(h: Any) -> Any:
    import scipy.sparse as sp

    return sp.csc_matrix(sp.tril(h, format="csc"))


# HiGHS 1.14's QP solver cycled without end on a projection with tied z (tests/test_fuzz.py,
# capacity_projection "ties"); it otherwise needs a few iterations per variable. Past this it
# stops with kIterationLimit (status time_limit: stopped early, never claimed optimal).
QP_ITERATION_LIMIT = 100_000

# MIPs only (1e-10 made the QP solver fail on a degenerate projection). HiGHS's defaults treat
# costs of 1e-9 beside 1 as zero: feasibility tolerances 1e-7 (MIP 1e-6)
# made 15 of 1,500 random set packings with weights in {0, 1e-9, 1, 2} come back "optimal" 1e-9
# short of brute force, and small_matrix_value 1e-9 (entries at or below it are dropped) one more
# in the 10^4 fuzz run. With these none did. An oracle needs them.
ORACLE_TOLERANCES: Mapping[str, float] = {
    "small_matrix_value": 1e-12,
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
    "mip_feasibility_tolerance": 1e-10,
}


@register_backend
class HighsBackend(Backend):
    NAME = "highs"
    DESCRIPTION = "HiGHS (highspy): exact MILP/LP, convex QP; proven dual bounds"
    EXACT = True
    FORM = "standard"
    SUPPORTS_TIME_LIMIT = True
    REQUIRES = ("highspy",)
    PRIORITY = 20
    # HiGHS also stops at an absolute gap (mip_abs_gap, default 1e-6): with weights 1 and 1e-9
    # it answered 1.000000003 "optimal" for 1.000000004 (fuzz long run); an oracle needs 0.
    OPTIONS: Mapping[str, Any] = {"mip_rel_gap": 0.0, "mip_abs_gap": 0.0, "threads": 1, "highs_options": None}

    def fits_instance(self, model: Model) -> str | None:
        return None

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any]) -> Result:
        import highspy

        form: StandardForm = model.standard_form()  # type: ignore[attr-defined]
        if form.hessian is not None and form.is_mip:
            return Result(Status.ERROR, model.name, self.NAME, extra={"message": "HiGHS has no MIQP"})
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        set_option(h, "mip_rel_gap", float(options["mip_rel_gap"]))
        set_option(h, "mip_abs_gap", float(options["mip_abs_gap"]))
        set_option(h, "threads", int(options["threads"]))
        if form.is_mip:
            set_option(h, "presolve_rule_off", MIP_PRESOLVE_RULE_OFF)
            for key, value in ORACLE_TOLERANCES.items():
                set_option(h, key, value)
        if form.hessian is not None:  # HiGHS 1.14's QP cycles on some degenerate projections
            set_option(h, "qp_iteration_limit", max(QP_ITERATION_LIMIT, 10 * form.n_vars))
        extra = options["highs_options"] or {}
        if not isinstance(extra, Mapping):
            raise ValueError(f"options: highs_options must be a mapping of HiGHS option names to values, got {extra!r}")
        for key, value in extra.items():
            set_option(h, key, value, where="highs_options")
        if time_limit is not None:
            h.setOptionValue("time_limit", float(time_limit))

        lp = highspy.HighsLp()
        lp.num_col_ = form.n_vars
        lp.num_row_ = form.n_rows
        lp.col_cost_ = np.asarray(form.c, dtype=np.float64)
        lp.col_lower_ = np.asarray(form.col_lower, dtype=np.float64)
        lp.col_upper_ = np.asarray(form.col_upper, dtype=np.float64)
        lp.row_lower_ = np.asarray(form.row_lower, dtype=np.float64)
        lp.row_upper_ = np.asarray(form.row_upper, dtype=np.float64)
        lp.offset_ = float(form.offset)
        lp.sense_ = highspy.ObjSense.kMaximize if form.maximize else highspy.ObjSense.kMinimize
        a = form.A.tocsc()
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = a.indptr.astype(np.int32)
        lp.a_matrix_.index_ = a.indices.astype(np.int32)
        lp.a_matrix_.value_ = a.data.astype(np.float64)
        lp.a_matrix_.num_col_ = form.n_vars
        lp.a_matrix_.num_row_ = form.n_rows
        if form.is_mip:
            lp.integrality_ = [
                highspy.HighsVarType.kInteger if f else highspy.HighsVarType.kContinuous
                for f in form.integrality
            ]
        hm = highspy.HighsModel()
        hm.lp_ = lp
        if form.hessian is not None:
            tri = _lower_triangle_csc(form.hessian)
            hess = highspy.HighsHessian()
            hess.dim_ = form.n_vars
            hess.format_ = highspy.HessianFormat.kTriangular
            hess.start_ = tri.indptr.astype(np.int32)
            hess.index_ = tri.indices.astype(np.int32)
            hess.value_ = tri.data.astype(np.float64)
            hm.hessian_ = hess
        h.passModel(hm)
        h.run()

        status_name = h.getModelStatus().name
        status = _highs_status(status_name)
        info = h.getInfo()
        solution = None
        objective = None
        if info.primal_solution_status == 2 and status is not Status.INFEASIBLE:  # feasible point
            x = np.asarray(h.getSolution().col_value, dtype=np.float64)
            solution = model.solution_from_vector(x)  # type: ignore[attr-defined]
            objective = float(info.objective_function_value)
        bound = None
        if form.is_mip:
            if np.isfinite(info.mip_dual_bound) and solution is not None:
                bound = float(info.mip_dual_bound)
        elif status is Status.OPTIMAL:
            bound = objective
        if status is Status.OPTIMAL and solution is None:
            status = Status.ERROR
        iterations = int(info.mip_node_count) if form.is_mip else int(
            info.simplex_iteration_count + info.ipm_iteration_count + info.qp_iteration_count
        )
        return Result(
            status=status,
            model=model.name,
            backend=self.NAME,
            objective=objective,
            bound=bound,
            solution=solution,
            iterations=iterations,
            extra={"solver_status": status_name},
        )
