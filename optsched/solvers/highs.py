"""HiGHS through highspy: MILPs, LPs and convex QPs in :class:`StandardForm`.

One ``highspy.Highs`` object lives per :class:`~optsched.solve.Prepared`. With ``warm_start``
a model whose structure (sense, sizes, matrix, Hessian, integrality) equals the previous one only
has its costs, bounds and offset changed in that object, so HiGHS starts from its last basis
(LP/QP), and a MIP gets the previous solution as a start; any other model is passed afresh. It
is off by default: on the policies' captured trajectories it bought nothing for the MIPs
(0.98-1.05x) and made OGASched's projection QPs 1.24-1.29x slower (docs/solvers.md,
benchmarks/bench_seam.py).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import (HIGHS_DEFAULT_TOLERANCES, HIGHS_MIP_ORACLE_OPTIONS, PRESOLVE_RULE_13, SOLVER_INFINITY,
                                   StandardForm, as_standard, lower_triangle, solver_form)
from optsched.result import Result, Termination
from optsched.solvers.c_output import captured_c_output
from optsched.solvers.certificates import branch_and_bound_proof, certified_continuous, highs_pruning
from optsched.solvers.interrupt import interruptible
from optsched.solvers.registry import Backend, Option, PrepareFn, register_backend, remaining, tolerance_keys

# HiGHS model status name -> termination (names, so the table needs no import).
STATUS_TABLE: dict[str, Termination] = {
    "kOptimal": Termination.OPTIMAL,
    "kInfeasible": Termination.INFEASIBLE,
    # presolve's "unbounded or infeasible" can only mean infeasible for a kind whose variables
    # are bounded (Model.bounded); a program with a free column is told apart by ``_unbounded_or_infeasible``
    "kUnboundedOrInfeasible": Termination.INFEASIBLE,
    "kUnbounded": Termination.UNBOUNDED,
    "kTimeLimit": Termination.TIME_LIMIT,
    "kIterationLimit": Termination.ITERATION_LIMIT,
    "kSolutionLimit": Termination.ITERATION_LIMIT,
    "kInterrupt": Termination.TIME_LIMIT,
    "kHighsInterrupt": Termination.TIME_LIMIT,
}


def highs_termination(name: str) -> Termination:
    """The termination of a HiGHS model status name (anything unknown is an error)."""
    return STATUS_TABLE.get(name, Termination.ERROR)


# HiGHS 1.14.0 MIP presolve, rule 13 "parallel rows and columns" (bit 8192 of
# ``presolve_rule_off``), returns wrong "optimal" answers when 0-1 columns are duplicates: on
#   max 2 x0 + ... + 2 x6  s.t.  x0 + ... + x6 <= 4,  3x0 + 3x1 + 3x2 + 3x3 + x4 + 2x6 >= 7,  x binary
# it reports 6 (x1, x2, x3) where 8 (x0..x3) is optimal; with the rule off it finds 8. Found by the
# fuzz long run (tests/test_fuzz.py, budgeted_ip "ties"); the same class of fault as HiGHS
# issues #2204 and #3073. Every HiGHS MIP here (highs, escb_oa, pyomo with HiGHS) switches the
# rule off unless the caller sets ``presolve_rule_off`` itself (cvxpy's HiGHS too: it returned
# the same 6 through cvxpy until it got ``HIGHS_MIP_ORACLE_OPTIONS``, models/forms.py). HiGHS 1.16
# answers 8 there with the rule on (probe BN); the rule stays off, which matters only with presolve on.

# HiGHS options a caller may forward (``highs_options``, and Pyomo's ``solver_options`` with
# HiGHS): algorithm choices, limits and tolerances. Nothing that writes or reads files, prints,
# or stops at an objective target is forwarded.
ALLOWED_HIGHS_OPTIONS = frozenset({
    "presolve", "solver", "parallel", "run_crossover", "random_seed", "simplex_strategy",
    "simplex_iteration_limit", "ipm_iteration_limit", "qp_iteration_limit", "mip_max_nodes",
    "mip_max_leaves", "mip_max_improving_sols", "mip_heuristic_effort", "mip_detect_symmetry",
    "mip_heuristic_run_feasibility_jump", "mip_heuristic_run_rins", "mip_heuristic_run_rens",
    "mip_rel_gap", "mip_abs_gap", "mip_feasibility_tolerance", "primal_feasibility_tolerance",
    "dual_feasibility_tolerance", "ipm_optimality_tolerance", "small_matrix_value", "large_matrix_value",
    "infinite_cost", "infinite_bound", "presolve_rule_off", "mip_pool_soft_limit", "qp_regularization_value",
})


# Pass-through options that change what HiGHS's "optimal" proves (its tolerances and what it
# takes as zero or infinite, and presolve rule 13 switched back on): with any of them set the
# seam does not certify optimality.
_HIGHS_TOLERANCES = tolerance_keys(
    ALLOWED_HIGHS_OPTIONS, "mip_feasibility_tolerance", "primal_feasibility_tolerance", "dual_feasibility_tolerance",
    "ipm_optimality_tolerance", "small_matrix_value", "large_matrix_value", "infinite_cost", "infinite_bound",
    "qp_regularization_value")


def highs_loosens(table: Any) -> bool:
    """``Option.loosens`` of a table of HiGHS options (also cvxpy's for its HiGHS): a tolerance,
    or a ``presolve_rule_off`` that leaves rule 13 on (its wrong optima above came back
    certified). Presolve switched back on is judged where the program is known to be a MIP
    (:func:`mip_presolve_uncertified`): an LP's presolve is sound."""
    if not table:
        return False
    rules = table.get("presolve_rule_off")
    return _HIGHS_TOLERANCES(table) or (isinstance(rules, int) and not rules & PRESOLVE_RULE_13)


def mip_presolve_uncertified(table: Mapping[str, Any] | None, extra: dict[str, Any], solver: str) -> bool:
    """Whether a HiGHS MIP ran with the presolve ``HIGHS_MIP_ORACLE_OPTIONS`` switches off
    switched back on by the caller (its wrong optima: knapsacks of 6 items); ``extra`` then
    says why its optimal is not certified."""
    value = (table or {}).get("presolve", "off")
    if value == "off":
        return False
    extra["optimality"] = (f"not certified: {solver}'s MIP presolve is on (presolve = {value!r}); HiGHS 1.14's "
                           "and 1.16's returned wrong optima on knapsacks of 4-6 items")
    return True


def check_highs_options(table: Mapping[str, Any] | None, where: str) -> None:
    """Each option of ``table`` set on a scratch HiGHS object: a value HiGHS refuses (out of
    range, wrong type) is a ValueError naming it before anything runs (Pyomo's HiGHS ignored
    such values in silence, and cvxpy's failed as a result)."""
    if table:
        h = new_highs(1)
        for key, value in table.items():
            set_option(h, key, value, where)


def _unbounded_or_infeasible(h: Any, threads: int) -> Termination:
    """Which of the two HiGHS's "unbounded or infeasible" is (min -x0 s.t. x0 - x1 <= 1, x >= 0
    integer was called infeasible): the same constraints with no objective, in a HiGHS of
    their own, are feasible exactly when the program is unbounded."""
    import highspy

    probe = new_highs(threads)
    model = h.getModel()
    lp = model.lp_
    lp.col_cost_ = np.zeros(lp.num_col_)
    probe.passModel(lp)
    run_highs(probe)
    status = probe.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        return Termination.UNBOUNDED
    return Termination.INFEASIBLE if status == highspy.HighsModelStatus.kInfeasible else Termination.ERROR


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


# HiGHS's QP solver (1.14 and 1.16, probe BN) cycles without end on a projection with tied z
# (tests/test_fuzz.py, capacity_projection "ties"); it otherwise needs a few iterations per variable. Past this it
# stops with kIterationLimit (termination iteration_limit: stopped early, never claimed optimal).
QP_ITERATION_LIMIT = 100_000

# MIPs only (1e-10 made the QP solver fail on a degenerate projection). HiGHS's defaults treat
# costs of 1e-9 beside 1 as zero: feasibility tolerances 1e-7 (MIP 1e-6)
# made 15 of 1,500 random set packings with weights in {0, 1e-9, 1, 2} come back "optimal" 1e-9
# short of brute force, and small_matrix_value 1e-9 (entries at or below it are dropped) one more
# in the 10^4 fuzz run. With these none did. An oracle needs them: they are, with the rule off
# above, ``HIGHS_MIP_ORACLE_OPTIONS``; a non-MIP gets HiGHS's defaults back (``HIGHS_DEFAULT_TOLERANCES``).


class _Cancel:
    """A HiGHS object's interrupt callbacks (simplex, IPM, MIP, QP), which stop its solve once
    ``asked``: Ctrl-C during a HiGHS solve, which never returns to Python until it ends, waited
    out the rest of the time limit (55 s of 60). HiGHS asks them between iterations; measured,
    they cost nothing on MIPs of 9 and 34 ms. HiGHS 1.14's QP solver asked none (a QP of 10^5
    variables ran on for 78 s after Ctrl-C); 1.16's asks its own event, which highspy gives no
    ``cb*`` property: a QP of 10^4 variables stopped 2.0 s into its solve when asked at 2.0 s.
    A QP asks it every iteration, a Python call that takes the GIL: 6 % of a QP of 5,000
    variables (1.69 -> 1.80 s), and about twice the time while another Python thread runs
    (probe BO), the price of a QP that Ctrl-C stops."""

    __slots__ = ("asked",)

    def __init__(self) -> None:
        self.asked = False

    def __call__(self, event: Any) -> None:
        # both ways: HiGHS keeps the flag an interrupt set, and a kept object (a Prepared's)
        # stopped once answered every later solve at once with kInterrupt (probe BO)
        event.interrupt(self.asked)

    def stop(self) -> None:
        self.asked = True


_BANNER_SHOWN_IN: int | None = None  # the process whose HiGHS has printed its banner


def silent_highs() -> Any:
    """A ``highspy.Highs`` with ``output_flag`` off. highspy 1.16 prints its banner while the
    first object of a process is built (its constructor registers the callbacks before any
    option can be set), so that construction runs inside :func:`captured_c_output` and the
    banner is dropped. Later ones print nothing and are built outside it: the capture's lock,
    held by another thread's solve, made a construction wait 6.5 s, and the swapped descriptors
    dropped other threads' prints (probe BO)."""
    global _BANNER_SHOWN_IN
    import highspy

    if _BANNER_SHOWN_IN == os.getpid():
        h = highspy.Highs()
    else:
        with captured_c_output():
            h = highspy.Highs()
        _BANNER_SHOWN_IN = os.getpid()
    h.setOptionValue("output_flag", False)
    return h


def new_highs(threads: int) -> Any:
    """A silent HiGHS object of ``threads`` threads that Ctrl-C stops (:func:`run_highs`)."""
    import highspy

    h = silent_highs()
    set_option(h, "threads", int(threads))
    h.optsched_cancel = _Cancel()
    qp = h.callbacks[int(highspy.cb.HighsCallbackType.kHighsCallbackQpInterrupt)]  # no cb* property of its own
    for event in (h.cbSimplexInterrupt, h.cbIpmInterrupt, h.cbMipInterrupt, qp):
        event.subscribe(h.optsched_cancel)
    return h


@dataclass
class HighsSession:
    """The solver object of one Prepared, the structure of the model it holds, the last point."""

    h: Any
    structure: tuple[Any, ...] | None = None
    last_x: np.ndarray | None = None


def _structure(form: StandardForm) -> tuple[Any, ...]:
    """What must be equal for a model to be updated in place: everything but c, bounds, offset."""
    a = form.A.tocsc()
    hess = None if form.hessian is None else lower_triangle(form.hessian)
    return (
        form.maximize, form.n_vars, form.n_rows, a.indptr.tobytes(), a.indices.tobytes(), a.data.tobytes(),
        form.integrality.tobytes(),
        None if hess is None else (hess.indptr.tobytes(), hess.indices.tobytes(), hess.data.tobytes()),
    )


def _update_in_place(h: Any, form: StandardForm) -> None:
    n, m = form.n_vars, form.n_rows
    cols = np.arange(n, dtype=np.int32)
    h.changeColsCost(n, cols, np.asarray(form.c, dtype=np.float64))
    h.changeColsBounds(n, cols, *form.column_bounds())
    if m:
        rows = np.arange(m, dtype=np.int32)
        h.changeRowsBounds(m, rows, np.asarray(form.row_lower, dtype=np.float64),
                           np.asarray(form.row_upper, dtype=np.float64))
    h.changeObjectiveOffset(float(form.offset))


def _apply_options(h: Any, options: Mapping[str, Any]) -> None:
    """HiGHS's defaults, silent, with this solve's options: set afresh for every solve, so that
    a per-solve override (``Prepared.solve(model, threads=2, highs_options=...)``) applies to
    that solve and to no later one."""
    h.resetOptions()
    h.setOptionValue("output_flag", False)
    set_option(h, "threads", int(options["threads"]))
    set_option(h, "mip_rel_gap", float(options["mip_rel_gap"]))
    set_option(h, "mip_abs_gap", float(options["mip_abs_gap"]))
    for key, value in (options["highs_options"] or {}).items():
        set_option(h, key, value, where="highs_options")


def run_highs(h: Any) -> None:
    """``h.run()``, once more after rebuilding HiGHS's global scheduler when the first attempt
    failed before solving (status error, model status not set). HiGHS keeps one thread
    scheduler per process, sized by the first run; a later run asking for another number of
    ``threads`` (this backend's option, or the default of HiGHS inside cvxpy or Pyomo) fails
    that way until ``resetGlobalScheduler`` is called. HiGHS runs one solve at a time here.
    The solve runs beside the main thread (solvers/interrupt.py): Ctrl-C stops an LP, a MIP or
    a QP through the object's interrupt callbacks (:func:`new_highs`) and then raises
    KeyboardInterrupt."""
    import highspy

    cancel: _Cancel = h.optsched_cancel
    cancel.asked = False  # a solve Ctrl-C stopped leaves it set on a kept object

    def run() -> None:  # on one thread: HiGHS's scheduler belongs to the thread that runs it
        if h.run() == highspy.HighsStatus.kError and h.getModelStatus() == highspy.HighsModelStatus.kNotset:
            highspy.Highs.resetGlobalScheduler(True)
            h.run()

    interruptible(run, cancel.stop)


def _run_logged(h: Any) -> str:
    """:func:`run_highs` with HiGHS's log written to a private temporary file, returned as text."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="optsched-highs-") as tmp:
        path = Path(tmp) / "highs.log"
        h.setOptionValue("log_to_console", False)
        h.setOptionValue("log_file", str(path))
        h.setOptionValue("output_flag", True)
        try:
            run_highs(h)
        finally:
            h.setOptionValue("output_flag", False)
            h.setOptionValue("log_file", "")
        return path.read_text() if path.exists() else ""


def mip_start(h: Any, x: np.ndarray) -> None:
    """Hand HiGHS the point ``x`` (every column) as a starting incumbent: HiGHS checks it and
    drops it when infeasible; a feasible one prunes from the first node."""
    import highspy

    start = highspy.HighsSolution()
    start.col_value = np.asarray(x, dtype=np.float64)
    start.value_valid = True
    h.setSolution(start)


QP_SOLVERS = ("choose", "qpasm")  # the values of HiGHS's ``solver`` that a QP is solved by


def highs_options_misfit(model: Model, given: Mapping[str, Any] | None, where: str) -> str | None:
    """Why HiGHS options ``given`` cannot solve ``model`` as asked, or None: HiGHS solves a QP
    with its active-set solver only. ``solver = ipm`` on a QP ended kModelError in 1.14; 1.16
    runs the active-set solver whatever ``solver`` says (ipm, ipx, simplex, pdlp: no iteration of
    theirs), so a benchmark of the choice would time another solver."""
    chosen = (given or {}).get("solver")
    if (isinstance(chosen, str) and chosen.lower() not in QP_SOLVERS  # HiGHS reads the name in any case
            and as_standard(model).to_standard_form().hessian is not None):
        return (f"{where}.solver = {chosen!r}: HiGHS solves a quadratic objective with its active-set solver "
                f"only (it would run that instead); for a QP use {' or '.join(map(repr, QP_SOLVERS))}")
    return None


@register_backend
class HighsBackend(Backend):
    NAME = "highs"
    DESCRIPTION = "HiGHS (highspy): exact MILP/LP, convex QP; proven dual bounds; row duals for LP/QP"
    EXACT = True
    FORM = "standard"
    SUPPORTS_TIME_LIMIT = True
    REQUIRES = ("highspy",)
    PRIORITY = 20
    SETUP_S_PER_ELEMENT = 2e-6  # building and passing the model (4.7 s at 10^6 projection variables)
    BYTES_PER_ELEMENT = 300.0
    INFINITE_FROM = SOLVER_INFINITY
    # HiGHS also stops at an absolute gap (mip_abs_gap, default 1e-6): with weights 1 and 1e-9
    # it answered 1.000000003 "optimal" for 1.000000004 (fuzz long run); an oracle needs 0.
    OPTIONS: Mapping[str, Option] = {
        "mip_rel_gap": Option(0.0, float, "relative MIP gap at which HiGHS stops", minimum=0.0),
        "mip_abs_gap": Option(0.0, float, "absolute MIP gap at which HiGHS stops", minimum=0.0),
        "threads": Option(1, int, "HiGHS threads", minimum=1, maximum=256),
        "warm_start": Option(False, bool, "update the data of the last model in place when the structure "
                                          "repeats, MIP start from the last solution (measured: no gain)"),
        "highs_options": Option(None, dict, "other HiGHS options (allow-listed; nothing that writes files)",
                                nullable=True, allowed=ALLOWED_HIGHS_OPTIONS, loosens=highs_loosens),
        "log": Option(False, bool, "keep the solver's log in Result.extra['log'] (never printed)"),
    }

    def fits_instance(self, model: Model) -> str | None:
        form = as_standard(model).to_standard_form()
        if form.is_mip and not form.integrality.all():
            return ("highs: HiGHS returns wrong 'optimal' answers on programs mixing integer and continuous columns "
                    "(1.14: 28 of 175 small generated ones, presolve off 12; 1.16: 1 of 600 random small ones, its "
                    "bound past a feasible point); use scip")
        return None

    def fits_with(self, model: Model, options: Mapping[str, Any]) -> str | None:
        return highs_options_misfit(model, options["highs_options"], "highs: option highs_options")

    def new_state(self, kind: type[Model], options: Mapping[str, Any], *, prepare: PrepareFn) -> HighsSession:
        session = HighsSession(new_highs(options["threads"]))
        _apply_options(session.h, options)  # a value HiGHS refuses fails here, before any solve
        return session

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        import highspy

        start = time.perf_counter()
        form = as_standard(model).to_standard_form()
        if form.hessian is not None and form.is_mip:
            return Result(Termination.ERROR, extra={"message": "HiGHS has no MIQP"})
        # a MIP's rows at the model's tolerance (StandardForm.widened), its columns' bounds as its
        # rows imply (tightened: HiGHS runs without presolve), its costs of order 1
        # (HIGHS_MIP_ORACLE_OPTIONS); an LP's or QP's columns and objective
        form, back = solver_form(model).scaled_objective() if form.is_mip else form.scaled_continuous()
        form, row_scale = form.scaled_rows()  # each row's coefficients of order 1 (its tolerances act there)
        session: HighsSession = state
        h = session.h
        _apply_options(h, options)
        own = options["highs_options"] or {}
        # the absolute gap is the caller's, in the program's units: HiGHS sees the objective scaled
        set_option(h, "mip_abs_gap", float(own.get("mip_abs_gap", options["mip_abs_gap"])) * back.objective)
        # the oracle options for MIPs, HiGHS's default tolerances otherwise (the object may switch kinds)
        for key, value in (HIGHS_MIP_ORACLE_OPTIONS if form.is_mip else HIGHS_DEFAULT_TOLERANCES).items():
            if key not in own:
                set_option(h, key, value)
        if form.hessian is not None and "qp_iteration_limit" not in own:  # HiGHS 1.14's QP cycles (above)
            set_option(h, "qp_iteration_limit", max(QP_ITERATION_LIMIT, 10 * form.n_vars))
        structure = _structure(form)
        warm = bool(options["warm_start"]) and session.structure == structure
        if warm:
            _update_in_place(h, form)
            if form.is_mip and session.last_x is not None:
                mip_start(h, session.last_x)
        else:
            h.passModel(form.to_highs())
            session.structure = structure if options["warm_start"] else None
        left = remaining(time_limit, start)  # what the set-up left of the limit
        h.setOptionValue("time_limit", highspy.kHighsInf if left is None else max(left, 1e-3))
        printed = [""]
        if options["log"]:
            log = _run_logged(h)
        elif form.hessian is not None:  # HiGHS's QP solver printf's "dimension mismatch" (stdout)
            with captured_c_output() as printed:
                left = remaining(time_limit, start)  # after waiting for the turn: the wait counts against the limit
                h.setOptionValue("time_limit", highspy.kHighsInf if left is None else max(left, 1e-3))
                run_highs(h)
        else:
            run_highs(h)

        status_name = h.getModelStatus().name
        termination = highs_termination(status_name)
        if status_name == "kUnboundedOrInfeasible" and not model.bounded:
            termination = _unbounded_or_infeasible(h, options["threads"])
        info = h.getInfo()
        solution = objective = bound = duals = None
        if info.primal_solution_status == 2 and termination is not Termination.INFEASIBLE:  # a feasible point
            sol = h.getSolution()
            x = np.asarray(sol.col_value, dtype=np.float64)
            session.last_x = x if options["warm_start"] else None
            x = back.x(x)  # the model's columns from here on
            solution = as_standard(model).solution_from_vector(x)
            objective = back.value(info.objective_function_value)
            if not form.is_mip and info.dual_solution_status == 2:
                duals = (back.row_duals(np.asarray(sol.row_dual, dtype=np.float64) * row_scale),
                         back.column_duals(np.asarray(sol.col_dual, dtype=np.float64)))
        extra = {"solver_status": status_name, "warm": warm, **({"log": log} if options["log"] else {}),
                 **({"solver_output": printed[0]} if printed[0] else {})}
        if form.is_mip:
            if np.isfinite(info.mip_dual_bound) and solution is not None:
                bound = back.value(info.mip_dual_bound)
            if termination is Termination.OPTIMAL and mip_presolve_uncertified(own, extra, "HiGHS"):
                termination = Termination.FEASIBLE
                if bound is not None:
                    extra["unproven_bound"], bound = bound, None
            elif termination is Termination.OPTIMAL and solution is not None and not self.loosened(options):
                termination, bound = branch_and_bound_proof(model, solution, objective, bound, extra, scale=back.objective,
                                                            **highs_pruning({**HIGHS_MIP_ORACLE_OPTIONS, **own}))
        elif termination is Termination.OPTIMAL and solution is not None:
            termination, bound = certified_continuous(model, solution, x, None if duals is None else duals[0], extra)
        iterations = max(int(info.mip_node_count), 0) if form.is_mip else sum(  # -1: a counter the solve never set
            max(int(count), 0) for count in (info.simplex_iteration_count, info.ipm_iteration_count,
                                             info.qp_iteration_count))
        return Result(termination, objective=objective, bound=bound, solution=solution, iterations=iterations,
                      duals=duals, extra=extra)
