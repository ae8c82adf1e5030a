"""``float_array``: the same answer for an array of any size, whether its large-array path
(one compiled copy-and-check pass, from ``LARGE`` entries) or min/max check it; numbers beyond
``MAX_MAGNITUDE`` are refused on both paths, naming the field and the number."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.models import BudgetedIP, CapacityProjection, LinearProgram, PseudoWelfare, SetPacking, SetPackingBatch
from optsched.models.validate import LARGE, MAX_MAGNITUDE, float_array, finite_float

SIZES = [1, LARGE - 1, LARGE, 3 * LARGE + 7]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SIZES), st.integers(0, 2**32 - 1),
       st.sampled_from([None, np.nan, np.inf, -np.inf, -0.0, 5e-324, 1e100, -1e100, 1.0000000000000002e100,
                        -2e100, 1.7e308]))
def test_float_array_accepts_and_refuses_alike_at_every_size(size, seed, special):
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1e3, size)
    if special is not None:
        x[rng.integers(size)] = special
    within = bool((np.abs(x) <= MAX_MAGNITUDE).all())
    if within:
        got = float_array("z", x)
        assert np.array_equal(got, x) and got.dtype == np.float64
        assert not got.flags.writeable and not np.shares_memory(got, x)
        assert got.base is None or not got.base.flags.writeable  # no writable array behind it
        x[0] = -got[0] - 1.0  # the model's copy does not follow the caller's array
        assert got[0] != x[0]
    else:
        if np.isnan(x).any():
            why = "contains NaN"
        elif np.isinf(x).any():
            why = "contains an infinite value"
        else:
            why = re.escape(f"holds {float(np.abs(x).max())!r}; numbers may be at most 1e+100 in magnitude")
        with pytest.raises(ValueError, match=f"^z: {why}"):
            float_array("z", x)


@pytest.mark.parametrize("value,ok", [(1e100, True), (-1e100, True), (2e100, False), (-2e100, False),
                                      (10**101, False), (10**400, False)])
def test_scalars_have_the_same_magnitude_limit(value, ok):
    if ok:
        assert finite_float("rho", value) == value
    else:
        with pytest.raises(ValueError, match="^rho: "):
            finite_float("rho", value)
    assert finite_float("time_limit", 1e300, largest=np.inf) == 1e300


def test_infinite_bounds_are_not_magnitudes():
    assert float_array("col_upper", [np.inf, -np.inf, 1e100], allow_inf=True).tolist() == [np.inf, -np.inf, 1e100]
    with pytest.raises(ValueError, match=r"^col_upper: holds 1e\+101"):
        float_array("col_upper", [np.inf, 1e101], allow_inf=True)


@pytest.mark.parametrize("size", SIZES)
def test_float_array_large_path_keeps_shape_order_and_options(size):
    """2-d and non-contiguous input come back as C arrays of their shape; nonnegative and
    allow_inf still decide at every size."""
    x = np.arange(2.0 * size).reshape(size, 2)
    assert np.array_equal(float_array("m", x, ndim=2), x)
    assert np.array_equal(float_array("m", x.T, ndim=2), x.T)
    y = np.ones(size)
    y[-1] = -1.0
    with pytest.raises(ValueError, match="^v: contains a negative value"):
        float_array("v", y, nonnegative=True)
    y[-1] = np.inf
    assert float_array("v", y, allow_inf=True)[-1] == np.inf


def test_a_linear_program_owns_its_sparse_matrices() -> None:
    """A caller's scipy matrices were kept by reference: changing them afterwards changed the
    frozen model (and could put NaN past its validation)."""
    import scipy.sparse as sp

    from optsched.models import LinearProgram

    A = sp.csr_matrix(np.array([[2.0, 3.0]]))
    H = sp.csc_matrix(np.array([[2.0, 0.0], [0.0, 2.0]]))
    model = LinearProgram(c=[-1.0, -1.0], A=A, row_lower=[None], row_upper=[1.0], col_lower=[0, 0], col_upper=[3, 3],
                          hessian=H)
    before = optsched.solve(model, "highs").objective
    A.data[0], H.data[0] = np.nan, -1.0
    assert not np.shares_memory(model.A.data, A.data) and not np.shares_memory(model.hessian.data, H.data)
    assert optsched.solve(model, "highs").objective == before
    with pytest.raises(ValueError):
        model.A.data[0] = 5.0  # read-only, as every array of a model


@pytest.mark.parametrize(("field", "matrix", "words"), [
    ("A", "sparse", "A: contains NaN"),
    ("A", "huge", "A: holds 1e+200"),
    ("hessian", "sparse", "hessian: contains NaN"),
    ("hessian", "huge", "hessian: holds 1e+200"),
    ("hessian", "indefinite", "hessian: not positive semidefinite (least eigenvalue -1)"),
    ("hessian", "indefinite_dense", "hessian: not positive semidefinite (least eigenvalue -1)"),
])
def test_a_linear_programs_sparse_data_is_checked_as_its_dense_data(field: str, matrix: str, words: str) -> None:
    import scipy.sparse as sp

    from optsched.models import LinearProgram

    data = {"sparse": sp.csr_matrix(np.array([[np.nan, 0.0], [0.0, 2.0]])),
            "huge": sp.csr_matrix(np.array([[1e200, 0.0], [0.0, 2.0]])),
            "indefinite": sp.csc_matrix(np.array([[1.0, 0.0], [0.0, -1.0]])),
            "indefinite_dense": [[0.0, 1.0], [1.0, 0.0]]}[matrix]
    kwargs = {"c": [-1.0, -1.0], "A": [[1.0, 1.0]], "row_lower": [None], "row_upper": [1.0], "col_lower": [0, 0],
              "col_upper": [3, 3]}
    if field == "A":
        kwargs.update(A=data, row_lower=[None, None], row_upper=[1.0, 1.0])
    else:
        kwargs["hessian"] = data
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        LinearProgram(**kwargs)


@pytest.mark.parametrize("value", [[2**53 + 1], np.array([2**53 + 1], dtype=np.int64), np.array([2**64 - 1], dtype=np.uint64),
                                   [[1, -(2**60) - 1]]])
def test_an_integer_float64_cannot_hold_is_refused(value: object) -> None:
    """A weight of 2^53 + 1 was silently 2^53 and fit a capacity of 2^53 for every backend."""
    with pytest.raises(ValueError, match="is not exactly a float64 number"):
        float_array("weights", value, ndim=np.ndim(value))


def test_integers_float64_holds_exactly_pass_whatever_their_size() -> None:
    assert float_array("w", [2**53, 2**60, -(2**62), 10**20]).tolist() == [2.0**53, 2.0**60, -(2.0**62), 1e20]
    assert float_array("w", np.array([2**53 + 1.0])).tolist() == [2.0**53]  # a float is taken as given


def _program(**changes: object) -> dict[str, object]:
    return {"c": [1.0] * 3, "A": [[1.0, 0.0, 1.0]], "row_lower": [1.0], "row_upper": [1.0], "col_lower": [0.0] * 3,
            "col_upper": [1.0] * 3, **changes}


def _sparse(kind: str) -> object:
    import scipy.sparse as sp

    return {"negative_index": sp.csr_matrix(([1.0], [-1], [0, 1]), shape=(1, 3)),
            "index_past_n": sp.csr_matrix(([1.0], [5], [0, 1]), shape=(1, 3)),
            "complex": sp.csr_matrix(np.array([[1j, 0, 1]])),
            "uint64_past_2^53": sp.csr_matrix(np.array([[2**63 + 1, 0, 1]], dtype=np.uint64)),
            "boolean": sp.csr_matrix(np.array([[True, False, True]]))}[kind]


@pytest.mark.parametrize(("kind", "words"), [
    ("negative_index", "A: not a valid sparse matrix"), ("index_past_n", "A: not a valid sparse matrix"),
    ("complex", "A: expected numbers"), ("uint64_past_2^53", "A: the integer 9223372036854775809"),
    ("boolean", "A: expected numbers")])
def test_a_sparse_matrix_is_checked_before_it_is_cast(kind: str, words: str) -> None:
    """A column index of -1 was accepted: HiGHS then corrupted the process's heap (``free():
    invalid next size``), and an index of 5 in 3 columns made ``violations`` pass x = 0 on a
    row that needs 1; a complex or a 2^63 + 1 entry was cast (to 1 and 2^63) in silence."""
    from optsched.models import LinearProgram

    with pytest.raises(ValueError, match=re.escape(words)):
        LinearProgram(**_program(A=_sparse(kind)))


@pytest.mark.parametrize(("kind", "make"), [
    ("budgeted_ip", lambda v: BudgetedIP([v], [[1.0]], [1.0])),
    ("capacity_projection", lambda v: CapacityProjection([1.0], [1.0], [v], [1.0])),
    ("linear_program", lambda v: LinearProgram(**_program(c=[v, 1.0, 1.0]))),
])
@pytest.mark.parametrize("value", [np.complex128(3 + 4j), np.timedelta64(1, "s"), np.datetime64("2026-01-01"),
                                   complex(1, 0), object()])
def test_only_real_numbers_pass_inside_lists(kind: str, make, value: object) -> None:
    """numpy casts 3+4j to 3.0 (a ComplexWarning only) and a timedelta to its count: such
    entries inside a list were read as numbers."""
    with pytest.raises(ValueError, match="expected (real )?numbers"):
        make(value)


def test_real_numbers_of_every_type_pass_inside_lists() -> None:
    from fractions import Fraction

    from optsched.models import BudgetedIP

    for value in (3, 3.0, np.float32(3), np.int8(3), np.uint64(3), Fraction(3), np.array(3.0)):
        assert BudgetedIP([value], [[1.0]], [1.0]).values.tolist() == [3.0], value


@pytest.mark.parametrize("make", [
    lambda: SetPacking(2, np.asarray(0), [1.0]),
    lambda: SetPacking(2, [np.asarray(0)], [1.0]),
    lambda: SetPackingBatch(2, np.asarray(0), [[1.0]]),
    lambda: PseudoWelfare(np.asarray("linear"), [1.0], [0.1], [1.0], [1.0], 1.0),
    lambda: _mesh(nodes=np.asarray(0)),
    lambda: _mesh(nodes=[np.asarray(0)]),
    lambda: _mesh(kind=np.asarray("linear")),
    lambda: LinearProgram(**_program(A=[[1, 1, 1], [1]], row_lower=[0, 0],
                                                                  row_upper=[1, 1])),
    lambda: LinearProgram(**_program(sense=np.array(["min", "max"]))),
])
def test_a_list_field_given_a_scalar_or_ragged_rows_is_a_value_error(make) -> None:
    """A 0-d array passed ``hasattr(x, "__len__")`` and then ``len`` raised TypeError; ragged
    rows of A and an array as the sense raised numpy's own ValueError, naming no field."""
    with pytest.raises(ValueError, match=r"^(sets|sets\[0\]|utility|nodes|nodes\[0\]|kind|A|sense): "):
        make()


def _mesh(**changes: object) -> object:
    from optsched.models.mesh import MeshInstance

    data = {"capacity": [[1.0]], "tau": 1.0, "arrival": [0.0], "deadline": [1.0], "rho": [1.0], "nodes": [[0]],
            "kind": ["linear"], "xbar": [1.0], "a": [1.0], "beta": [1.0], **changes}
    return MeshInstance(**data)


@pytest.mark.parametrize("make", [
    lambda: _mesh(capacity=[[5e-324]]),
    lambda: _mesh(capacity=[[1e-90]], beta=[1e11]),
    lambda: PseudoWelfare("linear", [1.0], [1.0], [5e-324], [1.0], 1.0),
])
def test_a_capacity_too_small_for_its_beta_is_refused(make) -> None:
    """beta / C of 1 / 5e-324 is infinite: the offline program's objective was inf (every exact
    backend said error) and its MPS file held inf, which the reader then refused."""
    with pytest.raises(ValueError, match=r"capacity: beta / C of entry 0 is .*, above 1e\+100"):
        make()


def test_a_set_packing_batch_keeps_its_own_sets() -> None:
    from optsched.models import SetPackingBatch

    sets = [np.array([1, 0]), np.array([2])]
    model = SetPackingBatch(3, sets, [[1.0, 2.0]])
    sets[0][:] = 7
    assert [s.tolist() for s in model.sets] == [[0, 1], [2]]
    with pytest.raises(ValueError, match="n_elements: must be <= 1000000"):
        SetPackingBatch(2**53, [[1]], [[1.0]])


@pytest.mark.parametrize("tol", [float("nan"), float("inf"), -1.0, 1.0, "x", None, [1e-9], True])
def test_every_kinds_feasibility_check_takes_only_a_tolerance_in_0_1(tol: object) -> None:
    """tol = NaN or inf made every comparison pass (violations [] for a load of 3 on a capacity
    of 1), -1 refused points inside their bounds, a string or None raised numpy's TypeError."""
    from optsched.models.base import kind_specs

    for kind, spec in sorted(kind_specs().items()):
        model = spec.generate(spec.tiny, np.random.default_rng(0))
        zero = model.zero_solution()
        if zero is None:
            continue
        for check in (model.violations, model.audit, model.is_feasible):
            with pytest.raises(ValueError, match="^tol: "):
                check(zero, tol=tol)
        assert model.is_feasible(zero, tol=0) == model.is_feasible(zero)  # an int 0 is a tolerance of 0


def test_an_objective_counts_only_a_selection_and_a_mask_is_not_dropped() -> None:
    """objective([0, 0]) summed set 0 twice (2.0; violations said "chosen twice"), and a 0/1
    vector [1, 0, 1] was read as the indices 1, 0, 1; a masked array's masked weight of 1e6 was
    taken as a weight (numpy's asarray drops the mask)."""
    packing = SetPacking(weights=[1.0, 2.0, 3.0], sets=[[0], [1], [2]], n_elements=3)
    knapsack = BudgetedIP(values=[4.0, 5.0, 6.0], weights=[[1.0, 1.0, 1.0]], capacity=[3.0])
    for model in (packing, knapsack):
        for chosen in ([0, 0], [1, 0, 1], np.array([2, 2, 2])):
            with pytest.raises(ValueError, match="^solution: index .* is chosen twice"):
                model.objective(chosen)
            assert model.violations(chosen)
        assert model.objective([2, 0]) == model.objective([0, 2])
    with pytest.raises(ValueError, match="^weights: a masked array with masked entries"):
        SetPacking(weights=np.ma.array([1.0, 1e6], mask=[False, True]), sets=[[0], [1]], n_elements=2)
    unmasked = SetPacking(weights=np.ma.array([1.0, 2.0]), sets=[[0], [1]], n_elements=2)
    assert unmasked.objective([0, 1]) == 3.0
    with pytest.raises(ValueError, match="^weights: a masked array with masked entries"):  # rows of a matrix
        BudgetedIP(values=[1.0, 2.0], weights=[np.ma.array([1.0, 9.0], mask=[False, True])], capacity=[3.0])
    with pytest.raises(ValueError, match="^solution: a masked array"):
        CapacityProjection(z=[1.0, 2.0], upper=[1.0, 1.0], group=[0, 0], capacity=[1.0]).objective(
            np.ma.array([0.5, 9.0], mask=[False, True]))


def test_file_functions_name_a_bad_path_or_instance(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """None, bytes or a number as a path, and "1", 1.0 or True as the instance, raised TypeError
    from pathlib or a comparison (True was taken as instance 1)."""
    from optsched.io import load_captures, load_instance, load_instances

    path = SetPacking(weights=[1.0], sets=[[0]], n_elements=1).write(tmp_path / "one.json")
    for bad in (None, b"one.json", 3, ""):
        for call in (load_instances, load_captures, SetPacking(weights=[1.0], sets=[[0]], n_elements=1).write):
            with pytest.raises(ValueError, match=r"^(file|path): "):
                call(bad)
    for bad in ("1", 1.0, True, [1]):
        with pytest.raises(ValueError, match="^instance: expected a whole number"):
            load_instance(path, bad)
    assert load_instance(path, np.int64(1)).n_sets == 1


def test_array_likes_and_0d_arrays_are_numbers_and_compare_needs_a_backend() -> None:
    """A pandas Series was refused as "expected real numbers, got ... (Series)" and a 0-d array
    (what numpy reductions return) as "expected a number"; compare(model, []) gave an empty table
    without columns."""
    import pandas as pd

    model = SetPacking(weights=pd.Series([1.0, 2.0]), sets=[[0], [1]], n_elements=np.array(2))
    assert model.weights.tolist() == [1.0, 2.0] and model.n_elements == 2
    assert finite_float("x", np.array(2.5)) == 2.5
    with pytest.raises(ValueError, match="^x: expected a number"):
        finite_float("x", np.array([2.5]))
    with pytest.raises(ValueError, match="^weights: expected numbers"):
        SetPacking(weights=pd.Series(["a", "b"]), sets=[[0], [1]], n_elements=2)
    with pytest.raises(ValueError, match="^backends: name at least one backend"):
        optsched.compare(model, [])
    assert repr(optsched.prepare(model, "greedy")) == "Prepared('greedy', kind='set_packing', options={}, verify=True)"
    knapsack = BudgetedIP(values=[4.0, 5.0], weights=[[1.0, 1.0]], capacity=[1.0])
    for options in ({"mip_rel_gap": np.array(0.0)}, {"highs_options": {"mip_rel_gap": np.array(0.0)}}):
        assert optsched.solve(knapsack, "highs", **options).objective == 5.0  # backend options take 0-d arrays too
    with pytest.raises(ValueError, match="option 'mip_rel_gap' expects a number"):
        optsched.solve(knapsack, "highs", mip_rel_gap=np.array([0.0]))


def test_a_pyomo_model_never_solved_has_no_solution() -> None:
    """solution_from_pyomo read a model that was never solved as x = 0 (its values are None)."""
    from optsched.models.forms import as_pyomo

    for model in (SetPacking(weights=[1.0, 2.0], sets=[[0], [1]], n_elements=2),
                  BudgetedIP(values=[4.0, 5.0], weights=[[1.0, 1.0]], capacity=[1.0]),
                  CapacityProjection(z=[1.0, 2.0], upper=[1.0, 1.0], group=[0, 0], capacity=[1.0]),
                  LinearProgram(c=[1.0], A=[[1.0]], row_lower=[0.0], row_upper=[1.0], col_lower=[0.0], col_upper=[1.0])):
        with pytest.raises(ValueError, match="^solution: the Pyomo model holds no values"):
            as_pyomo(model).solution_from_pyomo(as_pyomo(model).to_pyomo())
        assert optsched.solve(model, "pyomo").ok


@pytest.mark.parametrize("container", [list, tuple, lambda v: np.array(v, dtype=object)])
def test_none_is_no_bound_in_every_container_and_nan_is_refused(container) -> None:  # type: ignore[no-untyped-def]
    """A numpy object array's None was refused as NaN, where a list's meant "no bound"."""
    lp = LinearProgram(**_program(row_lower=container([None]), col_upper=container([None, 1.0, 2.0])))
    assert lp.row_lower.tolist() == [-np.inf] and lp.col_upper.tolist() == [np.inf, 1.0, 2.0]
    with pytest.raises(ValueError, match="col_upper: contains NaN"):
        LinearProgram(**_program(col_upper=container([float("nan"), 1.0, 2.0])))
