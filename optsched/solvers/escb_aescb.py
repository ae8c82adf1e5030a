"""``aescb``: the AESCB route of paper 000 to the ESCB index P3 (approximate, with a bound).

Scale with ceilings (13)-(14): Upsilon_e = ceil(xi * mean_e), Sigma2_e = ceil(xi^2 variance_e);
solve P4(s) for every s = 0..S by Algorithm 2 (``budget_dp``); return x*_{P4}(s*) with
s* = argmax_s s + sqrt(V(s)) (17). Option ``method``: ``envelope`` (default) computes only the
member s* (the pruned DP of :func:`envelope_pick`, same s* and x as the whole family);
``reach``, ``pareto``, ``dense`` solve the whole family first. Option ``family_backend``
solves the family with another ``budget_family`` backend instead of the DP (``budget_exact``:
one exact solve per budget), to check the DP inside a policy's loop.

Guarantee (Theorem 1, redone with both ceilings): if S >= Upsilon.x for an optimal x of P3 (the
default S = sum of Upsilon always is), then for the returned x with |x| chosen items

    OPT - (mean.x + sqrt(variance.x)) <= (|x| + sqrt(|x|)) / xi,

because xi*OPT <= s* + sqrt(V(s*)) <= Upsilon.x + sqrt(Sigma2.x)
<= xi*mean.x + |x| + xi*sqrt(variance.x) + sqrt(|x|). The paper's (32) states |x| / xi <= delta(t)
and drops the sqrt(|x|) / xi that the ceiling in (14) adds. ``Result.bound`` is this upper bound
on OPT.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.result import Result, Termination
from optsched.solvers.budget_dp import (DEFAULT_MAX_CELLS, DP_METHODS, FamilyPlan, Stopped, TableTooLarge, buffer,
                                       capacity_cells, fill_fronts, plan_budget_family, run_stoppable,
                                       solve_budget_family, visited_cells)
from optsched.solvers.registry import Backend, Option, PrepareFn, check_exact_backend_option, register_backend


def theorem1_gap(n_chosen: int, xi: int) -> float:
    """(|x| + sqrt(|x|)) / xi: how far below the P3 optimum the AESCB value can be."""
    return (n_chosen + math.sqrt(n_chosen)) / xi



# Upsilon and Sigma2 are the DP's int64 budgets and values; they and their sums stay below this
# (beyond it the sums wrapped: a max_budget of -7.2e18 at means of 1e17 and xi = 32).
INTEGER_LIMIT = 2.0**62


def largest_xi(mean: np.ndarray, variance: np.ndarray) -> float:
    """The largest xi whose Upsilon (13) and Sigma2 (14), and their sums, stay below
    :data:`INTEGER_LIMIT` (each ceiling adds less than 1); inf for all-zero data."""
    n = float(np.asarray(mean).shape[0])
    m, v = float(np.sum(mean)), float(np.sum(variance))
    by_mean = (INTEGER_LIMIT - n) / m if m > 0 else math.inf
    by_variance = math.sqrt((INTEGER_LIMIT - n) / v) if v > 0 else math.inf
    return min(by_mean, by_variance)


def escb_scaled_coefficients(mean: np.ndarray, variance: np.ndarray, xi: int) -> tuple[np.ndarray, np.ndarray]:
    """Upsilon_e = ceil(xi * mean_e) (13) and Sigma2_e = ceil(xi^2 * variance_e) (14), as integers;
    ValueError naming xi when they would not fit the DP's integers (:func:`largest_xi`)."""
    mean, variance = np.asarray(mean, dtype=np.float64), np.asarray(variance, dtype=np.float64)
    top = largest_xi(mean, variance)
    if xi > top:
        raise ValueError(f"xi: {xi} scales these means and variances beyond the DP's integers (2^62); "
                         + (f"at most {math.floor(top)} fits them" if top >= 1 else "even xi = 1 does not fit them"))
    return np.ceil(xi * mean).astype(np.int64), np.ceil(float(xi) ** 2 * variance).astype(np.int64)


def envelope_pick(plan: FamilyPlan, max_cells: float = DEFAULT_MAX_CELLS, *,
                  stop: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, float]]:
    """x*_{P4}(s*) of (17) without solving every budget: the pruned Pareto DP.

    ESDP needs one member of the family: s* = argmax_s s + sqrt(V(s)) (the smallest s on
    ties) and the x the full DP (method ``reach`` or ``pareto``) returns for it. Both are
    reproduced exactly, from a DP that keeps only the points of each front that can still
    reach the best score. Requires values >= 0 (Sigma2 of (14)).

    Notation: F(c, i) is the exact front of cell (c, i) (the Pareto points (u, v), u capped at
    S, of the completions by items i..n-1 within capacity c); phi(u, v) = u + sqrt(v), all in
    float64 exactly as ``aescb_index`` computes the score.

    1. The pick is a root point. On a step (u_{p-1}, u_p] of V the score s + sqrt(v_p) grows
       with s, so the argmax of (17) is the right end u_p of a step, i.e. a point p of
       F(capacity, 0) with the largest phi (the smallest u_p on ties), and the full DP returns
       the x of that point.
    2. Prefix bounds. For every visited cell g = (c, i), bu[g] and bv[g] are the largest
       budget_coeffs.y and values.y over the prefixes y (items 0..i-1) whose path from the
       root reaches g, each maximised on its own (``prefix_bounds``). They satisfy
       bu[skip child] >= bu[g], bu[take child] >= bu[g] + b_i (the same for bv), since those
       transitions are among the maxima. bound_g(u, v) = min(bu[g] + u, S) + sqrt(bv[g] + v)
       is therefore >= phi of every root point that extends (u, v) from g, and the bound of a
       point's source in a child is >= its own bound (min, + and sqrt are monotone, also in
       rounded arithmetic; values are whole numbers, so the sums are exact).
    3. Incumbent. phi of any feasible x is <= the best root score. ``scalar_pick`` gives a few
       such x (max budget_coeffs.x + lam values.x for lam = 0 and tangents of the sqrt at the
       current x), and the threshold is the best of them minus a margin of 1e-9 relative.
    4. Pruning. Each cell keeps the points of its merged front with bound >= threshold. By
       induction from level n, the kept set of cell g is exactly F(g) restricted to bound >=
       threshold: a point of F(g) with bound >= threshold has its source in F(child) with a
       bound at least as large, so it was kept there, and no kept candidate dominates it (it
       is on the exact front); a kept point dominated by an exact point q would see q among
       the candidates too (bound(q) >= bound(point)), so it is dropped. Ties between the skip
       and the take branch are broken as in the full DP (skip on equal (u, v)), so the source
       of each kept point is the same point (u, v) as in the full DP.
    5. At the root bu = bv = 0, so the kept points are exactly the root points with
       phi >= threshold, which include every point of the largest score; the argmax over
       them (smallest u on ties) is the full DP's s*, and the pointer walk from it passes
       through kept points only (each has bound >= phi* >= threshold), giving the same x.

    Returns x over the plan's kept items and counters (points kept, incumbent, best score);
    :class:`~optsched.solvers.budget_dp.Stopped` once ``stop`` is set.
    """
    from optsched.solvers import budget_dp_kernel as kernel

    n = plan.items.shape[0]
    S = plan.max_budget
    if n == 0:
        return np.zeros(0, dtype=bool), {"points": 1, "incumbent": 0.0, "score": 0.0}
    visited = visited_cells(plan, stop)
    level_start, child_skip, child_take = visited[:3]
    h = buffer("h", visited[-1], np.float64)
    b, vals = plan.budget_coeffs, plan.values
    incumbent, lam, seen = -np.inf, 0.0, set()
    for _ in range(4):
        if lam in seen:
            break
        seen.add(lam)
        x = kernel.scalar_pick(vals, b, level_start, child_skip, child_take, lam, h)
        u, v = int(b @ x), float(vals @ x)
        incumbent = max(incumbent, min(u, S) + math.sqrt(v))
        lam = 0.5 / math.sqrt(v) if v > 0 else 0.0
    threshold = incumbent - 1e-9 * max(1.0, abs(incumbent))
    pu, pv, pref, root_start, root_len, used = fill_fronts(plan, max_cells, visited, True, threshold, stop)
    x, u, v = kernel.front_pick(n, pu, pv, pref, root_start, root_len)
    return x, {"points": int(used), "incumbent": incumbent, "score": float(u + math.sqrt(v))}


def aescb_index(
    mean: Any,
    variance: Any,
    weights: Any,
    capacity: Any,
    xi: int,
    max_budget: int | None = None,
    mask: Any = None,
    method: str = "envelope",
    *,
    stop: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """The AESCB route to P3: max mean.x + sqrt(variance.x) s.t. W x <= capacity, x binary.

    Scales with ceilings (13)-(14), solves P4(s) for s = 0..S by :func:`solve_budget_family`
    and returns x = x*_{P4}(s*) with s* = argmax_s s + sqrt(V(s)) (17) (the smallest such s on
    ties), together with its unscaled P3 value mean.x + sqrt(variance.x).

    ``method``: "envelope" (default) computes only that member, by :func:`envelope_pick`
    (exact: the same s* and x as the full family by "reach" or "pareto"); a DP method name
    ("reach", "pareto", "dense") solves the whole family first.

    ``max_budget`` S defaults to the sum of all Upsilon_e (every reachable budget); ESDP passes
    xi * m. Guarantee (Theorem 1 with the ceilings): when S >= Upsilon.x for an optimal x of P3,
    value >= OPT - (|x| + sqrt(|x|)) / xi, with |x| the number of chosen items.
    ``stop``: the DP's stop flag (:func:`~optsched.solvers.budget_dp.run_stoppable`).
    """
    if isinstance(xi, bool) or not float(xi).is_integer() or xi < 1:
        raise ValueError(f"xi: expected a whole number >= 1, got {xi!r}")
    mu = np.asarray(mean, dtype=np.float64)
    var = np.asarray(variance, dtype=np.float64)
    if mu.ndim != 1 or not np.all(np.isfinite(mu)) or np.any(mu < 0):
        raise ValueError("mean: expected a vector of finite numbers >= 0")
    if var.shape != mu.shape or not np.all(np.isfinite(var)) or np.any(var < 0):
        raise ValueError(f"variance: expected a vector of {mu.shape[0]} finite numbers >= 0")
    if method != "envelope" and method not in DP_METHODS:
        raise ValueError(f"method: unknown method {method!r} (known: envelope, {', '.join(DP_METHODS)})")
    upsilon, sigma2 = escb_scaled_coefficients(mu, var, int(xi))
    S = int(upsilon.sum()) if max_budget is None else max_budget
    if method == "envelope":
        plan = plan_budget_family(sigma2.astype(np.float64), weights, capacity, upsilon, S, mask)
        x = np.zeros(mu.shape[0], dtype=bool)
        x[plan.items] = envelope_pick(plan, stop=stop)[0]
    else:
        fam = solve_budget_family(sigma2.astype(np.float64), weights, capacity, upsilon, S, mask, method=method,
                                  stop=stop)
        x = fam.choices[pick_budget(fam.values)]
    return x, float(mu @ x + math.sqrt(float(var @ x)))


def pick_budget(values: np.ndarray) -> int:
    """s* = argmax_s s + sqrt(V(s)) of (17) over the feasible budgets (the smallest on ties);
    ``values[s]`` is V(s), -inf (or NaN) where P4(s) is infeasible."""
    values = np.asarray(values, dtype=np.float64)
    feasible = np.isfinite(values)
    score = np.arange(values.shape[0]) + np.sqrt(np.where(feasible, values, 0.0))
    score[~feasible] = -np.inf
    return int(np.argmax(score))

@register_backend
class AescbBackend(Backend):
    NAME = "aescb"
    DESCRIPTION = "AESCB route of paper 000: scale (13)-(14), DP over every budget, pick s* (17); not exact"
    EXACT = False
    COMPILED = True
    SUPPORTS_TIME_LIMIT = True  # the DP's kernels poll a stop flag; family_backend gets the limit
    MODELS = frozenset({"escb_index"})
    PRIORITY = 40
    REQUIRES = ("numba",)
    OPTIONS: Mapping[str, Option] = {
        "xi": Option(32, int, "scaling xi of (13)-(14)", minimum=1, maximum=2**20),
        "max_budget": Option(None, int, "largest budget S of the family (default: sum of Upsilon)", minimum=0,
                             maximum=2**62, nullable=True),
        "method": Option("envelope", str, "DP route: envelope (only s*) or a whole-family DP method",
                         choices=("envelope", *DP_METHODS)),
        "family_backend": Option("dp", str, "budget_family backend of the family (dp: Algorithm 2)", per_solve=False),
    }

    def check_option_values(self, options: Mapping[str, Any]) -> None:
        from optsched.models.budget_family import BudgetFamily

        check_exact_backend_option(self.NAME, "family_backend", options["family_backend"], BudgetFamily)

    def fits_instance(self, model: Model) -> str | None:
        m: Any = model
        if not m.is_integral:
            return "aescb: weights and capacity must be whole numbers"
        if max(float(np.max(m.weights, initial=0.0)), float(np.max(m.capacity, initial=0.0))) >= 2.0**63:
            return "aescb: weights and capacity must be below 2^63 (the DP's integers)"
        if largest_xi(m.mean, m.variance) < 1:
            return "aescb: the means and variances scaled by (13)-(14) pass the DP's integers (2^62) even at xi = 1"
        return None

    def fits_with(self, model: Model, options: Mapping[str, Any]) -> str | None:
        """The DP route's table (family_backend dp) within its cell limit: a_max = 100 made ESDP's
        slots need 1.2e9 capacity cells, and each slot failed in the policy's loop."""
        if options["family_backend"] != "dp":
            return None
        cells = self._cells(model)
        if cells <= DEFAULT_MAX_CELLS:
            return None
        return (f"aescb: the DP of Algorithm 2 needs {cells:.3g} capacity cells for this instance, above its limit of "
                f"{DEFAULT_MAX_CELLS:.3g} (escb_oa solves it exactly; family_backend=budget_exact one budget at a time)")

    @staticmethod
    def _cells(model: Any) -> float:
        """The capacity cells of the DP's table (:func:`~optsched.solvers.budget_dp.capacity_cells`)."""
        return model.memo("capacity_cells", lambda: capacity_cells(model.weights, model.capacity))

    def new_state(self, kind: type[Model], options: Mapping[str, Any], *, prepare: PrepareFn) -> Any:
        if options["family_backend"] == "dp":
            return None
        return prepare("budget_family", options["family_backend"], verify=False)

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        m: Any = model
        xi = int(options["xi"])
        top = largest_xi(m.mean, m.variance)
        if xi > top:  # the instance fits at xi = 1 (fits_instance), not at this xi: a status, not a raise
            return Result(Termination.ERROR, extra={"message": f"xi: {xi} scales these means and variances beyond the "
                                                               f"DP's integers (2^62); at most {math.floor(top)} fits them"})
        if options["family_backend"] == "dp":
            try:
                budgets = (escb_scaled_coefficients(m.mean, m.variance, xi)[0].sum() if options["max_budget"] is None
                           else options["max_budget"]) + 1
                x, value = run_stoppable(lambda stop: aescb_index(
                    m.mean, m.variance, m.weights, m.capacity, xi, options["max_budget"], method=options["method"],
                    stop=stop), time_limit, capacity_cells=self._cells(m), dense_cells=self._cells(m) * float(budgets))
            except TableTooLarge as exc:  # as the dp backend: the table this instance needs, a status
                return Result(Termination.ERROR, extra={"message": f"{exc} (max_table_cells of the DP)"})
            except Stopped:
                return Result(Termination.TIME_LIMIT, extra={"message": f"aescb: the DP was not done within the "
                                                                        f"time limit of {time_limit:g} s"})
            exact = True
        else:
            picked = self._by_family(m, xi, options["max_budget"], state, time_limit)  # the family backend (new_state)
            if isinstance(picked, Result):
                return picked
            x, value, exact = picked
        chosen = int(x.sum())
        # Theorem 1 bounds the index of the exactly solved family's pick
        bound = value + theorem1_gap(chosen, xi) if options["max_budget"] is None and exact else None
        return Result(Termination.FEASIBLE, objective=value, bound=bound, solution=m.solution_from_vector(x),
                      extra={"xi": xi})

    @staticmethod
    def _by_family(m: Any, xi: int, max_budget: int | None, family: Any,
                   time_limit: float | None) -> tuple[np.ndarray, float, bool] | Result:
        """(x*_{P4}(s*), its index, whether the family was solved to optimality) with the family
        solved by a prepared ``budget_family`` backend within ``time_limit``; the result to
        report (error, time limit) when it gave no solution."""
        from optsched.models.budget_family import BudgetFamily

        upsilon, sigma2 = escb_scaled_coefficients(m.mean, m.variance, xi)
        S = int(upsilon.sum()) if max_budget is None else max_budget
        fam = BudgetFamily(sigma2.astype(np.float64), m.weights, m.capacity, upsilon, S)
        refused = family.fits(fam)
        if refused is not None:
            return Result(Termination.ERROR, extra={
                "message": f"the family backend {family.name!r} does not take the scaled family: {refused}"})
        r = family.solve(fam, time_limit=time_limit)
        if not r.ok:
            return Result(Termination.TIME_LIMIT if r.termination is Termination.TIME_LIMIT else Termination.ERROR,
                          extra={"message": f"the budget family by {family.name!r} ended {r.termination.value}: {r.message}"})
        values = np.array([-np.inf if v is None else v for v in r.extra["values"]])
        x = np.zeros(m.n_items, dtype=bool)
        x[np.asarray(r.solution[pick_budget(values)], dtype=np.int64)] = True
        return x, float(m.mean @ x + math.sqrt(float(m.variance @ x))), r.termination is Termination.OPTIMAL
