"""Projection (32) of paper 003: the exact `fast` kernel against cvxpy/OSQP, HiGHS and Pyomo,
KKT conditions (34)-(37) checked directly, and Algorithm 1 as printed (`paper`)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.models import model_from_dict
from optsched.models.capacity_projection import CapacityProjection
from optsched.result import Termination
from optsched.solvers.projection_fast import group_thresholds, project_capacity
from optsched.solvers.projection_paper import paper_projection

AGREE = 1e-6  # the tolerance between `fast` and the exact QP solvers


def build_instance(
    rng: np.random.Generator, n: int, n_groups: int, scale: float, shift: float, integral: bool
) -> CapacityProjection:
    """Unequal caps (10% of them zero), negative z, and per group a zero, binding, exactly
    full or slack capacity; ``integral`` rounds the data (ties)."""
    z = rng.normal(shift, 2.0, n) * scale
    upper = rng.uniform(0.0, 4.0, n) * scale
    upper[rng.random(n) < 0.1] = 0.0
    if integral:
        z, upper = np.round(z / scale) * scale, np.round(upper / scale) * scale
    group = rng.integers(0, n_groups, n)
    load = np.bincount(group, weights=np.clip(z, 0, upper), minlength=n_groups)
    kind = rng.integers(0, 4, n_groups)  # 0: zero, 1: binding, 2: exactly full, 3: slack
    frac = rng.uniform(0.0, 1.0, n_groups)
    capacity = np.select(
        [kind == 0, kind == 1, kind == 2], [0.0, frac * load, load], load + frac * 5.0 * scale
    )
    return CapacityProjection(z=z, upper=upper, group=group, capacity=capacity)


@st.composite
def instances(draw: st.DrawFn, max_n: int = 30, max_groups: int = 6) -> CapacityProjection:
    return build_instance(
        np.random.default_rng(draw(st.integers(0, 2**32 - 1))),
        n=draw(st.integers(1, max_n)),
        n_groups=draw(st.integers(1, max_groups)),
        scale=draw(st.sampled_from([0.01, 1.0, 100.0])),
        shift=draw(st.floats(-2.0, 3.0)),
        integral=draw(st.booleans()),
    )


def random_instances(seed: int, count: int) -> list[CapacityProjection]:
    rng = np.random.default_rng(seed)
    return [
        build_instance(rng, int(rng.integers(1, 31)), int(rng.integers(1, 7)),
                       float(rng.choice([0.01, 1.0, 100.0])), float(rng.uniform(-2, 3)),
                       bool(rng.random() < 0.5))
        for _ in range(count)
    ]


def exact_by_bisection(m: CapacityProjection) -> np.ndarray:
    """Independent reference: bisection on t = rho/2 in every group at once, 100 halvings
    (no sorting, no breakpoints)."""
    def load(t: np.ndarray) -> np.ndarray:
        return m.group_load(np.clip(m.z - t[m.group], 0.0, m.upper))

    lo = np.zeros(m.n_groups)
    hi = np.full(m.n_groups, max(float(m.z.max()), 0.0))
    for _ in range(100):  # 2^-100 of the range: below float resolution
        mid = 0.5 * (lo + hi)
        over = load(mid) > m.capacity
        lo, hi = np.where(over, mid, lo), np.where(over, hi, mid)
    t = np.where(load(np.zeros(m.n_groups)) <= m.capacity, 0.0, hi)
    return np.clip(m.z - t[m.group], 0.0, m.upper)


def stacked(models: list[CapacityProjection]) -> CapacityProjection:
    """Many instances as one block-separable instance (each keeps its own groups)."""
    offsets = np.cumsum([0] + [m.n_groups for m in models[:-1]])
    return CapacityProjection(
        z=np.concatenate([m.z for m in models]),
        upper=np.concatenate([m.upper for m in models]),
        group=np.concatenate([m.group + o for m, o in zip(models, offsets)]),
        capacity=np.concatenate([m.capacity for m in models]),
    )


def assert_feasible(m: CapacityProjection, y: np.ndarray) -> None:
    assert y.shape == m.z.shape
    assert (y >= 0).all() and (y <= m.upper).all()  # exact: the kernel clips
    load = m.group_load(y)
    assert (load <= m.capacity + 1e-12 * (1 + m.capacity)).all(), (load - m.capacity).max()


# --- fast vs the exact QP solvers ------------------------------------------------------------
@settings(max_examples=400)
@given(instances())
def test_fast_matches_cvxpy_osqp(m: CapacityProjection) -> None:
    fast = optsched.solve(m, "fast")
    ref = optsched.solve(m, "cvxpy")
    assert fast.termination is Termination.OPTIMAL and ref.termination is Termination.OPTIMAL
    assert_feasible(m, fast.solution)
    assert np.abs(fast.solution - ref.solution).max() <= AGREE * max(1.0, np.abs(m.z).max())
    assert abs(fast.objective - ref.objective) <= AGREE * max(1.0, ref.objective)


@settings(max_examples=150)
@given(instances(max_n=20, max_groups=4))
def test_fast_matches_highs_qp(m: CapacityProjection) -> None:
    fast = optsched.solve(m, "fast")
    ref = optsched.solve(m, "highs")
    assert ref.termination is Termination.OPTIMAL
    assert np.abs(fast.solution - ref.solution).max() <= AGREE * max(1.0, np.abs(m.z).max())
    # HiGHS proves a bound; the exact projection can never beat it
    assert fast.objective >= ref.bound - AGREE * max(1.0, ref.objective)


@settings(max_examples=10)
@given(instances(max_n=12, max_groups=3))
def test_fast_matches_pyomo_reference(m: CapacityProjection) -> None:
    ref = optsched.solve(m, "pyomo")
    assert ref.termination is Termination.OPTIMAL
    fast = optsched.solve(m, "fast")
    assert np.abs(fast.solution - ref.solution).max() <= AGREE * max(1.0, np.abs(m.z).max())


@pytest.mark.parametrize("seed", range(5))
def test_thousands_of_instances_stacked_vs_cvxpy(seed: int) -> None:
    """2,000 random instances in 5 stacked solves: groups are independent, so the stacked
    projection is the per-instance projection of each block."""
    big = stacked(random_instances(seed, 400))
    fast = optsched.solve(big, "fast")
    ref = optsched.solve(big, "cvxpy")
    assert ref.termination is Termination.OPTIMAL
    assert_feasible(big, fast.solution)
    assert np.abs(fast.solution - ref.solution).max() <= AGREE * max(1.0, np.abs(big.z).max())
    assert np.abs(fast.solution - exact_by_bisection(big)).max() <= 1e-9 * np.abs(big.z).max()


@settings(max_examples=1500)
@given(instances())
def test_fast_matches_bisection_and_kkt(m: CapacityProjection) -> None:
    y = project_capacity(m.z, m.upper, m.group, m.capacity)
    assert_feasible(m, y)
    scale = max(1.0, float(np.abs(m.z).max()), float(m.upper.max()))
    assert np.abs(y - exact_by_bisection(m)).max() <= 1e-9 * scale
    rho = 2.0 * group_thresholds(m.z, m.upper, m.group, m.capacity)
    assert (rho >= 0).all()
    assert m.kkt_residual(y, rho) <= 1e-9 * scale * max(1.0, rho.max())
    # weak duality of (33) at rho certifies optimality
    assert m.dual_bound(rho) == pytest.approx(m.objective(y), rel=1e-9, abs=1e-9 * scale**2)


@settings(max_examples=300)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(4, 14))
def test_fast_keeps_the_capacity_when_z_dwarfs_it(seed: int, n: int, exponent: int) -> None:
    """|z| of 10^4..10^14 against capacities of about 1: z - t cancels (an error of eps |z|),
    and a binding group must still sum to c within its own rounding (before the kernel scaled
    its free members onto c, a group of one ended 1e-5 over c at z = 3e7, OGASched's step
    eta0 = 1e12 stopping the policy with exit 1, or 6 % under c at z = 3e8)."""
    rng = np.random.default_rng(seed)
    z = 10.0**exponent * (1.0 + rng.random(n))
    upper = np.where(rng.random(n) < 0.3, rng.uniform(0.0, 0.5, n), 10.0**exponent * 3.0)
    m = CapacityProjection(z=z, upper=upper, group=rng.integers(0, 3, n), capacity=rng.uniform(0.5, 2.0, 3))
    y = project_capacity(m.z, m.upper, m.group, m.capacity)
    assert (y >= 0).all() and (y <= m.upper).all()
    load, ulps = m.group_load(y), 4 * n * 2.0**-52
    assert (load <= m.capacity * (1 + ulps)).all(), (load - m.capacity).max()
    # and a binding group is filled: at the optimum its free members sum to c - capped (they were 6 % short)
    binding = m.group_load(np.clip(m.z, 0.0, m.upper)) > m.capacity
    assert (load[binding] >= m.capacity[binding] * (1 - ulps)).all()
    assert optsched.solve(m, "fast").termination is Termination.OPTIMAL


def test_kkt_residual_detects_a_wrong_point() -> None:
    m = CapacityProjection(z=[3.0, 2.0, 1.0], upper=[10.0] * 3, group=[0] * 3, capacity=[3.0])
    assert m.kkt_residual([2.0, 1.0, 0.0], [2.0]) == pytest.approx(0.0, abs=1e-15)
    assert m.kkt_residual([1.0, 1.0, 1.0], [2.0]) > 0.5  # feasible but not the projection
    assert m.kkt_residual([2.0, 1.0, 0.0], [1.0]) > 0.5  # wrong multiplier


# --- hand-checked cases ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("z", "upper", "capacity", "expected"),
    [
        ([3.0, 2.0, 1.0], [10.0, 10.0, 10.0], 3.0, [2.0, 1.0, 0.0]),  # binding, t = 1
        ([1.0, 1.0], [5.0, 5.0], 10.0, [1.0, 1.0]),  # non-binding: y = clip(z)
        ([3.0, 2.0], [10.0, 0.5], 4.0, [3.0, 0.5]),  # non-binding once capped
        ([5.0, 4.0], [1.0, 10.0], 3.0, [1.0, 2.0]),  # binding with member 1 at its cap
        ([-1.0, 2.0], [1.0, 1.0], 0.0, [0.0, 0.0]),  # zero capacity
        ([-1.0, -2.0], [1.0, 1.0], 0.5, [0.0, 0.0]),  # negative z
        ([2.0, 2.0, 2.0], [1.0, 0.0, 3.0], 1.0, [0.5, 0.0, 0.5]),  # ties, a zero cap; t = 1.5
    ],
)
def test_hand_worked_projections(z, upper, capacity, expected) -> None:  # type: ignore[no-untyped-def]
    m = CapacityProjection(z=z, upper=upper, group=[0] * len(z), capacity=[capacity])
    r = optsched.solve(m, "fast")
    assert r.termination is Termination.OPTIMAL
    np.testing.assert_allclose(r.solution, expected, atol=1e-12)


def test_large_instance_many_groups() -> None:
    rng = np.random.default_rng(7)
    n, n_groups = 200_000, 50_000
    z = rng.normal(1.0, 3.0, n)
    upper = rng.uniform(0.0, 4.0, n)
    group = rng.integers(0, n_groups, n)
    capacity = rng.uniform(0.0, 8.0, n_groups)
    m = CapacityProjection(z=z, upper=upper, group=group, capacity=capacity)
    y = project_capacity(z, upper, group, capacity)
    assert_feasible(m, y)
    rho = 2.0 * group_thresholds(z, upper, group, capacity)
    assert m.kkt_residual(y, rho) <= 1e-9 * 10
    assert (rho > 0).sum() > n_groups // 4  # the test exercises many binding groups


@pytest.mark.slow
def test_paper_scale_kernel_million_variables() -> None:
    """n = 10^6 variables in G = 10^5 groups (the brief's upper sizes), 70% binding."""
    rng = np.random.default_rng(11)
    n, n_groups = 1_000_000, 100_000
    z = rng.normal(1.0, 2.0, n)
    upper = rng.uniform(0.0, 3.0, n)
    group = rng.integers(0, n_groups, n)
    load = np.bincount(group, weights=np.clip(z, 0, upper), minlength=n_groups)
    capacity = np.where(rng.random(n_groups) < 0.7, rng.uniform(0.1, 0.9, n_groups) * load, load + 1)
    m = CapacityProjection(z=z, upper=upper, group=group, capacity=capacity)
    y = project_capacity(z, upper, group, capacity)
    assert_feasible(m, y)
    rho = 2.0 * group_thresholds(z, upper, group, capacity)
    assert m.kkt_residual(y, rho) <= 1e-9 * 10
    assert np.abs(y - exact_by_bisection(m)).max() <= 1e-9 * 10


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 125))
def test_ten_thousand_instances_stacked_vs_cvxpy(seed: int) -> None:
    big = stacked(random_instances(seed, 400))
    fast = optsched.solve(big, "fast")
    ref = optsched.solve(big, "cvxpy")
    assert ref.termination is Termination.OPTIMAL
    assert_feasible(big, fast.solution)
    assert np.abs(fast.solution - ref.solution).max() <= AGREE * max(1.0, np.abs(big.z).max())


@pytest.mark.parametrize("seed", range(3))
def test_large_groups_with_ties_vs_bisection_and_cvxpy(seed: int) -> None:
    """Groups of 25 to 1,000 members (the kernel's selection path, not the small-group scan),
    half of them with integral data (many tied breakpoints)."""
    rng = np.random.default_rng(1000 + seed)
    models = []
    for size in (25, 40, 100, 400, 1000):
        m = build_instance(rng, size, 1, float(rng.choice([0.01, 1.0, 100.0])), float(rng.uniform(-1, 3)),
                           bool(seed % 2 == 0))
        models.append(m)
    big = stacked(models)
    y = project_capacity(big.z, big.upper, big.group, big.capacity)
    assert_feasible(big, y)
    scale = max(1.0, float(np.abs(big.z).max()), float(big.upper.max()))
    assert np.abs(y - exact_by_bisection(big)).max() <= 1e-9 * scale
    rho = 2.0 * group_thresholds(big.z, big.upper, big.group, big.capacity)
    assert big.kkt_residual(y, rho) <= 1e-9 * scale * max(1.0, rho.max())
    ref = optsched.solve(big, "cvxpy")
    assert ref.termination is Termination.OPTIMAL
    assert np.abs(y - ref.solution).max() <= AGREE * max(1.0, np.abs(big.z).max())


@settings(max_examples=300)
@given(st.integers(0, 2**32 - 1), st.integers(1, 80), st.booleans())
def test_both_bracketing_routines_find_the_threshold(seed: int, k: int, integral: bool) -> None:
    """Both bracketing routines of the kernel (every breakpoint evaluated, used for small
    groups, and the sort-free selection, used for large ones) land on the exact threshold of
    one binding group of any size before any Newton refinement, up to rounding."""
    from optsched.solvers.projection_kernel import _brute_threshold, _select_threshold

    rng = np.random.default_rng(seed)
    z = rng.uniform(0.01, 4.0, k)
    y0 = np.minimum(z, rng.uniform(0.01, 4.0, k))
    if integral:
        z, y0 = np.ceil(z), np.ceil(y0)
        y0 = np.minimum(y0, z)
    c = float(rng.uniform(0.0, 0.99)) * y0.sum()
    m = CapacityProjection(z=z, upper=y0, group=np.zeros(k, int), capacity=[c])
    exact = exact_by_bisection(m)
    t_brute, t_lo, t_hi = _brute_threshold(z, y0, 0, k, c)
    assert 0.0 <= t_lo <= t_brute <= t_hi
    for t in (t_brute, _select_threshold(z, y0, 0, k, c, np.empty(k), np.empty(k))):
        assert t >= 0.0
        np.testing.assert_allclose(np.clip(z - t, 0.0, y0), exact, rtol=0, atol=1e-9 * 4.0)
    assert np.abs(project_capacity(z, y0, np.zeros(k, int), [c]) - exact).max() <= 1e-9 * 4.0


def test_empty_groups_and_no_binding_group() -> None:
    m = CapacityProjection(z=[0.5, 2.0], upper=[1.0, 1.0], group=[2, 2], capacity=[0.0, 1.0, 5.0])
    np.testing.assert_array_equal(optsched.solve(m, "fast").solution, [0.5, 1.0])
    np.testing.assert_array_equal(optsched.solve(m, "cvxpy").solution.round(9), [0.5, 1.0])


# --- Algorithm 1 as printed ------------------------------------------------------------------
def test_paper_is_suboptimal_when_capacity_does_not_bind() -> None:
    m = CapacityProjection(z=[1.0, 1.0], upper=[5.0, 5.0], group=[0, 0], capacity=[10.0])
    r = optsched.solve(m, "paper")
    # (38) gives rho = -8 < 0: every y is pushed up to fill the capacity
    np.testing.assert_allclose(r.solution, [5.0, 5.0])
    assert r.termination is Termination.FEASIBLE
    assert r.objective == pytest.approx(32.0)
    assert optsched.solve(m, "fast").objective == 0.0


def test_paper_is_infeasible_with_unequal_caps() -> None:
    m = CapacityProjection(z=[3.0, 2.0], upper=[10.0, 0.5], group=[0, 0], capacity=[4.0])
    y, _ = paper_projection(m.z, m.upper, m.group, m.capacity)
    np.testing.assert_allclose(y, [2.5, 1.5])  # y_2 > a_2: only y_1 is capped
    r = optsched.solve(m, "paper")
    assert r.termination is Termination.ERROR and r.solution is None  # an error carries no solution
    assert "upper" in r.extra["message"]


def test_paper_caps_only_the_largest_member() -> None:
    m = CapacityProjection(z=[5.0, 4.9, 0.0], upper=[1.0, 1.0, 1.0], group=[0] * 3, capacity=[2.5])
    y, _ = paper_projection(m.z, m.upper, m.group, m.capacity)
    assert y[0] == 1.0 and y[1] > 1.0  # member 2 exceeds a = 1 after pass 2
    assert optsched.solve(m, "paper").termination is Termination.ERROR


@settings(max_examples=300)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_paper_is_exact_when_capacity_binds_and_no_cap_is_active(seed: int, n: int) -> None:
    """The regime Algorithm 1 was written for: sum clip(z) > c and u_i >= z_i, so only the
    zero bounds and the capacity can be active."""
    rng = np.random.default_rng(seed)
    z = rng.normal(1.0, 2.0, n)
    upper = np.maximum(z, 0.0) + rng.uniform(0.0, 2.0, n)
    load = np.clip(z, 0.0, None).sum()
    if load <= 0:
        return
    m = CapacityProjection(z=z, upper=upper, group=[0] * n, capacity=[load * rng.uniform(0.0, 0.999)])
    paper = optsched.solve(m, "paper")
    assert paper.termination is Termination.FEASIBLE
    np.testing.assert_allclose(paper.solution, optsched.solve(m, "fast").solution, atol=1e-9)


# --- model: JSON and validation --------------------------------------------------------------
def test_json_round_trip() -> None:
    data = {"model": "capacity_projection", "z": [1.5, -1, 2], "upper": [1, 1, 3],
            "group": [0, 0, 1], "capacity": [1, 2]}
    m = model_from_dict(json.loads(json.dumps(data)))
    assert isinstance(m, CapacityProjection)
    assert model_from_dict(m.to_dict()).to_dict() == m.to_dict()
    r = optsched.solve(m)  # default backend: the exact fast one
    assert r.backend == "fast"
    np.testing.assert_allclose(r.solution, [1.0, 0.0, 2.0])
    assert m.solution_to_json(r.solution) == [1.0, 0.0, 2.0]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"z": []}, "z"),
        ({"z": [1.0, float("nan")]}, "z"),
        ({"z": "ab"}, "z"),
        ({"upper": [1.0]}, "upper"),
        ({"upper": [1.0, -1.0]}, "upper"),
        ({"upper": [1.0, float("inf")]}, "upper"),
        ({"group": [0, 2]}, "group"),
        ({"group": [0, 0.5]}, "group"),
        ({"group": [0]}, "group"),
        ({"capacity": [-1.0]}, "capacity"),
        ({"capacity": []}, "capacity"),
        ({"capacity": [[1.0]]}, "capacity"),
    ],
)
def test_bad_input_names_the_field(change: dict, field: str) -> None:
    data = {"z": [1.0, 2.0], "upper": [1.0, 1.0], "group": [0, 0], "capacity": [1.0], **change}
    with pytest.raises(ValueError, match=field):
        CapacityProjection(**data)


def test_unknown_json_key_rejected() -> None:
    with pytest.raises(ValueError, match="unknown key"):
        model_from_dict({"model": "capacity_projection", "z": [1], "upper": [1], "group": [0],
                         "capacity": [1], "rho": [0]})


def test_violations_report_each_constraint() -> None:
    m = CapacityProjection(z=[1.0, 1.0], upper=[1.0, 1.0], group=[0, 0], capacity=[1.5])
    assert m.violations([0.5, 0.5]) == []
    assert "< 0" in m.violations([-0.1, 0.5])[0]
    assert "upper" in m.violations([1.2, 0.0])[0]
    assert "capacity" in m.violations([1.0, 1.0])[0]
    assert "shape" in m.violations([1.0])[0]


@pytest.mark.parametrize("factor", [2.0**-300, 2.0**-40, 2.0**40])
def test_projection_at_any_scale_is_optimal_where_certified(factor: float) -> None:
    """z, upper and capacity times f: the projection is f times the unscaled one and its
    objective f^2 times. HiGHS's tolerances are absolute: at f = 2^-40 it said "optimal" at twice
    the optimum (all 30 of 30); the highs backend now scales columns and objective
    (StandardForm.scaled_continuous). The cvxpy and Pyomo routes solve the program as stated and
    say ``feasible`` (not certified) where its objective moves less than their tolerances."""
    from optsched.generators import generate
    from optsched.models import model_from_dict

    rng = np.random.default_rng(41)
    for _ in range(6):
        base = generate("capacity_projection", 8, rng)
        reference = optsched.solve(base, "highs").objective
        d = base.to_dict()
        model = model_from_dict({**d, **{k: [v * factor for v in d[k]] for k in ("z", "upper", "capacity")}})
        for backend in optsched.backends(model):
            r = optsched.solve(model, backend)
            if backend in ("highs", "fast"):
                assert r.termination is Termination.OPTIMAL, (backend, r.message)
                assert r.objective == pytest.approx(reference * factor**2, rel=1e-6, abs=0.0), backend
            elif backend in ("cvxpy", "pyomo") and factor < 1:
                assert r.termination is Termination.FEASIBLE and "not certified" in r.extra["optimality"], backend


def test_highs_qp_optimal_is_certified_by_its_duals_on_mixed_scales() -> None:
    """HiGHS's QP solver said optimal at 9.0e9 where the optimum is 0.5 (z of 1e6 beside 1), and
    at 0.500001125 for 0.5 (z of 3e4); optimal now needs the Lagrangian bound of its own duals
    (``StandardForm.lagrangian_gap``) to agree, else the result is feasible with that bound."""
    rng = np.random.default_rng(7)
    certified = 0
    for scale in [1.0, 3e4, 1e6, *10.0 ** rng.uniform(0, 7, 40)]:
        n = int(rng.integers(2, 6))
        z = np.concatenate([[scale], rng.uniform(0, 2, n - 1)])
        upper = np.concatenate([[scale], rng.uniform(0.5, 2, n - 1)])
        model = CapacityProjection(z=z, upper=upper, group=np.zeros(n, dtype=int), capacity=[scale])
        exact = optsched.solve(model, "fast")
        res = optsched.solve(model, "highs")
        if res.termination is Termination.OPTIMAL:
            certified += 1
            assert res.objective == pytest.approx(exact.objective, rel=1e-6, abs=1e-6), scale
        if res.bound is not None and res.termination is not Termination.ERROR:
            assert res.bound <= exact.objective + 1e-9 * max(1.0, exact.objective), scale  # a lower bound
    assert certified >= 10  # the certificate is not vacuous: most instances still certify


def test_lagrangian_gap_is_a_valid_bound_for_any_point_and_multipliers() -> None:
    """f(x) - gap <= the optimum for arbitrary x and y (weak duality), diagonal and full H."""
    from optsched.models import LinearProgram

    rng = np.random.default_rng(3)
    for trial in range(60):
        n, m = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        root = rng.normal(size=(n, n)) if trial % 2 else np.diag(rng.uniform(0, 2, n))
        model = LinearProgram(c=rng.normal(size=n), A=rng.normal(size=(m, n)), row_lower=[None] * m,
                              row_upper=rng.uniform(0.5, 2, m), col_lower=-rng.uniform(0, 2, n),
                              col_upper=rng.uniform(0, 2, n), hessian=root @ root.T)
        optimum = optsched.solve(model, "highs").objective
        form = model.to_standard_form()
        for _ in range(5):
            x = rng.uniform(form.col_lower, form.col_upper)
            y = rng.normal(size=m) * rng.choice([0.0, 1.0, 10.0])
            gap = form.lagrangian_gap(x, y)
            assert model.objective(x) - gap <= optimum + 1e-9 * max(1.0, abs(optimum))


def test_highs_qp_prints_nothing_and_keeps_what_its_solver_printed(capfd: pytest.CaptureFixture[str]) -> None:
    """HiGHS's QP solver printed "dimension mismatch" to stdout (C printf) on this mixed-scale
    projection: a command's --json output would not have parsed. It is captured into
    ``extra["solver_output"]``."""
    z = [220255.38807488207, 4.7450935849003635, -189.26766607330913, 0.11165706362376482, 2.407103315852675,
         -6.087885351217475, -4.981765063064906e-05, 20011.16997491982, 4.641301882407502e-05, 1.2716597222994133e-07,
         -223008.82367155325, -112317.63100905827, -31.838319333594768, -736385.730926879, -35302.79887881831]
    upper = [479258693.85175174, 2560.59011593837, 91309.44476560301, 29.8699355430954, 672.5935986268065,
             60987.43807471792, 0.03247731510714492, 25888015.907130618, 0.42237740237703203, 0.00010631265587154012,
             968914135.6491162, 16471167.769616263, 9051.433056124104, 4954168026.033691, 23705737.6193485]
    model = CapacityProjection(z=z, upper=upper, group=[0] * 15, capacity=[240273.82195030642])
    capfd.readouterr()
    res = optsched.solve(model, "highs")
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    if "solver_output" in res.extra:
        assert "dimension mismatch" in res.extra["solver_output"]
    assert res.termination is not Termination.OPTIMAL or res.objective == pytest.approx(
        optsched.solve(model, "fast").objective, rel=1e-6)


@pytest.mark.parametrize("z,upper,capacity", [
    ([1.83e10], [3.36e-6], [2.39e-6]),  # z - t rounds onto the bound: 40 % over c, inside the seam's slack
    ([1e16 + 2, 5.0], [1.5, 0.5], [1.0]),  # an error result
    ([0.033], [1.35e-17], [1.15e-17]),  # 17 % over
])
def test_fast_keeps_the_capacity_when_rounding_caps_every_member(z, upper, capacity) -> None:
    """When z - t rounds onto the members' bounds, the capped ones alone passed c and nothing
    pulled them back (the review's cases)."""
    m = CapacityProjection(z=z, upper=upper, group=[0] * len(z), capacity=capacity)
    res = optsched.solve(m, "fast")
    assert res.ok
    assert m.violations(res.solution, tol=1e-12) == []
    assert m.group_load(res.solution)[0] <= m.capacity[0] * (1 + 1e-15)
    exact = optsched.solve(m, "highs")
    if exact.termination is Termination.OPTIMAL:
        assert res.objective == pytest.approx(exact.objective, rel=1e-9)


def test_the_projection_bound_is_a_lower_bound_when_loads_dwarf_the_optimum() -> None:
    """Capacity 1e12 and an optimum of 300: load - c rounded to 0, and the fast kernel and the
    cvxpy certificate both stated a "lower bound" of 300.0 above the optimum 299.9987793 (of
    these float data, in exact arithmetic). Now the bound is summed exactly, and an answer the
    floats cannot place within 1e-6 of it is not called optimal."""
    from fractions import Fraction

    c = 1e12
    z = np.full(3, (c + 30.0) / 3)
    m = CapacityProjection(z=z, upper=np.full(3, 2 * c), group=[0, 0, 0], capacity=[c])
    excess = sum(Fraction(float(v)) for v in z) - Fraction(c)
    best = float(excess**2 / 3)
    for backend, options in (("fast", {}), ("cvxpy", {"solver": "CLARABEL"})):
        res = optsched.solve(m, backend, **options)
        assert res.bound is not None and res.bound <= best * (1 + 1e-12), backend
        # 300.0 against 299.9987793: the floats place y only to eps |z| (about 1e-3 of the objective
        # here), so the answer is feasible, within that of the optimum, and not called optimal
        assert res.termination is Termination.FEASIBLE and "not certified" in res.extra["optimality"], backend
        assert best <= res.objective <= best * (1 + 1e-5), backend


@pytest.mark.parametrize("scale", [1e-100, 1e-12, 1e-6])
def test_every_backends_bound_holds_on_projections_below_the_tolerances(scale: float) -> None:
    """Data of 1e-6 and below: Pyomo said feasible (below its tolerance scale) and kept its
    solver's own bound, 5.28e-12 against the optimum 4.83e-12 (a review's instance, about 1 in 6
    of such projections). A continuous program's bound is what its duals prove, on every
    backend; ``fast`` is exact."""
    rng = np.random.default_rng(int(-np.log10(scale)))
    held = 0
    for _ in range(25):
        n, groups = int(rng.integers(2, 7)), int(rng.integers(1, 3))
        z, upper = rng.normal(0.5, 1.0, n) * scale, rng.uniform(0.2, 2.5, n) * scale
        group = rng.integers(0, groups, n)
        capacity = np.bincount(group, weights=np.clip(z, 0, upper), minlength=groups) * rng.uniform(0.1, 0.9, groups)
        m = CapacityProjection(z=z, upper=upper, group=group, capacity=capacity)
        optimum = optsched.solve(m, "fast").objective
        for backend in ("highs", "cvxpy", "pyomo"):
            res = optsched.solve(m, backend)
            if res.bound is not None:
                held += 1
                assert res.bound <= optimum * (1 + 1e-9), (backend, res.bound, optimum)
            if res.objective is not None:
                assert res.objective >= optimum * (1 - 1e-9), backend
    assert held >= 25
