"""The best stationary allocation y* of (10) in paper 003 (OGASched's offline comparator).

With arrival totals N_l = sum_t x_l(t) the cumulative reward of a fixed y is concave, and y*
solves, over one variable y_i per (channel (l, r), resource k),

    max_y  Q(y) = sum_i w_i f_i(y_i) - sum_l max_k o_lk S_lk(y),   S_lk(y) = sum_{i in I_lk} y_i
    s.t.   0 <= y_i <= u_i                      (5)
           sum_{i in group g} y_i <= c_g        (6)

with w_i = N_l of the variable's port, f_i one of the utilities (54) with coefficient
alpha_i, o_lk = N_l beta_k, I_lk the variables of port l and resource k, and a group per
(node r, resource k). The model holds plain arrays (``port`` and ``resource`` name each
variable's pair (l, k)), so it does not depend on the OGASched package that builds it
(:func:`optsched.ogasched.offline.stationary_model`).

Lagrangian dual (the certificate the first-order backend reports). For w_l in the simplex,
max_k o_lk S_lk >= sum_k w_lk o_lk S_lk; with mu_g >= 0 on (6) the Lagrangian separates:

    Q* <= D(w, mu) = sum_i phi_i(o_{p(i)} w_{p(i)} + mu_{g(i)}) + sum_g mu_g c_g,
    phi_i(q) = max_{0 <= y <= b_i} w_i f_i(y) - q y          (closed form, see ``response``)

for every such (w, mu), with b_i = min(u_i, c_g(i)) (``box``: (6) with y >= 0 bounds y_i by
c_g(i) as well, so the box holds every feasible point): ``dual_bound`` evaluates it.

Solution type: a float64 array y of shape (n,).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar

import numpy as np

from optsched.models import utilities
from optsched.models.base import Model, frozen_cached_property, register_fuzz, register_generator, register_model
from optsched.models.validate import float_array, index_array, scaled_onto_capacity, solution_vector

if TYPE_CHECKING:
    import scipy.sparse as sp

Fn = Callable[[np.ndarray, np.ndarray], np.ndarray]

# (54), in the order of the kind codes: name -> (f(y, alpha), f'(y, alpha)); each is concave,
# increasing, with f(0) = 0.
UTILITIES: dict[str, tuple[Fn, Fn]] = {
    "linear": (lambda y, a: a * y, lambda y, a: a + 0.0 * y),
    "log": (lambda y, a: a * np.log1p(y), lambda y, a: a / (y + 1.0)),
    "reciprocal": (lambda y, a: utilities.reciprocal_value(a, y), lambda y, a: 1.0 / (y + a) ** 2),
    "poly": (lambda y, a: utilities.sqrt_value(a, y), lambda y, a: utilities.sqrt_slope(a, y)),  # = 002's "sqrt"
}
UTILITY_CODES = tuple(UTILITIES)

# Clarabel as an oracle for this program: at 1e-9 (the settings y* was first solved with) a y* = 0
# with overhead weights ~10^4 came back at -1.2e-5 (y ~ 4e-10); at 1e-10, -2e-7
CLARABEL_OPTIONS: dict[str, Any] = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


def response(code: np.ndarray, weight: np.ndarray, alpha: np.ndarray, upper: np.ndarray,
             price: np.ndarray) -> np.ndarray:
    """argmax_{0 <= y <= u} w f(y) - q y for each variable (q = ``price`` >= 0): the y with
    w f'(y) = q, clipped into [0, u] (f' is decreasing; linear: u when w alpha > q, else 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = price / weight
        inner = np.select(
            [code == 1, code == 2, code == 3],
            [alpha / r - 1.0, 1.0 / np.sqrt(r) - alpha, (0.5 * alpha / r) ** 2 - 1.0],
            default=np.where(alpha > r, np.inf, 0.0),
        )
    y = np.where(r <= 0.0, np.inf, inner)
    y = np.where(weight > 0.0, y, 0.0)
    return np.clip(np.nan_to_num(y, nan=0.0), 0.0, upper)


@register_model
@dataclass(frozen=True, eq=False)
class StationaryAllocation(Model):
    """max sum_i w_i f_i(y_i) - sum_l max_k o_lk S_lk(y)  s.t.  0 <= y <= u, group sums <= c."""

    weight: Any
    alpha: Any
    kind: Any
    upper: Any
    group: Any
    capacity: Any
    port: Any
    resource: Any
    overhead: Any

    name: ClassVar[str] = "stationary_allocation"
    SIZE_LABEL: ClassVar[str] = "variables (edges x resources)"
    maximize: ClassVar[bool] = True
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = (
        "weight", "alpha", "kind", "upper", "group", "capacity", "port", "resource", "overhead")

    def __post_init__(self) -> None:
        weight = float_array("weight", self.weight, nonnegative=True, min_size=1)
        n = weight.shape[0]
        alpha = float_array("alpha", self.alpha, shape=(n,))
        if (alpha <= 0).any():
            raise ValueError("alpha: utility coefficients must be positive")
        kind = index_array("kind", self.kind, upper=len(UTILITIES))
        upper = float_array("upper", self.upper, shape=(n,), nonnegative=True)
        capacity = float_array("capacity", self.capacity, nonnegative=True, min_size=1)
        group = index_array("group", self.group, upper=capacity.shape[0])
        overhead = float_array("overhead", self.overhead, ndim=2, nonnegative=True, min_size=1)
        port = index_array("port", self.port, upper=overhead.shape[0])
        resource = index_array("resource", self.resource, upper=overhead.shape[1])
        for name, arr in (("kind", kind), ("group", group), ("port", port), ("resource", resource)):
            if arr.shape != (n,):
                raise ValueError(f"{name}: expected {n} entries (one per variable), got {arr.shape[0]}")
        for name, value in (("weight", weight), ("alpha", alpha), ("kind", kind), ("upper", upper),
                            ("group", group), ("capacity", capacity), ("port", port),
                            ("resource", resource), ("overhead", overhead)):
            object.__setattr__(self, name, value)

    # --- sizes ------------------------------------------------------------------------------
    @property
    def n_vars(self) -> int:
        return int(self.weight.shape[0])

    @property
    def n_groups(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def n_ports(self) -> int:
        return int(self.overhead.shape[0])

    @property
    def n_resources(self) -> int:
        return int(self.overhead.shape[1])

    @property
    def size(self) -> int:
        return self.n_vars

    @frozen_cached_property
    def charged_ports(self) -> np.ndarray:
        """The ports with some overhead (o_l not all 0): the rows of (7)'s max in the cvxpy form,
        whose multipliers are the port weights w."""
        return np.flatnonzero(self.overhead.max(axis=1) > 0)

    @frozen_cached_property
    def pair(self) -> np.ndarray:
        """Flat index l K + k of each variable's overhead pair (l, k)."""
        out = self.port * self.n_resources + self.resource
        out.setflags(write=False)
        return out

    # --- the model's own math ----------------------------------------------------------------
    def pair_sums(self, y: Any) -> np.ndarray:
        """S_lk(y), shape (L, K)."""
        sums = np.bincount(self.pair, weights=np.asarray(y, dtype=np.float64), minlength=self.overhead.size)
        return sums.reshape(self.overhead.shape)

    def gain(self, y: Any) -> float:
        """sum_i w_i f_i(y_i)."""
        y = np.asarray(y, dtype=np.float64)
        total = 0.0
        for code, (f, _) in enumerate(UTILITIES.values()):
            mask = self.kind == code
            total += float(self.weight[mask] @ f(y[mask], self.alpha[mask]))
        return total

    def zero_solution(self) -> np.ndarray:
        return np.zeros(self.n_vars)

    @frozen_cached_property
    def box(self) -> np.ndarray:
        """min(u_i, c_g(i)): (6) with y >= 0 bounds y_i by its group's capacity too, so this box
        holds every feasible point. The cvxpy form and ``stationary_alm`` take it for (5), and the
        cvxpy form leaves out the groups (6) that it cannot overfill: requests of 1e10 beside
        capacities of 10 (OGASched's contention 1e10) left both without a certified y*."""
        return np.minimum(self.upper, self.capacity[self.group])

    def objective_magnitude(self) -> float:
        """A bound on |Q(y)| over the feasible points: each f_i is increasing with f_i(0) = 0 and
        y_i <= min(u_i, c_g(i)), so the gain lies in [0, gain of those tops] and the overhead in
        [0, its value there]. The seam's agreement of objective and bound is absolute below it
        (``Model.objective_magnitude``): at requests of 1e-10 (OGASched's contention 1e-10) Q is
        1e-7, and an answer 10x short of y* agreed with its bound within the 1e-6 of scale 1."""
        top = self.box
        return self.gain(top) + float((self.overhead * self.pair_sums(top)).max(axis=1).sum())

    def objective(self, solution: Any) -> float:
        y = solution_vector(solution, self.n_vars)
        return self.gain(y) - float((self.overhead * self.pair_sums(y)).max(axis=1).sum())

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        """(5) and (6), each with tolerance ``tol * (1 + |bound|)``."""
        y = solution_vector(solution)
        if y.shape != (self.n_vars,):
            return [f"solution has shape {y.shape}, expected ({self.n_vars},)"]
        if not np.isfinite(y).all():
            return ["solution has a non-finite entry"]
        out = [f"y[{i}] = {y[i]:.6g} < 0" for i in np.flatnonzero(y < -tol)[:3]]
        out += [f"y[{i}] = {y[i]:.6g} > upper {self.upper[i]:.6g}"
                for i in np.flatnonzero(y > self.upper + tol * (1 + self.upper))[:3]]
        load = np.bincount(self.group, weights=y, minlength=self.n_groups)
        out += [f"group {g} load {load[g]:.9g} > capacity {self.capacity[g]:.9g}"
                for g in np.flatnonzero(load > self.capacity + tol * (1 + self.capacity))[:3]]
        return out

    def dual_bound(self, w: Any, mu: Any) -> float:
        """D(w, mu) >= Q*: ``w`` (L, K) with every row in the simplex (summing to 1 within 1e-9, and
        divided by its sum: a row summing to 1 + 9e-6, once accepted, gave a "bound" 9e-6 below a
        feasible point's objective), ``mu`` (G,) >= 0."""
        w = np.asarray(w, dtype=np.float64)
        mu = np.asarray(mu, dtype=np.float64)
        if w.shape != self.overhead.shape or not (w >= 0).all() or not (np.abs(w.sum(axis=1) - 1.0) <= 1e-9).all():
            raise ValueError(f"w: expected {self.overhead.shape} rows in the probability simplex")
        w = w / w.sum(axis=1, keepdims=True)
        if mu.shape != (self.n_groups,) or not (np.isfinite(mu) & (mu >= 0)).all():  # NaN gave a NaN "bound"
            raise ValueError(f"mu: expected {self.n_groups} finite non-negative multipliers")
        price = (self.overhead * w).reshape(-1)[self.pair] + mu[self.group]
        y = response(self.kind, self.weight, self.alpha, self.box, price)
        return self.gain(y) - float(price @ y) + float(mu @ self.capacity)

    # --- forms ---------------------------------------------------------------------------------
    @frozen_cached_property
    def incidence(self) -> tuple["sp.csr_matrix", "sp.csr_matrix"]:
        """(group x variable, pair x variable) 0-1 matrices."""
        import scipy.sparse as sp

        n, cols = self.n_vars, np.arange(self.n_vars)
        ones = np.ones(n)
        return (sp.csr_matrix((ones, (self.group, cols)), shape=(self.n_groups, n)),
                sp.csr_matrix((ones, (self.pair, cols)), shape=(self.overhead.size, n)))

    def to_cvxpy(self) -> tuple[Any, Callable[[], np.ndarray]]:
        """Exponential-cone (log), second-order-cone (reciprocal, poly) and linear terms; the
        max over k is an epigraph. The objective is divided by the mean positive weight (the
        maximiser is the same) so that Clarabel's absolute tolerances act on O(1) values: with
        the raw weights (arrival totals up to ~10^4) a y* = 0 came back at -1.1e-6."""
        import cvxpy as cp

        positive = self.weight[self.weight > 0]
        unit = float(positive.mean()) if positive.size else 1.0
        weight, overhead_w = self.weight / unit, self.overhead / unit
        y = cp.Variable(self.n_vars, nonneg=True)
        terms: dict[str, Callable[[Any, np.ndarray], Any]] = {
            "linear": lambda v, a: cp.multiply(a, v),
            "log": lambda v, a: cp.multiply(a, cp.log(v + 1.0)),
            "reciprocal": lambda v, a: 1.0 / a - cp.inv_pos(v + a),
            "poly": lambda v, a: cp.multiply(a, cp.sqrt(v + 1.0)) - a,
        }
        # a variable of zero weight gains nothing and can only add overhead: it is fixed at 0
        # (left free, Clarabel failed on such instances) and its utility term is left out
        gains = [0.0]
        for code, name in enumerate(UTILITY_CODES):
            idx = np.flatnonzero((self.kind == code) & (self.weight > 0))
            if idx.size:
                gains.append(weight[idx] @ terms[name](y[idx], self.alpha[idx]))
        groups, pairs = self.incidence
        K = self.n_resources
        charged = self.charged_ports
        rows = (charged[:, None] * K + np.arange(K)).reshape(-1)
        upper = np.where(self.weight > 0, self.box, 0.0)
        binding = np.flatnonzero(np.bincount(self.group, weights=upper, minlength=self.n_groups) > self.capacity)
        constraints = [y <= upper, groups[binding] @ y <= self.capacity[binding]]
        overhead: Any = 0.0
        if charged.size:  # the max over k of (7) as an epigraph t_l, so that its multipliers are the port weights w
            import scipy.sparse as sp

            weighted = cp.multiply(overhead_w[charged].reshape(-1), pairs[rows] @ y)
            t = cp.Variable(charged.size)
            constraints.append(weighted <= sp.kron(sp.eye(charged.size), np.ones((K, 1)), format="csr") @ t)
            overhead = cp.sum(t)
        problem = cp.Problem(cp.Maximize(cp.sum(gains) - overhead), constraints)
        return problem, lambda: self.into_box(y.value)

    def cvxpy_default_solver(self) -> tuple[str, dict[str, Any]]:
        return "CLARABEL", dict(CLARABEL_OPTIONS)

    def into_box(self, value: Any) -> np.ndarray:
        """A solver's point made exactly feasible: clipped into the box, then every group over
        its capacity scaled down (interior-point answers sit up to ~1e-10 outside)."""
        return scaled_onto_capacity(np.clip(np.asarray(value, dtype=np.float64), 0.0, self.upper), self.group,
                                    self.capacity)


# --- the kind's generator ---------------------------------------------------------------------
# rtol 1e-6: stationary_alm (first order) certifies a duality gap of 5e-7 relative.
@register_generator("stationary_allocation", quick=(16, 64), full=(16, 64, 256, 1024), tiny=4, rtol=1e-6)
def random_stationary_allocation(size: int, rng: np.random.Generator) -> StationaryAllocation:
    """y* of (10) on a Table II-like scenario of paper 003 with ``size`` nodes: |L| = 10 ports,
    K = 6 resources, each node serving 2 or 3 ports (mean 2.5; a port left without a node gets a
    random one), capacities whole numbers 1..8 times a per-resource scale U[8, 32], requests
    10 x U[0.02, 0.1] of the mean capacity, alpha ~ U[1, 1.5], beta ~ U[0.3, 0.5], utility kinds
    of (54) drawn per (node, resource), arrival totals N_l ~ Binomial(2000, 0.7). ``model.size``
    is the number of variables (about 15 ``size``)."""
    L, K, n = 10, 6, size
    degree = np.clip(2 + (rng.random(n) < 0.5), 1, L)
    ranks = np.argsort(np.argsort(rng.random((n, L)), axis=1), axis=1)
    adj = ranks < degree[:, None]
    for port in np.flatnonzero(~adj.any(axis=0)):
        adj[rng.integers(n), port] = True
    edge_node, edge_port = np.nonzero(adj)
    order = np.argsort(edge_port, kind="stable")
    edge_node, edge_port = edge_node[order], edge_port[order]
    scale = rng.uniform(8.0, 32.0, size=K)
    capacity = rng.integers(1, 9, size=(n, K)) * scale
    requests = 10.0 * rng.uniform(0.02, 0.1, size=(L, K)) * capacity.mean(axis=0)
    alpha = rng.uniform(1.0, 1.5, size=(n, K))
    kind = rng.integers(len(UTILITIES), size=(n, K))
    beta = rng.uniform(0.3, 0.5, size=K)
    counts = rng.binomial(2000, 0.7, L).astype(np.float64)
    E = edge_node.shape[0]
    return StationaryAllocation(
        weight=np.repeat(counts[edge_port], K), alpha=alpha[edge_node].reshape(-1), kind=kind[edge_node].reshape(-1),
        upper=requests[edge_port].reshape(-1), group=(edge_node[:, None] * K + np.arange(K)).reshape(-1),
        capacity=capacity.reshape(-1), port=np.repeat(edge_port, K), resource=np.tile(np.arange(K), E),
        overhead=counts[:, None] * beta[None, :],
    )


# --- the kind's fuzz builder (tests/test_fuzz.py): degenerate variants ---


@register_fuzz("stationary_allocation", *("random", "zero_weights", "zero_capacity", "zero_upper", "no_overhead", "all_linear", "heavy_overhead", "ties"), examples=60)
def fuzz_stationary_allocation(rng: np.random.Generator, variant: str) -> StationaryAllocation:
    """y* of (10) on a small random graph: ports x nodes edges, one variable per (edge, k),
    groups (node, k), o_lk = N_l beta_k; arrival totals N_l at the scale of a T = 20..2000 run."""
    L, R, K = int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(1, 4))
    adj = rng.random((L, R)) < rng.uniform(0.3, 1.0)
    adj[np.arange(L), rng.integers(0, R, L)] = True  # every port has a node
    ports, nodes = np.nonzero(adj)
    E = ports.size
    scale = float(rng.choice([0.1, 1.0, 30.0]))  # resource units
    counts = np.round(rng.uniform(0, 1, L) * float(rng.choice([20, 2000])))
    beta = rng.uniform(0.3, 0.5, K)
    node_kind = rng.integers(0, len(UTILITIES), (R, K))
    node_alpha = rng.uniform(1.0, 1.5, (R, K))
    upper = np.repeat(rng.uniform(0.2, 1.0, (L, K)) * scale, np.bincount(ports, minlength=L), axis=0)
    group = (nodes[:, None] * K + np.arange(K)).reshape(-1)
    load = np.bincount(group, weights=upper.reshape(-1), minlength=R * K)
    capacity = np.where(rng.random(R * K) < 0.6, rng.uniform(0.1, 0.9, R * K) * load, load + scale)
    if variant == "zero_weights":
        counts[rng.random(L) < 0.6] = 0.0
    elif variant == "zero_capacity":
        capacity[rng.random(R * K) < 0.7] = 0.0
    elif variant == "zero_upper":
        upper[rng.random(upper.shape) < 0.5] = 0.0
    elif variant == "no_overhead":
        beta = np.zeros(K)
    elif variant == "all_linear":
        node_kind[:] = 0
    elif variant == "heavy_overhead":  # overhead above every marginal gain: y* = 0
        beta = rng.uniform(5.0, 10.0, K)
    elif variant == "ties":
        beta, node_alpha = np.full(K, 0.4), np.full((R, K), 1.2)
        upper = np.full((E, K), scale)
        capacity = np.full(R * K, scale * float(rng.choice([0.5, 1.0, 2.0])))
    return StationaryAllocation(
        weight=np.repeat(counts[ports], K), alpha=node_alpha[nodes].reshape(-1), kind=node_kind[nodes].reshape(-1),
        upper=upper.reshape(-1), group=group, capacity=capacity, port=np.repeat(ports, K),
        resource=np.tile(np.arange(K), E), overhead=counts[:, None] * beta[None, :],
    )
