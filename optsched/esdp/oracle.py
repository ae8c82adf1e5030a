"""The omniscient oracle of (5)-(6): it knows the true means v_tilde and, each slot, solves

    x*(t) = argmax { v_tilde . x : A x <= c (1), x_e = 0 for channels of empty ports (2), x in {0,1}^E }

exactly: a 0-1 multidimensional knapsack, by HiGHS (highspy, mip_rel_gap = 0). The model is
built once; each slot only changes the column upper bounds to the arrival mask. Answers are
cached per mask (with |L| ports there are at most 2^|L| masks).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.esdp.env import DispatchInstance, Observation


class MkpOracle:
    """Callable ``oracle(mask) -> (value, x)`` for fixed values, weights A and capacities c."""

    def __init__(self, values: np.ndarray, weights: np.ndarray, capacity: np.ndarray) -> None:
        import highspy

        self.values = np.asarray(values, dtype=np.float64)
        weights = np.asarray(weights, dtype=np.float64)
        n = len(self.values)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("threads", 1)
        lp = highspy.HighsLp()
        lp.num_col_ = n
        lp.num_row_ = weights.shape[0]
        lp.col_cost_ = self.values
        lp.col_lower_ = np.zeros(n)
        lp.col_upper_ = np.ones(n)
        lp.row_lower_ = np.full(weights.shape[0], -highspy.kHighsInf)
        lp.row_upper_ = np.asarray(capacity, dtype=np.float64)
        lp.sense_ = highspy.ObjSense.kMaximize
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.arange(0, weights.size + 1, weights.shape[0], dtype=np.int32)
        lp.a_matrix_.index_ = np.tile(np.arange(weights.shape[0], dtype=np.int32), n)
        lp.a_matrix_.value_ = weights.T.ravel()
        lp.a_matrix_.num_col_ = n
        lp.a_matrix_.num_row_ = weights.shape[0]
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n
        h.passModel(lp)
        self._highs = h
        self._n = n
        self._cache: dict[bytes, tuple[float, np.ndarray]] = {}

    @classmethod
    def for_instance(cls, instance: DispatchInstance) -> "MkpOracle":
        return cls(instance.true_means, instance.requirements, instance.capacity)

    def __call__(self, mask: np.ndarray) -> tuple[float, np.ndarray]:
        mask = np.asarray(mask, dtype=bool)
        key = np.packbits(mask).tobytes()
        if key not in self._cache:
            self._cache[key] = self._solve(mask)
        return self._cache[key]

    def _solve(self, mask: np.ndarray) -> tuple[float, np.ndarray]:
        import highspy

        h = self._highs
        idx = np.arange(self._n, dtype=np.int32)
        h.changeColsBounds(self._n, idx, np.zeros(self._n), mask.astype(np.float64))
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"oracle: HiGHS ended with status {status}")
        x = np.round(np.asarray(h.getSolution().col_value)).astype(bool) & mask
        return float(self.values @ x), x


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
