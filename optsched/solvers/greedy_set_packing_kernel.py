"""numba kernel of Algorithm 2 of paper 004 (the ``greedy`` set-packing backend).

Imported only when the backend runs (numba is heavy to import; cache=True keeps the
compiled code between runs).
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit

SMALL = 64  # up to this many sets, a stable insertion sort orders the keys


@njit(cache=True)
def _stable_order(keys):  # pragma: no cover - numba
    """Indices sorting ``keys`` ascending, ties in index order (as a stable argsort)."""
    n = keys.size
    if n > SMALL:
        return np.argsort(keys, kind="mergesort")
    order = np.arange(n)
    for i in range(1, n):
        j = order[i]
        k = keys[j]
        p = i
        while p > 0 and keys[order[p - 1]] > k:
            order[p] = order[p - 1]
            p -= 1
        order[p] = j
    return order


@njit(cache=True)
def _element_slots(indices, n_elements):  # pragma: no cover - numba
    """(a slot per entry, the number of slots): the element itself when M is at most a few
    times the number of entries, else its rank among the distinct elements (one sort), so
    nothing is as large as a huge M."""
    nnz = indices.size
    if n_elements <= 4 * nnz + 64:
        return indices, n_elements
    rank = np.empty(nnz, np.int64)
    by_element = np.argsort(indices)
    distinct = -1
    for j in range(nnz):
        p = by_element[j]
        if j == 0 or indices[p] != indices[by_element[j - 1]]:
            distinct += 1
        rank[p] = distinct
    return rank, distinct + 1


@njit(cache=True)
def greedy_select(weights, indptr, indices, n_elements):  # pragma: no cover - numba
    """(the sets chosen by Algorithm 2 as sorted indices, the sum of their weights).

    Keys (3) w_i / sqrt(|J_i|) (+inf for an empty set of positive weight, 0 for one of zero
    weight), taken in decreasing order, ties to the lower index (a stable sort); a set is
    added when none of its elements is used yet. Set i is ``indices[indptr[i]:indptr[i + 1]]``
    (CSR) over ``n_elements`` elements.
    """
    n = indptr.size - 1
    slot, n_slots = _element_slots(indices, n_elements)
    keys = np.empty(n)
    for i in range(n):
        size = indptr[i + 1] - indptr[i]
        if size == 0:
            keys[i] = -np.inf if weights[i] > 0 else 0.0
        else:
            keys[i] = -weights[i] / np.sqrt(size)
    order = _stable_order(keys)
    used = np.zeros(n_slots, dtype=np.bool_)
    chosen = np.zeros(n, dtype=np.bool_)
    for k in range(n):
        i = order[k]
        clash = False
        for j in range(indptr[i], indptr[i + 1]):
            if used[slot[j]]:
                clash = True
                break
        if not clash:
            for j in range(indptr[i], indptr[i + 1]):
                used[slot[j]] = True
            chosen[i] = True
    out = np.flatnonzero(chosen)
    value = 0.0
    for i in out:
        value += weights[i]
    return out, value
