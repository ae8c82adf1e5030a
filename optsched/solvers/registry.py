"""Backend protocol and the decorator registry (after Pyomo ``contrib.solver``).

A backend is apply -> solve -> invert (after cvxpy): it lowers a model to what its solver
takes, runs the solver and maps the answer back to a :class:`~optsched.result.Result`.
Which models a backend fits is derived from capability flags: the model kinds it handles
directly (``MODELS``, for custom algorithms) or the algebraic form it accepts (``FORM``).
Solver packages are imported inside ``available()`` / ``run()`` only, so ``import optsched``
stays light.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from optsched.models.base import Model
from optsched.result import Result

_BACKENDS: dict[str, "Backend"] = {}


@dataclass(frozen=True, slots=True)
class Availability:
    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


def modules_available(*modules: str) -> Availability:
    """Available when every named module can be imported (checked without importing it)."""
    for mod in modules:
        if importlib.util.find_spec(mod) is None:
            return Availability(False, f"python package {mod!r} is not installed")
    return Availability(True)


class Backend:
    """Subclass, set the class variables, implement ``run``, and decorate with
    :func:`register_backend`.

    ``OPTIONS`` maps every accepted option to its default; anything else is rejected.
    ``PRIORITY`` orders the default choice (lower first) among exact backends.
    """

    NAME: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    EXACT: ClassVar[bool]
    MODELS: ClassVar[frozenset[str]] = frozenset()
    FORM: ClassVar[str | None] = None
    SUPPORTS_TIME_LIMIT: ClassVar[bool] = False
    OPTIONS: ClassVar[Mapping[str, Any]] = {}
    PRIORITY: ClassVar[int] = 50
    REQUIRES: ClassVar[tuple[str, ...]] = ()
    # What a FORM-based backend's solver accepts, against the model kind's traits (after
    # cvxpy's MIP_CAPABLE): continuous variables, a quadratic objective.
    CONTINUOUS_CAPABLE: ClassVar[bool] = True
    QP_CAPABLE: ClassVar[bool] = True

    def available(self) -> Availability:
        return modules_available(*self.REQUIRES)

    def fits_kind(self, kind: type[Model]) -> str | None:
        """None when this backend can solve models of this kind (instances permitting)."""
        if kind.name in self.MODELS:
            return None
        if self.FORM is None or self.FORM not in kind.FORMS:
            return f"backend {self.NAME!r} does not solve {kind.name!r} models"
        if kind.CONTINUOUS and not self.CONTINUOUS_CAPABLE:
            return f"backend {self.NAME!r} does not solve {kind.name!r} models (continuous variables)"
        if kind.QUADRATIC and not self.QP_CAPABLE:
            return f"backend {self.NAME!r} does not solve {kind.name!r} models (quadratic objective)"
        return None

    def fits(self, model: Model) -> str | None:
        """None when this backend can solve ``model``; otherwise the reason it cannot."""
        return self.fits_kind(type(model)) or self.fits_instance(model)

    def fits_instance(self, model: Model) -> str | None:
        """Instance-level limits (size, integral data, ...); override when there are any."""
        return None

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any]) -> Result:
        raise NotImplementedError


def register_backend(cls: type[Backend]) -> type[Backend]:
    if cls.NAME in _BACKENDS:
        raise RuntimeError(f"backend {cls.NAME!r} registered twice")
    _BACKENDS[cls.NAME] = cls()
    return cls


def get_backend(name: str) -> Backend:
    if name not in _BACKENDS:
        raise ValueError(f"backend: unknown backend {name!r} (known: {', '.join(sorted(_BACKENDS))})")
    return _BACKENDS[name]


def all_backends() -> dict[str, Backend]:
    return dict(_BACKENDS)


def fitting_backends(model: Model, *, available_only: bool = True) -> list[Backend]:
    """Backends that fit ``model``: exact ones first by priority, then the heuristics."""
    out = [
        b
        for b in _BACKENDS.values()
        if b.fits(model) is None and (not available_only or b.available())
    ]
    return sorted(out, key=lambda b: (not b.EXACT, b.PRIORITY, b.NAME))
