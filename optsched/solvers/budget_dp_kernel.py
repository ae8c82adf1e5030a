"""numba kernels of Algorithm 2 (paper 000): imported only when the DP runs.

The table V(s, c, i) of Algorithm 2 (read plainly, see ``../shared/papers/README.md``)

    V(s, c, n) = 0 if s == 0 else -inf
    V(s, c, i) = max( V(s, c, i+1),  values_i + V(max(s - b_i, 0), c - W[:, i], i+1) )

with the second term only when W[:, i] <= c, is stored level by level, and at level ``i`` only
over the box of remaining-capacity vectors that matter (see :mod:`optsched.solvers.budget_dp`):
``lo[i] <= c <= hi[i]``, where a capacity above ``hi[i]`` (the total weight of items i..n-1)
behaves exactly like ``hi[i]``. The budget axis at level ``i`` stops at ``smax[i]`` (the total
budget coefficient of items i..n-1); V is -inf beyond it.

Kernels: ``family_table`` / ``backtrack`` (method ``dense``), ``pareto_table`` /
``pareto_backtrack`` (method ``pareto``: fronts on every box cell), ``visit_cells`` /
``fill_fronts`` (method ``reach``: fronts on the cells visited from the root, reusable pools;
with ``prefix_bounds``, ``scalar_pick`` and ``front_pick`` also the pruned envelope pick of
``escb_aescb.envelope_pick``).

Every table kernel takes ``stop`` last (see :data:`STOPPED`).

Dense cells of one level are laid out ``cell * (smax[i] + 1) + s`` with the capacity cell in
mixed radix (last resource fastest). One bit per cell records "taking item i is strictly
better", which is all the backtracking needs.
"""

from __future__ import annotations

import numpy as np

from optsched.jit import njit

# The table kernels poll ``stop`` (int64[1]) once per cell and raise this when another thread
# (a deadline, Ctrl-C) set it; they run without the GIL, so that thread can
STOPPED = "dp: stopped"


@njit(cache=True)
def _cell_index(c: np.ndarray, lo: np.ndarray, hi: np.ndarray, stride: np.ndarray) -> int:
    idx = 0
    for k in range(c.shape[0]):
        ck = c[k] if c[k] < hi[k] else hi[k]
        idx += (ck - lo[k]) * stride[k]
    return idx


@njit(cache=True, nogil=True)
def family_table(values, b, W, lo, hi, stride, ncell, smax, dec_off, total_bits, max_cells, stop):
    """Fill the table from level n down to 0; return (V(., c, 0) over s = 0..smax[0], bits)."""
    n = values.shape[0]
    K = W.shape[0]
    nxt = np.empty(max_cells, dtype=np.float64)
    cur = np.empty(max_cells, dtype=np.float64)
    nxt[0] = 0.0  # level n: one capacity cell, s = 0 only
    dec = np.zeros((total_bits + 7) // 8, dtype=np.uint8)
    c = np.empty(K, dtype=np.int64)
    neg = -np.inf
    for i in range(n - 1, -1, -1):
        ns = smax[i] + 1
        ns1 = smax[i + 1] + 1
        bi = b[i]
        vi = values[i]
        for k in range(K):
            c[k] = lo[i, k]
        for cell in range(ncell[i]):
            if stop[0]:
                raise ValueError(STOPPED)
            skip_idx = 0
            take_idx = 0
            take_ok = True
            for k in range(K):
                h1 = hi[i + 1, k]
                cs = c[k] if c[k] < h1 else h1
                skip_idx += (cs - lo[i + 1, k]) * stride[i + 1, k]
                r = c[k] - W[k, i]
                if r < 0:
                    take_ok = False
                else:
                    rc = r if r < h1 else h1
                    take_idx += (rc - lo[i + 1, k]) * stride[i + 1, k]
            base = cell * ns
            sbase = skip_idx * ns1
            tbase = take_idx * ns1
            bit0 = dec_off[i] + base
            for s in range(ns):
                best = nxt[sbase + s] if s < ns1 else neg
                if take_ok:
                    sp = s - bi
                    if sp < 0:
                        sp = 0
                    t = nxt[tbase + sp] + vi
                    if t > best:
                        best = t
                        bit = bit0 + s
                        dec[bit >> 3] |= np.uint8(1 << (bit & 7))
                cur[base + s] = best
            for k in range(K - 1, -1, -1):  # odometer over the box, last resource fastest
                c[k] += 1
                if c[k] <= hi[i, k]:
                    break
                c[k] = lo[i, k]
        tmp = nxt
        nxt = cur
        cur = tmp
    return nxt[: smax[0] + 1].copy(), dec


@njit(cache=True)
def backtrack(root_values, b, W, capacity, lo, hi, stride, smax, dec_off, dec):
    """Optimal x for every budget s with a finite value, following the decision bits."""
    n = b.shape[0]
    K = W.shape[0]
    n_s = root_values.shape[0]
    choices = np.zeros((n_s, n), dtype=np.bool_)
    c = np.empty(K, dtype=np.int64)
    for s0 in range(n_s):
        if root_values[s0] == -np.inf:
            continue
        s = s0
        for k in range(K):
            c[k] = capacity[k]
        for i in range(n):
            cell = _cell_index(c, lo[i], hi[i], stride[i])
            bit = dec_off[i] + cell * (smax[i] + 1) + s
            if (dec[bit >> 3] >> (bit & 7)) & 1:
                choices[s0, i] = True
                s = s - b[i]
                if s < 0:
                    s = 0
                for k in range(K):
                    c[k] -= W[k, i]
    return choices


# --- the same recursion on step functions -----------------------------------------------------
# V(., c, i) is a non-increasing step function of s. It is stored as its Pareto points (u, v):
# u = budget reached (capped at S), v = value, u ascending and v strictly descending, with
# V(s) = max{v : u >= s}. Skipping item i keeps the points of V(., c, i+1); taking it shifts
# the points of V(., c - W[:, i], i+1) to (min(u + b_i, S), v + values_i); the merge keeps the
# non-dominated points. This is (23) exactly, with one entry per step instead of one per s.


@njit(cache=True)
def _grow_int(a, size):
    out = np.empty(max(size, 2 * a.shape[0]), dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(cache=True)
def _grow_float(a, size):
    out = np.empty(max(size, 2 * a.shape[0]), dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(cache=True, nogil=True)
def pareto_table(values, b, W, lo, hi, stride, ncell, S, max_points, stop):
    """Fronts of every cell of every level; returns the pools and per-cell (start, length)."""
    n = values.shape[0]
    K = W.shape[0]
    cell_base = np.zeros(n + 2, dtype=np.int64)
    for i in range(n + 1):
        cell_base[i + 1] = cell_base[i] + ncell[i]
    # every cell's entry is written before a level above reads it: no zero fill of the whole
    # box (1.2 GB and 1.5 s at 8e7 cells, before the first poll of ``stop``)
    start = np.empty(cell_base[n + 1], dtype=np.int64)
    length = np.empty(cell_base[n + 1], dtype=np.int64)
    cap = min(max(1024, 16 * cell_base[n + 1]), max_points)  # grown by doubling when short
    pu = np.empty(cap, dtype=np.int64)
    pv = np.empty(cap, dtype=np.float64)
    pref = np.empty(cap, dtype=np.int64)  # 2 * (source point in level i+1) + (1 if item i taken)
    used = 1
    pu[0] = 0
    pv[0] = 0.0
    pref[0] = -1
    start[cell_base[n]] = 0
    length[cell_base[n]] = 1
    c = np.empty(K, dtype=np.int64)
    for i in range(n - 1, -1, -1):
        bi = b[i]
        vi = values[i]
        for k in range(K):
            c[k] = lo[i, k]
        for cell in range(ncell[i]):
            if stop[0]:
                raise ValueError(STOPPED)
            skip_idx = 0
            take_idx = 0
            take_ok = True
            for k in range(K):
                h1 = hi[i + 1, k]
                cs = c[k] if c[k] < h1 else h1
                skip_idx += (cs - lo[i + 1, k]) * stride[i + 1, k]
                r = c[k] - W[k, i]
                if r < 0:
                    take_ok = False
                else:
                    rc = r if r < h1 else h1
                    take_idx += (rc - lo[i + 1, k]) * stride[i + 1, k]
            ga = cell_base[i + 1] + skip_idx
            a0 = start[ga]
            ia = length[ga] - 1
            ib = -1
            b0 = 0
            if take_ok:
                gb = cell_base[i + 1] + take_idx
                b0 = start[gb]
                ib = length[gb] - 1
                # shifted points that all cap at u = S: only the best (smallest u) can survive
                while ib > 0 and pu[b0 + ib - 1] + bi >= S:
                    ib -= 1
            # walk both fronts from the largest u down; keep a point if it beats every larger u.
            # Points are written straight into the pool (u descending), then reversed in place.
            need = used + (ia + 1) + (ib + 1)
            if need > pu.shape[0]:
                pu = _grow_int(pu, need)
                pv = _grow_float(pv, need)
                pref = _grow_int(pref, need)
            m = used
            best = -np.inf
            ub = -1
            if ib >= 0:
                ub = pu[b0 + ib] + bi
                if ub > S:
                    ub = S
            while ia >= 0 or ib >= 0:
                if ib >= 0 and (ia < 0 or ub > pu[a0 + ia] or (ub == pu[a0 + ia] and pv[b0 + ib] + vi > pv[a0 + ia])):
                    v = pv[b0 + ib] + vi
                    if v > best:
                        best = v
                        pu[m] = ub
                        pv[m] = v
                        pref[m] = 2 * (b0 + ib) + 1
                        m += 1
                    ib -= 1
                    if ib >= 0:
                        ub = pu[b0 + ib] + bi
                        if ub > S:
                            ub = S
                else:
                    v = pv[a0 + ia]
                    if v > best:
                        best = v
                        pu[m] = pu[a0 + ia]
                        pv[m] = v
                        pref[m] = 2 * (a0 + ia)
                        m += 1
                    ia -= 1
            if m > max_points:
                raise ValueError("dp: the Pareto fronts exceed the cell limit")
            lo_j = used
            hi_j = m - 1
            while lo_j < hi_j:  # u ascending
                pu[lo_j], pu[hi_j] = pu[hi_j], pu[lo_j]
                pv[lo_j], pv[hi_j] = pv[hi_j], pv[lo_j]
                pref[lo_j], pref[hi_j] = pref[hi_j], pref[lo_j]
                lo_j += 1
                hi_j -= 1
            g = cell_base[i] + cell
            start[g] = used
            length[g] = m - used
            used = m
            for k in range(K - 1, -1, -1):
                c[k] += 1
                if c[k] <= hi[i, k]:
                    break
                c[k] = lo[i, k]
    return pu, pv, pref, start[0], length[0], used


@njit(cache=True)
def pareto_backtrack(n, S, pu, pv, pref, root_start, root_len):
    """V(s) for s = 0..S and an optimal x per s, one backtrack per root point."""
    vals = np.full(S + 1, -np.inf)
    choices = np.zeros((S + 1, n), dtype=np.bool_)
    row = np.zeros(n, dtype=np.bool_)
    s = 0
    for k in range(root_len):
        p = root_start + k
        u = pu[p]
        if u < s:
            continue
        row[:] = False
        q = p
        for i in range(n):
            if pref[q] & 1:
                row[i] = True
            q = pref[q] >> 1
        while s <= u and s <= S:
            vals[s] = pv[p]
            choices[s, :] = row
            s += 1
    return vals, choices


# --- visited capacity cells, reusable pools, and the envelope pick ---------------------------
# The box lo[i] <= c <= hi[i] holds every capacity a level could see, but the recursion from the
# root (capacity, 0) only visits c = min(capacity - W x[0..i-1], hi[i]) for prefixes x: at the
# paper's defaults about 1 cell in 7. ``visit_cells`` walks the recursion forward from the root
# and numbers the cells it visits level by level (position 0 is the root, the last position is
# the single cell of level n); each position records its two children. The later passes work
# on positions only: no capacity vectors, no box-sized arrays.


@njit(cache=True, nogil=True)
def visit_cells(W, lo, hi, stride, ncell, capacity, pos, cvec, level_start, child_skip, child_take, stop):
    """Number the cells visited from the root; returns how many.

    ``pos`` (int32, one per box cell of every level, contents undefined on entry: each level's
    part is set to -1 just before the level above fills it) maps a box cell to its position; ``cvec[j]`` is the capacity vector of position j; level i holds positions
    ``level_start[i]:level_start[i+1]``; ``child_skip[j]`` / ``child_take[j]`` are the
    positions of the children (-1: item i does not fit). Depends on W and capacity only."""
    n = W.shape[1]
    K = W.shape[0]
    base = 0
    for k in range(K):
        cvec[0, k] = capacity[k] if capacity[k] < hi[0, k] else hi[0, k]
    count = 1
    level_start[0] = 0
    for i in range(n):
        level_start[i + 1] = count
        base1 = base + ncell[i]
        for q in range(base1, base1 + ncell[i + 1]):
            pos[q] = -1
        for j in range(level_start[i], level_start[i + 1]):
            if stop[0]:
                raise ValueError(STOPPED)
            for take in range(2):
                idx = 0
                ok = True
                for k in range(K):
                    r = cvec[j, k] - W[k, i] if take else cvec[j, k]
                    if r < 0:
                        ok = False
                        break
                    if r > hi[i + 1, k]:
                        r = hi[i + 1, k]
                    idx += (r - lo[i + 1, k]) * stride[i + 1, k]
                if not ok:
                    child_take[j] = -1
                    continue
                q = pos[base1 + idx]
                if q < 0:
                    q = count
                    pos[base1 + idx] = q
                    count += 1
                    for k in range(K):
                        r = cvec[j, k] - W[k, i] if take else cvec[j, k]
                        cvec[q, k] = r if r < hi[i + 1, k] else hi[i + 1, k]
                if take:
                    child_take[j] = q
                else:
                    child_skip[j] = q
        base = base1
    level_start[n + 1] = count
    return count


@njit(cache=True)
def prefix_bounds(b, values, level_start, child_skip, child_take, bu, bv):
    """``bu[j]`` / ``bv[j]``: the largest budget_coeffs.y and values.y over the prefixes y
    (items 0..i-1) whose path from the root reaches position j, each maximised on its own
    (upper bounds for the pruning of ``fill_fronts``)."""
    n = b.shape[0]
    count = level_start[n + 1]
    for j in range(count):
        bu[j] = -1
        bv[j] = -np.inf
    bu[0] = 0
    bv[0] = 0.0
    for i in range(n):
        bi = b[i]
        vi = values[i]
        for j in range(level_start[i], level_start[i + 1]):
            q = child_skip[j]
            if bu[j] > bu[q]:
                bu[q] = bu[j]
            if bv[j] > bv[q]:
                bv[q] = bv[j]
            q = child_take[j]
            if q >= 0:
                if bu[j] + bi > bu[q]:
                    bu[q] = bu[j] + bi
                if bv[j] + vi > bv[q]:
                    bv[q] = bv[j] + vi


@njit(cache=True, nogil=True)
def fill_fronts(values, b, S, max_points, level_start, child_skip, child_take, pu, pv, pref, start, length,
                prune, threshold, bu, bv, stop):
    """The Pareto fronts of :func:`pareto_table`, for the visited positions only.

    ``pu``, ``pv``, ``pref`` are pools the caller may reuse between calls; they are grown by
    doubling when short and returned. With ``prune``, a point (u, v) of position j is dropped
    when min(bu[j] + u, S) + sqrt(bv[j] + v) < threshold (``escb_aescb.envelope_pick`` proves
    that this keeps every root point whose score reaches the threshold, with the same x).
    Returns (pu, pv, pref, root start, root length, points used)."""
    n = values.shape[0]
    last = level_start[n + 1] - 1  # the single cell of level n
    used = 1
    pu[0] = 0
    pv[0] = 0.0
    pref[0] = -1
    start[last] = 0
    length[last] = 1
    for i in range(n - 1, -1, -1):
        bi = b[i]
        vi = values[i]
        for j in range(level_start[i], level_start[i + 1]):
            if stop[0]:
                raise ValueError(STOPPED)
            ga = child_skip[j]
            a0 = start[ga]
            ia = length[ga] - 1
            ib = -1
            b0 = 0
            gb = child_take[j]
            if gb >= 0:
                b0 = start[gb]
                ib = length[gb] - 1
                # shifted points that all cap at u = S: only the best (smallest u) can survive
                while ib > 0 and pu[b0 + ib - 1] + bi >= S:
                    ib -= 1
            need = used + (ia + 1) + (ib + 1)
            if need > pu.shape[0]:
                if need > max_points:
                    raise ValueError("dp: the Pareto fronts exceed the cell limit")
                pu = _grow_int(pu, need)
                pv = _grow_float(pv, need)
                pref = _grow_int(pref, need)
            pre_u = bu[j] if prune else 0
            pre_v = bv[j] if prune else 0.0
            # walk both fronts from the largest u down; keep a point if it beats every larger u
            # (and, pruning, if its bound reaches the threshold). Written u descending, then
            # reversed in place.
            m = used
            best = -np.inf
            ub = -1
            if ib >= 0:
                ub = pu[b0 + ib] + bi
                if ub > S:
                    ub = S
            while ia >= 0 or ib >= 0:
                if ib >= 0 and (ia < 0 or ub > pu[a0 + ia] or (ub == pu[a0 + ia] and pv[b0 + ib] + vi > pv[a0 + ia])):
                    u = ub
                    v = pv[b0 + ib] + vi
                    src = 2 * (b0 + ib) + 1
                    ib -= 1
                    if ib >= 0:
                        ub = pu[b0 + ib] + bi
                        if ub > S:
                            ub = S
                else:
                    u = pu[a0 + ia]
                    v = pv[a0 + ia]
                    src = 2 * (a0 + ia)
                    ia -= 1
                if v > best:
                    best = v
                    if prune:
                        tu = pre_u + u
                        if tu > S:
                            tu = S
                        if tu + np.sqrt(pre_v + v) < threshold:
                            continue
                    pu[m] = u
                    pv[m] = v
                    pref[m] = src
                    m += 1
            lo_j = used
            hi_j = m - 1
            while lo_j < hi_j:  # u ascending
                pu[lo_j], pu[hi_j] = pu[hi_j], pu[lo_j]
                pv[lo_j], pv[hi_j] = pv[hi_j], pv[lo_j]
                pref[lo_j], pref[hi_j] = pref[hi_j], pref[lo_j]
                lo_j += 1
                hi_j -= 1
            start[j] = used
            length[j] = m - used
            used = m
    if used > max_points:
        raise ValueError("dp: the Pareto fronts exceed the cell limit")
    return pu, pv, pref, start[0], length[0], used


@njit(cache=True)
def scalar_pick(values, b, level_start, child_skip, child_take, lam, h):
    """x maximising budget_coeffs.x + lam * values.x over the visited cells: a plain knapsack
    DP (one float per position in ``h``, no fronts), then a forward walk from the root."""
    n = values.shape[0]
    h[level_start[n + 1] - 1] = 0.0
    for i in range(n - 1, -1, -1):
        gain = b[i] + lam * values[i]
        for j in range(level_start[i], level_start[i + 1]):
            best = h[child_skip[j]]
            q = child_take[j]
            if q >= 0:
                t = h[q] + gain
                if t > best:
                    best = t
            h[j] = best
    x = np.zeros(n, dtype=np.bool_)
    j = 0
    for i in range(n):
        q = child_take[j]
        if q >= 0 and h[q] + b[i] + lam * values[i] > h[child_skip[j]]:
            x[i] = True
            j = q
        else:
            j = child_skip[j]
    return x


@njit(cache=True)
def front_pick(n, pu, pv, pref, root_start, root_len):
    """The root point maximising u + sqrt(v) (17), the smallest u on ties, and its x. A root
    without a point (or with NaN scores) raises RuntimeError (the seam: status error): the walk
    below reads without bounds checks, and a front pruned empty (a mutant's threshold above the
    incumbent, probe BH) ended the process with SIGSEGV."""
    best = -np.inf
    p_best = -1
    for k in range(root_len):
        p = root_start + k
        sc = pu[p] + np.sqrt(pv[p])
        if sc > best:
            best = sc
            p_best = p
    if p_best < 0:
        raise RuntimeError("front_pick: no point at the root of the fronts")
    x = np.zeros(n, dtype=np.bool_)
    q = p_best
    for i in range(n):
        if pref[q] & 1:
            x[i] = True
        q = pref[q] >> 1
    return x, pu[p_best], pv[p_best]
