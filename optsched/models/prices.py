"""Marginal-cost prices of ONSOCMAX (paper 002, Theorem 2) with the corrections page applied.

Public API (plain numpy; array arguments broadcast)::

    alpha_hat(ratio)                                   competitive ratio alpha-hat of (40)
    alpha_residual(alpha, ratio)                       left minus right side of (40)
    threshold(capacity, alpha)                         w_hat_r = C_r / (alpha - 1)
    price(w, capacity, iota, upsilon, alpha=None)      phi_r(w) of Theorem 2
    price_derivative(w, capacity, iota, upsilon, alpha=None)
    price_integral(w0, w1, capacity, iota, upsilon, alpha=None)
                                                       int_{w0}^{w1} phi_r(u) du, closed form
    iota_upsilon(kind, a, beta, capacity, xbar)        (iota, upsilon) of (8)

``alpha=None`` means alpha_hat(upsilon / iota).

Equation (40), corrected: with ratio = upsilon / iota >= 1,

    alpha - 1 = 1 / (alpha - 1) + ln( (alpha * ratio - 1) / (alpha - 1) ).          (40)

With y = alpha - 1 this is h(y) = y - 1/y - ln(ratio + (ratio - 1)/y) = 0, and
h'(y) = 1 + 1/y^2 + (ratio - 1) / (y (ratio y + ratio - 1)) > 0, so the root is unique;
h(1) = -ln(2 ratio - 1) <= 0 and h(2 + ln(2 ratio - 1)) >= 1 > 0 bracket it. alpha-hat = 2
exactly at ratio 1 and grows like 1 + ln(ratio).

Theorem 2's price (27) with C_r in the exponent:

    phi_r(w) = iota                                                  w <  w_hat = C_r/(alpha-1)
             = (upsilon - iota) / (e^alpha - e^(alpha/(alpha-1))) e^(alpha w / C_r) + iota/alpha
                                                                     w_hat <= w <= C_r
             = +inf                                                  w >  C_r

The coefficient is 0/0 at upsilon = iota. Because alpha-hat solves (40) it equals
iota (alpha - 1) / alpha * e^(-alpha/(alpha-1)) (the condition phi_r(w_hat) = iota), so we
evaluate the exponential piece as

    phi_r(w) = (iota / alpha) * (1 + (alpha - 1) * exp(alpha w / C_r - alpha / (alpha - 1))),

which is continuous at w_hat by construction, has no cancellation near ratio 1, and equals
upsilon at C_r (to the accuracy of alpha-hat). Passing an ``alpha`` other than alpha-hat gives
this same iota-anchored curve (phi(C_r) then differs from upsilon).

Its integral (Phi_r of (12)) splits at w_hat: iota times the length below w_hat, plus

    (iota/alpha) (b - a) + iota (alpha - 1) C_r / alpha^2 * e^(alpha a/C_r - alpha/(alpha-1)) * expm1(alpha (b - a)/C_r)

over [a, b] = [max(w0, w_hat), max(w1, w_hat)]; +inf when w1 > C_r.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optsched.models import utilities


# The price's exponent alpha w / C_r - alpha / (alpha - 1) reaches about alpha - 1 at capacity:
# beyond ~700 e^ overflows (from alpha = 1e4 the objective at x = 0 was NaN). alpha-hat of any
# ratio a model's numbers allow (at most 1e200) is below 470.
LARGEST_ALPHA = 500.0


def _h(y: np.ndarray, r: np.ndarray) -> np.ndarray:
    return y - 1.0 / y - np.log(r + (r - 1.0) / y)


def _dh(y: np.ndarray, r: np.ndarray) -> np.ndarray:
    return 1.0 + 1.0 / y**2 + (r - 1.0) / (y * (r * y + r - 1.0))


def alpha_hat(ratio: Any) -> Any:
    """alpha-hat solving (40) for ratio = upsilon / iota >= 1 (float in, float out; arrays
    elementwise). Safeguarded Newton inside the bracket [1, 2 + ln(2 ratio - 1)] on y = alpha-1."""
    r = np.asarray(ratio, dtype=np.float64)
    if not np.isfinite(r).all() or (r < 1.0).any():
        raise ValueError("ratio: upsilon / iota must be finite and >= 1")
    lo = np.ones_like(r)
    hi = 2.0 + np.log(2.0 * r - 1.0)
    y = 0.5 * (lo + hi)
    for _ in range(200):
        hy = _h(y, r)
        lo = np.where(hy <= 0.0, y, lo)
        hi = np.where(hy >= 0.0, y, hi)
        step = y - hy / _dh(y, r)
        inside = (step >= lo) & (step <= hi)
        new = np.where(inside, step, 0.5 * (lo + hi))
        new = np.where(hy == 0.0, y, new)
        if np.all(np.abs(new - y) <= 2e-15 * new):
            y = new
            break
        y = new
    y = np.where(r == 1.0, 1.0, y)  # h(y) = y - 1/y there: the root is exactly 1
    out = 1.0 + y
    return float(out) if out.ndim == 0 else out


def alpha_residual(alpha: Any, ratio: Any) -> Any:
    """(alpha - 1) - 1/(alpha - 1) - ln((alpha ratio - 1)/(alpha - 1)): zero at alpha-hat."""
    a = np.asarray(alpha, dtype=np.float64)
    r = np.asarray(ratio, dtype=np.float64)
    return (a - 1.0) - 1.0 / (a - 1.0) - np.log((a * r - 1.0) / (a - 1.0))


def threshold(capacity: Any, alpha: float) -> Any:
    """w_hat_r = C_r / (alpha - 1): below it the price is the floor iota."""
    return np.asarray(capacity, dtype=np.float64) / (alpha - 1.0)


def _alpha(iota: float, upsilon: float, alpha: float | None) -> float:
    if not (np.isfinite(iota) and iota > 0.0):
        raise ValueError(f"iota: must be finite and > 0, got {iota}")
    if not (np.isfinite(upsilon) and upsilon >= iota):
        raise ValueError(f"upsilon: must be finite and >= iota, got {upsilon}")
    if alpha is None:
        return float(alpha_hat(upsilon / iota))
    if not (np.isfinite(alpha) and 1.0 < alpha <= LARGEST_ALPHA):
        raise ValueError(f"alpha: must be in (1, {LARGEST_ALPHA:g}], got {alpha}")
    return float(alpha)


def price(w: Any, capacity: Any, iota: float, upsilon: float, alpha: float | None = None) -> np.ndarray:
    """phi_r(w) of Theorem 2 (see the module docstring); +inf above C_r."""
    al = _alpha(iota, upsilon, alpha)
    w = np.asarray(w, dtype=np.float64)
    c = np.asarray(capacity, dtype=np.float64)
    with np.errstate(over="ignore"):
        mid = (iota / al) * (1.0 + (al - 1.0) * np.exp(al * (w / c) - al / (al - 1.0)))
    return np.where(w < c / (al - 1.0), iota, np.where(w <= c, mid, np.inf))


def price_derivative(w: Any, capacity: Any, iota: float, upsilon: float, alpha: float | None = None) -> np.ndarray:
    """phi_r'(w): 0 below w_hat, iota (alpha - 1)/C_r e^(alpha w/C_r - alpha/(alpha-1)) up to C_r."""
    al = _alpha(iota, upsilon, alpha)
    w = np.asarray(w, dtype=np.float64)
    c = np.asarray(capacity, dtype=np.float64)
    with np.errstate(over="ignore"):
        mid = iota * (al - 1.0) / c * np.exp(al * (w / c) - al / (al - 1.0))
    return np.where(w < c / (al - 1.0), 0.0, np.where(w <= c, mid, np.inf))


def price_integral(
    w0: Any, w1: Any, capacity: Any, iota: float, upsilon: float, alpha: float | None = None
) -> np.ndarray:
    """int_{w0}^{w1} phi_r(u) du in closed form (signed if w1 < w0); +inf if max(w0, w1) > C_r.
    Below 0 the price is taken as iota (only the ALM iterates go there)."""
    al = _alpha(iota, upsilon, alpha)
    w0 = np.asarray(w0, dtype=np.float64)
    w1 = np.asarray(w1, dtype=np.float64)
    c = np.asarray(capacity, dtype=np.float64)
    wh = c / (al - 1.0)
    flat = iota * (np.minimum(w1, wh) - np.minimum(w0, wh))
    lo = np.maximum(w0, wh)
    hi = np.maximum(w1, wh)
    with np.errstate(over="ignore", invalid="ignore"):
        curved = (iota / al) * (hi - lo) + iota * (al - 1.0) * c / al**2 * np.exp(
            al * (lo / c) - al / (al - 1.0)
        ) * np.expm1(al * (hi - lo) / c)
    return np.where((w1 > c) | (w0 > c), np.inf, flat + curved)


def iota_upsilon(kind: Any, a: Any, beta: Any, capacity: Any, xbar: Any) -> tuple[float, float]:
    """(8): iota = min over (n, r) of f_nr'(xbar_nr) + beta_nr / C_r, upsilon = max of
    f_nr'(0) + beta_nr / C_r. The slope f' of a concave utility ranges over [f'(xbar), f'(0)]
    on [0, xbar], so these are the extreme marginal social welfares (8) bounds. Flat arrays
    over all (job, unit) pairs; ``capacity`` is C_r of each pair's unit."""
    b = np.asarray(beta, dtype=np.float64) / np.asarray(capacity, dtype=np.float64)
    low = utilities.derivative(kind, a, xbar) + b
    high = utilities.derivative(kind, a, 0.0) + b
    if low.size == 0:
        raise ValueError("iota_upsilon: needs at least one (job, unit) pair")
    return float(np.min(low)), float(np.max(high))
