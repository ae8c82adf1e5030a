"""Input checks shared by every model: each raises ``ValueError`` naming the offending field."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

_NUMBER_TYPES = {int, float, np.float64, np.int64}
LARGE = 4096  # float arrays from this many entries are copied and checked by a compiled pass


def refuse_non_numbers(name: str, value: Any, bools: bool = False) -> None:
    """numpy turns ``True`` into 1 and ``"2"`` into 2.0 silently: refuse both (booleans only
    where ``bools``, e.g. a 0/1 mask)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf" and (bools or value.dtype.kind != "b"):
            return
        if value.dtype.kind != "O":
            raise ValueError(f"{name}: expected numbers, got an array of {value.dtype}")
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        value = [value]
    stack = [value]
    while stack:
        items = stack.pop()
        if set(map(type, items)) <= _NUMBER_TYPES:  # the common case, at C speed
            continue
        for item in items:
            if isinstance(item, (list, tuple)):
                stack.append(item)
            elif isinstance(item, (bool, np.bool_)) and not bools:
                raise ValueError(f"{name}: expected numbers, got a boolean ({str(item).lower()})")
            elif isinstance(item, (str, bytes)):
                text = repr(item if len(item) <= 20 else item[:20])
                raise ValueError(f"{name}: expected numbers, got the string {text}")


def _to_array(name: str, value: Any, dtype: type, bools: bool = False) -> np.ndarray:
    if isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{name}: expected numbers, got {type(value).__name__}")
    refuse_non_numbers(name, value, bools)
    try:
        arr = np.asarray(value, dtype=dtype)
    except OverflowError:  # a Python integer beyond the float range
        raise ValueError(f"{name}: contains a number beyond the float range") from None
    except (TypeError, ValueError) as exc:
        why = "rows of different lengths" if "inhomogeneous" in str(exc) else str(exc).split(".")[0]
        raise ValueError(f"{name}: not a rectangular array of numbers ({why})") from None
    return arr


def float_array(
    name: str,
    value: Any,
    *,
    ndim: int = 1,
    shape: Sequence[int | None] | None = None,
    nonnegative: bool = False,
    allow_inf: bool = False,
    min_size: int = 0,
    bools: bool = False,
) -> np.ndarray:
    """A read-only float64 array of ``ndim`` dimensions, finite unless ``allow_inf``;
    booleans are refused unless ``bools``. The array is the model's own copy. From
    ``LARGE`` entries on, a finite array (not ``nonnegative``, not ``allow_inf``) is copied and
    checked in one compiled pass (:mod:`optsched.models.validate_kernel`: 4 us against 20 us
    for numpy's copy and sum at 15,210 entries, the per-slot point of OGASched's ``large``
    preset); anything else, and the messages, come from min and max."""
    arr = _to_array(name, value, np.float64, bools)
    if arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-dimensional array, got {arr.ndim} dimensions")
    if shape is not None:
        for axis, (got, want) in enumerate(zip(arr.shape, shape)):
            if want is not None and got != want:
                raise ValueError(f"{name}: axis {axis} has length {got}, expected {want}")
    if arr.size < min_size:
        raise ValueError(f"{name}: needs at least {min_size} entries")
    if arr.size >= LARGE and not (nonnegative or allow_inf):
        from optsched.models.validate_kernel import copy_finite

        flat, finite = copy_finite(np.ascontiguousarray(arr).reshape(-1))
        if finite:
            flat.setflags(write=False)
            return flat.reshape(arr.shape)
    if arr.size:
        low = arr.min()  # one pass: NaN propagates, -inf is the minimum
        high = arr.max()
        if low != low or high != high:
            raise ValueError(f"{name}: contains NaN")
        if not allow_inf and (low == -np.inf or high == np.inf):
            raise ValueError(f"{name}: contains an infinite value (or a number beyond the float range)")
        if nonnegative and low < 0:
            raise ValueError(f"{name}: contains a negative value")
    arr = np.array(arr, dtype=np.float64, copy=True)
    arr.setflags(write=False)
    return arr


def index_array(name: str, value: Any, *, upper: int, ndim: int = 1) -> np.ndarray:
    """A read-only int64 array of indices in ``[0, upper)``; floats must be whole numbers."""
    arr = _to_array(name, value, np.float64)
    if arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-dimensional array, got {arr.ndim} dimensions")
    if arr.size and (not np.isfinite(arr).all() or (arr != np.round(arr)).any()):
        raise ValueError(f"{name}: indices must be whole numbers")
    if arr.size and (arr.min() < 0 or arr.max() >= upper):  # before the cast: 1e300 has no int64
        raise ValueError(f"{name}: index out of range [0, {upper})")
    out = arr.astype(np.int64)
    out.setflags(write=False)
    return out


def positive_int(name: str, value: Any, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name}: expected an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {value}")
    return int(value)


def finite_float(name: str, value: Any, *, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{name}: must be finite, got {out}")
    if minimum is not None and out < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {out}")
    return out


def check_keys(name: str, data: Any, *, required: Sequence[str], optional: Sequence[str] = ()) -> None:
    """A JSON object has every required key and no unknown one."""
    if not isinstance(data, dict):
        raise ValueError(f"{name}: expected a JSON object, got {type(data).__name__}")
    missing = [k for k in required if k not in data]
    if missing:
        raise ValueError(f"{name}: missing key {missing[0]!r}")
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        raise ValueError(f"{name}: unknown key {unknown[0]!r}")
