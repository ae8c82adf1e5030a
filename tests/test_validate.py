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
