"""The dispatching environment of Section 2: a bipartite graph of ports (job types) and
servers, K resource types, Bernoulli job arrivals and noisy channel valuations.

Instance (Section 4.1, Table 2 as readable; see docs/esdp.md for every choice made here):

* channel (l, r) exists with probability ``edge_prob``; channels are ordered by (l, r);
* requirements A[k, e] uniform in {1, ..., a_max};
* capacity rule (``CAPACITY_RULES``): ``"total"`` (default) c_k = ceil(alpha * sum_e A[k, e]),
  so that a set of alpha * |E| channels with average requirements fits exactly, matching
  m = alpha * |E| used by the policy; ``"demand"`` c_k = ceil(alpha * sum_e rho_l(e) A[k, e]),
  alpha times the expected demand of a slot, which still binds when alpha reaches 1;
* supply costs (``COST_MODELS``): ``"linear"`` (default) f_k(a) = f_k * a with f_k ~ N(0.5, 0.1),
  so the cost of channel e is C_e = sum_k f_k A[k, e] (proportional to its size);
  ``"independent"``: f_k(a_k^e) ~ N(0.5, 0.1) drawn per (resource, channel), independent of A,
  C_e = sum_k f_k(a_k^e);
* valuations Z_e(t) ~ N(mu_e, sigma_e) with mu_e ~ U[0.1, 1] and sigma_e = mu_e / 2 (Table 2;
  ``noise`` = sigma_e / mu_e is an option, 0.5 by default).

Welfare normalisation (the paper only says Z_tilde "is normalized into [0, 1]"): one affine
map for all channels followed by clipping,

    Z_tilde_e(t) = clip((Z_e(t) - C_e - lo) / (hi - lo), 0, 1),

with [lo, hi] chosen by ``NORMALISATIONS``: ``"band"`` (default) lo = min_e (mu_e - 2 sigma_e - C_e),
hi = max_e (mu_e + 2 sigma_e - C_e) (= min_e (-C_e), max_e (2 mu_e - C_e) at sigma = mu / 2), i.e.
[lo, hi] spans every channel's mu +- 2 sigma band of Z - C;
``"minmax"`` lo = min_e (mu_e - C_e), hi = max_e (mu_e - C_e), the range of the channel means,
without the large common constant that ``"band"`` adds to every channel when costs exceed
valuations. The map is common to all channels, so it keeps the order of channel welfares. The
true means v_tilde_e = E[Z_tilde_e] are the exact means of the clipped normals (not the
unclipped ones), so the oracle and the regret (5) use the same quantity the policies learn.

Social welfare of a decision (4): Sw(x(t)) = Z_tilde(t) . x(t).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from optsched.models.validate import binary_array, finite_float, float_array, positive_int
from optsched.policy import SlotClock
from optsched.sampling import redraw_until


def clipped_normal_mean(m: np.ndarray, s: np.ndarray) -> np.ndarray:
    """E[clip(X, 0, 1)] for X ~ N(m, s^2), s > 0:
    m (Phi(b) - Phi(a)) + s (phi(a) - phi(b)) + 1 - Phi(b), a = -m / s, b = (1 - m) / s."""
    from scipy.special import ndtr

    a = -m / s
    b = (1.0 - m) / s
    pdf = lambda z: np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)  # noqa: E731
    return m * (ndtr(b) - ndtr(a)) + s * (pdf(a) - pdf(b)) + (1.0 - ndtr(b))


def _int_array(name: str, value: Any, ndim: int) -> np.ndarray:
    arr = float_array(name, value, ndim=ndim)
    if (arr != np.round(arr)).any():
        raise ValueError(f"{name}: entries must be whole numbers")
    out = arr.astype(np.int64)
    out.setflags(write=False)
    return out


def _band(mu: np.ndarray, sigma: np.ndarray, cost: np.ndarray) -> tuple[float, float]:
    """[min_e mu_e - 2 sigma_e - C_e, max_e mu_e + 2 sigma_e - C_e]: every channel's mu +- 2 sigma
    band of Z - C."""
    return float(np.min(mu - 2.0 * sigma - cost)), float(np.max(mu + 2.0 * sigma - cost))


def _minmax(mu: np.ndarray, sigma: np.ndarray, cost: np.ndarray) -> tuple[float, float]:
    """[min_e, max_e] of the channel means mu_e - C_e (with one distinct mean: that mean +- mu)."""
    means = mu - cost
    lo, hi = float(means.min()), float(means.max())
    if hi - lo <= 1e-12 * max(1.0, abs(lo)):
        lo, hi = lo - float(mu.max()), hi + float(mu.max())
    return lo, hi


# name -> (mu, sigma, C) -> (lo, hi) of the affine map Z_tilde = clip((Z - C - lo) / (hi - lo), 0, 1)
NORMALISATIONS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[float, float]]] = {
    "band": _band,
    "minmax": _minmax,
}

# name -> (alpha, A, rho per channel) -> c
CAPACITY_RULES: dict[str, Callable[[float, np.ndarray, np.ndarray], np.ndarray]] = {
    "total": lambda alpha, req, rho: alpha * req.sum(axis=1),
    "demand": lambda alpha, req, rho: alpha * (req * rho[None, :]).sum(axis=1),
}

# name -> (rng, (mean, std), K, |E|) -> unit_costs: (K,) for f_k(a) = f_k a, (K, |E|) for
# f_k(a_k^e) drawn per (resource, channel)
COST_MODELS: dict[str, Callable[[np.random.Generator, tuple[float, float], int, int], np.ndarray]] = {
    "linear": lambda rng, f, k, e: rng.normal(f[0], f[1], size=k),
    "independent": lambda rng, f, k, e: rng.normal(f[0], f[1], size=(k, e)),
}


@dataclass(frozen=True, eq=False)
class DispatchInstance:
    """One bipartite dispatching system.

    ``edges`` (E, 2) with rows (port, server); ``requirements`` A (K, E) positive integers;
    ``capacity`` c (K,) positive integers; ``unit_costs`` either f (K,), linear costs
    f_k(a) = f_k a, or (K, E), the supply cost f_k(a_k^e) of every (resource, channel);
    ``mu`` (E,) valuation means (the valuation of channel e has standard deviation
    ``noise`` * mu_e, mu_e / 2 by default); ``arrival_prob`` rho (L,); ``normalisation`` a
    name in ``NORMALISATIONS``.
    """

    n_ports: int
    n_servers: int
    edges: Any
    requirements: Any
    capacity: Any
    unit_costs: Any
    mu: Any
    arrival_prob: Any
    normalisation: str = "band"
    noise: float = 0.5
    cost: np.ndarray = field(init=False)
    lo: float = field(init=False)
    hi: float = field(init=False)
    true_means: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        set_("n_ports", positive_int("n_ports", self.n_ports))
        set_("n_servers", positive_int("n_servers", self.n_servers))
        edges = _int_array("edges", self.edges, 2)
        if edges.shape[1] != 2:
            raise ValueError("edges: expected rows (port, server)")
        if edges.shape[0] == 0:
            raise ValueError("edges: the graph has no channel")
        if edges[:, 0].min() < 0 or edges[:, 0].max() >= self.n_ports:
            raise ValueError(f"edges: port index out of range [0, {self.n_ports})")
        if edges[:, 1].min() < 0 or edges[:, 1].max() >= self.n_servers:
            raise ValueError(f"edges: server index out of range [0, {self.n_servers})")
        if len({(int(a), int(b)) for a, b in edges}) != len(edges):
            raise ValueError("edges: duplicate channel")
        set_("edges", edges)
        n_edges = len(edges)
        req = _int_array("requirements", self.requirements, 2)
        if req.shape[1] != n_edges:
            raise ValueError(f"requirements: expected {n_edges} columns (one per channel), got {req.shape[1]}")
        if req.shape[0] == 0 or (req < 1).any():
            raise ValueError("requirements: entries must be positive integers and K >= 1")
        set_("requirements", req)
        cap = _int_array("capacity", self.capacity, 1)
        if cap.shape != (req.shape[0],) or (cap < 1).any():
            raise ValueError(f"capacity: expected {req.shape[0]} positive integers")
        set_("capacity", cap)
        try:  # (K, E) supply costs per (resource, channel), else f (K,)
            costs = float_array("unit_costs", self.unit_costs, ndim=2)
        except ValueError:
            costs = float_array("unit_costs", self.unit_costs)
        if costs.shape not in ((req.shape[0],), req.shape):
            raise ValueError(f"unit_costs: expected shape ({req.shape[0]},) or {req.shape}, got {costs.shape}")
        set_("unit_costs", costs)
        if self.normalisation not in NORMALISATIONS:
            raise ValueError(f"normalisation: must be one of {list(NORMALISATIONS)}, got {self.normalisation!r}")
        mu = float_array("mu", self.mu, shape=(n_edges,))
        if (mu <= 0).any():
            raise ValueError("mu: valuation means must be positive")
        set_("mu", mu)
        rho = float_array("arrival_prob", self.arrival_prob, shape=(self.n_ports,))
        if ((rho < 0) | (rho > 1)).any():
            raise ValueError("arrival_prob: must be probabilities in [0, 1]")
        set_("arrival_prob", rho)

        noise = finite_float("noise", self.noise)
        if noise <= 0:
            raise ValueError(f"noise: must be > 0, got {noise}")
        set_("noise", noise)
        cost = self.unit_costs @ req if self.unit_costs.ndim == 1 else self.unit_costs.sum(axis=0)
        lo, hi = NORMALISATIONS[self.normalisation](mu, noise * mu, cost)
        means = clipped_normal_mean((mu - cost - lo) / (hi - lo), (noise * mu) / (hi - lo))
        for name, value in (("cost", cost), ("true_means", means)):
            value.setflags(write=False)
            set_(name, value)
        set_("lo", lo)
        set_("hi", hi)

    @property
    def n_edges(self) -> int:
        return len(self.edges)

    @property
    def n_resources(self) -> int:
        return len(self.capacity)

    @property
    def edge_port(self) -> np.ndarray:
        return self.edges[:, 0]

    def normalise(self, z: np.ndarray) -> np.ndarray:
        """Z_tilde = clip((Z - C - lo) / (hi - lo), 0, 1), [lo, hi] by ``normalisation``."""
        return np.clip((z - self.cost - self.lo) / (self.hi - self.lo), 0.0, 1.0)

    def channel_mask(self, arrived: np.ndarray) -> np.ndarray:
        """Channels whose port has a job: constraint (2) allows only these."""
        return np.asarray(arrived, dtype=bool)[self.edge_port]

    def fits(self, x: np.ndarray) -> bool:
        """Capacity constraint (1): A x <= c."""
        return bool((self.requirements @ np.asarray(x, dtype=np.int64) <= self.capacity).all())


def generate_instance(
    rng: np.random.Generator,
    *,
    n_ports: int = 8,
    n_servers: int = 40,
    n_resources: int = 3,
    edge_prob: float = 0.1,
    arrival_prob: float = 0.9,
    alpha: float = 0.5,
    a_max: int = 2,
    mu_range: tuple[float, float] = (0.1, 1.0),
    unit_cost: tuple[float, float] = (0.5, 0.1),
    capacity_rule: str = "total",
    cost_model: str = "linear",
    normalisation: str = "band",
    noise: float = 0.5,
) -> DispatchInstance:
    """A random instance with the defaults of Table 2 (module docstring); the graph is redrawn
    until it has at least one channel (at most :data:`optsched.sampling.MAX_REDRAWS` times).
    ``capacity_rule``, ``cost_model`` and ``normalisation`` name entries of ``CAPACITY_RULES``,
    ``COST_MODELS`` and ``NORMALISATIONS``; the draws are made in the same order for every
    choice (graph, A, costs, mu)."""
    n_ports = positive_int("n_ports", n_ports)
    n_servers = positive_int("n_servers", n_servers)
    n_resources = positive_int("n_resources", n_resources)
    a_max = positive_int("a_max", a_max)
    edge_prob = finite_float("edge_prob", edge_prob, minimum=0.0)
    alpha = finite_float("alpha", alpha, minimum=0.0)
    if not 0.0 < edge_prob <= 1.0:
        raise ValueError(f"edge_prob: must be in (0, 1], got {edge_prob}")
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha: must be in (0, 1], got {alpha}")
    for name, value, table in (("capacity_rule", capacity_rule, CAPACITY_RULES), ("cost_model", cost_model, COST_MODELS),
                               ("normalisation", normalisation, NORMALISATIONS)):
        if value not in table:
            raise ValueError(f"{name}: must be one of {list(table)}, got {value!r}")
    adjacency = redraw_until(lambda: rng.random((n_ports, n_servers)) < edge_prob, lambda adj: bool(adj.any()),
                             setting="edge_prob", what=f"channel (a {n_ports} x {n_servers} graph at edge_prob = {edge_prob:g})")
    edges = np.argwhere(adjacency)
    n_edges = len(edges)
    rho = np.full(n_ports, arrival_prob)
    req = rng.integers(1, a_max + 1, size=(n_resources, n_edges))
    capacity = np.maximum(1, np.ceil(CAPACITY_RULES[capacity_rule](alpha, req, rho[edges[:, 0]]) - 1e-9)).astype(np.int64)
    return DispatchInstance(
        n_ports=n_ports,
        n_servers=n_servers,
        edges=edges,
        requirements=req,
        capacity=capacity,
        unit_costs=COST_MODELS[cost_model](rng, unit_cost, n_resources, n_edges),
        mu=rng.uniform(mu_range[0], mu_range[1], size=n_edges),
        arrival_prob=rho,
        normalisation=normalisation,
        noise=noise,
    )


@dataclass(frozen=True)
class Observation:
    """What a policy sees at the start of slot ``t`` (0-based): which ports have a job."""

    t: int
    arrived: np.ndarray
    channel_mask: np.ndarray


Oracle = Callable[[np.ndarray], tuple[float, np.ndarray]]


class DispatchEnv(SlotClock):
    """Environment protocol of :mod:`optsched.policy`.

    Each slot draws the arrivals and a valuation for every channel (also the unused ones,
    so every policy run with one seed sees the same draws). ``step(x)`` checks (1) and (2)
    (a violation is a policy bug: ``ValueError``) and returns

    ``welfare``           Sw(x(t)) = Z_tilde(t) . x(t), the realised social welfare (4);
    ``expected_welfare``  v_tilde . x(t);
    ``oracle_welfare``    v_tilde . x*(t), x*(t) optimal for the true means under (1), (2)
                          (only when an ``oracle`` is given; regret (5) is its difference
                          to ``expected_welfare``);
    ``x``, ``z``          the decision and the semi-bandit feedback (Z_tilde on the chosen
                          channels, NaN elsewhere);
    ``capacity_binds``    whether the channels of the ports with a job do not all fit in (1)
                          (the same for every policy: it depends on the arrivals only).
    """

    def __init__(self, instance: DispatchInstance, oracle: Oracle | None = None) -> None:
        self.instance = instance
        self.oracle = oracle
        self._rng: np.random.Generator | None = None
        self._obs: Observation | None = None
        self._z: np.ndarray | None = None

    def reset(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._obs = None
        self.start_slots()

    def observe(self, t: int) -> Observation:
        t = self.open_slot(t)
        assert self._rng is not None  # open_slot refuses a slot before reset
        inst = self.instance
        arrived = self._rng.random(inst.n_ports) < inst.arrival_prob
        self._z = inst.normalise(self._rng.normal(inst.mu, inst.noise * inst.mu))
        mask = inst.channel_mask(arrived)
        for arr in (arrived, mask):  # what the policy sees; step reads the mask to check (2)
            arr.setflags(write=False)
        self._obs = Observation(t=t, arrived=arrived, channel_mask=mask)
        return self._obs

    def step(self, action: Any) -> Mapping[str, Any]:
        self.check_step()
        assert self._obs is not None and self._z is not None  # set by observe
        inst = self.instance
        x = binary_array("action", action, shape=(inst.n_edges,))  # a copy: the feedback's "x" is the env's
        if (x & ~self._obs.channel_mask).any():
            raise ValueError("action: uses a channel of a port with no job (constraint (2))")
        if not inst.fits(x):
            raise ValueError("action: exceeds the capacities (constraint (1))")
        self.close_slot()
        out: dict[str, Any] = {
            "welfare": float(self._z @ x),
            "expected_welfare": float(inst.true_means @ x),
            "x": x,
            "z": np.where(x, self._z, np.nan),
            "capacity_binds": not inst.fits(self._obs.channel_mask),
        }
        if self.oracle is not None:
            out["oracle_welfare"] = self.oracle(self._obs.channel_mask)[0]
        self._obs = None
        return out
