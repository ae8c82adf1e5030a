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

from optsched.models.base import Model, register_model
from optsched.models.budgeted_ip import as_indices, capacity_violations, index_violations, knapsack_rows
from optsched.models.validate import float_array


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
    FORMS: ClassVar[frozenset[str]] = frozenset({"binary"})
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

    @property
    def size(self) -> int:
        return self.n_items

    @property
    def n_binary(self) -> int:
        return self.n_items

    @property
    def is_integral(self) -> bool:
        return bool(np.all(self.weights == np.round(self.weights)) and np.all(self.capacity == np.round(self.capacity)))

    def objective(self, solution: Any) -> float:
        idx = as_indices(solution)
        return float(self.mean[idx].sum() + math.sqrt(float(self.variance[idx].sum())))

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        idx = as_indices(solution)
        problems = index_violations(idx, self.n_items, np.ones(self.n_items, dtype=bool))
        return problems or capacity_violations(self.weights, self.capacity, idx, tol)

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = rows.astype(np.float64)
        feasible = np.all(x @ self.weights.T <= self.capacity, axis=1)
        return feasible, x @ self.mean + np.sqrt(x @ self.variance)

    def solution_from_vector(self, x: np.ndarray) -> np.ndarray:
        return np.flatnonzero(np.asarray(x) > 0.5).astype(np.int64)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "mean": self.mean.tolist(),
            "variance": self.variance.tolist(),
            "weights": self.weights.tolist(),
            "capacity": self.capacity.tolist(),
        }
