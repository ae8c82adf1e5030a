"""numba kernel of the exact P3 solver of paper 002 (``kkt``): imported only when it runs.

See :mod:`optsched.solvers.pseudo_welfare_kkt` for the method. Per unit r (job n's resource
unit), with K = iota (alpha - 1) / alpha, s_r = alpha / C_r, w_hat_r = C_r / (alpha - 1),
shift = alpha / (alpha - 1), the marginal pseudo-welfare is

    d_r(x) = f_r'(x) + b_r - iota                                   w_r + x <  w_hat_r
           = f_r'(x) + b_r - iota/alpha - K exp(s_r (w_r + x) - shift) w_r + x >= w_hat_r

with f_r'(x) = ac_r (kind 0, linear), ac_r / (1 + x) (kind 1, log), ac_r / sqrt(1 + x)
(kind 2, shifted sqrt; ac_r = a_r / 2). It is continuous and non-increasing on [0, u_r];
the kink sits at x_k = clip(w_hat_r - w_r, 0, u_r). The per-unit answer at a multiplier mu
(the smallest maximiser, x^-(mu) = min {x : d_r(x) <= mu}) is 0 if d_r(0) <= mu, u_r if
d_r(u_r) >= mu, else the root of d_r(x) = mu:

- below the kink (kinds 1, 2 only; a linear unit is flat there): closed form,
  x = q - 1 (log) or q^2 - 1 (sqrt) with q = ac_r / (mu + iota - b_r);
- above the kink, linear: closed form, x = (ln((ac_r + b_r - iota/alpha - mu)/K) + shift)/s_r - w_r;
- above the kink, log / sqrt: safeguarded Newton in [x_k, u_r] (bisection when a step leaves
  the bracket), warm-started from the previous answer.
"""

from __future__ import annotations

import math

import numpy as np

from optsched.jit import njit

NEWTON_MAX = 100  # per-unit Newton sweeps (safeguarded; ~3-6 are used)
OUTER_MAX = 200  # Newton steps on mu inside the final smooth interval
WIDTH = 1e-13  # relative bracket width on mu treated as converged
RESIDUAL = 1e-12  # relative |S(mu) - rho| accepted as the root (S is a sum of |R_n| roundings)


@njit(cache=True)
def _fp(kind, ac, x):
    """f'(x)."""
    if kind == 0:
        return ac
    if kind == 1:
        return ac / (1.0 + x)
    return ac / math.sqrt(1.0 + x)


@njit(cache=True)
def _fpp(kind, ac, x):
    """f''(x)."""
    if kind == 0:
        return 0.0
    if kind == 1:
        t = 1.0 / (1.0 + x)
        return -ac * t * t
    t = 1.0 / (1.0 + x)
    return -0.5 * ac * t / math.sqrt(1.0 + x)


@njit(cache=True)
def _d(kind, ac, b, w, x, scale, w_hat, iota, alpha, shift):
    """d_r(x) with the price piece chosen by w + x against w_hat (as prices.price does)."""
    u = w + x
    if u < w_hat:
        return _fp(kind, ac, x) + b - iota
    return _fp(kind, ac, x) + b - (iota / alpha) * (1.0 + (alpha - 1.0) * math.exp(scale * u - shift))


@njit(cache=True)
def _unit(mu, kind, ac, b, w, ub, scale, iota, alpha, shift, big_k, xk, d0, dk, dub, guess):
    """x^-_r(mu) and dx_r/dmu (0 at a bound)."""
    if d0 <= mu:
        return 0.0, 0.0
    if dub >= mu:
        return ub, 0.0
    if xk > 0.0 and dk <= mu and kind != 0:
        # root below the kink, price = iota: f'(x) = mu + iota - b
        q = ac / (mu + iota - b)
        x = q - 1.0 if kind == 1 else q * q - 1.0
        if x < 0.0:
            x = 0.0
        elif x > xk:
            x = xk
        return x, 1.0 / _fpp(kind, ac, x)
    lo = xk
    hi = ub
    c1 = b - iota / alpha
    if kind == 0:
        t = ac + c1 - mu  # = K exp(s (w + x) - shift) > 0 at the root
        x = (math.log(t / big_k) + shift) / scale - w
        if x < lo:
            x = lo
        elif x > hi:
            x = hi
        return x, -1.0 / (scale * t)
    # safeguarded Newton on g(x) = f'(x) + c1 - K exp(s (w + x) - shift) - mu in [lo, hi]
    if lo < guess < hi:
        y = guess
    else:
        g_lo = (dk if xk > 0.0 else d0) - mu
        g_hi = dub - mu
        y = lo + (hi - lo) * (g_lo / (g_lo - g_hi)) if g_lo > 0.0 else lo
    slope = -1.0
    for _ in range(NEWTON_MAX):
        e = big_k * math.exp(scale * (w + y) - shift)
        g = _fp(kind, ac, y) + c1 - e - mu
        slope = _fpp(kind, ac, y) - scale * e
        if g > 0.0:
            lo = y
        elif g < 0.0:
            hi = y
        else:
            break
        step = y - g / slope
        if lo <= step <= hi:
            change = abs(step - y)
            y = step
            # the next error is about the square of this step (relative to x itself: with
            # capacities of 1e-10 an absolute 1e-9 left x 13 % off)
            if change <= 1e-9 * y or change <= 4e-16 * hi:
                break
        else:
            y = 0.5 * (lo + hi)
        if hi - lo <= 4e-16 * (1.0 + hi):
            break
    return y, 1.0 / slope


@njit(cache=True)
def _total(mu, kind, ac, b, w, ub, scale, iota, alpha, shift, big_k, xk, d0, dk, dub, x):
    """S(mu) = sum_r x^-_r(mu) and dS/dmu; ``x`` holds the previous answer (warm start) and
    receives the new one."""
    s = 0.0
    slope = 0.0
    for r in range(x.shape[0]):
        xr, sl = _unit(mu, kind[r], ac[r], b[r], w[r], ub[r], scale[r], iota, alpha, shift, big_k,
                       xk[r], d0[r], dk[r], dub[r], x[r])
        x[r] = xr
        s += xr
        slope += sl
    return s, slope


@njit(cache=True)
def _setup(kind, a, beta, capacity, xbar, usage, iota, alpha):
    """Per unit: (ac, b, w, ub, scale, xk, d0, dk, dub) of :func:`_unit`, and shift, big_k."""
    n = a.shape[0]
    shift = alpha / (alpha - 1.0)
    big_k = iota * (alpha - 1.0) / alpha
    ac = np.empty(n)
    b = np.empty(n)
    w = np.empty(n)
    ub = np.empty(n)
    scale = np.empty(n)
    xk = np.empty(n)
    d0 = np.empty(n)
    dk = np.empty(n)
    dub = np.empty(n)
    for r in range(n):
        k = kind[r]
        ac[r] = a[r] * 0.5 if k == 2 else a[r]
        cap = capacity[r]
        b[r] = beta[r] / cap
        w[r] = usage[r]
        u = min(xbar[r], cap - usage[r])
        ub[r] = u if u > 0.0 else 0.0
        scale[r] = alpha / cap
        w_hat = cap / (alpha - 1.0)
        kink = w_hat - w[r]
        kink = 0.0 if kink < 0.0 else kink
        xk[r] = ub[r] if kink > ub[r] else kink
        d0[r] = _d(k, ac[r], b[r], w[r], 0.0, scale[r], w_hat, iota, alpha, shift)
        dub[r] = _d(k, ac[r], b[r], w[r], ub[r], scale[r], w_hat, iota, alpha, shift)
        # left limit at the kink (price iota); for a linear unit exactly d0 (flat piece)
        dk[r] = _fp(k, ac[r], xk[r]) + b[r] - iota if xk[r] > 0.0 else d0[r]
    return ac, b, w, ub, scale, xk, d0, dk, dub, shift, big_k


@njit(cache=True)
def allocation_at(mu, kind, a, beta, capacity, xbar, usage, iota, alpha):
    """x(mu): every unit's maximiser of its welfare less mu x_r on [0, u_r] (the Lagrangian of
    (4) at the multiplier mu >= 0, one unit at a time)."""
    ac, b, w, ub, scale, xk, d0, dk, dub, shift, big_k = _setup(kind, a, beta, capacity, xbar, usage, iota, alpha)
    x = np.zeros(a.shape[0])
    _total(mu, kind, ac, b, w, ub, scale, iota, alpha, shift, big_k, xk, d0, dk, dub, x)
    return x


@njit(cache=True)
def tangent_slack(mu, x, kind, a, beta, capacity, xbar, usage, iota, alpha):
    """sum_r max over [0, u_r] of the tangent of g_r(x) = welfare_r(x) - mu x at x_r, less
    g_r(x_r): g_r is concave, so g_r(x_r) plus this is at least max g_r on [0, u_r] whatever
    x_r is (the dual bound stays valid when a maximiser is inexact)."""
    ac, b, w, ub, scale, xk, d0, dk, dub, shift, big_k = _setup(kind, a, beta, capacity, xbar, usage, iota, alpha)
    total = 0.0
    for r in range(a.shape[0]):
        w_hat = capacity[r] / (alpha - 1.0)
        slope = _d(kind[r], ac[r], b[r], w[r], x[r], scale[r], w_hat, iota, alpha, shift) - mu
        gain = max(slope * (ub[r] - x[r]), -slope * x[r])
        if gain > 0.0:
            total += gain
    return total


@njit(cache=True)
def kkt_kernel(kind, a, beta, capacity, xbar, usage, rho, iota, alpha):
    """Exact P3: (x, mu*, evaluations of S). Inputs: int64 kind codes, float64 arrays."""
    n = a.shape[0]
    ac, b, w, ub, scale, xk, d0, dk, dub, shift, big_k = _setup(kind, a, beta, capacity, xbar, usage, iota, alpha)

    x = np.zeros(n)
    s0, _ = _total(0.0, kind, ac, b, w, ub, scale, iota, alpha, shift, big_k, xk, d0, dk, dub, x)
    evals = 1
    if s0 <= rho:
        return x, 0.0, evals

    # S^- is non-increasing, smooth between the breakpoints d0, dk, dub, and jumps only at the
    # d0 of linear units with a flat piece. Bisect over the sorted breakpoints for the
    # interval (bp[lo], bp[hi]] that holds mu*: S^-(bp[lo]) > rho >= S^-(bp[hi]).
    top = d0.max()  # S^-(top) = 0
    bp = np.empty(3 * n + 2)
    m = 0
    bp[m] = 0.0
    m += 1
    for r in range(n):
        if 0.0 < d0[r] < top:
            bp[m] = d0[r]
            m += 1
        if 0.0 < xk[r] < ub[r] and 0.0 < dk[r] < top:
            bp[m] = dk[r]
            m += 1
        if 0.0 < dub[r] < top:
            bp[m] = dub[r]
            m += 1
    bp[m] = top
    m += 1
    bp = np.sort(bp[:m])
    lo = 0
    hi = m - 1
    s_lo = s0
    x_lo = x.copy()
    s_hi = 0.0
    x_hi = np.zeros(n)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bp[mid] == bp[lo]:
            lo = mid
            continue
        if bp[mid] == bp[hi]:
            hi = mid
            continue
        s, _ = _total(bp[mid], kind, ac, b, w, ub, scale, iota, alpha, shift, big_k, xk, d0, dk, dub, x)
        evals += 1
        if s > rho:
            lo, s_lo = mid, s
            x_lo[:] = x
        else:
            hi, s_hi = mid, s
            x_hi[:] = x
    mu_lo = bp[lo]
    mu_hi = bp[hi]
    if s_hi == rho:
        return x_hi, mu_hi, evals

    # left limit of S at mu_hi: linear units whose flat level d0 is mu_hi fill their flat piece
    x_up = x_hi.copy()
    for r in range(n):
        if kind[r] == 0 and d0[r] == mu_hi and xk[r] > 0.0:
            x_up[r] = xk[r]
    s_up = x_up.sum()
    if s_up >= rho:
        # mu* = mu_hi and S jumps over rho there: the convex combination with total rho
        theta = (rho - s_hi) / (s_up - s_hi)
        out = x_hi + theta * (x_up - x_hi)
        total = out.sum()
        if total > rho:
            out *= rho / total
        return out, mu_hi, evals

    # S is smooth and strictly decreasing on (mu_lo, mu_hi), from s_lo > rho to s_up < rho:
    # Newton on S(mu) = rho, Illinois regula falsi when a step leaves the bracket
    f_lo = s_lo - rho
    f_hi = s_up - rho
    x_hi[:] = x_up
    x[:] = x_lo
    mu = mu_lo + (mu_hi - mu_lo) * (f_lo / (f_lo - f_hi))
    side = 0
    for _ in range(OUTER_MAX):
        s, slope = _total(mu, kind, ac, b, w, ub, scale, iota, alpha, shift, big_k, xk, d0, dk, dub, x)
        evals += 1
        f = s - rho
        if abs(f) <= RESIDUAL * max(rho, 1.0):  # (4) met to rounding: scale into it
            if s > rho:
                x *= rho / s
            return x, mu, evals
        if f > 0.0:
            mu_lo, f_lo = mu, f
            x_lo[:] = x
            if side == -1:
                f_hi *= 0.5
            side = -1
        else:
            mu_hi, f_hi = mu, f
            x_hi[:] = x
            if side == 1:
                f_lo *= 0.5
            side = 1
        if mu_hi - mu_lo <= 2.0 * WIDTH * (1.0 + mu_hi):
            break
        new = mu - f / slope if slope < 0.0 else mu_lo - 1.0
        if not mu_lo < new < mu_hi:
            new = mu_lo + (mu_hi - mu_lo) * (f_lo / (f_lo - f_hi))
            if not mu_lo < new < mu_hi:
                new = 0.5 * (mu_lo + mu_hi)
        mu = new
    # bracket at rounding width: the combination of its two ends with total rho
    s_a = x_lo.sum()
    s_b = x_hi.sum()
    theta = (rho - s_b) / (s_a - s_b) if s_a > s_b else 0.0
    out = x_hi + theta * (x_lo - x_hi)
    total = out.sum()
    if total > rho:
        out *= rho / total
    return out, mu_hi, evals
