"""Algorithms 1 and 2 of paper 004 on the virtual queues of Section III-A.

Each frame: Q_i(t) <- Q_i(t-1) + r_i (line 2); choose interference-free jobs D(t) maximising
Eq. (2), sum_{i in D} Q_i(t) 1{|J_i| != 0} prod_{j in J_i} P_ij (Algorithm 1 with an exact
backend) or greedily by Eq. (3) (Algorithm 2, backend ``greedy``); at the end of the frame
Q_i <- max(Q_i - 1, 0) for every scheduled job that completed. The policy runs B requirement
vectors side by side: the frame's subproblem is one ``set_packing_batch`` (B weight vectors
over the frame's jobs), solved through the seam (:class:`optsched.observe.SubproblemSolver`).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.maxweight.network import Frame, NetworkEnv
from optsched.models.set_packing import SetPackingBatch
from optsched.models.validate import float_array
from optsched.observe import SubproblemSolver

DEFAULT_BACKEND = "greedy"  # Algorithm 2


class MaxWeightPolicy:
    """Max-weight scheduling on virtual queues: an exact ``backend`` ("enumerate", "highs",
    "cpsat", ...) is Algorithm 1; "greedy" (the default) is Algorithm 2."""

    def __init__(self, requirements: np.ndarray, *, backend: str | None = None,
                 options: Mapping[str, Any] | None = None, name: str | None = None) -> None:
        flat = isinstance(requirements, (list, tuple, np.ndarray)) and all(np.ndim(r) == 0 for r in requirements)
        rows = [requirements] if flat else requirements  # one copy's requirements, or one row per copy
        self.requirements = float_array("requirements", rows, ndim=2, nonnegative=True, min_size=1)
        self.name = name or f"max-weight[{backend or DEFAULT_BACKEND}]"
        self.solver = SubproblemSolver(SetPackingBatch, backend, default=DEFAULT_BACKEND, options=options,
                                       label=self.name)
        self.backend = self.solver.backend
        self.queues = np.zeros_like(self.requirements)
        self._log_success = np.zeros(0)

    def reset(self, env: NetworkEnv, rng: np.random.Generator) -> None:
        if self.requirements.shape != (env.copies, env.network.n_apps):
            raise ValueError(
                f"requirements: shape {self.requirements.shape} != (copies, apps) {(env.copies, env.network.n_apps)}"
            )
        self.queues = np.zeros_like(self.requirements)
        with np.errstate(divide="ignore"):
            self._log_success = np.log(env.network.completion_prob)

    def weights(self, jobs: np.ndarray) -> np.ndarray:
        """Eq. (2) per job: Q_i * 1{|J_i| != 0} * prod_{j in J_i} P_ij, for every copy."""
        success = np.exp(np.where(jobs, self._log_success, 0.0).sum(axis=1)) * jobs.any(axis=1)
        return self.queues * success[None, :]

    def act(self, frame: Frame) -> np.ndarray:
        self.queues += self.requirements
        generated = np.flatnonzero(frame.jobs.any(axis=1))
        decision = np.zeros(self.queues.shape, dtype=bool)
        if generated.size:
            batch = SetPackingBatch.from_incidence(frame.jobs[generated], self.weights(frame.jobs)[:, generated])
            decision[:, generated] = self.solver.solution(batch)
        return decision

    def observe(self, feedback: Mapping[str, np.ndarray]) -> None:
        self.queues = np.maximum(self.queues - feedback["completed"], 0.0)
