"""``enumerate``: exact set packing by listing every packing of the N sets once.

Algorithm 1 of paper 004 at the paper's sizes (N <= 8 applications): the packings of one frame's
jobs are enumerated (2^N candidate selections, the feasible ones kept) and, for every weight
vector of a ``set_packing_batch``, the best of them is taken (the first in enumeration order on
ties). One enumeration serves all B copies, which is what makes Section IV's regions cheap.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.set_packing import SetPacking, SetPackingBatch, all_packings
from optsched.result import Result, Termination
from optsched.solvers.registry import Backend, Option, register_backend

MAX_SETS = 20


@register_backend
class EnumeratePackingsBackend(Backend):
    NAME = "enumerate"
    DESCRIPTION = f"every packing of the N sets listed once, best per weight vector (exact; N <= {MAX_SETS})"
    EXACT = True
    MODELS = frozenset({SetPacking.name, SetPackingBatch.name})
    PRIORITY = 80
    OPTIONS: Mapping[str, Option] = {}

    def memory_bytes(self, model: Model) -> float:
        m = _packing(model)
        k = 2.0 ** m.n_sets  # candidate rows: the bools, their loads, the values per copy
        return k * (m.n_sets + 8 * m.family.used.shape[0] + 8 * getattr(m, "n_copies", 1))

    def fits_instance(self, model: Model) -> str | None:
        n = _packing(model).n_sets
        return f"enumerate: {n} sets is more than {MAX_SETS}" if n > MAX_SETS else None

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        m = _packing(model)
        packings = all_packings(m.family)
        weights = np.atleast_2d(m.weights)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflowed sum is inf: the seam refuses it
            best = packings[np.argmax(weights @ packings.T.astype(np.float64), axis=1)]
            solution = best if isinstance(model, SetPackingBatch) else np.flatnonzero(best[0]).astype(np.int64)
            value = model.objective(solution)
        return Result(Termination.OPTIMAL, objective=value, bound=value, solution=solution,
                      iterations=int(packings.shape[0]))


def _packing(model: Model) -> SetPacking | SetPackingBatch:
    if not isinstance(model, (SetPacking, SetPackingBatch)):
        raise TypeError(f"enumerate solves set packings, got {model.name!r}")
    return model
