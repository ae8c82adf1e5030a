"""``float_array``: the same answer for an array of any size, whether its large-array path
(one compiled copy-and-check pass, from ``LARGE`` entries) or min/max check it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.models.validate import LARGE, float_array

SIZES = [1, LARGE - 1, LARGE, 3 * LARGE + 7]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SIZES), st.integers(0, 2**32 - 1),
       st.sampled_from([None, np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.7e308]))
def test_float_array_accepts_and_refuses_alike_at_every_size(size, seed, special):
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1e3, size)
    if special is not None:
        x[rng.integers(size)] = special
    finite = bool(np.isfinite(x).all())
    if finite:
        got = float_array("z", x)
        assert np.array_equal(got, x) and got.dtype == np.float64
        assert not got.flags.writeable and not np.shares_memory(got, x)
        assert got.base is None or not got.base.flags.writeable  # no writable array behind it
        x[0] = -got[0] - 1.0  # the model's copy does not follow the caller's array
        assert got[0] != x[0]
    else:
        why = "contains NaN" if np.isnan(x).any() else "contains an infinite value"
        with pytest.raises(ValueError, match=f"^z: {why}"):
            float_array("z", x)


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
