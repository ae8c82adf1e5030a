"""The spatio-temporal resource mesh of paper 002 (Section II) and its jobs: the data of P1.

A resource unit r = (node k, slot t) can process at most C_r workload; it is indexed
``r = k * n_slots + t``. Job n arrives at a_n with deadline d_n, workload rho_n and
service locality K_n (the nodes it may use); its resource units are (1)

    R_n = { r_kt : ceil(a_n / tau) <= t <= floor(d_n / tau), k in K_n }

(slots clipped to the horizon). A *pair* (n, r) with r in R_n carries the per-unit cap
xbar_nr, the utility f_nr (``kind`` with coefficient a_nr, see :mod:`optsched.models.utilities`)
and the cluster weight beta_nr of g_nr(x) = beta_nr x / C_r (3). Pairs are stored flat, job by
job, nodes outer and slots inner.

P1 (social welfare maximisation):  max sum_n sum_{r in R_n} f_nr(x_nr) + g_nr(x_nr)
s.t. (4) sum_r x_nr <= rho_n, (5) x_nr = 0 outside R_n, (6) sum_n x_nr <= C_r,
(7) 0 <= x_nr <= xbar_nr. :meth:`MeshInstance.violations` checks (4)-(7) on a dense
allocation, :meth:`MeshInstance.welfare` evaluates the objective. :class:`MeshGenerator` draws
instances with the Section IV defaults (the distribution of the kinds built on a mesh); the
paper's online replay (:mod:`optsched.onsocmax.env`) builds on both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from optsched.models import prices, utilities
from optsched.models.base import FrozenArrays, frozen_cached_property
from optsched.models.validate import (check_keys, finite_float, float_array, index_array, items_of, packing_slack, per_capacity,
                                      positive_int)
from optsched.sampling import redraw_entries

JSON_KEYS = ("capacity", "tau", "arrival", "deadline", "rho", "nodes", "kind", "xbar", "a", "beta")


def resource_units(
    arrival: np.ndarray, deadline: np.ndarray, nodes: Sequence[np.ndarray], tau: float, n_slots: int
) -> tuple[np.ndarray, ...]:
    """R_n of (1) for every job: units r = k * n_slots + t for k in K_n (sorted) and
    ceil(a_n / tau) <= t <= floor(d_n / tau), slots clipped to [0, n_slots); nodes outer."""
    with np.errstate(over="ignore"):  # a time beyond the float range in slots is beyond the mesh: clipped
        first = np.clip(np.ceil(np.asarray(arrival) / tau - 1e-12), 0, n_slots).astype(np.int64)
        last = np.clip(np.floor(np.asarray(deadline) / tau + 1e-12), -1, n_slots - 1).astype(np.int64)
    out = []
    for lo, hi, ks in zip(first, last, nodes):
        slots = np.arange(lo, hi + 1, dtype=np.int64)
        r = (np.asarray(ks, dtype=np.int64)[:, None] * n_slots + slots[None, :]).reshape(-1)
        r.setflags(write=False)
        out.append(r)
    return tuple(out)


@dataclass(frozen=True, eq=False)
class MeshInstance(FrozenArrays):
    """One arrival instance of P1: a resource mesh and the jobs on it (see module doc).

    ``capacity`` is (n_nodes, n_slots); ``arrival``, ``deadline``, ``rho`` are per job;
    ``nodes`` lists K_n per job; ``kind`` is the utility kind per job; ``xbar``, ``a`` and
    ``beta`` are per pair (length :attr:`n_pairs`, in pair order).
    """

    capacity: Any
    tau: float
    arrival: Any
    deadline: Any
    rho: Any
    nodes: Sequence[Sequence[int]]
    kind: Sequence[str]
    xbar: Any
    a: Any
    beta: Any

    def __post_init__(self) -> None:
        cap = float_array("capacity", self.capacity, ndim=2)
        if cap.size == 0 or (cap <= 0).any():
            raise ValueError("capacity: needs at least one unit and every C_r > 0")
        tau = finite_float("tau", self.tau)
        if tau <= 0:
            raise ValueError(f"tau: must be > 0, got {tau}")
        arrival = float_array("arrival", self.arrival, nonnegative=True, min_size=1)
        n = arrival.size
        deadline = float_array("deadline", self.deadline, shape=(n,))
        if (deadline < arrival).any():
            raise ValueError("deadline: a deadline precedes its arrival")
        rho = float_array("rho", self.rho, shape=(n,), nonnegative=True)
        if len(items_of("nodes", self.nodes, f"one list of nodes per job ({n})")) != n:
            raise ValueError(f"nodes: expected one list of nodes per job ({n})")
        nodes = []
        for j, k in enumerate(self.nodes):
            arr = index_array(f"nodes[{j}]", list(items_of(f"nodes[{j}]", k, "a list of node indices")), upper=cap.shape[0])
            if arr.size == 0 or (np.diff(arr) <= 0).any():
                raise ValueError(f"nodes[{j}]: K_n must be non-empty and strictly increasing (it fixes the pair order)")
            nodes.append(arr)
        if len(items_of("kind", self.kind, f"one utility kind per job ({n})")) != n:
            raise ValueError(f"kind: expected one utility kind per job ({n})")
        try:
            utilities.kind_codes([str(k) for k in self.kind])
        except ValueError as exc:
            raise ValueError(f"kind: {exc}") from None
        object.__setattr__(self, "capacity", cap)
        object.__setattr__(self, "tau", tau)
        object.__setattr__(self, "arrival", arrival)
        object.__setattr__(self, "deadline", deadline)
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "nodes", tuple(nodes))
        object.__setattr__(self, "kind", tuple(str(k) for k in self.kind))
        p = self.n_pairs
        xbar = float_array("xbar", self.xbar, shape=(p,), nonnegative=True)
        a = float_array("a", self.a, shape=(p,), nonnegative=True)
        beta = float_array("beta", self.beta, shape=(p,), nonnegative=True)
        object.__setattr__(self, "xbar", xbar)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "beta", beta)
        per_capacity("capacity", beta, self.pair_capacity)

    # --- shape ------------------------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def n_slots(self) -> int:
        return int(self.capacity.shape[1])

    @property
    def n_units(self) -> int:
        return self.n_nodes * self.n_slots

    @property
    def n_jobs(self) -> int:
        return int(self.arrival.size)

    @frozen_cached_property
    def arrival_slot(self) -> np.ndarray:
        """The slot in which job n is revealed: floor(a_n / tau)."""
        return np.floor(self.arrival / self.tau + 1e-12).astype(np.int64)

    @frozen_cached_property
    def units(self) -> tuple[np.ndarray, ...]:
        """R_n for every job (pair order), by :func:`resource_units`."""
        return resource_units(self.arrival, self.deadline, self.nodes, self.tau, self.n_slots)

    @frozen_cached_property
    def job_ptr(self) -> np.ndarray:
        """Pairs of job n are ``job_ptr[n]:job_ptr[n + 1]``."""
        ptr = np.concatenate([[0], np.cumsum([u.size for u in self.units])]).astype(np.int64)
        ptr.setflags(write=False)
        return ptr

    @property
    def n_pairs(self) -> int:
        return int(self.job_ptr[-1])

    @frozen_cached_property
    def pair_job(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_jobs), np.diff(self.job_ptr))

    @frozen_cached_property
    def pair_unit(self) -> np.ndarray:
        out = np.concatenate(self.units) if self.n_pairs else np.zeros(0, dtype=np.int64)
        out.setflags(write=False)
        return out

    @frozen_cached_property
    def pair_kind(self) -> np.ndarray:
        """Utility kind code (index into ``utilities.KINDS``) of every pair."""
        return np.repeat(utilities.kind_codes(list(self.kind)), np.diff(self.job_ptr))

    @frozen_cached_property
    def pair_capacity(self) -> np.ndarray:
        """C_r of every pair's unit."""
        out = self.capacity.reshape(-1)[self.pair_unit]
        out.setflags(write=False)
        return out

    @frozen_cached_property
    def in_mesh(self) -> np.ndarray:
        """(N, n_units) bool: unit r is in R_n (constraint (5))."""
        mask = np.zeros((self.n_jobs, self.n_units), dtype=bool)
        mask[self.pair_job, self.pair_unit] = True
        return mask

    def job_pairs(self, n: int) -> slice:
        return slice(int(self.job_ptr[n]), int(self.job_ptr[n + 1]))

    # --- P1 -------------------------------------------------------------------------------------
    def pair_welfare(self, x: np.ndarray) -> np.ndarray:
        """f_nr(x_nr) + beta_nr x_nr / C_r for every pair (x in pair order)."""
        x = np.asarray(x, dtype=np.float64)
        return utilities.value(self.pair_kind, self.a, x) + self.beta * x / self.pair_capacity

    def pair_welfare_at(self, pairs: np.ndarray, x: np.ndarray) -> np.ndarray:
        """f_nr(x) + beta_nr x / C_r for the listed ``pairs`` only."""
        x = np.asarray(x, dtype=np.float64)
        return utilities.value(self.pair_kind[pairs], self.a[pairs], x) + self.beta[pairs] * x / self.pair_capacity[pairs]

    def welfare(self, x: np.ndarray) -> float:
        """P1's objective of a pair vector ``x``."""
        return float(self.pair_welfare(x).sum())

    def pairs_of(self, allocation: np.ndarray) -> np.ndarray:
        """The pair vector of a dense (N, n_units) allocation."""
        return np.asarray(allocation, dtype=np.float64)[self.pair_job, self.pair_unit]

    def dense(self, x: np.ndarray) -> np.ndarray:
        """The dense (N, n_units) allocation of a pair vector."""
        out = np.zeros((self.n_jobs, self.n_units))
        out[self.pair_job, self.pair_unit] = np.asarray(x, dtype=np.float64)
        return out

    @frozen_cached_property
    def pair_key(self) -> np.ndarray:
        """n * n_units + r of every pair: strictly increasing in pair order (jobs in order, and
        within a job the units of R_n increase), so a (job, unit) is found by binary search."""
        return self.pair_job * self.n_units + self.pair_unit

    def pair_index(self, job: np.ndarray, unit: np.ndarray) -> np.ndarray:
        """The pair of each (job, unit), or -1 where r is not in R_n (constraint (5))."""
        key = np.asarray(job, dtype=np.int64) * self.n_units + np.asarray(unit, dtype=np.int64)
        if self.n_pairs == 0:
            return np.full(key.shape, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.pair_key, key), self.n_pairs - 1)
        return np.where(self.pair_key[pos] == key, pos, -1)

    def violations(self, allocation: np.ndarray, *, tol: float = 1e-9) -> list[str]:
        """Constraints (4)-(7) of P1 broken by a dense (N, n_units) allocation (empty: feasible).

        ``tol`` is relative to the bound it is checked against (absolute below 1)."""
        X = np.asarray(allocation, dtype=np.float64)
        if X.shape != (self.n_jobs, self.n_units):
            return [f"allocation has shape {X.shape}, expected {(self.n_jobs, self.n_units)}"]
        if not np.isfinite(X).all():
            return ["allocation has a non-finite entry"]
        out = []
        outside = np.abs(np.where(self.in_mesh, 0.0, X)).max(initial=0.0)
        if outside > tol:
            n, r = np.unravel_index(np.argmax(np.abs(np.where(self.in_mesh, 0.0, X))), X.shape)
            out.append(f"(5): job {n} has {X[n, r]:.6g} on unit {r} outside R_n")
        if X.min(initial=0.0) < -tol:
            out.append(f"(7): negative workload {X.min():.6g}")
        return out + self.pair_violations(self.pairs_of(X), tol=tol, check_sign=False)

    def pair_violations(self, x: np.ndarray, *, tol: float = 1e-9, check_sign: bool = True,
                        whole_units: bool = False) -> list[str]:
        """Constraints (4), (6), (7) of P1 broken by a pair vector ``x`` ((5) holds by
        construction); the same tests as :meth:`violations` without the dense (N, n_units)
        matrix, so they scale to 10^4 jobs. ``tol`` as in :meth:`violations`. With
        ``whole_units`` (x_nr in {0, xbar_nr}, (43)) the rows (4) and (6) have the slack of a 0-1
        selection (:func:`row_slack`: the side or what the row sums), not a solver's floor."""
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.n_pairs,):
            return [f"allocation has {x.size} pair entries, expected {self.n_pairs}"]
        if not np.isfinite(x).all():
            return ["allocation has a non-finite entry"]
        out = []
        job_reach, unit_reach, scale = self.reaches
        floor = tol * min(1.0, scale)  # a solver's zero at the instance's own scale
        if check_sign and x.min(initial=0.0) < -floor:
            out.append(f"(7): negative workload {x.min():.6g}")
        over = x - np.maximum(floor, tol * self.xbar) - self.xbar
        if over.size and over.max() > 0:
            p = int(np.argmax(over))
            out.append(f"(7): job {self.pair_job[p]} has {x[p]:.6g} > xbar {self.xbar[p]:.6g} on unit {self.pair_unit[p]}")
        load = np.bincount(self.pair_job, weights=x, minlength=self.n_jobs)
        excess = load - self.rho - packing_slack(tol, self.rho, load, job_reach, whole_units=whole_units)
        j = int(np.argmax(excess))
        if excess[j] > 0:
            out.append(f"(4): job {j} processes {load[j]:.6g} > rho {self.rho[j]:.6g}")
        used = np.bincount(self.pair_unit, weights=x, minlength=self.n_units)
        cap = self.capacity.reshape(-1)
        excess = used - cap - packing_slack(tol, cap, used, unit_reach, whole_units=whole_units)
        r = int(np.argmax(excess))
        if excess[r] > 0:
            out.append(f"(6): unit {r} carries {used[r]:.6g} > C_r {cap[r]:.6g}")
        return out

    @property
    def reaches(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(per job, per unit) the most its pairs' workloads can sum to (sums of xbar), and the
        largest xbar: the floors of :meth:`pair_violations`' slacks below 1."""
        return self.memo("reaches", lambda: (np.bincount(self.pair_job, weights=self.xbar, minlength=self.n_jobs),
                                             np.bincount(self.pair_unit, weights=self.xbar, minlength=self.n_units),
                                             float(np.max(self.xbar, initial=0.0))))

    def marginal_bounds(self) -> tuple[float, float]:
        """(iota, upsilon) of (8) over this instance's pairs (:func:`prices.iota_upsilon`)."""
        return prices.iota_upsilon(self.pair_kind, self.a, self.beta, self.pair_capacity, self.xbar)

    # --- JSON -----------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "MeshInstance":
        check_keys("mesh instance", dict(data), required=JSON_KEYS)
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity.tolist(),
            "tau": self.tau,
            "arrival": self.arrival.tolist(),
            "deadline": self.deadline.tolist(),
            "rho": self.rho.tolist(),
            "nodes": [k.tolist() for k in self.nodes],
            "kind": list(self.kind),
            "xbar": self.xbar.tolist(),
            "a": self.a.tolist(),
            "beta": self.beta.tolist(),
        }


# --- the Section IV generator -------------------------------------------------------------------
def _positive_normal(rng: np.random.Generator, mean: float, std: float, size: Any, floor: float, setting: str) -> np.ndarray:
    """N(mean, std) draws redrawn until above ``floor`` (a truncated normal; the paper's
    Gaussians are far from 0, so this almost never redraws; a ``setting`` whose mean lies far
    below the floor fails after :data:`optsched.sampling.MAX_REDRAWS` rounds)."""
    return redraw_entries(rng.normal(mean, std, size=size), lambda x: x < floor,
                          lambda k: rng.normal(mean, std, size=k), setting=setting,
                          what=f"above floor = {floor:g} (N({mean:g}, {std:g}))")


POISSON_LARGEST = 1e18  # numpy's Poisson sampler refuses a larger mean ("lam value too large")
# A truncated normal N(mean, std) >= floor needs mean + FLOOR_REACH std >= floor: each draw is then
# accepted with probability >= 2.3 %, and an entry still short after MAX_REDRAWS (1000) rounds has
# probability < 1e-9 (congestion 400 put the capacity mean 10 std below the floor: every run failed).
FLOOR_REACH = 2.0


@dataclass(frozen=True)
class MeshGenerator:
    """Random instances with the defaults of Section IV-A (and the choices it leaves open).

    Per node: C ~ N(capacity_mean, capacity_std), the same in every slot (a node's hardware).
    Jobs: Poisson(arrival_rate) arrivals per slot, at the slot's start, until ``n_jobs``
    have arrived (fewer if the horizon ends first); service duration ~ Exponential(mean
    ``mean_duration`` slots), deadline = arrival + duration; rho ~ N(rho_mean, rho_std).
    Service locality (not specified in the paper): |K_n| uniform on 1..``max_nodes``, the
    nodes a uniform random subset. Per (job, node), the same in every slot of R_n:
    xbar ~ N(xbar_mean, xbar_std), a ~ U[a_low, a_high], beta ~ U[beta_low, beta_high].
    Normals are truncated below at ``floor`` (redrawn). Every job gets utility ``kind``.
    """

    n_nodes: int = 10
    n_slots: int = 24
    tau: float = 60.0
    n_jobs: int = 20
    arrival_rate: float = 2.03
    mean_duration: float = 4.0
    rho_mean: float = 18.0
    rho_std: float = 3.0
    xbar_mean: float = 7.0
    xbar_std: float = 1.0
    capacity_mean: float = 20.0
    capacity_std: float = 2.0
    a_low: float = 1.0
    a_high: float = 3.0
    beta_low: float = 0.1
    beta_high: float = 0.5
    max_nodes: int = 3
    kind: str = "linear"
    floor: float = 0.1

    def __post_init__(self) -> None:
        positive_int("n_nodes", self.n_nodes)
        positive_int("n_slots", self.n_slots)
        positive_int("n_jobs", self.n_jobs)
        positive_int("max_nodes", self.max_nodes)
        if self.max_nodes > self.n_nodes:
            raise ValueError(f"max_nodes: {self.max_nodes} exceeds n_nodes {self.n_nodes}")
        if finite_float("arrival_rate", self.arrival_rate) > POISSON_LARGEST:
            raise ValueError(f"arrival_rate: must be <= {POISSON_LARGEST:g} (numpy's Poisson draws), got {self.arrival_rate:g}")
        for name in ("tau", "arrival_rate", "mean_duration", "floor"):
            if finite_float(name, getattr(self, name)) <= 0:
                raise ValueError(f"{name}: must be > 0")
        for name in ("rho_mean", "xbar_mean", "capacity_mean"):
            if finite_float(name, getattr(self, name)) <= 0:
                raise ValueError(f"{name}: must be > 0")
        for name in ("rho_std", "xbar_std", "capacity_std"):
            finite_float(name, getattr(self, name), minimum=0.0)
        for name in ("rho_mean", "xbar_mean", "capacity_mean"):  # a truncated normal its redraws can fill
            mean, std = getattr(self, name), getattr(self, name.replace("_mean", "_std"))
            if mean + FLOOR_REACH * std < self.floor:
                raise ValueError(f"{name}: N({mean:g}, {std:g}) lies almost wholly below the floor {self.floor:g} "
                                 f"(mean + {FLOOR_REACH:g} std is below it): its draws could not be redrawn above it")
        if not 0 <= finite_float("a_low", self.a_low) <= finite_float("a_high", self.a_high):
            raise ValueError("a_low: need 0 <= a_low <= a_high")
        if not 0 <= finite_float("beta_low", self.beta_low) <= finite_float("beta_high", self.beta_high):
            raise ValueError("beta_low: need 0 <= beta_low <= beta_high")
        utilities.kind_codes(self.kind)

    def draw(self, rng: np.random.Generator) -> MeshInstance:
        cap_node = _positive_normal(rng, self.capacity_mean, self.capacity_std, self.n_nodes, self.floor, "capacity_mean")
        capacity = np.repeat(cap_node[:, None], self.n_slots, axis=1)
        slots: list[int] = []
        for t in range(self.n_slots):
            slots.extend([t] * min(int(rng.poisson(self.arrival_rate)), self.n_jobs - len(slots)))
            if len(slots) >= self.n_jobs:
                break
        slots = slots[: self.n_jobs]
        n = len(slots)
        if n == 0:  # an empty day: keep one job so the instance is well formed
            slots, n = [0], 1
        arrival = np.asarray(slots, dtype=np.float64) * self.tau
        deadline = arrival + rng.exponential(self.mean_duration, size=n) * self.tau
        rho = _positive_normal(rng, self.rho_mean, self.rho_std, n, self.floor, "rho_mean")
        nodes = []
        for _ in range(n):
            size = int(rng.integers(1, self.max_nodes + 1))
            nodes.append(np.sort(rng.choice(self.n_nodes, size=size, replace=False)))
        xbar_node = _positive_normal(rng, self.xbar_mean, self.xbar_std, (n, self.n_nodes), self.floor, "xbar_mean")
        a_node = rng.uniform(self.a_low, self.a_high, size=(n, self.n_nodes))
        beta_node = rng.uniform(self.beta_low, self.beta_high, size=(n, self.n_nodes))
        units = resource_units(arrival, deadline, nodes, self.tau, self.n_slots)
        pair_job = np.repeat(np.arange(n), [u.size for u in units])
        pair_node = np.concatenate(units) // self.n_slots
        return MeshInstance(
            capacity=capacity, tau=self.tau, arrival=arrival, deadline=deadline, rho=rho, nodes=nodes,
            kind=[self.kind] * n, xbar=xbar_node[pair_job, pair_node], a=a_node[pair_job, pair_node],
            beta=beta_node[pair_job, pair_node],
        )
