"""First-order solver of y* of (10) (model ``stationary_allocation``) with a duality-gap certificate.

The max over k in (7) makes Q nonsmooth, and at y* most ports have several resources tied
at that max (measured: 3 to 6 of the K = 6 for 96 of the 100 ports of the ``large``
preset), so a
plain projected supergradient stalls (0.2-2.5 % below the optimum). The method here is an
augmented Lagrangian of the epigraph form

    max_{y in Y, t}  sum_i w_i f_i(y_i) - sum_l t_l   s.t.  o_lk S_lk(y) <= t_l,

with multipliers v_l in the simplex (scaled by o_l's largest entry); t is maximised in closed
form, which leaves the smooth function Psi of
:func:`optsched.solvers.stationary_allocation_kernel.smoothed` (the max replaced by its
proximal smoothing around the current multipliers w0; exact again when w0 is optimal):

1. inner: maximise Psi over Y by spectral projected gradient (Barzilai-Borwein steps, a
   non-monotone Armijo search backtracking by safeguarded quadratic interpolation;
   :func:`optsched.solvers.stationary_allocation_kernel.spg`), every step the exact
   projection (32) of the ``fast`` backend (its compiled kernel, the one behind
   :func:`optsched.solvers.projection_fast.project_capacity`). Variables are
   rescaled per group (node, resource) by the local curvature; a scale constant on a group
   keeps the projection a capacity projection, so the exact kernel still applies. An inner
   solve ends when its projected gradient has shrunk ``INNER_REDUCTION``-fold or after
   ``inner_steps`` * (1 + outer / 10) steps, that budget doubled each time the certified gap
   stalls while inner solves run out of it (``BUDGET_STALL``);
2. outer: w0 <- Pi_simplex(w0 + rho / o_l,max * o_l * S_l(y)) (the multiplier update); rho
   doubles when the multipliers crawl (``RHO_STALL``: an LP-like near-tie of linear utilities);
3. certificate after every outer step: LB = Q(y) (y in Y), UB = min_mu D(w0, mu) of the
   Lagrangian dual (:meth:`StationaryAllocation.dual_bound`, mu per group by a safeguarded
   regula falsi). The time limit is checked between outer steps, and an inner solve under it
   takes no more steps than the time left holds at the rate of the steps so far.

It stops when UB - LB <= ``gap_tol`` * max(s, |LB|), s = 1 or the model's smaller scale
(``Model.objective_magnitude``, the seam's rule): the answer is then proven optimal to
that relative tolerance (status ``optimal``, ``bound`` = UB). Otherwise, after ``max_outer``
steps or at the time limit, it returns the best point with its bound (``feasible`` /
``time_limit``). Measured against cvxpy/Clarabel in ``benchmarks/bench_ogasched.py`` and
``docs/ogasched.md``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.result import Result, Termination, agreement_floor
from optsched.solvers.registry import Backend, Option, register_backend

INNER_REDUCTION = 0.05  # an inner solve ends when its projected gradient is 1/20 of its first
RHO_STALL = (0.95, 3)  # rho doubles after 3 multiplier steps in a row each > 0.95 of the previous
RHO_GROWTH_CAP = 1e6
# the inner budget doubles when the certified gap has not halved over the last 5 outer steps and
# the last inner solve used its whole budget, at most to 64 times the base budget. Inner solves
# too inexact for the ALM's multipliers left its bound 5e-7 to 2e-4 above the optimum after 500
# outer steps on 16 of 600 generated programs whose weights, alphas, overheads, capacities and
# bounds were scaled by 1e-4..1e4 (tests/test_stationary_allocation.py: scaled_program); 6 of
# 600 with this rule, their points within 4e-9 of cvxpy's optimum, their bounds 5e-7 to 2e-5 above
BUDGET_STALL = (5, 0.5)
BUDGET_GROWTH_CAP = 64


@dataclass(frozen=True)
class Certified:
    """The best point found, its objective, the best certified upper bound and its dual."""

    y: np.ndarray
    objective: float
    bound: float
    w: np.ndarray
    mu: np.ndarray
    outer: int
    inner: int
    certified: bool
    timed_out: bool


class _Program:
    """The model's arrays in the layouts the kernels take: variables sorted by utility kind
    (``order``; each kernel loop then runs one formula at a time) and the objective divided
    by ``unit`` (the mean positive weight) so that its values are O(1)."""

    def __init__(self, model: Any) -> None:
        from optsched.models.stationary_allocation import UTILITIES
        from optsched.solvers import stationary_allocation_kernel as kern

        self.k = kern
        self.order = np.lexsort((model.group, model.kind))
        positive = model.weight[model.weight > 0]
        self.unit = float(positive.mean()) if positive.size else 1.0
        self.weight = model.weight[self.order] / self.unit
        self.overhead = np.ascontiguousarray(model.overhead / self.unit)
        # the box min(u, c) (StationaryAllocation.box): requests of 1e12 beside capacities of 10
        # set rho by the requests, and the solve ran out of iterations
        self.kind, self.alpha, self.upper = model.kind[self.order], model.alpha[self.order], model.box[self.order]
        self.group, self.pair = model.group[self.order], model.pair[self.order]
        self.kind_ptr = np.searchsorted(self.kind, np.arange(len(UTILITIES) + 1))  # kind c: kind_ptr[c]:kind_ptr[c + 1]
        self.capacity = model.capacity
        self.L, self.K = model.overhead.shape
        self.port_scale = self.overhead.max(axis=1)  # o_l,max: the multipliers live in the simplex
        self.group_members = np.argsort(self.group, kind="stable")
        self.group_ptr = np.r_[0, np.cumsum(np.bincount(self.group, minlength=model.n_groups))]
        # rho is relative to the ports' reach: the largest o_lk / o_l,max * sum of the pair's bounds
        sums = kern.pair_sums(self.upper, self.pair, self.L * self.K).reshape(self.L, self.K)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(self.port_scale[:, None] > 0, self.overhead / self.port_scale[:, None], 0.0)
        reach = (rel * sums).max(axis=1)
        self.reach = float(reach[reach > 0].mean()) if (reach > 0).any() else 1.0
        # curvature the smoothed max adds along a port's channels, per unit of rho (group scaling)
        degree = np.bincount(model.port, minlength=self.L).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_pair = np.where(self.port_scale[:, None] > 0,
                                self.overhead**2 / self.port_scale[:, None] * degree[:, None], 0.0)
        self.coupling_unit = per_pair.reshape(-1)[self.pair]

    def original(self, y: np.ndarray) -> np.ndarray:
        """y in the model's variable order."""
        out = np.empty_like(y)
        out[self.order] = y
        return out

    def objective(self, y: np.ndarray) -> float:
        gain, cost = self.k.objective(y, self.kind, self.weight, self.alpha, self.pair, self.overhead)
        return gain - cost

    def bound(self, w: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        price = (self.overhead * w).reshape(-1)[self.pair]
        return self.k.dual_bound(self.kind, self.weight, self.alpha, self.upper, self.group_ptr,
                                 self.group_members, self.capacity, price)


def min_dual_bound(model: Any, w: np.ndarray) -> float:
    """min over mu >= 0 of D(w, mu) (:meth:`StationaryAllocation.dual_bound`) for port weights
    ``w`` (L, K) with rows in the simplex: an upper bound on y*'s objective."""
    prog = _Program(model)
    return prog.bound(np.ascontiguousarray(w, dtype=np.float64))[0] * prog.unit


def certified_solve(model: Any, *, gap_tol: float, rho: float, inner_steps: int, max_outer: int,
                    deadline: float = math.inf) -> Certified:
    """The method of the module docstring on one ``StationaryAllocation``."""
    prog = _Program(model)
    L, K = prog.L, prog.K
    rho_abs = rho / prog.reach
    y = np.zeros(model.n_vars)
    w0 = np.full((L, K), 1.0 / K)
    grad = np.empty_like(y)
    best_y, best_lb = y.copy(), prog.objective(y)
    best_ub, best_w, best_mu = math.inf, w0.copy(), np.zeros(model.n_groups)
    inner_total, outer, certified, timed_out = 0, 0, False, False
    # relative above the model's own scale, as the seam's rule for "optimal": at contention
    # 1e-10, Q is 1.6e-6, and a gap of 7.7e-10 (5e-4 relative) had ended the solve as certified
    floor = agreement_floor(model) / prog.unit
    step, last_move, crawl = 1.0, math.inf, 0
    gaps: list[float] = []
    growth, last_growth, inner_seconds = 1, 0, 0.0
    for outer in range(1, max_outer + 1):
        budget = growth * inner_steps * (10 + outer) // 10  # later inner solves may need more steps
        if deadline < math.inf and inner_total:  # no more steps than the time left holds at the rate so far
            left = deadline - time.perf_counter()
            budget = max(1, min(budget, int(left * inner_total / max(inner_seconds, 1e-9)) + 1))
        start = time.perf_counter()
        y, steps, step = prog.k.spg(y, prog.kind, prog.kind_ptr, prog.weight, prog.alpha, prog.upper, prog.group,
                                    prog.capacity, prog.pair, prog.overhead, prog.port_scale, w0, rho_abs,
                                    rho_abs * prog.coupling_unit, budget, INNER_REDUCTION, step, floor)
        inner_seconds += time.perf_counter() - start
        inner_total += steps
        w_new = np.empty_like(w0)
        prog.k.smoothed(y, prog.kind_ptr, prog.weight, prog.alpha, prog.pair, prog.overhead, prog.port_scale, w0,
                        rho_abs, np.ones_like(y), grad, w_new)
        move = float(np.abs(w_new - w0).max())
        w0 = w_new
        lb = prog.objective(y)
        if lb > best_lb:
            best_y, best_lb = y.copy(), lb
        ub, mu, _ = prog.bound(w0)
        if ub < best_ub:
            best_ub, best_w, best_mu = ub, w0.copy(), mu
        if best_ub - best_lb <= gap_tol * max(floor, abs(best_lb)):
            certified = True
            break
        gaps.append(best_ub - best_lb)
        window, shrink = BUDGET_STALL
        if (steps >= budget and growth < BUDGET_GROWTH_CAP and outer - last_growth >= window
                and len(gaps) > window and gaps[-1] > shrink * gaps[-1 - window]):
            growth, last_growth = 2 * growth, outer
        if time.perf_counter() > deadline:
            timed_out = True
            break
        crawl = crawl + 1 if move > RHO_STALL[0] * last_move else 0
        if crawl >= RHO_STALL[1]:  # the multipliers crawl (a near-tie of an LP-like part)
            rho_abs, crawl = min(rho_abs * 2.0, RHO_GROWTH_CAP * rho / prog.reach), 0
        last_move = move
    return Certified(prog.original(best_y), best_lb * prog.unit, best_ub * prog.unit, best_w, best_mu * prog.unit, outer,
                     inner_total, certified, timed_out)


@register_backend
class StationaryALMBackend(Backend):
    NAME = "stationary_alm"
    DESCRIPTION = ("y* of (10) of paper 003: augmented Lagrangian on the epigraph of the max, spectral projected "
                   "gradient with the exact fast projection; optimal when the duality gap is certified")
    EXACT = True
    COMPILED = True
    MODELS = frozenset({"stationary_allocation"})
    PRIORITY = 0
    SUPPORTS_TIME_LIMIT = True
    OPTIONS: Mapping[str, Option] = {
        "gap_tol": Option(5e-7, float, "certified relative duality gap at which it stops (optimal)", minimum=0.0,
                          maximum=1.0, open_minimum=True),
        "rho": Option(10.0, float, "penalty of the augmented Lagrangian", minimum=0.0, open_minimum=True),
        "inner_steps": Option(40, int, "projected gradient steps per outer iteration", minimum=1),
        "max_outer": Option(500, int, "outer iterations before stopping", minimum=1),
    }

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        from optsched.models.stationary_allocation import StationaryAllocation

        assert isinstance(model, StationaryAllocation)
        deadline = math.inf if time_limit is None else time.perf_counter() + time_limit
        sol = certified_solve(model, gap_tol=float(options["gap_tol"]), rho=float(options["rho"]),
                              inner_steps=int(options["inner_steps"]), max_outer=int(options["max_outer"]),
                              deadline=deadline)
        termination = (Termination.OPTIMAL if sol.certified else Termination.TIME_LIMIT if sol.timed_out
                       else Termination.ITERATION_LIMIT)
        gap = sol.bound - sol.objective
        return Result(termination, bound=sol.bound, solution=sol.y, iterations=sol.outer,
                      extra={"duality_gap": gap, "relative_gap": gap / max(agreement_floor(model), abs(sol.objective)),
                             "inner_steps": sol.inner, "w": sol.w, "mu": sol.mu})
