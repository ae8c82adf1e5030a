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

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from optsched.models.base import Model, cached_form, register_fuzz, register_generator, register_model
from optsched.models.forms import StandardForm, pyomo_values, scaled_capacity_rows, solver_form
from optsched.models.validate import FEASIBILITY_TOL, finite_float, float_array, row_slack, solution_indices

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


def index_violations(idx: np.ndarray, n: int, mask: np.ndarray) -> list[str]:
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        return [f"item index out of range [0, {n})"]
    if len(np.unique(idx)) != len(idx):
        return ["an item is chosen twice"]
    off = idx[~mask[idx]]
    return [f"item {int(i)} is masked out" for i in off[:3]]


def over_capacity(load: np.ndarray, c: np.ndarray, tol: float = FEASIBILITY_TOL) -> np.ndarray:
    """Which loads of the rows ``w x <= c`` (w >= 0, so a load is its own activity) pass ``c``
    by more than :func:`row_slack`."""
    return load > c + row_slack(tol, c, load)


def budget_slack(budget: float, tol: float = FEASIBILITY_TOL) -> float:
    """How far short of ``budget`` a budget row ``b x >= budget`` may fall (:func:`row_slack` of
    a sum below the budget: the budget's own size)."""
    return float(row_slack(tol, np.float64(budget), np.float64(0.0)))


def capacity_violations(w: np.ndarray, c: np.ndarray, idx: np.ndarray, tol: float) -> list[str]:
    """Rows ``w x <= c`` broken by the 0-1 selection ``idx``."""
    load = w[:, idx].sum(axis=1)
    over = np.flatnonzero(over_capacity(load, c, tol))
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

    size = n_binary = n_items  # one 0-1 variable per item

    @property
    def has_budget(self) -> bool:
        return self.budget > 0

    # --- the model's own math ------------------------------------------------------------
    def objective(self, solution: Any) -> float:
        return float(self.values[solution_indices(solution, self.n_items)].sum())

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        idx = solution_indices(solution)
        problems = index_violations(idx, self.n_items, self.mask)
        if problems:
            return problems
        problems = capacity_violations(self.weights, self.capacity, idx, tol)
        got = float(self.budget_coeffs[idx].sum())
        if got < self.budget - self.budget_slack(tol):
            problems.append(f"budget: budget_coeffs.x = {got:g} < {self.budget:g}")
        return problems

    def budget_slack(self, tol: float = FEASIBILITY_TOL) -> float:
        return budget_slack(self.budget, tol)

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = rows.astype(np.float64)  # the rows of violations, at its default tolerance
        feasible = ~np.any(over_capacity(x @ self.weights.T, self.capacity), axis=1)
        feasible &= x @ self.budget_coeffs >= self.budget - self.budget_slack()
        feasible &= ~np.any(rows[:, ~self.mask], axis=1)
        return feasible, x @ self.values

    # --- forms ---------------------------------------------------------------------------------
    @cached_form
    def to_standard_form(self) -> StandardForm:
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

    def to_pyomo(self) -> Any:
        """The reference formulation, its sides at the model's tolerance
        (:meth:`StandardForm.widened`) and each row times the power of two that brings it to
        order 1 (``scaled_capacity_rows``: the same rows exactly; the solvers' tolerances are
        absolute, and with weights up to 5.7e11 Pyomo's HiGHS said optimal 34 where 36 is)."""
        import pyomo.environ as pyo

        m = pyo.ConcreteModel(name="budgeted_ip")
        m.I = pyo.RangeSet(0, self.n_items - 1)
        m.K = pyo.RangeSet(0, self.weights.shape[0] - 1)
        m.x = pyo.Var(m.I, domain=pyo.Binary)
        wide = solver_form(self)  # the rows at the model's own tolerance, the columns as they bound them
        for i in np.flatnonzero(wide.col_upper == 0):  # masked, or fitting no row (StandardForm.tightened)
            m.x[int(i)].fix(0)
        k = self.weights.shape[0]
        w, c = scaled_capacity_rows(self.weights, wide.row_upper[:k])
        coeffs, budget = scaled_capacity_rows(self.budget_coeffs[None, :], wide.row_lower[k:] if self.has_budget
                                              else np.array([self.budget]))

        def capacity(mm: Any, k: int) -> Any:
            used = np.flatnonzero(w[k])
            if used.size == 0:
                return pyo.Constraint.Skip
            return sum(float(w[k, i]) * mm.x[int(i)] for i in used) <= float(c[k])

        m.capacity = pyo.Constraint(m.K, rule=capacity)
        if self.has_budget:
            m.budget = pyo.Constraint(expr=sum(float(coeffs[0, i]) * m.x[i] for i in m.I) >= float(budget[0]))
        m.value = pyo.Objective(expr=sum(float(self.values[i]) * m.x[i] for i in m.I), sense=pyo.maximize)
        return m

    def solution_from_pyomo(self, m: Any) -> np.ndarray:
        return self.solution_from_vector(pyomo_values(m.x, self.n_items))

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


ESDP_SLOT = 2000  # the paper's horizon T: statistics are drawn as at slot t = T


# --- ESDP's slot statistics: the distribution of the ESDP kinds' generators -------------------------------------------------------------------------
def esdp_slot_statistics(
    rng: np.random.Generator, n_edges: int, t: int = ESDP_SLOT, alpha: float = 0.5
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(A, v_hat, sigma2_hat, xi, m) as ESDP sees them at slot t: K = 3 resources, A in {1, 2},
    m = ceil(alpha |E|), delta(t) = 1 / (ln(ln(t+1)+1)+1), xi = ceil(m / delta),
    g(t) = ln(t+1) + 4 ln(ln(t+1)+1) m, channel counts n_e ~ U{1..t/|E|}."""
    A = rng.integers(1, 3, (3, n_edges))
    m = max(1, math.ceil(alpha * n_edges))
    delta = 1.0 / (math.log(math.log(t + 1) + 1) + 1)
    xi = math.ceil(m / delta)
    g = math.log(t + 1) + 4 * math.log(math.log(t + 1) + 1) * m
    counts = rng.integers(1, max(2, t // n_edges), n_edges)
    v_hat = rng.random(n_edges)
    return A, v_hat, g / (2 * counts), xi, m


@register_generator("budgeted_ip", quick=(8, 16, 32), full=(8, 16, 24, 32, 48, 64), tiny=6, rtol=1e-9)
def budgeted_ip(size: int, rng: np.random.Generator) -> Model:
    """One member P4(s) of the ESDP budget family (:func:`budget_family`) over ``size`` = |E|
    items at slot t = 2000, s ~ U{0..0.3 S}."""
    from optsched.models.budget_family import esdp_budget_family

    fam = esdp_budget_family(rng, size)
    s = int(rng.integers(0, int(0.3 * fam.max_budget) + 1))
    return fam.member(s)


# --- the kind's fuzz builder (tests/test_fuzz.py): degenerate variants ---


def knapsack_fuzz_data(rng: np.random.Generator, variant: str) -> dict[str, Any]:
    n, k = int(rng.integers(1, 10)), int(rng.integers(1, 4))
    weights = rng.integers(0, 5, (k, n)).astype(float)
    capacity = np.floor(rng.uniform(0.0, 1.0, k) * weights.sum(axis=1))
    values = rng.integers(-2, 10, n).astype(float) if rng.random() < 0.3 else rng.uniform(0.0, 5.0, n)
    coeffs = rng.integers(0, 4, n).astype(float)
    mask = rng.random(n) < 0.85
    if variant == "zero_capacity":
        capacity = np.zeros(k)
    elif variant == "too_heavy":
        weights = weights + 1.0
        capacity = np.zeros(k) if rng.random() < 0.5 else weights.min(axis=1) - 1.0
    elif variant == "all_masked":
        mask = np.zeros(n, dtype=bool)
    elif variant == "ties":
        values = np.full(n, float(rng.integers(0, 3)))
        weights = np.ones((k, n))
        capacity = np.full(k, float(rng.integers(0, n + 1)))
    elif variant == "zero_values":
        values = np.zeros(n)
    elif variant == "fractional":
        weights = np.round(rng.uniform(0.0, 3.0, (k, n)), 3)
        capacity = np.round(rng.uniform(0.0, 1.0, k) * weights.sum(axis=1), 3)
        coeffs = np.round(rng.uniform(0.0, 2.0, n), 3)
    return {"values": values, "weights": weights, "capacity": capacity, "budget_coeffs": coeffs, "mask": mask}


@register_fuzz("budgeted_ip", *("random", "zero_capacity", "too_heavy", "all_masked", "ties", "zero_values", "fractional", "unreachable_budget", "no_budget"), examples=150)
def fuzz_budgeted_ip(rng: np.random.Generator, variant: str) -> BudgetedIP:
    d = knapsack_fuzz_data(rng, variant)
    reach = float(d["budget_coeffs"][d["mask"]].sum())
    if variant == "unreachable_budget":  # no selection reaches it: infeasible
        budget = reach + float(rng.integers(1, 3))
    elif variant == "no_budget":
        budget = 0.0
    else:
        budget = float(rng.integers(0, int(reach) // 2 + 2))
        if rng.random() < 0.2:
            budget = max(0.0, budget - 0.5)  # a fractional budget (the DP takes its ceiling)
    return BudgetedIP(budget=budget, **d)
