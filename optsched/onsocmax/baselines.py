"""The two handcrafted online baselines of paper 002, Section IV-A.

Both work slot by slot without reservation: in slot t each node k serves, on unit
r = (k, t), the revealed jobs with r in R_n and workload left (rho_n minus what they got),
each job n at most min(xbar_nr, workload left) on r. Nodes are visited in index order, so a
job spread over several nodes is served first by its lowest-indexed one.

MAX-FIRST    the node repeatedly serves the job with the highest *myopic social welfare*
             f_nr(q) + beta_nr q / C_r, q the most it can take now, until C_r is used up.
EQUAL-SHARE  the node splits C_r equally among the jobs (water-filling: a job that needs
             less than its share leaves the rest to the others).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.models import utilities
from optsched.models.mesh import MeshInstance
from optsched.onsocmax.env import Dispatch, MeshEnv, Observation


def water_fill(demand: np.ndarray, capacity: float) -> np.ndarray:
    """Equal shares of ``capacity`` capped by ``demand``: min(d_j, level) with the level that
    uses the capacity (or everything when the demand fits)."""
    d = np.asarray(demand, dtype=np.float64)
    if d.sum() <= capacity:
        return d.copy()
    s = np.sort(d)
    before = np.concatenate([[0.0], np.cumsum(s)[:-1]])  # served in full below each candidate
    left = np.arange(s.size, 0, -1)  # jobs still sharing
    level = (capacity - before) / left
    k = int(np.argmax(level <= s))  # first sorted demand at or above its would-be level
    return np.minimum(d, level[k])


class _SlotPolicy:
    """Shared slot loop: per unit of the current slot, the candidate pairs and their caps."""

    name = ""

    def reset(self, env: MeshEnv, rng: np.random.Generator) -> None:
        inst = env.instance
        if inst is None:
            raise RuntimeError(f"{self.name}.reset: reset the environment first")
        self._inst: MeshInstance = inst
        self._by_unit = np.argsort(inst.pair_unit, kind="stable")
        self._unit_start = np.searchsorted(inst.pair_unit[self._by_unit], np.arange(inst.n_units + 1))

    def act(self, obs: Observation) -> Dispatch:
        inst = self._inst
        remaining = np.maximum(np.array(obs.remaining, dtype=np.float64), 0.0)
        capacity = inst.capacity.reshape(-1)
        pairs: list[np.ndarray] = []
        amounts: list[np.ndarray] = []
        for k in range(inst.n_nodes):
            r = k * inst.n_slots + obs.t
            cand = self._by_unit[self._unit_start[r] : self._unit_start[r + 1]]
            jobs = inst.pair_job[cand]
            demand = np.minimum(inst.xbar[cand], remaining[jobs])
            keep = demand > 0
            cand, jobs, demand = cand[keep], jobs[keep], demand[keep]
            room = capacity[r] - obs.usage[r]
            if cand.size == 0 or room <= 0:
                continue
            give = self.serve(inst, cand, demand, room)
            remaining[jobs] -= give
            pairs.append(cand)
            amounts.append(give)
        if not pairs:
            return Dispatch.none()
        return Dispatch.of_pairs(inst, np.concatenate(pairs), np.concatenate(amounts))

    def serve(self, inst: MeshInstance, pairs: np.ndarray, demand: np.ndarray, room: float) -> np.ndarray:
        raise NotImplementedError

    def observe(self, feedback: Mapping[str, Any]) -> None:
        pass


class MaxFirst(_SlotPolicy):
    """MAX-FIRST: highest myopic welfare first, each job as much as it can take."""

    name = "MAX-FIRST"

    def serve(self, inst: MeshInstance, pairs: np.ndarray, demand: np.ndarray, room: float) -> np.ndarray:
        give = np.zeros(pairs.size)
        open_ = np.ones(pairs.size, dtype=bool)
        slope = inst.beta[pairs] / inst.pair_capacity[pairs]
        while room > 0 and open_.any():
            q = np.minimum(demand, room)
            myopic = utilities.value(inst.pair_kind[pairs], inst.a[pairs], q) + slope * q
            best = int(np.argmax(np.where(open_, myopic, -np.inf)))
            give[best] = q[best]
            room -= q[best]
            open_[best] = False
        return give


class EqualShare(_SlotPolicy):
    """EQUAL-SHARE: the node's capacity split equally (water-filling) among its jobs."""

    name = "EQUAL-SHARE"

    def serve(self, inst: MeshInstance, pairs: np.ndarray, demand: np.ndarray, room: float) -> np.ndarray:
        return water_fill(demand, room)
