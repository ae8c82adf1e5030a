"""A standard form as the text of a free MPS or an LP file, every number exact.

HiGHS's writer kept 15 significant digits (a row bound of 1/3 came back as 0.333333333333333,
5e-324 as 0, and 2^53 as a number its own reader then refused), and its LP files listed a column
first where it first appeared (a column with no cost came after the others, so the file held the
columns in another order). Here every number is Python's shortest round-trip ``repr``, which
HiGHS's readers parse back to the same float, and columns are x0, x1, ... in order: the LP
objective names every column, at cost 0 where it has none. Rows are r0, r1, ...

MPS keeps each row as one row where it can. A row with two finite sides is a RANGES entry, whose
other side the reader computes as rhs -/+ |R|; the pair is chosen so that this gives back the
side exactly, and where no R does (sides of opposite signs finer apart than R's rounding) the
row is written as two, as below. The LP format has no ranged rows (HiGHS's reader took
``l <= expression <= u`` for two other rows): such a row is written as two, ``ri_lo`` and
``ri_up``, the same feasible set. A Hessian is written as its lower triangle (QUADOBJ), or in
the LP objective as ``[ ... ] / 2``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optsched.models.forms import StandardForm, lower_triangle


def number(x: float) -> str:
    """``x`` as text that reads back as the same float (``inf`` for an infinite value)."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


def _entries(matrix: Any, k: int) -> list[tuple[int, float]]:
    """(index, value) of the stored entries of column k of a CSC matrix (row k of a CSR one)."""
    part = slice(matrix.indptr[k], matrix.indptr[k + 1])
    return list(zip(matrix.indices[part].tolist(), matrix.data[part].tolist()))


def exact_range(lower: float, upper: float) -> tuple[str, float, float] | None:
    """(MPS row type, rhs, R) with [rhs - R, rhs] (L) or [rhs, rhs + R] (G) equal to [lower,
    upper] in floating point, as HiGHS's reader computes the other side; None when no R within
    a few units in the last place of upper - lower gives it (sides of opposite signs, such as
    -0.3 and 1/3, can lie finer apart than R's rounding)."""
    up = down = upper - lower
    widths = [up]
    for _ in range(4):
        up, down = math.nextafter(up, math.inf), math.nextafter(down, 0.0)
        widths += [up, down]
    for width in widths:
        if upper - width == lower:
            return "L", upper, width
        if lower + width == upper:
            return "G", lower, width
    return None


def _mps_rows(lower: float, upper: float, i: int) -> list[tuple[str, str, float, float | None]]:
    """Row i as MPS rows: (name, type, rhs, range or None); two rows (``ri_lo``, ``ri_up``, as in
    an LP file: the same feasible set) for sides no range holds exactly."""
    if lower == upper:
        return [(f"r{i}", "E", lower, None)]
    if math.isinf(lower):  # a free row too: an L row to +inf (N rows past the first are dropped)
        return [(f"r{i}", "L", upper, None)]
    if math.isinf(upper):
        return [(f"r{i}", "G", lower, None)]
    ranged = exact_range(lower, upper)
    if ranged is None:
        return [(f"r{i}_lo", "G", lower, None), (f"r{i}_up", "L", upper, None)]
    kind, side, width = ranged
    return [(f"r{i}", kind, side, width)]


def mps_text(form: StandardForm) -> str:
    """The program as a free MPS file (objective sense in OBJSENSE, offset as minus the RHS of
    the objective row, integer columns between INTORG/INTEND markers, each with both bounds)."""
    rows = [_mps_rows(lo, hi, i) for i, (lo, hi) in enumerate(zip(form.row_lower.tolist(), form.row_upper.tolist()))]
    out = ["NAME optsched", *(["OBJSENSE", "    MAX"] if form.maximize else []), "ROWS", " N  obj"]
    out += [f" {kind}  {name}" for parts in rows for name, kind, _, _ in parts]
    out.append("COLUMNS")
    a = form.A.tocsc()
    integer = False
    for j in range(form.n_vars):
        if bool(form.integrality[j]) != integer:
            integer = not integer
            out.append(f"    M{j} 'MARKER' '{'INTORG' if integer else 'INTEND'}'")
        out.append(f"    x{j} obj {number(form.c[j])}")  # every column named, cost 0 or not
        for i, v in _entries(a, j):
            out += [f"    x{j} {name} {number(v)}" for name, _, _, _ in rows[i]]
    if integer:
        out.append(f"    M{form.n_vars} 'MARKER' 'INTEND'")
    out.append("RHS")
    out += [f"    RHS {name} {number(side)}" for parts in rows for name, _, side, _ in parts if side != 0.0]
    if form.offset != 0.0:
        out.append(f"    RHS obj {number(-form.offset)}")
    ranges = [f"    RNG {name} {number(width)}" for parts in rows for name, _, _, width in parts if width is not None]
    if ranges:
        out += ["RANGES", *ranges]
    out.append("BOUNDS")
    for j, (lo, hi) in enumerate(zip(form.col_lower.tolist(), form.col_upper.tolist())):
        if lo == hi:
            out.append(f" FX BND x{j} {number(lo)}")
            continue
        if math.isinf(lo) and math.isinf(hi):
            out.append(f" FR BND x{j}")
            continue
        if math.isinf(lo):
            out.append(f" MI BND x{j}")
        elif lo != 0.0 or form.integrality[j]:  # an integer column's lower bound is said, whatever it is
            out.append(f" LO BND x{j} {number(lo)}")
        if not math.isinf(hi):
            out.append(f" UP BND x{j} {number(hi)}")
        elif form.integrality[j]:
            out.append(f" PL BND x{j}")
    if form.hessian is not None:
        tri = lower_triangle(form.hessian)
        out.append("QUADOBJ")
        out += [f"    x{i} x{j} {number(v)}" for j in range(form.n_vars) for i, v in _entries(tri, j)]
    out.append("ENDATA")
    return "\n".join(out) + "\n"


def _terms(pairs: list[tuple[int, float]]) -> str:
    return " ".join(f"{'-' if v < 0 or (v == 0 and math.copysign(1.0, v) < 0) else '+'} {number(abs(v))} x{j}"
                    for j, v in pairs)


def lp_text(form: StandardForm) -> str:
    """The program as an LP file (CPLEX LP as HiGHS reads it)."""
    objective = _terms(list(enumerate(form.c.tolist())))
    if form.offset != 0.0:
        objective += f" {'-' if form.offset < 0 else '+'} {number(abs(form.offset))}"
    if form.hessian is not None:
        tri = lower_triangle(form.hessian)
        quad = []
        for j in range(form.n_vars):
            for i, v in _entries(tri, j):
                term = f"x{i} ^ 2" if i == j else f"x{j} * x{i}"
                quad.append(f"{'-' if v < 0 else '+'} {number(abs(v) if i == j else 2.0 * abs(v))} {term}")
        if quad:
            objective += " + [ " + " ".join(quad) + " ] / 2"
    out = ["maximize" if form.maximize else "minimize", f" obj: {objective}", "subject to"]
    a = form.A.tocsr()
    for i, (lo, hi) in enumerate(zip(form.row_lower.tolist(), form.row_upper.tolist())):
        expression = _terms(_entries(a, i)) or "+ 0 x0"  # an empty row keeps its place
        if lo == hi:
            out.append(f" r{i}: {expression} = {number(lo)}")
        elif math.isinf(lo) and math.isinf(hi):
            out.append(f" r{i}: {expression} <= inf")
        elif math.isinf(lo):
            out.append(f" r{i}: {expression} <= {number(hi)}")
        elif math.isinf(hi):
            out.append(f" r{i}: {expression} >= {number(lo)}")
        else:
            out += [f" r{i}_lo: {expression} >= {number(lo)}", f" r{i}_up: {expression} <= {number(hi)}"]
    out.append("bounds")
    for j, (lo, hi) in enumerate(zip(form.col_lower.tolist(), form.col_upper.tolist())):
        if lo == hi:
            out.append(f" x{j} = {number(lo)}")
        elif math.isinf(lo) and math.isinf(hi):
            out.append(f" x{j} free")
        else:
            out.append(f" {number(lo)} <= x{j} <= {number(hi)}")
    integers = np.flatnonzero(form.integrality).tolist()
    if integers:
        out += ["general", *(f" x{j}" for j in integers)]
    out.append("end")
    return "\n".join(out) + "\n"
