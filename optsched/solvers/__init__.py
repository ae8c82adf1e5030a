"""Backends. Importing this package registers every backend (solver packages stay unimported
until a backend is used)."""

from optsched.solvers import (  # noqa: F401
    brute_force,
    budget_dp,
    budget_exact,
    cpsat,
    cvxpy_backend,
    enumerate_packings,
    escb_aescb,
    escb_oa,
    greedy_set_packing,
    highs,
    projection_fast,
    projection_paper,
    pseudo_welfare_alm,
    pseudo_welfare_kkt,
    pyomo_reference,
    scip,
    stationary_alm,
)
from optsched.solvers.registry import (
    Availability,
    Backend,
    all_backends,
    fitting_backends,
    get_backend,
    register_backend,
)

__all__ = ["Availability", "Backend", "all_backends", "fitting_backends", "get_backend", "register_backend"]
