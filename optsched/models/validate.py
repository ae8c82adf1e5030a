"""Input checks shared by every model: each raises ``ValueError`` naming the offending field."""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from optsched.lazy_modules import loaded

_NUMBER_TYPES = {int, float, np.float64, np.int64}
# The largest magnitude a model's numbers may have. No scheduling data comes near it, and sums
# and products of such numbers over any instance that fits in memory stay finite (1e308 + 1e308
# overflowed: a budget DP then read its infinite values as "infeasible", numpy warned).
MAX_MAGNITUDE = 1e100
LARGEST_INTEGER = 2**53  # whole numbers beyond are not exact as floats (2^63 overflows int64)
LARGE = 4096  # float arrays from this many entries are copied and checked by a compiled pass


def is_real_number(value: Any) -> bool:
    """A real number (Python's or numpy's), not a boolean: numpy's timedelta64 is an integer
    type and complex numbers cast to floats (dropping the imaginary part with a warning)."""
    if isinstance(value, (bool, np.bool_, np.timedelta64)):
        return False
    if isinstance(value, np.ndarray):  # a 0-d array of a real type is a number (numpy reductions give them)
        return value.ndim == 0 and value.dtype.kind in "iuf"
    return isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, numbers.Real)


def refuse_masked(name: str, value: Any) -> None:
    """numpy's asarray drops a masked array's mask: its masked entries' values would be read."""
    if isinstance(value, np.ma.MaskedArray) and np.ma.getmask(value).any():
        raise ValueError(f"{name}: a masked array with masked entries (fill or drop them first)")


def refuse_non_numbers(name: str, value: Any, bools: bool = False) -> None:
    """numpy turns ``True`` into 1, ``"2"`` into 2.0, 3+4j into 3.0 and a timedelta into its
    count silently: refuse everything but real numbers (booleans only where ``bools``, e.g. a
    0/1 mask; None, which the bound fields read as infinite, is left to the caller)."""
    if not isinstance(value, (np.ndarray, list, tuple)) and hasattr(value, "__array__"):
        value = np.asarray(value)  # a pandas Series or another array-like: its numbers, checked as an array
    if isinstance(value, np.ndarray):
        refuse_masked(name, value)
        if value.dtype.kind in "iuf" or (bools and value.dtype.kind == "b"):
            return
        if value.dtype.kind != "O":
            raise ValueError(f"{name}: expected numbers, got an array of {value.dtype}")
        value = value.reshape(-1).tolist()
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
            elif isinstance(item, np.ndarray):
                refuse_non_numbers(name, item, bools)
            elif isinstance(item, (bool, np.bool_)):
                if not bools:
                    raise ValueError(f"{name}: expected numbers, got a boolean ({str(item).lower()})")
            elif isinstance(item, (str, bytes)):
                text = repr(item if len(item) <= 20 else item[:20])
                raise ValueError(f"{name}: expected numbers, got the string {text}")
            elif item is not None and not is_real_number(item):
                raise ValueError(f"{name}: expected real numbers, got {_shown(item)} ({type(item).__name__})")


def per_capacity(name: str, weight: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """``weight / capacity`` (the cluster weight beta / C_r of (3)), each at most ``MAX_MAGNITUDE``;
    a ValueError naming ``name`` otherwise (a capacity of 5e-324 made the welfare infinite)."""
    with np.errstate(over="ignore", divide="ignore"):
        ratio = weight / capacity
    over = np.flatnonzero(~(ratio <= MAX_MAGNITUDE))
    if over.size:
        j = int(over[0])
        raise ValueError(f"{name}: beta / C of entry {j} is {ratio[j]:.3g}, above {MAX_MAGNITUDE:g} "
                         f"(C = {capacity[j]:.3g} is too small for its beta)")
    return ratio


def items_of(name: str, value: Any, what: str) -> Sequence[Any]:
    """``value`` itself when it is a list, tuple or array of one or more dimensions; a string, a
    mapping, a scalar or a 0-d array (which ``len`` refuses) is a ValueError expecting ``what``."""
    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim > 0):
        return value
    raise ValueError(f"{name}: expected {what}, got {_shown(value)}")


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
    if dtype is np.float64 and not (isinstance(value, np.ndarray) and value.dtype.kind == "f"):
        _exact_integers(name, value, arr)
    return arr


EXACT_INTEGER_LIMIT = 2.0**53


def _exact_integers(name: str, value: Any, arr: np.ndarray) -> None:
    """ValueError for an integer the float64 array does not hold exactly: past 2^53 integers
    lose their last digits (a weight of 2^53 + 1 became 2^53 and fit a capacity of 2^53)."""
    if not arr.size or not np.isfinite(arr).all() or float(np.abs(arr).max()) < EXACT_INTEGER_LIMIT:
        return
    given = np.asarray(value, dtype=object).reshape(-1)
    for original, held in zip(given.tolist(), arr.reshape(-1).tolist()):
        if isinstance(original, (int, np.integer)) and not isinstance(original, bool) and int(original) != int(held):
            raise ValueError(f"{name}: the integer {int(original)} is not exactly a float64 number (past 2^53 an "
                             "integer loses digits); give it as a float if the nearest float is meant")


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
    """A read-only float64 array of ``ndim`` dimensions, finite unless ``allow_inf`` and at
    most ``MAX_MAGNITUDE`` in magnitude (infinite entries aside); booleans are refused unless ``bools``. The array is the model's own copy. From
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
        flat, within = loaded("optsched.models.validate_kernel").copy_within(np.ascontiguousarray(arr).reshape(-1),
                                                                            MAX_MAGNITUDE)
        if within:
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
        if max(-low, high) > MAX_MAGNITUDE:
            largest = np.abs(arr[np.isfinite(arr)]).max(initial=0.0) if allow_inf else max(-low, high)
            if largest > MAX_MAGNITUDE:
                raise ValueError(f"{name}: holds {float(largest)!r}; numbers may be at most {MAX_MAGNITUDE:g} in magnitude")
    arr = np.array(arr, dtype=np.float64, copy=True, order="C")  # C order, as the compiled passes read it
    arr.setflags(write=False)
    return arr


def solution_indices(solution: Any, n: int | None = None) -> np.ndarray:
    """A selection (indices of the chosen items or sets) as a flat int64 array, for a model's
    own math; ``ValueError`` naming the solution for what is not whole numbers (None, a dict,
    booleans, NaN: numpy made -2^63 of a NaN, then an IndexError) and, with ``n``, for an
    index outside [0, n) or chosen twice (``objective``, which summed a repeated index twice and
    read a 0/1 vector as indices; ``violations`` reports those as violations)."""
    if type(solution) is np.ndarray and solution.dtype == np.int64:
        idx = solution.reshape(-1)
    else:
        arr = np.asarray(solution) if not isinstance(solution, (str, bytes)) else np.array([], dtype=object)
        kind = arr.dtype.kind
        if kind not in "iuf" or (kind == "f" and arr.size and not (np.isfinite(arr).all() and (arr == np.round(arr)).all())):
            raise ValueError(f"solution: expected indices (whole numbers), got {_shown(solution)}")
        if kind == "f" and arr.size and np.abs(arr).max() >= 2.0**63:
            raise ValueError("solution: an index is beyond 64 bits")
        idx = arr.astype(np.int64).reshape(-1)
    if n is not None and idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"solution: index out of range [0, {n})")
    if n is not None and idx.size > 1 and not (idx[1:] > idx[:-1]).all():
        ordered = np.sort(idx)
        if (ordered[1:] == ordered[:-1]).any():
            raise ValueError(f"solution: index {int(ordered[1:][ordered[1:] == ordered[:-1]][0])} is chosen twice "
                             "(a selection lists each index once)")
    return idx


def solution_vector(solution: Any, size: int | None = None) -> np.ndarray:
    """A point as a float64 array (its shape kept), for a model's own math; ``ValueError``
    naming the solution for what is not numbers and, with ``size``, for any shape but
    ``(size,)`` (``objective``; ``violations`` reports a wrong shape as a violation)."""
    if isinstance(solution, (str, bytes, dict)) or solution is None:
        raise ValueError(f"solution: expected numbers, got {_shown(solution)}")
    refuse_masked("solution", solution)
    try:
        x = np.asarray(solution, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"solution: expected numbers, got {_shown(solution)}") from None
    if size is not None and x.shape != (size,):
        raise ValueError(f"solution: has shape {x.shape}, expected ({size},)")
    return x


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def index_array(name: str, value: Any, *, upper: int, ndim: int = 1) -> np.ndarray:
    """A read-only int64 array of indices in ``[0, upper)``; floats must be whole numbers."""
    arr = _to_array(name, value, np.float64)
    if arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-dimensional array, got {arr.ndim} dimensions")
    if arr.size and (not np.isfinite(arr).all() or (arr != np.round(arr)).any()):
        raise ValueError(f"{name}: indices must be whole numbers")
    if arr.size and (arr.min() < 0 or arr.max() >= upper):  # before the cast: 1e300 has no int64
        raise ValueError(f"{name}: index out of range [0, {upper})")
    out = arr.astype(np.int64, order="C")
    out.setflags(write=False)
    return out


def binary_array(name: str, value: Any, *, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only bool array of exactly ``shape`` (never reshaped), the caller's own copy, from
    booleans or numbers that are exactly 0 or 1: a decision of chosen / not chosen. numpy's cast
    read NaN, 0.3, -1 and 7 as "chosen", and ``reshape`` turned an (N, B) array into (B, N)."""
    refuse_masked(name, value)  # a masked array's hidden entries are not a decision
    if isinstance(value, np.ndarray) and value.dtype == np.bool_:
        arr = value
    else:
        arr = _to_array(name, value, np.float64, bools=True)
        if arr.size and not ((arr == 0) | (arr == 1)).all():
            raise ValueError(f"{name}: expected 0/1 (or booleans), got a value outside {{0, 1}}")
    if arr.shape != tuple(shape):
        raise ValueError(f"{name}: has shape {arr.shape}, expected {tuple(shape)}")
    out = np.array(arr, dtype=bool, copy=True)
    out.setflags(write=False)
    return out


def flag(name: str, value: Any) -> bool:
    """A boolean, Python's or numpy's: truthiness would read the string "False", or 1, as a
    setting given."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected true or false, got {value!r}")
    return bool(value)


def positive_int(name: str, value: Any, *, minimum: int = 1, maximum: int = LARGEST_INTEGER) -> int:
    """A whole number in [``minimum``, ``maximum``] (by default up to ``LARGEST_INTEGER``: 2^63
    overflowed the int64 arrays sized or indexed by such a number)."""
    if not is_real_number(value) or not isinstance(value, (int, np.integer)):
        if is_real_number(value) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name}: expected an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {value}")
    if value > maximum:
        raise ValueError(f"{name}: must be <= {maximum}, got {value}")
    return int(value)


def finite_float(name: str, value: Any, *, minimum: float | None = None, largest: float = MAX_MAGNITUDE) -> float:
    """A finite float at most ``largest`` in magnitude (``MAX_MAGNITUDE`` for a model's numbers;
    a time limit passes ``math.inf``)."""
    if not is_real_number(value):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    try:
        out = float(value)
    except OverflowError:  # a Python integer beyond the float range
        raise ValueError(f"{name}: must be finite, got a number beyond the float range") from None
    if not math.isfinite(out):
        raise ValueError(f"{name}: must be finite, got {out}")
    if minimum is not None and out < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {out}")
    if abs(out) > largest:
        raise ValueError(f"{name}: is {out!r}; numbers may be at most {largest:g} in magnitude")
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


# The models' own feasibility tolerance: ``violations``' default ``tol``, and what every
# vectorised test of the same rows (brute force's ``evaluate_binary``, the DP's budget) uses.
# A strict float test is not the model's math: 0.1 + 0.2 > 0.3 in floats.
FEASIBILITY_TOL = 1e-9


def floored_slack(tol: float, side: Any, reach: Any = 1.0) -> Any:
    """``tol`` times |side|, and at least ``tol`` times the smaller of 1 and the row's ``reach``
    (the most its variables can sum to): the slack of a continuous kind's row whose point is a
    solver's (its zeros are 1e-12 residuals, so a side of 0 keeps a floor). A floor of 1 alone
    let a job of capacities and workloads of 1e-9 carry 1e-6, a thousand times its capacity."""
    return tol * np.maximum(np.minimum(1.0, reach), np.abs(side))


def row_slack(tol: float, side: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """How far past its side a row may be: ``tol`` times the larger of |side| and the row's own
    ``scale``. Scaling a row scales its slack (a floor of 1 let rows of 2^-40 pass points a whole
    item beyond their capacity). For a 0-1 selection the scale is what the selection sums there,
    sum |a_ij| over the chosen j (an item it does not choose adds nothing: a masked item's weight
    of 1e8 let a load of 10003 pass a capacity of 10001); for continuous points, whose zeros are a
    solver's 1e-12, the row's largest coefficient times the variables' magnitude. At tol = 0
    the slack is 0 everywhere (an infinite side's 0 x inf is NaN; no point passes an infinite
    side anyway)."""
    if not tol:  # 0 x inf is NaN
        return np.zeros(np.broadcast(side, scale).shape)
    return tol * np.maximum(np.abs(side), scale)


def packing_slack(tol: float, side: Any, load: Any, reach: Any, *, whole_units: bool) -> Any:
    """The slack of a packing row ``load <= side``: a solver's point's (:func:`floored_slack`,
    its zeros are residuals) or, with ``whole_units`` (x in {0, xbar}: a selection of whole
    units has no residuals), a 0-1 selection's (:func:`row_slack`). The continuous floor of
    tol x min(1, reach) let units of 1e-9 pass rho = 0."""
    return row_slack(tol, side, load) if whole_units else floored_slack(tol, side, reach)


def not_whole_units(x: np.ndarray, xbar: np.ndarray, tol: float) -> np.ndarray:
    """Where ``x`` is neither 0 nor ``xbar`` (43), each entry at its own unit's scale (a floor of
    1e-9 beside a unit of 5 counted half a unit of 1e-9 as 0)."""
    unit = tol * xbar
    return (np.abs(x) > unit) & (np.abs(x - xbar) > unit)


def scaled_onto_capacity(x: np.ndarray, group: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """``x >= 0`` with every group whose sum is over its capacity scaled down onto it
    (sum_{i : group_i = g} x_i <= c_g): how a solver's nearly feasible point of packing rows is
    made feasible. Only lowers entries. Interior-point answers sit outside such rows by their
    absolute tolerance, which a row of capacity 1e-8 allowed 2.5 times over (Clarabel on
    ``onsocmax_offline``: 2.5e-8 on a capacity of 1e-8, its objective 2.5 times the optimum)."""
    load = np.bincount(group, weights=x, minlength=capacity.size)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # rows not over: never read
        scale = np.where(load > capacity, capacity / load, 1.0)
    return x * scale[group]


def one_of(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` when it is one of the names ``choices`` (a list or a number is refused by name,
    not by a TypeError of the lookup)."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name}: expected one of {', '.join(map(str, choices))}, got {value!r}")
    return value
