"""The certified offline optimum of P1 (paper 002, Section II-C): the ``onsocmax_offline`` model
(:mod:`optsched.models.onsocmax_offline`) solved by the ``cvxpy`` backend, repaired into P1, and
bounded by weak duality at the solver's multipliers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.models.mesh import MeshInstance
from optsched.models.onsocmax_offline import CLARABEL_TOLERANCES, OfflineWelfare, dual_bound, repair
from optsched.result import SolveFailed

# Tight settings per cvxpy solver name, for :func:`certified_optimum`'s ``solver``.
SOLVER_OPTIONS: dict[str, dict[str, Any]] = {
    "CLARABEL": CLARABEL_TOLERANCES,
    "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000},
}


@dataclass(frozen=True)
class Certificate:
    """The offline optimum with its proof: ``primal`` is the welfare of a feasible x (checked
    by ``optsched.solve``), ``bound`` a weak-duality upper bound; OPT lies between them."""

    primal: float
    bound: float
    x: np.ndarray
    runtime_s: float

    @property
    def gap(self) -> float:
        return (self.bound - self.primal) / max(abs(self.primal), 1e-12)


def certified_optimum(instance: MeshInstance, *, solver: str | None = None) -> Certificate:
    """Solve P1 through the ``cvxpy`` backend (Clarabel, or the cvxpy ``solver`` named, tight
    settings from ``SOLVER_OPTIONS``), :func:`repair` the answer into P1 (so ``primal`` is the
    welfare of a truly feasible point), and bound OPT from above with :func:`dual_bound` at the
    solver's multipliers of (4) and (6) (``Result.duals``, in the order of the constraints).
    :class:`optsched.result.SolveFailed` if the solve fails (P1 is feasible: x = 0)."""
    import time

    from optsched.solve import solve

    model = OfflineWelfare(instance)
    start = time.perf_counter()
    options: dict[str, Any] = {} if solver is None else {"solver": solver,
                                                          "solver_options": dict(SOLVER_OPTIONS.get(solver, {}))}
    # the repair below makes the point feasible, so the seam's 1e-6 check is not wanted here
    res = solve(model, "cvxpy", verify=False, **options)
    if not res.ok or res.duals is None:
        raise SolveFailed(f"P1 (the offline optimum) ended {res.termination.value}: {res.message}")
    x = repair(instance, res.solution)
    problems = model.violations(x, tol=1e-9)
    if problems:
        raise SolveFailed(f"P1 (the offline optimum): its repaired solution is infeasible: {problems[0]}")
    multipliers = model.multipliers(res.duals)
    if multipliers is None:
        raise SolveFailed("P1 (the offline optimum): the solver returned no usable multipliers of (4) and (6)")
    bound = dual_bound(instance, *multipliers)
    return Certificate(model.objective(x), bound, x, time.perf_counter() - start)
