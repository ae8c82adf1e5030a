"""The seam between models and backends: ``prepare`` / ``Prepared.solve``, ``solve`` and ``compare``.

``prepare(kind_or_model, backend, **options)`` does once what can be done once (after cvxpy's
apply step and MathOpt's solver objects): it picks and checks the backend, checks the options
against the backend's schema, imports the solver package and compiles the backend's kernels on
a tiny instance of the kind (once per process; the seconds it took are ``Prepared.setup_s``),
and makes the backend's per-session state (a solver object kept between solves for warm
starts). ``Prepared.solve(model)`` then solves one instance: it times the backend call
(``runtime_s``: apply, solve, invert; never the set-up), fills ``model`` and ``backend``, and
applies the rules every result obeys:

* a returned solution is re-checked with the model's own math (``verify``, ``Model.audit``): one it rejects
  turns the result into ``error`` (no solution, objective or bound is handed out);
* the objective is the model's own value of the solution, and must be finite;
* ``optimal`` is only said when the objective and the backend's proven bound agree within
  ``OBJECTIVE_RTOL``: a solver stopped by a gap option says ``gap_limit`` with both numbers;
  options that loosen the solver's proof (tolerances, another cvxpy solver: ``Option.loosens``)
  turn its ``optimal`` into ``feasible``, with ``extra["optimality"]`` saying which, and its
  bound into ``extra["unproven_bound"]``, unless optsched proved the bound itself by weak
  duality from the solver's multipliers (``extra["bound_proof"]``) and the options loosen only
  the solver's gap, not its feasibility; those that loosen feasibility (a tolerance, not a gap:
  ``Option.loosens_feasibility``) turn its ``infeasible`` or ``unbounded`` into ``error``;
* a bound that the verified objective beats is no bound: it moves to ``extra["unproven_bound"]``
  and an ``optimal`` resting on it becomes ``feasible``;
* ``unbounded`` is an error for an instance whose variables are bounded (``Model.bounded``), and
  ``infeasible`` when the model's own math accepts its zero solution (``Model.zero_solution``).

``solve(model, backend)`` is ``prepare`` + one ``Prepared.solve``, so a policy's loop and a
one-off call go through the same code.
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import numpy as np

from optsched.config import MAX_WORKERS, whole_number, within_memory
from optsched.models.base import Model, model_kinds
from optsched.models.validate import finite_float, flag
from optsched.result import BOUND_PROOF, OBJECTIVE_RTOL, Result, Termination, agrees_at_scale, relative_gap, sealed
from optsched.solvers.registry import Backend, backend_available, fitting_backends, get_backend, kind_backends

if TYPE_CHECKING:
    pass

__all__ = ["OBJECTIVE_RTOL", "Prepared", "best_bound", "check_backend", "choose_backend", "compare", "prepare", "relative_gap", "solve"]

VERIFY_TOL = 1e-6
# The warm-up's tiny instance solves in milliseconds once compiled. At the backend's default
# options it always finishes: its limit only guards against a hang, and leaves room to compile
# every kernel (the dp backend's take 8-11 s on an empty numba cache here). Under the options
# given it is bounded more tightly (options can make even a tiny solve run on: an iteration
# limit of 10^12 on an instance that never meets the stopping test); a limit stops a solve
# between its kernels, so that limit alone left dp's later kernels to the first real solve
# (runtime_s 8 s for a knapsack of 3 items, on a fresh numba cache).
DEFAULTS_WARM_UP_TIME_LIMIT_S = 120.0
WARM_UP_TIME_LIMIT_S = 1.0
_WARMED: set[tuple[str, str, str]] = set()


def model_kind(kind_or_model: Any) -> type[Model]:
    """The model class of a model, a model class or a kind name."""
    if isinstance(kind_or_model, Model):
        return type(kind_or_model)
    if isinstance(kind_or_model, type) and issubclass(kind_or_model, Model) and hasattr(kind_or_model, "name"):
        return kind_or_model
    kinds = model_kinds()
    if isinstance(kind_or_model, str) and kind_or_model in kinds:
        return kinds[kind_or_model]
    raise ValueError(f"model: expected an optsched model, model class or kind name "
                     f"(known: {', '.join(sorted(kinds))}), got {kind_or_model!r}")


def choose_backend(kind_or_model: Any, backend: str | None) -> Backend:
    """The backend named (checked to fit and be available), or the first available exact
    backend that fits when ``backend`` is None; ValueError with the registry's reason."""
    kind = model_kind(kind_or_model)
    _check_backend_name(backend)
    if backend is None:
        fits = fitting_backends(kind_or_model) if isinstance(kind_or_model, Model) else kind_backends(kind)
        if not fits:
            raise ValueError(f"backend: no available backend solves {kind.name!r} models")
        return fits[0]
    chosen = get_backend(backend)
    reason = chosen.fits_kind(kind)
    if reason is None and isinstance(kind_or_model, Model):
        reason = chosen.admits(kind_or_model)
    if reason is not None:
        raise ValueError(f"backend: {reason}")
    avail = backend_available(chosen)
    if not avail:
        raise ValueError(f"backend: {chosen.NAME!r} is not available here: {avail.reason}")
    return chosen


def check_backend(kind_or_model: Any, backend: str | None, options: Mapping[str, Any] | None = None) -> Backend:
    """The backend that :func:`prepare` would use, with its options checked, without preparing
    it (for config checks: a misfit or a bad option is refused before anything runs)."""
    chosen = choose_backend(kind_or_model, backend)
    chosen.check_options(dict(options or {}))
    return chosen


class Prepared:
    """A backend made ready for one model kind (see the module docstring).

    ``solve(model, time_limit=..., **overrides)``: ``overrides`` replace options for that one
    solve (checked like the others; for parameters that change from slot to slot, such as the
    scaling of the AESCB route)."""

    def __init__(self, backend: Backend, kind: type[Model], options: Mapping[str, Any], *,
                 given: Mapping[str, Any], verify: bool = True, warm_up: bool = True) -> None:
        self.backend = backend
        self.kind = kind
        self.options = dict(options)
        self.verify = verify
        self._given = dict(given)
        self._warm = warm_up
        start = time.perf_counter()
        if warm_up:
            _warm_up(backend, kind, self.options)
        self.state = backend.new_state(kind, self.options, prepare=prepare)
        self._loosened = backend.loosened(self.options)
        self._loosened_feasibility = backend.loosened(self.options, feasibility=True)
        self._option_limits = type(backend).fits_with is not Backend.fits_with  # asked per solve only if any
        # a solver object kept between solves serves one solve at a time (threads sharing this
        # Prepared mixed one HiGHS object's instances up: errors, and raw numpy exceptions)
        self._turn = threading.Lock() if self.state is not None else None
        self.setup_s = time.perf_counter() - start

    def __getstate__(self) -> dict[str, Any]:
        """A copy (pickle, deepcopy, another process) is a new session: the same backend, kind
        and options with its own lock and per-session state (a HiGHS object does not pickle, and
        a warm start is the session's own), warmed up where it is unpickled as it was here."""
        return {**self.__dict__, "_turn": None, "state": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        start = time.perf_counter()
        if self._warm:  # in another process the first call's compilation came back as runtime_s (4 s)
            _warm_up(self.backend, self.kind, self.options)
        self.state = self.backend.new_state(self.kind, self.options, prepare=prepare)
        self.setup_s = time.perf_counter() - start  # this session's, not the original's
        self._turn = threading.Lock() if self.state is not None else None

    def __repr__(self) -> str:
        return f"Prepared({self.name!r}, kind={self.kind.name!r}, options={self.options!r}, verify={self.verify})"

    @property
    def name(self) -> str:
        return self.backend.NAME

    def fits(self, model: Model) -> str | None:
        """None when this prepared backend can solve ``model``; otherwise why not."""
        if type(model) is not self.kind:
            return f"this prepared {self.name!r} solves {self.kind.name!r} models, got {type(model).__name__}"
        return self.backend.admits(model) or self.backend.fits_with(model, self.options)

    def solve(self, model: Model, *, time_limit: float | None = None, **overrides: Any) -> Result:
        return self._solve(model, time_limit, overrides, {})

    def _solve(self, model: Model, time_limit: float | None, overrides: Mapping[str, Any],
               seam_extra: Mapping[str, Any]) -> Result:
        """:meth:`solve`, with ``seam_extra`` added to the result's ``extra`` (``solve``'s set-up seconds)."""
        if type(model) is not self.kind:
            if not isinstance(model, Model):
                raise ValueError(f"model: expected an optsched model, got {type(model).__name__}")
            raise ValueError(f"backend: {self.fits(model)}")
        reason = self.backend.admits(model)
        if reason is not None:
            raise ValueError(f"backend: {reason}")
        backend = self.backend
        options, loosened, loosened_feasibility = self.options, self._loosened, self._loosened_feasibility
        if overrides:
            options = backend.check_options({**self._given, **overrides})
            for key in overrides:
                if not backend.OPTIONS[key].per_solve and options[key] != self.options[key]:
                    raise ValueError(f"options: backend {self.name!r} option {key!r} is fixed when it is prepared "
                                     f"({self.options[key]!r}); prepare another for {overrides[key]!r}")
            loosened, loosened_feasibility = backend.loosened(options), backend.loosened(options, feasibility=True)
        if self._option_limits and (reason := backend.fits_with(model, options)) is not None:
            raise ValueError(f"backend: {reason}")
        if time_limit is not None:
            time_limit = finite_float("time_limit", time_limit, minimum=0.0, largest=math.inf)
            setup = backend.setup_seconds(model)
            if setup > time_limit:  # the set-up alone would overrun: stop before starting it
                return Result(Termination.TIME_LIMIT, model=model.name, backend=self.name, extra={
                    **seam_extra, "message": f"set-up alone is estimated at {setup:.3g} s, above the time limit of {time_limit:g} s"})
        try:
            if self._turn is None:
                start = time.perf_counter()
                result = backend.run(model, time_limit=time_limit, options=options, state=self.state)
            else:
                with self._turn:  # the time waited for another thread's solve is not this one's
                    start = time.perf_counter()
                    result = backend.run(model, time_limit=time_limit, options=options, state=self.state)
        except (ValueError, KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # a solver library failing is a result, not a crash
            result = Result(Termination.ERROR, extra={"message": f"{type(exc).__name__}: {exc}"})
        runtime = time.perf_counter() - start
        if type(result) is not Result or type(result.termination) is not Termination or type(result.extra) is not dict \
                or not (_number_or_none(result.objective) and _number_or_none(result.bound)) \
                or not (result.iterations is None or type(result.iterations) is int):
            result = _as_result(result)
        extra = result.extra
        if seam_extra or (time_limit is not None and not backend.SUPPORTS_TIME_LIMIT):
            extra = {**extra, **seam_extra}
            if time_limit is not None and not backend.SUPPORTS_TIME_LIMIT:
                extra["time_limit"] = "ignored: one pass of bounded work"
        return finish(model, result, verify=self.verify, backend=backend.NAME, runtime_s=runtime, extra=extra,
                      loosened=loosened, loosened_feasibility=loosened_feasibility)


def _warm_up(backend: Backend, kind: type[Model], options: Mapping[str, Any]) -> None:
    """Import the solver package and compile kernels on a tiny instance, once per process and
    (backend, kind, options): what a first call costs is never counted as solve time. First at
    the backend's default options (every kernel of its usual route compiled; only for a
    ``Backend.COMPILED`` backend unless the options given are the defaults: a custom backend
    slow at its defaults stalled ``prepare`` under cheap options), then at the options given
    (those of a route they pick), each under its limit above."""
    from optsched.models.base import kind_specs

    spec = kind_specs().get(kind.name)
    tiny = None
    given = repr(sorted(options.items()))
    for settings, limit in ((None, DEFAULTS_WARM_UP_TIME_LIMIT_S), (options, WARM_UP_TIME_LIMIT_S)):
        try:
            settings = backend.check_options({}) if settings is None else settings
        except ValueError:  # defaults a backend's cross-option rules refuse: the given options' pass only
            continue
        key = (backend.NAME, kind.name, repr(sorted(settings.items())))
        if key in _WARMED or (settings is not options and not backend.COMPILED and key[2] != given):
            continue
        _WARMED.add(key)
        if spec is None:
            return
        if tiny is None:
            tiny = spec.generate(spec.tiny, np.random.default_rng(0))  # the kind's tiny size (KindSpec.tiny)
            if backend.admits(tiny) is not None:
                return
        try:
            backend.run(tiny, time_limit=limit, options=settings, state=backend.new_state(kind, settings, prepare=prepare))
        except Exception:  # noqa: BLE001 - a warm-up failure shows up (and is reported) in the real solve
            pass


def finish(model: Model, result: Result, *, verify: bool = True, backend: str | None = None,
           runtime_s: float | None = None, extra: Mapping[str, Any] | None = None,
           loosened: str | None = None, loosened_feasibility: str | None = None) -> Result:
    """The rules every result obeys (module docstring): verification, a finite objective that is
    the model's own, ``optimal`` only with agreeing objective and bound and options that leave
    the solver's proof intact (``loosened`` names those that do not: ``feasible`` then, unless
    the bound is optsched's own weak-duality bound, ``extra["bound_proof"]``, and none of them
    loosens feasibility; those
    of ``loosened_feasibility`` turn ``infeasible`` and ``unbounded`` into ``error``), no
    ``unbounded`` for a bounded kind, no solution on error. The one copy of ``result`` it makes
    carries the fields the seam sets: the model's name, ``backend``, ``runtime_s`` and ``extra``
    (each, when not given, as ``result`` has it)."""
    if backend is None:
        backend = result.backend
    if runtime_s is None:
        runtime_s = result.runtime_s
    if extra is None:
        extra = result.extra
    term = result.termination
    if term is Termination.ERROR:
        status = result.extra.get("solver_status")
        said = result.message or "the backend failed" + (f" (its solver's status: {status})" if status else "")
        return _error(model, result, said, backend, runtime_s, extra)
    if loosened_feasibility and (term is Termination.INFEASIBLE or term is Termination.UNBOUNDED):
        return _error(model, result, f"the solver said {term.value}, but the options {loosened_feasibility} change "
                                     "what that proves", backend, runtime_s, extra)
    bound = _finite_or_none(result.bound)
    if term is Termination.OPTIMAL and result.bound is not None and bound is None and (
            math.isnan(result.bound) or (result.bound < 0) == model.maximize):  # NaN, or infinite past every objective
        term = Termination.FEASIBLE  # an answer whose proof is absurd proves nothing
        extra = {**extra, "optimality": f"not certified: the solver's bound is {result.bound}"}
    if result.solution is not None and (term is Termination.INFEASIBLE or (term is Termination.UNBOUNDED and model.bounded)):
        return _error(model, result, f"the solver said {term.value} but returned a solution", backend, runtime_s, extra)
    if loosened and not loosened_feasibility and BOUND_PROOF in result.extra:
        loosened = None  # weak duality proves its bound at any gap; a looser feasibility lets x's objective pass it
    if loosened and bound is not None:  # a bound at loosened tolerances is not proven (SCIP's lay past its objective)
        extra = {**extra, "unproven_bound": bound}
        bound = None
    solution = result.solution
    if solution is None:
        if term is Termination.INFEASIBLE and _feasible_at_zero(model):
            return _error(model, result, "the solver said infeasible, but choosing nothing (x = 0) is feasible",
                          backend, runtime_s, extra)
        if term is Termination.UNBOUNDED and model.bounded:
            return _error(model, result, "the solver said unbounded, but every variable of this "
                                         f"{model.name} is bounded", backend, runtime_s, extra)
        if term is Termination.OPTIMAL or term is Termination.FEASIBLE:
            return _error(model, result, f"backend said {term.value} but returned no solution", backend, runtime_s, extra)
        return sealed(term, None, bound, None, runtime_s, result.iterations, result.duals,
                      result.best_bound, model.name, backend, extra)
    try:
        if verify:
            problems, objective = model.audit(solution, tol=VERIFY_TOL)
            if problems:
                return _error(model, result, f"returned solution is infeasible: {problems[0]}", backend, runtime_s, extra)
        else:
            objective = model.objective(solution)
    except ValueError as exc:  # not a solution of this kind at all (a custom backend's text, bools, NaN)
        return _error(model, result, f"returned solution is not a {model.name} solution: {exc}", backend, runtime_s, extra)
    if not math.isfinite(objective):
        return _error(model, result, f"the solution's objective is not finite ({objective})", backend, runtime_s, extra)
    if result.objective is not None and not agrees_at_scale(model, objective, result.objective):
        return _error(model, result, f"reported objective {result.objective} but the solution's is {objective}",
                      backend, runtime_s, extra)
    if bound is not None and _beyond(model, objective, bound):
        extra = {**extra, "unproven_bound": bound, "optimality": f"not certified: the solver's bound {bound:.10g} lies "
                                                                  f"past its own verified objective {objective:.10g}"}
        bound = None
        if term is Termination.OPTIMAL:
            term = Termination.FEASIBLE
    if term is Termination.OPTIMAL and bound is not None and not agrees_at_scale(model, objective, bound):
        term = Termination.GAP_LIMIT
        extra = {**extra, "message": f"the solver stopped with objective {objective:.10g} and bound "
                                     f"{bound:.10g} further apart than {OBJECTIVE_RTOL:g} (a gap option?)"}
    elif term is Termination.OPTIMAL and loosened:
        term = Termination.FEASIBLE
        extra = {**extra, "optimality": f"not certified: the options {loosened} change what the solver's optimal proves"}
    return sealed(term, objective, bound, solution, runtime_s, result.iterations, result.duals, result.best_bound,
                  model.name, backend, extra)


def _beyond(model: Model, objective: float, bound: float) -> bool:
    """A verified objective beats the bound (above an upper bound, below a lower one) by more
    than their agreement: the bound is wrong."""
    past = objective > bound if model.maximize else objective < bound
    return past and not agrees_at_scale(model, objective, bound)


def _feasible_at_zero(model: Model) -> bool:
    """The model's own math accepts its zero solution (a witness against "infeasible")."""
    try:
        zero = model.zero_solution()
    except ValueError:  # a kind whose zero solution cannot be written (none so far)
        return False
    return zero is not None and not model.violations(zero, tol=VERIFY_TOL)


def _number_or_none(x: Any) -> bool:
    return x is None or type(x) is float or (isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool))


def _as_result(returned: Any) -> Result:
    """What a backend's ``run`` returned that is not a plain :class:`Result` (a custom backend's
    None, a termination given as text, a bound that is no number), as one the seam's rules can
    judge: the termination's text made a :class:`Termination`, anything else an error result
    naming it. (A text termination skipped every rule: ``"optimal"`` with no solution stood.)"""
    if not isinstance(returned, Result):
        return Result(Termination.ERROR, extra={"message": f"the backend returned {type(returned).__name__}, not a Result"})
    term = returned.termination
    if not isinstance(term, Termination):
        if not isinstance(term, str) or term not in Termination._value2member_map_:
            return Result(Termination.ERROR, extra={"message": f"the backend returned the termination {term!r}, not one "
                                                               f"of {', '.join(t.value for t in Termination)}"})
        returned = returned.replace(termination=Termination(term))
    for name in ("objective", "bound"):
        value = getattr(returned, name)
        if not _number_or_none(value):
            return Result(Termination.ERROR, extra={"message": f"the backend returned the {name} {value!r}, not a number"})
    if not isinstance(returned.extra, Mapping):
        return Result(Termination.ERROR, extra={"message": f"the backend returned extra {returned.extra!r}, not a mapping"})
    iterations = returned.iterations
    if iterations is not None and (isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer))):
        return Result(Termination.ERROR, extra={"message": f"the backend returned iterations {iterations!r}, not a count"})
    return returned.replace(extra=dict(returned.extra), iterations=None if iterations is None else int(iterations))


def _finite_or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _error(model: Model, result: Result, message: str, backend: str, runtime_s: float,
           extra: Mapping[str, Any]) -> Result:
    """``result`` as an error: no solution, objective, bound or duals; ``message`` in ``extra``."""
    return sealed(Termination.ERROR, None, None, None, runtime_s, result.iterations, None, result.best_bound,
                  model.name, backend, {**extra, "message": message})


def prepare(kind_or_model: Any, backend: str | None = None, *, verify: bool = True, warm_up: bool = True,
            **options: Any) -> Prepared:
    """Make ``backend`` ready for models of a kind (a model, its class or its kind name).

    Raises ValueError (naming the backend or option) for a backend that does not fit the kind
    or is not installed, and for options outside the backend's schema. With ``backend=None`` it
    takes the first available exact backend that fits (the instance, when a model is given)."""
    return _prepared(kind_or_model, backend, verify, warm_up, options)


def _prepared(kind_or_model: Any, backend: str | None, verify: bool, warm_up: bool,
              options: Mapping[str, Any]) -> Prepared:
    """:func:`prepare` with the backend's options as one mapping (``solve`` passes its own
    through, so an option named ``warm_up`` is the backend's, and refused by its schema)."""
    kind = model_kind(kind_or_model)
    chosen = choose_backend(kind_or_model, backend)
    checked = chosen.check_options(options)
    flag("verify", verify)
    flag("warm_up", warm_up)
    return Prepared(chosen, kind, checked, given=options, verify=verify, warm_up=warm_up)


def _check_backend_name(backend: Any) -> None:
    if backend is not None and not isinstance(backend, str):
        raise ValueError(f"backend: expected a backend name, got {backend!r}")


def solve(
    model: Model,
    backend: str | None = None,
    *,
    time_limit: float | None = None,
    verify: bool = True,
    **options: Any,
) -> Result:
    """Solve ``model`` with ``backend`` (default: the first available exact backend that fits):
    :func:`prepare` and one :meth:`Prepared.solve`.

    Options are the backend's own (see ``optsched backends``); an unknown one, a wrong type or a
    value out of range is a ``ValueError``. With ``verify`` the returned solution is checked
    against the model's own feasibility test and objective; a mismatch turns the result into
    ``error``. ``runtime_s`` is wall time around the backend call (apply, solve, invert);
    ``extra["setup_s"]`` what the preparation took (imports, kernel compilation; 0 after the
    first solve of a kind in a process). Backends without ``SUPPORTS_TIME_LIMIT`` do bounded
    work and ignore ``time_limit``; their result's ``extra["time_limit"]`` says so.
    """
    if not isinstance(model, Model):
        raise ValueError(f"model: expected an optsched model, got {type(model).__name__}")
    _check_backend_name(backend)  # before the reuse key: a list cannot key the kept Prepared
    flag("verify", verify)
    key = _reuse_key(model, backend, verify, options)
    prepared = _REUSED.get(key) if key is not None else None
    setup_s = 0.0
    if prepared is None:
        prepared = _prepared(model, backend, verify, True, options)
        setup_s = prepared.setup_s
        if key is not None and prepared.state is None:  # stateless: nothing carries over between solves
            if len(_REUSED) >= 256:
                _REUSED.clear()
            _REUSED[key] = prepared
    return prepared._solve(model, time_limit, {}, {"setup_s": setup_s})


# solve() keeps the Prepared of a named, stateless backend (no warm-start state) per kind,
# verify flag and options: a one-off call then costs what a policy's loop pays per solve
_REUSED: dict[tuple[Any, ...], Prepared] = {}


def _reuse_key(model: Model, backend: str | None, verify: bool, options: Mapping[str, Any]) -> tuple[Any, ...] | None:
    if backend is None:  # the default backend depends on the instance
        return None
    if not options:
        return type(model), backend, bool(verify), ()
    key = (type(model), backend, bool(verify), tuple(sorted((k, type(v), v) for k, v in options.items())))
    try:
        hash(key)
    except TypeError:  # an unhashable option value (a list): prepare afresh
        return None
    return key


def best_bound(model: Model, results: Iterable[Result]) -> float | None:
    """Tightest proven bound: the least upper bound (max) or greatest lower bound (min).

    A proven-optimal objective is a bound too. A bound that a verified solution beats was off by
    the solver's tolerance (e.g. Clarabel's optimum 3e-10 below the KKT solver's), so the bound
    is never tighter than the best objective found."""
    bounds, found = [], []
    for r in results:
        if r.termination is Termination.OPTIMAL and r.objective is not None:
            bounds.append(r.objective)
        if r.bound is not None and r.termination is not Termination.ERROR:
            bounds.append(r.bound)
        if r.objective is not None and r.termination not in (Termination.ERROR, Termination.INFEASIBLE):
            found.append(r.objective)  # the seam keeps an objective only with a verified solution
    if not bounds:
        return None
    if model.maximize:
        return max([min(bounds), *found])
    return min([max(bounds), *found])


def with_best_bound(model: Model, results: list[Result]) -> list[Result]:
    """``results`` of one instance, each with ``best_bound`` set (:func:`best_bound` over all)."""
    best = best_bound(model, results)
    return [r.replace(best_bound=best) for r in results]


def _solve_repeated(model: Model, name: str, options: Mapping[str, Any], time_limit: float | None,
                    repeats: int) -> tuple[Result, float]:
    """Prepare ``name`` once, solve ``repeats`` times; the last result with the median runtime,
    and the set-up seconds (a process-pool task of :func:`compare`)."""
    import statistics

    prepared = prepare(model, name, **options)
    runtimes = []
    for _ in range(repeats):
        last = prepared.solve(model, time_limit=time_limit)
        runtimes.append(last.runtime_s)
    return last.replace(runtime_s=statistics.median(runtimes)), prepared.setup_s


def compare(
    model: Model,
    backends: Iterable[str] | None = None,
    *,
    time_limit: float | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    repeats: int = 1,
    jobs: int = 1,
    results: bool = False,
) -> Any:
    """Solve ``model`` with each backend (``options``: per-backend options by name); one row per
    backend with termination, objective, bound, the two gaps, the median runtime over
    ``repeats`` solves (set-up excluded) and the set-up seconds. ``jobs > 1`` solves the
    backends in that many processes at once (runtimes then share the machine). With ``results``
    it returns ``(table, [Result, ...])``.

    Every backend's name and options are checked before the first solve, so a bad name or
    option fails before anything runs; no backend's set-up counts as solve time."""
    import pandas as pd

    if not isinstance(model, Model):
        raise ValueError(f"model: expected an optsched model, got {type(model).__name__}")
    if backends is None:
        names = [b.NAME for b in fitting_backends(model)]
    elif isinstance(backends, str) or not isinstance(backends, Iterable):
        raise ValueError(f"backends: expected a list of backend names, got {backends!r}")
    else:
        names = list(backends)
        if not names:
            raise ValueError("backends: name at least one backend (None compares every one that fits)")
        for name in names:
            if not isinstance(name, str):
                raise ValueError(f"backends: expected backend names, got {name!r}")
        if isinstance(backends, (set, frozenset)):  # no order of its own: the table's rows sorted
            names.sort()
    if options is not None and not isinstance(options, Mapping):
        raise ValueError(f"options: expected a table of options per backend, got {options!r}")
    options = dict(options or {})
    for name, table in options.items():
        if not isinstance(table, Mapping):
            raise ValueError(f"options: {name!r} expects a table of that backend's options, got {table!r}")
    unknown = sorted(set(options) - set(names), key=repr)
    if unknown:
        raise ValueError(f"options: {unknown[0]!r} is not one of the compared backends")
    whole_number("repeats", repeats)
    whole_number("jobs", jobs, maximum=MAX_WORKERS)
    flag("results", results)
    if time_limit is not None:
        time_limit = finite_float("time_limit", time_limit, minimum=0.0, largest=math.inf)
    within_memory("repeats", repeats * len(names), "the runtimes kept for the medians (repeats x backends)", where="")
    for name in names:
        check_backend(model, name, options.get(name, {}))
    tasks = [(model, name, dict(options.get(name, {})), time_limit, repeats) for name in names]
    if jobs > 1 and len(names) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            outcomes = list(pool.map(_solve_repeated, *zip(*tasks)))
    else:
        outcomes = [_solve_repeated(*task) for task in tasks]
    solved = with_best_bound(model, [r for r, _ in outcomes])
    table = pd.DataFrame([
        {
            "backend": r.backend,
            "termination": r.termination.value,
            "objective": r.objective,
            "bound": r.bound,
            "gap_to_own_bound": r.gap_to_own_bound,
            "gap_to_best_bound": r.gap_to_best_bound,
            "runtime_s": r.runtime_s,
            "setup_s": setup,
        }
        for r, (_, setup) in zip(solved, outcomes)
    ])
    return (table, solved) if results else table
