"""Learning baselines for ESDP (paper 000): the same learning problem, other indices.

The paper compares ESDP only with handcrafted greedy rules (HSWF, LCF, LWTF), which neither
learn to explore nor solve the per-slot knapsack exactly. These policies isolate the two:
each one explores the never-tried channels first exactly as ESDP does (the never-tried
channels of ports with a job, by first fit in index order), then fills the remaining capacity
with the tried channels of ports with a job by the *exact* 0-1 multidimensional knapsack

    max index . x  s.t.  A x <= c_residual,  x_e = 0 off the tried available channels,

(:class:`optsched.esdp.oracle.SlotKnapsack`, the oracle's solver), with one index per channel
(v_hat, n_e as in (7), (8); t the 1-based slot):

``CUCB``    min(v_hat_e + sqrt(3 ln t / (2 n_e)), 1): the adjusted means of CUCB (Chen, Wang,
            Yuan, Wang, "Combinatorial multi-armed bandit and its extension to probabilistically
            triggered arms", JMLR 2016), an optimistic index per channel, no sqrt of a sum.
``Greedy``  v_hat_e: no exploration beyond trying each channel once ("follow the leader").
``TS``      theta_e ~ Beta(1 + s_e, 1 + f_e), combinatorial Thompson sampling (Wang, Chen, ICML
            2018) with the Bernoulli trick for rewards in [0, 1] (Agrawal, Goyal, COLT 2012):
            each observed Z_tilde_e counts as a success with probability Z_tilde_e.

ESDP differs from CUCB only in its index: the ESCB index v_hat.x + sqrt(sigma2_hat.x) of the
whole set, solved approximately through the budget family. Greedy shows how much of any lead
comes from exploring at all; CUCB and TS how much from ESDP's particular way of exploring.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np

from optsched.esdp.baselines import first_fit
from optsched.esdp.env import DispatchInstance, Observation
from optsched.esdp.oracle import SlotKnapsack
from optsched.esdp.statistics import ChannelStats


def _cucb(learner: "IndexLearner", t: int) -> np.ndarray:
    stats = learner.stats
    bonus = np.sqrt(1.5 * math.log(t) / np.maximum(stats.counts, 1))
    return np.minimum(stats.v_hat() + bonus, 1.0)


def _greedy(learner: "IndexLearner", t: int) -> np.ndarray:
    return learner.stats.v_hat()


def _thompson(learner: "IndexLearner", t: int) -> np.ndarray:
    return learner.rng.beta(1.0 + learner.successes, 1.0 + learner.stats.counts - learner.successes)


INDICES: dict[str, Callable[["IndexLearner", int], np.ndarray]] = {
    "CUCB": _cucb,
    "Greedy": _greedy,
    "TS": _thompson,
}


class IndexLearner:
    """A :class:`optsched.policy.Policy`: never-tried channels first, then the exact slot
    knapsack on the tried ones with the index ``name`` of ``INDICES`` (module docstring)."""

    def __init__(self, name: str) -> None:
        if name not in INDICES:
            raise ValueError(f"learner: unknown index {name!r} (known: {', '.join(INDICES)})")
        self.name = name
        self._index = INDICES[name]

    def reset(self, env: Any, rng: np.random.Generator) -> None:
        self.instance: DispatchInstance = env.instance
        self.rng = rng
        self.stats = ChannelStats(self.instance.n_edges)
        self.successes = np.zeros(self.instance.n_edges)  # TS: Bernoulli successes per channel
        self._knapsack = SlotKnapsack(self.instance.requirements, self.instance.capacity)

    def act(self, observation: Observation) -> np.ndarray:
        inst = self.instance
        avail, tried = observation.channel_mask, self.stats.tried
        x = first_fit(np.flatnonzero(avail & ~tried), inst.requirements, inst.capacity)
        pool = avail & tried
        if pool.any():
            residual = inst.capacity - inst.requirements @ x
            x = x | self._knapsack(self._index(self, observation.t + 1), pool, residual)
        return x

    def observe(self, feedback: Mapping[str, Any]) -> None:
        x, z = np.asarray(feedback["x"], dtype=bool), np.asarray(feedback["z"], dtype=np.float64)
        self.stats.update(x, z)
        self.successes[x] += self.rng.random(int(x.sum())) < z[x]  # the Bernoulli trick (read by TS)
