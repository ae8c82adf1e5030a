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
def first_fault(y, upper, group, capacity, tol):  # pragma: no cover - numba
    """(code, index, amount) of the first rule the flat (E K) decision ``y`` breaks, (OK, -1, 0)
    when none, with the rules of ``Scenario.violations``: y finite, y >= -tol,
    y - a_l^k <= tol max(1, a_l^k) (5), and per node r and resource k, sum_{e at r} y_e^k -
    c_r^k <= tol max(1, c_r^k) (6). ``upper`` is flat like y, ``group`` the flat index r K + k of
    each entry's node and resource (``Scenario.group``), ``capacity`` flat (R K). ``index`` is
    e K + k for (5), r K + k for (6). The first pass has no branches (NaN and +-inf fail one of
    its two comparisons); the loads are summed in a loop of their own over the flat index
    (half the time of a loop per edge and resource); only a decision that fails the first pass
    is searched for the rule it breaks."""
    within = True
    for i in range(y.size):
        v = y[i]
        a = upper[i]
        within &= (v >= -tol) & (v - a <= tol * max(1.0, a))
    load = np.zeros(capacity.size)
    for i in range(y.size):
        load[group[i]] += y[i]
    if not within:
        for i in range(y.size):
            v = y[i]
            if not np.isfinite(v):
                return NOT_FINITE, i, v
            if v < -tol:
                return NEGATIVE, i, -v
            a = upper[i]
            if v - a > tol * max(1.0, a):
                return ABOVE_REQUEST, i, v - a
    for g in range(capacity.size):
        c = capacity[g]
        if load[g] - c > tol * max(1.0, c):
            return OVER_CAPACITY, g, load[g] - c
    return OK, -1, 0.0
