"""ESDP, Algorithm 1 of paper 000, as a :class:`optsched.policy.Policy`.

At slot t (1-based):

1. delta(t), g(t) from the chosen sequences; m = ceil(alpha |E|); xi(t) = ceil(m / delta(t)) (15);
   S(t) = {0, ..., xi(t) m}.
2. Never-tried channels (sigma2_hat = +inf in (9); the DP cannot carry infinity) are explored
   first: the never-tried channels of ports with a job are taken by first fit in index order.
3. The remaining capacity goes to the channels already tried, by the index route ``index``:
   ``"dp"`` (the paper): the AESCB route, Upsilon, Sigma2 by (13)-(14), the whole family
   P4(s, t), s in S(t), by the DP of Algorithm 2 (:func:`optsched.solvers.budget_dp.aescb_index`),
   and x*_{P4}(t) = x*_{P4}(s*, t) with s* of (17). ``dp_method`` (default ``"envelope"``)
   computes only that member, by the DP pruned to the points that can reach the best score of
   (17) (:func:`optsched.solvers.budget_dp.envelope_pick`: the same s* and x as the whole
   family); ``"reach"``, ``"pareto"``, ``"dense"`` solve the whole family first;
   ``"exact"``: P3(t) (11) itself, max v_hat.x + sqrt(sigma2_hat.x), solved exactly through
   ``optsched.solve`` (model ``escb_index``, backend ``escb_oa``: outer approximation + HiGHS).
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

MASK_MODES = ("before", "after")


def _dp_route(mean, variance, weights, capacity, mask, xi: int, max_budget: int, method: str) -> np.ndarray:
    from optsched.solvers.budget_dp import aescb_index

    return aescb_index(mean, variance, weights, capacity, xi, max_budget=max_budget, mask=mask, method=method)[0]


def _exact_route(mean, variance, weights, capacity, mask, xi: int, max_budget: int, method: str) -> np.ndarray:
    import optsched
    from optsched.models.escb_index import EscbIndex

    model = EscbIndex(mean=mean[mask], variance=variance[mask], weights=weights[:, mask], capacity=capacity)
    res = optsched.solve(model, "escb_oa")
    if res.status is not optsched.Status.OPTIMAL:
        raise RuntimeError(f"ESDP exact index: escb_oa ended with {res.status.value}: {res.extra.get('message')}")
    x = np.zeros(len(mean), dtype=bool)
    x[np.flatnonzero(mask)[np.asarray(res.solution, dtype=np.int64)]] = True
    return x


INDEX_ROUTES = {"dp": _dp_route, "exact": _exact_route}


class EsdpPolicy:
    """ESDP with sequences named in ``DELTA_SEQUENCES`` / ``G_SEQUENCES``."""

    def __init__(
        self,
        *,
        alpha: float = 0.5,
        delta: str = "loglog",
        g: str = "default",
        mask: Literal["before", "after"] = "before",
        index: Literal["dp", "exact"] = "dp",
        dp_method: str = "envelope",
        name: str = "ESDP",
    ) -> None:
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha: must be in (0, 1], got {alpha}")
        if delta not in DELTA_SEQUENCES:
            raise ValueError(f"delta: unknown sequence {delta!r} (known: {', '.join(DELTA_SEQUENCES)})")
        if g not in G_SEQUENCES:
            raise ValueError(f"g: unknown sequence {g!r} (known: {', '.join(G_SEQUENCES)})")
        if mask not in MASK_MODES:
            raise ValueError(f"mask: must be one of {MASK_MODES}, got {mask!r}")
        if index not in INDEX_ROUTES:
            raise ValueError(f"index: must be one of {tuple(INDEX_ROUTES)}, got {index!r}")
        from optsched.solvers.budget_dp import DP_METHODS

        if dp_method != "envelope" and dp_method not in DP_METHODS:
            raise ValueError(f"dp_method: must be 'envelope' or one of {tuple(DP_METHODS)}, got {dp_method!r}")
        self.alpha = alpha
        self.dp_method = dp_method
        self._route = INDEX_ROUTES[index]
        self._delta = DELTA_SEQUENCES[delta]
        self._g = G_SEQUENCES[g]
        self.mask = mask
        self.name = name

    def reset(self, env: Any, rng: np.random.Generator) -> None:
        self.instance: DispatchInstance = env.instance
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
            variance = np.where(tried, self.stats.sigma2_hat(g), 0.0)
            chosen = self._route(
                self.stats.v_hat(), variance, inst.requirements, residual, dp_mask, xi, xi * self.m, self.dp_method
            )
            x = x | (chosen & avail)
        self.budget_levels.append(xi * self.m + 1)
        self.act_seconds.append(time.perf_counter() - start)
        self.act_cpu_seconds.append(time.process_time() - cpu)
        return x

    def observe(self, feedback: Mapping[str, Any]) -> None:
        self.stats.update(feedback["x"], feedback["z"])
