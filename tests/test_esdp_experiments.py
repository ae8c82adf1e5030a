"""``optsched run esdp``: every figure kind writes CSV + PNG + metadata; configs are strict."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from optsched.papers import get_paper

TINY = {"horizon": 25, "n_ports": 3, "n_servers": 6, "edge_prob": 0.4}


def _run(tmp_path, settings=None, preset=None):
    exp = get_paper("esdp")
    cfg = exp.make_config({**TINY, **(settings or {})}, preset=preset)
    return exp.run(cfg, tmp_path)


def test_asw_figures(tmp_path) -> None:
    paths = _run(tmp_path, {"repeats": 2})
    assert sorted(p.suffix for p in paths) == [".csv", ".json", ".png"]
    df = pd.read_csv(tmp_path / "esdp_asw.csv")
    assert set(df["policy"]) == {"ESDP", "HSWF", "LCF", "LCF-channel", "LWTF", "Oracle"}
    assert len(df) == 2 * 6 * 25
    for (_, _), part in df.groupby(["policy", "repeat"]):
        assert np.allclose(part["asw"], part["welfare"].cumsum())
        assert (np.diff(part["regret"]) >= -1e-9).all()  # per-slot pseudo-regret is >= 0
    oracle = df[df["policy"] == "Oracle"]
    assert np.abs(oracle["regret"]).max() < 1e-9
    meta = json.loads((tmp_path / "esdp_asw.json").read_text())
    assert meta["config"]["horizon"] == 25 and "numpy" in meta["versions"]


def test_sweep_and_overhead(tmp_path) -> None:
    _run(tmp_path, {"study": "sweep", "sweep": "mask", "sweep_values": ["before", "after"], "policies": ["ESDP", "LCF"]})
    df = pd.read_csv(tmp_path / "esdp_sweep_mask.csv")
    assert len(df) == 4 and set(df["mask"]) == {"before", "after"}
    _run(tmp_path, {"study": "overhead", "sweep": "n_servers", "sweep_values": [4, 8]})
    df = pd.read_csv(tmp_path / "esdp_overhead_n_servers.csv")
    assert df["n_servers"].tolist() == [4, 8] and (df["n_edges"] > 0).all()
    timing = pd.read_csv(tmp_path / "esdp_overhead_n_servers_timing.csv")
    assert timing["n_servers"].tolist() == [4, 8] and (timing["mean_s_per_slot"] > 0).all()


@pytest.mark.parametrize(
    "settings,key",
    [
        ({"policies": ["ESDP", "magic"]}, "policies"),
        ({"horizon": 0}, "horizon"),
        ({"delta": "fast"}, "delta"),
        ({"study": "sweep", "sweep": "alpha", "sweep_values": ["big"]}, "sweep_values"),
        ({"study": "sweep", "sweep": "n_servers", "sweep_values": [2.5]}, "sweep_values"),
        ({"arrival_prob": 1.5}, "arrival_prob"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_config_names_the_key(settings, key) -> None:
    with pytest.raises(ValueError, match=key):
        get_paper("esdp").make_config(settings)


def test_presets_are_valid() -> None:
    exp = get_paper("esdp")
    for name in exp.presets:
        cfg = exp.make_config(preset=name)
        assert cfg.horizon >= 1


def test_sweep_summary_has_means_and_t_intervals(tmp_path) -> None:
    from scipy.stats import t as student_t

    _run(tmp_path, {"study": "sweep", "sweep": "normalisation", "sweep_values": ["band", "minmax"], "repeats": 3,
                    "policies": ["ESDP", "Greedy", "LCF", "Oracle"]})
    rows = pd.read_csv(tmp_path / "esdp_sweep_normalisation.csv")
    summary = pd.read_csv(tmp_path / "esdp_sweep_normalisation_summary.csv")
    assert len(summary) == 2 * 4 and (summary["repeats"] == 3).all()
    part = rows[(rows["normalisation"] == "minmax") & (rows["policy"] == "Greedy")]
    got = summary[(summary["normalisation"] == "minmax") & (summary["policy"] == "Greedy")].iloc[0]
    assert got["asw_mean"] == pytest.approx(part["asw"].mean())
    half = student_t.ppf(0.975, 2) * part["asw"].std(ddof=1) / np.sqrt(3)
    assert got["asw_ci95"] == pytest.approx(half)
    oracle = summary[summary["policy"] == "Oracle"]
    assert np.allclose(oracle["oracle_share_mean"], 1.0) and np.allclose(oracle["regret_mean"], 0.0, atol=1e-9)
    assert (summary["oracle_share_mean"] <= 1 + 1e-12).all()
    esdp = summary[summary["policy"] == "ESDP"]
    assert np.allclose(esdp["esdp_gain_mean"], 0.0)
    assert summary["binding_share"].between(0, 1).all()


def test_sweep_summary_gain_is_the_relative_lead_and_an_idle_point_has_no_share(tmp_path) -> None:
    """ESDP's gain is the paired differences over the policy's mean (the README's one rule for
    leads), and with arrival_prob 0 nothing arrives: the shares are empty, not 0/0 with a numpy
    warning."""
    import warnings

    from optsched.claims import relative_lead

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _run(tmp_path, {"study": "sweep", "sweep": "arrival_prob", "sweep_values": [0.0, 0.5], "repeats": 3,
                        "policies": ["ESDP", "LCF", "Oracle"]})
    rows = pd.read_csv(tmp_path / "esdp_sweep_arrival_prob.csv")
    summary = pd.read_csv(tmp_path / "esdp_sweep_arrival_prob_summary.csv")
    idle = summary[summary["arrival_prob"] == 0.0]
    assert idle["oracle_share_mean"].isna().all() and (idle["asw_mean"] == 0).all()
    busy = rows[rows["arrival_prob"] == 0.5].set_index("repeat")
    expected = relative_lead(busy[busy["policy"] == "ESDP"]["expected_asw"], busy[busy["policy"] == "LCF"]["expected_asw"])
    got = summary[(summary["arrival_prob"] == 0.5) & (summary["policy"] == "LCF")].iloc[0]
    assert got["esdp_gain_mean"] == pytest.approx(expected.mean)
    assert got["esdp_gain_ci95"] == pytest.approx(expected.half)


@pytest.mark.parametrize("key", ["capacity_rule", "cost_model", "normalisation"])
def test_scenario_keys_are_checked(key) -> None:
    with pytest.raises(ValueError, match=key):
        get_paper("esdp").make_config({key: "nope"})
