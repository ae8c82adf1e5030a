"""numba kernel of the exact projection (32) of paper 003 (the ``fast`` backend).

Imported only when a projection runs (numba is heavy to import; ``cache=True`` keeps the
compiled code on disk between runs, and the explicit signature compiles it once, at the
first import, instead of once per combination of argument flags). See
:mod:`optsched.solvers.projection_fast` for the mathematics; here, in one compiled pass:

1. y0 = clip(z, 0, u) and the group loads; a group with load <= c_g has t_g = 0 (y = y0); the
   binding groups' members with y0 > 0 (every other member is 0 for each t >= 0) are grouped
   by a counting sort (``start`` / ``order``), each group's in input order;
2. per binding group, its members' z and y0 are gathered in input order and t is bracketed
   by a piece of the load f_g(t) = sum_i clip(z_i - t, 0, y0_i) that contains no breakpoint
   (z_i - y0_i or z_i): up to ``SMALL`` members by evaluating f_g at every breakpoint
   (``_brute_threshold``, O(k^2) but free of data-dependent branches), above by a sort-free
   selection on the breakpoints (``_select_threshold``, expected O(k)); t is the root of the
   linear piece;
3. unless t lies strictly inside that piece, t is recomputed from the exact piece at t
   (members strictly between their bounds M, at their upper bound U):
   t = (sum_U y0_i + sum_M z_i - c_g) / |M|, until t repeats (at most ``REFINE_STEPS``);
4. the group's members with y0 > 0 get y = clip(z - t_g, 0, u) = min(max(z - t_g, 0), y0)
   (z - t_g < z, so the bound u binds exactly when y0 = u); its other members stay at 0.

After the counting sort only the binding groups' members are visited; the loop over groups is
compiled, no Python loop runs over groups.
"""

from __future__ import annotations

import numpy as np
from numba import types

from optsched.jit import njit
from optsched.models.capacity_projection_kernel import SUM_FLAGS

# numba caches a kernel by its own file only: the text of the kernels compiled into this one,
# whose change must rebuild it (tests/test_kernel_stamps.py; an edit of this stamp edits this file)
COMPILED_WITH = {"optsched.models.capacity_projection_kernel": "0511a505009d387f"}

SMALL = 16  # all-breakpoint evaluation up to this many members per group, selection above
EPS = 2.0**-52  # a binding group whose load is further than 4 k EPS c from c is scaled onto it (_onto_capacity)
REFINE_STEPS = 4

_f8 = types.Array(types.float64, 1, "C", readonly=True)
_ip = types.Array(types.intp, 1, "C", readonly=True)
_out = types.Array(types.float64, 1, "C")
# writable arrays convert to the read-only types, so one compiled version serves every call
_SIGNATURE = types.Tuple((_out, _out, _out))(_f8, _f8, _ip, _f8)


@njit(cache=True, inline="always")
def _brute_threshold(zs, ys, a, b, c):  # pragma: no cover - numba
    """(t, t_lo, t_hi) of one small binding group, without sorting or data-dependent
    branches: f_g is evaluated at all 2k breakpoints (O(k^2) min/max/add); the largest
    breakpoint t_lo with f_g > c and the smallest t_hi with f_g <= c bound a piece with no
    breakpoint inside, on which f_g is linear; t is the root of that piece. Inlined: a call
    with constant ``a`` and ``b`` compiles to straight-line code for that group size."""
    t_lo = 0.0  # f_g(0) = load > c
    t_hi = np.inf
    for j in range(a, b):
        for side in range(2):
            bp = zs[j] - ys[j] if side == 0 else zs[j]
            f = 0.0
            for i in range(a, b):
                v = zs[i] - bp
                v = v if v > 0.0 else 0.0
                f += v if v < ys[i] else ys[i]
            above = f > c  # selects, not branches: which side a breakpoint falls on is data
            t_lo = bp if above & (bp > t_lo) else t_lo
            t_hi = bp if (not above) & (bp < t_hi) else t_hi
    total = 0.0
    n_mid = 0
    for i in range(a, b):
        z = zs[i]
        lo = z - ys[i]
        up = lo >= t_hi
        mid = (lo <= t_lo) & (z >= t_hi)
        total += ys[i] * up + z * mid
        n_mid += mid
    if n_mid == 0:
        return t_hi, t_lo, t_hi
    t = (total - c) / n_mid
    if t < t_lo:
        t = t_lo
    if t > t_hi:
        t = t_hi
    return t, t_lo, t_hi


@njit(cache=True)
def _select_threshold(zs, ys, a, b, c, bz, by):  # pragma: no cover - numba
    """t of one large binding group in expected O(k) time, without sorting (quickselect on
    the breakpoints): keep an interval (t_lo, t_hi) with f_g(t_lo) > c >= f_g(t_hi); members
    whose state is the same on the whole interval are folded into constants (at 0, at their
    upper bound: y0_i, in between: z_i - t); a pivot breakpoint of a remaining member halves
    the interval; when no member is left, f_g is linear on the interval and its root is t."""
    k = b - a
    for j in range(k):
        bz[j] = zs[a + j]
        by[j] = ys[a + j]
    t_lo = 0.0
    t_hi = np.inf
    const = 0.0  # sum of y0 over members at their upper bound + sum of z over members between
    n_mid = 0
    m = k
    state = np.uint64(0x9E3779B97F4A7C15)
    while True:
        # fold members whose state does not change on (t_lo, t_hi)
        keep = 0
        for j in range(m):
            z = bz[j]
            lo = z - by[j]
            if z <= t_lo:
                continue
            if lo >= t_hi:
                const += by[j]
            elif lo <= t_lo and z >= t_hi:
                const += z
                n_mid += 1
            else:
                bz[keep] = z
                by[keep] = by[j]
                keep += 1
        m = keep
        if m == 0:
            break
        # pivot: a breakpoint inside (t_lo, t_hi) of a pseudo-random remaining member
        state ^= state << np.uint64(13)
        state ^= state >> np.uint64(7)
        state ^= state << np.uint64(17)
        j = np.intp(state % np.uint64(m))
        lo = bz[j] - by[j]
        p = lo if lo > t_lo else bz[j]
        f = const - n_mid * p
        for i in range(m):
            v = bz[i] - p
            if v > 0.0:
                f += v if v < by[i] else by[i]
        if f > c:
            t_lo = p
        else:
            t_hi = p
    if n_mid == 0:
        return t_hi  # f_g is constant on the interval: it drops to c at t_hi
    t = (const - c) / n_mid
    if t < t_lo:
        t = t_lo
    if t > t_hi:
        t = t_hi
    return t


@njit(cache=True)
def _refine(zs, ys, a, b, c, t):  # pragma: no cover - numba
    """Newton steps on the exact piece at t until t repeats (at most ``REFINE_STEPS``): with
    M the members strictly between their bounds at t and U those at their upper bound,
    t = (sum_U y0_i + sum_M z_i - c) / |M|."""
    for _ in range(REFINE_STEPS):
        total = 0.0
        n_mid = 0
        for j in range(a, b):
            z = zs[j]
            lo = z - ys[j]
            up = lo >= t
            mid = (lo < t) & (z > t)
            total += ys[j] * up + z * mid
            n_mid += mid
        if n_mid == 0:
            break
        t_new = (total - c) / n_mid
        if t_new < 0.0:
            t_new = 0.0
        if t_new == t:
            break
        t = t_new
    return t


@njit(cache=True)
def _onto_capacity(y, ys, at, k, c, load):  # pragma: no cover - numba
    """The load of a binding group after it is put onto c: its free members (strictly between
    0 and their bound ``ys``) scaled onto c - (the load of the capped ones), never past their
    bounds; when the capped ones alone pass c (or no member is free and the group is over),
    every member scaled by c / load. At the optimum a binding group sums to exactly c, but z - t
    rounds by eps |z|: with |z| >> c a group of one ended 1e-5 of c over c, 6 % under it (a
    first-order method's step aimed 1e12 times past the capacity), or, z - t rounding onto a
    bound of 3.4e-6 with c = 2.4e-6, 40 % over; the load was ``load``."""
    capped = 0.0
    free = 0.0
    for p in range(k):
        v = y[at[p]]
        if v >= ys[p]:
            capped += v
        else:
            free += v
    if capped <= c and free > 0.0:
        scale = (c - capped) / free
        total = capped
        for p in range(k):
            v = y[at[p]]
            if 0.0 < v < ys[p]:
                v = min(v * scale, ys[p])
                y[at[p]] = v
                total += v
        return total
    if load <= c:  # under c with every member at its bound: the group does not bind after all
        return load
    scale = c / load
    total = 0.0
    for p in range(k):
        v = y[at[p]] * scale
        y[at[p]] = v
        total += v
    return total


@njit(_SIGNATURE, cache=True)
def project(z, u, group, capacity):  # pragma: no cover - numba
    """(y, t, load): the projection, the per-group threshold t_g = rho_g / 2 and the group
    loads sum_{i in g} y_i (a binding group's summed again over its members after step 4)."""
    n = z.size
    n_groups = capacity.size
    y = np.empty(n)
    t = np.zeros(n_groups)
    load = np.zeros(n_groups)
    count = np.zeros(n_groups, np.intp)  # members with y0 > 0
    for i in range(n):
        v = z[i]
        if v < 0.0:
            v = 0.0
        if v > u[i]:
            v = u[i]
        y[i] = v
        g = group[i]
        load[g] += v
        count[g] += v > 0.0
    # the binding groups' members with y0 > 0, grouped, each group's in input order (a counting
    # sort: its reads run in order; a list threaded through the input made each group's gather a
    # chain of dependent loads, twice the time of the whole projection at n = 10^6)
    start = np.zeros(n_groups + 1, np.intp)
    for g in range(n_groups):
        binds = load[g] > capacity[g]
        start[g + 1] = start[g] + (count[g] if binds else 0)
    order = np.empty(start[n_groups], np.intp)
    fill = start[:n_groups].copy()
    for i in range(n):
        g = group[i]
        if y[i] > 0.0 and load[g] > capacity[g]:
            order[fill[g]] = i
            fill[g] += 1
    size = SMALL
    zs = np.empty(size)
    ys = np.empty(size)
    at = np.empty(size, np.intp)
    w1 = np.empty(size)
    w2 = np.empty(size)
    for g in range(n_groups):
        k = count[g]
        if not load[g] > capacity[g] or k == 0:
            continue
        if k > size:
            size = k
            zs = np.empty(size)
            ys = np.empty(size)
            at = np.empty(size, np.intp)
            w1 = np.empty(size)
            w2 = np.empty(size)
        # the members with y0 > 0, in input order
        first = start[g]
        for p in range(k):
            i = order[first + p]
            zs[p] = z[i]
            ys[p] = y[i]
            at[p] = i
        c = capacity[g]
        if k > SMALL:
            tg = _refine(zs, ys, 0, k, c, _select_threshold(zs, ys, 0, k, c, w1, w2))
        else:
            # unless t lies strictly inside the piece it was computed on, refine it there (written
            # out here: as a call of its own, this was 12 % of the whole projection)
            # groups of 2 and 3 members (OGASched's nodes serve 2-3 ports at the ``large`` preset)
            # get the loop unrolled for their size: 76 us a projection at its points instead of 90
            if k == 3:
                tg, t_lo, t_hi = _brute_threshold(zs, ys, 0, 3, c)
            elif k == 2:
                tg, t_lo, t_hi = _brute_threshold(zs, ys, 0, 2, c)
            else:
                tg, t_lo, t_hi = _brute_threshold(zs, ys, 0, k, c)
            if not t_lo < tg < t_hi:
                tg = _refine(zs, ys, 0, k, c, tg)
        t[g] = tg
        # y = clip(z - t, 0, u) = min(max(z - t, 0), y0) for the members with y0 > 0; the
        # other members of the group stay at y0 = 0
        lg = 0.0
        for p in range(k):
            v = zs[p] - tg
            if v < 0.0:
                v = 0.0
            if v > ys[p]:
                v = ys[p]
            y[at[p]] = v
            lg += v
        if abs(lg - c) > 4.0 * k * EPS * c:
            lg = _onto_capacity(y, ys, at, k, c, lg)
        load[g] = lg
    return y, t, load


@njit(cache=True, fastmath=SUM_FLAGS)
def certificate(y, z, t, load, capacity):  # pragma: no cover - numba
    """(||y - z||^2, the Lagrangian dual value of (33) at rho = 2t, how far rounding may move
    that value), with ``load`` the group loads of y. For y the projection, y = clip(z - t_g, 0, u)
    minimises the Lagrangian at that rho, so the dual value is ||y - z||^2 + sum_g rho_g
    (load_g - c_g): a lower bound on the optimum (weak duality). A load summed over n entries
    rounds by up to n eps load, which rho multiplies: the third value (the caller sums exactly
    where it matters, ``CapacityProjection.dual_bound``)."""
    dist2 = 0.0
    for i in range(y.size):
        d = y[i] - z[i]
        dist2 += d * d
    dual = dist2
    rounding = 0.0
    for g in range(capacity.size):
        dual += 2.0 * t[g] * (load[g] - capacity[g])
        rounding += 2.0 * t[g] * (load[g] + capacity[g])
    return dist2, dual, rounding * y.size * EPS
