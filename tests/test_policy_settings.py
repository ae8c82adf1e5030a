"""The policies' and the evaluator's settings, given as a library user gives them: a bad value
is a ValueError naming the setting at construction (or at ``evaluate``), never a TypeError,
a ZeroDivisionError or a failure slots later about the per-slot model's ``z``."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest

from optsched.esdp.policy import EsdpPolicy
from optsched.maxweight.network import JobNetwork, NetworkEnv
from optsched.maxweight.policy import MaxWeightPolicy
from optsched.ogasched.env import SchedulingEnv
from optsched.ogasched.policy import OGASched
from optsched.ogasched.scenario import synthetic_scenario
from optsched.onsocmax.policy import Onsocmax
from optsched.policy import evaluate

CASES: list[tuple[str, Callable[[], Any], str]] = [
    ("ogasched eta0 inf", lambda: OGASched(eta0=math.inf), "eta0"),
    ("ogasched eta0 text", lambda: OGASched(eta0="1"), "eta0"),
    ("ogasched decay inf", lambda: OGASched(decay=math.inf), "decay"),
    ("ogasched decay above 1", lambda: OGASched(decay=1.5), "decay"),
    ("ogasched theory horizon -5", lambda: OGASched(step="theory", horizon=-5), "horizon"),
    ("ogasched theory horizon text", lambda: OGASched(step="theory", horizon="x"), "horizon"),
    ("ogasched step list", lambda: OGASched(step=["decay"]), "step"),
    ("ogasched options list", lambda: OGASched(options=[1]), "options"),
    ("esdp alpha text", lambda: EsdpPolicy(alpha="0.5"), "alpha"),
    ("esdp alpha None", lambda: EsdpPolicy(alpha=None), "alpha"),
    ("esdp delta list", lambda: EsdpPolicy(delta=[]), "delta"),
    ("esdp mask number", lambda: EsdpPolicy(mask=1), "mask"),
    ("maxweight options list", lambda: MaxWeightPolicy([[1.0]], options=[1]), "options"),
    ("maxweight requirements text", lambda: MaxWeightPolicy([["a"]]), "requirements"),
    ("maxweight requirements ragged", lambda: MaxWeightPolicy([[1.0], [1.0, 2.0]]), "requirements"),
    ("maxweight requirements negative", lambda: MaxWeightPolicy([[-1.0]]), "requirements"),
    ("network copies 0", lambda: NetworkEnv(JobNetwork.uniform(2, 3, 0.5, 0.9), copies=0), "copies"),
    ("network copies 2.5", lambda: NetworkEnv(JobNetwork.uniform(2, 3, 0.5, 0.9), copies=2.5), "copies"),
    ("onsocmax bounds iota 0", lambda: Onsocmax(bounds=(0.0, 1.0)), "bounds"),
    ("onsocmax bounds one value", lambda: Onsocmax(bounds=(1.0,)), "bounds"),
    ("onsocmax bounds NaN", lambda: Onsocmax(bounds=(math.nan, 1.0)), "bounds"),
]


@pytest.mark.parametrize("build,field", [(b, f) for _, b, f in CASES], ids=[c[0] for c in CASES])
def test_bad_policy_settings_are_value_errors_naming_the_setting(build: Callable[[], Any], field: str) -> None:
    with pytest.raises(ValueError, match=rf"^{field}:"):
        build()


@pytest.mark.parametrize("horizon,seed,field", [(0, 1, "horizon"), (-3, 1, "horizon"), (2.5, 1, "horizon"),
                                                (5, -1, "seed"), (5, 1.5, "seed")])
def test_evaluate_refuses_a_bad_horizon_or_seed(horizon: Any, seed: Any, field: str) -> None:
    env = SchedulingEnv(synthetic_scenario(np.random.default_rng(0), n_nodes=4), horizon=5)
    with pytest.raises(ValueError, match=rf"^{field}:"):
        evaluate(env, OGASched(), horizon, seed=seed)


def test_good_settings_still_run() -> None:
    env = SchedulingEnv(synthetic_scenario(np.random.default_rng(0), n_nodes=4), horizon=5)
    out = evaluate(env, OGASched(step="theory", horizon=5.0, decay=1.0), 5, seed=np.int64(3))
    assert np.isfinite(out["reward"]).all() and out["reward"].shape == (5,)
