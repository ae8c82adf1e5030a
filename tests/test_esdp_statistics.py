"""Statistics (7)-(10), (13)-(15) of ESDP on a scripted history, against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optsched.esdp.statistics import (
    DELTA_SEQUENCES,
    G_SEQUENCES,
    ChannelStats,
    max_selection,
    scaling_size,
)

# Four channels; channel 3 is never used. Decisions and observed Z_tilde of slots 1..3
# (NaN where the channel was not chosen: semi-bandit feedback).
HISTORY = [
    ([1, 0, 1, 0], [0.5, np.nan, 0.2, np.nan]),
    ([1, 1, 0, 0], [0.3, 0.9, np.nan, np.nan]),
    ([1, 0, 0, 0], [0.4, np.nan, np.nan, np.nan]),
]


@pytest.fixture()
def stats() -> ChannelStats:
    s = ChannelStats(4)
    for x, z in HISTORY:
        s.update(np.array(x, dtype=bool), np.array(z))
    return s


def test_counts_and_means(stats: ChannelStats) -> None:
    # (7): n = (3, 1, 1, 0); (8): v_hat = ((0.5+0.3+0.4)/3, 0.9/1, 0.2/1, 0)
    assert stats.counts.tolist() == [3, 1, 1, 0]
    assert stats.v_hat() == pytest.approx([0.4, 0.9, 0.2, 0.0], abs=1e-12)
    assert stats.tried.tolist() == [True, True, True, False]


def test_sequences_at_t4() -> None:
    # |E| = 4, alpha = 0.5 -> m = 2.  ln 5 = 1.6094379, ln(ln 5 + 1) = ln 2.6094379 = 0.9591348
    m = max_selection(0.5, 4)
    assert m == 2
    # g(4) = ln 5 + 4 * 0.9591348 * 2 = 9.2825166 (10, default of Section 4.1)
    assert G_SEQUENCES["default"](4, m) == pytest.approx(9.2825166, abs=1e-6)
    assert G_SEQUENCES["loglog"](4, m) == pytest.approx(7.6730787, abs=1e-6)
    assert G_SEQUENCES["log"](4, m) == pytest.approx(1.6094379, abs=1e-6)
    # delta(4) = 1 / (0.9591348 + 1) = 0.5104294; xi = ceil(2 / 0.5104294) = ceil(3.918) = 4  (15)
    assert DELTA_SEQUENCES["loglog"](4) == pytest.approx(0.5104294, abs=1e-6)
    assert scaling_size(m, DELTA_SEQUENCES["loglog"](4)) == 4
    # Fig. 7 alternatives: 1/(ln 5 + 1) = 1/2.6094379, 1/0.9591348, 1/(ln 1.9591348 + 1) = 1/1.6725030
    assert DELTA_SEQUENCES["log"](4) == pytest.approx(0.3832243, abs=1e-6)
    assert DELTA_SEQUENCES["loglog_unshifted"](4) == pytest.approx(1.0426063, abs=1e-6)
    assert DELTA_SEQUENCES["logloglog"](4) == pytest.approx(0.5979063, abs=1e-6)


def test_variance_proxy_and_scaled(stats: ChannelStats) -> None:
    g = 9.2825166238
    # (9): g / (2 n) = (1.5470861, 4.6412583, 4.6412583, +inf)
    s2 = stats.sigma2_hat(g)
    assert s2[:3] == pytest.approx([1.5470861, 4.6412583, 4.6412583], abs=1e-6)
    assert math.isinf(s2[3])
    # (13): Upsilon = ceil(4 * (0.4, 0.9, 0.2)) = ceil(1.6, 3.6, 0.8) = (2, 4, 1)
    # (14): Sigma2 = ceil(16 * (1.5470861, 4.6412583, 4.6412583)) = ceil(24.75, 74.26, 74.26) = (25, 75, 75)
    ups, sig = stats.scaled(4, g)
    assert ups.tolist()[:3] == [2, 4, 1]
    assert sig.tolist()[:3] == [25, 75, 75]
    # the never-used channel carries no finite statistic: 0 in both, kept out of the DP
    assert ups[3] == 0 and sig[3] == 0


def test_ceilings_give_26(stats: ChannelStats) -> None:
    """(26): v_hat <= Upsilon / xi <= 1/xi + v_hat, which needs the ceilings of (13)."""
    for xi in (1, 3, 7, 50):
        ups, _ = stats.scaled(xi, 1.0)
        v = stats.v_hat()
        assert (v <= ups / xi + 1e-12).all()
        assert (ups / xi <= v + 1.0 / xi + 1e-12).all()


def test_sequences_are_positive_and_vanish() -> None:
    for name, delta in DELTA_SEQUENCES.items():
        values = [delta(t) for t in (1, 10, 10**3, 10**9)]
        assert all(v > 0 for v in values), name
        assert values == sorted(values, reverse=True), name
    for name, g in G_SEQUENCES.items():
        assert all(g(t, 16) > 0 for t in (1, 10, 2000)), name
