"""Algorithm 2 of paper 000: one dynamic programme for every budgeted IP P4(s), s = 0..S.

P4(s):  max values . x  s.t.  W x <= capacity,  budget_coeffs . x >= s,  x in {0,1}^n,
        x_e = 0 where mask_e is False                                        (16), (1)

In ESDP, values = Sigma2 (14) and budget_coeffs = Upsilon (13). The DP, Algorithm 2 read plainly
(``../shared/papers/README.md``), is over (s, remaining capacity c, item i):

    V(s, c, n) = 0 if s == 0 else -inf
    V(s, c, i) = max( V(s, c, i+1),  values_i + V(max(s - b_i, 0), c - W[:, i], i+1) )  (23)

the second term only when W[:, i] <= c; P4(s) = V(s, capacity, 0) for every s at once.

Two exact reductions keep the table small without changing any value:
* capacity box: at level i the remaining capacity is at least capacity - (weight of items
  0..i-1) and, beyond the total weight Q_i of items i..n-1, extra capacity changes nothing,
  so V(., c, i) = V(., min(c, Q_i), i). Level i stores only
  ``min(max(capacity - P_i, 0), Q_i) <= c <= min(capacity, Q_i)`` (one cell at level 0);
* budget axis: V(s, ., i) = -inf for s above the total budget coefficient of items i..n-1.
Masked items and items heavier than the capacity are dropped before the DP. The paper's
complexity bound O(n * |S| * prod_k (c_k + 1)) is reported next to the table actually stored.

Three methods fill the same recursion (``budget_dp_kernel``): ``dense`` keeps one value per
(s, capacity cell) and a decision bit; ``pareto`` keeps V(., c, i), a non-increasing step
function of s, as its steps only (Pareto points of budget reached and value), on every cell of
the capacity box; ``reach`` (default) does the same on the cells the recursion actually visits
from the root (about 1 in 7 of the box at the paper's defaults), numbered once per
(weights, capacity) and cached, with its point pools reused between calls.

The AESCB route to the ESCB index P3 (scale, this DP, pick s* by (17)) is in
:mod:`optsched.solvers.escb_aescb`; its pruned pick runs the same fronts (:func:`fill_fronts`).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypeVar

import numpy as np

from optsched.models.base import Model, freeze_arrays
from optsched.models.forms import load_sides, whole_sides
from optsched.result import Result, Termination
from optsched.solvers.registry import Backend, Option, register_backend

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class BudgetFamilySolution:
    """Optimal values and solutions of P4(s) for s = 0..max_budget.

    ``values[s]`` is -inf where P4(s) is infeasible; ``choices[s]`` (bool, length n) is an
    optimal x (all False where infeasible). ``table_cells`` counts the entries stored (dense
    cells, or Pareto points);
    ``paper_cells`` is the paper's n * (S+1) * prod(capacity+1); ``capacity_states`` is the
    largest capacity box of one level.
    """

    values: np.ndarray
    choices: np.ndarray
    table_cells: int
    paper_cells: float
    capacity_states: int


def _int_vector(name: str, value: Any, length: int | None) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != 1 or (length is not None and arr.shape[0] != length):
        raise ValueError(f"{name}: expected a vector of length {length}")
    if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)) or np.any(arr < 0)):
        raise ValueError(f"{name}: entries must be whole numbers >= 0")
    if arr.size and np.any(arr >= 2.0**63):  # the int64 cast would wrap (a false "optimal" from garbage)
        raise ValueError(f"{name}: entries must be below 2^63")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _check(values: Any, weights: Any, capacity: Any, budget_coeffs: Any, max_budget: Any, mask: Any):
    vals = np.asarray(values, dtype=np.float64)
    if vals.ndim != 1:
        raise ValueError("values: expected a vector")
    n = vals.shape[0]
    if not np.all(np.isfinite(vals)):
        raise ValueError("values: entries must be finite")
    w = np.asarray(weights)
    if w.ndim != 2 or w.shape[1] != n:
        raise ValueError(f"weights: expected a (K, {n}) matrix")
    if w.size and (not np.all(np.isfinite(w)) or np.any(w != np.round(w)) or np.any(w < 0)):
        raise ValueError("weights: entries must be whole numbers >= 0")
    if w.size and np.any(w >= 2.0**63):  # the int64 cast would wrap
        raise ValueError("weights: entries must be below 2^63")
    w = np.ascontiguousarray(w, dtype=np.int64)
    cap = _int_vector("capacity", capacity, w.shape[0])
    b = _int_vector("budget_coeffs", budget_coeffs, n)
    if isinstance(max_budget, bool) or not float(max_budget).is_integer() or max_budget < 0:
        raise ValueError(f"max_budget: expected a whole number >= 0, got {max_budget!r}")
    # the table sums weights and budget coefficients in int64: every such sum must fit
    if w.size and np.any(w.sum(axis=1, dtype=np.float64) >= SUM_LIMIT):
        raise ValueError("weights: a row sums to 2^62 or more, beyond the DP's int64 sums")
    if b.sum(dtype=np.float64) >= SUM_LIMIT or max_budget > SUM_LIMIT:
        raise ValueError("budget_coeffs: they (or max_budget) reach 2^62 or more, beyond the DP's int64 sums")
    keep = np.ones(n, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if keep.shape != (n,):
        raise ValueError(f"mask: expected a vector of length {n}")
    return vals, w, cap, b, int(max_budget), keep


# Entries a table may hold: dense cells (1 bit each kept, plus two live levels of 8 bytes) or
# Pareto points (24 bytes each: 2e8 points are 4.8 GB).
DEFAULT_MAX_CELLS = 2e8
SUM_LIMIT = 2.0**62


class TableTooLarge(ValueError):
    """The DP table would exceed the cell limit; ``cells`` is its (approximate) size."""

    def __init__(self, message: str, cells: float) -> None:
        super().__init__(message)
        self.cells = cells


class Stopped(Exception):
    """The table kernels saw their ``stop`` flag set (a deadline, Ctrl-C) and gave up."""


def stop_flag() -> np.ndarray:
    """A fresh ``stop`` flag for the table kernels: int64[1], 0 until someone sets it to 1."""
    return np.zeros(1, dtype=np.int64)


def _table(kernel_fn: Callable[..., Any], *args: Any, stop: np.ndarray | None, too_large: str | None = None,
           cells: float = 0.0) -> Any:
    """``kernel_fn(*args, stop)``: :class:`Stopped` when the flag stopped it; with ``too_large``,
    the kernel's cell-limit ValueError as :class:`TableTooLarge` (that text, then the kernel's)."""
    from optsched.solvers.budget_dp_kernel import STOPPED

    stop = stop_flag() if stop is None else stop
    try:
        return kernel_fn(*args, stop)
    except ValueError as exc:
        if str(exc) == STOPPED:
            raise Stopped(STOPPED) from None
        if too_large is None:
            raise
        raise TableTooLarge(f"{exc} ({too_large})", cells) from None


@dataclass(frozen=True, eq=False)
class FamilyPlan:
    """The reduced table layout of one DP run (cheap to build, before any cell is filled).

    ``dense_cells`` is the size of the dense table (every s of every capacity cell);
    ``capacity_cells`` the number of capacity cells over all levels."""

    n: int
    max_budget: int
    items: np.ndarray
    values: np.ndarray
    budget_coeffs: np.ndarray
    weights: np.ndarray
    capacity: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    stride: np.ndarray
    ncell: np.ndarray
    smax: np.ndarray
    dense_cells: float
    capacity_cells: float
    paper_cells: float

    def __post_init__(self) -> None:
        freeze_arrays(self)  # read-only, as a model's memo keeps it: one argument type for the numba kernels


def _capacity_boxes(w: np.ndarray, cap: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The items kept (those within capacity) and each level's box of residual capacities
    [lo, hi] (levels 0..m, one row each): what the table holds per budget."""
    items = np.flatnonzero(keep & np.all(w <= cap[:, None], axis=0))
    prefix = np.zeros((items.shape[0] + 1, w.shape[0]), dtype=np.int64)
    prefix[1:] = np.cumsum(w[:, items].T, axis=0)
    suffix = prefix[-1] - prefix  # Q_i: weight of items i..m-1
    return items, np.minimum(np.maximum(cap[None, :] - prefix, 0), suffix), np.minimum(cap[None, :], suffix)


def capacity_cells(weights: np.ndarray, capacity: np.ndarray) -> float:
    """The capacity cells of the table for these whole-number weights (K, n) and capacity (K,)
    (what ``max_cells`` bounds), without building it."""
    w = np.asarray(weights, dtype=np.int64)
    items, lo, hi = _capacity_boxes(w, np.asarray(capacity, dtype=np.int64), np.ones(w.shape[1], dtype=bool))
    return float(np.prod((hi - lo + 1).astype(np.float64), axis=1).sum())


def plan_budget_family(
    values: Any,
    weights: Any,
    capacity: Any,
    budget_coeffs: Any,
    max_budget: int,
    mask: Any = None,
    max_cells: float = DEFAULT_MAX_CELLS,
) -> FamilyPlan:
    """Validate the data and lay out the reduced table (capacity boxes, budget axis) per level.

    Raises :class:`TableTooLarge` (a ValueError) when the capacity cells alone exceed ``max_cells``."""
    vals, w, cap, b, S, keep = _check(values, weights, capacity, budget_coeffs, max_budget, mask)
    n, K = vals.shape[0], w.shape[0]
    items, lo, hi = _capacity_boxes(w, cap, keep)
    wa = np.ascontiguousarray(w[:, items])
    m = items.shape[0]
    dims = hi - lo + 1
    ba = np.ascontiguousarray(b[items])
    b_suffix = np.concatenate([np.cumsum(ba[::-1])[::-1], [0]]).astype(np.int64)
    smax = np.minimum(b_suffix, S)
    per_level = np.prod(dims.astype(np.float64), axis=1)
    capacity_cells = float(per_level.sum())
    require_capacity_cells(capacity_cells, max_cells)
    stride = np.ones((m + 1, K), dtype=np.int64)
    for k in range(K - 2, -1, -1):
        stride[:, k] = stride[:, k + 1] * dims[:, k + 1]
    return FamilyPlan(
        n=n,
        max_budget=S,
        items=items,
        values=np.ascontiguousarray(vals[items]),
        budget_coeffs=ba,
        weights=wa,
        capacity=cap.copy(),  # made read-only with the plan: never the caller's array
        lo=lo,
        hi=hi,
        stride=stride,
        ncell=np.prod(dims, axis=1).astype(np.int64),
        smax=smax,
        dense_cells=float(np.sum(per_level[:-1] * (smax[:-1] + 1))),  # level n is the constant base
        capacity_cells=capacity_cells,
        paper_cells=float(n * (S + 1) * np.prod(cap.astype(np.float64) + 1)),
    )


def _run_dense(plan: FamilyPlan, max_cells: float, stop: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, int]:
    """The table of (23) with one entry per (s, capacity cell, item) and one decision bit each."""
    from optsched.solvers import budget_dp_kernel as kernel

    if plan.dense_cells > max_cells:
        raise TableTooLarge(
            f"dp: dense table of {plan.dense_cells:.3g} cells exceeds the limit of {max_cells:.3g}", plan.dense_cells
        )
    level_cells = plan.ncell * (plan.smax + 1)
    dec_off = np.zeros(plan.ncell.shape[0], dtype=np.int64)
    dec_off[1:] = np.cumsum(level_cells[:-1])
    total = int(dec_off[-1])
    root, dec = _table(kernel.family_table, plan.values, plan.budget_coeffs, plan.weights, plan.lo, plan.hi,
                       plan.stride, plan.ncell, plan.smax, dec_off, total, int(level_cells.max()), stop=stop)
    chosen = kernel.backtrack(
        root, plan.budget_coeffs, plan.weights, plan.capacity, plan.lo, plan.hi, plan.stride,
        plan.smax, dec_off, dec,
    )
    S = plan.max_budget
    values = np.full(S + 1, -np.inf)
    values[: root.shape[0]] = root
    choices = np.zeros((S + 1, chosen.shape[1]), dtype=bool)
    choices[: root.shape[0]] = chosen
    return values, choices, total


def _run_pareto(plan: FamilyPlan, max_cells: float, stop: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, int]:
    """The same recursion on step functions: one entry per step of V(., c, i), not per s."""
    from optsched.solvers import budget_dp_kernel as kernel

    pu, pv, pref, root_start, root_len, used = _table(
        kernel.pareto_table, plan.values, plan.budget_coeffs, plan.weights, plan.lo, plan.hi, plan.stride,
        plan.ncell, plan.max_budget, int(min(max_cells, 2**62)), stop=stop, too_large=f"{max_cells:.3g}",
        cells=max_cells)
    values, choices = kernel.pareto_backtrack(
        plan.items.shape[0], plan.max_budget, pu, pv, pref, root_start, root_len
    )
    return values, choices, int(used)


# --- reusable buffers ---------------------------------------------------------------------
# One DP per ESDP slot used to allocate its pools afresh (tens of MB), and about half of the
# run's CPU time was the kernel faulting those pages in. The buffers below are kept per thread
# and reused while they stay under _KEEP_BYTES; bigger ones live for one call only.
_KEEP_BYTES = 64 * 2**20
_BUFFERS = threading.local()


def buffer(name: str, size: int, dtype: Any) -> np.ndarray:
    """A scratch array of at least ``size`` entries (contents undefined), reused across calls."""
    cache = _BUFFERS.__dict__
    arr = cache.get(name)
    if arr is None or arr.shape[0] < size:
        arr = np.empty(max(size, 1024), dtype=dtype)
        if arr.nbytes <= _KEEP_BYTES:
            cache[name] = arr
    return arr


def _keep(name: str, arr: np.ndarray) -> None:
    """Keep a pool the kernel grew (if it is not too big) for the next call."""
    if arr.nbytes <= _KEEP_BYTES:
        _BUFFERS.__dict__[name] = arr


# Visited-cell structures by (weights of the kept items, capacity): ESDP sees few distinct
# (arrival mask, residual capacity) pairs (91 in the 2000 slots of the default run), while the
# values change every slot.
_VISITED_CACHE_SIZE = 64  # entries
_VISITED_CACHE_CELLS = 2_000_000  # positions over all entries (16 bytes each)


def visited_cells(plan: FamilyPlan, stop: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(level_start, child_skip, child_take, count): the capacity cells the recursion visits
    from the root, numbered level by level (``visit_cells``); cached per thread."""
    from optsched.solvers import budget_dp_kernel as kernel

    key = (plan.weights.shape, plan.weights.tobytes(), plan.capacity.tobytes())
    cache = _BUFFERS.__dict__.setdefault("visited", {})
    hit = cache.pop(key, None)
    if hit is not None:
        cache[key] = hit  # most recently used last
        return hit
    box = int(plan.ncell.sum())
    pos = buffer("pos", box, np.int32)  # each level's part set to -1 by the kernel, as it goes
    K = plan.weights.shape[0]
    cvec = buffer("cvec", box * K, np.int64)[: box * K].reshape(box, K)
    level_start = np.empty(plan.ncell.shape[0] + 1, dtype=np.int64)
    child_skip, child_take = buffer("child_skip", box, np.int64), buffer("child_take", box, np.int64)
    count = int(_table(kernel.visit_cells, plan.weights, plan.lo, plan.hi, plan.stride, plan.ncell, plan.capacity,
                       pos, cvec, level_start, child_skip, child_take, stop=stop))
    if count > _VISITED_CACHE_CELLS // 4:
        return level_start, child_skip, child_take, count
    out = (level_start, child_skip[:count].copy(), child_take[:count].copy(), count)
    cache[key] = out
    while len(cache) > _VISITED_CACHE_SIZE or sum(v[-1] for v in cache.values()) > _VISITED_CACHE_CELLS:
        del cache[next(iter(cache))]
    return out


def fill_fronts(plan: FamilyPlan, max_cells: float, visited, prune: bool, threshold: float,
                stop: np.ndarray | None = None):
    from optsched.solvers import budget_dp_kernel as kernel

    level_start, child_skip, child_take, count = visited
    if prune:
        bu, bv = buffer("bu", count, np.int64), buffer("bv", count, np.float64)
        kernel.prefix_bounds(plan.budget_coeffs, plan.values, level_start, child_skip, child_take, bu, bv)
    else:
        bu, bv = np.zeros(1, dtype=np.int64), np.zeros(1)
    guess = int(min(max(1024, 16 * count), max_cells))
    pools = (buffer("pu", guess, np.int64), buffer("pv", guess, np.float64), buffer("pref", guess, np.int64))
    pu, pv, pref, root_start, root_len, used = _table(
        kernel.fill_fronts, plan.values, plan.budget_coeffs, plan.max_budget, int(min(max_cells, 2**62)), level_start,
        child_skip, child_take, *pools, buffer("start", count, np.int64), buffer("length", count, np.int64),
        prune, threshold, bu, bv, stop=stop, too_large=f"{max_cells:.3g}", cells=max_cells)
    for name, arr in zip(("pu", "pv", "pref"), (pu, pv, pref)):
        _keep(name, arr)
    return pu, pv, pref, root_start, root_len, used


def _run_reach(plan: FamilyPlan, max_cells: float, stop: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, int]:
    """``pareto`` on the visited cells only, with reused pools (the default)."""
    from optsched.solvers import budget_dp_kernel as kernel

    pu, pv, pref, root_start, root_len, used = fill_fronts(plan, max_cells, visited_cells(plan, stop), False, 0.0, stop)
    values, choices = kernel.pareto_backtrack(plan.items.shape[0], plan.max_budget, pu, pv, pref, root_start, root_len)
    return values, choices, int(used)


# method name -> runner(plan, max_cells, stop) -> (values, choices over the kept items, cells used)
DP_METHODS: dict[str, Callable[[FamilyPlan, float, np.ndarray | None], tuple[np.ndarray, np.ndarray, int]]] = {
    "reach": _run_reach,
    "pareto": _run_pareto,
    "dense": _run_dense,
}
DEFAULT_METHOD = "reach"


def require_capacity_cells(capacity_cells: float, max_cells: float) -> None:
    """:class:`TableTooLarge` when a plan's capacity cells exceed ``max_cells``."""
    if capacity_cells > max_cells:
        raise TableTooLarge(f"dp: {capacity_cells:.3g} capacity cells exceed the limit of {max_cells:.3g}", capacity_cells)


def run_plan(plan: FamilyPlan, method: str = DEFAULT_METHOD, max_cells: float = DEFAULT_MAX_CELLS, *,
             stop: np.ndarray | None = None) -> BudgetFamilySolution:
    """Fill the table of ``plan`` by ``method`` (numba kernels) and backtrack every budget's x;
    :class:`Stopped` once ``stop`` (:func:`stop_flag`) is set."""
    if method not in DP_METHODS:
        raise ValueError(f"method: unknown DP method {method!r} (known: {', '.join(DP_METHODS)})")
    values, chosen, cells = DP_METHODS[method](plan, max_cells, stop)
    choices = np.zeros((plan.max_budget + 1, plan.n), dtype=bool)
    choices[:, plan.items] = chosen
    return BudgetFamilySolution(
        values=values,
        choices=choices,
        table_cells=cells,
        paper_cells=plan.paper_cells,
        capacity_states=int(plan.ncell.max()),
    )


def solve_budget_family(
    values: Any,
    weights: Any,
    capacity: Any,
    budget_coeffs: Any,
    max_budget: int,
    mask: Any = None,
    max_cells: float = DEFAULT_MAX_CELLS,
    method: str = DEFAULT_METHOD,
    *,
    stop: np.ndarray | None = None,
) -> BudgetFamilySolution:
    """Solve P4(s) for every s = 0..max_budget with one table (Algorithm 2, eq. (23)).

    values: finite floats (n,); weights: whole numbers >= 0 (K, n); capacity (K,) and
    budget_coeffs (n,): whole numbers >= 0; mask: optional bool (n,), False = item excluded.
    ``method``: "reach" (default: one entry per step of V(., c, i), on the capacity cells the
    recursion visits from the root), "pareto" (the same on every cell of the capacity box) or
    "dense" (one entry per s, the table as printed).
    Raises ValueError naming the field on bad input, :class:`TableTooLarge` above ``max_cells``,
    :class:`Stopped` once ``stop`` (:func:`stop_flag`) is set.
    """
    plan = plan_budget_family(values, weights, capacity, budget_coeffs, max_budget, mask, max_cells)
    return run_plan(plan, method, max_cells, stop=stop)


# A table runs beside the main thread, where Ctrl-C stops it at once, when it has more than
# these capacity cells (visited positions: 200-230 ns each measured, so 5e6 is about a second)
# or dense cells (capacity cells x budgets, what the dense method fills: 5 ns each, 1.6 s at
# 3e8). Below both, Ctrl-C waits for its end (about a second at most), and ESDP's slots (1e5 and
# 7e7) pay no thread hop (190 us a slot).
HOP_CAPACITY_CELLS = 5e6
HOP_DENSE_CELLS = 2e8


def run_stoppable(fill: Callable[[np.ndarray], T], time_limit: float | None, *, capacity_cells: float,
                  dense_cells: float) -> T:
    """``fill(stop)`` with a fresh :func:`stop_flag` that a timer sets after ``time_limit``
    seconds (the kernels run without the GIL, so the timer's thread gets through on any thread);
    :class:`Stopped` at the deadline. A table above :data:`HOP_CAPACITY_CELLS` or
    :data:`HOP_DENSE_CELLS` runs beside the main thread, where Ctrl-C sets the flag too."""
    from optsched.solvers.interrupt import interruptible

    stop = stop_flag()

    def halt() -> None:
        stop[0] = 1

    # a limit past what a wait can hold (1e300 s: OverflowError in the timer's thread) never comes
    timer = threading.Timer(time_limit, halt) if time_limit is not None and time_limit < threading.TIMEOUT_MAX else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        if capacity_cells > HOP_CAPACITY_CELLS or dense_cells > HOP_DENSE_CELLS:
            return interruptible(lambda: fill(stop), halt)
        return fill(stop)
    finally:
        if timer is not None:
            timer.cancel()


def _whole(*arrays: np.ndarray) -> bool:
    return all(bool(np.all(a == np.round(a))) for a in arrays)


def _family_result(model: Any, fam: BudgetFamilySolution) -> dict[str, Any]:
    """Result fields for a ``budget_family``: every member, objective at the designated budget."""
    finite = np.isfinite(fam.values)
    value = float(fam.values[model.budget])
    if not finite[model.budget]:  # the designated member P4(budget) is infeasible
        return {"termination": Termination.INFEASIBLE, "values": [float(v) if f else None for v, f in zip(fam.values, finite)]}
    return {
        "termination": Termination.OPTIMAL,
        "objective": value,
        "bound": value,
        "solution": tuple(np.flatnonzero(fam.choices[s]) if finite[s] else None for s in range(len(finite))),
        "values": [float(v) if f else None for v, f in zip(fam.values, finite)],
    }


def _member_result(model: Any, fam: BudgetFamilySolution) -> dict[str, Any]:
    """Result fields for one ``budgeted_ip``: the member at its own budget (the table's last s)."""
    value = float(fam.values[-1])
    if not np.isfinite(value):
        return {"termination": Termination.INFEASIBLE, "objective": None, "bound": None, "solution": None}
    return {"termination": Termination.OPTIMAL, "objective": value, "bound": value,
            "solution": np.flatnonzero(fam.choices[-1])}


def _member_budget(model: Any) -> int:
    """The table's last s for one ``budgeted_ip``: the least whole s the model's budget row
    accepts (its budget less the row's slack, ``BudgetedIP.budget_slack``: a budget of 2 + 1e-12
    is met by 2), or one past the most the budget coefficients can sum to when the budget is
    beyond it (every such budget is unreachable alike; a budget of 2^63 overflowed the table's
    int64 budget axis)."""
    reachable = float(np.sum(model.budget_coeffs))
    least = max(0, math.ceil(model.budget - model.budget_slack()))
    return int(least) if least <= reachable else int(min(reachable, SUM_LIMIT)) + 1


# model kind -> (largest budget the table needs, how to read the result back)
_DP_VIEWS: dict[str, tuple[Callable[[Any], int], Callable[[Any, BudgetFamilySolution], dict[str, Any]]]] = {
    "budget_family": (lambda m: m.max_budget, _family_result),
    "budgeted_ip": (_member_budget, _member_result),
}


@register_backend
class BudgetDpBackend(Backend):
    """``dp``: Algorithm 2 for a ``budget_family`` (every s at once) or one ``budgeted_ip``."""

    NAME = "dp"
    DESCRIPTION = "Algorithm 2 of paper 000: one DP table gives P4(s) for every budget s (integral data)"
    EXACT = True
    COMPILED = True
    SUPPORTS_TIME_LIMIT = True  # the table kernels poll a stop flag once per cell
    MODELS = frozenset(_DP_VIEWS)
    PRIORITY = 25  # after CP-SAT and HiGHS for one budget; first for a family
    REQUIRES = ("numba",)
    OPTIONS: Mapping[str, Option] = {
        "max_table_cells": Option(DEFAULT_MAX_CELLS, float, "largest DP table (cells or Pareto points) allowed",
                                  minimum=1.0),
        "method": Option(DEFAULT_METHOD, str, "how the table of (23) is filled", choices=tuple(DP_METHODS)),
    }

    def _plan(self, model: Model) -> FamilyPlan:
        """The model's plan, laid out once whatever the limit (``fits_with`` and ``run`` hold its
        capacity cells to ``max_table_cells``)."""
        m: Any = model
        top, _ = _DP_VIEWS[model.name]
        # the most whole load each capacity row accepts at the model's tolerance (load_sides,
        # whole_sides: 1e9 + 1 on a capacity of 1e9); the capacity itself below 1e9
        capacity = whole_sides(-np.inf, load_sides(-np.inf, m.capacity)[1])[1]
        return model.memo("dp_plan", lambda: plan_budget_family(
            m.values, m.weights, capacity, m.budget_coeffs, top(m), m.mask, math.inf))

    def memory_bytes(self, model: Model) -> float:
        m: Any = model
        top, _ = _DP_VIEWS[model.name]
        budgets = min(float(top(m)), float(np.sum(m.budget_coeffs))) + 1  # the table stops at what items reach
        return budgets * (m.values.shape[0] + 8)  # every budget's value and choice (the table is capped apart)

    def fits_instance(self, model: Model) -> str | None:
        m: Any = model
        if not _whole(m.weights, m.capacity, m.budget_coeffs):
            return "dp: weights, capacity and budget_coeffs must be whole numbers"
        try:
            self._plan(model)  # the table's size is fits_with's: its limit is an option
        except ValueError as exc:  # whole numbers the int64 table cannot hold (from 2^63)
            return f"dp: {exc}"
        return None

    def fits_with(self, model: Model, options: Mapping[str, Any]) -> str | None:
        """The table within ``max_table_cells``: checked at the default limit in fits_instance,
        the option could not raise it (3e8 cells were refused under max_table_cells=1e10)."""
        try:
            require_capacity_cells(self._plan(model).capacity_cells, float(options["max_table_cells"]))
        except TableTooLarge as exc:
            return f"{exc} (max_table_cells)"
        return None

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        _, read_back = _DP_VIEWS[model.name]
        limit = float(options["max_table_cells"])
        try:
            plan = self._plan(model)
            require_capacity_cells(plan.capacity_cells, limit)
            fam = run_stoppable(lambda stop: run_plan(plan, options["method"], limit, stop=stop), time_limit,
                                capacity_cells=plan.capacity_cells, dense_cells=plan.dense_cells)
        except TableTooLarge as exc:
            return Result(Termination.ERROR, extra={"message": f"{exc} (max_table_cells)"})
        except Stopped:
            return Result(Termination.TIME_LIMIT, extra={"message": f"dp: the table was not filled within the time "
                                                                    f"limit of {time_limit:g} s"})
        fields = read_back(model, fam)
        extra = {"table_cells": fam.table_cells, "paper_cells": fam.paper_cells}
        if "values" in fields:
            extra["values"] = fields.pop("values")
        return Result(iterations=fam.table_cells, extra=extra, **fields)
