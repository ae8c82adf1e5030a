"""numba kernels of the per-slot reward (7)/(12) and of its gradient (30).

Imported only at the first evaluation (numba is heavy to import; ``cache=True`` keeps the
compiled code between runs). Each utility's f and f' are those of
:mod:`optsched.models.utilities_kernel` (the compiled copy of :data:`optsched.ogasched.utilities.
UTILITY_KINDS`), inlined with a constant kind in each loop.
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit
from optsched.models import utilities_kernel as utility
from optsched.models.utilities_kernel import LINEAR, LOG, POLY, RECIPROCAL

# numba caches a kernel by its own file only: the text of the kernels compiled into this one,
# whose change must rebuild it (tests/test_kernel_stamps.py; an edit of this stamp edits this file)
COMPILED_WITH = {"optsched.models.utilities_kernel": "eadebf9d2282376d"}


@njit(cache=True)
def slot_terms(x, y, port_ptr, kind_ptr, channel, beta, alpha):  # pragma: no cover - numba
    """Gain sum_l x_l sum_{r,k} f_r^k(y) and overhead sum_l x_l max_k beta_k sum_r y.

    ``y``, ``alpha``: flat (E K) per channel e K + k, edges sorted by port (``port_ptr`` is the
    CSR pointer of each port's edges). ``channel[kind_ptr[l, c]:kind_ptr[l, c + 1]]`` lists
    port l's channels of utility kind c (codes in the order of UTILITY_KINDS), so each inner
    loop runs one formula without branches. Ports with x_l = 0 are skipped: they contribute
    nothing to (8).
    """
    L = port_ptr.size - 1
    K = beta.size
    port_sum = np.empty(K)
    gain_total = 0.0
    overhead_total = 0.0
    for l in range(L):
        xl = x[l]
        if xl == 0.0:
            continue
        gain = 0.0
        for j in range(kind_ptr[l, LINEAR], kind_ptr[l, LINEAR + 1]):
            i = channel[j]
            gain += utility.value(LINEAR, y[i], alpha[i])
        for j in range(kind_ptr[l, LOG], kind_ptr[l, LOG + 1]):
            i = channel[j]
            gain += utility.value(LOG, y[i], alpha[i])
        for j in range(kind_ptr[l, RECIPROCAL], kind_ptr[l, RECIPROCAL + 1]):
            i = channel[j]
            gain += utility.value(RECIPROCAL, y[i], alpha[i])
        for j in range(kind_ptr[l, POLY], kind_ptr[l, POLY + 1]):
            i = channel[j]
            gain += utility.value(POLY, y[i], alpha[i])
        kstar = _port_kstar(y, port_ptr[l], port_ptr[l + 1], beta, port_sum)
        top = port_sum[kstar] * beta[kstar]
        gain_total += xl * gain
        overhead_total += xl * top
    return gain_total, overhead_total


@njit(cache=True, inline="always")
def _port_kstar(y, lo, hi, beta, port_sum):  # pragma: no cover - numba
    """k*_l of (27) for the port whose edges are lo:hi: sum_r y_(l,r)^k added edge by edge, in
    edge order, into ``port_sum``; the smallest k among ties."""
    K = beta.size
    for k in range(K):
        port_sum[k] = 0.0
    for e in range(lo, hi):
        for k in range(K):
            port_sum[k] += y[e * K + k]
    kstar = 0
    top = port_sum[0] * beta[0]
    for k in range(1, K):
        w = port_sum[k] * beta[k]
        if w > top:
            top = w
            kstar = k
    return kstar


@njit(cache=True)
def slot_gradient(x, y, port_ptr, kind_ptr, channel, beta, alpha, grad):  # pragma: no cover - numba
    """The gradient (30) written into ``grad`` (flat like ``y``): f' of every channel of an
    arrived port, minus beta_k* on k*_l of (27), times x_l; entries of ports with x_l = 0 are 0."""
    L = port_ptr.size - 1
    K = beta.size
    port_sum = np.empty(K)
    grad[:] = 0.0
    for l in range(L):
        xl = x[l]
        if xl == 0.0:
            continue
        for j in range(kind_ptr[l, LINEAR], kind_ptr[l, LINEAR + 1]):
            i = channel[j]
            grad[i] = utility.slope(LINEAR, y[i], alpha[i])
        for j in range(kind_ptr[l, LOG], kind_ptr[l, LOG + 1]):
            i = channel[j]
            grad[i] = utility.slope(LOG, y[i], alpha[i])
        for j in range(kind_ptr[l, RECIPROCAL], kind_ptr[l, RECIPROCAL + 1]):
            i = channel[j]
            grad[i] = utility.slope(RECIPROCAL, y[i], alpha[i])
        for j in range(kind_ptr[l, POLY], kind_ptr[l, POLY + 1]):
            i = channel[j]
            grad[i] = utility.slope(POLY, y[i], alpha[i])
        kstar = _port_kstar(y, port_ptr[l], port_ptr[l + 1], beta, port_sum)
        b = beta[kstar]
        for e in range(port_ptr[l], port_ptr[l + 1]):
            grad[e * K + kstar] -= b
            for k in range(K):
                grad[e * K + k] *= xl


@njit(cache=True)
def slot_terms_gradient(x, y, port_ptr, kind_ptr, channel, beta, alpha, grad):  # pragma: no cover - numba
    """:func:`slot_terms` and :func:`slot_gradient` in one pass over the arrived ports (the
    same operations in the same order, so the same gain, overhead and gradient bit for bit):
    f and f' of a channel are evaluated together, k*_l of (27) once for both: a pass for f and
    another for f' measured 74 us a slot against 57 us at the ``large`` preset. Each kind's loop
    is written out (an inlined helper holding the loop measured 2-6 % slower)."""
    L = port_ptr.size - 1
    K = beta.size
    port_sum = np.empty(K)
    grad[:] = 0.0
    gain_total = 0.0
    overhead_total = 0.0
    for l in range(L):
        xl = x[l]
        if xl == 0.0:
            continue
        gain = 0.0
        for j in range(kind_ptr[l, LINEAR], kind_ptr[l, LINEAR + 1]):
            i = channel[j]
            gain += utility.value(LINEAR, y[i], alpha[i])
            grad[i] = utility.slope(LINEAR, y[i], alpha[i])
        for j in range(kind_ptr[l, LOG], kind_ptr[l, LOG + 1]):
            i = channel[j]
            gain += utility.value(LOG, y[i], alpha[i])
            grad[i] = utility.slope(LOG, y[i], alpha[i])
        for j in range(kind_ptr[l, RECIPROCAL], kind_ptr[l, RECIPROCAL + 1]):
            i = channel[j]
            gain += utility.value(RECIPROCAL, y[i], alpha[i])
            grad[i] = utility.slope(RECIPROCAL, y[i], alpha[i])
        for j in range(kind_ptr[l, POLY], kind_ptr[l, POLY + 1]):
            i = channel[j]
            gain += utility.value(POLY, y[i], alpha[i])
            grad[i] = utility.slope(POLY, y[i], alpha[i])
        kstar = _port_kstar(y, port_ptr[l], port_ptr[l + 1], beta, port_sum)
        b = beta[kstar]
        gain_total += xl * gain
        overhead_total += xl * (port_sum[kstar] * b)
        for e in range(port_ptr[l], port_ptr[l + 1]):
            grad[e * K + kstar] -= b
            for k in range(K):
                grad[e * K + k] *= xl
    return gain_total, overhead_total
