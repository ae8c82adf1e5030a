"""Max-weight scheduling (paper 004): Examples 6 and 11, the queue dynamics, the batched
kernels against the exact backends, and the simulator's invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.maxweight.network import Frame, JobNetwork, NetworkEnv
from optsched.maxweight.policy import MaxWeightPolicy
from optsched.models.set_packing import SetPackingBatch
from optsched.observe import Observer
from optsched.policy import evaluate
from optsched.result import Termination
from optsched.solvers.greedy_set_packing import greedy_keys

# Fig. 1: J_1(1) needs W1, W2; J_2(1) needs W2, W3, W4 (0-based workers 0..3).
FIG1_JOBS = np.array([[1, 1, 0, 0], [0, 1, 1, 1]], dtype=bool)
EX6_COMPLETION = np.array([[0.8] * 4, [0.9] * 4])
EX6_R = np.array([[0.48, 0.5]])


class _ScriptedEnv:
    """Fig. 1 in frame 1, with J_2's tasks all completed (as Example 6 supposes)."""

    copies = 1
    network = JobNetwork(np.full((2, 4), 0.5), EX6_COMPLETION)


def _example_policy(backend: str) -> MaxWeightPolicy:
    policy = MaxWeightPolicy(EX6_R, backend=backend)
    policy.reset(_ScriptedEnv(), np.random.default_rng(0))  # type: ignore[arg-type]
    return policy


def test_example_6_algorithm_1_values_and_decision() -> None:
    policy = _example_policy("enumerate")
    decision = policy.act(Frame(1, FIG1_JOBS))
    weights = policy.weights(FIG1_JOBS)[0]
    assert round(weights[0], 4) == 0.3072  # 0.48 * 0.8^2
    assert round(weights[1], 4) == 0.3645  # 0.5 * 0.9^3
    assert decision.tolist() == [[False, True]]  # Alg. 1 computes J_2(1)
    policy.observe({"completed": np.array([[False, True]])})
    assert policy.queues.tolist() == [[0.48, 0.0]]  # max(0.5 - 1, 0) = 0


def test_example_11_algorithm_2_keys_and_decision() -> None:
    policy = _example_policy("greedy")
    decision = policy.act(Frame(1, FIG1_JOBS))
    keys = greedy_keys(policy.weights(FIG1_JOBS)[0], FIG1_JOBS.sum(axis=1))
    assert round(keys[0], 4) == 0.2172  # 0.48 * 0.8^2 / sqrt(2)
    assert round(keys[1], 4) == 0.2104  # 0.5 * 0.9^3 / sqrt(3)
    assert decision.tolist() == [[True, False]]  # differs from Example 6


@st.composite
def frames(draw):
    n = draw(st.integers(1, 8))
    m = draw(st.integers(1, 6))
    inc = np.array(draw(st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=n, max_size=n)))
    inc[~inc.any(axis=1), draw(st.integers(0, m - 1))] = True  # generated jobs have a task
    b = draw(st.integers(1, 4))
    w = np.array(draw(st.lists(st.floats(0, 5, allow_nan=False), min_size=b * n, max_size=b * n))).reshape(b, n)
    return inc, w


@settings(max_examples=60)
@given(frames())
def test_batch_backends_match_member_solves(frame) -> None:
    """A frame's set_packing_batch: enumerate and HiGHS (block-diagonal MIP) reach the same
    optimum, which is the sum of the members' HiGHS optima; greedy's rows are the member greedy
    answers. Feasibility is checked row by row with the member model's own math."""
    inc, w = frame
    batch = SetPackingBatch.from_incidence(inc, w)
    exact, greedy = optsched.solve(batch, "enumerate"), optsched.solve(batch, "greedy")
    assert exact.termination is Termination.OPTIMAL
    assert optsched.solve(batch, "highs").objective == pytest.approx(exact.objective, rel=1e-9, abs=1e-9)
    members = 0.0
    for b in range(len(w)):
        model = batch.member(b)
        assert model.is_feasible(np.flatnonzero(exact.solution[b]))
        assert model.is_feasible(np.flatnonzero(greedy.solution[b]))
        members += optsched.solve(model, "highs").objective
        assert model.objective(np.flatnonzero(greedy.solution[b])) == pytest.approx(
            optsched.solve(model, "greedy").objective, rel=1e-12, abs=1e-12
        )
    assert exact.objective == pytest.approx(members, rel=1e-9, abs=1e-9)


def test_policy_decisions_are_optimal_for_every_exact_backend_each_frame() -> None:
    """Along a whole run of Algorithm 1 (enumerate), HiGHS and CP-SAT as shadow backends solve
    every frame's subproblem: all three reach the best bound of each frame (decisions may
    differ on ties), and the shadows leave the trajectory unchanged."""
    net = JobNetwork.uniform(4, 4, 0.4, 0.9)
    reqs = np.array([[0.1, 0.12, 0.08, 0.1], [0.05, 0.2, 0.1, 0.1]])
    plain = evaluate(NetworkEnv(net, 2), MaxWeightPolicy(reqs, backend="enumerate"), 100, seed=5)
    with Observer(shadow=["highs", "cpsat"]) as obs:
        shadowed = evaluate(NetworkEnv(net, 2), MaxWeightPolicy(reqs, backend="enumerate"), 100, seed=5)
    np.testing.assert_array_equal(plain["completed"], shadowed["completed"])
    rows = obs.rows
    assert len({r["call"] for r in rows}) >= 75  # most frames generate at least one job
    assert {r["backend"] for r in rows} == {"enumerate", "highs", "cpsat"}
    assert all(r["termination"] == "optimal" and r["gap_to_best_bound"] <= 1e-9 for r in rows)


def test_simulator_never_schedules_conflicts_and_rates_are_bounded() -> None:
    net = JobNetwork.uniform(3, 3, 0.5, 0.9)
    reqs = np.full((5, 3), 0.2)
    env = NetworkEnv(net, 5)
    out = evaluate(env, MaxWeightPolicy(reqs, backend="greedy"), 2000, seed=1)
    rates = out["completed"].mean(axis=0)
    assert rates.shape == (5, 3)
    # identical requirement rows on the same sample path give identical results
    assert (rates == rates[0]).all()
    # a job completes at most with prob P(generated) * 0.9
    assert (rates <= 1 - 0.5**3 + 0.02).all()


def test_exact_policy_achieves_what_greedy_achieves_on_a_symmetric_grid() -> None:
    """Alg. 1 is feasibility-optimal: on the same sample path its region is not much smaller
    than Alg. 2's (sampling noise of 10^4 frames is within the 0.01 tolerance)."""
    net = JobNetwork.uniform(3, 3, 0.5, 0.9)
    r = np.arange(0.0, 0.5, 0.01)
    reqs = np.repeat(r[:, None], 3, axis=1)
    best = {}
    for backend in ["enumerate", "greedy"]:
        rate = evaluate(NetworkEnv(net, len(r)), MaxWeightPolicy(reqs, backend=backend), 10_000, seed=2)["completed"].mean(axis=0)
        best[backend] = r[(rate >= reqs - 0.01).all(axis=1)].max()
    assert best["enumerate"] >= best["greedy"] - 0.01
    assert best["greedy"] >= best["enumerate"] / np.sqrt(3)  # Theorem 14


def test_network_validation() -> None:
    with pytest.raises(ValueError, match="task_prob"):
        JobNetwork(np.full((2, 2), 1.5), np.full((2, 2), 0.9))
    with pytest.raises(ValueError, match="completion_prob"):
        JobNetwork(np.full((2, 2), 0.5), np.full((2, 3), 0.9))
    with pytest.raises(ValueError, match="requirements"):
        MaxWeightPolicy(np.zeros((1, 3)), backend="greedy").reset(NetworkEnv(JobNetwork.uniform(2, 2, 0.5, 0.5)), np.random.default_rng(0))


def test_a_job_completes_only_when_every_task_succeeds() -> None:
    """Section II of paper 004: job J_i(t) completes when every one of its tasks succeeds, with
    probability prod_j P_ij over its tasks (the weight of Eq. (2)); mutation probe AZ: completing
    it when any task succeeds passed every test. A task that never succeeds (P = 0) keeps its job
    from completing, and two tasks of P = 0.5 complete together a quarter of the time."""
    env = NetworkEnv(JobNetwork(task_prob=[[1.0, 1.0], [1.0, 1.0]], completion_prob=[[1.0, 0.0], [1.0, 1.0]]), copies=2)
    env.reset(np.random.default_rng(0))
    for t in range(20):
        env.observe(t)
        done = env.step(np.array([[1, 0], [0, 1]]))["completed"]
        np.testing.assert_array_equal(done, [[False, False], [False, True]])
    frames = 4000
    env = NetworkEnv(JobNetwork(task_prob=[[1.0, 1.0]], completion_prob=[[0.5, 0.5]]))
    env.reset(np.random.default_rng(1))
    completed = 0
    for t in range(frames):
        env.observe(t)
        completed += int(env.step(np.array([[1]]))["completed"][0, 0])
    share = completed / frames
    assert abs(share - 0.25) <= 5 * np.sqrt(0.25 * 0.75 / frames), share  # any task succeeding: 0.75
