"""Budgeted 0-1 integer programme: P4(s, t) of paper 000 (ESDP), and the 0-1 multidimensional
knapsack when there is no budget.

    max values . x   s.t.  W x <= capacity              (K rows; constraint (1))
                           budget_coeffs . x >= budget   (16)
                           x_e = 0 where mask_e = 0      (steps 10-16 of Algorithm 1)
                           x in {0, 1}^n

In ESDP, values = Sigma2 (14), budget_coeffs = Upsilon (13) and budget = s.
Weights, capacity and budget coefficients are nonnegative; the ``dp`` family backend and CP-SAT
also need them integral (they refuse otherwise), HiGHS/Pyomo/brute force do not.

Solution type: a sorted ``int64`` array of chosen item indices (0-based).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from optsched.models.base import Model, cached_form, register_model
from optsched.models.forms import StandardForm
from optsched.models.validate import finite_float, float_array

if TYPE_CHECKING:
    pass


def knapsack_rows(weights: Any, capacity: Any, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validated (K, n) weights and (K,) capacity, both nonnegative (shared by the ESDP models)."""
    w = float_array("weights", weights, ndim=2, nonnegative=True, min_size=1)
    if n is not None and w.shape[1] != n:
        raise ValueError(f"weights: axis 1 has length {w.shape[1]}, expected {n}")
    c = float_array("capacity", capacity, shape=(w.shape[0],), nonnegative=True)
    return w, c


def mask_vector(mask: Any, n: int) -> np.ndarray:
    """A read-only bool vector from 0/1 or true/false entries."""
    arr = float_array("mask", mask, shape=(n,), bools=True)
    if not np.isin(arr, (0.0, 1.0)).all():
        raise ValueError("mask: entries must be 0/1 or true/false")
    out = arr.astype(bool)
    out.setflags(write=False)
    return out


def as_indices(solution: Any) -> np.ndarray:
    return np.asarray(solution, dtype=np.int64).reshape(-1)


def index_violations(idx: np.ndarray, n: int, mask: np.ndarray) -> list[str]:
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        return [f"item index out of range [0, {n})"]
    if len(np.unique(idx)) != len(idx):
        return ["an item is chosen twice"]
    off = idx[~mask[idx]]
    return [f"item {int(i)} is masked out" for i in off[:3]]


def capacity_violations(w: np.ndarray, c: np.ndarray, idx: np.ndarray, tol: float) -> list[str]:
    load = w[:, idx].sum(axis=1)
    over = np.flatnonzero(load > c + tol * np.maximum(1.0, np.abs(c)))
    return [f"resource {int(k)}: load {load[k]:g} > capacity {c[k]:g}" for k in over[:3]]


@register_model
@dataclass(frozen=True, eq=False)
class BudgetedIP(Model):
    """max values.x  s.t.  W x <= capacity,  budget_coeffs.x >= budget,  x_e = 0 off the mask."""

    values: Any
    weights: Any
    capacity: Any
    budget_coeffs: Any = None
    budget: float = 0.0
    mask: Any = None

    name: ClassVar[str] = "budgeted_ip"
    SIZE_LABEL: ClassVar[str] = "items"
    maximize: ClassVar[bool] = True
    FORMS: ClassVar[frozenset[str]] = frozenset({"standard", "pyomo", "binary"})
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = ("values", "weights", "capacity")
    JSON_OPTIONAL: ClassVar[tuple[str, ...]] = ("budget_coeffs", "budget", "mask")

    def __post_init__(self) -> None:
        v = float_array("values", self.values, min_size=1)
        n = v.shape[0]
        w, c = knapsack_rows(self.weights, self.capacity, n)
        b = (
            float_array("budget_coeffs", np.zeros(n), shape=(n,))
            if self.budget_coeffs is None
            else float_array("budget_coeffs", self.budget_coeffs, shape=(n,), nonnegative=True)
        )
        s = finite_float("budget", self.budget, minimum=0.0)
        mask = mask_vector(np.ones(n) if self.mask is None else self.mask, n)
        fields = {"values": v, "weights": w, "capacity": c, "budget_coeffs": b, "budget": s, "mask": mask}
        for field, value in fields.items():
            object.__setattr__(self, field, value)

    @property
    def n_items(self) -> int:
        return int(self.values.shape[0])

    @property
    def size(self) -> int:
        return self.n_items

    @property
    def n_binary(self) -> int:
        return self.n_items

    @property
    def has_budget(self) -> bool:
        return self.budget > 0

    def with_budget(self, budget: float) -> "BudgetedIP":
        return BudgetedIP(self.values, self.weights, self.capacity, self.budget_coeffs, budget, self.mask)

    # --- the model's own math ------------------------------------------------------------
    def objective(self, solution: Any) -> float:
        return float(self.values[as_indices(solution)].sum())

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        idx = as_indices(solution)
        problems = index_violations(idx, self.n_items, self.mask)
        if problems:
            return problems
        problems = capacity_violations(self.weights, self.capacity, idx, tol)
        got = float(self.budget_coeffs[idx].sum())
        if got < self.budget - tol * max(1.0, self.budget):
            problems.append(f"budget: budget_coeffs.x = {got:g} < {self.budget:g}")
        return problems

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = rows.astype(np.float64)
        feasible = np.all(x @ self.weights.T <= self.capacity, axis=1)
        feasible &= x @ self.budget_coeffs >= self.budget
        feasible &= ~np.any(rows[:, ~self.mask], axis=1)
        return feasible, x @ self.values

    # --- forms ---------------------------------------------------------------------------------
    @cached_form
    def standard_form(self) -> StandardForm:
        import scipy.sparse as sp
        n, k = self.n_items, self.weights.shape[0]
        rows = [self.weights]
        lower = [np.full(k, -np.inf)]
        upper = [np.asarray(self.capacity)]
        if self.has_budget:
            rows.append(self.budget_coeffs[None, :])
            lower.append(np.array([self.budget]))
            upper.append(np.array([np.inf]))
        return StandardForm(
            maximize=True,
            c=np.asarray(self.values, dtype=np.float64),
            A=sp.csr_matrix(np.vstack(rows)),
            row_lower=np.concatenate(lower),
            row_upper=np.concatenate(upper),
            col_lower=np.zeros(n),
            col_upper=self.mask.astype(np.float64),
            integrality=np.ones(n, dtype=bool),
        )

    def solution_from_vector(self, x: np.ndarray) -> np.ndarray:
        return np.flatnonzero(np.asarray(x) > 0.5).astype(np.int64)

    def pyomo_model(self) -> Any:
        import pyomo.environ as pyo

        m = pyo.ConcreteModel(name="budgeted_ip")
        m.I = pyo.RangeSet(0, self.n_items - 1)
        m.K = pyo.RangeSet(0, self.weights.shape[0] - 1)
        m.x = pyo.Var(m.I, domain=pyo.Binary)
        for i in np.flatnonzero(~self.mask):
            m.x[int(i)].fix(0)
        w, c = self.weights, self.capacity

        def capacity(mm: Any, k: int) -> Any:
            used = np.flatnonzero(w[k])
            if used.size == 0:
                return pyo.Constraint.Skip
            return sum(float(w[k, i]) * mm.x[int(i)] for i in used) <= float(c[k])

        m.capacity = pyo.Constraint(m.K, rule=capacity)
        if self.has_budget:
            m.budget = pyo.Constraint(
                expr=sum(float(self.budget_coeffs[i]) * m.x[i] for i in m.I) >= float(self.budget)
            )
        m.value = pyo.Objective(expr=sum(float(self.values[i]) * m.x[i] for i in m.I), sense=pyo.maximize)
        return m

    def solution_from_pyomo(self, m: Any) -> np.ndarray:
        return self.solution_from_vector(np.array([m.x[i].value or 0.0 for i in range(self.n_items)]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "values": self.values.tolist(),
            "weights": self.weights.tolist(),
            "capacity": self.capacity.tolist(),
            "budget_coeffs": self.budget_coeffs.tolist(),
            "budget": self.budget,
            "mask": self.mask.astype(int).tolist(),
        }
