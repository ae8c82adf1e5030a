"""Certificates of optimality from a solver's duals: the bound they prove, in the model's terms.

A solver's "optimal" rests on its own tolerances; where those fail (HiGHS's QP solver, 1.14
and 1.16, on data that mix scales, Clarabel on a pseudo-welfare job with capacities of 1e8) the answer is
wrong and still called optimal. Weak duality gives a bound from any multipliers, so the duals
the solver returns with its point either prove the point optimal (bound and objective agree,
``agrees_at_scale``) or leave it ``feasible``, with ``extra["optimality"]`` giving the bound
they do prove.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import HIGHS_DEFAULT_TOLERANCES, SCIP_DEFAULT_TOLERANCES, as_standard
from optsched.result import BOUND_PROOF, Termination, agrees_at_scale


def judged(model: Model, objective: float, bound: float, extra: dict[str, Any],
           proves: str) -> tuple[Termination, float | None]:
    """(termination, bound) of an answer a solver calls optimal, from the bound it does prove:
    optimal when objective and bound agree (``agrees_at_scale``); otherwise feasible, with
    ``extra["optimality"]`` saying what (``proves``) proves only that bound."""
    if agrees_at_scale(model, objective, bound):
        return Termination.OPTIMAL, bound
    extra["optimality"] = f"not certified: {proves} only the bound {bound:.10g} for the objective {objective:.10g}"
    return Termination.FEASIBLE, (bound if np.isfinite(bound) else None)


# The widening of a branch-and-bound proof, in units of the tolerance the solver prunes within:
# over 652 random budgeted IPs whose data span 1e-9..1e9, HiGHS's bound fell short of brute
# force's optimum by up to 0.64 of its tolerance, SCIP's by up to 1.7 of its epsilon.
PRUNING_MARGIN = 2.0


def objective_grain(form: Any) -> float:
    """The largest power of two u with every cost an integer multiple of u, when only integer
    columns have costs (0 otherwise): any two integer points' objectives then differ by a
    multiple of u, so no better point hides closer than u to the incumbent."""
    c = np.asarray(form.c, dtype=np.float64)
    priced = c != 0
    if not priced.any() or not np.all(form.integrality[priced]) or not np.isfinite(c[priced]).all():
        return 0.0
    mantissa, exponent = np.frexp(np.abs(c[priced]))
    whole = (mantissa * 2.0**53).astype(np.int64)  # exact: the mantissa holds 53 bits
    lowest = (whole & -whole).astype(np.float64)  # the lowest set bit of each
    return float(np.min(np.ldexp(lowest, exponent - 53)))


NOTHING_MARGIN = 1e-5  # an item is out when it breaks a row by this much (relative), far past any model's tolerance


def nothing_can_be_chosen(form: Any) -> bool:
    """True when every priced column is an integer column >= 0 that no point can set to 1 or
    more: a row whose least activity with that column at 1 breaks it by more than
    ``NOTHING_MARGIN`` max(1, |side|, sum_k |a_ik| max(|l_k|, |u_k|)) (a knapsack whose every item
    outweighs its capacity, a budget family's member of budget 0), or an upper bound below 1: the
    models' row slack is 1e-9 of the larger of the side and that reach. That is: every priced
    column's implied upper bound (``StandardForm.implied_bounds``) lies below 1 in the program
    whose rows' sides are moved out by that margin. Every point, within any model's feasibility
    tolerance, then has the objective ``offset``, whatever a solver's
    tolerances prove: with values of 3e3-1e5 HiGHS's proof of such an optimum of 0 reached only
    3.9e-6 to 4.8e-5 above it (it resolves 1e-10 of its objective scaled to costs of order 1),
    past the seam's 1e-6 there, and it ended ``feasible``. An item outweighing its capacity by
    5e-10 relative proves nothing: the models take it as feasible, and worth its value; nor does
    x1 + x2 <= 0.9999 on integer columns of range 1e6, whose slack, 1e-9 of the reach 2e6, lets
    x1 = 1 pass (probe BI)."""
    c = np.asarray(form.c, dtype=np.float64)
    priced = np.flatnonzero(c != 0)
    lo, up = np.asarray(form.col_lower, dtype=np.float64), np.asarray(form.col_upper, dtype=np.float64)
    if not priced.size:
        return True
    if not np.all(form.integrality[priced]) or not np.all(lo[priced] >= 0) or form.hessian is not None:
        return False
    # each row's sides moved out by the margin; a stored zero times an infinite bound (NaN) or an
    # unbounded column (inf) leaves its row no finite side, and so no proof
    with np.errstate(invalid="ignore"):
        reach = np.maximum(1.0, abs(form.A) @ np.maximum(np.abs(lo), np.abs(up)))
        loose = replace(form, row_upper=form.row_upper + NOTHING_MARGIN * np.maximum(reach, np.abs(form.row_upper)),
                        row_lower=form.row_lower - NOTHING_MARGIN * np.maximum(reach, np.abs(form.row_lower)))
    return bool(np.all(loose.implied_bounds()[1][priced] < 1.0))


def highs_pruning(given: Mapping[str, Any], solver: str = "HiGHS") -> dict[str, Any]:
    """The tolerances a HiGHS MIP's proof rests on (:func:`branch_and_bound_proof`), from the
    options it was given, HiGHS's own where unset: ``mip_feasibility_tolerance``, for the
    objective and the rows alike."""
    own = {**HIGHS_DEFAULT_TOLERANCES, **given}
    tolerance = float(own["mip_feasibility_tolerance"])
    return {"resolution": tolerance, "feasibility": tolerance, "dual": float(own["dual_feasibility_tolerance"]),
            "solver": solver}


def scip_pruning(given: Mapping[str, Any], solver: str = "SCIP") -> dict[str, Any]:
    """The tolerances a SCIP proof rests on (:func:`branch_and_bound_proof`), from the parameters
    it was given, SCIP's own where unset: ``numerics/epsilon`` for the objective,
    ``numerics/feastol`` for the rows, ``numerics/dualfeastol`` for the costs."""
    params = {**SCIP_DEFAULT_TOLERANCES, **given}
    return {"resolution": float(params["numerics/epsilon"]), "feasibility": float(params["numerics/feastol"]),
            "dual": float(params["numerics/dualfeastol"]), "solver": solver}


def branch_and_bound_proof(model: Model, solution: Any, objective: float, bound: float | None, extra: dict[str, Any], *,
                           scale: float, resolution: float, feasibility: float, dual: float,
                           solver: str) -> tuple[Termination, float | None]:
    """(termination, bound) of an integer program a branch-and-bound solver calls optimal:
    :func:`search_proof`, and ``feasible`` (the bound kept) when ``solution`` lies outside
    the model's own tolerance (:func:`outside_model_tolerance`)."""
    termination, proved = search_proof(model, objective, bound, extra, scale=scale, resolution=resolution,
                                       feasibility=feasibility, dual=dual, solver=solver)
    if termination is Termination.OPTIMAL and outside_model_tolerance(model, solution, extra, solver):
        return Termination.FEASIBLE, proved
    return termination, proved


def outside_model_tolerance(model: Model, solution: Any, extra: dict[str, Any], solver: str) -> bool:
    """Whether a pure integer program's optimal point lies outside what the model calls
    feasible (its ``violations`` at ``FEASIBILITY_TOL``), though within the solver's tolerances
    and the seam's verification (``VERIFY_TOL``); ``extra["optimality"]`` then says so. The
    solver searched the program at the model's tolerance (:meth:`StandardForm.widened`), so its
    bound holds for the model's optimum; a whole-number point past that tolerance chose an item
    the model refuses: one 2e-9 over its capacity was "optimal" (SCIP, relative 1e-9 on top of
    the widened row) where the model's optimum (brute force's) chooses nothing. A program with
    continuous columns is not asked: they sit on the widened rows, within the solver's own
    tolerance past them, at every optimum (a change of the objective of that order, no jump)."""
    from optsched.models.validate import FEASIBILITY_TOL

    if "standard" in type(model).FORMS and not as_standard(model).to_standard_form().integrality.all():
        return False
    try:
        problems = model.violations(solution, tol=FEASIBILITY_TOL)
    except ValueError:  # not a solution of this kind: the seam's verification says so
        return False
    if problems:
        extra["optimality"] = (f"not certified: {solver}'s point is within its own tolerances but not the model's "
                               f"({FEASIBILITY_TOL:g}): {problems[0]}")
    return bool(problems)


def search_proof(model: Model, objective: float, bound: float | None, extra: dict[str, Any], *,
                 scale: float, resolution: float, feasibility: float, dual: float,
                 solver: str) -> tuple[Termination, float | None]:
    """(termination, bound) that a branch-and-bound solver's search proves when it calls an
    integer program optimal.

    The solver prunes a node whose bound passes its incumbent by no more than ``resolution`` on
    the objective as it solved it (``scale`` times the model's, without the offset): HiGHS's
    next incumbent must beat the last by its ``mip_feasibility_tolerance`` (its
    ``computeNewUpperLimit``), SCIP compares bounds within ``numerics/epsilon``. Costs that
    small beside the largest (values 1e-5 beside 2e5, scaled into 4e-11) are lost: HiGHS and
    SCIP said optimal 1e-5 short, and SCIP's bound fell below its own incumbent. What the search
    proves is its bound (at least the objective) widened by ``PRUNING_MARGIN * resolution *
    max(1, |scaled bound|) / scale``; optimal when that agrees with the objective (``judged``),
    or when it lies within the objective's grain (:func:`objective_grain`: costs 600 and 0.5
    leave no objective value between 0.5 and 1).
    A bound beyond the objective by more than the seam's tolerance (a gap option) is left to
    the seam, which says ``gap_limit``.

    Rows are solved within ``feasibility``, relative to a row of order 1. An entry smaller than
    that times its row's largest (``StandardForm.row_spread``, a ratio: the same for the row
    however it is scaled) is within the tolerance of zero, and the search proves nothing there:
    SCIP (feasibility tolerance 1e-6) said optimal 5 where 6 is, with weights 5 and 1e8 in one
    row. Such a program is ``feasible``, without a bound.

    The LPs of the search are solved within the dual tolerance ``dual``: a reduced cost that
    small is taken as 0, so each LP bound, and the search's, may fall short by up to ``dual``
    times the sum of the columns' ranges (their bounds tightened by the rows,
    ``StandardForm.implied_bounds``) on the scaled objective (the safe bound of Neumaier and
    Shcherbina). The proof is widened by that too; a column without a finite range leaves no
    bound. With costs 1e9 and 1 (scaled 2^-30), Pyomo's SCIP left the continuous column at 0,
    answered 0 where 1 is the optimum and reported the bound 0.002; with costs 1e8 and -1e-5 on a
    column of range 1e7, SCIP said the bound -50.0003 where -100 is feasible."""
    form = as_standard(model).to_standard_form() if "standard" in type(model).FORMS else None
    if form is not None and objective == form.offset and nothing_can_be_chosen(form):
        return Termination.OPTIMAL, objective  # every point is worth the offset: no search proof needed
    spread = 1.0 if form is None else form.row_spread()
    if spread < feasibility:
        extra["optimality"] = (f"not certified: a row holds an entry {spread:.3g} times its largest, "
                               f"within {solver}'s feasibility tolerance {feasibility:g} of zero")
        return Termination.FEASIBLE, None
    if bound is None:
        base = objective
    else:
        base = max(bound, objective) if model.maximize else min(bound, objective)
    offset = 0.0 if form is None else float(form.offset)
    width = PRUNING_MARGIN * resolution * max(1.0, abs(base - offset) * scale) / scale
    if form is not None:
        low, up = form.implied_bounds()
        reach = float(np.sum(up - low))
        if not np.isfinite(reach):
            extra["optimality"] = (f"not certified: a column has no finite range, so {solver}'s dual tolerance "
                                   f"{dual:g} bounds nothing")
            return Termination.FEASIBLE, None
        width += dual * reach / scale
    proved = base + width if model.maximize else base - width
    if not agrees_at_scale(model, objective, base):
        return Termination.OPTIMAL, proved
    if form is not None and abs(proved - objective) < objective_grain(form):
        return Termination.OPTIMAL, objective  # the next objective value lies a whole grain away
    return judged(model, objective, proved, extra,
                  f"{solver}'s search, which prunes within {resolution:g} of its objective scaled by {scale:g}, proves")


def certified_continuous(model: Model, solution: Any, x: np.ndarray, row_duals: np.ndarray | None,
                         extra: dict[str, Any], *, solver: str = "HiGHS") -> tuple[Termination, float | None]:
    """(termination, bound) of an LP or QP a solver calls optimal: the Lagrangian bound of its own
    row duals (``StandardForm.lagrangian_gap``, in HiGHS's sign; x the standard form's vector)
    against the model's objective. HiGHS's QP solver (1.14 and 1.16) says optimal at points far from the
    optimum when the data mix scales (a projection with z of 1e6 and 1: 9.0e9 where the optimum
    is 0.5), and its LP solver where scaled costs fall below its dual tolerance (costs of 2.5e9
    and -1.2: "optimal" 0 where -3.29 is); their duals then prove no such thing, and the result
    is ``feasible`` with ``extra["optimality"]`` giving the bound they do prove. The highs and
    pyomo backends use it (cvxpy's standard-form programs reach :func:`lagrangian_bound` through
    their entry of :data:`CVXPY_DUAL_BOUNDS`)."""
    if row_duals is None:
        extra["optimality"] = f"not certified: {solver} returned no duals"
        return Termination.FEASIBLE, None
    objective = model.objective(solution)
    extra[BOUND_PROOF] = f"weak duality at the row duals of {solver}"
    return judged(model, objective, lagrangian_bound(model, objective, x, row_duals), extra,
                  f"the duals of {solver} prove")


def lagrangian_bound(model: Model, objective: float, x: np.ndarray, row_duals: np.ndarray) -> float:
    """The bound the row multipliers ``row_duals`` (HiGHS's sign for the program as stated) prove
    on the optimum of ``model``'s standard form: ``objective`` (its value at x) less the
    Lagrangian gap when minimising, plus it when maximising."""
    gap = as_standard(model).to_standard_form().lagrangian_gap(x, row_duals)
    return objective + gap if model.maximize else objective - gap


# The Lagrangian bound of a cvxpy form's multipliers, per model kind: ``bound(model, duals,
# solution)`` with ``duals`` the dual values of the form's constraints in their order
# (``Result.duals``) and ``solution`` the point the solver returned.
DualBound = Callable[[Any, tuple[Any, ...], Any], "float | None"]
CVXPY_DUAL_BOUNDS: dict[str, DualBound] = {}


def cvxpy_dual_bound(kind: str) -> Callable[[DualBound], DualBound]:
    """Register the bound a kind's cvxpy multipliers prove (weak duality, in the model's terms)."""
    def register(fn: DualBound) -> DualBound:
        CVXPY_DUAL_BOUNDS[kind] = fn
        return fn
    return register


def certified_cvxpy(model: Model, solution: Any, duals: tuple[Any, ...] | None, extra: dict[str, Any], *,
                    solver: str) -> tuple[Termination, float | None]:
    """(termination, bound) of a cvxpy solve that returned a point (its solver said optimal or
    optimal_inaccurate): the bound of the kind's :data:`CVXPY_DUAL_BOUNDS` entry at the solver's
    multipliers, against the model's objective, decides.
    Clarabel said optimal 2.5e-4 short on a ``pseudo_welfare`` job with capacities of 1e8, at
    0.52 where 1.0 is the optimum of a ``stationary_allocation`` with weight 1e8 and upper 1e-8,
    and at 1.27 where 0.5 is the optimum of an ``onsocmax_offline``."""
    bound_of = CVXPY_DUAL_BOUNDS[model.name]
    bound = None if duals is None else bound_of(model, duals, solution)
    if bound is None or np.isnan(bound):
        extra["optimality"] = f"not certified: {solver} returned no usable multipliers"
        return Termination.FEASIBLE, None
    extra[BOUND_PROOF] = f"weak duality at the multipliers of {solver}"
    return judged(model, model.objective(solution), bound, extra, f"the duals of {solver} prove")


def _vector(dual: Any) -> np.ndarray | None:
    """A constraint's dual values as a finite float vector, or None."""
    if dual is None:
        return None
    v = np.asarray(dual, dtype=np.float64).reshape(-1)
    return v if np.isfinite(v).all() else None


@cvxpy_dual_bound("pseudo_welfare")
def _welfare_bound(model: Any, duals: tuple[Any, ...], _solution: Any) -> float | None:
    """The tighter of D(mu) and D(0) (:func:`welfare_dual_bound`) at the multiplier of (4), the
    form's first constraint: Clarabel's mu of an inactive (4) is 5e-11, not 0."""
    mu = _vector(duals[0])
    if mu is None or mu.size != 1:
        return None
    return min(welfare_dual_bound(model, float(mu[0])), welfare_dual_bound(model, 0.0))


@cvxpy_dual_bound("onsocmax_offline")
def _offline_bound(model: Any, duals: tuple[Any, ...], _solution: Any) -> float | None:
    """P2's objective (Proposition 1 of paper 002, ``onsocmax_offline.dual_bound``) at the
    multipliers of (4) and (6) (``OfflineWelfare.multipliers``: 0 on rows the form leaves out)."""
    from optsched.models.onsocmax_offline import dual_bound

    multipliers = model.multipliers(duals)
    return None if multipliers is None else dual_bound(model.instance, *multipliers)


@cvxpy_dual_bound("stationary_allocation")
def _stationary_bound(model: Any, duals: tuple[Any, ...], _solution: Any) -> float | None:
    """min over mu >= 0 of D(w, mu) (:meth:`StationaryAllocation.dual_bound`, the kernel of the
    ``stationary_alm`` backend) at port weights w from the multipliers of the epigraph rows of
    (7), the form's third constraint, each port's row normalised onto the simplex (uniform for
    a port without overhead or without positive multipliers: any simplex row is valid)."""
    from optsched.solvers.stationary_alm import min_dual_bound

    K = model.n_resources
    charged = model.charged_ports
    w = np.full(model.overhead.shape, 1.0 / K)
    if charged.size:
        lam = _vector(duals[2]) if len(duals) > 2 else None
        if lam is None or lam.size != charged.size * K:
            return None
        lam = np.maximum(lam.reshape(charged.size, K), 0.0)
        total = lam.sum(axis=1)
        fine = total > 0
        w[charged[fine]] = lam[fine] / total[fine, None]
    return min_dual_bound(model, w)


@cvxpy_dual_bound("capacity_projection")
def _projection_bound(model: Any, duals: tuple[Any, ...], _solution: Any) -> float | None:
    """D(mu) = min over the box of ||y - z||^2 + sum_g mu_g (load_g(y) - c_g) <= the optimum
    (:meth:`CapacityProjection.dual_bound`), at the multipliers of the capacities, the form's
    third constraint."""
    mu = _vector(duals[2])
    if mu is None or mu.size != model.capacity.size:
        return None
    return model.dual_bound(mu)


@cvxpy_dual_bound("linear_program")
def _standard_bound(model: Any, duals: tuple[Any, ...], solution: Any) -> float | None:
    """The Lagrangian bound (:meth:`StandardForm.lagrangian_gap`) of a continuous program at the
    multipliers of its rows. ``StandardForm.to_cvxpy`` states the column bounds, then the rows'
    lower and upper sides, each block only where a side is finite; cvxpy's multipliers are >= 0,
    so y = lambda_lower - lambda_upper in HiGHS's sign for a minimisation (its negation for a
    maximisation, whose y pulls the other way)."""
    form = model.to_standard_form()
    blocks = [(kind, np.flatnonzero(np.isfinite(side))) for kind, side in (
        ("column", form.col_lower), ("column", form.col_upper), ("lower", form.row_lower), ("upper", form.row_upper))]
    blocks = [(kind, where) for kind, where in blocks if where.size]
    if len(blocks) != len(duals):
        return None
    y = np.zeros(form.n_rows)
    for (kind, where), dual in zip(blocks, duals):
        if kind == "column":
            continue
        v = _vector(dual)
        if v is None or v.size != where.size:
            return None
        y[where] += v if kind == "lower" else -v
    return lagrangian_bound(model, model.objective(solution), np.asarray(solution, dtype=np.float64),
                            -y if form.maximize else y)


def welfare_dual_bound(model: Any, mu: float) -> float:
    """An upper bound on a ``pseudo_welfare`` job's optimum from any multiplier mu of (4):
    D(mu) = mu rho + sum_r max_{0 <= x_r <= u_r} [welfare_r(x_r) - mu x_r] (weak duality; the
    units' maximisers are the kkt kernel's x(mu), each term bounded by its tangent at x(mu), so
    the bound holds however exact x(mu) is). At the kkt backend's mu* it equals the optimum."""
    from optsched.lazy_modules import loaded
    from optsched.solvers.pseudo_welfare_kkt import kernel_inputs

    kernel, inputs = loaded("optsched.solvers.pseudo_welfare_kkt_kernel"), kernel_inputs(model)
    mu = max(float(mu), 0.0)
    x = kernel.allocation_at(mu, *inputs)
    # plus the units' tangent slack: an inexact maximiser (capacities of 1e-10) made D(mu) 8 %
    # low, below a feasible point's welfare
    return mu * float(model.rho) + model.objective(x) - mu * float(x.sum()) + kernel.tangent_slack(mu, x, *inputs)


