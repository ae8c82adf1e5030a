"""Weighted set packing (paper 004): every backend against brute force, each other, the
sqrt(M) guarantee of Algorithm 2, and the Delorme instances' known optima."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.io import load_instance
from optsched.models.set_packing import SetPacking
from optsched.result import Termination

EXACT = ["cpsat", "highs", "pyomo", "brute_force"]
REL = 1e-6  # CP-SAT scales float objectives to integers with this precision


@st.composite
def packings(draw, max_sets: int = 10, max_elements: int = 8, integer: bool = False) -> SetPacking:
    m = draw(st.integers(1, max_elements))
    n = draw(st.integers(1, max_sets))
    sets = [draw(st.lists(st.integers(0, m - 1), unique=True, max_size=m)) for _ in range(n)]
    if integer:
        weights = draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
    else:
        weights = draw(st.lists(st.floats(0, 10, allow_nan=False), min_size=n, max_size=n))
    return SetPacking(m, sets, weights)


def close(a: float, b: float) -> bool:
    return abs(a - b) <= REL * max(1.0, abs(a), abs(b))


@settings(max_examples=60)
@given(packings())
def test_exact_backends_match_brute_force(model: SetPacking) -> None:
    reference = optsched.solve(model, "brute_force")
    assert reference.termination is Termination.OPTIMAL
    for backend in ["cpsat", "highs", "enumerate", "scip"]:
        res = optsched.solve(model, backend)
        assert res.termination is Termination.OPTIMAL, (backend, res.extra)
        assert model.is_feasible(res.solution)
        assert close(res.objective, reference.objective), (backend, res.objective, reference.objective)


@settings(max_examples=8)
@given(packings(max_sets=8, max_elements=6))
def test_pyomo_reference_matches_brute_force(model: SetPacking) -> None:
    reference = optsched.solve(model, "brute_force")
    res = optsched.solve(model, "pyomo")
    assert res.termination is Termination.OPTIMAL
    assert model.is_feasible(res.solution)
    assert close(res.objective, reference.objective)


@pytest.mark.parametrize("seed", range(12))
def test_exact_backends_agree_on_larger_instances(seed: int) -> None:
    rng = np.random.default_rng(seed)
    model = SetPacking.random(rng, n_sets=40, n_elements=30, max_size=5)
    values = {b: optsched.solve(model, b) for b in ["cpsat", "highs"]}
    for b, r in values.items():
        assert r.termination is Termination.OPTIMAL, b
        assert model.is_feasible(r.solution)
    assert close(values["cpsat"].objective, values["highs"].objective)
    # the dual bound HiGHS proves is a valid bound for the CP-SAT optimum too
    assert values["cpsat"].objective <= values["highs"].bound * (1 + REL)


@settings(max_examples=150)
@given(packings(max_sets=12, max_elements=10))
def test_greedy_is_feasible_and_within_sqrt_m(model: SetPacking) -> None:
    greedy = optsched.solve(model, "greedy")
    assert greedy.termination in (Termination.FEASIBLE, Termination.OPTIMAL)
    assert model.is_feasible(greedy.solution)
    opt = optsched.solve(model, "brute_force").objective
    assert greedy.objective * math.sqrt(model.n_elements) >= opt * (1 - 1e-12)
    assert greedy.bound >= opt * (1 - 1e-12)  # the reported bound is a true bound
    assert greedy.objective <= opt * (1 + 1e-12)


def test_greedy_ratio_can_reach_its_worst_case_shape() -> None:
    """One big set beats many small disjoint ones in the greedy key but not in value: the
    tight family behind the sqrt(M) ratio, here with M = 4 (ratio -> 2)."""
    model = SetPacking(4, [[0, 1, 2, 3], [0], [1], [2], [3]], [2.0 + 1e-6, 1, 1, 1, 1])
    greedy = optsched.solve(model, "greedy")
    exact = optsched.solve(model, "highs")
    assert greedy.solution.tolist() == [0]
    assert exact.objective == pytest.approx(4.0)
    assert exact.objective / greedy.objective == pytest.approx(2.0, rel=1e-5)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([10, 10**6]), st.sampled_from([5, 40, 200]))
def test_compiled_greedy_is_algorithm_2(seed: int, n_elements: int, n_sets: int) -> None:
    """The compiled greedy (element slots or ranks, insertion or merge sort) chooses what the
    plain numpy Algorithm 2 does, empty sets and tied keys included."""
    from optsched.solvers.greedy_set_packing import greedy_packing, greedy_packing_batch

    rng = np.random.default_rng(seed)
    pool = rng.choice(n_elements, size=min(n_elements, 30), replace=False)
    sets = [rng.choice(pool, size=int(rng.integers(0, 5)), replace=False) for _ in range(n_sets)]
    weights = rng.integers(0, 4, n_sets).astype(float)  # many ties
    model = SetPacking(n_elements, sets, weights)
    chosen, value = greedy_packing(model)
    want = np.flatnonzero(greedy_packing_batch(model.family.dense, weights[None, :])[0])
    np.testing.assert_array_equal(chosen, want)
    assert value == pytest.approx(weights[want].sum())


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6))
def test_violations_match_a_plain_check(seed: int) -> None:
    """Any index array (unsorted, repeated, out of range) is judged as a plain loop judges it."""
    rng = np.random.default_rng(seed)
    model = SetPacking.random(rng, 12, 15, max_size=3)
    idx = rng.integers(-1, 14, int(rng.integers(0, 6)))
    if rng.random() < 0.5:
        idx = np.unique(idx[idx >= 0])
    in_range = all(0 <= i < model.n_sets for i in idx)
    distinct = len(set(idx.tolist())) == len(idx)
    elements = [e for i in idx if 0 <= i < model.n_sets for e in model.sets[i].tolist()]
    disjoint = len(set(elements)) == len(elements)
    assert (model.violations(idx) == []) == (in_range and distinct and disjoint)


def test_every_solution_passes_the_model_check_and_violations_are_found() -> None:
    model = SetPacking(3, [[0, 1], [1, 2], [2]], [1, 1, 1])
    assert model.violations(np.array([0, 1]))  # share element 1
    assert model.violations(np.array([5]))
    assert model.violations(np.array([0, 0]))
    assert not model.violations(np.array([0, 2]))
    assert model.objective(np.array([0, 2])) == 2


def test_verify_turns_a_wrong_answer_into_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from optsched.solvers import greedy_set_packing

    model = SetPacking(2, [[0, 1], [1]], [1.0, 1.0])
    monkeypatch.setattr(greedy_set_packing, "greedy_packing", lambda m: (np.array([0, 1]), 2.0))
    res = optsched.solve(model, "greedy")
    assert res.termination is Termination.ERROR
    assert "infeasible" in res.extra["message"]


def test_default_backend_is_exact_and_backends_lists_fits() -> None:
    model = SetPacking(2, [[0], [1]], [1.0, 2.0])
    names = optsched.backends(model)
    assert set(names) >= {"greedy", "cpsat", "highs", "pyomo", "brute_force", "cvxpy"}
    assert "fast" not in names
    assert optsched.solve(model).backend == names[0]
    assert names[-1] == "greedy"  # heuristics last


def test_compare_table_has_gaps_to_best_bound() -> None:
    model = SetPacking.random(np.random.default_rng(3), n_sets=15, n_elements=10)
    table = optsched.compare(model, ["greedy", "highs", "cpsat"])
    assert list(table["backend"]) == ["greedy", "highs", "cpsat"]
    exact = table[table["backend"] != "greedy"]
    assert (exact["termination"] == "optimal").all()
    assert (exact["gap_to_best_bound"] <= 1e-6).all()
    # greedy's gap is to the exact optimum (brute force), within Lemma 12's sqrt(M) factor
    optimum = optsched.solve(model, "brute_force").objective
    greedy = table.loc[0, "objective"]
    assert table.loc[0, "gap_to_best_bound"] == pytest.approx((optimum - greedy) / max(optimum, 1.0), rel=1e-9, abs=1e-12)
    assert greedy >= optimum / np.sqrt(model.n_elements)


def test_best_bound_is_the_tightest_bound_but_never_beaten_by_a_solution() -> None:
    from optsched.result import Result
    from optsched.solve import best_bound

    model = SetPacking(n_elements=2, sets=[[0], [1]], weights=[1.0, 2.0])
    r = lambda status, obj, bound=None: Result(status, objective=obj, bound=bound, model="set_packing", backend="x")  # noqa: E731
    assert best_bound(model, [r(Termination.FEASIBLE, 2.0, 6.0), r(Termination.TIME_LIMIT, 2.5, 3.5)]) == 3.5
    assert best_bound(model, [r(Termination.OPTIMAL, 3.0), r(Termination.FEASIBLE, 1.0, 4.2)]) == 3.0
    # two "optimal" answers 1e-9 apart: the lower one's claim is beaten by the other's solution
    assert best_bound(model, [r(Termination.OPTIMAL, 3.0 - 1e-9), r(Termination.OPTIMAL, 3.0)]) == 3.0
    assert best_bound(model, [r(Termination.ERROR, 9.0, 9.0), r(Termination.FEASIBLE, 1.0)]) is None


def test_time_limit_reports_status_not_exception() -> None:
    model = load_instance_or_random()
    for backend in ["cpsat", "highs"]:
        res = optsched.solve(model, backend, time_limit=0.01)
        assert res.termination in (Termination.TIME_LIMIT, Termination.OPTIMAL)
        if res.termination is Termination.TIME_LIMIT and res.solution is not None:
            assert model.is_feasible(res.solution)
            assert res.bound >= res.objective - 1e-9


def load_instance_or_random() -> SetPacking:
    return SetPacking.random(np.random.default_rng(11), n_sets=300, n_elements=120, max_size=6, integer_weights=True)


def test_unknown_option_is_rejected() -> None:
    model = SetPacking(2, [[0], [1]], [1.0, 2.0])
    with pytest.raises(ValueError, match="no option 'workers'"):
        optsched.solve(model, "cpsat", workers=2)
    # prepare()'s own parameters are no backend options through solve(): warm_up was taken
    # silently, kind_or_model raised TypeError
    for name in ("warm_up", "kind_or_model"):
        with pytest.raises(ValueError, match=f"no option '{name}'"):
            optsched.solve(model, "cpsat", **{name: False})
    with pytest.raises(ValueError, match="does not solve"):
        optsched.solve(model, "fast")


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(n_elements=0, sets=[[0]], weights=[1]), "n_elements"),
        (dict(n_elements=2, sets=[], weights=[]), "sets"),
        (dict(n_elements=2, sets=[[0, 2]], weights=[1]), r"sets\[0\]"),
        (dict(n_elements=2, sets=[[0, 0]], weights=[1]), r"sets\[0\]"),
        (dict(n_elements=2, sets=[[0.5]], weights=[1]), r"sets\[0\]"),
        (dict(n_elements=2, sets=[[0]], weights=[-1]), "weights"),
        (dict(n_elements=2, sets=[[0]], weights=[float("nan")]), "weights"),
        (dict(n_elements=2, sets=[[0]], weights=[1, 2]), "weights"),
        (dict(n_elements=2, sets="ab", weights=[1]), "sets"),
    ],
)
def test_bad_models_raise_value_error_naming_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        SetPacking(**kwargs)


# --- Delorme instances -----------------------------------------------------------------------
def _known_optima(shared_data) -> dict[str, dict[str, str]]:
    with open(shared_data / "setpacking" / "KNOWN_OPTIMA.csv") as fh:
        return {row["instance"]: row for row in csv.DictReader(fh)}


FAST_DELORME = ["didactic", "pb_100rnd0500", "pb_100rnd0600", "pb_100rnd0700", "pb_100rnd0800", "pb_100rnd0100"]


@pytest.mark.shared_data
@pytest.mark.parametrize("backend", ["cpsat", "highs"])
@pytest.mark.parametrize("name", FAST_DELORME)
def test_delorme_known_optima(shared_data, name: str, backend: str) -> None:
    known = _known_optima(shared_data)[name]
    model = load_instance(shared_data / "setpacking" / f"{name}.dat")
    res = optsched.solve(model, backend, time_limit=120)
    assert res.termination is Termination.OPTIMAL
    assert res.objective == pytest.approx(float(known["highs_value"]))
    if known["listed_value"]:
        assert res.objective == pytest.approx(float(known["listed_value"]))


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.parametrize("backend", ["cpsat", "highs", "pyomo"])
def test_delorme_all_proven_optima(shared_data, backend: str) -> None:
    """Every instance HiGHS proved: the same optimum, proven within 300 s; CP-SAT may stop at
    the limit only on the instances listed in ``CPSAT_UNPROVEN_IN_300S``, and then its answer
    must still bracket the optimum (objective <= optimum <= bound)."""
    unproven = []
    for name, row in _known_optima(shared_data).items():
        if not row["highs_status"].startswith("proven") or not (shared_data / "setpacking" / f"{name}.dat").exists():
            continue
        model = load_instance(shared_data / "setpacking" / f"{name}.dat")
        res = optsched.solve(model, backend, time_limit=300)
        optimum = float(row["highs_value"])
        if backend == "cpsat" and res.termination is Termination.TIME_LIMIT:
            assert res.ok and res.objective <= optimum + 1e-9 <= res.bound + 2e-9, name
            unproven.append(name)
            continue
        assert res.termination is Termination.OPTIMAL, name
        assert res.objective == pytest.approx(optimum), name
    assert set(unproven) <= CPSAT_UNPROVEN_IN_300S, unproven


# CP-SAT (one worker, the default) does not prove these within 300 s on 2 cores (measured
# 2026-11-24; pb_200rnd0300 found 731, the optimum, with bound 1202, and 1200 with two workers),
# though its answers bracket the optimum; HiGHS proves them
CPSAT_UNPROVEN_IN_300S = {"pb_200rnd0300", "pb_200rnd1500", "pb_200rnd1600"}


@pytest.mark.shared_data
def test_delorme_reader_counts(shared_data) -> None:
    model = load_instance(shared_data / "setpacking" / "pb_100rnd0100.dat")
    tokens = (shared_data / "setpacking" / "pb_100rnd0100.dat").read_text().split()
    m, n = int(tokens[0]), int(tokens[1])
    assert (model.n_elements, model.n_sets) == (m, n)
    assert model.weights.sum() == sum(int(t) for t in tokens[2 : 2 + n])


@pytest.mark.shared_data
def test_delorme_row_listing_a_column_twice_names_the_row(shared_data) -> None:
    """It was refused as "sets[6]: repeats an element": the model's 0-based set, not the file's row."""
    from optsched.io.delorme import read_delorme

    text = (shared_data / "setpacking" / "didactic.dat").read_text()
    assert text.count("1 2 3 5 7 8") == 1
    with pytest.raises(ValueError, match="^delorme: row 1 lists column 7 twice$"):
        read_delorme(text.replace("1 2 3 5 7 8", "1 2 3 5 7 7"))


@pytest.mark.parametrize("family, n_elements, field", [
    ((3, [0, 1, 2], [10**11, 2]), 3, "sets: an element lies outside"),  # the audit wrote past its bit words: exit 139
    ((3, [0, 1, 2], [-1, 2]), 3, "sets: an element lies outside"),
    ((4, [0, 2, 3], [1, 0, 2]), 4, "sets: each set's elements must be sorted and distinct"),
    ((4, [0, 2, 3], [1, 1, 2]), 4, "sets: each set's elements must be sorted and distinct"),
    ((4, [0, 2, 4], [0, 1, 2]), 4, "sets: the family's indptr"),
    ((4, [1, 2, 3], [0, 1, 2]), 4, "sets: the family's indptr"),
    ((4, [0, 2, 1, 3], [0, 1, 2]), 4, "sets: the family's indptr"),
    ((4, [0, 2, 3], [0, 1, 2]), 5, "n_elements: 5 given with a family over 4"),
])
def test_a_set_family_given_to_a_model_is_checked(family, n_elements, field) -> None:
    """Probe BM: a SetFamily built directly (its constructor takes any arrays) was taken as built."""
    from optsched.models.set_packing import SetFamily, SetPackingBatch

    m, ptr, idx = family
    fam = SetFamily(m, np.array(ptr, dtype=np.int64), np.array(idx, dtype=np.int64))
    n = len(ptr) - 1
    with pytest.raises(ValueError, match=field):
        SetPacking(n_elements, fam, np.ones(n))
    with pytest.raises(ValueError, match=field):
        SetPackingBatch(n_elements, fam, np.ones((2, n)))
