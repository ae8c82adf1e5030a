"""Resource mesh, job generator, R_n of (1), P1's feasibility checker, the online environment,
and the two baselines (paper 002)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.onsocmax.baselines import EqualShare, MaxFirst, water_fill
from optsched.models.mesh import MeshInstance
from optsched.models.mesh import MeshGenerator
from optsched.onsocmax.env import Dispatch, MeshEnv
from optsched.onsocmax.policy import run_online


def tiny() -> MeshInstance:
    """2 nodes x 3 slots (tau = 10); job 0 on node 0 in slots 0..1, job 1 on both nodes in slot 2."""
    return MeshInstance(
        capacity=[[5.0, 5.0, 5.0], [4.0, 4.0, 4.0]], tau=10.0, arrival=[0.0, 15.0], deadline=[19.0, 29.0],
        rho=[6.0, 3.0], nodes=[[0], [0, 1]], kind=["linear", "log"], xbar=[4.0, 4.0, 2.0, 2.0],
        a=[1.0, 2.0, 1.5, 1.5], beta=[0.1, 0.1, 0.2, 0.3],
    )


def test_resource_units_follow_equation_1() -> None:
    inst = tiny()
    # job 0: ceil(0/10) = 0 .. floor(19/10) = 1 on node 0 -> units 0, 1
    assert inst.units[0].tolist() == [0, 1]
    # job 1: ceil(15/10) = 2 .. floor(29/10) = 2 on nodes {0, 1} -> units 2, 5
    assert inst.units[1].tolist() == [2, 5]
    assert inst.arrival_slot.tolist() == [0, 1]
    assert inst.n_pairs == 4
    assert inst.job_ptr.tolist() == [0, 2, 4]


def test_welfare_is_f_plus_g() -> None:
    inst = tiny()
    x = np.array([1.0, 2.0, 0.5, 1.0])
    cap = np.array([5.0, 5.0, 5.0, 4.0])
    f = np.array([1.0 * 1.0, 2.0 * 2.0, 1.5 * np.log1p(0.5), 1.5 * np.log1p(1.0)])
    g = np.array([0.1, 0.1, 0.2, 0.3]) * x / cap
    assert inst.welfare(x) == pytest.approx(float((f + g).sum()), rel=1e-14)


@pytest.mark.parametrize(
    "cell, value, constraint",
    [((0, 3), 0.5, "(5)"), ((0, 0), -0.5, "(7)"), ((0, 0), 4.5, "(7)"), ((1, 5), 2.5, "(7)")],
)
def test_violations_name_each_constraint(cell: tuple[int, int], value: float, constraint: str) -> None:
    inst = tiny()
    X = np.zeros((2, 6))
    X[cell] = value
    problems = inst.violations(X)
    assert problems and problems[0].startswith(constraint)


def test_violations_of_job_and_unit_sums() -> None:
    inst = tiny()
    X = np.zeros((2, 6))
    X[0, 0] = X[0, 1] = 3.5  # 7 > rho_0 = 6, each within xbar = 4
    assert any(p.startswith("(4)") for p in inst.violations(X))
    big = MeshInstance(
        capacity=[[1.0]], tau=1.0, arrival=[0.0, 0.0], deadline=[0.0, 0.0], rho=[5.0, 5.0], nodes=[[0], [0]],
        kind=["linear", "linear"], xbar=[1.0, 1.0], a=[1.0, 1.0], beta=[0.0, 0.0],
    )
    assert big.violations(np.array([[0.6], [0.6]]))[0].startswith("(6)")
    assert big.violations(np.array([[0.5], [0.5]])) == []


@pytest.mark.parametrize(
    "field, value",
    [
        ("capacity", [[0.0, 5.0, 5.0], [4.0, 4.0, 4.0]]),
        ("tau", 0.0),
        ("arrival", [-1.0, 15.0]),
        ("deadline", [19.0, 10.0]),
        ("rho", [6.0, float("nan")]),
        ("nodes", [[0], [2]]),
        ("nodes", [[0], [1, 0]]),
        ("nodes", 5),
        ("nodes", [[0], "1"]),
        ("kind", 3),
        ("kind", ["linear", None]),
        ("tau", "x"),
        ("capacity", [1.0, 2.0]),
        ("kind", ["linear", "cubic"]),
        ("xbar", [4.0, 4.0, 2.0]),
        ("a", [1.0, -2.0, 1.5, 1.5]),
        ("beta", "0.1"),
    ],
)
def test_bad_input_names_the_field(field: str, value: object) -> None:
    data = tiny().to_dict()
    data[field] = value
    with pytest.raises(ValueError, match=field):
        MeshInstance(**data)


def test_json_round_trip_through_the_model_registry() -> None:
    inst = tiny()
    model = optsched.model_from_dict({"model": "onsocmax_offline", **inst.to_dict()})
    assert model.instance.to_dict() == inst.to_dict()
    with pytest.raises(ValueError, match="missing key"):
        optsched.model_from_dict({"model": "onsocmax_offline", "tau": 1.0})


def test_generator_section_iv_defaults() -> None:
    inst = MeshGenerator().draw(np.random.default_rng(7))
    assert (inst.n_nodes, inst.n_slots, inst.n_jobs) == (10, 24, 20)
    assert all(1 <= len(k) <= 3 for k in inst.nodes)
    assert (inst.arrival % 60.0 == 0).all() and (inst.deadline >= inst.arrival).all()
    assert np.all(np.diff(inst.capacity, axis=1) == 0)  # C_r per node, the same every slot
    assert 1.0 <= inst.a.min() and inst.a.max() <= 3.0
    assert 0.1 <= inst.beta.min() and inst.beta.max() <= 0.5
    with pytest.raises(ValueError, match="max_nodes"):
        MeshGenerator(n_nodes=2, max_nodes=3)
    with pytest.raises(ValueError, match="utility"):
        MeshGenerator(kind="cubic")


def test_env_refuses_infeasible_or_untimely_dispatch() -> None:
    inst = tiny()
    env = MeshEnv.fixed(inst)
    env.reset(np.random.default_rng(0))
    env.observe(0)
    with pytest.raises(ValueError, match="not yet revealed"):
        env.step(Dispatch(np.array([1]), np.array([2]), np.array([1.0])))
    with pytest.raises(ValueError, match="outside R_n"):
        env.step(Dispatch(np.array([0]), np.array([3]), np.array([1.0])))
    fb = env.step(Dispatch(np.array([0]), np.array([1]), np.array([2.0])))
    assert fb["welfare"] == pytest.approx(2.0 * 2.0 + 0.1 * 2.0 / 5.0)
    env.observe(2)
    with pytest.raises(ValueError, match="past slot"):
        env.step(Dispatch(np.array([0]), np.array([0]), np.array([1.0])))


@settings(max_examples=200)
@given(st.lists(st.floats(0.0, 10.0), min_size=1, max_size=8), st.floats(0.0, 40.0))
def test_water_fill_is_an_equal_share(demand: list[float], capacity: float) -> None:
    d = np.array(demand)
    give = water_fill(d, capacity)
    assert np.all(give <= d + 1e-12) and np.all(give >= 0)
    assert give.sum() == pytest.approx(min(capacity, d.sum()), abs=1e-9)
    short = give < d - 1e-9  # the jobs not fully served all get the same, largest share
    if short.any():
        assert np.ptp(give[short]) <= 1e-9 and give.max() <= give[short][0] + 1e-9


@settings(max_examples=30)
@given(st.integers(0, 10_000), st.sampled_from(["linear", "log", "sqrt"]), st.floats(1.0, 10.0))
def test_baselines_are_feasible_for_p1(seed: int, kind: str, congestion: float) -> None:
    gen = MeshGenerator(n_nodes=4, n_slots=8, n_jobs=10, kind=kind, capacity_mean=20 / congestion, capacity_std=2 / congestion)
    inst = gen.draw(np.random.default_rng(seed))
    for policy in (MaxFirst(), EqualShare()):
        welfare, X = run_online(inst, policy)
        assert inst.violations(X, tol=1e-9) == []
        assert welfare == pytest.approx(inst.welfare(inst.pairs_of(X)))


@settings(max_examples=60)
@given(st.integers(0, 10_000), st.floats(0.0, 1.6))
def test_pair_violations_agree_with_the_dense_check(seed: int, scale: float) -> None:
    """The pair-vector check (no (N, n_units) matrix) finds the same broken constraints."""
    inst = MeshGenerator(n_nodes=3, n_slots=6, n_jobs=8, capacity_mean=8.0).draw(np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    x = rng.uniform(0, scale, inst.n_pairs) * inst.xbar
    dense = inst.violations(inst.dense(x))
    pairs = inst.pair_violations(x)
    assert [p[:3] for p in pairs] == [p[:3] for p in dense]
    assert (pairs == []) == (dense == [])


@settings(max_examples=25)
@given(st.integers(0, 10_000), st.sampled_from(["linear", "log", "sqrt"]))
def test_incremental_env_matches_the_dense_replay(seed: int, kind: str) -> None:
    """The env's per-step checks on touched pairs, the kept usage and load, and the welfare
    increments give the same allocation and welfare as the dense matrix and P1's objective."""
    from optsched.onsocmax.env import replay
    from optsched.onsocmax.policy import Onsocmax
    from optsched.policy import evaluate

    inst = MeshGenerator(n_nodes=4, n_slots=10, n_jobs=12, kind=kind, capacity_mean=6.0).draw(np.random.default_rng(seed))
    for policy in (Onsocmax(), MaxFirst(), EqualShare()):
        env = MeshEnv.fixed(inst)
        gains = evaluate(env, policy, inst.n_slots, seed=0)["welfare"]
        welfare, x = replay(inst, policy)
        assert inst.pair_violations(x) == [] and inst.violations(env.allocation) == []
        np.testing.assert_array_equal(inst.pairs_of(env.allocation), x)
        assert float(np.sum(gains)) == pytest.approx(welfare, rel=1e-12, abs=1e-9)
        X = env.allocation
        assert np.allclose(X.sum(axis=0), env.usage)


def test_env_refuses_what_breaks_a_sum_only_together() -> None:
    """Two dispatches in one step that each fit but together break (6) are refused."""
    inst = MeshInstance(
        capacity=[[1.0]], tau=1.0, arrival=[0.0, 0.0], deadline=[0.0, 0.0], rho=[5.0, 5.0], nodes=[[0], [0]],
        kind=["linear", "linear"], xbar=[1.0, 1.0], a=[1.0, 1.0], beta=[0.0, 0.0],
    )
    env = MeshEnv.fixed(inst)
    env.reset(np.random.default_rng(0))
    env.observe(0)
    with pytest.raises(ValueError, match=r"\(6\)"):
        env.step(Dispatch(np.array([0, 1]), np.array([0, 0]), np.array([0.6, 0.6])))
    with pytest.raises(ValueError, match=r"\(7\)"):
        env.step(Dispatch(np.array([0, 0]), np.array([0, 0]), np.array([0.6, 0.6])))
    assert env.step(Dispatch(np.array([0, 1]), np.array([0, 0]), np.array([0.5, 0.5])))["welfare"] == pytest.approx(1.0)


def test_a_huge_arrival_rate_draws_only_n_jobs() -> None:
    """Each slot's Poisson count was listed whole before the list was cut to n_jobs: a rate of
    1e11 built a list of 1e11 slots. Past numpy's sampler (1e18) the rate is refused by name."""
    from optsched.models.mesh import MeshGenerator

    inst = MeshGenerator(arrival_rate=1e11, n_jobs=50).draw(np.random.default_rng(0))
    assert inst.n_jobs == 50 and (inst.arrival == 0).all()
    with pytest.raises(ValueError, match="arrival_rate: must be <= 1e"):
        MeshGenerator(arrival_rate=1e19)


def _first_slot(policy, inst: MeshInstance) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The pair allocation of ``policy`` after slot 0 of ``inst``."""
    env = MeshEnv.fixed(inst)
    env.reset(np.random.default_rng(0))
    policy.reset(env, np.random.default_rng(0))
    env.step(policy.act(env.observe(0)))
    return env.pair_allocation.copy()


def test_max_first_serves_the_highest_myopic_welfare_first() -> None:
    """Section IV-A: MAX-FIRST repeatedly serves the job with the highest myopic welfare
    f_nr(q) + beta_nr q / C_r, q the most it can take now (mutation probe AZ: picking the lowest
    passed every test). Two linear jobs want the node's whole capacity of 2: a = 3 gives 6, a =
    1 gives 2, so the second job takes it all; a log job's f(q) = a log(1 + q) decides likewise."""
    for kind, a, wins in (("linear", [1.0, 3.0], 1), ("linear", [3.0, 1.0], 0), ("log", [2.0, 1.0], 0)):
        inst = MeshInstance(capacity=[[2.0]], tau=1.0, arrival=[0.0, 0.0], deadline=[0.0, 0.0], rho=[2.0, 2.0],
                            nodes=[[0], [0]], kind=[kind, kind], xbar=[2.0, 2.0], a=a, beta=[0.0, 0.0])
        expected = np.zeros(2)
        expected[wins] = 2.0
        np.testing.assert_array_equal(_first_slot(MaxFirst(), inst), expected)
    # a larger slope beta / C breaks a tie of f: both a = 1, job 0's beta 0.5 against 0.1
    inst = MeshInstance(capacity=[[2.0]], tau=1.0, arrival=[0.0, 0.0], deadline=[0.0, 0.0], rho=[2.0, 2.0],
                        nodes=[[0], [0]], kind=["linear", "linear"], xbar=[2.0, 2.0], a=[1.0, 1.0], beta=[0.1, 0.5])
    np.testing.assert_array_equal(_first_slot(MaxFirst(), inst), [0.0, 2.0])


@pytest.mark.parametrize("policy", [MaxFirst, EqualShare])
def test_the_baselines_visit_nodes_in_index_order(policy) -> None:  # type: ignore[no-untyped-def]
    """Section IV-A as the module states it: nodes are visited in index order, so a job on
    several nodes is served first by its lowest-indexed one (visiting them in reverse passed
    every test). A job of workload 3 on nodes 0 and 1, each able to give it all of it in slot 0."""
    inst = MeshInstance(capacity=[[5.0], [5.0]], tau=1.0, arrival=[0.0], deadline=[0.0], rho=[3.0], nodes=[[0, 1]],
                        kind=["linear"], xbar=[3.0, 3.0], a=[1.0, 1.0], beta=[0.0, 0.0])
    np.testing.assert_array_equal(_first_slot(policy(), inst), [3.0, 0.0])
