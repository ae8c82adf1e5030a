"""The package's layers run one way: models -> solvers -> the seam -> simulators and papers.

Read from the source (every import, also those inside functions): no module of
``optsched.models`` imports a solver, the seam or a paper package; no module of
``optsched.solvers`` imports the seam (``solve``, ``observe``) or a paper package (a backend
that solves subproblems through other backends gets the seam's ``prepare`` from it); no module
imports a private name (``_x``) from another package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import optsched
from optsched.papers import paper_names

ROOT = Path(optsched.__file__).parent
PAPERS = set(paper_names())
SEAM = {"solve", "observe", "policy", "papers", "reproduce", "bench", "sweep", "cli"}


def modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) of every optsched import in the file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "optsched":
            out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.split(".")[0] == "optsched"]
    return out


def package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def targets(module: str, names: list[str]) -> set[str]:
    """Top-level packages an import reaches (``from optsched import solve`` reaches ``solve``;
    ``import optsched`` reaches the seam the package re-exports)."""
    if module == "optsched" and not names:
        return {"solve"}
    return {n for n in names if package(module) == ""} | ({package(module)} if package(module) else set())


LAYERS = {"models": PAPERS | SEAM | {"solvers"}, "solvers": PAPERS | SEAM}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_lower_layers_do_not_import_upper_ones(layer: str) -> None:
    bad = []
    for name, path in modules().items():
        if package(name) != layer:
            continue
        for module, names in imports(path):
            reached = targets(module, names) & LAYERS[layer]
            if reached:
                bad.append(f"{name} imports {module} ({', '.join(sorted(reached))})")
    assert not bad, "\n".join(bad)


def test_no_private_names_are_imported_across_packages() -> None:
    bad = []
    for name, path in modules().items():
        for module, names in imports(path):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private and package(module) != package(name):
                bad.append(f"{name}: from {module} import {', '.join(private)}")
    assert not bad, "\n".join(bad)


def test_the_check_sees_the_layers() -> None:
    assert {"models", "solvers", "solve"} <= {package(n) for n in modules()}
    assert {"maxweight", "ogasched", "esdp", "onsocmax"} <= PAPERS
