"""OGASched (Algorithm 1): online gradient ascent (31) with the exact projection (32).

    y(t+1) = Pi_Y( y(t) + eta_t * grad q(x(t), y(t)) )                      (31)

y(t) is committed before x(t) is revealed (online learning: the policy is compared with the
best fixed y* of (10)); the observation of slot t is only used for the update after it.
Step sizes: ``"decay"`` eta_t = eta_0 * decay^t (Table II: eta_0 = 25, decay 0.9999), or
``"theory"`` (53): eta_t = diam(Y) / (||grad q(x(t), y(t))|| sqrt(T)), with diam(Y) bounded by
(51), sqrt(2 sum_k abar^k sum_r c_r^k). The projection is the slot's ``capacity_projection``
subproblem, solved through the seam by ``backend``: ``fast`` (default, exact, the compiled
kernel), ``paper`` (Algorithm 1's own steps 6-31 as printed: they assume the capacity binds and
cap only the largest element, so the point can leave Y; such a slot is projected by ``fast``
instead and counted in ``solver.fallbacks``), ``highs``, ``cvxpy`` or ``pyomo``.
y(1) = 0, which is in Y.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from optsched.models.capacity_projection import CapacityProjection
from optsched.models.validate import finite_float, one_of, positive_int
from optsched.observe import SubproblemSolver
from optsched.ogasched.scenario import Scenario
from optsched.ogasched.utilities import gradient

DEFAULT_BACKEND = "fast"


def diameter_bound(scn: Scenario) -> float:
    """(51): diam(Y) <= sqrt(2 sum_k abar^k sum_r c_r^k), abar^k = max_l a_l^k."""
    return float(np.sqrt(2.0 * np.dot(scn.requests.max(axis=0), scn.capacity.sum(axis=0))))


def _decay_step(policy: "OGASched", grad: np.ndarray) -> float:
    return policy.eta0 * policy.decay ** policy.t


def _theory_step(policy: "OGASched", grad: np.ndarray) -> float:
    norm = float(np.linalg.norm(grad))
    return 0.0 if norm == 0.0 else policy.diam / (norm * np.sqrt(policy.horizon))


STEP_RULES: dict[str, Callable[["OGASched", np.ndarray], float]] = {"decay": _decay_step, "theory": _theory_step}


class OGASched:
    """The OGASched policy as an :class:`optsched.policy.Policy`."""

    def __init__(self, *, eta0: float = 25.0, decay: float = 0.9999, step: str = "decay", horizon: int | None = None,
                 backend: str | None = None, options: Mapping[str, Any] | None = None, name: str = "OGASched") -> None:
        one_of("step", step, tuple(STEP_RULES))
        if step == "theory":  # (53) needs the horizon T
            horizon = positive_int("horizon", horizon)
        eta0 = finite_float("eta0", eta0)
        decay = finite_float("decay", decay)
        if not eta0 > 0:
            raise ValueError(f"eta0: the step size must be > 0, got {eta0}")
        if not 0 < decay <= 1:  # eta_t = eta0 decay^t shrinks (a decay above 1 overflowed within the run)
            raise ValueError(f"decay: must be in (0, 1], got {decay}")
        self.name = name
        self.eta0, self.decay, self.horizon = eta0, decay, horizon
        self._step = STEP_RULES[step]
        self.solver = SubproblemSolver(CapacityProjection, backend, default=DEFAULT_BACKEND, options=options, label=name)

    def reset(self, env: Any, rng: np.random.Generator) -> None:
        scn: Scenario = env.scenario
        self.scn = scn
        self.t = 0
        self.diam = diameter_bound(scn)
        self.y = np.zeros((scn.n_edges, scn.n_resources))
        self._polytope = CapacityProjection(z=self.y.reshape(-1), upper=scn.upper.reshape(-1), group=scn.group,
                                            capacity=scn.capacity.reshape(-1))
        if hasattr(env, "reveal_gradient"):
            env.reveal_gradient()  # full information: the gradient comes with the reward, one pass for both

    def act(self, observation: np.ndarray) -> np.ndarray:
        self.x = observation
        return self.y

    def update(self, x: np.ndarray, grad: np.ndarray | None = None) -> None:
        """Steps 4-5 and 32-33 of Algorithm 1 for the arrivals x(t) of the slot just played;
        ``grad``: the gradient (30) at (x, y(t)) when the feedback brought it."""
        if grad is None:
            grad = gradient(self.scn, x, self.y)
        z = self.y + self._step(self, grad) * grad
        self.y = self.solver.solution(self._polytope.with_z(z.reshape(-1))).reshape(self.y.shape)
        self.t += 1

    def observe(self, feedback: Mapping[str, Any]) -> None:
        self.update(self.x, feedback.get("gradient"))
