"""numba caches a compiled kernel by its own source file only (its modification time and size):
a kernel that calls or inlines another module's kernel kept the old machine code when only that
module changed (probe BM: after an edit of a formula in optsched/models/utilities_kernel.py the
cached slot_terms returned 6.0 where 600.0 was right, even after touching the caller).

So every kernel module that compiles code from another kernel module names that module and the
SHA-256 of its text in ``COMPILED_WITH``: an edit of the module fails this test until the stamp is
updated, and updating it edits the caller, whose cache numba then rebuilds (and so on up the
chain: a stamp edit is itself an edit of the file it is in)."""

from __future__ import annotations

import ast
import hashlib
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "optsched"


def _kernel_modules() -> dict[str, Path]:
    """Modules that compile numba code (they import njit from optsched.jit), by dotted name."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        if any(isinstance(n, ast.ImportFrom) and n.module == "optsched.jit" for n in ast.walk(tree)):
            out[".".join(path.relative_to(ROOT).with_suffix("").parts)] = path
    return out


KERNELS = _kernel_modules()


def _kernel_imports(path: Path) -> set[str]:
    """The kernel modules ``path`` imports (``from optsched.x import y_kernel``, ``from
    optsched.x.y_kernel import name``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("optsched"):
            if node.module in KERNELS:
                found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in KERNELS)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in KERNELS)
    return found


def _stamp(module: str) -> str:
    return hashlib.sha256(KERNELS[module].read_bytes()).hexdigest()[:16]


def test_the_kernel_modules_are_found() -> None:
    assert {"optsched.models.utilities_kernel", "optsched.ogasched.utility_kernel",
            "optsched.solvers.stationary_allocation_kernel", "optsched.solvers.projection_kernel"} <= set(KERNELS)


@pytest.mark.parametrize("module", sorted(KERNELS))
def test_a_kernel_names_the_kernels_it_compiles_with_their_current_text(module: str) -> None:
    used = _kernel_imports(KERNELS[module])
    declared = getattr(importlib.import_module(module), "COMPILED_WITH", {})
    assert set(declared) == used, f"{module}: COMPILED_WITH must name exactly {sorted(used)}"
    stale = {m: _stamp(m) for m, digest in declared.items() if digest != _stamp(m)}
    assert not stale, f"{module}: update COMPILED_WITH to {stale} (the text of those kernels changed)"
