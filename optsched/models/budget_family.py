"""The budget family {P4(s)}_{s = 0..S} of paper 000 as one object (Algorithm 1, steps 4-6).

Every member is the :class:`~optsched.models.budgeted_ip.BudgetedIP` with the same data and
budget s: max values.x s.t. W x <= capacity, budget_coeffs.x >= s (16), x_e = 0 off the mask.

Solution type: a tuple of length S+1 whose entry s is the sorted index array of an optimal x
for P4(s), or ``None`` when P4(s) is infeasible. ``objective`` is the value of the member at
the designated ``budget`` (default 0, the plain multidimensional knapsack, always feasible);
backends put every member's value in ``Result.extra["values"]`` (``None`` where infeasible).
``violations`` checks every non-None member against its own P4(s).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from optsched.models.base import Model, register_fuzz, register_generator, register_model
from optsched.models.budgeted_ip import ESDP_SLOT, BudgetedIP, budget_slack, esdp_slot_statistics, knapsack_fuzz_data
from optsched.models.validate import positive_int, solution_indices


# A solution holds one selection per budget 0..S, and each is checked: 10^8 budgets made
# budget_exact's list of entries and its verification run for minutes past a time limit of 2 s.
MAX_BUDGET = 10**6


@register_model
@dataclass(frozen=True, eq=False)
class BudgetFamily(Model):
    """P4(s) for s = 0..max_budget, sharing values, weights, capacity, budget_coeffs, mask."""

    values: Any
    weights: Any
    capacity: Any
    budget_coeffs: Any
    max_budget: int
    budget: int = 0
    mask: Any = None

    name: ClassVar[str] = "budget_family"
    SIZE_LABEL: ClassVar[str] = "items"
    maximize: ClassVar[bool] = True
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = ("values", "weights", "capacity", "budget_coeffs", "max_budget")
    JSON_OPTIONAL: ClassVar[tuple[str, ...]] = ("budget", "mask")

    def __post_init__(self) -> None:
        base = BudgetedIP(self.values, self.weights, self.capacity, self.budget_coeffs, 0.0, self.mask)
        S = positive_int("max_budget", self.max_budget, minimum=0, maximum=MAX_BUDGET)  # a selection per budget 0..S
        s = positive_int("budget", self.budget, minimum=0)
        if s > S:
            raise ValueError(f"budget: must be <= max_budget = {S}, got {s}")
        for field in ("values", "weights", "capacity", "budget_coeffs", "mask"):
            object.__setattr__(self, field, getattr(base, field))
        object.__setattr__(self, "max_budget", S)
        object.__setattr__(self, "budget", s)

    @property
    def n_items(self) -> int:
        return int(self.values.shape[0])

    size = n_items

    def member(self, s: int) -> BudgetedIP:
        """P4(s) as a stand-alone model."""
        return BudgetedIP(self.values, self.weights, self.capacity, self.budget_coeffs, float(s), self.mask)

    # --- the model's own math ------------------------------------------------------------
    def _entries(self, solution: Any) -> list[Any]:
        if isinstance(solution, (str, bytes, dict)) or not hasattr(solution, "__len__"):
            raise ValueError("solution: expected one entry per budget")
        return list(solution)

    def objective(self, solution: Any) -> float:
        entries = self._entries(solution)
        if len(entries) != self.max_budget + 1:
            raise ValueError(f"solution: expected {self.max_budget + 1} entries (s = 0..{self.max_budget}), got {len(entries)}")
        entry = entries[self.budget]
        return -np.inf if entry is None else float(self.values[solution_indices(entry, self.values.shape[0])].sum())

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        entries = self._entries(solution)
        if len(entries) != self.max_budget + 1:
            return [f"expected {self.max_budget + 1} entries (s = 0..{self.max_budget}), got {len(entries)}"]
        if entries[0] is None:
            return ["P4(0) is always feasible (x = 0) but has no solution"]
        base = self.member(0)
        s = -1
        # a run of budgets holding one object (a solver's optimum reused over [s, u]) is checked
        # once, at its largest s: 10^8 budgets took the loop over each its own check for hours
        for _, run in itertools.groupby(entries, key=id):
            s += sum(1 for _ in run)  # the run's last budget
            entry = entries[s]
            if entry is None:
                continue
            problems = base.violations(entry, tol=tol)
            got = float(self.budget_coeffs[solution_indices(entry)].sum())
            if got < s - budget_slack(s, tol):
                problems.append(f"budget_coeffs.x = {got:g} < {s}")
            if problems:
                return [f"s = {s}: {problems[0]}"]
        return []

    def solution_to_json(self, solution: Any) -> Any:
        return [None if e is None else solution_indices(e).tolist() for e in self._entries(solution)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "values": self.values.tolist(),
            "weights": self.weights.tolist(),
            "capacity": self.capacity.tolist(),
            "budget_coeffs": self.budget_coeffs.tolist(),
            "max_budget": self.max_budget,
            "budget": self.budget,
            "mask": self.mask.astype(int).tolist(),
        }


# --- the kind's generator ---
def esdp_budget_family(
    rng: np.random.Generator, n_edges: int, alpha_c: float = 0.5, t: int = ESDP_SLOT, alpha: float = 0.5
) -> BudgetFamily:
    """P4(s, t) for s = 0..xi m: Upsilon = ceil(xi v_hat), Sigma2 = ceil(xi^2 sigma2_hat),
    capacity c_k = max(1, ceil(alpha_c sum_e A_ke))."""
    A, v_hat, sigma2, xi, m = esdp_slot_statistics(rng, n_edges, t, alpha)
    capacity = np.maximum(1, np.ceil(alpha_c * A.sum(axis=1))).astype(int)
    return BudgetFamily(np.ceil(xi**2 * sigma2), A, capacity, np.ceil(xi * v_hat), xi * m)


@register_generator("budget_family", quick=(8, 16, 24), full=(8, 16, 24, 32, 40), tiny=6, rtol=1e-9)
def budget_family(size: int, rng: np.random.Generator) -> Model:
    """ESDP's P4(s, t) family at t = 2000 over ``size`` = |E| items: K = 3, A in {1, 2},
    c_k = ceil(sum_e A_ke / 2), S = xi m (benchmarks/bench_budget_dp)."""
    return esdp_budget_family(rng, size)


# --- the kind's fuzz builder (tests/test_fuzz.py): degenerate variants ---


@register_fuzz("budget_family", *("random", "zero_capacity", "too_heavy", "all_masked", "ties", "zero_values", "unreachable_budget", "no_budget"), examples=100)
def fuzz_budget_family(rng: np.random.Generator, variant: str) -> BudgetFamily:
    d = knapsack_fuzz_data(rng, "ties" if variant == "ties" else variant if variant != "fractional" else "random")
    reach = int(d["budget_coeffs"][d["mask"]].sum())
    top = reach + int(rng.integers(1, 3)) if variant == "unreachable_budget" else int(rng.integers(0, reach + 2))
    budget = top if variant == "unreachable_budget" else int(rng.integers(0, top + 1))
    return BudgetFamily(max_budget=top, budget=budget, **d)
