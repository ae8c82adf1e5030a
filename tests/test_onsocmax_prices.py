"""Prices of ONSOCMAX (paper 002): alpha-hat of the corrected (40), phi_r of Theorem 2, its
closed-form integral, and the utilities' calculus."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import quad

from optsched.models import prices, utilities

ratios = st.floats(min_value=1.0, max_value=1e9, allow_nan=False)


def test_alpha_hat_is_two_at_ratio_one():
    assert prices.alpha_hat(1.0) == 2.0


@given(ratios)
def test_alpha_hat_satisfies_40(r):
    a = prices.alpha_hat(r)
    assert a >= 2.0
    assert abs(a - 1 - 1 / (a - 1) - np.log((a * r - 1) / (a - 1))) <= 1e-10


def test_alpha_hat_residual_on_a_grid_and_increasing():
    r = np.concatenate([[1.0], 1.0 + np.geomspace(1e-12, 1e12, 4000)])
    a = prices.alpha_hat(r)
    assert np.abs(prices.alpha_residual(a, r)).max() <= 1e-10
    assert (np.diff(a) >= 0).all() and a[-1] > a[0]
    # strictly increasing wherever the ratio moves by more than rounding
    assert (np.diff(a)[np.diff(r) > 1e-6] > 0).all()
    # Theorem 2 (ii): alpha-hat - 1 >= ln(ratio), the optimal ratio of one-way trading
    assert (a - 1 - np.log(r) >= -1e-12).all()


@given(ratios, ratios)
def test_alpha_hat_monotone(r1, r2):
    lo, hi = sorted((r1, r2))
    assert prices.alpha_hat(lo) <= prices.alpha_hat(hi)


@pytest.mark.parametrize("bad", [0.5, -1.0, np.nan, np.inf])
def test_alpha_hat_rejects_bad_ratio(bad):
    with pytest.raises(ValueError, match="ratio"):
        prices.alpha_hat(bad)


price_cases = st.tuples(
    st.floats(1.0, 50.0),  # capacity
    st.floats(0.05, 5.0),  # iota
    st.floats(1.0, 1e4),  # upsilon / iota
)


@given(price_cases)
def test_price_shape(case):
    cap, iota, ratio = case
    ups = iota * ratio
    al = prices.alpha_hat(ratio)
    wh = prices.threshold(cap, al)
    assert wh <= cap
    # continuous at the threshold, upsilon at C_r, +inf above
    below = prices.price(np.nextafter(wh, 0), cap, iota, ups)
    at = prices.price(wh, cap, iota, ups)
    assert below == iota
    assert abs(at - iota) <= 1e-12 * iota
    assert abs(prices.price(cap, cap, iota, ups) - ups) <= 1e-10 * ups
    assert prices.price(np.nextafter(cap, np.inf), cap, iota, ups) == np.inf
    # non-decreasing on a fine grid through both pieces
    grid = np.linspace(0.0, cap, 2001)
    phi = prices.price(grid, cap, iota, ups)
    assert (np.diff(phi) >= -1e-12 * ups).all()
    assert phi.min() >= iota and phi.max() <= ups * (1 + 1e-10)


def test_price_matches_theorem_2_printed_coefficient():
    cap, iota, ups = 20.0, 0.7, 4.2
    al = prices.alpha_hat(ups / iota)
    w = np.linspace(prices.threshold(cap, al), cap, 50)
    printed = (ups - iota) / (np.exp(al) - np.exp(al / (al - 1))) * np.exp(al * w / cap) + iota / al
    assert np.allclose(prices.price(w, cap, iota, ups), printed, rtol=1e-9)


@given(price_cases, st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_integral_matches_quadrature(case, u0, u1):
    cap, iota, ratio = case
    ups = iota * ratio
    w0, w1 = sorted((u0 * cap, u1 * cap))
    wh = prices.threshold(cap, prices.alpha_hat(ratio))
    closed = float(prices.price_integral(w0, w1, cap, iota, ups))
    num, _ = quad(lambda u: float(prices.price(u, cap, iota, ups)), w0, w1, points=[wh] if w0 < wh < w1 else None,
                  epsabs=1e-13, epsrel=1e-12, limit=200)
    assert abs(closed - num) <= 1e-9 * max(1.0, abs(num))
    # signed, additive, infinite past capacity
    assert float(prices.price_integral(w1, w0, cap, iota, ups)) == pytest.approx(-closed, rel=1e-12, abs=1e-12)
    mid = 0.5 * (w0 + w1)
    split = prices.price_integral(w0, mid, cap, iota, ups) + prices.price_integral(mid, w1, cap, iota, ups)
    assert float(split) == pytest.approx(closed, rel=1e-12, abs=1e-12)
    assert prices.price_integral(w0, cap * 1.001, cap, iota, ups) == np.inf


def test_price_rejects_bad_parameters():
    with pytest.raises(ValueError, match="iota"):
        prices.price(1.0, 10.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="upsilon"):
        prices.price(1.0, 10.0, 2.0, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        prices.price(1.0, 10.0, 1.0, 2.0, alpha=1.0)


kinds = st.sampled_from(range(len(utilities.KINDS)))


@given(kinds, st.floats(0.1, 5.0), st.floats(0.0, 30.0))
def test_utility_calculus(kind, a, x):
    h = 1e-6
    assert utilities.value(kind, a, 0.0) == 0.0
    num = (utilities.value(kind, a, x + h) - utilities.value(kind, a, max(x - h, 0.0))) / (x + h - max(x - h, 0.0))
    assert utilities.derivative(kind, a, x) == pytest.approx(float(num), rel=1e-6, abs=1e-8)
    num2 = (utilities.derivative(kind, a, x + h) - utilities.derivative(kind, a, max(x - h, 0.0))) / (x + h - max(x - h, 0.0))
    assert utilities.second_derivative(kind, a, x) == pytest.approx(float(num2), rel=1e-5, abs=1e-8)
    if utilities.KINDS[kind] != "linear":
        m = utilities.derivative(kind, a, x)
        assert utilities.inverse_derivative(kind, a, m) == pytest.approx(x, rel=1e-9, abs=1e-9)


def test_sqrt_kind_is_shifted_and_finite_at_zero():
    code = utilities.kind_codes("sqrt")[0]
    assert utilities.value(code, 2.0, 3.0) == pytest.approx(2.0 * (2.0 - 1.0))
    assert utilities.derivative(code, 2.0, 0.0) == pytest.approx(1.0)


def test_unknown_kind_rejected():
    with pytest.raises(ValueError, match="utility"):
        utilities.kind_codes(["linear", "cubic"])


def test_iota_upsilon_are_extreme_marginals():
    rng = np.random.default_rng(3)
    n = 200
    kind = rng.integers(0, 3, n)
    a, beta = rng.uniform(1, 3, n), rng.uniform(0.1, 0.5, n)
    cap, xbar = rng.normal(20, 2, n), rng.normal(7, 1, n)
    iota, ups = prices.iota_upsilon(kind, a, beta, cap, xbar)
    grid = np.linspace(0, 1, 101)[:, None] * xbar[None, :]
    marg = utilities.derivative(kind, a, grid) + beta / cap
    assert iota == pytest.approx(marg.min(), rel=1e-12)
    assert ups == pytest.approx(marg.max(), rel=1e-12)
