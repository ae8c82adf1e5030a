"""Every registered backend appears in the test matrix, and every matrix entry names a test
module that really exercises it (after Pyomo contrib.solver's registry test)."""

from __future__ import annotations

from pathlib import Path

import optsched
from optsched.solvers.registry import all_backends

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


def test_matrix_modules_exercise_their_backend() -> None:
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
