"""Every registered backend appears in the test matrix, and every matrix entry names a test
module that really exercises it (after Pyomo contrib.solver's registry test: a full run of the
default selection records the modules each backend's solves come from, ``tests/conftest.py``,
and fails on an entry whose module never solved with it); and across the
whole registry: solves print and warn nothing, and every option value in range gives a result."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import optsched
from optsched.models.base import kind_specs, model_kinds
from optsched.result import Termination
from optsched.solvers.registry import Option, all_backends, fitting_backends, get_backend

HERE = Path(__file__).parent

# backend -> the test modules that run it against an oracle
BACKEND_MATRIX: dict[str, tuple[str, ...]] = {
    "brute_force": ("test_set_packing.py", "test_budgeted_ip.py", "test_escb.py", "test_pseudo_welfare.py", "test_onsocmax_offline.py"),
    "cpsat": ("test_set_packing.py", "test_maxweight.py", "test_budgeted_ip.py", "test_orlib.py"),
    "highs": ("test_set_packing.py", "test_maxweight.py", "test_budgeted_ip.py", "test_orlib.py", "test_projection.py", "test_pseudo_welfare.py", "test_onsocmax_offline.py"),
    "pyomo": ("test_set_packing.py", "test_budgeted_ip.py", "test_orlib.py", "test_projection.py"),
    "greedy": ("test_set_packing.py", "test_maxweight.py"),
    "enumerate": ("test_maxweight.py", "test_set_packing.py"),
    "scip": ("test_escb.py", "test_set_packing.py"),
    "cvxpy": ("test_projection.py", "test_pseudo_welfare.py", "test_onsocmax_offline.py", "test_stationary_allocation.py"),
    "dp": ("test_budgeted_ip.py", "test_orlib.py"),
    "budget_exact": ("test_budgeted_ip.py",),
    "aescb": ("test_escb.py",),
    "escb_oa": ("test_escb.py",),
    "fast": ("test_projection.py", "test_ogasched.py"),
    "paper": ("test_projection.py",),
    "kkt": ("test_pseudo_welfare.py", "test_onsocmax_policy.py"),
    "alm": ("test_pseudo_welfare.py",),
    "stationary_alm": ("test_stationary_allocation.py", "test_fuzz.py"),
}


def test_registry_matches_matrix() -> None:
    assert set(all_backends()) == set(BACKEND_MATRIX)


def test_matrix_modules_name_their_backend() -> None:
    """A cheap static check for partial runs; the full run's observed solves are the real one."""
    for backend, modules in BACKEND_MATRIX.items():
        for module in modules:
            text = (HERE / module).read_text()
            assert f'"{backend}"' in text, (backend, module)


def test_every_backend_is_available_or_says_why() -> None:
    for name, backend in all_backends().items():
        avail = backend.available()
        assert avail.ok or avail.reason, name


def test_every_backend_fits_some_registered_model_kind() -> None:
    from optsched.models.base import model_kinds

    kinds = model_kinds()
    for name, b in all_backends().items():
        fits = {k for k, cls in kinds.items() if b.fits_kind(cls) is None}
        assert fits, name
    assert optsched.backends()  # names listed


def test_capability_flags_exclude_unfit_kinds() -> None:
    from optsched.models.capacity_projection import CapacityProjection

    assert all_backends()["cpsat"].fits_kind(CapacityProjection) is not None  # a continuous QP
    assert all_backends()["highs"].fits_kind(CapacityProjection) is None


def _scaled(obj: Any, factor: float) -> Any:
    """A model's dict with every float multiplied by ``factor`` (counts and names kept)."""
    if isinstance(obj, dict):
        return {k: v if k == "model" else _scaled(v, factor) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scaled(v, factor) for v in obj]
    return obj * factor if isinstance(obj, float) else obj


@pytest.mark.parametrize("kind", sorted(kind_specs()))
def test_admits_says_why_and_never_raises_at_extreme_scales(kind: str) -> None:
    """Whether a backend takes a valid instance is an answer (None or the reason), never an
    exception: ``optsched.backends(model)`` asks every backend (the DP raised on whole numbers of
    1e99, beyond its int64 table, for budgeted IPs and budget families)."""
    from optsched.generators import generate
    from optsched.models import model_from_dict

    for factor in (1e99, 1e19, 1e-99, 1e-300):
        try:
            model = model_from_dict(_scaled(generate(kind, 4, np.random.default_rng(0)).to_dict(), factor))
        except ValueError:  # beyond what the kind holds (1e100): refused on construction
            continue
        for name in all_backends():
            backend = get_backend(name)
            if backend.fits_kind(type(model)) is None:
                reason = backend.admits(model)
                assert reason is None or (isinstance(reason, str) and reason.startswith(f"{name}:")), (name, factor, reason)
        optsched.backends(model)


def test_forms_are_derived_from_the_protocols_a_model_implements() -> None:
    from dataclasses import dataclass

    import pytest

    from optsched.models.base import Model, model_kinds
    from optsched.models.forms import FORM_PROTOCOLS, forms_of

    kinds = model_kinds()
    assert kinds["set_packing"].FORMS == {"standard", "pyomo", "binary"} | (kinds["set_packing"].FORMS & {"cvxpy"})
    # the non-partitionable kinds are 0-1 programs: their cvxpy form is the 0-1 program (from the
    # standard form), never the inherited continuous relaxation
    import numpy as np

    from optsched.generators import generate
    from optsched.models.forms import as_cvxpy

    for name in ("pseudo_welfare_integral", "onsocmax_offline_integral", "set_packing", "budgeted_ip"):
        problem, _ = as_cvxpy(generate(name, 3, np.random.default_rng(0))).to_cvxpy()
        assert problem.is_mixed_integer(), name
    problem, _ = as_cvxpy(generate("pseudo_welfare", 3, np.random.default_rng(0))).to_cvxpy()
    assert not problem.is_mixed_integer()
    for kind, cls in kinds.items():
        for form in cls.FORMS:
            assert all(callable(getattr(cls, m)) or isinstance(getattr(cls, m), property)
                       for m in vars(FORM_PROTOCOLS[form]) if not m.startswith("_")), (kind, form)

    @dataclass(frozen=True)
    class HalfStandard(Model):
        def to_standard_form(self) -> None: ...

    with pytest.raises(ValueError, match="solution_from_vector"):
        forms_of(HalfStandard)


def test_traits_come_from_each_instance_form() -> None:
    import numpy as np

    from optsched.models.linear_program import LinearProgram
    from optsched.solvers.registry import get_backend

    cpsat = get_backend("cpsat")
    assert cpsat.fits_kind(LinearProgram) is None  # some linear programs are pure integer
    lp = dict(c=[1.0, 1.0], A=[[1.0, 1.0]], row_lower=[-np.inf], row_upper=[3.0], col_lower=[0.0, 0.0],
              col_upper=[2.0, 2.0], sense="max")
    assert cpsat.fits(LinearProgram(**lp, integrality=[True, True])) is None
    assert "continuous variables" in cpsat.fits(LinearProgram(**lp, integrality=[True, False]))


@pytest.fixture(scope="module")
def solvers_imported() -> None:
    """Every available backend has solved a tiny instance of every kind it fits, outside any
    test's output capture: a solver package first imported under ``capfd`` (Pyomo) binds its
    log handler to that test's stream, which is closed after the test, and later solves in
    the session then fail on it."""
    for kind, spec in kind_specs().items():
        model = spec.generate(spec.tiny, np.random.default_rng(0))
        for backend in fitting_backends(model):
            optsched.solve(model, backend.NAME)


@pytest.mark.usefixtures("solvers_imported")
@pytest.mark.parametrize("time_limit", [None, 1e-4, 1e300], ids=["to-the-end", "stopped", "a-limit-beyond-any-solver's"])
def test_solves_neither_print_nor_warn(time_limit: float | None, capfd: pytest.CaptureFixture[str],
                                       caplog: pytest.LogCaptureFixture) -> None:
    """What a solve has to say goes into its Result (termination, ``extra``), never onto the
    terminal: no Python warning, no log record at WARNING or above and nothing written to
    stdout or stderr (the solver libraries' C code included), for every available backend of
    every model kind, run to the end, stopped by a tight time limit, and under a limit longer
    than a solver takes (SCIP refuses limits/time above 1e20 s)."""
    solved = 0
    for kind, spec in sorted(kind_specs().items()):
        model = spec.generate(spec.tiny + 3, np.random.default_rng(1))
        for backend in fitting_backends(model):
            with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING):
                warnings.simplefilter("always")
                optsched.solve(model, backend.NAME, time_limit=time_limit)
            out, err = capfd.readouterr()
            where = f"{kind} on {backend.NAME}"
            assert not caught, f"{where} warned: {caught[0].message}"
            assert not out and not err, f"{where} printed: {(out + err)[:200]!r}"
            assert not [r for r in caplog.records if r.levelno >= logging.WARNING], f"{where} logged a warning"
            caplog.clear()
            solved += 1
    assert solved >= 2 * len(kind_specs())


def _edge_values(option: Option) -> list[Any]:
    """Each choice, both booleans, or the ends of a number's range with 0, 1 and 2 inside it."""
    if option.kind is bool:
        return [True, False]
    if option.choices:
        return list(option.choices)
    if option.kind not in (int, float):
        return []
    low = -1e12 if option.minimum is None else option.minimum
    high = 1e12 if option.maximum is None else option.maximum
    values = []
    for v in (low, high, 0, 1, 2):
        if option.open_minimum and v <= low:
            v = low + (1 if option.kind is int else 1e-9)
        if low <= v <= high:
            values.append(option.kind(v))
    return values


def _cvxpy_problem(model: Any) -> Any:
    from optsched.models.forms import as_cvxpy

    return as_cvxpy(model).to_cvxpy()[0]


# (backend, option, value or None for any number) -> when an error result is the right answer
# an option that sets an instance-level limit: below what the instance needs, the seam refuses
# the instance (Backend.fits_with) naming the option, before the solve
_OPTION_REFUSALS: dict[tuple[str, str], str] = {("dp", "max_table_cells"): "(max_table_cells)"}
_EXPECTED_ERRORS: dict[tuple[str, str, Any], Callable[[Any, Any], bool]] = {
    ("paper", "repair", False): lambda model, v: True,  # Algorithm 1 as printed leaves the box (projection_paper)
    **{("cvxpy", "solver", solver): (lambda model, v: _cvxpy_problem(model).is_mixed_integer())  # conic, continuous
       for solver in ("CLARABEL", "SCS")},
    ("cvxpy", "solver", "OSQP"): lambda model, v: _cvxpy_problem(model).is_mixed_integer() or not _cvxpy_problem(model).is_qp(),
    ("cvxpy", "solver", "HIGHS"): lambda model, v: not _cvxpy_problem(model).is_qp(),  # LP, QP and MILP only
}


@pytest.mark.usefixtures("solvers_imported")
@pytest.mark.parametrize("name", sorted(all_backends()))
def test_every_option_value_in_range_gives_a_result(name: str, capfd: pytest.CaptureFixture[str]) -> None:
    """Every option of every backend at the ends of its range, at each choice and each
    boolean, on a small instance of every kind the backend solves (2 s time limit): a verified
    solution or a limit's status (an error only where ``_EXPECTED_ERRORS`` says why it is the
    right answer, with its message), or a ValueError about the options (cross-option rules);
    never another exception, a hang or output. Found: HiGHS's ``threads`` failed whenever it
    differed from the first solve's, and an iteration limit of 10^12 made the warm-up run
    without end."""
    backend = all_backends()[name]
    if not backend.available():
        pytest.skip(backend.available().reason)
    tried = 0
    for kind, spec in sorted(kind_specs().items()):
        if backend.fits_kind(model_kinds()[kind]) is not None:
            continue
        model = spec.generate(spec.tiny + 2, np.random.default_rng(3))
        if backend.admits(model) is not None:
            continue
        for option, schema in backend.OPTIONS.items():
            for value in _edge_values(schema):
                try:
                    result = optsched.solve(model, name, time_limit=2.0, **{option: value})
                except ValueError as exc:
                    refusal = _OPTION_REFUSALS.get((name, option))
                    assert str(exc).startswith("options:") or (refusal is not None and refusal in str(exc)), \
                        (kind, option, value, exc)
                    continue
                tried += 1
                expected = _EXPECTED_ERRORS.get((name, option, value if isinstance(value, (bool, str)) else None))
                if result.termination is Termination.ERROR and expected is not None and expected(model, value):
                    assert result.message, (kind, option, value)
                else:  # a valid option on a small feasible instance: a verified solution, or a limit
                    assert result.ok or result.termination.stopped_early, (kind, option, value, result.message)
                out, err = capfd.readouterr()
                assert not out and not err, (kind, option, value, (out + err)[:200])
    if any(_edge_values(s) for s in backend.OPTIONS.values()):
        assert tried > 0


@pytest.mark.usefixtures("solvers_imported")
def test_a_pass_through_value_the_solver_refuses_is_said_in_the_result_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    """OSQP printed "ERROR in validate_settings" (printf) and SCIP "[paramset.c] ERROR" (stderr)
    when a pass-through value was out of their range: the text now goes into the error (cvxpy's
    schema checks each value, so -1 is refused before; a combination it does not know, eps_abs and
    eps_rel both 0, is OSQP's to refuse)."""
    projection = kind_specs()["capacity_projection"].generate(6, np.random.default_rng(0))
    knapsack = kind_specs()["budgeted_ip"].generate(6, np.random.default_rng(0))
    if get_backend("cvxpy").available():
        result = optsched.solve(projection, "cvxpy", solver="OSQP", solver_options={"eps_abs": 0.0, "eps_rel": 0.0})
        assert result.termination is Termination.ERROR and "at least one of eps_abs and eps_rel" in result.message
        with pytest.raises(ValueError, match="'alpha' must be < 2"):
            optsched.solve(projection, "cvxpy", solver="OSQP", solver_options={"alpha": 2.0})
    if get_backend("scip").available():
        with pytest.raises(ValueError, match=r"SCIP rejects 'numerics/feastol' = 0.5 .*Must be in range"):
            optsched.solve(knapsack, "scip", scip_params={"numerics/feastol": 0.5})
    out, err = capfd.readouterr()
    assert not out and not err, (out + err)[:300]


def test_a_backend_is_compiled_exactly_when_its_module_calls_a_solver_kernel() -> None:
    """``Backend.COMPILED`` makes the warm-up compile a backend's usual route at its defaults
    whatever options are given; a kernel backend without it would leave its compilation to the
    first real solve under other options, and the flag on one without kernels makes ``prepare``
    solve twice for nothing."""
    import inspect
    import re

    for name, backend in all_backends().items():
        source = inspect.getsource(inspect.getmodule(type(backend)))
        calls_kernel = re.search(r"optsched\.solvers(\.| import )\w+_kernel", source) is not None
        assert type(backend).COMPILED is calls_kernel, name
