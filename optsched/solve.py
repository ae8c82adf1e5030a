"""``solve`` and ``compare``: the two entry points users call on a model."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from optsched.models.base import Model
from optsched.models.validate import finite_float
from optsched.result import Result, Status
from optsched.solvers.registry import Backend, fitting_backends, get_backend

if TYPE_CHECKING:
    import pandas as pd

OBJECTIVE_RTOL = 1e-6


def _pick(model: Model, backend: str | None) -> Backend:
    if backend is None:
        fits = fitting_backends(model)
        if not fits:
            raise ValueError(f"backend: no available backend solves {model.name!r} models")
        return fits[0]
    chosen = get_backend(backend)
    reason = chosen.fits(model)
    if reason is not None:
        raise ValueError(f"backend: {reason}")
    avail = chosen.available()
    if not avail:
        raise ValueError(f"backend: {chosen.NAME!r} is not available here: {avail.reason}")
    return chosen


def _verify(model: Model, result: Result) -> Result:
    """Never hand out a silently wrong answer: re-check the solution with the model's own math."""
    if result.solution is None:
        return result
    problems = model.violations(result.solution, tol=1e-6)
    if problems:
        return result.replace(
            status=Status.ERROR,
            extra={**result.extra, "message": f"returned solution is infeasible: {problems[0]}"},
        )
    recomputed = model.objective(result.solution)
    if result.objective is None:
        return result.replace(objective=recomputed)
    if abs(recomputed - result.objective) > OBJECTIVE_RTOL * max(1.0, abs(recomputed)):
        return result.replace(
            status=Status.ERROR,
            extra={
                **result.extra,
                "message": f"reported objective {result.objective} but the solution's is {recomputed}",
            },
        )
    return result


def _check_option_type(backend: str, key: str, value: Any, default: Any) -> None:
    """An option must have the type of its default (when the default is a bool, int, float or
    str); ranges are the backend's to check. ``None`` defaults accept anything."""
    import numbers

    where = f"options: backend {backend!r} option {key!r}"
    if isinstance(default, bool):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{where} expects true or false, got {value!r}")
    elif isinstance(default, numbers.Integral):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise ValueError(f"{where} expects an integer, got {value!r}")
    elif isinstance(default, numbers.Real):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or value != value:
            raise ValueError(f"{where} expects a number, got {value!r}")
    elif isinstance(default, str):
        if not isinstance(value, str):
            raise ValueError(f"{where} expects a string, got {value!r}")


def solve(
    model: Model,
    backend: str | None = None,
    *,
    time_limit: float | None = None,
    verify: bool = True,
    **options: Any,
) -> Result:
    """Solve ``model`` with ``backend`` (default: the first available exact backend that fits).

    Options are the backend's own (see ``optsched backends``); an unknown one is a
    ``ValueError``. With ``verify`` the returned solution is checked against the model's
    own feasibility test and objective; a mismatch turns the status into ``error``.
    ``runtime_s`` is wall time around the whole backend call (apply, solve, invert).
    Backends without ``SUPPORTS_TIME_LIMIT`` do bounded work and ignore ``time_limit``; their
    result's ``extra["time_limit"]`` says so.
    """
    if not isinstance(model, Model):
        raise ValueError(f"model: expected an optsched model, got {type(model).__name__}")
    if time_limit is not None:
        time_limit = finite_float("time_limit", time_limit, minimum=0.0)
    chosen = _pick(model, backend)
    unknown = sorted(set(options) - set(chosen.OPTIONS))
    if unknown:
        raise ValueError(f"options: backend {chosen.NAME!r} has no option {unknown[0]!r}")
    for key, value in options.items():
        _check_option_type(chosen.NAME, key, value, chosen.OPTIONS[key])
    merged = {**chosen.OPTIONS, **options}
    start = time.perf_counter()
    try:
        result = chosen.run(model, time_limit=time_limit, options=merged)
    except (ValueError, KeyboardInterrupt):
        raise
    except Exception as exc:  # a solver library failing is a status, not a crash
        result = Result(
            status=Status.ERROR,
            model=model.name,
            backend=chosen.NAME,
            extra={"message": f"{type(exc).__name__}: {exc}"},
        )
    result = result.replace(runtime_s=time.perf_counter() - start)
    if time_limit is not None and not chosen.SUPPORTS_TIME_LIMIT:
        result = result.replace(extra={**result.extra, "time_limit": "ignored: one pass of bounded work"})
    return _verify(model, result) if verify else result


def best_bound(model: Model, results: Iterable[Result]) -> float | None:
    """Tightest proven bound: the least upper bound (max) or greatest lower bound (min).

    A proven-optimal objective is a bound too. A bound that a verified solution beats was off by
    the solver's tolerance (e.g. Clarabel's optimum 3e-10 below the KKT solver's), so the bound
    is never tighter than the best objective found."""
    bounds, found = [], []
    for r in results:
        if r.status is Status.OPTIMAL and r.objective is not None:
            bounds.append(r.objective)
        if r.bound is not None and r.status is not Status.ERROR:
            bounds.append(r.bound)
        if r.status in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT) and r.objective is not None:
            found.append(r.objective)
    if not bounds:
        return None
    if model.maximize:
        return max([min(bounds), *found])
    return min([max(bounds), *found])


def relative_gap(best: float, objective: float) -> float:
    """|best - objective| / |best| (denominator at least 1e-10): the gap of an objective to the
    best proven bound, as ``compare`` and ``optsched bench`` report it."""
    return abs(best - objective) / max(abs(best), 1e-10)


def compare(
    model: Model,
    backends: Iterable[str] | None = None,
    *,
    time_limit: float | None = None,
) -> "pd.DataFrame":
    """Solve ``model`` with each backend; one row per backend with status, objective, bound,
    gap to the best proven bound over all rows, and runtime."""
    import pandas as pd

    names = list(backends) if backends is not None else [b.NAME for b in fitting_backends(model)]
    results = [solve(model, name, time_limit=time_limit) for name in names]
    best = best_bound(model, results)
    rows = []
    for r in results:
        gap = None if r.objective is None or best is None else relative_gap(best, r.objective)
        rows.append(
            {
                "backend": r.backend,
                "status": r.status.value,
                "objective": r.objective,
                "bound": r.bound,
                "gap_to_best_bound": gap,
                "runtime_s": r.runtime_s,
            }
        )
    return pd.DataFrame(rows)
