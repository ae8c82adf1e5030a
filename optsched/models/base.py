"""The abstract subproblem model and the registry of model kinds.

A model is a frozen, validated object holding one instance of a per-slot subproblem. It
knows its own math (objective, feasibility) independently of any solver, and it can lower
itself to the forms that backends accept (the protocols of :mod:`optsched.models.forms`;
``FORMS`` lists those its class implements, derived when the kind is registered):

``"standard"``  ``to_standard_form()`` -> :class:`~optsched.models.forms.StandardForm`, with
                ``solution_from_vector(x)`` to map a solver's vector back (HiGHS, CP-SAT).
``"pyomo"``     ``to_pyomo()`` -> a Pyomo ``ConcreteModel``: the reference statement of
                the math, with ``solution_from_pyomo(m)``.
``"cvxpy"``     ``to_cvxpy()`` -> ``(problem, to_solution)``, ``cvxpy_default_solver()``.
``"binary"``    ``n_binary`` and ``evaluate_binary(X)`` over 0-1 rows, for brute force.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, TypeVar

import numpy as np

from optsched.models.validate import check_keys, finite_float

_MODELS: dict[str, type["Model"]] = {}

F = TypeVar("F", bound=Callable[..., Any])


def cached_form(method: F) -> F:
    """Build a form once per model instance (models are frozen, so it cannot go stale): a
    backend's instance check and its solve then share one lowering."""
    name = method.__name__

    @functools.wraps(method)
    def wrapper(self: "Model") -> Any:
        return self.memo(name, lambda: method(self))

    return wrapper  # type: ignore[return-value]


def _form_reach(model: Any) -> float:
    """sum_j |c_j| m_j + sum_ij |H_ij| m_i m_j / 2 of the model's standard form, m_j the larger
    |bound| of x_j."""
    form = model.to_standard_form()
    reach = np.maximum(np.abs(form.col_lower), np.abs(form.col_upper))
    c = np.abs(form.c)
    total = float(c[c > 0] @ reach[c > 0])
    if form.hessian is not None:
        h = abs(form.hessian).tocoo()
        total += 0.5 * float(np.sum(h.data * reach[h.row] * reach[h.col]))
    return total if math.isfinite(total) else math.inf


def objective_reach(model: "Model") -> float | None:
    """How far a standard-form model's objective can move over its box (its magnitude without
    the offset); None for a kind without a standard form."""
    if "standard" not in type(model).FORMS:
        return None
    return model.memo("objective_reach", lambda: _form_reach(model))


def register_model(cls: type["Model"]) -> type["Model"]:
    """Class decorator: make a model kind loadable by its ``name`` from JSON, with its ``FORMS``
    derived from the form protocols it implements (:func:`optsched.models.forms.forms_of`)."""
    from optsched.models import forms as f

    if cls.name in _MODELS:
        raise RuntimeError(f"model {cls.name!r} registered twice")
    forms = f.forms_of(cls)
    # a linear/quadratic (mixed-integer) program: cvxpy and Pyomo state it too, from its matrices
    if "standard" in forms and "cvxpy" not in forms:
        cls.to_cvxpy = f.standard_form_to_cvxpy  # type: ignore[attr-defined]
        cls.cvxpy_default_solver = f.standard_form_cvxpy_solver  # type: ignore[attr-defined]
    if "standard" in forms and "pyomo" not in forms:
        cls.to_pyomo = f.standard_form_to_pyomo  # type: ignore[attr-defined]
        cls.solution_from_pyomo = f.standard_form_solution_from_pyomo  # type: ignore[attr-defined]
    forms = f.forms_of(cls)
    cls.FORMS = forms
    _MODELS[cls.name] = cls
    return cls


def model_kinds() -> dict[str, type["Model"]]:
    return dict(_MODELS)


GeneratorFn = Callable[[int, np.random.Generator], "Model"]
FuzzFn = Callable[[np.random.Generator, str], "Model"]


@dataclass(frozen=True)
class KindSpec:
    """Everything the studies need to know about a model kind, declared beside it: how to draw
    instances (``generate(size, rng)``), the sizes ``optsched bench`` runs (quick and full),
    a tiny size (tests, warm-up), the relative tolerance within which exact backends agree on
    its optimum, and its fuzz builder ``fuzz(rng, variant)`` with the degenerate variants."""

    generate: GeneratorFn
    quick_sizes: tuple[int, ...]
    full_sizes: tuple[int, ...]
    tiny: int
    rtol: float
    fuzz: FuzzFn | None = None
    fuzz_variants: tuple[str, ...] = ()
    fuzz_examples: int = 0  # hypothesis examples per CI-sized fuzz test


_SPECS: dict[str, KindSpec] = {}


def register_generator(kind: str, *, quick: tuple[int, ...], full: tuple[int, ...], tiny: int,
                       rtol: float) -> Callable[[GeneratorFn], GeneratorFn]:
    """Decorator, beside a model kind: ``fn(size, rng) -> Model`` draws the kind's random
    instances (benchmarks, sweeps, fuzzing, warm-up; :func:`optsched.generators.generate`), with
    the rest of its :class:`KindSpec`."""

    def deco(fn: GeneratorFn) -> GeneratorFn:
        if kind in _SPECS:
            raise RuntimeError(f"generator {kind!r} registered twice")
        _SPECS[kind] = KindSpec(fn, tuple(quick), tuple(full), int(tiny), float(rtol))
        return fn

    return deco


def register_fuzz(kind: str, *variants: str, examples: int) -> Callable[[FuzzFn], FuzzFn]:
    """Decorator: ``fn(rng, variant) -> Model``, the kind's fuzz builder (tests/test_fuzz.py), with
    its variants (``random`` plus the degenerate cases) and how many instances the CI-sized
    fuzz test draws (the long run draws ``OPTSCHED_FUZZ_INSTANCES``)."""

    def deco(fn: FuzzFn) -> FuzzFn:
        _SPECS[kind] = dataclasses.replace(_SPECS[kind], fuzz=fn, fuzz_variants=tuple(variants),
                                           fuzz_examples=int(examples))
        return fn

    return deco


def kind_specs() -> dict[str, KindSpec]:
    return dict(_SPECS)


def draw_from(rng: np.random.Generator, pool: list[float], size: int) -> np.ndarray:
    """``size`` values drawn uniformly from ``pool`` (the extreme values fuzz builders mix)."""
    return np.asarray(pool, dtype=np.float64)[rng.integers(0, len(pool), size)]


def generators() -> dict[str, GeneratorFn]:
    return {kind: spec.generate for kind, spec in _SPECS.items()}


def model_from_dict(data: Any) -> "Model":
    """Build a model from its JSON object; the key ``model`` names the kind."""
    if not isinstance(data, dict):
        said = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}.get(
            type(data), "a number" if isinstance(data, (int, float)) else type(data).__name__)
        raise ValueError(f"instance: expected a JSON object, got {said}")
    kind = data.get("model")
    if not isinstance(kind, str) or kind not in _MODELS:
        raise ValueError(f"model: unknown model {kind!r} (known: {', '.join(sorted(_MODELS))})")
    body = {k: v for k, v in data.items() if k != "model"}
    return _MODELS[kind].from_dict(body)


class FrozenArrays:
    """Read-only arrays stay read-only through pickling: numpy restores an unpickled array
    writeable, which made a model sent to another process (``compare(jobs=2)``) mutable and
    gave numba kernels a new argument type, compiled inside the first timed solve (greedy's
    runtime_s 0.78 s instead of 19 us)."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        for value in state.values():
            freeze_arrays(value)
        self.__dict__.update(state)

    def memo(self, key: Any, build: Callable[[], Any]) -> Any:
        """``build()`` once per instance and ``key`` (forms, a backend's lowering, derived
        arrays), its arrays made read-only: a frozen object cannot change under its cache."""
        cache = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            value = build()
            freeze_arrays(value)
            cache[key] = value
        return cache[key]


class frozen_cached_property(functools.cached_property):  # noqa: N801 - named as the decorator it extends
    """``functools.cached_property`` whose value's arrays are read-only: a model's derived data
    (a set family's dense incidence, a mesh's pair arrays) was writable, and a write made an
    infeasible answer pass verification, which reads the same arrays the solver was built from."""

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        if self.attrname in instance.__dict__:
            return instance.__dict__[self.attrname]
        value = super().__get__(instance, owner)
        freeze_arrays(value)
        return value


def freeze_arrays(value: Any, depth: int = 0) -> None:
    """Make read-only: an array, the arrays of a tuple, list or dict of them (a set packing's
    sets, a mesh's nodes), a scipy sparse matrix's arrays (a linear program's A), and the
    fields of a dataclass of them (a standard form)."""
    if depth > 3:
        return
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, (tuple, list)):
        for item in value:
            freeze_arrays(item, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            freeze_arrays(item, depth + 1)
    elif hasattr(value, "data") and (hasattr(value, "indptr") or hasattr(value, "row")):  # scipy sparse
        if hasattr(value, "sum_duplicates"):  # canonical first: scipy sorts a matrix in place before abs() and
            value.sum_duplicates()            # the like, which a read-only one refuses
        for part in ("data", "indices", "indptr", "row", "col", "offsets"):
            if isinstance(getattr(value, part, None), np.ndarray):
                getattr(value, part).setflags(write=False)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            freeze_arrays(getattr(value, f.name), depth + 1)


def feasibility_tol(tol: Any) -> float:
    """The ``tol`` of ``violations``, ``audit`` and ``is_feasible``: a number in [0, 1) (NaN or
    inf made every comparison pass, so a load of 3 on a capacity of 1 was feasible; a negative
    one refused points inside their bounds)."""
    out = finite_float("tol", tol, minimum=0.0)
    if out >= 1.0:
        raise ValueError(f"tol: a relative feasibility tolerance must be below 1, got {out!r}")
    return out


_DEFAULT_TOL = object()


def _tol_checked(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method(self, solution, *, tol)`` with ``tol`` checked by :func:`feasibility_tol` (a float
    in [0, 1) passes at the cost of one comparison: the seam audits every solve with it)."""
    @functools.wraps(method)
    def checked(self: Any, solution: Any, *, tol: Any = _DEFAULT_TOL) -> Any:
        if tol is _DEFAULT_TOL:
            return method(self, solution)
        if tol.__class__ is not float or not 0.0 <= tol < 1.0:
            tol = feasibility_tol(tol)
        return method(self, solution, tol=tol)
    return checked


class Model(FrozenArrays):
    """Base class. Subclasses are frozen dataclasses (``eq=False``) that validate in
    ``__post_init__`` and set the class variables below. Every kind's ``violations`` and
    ``audit`` take only a ``tol`` of :func:`feasibility_tol`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("violations", "audit"):
            if name in cls.__dict__:
                setattr(cls, name, _tol_checked(cls.__dict__[name]))

    name: ClassVar[str]
    SIZE_LABEL: ClassVar[str] = "model.size"  # what ``size`` counts, for tables and plots
    maximize: ClassVar[bool]
    # Every instance of the kind has a finite optimum or none (its variables are bounded): a
    # solver saying "unbounded" about one is wrong (cvxpy did, on P3 with utilities of 1e12).
    BOUNDED: ClassVar[bool] = True
    FORMS: ClassVar[frozenset[str]] = frozenset()  # derived by register_model, never declared
    # What an integer program's rows are to the exact solvers (StandardForm.widened): moved out
    # by ``violations``' slack of the selection's own load ("load", validate.row_slack), or as
    # written (None: a kind whose slack is a verification allowance, not the program's rows)
    ROW_SLACK: ClassVar[str | None] = "load"
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = ()
    JSON_OPTIONAL: ClassVar[tuple[str, ...]] = ()

    @property
    def bounded(self) -> bool:
        """This instance's variables are all bounded (``BOUNDED``, or this instance's own box):
        a solver saying "unbounded" about it is wrong (Clarabel said so through cvxpy of
        max x, x <= 1, 0 <= x <= 1e10)."""
        return self.BOUNDED

    # --- the model's own math -------------------------------------------------------
    def objective(self, solution: Any) -> float:
        raise NotImplementedError

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        """Human-readable list of constraints the candidate breaks (empty when feasible)."""
        raise NotImplementedError

    def zero_solution(self) -> Any:
        """The solution that chooses nothing (x = 0) in the kind's own solution type, or None for
        a kind without one. The seam tests a solver's "infeasible" on it: cvxpy called feasible
        projections and P3 instances infeasible, and HiGHS an unbounded integer program."""
        from optsched.models.forms import as_standard

        forms = type(self).FORMS
        if "binary" in forms:
            return self.solution_from_vector(np.zeros(self.n_binary))  # type: ignore[attr-defined]
        if "standard" in forms:
            return self.solution_from_vector(np.zeros(as_standard(self).to_standard_form().n_vars))  # type: ignore[attr-defined]
        return None

    def objective_magnitude(self) -> float:
        """A bound on |objective| over the model's points: the scale below which the seam's
        agreement of objective and bound (:func:`optsched.result.agree`) is absolute. A standard
        form's is sum_j |c_j| m_j + sum_ij |H_ij| m_i m_j / 2 + |offset| with m_j the larger
        |bound| of x_j (costs of 1e-12 then agree within 1e-6 of their own scale, not of 1);
        1 for a kind that does not say (agreement absolute below 1)."""
        reach = objective_reach(self)
        return 1.0 if reach is None else reach + abs(float(self.to_standard_form().offset))  # type: ignore[attr-defined]

    def is_feasible(self, solution: Any, *, tol: float = 1e-9) -> bool:
        return not self.violations(solution, tol=tol)

    def audit(self, solution: Any, *, tol: float = 1e-9) -> tuple[list[str], float]:
        """The seam's re-check in one call: ``(violations, objective)``, the objective only
        when the list is empty (NaN otherwise). Kinds on a policy's hot path override it with
        one compiled pass that checks and evaluates together; the answer is the same."""
        problems = self.violations(solution, tol=tol)
        return problems, (math.nan if problems else self.objective(solution))

    def better(self, a: float, b: float) -> bool:
        """Is objective value ``a`` strictly better than ``b`` in this model's sense?"""
        return a > b if self.maximize else a < b

    # --- JSON ---------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Model":
        check_keys(cls.name, dict(data), required=cls.JSON_REQUIRED, optional=cls.JSON_OPTIONAL)
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.name}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            out[f.name] = value.tolist() if isinstance(value, np.ndarray) else value
        return out

    def write(self, path: Any) -> Any:
        """Write this instance to ``path`` and return it: JSON (``to_dict``, every kind; what
        ``optsched solve`` reads back) or MPS / LP by the suffix, from the standard form, every
        number exact (:mod:`optsched.models.model_text`; ValueError for a kind without a linear
        or quadratic form)."""
        import json

        from optsched.artifacts import write_text
        from optsched.files import user_path
        from optsched.models.forms import as_standard

        path = user_path("path", path)
        if path.suffix.lower() == ".json":
            return write_text(path, json.dumps(self.to_dict()) + "\n")
        if "standard" not in self.FORMS:
            raise ValueError(f"path: {self.name!r} models have no linear/quadratic form to write as MPS or LP")
        return as_standard(self).to_standard_form().write(path)

    def solution_to_json(self, solution: Any) -> Any:
        return np.asarray(solution).tolist()

    @property
    def size(self) -> int:
        """A single number describing the instance size (for benchmarks and tables)."""
        raise NotImplementedError
