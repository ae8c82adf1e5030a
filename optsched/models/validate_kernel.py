"""numba kernel of :func:`optsched.models.validate.float_array` for large arrays: the model's
own read-only copy and the magnitude check (finite, at most ``MAX_MAGNITUDE``) in one pass.

Imported at the first large array (numba is heavy to import; ``cache=True`` keeps the compiled
code between runs).
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit


@njit(cache=True)
def copy_within(x, largest):  # pragma: no cover - numba
    """(a copy of the 1-d float64 array ``x``, whether every entry is at most ``largest`` in
    magnitude). NaN compares false and +-inf is above any finite ``largest``, so one test
    covers finiteness too."""
    out = np.empty_like(x)
    within = True
    for i in range(x.size):
        v = x[i]
        out[i] = v
        within &= abs(v) <= largest
    return out, within
