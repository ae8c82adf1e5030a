"""numba kernel of the BINPACKING / SPREADING placement heuristics (Section IV baselines).

Imported only when one of those baselines runs (numba is heavy to import; cache=True keeps
the compiled code between runs).
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit


@njit(cache=True)
def place_jobs(x, port_ptr, edge_node, requests, capacity, servers, favour_full):  # pragma: no cover - numba
    """Place the arrived jobs one after another (in port order) on their own nodes.

    A type-l job asks for ``servers[l]`` servers among R_l, each providing up to a_l^k of every
    resource (the channel bound (5)). Nodes are scored by utilisation (mean over k of
    used / capacity): BINPACKING (``favour_full``) takes the fullest node that still fits the
    whole request, SPREADING the emptiest. When fewer nodes fit than the job asks for, the
    rest of its servers are taken, in the same score order, on nodes that still have some
    free capacity, with what is left there (min(a_l^k, free)). Capacities (6) are never
    exceeded.
    Returns the (E, K) decision.
    """
    L = port_ptr.size - 1
    R, K = capacity.shape
    E = edge_node.size
    y = np.zeros((E, K))
    used = np.zeros((R, K))
    for l in range(L):
        if x[l] <= 0:
            continue
        lo = port_ptr[l]
        hi = port_ptr[l + 1]
        n = hi - lo
        if n == 0:
            continue
        key = np.empty(n)
        for i in range(n):
            r = edge_node[lo + i]
            util = 0.0
            ok = True
            spare = False
            for k in range(K):
                c = capacity[r, k]
                left = c - used[r, k]
                if c > 0:
                    util += used[r, k] / c
                if left < requests[l, k] - 1e-12 * max(1.0, c):
                    ok = False
                if left > 0 and requests[l, k] > 0:
                    spare = True
            util /= K
            # fitting nodes first, then nodes with some spare capacity, each by score
            key[i] = (0.0 if ok else (2.0 if spare else 4.0)) + (1.0 - util if favour_full else util)
        order = np.argsort(key, kind="mergesort")
        taken = 0
        for j in range(n):
            if taken >= servers[l]:
                break
            i = order[j]
            if key[i] >= 4.0:
                break
            e = lo + i
            r = edge_node[e]
            for k in range(K):
                amount = min(requests[l, k], max(0.0, capacity[r, k] - used[r, k]))
                y[e, k] = amount
                used[r, k] += amount
            taken += 1
    return y
