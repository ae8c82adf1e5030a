"""Exact solver of the per-job pseudo-welfare program P3 (paper 002) from its KKT conditions.

Public kernel (plain numpy, vectorised over the job's resource units R_n)::

    solve_pseudo_welfare_kkt(kind, a, beta, capacity, xbar, usage, rho, iota, upsilon, alpha=None)
        -> x                      (float64 array, one entry per unit)
    kkt_solve(...same...) -> KKTSolution(x, mu, iterations)

``kind`` holds utility codes (:data:`optsched.onsocmax.utilities.KINDS`), ``usage`` is w_r^(n).

P3: max sum_r [f_r(x_r) + beta_r x_r / C_r - int_{w_r}^{w_r + x_r} phi_r(u) du]
    s.t. sum_r x_r <= rho (4), 0 <= x_r <= xbar_r (7), and w_r + x_r <= C_r (phi = +inf above).

The objective is concave and separable; (4) is the only coupling. By (13), with the single
multiplier mu >= 0 of (4), each unit solves a 1-D problem whose marginal welfare

    d_r(x) = f_r'(x) + beta_r / C_r - phi_r(w_r + x)

is continuous and non-increasing on [0, u_r], u_r = min(xbar_r, C_r - w_r):
x_r(mu) = 0 if d_r(0) <= mu (Case II), u_r if d_r(u_r) >= mu (Case I), else the root of
d_r(x) = mu (Case III), found by safeguarded Newton inside [0, u_r] (vectorised). The total
S(mu) = sum_r x_r(mu) is non-increasing. If S(0) <= rho, mu* = 0. Otherwise mu* is found in
the bracket [0, max_r d_r(0)] by Newton on S(mu) = rho (dS/dmu = sum of 1/d_r'(x_r) over the
interior units), falling back to Illinois regula falsi when Newton leaves the bracket, and to
splitting at the median breakpoint (the d_r(0), d_r(u_r) where a unit changes case) or the
midpoint when S is flat or |S - rho| fails to halve in two steps (next to a breakpoint end
of the bracket first: that is where a linear unit's jump sits), until |S - rho| <= 1e-12 rho
(then x is scaled into (4)) or the bracket is 1e-13 (relative) wide. Linear utilities make d_r flat where phi_r = iota, so S can
jump at mu*: the answer is the convex combination of x(mu_hi) and x(mu_lo) whose total is
exactly rho. Every unit then meets (13) with mu* up to the bracket width, so the solution is
optimal up to rounding.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

import numpy as np

from optsched.models.base import Model
from optsched.models.pseudo_welfare import PseudoWelfare
from optsched.onsocmax import utilities
from optsched.onsocmax.prices import alpha_hat
from optsched.result import Result, Status
from optsched.solvers.registry import Backend, register_backend

NEWTON_MAX = 100
OUTER_MAX = 400
WIDTH = 1e-13  # relative bracket width on mu treated as converged
RESIDUAL = 1e-12  # relative |S(mu) - rho| accepted as the root (S is a sum of |R_n| roundings)


class KKTSolution(NamedTuple):
    x: np.ndarray
    mu: float
    iterations: int


class _Marginal:
    """d_r(x) and d_r'(x) for a set of units, with the price constants precomputed."""

    __slots__ = ("p", "ac", "b", "w", "scale", "w_hat", "iota", "alpha", "shift")

    def __init__(self, p, ac, b, w, scale, w_hat, iota, alpha):
        self.p, self.ac, self.b, self.w, self.scale, self.w_hat = p, ac, b, w, scale, w_hat
        self.iota, self.alpha, self.shift = iota, alpha, alpha / (alpha - 1.0)

    @classmethod
    def build(cls, kind, a, beta, capacity, usage, iota, alpha) -> "_Marginal":
        k = np.asarray(kind, dtype=np.int64)
        ac = np.asarray(a, dtype=np.float64) * utilities.SCALE[k]
        b = np.asarray(beta, dtype=np.float64) / capacity
        return cls(utilities.EXPONENT[k], ac, b, usage, alpha / capacity, capacity / (alpha - 1.0), iota, alpha)

    def subset(self, sel: np.ndarray) -> "_Marginal":
        return _Marginal(self.p[sel], self.ac[sel], self.b[sel], self.w[sel], self.scale[sel],
                         self.w_hat[sel], self.iota, self.alpha)

    def d(self, x: np.ndarray) -> np.ndarray:
        """d(x) = f'(x) + beta/C - phi(w + x)."""
        u = self.w + x
        rise = (self.iota / self.alpha) * (1.0 + (self.alpha - 1.0) * np.exp(self.scale * u - self.shift))
        return self.ac * (1.0 + x) ** -self.p + self.b - np.where(u < self.w_hat, self.iota, rise)

    def d_and_slope(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """d(x) and d'(x) = f''(x) - phi'(w + x), sharing the exponential and the power."""
        u = self.w + x
        e = (self.iota * (self.alpha - 1.0) / self.alpha) * np.exp(self.scale * u - self.shift)
        below = u < self.w_hat
        fp = self.ac * (1.0 + x) ** -self.p
        d = fp + self.b - np.where(below, self.iota, self.iota / self.alpha + e)
        dd = -self.p * fp / (1.0 + x) - np.where(below, 0.0, self.scale * e)
        return d, dd


def _response(
    m: _Marginal, mu: float, d0: np.ndarray, dub: np.ndarray, ub: np.ndarray, guess: np.ndarray | None
) -> tuple[np.ndarray, float, int]:
    """x_r(mu) for every unit, dS/dmu = sum over interior units of 1/d_r'(x_r) (0 if none),
    and the number of Newton sweeps. ``guess`` (a previous response) warm-starts Newton."""
    x = np.where(d0 <= mu, 0.0, ub)
    sel = np.flatnonzero((d0 > mu) & (dub < mu))
    if sel.size == 0:
        return x, 0.0, 0
    sub = m.subset(sel)
    lo = np.zeros(sel.size)
    hi = ub[sel]
    # start from the warm guess, else the secant of d between the bracket ends
    d_lo, d_hi = d0[sel], dub[sel]
    y = hi * (d_lo - mu) / (d_lo - d_hi)
    if guess is not None:
        g0 = guess[sel]
        y = np.where((g0 > lo) & (g0 < hi), g0, y)
    sweeps = 0
    dg = np.zeros(sel.size)
    for sweeps in range(1, NEWTON_MAX + 1):
        g, dg = sub.d_and_slope(y)
        g -= mu
        lo = np.where(g > 0.0, y, lo)
        hi = np.where(g < 0.0, y, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = y - g / dg
        ok = (dg < 0.0) & (step >= lo) & (step <= hi)
        new = np.where(ok, step, 0.5 * (lo + hi))
        new = np.where(g == 0.0, y, new)
        change = np.abs(new - y)
        y = new
        # a Newton step this small leaves an error of about its square; a bracket at the ulp is done
        if ((ok & (change <= 1e-9 * (1.0 + y))) | (hi - lo <= 4e-16 * (1.0 + hi))).all():
            break
    x[sel] = y
    with np.errstate(divide="ignore"):
        slope = float(np.where(dg < 0.0, 1.0 / dg, 0.0).sum())
    return x, slope, sweeps


def kkt_solve(
    kind: Any,
    a: Any,
    beta: Any,
    capacity: Any,
    xbar: Any,
    usage: Any,
    rho: float,
    iota: float,
    upsilon: float,
    alpha: float | None = None,
) -> KKTSolution:
    """Exact optimum of P3 with its multiplier mu* of (4); see the module docstring.
    Inputs are trusted (the model validates); usage <= capacity is required."""
    cap = np.asarray(capacity, dtype=np.float64)
    w = np.asarray(usage, dtype=np.float64)
    al = float(alpha_hat(upsilon / iota)) if alpha is None else float(alpha)
    m = _Marginal.build(kind, a, beta, cap, w, float(iota), al)
    ub = np.maximum(np.minimum(np.asarray(xbar, dtype=np.float64), cap - w), 0.0)
    d0 = m.d(np.zeros_like(ub))
    dub = m.d(ub)
    x0, slope, work = _response(m, 0.0, d0, dub, ub, None)
    s0 = float(x0.sum())
    if s0 <= rho:
        return KKTSolution(x0, 0.0, work)
    mu_lo, s_lo, x_lo = 0.0, s0, x0
    mu_hi = float(d0.max())
    x_hi = np.zeros_like(ub)  # d_r(0) <= mu_hi: every unit at 0
    s_hi = 0.0
    w_lo, w_hi = s_lo - rho, s_hi - rho  # Illinois weights (> 0 on the lo side, <= 0 on the hi side)
    mu, s, x, side = 0.0, s0, x0, 0
    breakpoints = np.unique(np.concatenate([d0, dub]))  # where a unit leaves 0 or reaches u_r
    on_breakpoint, lo_bp, hi_bp = False, False, True  # mu_hi = max d_r(0) is a breakpoint
    residuals = [s0 - rho]
    for _ in range(OUTER_MAX):
        if mu_hi - mu_lo <= 2.0 * WIDTH * (1.0 + mu_hi) or s_lo == s_hi:
            break
        inside = breakpoints[(breakpoints > mu_lo) & (breakpoints < mu_hi)]
        stalled = len(residuals) >= 3 and abs(residuals[-1]) > 0.5 * abs(residuals[-3])
        if slope == 0.0 or stalled:
            # S is flat at mu, or Newton keeps jumping over a discontinuity of S (a linear unit
            # jumping at its flat level): split at the median breakpoint inside the bracket, or
            # probe right next to a breakpoint end, where such a jump sits
            step = WIDTH * (1.0 + mu_hi)
            if inside.size:
                new, on_breakpoint = inside[inside.size // 2], True
            elif hi_bp and mu_hi - 2.0 * step > mu_lo:
                new, on_breakpoint = mu_hi - step, False
            elif lo_bp and mu_lo + 2.0 * step < mu_hi:
                new, on_breakpoint = mu_lo + step, False
            elif slope == 0.0 and not on_breakpoint:
                break  # S is constant on the open bracket: mu* is an end, interpolate below
            else:
                new, on_breakpoint = 0.5 * (mu_lo + mu_hi), False
        else:
            # Newton on S(mu) = rho; Illinois regula falsi when it leaves the bracket
            new, on_breakpoint = mu - (s - rho) / slope, False
            if not mu_lo < new < mu_hi:
                new = mu_lo + (mu_hi - mu_lo) * w_lo / (w_lo - w_hi)
                if not mu_lo < new < mu_hi:
                    new = 0.5 * (mu_lo + mu_hi)
        mu = float(new)
        x, slope, sweeps = _response(m, mu, d0, dub, ub, x)
        work += sweeps + 1
        s = float(x.sum())
        if abs(s - rho) <= RESIDUAL * max(rho, 1.0):  # (4) met to rounding: scale into it
            return KKTSolution(x * min(1.0, rho / s), mu, work)
        if s > rho:
            mu_lo, s_lo, x_lo, w_lo, lo_bp = mu, s, x, s - rho, on_breakpoint
            if side == -1:
                w_hi *= 0.5
            side = -1
        else:
            mu_hi, s_hi, x_hi, w_hi, hi_bp = mu, s, x, s - rho, on_breakpoint
            if side == 1:
                w_lo *= 0.5
            side = 1
        residuals.append(s - rho)
    theta = (rho - s_hi) / (s_lo - s_hi) if s_lo > s_hi else 0.0
    x = x_hi + theta * (x_lo - x_hi)
    total = float(x.sum())
    if total > rho:  # rounding in the combination: scale back into (4), staying inside (7)
        x = x * (rho / total)
    return KKTSolution(x, mu_hi, work)


def solve_pseudo_welfare_kkt(
    kind: Any,
    a: Any,
    beta: Any,
    capacity: Any,
    xbar: Any,
    usage: Any,
    rho: float,
    iota: float,
    upsilon: float,
    alpha: float | None = None,
) -> np.ndarray:
    """The optimal x of P3 (see :func:`kkt_solve`)."""
    return kkt_solve(kind, a, beta, capacity, xbar, usage, rho, iota, upsilon, alpha).x


@register_backend
class PseudoWelfareKKTBackend(Backend):
    NAME = "kkt"
    DESCRIPTION = "exact P3 of paper 002: bisection-type search on the multiplier of (4), per-unit Newton"
    EXACT = True
    MODELS = frozenset({PseudoWelfare.name})
    PRIORITY = 0
    OPTIONS: Mapping[str, Any] = {}

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any]) -> Result:
        assert isinstance(model, PseudoWelfare)
        sol = kkt_solve(*model.kernel_args())
        return Result(
            status=Status.OPTIMAL,
            model=model.name,
            backend=self.NAME,
            objective=model.objective(sol.x),
            solution=sol.x,
            iterations=sol.iterations,
            extra={"mu": sol.mu},
        )
