"""Certificates of optimality from a solver's duals: the bound they prove, in the model's terms.

A solver's "optimal" rests on its own tolerances; where those fail (HiGHS 1.14's QP solver on
data that mix scales, Clarabel on a pseudo-welfare job with capacities of 1e8) the answer is
wrong and still called optimal. Weak duality gives a bound from any multipliers, so the duals
the solver returns with its point either prove the point optimal (bound and objective agree,
``agrees_at_scale``) or leave it ``feasible``, with ``extra["optimality"]`` giving the bound
they do prove.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import as_standard
from optsched.result import Termination, agrees_at_scale


def _judged(model: Model, objective: float, bound: float, extra: dict[str, Any],
            solver: str) -> tuple[Termination, float | None]:
    if agrees_at_scale(model, objective, bound):
        return Termination.OPTIMAL, bound
    extra["optimality"] = (f"not certified: {solver} said optimal, but its duals prove only the bound "
                           f"{bound:.10g} for the objective {objective:.10g}")
    return Termination.FEASIBLE, (bound if np.isfinite(bound) else None)


def certified_qp(model: Model, solution: Any, x: np.ndarray, row_duals: np.ndarray | None, extra: dict[str, Any], *,
                 solver: str = "HiGHS") -> tuple[Termination, float | None]:
    """(termination, bound) of a QP a HiGHS run calls optimal: the Lagrangian bound of its own row
    duals (``StandardForm.lagrangian_gap``; x the standard form's vector) below the model's
    objective. HiGHS 1.14's QP solver says optimal at points far from the optimum when the data
    mix scales (a projection with z of 1e6 and 1: 9.0e9 where the optimum is 0.5); its duals then
    prove no such thing, and the result is ``feasible`` with ``extra["optimality"]`` giving the
    bound they do prove. The pyomo backend's QPs (HiGHS through Pyomo) use it too."""
    if row_duals is None:
        extra["optimality"] = f"not certified: {solver} returned no duals for its QP"
        return Termination.FEASIBLE, None
    objective = model.objective(solution)
    bound = objective - as_standard(model).to_standard_form().lagrangian_gap(x, row_duals)
    return _judged(model, objective, bound, extra, f"{solver}'s QP solver")


def welfare_dual_bound(model: Any, mu: float) -> float:
    """An upper bound on a ``pseudo_welfare`` job's optimum from any multiplier mu of (4):
    D(mu) = mu rho + sum_r max_{0 <= x_r <= u_r} [welfare_r(x_r) - mu x_r] (weak duality; the
    units' maximisers are the kkt kernel's x(mu)). At the kkt backend's mu* it equals the optimum."""
    from optsched.lazy_modules import loaded
    from optsched.solvers.pseudo_welfare_kkt import kernel_inputs

    mu = max(float(mu), 0.0)
    x = loaded("optsched.solvers.pseudo_welfare_kkt_kernel").allocation_at(mu, *kernel_inputs(model))
    return mu * float(model.rho) + model.objective(x) - mu * float(x.sum())


def certified_welfare(model: Any, solution: Any, mu: float | None, extra: dict[str, Any], *,
                      solver: str) -> tuple[Termination, float | None]:
    """(termination, bound) of a ``pseudo_welfare`` job a solver calls optimal, from its
    multiplier mu of (4): :func:`welfare_dual_bound` against the model's objective."""
    if mu is None or not np.isfinite(mu):
        extra["optimality"] = f"not certified: {solver} returned no multiplier for (4)"
        return Termination.FEASIBLE, None
    # the tighter of D(mu) and D(0): Clarabel's mu of an inactive (4) is 5e-11, not 0
    bound = min(welfare_dual_bound(model, mu), welfare_dual_bound(model, 0.0))
    return _judged(model, model.objective(solution), bound, extra, solver)
