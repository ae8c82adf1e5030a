"""The spatio-temporal resource mesh of paper 002 (Section II), its jobs, and P1's feasibility.

A resource unit r = (node k, slot t) can process at most C_r workload; it is indexed
``r = k * n_slots + t``. Job n arrives at a_n with deadline d_n, workload rho_n and
service locality K_n (the nodes it may use); its resource units are (1)

    R_n = { r_kt : ceil(a_n / tau) <= t <= floor(d_n / tau), k in K_n }

(slots clipped to the horizon). A *pair* (n, r) with r in R_n carries the per-unit cap
xbar_nr, the utility f_nr (``kind`` with coefficient a_nr, see
:mod:`optsched.models.utilities`) and the cluster weight beta_nr of g_nr(x) = beta_nr x / C_r
(3). Pairs are stored flat, job by job, nodes outer and slots inner.

P1 (social welfare maximisation):  max sum_n sum_{r in R_n} f_nr(x_nr) + g_nr(x_nr)
s.t. (4) sum_r x_nr <= rho_n, (5) x_nr = 0 outside R_n, (6) sum_n x_nr <= C_r,
(7) 0 <= x_nr <= xbar_nr. :meth:`MeshInstance.violations` checks (4)-(7) on a dense
allocation, :meth:`MeshInstance.welfare` evaluates the objective.

:class:`MeshGenerator` draws instances with the Section IV defaults; :class:`MeshEnv` replays
an instance slot by slot for :func:`optsched.policy.evaluate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from optsched.models import utilities
from optsched.models.mesh import MeshInstance, resource_units
from optsched.models.validate import finite_float, positive_int
from optsched.sampling import redraw_entries

# --- the Section IV generator -------------------------------------------------------------------
def _positive_normal(rng: np.random.Generator, mean: float, std: float, size: Any, floor: float, setting: str) -> np.ndarray:
    """N(mean, std) draws redrawn until above ``floor`` (a truncated normal; the paper's
    Gaussians are far from 0, so this almost never redraws; a ``setting`` whose mean lies far
    below the floor fails after :data:`optsched.sampling.MAX_REDRAWS` rounds)."""
    return redraw_entries(rng.normal(mean, std, size=size), lambda x: x < floor,
                          lambda k: rng.normal(mean, std, size=k), setting=setting,
                          what=f"above floor = {floor:g} (N({mean:g}, {std:g}))")


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
        for name in ("tau", "arrival_rate", "mean_duration", "floor"):
            if finite_float(name, getattr(self, name)) <= 0:
                raise ValueError(f"{name}: must be > 0")
        for name in ("rho_mean", "xbar_mean", "capacity_mean"):
            if finite_float(name, getattr(self, name)) <= 0:
                raise ValueError(f"{name}: must be > 0")
        for name in ("rho_std", "xbar_std", "capacity_std"):
            finite_float(name, getattr(self, name), minimum=0.0)
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
            slots.extend([t] * int(rng.poisson(self.arrival_rate)))
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


# --- the online environment -----------------------------------------------------------------------
@dataclass(frozen=True)
class Observation:
    """What an online policy sees in slot ``t``: the jobs revealed now (``arrivals``, in
    arrival order), the usage level w_r of every unit and each job's undispatched workload.
    ``instance`` gives the quadruples {rho_n, R_n, xbar_n, f_n}; a policy may read those of
    jobs already revealed only."""

    t: int
    instance: MeshInstance
    arrivals: np.ndarray
    usage: np.ndarray
    remaining: np.ndarray


@dataclass(frozen=True)
class Dispatch:
    """An action: workload ``amount[i]`` of job ``job[i]`` on unit ``unit[i]`` (added to what
    is already there)."""

    job: np.ndarray
    unit: np.ndarray
    amount: np.ndarray

    @classmethod
    def none(cls) -> "Dispatch":
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))

    @classmethod
    def of_pairs(cls, instance: MeshInstance, pairs: np.ndarray, amount: np.ndarray) -> "Dispatch":
        pairs = np.asarray(pairs, dtype=np.int64)
        return cls(instance.pair_job[pairs], instance.pair_unit[pairs], np.asarray(amount, dtype=np.float64))


class MeshEnv:
    """Replays an instance slot by slot (the :class:`optsched.policy.Environment` protocol).

    ``sample(rng)`` draws the instance at ``reset``; :meth:`fixed` replays one instance.
    ``step`` refuses (ValueError) a dispatch outside R_n, into a past slot, for a job not yet
    revealed, or one that breaks (4), (6) or (7); so whatever a policy does online is feasible
    for P1. Feedback: the welfare gained this slot and the workload dispatched.

    The state is the pair vector ``pair_allocation`` with the usage of every unit and the load
    of every job kept beside it, and a step checks only the pairs, jobs and units it touches
    (the dense (N, n_units) matrix ``allocation`` is built on request: at 10^4 jobs over
    100 nodes x 540 slots it would take 4.3 GB).
    """

    TOL = 1e-9

    def __init__(self, sample: Callable[[np.random.Generator], MeshInstance]) -> None:
        self._sample = sample
        self.instance: MeshInstance | None = None
        self.pair_allocation = np.zeros(0)
        self._t = 0

    @classmethod
    def fixed(cls, instance: MeshInstance) -> "MeshEnv":
        return cls(lambda rng: instance)

    @property
    def horizon(self) -> int:
        assert self.instance is not None, "reset first"
        return self.instance.n_slots

    @property
    def allocation(self) -> np.ndarray:
        """The dense (N, n_units) allocation (a copy, built from ``pair_allocation``)."""
        if self.instance is None:
            return np.zeros((0, 0))
        return self.instance.dense(self.pair_allocation)

    def reset(self, rng: np.random.Generator) -> None:
        inst = self._sample(rng)
        self.instance = inst
        self.pair_allocation = np.zeros(inst.n_pairs)
        self._usage = np.zeros(inst.n_units)
        self._load = np.zeros(inst.n_jobs)
        self._order = np.lexsort((np.arange(inst.n_jobs), inst.arrival))
        self._order_slot = inst.arrival_slot[self._order]
        self._t = 0

    def observe(self, t: int) -> Observation:
        inst = self.instance
        assert inst is not None, "reset first"
        self._t = t
        lo, hi = np.searchsorted(self._order_slot, [t, t + 1])
        arrivals = self._order[lo:hi]
        usage = self._usage.copy()
        remaining = inst.rho - self._load
        usage.setflags(write=False)
        remaining.setflags(write=False)
        return Observation(t, inst, arrivals, usage, remaining)

    def step(self, action: Dispatch) -> dict[str, float]:
        inst = self.instance
        assert inst is not None, "reset first"
        job = np.asarray(action.job, dtype=np.int64)
        unit = np.asarray(action.unit, dtype=np.int64)
        amount = np.asarray(action.amount, dtype=np.float64)
        if not (job.shape == unit.shape == amount.shape) or job.ndim != 1:
            raise ValueError("action: job, unit and amount must be 1-D arrays of one length")
        if job.size == 0:
            return {"welfare": 0.0, "dispatched": 0.0}
        if job.min() < 0 or job.max() >= inst.n_jobs or unit.min() < 0 or unit.max() >= inst.n_units:
            raise ValueError("action: job or unit index out of range")
        if not np.isfinite(amount).all() or amount.min() < 0:
            raise ValueError("action: amounts must be finite and >= 0")
        if (inst.arrival_slot[job] > self._t).any():
            raise ValueError(f"action: slot {self._t} dispatches a job not yet revealed")
        if (unit % inst.n_slots < self._t)[amount > 0].any():
            raise ValueError(f"action: slot {self._t} dispatches work into a past slot")
        pair = inst.pair_index(job, unit)
        outside = (pair < 0) & (amount > self.TOL)
        if outside.any():
            i = int(np.argmax(outside))
            raise ValueError(f"action: infeasible for P1 at slot {self._t}: (5): job {job[i]} has "
                             f"{amount[i]:.6g} on unit {unit[i]} outside R_n")
        inside = pair >= 0
        pair, amount = pair[inside], amount[inside]
        touched = np.unique(pair)
        new = self.pair_allocation[touched] + np.bincount(np.searchsorted(touched, pair), weights=amount,
                                                          minlength=touched.size)
        problems = self._violations(touched, new)
        if problems:
            raise ValueError(f"action: infeasible for P1 at slot {self._t}: {problems[0]}")
        old = self.pair_allocation[touched]
        gain = float((inst.pair_welfare_at(touched, new) - inst.pair_welfare_at(touched, old)).sum())
        np.add.at(self._load, inst.pair_job[touched], new - old)
        np.add.at(self._usage, inst.pair_unit[touched], new - old)
        self.pair_allocation[touched] = new
        return {"welfare": gain, "dispatched": float(amount.sum())}

    def _violations(self, pairs: np.ndarray, new: np.ndarray) -> list[str]:
        """(4), (6), (7) of P1 (as :meth:`MeshInstance.pair_violations`, same tolerance rule)
        after setting ``pairs`` to ``new``, checked on the touched pairs, jobs and units only."""
        inst, tol = self.instance, self.TOL
        assert inst is not None
        delta = new - self.pair_allocation[pairs]
        out = []
        over = new - inst.xbar[pairs]
        p = int(np.argmax(over))
        if over[p] > tol * max(1.0, inst.xbar[pairs[p]]):
            out.append(f"(7): job {inst.pair_job[pairs[p]]} has {new[p]:.6g} > xbar {inst.xbar[pairs[p]]:.6g} "
                       f"on unit {inst.pair_unit[pairs[p]]}")
        jobs, j_of = np.unique(inst.pair_job[pairs], return_inverse=True)
        load = self._load[jobs] + np.bincount(j_of, weights=delta, minlength=jobs.size)
        j = int(np.argmax(load - inst.rho[jobs]))
        if load[j] - inst.rho[jobs[j]] > tol * max(1.0, inst.rho[jobs[j]]):
            out.append(f"(4): job {jobs[j]} processes {load[j]:.6g} > rho {inst.rho[jobs[j]]:.6g}")
        units, u_of = np.unique(inst.pair_unit[pairs], return_inverse=True)
        used = self._usage[units] + np.bincount(u_of, weights=delta, minlength=units.size)
        cap = inst.capacity.reshape(-1)[units]
        r = int(np.argmax(used - cap))
        if used[r] - cap[r] > tol * max(1.0, cap[r]):
            out.append(f"(6): unit {units[r]} carries {used[r]:.6g} > C_r {cap[r]:.6g}")
        return out


def replay(instance: MeshInstance, policy: Any, *, seed: int = 0) -> tuple[float, np.ndarray]:
    """Replay ``instance`` under ``policy`` (the shared evaluator loop); returns P1's welfare of
    the online allocation and the allocation as a pair vector (no dense matrix, so it scales to
    10^4 jobs; :func:`optsched.onsocmax.policy.run_online` returns the dense matrix instead)."""
    from optsched.policy import evaluate

    env = MeshEnv.fixed(instance)
    evaluate(env, policy, instance.n_slots, seed=seed)
    return instance.welfare(env.pair_allocation), env.pair_allocation
