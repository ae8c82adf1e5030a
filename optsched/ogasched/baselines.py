"""The four baselines of Section IV: DRF, FAIRNESS, BINPACKING and SPREADING.

Each sees the arrivals x(t) of the slot and returns a decision y(t) in Y: it only uses the
channels (l, r) in E (service locality) and never exceeds a request (5) or a capacity (6).
A job of type l may take up to a_l^k of resource k from each of its nodes r in R_l (the
channel bound (5), as OGASched may). The paper describes the baselines in one sentence
each; the precise rules chosen here are:

- DRF: every node serves the arrived ports of L_r in ascending order of their dominant share
  s_l = max_k a_l^k / sum_{r in R_l} c_r^k, each up to a_l^k, until its capacity runs out.
- FAIRNESS: every node splits c_r^k among the arrived ports of L_r in proportion to
  a_l^k / sum_{arrived l' in L_r} a_l'^k, capped at a_l^k (the share of absent ports is not
  reserved, else capacity would be wasted on jobs that did not come).
- BINPACKING / SPREADING: the arrived jobs are placed one after another on ``servers[l]``
  of their nodes, scored by utilisation (Kubernetes MostAllocated / LeastAllocated); see
  :func:`optsched.ogasched.placement_kernel.place_jobs`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from optsched.ogasched.scenario import Scenario


def drf_allocation(scn: Scenario, x: np.ndarray, layout: Mapping[str, np.ndarray]) -> np.ndarray:
    """DRF: per node, greedy fill in ascending dominant share (vectorised segmented cumsum)."""
    perm, seg_first = layout["perm"], layout["seg_first"]
    demand = scn.upper[perm] * (np.asarray(x)[scn.edge_port[perm]] > 0)[:, None]
    csum = np.cumsum(demand, axis=0)
    before = csum - demand
    before -= before[seg_first]
    y_sorted = np.clip(scn.capacity[scn.edge_node[perm]] - before, 0.0, demand)
    y = np.empty_like(y_sorted)
    y[perm] = y_sorted
    return y


def drf_layout(scn: Scenario) -> dict[str, np.ndarray]:
    """Edges ordered by (node, dominant-share rank of the port), and each edge's segment start."""
    total = scn.port_incidence @ scn.capacity[scn.edge_node]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(total > 0, scn.requests / total, np.where(scn.requests > 0, np.inf, 0.0)).max(axis=1)
    rank = np.argsort(np.argsort(share, kind="stable"), kind="stable")
    perm = np.lexsort((rank[scn.edge_port], scn.edge_node))
    nodes = scn.edge_node[perm]
    start = np.r_[True, nodes[1:] != nodes[:-1]]
    seg_first = np.flatnonzero(start)[np.cumsum(start) - 1]
    return {"perm": perm, "seg_first": seg_first, "share": share}


def fairness_allocation(scn: Scenario, x: np.ndarray, layout: Mapping[str, np.ndarray]) -> np.ndarray:
    """FAIRNESS: proportional shares of every node among its arrived ports, capped at a_l^k."""
    demand = scn.upper * (np.asarray(x)[scn.edge_port] > 0)[:, None]
    total = scn.node_incidence @ demand
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(total > 0, scn.capacity / total, 0.0)
    return np.minimum(demand, demand * share[scn.edge_node])


def _placement(favour_full: bool) -> Callable[[Scenario, np.ndarray, Mapping[str, np.ndarray]], np.ndarray]:
    def allocate(scn: Scenario, x: np.ndarray, layout: Mapping[str, np.ndarray]) -> np.ndarray:
        from optsched.ogasched.placement_kernel import place_jobs

        return place_jobs(
            np.asarray(x, dtype=np.float64), layout["port_ptr"], scn.edge_node, scn.requests,
            scn.capacity, scn.servers, favour_full,
        )

    return allocate


def placement_layout(scn: Scenario) -> dict[str, np.ndarray]:
    """CSR pointer of each port's edges (edges are sorted by port)."""
    return {"port_ptr": np.asarray(scn.port_ptr)}


# name -> (layout builder run once per scenario, per-slot allocation rule)
BASELINES: dict[str, tuple[Callable[[Scenario], dict[str, np.ndarray]], Callable[..., np.ndarray]]] = {
    "DRF": (drf_layout, drf_allocation),
    "FAIRNESS": (lambda scn: {}, fairness_allocation),
    "BINPACKING": (placement_layout, _placement(True)),
    "SPREADING": (placement_layout, _placement(False)),
}


class BaselinePolicy:
    """A Section IV baseline as a :class:`optsched.policy.Policy` (stateless across slots)."""

    def __init__(self, name: str) -> None:
        if name not in BASELINES:
            raise ValueError(f"baseline: unknown baseline {name!r} (known: {', '.join(BASELINES)})")
        self.name = name
        self._build, self._rule = BASELINES[name]

    def reset(self, env: Any, rng: np.random.Generator) -> None:
        self.scn: Scenario = env.scenario
        self.layout = self._build(self.scn)

    def act(self, observation: np.ndarray) -> np.ndarray:
        return self._rule(self.scn, observation, self.layout)

    def observe(self, feedback: Mapping[str, Any]) -> None:
        pass
