"""Subproblem models. Importing this package registers every model kind."""

from optsched.models import (  # noqa: F401
    budget_family,
    budgeted_ip,
    capacity_projection,
    escb_index,
    linear_program,
    pseudo_welfare,
    set_packing,
    stationary_allocation,
)
from optsched.onsocmax import offline as _onsocmax_offline  # noqa: F401
from optsched.models.base import Model, model_from_dict, model_kinds, register_model
from optsched.models.forms import StandardForm
from optsched.models.set_packing import SetPacking

__all__ = ["Model", "SetPacking", "StandardForm", "model_from_dict", "model_kinds", "register_model"]
