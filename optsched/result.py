"""One result type for every backend, the termination vocabulary it uses, and the one gap formula.

As in Pyomo's ``contrib.solver`` and OR-Tools MathOpt, *why* a solve ended (``termination``)
is kept apart from *what* it returned (``solution``: a point the model's own math accepted,
or None). ``bound`` is the proven bound on the optimum the backend reports; ``best_bound``
the best one over every backend that solved the same instance (filled by ``compare``,
``optsched bench`` and the shadow solves), so the two gaps below have one formula and two names.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

# Objective and bound "agree" within this relative tolerance (absolute below 1, or below the
# model's own smaller scale: ``agree``'s floor);
# ``optimal`` is only said when they do. Also the tolerance of the objective re-check.
OBJECTIVE_RTOL = 1e-6
# ``extra``'s key for a bound that optsched computed itself by weak duality from the solver's
# multipliers (solvers/certificates.py): valid whatever gap the solver stopped at, so options
# that loosen only the solver's gap leave it standing (solve.finish)
BOUND_PROOF = "bound_proof"


class Termination(enum.StrEnum):
    """Why a solve ended (a string: ``str()`` and f-strings give the value, ``"optimal"``).

    ``OPTIMAL``          proven optimal: a verified solution whose objective agrees with a
                         proven bound (or the backend's own optimality proof, when it has no
                         bound to report: KKT, conic solvers) within ``OBJECTIVE_RTOL``.
    ``FEASIBLE``         the algorithm ran to its end without proving optimality (heuristics,
                         approximation algorithms, inexact solvers); the solution is feasible.
    ``INFEASIBLE``       the model has no feasible solution (proven).
    ``UNBOUNDED``        the objective is unbounded (no optsched model is, but solvers can say it).
    ``TIME_LIMIT``       the time limit stopped the solve; ``solution`` is the best found, if any.
    ``ITERATION_LIMIT``  an iteration or node limit stopped it; ``solution`` as above.
    ``GAP_LIMIT``        the solver stopped at a gap option (or claimed optimality) with objective
                         and bound further apart than ``OBJECTIVE_RTOL``; both are reported.
    ``ERROR``            the backend failed or returned something the model rejects;
                         ``extra["message"]`` says why; no solution, objective or bound.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    TIME_LIMIT = "time_limit"
    ITERATION_LIMIT = "iteration_limit"
    GAP_LIMIT = "gap_limit"
    ERROR = "error"

    @property
    def stopped_early(self) -> bool:
        """A limit ended the solve before the algorithm finished."""
        return self in _STOPPED_EARLY


_STOPPED_EARLY = frozenset({Termination.TIME_LIMIT, Termination.ITERATION_LIMIT, Termination.GAP_LIMIT})


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """|bound - objective| / max(|bound|, |objective|, 1); None if either is missing.

    The one gap formula of optsched: the gap to the backend's own bound and the gap to the best
    bound over all backends of an instance are both this function (with that bound). Relative
    for values above 1, absolute below (a projection whose optimum is 0 has no relative scale;
    the same convention as ``OBJECTIVE_RTOL``)."""
    if objective is None or bound is None:
        return None
    return abs(bound - objective) / max(abs(bound), abs(objective), 1.0)


def agree(objective: float, bound: float, floor: float = 1.0) -> bool:
    """Objective and bound are equal within ``OBJECTIVE_RTOL`` (relative, absolute below
    ``floor``: 1, or the model's own smaller scale, ``Model.objective_magnitude``)."""
    return abs(bound - objective) <= OBJECTIVE_RTOL * max(floor, abs(objective))


def agrees_at_scale(model: Any, objective: float, other: float) -> bool:
    """:func:`agree` with absolute agreement below 1, or below the model's own scale when it is
    smaller (``Model.objective_magnitude``, asked only when the relative test alone fails for
    an objective below 1: a policy's usual solve does not pay for it)."""
    if agree(objective, other, 0.0):
        return True
    if abs(objective) >= 1.0:
        return False
    return agree(objective, other, agreement_floor(model))


def agreement_floor(model: Any) -> float:
    """Where agreement turns from relative to absolute for ``model``: 1, or the model's own
    smaller scale (``Model.objective_magnitude``) when that is positive."""
    magnitude = model.objective_magnitude()
    return min(1.0, magnitude) if magnitude > 0 else 1.0


class SolveFailed(RuntimeError):
    """A solve that a computation depends on ended without what it needs: a policy's subproblem
    with no solution from its backend nor its fallback (:class:`optsched.observe.SubproblemError`),
    an offline optimum no backend certified. The CLI prints it as one line and exits 1; it was a
    bare RuntimeError with a traceback (``contention = 1e10`` left y* uncertified)."""


class WorkerLost(RuntimeError):
    """A sweep's worker process died before returning its batch (killed by the system, e.g. out
    of memory, or a crash in native code). The CLI prints it as one line naming the runs under
    way and exits 1; the rows stored before are kept, so the same command resumes. It was a
    ``BrokenProcessPool`` traceback."""


@dataclass(frozen=True, slots=True, init=False, eq=False)
class Result:
    """What a backend returns through the seam (``optsched.solve``, ``Prepared.solve``).

    Results compare and hash by identity (as a solver's result objects do): field-wise
    equality would compare solution arrays, which numpy cannot answer with one truth value.

    ``objective``/``bound`` are in the model's own sense (``bound`` an upper bound when
    maximising, a lower bound when minimising). ``solution`` is in the model's own solution
    type (see its docstring) and is None unless the model's math accepted it. ``duals`` are the
    solver's multipliers, one array per constraint block of the form, where the solver has them
    (HiGHS LP/QP, cvxpy). ``model`` and ``backend`` are filled by the seam.
    """

    termination: Termination
    objective: float | None = None
    bound: float | None = None
    solution: Any = None
    runtime_s: float = 0.0
    iterations: int | None = None
    duals: tuple[Any, ...] | None = None
    best_bound: float | None = None
    model: str = ""
    backend: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    # Written out rather than generated: a frozen dataclass's generated __init__ sets each field
    # through object.__setattr__ (1.2-1.35 us a result); the slots' own setters take 0.8-0.9 us,
    # and a backend called once per slot of a policy's loop makes one result per call.
    def __init__(self, termination: Termination, objective: float | None = None, bound: float | None = None,
                 solution: Any = None, runtime_s: float = 0.0, iterations: int | None = None,
                 duals: tuple[Any, ...] | None = None, best_bound: float | None = None, model: str = "",
                 backend: str = "", extra: Mapping[str, Any] | None = None) -> None:
        _fill(self, termination, objective, bound, solution, runtime_s, iterations, duals, best_bound, model,
              backend, {} if extra is None else extra)

    def replace(self, **changes: Any) -> "Result":
        """A copy with ``changes`` (faster than ``dataclasses.replace`` in hot loops: the
        fields are copied into a new instance without another pass through ``__init__``)."""
        if not changes.keys() <= _FIELD_SET:
            raise TypeError(f"Result has no field {sorted(changes.keys() - _FIELD_SET)[0]!r}")
        new = object.__new__(Result)
        for name, set_field, get_field in _SLOTS:
            set_field(new, changes[name] if name in changes else get_field(self))
        return new

    @property
    def gap_to_own_bound(self) -> float | None:
        """:func:`relative_gap` of the objective to this backend's own proven bound."""
        return relative_gap(self.objective, self.bound)

    @property
    def gap_to_best_bound(self) -> float | None:
        """:func:`relative_gap` of the objective to the best bound over every backend that
        solved this instance (set by ``compare``, ``bench`` and shadow solves; else None)."""
        return relative_gap(self.objective, self.best_bound)

    @property
    def has_solution(self) -> bool:
        return self.solution is not None

    @property
    def ok(self) -> bool:
        """A verified feasible solution is attached (whatever ended the solve)."""
        return self.solution is not None and self.termination is not Termination.ERROR

    @property
    def message(self) -> str:
        return str(self.extra.get("message", ""))


_FIELDS = tuple(f.name for f in fields(Result))
_FIELD_SET = frozenset(_FIELDS)
_SLOTS = tuple((name, getattr(Result, name).__set__, getattr(Result, name).__get__) for name in _FIELDS)
(_set_termination, _set_objective, _set_bound, _set_solution, _set_runtime_s, _set_iterations, _set_duals,
 _set_best_bound, _set_model, _set_backend, _set_extra) = (set_field for _, set_field, _ in _SLOTS)


def _fill(r: Result, termination: Termination, objective: float | None, bound: float | None, solution: Any,
          runtime_s: float, iterations: int | None, duals: tuple[Any, ...] | None, best_bound: float | None,
          model: str, backend: str, extra: Mapping[str, Any]) -> None:
    """Set every field of ``r`` through its slot's own setter (a frozen instance is filled
    before anyone holds it)."""
    _set_termination(r, termination)
    _set_objective(r, objective)
    _set_bound(r, bound)
    _set_solution(r, solution)
    _set_runtime_s(r, runtime_s)
    _set_iterations(r, iterations)
    _set_duals(r, duals)
    _set_best_bound(r, best_bound)
    _set_model(r, model)
    _set_backend(r, backend)
    _set_extra(r, extra)


def sealed(termination: Termination, objective: float | None, bound: float | None, solution: Any,
           runtime_s: float, iterations: int | None, duals: tuple[Any, ...] | None, best_bound: float | None,
           model: str, backend: str, extra: Mapping[str, Any]) -> Result:
    """A result with every field given, in declaration order (the seam's one copy of what a
    backend returned: no defaults or keyword matching to pay for)."""
    new = object.__new__(Result)
    _fill(new, termination, objective, bound, solution, runtime_s, iterations, duals, best_bound, model,
          backend, extra)
    return new
