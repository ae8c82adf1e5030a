"""optsched: per-slot subproblems of online multi-server job scheduling, solved by each
paper's own fast algorithm or by exact solvers, side by side."""

from typing import Any

from optsched import models, solvers  # noqa: F401  (registers models and backends)
from optsched.models import Model, model_from_dict
from optsched.result import Result, Termination
from optsched.solve import Prepared, compare, model_kind, prepare, solve
from optsched.solvers.registry import Backend, Option, all_backends, fitting_backends, kind_backends

__version__ = "0.1.0"


def backends(model: Any = None) -> list[str]:
    """Names of available backends that fit ``model`` (exact first): an instance, or every
    instance of a kind (a model class or a kind name); all registered if None. ValueError for
    anything else."""
    if model is None:
        return sorted(all_backends())
    if isinstance(model, Model):
        return [b.NAME for b in fitting_backends(model)]
    return [b.NAME for b in kind_backends(model_kind(model))]


__all__ = ["Backend", "Model", "Option", "Prepared", "Result", "Termination", "backends", "compare",
           "model_from_dict", "prepare", "solve"]
