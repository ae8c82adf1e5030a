"""Solver-neutral algebraic forms a model can lower itself to (cvxpy's "apply" step).

Each form is a :class:`typing.Protocol` (:data:`FORM_PROTOCOLS`): a model class provides the
form when it defines every method of the protocol, so a kind's ``FORMS`` are derived when it is
registered (:func:`forms_of`), never listed by hand, and a backend reaches the form through a
typed accessor (:func:`as_standard`, :func:`as_pyomo`, :func:`as_cvxpy`, :func:`as_binary`). A backend that
accepts a form can solve every model that provides it; what a solver cannot take (continuous
variables, a quadratic objective) is read off the instance's own form (:meth:`StandardForm.traits`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, cast

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp


@dataclass(frozen=True, slots=True)
class StandardForm:
    """optimise  c.x + 0.5 x'Hx + offset   s.t.  row_lower <= A x <= row_upper,
    col_lower <= x <= col_upper,  x_j integer where ``integrality[j]``.

    ``maximize`` picks the direction. ``hessian`` (H, symmetric, CSC) is None for linear
    programs; with it the program is a convex QP (only for minimisation).
    """

    maximize: bool
    c: np.ndarray
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray
    offset: float = 0.0
    hessian: sp.csc_matrix | None = None

    @property
    def n_vars(self) -> int:
        return int(self.c.shape[0])

    @property
    def n_rows(self) -> int:
        return int(self.A.shape[0])

    @property
    def is_mip(self) -> bool:
        return bool(self.integrality.any())

    def traits(self) -> "Traits":
        """What a solver must accept to take this program."""
        return Traits(continuous=not bool(self.integrality.all()), quadratic=self.hessian is not None)

    @property
    def is_integral_data(self) -> bool:
        """Every constraint coefficient and finite bound is a whole number (CP-SAT needs it)."""
        def whole(a: np.ndarray) -> bool:
            a = a[np.isfinite(a)]
            return bool(np.all(a == np.round(a)))

        return (
            whole(self.A.data)
            and whole(self.row_lower)
            and whole(self.row_upper)
            and whole(self.col_lower)
            and whole(self.col_upper)
        )


def all_binary_rows(n: int, start: int, stop: int) -> np.ndarray:
    """Rows ``start..stop-1`` of the 2^n x n table of 0-1 vectors (bit j of the row number): the
    enumeration of the ``binary`` form."""
    codes = np.arange(start, stop, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(bool)


@dataclass(frozen=True, slots=True)
class Traits:
    """What an instance's form asks of a solver (matched against a backend's capability flags)."""

    continuous: bool  # some variable is continuous
    quadratic: bool  # the objective has a quadratic term


class StandardFormModel(Protocol):
    """``"standard"``: a linear or convex quadratic program (HiGHS, CP-SAT, SCIP, export)."""

    def standard_form(self) -> StandardForm: ...

    def solution_from_vector(self, x: np.ndarray) -> Any: ...


class PyomoModel(Protocol):
    """``"pyomo"``: a Pyomo ``ConcreteModel``, the reference statement of the math."""

    def pyomo_model(self) -> Any: ...

    def solution_from_pyomo(self, m: Any) -> Any: ...


class CvxpyModel(Protocol):
    """``"cvxpy"``: ``(problem, to_solution)`` in DCP form, and the solver (with its settings)
    that solves it as an oracle."""

    def cvxpy_problem(self) -> tuple[Any, Callable[[], Any]]: ...

    def cvxpy_default_solver(self) -> tuple[str, dict[str, Any]]: ...


class BinaryModel(Protocol):
    """``"binary"``: ``n_binary`` 0-1 variables and ``evaluate_binary(X)`` -> (feasible, values)
    over rows of 0-1 vectors (brute force)."""

    @property
    def n_binary(self) -> int: ...

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def solution_from_vector(self, x: np.ndarray) -> Any: ...


FORM_PROTOCOLS: dict[str, type] = {
    "standard": StandardFormModel, "pyomo": PyomoModel, "cvxpy": CvxpyModel, "binary": BinaryModel,
}


def _members(protocol: type) -> list[str]:
    return [name for name in vars(protocol) if not name.startswith("_")]


def forms_of(cls: type) -> frozenset[str]:
    """The forms a model class provides: every protocol all of whose members the class defines.
    A class that defines some members of a protocol but not all is a mistake: ValueError."""
    counts: dict[str, int] = {}
    for protocol in FORM_PROTOCOLS.values():
        for m in _members(protocol):
            counts[m] = counts.get(m, 0) + 1
    out = set()
    for name, protocol in FORM_PROTOCOLS.items():
        have = {m for m in _members(protocol) if getattr(cls, m, None) is not None}
        if len(have) == len(_members(protocol)):
            out.add(name)
        elif any(counts[m] == 1 for m in have):  # a member only this form has: the form was meant
            missing = sorted(set(_members(protocol)) - have)
            raise ValueError(f"model {cls.__name__}: the {name!r} form needs {', '.join(missing)} as well")
    return frozenset(out)


def _form(model: Any, name: str) -> Any:
    if name not in type(model).FORMS:
        raise TypeError(f"model {model.name!r} has no {name!r} form")
    return model


def as_standard(model: Any) -> StandardFormModel:
    return cast(StandardFormModel, _form(model, "standard"))


def as_pyomo(model: Any) -> PyomoModel:
    return cast(PyomoModel, _form(model, "pyomo"))


def as_cvxpy(model: Any) -> CvxpyModel:
    return cast(CvxpyModel, _form(model, "cvxpy"))


def as_binary(model: Any) -> BinaryModel:
    return cast(BinaryModel, _form(model, "binary"))
