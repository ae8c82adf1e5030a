"""OGASched (paper 003): reward (7)/(12), gradient (30), baselines, the policy, y* of (10)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.models.capacity_projection import CapacityProjection
from optsched.ogasched.baselines import BASELINES, BaselinePolicy, drf_layout
from optsched.ogasched.env import SchedulingEnv
from optsched.ogasched.offline import cumulative_reward, offline_optimum, regret_curve
from optsched.ogasched.policy import OGASched
from optsched.ogasched.scenario import Scenario, expand_arrivals, synthetic_scenario
from optsched.ogasched.utilities import UTILITY_KINDS, gradient, reward
from optsched.policy import evaluate

KINDS = ["mixed", *UTILITY_KINDS]


def small_scenario(seed: int, utility: str = "mixed", **kw) -> Scenario:
    rng = np.random.default_rng(seed)
    args = dict(n_ports=int(rng.integers(2, 6)), n_nodes=int(rng.integers(2, 9)), n_resources=int(rng.integers(1, 4)),
                density=float(rng.uniform(1.0, 3.0)), contention=float(rng.uniform(0.5, 15.0)), utility=utility)
    args.update(kw)
    return synthetic_scenario(rng, **args)


def random_point(scn: Scenario, rng: np.random.Generator) -> np.ndarray:
    """A random point of the box 0 <= y <= a (not necessarily within the capacities)."""
    return rng.random((scn.n_edges, scn.n_resources)) * scn.upper


def reference_reward(scn: Scenario, x: np.ndarray, y: np.ndarray) -> float:
    """(7)+(8) with (12), written with plain loops over ports, nodes and resources."""
    funcs = list(UTILITY_KINDS.values())
    total = 0.0
    for l in range(scn.n_ports):
        if x[l] == 0:
            continue
        gain, sums = 0.0, [0.0] * scn.n_resources
        for e in range(scn.n_edges):
            if scn.edge_port[e] != l:
                continue
            r = scn.edge_node[e]
            for k in range(scn.n_resources):
                f = funcs[scn.kind[r, k]][0]
                gain += float(f(np.float64(y[e, k]), np.float64(scn.alpha[r, k])))
                sums[k] += y[e, k]
        total += x[l] * (gain - max(scn.beta[k] * sums[k] for k in range(scn.n_resources)))
    return total


# --- reward and gradient -------------------------------------------------------------------------
@settings(max_examples=60)
@given(st.integers(0, 10**6), st.sampled_from(KINDS))
def test_reward_matches_loop_reference(seed, kind):
    scn = small_scenario(seed, kind)
    rng = np.random.default_rng(seed + 1)
    x = (rng.random(scn.n_ports) < 0.6).astype(float)
    y = random_point(scn, rng)
    assert reward(scn, x, y) == pytest.approx(reference_reward(scn, x, y), rel=1e-12, abs=1e-9)


@settings(max_examples=150)
@given(st.integers(0, 10**6), st.sampled_from(KINDS))
def test_gradient_matches_finite_differences(seed, kind):
    scn = small_scenario(seed, kind)
    rng = np.random.default_rng(seed + 2)
    x = (rng.random(scn.n_ports) < 0.7).astype(float)
    y = random_point(scn, rng) + 0.01  # interior of the domain of every utility
    weighted = scn.per_port(y) * scn.beta
    top2 = np.sort(weighted, axis=1)[:, -2:] if scn.n_resources > 1 else None
    h = 1e-6
    if top2 is not None and (top2[:, 1] - top2[:, 0]).min() < 1e-3:
        return  # (27) has a tie: q is not differentiable there (covered by the concavity test)
    g = gradient(scn, x, y)
    fd = np.empty_like(g)
    for idx in np.ndindex(*y.shape):
        d = np.zeros_like(y)
        d[idx] = h
        fd[idx] = (reward(scn, x, y + d) - reward(scn, x, y - d)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


@settings(max_examples=150)
@given(st.integers(0, 10**6), st.sampled_from(KINDS))
def test_reward_is_concave_along_random_lines(seed, kind):
    scn = small_scenario(seed, kind)
    rng = np.random.default_rng(seed + 3)
    x = (rng.random(scn.n_ports) < 0.7).astype(float)
    y0, y1 = random_point(scn, rng), random_point(scn, rng)
    s = np.linspace(0.0, 1.0, 21)
    q = np.array([reward(scn, x, (1 - t) * y0 + t * y1) for t in s])
    second = q[:-2] - 2 * q[1:-1] + q[2:]
    assert second.max() <= 1e-9 * max(1.0, np.abs(q).max())
    # the supergradient inequality q(y1) <= q(y0) + g(y0).(y1 - y0) (concavity, (30))
    g = gradient(scn, x, y0)
    assert q[-1] <= q[0] + float(np.sum(g * (y1 - y0))) + 1e-9 * max(1.0, abs(q[0]))


@settings(max_examples=60)
@given(st.integers(0, 10**6), st.sampled_from(KINDS))
def test_gradient_is_the_numpy_formula_bit_for_bit(seed, kind):
    """(30) with f' from UTILITY_KINDS and k*_l of (27) from port sums added edge by edge
    (ties to the smallest k): the compiled gradient agrees bit for bit."""
    scn = small_scenario(seed, kind, n_resources=int(np.random.default_rng(seed).integers(1, 5)))
    rng = np.random.default_rng(seed + 4)
    x = (rng.random(scn.n_ports) < 0.7) * rng.uniform(0.5, 3.0, scn.n_ports)
    y = random_point(scn, rng)
    y[rng.random(y.shape) < 0.2] = 0.0
    derivs = [d for _, d in UTILITY_KINDS.values()]
    want = np.zeros_like(y)
    for l in range(scn.n_ports):
        if x[l] == 0:
            continue
        edges = np.flatnonzero(scn.edge_port == l)
        sums = np.zeros(scn.n_resources)
        for e in edges:
            sums = sums + y[e]
        kstar = int(np.argmax(sums * scn.beta))
        for e in edges:
            r = scn.edge_node[e]
            for k in range(scn.n_resources):
                d = derivs[scn.kind[r, k]](np.float64(y[e, k]), np.float64(scn.alpha[r, k]))
                want[e, k] = (d - (scn.beta[k] if k == kstar else 0.0)) * x[l]
    np.testing.assert_array_equal(gradient(scn, x, y), want)


@settings(max_examples=60)
@given(st.integers(0, 10**6), st.sampled_from(KINDS))
def test_one_pass_reward_and_gradient_equal_the_two_kernels(seed, kind):
    """The full-information feedback (reward and gradient in one compiled pass) is the separate
    kernels' answer bit for bit, and the evaluator keeps it out of the stacked metrics."""
    from optsched.ogasched.utilities import reward_parts, reward_parts_gradient

    scn = small_scenario(seed, kind)
    rng = np.random.default_rng(seed + 5)
    x = (rng.random(scn.n_ports) < 0.7) * rng.uniform(0.5, 3.0, scn.n_ports)
    y = random_point(scn, rng)
    y[rng.random(y.shape) < 0.2] = 0.0
    gain, overhead, grad = reward_parts_gradient(scn, x, y)
    assert (gain, overhead) == reward_parts(scn, x, y)
    np.testing.assert_array_equal(grad, gradient(scn, x, y))


def test_ogasched_takes_the_gradient_from_the_feedback_with_the_same_trajectory():
    class WithoutGradient(SchedulingEnv):
        def reveal_gradient(self) -> None:  # only rewards come back: the policy computes (30) itself
            pass

    scn = small_scenario(3, n_nodes=12)
    runs = {cls.__name__: evaluate(cls(scn, horizon=40), OGASched(horizon=40), 40, seed=1)
            for cls in (SchedulingEnv, WithoutGradient)}
    assert set(runs["SchedulingEnv"]) == {"reward", "gain", "overhead"}  # the gradient is not stacked
    np.testing.assert_array_equal(runs["SchedulingEnv"]["reward"], runs["WithoutGradient"]["reward"])


# --- baselines -----------------------------------------------------------------------------------
def dense(scn: Scenario, y: np.ndarray) -> np.ndarray:
    out = np.zeros((scn.n_ports, scn.n_nodes, scn.n_resources))
    out[scn.edge_port, scn.edge_node] = y
    return out


@settings(max_examples=80)
@given(st.integers(0, 10**6), st.sampled_from(list(BASELINES)))
def test_baselines_respect_capacity_locality_and_requests(seed, name):
    scn = small_scenario(seed, n_nodes=int(np.random.default_rng(seed).integers(2, 20)))
    env = SchedulingEnv(scn, horizon=30, arrival_prob=0.8)
    pol = BaselinePolicy(name)
    env.reset(np.random.default_rng(seed))
    pol.reset(env, np.random.default_rng(0))
    adjacency = np.zeros((scn.n_ports, scn.n_nodes), bool)
    adjacency[scn.edge_port, scn.edge_node] = True
    for t in range(30):
        x = env.observe(t)
        y = pol.act(x)
        assert scn.violations(y) == []
        full = dense(scn, y)
        assert np.all(full[~adjacency] == 0)  # never a non-edge
        assert np.all(full[x == 0] == 0)  # only ports that yield a job
        load = full.sum(axis=0)
        assert np.all(load <= scn.capacity * (1 + 1e-12) + 1e-12)
        env.step(y)


def test_drf_serves_in_dominant_share_order():
    for seed in range(40):
        scn = small_scenario(seed, n_nodes=12)
        share = drf_layout(scn)["share"]
        x = np.ones(scn.n_ports)
        env = SchedulingEnv(scn, horizon=1, arrival_prob=1.0)
        env.reset(np.random.default_rng(0))
        pol = BaselinePolicy("DRF")
        pol.reset(env, np.random.default_rng(0))
        y = pol.act(x)
        for r in range(scn.n_nodes):
            edges = np.flatnonzero(scn.edge_node == r)
            order = edges[np.argsort(share[scn.edge_port[edges]], kind="stable")]
            for k in range(scn.n_resources):
                # a port gets something only if every port before it is fully served
                got = y[order, k]
                full = np.isclose(got, scn.upper[order, k])
                for i in range(1, order.size):
                    if got[i] > 1e-12:
                        assert full[:i].all()


def test_fairness_is_proportional_when_capacity_binds():
    scn = small_scenario(7, n_nodes=10, contention=50.0)
    x = np.ones(scn.n_ports)
    pol = BaselinePolicy("FAIRNESS")
    env = SchedulingEnv(scn, horizon=1)
    env.reset(np.random.default_rng(0))
    pol.reset(env, np.random.default_rng(0))
    y = pol.act(x)
    for r in range(scn.n_nodes):
        e = np.flatnonzero(scn.edge_node == r)
        for k in range(scn.n_resources):
            a = scn.upper[e, k]
            if a.sum() > scn.capacity[r, k] > 0:
                np.testing.assert_allclose(y[e, k], scn.capacity[r, k] * a / a.sum(), rtol=1e-12)


def test_baselines_are_equal_when_placement_cannot_matter():
    """Equal footing: every baseline may give an arrived job a_l^k on each of its nodes. When
    every node can serve all its ports in full, where and in which order a baseline places
    cannot matter, and the four get the same decision and the same reward in every slot."""
    for seed in range(10):
        base = small_scenario(seed, n_nodes=12)
        load = np.zeros((base.n_nodes, base.n_resources))
        np.add.at(load, base.edge_node, base.upper)
        scn = Scenario(n_ports=base.n_ports, n_nodes=base.n_nodes, edge_port=base.edge_port, edge_node=base.edge_node,
                       requests=base.requests, capacity=load * 1.01 + 1e-9, alpha=base.alpha, kind=base.kind,
                       beta=base.beta)
        runs = {name: evaluate(SchedulingEnv(scn, horizon=20), BaselinePolicy(name), 20, seed=seed) for name in BASELINES}
        env = SchedulingEnv(scn, horizon=20)
        env.reset(np.random.default_rng(seed))
        for t in range(3):  # the decision itself: a_l^k on every channel of an arrived port
            x = env.observe(t)
            want = scn.upper * (x[scn.edge_port] > 0)[:, None]
            for name in BASELINES:
                pol = BaselinePolicy(name)
                pol.reset(env, np.random.default_rng(0))
                np.testing.assert_array_equal(pol.act(x), want)
        for name in BASELINES:
            np.testing.assert_array_equal(runs[name]["reward"], runs["DRF"]["reward"])


def test_binpacking_and_spreading_place_round_robin_by_utilisation():
    """Worked by hand: K = 1, a = 1, c_A = 2, c_B = 1, job 0 on {A}, job 1 on {A, B}, job 2
    on {B}. Round 1: job 0 takes A; job 1 takes the fuller A (BINPACKING) or the emptier B
    (SPREADING); job 2 takes B if it is free. Round 2: job 1's other node if it has room."""
    scn = Scenario(n_ports=3, n_nodes=2, edge_port=[0, 1, 1, 2], edge_node=[0, 0, 1, 1], requests=[[1.0]] * 3,
                   capacity=[[2.0], [1.0]], alpha=[[1.0], [1.0]], kind=[[0], [0]], beta=[0.1])
    env = SchedulingEnv(scn, horizon=1, arrival_prob=1.0)
    env.reset(np.random.default_rng(0))
    got = {}
    for name in ("BINPACKING", "SPREADING"):
        pol = BaselinePolicy(name)
        pol.reset(env, np.random.default_rng(0))
        got[name] = pol.act(np.ones(3))[:, 0]
    # edges: (0, A), (1, A), (1, B), (2, B)
    np.testing.assert_array_equal(got["BINPACKING"], [1.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(got["SPREADING"], [1.0, 1.0, 1.0, 0.0])


def test_binpacking_and_spreading_differ_under_contention():
    scn = synthetic_scenario(np.random.default_rng(3), n_nodes=64, contention=10.0)
    totals = {}
    for name in ("BINPACKING", "SPREADING"):
        env = SchedulingEnv(scn, horizon=50)
        out = evaluate(env, BaselinePolicy(name), 50, seed=4)
        totals[name] = out["reward"].sum()
    assert totals["BINPACKING"] != totals["SPREADING"]


# --- OGASched ------------------------------------------------------------------------------------
@settings(max_examples=25)
@given(st.integers(0, 10**6), st.sampled_from(["decay", "theory"]))
def test_ogasched_decisions_stay_feasible(seed, step):
    scn = small_scenario(seed, n_nodes=int(np.random.default_rng(seed).integers(2, 20)))
    env = SchedulingEnv(scn, horizon=60)
    pol = OGASched(step=step, horizon=60, eta0=float(np.random.default_rng(seed).uniform(0.1, 50)))
    env.reset(np.random.default_rng(seed))
    pol.reset(env, np.random.default_rng(0))
    for t in range(60):
        y = pol.act(env.observe(t))
        assert scn.violations(y) == []
        pol.observe(env.step(y))


def test_ogasched_projection_matches_exact_qp_through_solve():
    """The projection inside OGASched's update equals cvxpy's exact QP (via optsched.solve)."""
    scn = synthetic_scenario(np.random.default_rng(5), n_ports=4, n_nodes=6, n_resources=2)
    rng = np.random.default_rng(6)
    y = np.zeros((scn.n_edges, scn.n_resources))
    for _ in range(5):
        x = (rng.random(scn.n_ports) < 0.7).astype(float)
        z = y + 25.0 * gradient(scn, x, y)
        model = CapacityProjection(z=z.reshape(-1), upper=scn.upper.reshape(-1), group=scn.group,
                                   capacity=scn.capacity.reshape(-1))
        fast = optsched.solve(model, "fast")
        ref = optsched.solve(model, "cvxpy")
        assert fast.termination.name == "OPTIMAL" and ref.termination.name in ("OPTIMAL", "FEASIBLE")
        assert fast.objective == pytest.approx(ref.objective, rel=1e-6, abs=1e-6)
        pol = OGASched(eta0=25.0, decay=1.0)
        env = SchedulingEnv(scn, horizon=1)
        pol.reset(env, rng)
        pol.y = y
        pol.update(x)
        np.testing.assert_allclose(pol.y.reshape(-1), np.asarray(fast.solution), atol=1e-12)
        y = pol.y


def test_ogasched_regret_is_sublinear_on_a_stationary_trajectory():
    """R_T / T shrinks as T grows (Theorem 1: R_T = O(sqrt(T)))."""
    scn = synthetic_scenario(np.random.default_rng(11), n_nodes=16)
    T = 4000
    env = SchedulingEnv(scn, horizon=T)
    out = evaluate(env, OGASched(step="theory", horizon=T), T, seed=12)
    rows = regret_curve(scn, env.arrivals, out["reward"], np.array([500, 4000]))
    per_slot = [r["regret"] / r["T"] for r in rows]
    assert per_slot[1] < 0.5 * per_slot[0]
    assert rows[1]["regret"] / rows[1]["Q_star"] < 0.02


# --- the offline optimum y* -------------------------------------------------------------------
@settings(max_examples=15)
@given(st.integers(0, 10**6), st.sampled_from(KINDS))
def test_offline_optimum_is_feasible_and_beats_other_fixed_points(seed, kind):
    scn = small_scenario(seed, kind)
    rng = np.random.default_rng(seed + 4)
    counts = rng.integers(0, 50, size=scn.n_ports).astype(float)
    y_star, _ = offline_optimum(scn, counts)
    assert scn.violations(y_star, tol=1e-7) == []
    best = cumulative_reward(scn, counts, y_star)
    tol = 1e-6 * max(1.0, abs(best))
    from optsched.solvers.projection_fast import project_capacity

    for _ in range(20):
        z = random_point(scn, rng) * 2
        y = project_capacity(z.reshape(-1), scn.upper.reshape(-1), scn.group, scn.capacity.reshape(-1))
        assert cumulative_reward(scn, counts, y.reshape(y_star.shape)) <= best + tol
    # small feasible moves from y* along random directions never improve it (local = global optimality)
    for _ in range(20):
        d = rng.normal(size=y_star.shape) * scn.upper * 1e-3
        y = project_capacity((y_star + d).reshape(-1), scn.upper.reshape(-1), scn.group, scn.capacity.reshape(-1))
        assert cumulative_reward(scn, counts, y.reshape(y_star.shape)) <= best + tol


# --- multiple arrivals (Section III-D) ------------------------------------------------------------
def test_replicated_scenario_counts_each_job():
    scn = small_scenario(21)
    J = 3
    rep = scn.replicate(J)
    counts = np.random.default_rng(0).integers(0, 5, size=(7, scn.n_ports))
    x = expand_arrivals(np.minimum(counts, J), J)
    assert x.shape == (7, scn.n_ports * J)
    np.testing.assert_array_equal(x.reshape(7, scn.n_ports, J).sum(axis=2), np.minimum(counts, J))
    y = random_point(scn, np.random.default_rng(1))
    y_rep = dense(scn, y)[rep.port_origin[rep.edge_port], rep.edge_node]  # each replica gets its original's
    for t in range(7):
        per_port = np.array([reward(scn, np.eye(scn.n_ports)[l], y) for l in range(scn.n_ports)])
        assert reward(rep, x[t], y_rep) == pytest.approx(float(np.minimum(counts[t], J) @ per_port))


def test_multiple_arrivals_env_runs_feasibly():
    scn = small_scenario(22).replicate(2)
    trace = np.random.default_rng(0).integers(0, 4, size=(20, scn.n_ports // 2))
    env = SchedulingEnv(scn, horizon=40, arrival_prob=1.0, trace_counts=trace)
    out = evaluate(env, OGASched(), 40, seed=0)
    assert out["reward"].shape == (40,)
    np.testing.assert_array_equal(env.counts[:20], trace)


# --- validation ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "change, field",
    [({"beta": [-1.0]}, "beta"), ({"requests": [[1.0], [np.nan]]}, "requests"), ({"edge_node": [0, 5]}, "edge_node"),
     ({"alpha": [[0.0], [1.0]]}, "alpha"), ({"kind": [[9], [0]]}, "kind"), ({"edge_port": [0, 0], "edge_node": [1, 1]},
                                                                           "edge_port")],
)
def test_scenario_rejects_bad_input(change, field):
    good = dict(n_ports=2, n_nodes=2, edge_port=[0, 1], edge_node=[0, 1], requests=[[1.0], [2.0]],
                capacity=[[1.0], [1.0]], alpha=[[1.0], [1.2]], kind=[[0], [1]], beta=[0.4])
    Scenario(**good)
    with pytest.raises(ValueError, match=field):
        Scenario(**{**good, **change})


def test_env_and_policy_reject_bad_settings():
    scn = small_scenario(0)
    with pytest.raises(ValueError, match="arrival_prob"):
        SchedulingEnv(scn, horizon=5, arrival_prob=1.5)
    with pytest.raises(ValueError, match="trace_counts"):
        SchedulingEnv(scn, horizon=5, trace_counts=np.ones((3, scn.n_ports + 1)))
    with pytest.raises(ValueError, match="step"):
        OGASched(step="bogus")
    with pytest.raises(ValueError, match="horizon"):
        OGASched(step="theory")
    with pytest.raises(ValueError, match="baseline"):
        BaselinePolicy("ROUNDROBIN")
    with pytest.raises(ValueError, match="counts"):
        offline_optimum(scn, -np.ones(scn.n_ports))
    with pytest.raises(ValueError, match="utility"):
        synthetic_scenario(np.random.default_rng(0), utility="cubic")


# --- the experiment ---------------------------------------------------------------------------------
def test_experiment_writes_every_part(tmp_path):
    from optsched.papers import get_paper

    exp = get_paper("ogasched")
    cfg = exp.make_config({
        "study": "all", "n_nodes": 6, "n_ports": 3, "horizon": 30, "regret_points": 2,
        "fig3_nodes": [4, 6], "fig3_ports": [2, 3], "fig3_contention": [1.0, 10.0], "fig7_utilities": ["log", "mixed"],
        "table3_horizons": [10, 20], "table3_probs": [0.5], "table3_densities": [2.0],
    })
    paths = exp.run(cfg, tmp_path)
    names = {p.name for p in paths}
    for stem in ("fig2_rewards", "fig2_regret", "fig3_scale", "fig7_utilities", "table3"):
        assert f"{stem}.png" in names
    assert {"fig2_rewards.csv", "fig2_summary.csv", "fig2_regret.csv", "fig2_rewards.json"} <= names
    import pandas as pd

    summary = pd.read_csv(tmp_path / "fig2_summary.csv")
    assert list(summary["policy"]) == ["OGASched", *BASELINES]
    regret = pd.read_csv(tmp_path / "fig2_regret.csv")
    assert (regret["Q_star"] >= regret["Q_online"] - 1e-6 * regret["Q_star"].abs()).all()
    table = pd.read_csv(tmp_path / "table3.csv")
    assert len(table) == 4 * 5


def test_fig2_regret_points_beyond_the_horizon_start_at_the_first_slot(tmp_path):
    """horizon 3 with the default 5 regret points: the checkpoints were 0..3, and T = 0 read the
    whole run's reward (a regret of -1121 over sqrt(0) = -inf)."""
    import pandas as pd
    from optsched.papers import get_paper

    exp = get_paper("ogasched")
    exp.run(exp.make_config({"study": "fig2", "horizon": 3, "n_nodes": 6, "n_ports": 3}), tmp_path)
    regret = pd.read_csv(tmp_path / "fig2_regret.csv")
    rewards = pd.read_csv(tmp_path / "fig2_rewards.csv")
    assert list(regret["T"]) == [1, 2, 3]
    cumulative = rewards["OGASched_cumulative"].to_numpy()
    assert np.allclose(regret["Q_online"], cumulative[regret["T"].to_numpy() - 1], rtol=1e-6)
    assert np.isfinite(regret["regret_over_sqrtT"]).all()
    ratios = rewards.filter(like="ratio_OGASched_to_").to_numpy()
    assert not np.isinf(ratios).any()  # a ratio to a total that is not positive is empty, never inf


def test_regret_curve_refuses_checkpoints_outside_the_run():
    scn = synthetic_scenario(np.random.default_rng(3), n_nodes=4)
    env = SchedulingEnv(scn, horizon=5)
    out = evaluate(env, OGASched(), 5, seed=4)
    for bad in (0, 6, -1):
        with pytest.raises(ValueError, match="checkpoints"):
            regret_curve(scn, env.arrivals, out["reward"], np.array([bad]))


def test_sweep_rows_solve_y_star_with_the_configured_backend(monkeypatch):
    import optsched.ogasched.offline as offline
    from optsched.ogasched.experiments import sweep_metrics
    from optsched.papers import get_paper

    seen = []
    original = offline.offline_optimum

    def spy(scn, totals, backend=offline.DEFAULT_BACKEND, *args, **kwargs):
        seen.append(backend)
        return original(scn, totals, backend, *args, **kwargs)

    monkeypatch.setattr(offline, "offline_optimum", spy)
    cfg = get_paper("ogasched").make_config({"horizon": 20, "n_nodes": 6, "n_ports": 3, "offline_backend": "cvxpy"})
    assert np.isfinite(sweep_metrics(cfg, "OGASched")["regret"])
    assert seen == ["cvxpy"]


@pytest.mark.parametrize("settings_, key", [({"study": "fig9"}, "study"), ({"source": "alibaba"}, "trace_dir"),
                                            ({"arrival_prob": 1.2}, "arrival_prob"), ({"utility": "cubic"}, "utility"),
                                            ({"source": "alibaba", "trace_dir": "x", "batch_ports": 20}, "batch_ports"), ({"horizon": 0}, "horizon"),
                                            # probe BD: read by the alibaba source only, these passed unread
                                            ({"trace_dir": "/nonexistent"}, "trace_dir: only the alibaba source"),
                                            ({"batch_ports": -5}, "batch_ports")])
def test_experiment_config_is_strict(settings_, key):
    from optsched.papers import get_paper

    with pytest.raises(ValueError, match=key):
        get_paper("ogasched").make_config(settings_)


def test_presets_are_valid():
    from optsched.papers import get_paper

    exp = get_paper("ogasched")
    for preset in ("default", "fig2", "fig3", "fig7", "table3", "large", "huge", "paper"):
        cfg = exp.make_config(preset=preset)
        assert cfg.horizon >= 1
    large = exp.make_config(preset="large")
    assert (large.n_ports, large.n_nodes, large.n_resources, large.horizon) == (100, 1024, 6, 10000)
    huge = exp.make_config(preset="huge")
    assert (huge.n_ports, huge.n_nodes, huge.n_resources, huge.horizon) == (1000, 10000, 6, 10000)
    for cfg in (large, huge):  # Fig. 5's caption (Section IV-C), not Table II's beta in [0.3, 0.5]
        assert (cfg.beta_low, cfg.beta_high, cfg.contention) == (0.01, 0.015, 5.0)


def test_a_scenarios_derived_data_is_read_only() -> None:
    """The scenario's cached incidences were writable: ``node_incidence.data[:] = 0`` made a
    decision over capacity pass ``violations`` (the class the models' derived data had)."""
    import functools

    import scipy.sparse as sp

    scn = synthetic_scenario(np.random.default_rng(0), n_ports=3, n_nodes=4)
    over = np.asarray(scn.upper, dtype=np.float64).copy()
    assert scn.violations(over)  # every port at its bound: over some node's capacity
    for name, attr in vars(type(scn)).items():
        if isinstance(attr, functools.cached_property):
            value = getattr(scn, name)
            arrays = [value] if isinstance(value, np.ndarray) else (
                [value.data, value.indices, value.indptr] if sp.issparse(value) else [])
            assert all(not a.flags.writeable for a in arrays), name
    with pytest.raises(ValueError, match="read-only"):
        scn.node_incidence.data[:] = 0
    assert scn.violations(over)
