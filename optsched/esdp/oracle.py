"""The omniscient oracle of (5)-(6): it knows the true means v_tilde and, each slot, solves

    x*(t) = argmax { v_tilde . x : A x <= c (1), x_e = 0 for channels of empty ports (2), x in {0,1}^E }

exactly: a 0-1 multidimensional knapsack (model ``budgeted_ip`` without a budget), through the
seam with ``backend`` (default ``highs``; its object is kept between slots and, the matrix
being the same every slot, only the column bounds of the arrival mask change). Answers are
cached per mask (with |L| ports there are at most 2^|L| masks).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.esdp.env import DispatchInstance, Observation
from optsched.models.budgeted_ip import BudgetedIP
from optsched.observe import SubproblemSolver

DEFAULT_BACKEND = "highs"


class MkpOracle:
    """Callable ``oracle(mask) -> (value, x)`` for fixed values, weights A and capacities c."""

    def __init__(self, values: np.ndarray, weights: np.ndarray, capacity: np.ndarray, *, backend: str | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        self.values = np.asarray(values, dtype=np.float64)
        self._data = {"values": self.values, "weights": np.asarray(weights, dtype=np.float64),
                      "capacity": np.asarray(capacity, dtype=np.float64)}
        self.solver = SubproblemSolver(BudgetedIP, backend, default=DEFAULT_BACKEND, options=options, label="Oracle")
        self._cache: dict[bytes, tuple[float, np.ndarray]] = {}

    @classmethod
    def for_instance(cls, instance: DispatchInstance) -> "MkpOracle":
        return cls(instance.true_means, instance.requirements, instance.capacity)

    def __call__(self, mask: np.ndarray) -> tuple[float, np.ndarray]:
        mask = np.asarray(mask, dtype=bool)
        key = np.packbits(mask).tobytes()
        if key not in self._cache:
            chosen = self.solver.solution(BudgetedIP(**self._data, mask=mask))
            x = np.zeros(mask.shape[0], dtype=bool)
            x[np.asarray(chosen, dtype=np.int64)] = True
            self._cache[key] = (float(self.values @ x), x)
        return self._cache[key]


class OraclePolicy:
    """Plays x*(t) of the oracle every slot (the upper curve of Fig. 4)."""

    name = "Oracle"

    def __init__(self) -> None:
        self._oracle: MkpOracle | None = None

    def reset(self, env: Any, rng: np.random.Generator) -> None:
        self._oracle = env.oracle if isinstance(env.oracle, MkpOracle) else MkpOracle.for_instance(env.instance)

    def act(self, observation: Observation) -> np.ndarray:
        assert self._oracle is not None, "OraclePolicy.act before reset"
        return self._oracle(observation.channel_mask)[1]

    def observe(self, feedback: Mapping[str, Any]) -> None:
        return None
