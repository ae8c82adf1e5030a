"""numba kernels of the first-order solver of y* of (10) (``stationary_alm`` backend).

Imported only when that backend runs (numba is heavy to import; ``cache=True`` keeps the
compiled code between runs). Kind codes as in
:data:`optsched.models.stationary_allocation.UTILITIES`: 0 linear, 1 log, 2 reciprocal, 3 poly.
See :mod:`optsched.solvers.stationary_alm` for the method.
"""

from __future__ import annotations

import math

import numpy as np

from optsched.jit import njit
from optsched.models import utilities_kernel as utility
from optsched.solvers.projection_kernel import project

# numba caches a kernel by its own file only: the text of the kernels compiled into this one,
# whose change must rebuild it (tests/test_kernel_stamps.py; an edit of this stamp edits this file)
COMPILED_WITH = {"optsched.models.utilities_kernel": "eadebf9d2282376d",
                 "optsched.solvers.projection_kernel": "11cf429af27df015"}

SPG_MEMORY = 8  # non-monotone Armijo search: compared with the worst of the last 8 values
ARMIJO = 1e-4
ROOT_STEPS = 2200  # each step of dual_bound's root search at least halves the bracket: from 1e308 to 5e-324 in < 2200
STEP_MIN = 1e-10  # the Barzilai-Borwein step is kept in [STEP_MIN, REACH box / |g|_inf]
REACH = 1e3  # a step never aims further than 1e3 box widths: beyond, the projection's
# threshold t ~ |z| cancels against z and loses digits (1e10 lost 1e-7 of the optimum)


@njit(cache=True)
def dot(a, b):  # pragma: no cover - numba
    """a . b in one thread (BLAS ddot starts threads above ~10^4 entries, which on a loaded
    2-core machine cost milliseconds per call)."""
    total = 0.0
    for i in range(a.size):
        total += a[i] * b[i]
    return total


@njit(cache=True)
def pair_sums(y, pair, n_pairs):  # pragma: no cover - numba
    out = np.zeros(n_pairs)
    for i in range(y.size):
        out[pair[i]] += y[i]
    return out


@njit(cache=True)
def objective(y, kind, weight, alpha, pair, overhead):  # pragma: no cover - numba
    """(gain, overhead) of Q(y): sum_i w_i f_i(y_i) and sum_l max_k o_lk S_lk(y)."""
    L, K = overhead.shape
    gain = 0.0
    for i in range(y.size):
        if weight[i] != 0.0:
            gain += weight[i] * utility.value(kind[i], y[i], alpha[i])
    sums = pair_sums(y, pair, L * K)
    cost = 0.0
    for l in range(L):
        top = overhead[l, 0] * sums[l * K]
        for k in range(1, K):
            v = overhead[l, k] * sums[l * K + k]
            if v > top:
                top = v
        cost += top
    return gain, cost


@njit(cache=True, inline="always")
def _simplex(v, out, s):  # pragma: no cover - numba
    """Euclidean projection of the short vector v onto the probability simplex (``s``: scratch
    of v's size, sorted into by insertion: no allocation per port)."""
    K = v.size
    for j in range(K):
        x = v[j]
        p = j
        while p > 0 and s[p - 1] > x:
            s[p] = s[p - 1]
            p -= 1
        s[p] = x
    total = 0.0
    theta = 0.0
    for j in range(K - 1, -1, -1):
        total += s[j]
        t = (total - 1.0) / (K - j)
        if s[j] - t > 0.0:
            theta = t
    for k in range(K):
        x = v[k] - theta
        out[k] = x if x > 0.0 else 0.0


@njit(cache=True, inline="always")
def _terms(code, lo, hi, y, weight, alpha, pair, price, d, grad):  # pragma: no cover - numba
    """sum_i w_i f_i(y_i) over the variables lo..hi-1 of one utility kind ``code`` (a literal
    at each call, so every loop runs one formula, without a branch on the kind), and their
    scaled gradients d_i (w_i f_i'(y_i) - price_{p(i)})."""
    gain = 0.0
    for i in range(lo, hi):
        gain += weight[i] * utility.value(code, y[i], alpha[i])
        grad[i] = d[i] * (weight[i] * utility.slope(code, y[i], alpha[i]) - price[pair[i]])
    return gain


@njit(cache=True)
def smoothed(y, kind_ptr, weight, alpha, pair, overhead, scale, w0, rho, d, grad, w):  # pragma: no cover - numba
    """The augmented Lagrangian of the epigraph form at (y, w0), maximised over t exactly:

        Psi(y) = sum_i w_i f_i(y_i) - sum_l m_l(S_l(y)),
        m_l(S) = max_{v in simplex} sum_k v_k o_lk S_k - scale_l / (2 rho) ||v - w0_l||^2,

    whose maximiser is v = Pi_simplex(w0_l + (rho / scale_l) o_l * S_l), written to ``w``.
    Returns Psi(y); ``grad`` gets d_i (w_i f_i'(y_i) - o_{p(i)} w_{p(i)}), the gradient in the
    scaled variables y / d. Ports with scale_l = 0 (no overhead) keep w = w0 and add nothing.
    The variables are in kind order: those of kind c are ``kind_ptr[c]:kind_ptr[c + 1]``."""
    L, K = overhead.shape
    sums = pair_sums(y, pair, L * K)
    price = np.empty(L * K)
    v = np.empty(K)
    proj = np.empty(K)
    scratch = np.empty(K)
    cost = 0.0
    for l in range(L):
        s = scale[l]
        if s <= 0.0:
            for k in range(K):
                w[l, k] = w0[l, k]
                price[l * K + k] = 0.0
            continue
        for k in range(K):
            v[k] = w0[l, k] + rho / s * overhead[l, k] * sums[l * K + k]
        _simplex(v, proj, scratch)
        dist = 0.0
        for k in range(K):
            w[l, k] = proj[k]
            price[l * K + k] = overhead[l, k] * proj[k]
            cost += price[l * K + k] * sums[l * K + k]
            dist_k = proj[k] - w0[l, k]
            dist += dist_k * dist_k
        cost -= s / (2.0 * rho) * dist
    gain = _terms(utility.LINEAR, kind_ptr[0], kind_ptr[1], y, weight, alpha, pair, price, d, grad)
    gain += _terms(utility.LOG, kind_ptr[1], kind_ptr[2], y, weight, alpha, pair, price, d, grad)
    gain += _terms(utility.RECIPROCAL, kind_ptr[2], kind_ptr[3], y, weight, alpha, pair, price, d, grad)
    gain += _terms(utility.POLY, kind_ptr[3], kind_ptr[4], y, weight, alpha, pair, price, d, grad)
    return gain - cost


@njit(cache=True)
def axpy(x, a, v, out):  # pragma: no cover - numba
    """out = x + a v."""
    for i in range(x.size):
        out[i] = x[i] + a * v[i]


@njit(cache=True)
def trial(u, lam, direction, d, u_new, y_new):  # pragma: no cover - numba
    """u_new = u + lam direction and y_new = d u_new (the point in the original variables)."""
    for i in range(u.size):
        x = u[i] + lam * direction[i]
        u_new[i] = x
        y_new[i] = x * d[i]


@njit(cache=True)
def abs_max(x):  # pragma: no cover - numba
    """max_i |x_i| (0 for no entries), as the largest bit pattern of |x_i| read as an integer:
    for doubles >= 0 that order is the numeric one, and an integer max runs in vector
    registers where numba's floating max does not (measured 1.8 us against 15 us at 15k)."""
    bits = x.view(np.int64)
    top = 0
    for i in range(bits.size):
        b = bits[i] & 0x7FFFFFFFFFFFFFFF
        top = b if b > top else top
    out = np.empty(1, np.int64)
    out[0] = top
    return out.view(np.float64)[0]


@njit(cache=True)
def direction(p, u, g):  # pragma: no cover - numba
    """p <- p - u (the projected step from u) and (g.p, |p|_inf): the ascent slope and reach."""
    slope = 0.0
    for i in range(u.size):
        v = p[i] - u[i]
        p[i] = v
        slope += g[i] * v
    return slope, abs_max(p)


@njit(cache=True)
def spectral_terms(u_new, u, g_new, g):  # pragma: no cover - numba
    """(s.s, -s.r, |g_new|_inf) for s = u_new - u, r = g_new - g: the Barzilai-Borwein step
    is s.s / (-s.r)."""
    ss = 0.0
    sr = 0.0
    for i in range(u.size):
        s = u_new[i] - u[i]
        ss += s * s
        sr -= s * (g_new[i] - g[i])
    return ss, sr, abs_max(g_new)


@njit(cache=True)
def group_scaling(y, kind, weight, alpha, upper, group, n_groups, coupling):  # pragma: no cover - numba
    """Per-group step scale d_g = 1 / sqrt(mean curvature of the group's interior members
    (+ ``coupling``)), the mean over all members when none is interior. A scale constant on
    each group keeps the projection onto Y a capacity projection (u / d, c / d)."""
    inner = np.zeros(n_groups)
    n_inner = np.zeros(n_groups)
    every = np.zeros(n_groups)
    n_every = np.zeros(n_groups)
    for i in range(y.size):
        g = group[i]
        c = weight[i] * utility.curvature(kind[i], y[i], alpha[i]) + coupling[i]
        every[g] += c
        n_every[g] += 1.0
        if 0.0 < y[i] < upper[i]:
            inner[g] += c
            n_inner[g] += 1.0
    d = np.ones(n_groups)
    for g in range(n_groups):
        c = inner[g] / n_inner[g] if n_inner[g] > 0 else (every[g] / n_every[g] if n_every[g] > 0 else 0.0)
        if c > 0.0:
            d[g] = 1.0 / math.sqrt(c)
    return d


@njit(cache=True)
def _group_load(kind, weight, alpha, upper, members, a, b, price, m):  # pragma: no cover - numba
    load = 0.0
    for j in range(a, b):
        i = members[j]
        load += utility.response(kind[i], weight[i], alpha[i], upper[i], price[i] + m)
    return load


@njit(cache=True)
def dual_bound(kind, weight, alpha, upper, group_ptr, group_members, capacity, price):  # pragma: no cover - numba
    """min over mu >= 0 of D(w, mu) (the per-variable prices ``price`` = o_{p(i)} w_{p(i)}),
    one group at a time: mu_g = 0 when the responses fit c_g, else the root of the load
    sum_i y_i(price_i + mu) = c_g (decreasing in mu; every y_i is 0 above max_i w_i f_i'(0)),
    bracketed and found by regula falsi (Illinois), halving the bracket whenever a step does
    not shrink it by half, to a relative width of 1e-13 or for ``ROOT_STEPS`` steps (with
    subnormal prices, where 1e-13 of hi underflows, the bracket stopped at one ulp and the loop
    never ended). D is valid at any mu >= 0; the mu
    used is the bracket's upper end, where the load fits. Returns (D, mu, y) with y the
    responses at mu (a point of Y)."""
    G = capacity.size
    mu = np.zeros(G)
    y = np.zeros(upper.size)
    total = 0.0
    for g in range(G):
        a, b = group_ptr[g], group_ptr[g + 1]
        c = capacity[g]
        top = 0.0
        for j in range(a, b):
            i = group_members[j]
            s = weight[i] * utility.slope(kind[i], 0.0, alpha[i])
            top = s if s > top else top
        m = 0.0
        f_lo = _group_load(kind, weight, alpha, upper, group_members, a, b, price, 0.0) - c
        if f_lo > 0.0:
            lo, hi = 0.0, top
            f_hi = -c  # no load at top
            side = 0
            for _ in range(ROOT_STEPS):
                width = hi - lo
                if not width > 1e-13 * hi:
                    break
                t = lo + f_lo * (hi - lo) / (f_lo - f_hi) if f_lo > f_hi else 0.5 * (lo + hi)
                if not lo < t < hi:
                    t = 0.5 * (lo + hi)
                f_t = _group_load(kind, weight, alpha, upper, group_members, a, b, price, t) - c
                if f_t > 0.0:
                    lo, f_lo = t, f_t
                    if side == 1:
                        f_hi *= 0.5  # Illinois: the kept end's value is halved
                    side = 1
                else:
                    hi, f_hi = t, f_t
                    if side == -1:
                        f_lo *= 0.5
                    side = -1
                if hi - lo > 0.5 * width:  # slow step: bisect once
                    t = 0.5 * (lo + hi)
                    f_t = _group_load(kind, weight, alpha, upper, group_members, a, b, price, t) - c
                    if f_t > 0.0:
                        lo, f_lo = t, f_t
                    else:
                        hi, f_hi = t, f_t
                    side = 0
            m = hi
        mu[g] = m
        total += m * c
        for j in range(a, b):
            i = group_members[j]
            q = price[i] + m
            v = utility.response(kind[i], weight[i], alpha[i], upper[i], q)
            y[i] = v
            total += weight[i] * utility.value(kind[i], v, alpha[i]) - q * v
    return total, mu, y


@njit(cache=True)
def spg(y, kind, kind_ptr, weight, alpha, upper, group, capacity, pair, overhead, scale, w0, rho, coupling, steps,
        reduction, step, floor):  # pragma: no cover - numba
    """Spectral projected gradient (Birgin-Martinez-Raydan) on Psi(., w0) of :func:`smoothed`
    over Y, from y, until the projected gradient |P(u + s g) - u|_inf / s has shrunk by the
    factor ``reduction`` from its first value, or for ``steps`` steps; returns (y, steps
    done, last BB step).

    Variables are rescaled per group, u = y / d_g with d_g of :func:`group_scaling`; as d is
    constant on a group, Y in u is again a capacity polytope (bounds u / d, capacities c / d)
    and every step is the exact projection (32) of ``projection_kernel.project`` (the kernel
    behind the ``fast`` backend). A step goes to P(u + step g) - u with a non-monotone Armijo
    search along it (a failed trial lam is cut to the maximiser of the quadratic through f,
    the slope and the failed value, kept in [0.1, 0.5] lam); the next step length is
    Barzilai-Borwein's s.s / (-s.r), capped so that u + step g stays within ``REACH`` box
    widths of Y. A slope below 1e-15 max(``floor``, |f|) is stationary (``floor``: the
    objective's own scale where it is below 1)."""
    n = y.size
    d_group = group_scaling(y, kind, weight, alpha, upper, group, capacity.size, coupling)
    d = np.empty(n)
    upper_u = np.empty(n)
    u = np.empty(n)
    for i in range(n):
        d[i] = d_group[group[i]]
        upper_u[i] = upper[i] / d[i]
        u[i] = y[i] / d[i]
    capacity_u = capacity / d_group
    box = max(upper_u.max(), 1e-300)
    w = np.empty_like(w0)
    g = np.empty(n)
    g_new = np.empty(n)
    u_new = np.empty(n)
    y_new = np.empty(n)
    z = np.empty(n)
    f = smoothed(y, kind_ptr, weight, alpha, pair, overhead, scale, w0, rho, d, g, w)
    g_top = abs_max(g)
    history = np.full(SPG_MEMORY, f)
    done = 0
    for it in range(steps):
        step = min(step, REACH * box / g_top) if g_top > 0.0 else step
        axpy(u, step, g, z)
        p = project(z, upper_u, group, capacity_u)[0]
        slope, reach = direction(p, u, g)
        if it == 0:
            first = reach / step
        if not slope > 1e-15 * max(floor, abs(f)) or reach / step <= reduction * first:
            break  # stationary, or solved as well as asked
        done = it + 1
        worst = history.min()
        lam = 1.0
        while True:
            trial(u, lam, p, d, u_new, y_new)
            f_new = smoothed(y_new, kind_ptr, weight, alpha, pair, overhead, scale, w0, rho, d, g_new, w)
            if f_new >= worst + ARMIJO * lam * slope or lam < 1e-12:
                break
            # maximiser of the quadratic through f, the slope at 0 and f_new, kept in [0.1, 0.5] lam
            bend = f_new - f - lam * slope
            cut = 0.5 * slope * lam / -bend if bend < 0.0 else 0.5
            lam *= min(max(cut, 0.1), 0.5)
        ss, sr, g_top = spectral_terms(u_new, u, g_new, g)
        step = max(ss / sr, STEP_MIN) if sr > 0.0 else np.inf
        u, u_new = u_new, u
        g, g_new = g_new, g
        f = f_new
        history[it % SPG_MEMORY] = f
    out = np.empty(n)
    for i in range(n):  # u * d may round just past a bound
        v = u[i] * d[i]
        out[i] = 0.0 if v < 0.0 else (upper[i] if v > upper[i] else v)
    return out, done, step
