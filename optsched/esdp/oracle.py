"""The exact per-slot knapsack, and the omniscient oracle of (5)-(6) built on it.

Each slot, a policy that knows (or estimates) a value per channel can solve

    max { values . x : A x <= c (1), x_e = 0 for channels of empty ports (2), x in {0,1}^E }

exactly: a 0-1 multidimensional knapsack (model ``budgeted_ip`` without a budget). :class:`SlotKnapsack`
is that one helper: the slot's model through the seam, with the ``highs`` backend by default
(exact: mip_rel_gap = 0, presolve rule 13 off, oracle tolerances) and its feasibility-jump
heuristic off; any exact ``budgeted_ip`` backend can replace it (``dp``, ``cpsat``, ``scip``), and
shadow solves see every call.

The oracle knows the true means v_tilde: x*(t) = SlotKnapsack(v_tilde, mask(t)), cached per
mask (with |L| ports there are at most 2^|L| masks).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.esdp.env import DispatchInstance, Observation


# HiGHS's feasibility-jump heuristic (exactness does not depend on it) cost a fixed ~4 ms CPU
# per run, 3-10x the whole solve of these knapsacks (|E| = 5-33)
KNAPSACK_OPTIONS: Mapping[str, Mapping[str, Any]] = {
    "highs": {"highs_options": {"mip_heuristic_run_feasibility_jump": False}},
}
DEFAULT_BACKEND = "highs"


class SlotKnapsack:
    """Callable ``knapsack(values, mask, capacity=None) -> x`` for fixed weights A and
    capacities c (``capacity`` replaces c for one call): the slot's ``budgeted_ip`` through the
    seam (:class:`optsched.observe.SubproblemSolver`, labelled ``label`` in shadow rows)."""

    def __init__(self, weights: np.ndarray, capacity: np.ndarray, *, backend: str | None = None,
                 options: Mapping[str, Any] | None = None, label: str = "knapsack") -> None:
        from optsched.models.budgeted_ip import BudgetedIP
        from optsched.observe import SubproblemSolver

        self.weights = np.asarray(weights, dtype=np.float64)
        self.capacity = np.asarray(capacity, dtype=np.float64)
        name = backend or DEFAULT_BACKEND
        chosen = dict(KNAPSACK_OPTIONS.get(name, {})) if options is None else dict(options)
        self.solver = SubproblemSolver(BudgetedIP, name, default=DEFAULT_BACKEND, options=chosen, label=label)
        self._model = BudgetedIP

    def __call__(self, values: np.ndarray, mask: np.ndarray, capacity: np.ndarray | None = None) -> np.ndarray:
        mask = np.asarray(mask, dtype=bool)
        values = np.asarray(values, dtype=np.float64)
        if not np.isfinite(values[mask]).all():
            raise ValueError("values: the knapsack needs finite values on the available channels")
        model = self._model(np.where(mask, values, 0.0), self.weights,
                            self.capacity if capacity is None else capacity, mask=mask)
        x = np.zeros(mask.shape[0], dtype=bool)
        x[np.asarray(self.solver.solution(model), dtype=np.int64)] = True
        return x


class MkpOracle:
    """Callable ``oracle(mask) -> (value, x)`` for fixed values, weights A and capacities c."""

    def __init__(self, values: np.ndarray, weights: np.ndarray, capacity: np.ndarray) -> None:
        self.values = np.asarray(values, dtype=np.float64)
        self._knapsack = SlotKnapsack(weights, capacity, label="Oracle")
        self._cache: dict[bytes, tuple[float, np.ndarray]] = {}

    @classmethod
    def for_instance(cls, instance: DispatchInstance) -> "MkpOracle":
        return cls(instance.true_means, instance.requirements, instance.capacity)

    def __call__(self, mask: np.ndarray) -> tuple[float, np.ndarray]:
        mask = np.asarray(mask, dtype=bool)
        key = np.packbits(mask).tobytes()
        if key not in self._cache:
            x = self._knapsack(self.values, mask)
            x.setflags(write=False)  # shared by every slot and policy with this mask
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
        if self._oracle is None:
            raise RuntimeError("OraclePolicy.act before reset")
        return self._oracle(observation.channel_mask)[1]

    def observe(self, feedback: Mapping[str, Any]) -> None:
        return None
