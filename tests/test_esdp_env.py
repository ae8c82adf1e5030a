"""ESDP environment, normalisation, oracle and baselines (paper 000, Sections 2 and 4.1)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.esdp.baselines import GreedyBaseline, first_fit
from optsched.esdp.env import DispatchEnv, DispatchInstance, Observation, clipped_normal_mean, generate_instance
from optsched.esdp.oracle import MkpOracle, OraclePolicy
from optsched.models.budgeted_ip import BudgetedIP
from optsched.policy import evaluate


def small_instance(seed: int, **kw) -> DispatchInstance:
    args = dict(n_ports=3, n_servers=4, n_resources=2, edge_prob=0.6, alpha=0.5, a_max=3)
    args.update(kw)
    return generate_instance(np.random.default_rng(seed), **args)


def brute_force_mkp(values, weights, capacity, mask) -> float:
    best = 0.0
    n = len(values)
    for bits in itertools.product((0, 1), repeat=n):
        x = np.array(bits, dtype=bool)
        if (x & ~mask).any() or (weights @ x > capacity).any():
            continue
        best = max(best, float(values @ x))
    return best


def test_defaults_follow_table2_and_capacity_rule() -> None:
    for seed in range(5):
        inst = generate_instance(np.random.default_rng(seed))
        assert inst.n_ports == 8 and inst.n_servers == 40 and inst.n_resources == 3
        assert set(np.unique(inst.requirements)) <= {1, 2}
        # c_k = ceil(alpha * sum_e A[k, e]) with alpha = 0.5
        assert inst.capacity.tolist() == np.ceil(0.5 * inst.requirements.sum(axis=1)).astype(int).tolist()
        assert ((inst.mu >= 0.1) & (inst.mu <= 1.0)).all()
        assert ((inst.true_means > 0) & (inst.true_means < 1)).all()
        assert (inst.edges[:, 0] < 8).all() and (inst.edges[:, 1] < 40).all()


@pytest.mark.parametrize(
    "field,value",
    [
        ("edges", [[0, 5]]),
        ("edges", [[0, 0], [0, 0]]),
        ("requirements", [[0]]),
        ("capacity", [0]),
        ("mu", [-0.5]),
        ("arrival_prob", [1.5]),
        ("unit_costs", [float("nan")]),
    ],
)
def test_bad_instance_names_the_field(field: str, value) -> None:
    good = dict(n_ports=1, n_servers=2, edges=[[0, 0]], requirements=[[1]], capacity=[1], unit_costs=[0.5],
                mu=[0.5], arrival_prob=[0.9])
    if field == "edges" and len(value) == 2:
        good.update(requirements=[[1, 1]], mu=[0.5, 0.5])
    good[field] = value
    with pytest.raises(ValueError, match=field):
        DispatchInstance(**good)


def test_clipped_normal_mean_matches_monte_carlo() -> None:
    rng = np.random.default_rng(7)
    m = np.array([-0.3, 0.2, 0.5, 0.9, 1.4])
    s = np.array([0.2, 0.3, 0.1, 0.4, 0.5])
    draws = np.clip(rng.normal(m, s, size=(400_000, 5)), 0, 1)
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert (np.abs(draws.mean(axis=0) - clipped_normal_mean(m, s)) < 5 * se + 1e-12).all()


def test_normalised_feedback_is_in_unit_interval_and_unbiased() -> None:
    inst = generate_instance(np.random.default_rng(3))
    env = DispatchEnv(inst)
    env.reset(np.random.default_rng(0))
    zs = []
    for t in range(20_000):
        env.observe(t)
        zs.append(env._z)
    zs = np.array(zs)
    assert zs.min() >= 0 and zs.max() <= 1
    se = zs.std(axis=0) / np.sqrt(len(zs))
    assert (np.abs(zs.mean(axis=0) - inst.true_means) < 5 * se + 1e-12).all()


def test_env_rejects_infeasible_actions() -> None:
    inst = DispatchInstance(n_ports=2, n_servers=1, edges=[[0, 0], [1, 0]], requirements=[[2, 2]], capacity=[3],
                            unit_costs=[0.5], mu=[0.5, 0.6], arrival_prob=[1.0, 0.0])
    env = DispatchEnv(inst)
    env.reset(np.random.default_rng(0))
    obs = env.observe(0)
    assert obs.arrived.tolist() == [True, False]
    with pytest.raises(ValueError, match=r"constraint \(2\)"):
        env.step(np.array([False, True]))
    env.observe(1)
    out = env.step(np.array([True, False]))
    assert np.isnan(out["z"][1]) and 0 <= out["z"][0] <= 1
    inst2 = DispatchInstance(n_ports=1, n_servers=2, edges=[[0, 0], [0, 1]], requirements=[[2, 2]], capacity=[3],
                             unit_costs=[0.5], mu=[0.5, 0.6], arrival_prob=[1.0])
    env2 = DispatchEnv(inst2)
    env2.reset(np.random.default_rng(0))
    env2.observe(0)
    with pytest.raises(ValueError, match=r"constraint \(1\)"):
        env2.step(np.array([True, True]))


@settings(max_examples=40)
@given(seed=st.integers(0, 10**6), arrivals=st.lists(st.booleans(), min_size=3, max_size=3))
def test_oracle_is_exact(seed: int, arrivals: list[bool]) -> None:
    inst = small_instance(seed)
    mask = inst.channel_mask(np.array(arrivals))
    value, x = MkpOracle.for_instance(inst)(mask)
    assert not (x & ~mask).any() and inst.fits(x)
    assert value == pytest.approx(float(inst.true_means @ x), abs=1e-12)
    assert value == pytest.approx(brute_force_mkp(inst.true_means, inst.requirements, inst.capacity, mask), abs=1e-9)
    # and through optsched.solve with the exact backends on the budgeted_ip model (no budget)
    model = BudgetedIP(values=inst.true_means, weights=inst.requirements, capacity=inst.capacity, mask=mask)
    for backend in ("highs", "cpsat"):
        res = optsched.solve(model, backend)
        assert res.termination is optsched.Termination.OPTIMAL
        assert res.objective == pytest.approx(value, abs=1e-6)


def test_oracle_cache_answers_by_mask() -> None:
    inst = generate_instance(np.random.default_rng(0))
    oracle = MkpOracle.for_instance(inst)
    rng = np.random.default_rng(1)
    masks = [inst.channel_mask(rng.random(8) < 0.5) for _ in range(6)]
    first = [oracle(m)[0] for m in masks]
    fresh = [MkpOracle.for_instance(inst)(m)[0] for m in masks]  # no cache, no warm state
    assert first == pytest.approx(fresh, abs=1e-9)
    assert [oracle(m)[0] for m in masks] == first


def test_first_fit_skips_what_does_not_fit() -> None:
    A = np.array([[3, 2, 2, 1]])
    x = first_fit(np.array([0, 1, 2, 3]), A, np.array([5]))
    assert x.tolist() == [True, True, False, False]  # 3 + 2 = 5: nothing else fits
    x = first_fit(np.array([1, 0, 3, 2]), A, np.array([4]))
    assert x.tolist() == [False, True, False, True]  # 2, 3 skipped (2+3 > 4), 1 fits, 2 skipped


def _scripted_baseline(name: str, inst: DispatchInstance, v_hat, t: int, arrived, last_served=None) -> np.ndarray:
    class _Env:
        instance = inst

    pol = GreedyBaseline(name)
    pol.reset(_Env(), np.random.default_rng(0))
    pol.stats.counts[:] = 1
    pol.stats.sums[:] = v_hat
    if last_served is not None:
        pol.last_served[:] = last_served
    arrived = np.array(arrived)
    return pol.act(Observation(t=t, arrived=arrived, channel_mask=inst.channel_mask(arrived)))


def test_baselines_rank_as_section_4_1() -> None:
    # ports 0, 1, 2 with channels (0, 1), (2), (3); two resources, capacities (2, 4); any two
    # channels fit in resource 0 (each needs 1); costs differ through resource 1.
    inst = DispatchInstance(
        n_ports=3, n_servers=3, edges=[[0, 0], [0, 1], [1, 2], [2, 0]],
        requirements=[[1, 1, 1, 1], [2, 1, 1, 2]], capacity=[2, 4],
        unit_costs=[0.1, 0.5], mu=[0.5] * 4, arrival_prob=[1.0] * 3,
    )
    v_hat = np.array([0.3, 0.2, 0.9, 0.4])
    # HSWF: port sums (0.5, 0.9, 0.4) -> port 1 first (channel 2), then port 0 by v_hat: channel 0
    assert np.flatnonzero(_scripted_baseline("HSWF", inst, v_hat, 5, [1, 1, 1])).tolist() == [0, 2]
    # channel costs C = 0.1 + 0.5 a_2 = (1.1, 0.6, 0.6, 1.1)
    # LCF (the paper: jobs by cost): port costs (1.7, 0.6, 1.1) -> port 1 (channel 2), port 2 (3)
    assert np.flatnonzero(_scripted_baseline("LCF", inst, v_hat, 5, [1, 1, 1])).tolist() == [2, 3]
    # LCF-channel: channels by cost, ties by v_hat: channel 2 (0.9), channel 1
    assert np.flatnonzero(_scripted_baseline("LCF-channel", inst, v_hat, 5, [1, 1, 1])).tolist() == [1, 2]
    # LWTF: port 2 waited longest (last served at 0), then port 0 (at 2); port 1 at 4
    chosen = _scripted_baseline("LWTF", inst, v_hat, 5, [1, 1, 1], last_served=[2, 4, 0])
    assert np.flatnonzero(chosen).tolist() == [0, 3]
    # empty ports are never served: without port 1, port 0 (0.5) beats port 2 (0.4) and fills up
    assert np.flatnonzero(_scripted_baseline("HSWF", inst, v_hat, 5, [1, 0, 1])).tolist() == [0, 1]


def test_lcf_ranks_jobs_not_channels() -> None:
    """Section 4.1: "LCF ranks each job (non-empty port) in the ascending order of cost". Port 0
    has two cheap channels (C = 0.5 each, job cost 1.0); port 1 one channel of C = 0.8; room for
    two channels. By jobs, port 1 (0.8) goes first, then port 0's cheaper channel (ties by
    v_hat); by channels, port 0's two channels (0.5, 0.5) go first and port 1 is left out."""
    inst = DispatchInstance(
        n_ports=2, n_servers=3, edges=[[0, 0], [0, 1], [1, 2]], requirements=[[1, 1, 1]], capacity=[2],
        unit_costs=[[0.5, 0.5, 0.8]], mu=[0.5] * 3, arrival_prob=[1.0, 1.0],
    )
    assert inst.cost.tolist() == [0.5, 0.5, 0.8]
    v_hat = np.array([0.1, 0.4, 0.2])
    assert np.flatnonzero(_scripted_baseline("LCF", inst, v_hat, 3, [1, 1])).tolist() == [1, 2]
    assert np.flatnonzero(_scripted_baseline("LCF-channel", inst, v_hat, 3, [1, 1])).tolist() == [0, 1]
    # an empty port is skipped: with port 1 empty, LCF serves port 0 in full
    assert np.flatnonzero(_scripted_baseline("LCF", inst, v_hat, 3, [1, 0])).tolist() == [0, 1]
    # within a port the cheaper channel goes first, whatever v_hat says
    inst2 = DispatchInstance(
        n_ports=1, n_servers=2, edges=[[0, 0], [0, 1]], requirements=[[1, 1]], capacity=[1],
        unit_costs=[[0.9, 0.3]], mu=[0.5, 0.5], arrival_prob=[1.0],
    )
    assert np.flatnonzero(_scripted_baseline("LCF", inst2, np.array([0.9, 0.1]), 3, [1])).tolist() == [1]


@settings(max_examples=10)
@given(seed=st.integers(0, 10**6))
def test_every_policy_is_feasible_and_below_the_oracle(seed: int) -> None:
    """Each slot: (1), (2) hold (the env raises otherwise) and v_tilde . x <= v_tilde . x*(t)."""
    from optsched.esdp.policy import EsdpPolicy

    inst = small_instance(seed)
    env = DispatchEnv(inst, MkpOracle.for_instance(inst))
    for policy in (GreedyBaseline("HSWF"), GreedyBaseline("LCF"), GreedyBaseline("LCF-channel"), GreedyBaseline("LWTF"),
                   EsdpPolicy(),
                   EsdpPolicy(mask="after"), OraclePolicy()):
        out = evaluate(env, policy, 40, seed=seed)
        gap = out["oracle_welfare"] - out["expected_welfare"]
        assert (gap >= -1e-9).all(), policy.name
        if isinstance(policy, OraclePolicy):
            assert np.abs(gap).max() < 1e-9


def test_common_random_numbers_across_policies() -> None:
    inst = generate_instance(np.random.default_rng(2))
    env = DispatchEnv(inst)
    a = evaluate(env, GreedyBaseline("LCF"), 30, seed=11)
    b = evaluate(env, GreedyBaseline("HSWF"), 30, seed=11)
    both = a["x"] & b["x"]
    assert np.allclose(a["z"][both], b["z"][both])


def test_scenario_options_change_only_what_they_name() -> None:
    """cost_model, normalisation, capacity_rule, noise (docs/esdp.md): the same graph and A for
    every choice; costs independent of A; min-max map of the channel means; capacity from the
    expected demand; valuation noise sigma = noise * mu."""
    base = generate_instance(np.random.default_rng(5))
    ind = generate_instance(np.random.default_rng(5), cost_model="independent")
    assert ind.edges.tolist() == base.edges.tolist() and ind.requirements.tolist() == base.requirements.tolist()
    assert ind.unit_costs.shape == (3, ind.n_edges)
    assert np.allclose(ind.cost, ind.unit_costs.sum(axis=0))
    assert abs(np.corrcoef(ind.cost, ind.requirements.sum(axis=0))[0, 1]) < 0.5  # linear: ~1
    assert np.corrcoef(base.cost, base.requirements.sum(axis=0))[0, 1] > 0.9

    mm = generate_instance(np.random.default_rng(5), normalisation="minmax")
    means = mm.mu - mm.cost
    assert (mm.lo, mm.hi) == (means.min(), means.max())
    assert (base.lo, base.hi) == (float(np.min(-base.cost)), float(np.max(2 * base.mu - base.cost)))
    # band leaves room for every channel's 2-sigma band; minmax stretches the means over ~[0, 1]
    assert base.true_means.max() < 0.75 and mm.true_means.min() < 0.05 and mm.true_means.max() > 0.85
    # the order of the channels' welfare is the same under both maps
    assert (np.argsort(mm.true_means) == np.argsort(base.true_means)).mean() > 0.9

    dem = generate_instance(np.random.default_rng(5), capacity_rule="demand", arrival_prob=0.6)
    assert dem.capacity.tolist() == np.ceil(0.5 * 0.6 * dem.requirements.sum(axis=1) - 1e-9).astype(int).tolist()

    noisy = generate_instance(np.random.default_rng(5), noise=2.0)
    env = DispatchEnv(noisy)
    env.reset(np.random.default_rng(0))
    zs = np.array([(env.observe(t), env._z)[1] for t in range(20_000)])
    se = zs.std(axis=0) / np.sqrt(len(zs))
    assert (np.abs(zs.mean(axis=0) - noisy.true_means) < 5 * se + 1e-12).all()
    with pytest.raises(ValueError, match="noise"):
        generate_instance(np.random.default_rng(5), noise=0.0)
    for key in ("capacity_rule", "cost_model", "normalisation"):
        with pytest.raises(ValueError, match=key):
            generate_instance(np.random.default_rng(5), **{key: "nope"})
