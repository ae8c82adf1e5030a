"""MPS and LP files through HiGHS's reader and writer: generic ``linear_program`` instances in,
any model with a standard form out (``optsched export``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from optsched.io import register_path_reader
from optsched.models.base import Model
from optsched.models.forms import MODEL_SUFFIXES
from optsched.models.linear_program import LinearProgram



@register_path_reader(*MODEL_SUFFIXES)
def read_model_file(path: str | Path) -> list[Model]:
    """An MPS or LP file through HiGHS's reader; ValueError naming the reason for a malformed or
    unsupported file (semi-continuous or semi-integer columns, quadratic constraints)."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    path = Path(path)
    if h.readModel(str(path)) != highspy.HighsStatus.kOk:
        raise ValueError(f"file: HiGHS cannot read {path.name} as an {path.suffix.lstrip('.').upper()} model "
                         "(malformed, or a feature it does not read: quadratic constraints, SOS, ...)")
    model = h.getModel()
    lp = model.lp_
    kinds = {int(t) for t in lp.integrality_} if len(lp.integrality_) else set()
    supported = {int(highspy.HighsVarType.kContinuous), int(highspy.HighsVarType.kInteger)}
    if kinds - supported:
        raise ValueError(f"file: {path.name} has semi-continuous or semi-integer columns, which no backend fits")
    import scipy.sparse as sp

    a = lp.a_matrix_
    n, m = lp.num_col_, lp.num_row_
    if n == 0:
        raise ValueError(f"file: {path.name} has no variables")
    A = sp.csc_matrix((np.asarray(a.value_), np.asarray(a.index_), np.asarray(a.start_)), shape=(m, n))
    hessian = None
    if model.hessian_.dim_:
        hs = model.hessian_
        tri = sp.csc_matrix((np.asarray(hs.value_), np.asarray(hs.index_), np.asarray(hs.start_)), shape=(n, n))
        hessian = tri + sp.tril(tri, k=-1).T  # HiGHS keeps the lower triangle
    integ = np.zeros(n, dtype=bool) if not len(lp.integrality_) else np.array(
        [int(t) == int(highspy.HighsVarType.kInteger) for t in lp.integrality_])
    return [LinearProgram(np.asarray(lp.col_cost_), A, np.asarray(lp.row_lower_), np.asarray(lp.row_upper_),
                         np.asarray(lp.col_lower_), np.asarray(lp.col_upper_), integ,
                         "max" if lp.sense_ == highspy.ObjSense.kMaximize else "min", float(lp.offset_), hessian)]


def write_model_file(model: Model, path: str | Path) -> Path:
    """``model.write(path)`` (MPS or LP by the suffix), with the errors named for ``export``."""
    path = Path(path)
    if path.suffix.lower() not in MODEL_SUFFIXES:
        raise ValueError(f"--out: expected a .mps or .lp file, got {path.name!r}")
    return model.write(path)
