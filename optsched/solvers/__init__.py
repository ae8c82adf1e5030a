"""Backends. Importing this package registers every backend (solver packages stay unimported
until a backend is used)."""

from optsched.solvers import (  # noqa: F401
    brute_force,
    cpsat,
    cvxpy_backend,
    greedy_set_packing,
    highs,
    pyomo_reference,
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
