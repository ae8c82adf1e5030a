"""Algorithms 1 and 2 of paper 004 on the virtual queues of Section III-A.

Each frame: Q_i(t) <- Q_i(t-1) + r_i (line 2); choose interference-free jobs D(t) maximising
Eq. (2), sum_{i in D} Q_i(t) 1{|J_i| != 0} prod_{j in J_i} P_ij (Algorithm 1, exactly) or
greedily by Eq. (3) (Algorithm 2); at the end of the frame Q_i <- max(Q_i - 1, 0) for every
scheduled job that completed. The policy runs B requirement vectors side by side.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from optsched.maxweight.network import Frame, NetworkEnv
from optsched.models.set_packing import SetPacking
from optsched.solvers.greedy_set_packing import greedy_packing_batch

# (incidence (N', M) bool of the generated jobs, weights (B, N')) -> chosen (B, N') bool
PackingSolver = Callable[[np.ndarray, np.ndarray], np.ndarray]


def exact_packing_batch(incidence: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Algorithm 1's Eq. (2) solved exactly for B weight vectors at once by enumerating every
    packing of the N' jobs (2^N' subsets: meant for the paper's small N)."""
    if incidence.shape[0] == 0:
        return np.zeros((weights.shape[0], 0), dtype=bool)
    packings = SetPacking(incidence.shape[1], [np.flatnonzero(r) for r in incidence], np.zeros(len(incidence))).all_packings()
    best = np.argmax(weights @ packings.T.astype(np.float64), axis=1)
    return packings[best]


def backend_packing_solver(backend: str, **options: Any) -> PackingSolver:
    """Solve each copy's set packing through ``optsched.solve`` with a registered backend."""
    import optsched

    def run(incidence: np.ndarray, weights: np.ndarray) -> np.ndarray:
        sets = [np.flatnonzero(r) for r in incidence]
        out = np.zeros(weights.shape, dtype=bool)
        for b, w in enumerate(weights):
            res = optsched.solve(SetPacking(incidence.shape[1], sets, w), backend, verify=False, **options)
            if not res.ok:
                raise RuntimeError(f"backend {backend!r} failed on a frame: {res.status.value}")
            out[b, res.solution] = True
        return out

    return run


# In-process kernels that solve all copies at once; any other registered backend goes
# through ``backend_packing_solver``.
BATCH_SOLVERS: Mapping[str, PackingSolver] = {
    "greedy": greedy_packing_batch,
    "enumerate": exact_packing_batch,
}


def packing_solver(backend: str) -> PackingSolver:
    return BATCH_SOLVERS.get(backend) or backend_packing_solver(backend)


class MaxWeightPolicy:
    """Max-weight scheduling on virtual queues: ``backend`` "enumerate" (or any exact backend)
    is Algorithm 1; "greedy" is Algorithm 2."""

    def __init__(self, requirements: np.ndarray, *, backend: str, name: str | None = None) -> None:
        self.requirements = np.atleast_2d(np.asarray(requirements, dtype=np.float64))
        self.backend = backend
        self.name = name or f"max-weight[{backend}]"
        self._solve = packing_solver(backend)
        self.queues = np.zeros_like(self.requirements)
        self._log_success = np.zeros(0)
        self._jobs = np.zeros((0, 0), dtype=bool)

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
            w = self.weights(frame.jobs)[:, generated]
            decision[:, generated] = self._solve(frame.jobs[generated], w)
        return decision

    def observe(self, feedback: Mapping[str, np.ndarray]) -> None:
        self.queues = np.maximum(self.queues - feedback["completed"], 0.0)
