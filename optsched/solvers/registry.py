"""Backend protocol, option schemas and the decorator registry (after Pyomo ``contrib.solver``).

A backend is apply -> solve -> invert (after cvxpy): ``run`` lowers a model to what its solver
takes (or reuses the lowering its per-:class:`~optsched.solve.Prepared` ``state`` keeps), runs
the solver and maps the answer back to a :class:`~optsched.result.Result`. Which models a
backend fits is derived from capability flags: the model kinds it handles directly
(``MODELS``, for custom algorithms) or the algebraic form it accepts (``FORM``). Options are
declared with an :class:`Option` schema each (type, range, choices, and for pass-through
solver options an allow-list), checked before anything is solved. Solver packages are
imported inside ``available()`` / ``new_state()`` / ``run()`` only, so ``import optsched``
stays light.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import numbers
import os
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, Protocol

import numpy as np

from optsched.models.base import Model, kind_specs, model_kinds
from optsched.models.forms import Traits, as_standard
from optsched.models.validate import LARGEST_INTEGER
from optsched.result import Result

_BACKENDS: dict[str, "Backend"] = {}


class PreparedSolver(Protocol):
    def solve(self, model: Model, *, time_limit: float | None = None) -> Result: ...


class PrepareFn(Protocol):
    """The seam's ``prepare(kind, backend, *, verify)``, handed to :meth:`Backend.new_state`."""

    def __call__(self, kind_or_model: Any, backend: str | None = None, *, verify: bool = True) -> PreparedSolver: ...

# Work a backend may take before it starts is refused above this (bytes): the memory it would
# allocate, estimated from the instance (``Backend.memory_bytes``). Override with the environment
# variable OPTSCHED_MEMORY_LIMIT_GB.
DEFAULT_MEMORY_LIMIT_GB = 8.0


MEMORY_LIMIT_VARIABLE = "OPTSCHED_MEMORY_LIMIT_GB"
# os.environ.get of an unset variable raises and catches a KeyError inside (2.6 us: a tenth of
# greedy's whole verified call, which asks on every solve); its own store answers "unset" with a
# dictionary lookup. os.environ keeps that store in step with every write through it (an
# os.environ replaced by another mapping, as a test may, is asked directly).
_ENVIRONMENT = os.environ
_ENVIRONMENT_STORE = getattr(os.environ, "_data", None)
_LIMIT_KEY = os.environ.encodekey(MEMORY_LIMIT_VARIABLE) if _ENVIRONMENT_STORE is not None else None


def memory_limit_bytes() -> float:
    if _ENVIRONMENT_STORE is not None and os.environ is _ENVIRONMENT and _LIMIT_KEY not in _ENVIRONMENT_STORE:
        return _memory_limit_bytes("")
    return _memory_limit_bytes(os.environ.get(MEMORY_LIMIT_VARIABLE, ""))


@functools.lru_cache(maxsize=16)
def _memory_limit_bytes(raw: str) -> float:
    """The limit the variable's text sets (parsed once per text: every solve asks)."""
    from optsched.io.numbers import typed_float

    try:
        gb = typed_float(raw) if raw else DEFAULT_MEMORY_LIMIT_GB  # float() took "٣" and "1_0"
    except ValueError:
        raise ValueError(f"OPTSCHED_MEMORY_LIMIT_GB: expected a number of GB, got {raw!r}") from None
    if not gb > 0:
        raise ValueError(f"OPTSCHED_MEMORY_LIMIT_GB: must be > 0, got {raw!r}")
    return gb * 2**30


# Below this, a continuous program's objective moves less over its whole box than the absolute
# tolerances of HiGHS (1e-7) and Clarabel: the cvxpy and Pyomo routes solve it as stated, and
# their "optimal" is not a proof there (projections of data of 1e-12 came back at twice the
# optimum through Pyomo and HiGHS). The highs backend scales such programs first.
ABSOLUTE_TOLERANCE_SCALE = 1e-6


def below_tolerance_scale(model: Model) -> str | None:
    """Why a continuous program is too small for absolutely toleranced solvers to certify, or
    None (a MIP's objective and rows are scaled on every route)."""
    from optsched.models.base import objective_reach

    reach = objective_reach(model)
    if reach is None:
        return None
    form = as_standard(model).to_standard_form()
    if form.is_mip:
        return None
    # reach 0: the objective is constant on the box, and any feasible point is optimal
    if 0 < reach < ABSOLUTE_TOLERANCE_SCALE:
        return (f"not certified: this program's objective moves by at most {reach:.3g} over its box, below the "
                f"solver's absolute tolerances ({ABSOLUTE_TOLERANCE_SCALE:g}); the highs and scip backends scale it first")
    # a free column leaves the reach infinite, but costs this small still sit below the solver's
    # reduced-cost tolerance (cvxpy called -5e-13 optimal where the optimum is -1e-12)
    costs = [np.abs(form.c[form.c != 0])] + ([] if form.hessian is None else [np.abs(form.hessian.data)])
    largest = float(np.concatenate(costs).max(initial=0.0))
    if 0 < largest < ABSOLUTE_TOLERANCE_SCALE:
        return (f"not certified: this program's costs are at most {largest:.3g}, below the solver's absolute "
                f"tolerances ({ABSOLUTE_TOLERANCE_SCALE:g}); the highs and scip backends scale them first")
    return None


def form_elements(model: Model, backend: "Backend") -> float:
    """Variables + constraint nonzeros of the model's standard form when the backend solves that
    form (a size proxy for its set-up and memory; the form is built for the solve anyway), else
    twice ``model.size`` (never a form built only to be measured)."""
    if backend.FORM == "standard" and "standard" in type(model).FORMS:
        form = as_standard(model).to_standard_form()
        return float(form.n_vars + form.A.nnz + (0 if form.hessian is None else form.hessian.nnz))
    return 2.0 * model.size


@functools.lru_cache(maxsize=None)
def reference_traits(kind: type[Model]) -> tuple[Traits, ...]:
    """The standard-form traits of the kind's reference instances: its generator at the kind's
    tiny size, seeds 0..4 (``KindSpec``); empty for a kind without both."""
    spec = kind_specs().get(kind.name)
    if spec is None or "standard" not in kind.FORMS:
        return ()
    return tuple(as_standard(spec.generate(spec.tiny, np.random.default_rng(seed))).to_standard_form().traits()
                 for seed in range(5))


# A limit longer than this (31 years) cannot bite, and solvers cap their own limit parameters
# (SCIP refuses limits/time above 1e20 s): such a limit is passed on to them as none.
LONGEST_LIMIT_S = 1e9


def remaining(time_limit: float | None, start: float) -> float | None:
    """What is left of ``time_limit`` (seconds) since ``start`` (a ``time.perf_counter`` value);
    None for no limit, and for a limit above ``LONGEST_LIMIT_S``."""
    if time_limit is None or time_limit > LONGEST_LIMIT_S:
        return None
    return max(0.0, time_limit - (time.perf_counter() - start))


@dataclass(frozen=True, slots=True)
class Availability:
    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


# the optsched extra that installs each solver package (pyproject.toml)
EXTRA_OF = {"highspy": "highs", "ortools": "cpsat", "cvxpy": "cvxpy", "pyomo": "pyomo", "pyscipopt": "scip"}


def modules_available(*modules: str) -> Availability:
    """Available when every named module can be imported (checked without importing it)."""
    for mod in modules:
        if importlib.util.find_spec(mod) is None:
            hint = f"pip install 'optsched[{EXTRA_OF[mod]}]'" if mod in EXTRA_OF else f"pip install {mod}"
            return Availability(False, f"python package {mod!r} is not installed ({hint})")
    return Availability(True)


@dataclass(frozen=True)
class Option:
    """One backend option: its default, its type and the values it accepts.

    ``kind`` is ``bool``, ``int``, ``float``, ``str`` or ``dict`` (a table of pass-through
    solver options whose keys must be in ``allowed``: nothing that writes files is ever
    allowed; its values are booleans, strings or finite numbers). ``minimum``/``maximum``
    bound numbers (``open_minimum``, ``open_maximum``: strictly inside; integers are at most 2^53
    in magnitude whatever the bounds; ``bools``: an integer option that takes true/false as
    well, as OSQP's switches do), ``choices`` lists the accepted strings, ``nullable`` admits None
    (the default may be None). ``loosens(value)`` says whether a value changes what the
    solver's "optimal" proves (a looser tolerance, another solver, a gap a backend without a
    bound cannot report): the seam then says ``feasible`` where the solver says optimal.
    ``loosens_feasibility(value)``: whether it also changes what "infeasible" or "unbounded"
    proves (the seam then says ``error``); by default as ``loosens``, but a gap or the
    objective's precision leaves those proofs alone.
    ``per_solve=False``: the value shapes the state ``Backend.new_state`` makes (an inner backend
    prepared once), so a per-solve override of it is refused instead of being ignored.
    """

    default: Any
    kind: type
    doc: str = ""
    minimum: float | None = None
    maximum: float | None = None
    open_minimum: bool = False
    open_maximum: bool = False
    bools: bool = False
    choices: tuple[str, ...] | None = None
    nullable: bool = False
    allowed: frozenset[str] | None = None
    loosens: Callable[[Any], bool] | None = None
    loosens_feasibility: Callable[[Any], bool] | None = None
    per_solve: bool = True

    def check(self, where: str, value: Any) -> Any:
        """The value, normalised (ints for ``float`` become floats); ValueError naming ``where``."""
        if isinstance(value, np.ndarray) and value.ndim == 0:  # a 0-d array is its scalar, as in the models
            value = value.item()
        if value is None and (self.nullable or self.default is None):
            return None
        if self.kind is bool:
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{where} expects true or false, got {value!r}")
            return bool(value)
        if self.kind in (int, float):
            if self.bools and isinstance(value, (bool, np.bool_)):
                return bool(value)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
                raise ValueError(f"{where} expects {'an integer' if self.kind is int else 'a number'}, got {value!r}")
            if self.kind is int:
                if not isinstance(value, numbers.Integral):
                    raise ValueError(f"{where} expects an integer, got {value!r}")
                value = int(value)
                if abs(value) > LARGEST_INTEGER:
                    raise ValueError(f"{where} must be at most 2^53 in magnitude, got {value!r}")
            else:
                value = _finite_number(where, value)
            if self.minimum is not None and (value <= self.minimum if self.open_minimum else value < self.minimum):
                raise ValueError(f"{where} must be {'>' if self.open_minimum else '>='} {self.minimum:g}, got {value!r}")
            if self.maximum is not None and (value >= self.maximum if self.open_maximum else value > self.maximum):
                raise ValueError(f"{where} must be {'<' if self.open_maximum else '<='} {self.maximum:g}, got {value!r}")
            return value
        if self.kind is str:
            if not isinstance(value, str):
                raise ValueError(f"{where} expects a string, got {value!r}")
            if self.choices is not None and value not in self.choices:
                raise ValueError(f"{where} must be one of {', '.join(self.choices)}, got {value!r}")
            return value
        if self.kind is dict:
            if not isinstance(value, Mapping):
                raise ValueError(f"{where} expects a table of solver options, got {value!r}")
            for key in value:
                if not isinstance(key, str) or (self.allowed is not None and key not in self.allowed):
                    allowed = ", ".join(sorted(self.allowed or ()))
                    raise ValueError(f"{where} does not forward {key!r} (allowed: {allowed})")
            table = {}
            for key, item in value.items():  # a NaN tolerance crashed HiGHS (segmentation fault)
                if isinstance(item, np.ndarray) and item.ndim == 0:
                    item = item.item()
                if isinstance(item, (bool, np.bool_, str)):
                    table[key] = item if isinstance(item, str) else bool(item)
                elif isinstance(item, numbers.Integral):
                    table[key] = Option(0, int).check(f"{where} {key!r}", item)
                elif isinstance(item, numbers.Real):
                    table[key] = _finite_number(f"{where} {key!r}", item)
                else:
                    raise ValueError(f"{where} {key!r} expects a number, true/false or a string, got {item!r}")
            return table
        raise TypeError(f"option kind {self.kind!r} is not supported")  # a backend's own bug


def _finite_number(where: str, value: Any) -> float:
    try:
        out = float(value)
    except OverflowError:  # an integer beyond the float range
        out = math.inf
    if not math.isfinite(out):
        raise ValueError(f"{where} must be finite, got {value!r}")
    return out


def check_exact_backend_option(owner: str, option: str, name: str, kind: type[Model]) -> None:
    """An option naming the exact backend of ``kind`` that a backend solves its parts with
    (ValueError naming the option for an unknown name too)."""
    chosen = _BACKENDS.get(name) if isinstance(name, str) else None
    if chosen is None or not chosen.EXACT or chosen.fits_kind(kind) is not None:
        raise ValueError(f"options: backend {owner!r} option {option!r} must be an exact {kind.name} backend, "
                         f"got {name!r}")


def tolerance_keys(keys: frozenset[str], *names: str) -> Callable[[Any], bool]:
    """``Option.loosens`` for a table of pass-through options: it sets one of ``names``."""
    chosen = frozenset(names) & keys

    def loosens(table: Any) -> bool:
        return bool(table) and not chosen.isdisjoint(table)

    return loosens


class Backend:
    """Subclass, set the class variables, implement ``run``, and decorate with
    :func:`register_backend`.

    ``OPTIONS`` maps every accepted option to its :class:`Option` schema; anything else is
    rejected before solving. ``PRIORITY`` orders the default choice (lower first) among exact
    backends. ``run`` receives the options already checked and merged with the defaults, and
    the ``state`` that :meth:`new_state` made for its :class:`~optsched.solve.Prepared` (a
    solver object kept between solves for warm starts, or None).
    """

    NAME: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    EXACT: ClassVar[bool]
    MODELS: ClassVar[frozenset[str]] = frozenset()
    FORM: ClassVar[str | None] = None
    SUPPORTS_TIME_LIMIT: ClassVar[bool] = False
    OPTIONS: ClassVar[Mapping[str, Option]] = {}
    PRIORITY: ClassVar[int] = 50
    REQUIRES: ClassVar[tuple[str, ...]] = ()
    # What a FORM = "standard" backend's solver accepts (after cvxpy's MIP_CAPABLE), against the
    # traits read off each instance's form (StandardForm.traits): continuous variables, a
    # quadratic objective.
    CONTINUOUS_CAPABLE: ClassVar[bool] = True
    QP_CAPABLE: ClassVar[bool] = True
    # Set-up seconds per form element (variables + nonzeros) that the solver's own time limit
    # does not cover (building a Pyomo or cvxpy model, passing it to HiGHS), measured here; with
    # a time limit the seam refuses to start a solve whose set-up alone would exceed it.
    SETUP_S_PER_ELEMENT: ClassVar[float] = 0.0
    # Bytes per form element the backend holds while solving (its model and factorisations).
    BYTES_PER_ELEMENT: ClassVar[float] = 0.0
    # The magnitude from which the solver takes a number as infinite (``SOLVER_INFINITY`` for
    # HiGHS, SCIP and CP-SAT); None: no such limit. An instance whose standard form holds a
    # finite value that large is refused by ``admits``.
    INFINITE_FROM: ClassVar[float | None] = None
    INFINITE_SAYS: ClassVar[str] = "takes values from {limit:g} on as infinite"
    # Its routes call numba kernels: ``prepare``'s warm-up also solves the tiny instance at the
    # default options, which compiles the kernels of the usual route whatever options are given.
    COMPILED: ClassVar[bool] = False

    def available(self) -> Availability:
        return modules_available(*self.REQUIRES)

    def fits_kind(self, kind: type[Model]) -> str | None:
        """None when this backend can solve models of this kind (instances permitting): it
        handles the kind directly (``MODELS``) or takes its form, and, for a solver that cannot
        take every program of that form, at least one of the kind's reference instances
        (:func:`reference_traits`) has traits it takes."""
        if kind.name in self.MODELS:
            return None
        if self.FORM is None or self.FORM not in kind.FORMS:
            return f"backend {self.NAME!r} does not solve {kind.name!r} models"
        reasons = [self.trait_reason(t) for t in reference_traits(kind)] if self._limited else []
        if reasons and all(reasons):
            return f"backend {self.NAME!r} does not solve {kind.name!r} models ({reasons[0]})"
        return None

    @property
    def _limited(self) -> bool:
        return self.FORM == "standard" and not (self.CONTINUOUS_CAPABLE and self.QP_CAPABLE)

    def trait_reason(self, traits: Traits) -> str | None:
        """Why this backend's solver cannot take a program with ``traits`` (None: it can)."""
        if traits.continuous and not self.CONTINUOUS_CAPABLE:
            return "continuous variables"
        if traits.quadratic and not self.QP_CAPABLE:
            return "quadratic objective"
        return None

    def fits(self, model: Model) -> str | None:
        """None when this backend can solve ``model`` at its default options; otherwise the
        reason it cannot (what the default choice and ``optsched.backends(model)`` ask)."""
        reason = self.fits_kind(type(model)) or self.admits(model)
        if reason is None and type(self).fits_with is not Backend.fits_with:
            reason = self.fits_with(model, self.check_options({}))
        return reason

    def fits_instance(self, model: Model) -> str | None:
        """Instance-level limits (size, integral data, ...); override when there are any."""
        return None

    def fits_with(self, model: Model, options: Mapping[str, Any]) -> str | None:
        """Instance-level limits that depend on the (checked) options, such as a table size
        under a route an option picks; override when there are any (``Prepared`` asks)."""
        return None

    def memory_bytes(self, model: Model) -> float:
        """The memory a solve of ``model`` would allocate, estimated before any of it is
        (override for custom algorithms; algebraic backends scale with the form)."""
        return self.BYTES_PER_ELEMENT * form_elements(model, self) if self.BYTES_PER_ELEMENT else 0.0

    def admits(self, model: Model) -> str | None:
        """Instance-level: the traits of the model's form, :meth:`fits_instance`, then the memory
        estimate against the limit."""
        if self._limited and model.name not in self.MODELS:
            reason = self.trait_reason(as_standard(model).to_standard_form().traits())
            if reason is not None:
                return f"{self.NAME}: this instance has {reason}"
        reason = self.fits_instance(model) or self._range_reason(model)
        if reason is not None:
            return reason
        need, limit = self.memory_bytes(model), memory_limit_bytes()
        if need > limit:
            return (f"{self.NAME}: this instance needs about {need / 2**30:.3g} GB of memory, above the limit of "
                    f"{limit / 2**30:.3g} GB (OPTSCHED_MEMORY_LIMIT_GB)")
        return None

    def _range_reason(self, model: Model) -> str | None:
        """Why the solver cannot hold this instance's numbers (``INFINITE_FROM``), or None."""
        if self.INFINITE_FROM is None or model.name in self.MODELS or "standard" not in type(model).FORMS:
            return None
        largest = self.largest_value(model)
        if largest < self.INFINITE_FROM:
            return None
        return (f"{self.NAME}: this instance holds the value {largest:.3g}, and its solver "
                + self.INFINITE_SAYS.format(limit=self.INFINITE_FROM))

    def largest_value(self, model: Model) -> float:
        """The largest finite |number| the solver is given for ``model`` (checked against
        ``INFINITE_FROM``): its standard form's, unless the backend scales the form first."""
        return as_standard(model).to_standard_form().largest_value()

    def setup_seconds(self, model: Model) -> float:
        """Estimated set-up time outside the solver's own time limit (0 when covered)."""
        return self.SETUP_S_PER_ELEMENT * form_elements(model, self) if self.SETUP_S_PER_ELEMENT else 0.0

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` checked against ``OPTIONS`` and merged with the defaults.

        ValueError naming the backend and the option for an unknown key, a wrong type or a value
        out of range; :meth:`check_option_values` adds the backend's cross-option rules."""
        unknown = sorted(set(options) - set(self.OPTIONS))
        if unknown:
            known = ", ".join(self.OPTIONS) or "none"
            raise ValueError(f"options: backend {self.NAME!r} has no option {unknown[0]!r} (known: {known})")
        merged = {key: spec.default for key, spec in self.OPTIONS.items()}
        for key, value in options.items():
            merged[key] = self.OPTIONS[key].check(f"options: backend {self.NAME!r} option {key!r}", value)
        self.check_option_values(merged)
        return merged

    def loosened(self, options: Mapping[str, Any], *, feasibility: bool = False) -> str | None:
        """The options (checked) that change what the solver's "optimal" proves (``Option.loosens``),
        or with ``feasibility`` its "infeasible" and "unbounded" (``Option.loosens_feasibility``); None if none."""
        names = []
        for key, spec in self.OPTIONS.items():
            test = spec.loosens_feasibility if feasibility and spec.loosens_feasibility is not None else spec.loosens
            if test is not None and options.get(key) is not None and test(options[key]):
                names.append(key)
        return ", ".join(names) or None

    def check_option_values(self, options: Mapping[str, Any]) -> None:
        """Rules that involve several options or need the solver package; override if any."""

    def new_state(self, kind: type[Model], options: Mapping[str, Any], *, prepare: PrepareFn) -> Any:
        """State kept by one :class:`~optsched.solve.Prepared` between solves (default: none).
        ``prepare`` is the seam's own :func:`~optsched.solve.prepare`, for a backend that solves
        subproblems of its own through other backends (solvers never import the seam)."""
        return None

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        raise NotImplementedError


_BACKEND_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


def register_backend(cls: type[Backend]) -> type[Backend]:
    """Class decorator: register a :class:`Backend` subclass under its ``NAME`` (lower case,
    letters, digits and ``_``; one name per backend whatever its case), for the model kinds of
    ``MODELS`` (registered kinds). ValueError naming what is wrong, RuntimeError for a name
    taken (an empty name, "HIGHS" beside "highs", a kind that does not exist were accepted)."""
    if not isinstance(cls, type) or not issubclass(cls, Backend):
        raise ValueError(f"register_backend: expected a Backend subclass, got {cls!r}")
    name = getattr(cls, "NAME", None)
    if not isinstance(name, str) or not _BACKEND_NAME.match(name):
        raise ValueError(f"register_backend: NAME must be lower case letters, digits and '_' (from a letter), got {name!r}")
    if name in _BACKENDS:
        raise RuntimeError(f"backend {name!r} registered twice")
    unknown = sorted(set(cls.MODELS) - set(model_kinds()))
    if unknown:
        raise ValueError(f"register_backend: {name!r} names model kinds that are not registered: {', '.join(unknown)}")
    _BACKENDS[name] = cls()
    return cls


def _fits_safely(check: Callable[[Any], str | None], subject: Any) -> bool:
    """``check(subject) is None``; a check that raises (a plugin's ``fits_instance``) says no,
    so listing the backends and the default choice pass it by instead of raising."""
    try:
        return check(subject) is None
    except (KeyboardInterrupt, MemoryError):
        raise
    except Exception:  # noqa: BLE001 - a plugin's check failing is its answer
        return False


def backend_available(backend: Backend) -> Availability:
    """``backend.available()``, and a backend whose check itself fails is unavailable for that
    reason (it made ``optsched.backends(model)`` and every default choice raise)."""
    try:
        avail = backend.available()
    except Exception as exc:  # noqa: BLE001 - a plugin's check failing is its answer
        return Availability(False, f"{backend.NAME}: its availability check failed: {type(exc).__name__}: {exc}")
    return avail if isinstance(avail, Availability) else Availability(bool(avail))


def get_backend(name: str) -> Backend:
    if not isinstance(name, str) or name not in _BACKENDS:
        raise ValueError(f"backend: unknown backend {name!r} (known: {', '.join(sorted(_BACKENDS))})")
    return _BACKENDS[name]


def all_backends() -> dict[str, Backend]:
    return dict(_BACKENDS)


def fitting_backends(model: Model, *, available_only: bool = True) -> list[Backend]:
    """Backends that fit ``model``: exact ones first by priority, then the heuristics."""
    memory_limit_bytes()  # a bad OPTSCHED_MEMORY_LIMIT_GB named here: each admits' failure read as "does not fit"
    out = [
        b
        for b in _BACKENDS.values()
        if _fits_safely(b.fits, model) and (not available_only or backend_available(b))
    ]
    return sorted(out, key=lambda b: (not b.EXACT, b.PRIORITY, b.NAME))


def kind_backends(kind: type[Model], *, available_only: bool = True) -> list[Backend]:
    """Backends that fit models of ``kind`` (instances permitting), in the order of
    :func:`fitting_backends`."""
    out = [b for b in _BACKENDS.values() if _fits_safely(b.fits_kind, kind) and (not available_only or backend_available(b))]
    return sorted(out, key=lambda b: (not b.EXACT, b.PRIORITY, b.NAME))

