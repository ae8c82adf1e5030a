"""MaxWeight's claim rules (optsched.maxweight.claims) on small synthetic region files: the
share is over Alg. 1's achieved points, and "almost all" is a share of at least ALMOST_ALL."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from optsched.claims import estimate
from optsched.maxweight.claims import ALMOST_ALL, _region_shares, maxweight_claims

ALG1, ALG2 = "Alg. 1 (exact)", "Alg. 2 (greedy)"
GRID = [(r1 / 10, r2 / 10) for r1 in range(4) for r2 in range(4)]  # 16 grid points


def _regions(path: Path, curve: str, alg1: set[int], alg2: set[int]) -> None:
    """A regions CSV of one curve: Alg. 1 / Alg. 2 achieve the grid points whose indices are given."""
    rows = [{"curve": curve, "policy": policy, "r1": r1, "r2": r2, "rate1": r1, "rate2": r2, "achieved": i in got}
            for policy, got in ((ALG1, alg1), (ALG2, alg2)) for i, (r1, r2) in enumerate(GRID)]
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, index=False)


def test_the_share_is_over_alg1s_points_not_over_the_union(tmp_path: Path) -> None:
    """Share = |A1 & A2| / |A1|; points Alg. 2 alone reaches are counted apart (extra), not in the denominator."""
    _regions(tmp_path / "fig3_regions.csv", "P[J2j]=0.5", alg1={0, 1, 2, 3}, alg2={0, 1, 2, 7, 8})
    shares = _region_shares(tmp_path, "fig3")
    assert shares["P[J2j]=0.5"] == 3 / 4
    assert shares["P[J2j]=0.5 extra"] == 2


def _replicated(run_dir: Path, fig: str, curve: str, alg1: set[int], alg2: set[int], n: int) -> None:
    for k in range(n):
        where = run_dir if k == 0 else run_dir / "replicates" / f"r{k}"
        _regions(where / f"{fig}_regions.csv", curve, alg1, alg2)


def _maxweight_run(d: Path, n: int) -> None:
    """Fig. 3: Alg. 2 reaches exactly 9 of Alg. 1's 10 points in every one of n replicates; Fig. 4 all of them."""
    ten = set(range(10))
    _replicated(d / "fig3", "fig3", "P[J2j]=0.3", ten, ten - {9}, n)
    _replicated(d / "fig4", "fig4", "P_2j=0.7", ten, ten, n)
    (d / "fig5").mkdir()
    pd.DataFrame([{"task_prob": p, "n": m, "policy": ALG2, "max_symmetric_r": r}
                  for p, rs in ((0.3, (0.4, 0.35)), (0.5, (0.45, 0.3))) for m, r in zip((2, 5), rs)]
                 ).to_csv(d / "fig5" / "fig5_symmetric.csv", index=False)


def test_a_share_exactly_at_almost_all_with_zero_spread_agrees(tmp_path: Path) -> None:
    """'almost all' is a share >= ALMOST_ALL: 9 of 10 points in every replicate (zero spread) agrees."""
    assert ALMOST_ALL == 0.9
    _maxweight_run(tmp_path, n=5)
    assert estimate([9 / 10] * 5).low == 0.9  # the premise: the interval's lower end is the threshold itself
    (note,) = [c.note for c in maxweight_claims(tmp_path, full=False) if c.result.startswith("Fig. 3:")]
    assert note.startswith("Agrees: the lower end of every 95 % interval is 90.0%")


@pytest.mark.parametrize("n", [7, 9, 11])
def test_a_share_exactly_at_almost_all_agrees_for_any_replicate_count(tmp_path: Path, n: int) -> None:
    """The verdict at the threshold does not depend on the replicate count: the mean of nine
    0.9s came out 0.8999999999999999, and the claim said Disagrees beside "90.0%"."""
    _maxweight_run(tmp_path, n=n)
    (note,) = [c.note for c in maxweight_claims(tmp_path, full=False) if c.result.startswith("Fig. 3:")]
    assert note.startswith("Agrees: the lower end of every 95 % interval is 90.0%")


def test_a_share_just_below_almost_all_disagrees(tmp_path: Path) -> None:
    """A share of 8 of 10 points in every replicate is below 'almost all': Disagrees."""
    ten = set(range(10))
    _maxweight_run(tmp_path, n=3)
    _replicated(tmp_path / "fig3", "fig3", "P[J2j]=0.3", ten, ten - {8, 9}, 3)
    (note,) = [c.note for c in maxweight_claims(tmp_path, full=False) if c.result.startswith("Fig. 3:")]
    assert note.startswith("Disagrees: the lower end of every 95 % interval is 80.0%")


def test_one_sample_path_gives_no_order_and_no_ratio_verdict(tmp_path: Path) -> None:
    """Probe BL: with one replicate the Fig. 5 order read "tie" (for r 9 grid steps apart) and the
    ratio claim "Not every ratio's interval lies below 1": there is no interval to say either."""
    _maxweight_run(tmp_path, n=1)
    order, ratios = [c for c in maxweight_claims(tmp_path, full=False) if c.result.startswith("Fig. 5")]
    assert "(no verdict on the order: no interval)" in order.measured and "tie" not in order.measured
    assert "No verdict on the ratios: not every one has an interval" in ratios.note
    assert "has no interval to tell" in ratios.note and "never rises" not in ratios.note
