"""Modules imported at their first use: the numba kernel modules (numba costs about a second to
import, and a run that never calls a kernel should not pay it).

A function-level ``from module import kernel`` costs 0.6 us on every call even once the module
is loaded (the import machinery runs each time): as much as a small kernel itself, in code called
once per slot of a policy's loop. :func:`loaded` is a dictionary lookup after the first call.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType


def loaded(name: str) -> ModuleType:
    """The module ``name``, imported now if it is not yet. A module another thread is still
    importing is in ``sys.modules`` half built (its kernels not yet defined): then the import
    machinery, which waits for that thread, is asked."""
    module = sys.modules.get(name)
    if module is None or getattr(module.__spec__, "_initializing", False):
        return importlib.import_module(name)
    return module
