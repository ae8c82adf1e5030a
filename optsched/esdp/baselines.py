"""The handcrafted baselines of Section 4.1. Each estimates Z_tilde by the average of its own
past observations (v_hat of (8), 0 for a channel never used), ranks, and fills greedily:

HSWF         ports with a job in descending order of their estimated welfare
             sum_{r in R_l} v_hat_(l,r);
LCF          the paper's reading: "ranks each job (non-empty port) in the ascending order of
             cost": ports with a job in ascending order of the supply cost of serving the job,
             sum_{r in R_l} C_(l,r) with C_(l,r) = sum_k f_k(a_k^(l,r)) (ties: lower port index);
             within a port, channels by ascending C (ties: higher v_hat first);
LCF-channel  every channel of a port with a job ranked on its own by ascending C (ties: higher
             v_hat first), ports mixed (the reading this module used first; kept for comparison);
LWTF         ports with a job in descending order of waiting time, the number of slots since the
             port was last served (ties: lower port index first).

Within a port, HSWF and LWTF take channels in descending v_hat. "Set x = 1 in turn until (1)
cannot be satisfied" is read as first fit: a channel that does not fit in the remaining
capacity is skipped and the scan goes on (the stronger reading of the two; see docs/esdp.md).
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Mapping

import numpy as np

from optsched.esdp.env import DispatchInstance, Observation
from optsched.esdp.statistics import ChannelStats


def first_fit(order: np.ndarray, requirements: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Take the channels of ``order`` one by one, each one only if it still fits in (1).
    (Integers as Python lists: a numpy test per channel of a handful of resources took 10x
    the time, 4 % of the ``scale4x`` run.)"""
    x = np.zeros(requirements.shape[1], dtype=bool)
    left = np.asarray(capacity, dtype=np.int64).tolist()
    order = np.asarray(order, dtype=np.int64)
    for e, col in zip(order.tolist(), requirements.T[order].tolist()):
        if all(map(operator.le, col, left)):
            x[e] = True
            left = list(map(operator.sub, left, col))
    return x


def _by_ports(ports: np.ndarray, inst: DispatchInstance, v_hat: np.ndarray, mask: np.ndarray,
              cost_first: bool = False) -> np.ndarray:
    """Channel order: ports in the given order, each port's available channels by v_hat desc
    (with ``cost_first``: by ascending cost C, ties by v_hat desc)."""
    chunks = []
    for p in ports:
        chans = np.flatnonzero((inst.edge_port == p) & mask)
        keys = (-v_hat[chans], inst.cost[chans]) if cost_first else (-v_hat[chans],)
        chunks.append(chans[np.lexsort(keys)])
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)


def _hswf(policy: "GreedyBaseline", obs: Observation, v_hat: np.ndarray) -> np.ndarray:
    inst = policy.instance
    ports = np.flatnonzero(obs.arrived)
    score = np.array([v_hat[inst.edge_port == p].sum() for p in ports])
    return _by_ports(ports[np.argsort(-score, kind="stable")], inst, v_hat, obs.channel_mask)


def _lcf(policy: "GreedyBaseline", obs: Observation, v_hat: np.ndarray) -> np.ndarray:
    inst = policy.instance
    ports = np.flatnonzero(obs.arrived)
    job_cost = np.bincount(inst.edge_port, weights=inst.cost, minlength=inst.n_ports)[ports]
    return _by_ports(ports[np.argsort(job_cost, kind="stable")], inst, v_hat, obs.channel_mask, cost_first=True)


def _lcf_channel(policy: "GreedyBaseline", obs: Observation, v_hat: np.ndarray) -> np.ndarray:
    chans = np.flatnonzero(obs.channel_mask)
    return chans[np.lexsort((-v_hat[chans], policy.instance.cost[chans]))]


def _lwtf(policy: "GreedyBaseline", obs: Observation, v_hat: np.ndarray) -> np.ndarray:
    ports = np.flatnonzero(obs.arrived)
    waited = obs.t - policy.last_served[ports]
    return _by_ports(ports[np.argsort(-waited, kind="stable")], policy.instance, v_hat, obs.channel_mask)


RANKINGS: dict[str, Callable[["GreedyBaseline", Observation, np.ndarray], np.ndarray]] = {
    "HSWF": _hswf,
    "LCF": _lcf,
    "LCF-channel": _lcf_channel,
    "LWTF": _lwtf,
}


class GreedyBaseline:
    """One of HSWF, LCF, LCF-channel, LWTF (by ``name``), a :class:`optsched.policy.Policy`."""

    def __init__(self, name: str) -> None:
        if name not in RANKINGS:
            raise ValueError(f"baseline: unknown baseline {name!r} (known: {', '.join(RANKINGS)})")
        self.name = name
        self._rank = RANKINGS[name]

    def reset(self, env: Any, rng: np.random.Generator) -> None:
        self.instance: DispatchInstance = env.instance
        self.stats = ChannelStats(self.instance.n_edges)
        self.last_served = np.full(self.instance.n_ports, -1, dtype=np.int64)
        self._t = 0

    def act(self, observation: Observation) -> np.ndarray:
        self._t = observation.t
        order = self._rank(self, observation, self.stats.v_hat())
        return first_fit(order, self.instance.requirements, self.instance.capacity)

    def observe(self, feedback: Mapping[str, Any]) -> None:
        x = feedback["x"]
        self.stats.update(x, feedback["z"])
        self.last_served[np.unique(self.instance.edge_port[x])] = self._t
