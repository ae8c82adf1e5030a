"""numba kernel of :meth:`CapacityProjection.violations`' common case: one pass over y.

Imported at the first check (numba is heavy to import; ``cache=True`` keeps the compiled code
between runs). It only says whether y is clean; the messages of a dirty y come from the numpy
code of the model, so both read the same tolerances.
"""

from __future__ import annotations

import math

import numpy as np

from optsched.jit import njit


@njit(cache=True)
def is_clean(y, upper, group, capacity, tol):  # pragma: no cover - numba
    """True when every y_i is finite, -tol <= y_i <= upper_i + tol (1 + upper_i) and every group
    load sum_{i in g} y_i <= capacity_g + tol (1 + capacity_g)."""
    load = np.zeros(capacity.shape[0])
    for i in range(y.shape[0]):
        v = y[i]
        if not math.isfinite(v) or v < -tol or v > upper[i] + tol * (1.0 + upper[i]):
            return False
        load[group[i]] += v
    for g in range(capacity.shape[0]):
        if load[g] > capacity[g] + tol * (1.0 + capacity[g]):
            return False
    return True
