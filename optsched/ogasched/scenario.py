"""The bipartite scheduling scenario of paper 003 (Section II) and its synthetic generator.

A scenario is the graph G = (L, R, E) of ports (job types) and nodes (computing instances),
the requests a_l^k of (5), the capacities c_r^k of (6), and the separable utilities
f_r^k of the nice setup (12) with coefficients alpha_r^k, plus the overhead weights beta_k
of (7). Decisions are stored per channel: ``y[e, k]`` is y_(l,r)^k for the e-th edge
(l, r) = (``edge_port[e]``, ``edge_node[e]``); edges are sorted by port, then node.

Table II defaults: |L| = 10, |R| = 128, K = 6, alpha in [1.0, 1.5], beta in [0.3, 0.5],
contention level 10 (a multiplier on the requests), graph density sum_r |L_r| / |R| ~ 2.5.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from optsched.models.base import frozen_cached_property
from optsched.models.validate import float_array, index_array, positive_int
from optsched.ogasched.utilities import UTILITY_KINDS

if TYPE_CHECKING:
    import scipy.sparse as sp


@dataclass(frozen=True, eq=False)
class Scenario:
    """One instance of the online bipartite scheduling problem (Section II-A).

    ``requests`` (L, K) is a_l^k (already multiplied by the contention level),
    ``capacity`` (R, K) is c_r^k, ``alpha`` (R, K) the utility coefficients of (54),
    ``kind`` (R, K) the index into ``UTILITY_KINDS`` of f_r^k, ``beta`` (K,) the overhead
    weights.
    """

    n_ports: int
    n_nodes: int
    edge_port: Any
    edge_node: Any
    requests: Any
    capacity: Any
    alpha: Any
    kind: Any
    beta: Any
    port_origin: Any = field(default=None)

    def __post_init__(self) -> None:
        L = positive_int("n_ports", self.n_ports)
        R = positive_int("n_nodes", self.n_nodes)
        ep = index_array("edge_port", self.edge_port, upper=L)
        en = index_array("edge_node", self.edge_node, upper=R)
        if ep.shape != en.shape or ep.size == 0:
            raise ValueError("edge_port: must be a non-empty array as long as edge_node")
        order = np.lexsort((en, ep))
        ep, en = ep[order], en[order]
        if ep.size > 1 and ((np.diff(ep) == 0) & (np.diff(en) == 0)).any():
            raise ValueError("edge_port: an edge (port, node) is listed twice")
        beta = float_array("beta", self.beta, nonnegative=True, min_size=1)
        K = beta.size
        a = float_array("requests", self.requests, ndim=2, shape=(L, K), nonnegative=True)
        c = float_array("capacity", self.capacity, ndim=2, shape=(R, K), nonnegative=True)
        alpha = float_array("alpha", self.alpha, ndim=2, shape=(R, K))
        if (alpha <= 0).any():
            raise ValueError("alpha: utility coefficients must be positive")
        kind = index_array("kind", self.kind, upper=len(UTILITY_KINDS), ndim=2)
        if kind.shape != (R, K):
            raise ValueError(f"kind: expected shape {(R, K)}, got {kind.shape}")
        origin = np.arange(L) if self.port_origin is None else index_array("port_origin", self.port_origin, upper=L)
        if origin.shape != (L,):
            raise ValueError("port_origin: expected one entry per port")
        for name, value in (("n_ports", L), ("n_nodes", R), ("edge_port", ep), ("edge_node", en), ("beta", beta),
                            ("requests", a), ("capacity", c), ("alpha", alpha), ("kind", kind),
                            ("port_origin", origin)):
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            object.__setattr__(self, name, value)

    # --- sizes -------------------------------------------------------------------------
    @property
    def n_resources(self) -> int:
        return int(self.beta.size)

    @property
    def n_edges(self) -> int:
        return int(self.edge_port.size)

    @property
    def density(self) -> float:
        """Graph density sum_r |L_r| / |R| (Table III)."""
        return self.n_edges / self.n_nodes

    # --- cached layout helpers -------------------------------------------------------------
    @frozen_cached_property
    def port_incidence(self) -> sp.csr_matrix:
        """(L, E) 0-1 matrix: P @ y sums a per-channel array over R_l for each port."""
        E = self.n_edges
        import scipy.sparse as sp

        return sp.csr_matrix((np.ones(E), (self.edge_port, np.arange(E))), shape=(self.n_ports, E))

    @frozen_cached_property
    def port_ptr(self) -> np.ndarray:
        """CSR pointer: the edges of port l are ``port_ptr[l]:port_ptr[l+1]`` (edges sorted by port)."""
        out = np.r_[0, np.cumsum(np.bincount(self.edge_port, minlength=self.n_ports))]
        out.setflags(write=False)
        return out

    @frozen_cached_property
    def every_port_served(self) -> bool:
        return bool((np.diff(self.port_ptr) > 0).all())

    def per_port(self, values: np.ndarray) -> np.ndarray:
        """Sum a per-channel array (E, ...) over R_l for every port l."""
        if self.every_port_served:
            return np.add.reduceat(values, self.port_ptr[:-1], axis=0)
        return self.port_incidence @ values

    @frozen_cached_property
    def node_incidence(self) -> sp.csr_matrix:
        """(R, E) 0-1 matrix: N @ y is the load of each node, the left side of (6)."""
        E = self.n_edges
        import scipy.sparse as sp

        return sp.csr_matrix((np.ones(E), (self.edge_node, np.arange(E))), shape=(self.n_nodes, E))

    @frozen_cached_property
    def upper(self) -> np.ndarray:
        """(E, K) per-channel upper bounds a_l^k of (5)."""
        out = self.requests[self.edge_port]
        out.setflags(write=False)
        return out

    @frozen_cached_property
    def edge_alpha(self) -> np.ndarray:
        out = self.alpha[self.edge_node]
        out.setflags(write=False)
        return out

    @frozen_cached_property
    def group(self) -> np.ndarray:
        """(E*K,) capacity group of each flattened variable: the pair (node r, resource k)."""
        K = self.n_resources
        out = (self.edge_node[:, None] * K + np.arange(K)[None, :]).reshape(-1)
        out.setflags(write=False)
        return out

    @frozen_cached_property
    def edge_kind(self) -> np.ndarray:
        """(E, K) utility kind code of every channel (the kind of f_r^k of its node)."""
        out = np.ascontiguousarray(self.kind[self.edge_node])
        out.setflags(write=False)
        return out

    @frozen_cached_property
    def port_kind_layout(self) -> tuple[np.ndarray, np.ndarray]:
        """Flat channels e K + k listed by (port, utility kind, e, k): ``channel[ptr[l, c]:
        ptr[l, c + 1]]`` are port l's channels of kind code c (for the compiled reward pass)."""
        K, n_kinds = self.n_resources, len(UTILITY_KINDS)
        flat_port = np.repeat(self.edge_port, K)
        flat_kind = self.edge_kind.reshape(-1)
        channel = np.lexsort((np.arange(flat_kind.size), flat_kind, flat_port))
        counts = np.bincount(flat_port * n_kinds + flat_kind, minlength=self.n_ports * n_kinds)
        ptr = np.r_[0, np.cumsum(counts)]
        kind_ptr = np.ascontiguousarray(np.c_[ptr[:-1].reshape(self.n_ports, n_kinds), ptr[n_kinds::n_kinds]])
        for arr in (channel, kind_ptr):
            arr.setflags(write=False)
        return kind_ptr, channel

    # --- feasibility of a decision ----------------------------------------------------------
    def violations(self, y: np.ndarray, *, tol: float = 1e-9) -> list[str]:
        """Constraints (5) and (6) that the (E, K) decision ``y`` breaks."""
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (self.n_edges, self.n_resources):
            return [f"decision has shape {y.shape}, expected {(self.n_edges, self.n_resources)}"]
        out = []
        if not np.isfinite(y).all():
            out.append("decision contains a non-finite value")
        if (y < -tol).any():
            out.append(f"(5) lower bound broken by {-y.min():.3g}")
        over = y - self.upper
        if (over > tol * np.maximum(1.0, self.upper)).any():
            out.append(f"(5) request a_l^k exceeded by {over.max():.3g}")
        load = self.node_incidence @ y
        excess = load - self.capacity
        if (excess > tol * np.maximum(1.0, self.capacity)).any():
            r, k = np.unravel_index(np.argmax(excess), excess.shape)
            out.append(f"(6) capacity of node {r}, resource {k} exceeded by {excess[r, k]:.3g}")
        return out

    @frozen_cached_property
    def _check_layout(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The flat arrays :meth:`first_violation` hands its kernel: a_l^k per entry, the entry's
        (node, resource) group, c_r^k per group."""
        return self.upper.reshape(-1), self.group, self.capacity.reshape(-1)

    def first_violation(self, y: np.ndarray, *, tol: float = 1e-9) -> str | None:
        """The first rule of :meth:`violations` the (E, K) decision ``y`` breaks, or None, from
        one compiled pass (:mod:`optsched.ogasched.decision_kernel`): the check of
        every slot's action, where ``violations`` (the reference it is tested against) makes
        several passes and a sparse product."""
        from optsched.ogasched import decision_kernel as dk

        if not (type(y) is np.ndarray and y.dtype == np.float64 and y.flags.c_contiguous):
            y = np.ascontiguousarray(y, dtype=np.float64)
        if y.shape != (self.n_edges, self.n_resources):
            return f"decision has shape {y.shape}, expected {(self.n_edges, self.n_resources)}"
        upper, group, capacity = self._check_layout
        code, index, amount = dk.first_fault(y.reshape(-1), upper, group, capacity, tol)
        if code == dk.OK:
            return None
        row, k = divmod(index, self.n_resources)
        if code == dk.NOT_FINITE:
            return f"decision contains a non-finite value ({amount}) on edge {row}, resource {k}"
        if code == dk.NEGATIVE:
            return f"(5) lower bound broken by {amount:.3g} on edge {row}, resource {k}"
        if code == dk.ABOVE_REQUEST:
            return f"(5) request a_l^k exceeded by {amount:.3g} on edge {row}, resource {k}"
        return f"(6) capacity of node {row}, resource {k} exceeded by {amount:.3g}"

    def replicate(self, copies: int) -> "Scenario":
        """Section III-D: J = ``copies`` replicas of every port, one per job that may arrive
        at it in a slot. Replica j of port l is port l * J + j; ``port_origin`` maps back."""
        J = positive_int("copies", copies)
        L = self.n_ports
        new_ports = (self.edge_port[:, None] * J + np.arange(J)[None, :]).reshape(-1)
        new_nodes = np.repeat(self.edge_node, J)
        return Scenario(
            n_ports=L * J,
            n_nodes=self.n_nodes,
            edge_port=new_ports,
            edge_node=new_nodes,
            requests=np.repeat(self.requests, J, axis=0),
            capacity=self.capacity,
            alpha=self.alpha,
            kind=self.kind,
            beta=self.beta,
            port_origin=np.repeat(self.port_origin, J),
        )


def expand_arrivals(counts: np.ndarray, copies: int) -> np.ndarray:
    """Section III-D: counts x_l(t) in N -> 0-1 arrivals of the replicas, 1{j < x_l(t)}."""
    counts = np.asarray(counts)
    j = np.arange(copies)
    return (j[None, None, :] < counts[..., None]).reshape(*counts.shape[:-1], -1).astype(np.float64)


def random_graph(rng: np.random.Generator, n_ports: int, n_nodes: int, density: float) -> tuple[np.ndarray, np.ndarray]:
    """Each node r gets |L_r| in {floor(d), ceil(d)} ports (mean d), chosen uniformly; ports left
    without a node get one random node so that every job type can be served."""
    d = min(float(density), float(n_ports))
    lo = int(np.floor(d))
    sizes = lo + (rng.random(n_nodes) < d - lo)
    sizes = np.clip(sizes, 1, n_ports)
    keys = rng.random((n_nodes, n_ports))
    ranks = np.argsort(np.argsort(keys, axis=1), axis=1)
    adj = ranks < sizes[:, None]
    for l in np.flatnonzero(~adj.any(axis=0)):
        adj[rng.integers(n_nodes), l] = True
    nodes, ports = np.nonzero(adj)
    return ports, nodes


def synthetic_scenario(
    rng: np.random.Generator,
    *,
    n_ports: int = 10,
    n_nodes: int = 128,
    n_resources: int = 6,
    density: float = 2.5,
    contention: float = 10.0,
    alpha_range: tuple[float, float] = (1.0, 1.5),
    beta_range: tuple[float, float] = (0.3, 0.5),
    utility: str = "mixed",
) -> Scenario:
    """The built-in scenario generator with the Table II defaults.

    Capacities c_r^k are whole numbers drawn uniformly from {1, ..., 8} times a per-resource
    scale in [8, 32] (the paper gives no number: its machines come from the Alibaba traces,
    with tens to hundreds of units per resource; see docs/ogasched.md for why the scale
    matters to Table II's eta_0 = 25); base requests are U[0.02, 0.1] of the mean capacity of their resource,
    and the contention level multiplies them (so at level 10 one job asks for 0.2 to 1.0 of an
    average node per channel). ``utility`` is a kind of (54) for every (r, k), or ``"mixed"``
    (a kind drawn uniformly per (r, k)).
    """
    if utility != "mixed" and utility not in UTILITY_KINDS:
        raise ValueError(f"utility: unknown kind {utility!r} (known: mixed, {', '.join(UTILITY_KINDS)})")
    ports, nodes = random_graph(rng, n_ports, n_nodes, density)
    K = n_resources
    scale = rng.uniform(8.0, 32.0, size=K)
    capacity = rng.integers(1, 9, size=(n_nodes, K)) * scale
    base = rng.uniform(0.02, 0.1, size=(n_ports, K)) * capacity.mean(axis=0)
    kinds = list(UTILITY_KINDS)
    if utility == "mixed":
        kind = rng.integers(len(kinds), size=(n_nodes, K))
    else:
        kind = np.full((n_nodes, K), kinds.index(utility))
    return Scenario(
        n_ports=n_ports,
        n_nodes=n_nodes,
        edge_port=ports,
        edge_node=nodes,
        requests=contention * base,
        capacity=capacity,
        alpha=rng.uniform(*alpha_range, size=(n_nodes, K)),
        kind=kind,
        beta=rng.uniform(*beta_range, size=K),
    )
