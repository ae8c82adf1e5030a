"""Algorithm 1 of paper 003 (OGASched), steps 6-31: the "fast projection" exactly as printed.

Kept to show where it differs from the exact projection (:mod:`optsched.solvers.projection_fast`).
Per group (r, k), with the members sorted by z in descending order (step 7):

* outer pass 1 (steps 10-13): B1 = {}, B3 = L_r;
* inner loop (steps 19-31): rho by (38) (the pseudo-code cites "(39)"; the formula is (38)),

      rho = (2 / |B3|) * (sum_{l in B3} z_l - c + sum_{l in B1} a_l),

  y_l = a_l on B1 and y_l = z_l - rho / 2 on B3 in sorted order; at the first negative y_l the
  tail S = {l, ..., |L_r|} moves from B3 to B2; repeat until no y_l on B3 is negative;
* outer pass 2 (steps 15-18): if y_1 > a_1 for the largest z, B1 = {1}, B3 = L_r \\ {1} and the
  inner loop runs again; otherwise stop. Pass 2 sets y_1 = a_1, so there is never a pass 3.

Where the printout is silent we take the only reading that yields an allocation: members of
B2 are allocated 0 (the definition of B2; the pseudo-code never writes y on B2), S is empty at
the start of each inner pass, and if B3 becomes empty the inner loop stops (rho would divide
by zero). What the printout does not do, and the exact projection must: it never checks
whether the capacity binds (rho can be negative, which inflates every y toward the capacity),
and it caps only the member with the largest z, so with unequal a_l another member can exceed
its a_l. ``solve`` then reports termination ``error`` (infeasible) through its verification.

Option ``repair`` (default off) is Algorithm 1 followed by the cheapest feasibility
restoration a practitioner would add: clip y into the box [0, a], then scale down the members of
any group still above its capacity (``repair_into``); the result is feasible, not the projection.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.result import Result, Termination
from optsched.solvers.registry import Backend, Option, register_backend


def _inner_loop(zs: np.ndarray, a: np.ndarray, c: float, b1: int, y: np.ndarray) -> int:
    """Steps 19-31 on one group sorted by z descending; B1 = the first ``b1`` members
    (0 or 1), B3 = the rest until a tail drops to B2. Writes ``y``; returns inner passes."""
    end = len(zs)  # B3 = [b1, end), B2 = [end, len)
    passes = 0
    while True:
        passes += 1
        y[:b1] = a[:b1]
        y[end:] = 0.0
        if end <= b1:
            return passes
        rho = 2.0 / (end - b1) * (zs[b1:end].sum() - c + a[:b1].sum())  # (38)
        y[b1:end] = zs[b1:end] - rho / 2.0
        negative = np.flatnonzero(y[b1:end] < 0)
        if negative.size == 0:
            return passes
        end = b1 + int(negative[0])


def paper_projection_group(z: np.ndarray, a: np.ndarray, c: float) -> tuple[np.ndarray, int]:
    """Algorithm 1, steps 7-31, for one (r, k): returns y (in the input order) and the
    number of inner passes."""
    order = np.argsort(-z, kind="stable")  # step 7
    zs, az = z[order], a[order]
    ys = np.zeros_like(zs)
    passes = _inner_loop(zs, az, c, 0, ys)  # outer pass 1
    if zs.size and ys[0] > az[0]:  # step 15
        passes += _inner_loop(zs, az, c, 1, ys)  # outer pass 2
    y = np.empty_like(ys)
    y[order] = ys
    return y, passes


def paper_projection(z: Any, upper: Any, group: Any, capacity: Any) -> tuple[np.ndarray, int]:
    """Algorithm 1's projection for every group (a Python loop: this is the reference of the
    printed algorithm, not a fast path). Returns y and the total number of inner passes."""
    z = np.asarray(z, dtype=np.float64)
    a = np.asarray(upper, dtype=np.float64)
    g = np.asarray(group, dtype=np.intp)
    c = np.asarray(capacity, dtype=np.float64)
    y = np.zeros_like(z)
    order = np.argsort(g, kind="stable")
    bounds = np.searchsorted(g[order], np.arange(c.size + 1))
    passes = 0
    for gid in np.flatnonzero(np.diff(bounds)):
        members = order[bounds[gid] : bounds[gid + 1]]
        y[members], p = paper_projection_group(z[members], a[members], float(c[gid]))
        passes += p
    return y, passes


@register_backend
class PaperProjectionBackend(Backend):
    NAME = "paper"
    DESCRIPTION = "Algorithm 1 of paper 003 as printed (not exact: may be infeasible or suboptimal)"
    EXACT = False
    MODELS = frozenset({"capacity_projection"})
    PRIORITY = 0
    OPTIONS: Mapping[str, Option] = {
        "repair": Option(False, bool, "clip the printed algorithm's point into the box and scale down groups above "
                                      "capacity (feasible, not the projection)"),
    }

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        from optsched.models.capacity_projection import CapacityProjection

        assert isinstance(model, CapacityProjection)
        y, passes = paper_projection(model.z, model.upper, model.group, model.capacity)
        extra = {}
        if options["repair"]:
            fixed = repair_into(y, model.upper, model.group, model.capacity)
            extra["repaired"] = bool(np.any(fixed != y))
            y = fixed
        return Result(Termination.FEASIBLE, solution=y, iterations=passes, extra=extra)


def repair_into(y: np.ndarray, upper: np.ndarray, group: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """clip(y, 0, upper), then every group g whose load exceeds c_g scaled by c_g / load_g."""
    y = np.clip(y, 0.0, upper)
    load = np.bincount(group, weights=y, minlength=capacity.shape[0])
    scale = np.where(load > capacity, capacity / np.where(load > 0, load, 1.0), 1.0)
    return y * scale[group]
