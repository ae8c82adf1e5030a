"""The best offline stationary allocation y* of (10) and the regret R_T of OGASched.

Because q is linear in x, the cumulative reward of a fixed y over a trajectory is

    Q({x(t)}, y) = sum_l N_l [ sum_k sum_{r in R_l} f_r^k(y_(l,r)^k) - max_k beta_k sum_r y_(l,r)^k ],

with N_l = sum_t x_l(t): a concave program over Y. ``offline_optimum`` solves it exactly with
cvxpy and Clarabel (the utilities (54) are exponential-cone / second-order-cone / linear
representable, the max is an epigraph). This scales to the ``large`` preset (15,000
variables: about 30 s wall). Projected supergradient ascent with the exact projection was
tried as a cheaper substitute and dropped: the max in (7) makes it a nonsmooth method that
was still 0.2-2.5% below the optimum after thousands of steps.
The regret is R_T = Q(y*_T) - Q(online), with y*_T re-solved for each checkpoint T.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from optsched.ogasched.scenario import Scenario
from optsched.ogasched.utilities import UTILITY_KINDS, reward
from optsched.solvers.projection_fast import project_capacity


def _cvx_utility(cp: Any, y: Any, a: np.ndarray) -> dict[str, Callable[[], Any]]:
    return {
        "linear": lambda: cp.multiply(a, y),
        "log": lambda: cp.multiply(a, cp.log(y + 1.0)),
        "reciprocal": lambda: 1.0 / a - cp.inv_pos(y + a),
        "poly": lambda: cp.multiply(a, cp.sqrt(y + 1.0)) - a,
    }


def cumulative_reward(scn: Scenario, counts: np.ndarray, y: np.ndarray) -> float:
    """Q of a stationary y for port arrival totals N_l (= ``counts``), by (7)(12)."""
    return reward(scn, counts, y)


def _solve_cvxpy(scn: Scenario, counts: np.ndarray) -> np.ndarray:
    import cvxpy as cp

    E, K = scn.n_edges, scn.n_resources
    y = cp.Variable(E * K, nonneg=True)
    flat_alpha = scn.edge_alpha.reshape(-1)
    gains = []
    weights = np.asarray(counts, dtype=np.float64)[scn.edge_port]
    flat_w = np.repeat(weights, K)
    names = list(UTILITY_KINDS)
    perm, slices, _ = scn.kind_layout
    for code, sl in slices:
        idx = np.arange(E * K)[sl] if perm is None else perm[sl]
        term = _cvx_utility(cp, y[idx], flat_alpha[idx])[names[code]]()
        gains.append(flat_w[idx] @ term)
    Y = cp.reshape(y, (E, K), order="C")
    P = scn.port_incidence
    port_sum = P @ Y  # (L, K)
    overhead = cp.max(cp.multiply(port_sum, np.tile(scn.beta, (scn.n_ports, 1))), axis=1)
    objective = cp.sum(gains) - np.asarray(counts, dtype=np.float64) @ overhead
    constraints = [y <= scn.upper.reshape(-1), scn.node_incidence @ Y <= scn.capacity]
    problem = cp.Problem(cp.Maximize(objective), constraints)
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-10)
    if problem.status not in ("optimal", "optimal_inaccurate") or y.value is None:
        raise RuntimeError(f"cvxpy could not solve (10): status {problem.status}")
    # the solver's point may sit a hair outside Y; the exact projection puts it back
    z = np.asarray(y.value, dtype=np.float64)
    return project_capacity(z, scn.upper.reshape(-1), scn.group, scn.capacity.reshape(-1)).reshape(E, K)


def offline_optimum(scn: Scenario, counts: np.ndarray) -> np.ndarray:
    """y* of (10) for arrival totals N_l (``counts``, shape (|L|,)); returns the (E, K) decision."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.shape != (scn.n_ports,) or (counts < 0).any():
        raise ValueError(f"counts: expected {scn.n_ports} non-negative arrival totals")
    return _solve_cvxpy(scn, counts)


def regret_curve(
    scn: Scenario, arrivals: np.ndarray, online_rewards: np.ndarray, checkpoints: np.ndarray
) -> list[dict[str, float]]:
    """R_T = Q(y*_T) - Q(online) at each checkpoint T (y*_T re-solved on the first T slots)."""
    arrivals = np.asarray(arrivals, dtype=np.float64)
    cum_online = np.cumsum(online_rewards)
    rows = []
    for T in checkpoints:
        T = int(T)
        totals = arrivals[:T].sum(axis=0)
        y_star = offline_optimum(scn, totals)
        q_star = cumulative_reward(scn, totals, y_star)
        rows.append({"T": T, "Q_star": q_star, "Q_online": float(cum_online[T - 1]),
                     "regret": q_star - float(cum_online[T - 1])})
    return rows
