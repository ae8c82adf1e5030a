"""The statistics behind the claims (optsched.claims and the papers' claims), at the cases probe BL
found wrong or misleading: comparisons without an interval counted as "no difference", the
per-replicate maximum over baselines as "the best baseline", a range of means with NaN in it
and a verdict on it without an interval, the widest interval named as the clearest difference,
tiny magnitudes, copied replicates and unequal pairs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from optsched.claims import (Estimate, best_on_the_mean, estimate, lead_over_best, leader, relative_lead, replicate_dirs,
                             tally)
from optsched.esdp.claims import _clearest
from optsched.ogasched.claims import _range_difference


def test_a_comparison_without_an_interval_is_not_counted_as_no_difference() -> None:
    one = relative_lead([110.0], [100.0])  # n = 1: a lead, no interval
    level = relative_lead([100.0, 101.0, 99.0], [100.0, 100.0, 100.0])
    ahead = relative_lead([110.0, 111.0, 112.0], [100.0, 100.5, 101.0])
    sides = tally({"one": one, "level": level, "ahead": ahead, "difference": Estimate(-3.0, 1.0, 4)})
    assert (sides.ahead, sides.behind, sides.level, sides.open) == (["ahead"], ["difference"], ["level"], ["one"])
    assert sides.counts() == ("ahead at 1 of 4, behind at 1, no difference at 1, no interval at 1 (fewer than 2 "
                              "replicates or a value not finite)")


def test_the_best_baseline_is_a_policy_not_the_per_replicate_maximum() -> None:
    """Two baselines of the subject's mean with opposite noise: their maximum is 4 above the
    subject in every replicate, so a paired comparison with it said "behind" (probe BL: 18 % of
    draws of three policies of one mean, 4.6 % against either baseline). Against the baseline
    best on the mean there is no difference."""
    subject = [100.0] * 6
    b1 = [104.0, 96.0, 104.0, 96.0, 104.0, 96.0]
    b2 = [96.0, 104.0, 96.0, 104.0, 96.0, 104.0]
    assert relative_lead(subject, np.maximum(b1, b2)).below_zero()  # the premise: the old comparator
    best, lead = lead_over_best([{"S": s, "B1": x, "B2": y} for s, x, y in zip(subject, b1, b2)], "S")
    assert best == "B1" and not lead.below_zero() and not lead.above_zero() and lead.difference.defined
    assert best_on_the_mean({"a": [1.0, np.nan, 3.0], "b": [2.5, 2.5, np.nan]}) == "b"
    assert best_on_the_mean({"a": [np.nan], "b": [np.nan]}) is None


def _info(leads_by_rep: list[dict[int, float]]) -> dict:
    """Per replicate, OGASched's reward (1 + lead) over one baseline of reward 1 at each value."""
    reps = [{k: {"OGASched": 1.0 + v, "B": 1.0 if math.isfinite(v) else 0.0} for k, v in rep.items()} for rep in leads_by_rep]
    return {"best": {k: "B" for k in leads_by_rep[0]}, "reps": reps}


def test_the_range_comparison_is_paired_per_replicate_and_drops_a_replicate_without_a_ratio() -> None:
    """Fig. 3(b): max - min of the lead over |L| minus over |R|, per replicate, with its interval;
    a replicate whose lead has no ratio (baseline reward 0) is left out and counted, whatever the
    order of the values (the range of the means took max/min over NaN: order-dependent)."""
    first = _info([{1: 0.01, 2: 0.02, 3: 0.03}, {1: 0.00, 2: 0.03, 3: 0.02}, {1: 0.01, 2: 0.02, 3: 0.04},
                   {1: math.nan, 2: 0.5, 3: 0.0}])
    second = _info([{1: 0.0, 2: 0.10}, {1: 0.01, 2: 0.12}, {1: 0.0, 2: 0.09}, {1: 0.0, 2: 0.1}])
    spans = _range_difference(first, second)
    expected = estimate([0.02 - 0.10, 0.03 - 0.11, 0.03 - 0.09])
    assert spans.n == 3 and spans.dropped == 1
    assert spans.mean == pytest.approx(expected.mean) and spans.half == pytest.approx(expected.half)
    assert spans.below_zero()
    reordered = _info([{3: 0.03, 1: 0.01, 2: 0.02}, {3: 0.02, 1: 0.00, 2: 0.03}, {3: 0.04, 1: 0.01, 2: 0.02},
                       {3: 0.0, 2: 0.5, 1: math.nan}])
    again = _range_difference(reordered, second)
    assert (again.mean, again.half, again.n) == pytest.approx((spans.mean, spans.half, spans.n))


def test_the_clearest_difference_is_the_interval_furthest_from_zero_on_its_near_side() -> None:
    """esdp Fig. 7's CPU named a pair whose wide interval included 0 beside two that excluded it."""
    wide = relative_lead([1.0, 1.5, 1.2, 1.6], [1.0, 1.0, 1.1, 1.2])
    clear = relative_lead([1.09, 1.10, 1.08, 1.11], [1.0, 1.0, 1.0, 1.0])
    assert not wide.above_zero() and max(abs(wide.low), abs(wide.high)) > max(abs(clear.low), abs(clear.high))
    assert clear.above_zero()
    assert _clearest({"wide": wide, "clear": clear})[0] == "clear"
    # probe BM: a pair whose difference excludes 0 but has no ratio (its baseline's own interval
    # reaches 0) ranked below one whose ratio interval included 0
    no_ratio = relative_lead([2.0, 4.02], [1.0, 3.0])
    includes = relative_lead([2.0, 4.02], [2.5, 2.6])
    assert no_ratio.difference.above_zero() and not no_ratio.defined and not includes.above_zero()
    assert _clearest({"includes": includes, "differs": no_ratio})[0] == "differs"


def test_an_interval_at_tiny_magnitudes_is_the_scaled_one() -> None:
    """At 1e-170 the squares underflowed: a zero-width interval, and "won" on noisy differences."""
    for scale in (1e-170, 1e-300, 1e170):
        x = np.array([1.0, 2.0, 3.0, 2.5])
        tiny, unit = estimate(x * scale), estimate(x)
        assert tiny.mean == pytest.approx(unit.mean * scale, rel=1e-12)
        assert tiny.half == pytest.approx(unit.half * scale, rel=1e-12)
        assert unit.half == pytest.approx(student_t.ppf(0.975, 3) * x.std(ddof=1) / 2, rel=1e-12)
    noisy = relative_lead(np.array([3.0, 1.0, 2.5, 1.5, 1.5]) * 1e-170, np.array([1.0, 2.0, 1.0, 2.0, 1.0]) * 1e-170)
    assert not noisy.difference.excludes_zero() and not noisy.above_zero()


def test_pairs_of_unequal_length_are_refused_naming_the_counts() -> None:
    with pytest.raises(ValueError, match="3 values of the subject against 2"):
        relative_lead([1.0, 2.0, 3.0], [1.0, 2.0])


def _replicate(d: Path, seed: int) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / "run.json").write_text(json.dumps({"config": {"seed": seed}, "seed": seed}))


def test_a_copied_replicate_is_refused_and_a_zero_padded_name_is_not_a_replicate(tmp_path: Path) -> None:
    _replicate(tmp_path, 1)
    for k, seed in ((1, 11), (2, 12), (3, 13)):
        _replicate(tmp_path / "replicates" / f"r{k}", seed)
    _replicate(tmp_path / "replicates" / "r01", 99)  # not a replicate's name
    assert [p.name for p in replicate_dirs(tmp_path)[1:]] == ["r1", "r2", "r3"]
    _replicate(tmp_path / "replicates" / "r9", 12)  # a copy of r2
    with pytest.raises(ValueError, match="record the same seed 12"):
        replicate_dirs(tmp_path)


def test_an_infinite_mean_leads() -> None:
    assert leader({"a": 1.0, "b": math.inf}) == "b"
    assert leader({"a": 1.0, "b": -math.inf}, lowest=True) == "b"
    assert leader({"a": math.inf, "b": math.inf}) is None


def _ogasched_scale_run(d: Path, rewards: list[dict[str, float]]) -> None:
    """Figs. 3 and 7 of paper 003, one replicate per entry of ``rewards`` (policy -> reward at
    every value; NaN for a policy with no value in that replicate)."""
    for i, reward in enumerate(rewards):
        where = Path("") if i == 0 else Path("replicates") / f"r{i}"
        rows = [{"panel": panel, "value": v, "policy": p, "cumulative_reward": r}
                for panel, values in (("n_nodes", [4, 6]), ("n_ports", [2, 3]), ("contention", [0.5, 10.0]))
                for v in values for p, r in reward.items()]
        (d / "fig3" / where).mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(d / "fig3" / where / "fig3_scale.csv", index=False)
        rows7 = [{"panel": "utility", "value": k, "policy": p, "cumulative_reward": r}
                 for k in ("linear", "log") for p, r in reward.items()]
        (d / "fig7" / where).mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows7).to_csv(d / "fig7" / where / "fig7_utilities.csv", index=False)


def test_one_replicate_gives_ogasched_fig3c_no_verdict(tmp_path: Path) -> None:
    """Probe BM: OGASched 20 % behind everywhere in one replicate read "Not behind at any level (95 %)"."""
    from optsched.ogasched.claims import ogasched_scale_claims

    _ogasched_scale_run(tmp_path, [{"OGASched": 80.0, "DRF": 100.0, "FAIRNESS": 90.0}])
    fig3c = next(c for c in ogasched_scale_claims(tmp_path, full=False) if c.result.startswith("Fig. 3(c)"))
    assert "No verdict at 2 of 2 levels (no interval)" in fig3c.note and "Not behind" not in fig3c.note


def test_a_replicate_without_a_baseline_is_left_out_of_that_comparison(tmp_path: Path) -> None:
    """Probe BM: a replicate whose DRF is NaN at every value (pivot_table drops the column) raised
    KeyError: 'DRF'; the replicate is left out of the comparison with DRF and counted."""
    from optsched.ogasched.claims import ogasched_scale_claims

    _ogasched_scale_run(tmp_path, [{"OGASched": 100.0 + i, "DRF": math.nan if i == 1 else 90.0 + 2 * i,
                                    "FAIRNESS": 80.0 + i} for i in range(4)])
    fig3a = next(c for c in ogasched_scale_claims(tmp_path, full=False) if c.result.startswith("Fig. 3(a)"))
    expected = relative_lead([100.0, math.nan, 102.0, 103.0], [90.0, math.nan, 94.0, 96.0])
    assert f"4: {expected.fmt('.1f', percent=True)} (DRF)" in fig3a.measured
    assert expected.dropped == 1 and "1 of 4 without a value" in fig3a.measured
