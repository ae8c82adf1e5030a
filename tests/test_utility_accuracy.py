"""The concave utilities keep their relative accuracy near y = 0, in every place they are evaluated.

1/a - 1/(y + a) and a (sqrt(1 + y) - 1) cancel near y = 0: at y = 1e-10 the difference keeps
about 6 digits. At OGASched's contention 1e-10 every y is that small, and y*'s duality gap,
taken between two such sums, came out negative (the bound 4.6e-8 below the objective). Each
place now writes them as (y / (y + a)) / a and a (y / (sqrt(1 + y) + 1)). The reference is exact
rational arithmetic (reciprocal) or 650-digit decimals (sqrt, log).
"""

from __future__ import annotations

from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from optsched.models import utilities
from optsched.models.stationary_allocation import UTILITIES

YS = [1e-300, 1e-14, 3e-12, 1e-10, 7e-7, 1e-3, 0.5, 1.0, 37.0, 1e6, 1e12]
ALPHAS = [0.3, 1.0, 1.4976, 25.0]
REL = 4 * np.finfo(float).eps


def exact(kind: str, y: float, a: float) -> float:
    getcontext().prec = 650  # 1 + 1e-300 held exactly
    if kind == "linear":
        return a * y
    if kind == "reciprocal":
        fy, fa = Fraction(y), Fraction(a)
        return float(1 / fa - 1 / (fy + fa))
    if kind == "log":
        return float(Decimal(a) * (Decimal(1) + Decimal(y)).ln())
    return float(Decimal(a) * ((Decimal(1) + Decimal(y)).sqrt() - 1))  # poly / sqrt


def close(value: float, reference: float) -> bool:
    return abs(value - reference) <= REL * abs(reference)


@pytest.mark.parametrize("kind", list(UTILITIES))
def test_the_numpy_utilities_of_y_star(kind: str) -> None:
    f = UTILITIES[kind][0]
    for a in ALPHAS:
        values = f(np.array(YS), np.full(len(YS), a))
        for y, v in zip(YS, values):
            assert close(float(v), exact(kind, y, a)), (kind, y, a, float(v), exact(kind, y, a))


def test_the_shared_sqrt_and_log_of_paper_002() -> None:
    for a in ALPHAS:
        for y in YS:
            assert close(float(utilities.sqrt_value(a, y)), exact("poly", y, a)), (y, a)
            for kind, name in (("sqrt", "poly"), ("log", "log"), ("linear", "linear")):
                code = utilities.kind_codes([kind])
                got = float(utilities.value(code, np.array([a]), np.array([y]))[0])
                assert close(got, exact(name, y, a)), (kind, y, a, got)


@pytest.mark.parametrize("code,kind", list(enumerate(UTILITIES)))
def test_the_compiled_value_of_stationary_alm_and_the_slot_reward(code: int, kind: str) -> None:
    from optsched.models.utilities_kernel import value

    for a in ALPHAS:
        for y in YS:
            assert close(value(code, y, a), exact(kind, y, a)), (kind, y, a)


@pytest.mark.parametrize("code,kind", list(enumerate(UTILITIES)))
def test_the_compiled_slot_reward_and_its_gradient_pass(code: int, kind: str) -> None:
    """OGASched's per-slot gain: one port, one resource (no overhead: beta = 0), one channel
    per y, all of one kind; the gain is their sum, each term accurate as above."""
    from optsched.ogasched.utility_kernel import slot_terms, slot_terms_gradient

    for a in ALPHAS:
        for y in YS:
            args = (np.array([1.0]), np.array([y]), np.array([0, 1]), _kind_ptr(code), np.array([0]),
                    np.array([0.0]), np.array([a]))
            gain, overhead = slot_terms(*args)
            gain2 = slot_terms_gradient(*args, np.empty(1))[0]
            assert overhead == 0.0
            assert close(gain, exact(kind, y, a)) and close(gain2, exact(kind, y, a)), (kind, y, a, gain, gain2)


def _kind_ptr(code: int) -> np.ndarray:
    """kind_ptr of one port whose one channel is of kind ``code``."""
    ptr = np.zeros((1, len(UTILITIES) + 1), dtype=np.int64)
    ptr[0, code + 1:] = 1
    return ptr


# --- probe BF: the first rewrite, y / (a (y + a)) and a y / (sqrt(1 + y) + 1), formed a^2 (0/0
# below a = 1.5e-162) and a y (an overflow before the value), and gave NaN at y = inf.
def test_reciprocal_value_at_zero_tiny_alpha():
    from optsched.models.stationary_allocation import StationaryAllocation
    assert UTILITIES["reciprocal"][0](np.float64(0.0), np.float64(1e-170)) == 0.0
    m = StationaryAllocation(weight=[1.0], alpha=[1e-170], kind=[2], upper=[1.0], group=[0], capacity=[1.0],
                             port=[0], resource=[0], overhead=[[0.0]])
    assert m.objective(np.zeros(1)) == 0.0


def test_utilities_at_infinity_not_nan():
    # f(inf) is inf (sqrt) and 1/a (reciprocal), as at e5bcf8f; the first rewrite gave inf/inf = nan
    assert utilities.sqrt_value(2.0, np.inf) == np.inf
    assert UTILITIES["reciprocal"][0](np.float64(np.inf), np.float64(2.0)) == 0.5


def test_utilities_no_spurious_overflow():
    # a (sqrt(1 + y) - 1) at a = 1e12, y = 1e300 is 1e162; a * y overflows first. 1/a - 1/(y + a) at
    # a = 1e12, y = 1e300 is 1e-12; a * (y + a) overflows and gives 0.
    assert utilities.sqrt_value(1e12, 1e300) == pytest.approx(1e162, rel=1e-9)
    assert UTILITIES["reciprocal"][0](np.float64(1e300), np.float64(1e12)) == pytest.approx(1e-12, rel=1e-9)
