"""The core install (``pip install optsched``: numpy, scipy, numba, tqdm) runs the custom backends
and names the extra that brings each missing solver. Slow: it builds a fresh venv."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_core_install_runs_the_custom_backends_and_names_the_extras(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(ROOT)], check=True)
    listing = subprocess.run([str(py), "-m", "optsched", "backends"], check=True, capture_output=True, text=True).stdout
    for backend, extra in (("highs", "highs"), ("cpsat", "cpsat"), ("cvxpy", "cvxpy"), ("pyomo", "pyomo"), ("scip", "scip")):
        line = next(x for x in listing.splitlines() if x.startswith(backend + " "))
        assert "unavailable" in line and f"pip install 'optsched[{extra}]'" in line, line
    code = ("import json, numpy as np, optsched\nfrom optsched.generators import generate\n"
            "print(json.dumps({b: optsched.solve(generate(k, 6, np.random.default_rng(0)), b).termination.value "
            "for k, b in [('set_packing', 'greedy'), ('budget_family', 'dp'), ('capacity_projection', 'fast'), "
            "('pseudo_welfare', 'kkt')]}))")
    out = json.loads(subprocess.run([str(py), "-c", code], check=True, capture_output=True, text=True).stdout)
    assert out == {"greedy": "feasible", "dp": "optimal", "fast": "optimal", "kkt": "optimal"}


def test_results_record_the_version_of_every_solver_package() -> None:
    """pyscipopt and clarabel produce the scip and cvxpy results and were not recorded."""
    from optsched.artifacts import TRACKED_PACKAGES, package_versions
    from optsched.solvers.registry import all_backends

    required = {name for backend in all_backends().values() for name in backend.REQUIRES}
    assert required <= set(TRACKED_PACKAGES) and {"clarabel", "osqp", "scs"} <= set(TRACKED_PACKAGES)
    assert set(package_versions()) == {"python", *TRACKED_PACKAGES}
