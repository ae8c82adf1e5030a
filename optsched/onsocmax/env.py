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
allocation, :meth:`MeshInstance.welfare` evaluates the objective; both, and
:class:`~optsched.models.mesh.MeshGenerator` (the Section IV defaults), live in
:mod:`optsched.models.mesh`. :class:`MeshEnv` here replays an instance slot by slot for
:func:`optsched.policy.evaluate`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from optsched.models.mesh import MeshInstance
from optsched.models.validate import float_array, index_array
from optsched.policy import SlotClock

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


def _the_instance(instance: MeshInstance, rng: np.random.Generator) -> MeshInstance:
    return instance


class MeshEnv(SlotClock):
    """Replays an instance slot by slot (the :class:`optsched.policy.Environment` protocol).

    ``sample(rng)`` draws the instance at ``reset``; :meth:`fixed` replays one instance.
    ``step`` refuses (ValueError) a dispatch outside R_n, into a past slot, for a job not yet
    revealed, or one that breaks (4), (6) or (7); so whatever a policy does online is feasible
    for P1, and an action that is not a :class:`Dispatch` of whole-number indices and finite
    amounts (a job index of 0.9 was read as job 0). Feedback: the welfare gained this slot and
    the workload dispatched. Observations are read-only.

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
        return cls(functools.partial(_the_instance, instance))

    @property
    def horizon(self) -> int | None:
        """The instance's slots (None before the first reset draws it)."""
        return None if self.instance is None else self.instance.n_slots

    @property
    def allocation(self) -> np.ndarray:
        """The dense (N, n_units) allocation (a copy, built from ``pair_allocation``)."""
        if self.instance is None:
            return np.zeros((0, 0))
        return self.instance.dense(self.pair_allocation)

    @property
    def usage(self) -> np.ndarray:
        """The usage level w_r of every unit so far (a read-only copy)."""
        out = self._usage.copy() if self.instance is not None else np.zeros(0)
        out.setflags(write=False)
        return out

    def reset(self, rng: np.random.Generator) -> None:
        inst = self._sample(rng)
        self.instance = inst
        self.pair_allocation = np.zeros(inst.n_pairs)
        self._usage = np.zeros(inst.n_units)
        self._load = np.zeros(inst.n_jobs)
        self._order = np.lexsort((np.arange(inst.n_jobs), inst.arrival))
        self._order.setflags(write=False)  # observations hold slices of it
        self._order_slot = inst.arrival_slot[self._order]
        self._t = 0
        self.start_slots()

    def observe(self, t: int) -> Observation:
        t = self._t = self.open_slot(t)
        inst = self.instance
        assert inst is not None  # open_slot refuses a slot before reset
        lo, hi = np.searchsorted(self._order_slot, [t, t + 1])
        arrivals = self._order[lo:hi]
        usage = self.usage
        remaining = inst.rho - self._load
        remaining.setflags(write=False)
        return Observation(t, inst, arrivals, usage, remaining)

    def step(self, action: Dispatch) -> dict[str, float]:
        self.check_step()
        inst = self.instance
        assert inst is not None
        if not isinstance(action, Dispatch):
            raise ValueError(f"action: expected a Dispatch, got {type(action).__name__}")
        job = index_array("action.job", action.job, upper=inst.n_jobs)
        unit = index_array("action.unit", action.unit, upper=inst.n_units)
        amount = float_array("action.amount", action.amount, nonnegative=True)
        if not job.shape == unit.shape == amount.shape:
            raise ValueError("action: job, unit and amount must be 1-D arrays of one length")
        if job.size == 0:
            self.close_slot()
            return {"welfare": 0.0, "dispatched": 0.0}
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
        self.close_slot()
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
        assert inst is not None  # called from step
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
