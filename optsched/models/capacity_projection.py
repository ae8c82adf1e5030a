"""Projection (32) of paper 003 (OGASched): Euclidean projection onto the capacity polytope.

    min_y  ||y - z||^2   s.t.  0 <= y_i <= u_i  (y <= a, y >= 0),
                               sum_{i : group_i = g} y_i <= c_g   for every group g   (6).

In OGASched a variable is y_(l,r)^k, its upper bound the request a_l^k, and a group is a
(node r, resource k) pair whose members are the ports l in L_r; c_g = c_r^k. The problem splits
into one strictly convex QP per group, so the minimiser is unique.

Solution type: a float64 array y of shape (n,), in the order of ``z``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar

import numpy as np

from optsched.lazy_modules import loaded
from optsched.models.base import (Model, cached_form, frozen_cached_property, register_fuzz, register_generator,
                                  register_model)
from optsched.models.forms import StandardForm, pyomo_values
from optsched.models.validate import float_array, index_array, scaled_onto_capacity, solution_vector

if TYPE_CHECKING:
    import scipy.sparse as sp

# OSQP settings for the cvxpy backend, measured in docs/ogasched_projection.md: with OSQP's
# default initial rho = 0.1, 5 of 41 one-member groups filled exactly to capacity (a degenerate
# vertex) hit 10^6 iterations without converging at 1e-10; starting from rho = 1.0 every
# instance converged (<= a few hundred iterations) and polishing makes the active set exact.
OSQP_OPTIONS: dict[str, Any] = {
    "eps_abs": 1e-10,
    "eps_rel": 1e-10,
    "max_iter": 100_000,
    "rho": 1.0,
    "polishing": True,
}


@register_model
@dataclass(frozen=True, eq=False)
class CapacityProjection(Model):
    """min ||y - z||^2  s.t.  0 <= y <= upper,  sum_{i in group g} y_i <= capacity_g."""

    z: Any
    upper: Any
    group: Any
    capacity: Any

    name: ClassVar[str] = "capacity_projection"
    SIZE_LABEL: ClassVar[str] = "variables"
    maximize: ClassVar[bool] = False
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = ("z", "upper", "group", "capacity")
    is_mip_formulation: ClassVar[bool] = False

    def __post_init__(self) -> None:
        z = float_array("z", self.z, min_size=1)
        n = z.shape[0]
        u = float_array("upper", self.upper, shape=(n,), nonnegative=True)
        c = float_array("capacity", self.capacity, nonnegative=True, min_size=1)
        g = index_array("group", self.group, upper=c.shape[0])
        if g.shape != (n,):
            raise ValueError(f"group: expected {n} entries (one per entry of z), got {g.shape[0]}")
        object.__setattr__(self, "z", z)
        object.__setattr__(self, "upper", u)
        object.__setattr__(self, "group", g)
        object.__setattr__(self, "capacity", c)

    def with_z(self, z: Any) -> "CapacityProjection":
        """The same polytope with another point ``z`` (a policy's next slot): only ``z`` is
        checked, the rest is already valid and is shared (with the cached incidence)."""
        new = object.__new__(CapacityProjection)
        object.__setattr__(new, "z", float_array("z", z, shape=(self.n_vars,)))
        for key in ("upper", "group", "capacity"):
            object.__setattr__(new, key, getattr(self, key))
        if "incidence" in self.__dict__:
            new.__dict__["incidence"] = self.__dict__["incidence"]
        return new

    @property
    def n_vars(self) -> int:
        return int(self.z.shape[0])

    @property
    def n_groups(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def size(self) -> int:
        return self.n_vars

    @frozen_cached_property
    def incidence(self) -> sp.csr_matrix:
        """G x n 0-1 matrix: row g marks the members of group g."""
        import scipy.sparse as sp
        n = self.n_vars
        return sp.csr_matrix(
            (np.ones(n), (self.group, np.arange(n))), shape=(self.n_groups, n)
        )

    # --- the model's own math ------------------------------------------------------------
    def group_load(self, y: Any) -> np.ndarray:
        """sum_{i in g} y_i for every group g, shape (G,)."""
        return np.bincount(self.group, weights=np.asarray(y, dtype=np.float64), minlength=self.n_groups)

    def objective(self, solution: Any) -> float:
        d = solution_vector(solution, self.n_vars) - self.z
        return float(np.square(d, out=d).sum())  # not d @ d: BLAS threads for a 10^4-long dot

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        """Bounds and capacities, each with tolerance ``tol * (1 + |bound|)``."""
        y = solution_vector(solution)
        if y.shape != (self.n_vars,):
            return [f"solution has shape {y.shape}, expected ({self.n_vars},)"]
        if self._check(y, tol)[0]:  # the common case, one compiled pass
            return []
        if not np.isfinite(y).all():
            return ["solution has a non-finite entry"]
        load = self.group_load(y)
        over_cap = load > self.capacity + tol * (1 + self.capacity)
        out = [f"y[{i}] = {y[i]:.6g} < 0" for i in np.flatnonzero(y < -tol)[:3]]
        high = np.flatnonzero(y > self.upper + tol * (1 + self.upper))
        out += [f"y[{i}] = {y[i]:.6g} > upper {self.upper[i]:.6g}" for i in high[:3]]
        out += [f"group {g} load {load[g]:.9g} > capacity {self.capacity[g]:.9g}" for g in np.flatnonzero(over_cap)[:3]]
        return out

    def audit(self, solution: Any, *, tol: float = 1e-9) -> tuple[list[str], float]:
        """``violations`` and ``objective`` in one compiled pass when y is clean."""
        y = solution_vector(solution)
        if y.shape == (self.n_vars,):
            clean, dist2 = self._check(y, tol)
            if clean:
                return [], float(dist2)
        return super().audit(solution, tol=tol)

    def _check(self, y: np.ndarray, tol: float) -> tuple[bool, float]:
        check = loaded("optsched.models.capacity_projection_kernel").check
        return check(y, self.z, self.upper, self.group, self.capacity, float(tol))

    def kkt_residual(self, y: Any, rho: Any) -> float:
        """Largest violation of the KKT conditions (34)-(37) at (y, rho): stationarity with
        lambda, mu >= 0 as implied by (34), complementary slackness of (35), rho >= 0 and
        primal feasibility. Zero (to rounding) exactly at the projection."""
        y = np.asarray(y, dtype=np.float64)
        rho = np.asarray(rho, dtype=np.float64)
        r = 2.0 * (y - self.z) + rho[self.group]  # (34): r = lambda - mu
        at_low, at_up = y <= 0, y >= self.upper
        stat = np.where(
            at_low & at_up,
            0.0,  # u_i = 0: any lambda - mu
            np.where(at_low, np.maximum(-r, 0.0), np.where(at_up, np.maximum(r, 0.0), np.abs(r))),
        )
        load = self.group_load(y)
        slack = rho * (self.capacity - load)
        primal = max(float(np.max(-y, initial=0.0)), float(np.max(y - self.upper, initial=0.0)),
                     float(np.max(load - self.capacity, initial=0.0)))
        return max(float(np.max(stat, initial=0.0)), float(np.max(np.abs(slack), initial=0.0)),
                   float(np.max(-rho, initial=0.0)), primal)

    def dual_bound(self, rho: Any) -> float:
        """Lagrangian dual value of (33) at multipliers rho >= 0: a lower bound on the optimum.

        For fixed rho the Lagrangian is minimised over the box by y = clip(z - rho/2, 0, u). A
        binding group's load - c is summed exactly (``math.fsum``): with loads of 1e12 the rounded
        difference vanished and the "lower bound" came out 4e-6 above the optimum."""
        rho = np.maximum(np.asarray(rho, dtype=np.float64), 0.0)
        y = np.clip(self.z - rho[self.group] / 2.0, 0.0, self.upper)
        d = y - self.z
        active = np.flatnonzero(rho > 0)
        members = self.incidence
        excess = [math.fsum([*y[members.indices[members.indptr[g]:members.indptr[g + 1]]], -self.capacity[g]])
                  for g in active]
        return math.fsum([*(d * d), *(rho[active] * np.asarray(excess, dtype=np.float64))])

    # --- forms ---------------------------------------------------------------------------------
    @cached_form
    def to_standard_form(self) -> StandardForm:
        """||y - z||^2 = 0.5 y'(2I)y - 2 z'y + z'z."""
        import scipy.sparse as sp
        n = self.n_vars
        return StandardForm(
            maximize=False,
            c=-2.0 * self.z,
            A=self.incidence,
            row_lower=np.full(self.n_groups, -np.inf),
            row_upper=np.array(self.capacity),
            col_lower=np.zeros(n),
            col_upper=np.array(self.upper),
            integrality=np.zeros(n, dtype=bool),
            offset=float(self.z @ self.z),
            hessian=sp.identity(n, format="csc") * 2.0,
        )

    def solution_from_vector(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=np.float64).copy()

    def to_pyomo(self) -> Any:
        import pyomo.environ as pyo

        m = pyo.ConcreteModel(name="capacity_projection")
        m.I = pyo.RangeSet(0, self.n_vars - 1)
        m.G = pyo.RangeSet(0, self.n_groups - 1)
        m.y = pyo.Var(m.I, bounds=lambda mm, i: (0.0, float(self.upper[i])))
        members: list[list[int]] = [[] for _ in range(self.n_groups)]
        for i, g in enumerate(self.group.tolist()):
            members[g].append(i)

        def cap(mm: Any, g: int) -> Any:
            if not members[g]:
                return pyo.Constraint.Skip
            return sum(mm.y[i] for i in members[g]) <= float(self.capacity[g])

        m.cap = pyo.Constraint(m.G, rule=cap)
        m.dist = pyo.Objective(
            expr=sum((m.y[i] - float(self.z[i])) ** 2 for i in m.I), sense=pyo.minimize
        )
        return m

    def solution_from_pyomo(self, m: Any) -> np.ndarray:
        return pyomo_values(m.y, self.n_vars)

    def to_cvxpy(self) -> tuple[Any, Callable[[], np.ndarray]]:
        import cvxpy as cp

        y = cp.Variable(self.n_vars)
        constraints = [y >= 0, y <= self.upper, self.incidence @ y <= self.capacity]
        problem = cp.Problem(cp.Minimize(cp.sum_squares(y - self.z)), constraints)
        # clipped into the box and scaled onto the capacities (OSQP's point sits outside by its tolerance)
        return problem, lambda: scaled_onto_capacity(np.clip(np.asarray(y.value, dtype=np.float64), 0.0, self.upper),
                                                     self.group, self.capacity)

    def cvxpy_default_solver(self) -> tuple[str, dict[str, Any]]:
        return "OSQP", dict(OSQP_OPTIONS)


# --- the kind's generator ---
def projection_instance(rng: np.random.Generator, n: int, group_size: int = 10) -> Model:
    """Positive-leaning z (as after a gradient step), unequal caps, 70 % binding capacities."""
    n_groups = max(1, n // group_size)
    z = rng.normal(1.0, 2.0, n)
    upper = rng.uniform(0.0, 3.0, n)
    group = rng.integers(0, n_groups, n)
    load = np.bincount(group, weights=np.clip(z, 0, upper), minlength=n_groups)
    binding = rng.random(n_groups) < 0.7
    binding[0] = True  # a single group always binds
    capacity = np.where(binding, rng.uniform(0.1, 0.9, n_groups) * load, load + 1.0)
    return CapacityProjection(z=z, upper=upper, group=group, capacity=capacity)


# rtol 1e-6: the QP/conic solvers' 1e-10 settings leave about 1e-7 in the objective.
@register_generator("capacity_projection", quick=(100, 1000, 3000), full=(100, 300, 1000, 3000, 10_000, 100_000), tiny=20, rtol=1e-6)
def capacity_projection(size: int, rng: np.random.Generator) -> Model:
    """``size`` variables: positive-leaning z, caps U[0, 3], groups of about 10, 70 % of the
    capacities binding (benchmarks/bench_projection)."""
    return projection_instance(rng, size)


# --- the kind's fuzz builder (tests/test_fuzz.py): degenerate variants ---


@register_fuzz("capacity_projection", *("random", "one_variable", "zero_upper", "zero_capacity", "negative_z", "ties"), examples=100)
def fuzz_capacity_projection(rng: np.random.Generator, variant: str) -> CapacityProjection:
    n = 1 if variant == "one_variable" else int(rng.integers(1, 16))
    groups = int(rng.integers(1, 5))
    scale = float(rng.choice([0.01, 1.0, 100.0]))
    z = rng.normal(rng.uniform(-2, 3), 2.0, n) * scale
    upper = rng.uniform(0.0, 4.0, n) * scale
    upper[rng.random(n) < 0.1] = 0.0
    group = rng.integers(0, groups, n)
    load = np.bincount(group, weights=np.clip(z, 0, upper), minlength=groups)
    capacity = np.where(rng.random(groups) < 0.5, rng.uniform(0, 1, groups) * load, load + rng.uniform(0, 5, groups) * scale)
    if variant == "zero_upper":
        upper = np.zeros(n)
    elif variant == "zero_capacity":
        capacity = np.zeros(groups)
    elif variant == "negative_z":
        z = -np.abs(z)
    elif variant == "ties":
        z, upper = np.round(z / scale) * scale, np.round(upper / scale) * scale
        load = np.bincount(group, weights=np.clip(z, 0, upper), minlength=groups)
        capacity = np.where(rng.random(groups) < 0.5, load, np.floor(load / 2))  # exactly full or binding
    return CapacityProjection(z=z, upper=upper, group=group, capacity=capacity)
