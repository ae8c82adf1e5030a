"""Exact Euclidean projection (32) of paper 003 onto the capacity polytope, all groups at once.

Projection (32) splits into one problem per group g (a (node r, resource k) pair of OGASched,
its members the ports l in L_r):

    min  sum_i (y_i - z_i)^2   s.t.  0 <= y_i <= u_i,   sum_{i in g} y_i <= c_g.

KKT with one multiplier rho_g >= 0 per capacity row gives y_i = clip(z_i - rho_g / 2, 0, u_i),
with rho_g = 0 when clip(z, 0, u) already fits and otherwise the unique rho_g > 0 at which the
capacity binds (see ``docs/ogasched_projection.md``). Writing t = rho_g / 2, the group load

    f_g(t) = sum_{i in g} clip(z_i - t, 0, u_i)

is continuous, non-increasing and piecewise linear in t, with breakpoints z_i - u_i (member i
leaves its upper bound) and z_i (member i reaches 0). The compiled kernel
(:mod:`optsched.solvers.projection_kernel`, numba, imported at the first call; its docstring
lists the steps) clips z, sums the group loads, brackets t of each binding group by a piece
of f_g with no breakpoint inside (all breakpoints for small groups, a sort-free selection for
large ones), solves that linear piece for t and refines t on the exact piece. The loop over
groups is compiled code: no Python loop runs over groups.

It replaces the paper's sort-based fast projection, Algorithm 1, which as printed (see
:mod:`optsched.solvers.projection_paper`) assumes the capacity binds and caps only the largest
element: this one is exact and sorts nothing.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.lazy_modules import loaded
from optsched.models.base import Model
from optsched.models.capacity_projection import CapacityProjection
from optsched.result import Result, Termination
from optsched.solvers.certificates import judged
from optsched.solvers.registry import Backend, Option, register_backend

KERNELS = "optsched.solvers.projection_kernel"


def _project(z: Any, upper: Any, group: Any, capacity: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, t, group loads of y) from the compiled kernel; numba is imported at the first call only."""
    return loaded(KERNELS).project(
        np.ascontiguousarray(z, dtype=np.float64),
        np.ascontiguousarray(upper, dtype=np.float64),
        np.ascontiguousarray(group, dtype=np.intp),
        np.ascontiguousarray(capacity, dtype=np.float64),
    )


def group_thresholds(z: Any, upper: Any, group: Any, capacity: Any) -> np.ndarray:
    """The per-group threshold t_g = rho_g / 2 >= 0 of the exact projection, shape (G,)."""
    return _project(z, upper, group, capacity)[1]


def project_capacity(z: Any, upper: Any, group: Any, capacity: Any) -> np.ndarray:
    """y = argmin ||y - z||^2 s.t. 0 <= y <= upper, sum_{i in group g} y_i <= capacity_g.

    ``z``, ``upper``: float arrays (n,) with upper >= 0; ``group``: int array (n,) in [0, G);
    ``capacity``: float array (G,) >= 0. Exact: y_i = clip(z_i - rho_g / 2, 0, u_i) with the
    smallest rho_g >= 0 that meets capacity g. Inputs are not validated (hot loops); build a
    :class:`~optsched.models.capacity_projection.CapacityProjection` for checked input.
    """
    return _project(z, upper, group, capacity)[0]


@register_backend
class FastProjectionBackend(Backend):
    NAME = "fast"
    DESCRIPTION = "exact projection (32) of paper 003: a sort-free breakpoint search per group, all groups in one compiled pass"
    EXACT = True
    COMPILED = True
    MODELS = frozenset({"capacity_projection"})
    PRIORITY = 0
    OPTIONS: Mapping[str, Option] = {}
    BYTES_PER_ELEMENT = 120.0  # about fifteen float arrays of n

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        assert isinstance(model, CapacityProjection)
        y, t, load = _project(model.z, model.upper, model.group, model.capacity)
        # the Lagrangian dual value at rho = 2t is a certified lower bound (weak duality of (33))
        dist2, bound, rounding = loaded(KERNELS).certificate(y, model.z, t, load, model.capacity)
        termination, extra = Termination.OPTIMAL, {}
        if rounding > 1e-9 * max(1.0, dist2):  # loads of 1e12 beside an optimum of 300: summed exactly
            termination, bound = judged(model, dist2, model.dual_bound(2.0 * t), extra,
                                        "y = z - t, good only to eps |z| here, proves")
        extra["rho"] = np.multiply(t, 2.0, out=t)  # t is this call's own array
        return Result(termination, objective=dist2, bound=bound, solution=y, extra=extra)
