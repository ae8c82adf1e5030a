"""The exact per-slot knapsack, and the omniscient oracle of (5)-(6) built on it.

Each slot, a policy that knows (or estimates) a value per channel can solve

    max { values . x : A x <= c (1), x_e = 0 for channels of empty ports (2), x in {0,1}^E }

exactly: a 0-1 multidimensional knapsack. :class:`SlotKnapsack` is that one helper (HiGHS via
highspy, mip_rel_gap = 0, the MIP settings of the ``highs`` backend: its presolve rule 13 off
and its oracle tolerances; the feasibility-jump heuristic off); the model is built once per instance and each call only changes
the objective, the column upper bounds (the mask) and, if asked, the row bounds (a residual
capacity). It is the same problem as ``optsched.solve(BudgetedIP(values, A, c, mask=mask),
"highs")``, cross-checked in the tests, without rebuilding the model every slot.

The oracle knows the true means v_tilde: x*(t) = SlotKnapsack(v_tilde, mask(t)), cached per
mask (with |L| ports there are at most 2^|L| masks).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.esdp.env import DispatchInstance, Observation


class SlotKnapsack:
    """Callable ``knapsack(values, mask, capacity=None) -> x`` for fixed weights A and
    capacities c (``capacity`` replaces c for one call)."""

    def __init__(self, weights: np.ndarray, capacity: np.ndarray) -> None:
        import highspy

        from optsched.solvers.highs import MIP_PRESOLVE_RULE_OFF, ORACLE_TOLERANCES, set_option

        weights = np.asarray(weights, dtype=np.float64)
        k, n = weights.shape
        self.capacity = np.asarray(capacity, dtype=np.float64)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        # feasibility jump (a primal heuristic; exactness does not depend on it) cost a fixed
        # ~4 ms CPU per run, 3-10x the whole solve of these knapsacks (|E| = 5-33)
        for key, value in {"mip_rel_gap": 0.0, "mip_abs_gap": 0.0, "threads": 1,
                           "presolve_rule_off": MIP_PRESOLVE_RULE_OFF, **ORACLE_TOLERANCES,
                           "mip_heuristic_run_feasibility_jump": False}.items():
            set_option(h, key, value)
        lp = highspy.HighsLp()
        lp.num_col_ = n
        lp.num_row_ = k
        lp.col_cost_ = np.zeros(n)
        lp.col_lower_ = np.zeros(n)
        lp.col_upper_ = np.ones(n)
        lp.row_lower_ = np.full(k, -highspy.kHighsInf)
        lp.row_upper_ = self.capacity
        lp.sense_ = highspy.ObjSense.kMaximize
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.arange(0, weights.size + 1, k, dtype=np.int32)
        lp.a_matrix_.index_ = np.tile(np.arange(k, dtype=np.int32), n)
        lp.a_matrix_.value_ = weights.T.ravel()
        lp.a_matrix_.num_col_ = n
        lp.a_matrix_.num_row_ = k
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n
        h.passModel(lp)
        self._highs = h
        self._cols = np.arange(n, dtype=np.int32)
        self._rows = np.arange(k, dtype=np.int32)

    def __call__(self, values: np.ndarray, mask: np.ndarray, capacity: np.ndarray | None = None) -> np.ndarray:
        import highspy

        h = self._highs
        n, k = len(self._cols), len(self._rows)
        mask = np.asarray(mask, dtype=bool)
        values = np.asarray(values, dtype=np.float64)
        if not np.isfinite(values[mask]).all():
            raise ValueError("values: the knapsack needs finite values on the available channels")
        h.changeColsCost(n, self._cols, np.where(mask, values, 0.0))
        h.changeColsBounds(n, self._cols, np.zeros(n), mask.astype(np.float64))
        cap = self.capacity if capacity is None else np.asarray(capacity, dtype=np.float64)
        h.changeRowsBounds(k, self._rows, np.full(k, -highspy.kHighsInf), cap)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"knapsack: HiGHS ended with status {h.modelStatusToString(h.getModelStatus())}")
        return np.round(np.asarray(h.getSolution().col_value)).astype(bool) & mask


class MkpOracle:
    """Callable ``oracle(mask) -> (value, x)`` for fixed values, weights A and capacities c."""

    def __init__(self, values: np.ndarray, weights: np.ndarray, capacity: np.ndarray) -> None:
        self.values = np.asarray(values, dtype=np.float64)
        self._knapsack = SlotKnapsack(weights, capacity)
        self._cache: dict[bytes, tuple[float, np.ndarray]] = {}

    @classmethod
    def for_instance(cls, instance: DispatchInstance) -> "MkpOracle":
        return cls(instance.true_means, instance.requirements, instance.capacity)

    def __call__(self, mask: np.ndarray) -> tuple[float, np.ndarray]:
        mask = np.asarray(mask, dtype=bool)
        key = np.packbits(mask).tobytes()
        if key not in self._cache:
            x = self._knapsack(self.values, mask)
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
