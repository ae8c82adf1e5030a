"""ONSOCMAX's claim rules (optsched.onsocmax.claims) on small synthetic run files: the lead is
over the baseline best on the mean at each point (of MAX-FIRST and EQUAL-SHARE), and OPT / online
takes its interval over the repeats (each the mean over the points), n = repeats."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from optsched.claims import Claim, relative_lead
from optsched.onsocmax.claims import onsocmax_claims

REPEATS = 3
ONSOCMAX = [90.0, 91.5, 89.0]  # per repeat, at the point (1, "linear")
MAX_FIRST = [100.0, 101.0, 102.0]  # the best baseline: ONSOCMAX is behind it in every repeat
EQUAL_SHARE = [60.0, 61.0, 62.0]  # the baselines' average (80 ...) is below ONSOCMAX
# OPT / ONSOCMAX per (repeat, point): a repeat-level effect shared by both points
GAP = {(0, 1.0): 1.1, (0, 2.0): 1.3, (1, 1.0): 1.0, (1, 2.0): 1.2, (2, 1.0): 1.2, (2, 2.0): 1.4}


def _figure(path: Path, repeats: int) -> None:
    rows = []
    for j in range(repeats):
        for value in (1.0, 2.0):
            welfare = {"ONSOCMAX": ONSOCMAX[j] + 50 * (value - 1), "MAX-FIRST": MAX_FIRST[j] + 50 * (value - 1),
                       "EQUAL-SHARE": EQUAL_SHARE[j] + 50 * (value - 1)}
            for policy, w in welfare.items():
                rows.append({"value": value, "kind": "linear", "repeat": j, "policy": policy, "welfare": w,
                             "opt": GAP[(j, value)] * welfare["ONSOCMAX"], "demand_ratio": 0.5})
    path.parent.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(path, index=False)


def _claims(d: Path, repeats: int = REPEATS) -> dict[str, Claim]:
    for preset, stem in (("ratio", "onsocmax_ratio_section_iv"), ("ratio_small", "onsocmax_ratio_small")):
        (d / preset).mkdir()
        pd.DataFrame({"ratio": [1.0, 1.1], "alpha_hat": [2.5, 3.0], "violates_theorem2": [False, False]}
                     ).to_csv(d / preset / f"{stem}.csv", index=False)
    for preset, stem in (("fig4", "onsocmax_duration"), ("fig5", "onsocmax_workload"), ("fig6", "onsocmax_congestion")):
        _figure(d / preset / f"{stem}.csv", repeats)
    return {c.result.split(" (")[0]: c for c in onsocmax_claims(d, full=False)}


@pytest.fixture
def claims(tmp_path: Path) -> dict[str, Claim]:
    return _claims(tmp_path)


def test_one_repeat_gives_no_verdict_instead_of_no_difference(tmp_path: Path) -> None:
    """Probe BL: at n = 1 Figs. 4-6 said "no difference at 2" and "Not shown ... no difference at
    95 % there"."""
    fig4 = _claims(tmp_path, repeats=1)["Fig. 4"]
    assert fig4.measured.startswith("ahead at 0 of 2, behind at 0, no difference at 0, no interval at 2")
    assert "No verdict at 2 of 2 points" in fig4.note and "no difference at 95 %" not in fig4.note


def test_the_lead_is_over_the_baseline_best_on_the_mean(claims: dict[str, Claim]) -> None:
    """ONSOCMAX at about 90 against MAX-FIRST about 100 and EQUAL-SHARE about 60 is behind at the point: the
    best baseline is the one of larger mean welfare, not the baselines' mean."""
    lead = relative_lead(ONSOCMAX, MAX_FIRST)
    assert lead.below_zero()  # the premise
    fig4 = claims["Fig. 4"]
    assert fig4.measured.startswith("ahead at 0 of 2, behind at 2, no difference at 0 (95 % interval of the paired "
                                    "lead over the baseline best on the mean at each point: MAX-FIRST at 2)")
    assert f"lowest mean {lead.fmt('.1f', percent=True)} (at 1, linear, over MAX-FIRST)" in fig4.measured


def test_opt_over_online_takes_its_interval_over_the_repeats(claims: dict[str, Claim]) -> None:
    """OPT / ONSOCMAX: one value per repeat (the mean over the points), a t-interval with n = repeats, not over
    points x repeats."""
    per_repeat = [np.mean([GAP[(j, v)] for v in (1.0, 2.0)]) for j in range(REPEATS)]  # 1.2, 1.1, 1.3
    half = student_t.ppf(0.975, REPEATS - 1) * np.std(per_repeat, ddof=1) / np.sqrt(REPEATS)
    assert abs(half - 0.248) < 1e-3
    expected = f"OPT / ONSOCMAX {np.mean(per_repeat):.3f} ± {half:.3f} (mean over all points, interval over the 3 repeats)"
    for fig in ("Fig. 4", "Fig. 5", "Fig. 6"):
        assert expected in claims[fig].measured
