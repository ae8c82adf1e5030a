"""The offline optimum of P1 (paper 002, Section II-C) with every job known in advance.

Two model kinds over one :class:`~optsched.models.mesh.MeshInstance`; the solution is the
pair vector x (one entry per (n, r), r in R_n, in pair order):

``onsocmax_offline``           P1 as printed: max sum f_nr(x_nr) + beta_nr x_nr / C_r
                               s.t. (4) sum_r x_nr <= rho_n, (6) sum_n x_nr <= C_r,
                               (7) 0 <= x_nr <= xbar_nr ((5) holds by construction).
                               Concave, so the ``cvxpy`` form (Clarabel; log and sqrt
                               through exponential and second-order cones) is exact.
``onsocmax_offline_integral``  Section III-D: (7) becomes x_nr in {0, xbar_nr} (43). With
                               x_nr = xbar_nr z_nr the welfare is linear in z, so this is
                               a 0-1 multi-dimensional knapsack: a MILP (``highs``), or
                               ``brute_force`` on tiny instances.

:func:`dual_bound` evaluates P2's objective (Proposition 1) at any multipliers mu, lambda
>= 0: by weak duality an upper bound on P1 that does not trust any solver. With the
multipliers the ``cvxpy`` backend returns, it certifies that optimum
(:func:`optsched.onsocmax.offline.certified_optimum`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

import numpy as np

from optsched.models.base import (Model, cached_form, frozen_cached_property, register_fuzz, register_generator,
                                  register_model)
from optsched.models.forms import StandardForm
from optsched.models import utilities
from optsched.models.mesh import MeshGenerator, MeshInstance
from optsched.models.pseudo_welfare import random_kind
from optsched.models.validate import FEASIBILITY_TOL, not_whole_units, row_slack, scaled_onto_capacity, solution_vector

if TYPE_CHECKING:
    import scipy.sparse as sp

CLARABEL_TOLERANCES = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 500}


@dataclass(frozen=True, eq=False)
class MeshWelfare(Model):
    """The data and math P1 and its non-partitionable variant share: a mesh instance. JSON: the
    keys of a mesh instance (``capacity, tau, arrival, deadline, rho, nodes, kind, xbar, a, beta``)."""

    instance: MeshInstance

    SIZE_LABEL: ClassVar[str] = "(job, unit) pairs"
    maximize: ClassVar[bool] = True
    WHOLE_UNITS: ClassVar[bool] = False  # x_nr in {0, xbar_nr}: rows held as 0-1 selections (pair_violations)

    def __post_init__(self) -> None:
        if not isinstance(self.instance, MeshInstance):
            raise ValueError(f"instance: expected a MeshInstance, got {type(self.instance).__name__}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "MeshWelfare":
        return cls(MeshInstance.from_dict(data))

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.name, **self.instance.to_dict()}

    @property
    def size(self) -> int:
        return self.instance.n_pairs

    # --- the model's own math --------------------------------------------------------------
    def zero_solution(self) -> np.ndarray:
        return np.zeros(self.instance.n_pairs)

    def _vector(self, solution: Any) -> np.ndarray | None:
        x = solution_vector(solution).reshape(-1)
        return x if x.size == self.instance.n_pairs else None

    def objective(self, solution: Any) -> float:
        x = self._vector(solution)
        if x is None:
            raise ValueError(f"solution: expected {self.instance.n_pairs} pair workloads")
        return self.instance.welfare(x)

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        x = self._vector(solution)
        if x is None:
            return [f"solution has {np.size(solution)} entries, expected {self.instance.n_pairs}"]
        return self.instance.pair_violations(x, tol=tol, whole_units=self.WHOLE_UNITS)

    # --- incidence ---------------------------------------------------------------------------
    @frozen_cached_property
    def job_matrix(self) -> sp.csr_matrix:
        """N x P: row n sums job n's pairs (constraint (4))."""
        import scipy.sparse as sp
        inst = self.instance
        return sp.csr_matrix((np.ones(inst.n_pairs), (inst.pair_job, np.arange(inst.n_pairs))), shape=(inst.n_jobs, inst.n_pairs))

    @frozen_cached_property
    def used_units(self) -> np.ndarray:
        return np.unique(self.instance.pair_unit)

    @frozen_cached_property
    def unit_matrix(self) -> sp.csr_matrix:
        """U x P over the units some job can use: row u sums the pairs on unit used_units[u] (6)."""
        import scipy.sparse as sp
        inst = self.instance
        row = np.searchsorted(self.used_units, inst.pair_unit)
        return sp.csr_matrix((np.ones(inst.n_pairs), (row, np.arange(inst.n_pairs))), shape=(self.used_units.size, inst.n_pairs))


@register_model
@dataclass(frozen=True, eq=False)
class OfflineWelfare(MeshWelfare):
    """P1 over a mesh instance (fractional workloads): a convex program."""

    name: ClassVar[str] = "onsocmax_offline"

    # --- cvxpy form ----------------------------------------------------------------------------
    @frozen_cached_property
    def upper(self) -> np.ndarray:
        """:func:`implied_upper`: the box of the cvxpy form and of :func:`dual_bound`."""
        return implied_upper(self.instance)

    @frozen_cached_property
    def binding_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(jobs, rows of ``unit_matrix``) whose constraint (4) / (6) some point of the box
        [0, ``upper``] breaks; every other row holds over the whole box and is left out of the
        cvxpy form. Congestion 1e-9 (capacities of 2e10 beside workloads of 18) and workloads of
        1e12 made Clarabel call the bounded P1 unbounded while such rows were in it."""
        inst = self.instance
        capacity = inst.capacity.reshape(-1)[self.used_units]
        return (np.flatnonzero(self.job_matrix @ self.upper > inst.rho),
                np.flatnonzero(self.unit_matrix @ self.upper > capacity))

    def to_cvxpy(self) -> tuple[Any, Any]:
        """max sum f_nr(x_nr) + beta_nr x_nr / C_r over the rows of :attr:`binding_rows` and
        0 <= x <= :attr:`upper` (the same feasible set as P1); constraints in the order
        (4), (6), x >= 0, x <= upper (:meth:`multipliers` reads the first two back)."""
        import cvxpy as cp

        inst = self.instance
        x = cp.Variable(inst.n_pairs)
        slope = inst.beta / inst.pair_capacity
        terms = [slope @ x]
        for code, build in enumerate(_CVXPY_UTILITY):
            idx = np.flatnonzero(inst.pair_kind == code)
            if idx.size:
                terms.append(build(cp, inst.a[idx], x[idx]))
        jobs, units = self.binding_rows
        capacity = inst.capacity.reshape(-1)[self.used_units]
        constraints = [self.job_matrix[jobs] @ x <= inst.rho[jobs], self.unit_matrix[units] @ x <= capacity[units],
                       x >= 0, x <= self.upper]
        problem = cp.Problem(cp.Maximize(cp.sum(cp.hstack(terms))), constraints)

        def to_solution() -> np.ndarray:
            return repair(inst, x.value)

        return problem, to_solution

    def cvxpy_default_solver(self) -> tuple[str, dict[str, Any]]:
        return "CLARABEL", dict(CLARABEL_TOLERANCES)

    def objective_magnitude(self) -> float:
        """The welfare at the top of the box, :attr:`upper`: every f_nr is increasing with
        f_nr(0) = 0 and beta_nr >= 0, so P1's welfare lies in [0, this]. The seam's agreement
        of objective and bound is absolute below it (``Model.objective_magnitude``): with a
        welfare of 6e-7, Clarabel's answer half the optimum agreed with its bound within the
        absolute 1e-6 of scale 1, and was called optimal."""
        return float(self.instance.pair_welfare(self.upper).sum())

    def cvxpy_objective_scale(self) -> float:
        """A power of two (exact) that scales the objective down where both its largest slope at
        x = 0 (a_nr, plus beta_nr / C_r) and :meth:`objective_magnitude` exceed 1: by the
        smaller of the two, so neither ends below 1. With costs of 1e12 (a_high = 1e12) Clarabel
        called P1 unbounded. Scaled down by the magnitude alone (1.3e6 at the ``scale`` preset,
        costs of order 1), its answer fell 7.7e-7 short and took 3x as long; by the slope alone
        (1e4 where x is 1e-10 and the welfare 6e-7), the objective fell below Clarabel's
        tolerance and it stopped at half the optimum. Scaled up, costs reached 1e10 and Clarabel
        called P1 unbounded again."""
        inst = self.instance
        steepest = float(np.max(inst.a + inst.beta / inst.pair_capacity, initial=0.0))
        magnitude = self.objective_magnitude()
        if not (1.0 < steepest < math.inf and 1.0 < magnitude < math.inf):
            return 1.0
        return 2.0 ** -min(math.frexp(steepest)[1], math.frexp(magnitude)[1])

    def multipliers(self, duals: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray] | None:
        """(mu per job, lambda per unit) from the duals of the cvxpy form's first two constraints
        (``Result.duals``): 0 on the rows the form leaves out; None if either is missing or not
        finite."""
        jobs, units = self.binding_rows
        mu, lam = np.zeros(self.instance.n_jobs), np.zeros(self.instance.n_units)
        for out, at, dual in ((mu, jobs, duals[0]), (lam, self.used_units[units], duals[1])):
            if dual is None:
                return None
            values = np.asarray(dual, dtype=np.float64).reshape(-1)
            if values.size != at.size or not np.isfinite(values).all():
                return None
            out[at] = values
        return mu, lam


def _cvx_linear(cp: Any, a: np.ndarray, x: Any) -> Any:
    return a @ x


def _cvx_log(cp: Any, a: np.ndarray, x: Any) -> Any:
    return a @ cp.log1p(x)


def _cvx_sqrt(cp: Any, a: np.ndarray, x: Any) -> Any:
    return a @ cp.sqrt(x + 1.0) - float(a.sum())


# One DCP builder per utility kind, indexed by its code in utilities.KINDS.
_CVXPY_UTILITY = (_cvx_linear, _cvx_log, _cvx_sqrt)
assert len(_CVXPY_UTILITY) == len(utilities.KINDS)


@register_model
@dataclass(frozen=True, eq=False)
class OfflineWelfareIntegral(MeshWelfare):
    """P1 with non-partitionable workloads (43): x_nr in {0, xbar_nr}. Same JSON as
    ``onsocmax_offline``; the solution is still the pair vector x."""

    name: ClassVar[str] = "onsocmax_offline_integral"
    SIZE_LABEL: ClassVar[str] = "(job, unit) pairs"
    WHOLE_UNITS: ClassVar[bool] = True

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        out = super().violations(solution, tol=tol)
        if out:
            return out
        x = self._vector(solution)
        xbar = self.instance.xbar
        off = not_whole_units(x, xbar, tol)
        if off.any():
            p = int(np.argmax(off))
            return [f"(43): pair {p} has {x[p]:.6g}, neither 0 nor xbar {xbar[p]:.6g}"]
        return []

    @frozen_cached_property
    def item_value(self) -> np.ndarray:
        """Welfare of serving a pair in full: f_nr(xbar_nr) + beta_nr xbar_nr / C_r."""
        return self.instance.pair_welfare(self.instance.xbar)

    @cached_form
    def to_standard_form(self) -> StandardForm:
        import scipy.sparse as sp
        inst = self.instance
        scale = sp.diags(inst.xbar)
        capacity = inst.capacity.reshape(-1)[self.used_units]
        A = sp.vstack([self.job_matrix @ scale, self.unit_matrix @ scale]).tocsr()
        upper = np.concatenate([inst.rho, capacity])
        return StandardForm(
            maximize=True,
            c=self.item_value.copy(),
            A=A,
            row_lower=np.full(upper.size, -np.inf),
            row_upper=upper,
            col_lower=np.zeros(inst.n_pairs),
            col_upper=np.ones(inst.n_pairs),
            integrality=np.ones(inst.n_pairs, dtype=bool),
        )

    def solution_from_vector(self, z: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(z) > 0.5, self.instance.xbar, 0.0)

    @property
    def n_binary(self) -> int:
        return self.instance.n_pairs

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        inst = self.instance
        x = rows.astype(np.float64) * inst.xbar
        jobs = np.asarray(self.job_matrix @ x.T).T
        units = np.asarray(self.unit_matrix @ x.T).T
        capacity = inst.capacity.reshape(-1)[self.used_units]
        # the rows of pair_violations with whole units, at its default tolerance
        feasible = ((jobs <= inst.rho + row_slack(FEASIBILITY_TOL, inst.rho, jobs)).all(axis=1)
                    & (units <= capacity + row_slack(FEASIBILITY_TOL, capacity, units)).all(axis=1))
        return feasible, rows.astype(np.float64) @ self.item_value


# --- weak duality --------------------------------------------------------------------------------
def implied_upper(instance: MeshInstance) -> np.ndarray:
    """min(xbar_nr, rho_n, C_r) per pair: with x >= 0, (4) and (6) bound each x_nr by rho_n and
    C_r, so this box holds every point of P1 (and the box alone is as tight as (4) or (6) for a
    job or unit whose pairs cannot reach its bound)."""
    inst = instance
    return np.minimum(inst.xbar, np.minimum(inst.rho[inst.pair_job], inst.pair_capacity))


def conjugate(instance: MeshInstance, price: np.ndarray, upper: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """xi_nr(p) of (9) per pair: max_{0 <= x <= upper} f_nr(x) + beta x / C - p x, and the argmax
    (``upper``: xbar when not given)."""
    inst = instance
    upper = inst.xbar if upper is None else upper
    m = np.asarray(price, dtype=np.float64) - inst.beta / inst.pair_capacity  # slope f' must match
    with np.errstate(divide="ignore", invalid="ignore"):
        stationary = utilities.inverse_derivative(inst.pair_kind, inst.a, np.maximum(m, 1e-300))
    x = np.where(m <= 0, upper, np.clip(np.nan_to_num(stationary, nan=0.0), 0.0, upper))
    return inst.pair_welfare(x) - price * x, x


def dual_bound(instance: MeshInstance, mu: np.ndarray, lam: np.ndarray) -> float:
    """P2's objective at mu (per job) and lambda (per unit, n_units long), both clipped to >= 0,
    over the box of :func:`implied_upper`:
    sum_{n, r in R_n} xi_nr(mu_n + lambda_r) + sum_n mu_n rho_n + sum_r lambda_r C_r >= OPT(P1)
    (weak duality: that box holds every point of P1, and is no looser than (7)'s)."""
    mu = np.maximum(np.asarray(mu, dtype=np.float64), 0.0)
    lam = np.maximum(np.asarray(lam, dtype=np.float64), 0.0)
    xi, _ = conjugate(instance, mu[instance.pair_job] + lam[instance.pair_unit], implied_upper(instance))
    return float(xi.sum() + mu @ instance.rho + lam @ instance.capacity.reshape(-1))


def repair(instance: MeshInstance, x: np.ndarray) -> np.ndarray:
    """Scale a nearly feasible pair vector into P1: clip to [0, xbar], then shrink each job's
    pairs to meet (4) and each unit's pairs to meet (6). Only ever lowers entries."""
    inst = instance
    x = scaled_onto_capacity(np.clip(np.asarray(x, dtype=np.float64), 0.0, inst.xbar), inst.pair_job, inst.rho)
    return scaled_onto_capacity(x, inst.pair_unit, inst.capacity.reshape(-1))


# --- the kinds' generators ---
@register_generator("onsocmax_offline", quick=(5, 10, 20), full=(5, 10, 20, 40, 80), tiny=3, rtol=1e-6)
def onsocmax_offline(size: int, rng: np.random.Generator) -> Model:
    """``size`` jobs on :class:`MeshGenerator`'s Section IV defaults (10 nodes, 24 slots), utility
    kind at random; ``model.size`` counts the (job, unit) pairs."""
    return OfflineWelfare(MeshGenerator(n_jobs=size, kind=random_kind(rng)).draw(rng))


@register_generator("onsocmax_offline_integral", quick=(2, 4, 8), full=(2, 4, 8, 16, 32, 64), tiny=2, rtol=1e-9)
def onsocmax_offline_integral(size: int, rng: np.random.Generator) -> Model:
    """``size`` jobs on a mesh of ceil(size / 4) >= 2 nodes and ceil(size / 1.5) >= 4 slots, <= 2
    nodes and mean duration 1 slot per job: few pairs per job, so brute force applies at small sizes."""
    gen = MeshGenerator(n_nodes=max(2, math.ceil(size / 4)), n_slots=max(4, math.ceil(size / 1.5)), n_jobs=size,
                        max_nodes=2, mean_duration=1.0, kind=random_kind(rng))
    return OfflineWelfareIntegral(gen.draw(rng))


# --- the kind's fuzz builder (tests/test_fuzz.py): degenerate variants ---


@register_fuzz("onsocmax_offline_integral", *("random", "congested", "ties"), examples=40)
def fuzz_onsocmax_offline_integral(rng: np.random.Generator, variant: str) -> Model:
    from optsched.models.mesh import MeshGenerator
    from optsched.models.onsocmax_offline import OfflineWelfareIntegral

    congestion = {"congested": 8.0, "ties": 1.0}.get(variant, float(rng.uniform(1.0, 4.0)))
    gen = MeshGenerator(n_nodes=3, n_slots=4, n_jobs=int(rng.integers(1, 4)), max_nodes=2, mean_duration=1.5,
                        kind=str(rng.choice(list(utilities.KINDS))), capacity_mean=20 / congestion,
                        capacity_std=0.0 if variant == "ties" else 2 / congestion,
                        xbar_std=0.0 if variant == "ties" else 1.0)
    return OfflineWelfareIntegral(gen.draw(rng))
