"""numba kernel of the per-slot reward (7)/(12) and its gradient (30), in one pass.

Imported only at the first evaluation (numba is heavy to import; ``cache=True`` keeps the
compiled code between runs). The formulas are those of :data:`optsched.ogasched.utilities.
UTILITY_KINDS`, written with the same operations in the same order, so the gradient is
bit-for-bit the numpy one and the reward agrees to rounding.
"""

from __future__ import annotations

import math

import numpy as np

from optsched.jit import njit

# kind codes: the order of UTILITY_KINDS (linear, log, reciprocal, poly)
LINEAR, LOG, RECIPROCAL, POLY = 0, 1, 2, 3


@njit(cache=True, inline="always")
def _log1p(y):  # pragma: no cover - numba
    """log(1 + y): libm's log on 1 + y (2-3x faster than log1p) except near 0, where the
    rounding of 1 + y would cost relative accuracy."""
    return math.log1p(y) if y < 0.01 else math.log(y + 1.0)


@njit(cache=True)
def slot_terms(x, y, port_ptr, kind_ptr, channel, beta, alpha, grad, kstar_out):  # pragma: no cover - numba
    """Gain sum_l x_l sum_{r,k} f_r^k(y), overhead sum_l x_l max_k beta_k sum_r y, and, when
    ``grad`` has as many entries as ``y``, the gradient (30) written into it (entries of ports
    with x_l = 0 are 0).

    ``y``, ``alpha``, ``grad``: flat (E K) per channel e K + k, edges sorted by port
    (``port_ptr`` is the CSR pointer of each port's edges). ``channel[kind_ptr[l, c]:
    kind_ptr[l, c + 1]]`` lists port l's channels of utility kind c (codes in the order of
    UTILITY_KINDS), so each inner loop runs one formula without branches. The port sums
    sum_r y are added edge by edge, in edge order; k*_l of (27) takes the smallest k among
    ties and is written to ``kstar_out`` (-1 for ports with x_l = 0, which are skipped: they
    contribute nothing to (8)).
    """
    L = port_ptr.size - 1
    K = beta.size
    with_grad = grad.size == y.size
    if with_grad:
        grad[:] = 0.0
    port_sum = np.empty(K)
    gain_total = 0.0
    overhead_total = 0.0
    for l in range(L):
        xl = x[l]
        kstar_out[l] = -1
        if xl == 0.0:
            continue
        for k in range(K):
            port_sum[k] = 0.0
        for e in range(port_ptr[l], port_ptr[l + 1]):
            for k in range(K):
                port_sum[k] += y[e * K + k]
        gain = 0.0
        for j in range(kind_ptr[l, LINEAR], kind_ptr[l, LINEAR + 1]):
            i = channel[j]
            a = alpha[i]
            gain += a * y[i]
            if with_grad:
                grad[i] = a
        for j in range(kind_ptr[l, LOG], kind_ptr[l, LOG + 1]):
            i = channel[j]
            a = alpha[i]
            v = y[i]
            gain += a * _log1p(v)
            if with_grad:
                grad[i] = a / (v + 1.0)
        for j in range(kind_ptr[l, RECIPROCAL], kind_ptr[l, RECIPROCAL + 1]):
            i = channel[j]
            a = alpha[i]
            v = y[i] + a
            gain += 1.0 / a - 1.0 / v
            if with_grad:
                grad[i] = 1.0 / (v * v)
        for j in range(kind_ptr[l, POLY], kind_ptr[l, POLY + 1]):
            i = channel[j]
            a = alpha[i]
            root = math.sqrt(y[i] + 1.0)
            gain += a * root - a
            if with_grad:
                grad[i] = 0.5 * a / root
        kstar = 0
        top = port_sum[0] * beta[0]
        for k in range(1, K):
            w = port_sum[k] * beta[k]
            if w > top:
                top = w
                kstar = k
        kstar_out[l] = kstar
        gain_total += xl * gain
        overhead_total += xl * top
        if with_grad:
            _finish_gradient(grad, port_ptr[l], port_ptr[l + 1], K, beta[kstar], kstar, xl)
    return gain_total, overhead_total


@njit(cache=True, inline="always")
def _finish_gradient(grad, lo, hi, K, b, kstar, xl):  # pragma: no cover - numba
    """(30) for the edges lo:hi of one port, given f' in ``grad``: subtract beta_k* on k*, times x_l."""
    for e in range(lo, hi):
        grad[e * K + kstar] -= b
        for k in range(K):
            grad[e * K + k] *= xl


@njit(cache=True)
def slot_gradient(x, y, port_ptr, kind_ptr, channel, beta, alpha, kstar, grad):  # pragma: no cover - numba
    """The gradient (30) alone, given k*_l of (27) from :func:`slot_terms` on the same (x, y):
    f' of every channel of an arrived port, no f and no port sums."""
    L = port_ptr.size - 1
    K = beta.size
    grad[:] = 0.0
    for l in range(L):
        xl = x[l]
        if xl == 0.0:
            continue
        for j in range(kind_ptr[l, LINEAR], kind_ptr[l, LINEAR + 1]):
            i = channel[j]
            grad[i] = alpha[i]
        for j in range(kind_ptr[l, LOG], kind_ptr[l, LOG + 1]):
            i = channel[j]
            grad[i] = alpha[i] / (y[i] + 1.0)
        for j in range(kind_ptr[l, RECIPROCAL], kind_ptr[l, RECIPROCAL + 1]):
            i = channel[j]
            v = y[i] + alpha[i]
            grad[i] = 1.0 / (v * v)
        for j in range(kind_ptr[l, POLY], kind_ptr[l, POLY + 1]):
            i = channel[j]
            grad[i] = 0.5 * alpha[i] / math.sqrt(y[i] + 1.0)
        _finish_gradient(grad, port_ptr[l], port_ptr[l + 1], K, beta[kstar[l]], kstar[l], xl)
