"""Writing results: atomic files (temporary file, then rename) and run metadata."""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import tempfile
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import pandas as pd

TRACKED_PACKAGES = ("optsched", "numpy", "scipy", "highspy", "ortools", "cvxpy", "pyomo", "pandas", "numba")


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _atomic(path: Path, write: Callable[[str], None]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | Path, text: str) -> Path:
    return _atomic(Path(path), lambda tmp: Path(tmp).write_text(text))


def write_csv(df: "pd.DataFrame", path: str | Path) -> Path:
    return _atomic(Path(path), lambda tmp: df.to_csv(tmp, index=False, float_format="%.10g", lineterminator="\n"))


def write_png(fig: Any, path: str | Path) -> Path:
    """Save a matplotlib figure with fixed metadata so reruns give identical bytes."""
    return _atomic(
        Path(path), lambda tmp: fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    )


def run_metadata(*, experiment: str, seed: int, config: Any) -> dict[str, Any]:
    """Seed, config and package versions of a run; with an active
    :class:`~optsched.observe.Observer` also what its policies' subproblems did so far
    (solves, terminations, fallbacks, runtimes; shadow gaps; captured instances)."""
    from optsched.observe import active_observer

    cfg = asdict(config) if is_dataclass(config) else dict(config)
    meta = {"experiment": experiment, "seed": seed, "config": cfg, "versions": package_versions()}
    observer = active_observer()
    if observer is not None:
        meta["subproblems"] = observer.summary()
    return meta


def write_metadata(path: str | Path, meta: dict[str, Any]) -> Path:
    return write_text(path, json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
