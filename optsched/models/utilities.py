"""Job utilities f_nr of paper 002 (Section IV) in one vectorised power family.

Public API (plain numpy; every argument broadcasts, ``kind`` holds integer codes)::

    KINDS                                  ("linear", "log", "sqrt"); code = index
    kind_codes(names) -> int64 array       names (str or sequence of str) -> codes
    value(kind, a, x)                      f_nr(x)
    derivative(kind, a, x)                 f_nr'(x)
    second_derivative(kind, a, x)          f_nr''(x)
    inverse_derivative(kind, a, m)         x with f_nr'(x) = m (non-linear kinds; x may be < 0)

The three kinds, with a ~ U[1, 3] in the paper::

    linear  f(x) = a x                       f'(x) = a
    log     f(x) = a ln(x + 1)               f'(x) = a / (x + 1)
    sqrt    f(x) = a (sqrt(x + 1) - 1)       f'(x) = a / (2 sqrt(x + 1))

All three are f'(x) = a c (1 + x)^(-p) with (p, c) = (0, 1), (1, 1), (1/2, 1/2).

The paper's polynomial utility is a sqrt(x), whose slope is infinite at 0, so iota and
upsilon of (8) would not exist (upsilon = +inf makes alpha-hat of (40) infinite). Following
the corrections page we use the *shifted* form a sqrt(x + 1) - a: zero-startup, concave,
non-decreasing, continuously differentiable, slope a/2 at 0. This is the "sqrt" kind.
For x < 0 the formulas are only used by the augmented-Lagrangian iterates (x > -1 there).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

KINDS: tuple[str, ...] = ("linear", "log", "sqrt")
EXPONENT = np.array([0.0, 1.0, 0.5])  # p in f'(x) = a c (1 + x)^(-p)
SCALE = np.array([1.0, 1.0, 0.5])  # c


def kind_codes(names: str | Sequence[str]) -> np.ndarray:
    """Utility kind names -> int64 codes (index into ``KINDS``); ValueError names a bad one."""
    seq = [names] if isinstance(names, str) else list(names)
    out = np.empty(len(seq), dtype=np.int64)
    for i, name in enumerate(seq):
        if name not in KINDS:
            raise ValueError(f"utility: unknown kind {name!r} (known: {', '.join(KINDS)})")
        out[i] = KINDS.index(name)
    return out


def _pc(kind: Any) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(kind, dtype=np.int64)
    return EXPONENT[k], SCALE[k]


def sqrt_value(a: Any, x: Any) -> np.ndarray:
    """a (sqrt(1 + x) - 1): the shifted square-root utility, paper 002's "sqrt" kind and paper
    003's "poly" of (54) (one function for both papers), as a (x / (sqrt(1 + x) + 1)), which
    keeps its relative accuracy near x = 0 (the difference lost 6 digits at x = 1e-10) and
    overflows no sooner than the value (x >= -1; +inf at x = +inf)."""
    x = np.maximum(np.asarray(x, dtype=np.float64), -1.0)
    with np.errstate(invalid="ignore"):
        return np.where(np.isposinf(x), np.inf * np.asarray(a), a * (x / (np.sqrt(1.0 + x) + 1.0)))


def reciprocal_value(a: Any, y: Any) -> np.ndarray:
    """1/a - 1/(y + a): paper 003's "reciprocal" of (54), as (y / (y + a)) / a, which keeps its
    relative accuracy near y = 0 (the difference lost 6 digits at y = 1e-10), never forms a^2
    (0/0 below a = 1.5e-162) and gives 1/a at y = +inf."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(np.isposinf(y), 1.0 / np.asarray(a, dtype=np.float64), (y / (y + a)) / a)


def sqrt_slope(a: Any, x: Any) -> np.ndarray:
    """d/dx of :func:`sqrt_value`: a / (2 sqrt(1 + x))."""
    return 0.5 * a / np.sqrt(1.0 + x)


def value(kind: Any, a: Any, x: Any) -> np.ndarray:
    """f(x): a x, a ln(1 + x) or a (sqrt(1 + x) - 1)."""
    p, c = _pc(kind)
    a = np.asarray(a, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    lin = a * x
    log = a * np.log1p(np.maximum(x, -1.0 + 1e-300))
    return np.where(p == 0.0, lin, np.where(p == 1.0, log, sqrt_value(a, x)))


def derivative(kind: Any, a: Any, x: Any) -> np.ndarray:
    """f'(x) = a c (1 + x)^(-p)."""
    p, c = _pc(kind)
    return np.asarray(a, dtype=np.float64) * c * np.power(1.0 + np.asarray(x, dtype=np.float64), -p)


def second_derivative(kind: Any, a: Any, x: Any) -> np.ndarray:
    """f''(x) = -p a c (1 + x)^(-p-1) (zero for the linear kind)."""
    p, c = _pc(kind)
    return -p * np.asarray(a, dtype=np.float64) * c * np.power(1.0 + np.asarray(x, dtype=np.float64), -p - 1.0)


def inverse_derivative(kind: Any, a: Any, m: Any) -> np.ndarray:
    """The x with f'(x) = m > 0: (a c / m)^(1/p) - 1. The linear kind (p = 0) has no
    inverse: the result there is +inf where a > m, -inf where a < m, 0 where equal."""
    p, c = _pc(kind)
    a = np.asarray(a, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        curved = np.power(a * c / m, 1.0 / np.where(p == 0.0, 1.0, p)) - 1.0
    flat = np.where(a > m, np.inf, np.where(a < m, -np.inf, 0.0))
    return np.where(p == 0.0, flat, curved)
