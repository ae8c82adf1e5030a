"""Brute force over every 0-1 vector: the oracle of last resort for tiny binary models.

It uses only the model's own ``evaluate_binary`` (its math), never a solver formulation,
so it checks the formulations too.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import all_binary_rows, as_binary, as_standard
from optsched.result import Result, Termination
from optsched.solvers.registry import Backend, Option, register_backend

MAX_BINARY = 22
CHUNK = 1 << 15


@register_backend
class BruteForceBackend(Backend):
    NAME = "brute_force"
    DESCRIPTION = f"enumerates all 2^n 0-1 vectors (n <= {MAX_BINARY}); exact, for tiny instances"
    EXACT = True
    FORM = "binary"
    PRIORITY = 99
    SUPPORTS_TIME_LIMIT = True  # checked between chunks of 2^15 vectors
    OPTIONS: Mapping[str, Option] = {}

    def memory_bytes(self, model: Model) -> float:
        n = as_binary(model).n_binary
        rows = as_standard(model).to_standard_form().n_rows if "standard" in type(model).FORMS else 0
        return float(min(CHUNK, 2**n) * (n + 8 * (rows + 2)))  # one chunk of vectors and their evaluation

    def fits_instance(self, model: Model) -> str | None:
        n = as_binary(model).n_binary
        if n > MAX_BINARY:
            return f"brute_force: {n} binary variables is more than {MAX_BINARY}"
        return None

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        form = as_binary(model)
        n = form.n_binary
        total = 1 << n
        best_val, best_x = None, None
        began = time.perf_counter()
        for start in range(0, total, CHUNK):
            if time_limit is not None and start and time.perf_counter() - began >= time_limit:
                # stopped between chunks: the best vector so far is feasible, no bound is proven
                return Result(
                    Termination.TIME_LIMIT,
                    objective=best_val,
                    solution=None if best_x is None else form.solution_from_vector(best_x.astype(np.float64)),
                    iterations=start,
                    extra={"message": f"time limit after {start} of {total} vectors"},
                )
            rows = all_binary_rows(n, start, min(total, start + CHUNK))
            with np.errstate(over="ignore", invalid="ignore"):  # an overflowed sum is inf: the seam refuses it if chosen
                feasible, values = form.evaluate_binary(rows)
            if not feasible.any():
                continue
            vals = np.where(feasible, values, -np.inf if model.maximize else np.inf)
            k = int(np.argmax(vals) if model.maximize else np.argmin(vals))
            if best_val is None or model.better(float(vals[k]), best_val):
                best_val, best_x = float(vals[k]), rows[k]
        if best_x is None:
            return Result(Termination.INFEASIBLE, iterations=total)
        return Result(
            Termination.OPTIMAL,
            objective=best_val,
            bound=best_val,
            solution=form.solution_from_vector(best_x.astype(np.float64)),
            iterations=total,
        )
