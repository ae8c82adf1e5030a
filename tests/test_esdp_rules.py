"""The documented per-slot rules of ESDP (paper 000) and of its CUCB baseline, pinned by hand.

Every expected value below is computed in the test from the formula as written in the paper
(with the corrections of ../shared/papers/README.md), not read back from optsched:

* CUCB (optsched/esdp/learners.py): index_e = min(v_hat_e + sqrt(3 ln t / (2 n_e)), 1), t the
  1-based slot (t = observation.t + 1), so the bonus vanishes at slot 1 (ln 1 = 0);
* ESDP (Algorithm 1, optsched/esdp/policy.py) at the 1-based slot t = observation.t + 1:
  delta(t) = 1 / (ln(ln(t+1) + 1) + 1),  g(t) = ln(t+1) + 4 ln(ln(t+1) + 1) m,
  sigma2_hat_e = g(t) / (2 n_e) (9),  xi(t) = ceil(m / delta(t)) (15) with m = ceil(alpha |E|),
  S(t) = {0, ..., xi(t) m}: the slot's P3(t) gets exactly these, and the AESCB backend gets
  xi = xi(t) and max_budget = xi(t) m;
* the environment's ``capacity_binds`` (optsched/esdp/env.py): True iff the channels of the
  ports with a job do not all fit in (1), i.e. (A . mask > c) for some resource k.

The instances use alpha |E| whole (|E| even, alpha = 0.5), where m = ceil(alpha |E|) of the code
and alpha |E| of the README agree.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import optsched
from optsched.esdp.env import DispatchEnv, DispatchInstance, Observation
from optsched.esdp.learners import INDICES, IndexLearner
from optsched.esdp.policy import EsdpPolicy


class _Env:
    def __init__(self, inst) -> None:
        self.instance = inst


def _all_arrived(inst: DispatchInstance) -> tuple[np.ndarray, np.ndarray]:
    arrived = np.ones(inst.n_ports, dtype=bool)
    return arrived, inst.channel_mask(arrived)


# --- CUCB ------------------------------------------------------------------------------------------

def _cucb_by_hand(v_hat: np.ndarray, counts: np.ndarray, t: int) -> np.ndarray:
    """min(v_hat + sqrt(3 ln t / (2 n)), 1), written out channel by channel."""
    return np.array([min(v + math.sqrt(3.0 * math.log(t) / (2.0 * n)), 1.0) for v, n in zip(v_hat, counts)])


def _two_channel_instance() -> DispatchInstance:
    """One port, two servers, room for one channel: the learner picks the larger index."""
    return DispatchInstance(n_ports=1, n_servers=2, edges=[[0, 0], [0, 1]], requirements=[[1, 1]], capacity=[1],
                            unit_costs=[0.5], mu=[0.5, 0.5], arrival_prob=[1.0])


def _cucb_learner(inst: DispatchInstance, counts, v_hat) -> IndexLearner:
    pol = IndexLearner("CUCB")
    pol.reset(_Env(inst), np.random.default_rng(0))
    counts = np.asarray(counts, dtype=np.int64)
    pol.stats.counts[:] = counts
    pol.stats.sums[:] = counts * np.asarray(v_hat, dtype=np.float64)
    return pol


@pytest.mark.parametrize("t", [1, 2, 3, 10, 137, 5000])
def test_cucb_index_is_the_capped_adjusted_mean(t: int) -> None:
    """CUCB index = min(v_hat_e + sqrt(3 ln t / (2 n_e)), 1) (learners.py docstring; Chen et al.
    2016): the factor 3/2 under the square root, the square root itself, and the cap at 1. The
    channels mix small and large counts so that some indices hit the cap and others do not."""
    inst = DispatchInstance(n_ports=2, n_servers=3, edges=[[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]],
                            requirements=[[1, 1, 1, 1, 1, 1]], capacity=[3], unit_costs=[0.5],
                            mu=[0.5] * 6, arrival_prob=[1.0, 1.0])
    counts = np.array([1, 3, 40, 1000, 250_000, 9])
    v_hat = np.array([0.93, 0.2, 0.55, 0.35, 0.7, 0.05])  # n = 1 at 0.93: capped from t = 2 on
    pol = _cucb_learner(inst, counts, v_hat)
    expected = _cucb_by_hand(v_hat, counts, t)
    np.testing.assert_allclose(INDICES["CUCB"](pol, t), expected, rtol=1e-12, atol=1e-12)
    if t == 1:
        np.testing.assert_allclose(expected, v_hat)  # ln 1 = 0: no bonus at the first slot
    else:
        assert (expected == 1.0).any() and (expected < 1.0).any()  # the cap is exercised both ways


def test_cucb_has_no_bonus_at_slot_one() -> None:
    """The learner evaluates its index at the 1-based slot t = observation.t + 1: at the first
    slot (observation.t = 0) ln t = 0, so CUCB ranks the tried channels by v_hat alone. Channel 1
    (v_hat 0.5, n = 1) would have index 1 at any later slot; channel 0 (v_hat 0.6) wins at t = 1."""
    inst = _two_channel_instance()
    pol = _cucb_learner(inst, [1000, 1], [0.6, 0.5])
    arrived, mask = _all_arrived(inst)
    assert _cucb_by_hand(np.array([0.6, 0.5]), np.array([1000, 1]), 1).tolist() == pytest.approx([0.6, 0.5])
    assert pol.act(Observation(t=0, arrived=arrived, channel_mask=mask)).tolist() == [True, False]
    # one slot later the bonus of the rarely used channel takes over (index 1 against ~0.63)
    assert pol.act(Observation(t=1, arrived=arrived, channel_mask=mask)).tolist() == [False, True]


@pytest.mark.parametrize("slot", [0, 1, 2, 3, 5, 20])
def test_cucb_decision_follows_the_hand_index_at_each_slot(slot: int) -> None:
    """With room for one channel, CUCB takes the channel of the larger hand-computed index at
    t = slot + 1. Channel 0: v_hat 0.6, n = 10^6 (bonus ~0); channel 1: v_hat 0.5, n = 130, whose
    bonus sqrt(1.5 ln t / 130) passes 0.1 between t = 2 and t = 3 (1.5 ln 2 / 130 < 0.01 <
    1.5 ln 3 / 130): the choice flips there, so it pins the slot, the 3/2 and the square root."""
    inst = _two_channel_instance()
    counts, v_hat = np.array([1_000_000, 130]), np.array([0.6, 0.5])
    pol = _cucb_learner(inst, counts, v_hat)
    arrived, mask = _all_arrived(inst)
    index = _cucb_by_hand(v_hat, counts, slot + 1)
    assert abs(index[0] - index[1]) > 5e-3  # no near-tie: the expected choice is unambiguous
    expected = [bool(index[0] > index[1]), bool(index[1] > index[0])]
    assert expected == ([True, False] if slot <= 1 else [False, True])
    assert pol.act(Observation(t=slot, arrived=arrived, channel_mask=mask)).tolist() == expected


# --- ESDP's per-slot parameters ------------------------------------------------------------------------

ALPHA = 0.5


def _delta(t: int) -> float:
    return 1.0 / (math.log(math.log(t + 1) + 1.0) + 1.0)


def _g(t: int, n_edges: int) -> float:
    return math.log(t + 1) + 4.0 * math.log(math.log(t + 1) + 1.0) * ALPHA * n_edges


def _xi(t: int, m: int) -> int:
    return math.ceil(m / _delta(t))


def _esdp_instance() -> DispatchInstance:
    """2 ports x 2 servers (|E| = 4, m = alpha |E| = 2), two resources."""
    return DispatchInstance(n_ports=2, n_servers=2, edges=[[0, 0], [0, 1], [1, 0], [1, 1]],
                            requirements=[[1, 1, 1, 1], [1, 2, 1, 2]], capacity=[2, 3], unit_costs=[0.3, 0.2],
                            mu=[0.5, 0.6, 0.7, 0.8], arrival_prob=[1.0, 1.0])


def _jump_slots(m: int, upto: int = 3000) -> list[int]:
    """1-based slots t with xi(t) != xi(t + 1) (computed by hand)."""
    return [t for t in range(1, upto) if _xi(t, m) != _xi(t + 1, m)]


def test_hand_formulas_of_the_slot_parameters() -> None:
    """Sanity of the hand formulas used below at known values: delta(1) = 1 / (ln(ln 2 + 1) + 1),
    xi(t) = ceil(m / delta(t)) jumps from 4 to 5 after t = 4 and from 5 to 6 after t = 31 for
    m = 2 (ln(t+1) crosses e - 1 and e^1.5 - 1)."""
    assert _delta(1) == pytest.approx(1.0 / (math.log(math.log(2.0) + 1.0) + 1.0))
    assert _g(1, 4) == pytest.approx(math.log(2.0) + 8.0 * math.log(math.log(2.0) + 1.0))
    assert [_xi(t, 2) for t in (1, 4, 5, 31, 32)] == [4, 4, 5, 5, 6]
    assert _jump_slots(2)[:2] == [4, 31]


def _spy_on_esdp(policy: EsdpPolicy, monkeypatch) -> list:
    calls: list = []
    solution = policy.solver.solution

    def spy(model, *, params=None):
        calls.append((model, dict(params or {})))
        return solution(model, params=params)

    monkeypatch.setattr(policy.solver, "solution", spy)
    return calls


def _slots_to_check() -> list[int]:
    jumps = _jump_slots(2)
    return sorted({1, 2, 3, 100} | set(jumps) | {j + 1 for j in jumps})


def test_esdp_slot_parameters_follow_eq15_at_the_one_based_slot(monkeypatch) -> None:
    """At observation.t = t - 1, ESDP solves P3(t) (11) with mean v_hat (8), variance
    sigma2_hat = g(t) / (2 n) (9) with the default g(t) = ln(t+1) + 4 ln(ln(t+1) + 1) alpha |E|,
    and hands the AESCB route xi = xi(t) = ceil(m / delta(t)) (15), delta(t) = 1 / (ln(ln(t+1) + 1)
    + 1), and max_budget = xi(t) m, so S(t) = {0, ..., xi(t) m} has xi(t) m + 1 levels
    (``budget_levels``). Checked at slots 1-3, 100 and on both sides of every jump of xi(t)
    (t = 4/5, 31/32, ...), where reading the slot one off changes xi."""
    inst = _esdp_instance()
    policy = EsdpPolicy(alpha=ALPHA)
    policy.reset(_Env(inst), np.random.default_rng(1))
    m = 2
    assert policy.m == m == ALPHA * inst.n_edges
    counts = np.array([3, 11, 40, 7])
    v_hat = np.array([0.8, 0.45, 0.6, 0.3])
    policy.stats.counts[:] = counts
    policy.stats.sums[:] = counts * v_hat
    calls = _spy_on_esdp(policy, monkeypatch)
    arrived, mask = _all_arrived(inst)
    slots = _slots_to_check()
    for t in slots:
        x = policy.act(Observation(t=t - 1, arrived=arrived, channel_mask=mask))
        model, params = calls[-1]
        xi = _xi(t, m)
        assert params == {"xi": xi, "max_budget": xi * m}, t
        assert policy.budget_levels[-1] == xi * m + 1, t
        np.testing.assert_allclose(model.mean, v_hat, rtol=1e-12)
        np.testing.assert_allclose(model.variance, _g(t, inst.n_edges) / (2.0 * counts), rtol=1e-12, err_msg=str(t))
        np.testing.assert_array_equal(model.capacity, inst.capacity)
        # the decision is the AESCB answer for exactly these parameters
        direct = optsched.solve(model, "aescb", xi=xi, max_budget=xi * m)
        expected = np.zeros(inst.n_edges, dtype=bool)
        expected[np.asarray(direct.solution, dtype=np.int64)] = True
        np.testing.assert_array_equal(x, expected, err_msg=str(t))
    assert len(calls) == len(slots)


def test_esdp_xi_differs_across_a_jump_slot(monkeypatch) -> None:
    """At the last slot before each jump of xi(t) (t = 4 and t = 31 for m = 2) the AESCB route
    gets the smaller xi: xi(4) = 4, xi(5) = 5, xi(31) = 5, xi(32) = 6 (eq. (15))."""
    inst = _esdp_instance()
    policy = EsdpPolicy(alpha=ALPHA)
    policy.reset(_Env(inst), np.random.default_rng(2))
    policy.stats.counts[:] = 5
    policy.stats.sums[:] = 5 * np.array([0.2, 0.4, 0.6, 0.8])
    calls = _spy_on_esdp(policy, monkeypatch)
    arrived, mask = _all_arrived(inst)
    seen = {}
    for t in (4, 5, 31, 32):
        policy.act(Observation(t=t - 1, arrived=arrived, channel_mask=mask))
        seen[t] = calls[-1][1]["xi"]
    assert seen == {4: 4, 5: 5, 31: 5, 32: 6}


# --- capacity_binds ------------------------------------------------------------------------------------

def test_capacity_binds_is_whether_the_offered_channels_overflow_a_capacity() -> None:
    """``capacity_binds`` of a slot = not (1) for x = the channel mask of the ports with a job,
    i.e. (A . mask > c) for some resource. Three ports of two channels each, two resources: some
    slots' arrivals fit, others overflow resource 0, resource 1, or both; the flag must agree with
    the direct computation in every slot and take both values."""
    edges = [[p, s] for p in range(3) for s in range(2)]
    req = np.array([[1, 1, 1, 1, 1, 1],
                    [3, 3, 1, 1, 1, 1]])
    cap = np.array([4, 5])
    inst = DispatchInstance(n_ports=3, n_servers=2, edges=edges, requirements=req, capacity=cap,
                            unit_costs=[0.3, 0.2], mu=[0.5] * 6, arrival_prob=[0.5, 0.5, 0.5])
    env = DispatchEnv(inst)
    env.reset(np.random.default_rng(7))
    seen = {True: 0, False: 0}
    patterns = set()
    for t in range(120):
        obs = env.observe(t)
        out = env.step(np.zeros(inst.n_edges, dtype=bool))
        overflow = req @ obs.channel_mask.astype(np.int64) > cap
        expected = bool(overflow.any())
        assert isinstance(out["capacity_binds"], bool) and out["capacity_binds"] == expected, t
        seen[expected] += 1
        patterns.add(tuple(overflow.tolist()))
    assert seen[True] > 0 and seen[False] > 0
    assert {(False, False), (False, True), (True, True)} <= patterns  # fits; resource 1 only; both
