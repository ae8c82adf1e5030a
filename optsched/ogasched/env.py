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

from optsched.models.validate import finite_float, float_array, positive_int
from optsched.ogasched.scenario import Scenario, expand_arrivals
from optsched.ogasched.utilities import reward_parts, reward_parts_gradient
from optsched.policy import SlotClock


class SchedulingEnv(SlotClock):
    """An :class:`optsched.policy.Environment` for one scenario and ``horizon`` slots.

    ``step`` refuses (ValueError) a decision that is not an (E, K) array of numbers or breaks
    (5) or (6) (:meth:`Scenario.first_violation`, with ``violations``' tolerance): the reward
    of such a decision means nothing, and a wrong shape read past the arrays. Observations are
    read-only rows of the drawn arrivals. Feedback: the slot's reward, gain and overhead; and,
    once a policy has asked for full information in its ``reset`` (:meth:`reveal_gradient`; OGASched does), the gradient (30)
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
        self.arrival_prob = finite_float("arrival_prob", arrival_prob)
        if not 0.0 <= self.arrival_prob <= 1.0:
            raise ValueError(f"arrival_prob: must be in [0, 1], got {arrival_prob}")
        self.scenario = scenario
        self.horizon = positive_int("horizon", horizon)
        self.n_origin = int(scenario.port_origin.max()) + 1
        self.copies = scenario.n_ports // self.n_origin
        if trace_counts is not None:
            trace_counts = float_array("trace_counts", trace_counts, ndim=2, shape=(None, self.n_origin),
                                       nonnegative=True, min_size=1)
            if (trace_counts != np.round(trace_counts)).any():
                raise ValueError("trace_counts: job counts must be whole numbers")
            trace_counts = trace_counts.astype(np.int64)
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
        self.arrivals.setflags(write=False)
        self._t = 0
        self._gradient = False
        self.start_slots()

    def reveal_gradient(self) -> None:
        """Add the gradient at the played decision to every slot's feedback until the next reset."""
        self._gradient = True

    def observe(self, t: int) -> np.ndarray:
        self._t = self.open_slot(t)
        return self.arrivals[self._t]

    def step(self, action: np.ndarray) -> Mapping[str, Any]:
        self.check_step()
        scn = self.scenario
        if not (type(action) is np.ndarray and action.dtype == np.float64):
            action = float_array("action", action, ndim=2)
        problem = scn.first_violation(action)
        if problem is not None:
            raise ValueError(f"action: slot {self._t}: {problem}")
        self.close_slot()
        if self._gradient:
            gain, overhead, grad = reward_parts_gradient(self.scenario, self.arrivals[self._t], action)
            return {"reward": gain - overhead, "gain": gain, "overhead": overhead, "gradient": grad}
        gain, overhead = reward_parts(self.scenario, self.arrivals[self._t], action)
        return {"reward": gain - overhead, "gain": gain, "overhead": overhead}
