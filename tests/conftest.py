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
