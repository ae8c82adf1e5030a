"""Exact solver of the per-job pseudo-welfare program P3 (paper 002) from its KKT conditions.

Public kernel (a numba-compiled loop over the job's resource units R_n; numba is imported
on the first call, not with optsched)::

    kkt_solve(kind, a, beta, capacity, xbar, usage, rho, iota, upsilon, alpha=None)
        -> KKTSolution(x, mu, iterations)     (x: float64 array, one entry per unit)

``kind`` holds utility codes (:data:`optsched.models.utilities.KINDS`), ``usage`` is w_r^(n).

P3: max sum_r [f_r(x_r) + beta_r x_r / C_r - int_{w_r}^{w_r + x_r} phi_r(u) du]
    s.t. sum_r x_r <= rho (4), 0 <= x_r <= xbar_r (7), and w_r + x_r <= C_r (phi = +inf above).

The objective is concave and separable; (4) is the only coupling. By (13), with the single
multiplier mu >= 0 of (4), each unit solves a 1-D problem whose marginal welfare

    d_r(x) = f_r'(x) + beta_r / C_r - phi_r(w_r + x)

is continuous and non-increasing on [0, u_r], u_r = min(xbar_r, C_r - w_r):
x_r(mu) = 0 if d_r(0) <= mu (Case II), u_r if d_r(u_r) >= mu (Case I), else the root of
d_r(x) = mu (Case III). The root is in closed form below the price threshold
w_hat_r = C_r/(alpha-1) (log, sqrt) and above it for linear units; log / sqrt units above it
use a safeguarded Newton iteration in [x_k, u_r] (kernel module
:mod:`optsched.solvers.pseudo_welfare_kkt_kernel`). Where d_r is flat (a linear unit below
w_hat) the smallest maximiser is taken, so x_r(mu) = min {x : d_r(x) <= mu}.

The total S(mu) = sum_r x_r(mu) is non-increasing. If S(0) <= rho, mu* = 0. Otherwise:

1. S is smooth between the breakpoints d_r(0), d_r(x_k) (the kink at w_hat) and d_r(u_r), and
   jumps only at the flat level d_r(0) of a linear unit. Bisection over the sorted breakpoints
   (about log2(3 |R_n|) evaluations of S) finds the interval (b_lo, b_hi] holding mu*.
2. If the left limit of S at b_hi (linear units at that flat level filled to their flat end)
   reaches rho, mu* = b_hi and x is the convex combination of the two limits with total
   exactly rho (a jump of S; ties among linear units share it in proportion).
3. Otherwise mu* is inside (b_lo, b_hi), where S is smooth and strictly decreasing: Newton on
   S(mu) = rho (dS/dmu = sum of 1/d_r'(x_r) over the interior units), Illinois regula falsi
   when a step leaves the bracket, until |S - rho| <= 1e-12 rho (x is then scaled into (4))
   or the bracket is 1e-13 (relative) wide (x is then the combination of its ends with
   total rho).

Every unit then meets (13) with mu* up to rounding, so the solution is optimal up to rounding.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

import numpy as np

from optsched.models.base import Model
from optsched.models.pseudo_welfare import PseudoWelfare
from optsched.models.prices import alpha_hat
from optsched.result import Result, Termination
from optsched.solvers.registry import Backend, Option, register_backend


class KKTSolution(NamedTuple):
    x: np.ndarray
    mu: float
    iterations: int  # evaluations of S(mu) (passes over the units)


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
    from optsched.solvers import pseudo_welfare_kkt_kernel as kernel

    al = float(alpha_hat(upsilon / iota)) if alpha is None else float(alpha)
    # fresh, writeable, contiguous arrays: one compiled specialisation for every caller
    x, mu, evals = kernel.kkt_kernel(
        np.array(kind, dtype=np.int64), np.array(a, dtype=np.float64), np.array(beta, dtype=np.float64),
        np.array(capacity, dtype=np.float64), np.array(xbar, dtype=np.float64),
        np.array(usage, dtype=np.float64), float(rho), float(iota), al,
    )
    return KKTSolution(x, float(mu), int(evals))


def kernel_inputs(model: Any) -> tuple[Any, ...]:
    """(kind, a, beta, capacity, xbar, usage, iota, alpha) of a ``pseudo_welfare`` job as
    :func:`~optsched.solvers.pseudo_welfare_kkt_kernel.allocation_at` takes them."""
    kind, a, beta, capacity, xbar, usage, _rho, iota, upsilon, alpha = model.kernel_args()
    al = float(alpha_hat(upsilon / iota)) if alpha is None else float(alpha)
    return (np.array(kind, dtype=np.int64), np.array(a, dtype=np.float64), np.array(beta, dtype=np.float64),
            np.array(capacity, dtype=np.float64), np.array(xbar, dtype=np.float64),
            np.array(usage, dtype=np.float64), float(iota), al)


@register_backend
class PseudoWelfareKKTBackend(Backend):
    NAME = "kkt"
    DESCRIPTION = ("exact P3 of paper 002: breakpoint bisection + Newton on the multiplier of (4), "
                   "closed-form or 1-D Newton per unit (numba)")
    EXACT = True
    COMPILED = True
    REQUIRES = ("numba",)
    MODELS = frozenset({PseudoWelfare.name})
    PRIORITY = 0
    OPTIONS: Mapping[str, Option] = {}

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        assert isinstance(model, PseudoWelfare)
        from optsched.solvers.certificates import welfare_dual_bound

        sol = kkt_solve(*model.kernel_args())
        bound = welfare_dual_bound(model, sol.mu)  # D(mu*): the optimum, proven by weak duality
        return Result(Termination.OPTIMAL, bound=bound, solution=sol.x, iterations=sol.iterations, extra={"mu": sol.mu})
