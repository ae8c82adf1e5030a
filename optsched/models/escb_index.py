"""The ESCB index problem P3(t) of paper 000 (without the constant delta(t)):

    max  mean . x + sqrt(variance . x)   s.t.  W x <= capacity,  x in {0, 1}^n      (11), (1)

In ESDP, mean = v_hat(t) (8) and variance = sigma2_hat(t) (9). The objective is concave in x
but the problem is NP-hard (paper, Section 3.2). The AESCB route (backend ``aescb``) solves it
approximately through the budget family; ``escb_oa`` solves it exactly by outer approximation.

Solution type: a sorted ``int64`` array of chosen item indices (0-based).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from optsched.models.base import Model, register_fuzz, register_generator, register_model
from optsched.models.budgeted_ip import (ESDP_SLOT, capacity_violations, esdp_slot_statistics,
                                         index_violations, knapsack_fuzz_data, knapsack_rows,
                                         over_capacity)
from optsched.models.validate import float_array, solution_indices


@register_model
@dataclass(frozen=True, eq=False)
class EscbIndex(Model):
    """max mean.x + sqrt(variance.x)  s.t.  W x <= capacity,  x binary."""

    mean: Any
    variance: Any
    weights: Any
    capacity: Any

    name: ClassVar[str] = "escb_index"
    SIZE_LABEL: ClassVar[str] = "items (channels)"
    maximize: ClassVar[bool] = True
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = ("mean", "variance", "weights", "capacity")

    def __post_init__(self) -> None:
        mu = float_array("mean", self.mean, nonnegative=True, min_size=1)
        var = float_array("variance", self.variance, shape=(mu.shape[0],), nonnegative=True)
        w, c = knapsack_rows(self.weights, self.capacity, mu.shape[0])
        for field, value in (("mean", mu), ("variance", var), ("weights", w), ("capacity", c)):
            object.__setattr__(self, field, value)

    @property
    def n_items(self) -> int:
        return int(self.mean.shape[0])

    size = n_binary = n_items  # one 0-1 variable per item

    @property
    def is_integral(self) -> bool:
        return bool(np.all(self.weights == np.round(self.weights)) and np.all(self.capacity == np.round(self.capacity)))

    def objective_magnitude(self) -> float:
        """sum mean + sqrt(sum variance): the largest value any x can reach (``Model``)."""
        return float(self.mean.sum() + math.sqrt(float(self.variance.sum())))

    def objective(self, solution: Any) -> float:
        idx = solution_indices(solution, self.n_items)
        return float(self.mean[idx].sum() + math.sqrt(float(self.variance[idx].sum())))

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        idx = solution_indices(solution)
        problems = index_violations(idx, self.n_items, np.ones(self.n_items, dtype=bool))
        return problems or capacity_violations(self.weights, self.capacity, idx, tol)

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = rows.astype(np.float64)  # the rows of violations, at its default tolerance
        feasible = ~np.any(over_capacity(x @ self.weights.T, self.capacity), axis=1)
        return feasible, x @ self.mean + np.sqrt(x @ self.variance)

    def solution_from_vector(self, x: np.ndarray) -> np.ndarray:
        return np.flatnonzero(np.asarray(x) > 0.5).astype(np.int64)


# --- the kind's generator ---
def esdp_escb_index(rng: np.random.Generator, n_edges: int, t: int = ESDP_SLOT) -> tuple[Model, int, int]:
    """(P3 model, xi, S = xi m) at slot t, capacity c_k = ceil(sum_e A_ke / 2)."""
    A, v_hat, sigma2, xi, m = esdp_slot_statistics(rng, n_edges, t)
    capacity = np.ceil(0.5 * A.sum(axis=1)).astype(int)
    return EscbIndex(v_hat, sigma2, A, capacity), xi, xi * m


# rtol 1e-6: escb_oa stops at tol = 1e-7 relative.
@register_generator("escb_index", quick=(8, 16, 32), full=(8, 16, 24, 32, 48, 64), tiny=6, rtol=1e-6)
def escb_index(size: int, rng: np.random.Generator) -> Model:
    """ESDP-like P3 over ``size`` = |E| items at t = 2000: v_hat ~ U[0, 1],
    sigma2_hat = g(t) / (2 n_e) (benchmarks/bench_aescb_gap)."""
    return esdp_escb_index(rng, size)[0]


# --- the kind's fuzz builder (tests/test_fuzz.py): degenerate variants ---


@register_fuzz("escb_index", *("random", "zero_capacity", "too_heavy", "ties", "fractional", "zero_variance", "zero_mean"), examples=100)
def fuzz_escb_index(rng: np.random.Generator, variant: str) -> EscbIndex:
    d = knapsack_fuzz_data(rng, variant if variant in ("zero_capacity", "too_heavy", "ties", "fractional") else "random")
    n = d["values"].shape[0]
    mean = rng.uniform(0.0, 1.0, n)
    variance = rng.uniform(0.0, 0.3, n) * (rng.random(n) < 0.8)
    if variant == "zero_variance":
        variance = np.zeros(n)
    elif variant == "zero_mean":
        mean = np.zeros(n)
    elif variant == "ties":
        mean, variance = np.full(n, 0.5), np.full(n, 0.25)
    return EscbIndex(mean=mean, variance=variance, weights=d["weights"], capacity=d["capacity"])
