"""MPS and LP files through HiGHS's reader and writer: generic ``linear_program`` instances in,
any model with a standard form out (``optsched export``)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from optsched.files import read_user_text
from optsched.io import register_path_reader
from optsched.io.numbers import parse_float
from optsched.models.base import Model
from optsched.models.forms import MODEL_SUFFIXES
from optsched.models.linear_program import LinearProgram



def _number(token: str, where: str) -> None:
    try:
        parse_float(token[1:] if token.startswith("+") else token)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


# MPS sections whose lines are "name (row value)+" after a leading field, by the position of
# the first (row, value) pair; BOUNDS lines are "type set column [value]".
_MPS_PAIRS = {"COLUMNS": 1, "RHS": 1, "RANGES": 1}
_MPS_NO_VALUE_BOUNDS = {"FR", "MI", "PL", "BV"}


def check_mps_text(text: str) -> None:
    """What HiGHS's MPS reader lets through and reads as something else (measured): a file cut
    short (no ENDATA), a number that is not one (``nan`` and ``e5`` read as 0, ``0x10`` as 16,
    ``1_000`` as 1, ``1e400`` as an infinite bound: the constraint dropped), a row name COLUMNS,
    RHS or RANGES do not declare in ROWS (the entry dropped), a column BOUNDS names that no
    COLUMNS line has (a new variable). Free MPS: names hold no spaces."""
    rows: set[str] = set()
    columns: set[str] = set()
    section = ""
    ended = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("*"):
            continue
        where = f"line {number}"
        fields = line.split()
        if not line[0].isspace():  # a section header
            section = fields[0].upper()
            ended = section == "ENDATA"
            continue
        if ended:
            raise ValueError(f"{where}: data after ENDATA")
        if section == "ROWS":
            rows.update(fields[1:2])
        elif section in _MPS_PAIRS:
            if section == "COLUMNS":
                if "'MARKER'" in fields:
                    continue
                columns.add(fields[0])
            pairs = fields[_MPS_PAIRS[section]:]
            if not pairs or len(pairs) % 2:
                raise ValueError(f"{where}: expected (row, value) pairs after {fields[0]!r}")
            for row, value in zip(pairs[::2], pairs[1::2]):
                if row not in rows:
                    raise ValueError(f"{where}: row {row!r} is not declared in ROWS")
                _number(value, where)
        elif section == "BOUNDS":
            if len(fields) < 3:
                raise ValueError(f"{where}: a bound needs a type, a bound set and a column")
            if fields[2] not in columns:
                raise ValueError(f"{where}: column {fields[2]!r} has no COLUMNS entry")
            if fields[0].upper() not in _MPS_NO_VALUE_BOUNDS or len(fields) > 3:
                if len(fields) != 4:
                    raise ValueError(f"{where}: bound {fields[0]!r} needs one value")
                _number(fields[3], where)
        elif section in ("QUADOBJ", "QMATRIX", "QSECTION"):
            if len(fields) != 3 or fields[0] not in columns or fields[1] not in columns:
                raise ValueError(f"{where}: expected 'column column value' of declared columns")
            _number(fields[2], where)
    if not ended:
        raise ValueError("no ENDATA line (the file is cut short)")


_LP_NUMBER_START = re.compile(r"[+-]?\.?[0-9]")
_LP_END = re.compile(r"^\s*end\s*$", re.IGNORECASE | re.MULTILINE)


def check_lp_text(text: str) -> None:
    """The LP format's counterpart of :func:`check_mps_text`: an ``end`` line (a file cut
    short), and every token that starts like a number is one (``0x10`` read as 16, ``1e400`` as
    an infinite bound); ``nan`` is never a number here. Coefficients and names are separated by
    spaces, as HiGHS writes them."""
    if not _LP_END.search(text):
        raise ValueError("no 'end' line (the file is cut short)")
    for number, line in enumerate(text.splitlines(), start=1):
        for token in line.split("\\", 1)[0].split():  # a backslash starts a comment
            if token.lstrip("+-").lower() == "nan":
                raise ValueError(f"line {number}: 'nan' is not a number")
            if _LP_NUMBER_START.match(token):
                _number(token, f"line {number}")


@register_path_reader(*MODEL_SUFFIXES)
def read_model_file(path: str | Path) -> list[Model]:
    """An MPS or LP file through HiGHS's reader, after :func:`check_mps_text` /
    :func:`check_lp_text`; ValueError naming the reason for a malformed or unsupported file
    (semi-continuous or semi-integer columns, quadratic constraints)."""
    import highspy

    path = Path(path)
    text = read_user_text(path, "file")
    if "\x00" in text:
        raise ValueError(f"file: {path.name}: holds a NUL byte")
    try:
        (check_mps_text if path.suffix.lower() == ".mps" else check_lp_text)(text)
    except ValueError as exc:
        raise ValueError(f"file: {path.name}: {exc}") from None
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
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
