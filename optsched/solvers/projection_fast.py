"""Exact Euclidean projection (32) of paper 003 onto the capacity polytope, all groups at once.

Projection (32) splits into one problem per group g (a (node r, resource k) pair of OGASched,
its members the ports l in L_r):

    min  sum_i (y_i - z_i)^2   s.t.  0 <= y_i <= u_i,   sum_{i in g} y_i <= c_g.

KKT with one multiplier rho_g >= 0 per capacity row gives y_i = clip(z_i - rho_g / 2, 0, u_i),
with rho_g = 0 when clip(z, 0, u) already fits and otherwise the unique rho_g > 0 at which the
capacity binds (see ``docs/ogasched_projection.md``). Writing t = rho_g / 2, the group load

    f_g(t) = sum_{i in g} clip(z_i - t, 0, u_i)

is continuous, non-increasing and piecewise linear in t, with breakpoints z_i - u_i (member i
leaves its upper bound) and z_i (member i reaches 0). The kernel

1. sorts every breakpoint of every binding group by (group, value) with ONE ``np.sort`` of
   packed float keys (``_sorted_breakpoints``);
2. evaluates f_g at all breakpoints with segmented cumulative sums, takes the first breakpoint
   where f_g <= c_g and solves the linear piece before it for t (``_bracket``);
3. recomputes t from the exact piece with per-group sums (``_refine``), so the answer inherits
   neither the packing rounding nor that of the long cumulative sums.

No Python loop runs over groups.

This is the paper's "sort-based fast projection" made exact: Algorithm 1 as printed (see
:mod:`optsched.solvers.projection_paper`) assumes the capacity binds and caps only the largest
element.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.result import Result, Status
from optsched.solvers.registry import Backend, register_backend

REFINE_STEPS = 4


def _sorted_breakpoints(
    lower: np.ndarray, zs: np.ndarray, rank: np.ndarray, zmax: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every breakpoint of every binding group sorted by (group, value) with one ``np.sort``.

    A (group, value) pair is packed into one float key rank + value / (2 zmax_rank) in
    [rank, rank + 1/2], whose lowest mantissa bit records the kind (0: z_i - u_i, where the
    slope of f_g drops by 1; 1: z_i, where it rises by 1). Sorting plain floats is several
    times faster than ``np.lexsort`` or ``np.argsort``. Packing moves a value by at most
    ``packing_error`` (the exact piece is recovered in ``_refine``). Returns the approximate
    values and the slope steps (-1/+1), both in sorted order; group g (rank r) occupies the
    2 * count_r consecutive entries after all lower ranks.
    """
    m = zs.size
    keys = np.empty(2 * m)
    scale = (0.5 / zmax)[rank]
    base = rank.astype(np.float64)
    np.multiply(lower, scale, out=keys[:m])
    np.multiply(zs, scale, out=keys[m:])
    keys[:m] += base
    keys[m:] += base
    bits = keys.view(np.uint64)
    bits[:m] &= ~np.uint64(1)
    bits[m:] |= np.uint64(1)
    keys.sort()
    sorted_rank = keys.astype(np.intp)
    values = keys - sorted_rank
    values *= (2.0 * zmax)[sorted_rank]
    step = (bits & np.uint64(1)).view(np.int64)
    step *= 2
    step -= 1
    return values, step


def packing_error(zmax: np.ndarray) -> np.ndarray:
    """Bound on |packed value - value| per rank: the key rank + v / (2 zmax) is rounded to
    half an ulp of a number below rank + 1, the kind bit moves it by one ulp, and the product
    is rounded once more; a factor 4 of headroom on top."""
    rank = np.arange(zmax.size)
    return 4.0 * 2.0 * zmax * ((rank + 1.0) * 2.0**-51 + 2.0**-52)


def _bracket(
    values: np.ndarray, step: np.ndarray, counts: np.ndarray, load: np.ndarray, cap: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """t per binding group from the sorted breakpoints: f_g at every breakpoint by cumulative
    sums, the first breakpoint with f_g <= c_g, and the root of the linear piece before it.
    Returns t and the piece's end points (values[left], values[k])."""
    ends = np.cumsum(2 * counts) - 1
    starts = ends - 2 * counts + 1
    # slope of f just right of each breakpoint: a group has as many -1 as +1 steps, so the
    # plain cumulative sum restarts at 0 in every group (integers: exact)
    slope = np.cumsum(step)
    # f_g(first breakpoint) = load_g, then + slope * gap per step. f_g is 0 at its last
    # breakpoint, so the long cumulative sum carries a rounding drift from group to group,
    # f[end of previous group], which is subtracted.
    steps = np.empty(values.size)
    np.multiply(slope[:-1], np.diff(values), out=steps[1:])
    steps[starts] = load
    f = np.cumsum(steps)
    drift = np.zeros(counts.size)
    drift[1:] = f[ends[:-1]]
    ok = f <= np.repeat(cap + drift, 2 * counts)
    ok[starts] = False  # f_g(first) = load_g > c_g
    ok[ends] = True  # f_g(last) = 0 <= c_g
    ok_pos = np.flatnonzero(ok)
    k = ok_pos[np.searchsorted(ok_pos, starts)]  # first breakpoint with f_g <= c_g
    left = k - 1
    s = slope[left].astype(np.float64)
    f_left = np.where(left == starts, load, f[left] - drift)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(s < 0, values[left] + (f_left - cap) / -s, values[left])
    return np.clip(t, values[left], values[k]), values[left], values[k]


def _newton(
    t: np.ndarray, lower: np.ndarray, zs: np.ndarray, us: np.ndarray, rank: np.ndarray, cap: np.ndarray
) -> np.ndarray:
    """One Newton step on the exact piece at t: with M the members strictly between their
    bounds and U those at their upper bound, f_g(t) = sum_U u_i + sum_M z_i - |M| t on the
    piece, whose root is t = (sum_U u_i + sum_M z_i - c_g) / |M|."""
    tm = t[rank]
    mid = (lower < tm) & (zs > tm)
    a_sum = np.bincount(rank, weights=np.where(mid, zs, np.where(lower >= tm, us, 0.0)), minlength=cap.size)
    n_mid = np.bincount(rank, weights=mid, minlength=cap.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n_mid > 0, np.maximum((a_sum - cap) / n_mid, 0.0), t)


def _refine(
    t: np.ndarray, piece: tuple[np.ndarray, np.ndarray], margin: np.ndarray,
    lower: np.ndarray, zs: np.ndarray, us: np.ndarray, rank: np.ndarray, cap: np.ndarray,
) -> np.ndarray:
    """Newton steps on the exact piece until t is the root of its own piece.

    After the first step, a group is done when both t and the new t lie inside its sorted
    piece shrunk by the packing error ``margin``: no exact breakpoint can lie there, so both
    see the same piece and the new t is its root. Otherwise steps repeat (all groups, at
    most ``REFINE_STEPS``) until t repeats; that happens only when the root lies within the
    packing error of a breakpoint (ties, integral data)."""
    t_new = _newton(t, lower, zs, us, rank, cap)
    lo, hi = piece[0] + margin, piece[1] - margin
    if np.all((t > lo) & (t < hi) & (t_new > lo) & (t_new < hi)):
        return t_new
    for _ in range(REFINE_STEPS - 1):
        t, t_new = t_new, _newton(t_new, lower, zs, us, rank, cap)
        if np.array_equal(t_new, t):
            break
    return t_new


def group_thresholds(z: Any, upper: Any, group: Any, capacity: Any) -> np.ndarray:
    """The per-group threshold t_g = rho_g / 2 >= 0 of the exact projection, shape (G,)."""
    z = np.asarray(z, dtype=np.float64)
    u = np.asarray(upper, dtype=np.float64)
    g = np.asarray(group, dtype=np.intp)
    c = np.asarray(capacity, dtype=np.float64)
    n_groups = c.shape[0]
    y0 = np.clip(z, 0.0, u)
    load = np.bincount(g, weights=y0, minlength=n_groups)
    t = np.zeros(n_groups)
    binding = load > c  # rho_g = 0 for every other group
    active = np.flatnonzero(binding)
    if active.size == 0:
        return t
    rank_of = np.zeros(n_groups, dtype=np.intp)
    rank_of[active] = np.arange(active.size)
    # For t >= 0 only members with y0 > 0 (z > 0 and u > 0) carry load, and such a member
    # behaves like one with upper bound min(u, z) = y0: every breakpoint lies in [0, zmax_g].
    idx = np.flatnonzero(binding[g] & (y0 > 0.0))
    zs, us, rank = z[idx], y0[idx], rank_of[g[idx]]
    lower = zs - us
    zmax = np.zeros(active.size)
    np.maximum.at(zmax, rank, zs)  # > 0: a binding group has a member with y0 > 0
    cap = c[active]
    values, step = _sorted_breakpoints(lower, zs, rank, zmax)
    counts = np.bincount(rank, minlength=active.size)
    t_active, piece_lo, piece_hi = _bracket(values, step, counts, load[active], cap)
    t[active] = _refine(t_active, (piece_lo, piece_hi), packing_error(zmax), lower, zs, us, rank, cap)
    return t


def project_capacity(z: Any, upper: Any, group: Any, capacity: Any) -> np.ndarray:
    """y = argmin ||y - z||^2 s.t. 0 <= y <= upper, sum_{i in group g} y_i <= capacity_g.

    ``z``, ``upper``: float arrays (n,) with upper >= 0; ``group``: int array (n,) in [0, G);
    ``capacity``: float array (G,) >= 0. Exact: y_i = clip(z_i - rho_g / 2, 0, u_i) with the
    smallest rho_g >= 0 that meets capacity g. Inputs are not validated (hot loops); build a
    :class:`~optsched.models.capacity_projection.CapacityProjection` for checked input.
    """
    z = np.asarray(z, dtype=np.float64)
    u = np.asarray(upper, dtype=np.float64)
    t = group_thresholds(z, u, group, capacity)
    return np.clip(z - t[np.asarray(group, dtype=np.intp)], 0.0, u)


@register_backend
class FastProjectionBackend(Backend):
    NAME = "fast"
    DESCRIPTION = "exact sort-based projection (32) of paper 003, vectorised over all groups"
    EXACT = True
    MODELS = frozenset({"capacity_projection"})
    PRIORITY = 0
    OPTIONS: Mapping[str, Any] = {}

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any]) -> Result:
        from optsched.models.capacity_projection import CapacityProjection

        assert isinstance(model, CapacityProjection)
        t = group_thresholds(model.z, model.upper, model.group, model.capacity)
        y = np.clip(model.z - t[model.group], 0.0, model.upper)
        rho = 2.0 * t
        # The Lagrangian dual value at rho is a certified lower bound (weak duality of (33)).
        bound = model.dual_bound(rho)
        return Result(
            status=Status.OPTIMAL,
            model=model.name,
            backend=self.NAME,
            objective=model.objective(y),
            bound=bound,
            solution=y,
            extra={"rho": rho, "kkt_residual": model.kkt_residual(y, rho)},
        )
