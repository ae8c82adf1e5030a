"""numba kernel of Algorithm 2 of paper 004 (the ``greedy`` set-packing backend).

Imported only when the backend runs (numba is heavy to import; cache=True keeps the
compiled code between runs).
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit


@njit(cache=True)
def greedy_select(weights, sizes, words):  # pragma: no cover - numba
    """Sets chosen by Algorithm 2, as sorted indices.

    Keys (3) w_i / sqrt(|J_i|) (+inf for an empty set of positive weight, 0 for one of zero
    weight), taken in decreasing order, ties to the lower index (a stable sort); a set is
    added when its element bits ``words[i]`` (64 elements a word) meet no used bit.
    """
    n, n_words = words.shape
    keys = np.empty(n)
    for i in range(n):
        if sizes[i] == 0:
            keys[i] = -np.inf if weights[i] > 0 else 0.0
        else:
            keys[i] = -weights[i] / np.sqrt(sizes[i])
    order = np.argsort(keys, kind="mergesort")
    used = np.zeros(n_words, dtype=np.uint64)
    chosen = np.zeros(n, dtype=np.bool_)
    for k in range(n):
        i = order[k]
        clash = False
        for j in range(n_words):
            if used[j] & words[i, j]:
                clash = True
                break
        if not clash:
            for j in range(n_words):
                used[j] |= words[i, j]
            chosen[i] = True
    return np.flatnonzero(chosen)
