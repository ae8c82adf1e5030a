"""The concave utilities keep their relative accuracy near y = 0, in every place they are evaluated.

1/a - 1/(y + a) and a (sqrt(1 + y) - 1) cancel near y = 0: at y = 1e-10 the difference keeps
about 6 digits. At OGASched's contention 1e-10 every y is that small, and y*'s duality gap,
taken between two such sums, came out negative (the bound 4.6e-8 below the objective). Each
place now writes them as y / (a (y + a)) and a y / (sqrt(1 + y) + 1). The reference is exact
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
def test_the_compiled_value_of_stationary_alm(code: int, kind: str) -> None:
    from optsched.solvers.stationary_allocation_kernel import _value

    for a in ALPHAS:
        for y in YS:
            assert close(_value(code, y, a), exact(kind, y, a)), (kind, y, a)


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
