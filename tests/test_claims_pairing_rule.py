"""The pairing rule of the claims layer: two runs' rows are paired only when every config key
outside the keys the run sets on purpose is equal in both, a key recorded by one run only
included (optsched.claims.unpaired)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from optsched.claims import unpaired

SETTINGS = frozenset({"backend", "values", "repeats"})


def _run(d: Path, name: str, config: dict[str, Any]) -> None:
    (d / name).mkdir()
    (d / name / "meta.json").write_text(json.dumps({"config": config}))


@pytest.mark.parametrize("side", ["run", "reference"])
def test_a_config_key_recorded_by_only_one_run_unpairs_them(tmp_path: Path, side: str) -> None:
    """A key outside the run's settings present in one run's config only is a difference: not paired."""
    base = {"seed": 1, "kinds": ["linear"]}
    extra = {**base, "capacity_scale": 2.0}
    _run(tmp_path, "fig4-alm", {**(extra if side == "run" else base), "backend": "alm"})
    _run(tmp_path, "fig4", extra if side == "reference" else base)
    why = unpaired(tmp_path, "fig4-alm", "fig4", SETTINGS)
    assert why is not None
    assert "different capacity_scale" in why and "seed" not in why


def test_a_key_the_run_sets_on_purpose_does_not_unpair(tmp_path: Path) -> None:
    """Keys in ``settings`` (also when only one run records them) are not differences: paired."""
    _run(tmp_path, "fig4-alm", {"seed": 1, "backend": "alm", "repeats": 3})
    _run(tmp_path, "fig4", {"seed": 1})
    assert unpaired(tmp_path, "fig4-alm", "fig4", SETTINGS) is None
