"""ESDP (Algorithm 1): feasibility, exploration of never-tried channels, and the AESCB route's
value against the exact P3(t) optimum (Theorem 1 with the ceilings of (13)-(14)).

Bound tested (derived from (26)-(32) with integer ceilings): if x_hat is ESDP's choice on the
tried channels and OPT = max_{x in Omega} v_hat.x + sqrt(sigma2_hat.x), then

    v_hat.x_hat + sqrt(sigma2_hat.x_hat) >= OPT - (|x_hat| + sqrt(|x_hat|)) / xi(t)

whenever S(t) = xi(t) m reaches Upsilon.x for an optimal x (guaranteed here with alpha = 1,
m = |E|, since Upsilon_e <= xi(t)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.esdp.baselines import first_fit
from optsched.esdp.env import DispatchEnv, Observation, generate_instance
from optsched.esdp.oracle import MkpOracle
from optsched.esdp.policy import EsdpPolicy
from optsched.esdp.statistics import DELTA_SEQUENCES, G_SEQUENCES, max_selection, scaling_size
from optsched.models.escb_index import EscbIndex
from optsched.policy import evaluate


class _Env:
    def __init__(self, inst) -> None:
        self.instance = inst


def _instance(seed: int):
    return generate_instance(np.random.default_rng(seed), n_ports=3, n_servers=4, n_resources=2,
                             edge_prob=0.6, alpha=0.5, a_max=3)


@settings(max_examples=150)
@given(
    seed=st.integers(0, 10**6),
    t=st.integers(1, 3000),
    arrivals=st.lists(st.booleans(), min_size=3, max_size=3),
    delta=st.sampled_from(sorted(DELTA_SEQUENCES)),
    g=st.sampled_from(sorted(G_SEQUENCES)),
)
def test_aescb_choice_within_theorem1_bound_of_exact_p3(seed, t, arrivals, delta, g) -> None:
    inst = _instance(seed)
    rng = np.random.default_rng(seed + 1)
    policy = EsdpPolicy(alpha=1.0, delta=delta, g=g)
    policy.reset(_Env(inst), rng)
    counts = rng.integers(1, max(2, t), size=inst.n_edges)
    policy.stats.counts[:] = counts
    policy.stats.sums[:] = counts * rng.uniform(0, 1, size=inst.n_edges)
    arrived = np.array(arrivals)
    mask = inst.channel_mask(arrived)
    x = policy.act(Observation(t=t - 1, arrived=arrived, channel_mask=mask))
    assert not (x & ~mask).any() and inst.fits(x)

    m = max_selection(1.0, inst.n_edges)
    xi = scaling_size(m, DELTA_SEQUENCES[delta](t))
    mean = policy.stats.v_hat()
    var = policy.stats.sigma2_hat(G_SEQUENCES[g](t, m))
    if not mask.any():
        assert not x.any()
        return
    model = EscbIndex(mean=mean[mask], variance=var[mask], weights=inst.requirements[:, mask], capacity=inst.capacity)
    exact = optsched.solve(model, "brute_force")
    assert exact.termination is optsched.Termination.OPTIMAL
    value = float(mean @ x + math.sqrt(var @ x))
    size = int(x.sum())
    assert value <= exact.objective + 1e-9
    assert value >= exact.objective - (size + math.sqrt(size)) / xi - 1e-9

    # the exact index route (escb_oa) attains the brute-force optimum with the same statistics
    exact_policy = EsdpPolicy(alpha=1.0, delta=delta, g=g, backend="escb_oa")
    exact_policy.reset(_Env(inst), rng)
    exact_policy.stats = policy.stats
    x_exact = exact_policy.act(Observation(t=t - 1, arrived=arrived, channel_mask=mask))
    assert not (x_exact & ~mask).any() and inst.fits(x_exact)
    assert float(mean @ x_exact + math.sqrt(var @ x_exact)) == pytest.approx(exact.objective, abs=1e-7)


def test_never_tried_channels_are_explored_first() -> None:
    inst = generate_instance(np.random.default_rng(5))
    policy = EsdpPolicy()
    policy.reset(_Env(inst), np.random.default_rng(0))
    arrived = np.ones(inst.n_ports, dtype=bool)
    arrived[0] = False
    mask = inst.channel_mask(arrived)
    x = policy.act(Observation(t=0, arrived=arrived, channel_mask=mask))
    assert x.tolist() == first_fit(np.flatnonzero(mask), inst.requirements, inst.capacity).tolist()
    # once part of the channels are tried, untried available ones are still taken first
    policy.stats.counts[: inst.n_edges // 2] = 3
    policy.stats.sums[: inst.n_edges // 2] = 1.5
    x = policy.act(Observation(t=1, arrived=arrived, channel_mask=mask))
    untried = mask & (policy.stats.counts == 0)
    expected = first_fit(np.flatnonzero(untried), inst.requirements, inst.capacity)
    assert (x[expected]).all() and not (x & untried & ~expected).any()
    assert inst.fits(x) and not (x & ~mask).any()


def test_esdp_learns_and_masking_first_beats_the_printed_order() -> None:
    """Masking empty ports before solving: the per-slot pseudo-regret (5) of the last third is
    below half the first third's. Masking after solving (Algorithm 1 as printed) spends capacity
    on channels that are then zeroed, so its late regret stays above."""
    inst = generate_instance(np.random.default_rng(11), n_ports=4, n_servers=10, edge_prob=0.3)
    env = DispatchEnv(inst, MkpOracle.for_instance(inst))
    gaps = {}
    for mask in ("before", "after"):
        out = evaluate(env, EsdpPolicy(g="log", mask=mask), 600, seed=4)
        gaps[mask] = out["oracle_welfare"] - out["expected_welfare"]
    assert gaps["before"][-200:].mean() < 0.5 * gaps["before"][:200].mean()
    assert gaps["after"][-200:].mean() > gaps["before"][-200:].mean()


def test_policy_rejects_bad_options() -> None:
    with pytest.raises(ValueError, match="delta"):
        EsdpPolicy(delta="nope")
    with pytest.raises(ValueError, match="g"):
        EsdpPolicy(g="nope")
    with pytest.raises(ValueError, match="mask"):
        EsdpPolicy(mask="sideways")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alpha"):
        EsdpPolicy(alpha=0.0)


def test_a_backend_that_cannot_take_the_largest_slot_is_refused_before_the_first(tmp_path) -> None:
    """a_max = 100 made the AESCB route's DP need 4e9 capacity cells: ``run esdp`` failed with
    exit 1 in the middle of its slots ("returned no solution"). The policy now asks the prepared
    backend about its largest subproblem when it is reset: a ValueError (exit 2) before any slot;
    the exact index takes the same instance."""
    from optsched.cli import main
    from optsched.papers import get_paper

    paper = get_paper("esdp")
    with pytest.raises(ValueError, match="aescb: the DP of Algorithm 2 needs .* capacity cells"):
        paper.run(paper.make_config({"horizon": 3, "a_max": 100, "policies": ["ESDP"]}), tmp_path / "a")
    paper.run(paper.make_config({"horizon": 3, "a_max": 100, "policies": ["ESDP"], "backend": "escb_oa"}), tmp_path / "b")
    config = tmp_path / "c.toml"
    config.write_text("a_max = 100\nhorizon = 3\n")
    assert main(["run", "esdp", "--config", str(config), "--out", str(tmp_path / "c")]) == 2
