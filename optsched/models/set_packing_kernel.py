"""numba kernel of :meth:`SetPacking.audit`: a selection checked and weighed in one call.

Imported at the first audit (numba is heavy to import; ``cache=True`` keeps the compiled code
between runs). It only says whether the selection is clean; the messages of a dirty one come
from the numpy code of the model.
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit


@njit(cache=True)
def check_selection(chosen, weights, indptr, indices):  # pragma: no cover - numba
    """(clean, sum of the chosen weights): clean when ``chosen`` is strictly increasing, in
    range and its sets (CSR ``indptr`` / ``indices``) are pairwise disjoint."""
    n = indptr.size - 1
    total = 0
    value = 0.0
    for p in range(chosen.size):
        i = chosen[p]
        if i < 0 or i >= n or (p > 0 and i <= chosen[p - 1]):
            return False, value
        total += indptr[i + 1] - indptr[i]
        value += weights[i]
    elements = np.empty(total, indices.dtype)
    k = 0
    for p in range(chosen.size):
        i = chosen[p]
        for j in range(indptr[i], indptr[i + 1]):
            elements[k] = indices[j]
            k += 1
    elements.sort()
    for k in range(1, total):
        if elements[k] == elements[k - 1]:
            return False, value
    return True, value
