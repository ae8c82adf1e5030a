"""Utilities (54), the per-slot reward (7) in its separable form (12), and its gradient (30).

With the nice setup (12), for arrivals x and a decision y,

    q(x, y) = sum_l x_l [ sum_k sum_{r in R_l} f_r^k(y_(l,r)^k) - max_k beta_k sum_{r in R_l} y_(l,r)^k ]   (7)(8)(12)

and its (super)gradient is (30):

    dq / dy_(l,r)^k = x_l ( (f_r^k)'(y_(l,r)^k) - beta_k * [k = k*_l] ),  k*_l = argmax_k beta_k sum_r y_(l,r)^k  (27)

(ties in (27) go to the smallest k; any choice gives a supergradient of the concave q).
Gain and overhead come from one compiled pass over the arrived ports, the gradient from
another, or all three from one (:mod:`optsched.ogasched.utility_kernel`); ``UTILITY_KINDS``
holds the numpy formulas they follow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

# (54): name -> (f(y, alpha), f'(y, alpha)) in the order of the kind codes; re-exported from the
# model of y* (10), which holds them, being the program they define.
from optsched.models.stationary_allocation import UTILITIES as UTILITY_KINDS  # noqa: F401

if TYPE_CHECKING:
    from optsched.ogasched.scenario import Scenario

_kernels = None


def _compiled():
    """The kernels of :mod:`optsched.ogasched.utility_kernel` (numba imported at the first call)."""
    global _kernels
    if _kernels is None:
        from optsched.ogasched.utility_kernel import slot_gradient, slot_terms, slot_terms_gradient

        _kernels = slot_terms, slot_gradient, slot_terms_gradient
    return _kernels


def _flat(scn: "Scenario", x: np.ndarray, y: np.ndarray) -> tuple:
    kind_ptr, channel = scn.port_kind_layout
    return (np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64).reshape(-1),
            scn.port_ptr, kind_ptr, channel, scn.beta, scn.edge_alpha.reshape(-1))


def reward(scn: "Scenario", x: np.ndarray, y: np.ndarray) -> float:
    """q(x, y) of (8) with the port rewards (7) in the separable form (12); ``x`` may hold
    any non-negative weights (arrival totals N_l for the cumulative reward of a fixed y)."""
    gain, overhead = reward_parts(scn, x, y)
    return gain - overhead


def reward_parts(scn: "Scenario", x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(computation gain, communication overhead) of q(x, y), summed over arrived ports (Fig. 6)."""
    return _compiled()[0](*_flat(scn, x, y))


def gradient(scn: "Scenario", x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(E, K) gradient (30) of q(x, .) at y, in one compiled pass (f' and k*_l of (27))."""
    grad = np.empty((scn.n_edges, scn.n_resources))
    _compiled()[1](*_flat(scn, x, y), grad.reshape(-1))
    return grad


def reward_parts_gradient(scn: "Scenario", x: np.ndarray, y: np.ndarray) -> tuple[float, float, np.ndarray]:
    """:func:`reward_parts` and :func:`gradient` at the same (x, y) in one compiled pass (the
    full-information feedback of a slot, :class:`optsched.ogasched.env.SchedulingEnv`)."""
    grad = np.empty((scn.n_edges, scn.n_resources))
    gain, overhead = _compiled()[2](*_flat(scn, x, y), grad.reshape(-1))
    return gain, overhead, grad
