"""The four baselines of Section IV: DRF, FAIRNESS, BINPACKING and SPREADING.

Each sees the arrivals x(t) of the slot and returns a decision y(t) in Y: it only uses the
channels (l, r) in E (service locality) and never exceeds a request (5) or a capacity (6).
All four give an arrived job of type l the same allowance, up to a_l^k of resource k from
each of its nodes r in R_l (the channel bound (5), as OGASched may): the paper describes
them as differing in where (in which order) they place, not in how much a job may take.
Without contention they therefore coincide. The rules chosen here:

- DRF: every node serves the arrived ports of L_r in ascending order of their dominant share
  s_l = max_k a_l^k / sum_{r in R_l} c_r^k, each up to a_l^k, until its capacity runs out.
- FAIRNESS: every node splits c_r^k among the arrived ports of L_r in proportion to
  a_l^k / sum_{arrived l' in L_r} a_l'^k, capped at a_l^k (the share of absent ports is not
  reserved, else capacity would be wasted on jobs that did not come).
- BINPACKING / SPREADING: the arrived jobs' tasks (one per node of R_l) are placed round
  robin, each on the job's best remaining node by utilisation (Kubernetes MostAllocated /
  LeastAllocated), nodes that fit the whole request first; see
  :func:`optsched.ogasched.allocation_kernel.place_tasks`.

Each rule is a compiled kernel (:mod:`optsched.ogasched.allocation_kernel`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

import numpy as np

from optsched.lazy_modules import loaded
from optsched.ogasched.scenario import Scenario


def _node_layout(scn: Scenario, port_rank: np.ndarray) -> dict[str, np.ndarray]:
    """Each node's edges, ordered by the rank of their port (CSR ``node_ptr`` / ``node_edges``)."""
    node_edges = np.lexsort((port_rank[scn.edge_port], scn.edge_node))
    node_ptr = np.r_[0, np.cumsum(np.bincount(scn.edge_node, minlength=scn.n_nodes))]
    return {"node_ptr": node_ptr, "node_edges": node_edges}


def drf_layout(scn: Scenario) -> dict[str, np.ndarray]:
    """Every node's edges in ascending dominant share s_l = max_k a_l^k / sum_{r in R_l} c_r^k."""
    total = np.zeros((scn.n_ports, scn.n_resources))
    np.add.at(total, scn.edge_port, scn.capacity[scn.edge_node])
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(total > 0, scn.requests / total, np.where(scn.requests > 0, np.inf, 0.0)).max(axis=1)
    rank = np.argsort(np.argsort(share, kind="stable"), kind="stable")
    return {**_node_layout(scn, rank), "share": share}


def fairness_layout(scn: Scenario) -> dict[str, np.ndarray]:
    """Every node's edges in port order."""
    return _node_layout(scn, np.arange(scn.n_ports))


def _node_rule_allocation(name: str, scn: Scenario, x: np.ndarray, layout: Mapping[str, np.ndarray]) -> np.ndarray:
    rule = getattr(loaded("optsched.ogasched.allocation_kernel"), name)
    return rule(np.asarray(x, dtype=np.float64), scn.edge_port, layout["node_ptr"], layout["node_edges"],
                scn.requests, scn.capacity)


def _node_rule(name: str) -> Callable[[Scenario, np.ndarray, Mapping[str, np.ndarray]], np.ndarray]:
    return functools.partial(_node_rule_allocation, name)  # a partial, not a closure: the policy pickles


def _placement_allocation(favour_full: bool, scn: Scenario, x: np.ndarray, layout: Mapping[str, np.ndarray]) -> np.ndarray:
    return loaded("optsched.ogasched.allocation_kernel").place_tasks(
        np.asarray(x, dtype=np.float64), scn.port_ptr, layout["slot_ptr"], layout["slot_node"], layout["node_ptr"],
        layout["node_slot"], layout["node_port"], layout["first_class"], scn.requests, scn.capacity,
        layout["tolerance"], favour_full)


def _placement(favour_full: bool) -> Callable[[Scenario, np.ndarray, Mapping[str, np.ndarray]], np.ndarray]:
    return functools.partial(_placement_allocation, favour_full)


def placement_layout(scn: Scenario) -> dict[str, np.ndarray]:
    """The slots of :func:`optsched.ogasched.allocation_kernel.place_tasks`: each job's edges
    in edge order from ``slot_ptr[l]``, its degree rounded up to a multiple of the kernel's
    block; each slot's node; each node's slots and their ports (CSR ``node_ptr`` /
    ``node_slot`` / ``node_port``); each edge's class on empty nodes; the fit tolerance
    1e-12 max(1, c_r^k)."""
    from optsched.ogasched.allocation_kernel import BLOCK, initial_classes

    slots = -(-np.diff(scn.port_ptr) // BLOCK) * BLOCK
    slot_ptr = np.r_[0, np.cumsum(slots)]
    edge_slot = slot_ptr[scn.edge_port] + np.arange(scn.n_edges) - scn.port_ptr[scn.edge_port]
    slot_node = np.zeros(slot_ptr[-1], dtype=np.int64)
    slot_node[edge_slot] = scn.edge_node
    nodes = _node_layout(scn, np.arange(scn.n_ports))
    tolerance = 1e-12 * np.maximum(1.0, scn.capacity)
    return {"slot_ptr": slot_ptr, "slot_node": slot_node, "node_ptr": nodes["node_ptr"],
            "node_slot": edge_slot[nodes["node_edges"]], "node_port": scn.edge_port[nodes["node_edges"]],
            "first_class": initial_classes(scn.port_ptr, scn.edge_node, scn.requests, scn.capacity, tolerance),
            "tolerance": tolerance}


# name -> (layout builder run once per scenario, per-slot allocation rule)
BASELINES: dict[str, tuple[Callable[[Scenario], dict[str, np.ndarray]], Callable[..., np.ndarray]]] = {
    "DRF": (drf_layout, _node_rule("drf")),
    "FAIRNESS": (fairness_layout, _node_rule("fairness")),
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
