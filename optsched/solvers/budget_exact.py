"""``budget_exact``: the budget family {P4(s)} solved one budget at a time by an exact backend.

This is the reference for the ``dp`` backend (Algorithm 2) and the route for families whose DP
table is too large. Option ``inner`` names the exact backend for each member P4(s) (``highs``,
``cpsat``, ``pyomo``, ``brute_force``, or ``dp`` itself); it is prepared once per session
and solves every member (so HiGHS keeps its object between members).

With ``reuse`` (default) it exploits two facts of the family: V(s) is non-increasing in s, so
an optimal x* of P4(s) with budget_coeffs.x* = u >= s is optimal for every s' in [s, u]; and
once P4(s) is infeasible, so is every larger s. Without ``reuse`` every s is solved separately,
which is what "one solve per budget" costs. A member the inner backend leaves ``feasible`` (a
verified point it could not prove optimal) is kept for its budget alone, and the family is then
``feasible`` with that member's bound where it is the designated one.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.result import Result, Termination
from optsched.solvers.registry import Backend, Option, PrepareFn, check_exact_backend_option, register_backend, remaining


@register_backend
class BudgetExactBackend(Backend):
    NAME = "budget_exact"
    DESCRIPTION = "budget family: each P4(s) by an exact backend (option inner); reuses optima across s"
    EXACT = True
    MODELS = frozenset({"budget_family"})
    SUPPORTS_TIME_LIMIT = True
    PRIORITY = 30
    OPTIONS: Mapping[str, Option] = {
        "inner": Option("highs", str, "exact backend of each member P4(s) (a budgeted_ip backend)", per_solve=False),
        "reuse": Option(True, bool, "reuse an optimum over the budgets it meets; stop at the first infeasible s"),
    }

    def check_option_values(self, options: Mapping[str, Any]) -> None:
        from optsched.models.budgeted_ip import BudgetedIP

        check_exact_backend_option(self.NAME, "inner", options["inner"], BudgetedIP)

    def new_state(self, kind: type[Model], options: Mapping[str, Any], *, prepare: PrepareFn) -> Any:
        # verified: the loop's next budget comes from the member's x (HiGHS called x "optimal" for
        # P4(6) with budget_coeffs.x = 5 once the row was scaled by 2^-63, and the loop never ended)
        return prepare("budgeted_ip", options["inner"], verify=True)

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        inner = state  # the inner backend, prepared by the seam (new_state)
        fam: Any = model
        S = fam.max_budget
        entries: list[Any] = [None] * (S + 1)
        values: list[float | None] = [None] * (S + 1)
        bounds: list[float | None] = [None] * (S + 1)
        unproven: list[int] = []  # members ending feasible: the family is then feasible, not optimal
        start = time.perf_counter()
        solves = 0
        s = 0
        while s <= S:
            member = fam.member(s)
            refused = inner.fits(member)
            if refused is not None:  # e.g. numbers past the inner solver's infinity: a result, as any failure
                return Result(Termination.ERROR, iterations=solves,
                              extra={"message": f"P4({s}): the inner backend {options['inner']!r} does not take it: {refused}"})
            r = inner.solve(member, time_limit=remaining(time_limit, start))
            solves += 1
            if r.termination is Termination.INFEASIBLE:
                if options["reuse"]:
                    break
                s += 1
                continue
            proven = r.termination is Termination.OPTIMAL
            if not proven and not (r.termination is Termination.FEASIBLE and r.ok):
                termination = r.termination if r.termination.stopped_early else Termination.ERROR  # the member's limit
                why = r.message or r.extra.get("solver_status") or ""
                message = f"P4({s}) by {options['inner']!r} ended {r.termination.value}" + (f": {why}" if why else "")
                return Result(termination, iterations=solves, extra={"message": message})
            x = np.asarray(r.solution, dtype=np.int64)
            # x is verified for P4(s) (budget_coeffs.x >= s within the row's slack): s grows every
            # pass, so at most S + 1 solves. Only an optimum is reused over the budgets it meets.
            last = max(s, min(S, int(np.floor(fam.budget_coeffs[x].sum() + 1e-9)))) if options["reuse"] and proven else s
            entries[s:last + 1] = [x] * (last + 1 - s)  # one object per run (BudgetFamily checks a run once)
            values[s:last + 1] = [float(r.objective)] * (last + 1 - s)
            bounds[s:last + 1] = [r.bound] * (last + 1 - s)
            if not proven:  # a verified point without a proof (e.g. within its solver's tolerances only)
                unproven.append(s)
            s = last + 1
        extra: dict[str, Any] = {"values": values, "solves": solves, "inner": options["inner"]}
        if values[fam.budget] is None:  # the designated member P4(budget) is infeasible
            return Result(Termination.INFEASIBLE, iterations=solves, extra=extra)
        if unproven:
            listed = ", ".join(map(str, unproven[:5])) + (", ..." if len(unproven) > 5 else "")  # up to 10^6 budgets
            extra["optimality"] = (f"not certified: {options['inner']!r} proved no optimum for {len(unproven)} "
                                   f"budget{'s' if len(unproven) > 1 else ''} ({listed})")
        return Result(Termination.FEASIBLE if unproven else Termination.OPTIMAL, objective=values[fam.budget],
                      bound=bounds[fam.budget], solution=tuple(entries), iterations=solves, extra=extra)
