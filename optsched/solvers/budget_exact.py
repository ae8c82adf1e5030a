"""``budget_exact``: the budget family {P4(s)} solved one budget at a time by an exact backend.

This is the reference for the ``dp`` backend (Algorithm 2) and the route for families whose DP
table is too large. Option ``inner`` names the exact backend for each member P4(s) (``highs``,
``cpsat``, ``pyomo``, ``brute_force``, or ``dp`` itself).

With ``reuse`` (default) it exploits two facts of the family: V(s) is non-increasing in s, so
an optimal x* of P4(s) with budget_coeffs.x* = u >= s is optimal for every s' in [s, u]; and
once P4(s) is infeasible, so is every larger s. Without ``reuse`` every s is solved separately,
which is what "one solve per budget" costs.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.result import Result, Status
from optsched.solvers.registry import Backend, register_backend


@register_backend
class BudgetExactBackend(Backend):
    NAME = "budget_exact"
    DESCRIPTION = "budget family: each P4(s) by an exact backend (option inner); reuses optima across s"
    EXACT = True
    MODELS = frozenset({"budget_family"})
    SUPPORTS_TIME_LIMIT = True
    PRIORITY = 30
    OPTIONS: Mapping[str, Any] = {"inner": "highs", "reuse": True}

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any]) -> Result:
        from optsched.solve import solve

        fam: Any = model
        S = fam.max_budget
        entries: list[Any] = [None] * (S + 1)
        values: list[float | None] = [None] * (S + 1)
        start = time.perf_counter()
        solves = 0
        s = 0
        while s <= S:
            remaining = None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - start))
            r = solve(fam.member(s), options["inner"], time_limit=remaining, verify=False)
            solves += 1
            if r.status is Status.INFEASIBLE:
                if options["reuse"]:
                    break
                s += 1
                continue
            if r.status is not Status.OPTIMAL:
                status = Status.TIME_LIMIT if r.status is Status.TIME_LIMIT else Status.ERROR
                why = r.extra.get("message") or r.extra.get("solver_status") or ""
                message = f"P4({s}) by {options['inner']!r} ended {r.status.value}" + (f": {why}" if why else "")
                return Result(status, model.name, self.NAME, iterations=solves, extra={"message": message})
            x = np.asarray(r.solution, dtype=np.int64)
            last = min(S, int(np.floor(fam.budget_coeffs[x].sum() + 1e-9))) if options["reuse"] else s
            for k in range(s, last + 1):
                entries[k], values[k] = x, float(r.objective)
            s = last + 1
        objective = values[fam.budget] if values[fam.budget] is not None else -np.inf
        return Result(
            status=Status.OPTIMAL,
            model=model.name,
            backend=self.NAME,
            objective=objective,
            bound=objective,
            solution=tuple(entries),
            iterations=solves,
            extra={"values": values, "solves": solves, "inner": options["inner"]},
        )
