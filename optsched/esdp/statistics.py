"""The evolving statistics of Section 3.1 and the scale-up of Section 3.2.

Slots are numbered t = 1, 2, ... as in the paper; the statistics used to decide slot t are
built from slots 1..t-1.

    n_e(t)         = sum_{t'} x_e(t')                                       (7)
    v_hat_e(t)     = sum_{t'} x_e(t') Z_tilde_e(t') / n_e(t), 0 if n_e = 0   (8)
    sigma2_hat_e(t)= g(t) / (2 n_e(t)), +inf if n_e = 0                      (9)
    Upsilon_e(t)   = ceil(xi(t) v_hat_e(t))                                  (13)
    Sigma2_e(t)    = ceil(xi(t)^2 sigma2_hat_e(t))                           (14)
    xi(t)          = ceil(m / delta(t)), m = max ||x||_1 = ceil(alpha |E|)   (15)

g(t) (10) and delta(t) (11) are chosen by name from ``G_SEQUENCES`` and ``DELTA_SEQUENCES``:
the defaults of Section 4.1 and the alternatives of Section 4.3 (Fig. 7, Fig. 8), all with the
README's shift ln(t + 1) so that they are finite and positive at t = 1.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np


def _lnln(t: int) -> float:
    return math.log(math.log(t + 1) + 1)


def _delta_loglog(t: int) -> float:
    return 1.0 / (_lnln(t) + 1.0)


def _delta_log(t: int) -> float:
    return 1.0 / (math.log(t + 1) + 1.0)


def _delta_loglog_unshifted(t: int) -> float:
    return 1.0 / _lnln(t)


def _delta_logloglog(t: int) -> float:
    return 1.0 / (math.log(_lnln(t) + 1.0) + 1.0)


# named functions, not lambdas: a policy holding one pickles (sweep workers, copies mid-run)
DELTA_SEQUENCES: dict[str, Callable[[int], float]] = {
    # default (Section 4.1):            1 / (ln(ln(t+1) + 1) + 1)
    "loglog": _delta_loglog,
    # Fig. 7 alternatives (Section 4.3): 1 / (ln(t+1) + 1), 1 / ln(ln(t+1) + 1),
    #                                    1 / (ln(ln(ln(t+1) + 1) + 1) + 1)
    "log": _delta_log,
    "loglog_unshifted": _delta_loglog_unshifted,
    "logloglog": _delta_logloglog,
}


def _g_default(t: int, m: float) -> float:
    return math.log(t + 1) + 4.0 * _lnln(t) * m


def _g_loglog(t: int, m: float) -> float:
    return 4.0 * _lnln(t) * m


def _g_log(t: int, m: float) -> float:
    return math.log(t + 1)


# g(t; m) with m = max ||x||_1 = alpha |E|.
G_SEQUENCES: dict[str, Callable[[int, float], float]] = {
    # default (Section 4.1):            ln(t+1) + 4 ln(ln(t+1) + 1) m
    "default": _g_default,
    # Fig. 8 alternatives (Section 4.3): 4 ln(ln(t+1) + 1) m, ln(t+1)
    "loglog": _g_loglog,
    "log": _g_log,
}


def max_selection(alpha: float, n_edges: int) -> int:
    """m = max_t max_{x in Omega(t)} ||x||_1, taken as ceil(alpha |E|) (at least 1)."""
    return max(1, math.ceil(alpha * n_edges - 1e-9))


def scaling_size(m: int, delta: float) -> int:
    """xi(t) = ceil(m / delta(t)) (15)."""
    return math.ceil(m / delta - 1e-12)


class ChannelStats:
    """Counts n (7) and sums of observed Z_tilde per channel, updated from semi-bandit feedback."""

    def __init__(self, n_edges: int) -> None:
        self.counts = np.zeros(n_edges, dtype=np.int64)
        self.sums = np.zeros(n_edges, dtype=np.float64)

    def update(self, x: np.ndarray, z: np.ndarray) -> None:
        """Add the slot's feedback: ``x`` the decision, ``z`` Z_tilde (read where x is 1)."""
        x = np.asarray(x, dtype=bool)
        self.counts += x
        self.sums[x] += np.asarray(z, dtype=np.float64)[x]

    @property
    def tried(self) -> np.ndarray:
        return self.counts > 0

    def v_hat(self) -> np.ndarray:
        """(8): the sample mean of Z_tilde, 0 for a channel never used."""
        return np.divide(self.sums, self.counts, out=np.zeros_like(self.sums), where=self.counts > 0)

    def sigma2_hat(self, g: float) -> np.ndarray:
        """(9): g(t) / (2 n_e), +inf for a channel never used."""
        out = np.full(self.counts.shape, np.inf)
        np.divide(g, 2.0 * self.counts, out=out, where=self.counts > 0)
        return out

    def scaled(self, xi: int, g: float) -> tuple[np.ndarray, np.ndarray]:
        """(13), (14): Upsilon = ceil(xi v_hat), Sigma2 = ceil(xi^2 sigma2_hat) (int64), by the
        same scaling the DP route uses. Never-used channels (sigma2_hat = +inf) get Sigma2 = 0
        here and must be kept out of the DP by the caller (ESDP explores them first)."""
        from optsched.solvers.escb_aescb import escb_scaled_coefficients

        variance = np.where(self.tried, self.sigma2_hat(g), 0.0)
        return escb_scaled_coefficients(self.v_hat(), variance, xi)
