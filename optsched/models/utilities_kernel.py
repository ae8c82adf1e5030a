"""numba scalars of the utilities (54) of paper 003: the one compiled copy of the formulas of
:data:`optsched.models.stationary_allocation.UTILITIES` (numpy), which the per-slot reward and
gradient (:mod:`optsched.ogasched.utility_kernel`) and the first-order solver of y*
(:mod:`optsched.solvers.stationary_allocation_kernel`) inline. ``code`` is the kind's index in
that table: 0 linear, 1 log, 2 reciprocal, 3 poly; called with a constant code, the compiled
loop runs one formula without a branch.

Imported only with those kernels (numba is heavy to import).
"""

from __future__ import annotations

import math

from optsched.jit import njit

LINEAR, LOG, RECIPROCAL, POLY = 0, 1, 2, 3


@njit(cache=True, inline="always")
def value(code, y, a):  # pragma: no cover - numba
    """f(y) with coefficient a."""
    if code == LINEAR:
        return a * y
    if code == LOG:  # libm's log on 1 + y (2-3x faster than log1p) except near 0, where 1 + y rounds
        return a * (math.log1p(y) if y < 0.01 else math.log(y + 1.0))
    if code == RECIPROCAL:  # 1/a - 1/(y + a) and a (sqrt(y + 1) - 1) without their cancellation (finite y >= 0)
        return (y / (y + a)) / a
    return a * (y / (math.sqrt(y + 1.0) + 1.0))


@njit(cache=True, inline="always")
def slope(code, y, a):  # pragma: no cover - numba
    """f'(y)."""
    if code == LINEAR:
        return a
    if code == LOG:
        return a / (y + 1.0)
    if code == RECIPROCAL:
        v = y + a
        return 1.0 / (v * v)
    return 0.5 * a / math.sqrt(y + 1.0)


@njit(cache=True, inline="always")
def curvature(code, y, a):  # pragma: no cover - numba
    """-f''(y) >= 0."""
    if code == LINEAR:
        return 0.0
    if code == LOG:
        v = y + 1.0
        return a / (v * v)
    if code == RECIPROCAL:
        v = y + a
        return 2.0 / (v * v * v)
    v = y + 1.0
    return 0.25 * a / (v * math.sqrt(v))


@njit(cache=True, inline="always")
def response(code, w, a, u, q):  # pragma: no cover - numba
    """argmax_{0 <= y <= u} w f(y) - q y (q >= 0): w f'(y) = q, clipped into [0, u]."""
    if w <= 0.0:
        return 0.0
    if q <= 0.0:
        return u
    r = q / w
    if code == LINEAR:
        y = u if a > r else 0.0
    elif code == LOG:
        y = a / r - 1.0
    elif code == RECIPROCAL:
        y = 1.0 / math.sqrt(r) - a
    else:
        h = 0.5 * a / r
        y = h * h - 1.0
    if y < 0.0:
        return 0.0
    return u if y > u else y
