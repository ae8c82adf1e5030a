"""numba kernel of the feasibility of a decision y for (5) and (6): the check every slot's
action passes in :class:`optsched.ogasched.env.SchedulingEnv` (one pass over y and the node
loads, where :meth:`~optsched.ogasched.scenario.Scenario.violations`, the numpy reference it is
tested against, makes several and a sparse product).
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit

OK, NOT_FINITE, NEGATIVE, ABOVE_REQUEST, OVER_CAPACITY = 0, 1, 2, 3, 4


@njit(cache=True)
def first_fault(y, upper, edge_node, capacity, tol):  # pragma: no cover - numba
    """(code, row, k, amount) of the first rule y breaks, (OK, -1, -1, 0) when none: with the
    rules of ``Scenario.violations``: y finite, y >= -tol, y - a_l^k <= tol max(1, a_l^k) (5),
    and per node r and resource k, sum_{e at r} y_e^k - c_r^k <= tol max(1, c_r^k) (6). ``row``
    is the edge for (5), the node for (6). The first pass has no branches (NaN and +-inf fail
    one of its two comparisons); only a decision that fails it is searched for the rule."""
    E, K = y.shape
    flat, top = y.reshape(-1), upper.reshape(-1)
    within = True
    for i in range(flat.size):
        v = flat[i]
        a = top[i]
        within &= (v >= -tol) & (v - a <= tol * max(1.0, a))
    load = np.zeros(capacity.size)
    for e in range(E):
        r, i = edge_node[e] * K, e * K
        for k in range(K):
            load[r + k] += flat[i + k]
    if not within:
        for e in range(E):
            for k in range(K):
                v = y[e, k]
                if not np.isfinite(v):
                    return NOT_FINITE, e, k, v
                if v < -tol:
                    return NEGATIVE, e, k, -v
                a = upper[e, k]
                if v - a > tol * max(1.0, a):
                    return ABOVE_REQUEST, e, k, v - a
    cap = capacity.reshape(-1)
    for i in range(cap.size):
        c = cap[i]
        if load[i] - c > tol * max(1.0, c):
            return OVER_CAPACITY, i // K, i % K, load[i] - c
    return OK, -1, -1, 0.0
