"""The policy protocol as a library user drives it: the environments' checks of actions and of
the call order, read-only observations, metrics that do not alias the policies' buffers, the
Observer's counts, and policies and environments that pickle mid-run."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.esdp.env import DispatchEnv, generate_instance
from optsched.esdp.oracle import MkpOracle, OraclePolicy
from optsched.maxweight.network import JobNetwork, NetworkEnv
from optsched.maxweight.policy import MaxWeightPolicy
from optsched.models.mesh import MeshGenerator
from optsched.observe import Observer
from optsched.ogasched.env import SchedulingEnv
from optsched.ogasched.scenario import synthetic_scenario
from optsched.onsocmax.env import Dispatch, MeshEnv
from optsched.policy import evaluate

RNG = np.random.default_rng


def esdp_env(seed: int = 0) -> DispatchEnv:
    inst = generate_instance(RNG(seed), n_ports=4, n_servers=8, edge_prob=0.4)
    return DispatchEnv(inst, MkpOracle.for_instance(inst))


def oga_env(seed: int = 0, horizon: int = 12) -> SchedulingEnv:
    return SchedulingEnv(synthetic_scenario(RNG(seed), n_ports=4, n_nodes=10, n_resources=2), horizon=horizon)


def mesh_env(seed: int = 0) -> MeshEnv:
    return MeshEnv.fixed(MeshGenerator(n_nodes=4, n_slots=10, n_jobs=12).draw(RNG(seed)))


def mw_env() -> NetworkEnv:
    return NetworkEnv(JobNetwork.uniform(4, 4, 0.4, 0.8), copies=2)


def started(env, t: int = 0):
    env.reset(RNG(0))
    return env.observe(t)


# --- actions are checked, not coerced --------------------------------------------------------
def test_esdp_refuses_actions_that_are_not_0_1_decisions() -> None:
    env = esdp_env()
    obs = started(env)
    E = env.instance.n_edges
    first = np.flatnonzero(obs.channel_mask)[:1]
    for value in (np.nan, 0.3, 7.0, -1.0):  # on one channel of a port with a job: numpy read each as "chosen"
        bad = np.zeros(E)
        bad[first] = value
        with pytest.raises(ValueError, match="action: expected 0/1"):
            env.step(bad)
    for bad in (np.zeros(E + 1, bool), np.zeros((1, E), bool)):
        with pytest.raises(ValueError, match="action: has shape"):
            env.step(bad)
    x = np.zeros(E)
    x[first] = 1.0  # numbers 0/1 are a decision
    assert env.step(x)["x"].sum() == first.size


def test_ogasched_refuses_decisions_of_the_wrong_shape_or_outside_y() -> None:
    env = oga_env()
    started(env)
    scn = env.scenario
    E, K = scn.n_edges, scn.n_resources
    for bad, rule in ((np.zeros((2, 2)), "shape"), (np.zeros(E * K), "shape"), (np.full((E, K), np.nan), "non-finite"),
                      (np.full((E, K), -1.0), r"\(5\) lower"), (np.array(scn.upper) * 2 + 1, r"\(5\) request"),
                      (np.array(scn.upper), r"\(6\) capacity")):
        with pytest.raises(ValueError, match=rf"action.*{rule}"):
            env.step(bad)
    assert np.isfinite(env.step(np.zeros((E, K)))["reward"])  # refused actions left the slot open


def test_onsocmax_refuses_what_is_not_a_dispatch_of_whole_indices() -> None:
    env = mesh_env()
    obs = started(env)
    job = int(obs.arrivals[0]) if obs.arrivals.size else 0
    with pytest.raises(ValueError, match="Dispatch"):
        env.step({"job": [job], "unit": [0], "amount": [0.0]})
    with pytest.raises(ValueError, match="action.job: indices must be whole"):
        env.step(Dispatch(np.array([job + 0.9]), np.array([0]), np.array([0.0])))
    with pytest.raises(ValueError, match="action.amount"):
        env.step(Dispatch(np.array([job]), np.array([0]), np.array([np.nan])))


def test_maxweight_refuses_a_transposed_or_non_0_1_decision_and_names_interference() -> None:
    env = mw_env()
    started(env)
    for bad in (np.zeros((4, 2), bool), np.zeros(8, bool), np.full((2, 4), np.nan), np.full((2, 4), 0.5)):
        with pytest.raises(ValueError, match="decision"):
            env.step(bad)
    env.step(np.zeros((2, 4), bool))
    env = NetworkEnv(JobNetwork.uniform(4, 4, 1.0, 0.8), copies=2)  # every job needs every worker
    started(env)
    both = np.zeros((2, 4), bool)
    both[1, :2] = True
    with pytest.raises(ValueError, match="copy 1 schedules two jobs on worker 0"):
        env.step(both)


# --- the call order ---------------------------------------------------------------------------
@pytest.mark.parametrize("make, idle", [
    (esdp_env, lambda env: np.zeros(env.instance.n_edges, bool)),
    (oga_env, lambda env: np.zeros((env.scenario.n_edges, env.scenario.n_resources))),
    (mesh_env, lambda env: Dispatch.none()),
    (mw_env, lambda env: np.zeros((2, 4), bool)),
], ids=["esdp", "ogasched", "onsocmax", "maxweight"])
def test_every_environment_keeps_the_slot_order(make, idle) -> None:
    env = make()
    with pytest.raises(RuntimeError, match="before reset"):
        env.observe(0)
    env.reset(RNG(0))
    with pytest.raises(RuntimeError, match="step without observe"):
        env.step(idle(env))
    env.observe(0)
    env.step(idle(env))
    with pytest.raises(RuntimeError, match="step without observe"):  # a second step in one slot
        env.step(idle(env))
    with pytest.raises(RuntimeError, match="slots go forward"):
        env.observe(0)
    env.observe(3)  # a slot may be skipped
    env.step(idle(env))
    env.reset(RNG(0))  # and a reset starts over
    env.observe(0)


def test_a_horizon_past_the_environment_s_is_refused() -> None:
    from optsched.ogasched.policy import OGASched
    from optsched.onsocmax.baselines import MaxFirst

    with pytest.raises(ValueError, match="horizon: 11 slots, but the environment has 10"):
        evaluate(oga_env(horizon=10), OGASched(), 11, seed=0)
    env = mesh_env()
    with pytest.raises(ValueError, match="horizon: 11 slots, but the environment has 10"):
        evaluate(env, MaxFirst(), 11, seed=0)
    started(env, 9)
    with pytest.raises(ValueError, match="t: slot 10 is past"):
        env.observe(10)


@pytest.mark.parametrize("horizon, trace, field", [
    (2.5, None, "horizon"), (True, None, "horizon"), ("3", None, "horizon"), (0, None, "horizon"),
    (5, [[1.5] * 4], "trace_counts"), (5, [[np.nan] * 4], "trace_counts"), (5, [[-1] * 4], "trace_counts"),
    (5, [[1] * 3], "trace_counts"),
])
def test_the_ogasched_environment_checks_its_settings(horizon, trace, field) -> None:
    scn = synthetic_scenario(RNG(0), n_ports=4, n_nodes=10, n_resources=2)
    with pytest.raises(ValueError, match=field):
        SchedulingEnv(scn, horizon=horizon, trace_counts=trace)


# --- observations, feedback and metrics share no state -------------------------------------
def test_observations_are_read_only() -> None:
    obs = started(esdp_env())
    assert not obs.arrived.flags.writeable and not obs.channel_mask.flags.writeable
    assert not started(oga_env()).flags.writeable
    mesh = started(mesh_env())
    assert not (mesh.arrivals.flags.writeable or mesh.usage.flags.writeable or mesh.remaining.flags.writeable)
    assert not started(mw_env()).jobs.flags.writeable


class OneBuffer:
    """An ESDP policy that writes each decision into the same array (a pattern of fast code)."""

    name = "one-buffer"

    def reset(self, env: DispatchEnv, rng: np.random.Generator) -> None:
        self.buffer = np.zeros(env.instance.n_edges, bool)
        self.played: list[np.ndarray] = []

    def act(self, obs) -> np.ndarray:
        self.buffer[:] = False
        self.buffer[np.flatnonzero(obs.channel_mask)[:1]] = True
        self.played.append(self.buffer.copy())
        return self.buffer

    def observe(self, feedback) -> None:
        pass


def test_metrics_hold_each_slot_s_decision_when_a_policy_reuses_its_buffer() -> None:
    env, policy = esdp_env(), OneBuffer()
    out = evaluate(env, policy, 30, seed=0)
    np.testing.assert_array_equal(out["x"], np.array(policy.played))
    np.testing.assert_allclose(out["expected_welfare"], out["x"] @ env.instance.true_means)


def test_the_oracle_s_cached_decisions_cannot_be_changed_through_feedback() -> None:
    env = esdp_env()
    fresh = evaluate(esdp_env(), OraclePolicy(), 20, seed=0)
    started(env)
    x = OraclePolicy()
    x.reset(env, RNG(0))
    decision = x.act(env._obs)
    with pytest.raises(ValueError, match="read-only"):
        decision[:] = True
    again = evaluate(env, OraclePolicy(), 20, seed=0)
    np.testing.assert_array_equal(again["x"], fresh["x"])


# --- the Observer ----------------------------------------------------------------------------
def test_the_observer_counts_only_the_solves_inside_its_block() -> None:
    from optsched.ogasched.policy import OGASched

    policy = OGASched()
    evaluate(oga_env(), policy, 12, seed=1)  # before the block
    with Observer() as observer:
        evaluate(oga_env(), policy, 12, seed=1)
    evaluate(oga_env(), policy, 12, seed=1)  # after it
    (stats,) = observer.summary()["solvers"]
    assert stats["solves"] == 12 and sum(stats["terminations"].values()) == 12
    assert policy.solver.solves == 36


def test_a_reused_policy_is_shadowed_at_the_slots_of_a_fresh_one() -> None:
    from optsched.ogasched.policy import OGASched

    reused = OGASched()
    with Observer(shadow=("highs",), shadow_every=5) as observer:
        for policy in (reused, reused, OGASched()):
            evaluate(oga_env(), policy, 12, seed=1)
    slots = [sorted({r["slot"] for r in observer.rows if r["episode"] == e}) for e in range(3)]
    assert slots == [[0, 5, 10]] * 3
    assert observer.slot == -1


# --- pickling mid-run ------------------------------------------------------------------------
def _policies():
    from optsched.esdp.policy import EsdpPolicy
    from optsched.ogasched.baselines import BaselinePolicy
    from optsched.onsocmax.policy import Onsocmax

    yield esdp_env, EsdpPolicy
    for rule in ("DRF", "FAIRNESS", "BINPACKING", "SPREADING"):
        yield oga_env, lambda rule=rule: BaselinePolicy(rule)
    yield mesh_env, Onsocmax
    yield mw_env, lambda: MaxWeightPolicy([[0.1] * 4, [0.2] * 4])


@pytest.mark.parametrize("make_env, make_policy", list(_policies()))
def test_a_policy_and_its_environment_pickle_mid_run_and_go_on_alike(make_env, make_policy) -> None:
    env, policy = make_env(), make_policy()
    env.reset(RNG(5))
    policy.reset(env, RNG(6))

    def run(env, policy, slots):
        out = []
        for t in slots:
            feedback = env.step(policy.act(env.observe(t)))
            policy.observe(feedback)
            out.append({k: np.asarray(v).tobytes() for k, v in feedback.items() if k != "gradient"})
        return out

    run(env, policy, range(4))
    env2, policy2 = pickle.loads(pickle.dumps((env, policy)))
    assert run(env, policy, range(4, 8)) == run(env2, policy2, range(4, 8))


# --- the compiled check of OGASched's decisions against its numpy reference -----------------
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["scaled", "one", "nan"]), st.floats(0.5, 1.5))
def test_the_compiled_decision_check_agrees_with_violations(seed: int, how: str, factor: float) -> None:
    rng = RNG(seed)
    scn = synthetic_scenario(rng, n_ports=5, n_nodes=12, n_resources=3, contention=float(rng.uniform(1, 20)))
    y = np.array(scn.upper) * rng.random(scn.upper.shape)
    if how == "scaled":
        y = y * factor
    elif how == "one":
        y[rng.integers(y.shape[0]), rng.integers(y.shape[1])] *= 1 + 10 * factor
    else:
        y[rng.integers(y.shape[0]), rng.integers(y.shape[1])] = np.nan
    found = scn.first_violation(y)
    assert (found is None) == (scn.violations(y) == [])
    if found is not None:
        assert found.split(" ")[0] in {v.split(" ")[0] for v in scn.violations(y)}


def test_an_observer_entered_twice_counts_its_two_blocks_only() -> None:
    from optsched.ogasched.policy import OGASched

    policy = OGASched()
    observer = Observer()
    with observer:
        evaluate(oga_env(), policy, 3, seed=1)
    evaluate(oga_env(), policy, 5, seed=1)  # between the blocks
    with observer:
        (inside,) = observer.summary()["solvers"]
        assert inside["solves"] == 3
        evaluate(oga_env(), policy, 2, seed=1)
        with pytest.raises(RuntimeError, match="already active"):
            with observer:
                pass
    (stats,) = observer.summary()["solvers"]
    assert stats["solves"] == 5 and policy.solver.solves == 10


def test_masked_and_fortran_ordered_inputs_are_read_as_what_they_show() -> None:
    from optsched.models.validate import binary_array
    from optsched.ogasched.policy import OGASched
    from optsched.ogasched.scenario import Scenario

    hidden = np.ma.masked_array(np.array([True, False]), mask=[False, True])
    with pytest.raises(ValueError, match="decision: a masked array"):
        binary_array("decision", hidden, shape=(2,))
    scn = synthetic_scenario(RNG(0), n_ports=4, n_nodes=10, n_resources=2)
    fields = {f: getattr(scn, f) for f in Scenario.__dataclass_fields__}
    fortran = Scenario(**{**fields, "capacity": np.asfortranarray(scn.capacity)})
    assert fortran.capacity.flags.c_contiguous
    runs = [evaluate(SchedulingEnv(s, horizon=6), OGASched(), 6, seed=2)["reward"] for s in (scn, fortran)]
    np.testing.assert_array_equal(*runs)
