"""ESDP's claim rules (optsched.esdp.claims) on small synthetic runs: the regret growth from
the largest t <= T // 2 to T, the one-sided "ESDP's growth is below that of ..." list, and
Fig. 10's "falls" only when the paired interval lies below 0."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import t as student_t

import optsched.esdp.claims as esdp_claims_module
from optsched.claims import Claim, estimate, relative_lead
from optsched.esdp.claims import esdp_claims, esdp_sweep_claims

REPEATS = 4
T = 5  # T // 2 = 2: the growth is read from t = 2 to 5


def _regret(policy: str, t: int, j: int) -> float:
    """Regret at t of repeat j: a distinct value per t, so reading the wrong row changes the growth."""
    if policy == "Oracle":
        return 0.0
    at_half = 10.0 + j  # t = 2
    at_t = {"ESDP": 12.0 + 1.1 * j, "FAST": 20.0 + 2.3 * j, "SLOW": 10.5 + 1.2 * j}[policy]
    return {1: 1.0 + j, 2: at_half, 3: at_half + 1, 4: at_half + 2, 5: at_t}[t]


def _asw_run(d: Path) -> None:
    rows = []
    for j in range(REPEATS):
        for policy in ("ESDP", "FAST", "SLOW", "Oracle"):
            for t in range(1, T + 1):
                regret = _regret(policy, t, j)
                rows.append({"repeat": j, "policy": policy, "t": t, "asw": 100.0 * t + 3 * j - regret,
                             "regret": regret})
    (d / "fig2-4").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(d / "fig2-4" / "esdp_asw.csv", index=False)


@pytest.fixture
def regret_claim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Claim:
    _asw_run(tmp_path)
    monkeypatch.setattr(esdp_claims_module, "esdp_sweep_claims", lambda _d, _full: [])  # Figs. 5-10: not here
    (claim,) = [c for c in esdp_claims(tmp_path, full=False) if c.result.startswith("Regret (5)")]
    return claim


def test_regret_growth_is_read_from_the_largest_t_at_most_half_the_horizon(regret_claim: Claim) -> None:
    """The growth is regret(T) / regret(t_half), t_half the largest recorded t <= T // 2 (here 2 of T = 5)."""
    assert f"from t = 2 to {T}" in regret_claim.note
    growth = estimate([(12.0 + 1.1 * j) / (10.0 + j) for j in range(REPEATS)])
    assert f"ESDP {estimate([12.0 + 1.1 * j for j in range(REPEATS)]).fmt('.1f')} (x{growth.fmt('.2f')})" \
        in regret_claim.measured


def test_the_linear_growth_named_is_that_from_t_half_to_an_odd_horizon(regret_claim: Claim) -> None:
    """A linear regret grows T / t_half from t_half to T: x2.5 from t = 2 to 5 (it said x2 at every T)."""
    assert f"A linear regret grows x2.5 from t = 2 to {T}." in regret_claim.note


def test_only_baselines_whose_growth_is_significantly_higher_are_named_slower(regret_claim: Claim) -> None:
    """"ESDP's growth is below that of X" needs X's paired growth difference above 0 (one-sided): a baseline
    growing significantly slower than ESDP is not named."""
    fast = estimate([((20.0 + 2.3 * j) - (12.0 + 1.1 * j)) / (10.0 + j) for j in range(REPEATS)])
    slow = estimate([((10.5 + 1.2 * j) - (12.0 + 1.1 * j)) / (10.0 + j) for j in range(REPEATS)])
    assert fast.above_zero() and slow.below_zero()  # the premise: SLOW differs from ESDP, the other way
    assert "ESDP's growth is below that of FAST (95 % interval" in regret_claim.note


# --- Figs. 5-10: esdp_sweep_claims reads every sweep; only Fig. 10's share varies between tests ----------

SWEEPS = (("fig6", "esdp_sweep_alpha", "alpha", (0.3, 0.6)),
          ("fig7", "esdp_sweep_delta", "delta", ("loglog", "log")),
          ("fig8", "esdp_sweep_g", "g", ("default", "log")),
          ("fig9", "esdp_sweep_arrival_prob", "arrival_prob", (0.5, 0.9)),
          ("fig10", "esdp_sweep_edge_prob", "edge_prob", (0.05, 0.5)))


def _sweep_runs(d: Path, sparse_share: list[float], dense_share: list[float]) -> None:
    n = len(sparse_share)
    size = pd.DataFrame([{"n_servers": s, "repeat": j, "n_edges": s + j} for s in (10, 20) for j in range(n)])
    secs = pd.DataFrame([{"n_servers": s, "repeat": j, "median_s_per_slot": 1e-3 * (s + j)}
                         for s in (10, 20) for j in range(n)])
    (d / "fig5").mkdir(parents=True)
    size.to_csv(d / "fig5" / "esdp_overhead_n_servers.csv", index=False)
    secs.to_csv(d / "fig5" / "esdp_overhead_n_servers_timing.csv", index=False)
    for preset, stem, key, values in SWEEPS:
        policies = ("ESDP",) if preset in ("fig7", "fig8") else ("ESDP", "HSWF", "Oracle")
        rows, timing = [], []
        for i, v in enumerate(values):
            for j in range(n):
                for p in policies:
                    share = 1.0 if p == "Oracle" else (dense_share if i else sparse_share)[j] if p == "ESDP" else 0.7
                    oracle = 100.0 + 10 * i + j
                    rows.append({key: v, "repeat": j, "policy": p, "n_edges": 10 * (i + 1), "asw": share * oracle + i,
                                 "regret": (1 - share) * oracle, "expected_asw": share * oracle, "oracle_asw": oracle})
                    timing.append({key: v, "repeat": j, "policy": p, "cpu_s": 0.1 + 0.01 * (i + j)})
        (d / preset).mkdir()
        pd.DataFrame(rows).to_csv(d / preset / f"{stem}.csv", index=False)
        pd.DataFrame(timing).to_csv(d / preset / f"{stem}_timing.csv", index=False)


SPARSE = [0.90, 0.90, 0.90, 0.90, 0.90]


@pytest.mark.parametrize("dense, falls", [
    ([0.80, 0.95, 0.85, 0.92, 0.88], False),  # mean -2.2 %, the paired interval includes 0
    ([0.80, 0.82, 0.79, 0.81, 0.80], True),  # every replicate lower: the interval lies below 0
])
def test_fig10_share_falls_only_when_the_paired_interval_lies_below_zero(tmp_path: Path, dense: list[float],
                                                                        falls: bool) -> None:
    """Fig. 10: the share of the oracle "falls" only when the paired interval (densest over sparsest) lies below 0,
    not when only its mean does."""
    _sweep_runs(tmp_path, SPARSE, dense)
    lead = relative_lead(dense, SPARSE)
    assert lead.mean < 0 and lead.below_zero() is falls  # the premise, from the numbers alone
    diffs = [a - b for a, b in zip(dense, SPARSE)]
    high = pd.Series(diffs).mean() + student_t.ppf(0.975, len(diffs) - 1) * pd.Series(diffs).std() / len(diffs) ** 0.5
    assert bool(high < 0) is falls  # the upper end of the paired difference's t-interval
    (claim,) = [c for c in esdp_sweep_claims(tmp_path, full=False) if c.result.startswith("Fig. 10")]
    assert f"densest over sparsest {lead.fmt('.1f', percent=True)} (paired)" in claim.measured
    if falls:
        assert "which falls from the sparsest graph to the densest" in claim.note
    else:
        assert "is not shown to fall" in claim.note
