"""The exact per-slot knapsack and the learning baselines CUCB, Greedy, TS (paper 000)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.esdp.env import DispatchEnv, Observation, generate_instance
from optsched.esdp.learners import INDICES, IndexLearner
from optsched.esdp.oracle import MkpOracle, SlotKnapsack
from optsched.esdp.policy import EsdpPolicy
from optsched.models.budgeted_ip import BudgetedIP
from optsched.policy import evaluate


def brute_force(values, weights, capacity, mask) -> float:
    best = 0.0
    for bits in itertools.product((0, 1), repeat=len(values)):
        x = np.array(bits, dtype=bool)
        if (x & ~mask).any() or (weights @ x > capacity).any():
            continue
        best = max(best, float(values @ x))
    return best


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), ties=st.booleans())
def test_slot_knapsack_is_exact(seed: int, ties: bool) -> None:
    """Against brute force and optsched.solve(BudgetedIP, "highs"), with random masks, residual
    capacities and (``ties``) many equal values on duplicate columns (the HiGHS presolve fault
    of solvers/highs.py needs both)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 11)), int(rng.integers(1, 4))
    weights = rng.integers(1, 3, size=(k, n))
    capacity = rng.integers(1, 2 * n + 1, size=k)
    values = rng.integers(0, 3, size=n).astype(float) if ties else rng.random(n)
    mask = rng.random(n) < 0.7
    knapsack = SlotKnapsack(weights, capacity)
    for cap in (capacity, np.maximum(capacity - rng.integers(0, 3, size=k), 0)):
        x = knapsack(values, mask, cap)
        assert not (x & ~mask).any() and (weights @ x <= cap).all()
        best = brute_force(values, weights, cap, mask)
        assert float(values @ x) == pytest.approx(best, abs=1e-9)
        if cap.min() >= 1:
            res = optsched.solve(BudgetedIP(values=values, weights=weights, capacity=cap, mask=mask), "highs")
            assert res.objective == pytest.approx(best, abs=1e-9)


def test_slot_knapsack_refuses_infinite_values() -> None:
    knapsack = SlotKnapsack(np.ones((1, 2)), np.array([1]))
    with pytest.raises(ValueError, match="values"):
        knapsack(np.array([np.inf, 1.0]), np.array([True, True]))
    # an infinite value off the mask is never read
    assert knapsack(np.array([np.inf, 1.0]), np.array([False, True])).tolist() == [False, True]


def _scripted(name: str, inst, counts, sums, t: int, arrived) -> np.ndarray:
    class _Env:
        instance = inst

    pol = IndexLearner(name)
    pol.reset(_Env(), np.random.default_rng(0))
    pol.stats.counts[:] = counts
    pol.stats.sums[:] = sums
    arrived = np.asarray(arrived, dtype=bool)
    return pol.act(Observation(t=t, arrived=arrived, channel_mask=inst.channel_mask(arrived)))


def test_never_tried_channels_first_then_the_exact_index_knapsack() -> None:
    inst = generate_instance(np.random.default_rng(4), n_ports=4, n_servers=8, edge_prob=0.5)
    rng = np.random.default_rng(1)
    counts = rng.integers(1, 30, inst.n_edges)
    counts[[0, 3]] = 0  # never tried
    sums = counts * rng.random(inst.n_edges)
    arrived = np.ones(inst.n_ports, dtype=bool)
    t = 100
    v_hat = np.divide(sums, counts, out=np.zeros(inst.n_edges), where=counts > 0)
    cucb = np.minimum(v_hat + np.sqrt(1.5 * math.log(t + 1) / np.maximum(counts, 1)), 1.0)
    for name, index in (("Greedy", v_hat), ("CUCB", cucb)):
        x = _scripted(name, inst, counts, sums, t, arrived)
        assert inst.fits(x)
        assert x[[0, 3]].all()  # both fit in an empty system: explored first
        residual = inst.capacity - inst.requirements[:, [0, 3]].sum(axis=1)
        pool = counts > 0
        best = brute_force(np.where(pool, index, 0.0), inst.requirements, residual, pool)
        assert float(index[x & pool] @ np.ones(int((x & pool).sum()))) == pytest.approx(best, abs=1e-9), name


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_learners_are_feasible_below_the_oracle_and_deterministic(seed: int) -> None:
    inst = generate_instance(np.random.default_rng(seed), n_ports=3, n_servers=5, edge_prob=0.6,
                             normalisation="minmax", cost_model="independent")
    env = DispatchEnv(inst, MkpOracle.for_instance(inst))
    for name in INDICES:
        out = evaluate(env, IndexLearner(name), 40, seed=seed)
        assert (out["oracle_welfare"] - out["expected_welfare"] >= -1e-9).all(), name
        again = evaluate(env, IndexLearner(name), 40, seed=seed)
        np.testing.assert_array_equal(out["x"], again["x"])


def test_thompson_draws_from_the_beta_posterior() -> None:
    """TS's index is Beta(1 + s, 1 + n - s) with s the Bernoulli successes of the feedback."""
    inst = generate_instance(np.random.default_rng(0), n_ports=2, n_servers=3, edge_prob=1.0)

    class _Env:
        instance = inst

    pol = IndexLearner("TS")
    pol.reset(_Env(), np.random.default_rng(3))
    x = np.ones(inst.n_edges, dtype=bool)
    z = np.linspace(0.0, 1.0, inst.n_edges)
    for _ in range(400):
        pol.observe({"x": x, "z": z})
    assert pol.stats.counts.tolist() == [400] * inst.n_edges
    assert np.abs(pol.successes / 400 - z).max() < 0.1  # successes ~ Binomial(400, z)
    draws = np.array([INDICES["TS"](pol, 401) for _ in range(300)])
    assert np.abs(draws.mean(axis=0) - (1 + pol.successes) / 402).max() < 0.02


def test_greedy_stops_exploring_while_ucb_indices_keep_it_going() -> None:
    """On a noisy minmax instance, Greedy leaves some tried channels for good after a bad first
    look; CUCB and ESDP keep sampling every channel (their counts grow without bound)."""
    inst = generate_instance(np.random.default_rng(2), normalisation="minmax", noise=2.0)
    env = DispatchEnv(inst, MkpOracle.for_instance(inst))
    counts = {}
    for policy in (IndexLearner("Greedy"), IndexLearner("CUCB"), EsdpPolicy()):
        out = evaluate(env, policy, 400, seed=0)
        counts[policy.name] = out["x"].sum(axis=0)
    assert counts["Greedy"].min() <= 3
    assert counts["CUCB"].min() > counts["Greedy"].min() and counts["ESDP"].min() > counts["Greedy"].min()


def test_unknown_learner_is_refused() -> None:
    with pytest.raises(ValueError, match="learner"):
        IndexLearner("UCB-V")
