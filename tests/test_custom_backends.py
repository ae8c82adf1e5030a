"""A backend registered by a user (``@register_backend``) is held to the seam's rules whatever
its ``run`` returns: a termination given as text skipped every rule ("optimal" with no solution
stood), and a ``None``, a bound of text or a solution of bools crashed the solve instead of
giving an error result. Registration refuses names and kinds that cannot work."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import optsched
from optsched.models.set_packing import SetPacking
from optsched.result import Result, Termination
from optsched.solvers import registry
from optsched.solvers.registry import Availability, Backend, register_backend

MODEL = SetPacking(3, [[0, 1], [1, 2], [0]], [1.0, 1.0, 1.0])  # optimum 2: sets 1 and 2


@pytest.fixture(autouse=True)
def private_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backends registered here are gone after the test (and no prepared one is reused)."""
    import importlib

    seam = importlib.import_module("optsched.solve")  # the module, not the function optsched.solve
    monkeypatch.setattr(registry, "_BACKENDS", dict(registry._BACKENDS))
    monkeypatch.setattr(seam, "_REUSED", {})


def custom(name: str, returns: Callable[[Any], Any], **attrs: Any) -> str:
    body = {"NAME": name, "DESCRIPTION": "test", "EXACT": True, "MODELS": frozenset({"set_packing"}), "OPTIONS": {},
            "run": lambda self, model, *, time_limit, options, state=None: returns(model), **attrs}
    register_backend(type(name, (Backend,), body))
    return name


def test_a_termination_given_as_text_is_judged_as_the_enum_is() -> None:
    assert optsched.solve(MODEL, custom("text_no_solution", lambda m: Result("optimal"))).termination \
        is Termination.ERROR
    text = optsched.solve(MODEL, custom("text_gap", lambda m: Result("optimal", 1.0, 100.0, np.array([2]))))
    enum = optsched.solve(MODEL, custom("enum_gap", lambda m: Result(Termination.OPTIMAL, 1.0, 100.0, np.array([2]))))
    assert text.termination is enum.termination is Termination.GAP_LIMIT
    good = optsched.solve(MODEL, custom("text_good", lambda m: Result("optimal", 2.0, 2.0, np.array([1, 2]))))
    assert good.termination is Termination.OPTIMAL and good.objective == 2.0
    bogus = optsched.solve(MODEL, custom("text_bogus", lambda m: Result("bogus", 2.0, 2.0, np.array([1, 2]))))
    assert bogus.termination is Termination.ERROR and "'bogus'" in bogus.message


@pytest.mark.parametrize("returned, needle", [
    (None, "returned NoneType, not a Result"),
    ({"termination": "optimal"}, "returned dict, not a Result"),
    (Result(Termination.OPTIMAL, 2.0, "2", np.array([1, 2])), "the bound '2', not a number"),
    (Result(Termination.OPTIMAL, 2.0, 2 + 0j, np.array([1, 2])), "the bound (2+0j), not a number"),
    (Result(Termination.OPTIMAL, True, 2.0, np.array([1, 2])), "the objective True, not a number"),
    (Result(Termination.OPTIMAL, 2.0, 2.0, np.array([False, True, True])), "not a set_packing solution"),
    (Result(Termination.OPTIMAL, 2.0, 2.0, np.array([np.nan, 1.0])), "set_packing solution"),
    (Result(Termination.OPTIMAL, 2.0, 2.0, "1 2"), "not a set_packing solution"),
    (Result(Termination.OPTIMAL, 2.0, 2.0, np.array([1, 2]), extra=[1]), "extra [1], not a mapping"),
    (Result(Termination.OPTIMAL, 2.0, 2.0, np.array([1, 2]), iterations="many"), "iterations 'many', not a count"),
    (Result(Termination.INFEASIBLE, 2.0, None, np.array([1, 2])), "said infeasible but returned a solution"),
    (Result("unbounded", 2.0, None, np.array([1, 2])), "said unbounded but returned a solution"),
    (Result(Termination.OPTIMAL, 99.0, 99.0, np.array([1, 2])), "reported objective 99.0 but the solution's is 2.0"),
    (Result(Termination.FEASIBLE, 2.5, None, np.array([1, 2])), "reported objective 2.5 but the solution's is 2.0"),
])
def test_what_is_not_a_result_is_an_error_result(returned: Any, needle: str) -> None:
    r = optsched.solve(MODEL, custom("garbage", lambda m: returned))
    assert r.termination is Termination.ERROR and r.solution is None and needle in r.message, r.message


@pytest.mark.parametrize("bound", [float("nan"), -float("inf")])
def test_an_optimal_whose_bound_is_nan_or_past_every_objective_is_feasible(bound: float) -> None:
    r = optsched.solve(MODEL, custom("absurd_bound", lambda m: Result(Termination.OPTIMAL, 2.0, bound, np.array([1, 2]))))
    assert r.termination is Termination.FEASIBLE and r.bound is None and str(bound) in r.extra["optimality"]
    r = optsched.solve(MODEL, custom("no_bound", lambda m: Result(Termination.OPTIMAL, 2.0, float("inf"), np.array([1, 2]))))
    assert r.termination is Termination.OPTIMAL and r.bound is None  # +inf on a maximisation: no bound, not a wrong one


@pytest.mark.parametrize("name", ["", "HIGHS", "Mine", "2fast", "has space", "dash-ed", None, 7])
def test_a_name_that_cannot_be_typed_or_clashes_by_case_is_refused(name: Any) -> None:
    with pytest.raises(ValueError, match="NAME must be lower case"):
        custom(name, lambda m: None) if isinstance(name, str) else register_backend(
            type("Odd", (Backend,), {"NAME": name, "DESCRIPTION": "", "EXACT": True}))
    assert name not in registry.all_backends()


def test_a_kind_that_is_not_registered_or_a_non_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="model kinds that are not registered: set_pakcing"):
        custom("typo_kind", lambda m: None, MODELS=frozenset({"set_pakcing"}))
    with pytest.raises(ValueError, match="expected a Backend subclass"):
        register_backend(lambda: None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="registered twice"):
        custom("greedy", lambda m: None)


def test_a_backend_whose_instance_check_raises_is_passed_by_not_a_crash() -> None:
    def broken(self: Backend, model: Any) -> str | None:
        raise RuntimeError("license server down")

    custom("broken_fit", lambda m: None, fits_instance=broken, PRIORITY=0)
    assert "broken_fit" not in optsched.backends(MODEL) and "highs" in optsched.backends(MODEL)
    assert optsched.solve(MODEL).termination is Termination.OPTIMAL


def test_a_backend_whose_availability_check_fails_is_unavailable_not_a_crash() -> None:
    def broken(self: Backend) -> Availability:
        raise RuntimeError("license server down")

    custom("broken_check", lambda m: None, available=broken, PRIORITY=0)
    listed = {b.NAME for b in registry.fitting_backends(MODEL)}
    assert "broken_check" not in listed and "highs" in listed
    assert optsched.solve(MODEL).termination is Termination.OPTIMAL  # the default choice passes it by
    with pytest.raises(ValueError, match="its availability check failed: RuntimeError: license server down"):
        optsched.solve(MODEL, "broken_check")


def test_the_warm_up_compiles_the_kernels_a_time_limit_would_leave_to_the_first_solve(monkeypatch) -> None:
    """Probe AY: dp compiles its kernels one after another and checks its time limit between
    them; under the warm-up's limit only the first compiled on an empty numba cache, and the
    first real solve (a knapsack of 3 items) took 8 s of runtime_s. A backend whose second
    kernel compiles at its first call (a sleep stands for the compilation here) has both
    compiled by prepare now."""
    import importlib
    import time

    seam = importlib.import_module("optsched.solve")
    monkeypatch.setattr(seam, "_WARMED", set())
    monkeypatch.setattr(seam, "WARM_UP_TIME_LIMIT_S", 0.01)
    compiled: list[str] = []

    def run(self, model, *, time_limit, options, state=None):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        for kernel in ("first", "second"):
            if kernel not in compiled:
                time.sleep(0.05)
                compiled.append(kernel)
            if time_limit is not None and time.perf_counter() - start > time_limit:
                return Result(Termination.TIME_LIMIT)
        return Result(Termination.OPTIMAL, 2.0, 2.0, np.array([1, 2]))

    register_backend(type("staged", (Backend,), {"NAME": "staged", "DESCRIPTION": "test", "EXACT": True,
                                                 "MODELS": frozenset({"set_packing"}), "OPTIONS": {}, "run": run}))
    prepared = optsched.prepare(MODEL, "staged")
    assert compiled == ["first", "second"]
    assert prepared.solve(MODEL, time_limit=0.01).termination is Termination.OPTIMAL


@pytest.mark.parametrize("compiled", [False, True])
def test_the_warm_up_runs_a_backend_at_its_defaults_only_to_compile_kernels(monkeypatch, compiled: bool) -> None:
    """The warm-up's pass at the default options compiles the kernels of a backend's usual
    route (``Backend.COMPILED``). A custom backend slow at its defaults stalled ``prepare`` under
    cheap options given; it is now warmed up at the options given only, unless they are its
    defaults."""
    import importlib

    from optsched.solvers.registry import Option

    seam = importlib.import_module("optsched.solve")
    monkeypatch.setattr(seam, "_WARMED", set())
    seen: list[str] = []

    def run(self, model, *, time_limit, options, state=None):  # type: ignore[no-untyped-def]
        seen.append(options["effort"])
        return Result(Termination.OPTIMAL, 2.0, 2.0, np.array([1, 2]))

    name = f"effort_{compiled}".lower()
    register_backend(type(name, (Backend,), {
        "NAME": name, "DESCRIPTION": "test", "EXACT": True, "MODELS": frozenset({"set_packing"}), "COMPILED": compiled,
        "OPTIONS": {"effort": Option("high", str, choices=("high", "low"))}, "run": run}))
    optsched.prepare(MODEL, name, effort="low")
    assert seen == (["high", "low"] if compiled else ["low"])
    seen.clear()
    optsched.prepare(MODEL, name)  # the defaults: warmed up once, at its defaults
    assert seen == ([] if compiled else ["high"])
