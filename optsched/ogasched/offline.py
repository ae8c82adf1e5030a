"""The best offline stationary allocation y* of (10) and the regret R_T of OGASched.

Because q is linear in x, the cumulative reward of a fixed y over a trajectory is

    Q({x(t)}, y) = sum_l N_l [ sum_k sum_{r in R_l} f_r^k(y_(l,r)^k) - max_k beta_k sum_r y_(l,r)^k ],

with N_l = sum_t x_l(t): a concave program over Y, the model
:class:`optsched.models.stationary_allocation.StationaryAllocation` (one variable per channel
and resource, o_lk = N_l beta_k). ``offline_optimum`` solves it through ``optsched.solve``:
by default with the first-order ``stationary_alm`` backend, which certifies its answer by a
duality gap, or with ``backend="cvxpy"`` (Clarabel, exact, about 20-40x slower).
The regret is R_T = Q(y*_T) - Q(online), with y*_T re-solved for each checkpoint T.
"""

from __future__ import annotations

import numpy as np

from optsched.models.stationary_allocation import StationaryAllocation
from optsched.ogasched.scenario import Scenario
from optsched.ogasched.utilities import reward
from optsched.result import SolveFailed

DEFAULT_BACKEND = "stationary_alm"


def cumulative_reward(scn: Scenario, counts: np.ndarray, y: np.ndarray) -> float:
    """Q of a stationary y for port arrival totals N_l (= ``counts``), by (7)(12)."""
    return reward(scn, counts, y)


def stationary_model(scn: Scenario, counts: np.ndarray) -> StationaryAllocation:
    """(10) for arrival totals N_l as a model: variable e K + k is y_(l,r)^k of edge e = (l, r)."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.shape != (scn.n_ports,) or not np.isfinite(counts).all() or (counts < 0).any():
        raise ValueError(f"counts: expected {scn.n_ports} non-negative arrival totals")
    K = scn.n_resources
    return StationaryAllocation(
        weight=np.repeat(counts[scn.edge_port], K),
        alpha=scn.edge_alpha.reshape(-1),
        kind=scn.edge_kind.reshape(-1),
        upper=scn.upper.reshape(-1),
        group=scn.group,
        capacity=scn.capacity.reshape(-1),
        port=np.repeat(scn.edge_port, K),
        resource=np.tile(np.arange(K), scn.n_edges),
        overhead=counts[:, None] * scn.beta[None, :],
    )


ORACLE_BACKEND = "cvxpy"  # solves y* when the first-order backend does not certify its gap


def offline_optimum(scn: Scenario, counts: np.ndarray, backend: str = DEFAULT_BACKEND) -> tuple[np.ndarray, str]:
    """y* of (10) for arrival totals N_l (``counts``, shape (|L|,)): the (E, K) decision and the
    backend that proved it optimal.

    The first-order backend is accepted only when it ends ``optimal`` (its duality gap certified
    below ``gap_tol``); when it stops short (``iteration_limit``: measured on 1 of 10 Alibaba
    scenarios at T = 8000) y* is solved by cvxpy/Clarabel instead. Raises :class:`optsched.result.SolveFailed` when
    no backend ends ``optimal``."""
    import optsched

    model = stationary_model(scn, counts)
    tried = []
    for name in dict.fromkeys((backend, ORACLE_BACKEND)):
        result = optsched.solve(model, name)
        if result.termination is optsched.Termination.OPTIMAL:
            return np.asarray(result.solution).reshape(scn.n_edges, scn.n_resources), name
        tried.append(f"{name!r} ended {result.termination.value}")
    raise SolveFailed(f"y* of (10): {', '.join(tried)}")


def regret_curve(
    scn: Scenario, arrivals: np.ndarray, online_rewards: np.ndarray, checkpoints: np.ndarray,
    backend: str = DEFAULT_BACKEND,
) -> list[dict[str, float]]:
    """R_T = Q(y*_T) - Q(online) at each checkpoint T (y*_T re-solved on the first T slots; the
    backend that proved it optimal in ``y_star_backend``)."""
    arrivals = np.asarray(arrivals, dtype=np.float64)
    cum_online = np.cumsum(online_rewards)
    slots = min(arrivals.shape[0], cum_online.shape[0])
    outside = [int(T) for T in checkpoints if not 1 <= int(T) <= slots]
    if outside:  # T = 0 read cum_online[-1], the whole run's reward
        raise ValueError(f"checkpoints: every T must be in [1, {slots}] (the slots run), got {outside[0]}")
    rows = []
    for T in checkpoints:
        T = int(T)
        totals = arrivals[:T].sum(axis=0)
        y_star, solved_by = offline_optimum(scn, totals, backend)
        q_star = cumulative_reward(scn, totals, y_star)
        rows.append({"T": T, "Q_star": q_star, "Q_online": float(cum_online[T - 1]),
                     "regret": q_star - float(cum_online[T - 1]), "y_star_backend": solved_by})
    return rows
