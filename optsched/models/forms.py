"""Solver-neutral algebraic forms a model can lower itself to (cvxpy's "apply" step).

A backend that accepts a form can solve every model that provides it, so capabilities are
derived, not listed by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp


@dataclass(frozen=True, slots=True)
class StandardForm:
    """optimise  c.x + 0.5 x'Hx + offset   s.t.  row_lower <= A x <= row_upper,
    col_lower <= x <= col_upper,  x_j integer where ``integrality[j]``.

    ``maximize`` picks the direction. ``hessian`` (H, symmetric, CSC) is None for linear
    programs; with it the program is a convex QP (only for minimisation).
    """

    maximize: bool
    c: np.ndarray
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray
    offset: float = 0.0
    hessian: sp.csc_matrix | None = None

    @property
    def n_vars(self) -> int:
        return int(self.c.shape[0])

    @property
    def n_rows(self) -> int:
        return int(self.A.shape[0])

    @property
    def is_mip(self) -> bool:
        return bool(self.integrality.any())

    @property
    def is_integral_data(self) -> bool:
        """Every constraint coefficient and finite bound is a whole number (CP-SAT needs it)."""
        def whole(a: np.ndarray) -> bool:
            a = a[np.isfinite(a)]
            return bool(np.all(a == np.round(a)))

        return (
            whole(self.A.data)
            and whole(self.row_lower)
            and whole(self.row_upper)
            and whole(self.col_lower)
            and whole(self.col_upper)
        )


def all_binary_rows(n: int, start: int, stop: int) -> np.ndarray:
    """Rows ``start..stop-1`` of the 2^n x n table of 0-1 vectors (bit j of the row number): the
    enumeration of the ``binary`` form."""
    codes = np.arange(start, stop, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(bool)
