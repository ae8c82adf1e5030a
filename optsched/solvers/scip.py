"""SCIP through PySCIPOpt: a third independent exact solver for the 0-1 kinds (their
:class:`StandardForm`) and the ESCB index P3 as a mixed-integer second-order-cone program

    max mean.x + t   s.t.  t^2 <= variance.x,  t >= 0,  W x <= capacity,  x binary,

which SCIP solves by spatial branch and bound (no outer approximation of our own: a check on
``escb_oa``). The dual bound is SCIP's; gap options (``gap``, ``absgap``) make it stop short,
which the seam reports as ``gap_limit``. SCIP accepts t^2 <= u up to its feasibility tolerance,
so its bound on P3 can exceed the optimum by about that tolerance / (2 sqrt(u)); where that is
above 1e-6 the seam reports ``gap_limit`` (with the optimal objective) rather than ``optimal``.
"""

from __future__ import annotations

import math
import time
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import (SCIP_ORACLE_PARAMS, StandardForm, Unscaling, as_binary, as_standard, load_sides,
                                   scaled_capacity_rows, solver_form)
from optsched.result import OBJECTIVE_RTOL, Result, Termination
from optsched.solvers.c_output import captured_c_output
from optsched.solvers.certificates import branch_and_bound_proof, scip_pruning
from optsched.solvers.registry import Backend, Option, register_backend, remaining, tolerance_keys

STATUS_TABLE: dict[str, Termination] = {
    "optimal": Termination.OPTIMAL,
    "infeasible": Termination.INFEASIBLE,
    "inforunbd": Termination.INFEASIBLE,  # every optsched model is bounded
    "unbounded": Termination.UNBOUNDED,
    "timelimit": Termination.TIME_LIMIT,
    "nodelimit": Termination.ITERATION_LIMIT,
    "totalnodelimit": Termination.ITERATION_LIMIT,
    "stallnodelimit": Termination.ITERATION_LIMIT,
    "sollimit": Termination.ITERATION_LIMIT,
    "bestsollimit": Termination.ITERATION_LIMIT,
    "gaplimit": Termination.GAP_LIMIT,
}

# SCIP parameters a caller may forward (``scip_params``): limits, tolerances, presolving and
# search emphasis. Nothing that writes files or prints is forwarded.
ALLOWED_SCIP_PARAMS = frozenset({
    "limits/nodes", "limits/totalnodes", "limits/stallnodes", "limits/solutions", "limits/bestsol",
    "presolving/maxrounds", "presolving/maxrestarts", "separating/maxrounds", "separating/maxroundsroot",
    "numerics/feastol", "numerics/dualfeastol", "numerics/epsilon", "randomization/randomseedshift",
    "randomization/permutationseed", "lp/threads", "branching/scorefunc",
})


# P3's program (:func:`_add_escb`) has a nonlinear row, t^2 <= variance.x, whose outer
# approximation SCIP builds in its separation rounds. With the root's rounds off, as for the linear
# programs (``SCIP_ORACLE_PARAMS``), together with the oracle's feastol 1e-9, its linear presolve
# off and the capacity widened to c / (1 - 1e-9), SCIP said "optimal" short of P3's optimum, its
# bound below a feasible point (probe BQ, 2026-11-28: 12.0665 where 12.0811 is, on 17 of the 60
# indices of an ESDP run; 31 of 4,500 generated ones of 4-16 items against brute force, up to 3 %
# short). P3 keeps them on: 0 of those 4,500, nor of 4,500 with tight, wide or fuzzed data.
ESCB_PARAMS: Mapping[str, Any] = MappingProxyType({**SCIP_ORACLE_PARAMS, "separating/maxroundsroot": -1})


def _new_model(options: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
    import pyscipopt

    m = pyscipopt.Model()
    m.hideOutput()
    m.setParam("limits/gap", float(options["gap"]))
    m.setParam("randomization/randomseedshift", int(options["random_seed"]))
    for key, value in params.items():
        m.setParam(key, value)
    for key, value in (options["scip_params"] or {}).items():
        with captured_c_output() as printed:  # SCIP prints its refusal to stderr
            try:
                m.setParam(key, value)
                refused = None
            except (KeyError, LookupError, TypeError, ValueError, OverflowError) as exc:  # OverflowError: beyond C int
                refused = exc
        if refused is not None:
            said = printed[0].splitlines()[0] if printed[0] else ""
            raise ValueError(f"scip_params: SCIP rejects {key!r} = {value!r} ({refused}{'; ' + said if said else ''})")
        held = m.getParam(key)
        if held != value:  # SCIP's C setter casts: limits/nodes = 1.5 was held as 1
            raise ValueError(f"scip_params: SCIP holds {key!r} = {value!r} as {held!r} (its type: "
                             f"{type(held).__name__})")
    return m


def _add_standard_form(m: Any, form: StandardForm) -> list[Any]:
    import pyscipopt

    xs = [
        m.addVar(vtype="B" if f and lo == 0 and hi == 1 else ("I" if f else "C"),
                 lb=None if not np.isfinite(lo) else float(lo), ub=None if not np.isfinite(hi) else float(hi))
        for f, lo, hi in zip(form.integrality, form.col_lower, form.col_upper)
    ]
    a = form.A.tocsr()
    for i in range(form.n_rows):
        cols = a.indices[a.indptr[i]: a.indptr[i + 1]]
        vals = a.data[a.indptr[i]: a.indptr[i + 1]]
        expr = pyscipopt.quicksum(float(v) * xs[j] for j, v in zip(cols, vals))
        lo, hi = form.row_lower[i], form.row_upper[i]
        if lo == hi:
            m.addCons(expr == float(lo))
            continue
        if np.isfinite(lo):
            m.addCons(expr >= float(lo))
        if np.isfinite(hi):
            m.addCons(expr <= float(hi))
    nz = np.flatnonzero(form.c)
    objective = pyscipopt.quicksum(float(form.c[j]) * xs[j] for j in nz) + float(form.offset)
    m.setObjective(objective, "maximize" if form.maximize else "minimize")
    return xs


def _add_escb(m: Any, model: Any) -> tuple[list[Any], float]:
    """P3 on scaled data, as ``escb_oa`` solves it: mean c, variance c^2 (c a power of two, so
    every value is c times P3's; ``escb_oa._scale``) and each capacity row scaled by its own
    power of two. SCIP's values from 1e20 are infinite (means of 1e21 were "error in input
    data", printed), and its tolerances are absolute: at data of 1e-90 any x would do. Returns
    the variables and c."""
    import pyscipopt

    from optsched.solvers.escb_oa import _scale

    c = _scale(model.mean, model.variance)
    mean, variance = np.asarray(model.mean) * c, np.asarray(model.variance) * c * c
    weights, capacity = scaled_capacity_rows(model.weights, load_sides(-np.inf, model.capacity)[1])  # model's tolerance
    n = model.n_items
    xs = [m.addVar(vtype="B") for _ in range(n)]
    t = m.addVar(lb=0.0, ub=float(np.sqrt(variance.sum())))
    for k in range(weights.shape[0]):
        nz = np.flatnonzero(weights[k])
        m.addCons(pyscipopt.quicksum(float(weights[k, j]) * xs[j] for j in nz) <= float(capacity[k]))
    u = pyscipopt.quicksum(float(variance[j]) * xs[j] for j in range(n))
    m.addCons(t * t <= u)
    positive = variance[variance > 0]
    # t <= variance.x / sqrt(v_min) holds for every x (as in escb_oa) and is linear: it keeps t at
    # 0 when variance.x = 0, where t^2 <= u alone allows t up to sqrt(SCIP's feasibility tolerance)
    m.addCons(t <= (u / float(np.sqrt(positive.min())) if positive.size else 0.0))
    m.setObjective(pyscipopt.quicksum(float(mean[j]) * xs[j] for j in range(n)) + t, "maximize")
    return xs, c


def _scip_program(model: Model) -> tuple[StandardForm, Unscaling]:
    """The program SCIP solves for a standard-form model, built once per model (``admits``
    checks its numbers, ``run`` solves it): a MIP's costs of order 1 (SCIP cuts off within 1e-4,
    absolute, of an integral objective's step), an LP's columns and costs of order 1 as HiGHS
    gets them (its tolerances are absolute: with costs of 1e-12 it called x = 0 optimal, the
    optimum -1e-12), and rows of order 1."""
    def build() -> tuple[StandardForm, Unscaling]:
        # a MIP's rows at the model's tolerance, its integer columns as its rows bound them
        form = solver_form(model)
        form, back = form.scaled_objective() if form.is_mip else form.scaled_continuous()
        return form.scaled_rows()[0], back

    return model.memo("scip_program", build)


def _costs_below_tolerance(form: StandardForm, back: Unscaling, objective: float, dual_tolerance: float) -> str | None:
    """Why SCIP's "optimal" for the LP ``form`` (as scaled for it) proves nothing, or None: a
    column whose scaled cost over its scaled range is below SCIP's dual feasibility tolerance is
    a column SCIP may leave anywhere, and those columns together can move the objective by more
    than the seam's tolerance. Costs of 1e-8 to 1.3e8 in one LP scaled the small ones to 1e-13:
    SCIP said optimal at 0.01901 where 0.01951 is feasible (probe of the wide LPs, SCIP 10)."""
    reach = np.abs(form.c) * (form.col_upper - form.col_lower)  # inf for a free column with a cost
    unseen = (form.c != 0) & ~(reach >= dual_tolerance)
    moved = float(reach[unseen].sum()) / back.objective  # in the program's own units
    if moved <= OBJECTIVE_RTOL * max(1.0, abs(objective)):
        return None
    return (f"not certified: {int(unseen.sum())} column(s) whose costs SCIP's dual tolerance ({dual_tolerance:g}) "
            f"does not resolve after scaling could move the objective by up to {moved:.3g}")


def _time_limit(m: Any, time_limit: float | None, start: float) -> None:
    """What is left of ``time_limit`` since ``start``, as SCIP's limit."""
    left = remaining(time_limit, start)
    if left is not None:
        m.setParam("limits/time", max(left, 1e-3))


@register_backend
class ScipBackend(Backend):
    NAME = "scip"
    DESCRIPTION = "SCIP (PySCIPOpt): exact MILP for the 0-1 kinds, the ESCB index P3 as a MISOCP; dual bounds"
    EXACT = True
    FORM = "standard"
    MODELS = frozenset({"escb_index"})
    QP_CAPABLE = False
    SUPPORTS_TIME_LIMIT = True
    REQUIRES = ("pyscipopt",)
    PRIORITY = 40
    SETUP_S_PER_ELEMENT = 2e-5  # building the SCIP model in Python
    BYTES_PER_ELEMENT = 1000.0
    # SCIP's numerics/hugeval, below its infinity (1e20): an integer program with a column bound
    # of 1e17 came back "optimal" at half its optimum (raw PySCIPOpt too)
    INFINITE_FROM = math.nextafter(1e15, math.inf)  # hugeval itself is not huge
    INFINITE_SAYS = "treats values above 1e+15 as huge (numerics/hugeval), where its answers were wrong"
    OPTIONS: Mapping[str, Option] = {
        "gap": Option(0.0, float, "relative gap at which SCIP stops", minimum=0.0),
        "absgap": Option(0.0, float, "absolute gap at which SCIP stops", minimum=0.0),
        "random_seed": Option(0, int, "SCIP random seed shift", minimum=0, maximum=2**31 - 1),
        "scip_params": Option(None, dict, "other SCIP parameters (allow-listed; nothing that writes files)",
                              nullable=True, allowed=ALLOWED_SCIP_PARAMS,
                              loosens=tolerance_keys(ALLOWED_SCIP_PARAMS, "numerics/feastol", "numerics/dualfeastol",
                                                     "numerics/epsilon")),
        "log": Option(False, bool, "keep the solver's log in Result.extra['log'] (never printed)"),
    }

    def largest_value(self, model: Model) -> float:
        """Of the program SCIP is given (:func:`_scip_program`), bounds as they are."""
        return _scip_program(model)[0].largest_value()

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        start = time.perf_counter()
        params = ESCB_PARAMS if model.name == "escb_index" else SCIP_ORACLE_PARAMS
        m = _new_model(options, params)
        with captured_c_output() as printed:  # SCIP prints what it refuses in the data
            try:
                if model.name == "escb_index":
                    xs, c = _add_escb(m, model)
                    back = Unscaling(objective=c)
                else:
                    form, back = _scip_program(model)
                    xs = _add_standard_form(m, form)
                refused = None
            except Exception as exc:  # noqa: BLE001 - pyscipopt raises a bare Exception on bad data
                refused = exc
        if refused is not None:
            said = printed[0].strip().splitlines()[0] if printed[0].strip() else ""
            return Result(Termination.ERROR, extra={"message": f"SCIP refused the model: {refused}" + (f" ({said})" if said else "")})
        m.setParam("limits/absgap", float(options["absgap"]) * back.objective)  # the program's units: SCIP's is scaled
        log = ""
        if options["log"]:  # SCIP prints through Python's stdout, captured here
            import contextlib
            import io

            m.hideOutput(False)
            m.redirectOutput()
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                _time_limit(m, time_limit, start)
                m.optimize()
            log = buffer.getvalue()
        else:
            with captured_c_output() as printed:  # SoPlex wrote "Cannot set feasibility tolerance ..."
                _time_limit(m, time_limit, start)  # after waiting for the turn: the wait counts against the limit
                m.optimize()
            log = printed[0]
        name = m.getStatus()
        if name == "userinterrupt":  # SCIP caught a Ctrl-C: the caller's interrupt, not a time limit
            raise KeyboardInterrupt
        termination = STATUS_TABLE.get(name, Termination.ERROR)
        solution = bound = None
        extra: dict[str, Any] = {"solver_status": name, **({"log": log} if options["log"] or log else {})}
        if m.getNSols() > 0 and termination is not Termination.INFEASIBLE:
            best = m.getBestSol()
            x = back.x(np.array([m.getSolVal(best, v) for v in xs], dtype=np.float64))
            solution = (as_binary(model) if model.name == "escb_index" else as_standard(model)).solution_from_vector(x)
            dual = m.getDualbound()  # SCIP says "no bound" with its infinity (1e20), a finite float
            bound = back.value(dual) if abs(dual) < m.infinity() else None
            if (termination is Termination.OPTIMAL and (model.name == "escb_index" or form.is_mip)
                    and not self.loosened(options)):
                termination, bound = branch_and_bound_proof(
                    model, solution, model.objective(solution), bound, extra, scale=back.objective,
                    **scip_pruning({**params, **(options["scip_params"] or {})}))
            elif termination is Termination.OPTIMAL and model.name != "escb_index" and not form.is_mip:  # an LP
                unseen = _costs_below_tolerance(form, back, model.objective(solution), m.getParam("numerics/dualfeastol"))
                if unseen is not None:
                    termination, extra["optimality"] = Termination.FEASIBLE, unseen
                    if bound is not None:
                        extra["unproven_bound"], bound = bound, None
        return Result(termination, bound=bound, solution=solution, iterations=int(m.getNNodes()), extra=extra)
