"""One result type for every backend, and the status vocabulary it uses."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from typing import Any, Mapping


class Status(str, enum.Enum):
    """How a solve ended.

    ``OPTIMAL``    the solution is proven optimal (within the backend's tolerance).
    ``FEASIBLE``   a feasible solution without a proof of optimality (heuristics, gaps).
    ``INFEASIBLE`` the model has no feasible solution (proven).
    ``TIME_LIMIT`` the time limit stopped the solve; ``solution`` is the best found, if any.
    ``ERROR``      the backend failed; ``extra["message"]`` says why.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time_limit"
    ERROR = "error"

    @property
    def has_solution_possible(self) -> bool:
        return self in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT)


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """|bound - objective| / max(|objective|, 1e-10), the usual MIP gap; None if either is missing."""
    if objective is None or bound is None:
        return None
    return abs(bound - objective) / max(abs(objective), 1e-10)


@dataclass(frozen=True, slots=True)
class Result:
    """What ``optsched.solve`` returns.

    ``bound`` is a proven bound on the optimum (an upper bound for maximisation, a lower
    bound for minimisation) when the backend has one; ``gap`` is derived from it.
    ``solution`` is in the model's own solution type (see the model's docstring).
    """

    status: Status
    model: str
    backend: str
    objective: float | None = None
    bound: float | None = None
    solution: Any = None
    runtime_s: float = 0.0
    iterations: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def replace(self, **changes: Any) -> "Result":
        """A copy with ``changes`` (faster than ``dataclasses.replace`` in hot loops)."""
        values = {name: getattr(self, name) for name in _FIELDS}
        values.update(changes)
        return Result(**values)

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)

    @property
    def ok(self) -> bool:
        """True when there is a solution that is optimal or at least feasible."""
        return self.status in (Status.OPTIMAL, Status.FEASIBLE) or (
            self.status is Status.TIME_LIMIT and self.solution is not None
        )


_FIELDS = tuple(f.name for f in fields(Result))
