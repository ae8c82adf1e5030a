"""Algorithm 2 of paper 004: greedy set packing in order of w_i / sqrt(|J_i|).

Lemma 12: the greedy value is at least OPT / sqrt(M), so ``bound = value * sqrt(M)`` is a
proven upper bound (for a ``set_packing_batch``, copy by copy, hence for the sum). Empty sets
clash with nothing; they are taken first when w_i > 0.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from optsched.lazy_modules import loaded
from optsched.models.base import Model
from optsched.models.set_packing import SetPacking, SetPackingBatch
from optsched.result import Result, Termination
from optsched.solvers.registry import Backend, Option, register_backend


def greedy_keys(weights: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Eq. (3): w_i / sqrt(|J_i|); +inf for an empty set with positive weight."""
    keys = weights / np.sqrt(np.maximum(sizes, 1))
    empty = sizes == 0
    if empty.any():
        keys = np.where(empty, np.where(weights > 0, np.inf, 0.0), keys)
    return keys


def greedy_packing_batch(incidence: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Algorithm 2 for B weight vectors over one family of sets at once.

    ``incidence`` (N, M) bool; ``weights`` (B, N). Returns (B, N) bool chosen sets. Ties in
    the key are broken by the lower set index (a stable sort).
    """
    inc = np.asarray(incidence, dtype=bool)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    b, n = w.shape
    keys = greedy_keys(w, inc.sum(axis=1)[None, :])
    order = np.argsort(-keys, axis=1, kind="stable")
    used = np.zeros((b, inc.shape[1]), dtype=bool)
    chosen = np.zeros((b, n), dtype=bool)
    rows = np.arange(b)
    for k in range(n):
        i = order[:, k]
        need = inc[i]
        ok = ~(used & need).any(axis=1)
        chosen[rows, i] = ok
        used |= need & ok[:, None]
    return chosen


def greedy_packing(model: SetPacking) -> tuple[np.ndarray, float]:
    """(sorted indices of the sets Algorithm 2 chooses, their total weight): one compiled pass
    over the model's CSR sets (keys of :func:`greedy_keys`, the disjointness test of line 7)."""
    f = model.family
    return loaded("optsched.solvers.greedy_set_packing_kernel").greedy_select(model.weights, f.indptr, f.indices, f.n_elements)


@register_backend
class GreedySetPackingBackend(Backend):
    NAME = "greedy"
    DESCRIPTION = "Algorithm 2 of paper 004: sort by w/sqrt(|J|), add when disjoint; sqrt(M)-approximate"
    EXACT = False
    COMPILED = True
    MODELS = frozenset({SetPacking.name, SetPackingBatch.name})
    PRIORITY = 0
    OPTIONS: Mapping[str, Option] = {}

    def memory_bytes(self, model: Model) -> float:
        m: Any = model
        if isinstance(model, SetPackingBatch):  # dense incidence, keys, order, chosen, used
            used = m.family.used.shape[0]  # elements some set contains (never M itself)
            return float(m.n_sets * used + m.n_copies * (17 * m.n_sets + used))
        return 8.0 * (3 * m.family.indices.shape[0] + 4 * m.n_sets)  # ranks, sort of the entries, keys, order

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        if isinstance(model, SetPackingBatch):
            chosen: Any = greedy_packing_batch(model.family.dense, model.weights)
            value = model.objective(chosen)
        else:
            assert isinstance(model, SetPacking)
            chosen, value = greedy_packing(model)
        bound = value * math.sqrt(model.n_elements)
        termination = Termination.OPTIMAL if bound <= value * (1 + 1e-12) else Termination.FEASIBLE
        return Result(termination, objective=value, bound=bound, solution=chosen, iterations=model.n_sets)
