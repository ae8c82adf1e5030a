"""numba kernel of :func:`optsched.models.validate.float_array` for large arrays: the model's
own read-only copy and the finiteness check in one pass.

Imported at the first large array (numba is heavy to import; ``cache=True`` keeps the compiled
code between runs).
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit


@njit(cache=True)
def copy_finite(x):  # pragma: no cover - numba
    """(a copy of the 1-d float64 array ``x``, whether every entry is finite). v - v is 0 for a
    finite v and NaN for NaN and +-inf, so the test is one subtraction and an integer AND."""
    out = np.empty_like(x)
    finite = True
    for i in range(x.size):
        v = x[i]
        out[i] = v
        finite &= (v - v) == 0.0
    return out, finite
