"""optsched: per-slot subproblems of online multi-server job scheduling, solved by each
paper's own fast algorithm or by exact solvers, side by side.

The names below are loaded at their first use (PEP 562): ``import optsched`` itself imports
nothing heavy, so ``python -m optsched`` reaches its Ctrl-C guard (``__main__``) before numpy
and the registries load (a Ctrl-C in that half second printed the interpreter's traceback).
Importing any of them registers every model kind and backend, as ``optsched.models`` and
``optsched.solvers`` do on import.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# each public name and the module that defines it
_EXPORTS = {
    "Backend": "optsched.solvers.registry", "Option": "optsched.solvers.registry",
    "Model": "optsched.models", "model_from_dict": "optsched.models",
    "Result": "optsched.result", "Termination": "optsched.result",
    "Prepared": "optsched.solve", "compare": "optsched.solve", "prepare": "optsched.solve", "solve": "optsched.solve",
    "model_kind": "optsched.solve", "all_backends": "optsched.solvers.registry",
    "fitting_backends": "optsched.solvers.registry", "kind_backends": "optsched.solvers.registry",
}

if TYPE_CHECKING:
    from optsched.models import Model, model_from_dict
    from optsched.result import Result, Termination
    from optsched.solve import Prepared, compare, model_kind, prepare, solve  # noqa: F401
    from optsched.solvers.registry import Backend, Option, all_backends, fitting_backends, kind_backends  # noqa: F401


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:  # a subpackage or module (optsched.models, ...), as an eager import made them
        if name.isidentifier() and not name.startswith("__"):
            try:
                return importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _register()
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def _register() -> None:
    """Every model kind and backend registered (what importing the package did before)."""
    importlib.import_module("optsched.models")
    importlib.import_module("optsched.solvers")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Package(types.ModuleType):
    """The package's ``solve`` is the function, though a submodule has that name too: the import
    system sets ``optsched.solve`` to the submodule when it first loads it (an eager package
    import rebound the name afterwards)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "solve" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def backends(model: Any = None) -> list[str]:
    """Names of available backends that fit ``model`` (exact first): an instance, or every
    instance of a kind (a model class or a kind name); all registered if None. ValueError for
    anything else."""
    from optsched.models.base import Model
    from optsched.solve import model_kind
    from optsched.solvers.registry import all_backends, fitting_backends, kind_backends  # importing them registers all

    if model is None:
        return sorted(all_backends())
    if isinstance(model, Model):
        return [b.NAME for b in fitting_backends(model)]
    return [b.NAME for b in kind_backends(model_kind(model))]


__all__ = ["Backend", "Model", "Option", "Prepared", "Result", "Termination", "backends", "compare",
           "model_from_dict", "prepare", "solve"]
