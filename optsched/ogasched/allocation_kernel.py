"""numba kernels of the four Section IV baselines: one slot's allocation y(t) from x(t).

Imported only when a baseline runs (numba is heavy to import; cache=True keeps the compiled
code between runs). Decisions are flat (E, K) arrays, edges sorted by port; ``node_ptr`` /
``node_edges`` list each node's edges (CSR), in the order the rule serves them.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def drf(x, edge_port, node_ptr, node_edges, requests, capacity):  # pragma: no cover - numba
    """DRF: each node r serves its edges in ``node_edges`` order (ascending dominant share),
    each arrived port up to a_l^k, out of what the ports before it asked for:
    y = clip(c_r^k - sum of the earlier arrived ports' a^k, 0, a_l^k)."""
    R, K = capacity.shape
    y = np.zeros((edge_port.size, K))
    asked = np.empty(K)
    for r in range(R):
        asked[:] = 0.0
        for j in range(node_ptr[r], node_ptr[r + 1]):
            e = node_edges[j]
            l = edge_port[e]
            if x[l] <= 0:
                continue
            for k in range(K):
                a = requests[l, k]
                y[e, k] = min(max(capacity[r, k] - asked[k], 0.0), a)
                asked[k] += a
    return y


@njit(cache=True)
def fairness(x, edge_port, node_ptr, node_edges, requests, capacity):  # pragma: no cover - numba
    """FAIRNESS: each node r splits c_r^k among its arrived ports in proportion to a_l^k,
    capped at a_l^k: y = min(a_l^k, a_l^k c_r^k / sum_{arrived l' in L_r} a_l'^k)."""
    R, K = capacity.shape
    y = np.zeros((edge_port.size, K))
    total = np.empty(K)
    for r in range(R):
        total[:] = 0.0
        for j in range(node_ptr[r], node_ptr[r + 1]):
            l = edge_port[node_edges[j]]
            if x[l] > 0:
                for k in range(K):
                    total[k] += requests[l, k]
        for j in range(node_ptr[r], node_ptr[r + 1]):
            e = node_edges[j]
            l = edge_port[e]
            if x[l] <= 0:
                continue
            for k in range(K):
                a = requests[l, k]
                if total[k] > 0:
                    y[e, k] = min(a, a * (capacity[r, k] / total[k]))
    return y


@njit(cache=True)
def _stable_order(key, n, order):  # pragma: no cover - numba
    """order[:n] = the stable ascending order of key[:n] (insertion sort: n is a port's degree)."""
    for i in range(n):
        j = i
        while j > 0 and key[order[j - 1]] > key[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i


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
    widest = 0
    for l in range(L):
        widest = max(widest, port_ptr[l + 1] - port_ptr[l])
    key = np.empty(widest)
    order = np.empty(widest, np.int64)
    for l in range(L):
        if x[l] <= 0:
            continue
        lo = port_ptr[l]
        hi = port_ptr[l + 1]
        n = hi - lo
        if n == 0:
            continue
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
        _stable_order(key, n, order)
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
