"""numba kernel of :meth:`SetPacking.audit`: a selection checked and weighed in one call.

Imported at the first audit (numba is heavy to import; ``cache=True`` keeps the compiled code
between runs). It only says whether the selection is clean; the messages of a dirty one come
from the numpy code of the model.
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit

# a bit per element while the universe's words are at most this many per chosen entry (plus
# WORDS_SLACK): zeroing them then costs about what the marking does; above, the chosen
# elements are sorted instead (a huge universe with a few chosen elements)
WORDS_PER_ENTRY = 4
WORDS_SLACK = 64


@njit(cache=True)
def check_selection(chosen, weights, indptr, indices, n_elements):  # pragma: no cover - numba
    """(clean, sum of the chosen weights): clean when ``chosen`` is strictly increasing, in
    range and its sets (CSR ``indptr`` / ``indices`` over ``n_elements`` elements) are
    pairwise disjoint: each chosen element's bit is set, and a bit found set is a clash."""
    n = indptr.size - 1
    total = 0
    value = 0.0
    for p in range(chosen.size):
        i = chosen[p]
        if i < 0 or i >= n or (p > 0 and i <= chosen[p - 1]):
            return False, value
        total += indptr[i + 1] - indptr[i]
        value += weights[i]
    n_words = (n_elements + 63) >> 6
    if n_words <= WORDS_PER_ENTRY * total + WORDS_SLACK:
        words = np.zeros(n_words, np.uint64)
        for p in range(chosen.size):
            i = chosen[p]
            for j in range(indptr[i], indptr[i + 1]):
                e = indices[j]
                bit = np.uint64(1) << np.uint64(e & 63)
                if words[e >> 6] & bit:
                    return False, value
                words[e >> 6] |= bit
        return True, value
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
