"""Utilities (54), the per-slot reward (7) in its separable form (12), and its gradient (30).

With the nice setup (12), for arrivals x and a decision y,

    q(x, y) = sum_l x_l [ sum_k sum_{r in R_l} f_r^k(y_(l,r)^k) - max_k beta_k sum_{r in R_l} y_(l,r)^k ]   (7)(8)(12)

and its (super)gradient is (30):

    dq / dy_(l,r)^k = x_l ( (f_r^k)'(y_(l,r)^k) - beta_k * [k = k*_l] ),  k*_l = argmax_k beta_k sum_r y_(l,r)^k  (27)

(ties in (27) go to the smallest k; any choice gives a supergradient of the concave q).
Everything is vectorised over all channels and resources: no loop over ports or nodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:
    from optsched.ogasched.scenario import Scenario

Fn = Callable[[np.ndarray, np.ndarray], np.ndarray]

# (54): name -> (f(y, alpha), f'(y, alpha)); each is concave, increasing, f(0) = 0.
UTILITY_KINDS: dict[str, tuple[Fn, Fn]] = {
    "linear": (lambda y, a: a * y, lambda y, a: a + 0.0 * y),
    "log": (lambda y, a: a * np.log1p(y), lambda y, a: a / (y + 1.0)),
    "reciprocal": (lambda y, a: 1.0 / a - 1.0 / (y + a), lambda y, a: 1.0 / (y + a) ** 2),
    "poly": (lambda y, a: a * np.sqrt(y + 1.0) - a, lambda y, a: 0.5 * a / np.sqrt(y + 1.0)),
}
_BY_CODE = tuple(UTILITY_KINDS.values())


def _apply(scn: "Scenario", y: np.ndarray, which: int) -> np.ndarray:
    """f (which=0) or f' (which=1) of every channel, each with its own kind and alpha."""
    perm, slices, alpha = scn.kind_layout
    flat = y.reshape(-1) if perm is None else y.reshape(-1)[perm]
    values = np.empty_like(flat)
    for code, sl in slices:
        values[sl] = _BY_CODE[code][which](flat[sl], alpha[sl])
    if perm is None:
        return values.reshape(y.shape)
    out = np.empty_like(values)
    out[perm] = values
    return out.reshape(y.shape)


def utility(scn: "Scenario", y: np.ndarray) -> np.ndarray:
    """(E, K) array of f_r^k(y_(l,r)^k)."""
    return _apply(scn, y, 0)


def utility_derivative(scn: "Scenario", y: np.ndarray) -> np.ndarray:
    """(E, K) array of (f_r^k)'(y_(l,r)^k)."""
    return _apply(scn, y, 1)


def port_terms(scn: "Scenario", y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per port: computation gain sum_k sum_r f_r^k, overhead max_k beta_k sum_r y, and k*_l."""
    gain = scn.per_port(utility(scn, y).sum(axis=1))
    weighted = scn.per_port(y) * scn.beta[None, :]
    kstar = weighted.argmax(axis=1)
    return gain, weighted[np.arange(scn.n_ports), kstar], kstar


def reward(scn: "Scenario", x: np.ndarray, y: np.ndarray) -> float:
    """q(x, y) of (8) with the port rewards (7) in the separable form (12)."""
    gain, overhead, _ = port_terms(scn, y)
    return float(np.dot(x, gain - overhead))


def reward_parts(scn: "Scenario", x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(computation gain, communication overhead) of q(x, y), summed over arrived ports (Fig. 6)."""
    gain, overhead, _ = port_terms(scn, y)
    return float(np.dot(x, gain)), float(np.dot(x, overhead))


def gradient(scn: "Scenario", x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(E, K) gradient (30) of q(x, .) at y."""
    weighted = scn.per_port(y) * scn.beta[None, :]
    kstar = weighted.argmax(axis=1)
    g = utility_derivative(scn, y)
    rows = np.arange(scn.n_edges)
    g[rows, kstar[scn.edge_port]] -= scn.beta[kstar[scn.edge_port]]
    return g * np.asarray(x, dtype=np.float64)[scn.edge_port][:, None]
