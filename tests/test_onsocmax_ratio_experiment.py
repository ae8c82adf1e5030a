"""``optsched run onsocmax``: config validation and tiny end-to-end runs of both studies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from optsched.papers import get_paper


def test_config_is_strict() -> None:
    exp = get_paper("onsocmax")
    for bad, key in (
        ({"sweep": "speed"}, "sweep"),
        ({"kinds": ["cubic"]}, "kinds"),
        ({"repeats": 0}, "repeats"),
        ({"integral": True}, "integral"),
        ({"study": "ratio", "integral": True, "family": "small"}, "family"),
        ({"colour": 1}, "colour"),
    ):
        with pytest.raises(ValueError, match=key):
            exp.make_config(bad)
    for preset in ("fig4", "fig5", "fig6", "ratio", "ratio_integral", "ratio_small", "ratio_small_no_ties"):
        exp.make_config(preset=preset)


def test_tiny_sweep_writes_csv_png_json(tmp_path: Path) -> None:
    exp = get_paper("onsocmax")
    cfg = exp.make_config({"values": [2.0, 6.0], "repeats": 1, "kinds": ["log"], "n_jobs": 6, "sweep": "congestion"})
    paths = exp.run(cfg, tmp_path)
    assert sorted(p.name for p in paths) == sorted(f"onsocmax_congestion{s}" for s in (".csv", ".json", ".png", "_timing.csv"))
    df = pd.read_csv(tmp_path / "onsocmax_congestion.csv")
    assert len(df) == 2 * 3  # two values x three policies
    timing = pd.read_csv(tmp_path / "onsocmax_congestion_timing.csv")
    assert len(timing) == len(df) and (timing[["runtime_s", "cpu_s", "opt_cpu_s"]] >= 0).all().all()
    assert not {"runtime_s", "cpu_s"} & set(df.columns) and (df["n_jobs"] == 6).all()
    assert (df["welfare"] <= df["opt_bound"] * (1 + 1e-9)).all()
    assert np.allclose(df["ratio"], df["opt"] / df["welfare"])
    meta = json.loads((tmp_path / "onsocmax_congestion.json").read_text())
    assert meta["seed"] == 0 and meta["config"]["sweep"] == "congestion"


@pytest.mark.parametrize("settings", [{"family": "small"}, {"integral": True, "n_jobs": 6}])
def test_tiny_ratio_study(tmp_path: Path, settings: dict) -> None:
    exp = get_paper("onsocmax")
    cfg = exp.make_config({"study": "ratio", "instances": 4, **settings})
    exp.run(cfg, tmp_path)
    (csv,) = tmp_path.glob("*.csv")
    df = pd.read_csv(csv)
    assert len(df) == 4 and (df["ratio"] >= 1 - 1e-9).all()
    assert (df["violates_theorem2"] == (df["ratio"] > df["alpha_hat"])).all()
