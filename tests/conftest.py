"""Shared test settings: deterministic hypothesis runs and the path to ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("OPTSCHED_HYPOTHESIS_PROFILE", "ci"))

SHARED_DATA = Path(os.environ.get("OPTSCHED_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (or $OPTSCHED_SHARED_DATA); skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data directory {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture
def python_sigint():  # type: ignore[no-untyped-def]
    """Python's own Ctrl-C handler for a test that sends itself SIGINT: a test run started in the
    background by a non-interactive shell inherits SIGINT ignored, which Python keeps (the
    signal was then lost, and such tests failed with "DID NOT RAISE")."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


# --- the backend matrix as observed: the test modules a full run's solves come from -------------------
# test_backend_matrix.BACKEND_MATRIX names, per backend, the modules that run it against an oracle.
# Every solve through the seam (Prepared._solve: optsched.solve, prepare, compare, the policies'
# loops) is recorded with the module of the test running; a run of the whole default selection
# fails if a named module never solved with its backend (a text search for the name passed on
# a module that only mentioned it).
_SOLVED: set[tuple[str, str]] = set()  # (test module file name, backend name)
_RUNNING: list[str] = []
_RAN = [0]  # test items run


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # type: ignore[no-untyped-def]
    _RUNNING.append(item.path.name)
    _RAN[0] += 1
    yield
    _RUNNING.pop()


def pytest_configure(config):  # type: ignore[no-untyped-def]
    from optsched.solve import Prepared

    solve = Prepared._solve

    def recorded(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if _RUNNING:
            _SOLVED.add((_RUNNING[-1], self.backend.NAME))
        return solve(self, *args, **kwargs)

    Prepared._solve = recorded


def pytest_sessionfinish(session, exitstatus):  # type: ignore[no-untyped-def]
    import sys

    config = session.config
    whole = (config.args_source is pytest.Config.ArgsSource.TESTPATHS and not config.option.keyword
             and config.option.markexpr == "not slow" and not config.option.maxfail and exitstatus == 0
             and not config.option.collectonly and not config.getoption("deselect", None)
             and not config.getoption("ignore", None) and _RAN[0] == session.testscollected > 0)
    matrix = getattr(sys.modules.get("test_backend_matrix"), "BACKEND_MATRIX", None)
    if not whole or matrix is None:
        return
    missing = sorted(f"{module} never solves with {backend!r}" for backend, modules in matrix.items()
                     for module in modules if (module, backend) not in _SOLVED)
    if missing:
        session.config.get_terminal_writer().line("BACKEND_MATRIX: " + "; ".join(missing), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
