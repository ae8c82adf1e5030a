"""numba kernel of :meth:`CapacityProjection.audit` and of ``violations``' common case.

Imported at the first check (numba is heavy to import; ``cache=True`` keeps the compiled code
between runs). It says whether y is clean and what ||y - z||^2 is, in one pass; the messages
of a dirty y come from the numpy code of the model, so both read the same tolerances.
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit

# reassociation lets the compiler split the sum of squares over several accumulators (a single
# running sum waits ~4 cycles per entry on its own latency); NaN and inf keep their meaning
SUM_FLAGS = {"reassoc", "contract", "nsz", "arcp"}


@njit(cache=True, fastmath=SUM_FLAGS)
def check(y, z, upper, group, capacity, tol):  # pragma: no cover - numba
    """(clean, ||y - z||^2): clean when every y_i is finite with -tol <= y_i <= upper_i +
    tol (1 + upper_i) and every group load sum_{i in g} y_i <= capacity_g + tol (1 + capacity_g)."""
    clean = True
    dist2 = 0.0
    for i in range(y.shape[0]):
        v = y[i]
        d = v - z[i]
        dist2 += d * d
        clean &= v >= -tol and v <= upper[i] + tol * (1.0 + upper[i])  # False for NaN
    load = np.zeros(capacity.shape[0])
    for i in range(y.shape[0]):
        load[group[i]] += y[i]
    for g in range(capacity.shape[0]):
        clean &= load[g] <= capacity[g] + tol * (1.0 + capacity[g])
    return clean, dist2
