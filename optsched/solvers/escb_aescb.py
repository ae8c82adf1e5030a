"""``aescb``: the AESCB route of paper 000 to the ESCB index P3 (approximate, with a bound).

Scale with ceilings (13)-(14): Upsilon_e = ceil(xi * mean_e), Sigma2_e = ceil(xi^2 variance_e);
solve P4(s) for every s = 0..S by Algorithm 2 (``budget_dp``); return x*_{P4}(s*) with
s* = argmax_s s + sqrt(V(s)) (17). Option ``method``: ``envelope`` (default) computes only the
member s* (the pruned DP of ``budget_dp.envelope_pick``, same s* and x as the full family);
``reach``, ``pareto``, ``dense`` solve the whole family first.

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

from optsched.models.base import Model
from optsched.result import Result, Status
from optsched.solvers.budget_dp import aescb_index
from optsched.solvers.registry import Backend, register_backend


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
    OPTIONS: Mapping[str, Any] = {"xi": 32, "max_budget": None, "method": "envelope"}

    def fits_instance(self, model: Model) -> str | None:
        m: Any = model
        return None if m.is_integral else "aescb: weights and capacity must be whole numbers"

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any]) -> Result:
        m: Any = model
        xi = options["xi"]
        x, value = aescb_index(
            m.mean, m.variance, m.weights, m.capacity, xi, options["max_budget"], method=options["method"]
        )
        chosen = int(x.sum())
        bound = value + theorem1_gap(chosen, int(xi)) if options["max_budget"] is None else None
        return Result(
            status=Status.FEASIBLE,
            model=model.name,
            backend=self.NAME,
            objective=value,
            bound=bound,
            solution=m.solution_from_vector(x),
            extra={"xi": int(xi)},
        )
