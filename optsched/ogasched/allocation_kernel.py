"""numba kernels of the four Section IV baselines: one slot's allocation y(t) from x(t).

All four give an arrived job the same allowance, up to a_l^k on every node of R_l (the
channel bound (5)); they differ in the order in which the capacity of a contended node is
handed out.

Imported only when a baseline runs (numba is heavy to import; cache=True keeps the compiled
code between runs). Decisions are flat (E, K) arrays, edges sorted by port; ``node_ptr`` /
``node_edges`` list each node's edges (CSR), in the order the rule serves them.
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit


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
def place_tasks(x, port_ptr, edge_node, requests, capacity, favour_full):  # pragma: no cover - numba
    """BINPACKING / SPREADING: the arrived jobs' tasks placed one at a time, round robin.

    Every arrived job l has one task per node of R_l, each asking for a_l^k of every resource
    (the channel bound (5): the same allowance DRF and FAIRNESS give a job). Round after round,
    each arrived job (in port order) places its next task on the best of its nodes not used
    yet: nodes that fit the whole request first, else nodes with some spare capacity (the task
    then takes min(a_l^k, free)); among them, by utilisation (the mean over k of used / c_r^k),
    the fullest for BINPACKING (``favour_full``, Kubernetes MostAllocated), the emptiest for
    SPREADING (LeastAllocated); ties to the first edge. A job stops when none of its remaining
    nodes has spare capacity. Capacities (6) are never exceeded. Without contention every task
    fits and all four baselines give every arrived job a_l^k on every node; under contention
    the order of placement decides who gets the capacity.
    Each job keeps its nodes not used yet in a list (a placed one is swapped out); whether a
    node fits a job's request is cached per edge and recomputed only after that node changed.
    Returns the (E, K) decision.
    """
    L = port_ptr.size - 1
    R, K = capacity.shape
    E = edge_node.size
    y = np.zeros((E, K))
    used = np.zeros((R, K))
    util = np.zeros(R)
    version = np.zeros(R, np.int64)  # bumped whenever a node receives a task
    # per job l, its edges not placed yet in slots port_ptr[l] .. port_ptr[l] + left[l] - 1, with
    # their node, the node's version when their class was computed, and the class
    # (0: fits the whole request, 1: some spare capacity, 2: none)
    cand = np.empty(E, np.int64)
    node = np.empty(E, np.int64)
    seen = np.empty(E, np.int64)
    klass = np.empty(E, np.int64)
    left = np.zeros(L, np.int64)
    for l in range(L):
        if x[l] > 0:
            left[l] = port_ptr[l + 1] - port_ptr[l]
            for e in range(port_ptr[l], port_ptr[l + 1]):
                cand[e] = e
                node[e] = edge_node[e]
                seen[e] = -1
    active = True
    while active:
        active = False
        for l in range(L):
            if left[l] == 0:
                continue
            lo = port_ptr[l]
            best = -1
            best_class = 3
            best_util = 0.0
            for j in range(lo, lo + left[l]):
                r = node[j]
                if seen[j] != version[r]:
                    seen[j] = version[r]
                    fits = True
                    spare = False
                    for k in range(K):
                        room = capacity[r, k] - used[r, k]
                        if room < requests[l, k] - 1e-12 * max(1.0, capacity[r, k]):
                            fits = False
                        if room > 0 and requests[l, k] > 0:
                            spare = True
                    klass[j] = 0 if fits else (1 if spare else 2)
                c = klass[j]
                if c > best_class or c == 2:
                    continue
                u = util[r]
                if c < best_class:
                    better = True
                elif favour_full:
                    better = u > best_util or (u == best_util and cand[j] < cand[best])
                else:
                    better = u < best_util or (u == best_util and cand[j] < cand[best])
                if better:
                    best, best_class, best_util = j, c, u
            if best < 0:  # no node of this job has spare capacity left
                left[l] = 0
                continue
            active = True
            e, r = cand[best], node[best]
            left[l] -= 1
            last = lo + left[l]  # swap the placed edge out of the job's list
            cand[best], node[best], seen[best], klass[best] = cand[last], node[last], seen[last], klass[last]
            share = 0.0
            for k in range(K):
                amount = min(requests[l, k], max(0.0, capacity[r, k] - used[r, k]))
                y[e, k] = amount
                used[r, k] += amount
                if capacity[r, k] > 0:
                    share += used[r, k] / capacity[r, k]
            util[r] = share / K
            version[r] += 1
    return y
