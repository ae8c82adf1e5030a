"""The distributed computing network of paper 004, Section II.

N applications, M specialised workers, frames t = 1, 2, ... At the start of each frame
application i generates job J_i(t) with a task for worker j independently with probability
``task_prob[i, j]`` = P[J_ij(t) = 1]; a scheduled task succeeds with probability
``completion_prob[i, j]`` = P_ij; a job completes when every one of its tasks succeeds in
its frame (deadline one frame). The environment simulates B independent copies of the
decision process at once (one per requirement vector), all driven by the same draws of jobs
and task outcomes (common random numbers), so policies and requirements are compared on
identical sample paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.models.validate import binary_array, float_array, positive_int
from optsched.policy import SlotClock


@dataclass(frozen=True, eq=False)
class JobNetwork:
    """Task generation and completion probabilities, both (N, M) in [0, 1]."""

    task_prob: Any
    completion_prob: Any

    def __post_init__(self) -> None:
        tp = float_array("task_prob", self.task_prob, ndim=2, nonnegative=True, min_size=1)
        cp = float_array("completion_prob", self.completion_prob, ndim=2, shape=tp.shape, nonnegative=True)
        for name, arr in (("task_prob", tp), ("completion_prob", cp)):
            if (arr > 1).any():
                raise ValueError(f"{name}: probabilities must be in [0, 1]")
        object.__setattr__(self, "task_prob", tp)
        object.__setattr__(self, "completion_prob", cp)

    @property
    def n_apps(self) -> int:
        return int(self.task_prob.shape[0])

    @property
    def n_workers(self) -> int:
        return int(self.task_prob.shape[1])

    @classmethod
    def uniform(cls, n_apps: int, n_workers: int, task_prob: float, completion_prob: float) -> "JobNetwork":
        shape = (n_apps, n_workers)
        return cls(np.full(shape, task_prob), np.full(shape, completion_prob))


@dataclass(frozen=True)
class Frame:
    """What the scheduler sees at the start of frame ``t``: the jobs J(t) as an (N, M) bool."""

    t: int
    jobs: np.ndarray


class NetworkEnv(SlotClock):
    """Environment (reset / observe / step) over ``copies`` parallel decision processes; frames
    without end (``horizon`` None). The frame's jobs are read-only."""

    def __init__(self, network: JobNetwork, copies: int = 1) -> None:
        self.network = network
        self.copies = positive_int("copies", copies)
        self._rng: np.random.Generator | None = None
        self._jobs = np.zeros((network.n_apps, network.n_workers), dtype=bool)
        self._success = np.zeros(network.n_apps, dtype=bool)

    def reset(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self.start_slots()

    def observe(self, t: int) -> Frame:
        t = self.open_slot(t)
        assert self._rng is not None  # open_slot refuses a frame before reset
        net = self.network
        draws = self._rng.random((2, net.n_apps, net.n_workers))
        self._jobs = draws[0] < net.task_prob
        self._jobs.setflags(write=False)
        task_ok = draws[1] < net.completion_prob
        # job i succeeds when every task it has succeeds; drawn whether or not it is scheduled
        self._success = (task_ok | ~self._jobs).all(axis=1) & self._jobs.any(axis=1)
        return Frame(t, self._jobs)

    def step(self, decision: np.ndarray) -> dict[str, np.ndarray]:
        """``decision`` (copies, N), booleans or 0/1: the interference-free set D(t) of each copy."""
        self.check_step()
        decision = binary_array("decision", decision, shape=(self.copies, self.network.n_apps))
        load = decision.astype(np.int64) @ self._jobs.astype(np.int64)
        if (load > 1).any():
            c, j = (int(v[0]) for v in np.nonzero(load > 1))
            raise ValueError(f"decision: copy {c} schedules two jobs on worker {j} (interference)")
        self.close_slot()
        return {"completed": decision & self._success[None, :]}
