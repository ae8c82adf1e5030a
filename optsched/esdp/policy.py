"""ESDP, Algorithm 1 of paper 000, as a :class:`optsched.policy.Policy`.

At slot t (1-based):

1. delta(t), g(t) from the chosen sequences; m = ceil(alpha |E|); xi(t) = ceil(m / delta(t)) (15);
   S(t) = {0, ..., xi(t) m}.
2. Never-tried channels (sigma2_hat = +inf in (9); the DP cannot carry infinity) are explored
   first: the never-tried channels of ports with a job are taken by first fit in index order.
3. The remaining capacity goes to the channels already tried: the slot's subproblem is P3(t) (11)
   on them, max v_hat.x + sqrt(sigma2_hat.x) s.t. A x <= residual capacity (model
   ``escb_index``), solved through the seam by ``backend``: ``aescb`` (the paper, default): the
   AESCB route, Upsilon, Sigma2 by (13)-(14), the family P4(s, t), s in S(t), by the DP of
   Algorithm 2 and x*_{P4}(t) = x*_{P4}(s*, t) with s* of (17); xi(t) and S = xi(t) m are passed
   to it each slot. Its option ``method`` (default ``"envelope"``) computes only that member, by
   the DP pruned to the points that can reach the best score of (17)
   (:func:`optsched.solvers.escb_aescb.envelope_pick`: the same s* and x as the whole family);
   ``"reach"``, ``"pareto"``, ``"dense"`` solve the whole family first; option
   ``family_backend = "budget_exact"`` solves the family one budget at a time exactly.
   ``escb_oa`` solves P3(t) itself exactly (outer approximation + HiGHS); ``brute_force`` on tiny
   graphs. A slot whose backend returns no solution is solved by ``aescb`` (counted).
4. Constraint (2): with ``mask="before"`` (default) the channels of empty ports are removed
   before solving; with ``mask="after"`` the family is solved over every channel and those
   channels are zeroed afterwards (steps 10-16 as printed).

The statistics are updated from the semi-bandit feedback (Z_tilde of the chosen channels).
``act_seconds`` / ``act_cpu_seconds`` keep the wall / CPU time of each decision (the
computation overhead of Fig. 5).
"""

from __future__ import annotations

import time
from typing import Any, Literal, Mapping

import numpy as np

from optsched.esdp.baselines import first_fit
from optsched.esdp.env import DispatchInstance, Observation
from optsched.esdp.statistics import (
    DELTA_SEQUENCES,
    G_SEQUENCES,
    ChannelStats,
    max_selection,
    scaling_size,
)
from optsched.models.escb_index import EscbIndex
from optsched.models.validate import finite_float, one_of
from optsched.observe import SubproblemSolver

MASK_MODES = ("before", "after")


DEFAULT_BACKEND = "aescb"


class EsdpPolicy:
    """ESDP with sequences named in ``DELTA_SEQUENCES`` / ``G_SEQUENCES``."""

    def __init__(
        self,
        *,
        alpha: float = 0.5,
        delta: str = "loglog",
        g: str = "default",
        mask: Literal["before", "after"] = "before",
        backend: str | None = None,
        options: Mapping[str, Any] | None = None,
        name: str = "ESDP",
    ) -> None:
        alpha = finite_float("alpha", alpha)
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha: must be in (0, 1], got {alpha}")
        one_of("delta", delta, tuple(DELTA_SEQUENCES))
        one_of("g", g, tuple(G_SEQUENCES))
        one_of("mask", mask, tuple(MASK_MODES))
        self.alpha = alpha
        self.solver = SubproblemSolver(EscbIndex, backend, default=DEFAULT_BACKEND, options=options, label=name)
        self._delta = DELTA_SEQUENCES[delta]
        self._g = G_SEQUENCES[g]
        self.mask = mask
        self.name = name

    def reset(self, env: Any, rng: np.random.Generator) -> None:
        self.instance: DispatchInstance = env.instance
        # the largest slot subproblem (every channel, the whole capacity): a backend that cannot
        # take it is refused before the first slot, not in the middle of the run
        inst = self.instance
        largest = EscbIndex(mean=np.ones(inst.n_edges), variance=np.ones(inst.n_edges), weights=inst.requirements,
                            capacity=inst.capacity)
        reason = self.solver.prepared.fits(largest)
        if reason is not None:
            raise ValueError(f"backend: {self.name}'s largest slot subproblem on this instance (its {inst.n_edges} "
                             f"channels and capacity {inst.capacity.tolist()}, met when every port has a job): {reason}")
        self.stats = ChannelStats(self.instance.n_edges)
        self.m = max_selection(self.alpha, self.instance.n_edges)
        self.act_seconds: list[float] = []
        self.act_cpu_seconds: list[float] = []
        self.budget_levels: list[int] = []

    def act(self, observation: Observation) -> np.ndarray:
        start, cpu = time.perf_counter(), time.process_time()
        inst = self.instance
        t = observation.t + 1
        xi = scaling_size(self.m, self._delta(t))
        g = self._g(t, self.m)
        avail = observation.channel_mask
        tried = self.stats.tried

        x = first_fit(np.flatnonzero(avail & ~tried), inst.requirements, inst.capacity)
        residual = inst.capacity - inst.requirements @ x
        dp_mask = tried & avail if self.mask == "before" else tried
        if dp_mask.any():
            items = np.flatnonzero(dp_mask)
            variance = np.where(tried, self.stats.sigma2_hat(g), 0.0)
            index = EscbIndex(mean=self.stats.v_hat()[items], variance=variance[items],
                              weights=inst.requirements[:, items], capacity=residual)
            chosen = np.zeros(inst.n_edges, dtype=bool)
            chosen[items[np.asarray(self.solver.solution(index, params={"xi": xi, "max_budget": xi * self.m}),
                                    dtype=np.int64)]] = True
            x = x | (chosen & avail)
        self.budget_levels.append(xi * self.m + 1)
        self.act_seconds.append(time.perf_counter() - start)
        self.act_cpu_seconds.append(time.process_time() - cpu)
        return x

    def observe(self, feedback: Mapping[str, Any]) -> None:
        self.stats.update(feedback["x"], feedback["z"])
