"""``aescb``: the AESCB route of paper 000 to the ESCB index P3 (approximate, with a bound).

Scale with ceilings (13)-(14): Upsilon_e = ceil(xi * mean_e), Sigma2_e = ceil(xi^2 variance_e);
solve P4(s) for every s = 0..S by Algorithm 2 (``budget_dp``); return x*_{P4}(s*) with
s* = argmax_s s + sqrt(V(s)) (17). Option ``method``: ``envelope`` (default) computes only the
member s* (the pruned DP of ``budget_dp.envelope_pick``, same s* and x as the whole family);
``reach``, ``pareto``, ``dense`` solve the whole family first. Option ``family_backend``
solves the family with another ``budget_family`` backend instead of the DP (``budget_exact``:
one exact solve per budget), to check the DP inside a policy's loop.

Guarantee (Theorem 1, redone with both ceilings): if S >= Upsilon.x for an optimal x of P3 (the
default S = sum of Upsilon always is), then for the returned x with |x| chosen items

    OPT - (mean.x + sqrt(variance.x)) <= (|x| + sqrt(|x|)) / xi,

because xi*OPT <= s* + sqrt(V(s*)) <= Upsilon.x + sqrt(Sigma2.x)
<= xi*mean.x + |x| + xi*sqrt(variance.x) + sqrt(|x|). The paper's (32) states |x| / xi <= delta(t)
and drops the sqrt(|x|) / xi that the ceiling in (14) adds. ``Result.bound`` is this upper bound
on OPT.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.result import Result, Termination
from optsched.solvers.budget_dp import DP_METHODS, aescb_index, escb_scaled_coefficients, pick_budget
from optsched.solvers.registry import Backend, Option, get_backend, register_backend


def theorem1_gap(n_chosen: int, xi: int) -> float:
    """(|x| + sqrt(|x|)) / xi: how far below the P3 optimum the AESCB value can be."""
    return (n_chosen + math.sqrt(n_chosen)) / xi


@register_backend
class AescbBackend(Backend):
    NAME = "aescb"
    DESCRIPTION = "AESCB route of paper 000: scale (13)-(14), DP over every budget, pick s* (17); not exact"
    EXACT = False
    MODELS = frozenset({"escb_index"})
    PRIORITY = 40
    REQUIRES = ("numba",)
    OPTIONS: Mapping[str, Option] = {
        "xi": Option(32, int, "scaling xi of (13)-(14)", minimum=1, maximum=2**20),
        "max_budget": Option(None, int, "largest budget S of the family (default: sum of Upsilon)", minimum=0,
                             nullable=True),
        "method": Option("envelope", str, "DP route: envelope (only s*) or a whole-family DP method",
                         choices=("envelope", *DP_METHODS)),
        "family_backend": Option("dp", str, "budget_family backend of the family (dp: Algorithm 2)"),
    }

    def check_option_values(self, options: Mapping[str, Any]) -> None:
        from optsched.models.budget_family import BudgetFamily

        family = get_backend(options["family_backend"])
        if not family.EXACT or family.fits_kind(BudgetFamily) is not None:
            raise ValueError(f"options: backend 'aescb' option 'family_backend' must be an exact budget_family "
                             f"backend, got {options['family_backend']!r}")

    def fits_instance(self, model: Model) -> str | None:
        m: Any = model
        return None if m.is_integral else "aescb: weights and capacity must be whole numbers"

    def new_state(self, kind: type[Model], options: Mapping[str, Any]) -> Any:
        if options["family_backend"] == "dp":
            return None
        from optsched.solve import prepare

        return prepare("budget_family", options["family_backend"], verify=False)

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        m: Any = model
        xi = int(options["xi"])
        if options["family_backend"] == "dp":
            x, value = aescb_index(m.mean, m.variance, m.weights, m.capacity, xi, options["max_budget"],
                                   method=options["method"])
        else:
            family = state if state is not None else self.new_state(type(model), options)
            x, value = self._by_family(m, xi, options["max_budget"], family)
            if x is None:
                return Result(Termination.ERROR, extra={"message": value})
        chosen = int(x.sum())
        bound = value + theorem1_gap(chosen, xi) if options["max_budget"] is None else None
        return Result(Termination.FEASIBLE, objective=value, bound=bound, solution=m.solution_from_vector(x),
                      extra={"xi": xi})

    @staticmethod
    def _by_family(m: Any, xi: int, max_budget: int | None, family: Any) -> tuple[Any, Any]:
        """x*_{P4}(s*) with the family solved by a prepared ``budget_family`` backend."""
        from optsched.models.budget_family import BudgetFamily

        upsilon, sigma2 = escb_scaled_coefficients(m.mean, m.variance, xi)
        S = int(upsilon.sum()) if max_budget is None else max_budget
        fam = BudgetFamily(sigma2.astype(np.float64), m.weights, m.capacity, upsilon, S)
        r = family.solve(fam)
        if not r.ok:
            return None, f"the budget family by {family.name!r} ended {r.termination.value}: {r.message}"
        values = np.array([-np.inf if v is None else v for v in r.extra["values"]])
        x = np.zeros(m.n_items, dtype=bool)
        x[np.asarray(r.solution[pick_budget(values)], dtype=np.int64)] = True
        return x, float(m.mean @ x + math.sqrt(float(m.variance @ x)))
