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


BLOCK = 8  # candidate slots per block of place_tasks (two 256-bit vectors of uint64 keys)


@njit(cache=True)
def initial_classes(port_ptr, edge_node, requests, capacity, tolerance):  # pragma: no cover - numba
    """The class of every edge (l, r) on empty nodes, as :func:`place_tasks` defines it:
    0 when c_r^k >= a_l^k - ``tolerance[r, k]`` for every k, else 1 when some k has
    c_r^k > 0 and a_l^k > 0, else 2 (node r can never serve job l)."""
    out = np.empty(edge_node.size, np.int64)
    for l in range(port_ptr.size - 1):
        for e in range(port_ptr[l], port_ptr[l + 1]):
            r = edge_node[e]
            fits = True
            spare = False
            for k in range(capacity.shape[1]):
                room = capacity[r, k]
                if room < requests[l, k] - tolerance[r, k]:
                    fits = False
                if room > 0 and requests[l, k] > 0:
                    spare = True
            out[e] = 0 if fits else (1 if spare else 2)
    return out


@njit(cache=True)
def place_tasks(x, port_ptr, slot_ptr, slot_node, node_ptr, node_slot, node_port, first_class, requests, capacity,
                tolerance, favour_full):  # pragma: no cover - numba
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
    the order of placement decides who gets the capacity. A node fits when
    c_r^k - used_r^k >= a_l^k - ``tolerance[r, k]`` (1e-12 max(1, c_r^k)) for every k.

    The rule as a key: each edge of a job holds class << 62 | u, class 0 (fits), 1 (some spare
    capacity) or 2 (none, or placed: never chosen again, as capacity only fills up), and u the
    bits of its node's utilisation (SPREADING) or 2^62 - 1 minus them (BINPACKING). The bits
    of a float >= 0 order like the float, and a utilisation is at most 1 up to rounding (no
    capacity is exceeded), below 2, whose bits are below 2^62; so the smallest key is the best
    node, and the first slot holding it the first edge among ties. Job l's edges sit in slots
    ``slot_ptr[l] + (e - port_ptr[l])`` (edge order, padded with class 2 to a multiple of
    ``BLOCK``), and each block of ``BLOCK`` slots keeps its smallest key. A job's turn takes
    the first block with the smallest minimum and the first slot in it holding that key:
    O(deg / BLOCK + BLOCK) per task, instead of a scan of the job's nodes. When a node
    receives a task, the class and key of every other slot there of a job still placing are
    recomputed and their blocks' minima refreshed (O(BLOCK) each). ``slot_node`` is each
    slot's node; ``node_ptr`` / ``node_slot`` / ``node_port`` list each node's slots and their
    ports (CSR); ``first_class`` is each edge's class on empty nodes
    (:func:`initial_classes`). Returns the (E, K) decision.
    """
    L = port_ptr.size - 1
    R, K = capacity.shape
    y = np.zeros((port_ptr[L], K))
    used = np.zeros((R, K))
    util = np.zeros(R)
    util_bits = util.view(np.uint64)
    spare_only = np.uint64(1) << np.uint64(62)  # class 1
    flip = spare_only - np.uint64(1)
    unusable = np.uint64(2) << np.uint64(62)  # class 2
    empty = flip if favour_full else np.uint64(0)  # u of an empty node
    key = np.full(slot_ptr[L], unusable)
    block_min = np.full(slot_ptr[L] // BLOCK, unusable)
    placing = np.zeros(L, np.bool_)
    order = np.empty(L, np.int64)  # the jobs still placing, in port order
    m = 0
    for l in range(L):
        if x[l] <= 0:
            continue
        lo = slot_ptr[l]
        for e in range(port_ptr[l], port_ptr[l + 1]):
            c = first_class[e]
            key[lo + e - port_ptr[l]] = unusable if c == 2 else (spare_only | empty if c == 1 else empty)
        for b in range(lo // BLOCK, slot_ptr[l + 1] // BLOCK):
            low = unusable
            for s in range(b * BLOCK, b * BLOCK + BLOCK):
                low = key[s] if key[s] < low else low
            block_min[b] = low
        placing[l] = True
        order[m] = l
        m += 1
    while m > 0:
        kept = 0
        for j in range(m):
            l = order[j]
            best = unusable
            b = 0
            for q in range(slot_ptr[l] // BLOCK, slot_ptr[l + 1] // BLOCK):  # the first smallest block minimum
                better = block_min[q] < best
                best = block_min[q] if better else best
                b = q if better else b
            if best >= unusable:  # no node of this job has spare capacity left
                placing[l] = False
                continue
            order[kept] = l
            kept += 1
            s = 0
            for q in range(b * BLOCK + BLOCK - 1, b * BLOCK - 1, -1):  # the first slot holding it
                s = q if key[q] == best else s
            key[s] = unusable
            low = unusable
            for q in range(b * BLOCK, b * BLOCK + BLOCK):
                low = key[q] if key[q] < low else low
            block_min[b] = low
            e = port_ptr[l] + s - slot_ptr[l]
            r = slot_node[s]
            share = 0.0
            for k in range(K):
                amount = min(requests[l, k], max(0.0, capacity[r, k] - used[r, k]))
                y[e, k] = amount
                used[r, k] += amount
                if capacity[r, k] > 0:
                    share += used[r, k] / capacity[r, k]
            util[r] = share / K
            u = flip - util_bits[r] if favour_full else util_bits[r]
            for i in range(node_ptr[r], node_ptr[r + 1]):
                s = node_slot[i]
                l2 = node_port[i]
                if key[s] >= unusable or not placing[l2]:
                    continue
                fits = True
                spare = False
                for k in range(K):
                    room = capacity[r, k] - used[r, k]
                    if room < requests[l2, k] - tolerance[r, k]:
                        fits = False
                    if room > 0 and requests[l2, k] > 0:
                        spare = True
                key[s] = u if fits else (spare_only | u if spare else unusable)
                b = s // BLOCK
                low = unusable
                for q in range(b * BLOCK, b * BLOCK + BLOCK):
                    low = key[q] if key[q] < low else low
                block_min[b] = low
        m = kept
    return y
