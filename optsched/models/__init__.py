"""Subproblem models, one module per kind, and the math they share (ONSOCMAX's prices and
utilities, the resource mesh). Importing this package registers every model kind."""

from optsched.models.base import Model, model_from_dict, model_kinds, register_model
from optsched.models.budget_family import BudgetFamily
from optsched.models.budgeted_ip import BudgetedIP
from optsched.models.capacity_projection import CapacityProjection
from optsched.models.escb_index import EscbIndex
from optsched.models.forms import StandardForm
from optsched.models.linear_program import LinearProgram
from optsched.models.mesh import MeshInstance
from optsched.models.onsocmax_offline import OfflineWelfare, OfflineWelfareIntegral
from optsched.models.pseudo_welfare import PseudoWelfare, PseudoWelfareIntegral
from optsched.models.set_packing import SetPacking, SetPackingBatch
from optsched.models.stationary_allocation import StationaryAllocation

__all__ = [
    "BudgetFamily", "BudgetedIP", "CapacityProjection", "EscbIndex", "LinearProgram", "MeshInstance", "Model",
    "OfflineWelfare", "OfflineWelfareIntegral", "PseudoWelfare", "PseudoWelfareIntegral", "SetPacking",
    "SetPackingBatch", "StandardForm", "StationaryAllocation", "model_from_dict", "model_kinds", "register_model",
]
