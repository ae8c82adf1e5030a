"""The OGASched environment: arrivals x(t) per slot and the reward q(x(t), y(t)) of (8).

Arrivals come from Bernoulli(rho) draws per port and slot (Section IV, Table II), or from a
trace of per-slot job counts (see :mod:`optsched.ogasched.traces`), which ``rho`` then thins
job by job ("applied based on the actual arrival patterns from the trace to increase
stochasticity"). A scenario replicated for multiple arrivals (Section III-D,
:meth:`Scenario.replicate`) turns counts into 0-1 arrivals of the replicas; otherwise a port
with several jobs in a slot counts as x_l = 1, as (3) allows at most one job per port.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.ogasched.scenario import Scenario, expand_arrivals
from optsched.ogasched.utilities import reward_parts, reward_parts_gradient


class SchedulingEnv:
    """An :class:`optsched.policy.Environment` for one scenario and ``horizon`` slots.

    Feedback: the slot's reward, gain and overhead; and, once a policy has asked for full
    information in its ``reset`` (:meth:`reveal_gradient`; OGASched does), the gradient (30)
    of q(x(t), .) at the played decision, computed in the same compiled pass as the reward.
    The gradient is a signal for the policy, not a metric (``SIGNALS``: not stacked)."""

    SIGNALS = ("gradient",)

    def __init__(
        self,
        scenario: Scenario,
        *,
        horizon: int,
        arrival_prob: float = 0.7,
        trace_counts: np.ndarray | None = None,
    ) -> None:
        if not 0.0 <= arrival_prob <= 1.0:
            raise ValueError(f"arrival_prob: must be in [0, 1], got {arrival_prob}")
        if horizon < 1:
            raise ValueError(f"horizon: must be >= 1, got {horizon}")
        self.scenario = scenario
        self.horizon = int(horizon)
        self.arrival_prob = float(arrival_prob)
        self.n_origin = int(scenario.port_origin.max()) + 1
        self.copies = scenario.n_ports // self.n_origin
        if trace_counts is not None:
            trace_counts = np.asarray(trace_counts)
            if trace_counts.ndim != 2 or trace_counts.shape[1] != self.n_origin or trace_counts.shape[0] == 0:
                raise ValueError(f"trace_counts: expected shape (slots, {self.n_origin})")
            if (trace_counts < 0).any():
                raise ValueError("trace_counts: counts must be >= 0")
        self.trace_counts = trace_counts

    def draw_counts(self, rng: np.random.Generator) -> np.ndarray:
        """(horizon, |L|) job counts per original port; the trace is cycled if it is shorter."""
        if self.trace_counts is None:
            return (rng.random((self.horizon, self.n_origin)) < self.arrival_prob).astype(np.int64)
        rows = self.trace_counts[np.arange(self.horizon) % self.trace_counts.shape[0]]
        return rng.binomial(rows.astype(np.int64), self.arrival_prob)

    def arrivals_from_counts(self, counts: np.ndarray) -> np.ndarray:
        """(T, n_ports) arrival vectors x(t) of the scenario's (possibly replicated) ports."""
        if self.copies == 1:
            return (counts > 0).astype(np.float64)
        return expand_arrivals(np.minimum(counts, self.copies), self.copies)

    def reset(self, rng: np.random.Generator) -> None:
        self.counts = self.draw_counts(rng)
        self.arrivals = self.arrivals_from_counts(self.counts)
        self._t = 0
        self._gradient = False

    def reveal_gradient(self) -> None:
        """Add the gradient at the played decision to every slot's feedback until the next reset."""
        self._gradient = True

    def observe(self, t: int) -> np.ndarray:
        self._t = t
        return self.arrivals[t]

    def step(self, action: np.ndarray) -> Mapping[str, Any]:
        if self._gradient:
            gain, overhead, grad = reward_parts_gradient(self.scenario, self.arrivals[self._t], action)
            return {"reward": gain - overhead, "gain": gain, "overhead": overhead, "gradient": grad}
        gain, overhead = reward_parts(self.scenario, self.arrivals[self._t], action)
        return {"reward": gain - overhead, "gain": gain, "overhead": overhead}
