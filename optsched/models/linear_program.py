"""A generic linear (or convex quadratic) program with integer variables: what MPS and LP files hold.

In JSON a missing bound is ``null`` (no lower / no upper bound).

    optimise  c.x + 0.5 x'Hx + offset   s.t.  row_lower <= A x <= row_upper,
              col_lower <= x <= col_upper,  x_j integer where ``integrality[j]``

It is :class:`~optsched.models.forms.StandardForm` as a model kind, so every backend that takes the
standard form (``highs``, ``cpsat`` for pure-integer programs with whole-number data, ``scip``)
solves users' own instances, e.g. OR-Library files turned into MPS by ``optsched export``.
Files are read and written through HiGHS (:mod:`optsched.io.model_files`).

Solution type: the float64 vector x.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np

from optsched.models.base import Model, cached_form, register_fuzz, register_generator, register_model
from optsched.models.forms import StandardForm
from optsched.models.validate import check_keys, finite_float, float_array, index_array, is_real_number, row_slack, solution_vector


def _bounds(name: str, value: Any, length: int, missing: float) -> np.ndarray:
    """Bounds with ``None`` (JSON null) for "no bound" (``missing``: -inf or +inf), in a list,
    a tuple or a 1-D numpy object array alike (the array's ``None`` was refused as NaN)."""
    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 1):
        value = [missing if v is None else v for v in value]
    return float_array(name, value, shape=(length,), allow_inf=True)


def _own_sparse(name: str, value: Any, layout: Any) -> Any:
    """The model's own copy of a scipy sparse matrix (a caller changing theirs afterwards leaves
    the model alone), its entries checked as :func:`float_array` checks dense ones, read-only."""
    given = layout(value, copy=True)
    try:  # indices out of range passed, and corrupted the memory of a solver given them
        given.check_format(full_check=True)
    except ValueError as exc:
        raise ValueError(f"{name}: not a valid sparse matrix ({exc})") from None
    data = float_array(name, given.data)  # a complex or an integer past 2^53 is refused, not cast
    matrix = layout((data, given.indices, given.indptr), shape=given.shape, copy=True)
    matrix.sum_duplicates()  # in place: before the data are read-only
    matrix.data = float_array(name, matrix.data)  # duplicates summed: still within range
    return _read_only(matrix)


def _read_only(matrix: Any) -> Any:
    """``matrix`` in canonical form (sorted, no duplicates) with its arrays read-only."""
    matrix.sum_duplicates()
    for part in (matrix.data, matrix.indices, matrix.indptr):
        part.setflags(write=False)
    return matrix


# Positive semidefinite up to this much of the Hessian's largest entry (rounding of a PSD
# matrix's eigenvalues); the check is dense, so only up to SEMIDEFINITE_CHECK_MAX columns.
SEMIDEFINITE_RTOL = 1e-10
SEMIDEFINITE_CHECK_MAX = 4000


def _check_semidefinite(hess: Any) -> None:
    """ValueError unless ``hess`` is positive semidefinite (the solvers' convex QP; a HiGHS or
    SCIP run on an indefinite one only fails): the least eigenvalue of its symmetric part, for
    up to SEMIDEFINITE_CHECK_MAX columns; a diagonal Hessian, and any beyond that size, by its
    diagonal >= 0 (exact for a diagonal, necessary otherwise; a dense eigenvalue solve of a
    diagonal of 1,000 took seconds)."""
    scale = float(abs(hess).max()) if hess.nnz else 0.0
    if scale == 0.0:
        return
    coo = hess.tocoo()
    if (coo.row == coo.col).all():  # a diagonal: its entries are its eigenvalues
        least = float(hess.diagonal().min()) / scale
    elif hess.shape[0] > SEMIDEFINITE_CHECK_MAX:
        if (hess.diagonal() < 0).any():
            raise ValueError("hessian: has a negative diagonal entry, so it is not positive semidefinite")
        return
    else:
        least = float(np.linalg.eigvalsh(hess.toarray() / scale)[0])
    if least < -SEMIDEFINITE_RTOL:
        raise ValueError(f"hessian: not positive semidefinite (least eigenvalue {least * scale:.3g}); "
                         "only convex quadratic objectives are solved")


@register_model
@dataclass(frozen=True, eq=False)
class LinearProgram(Model):
    """``sense`` ("min" or "max") picks the direction, per instance; ``A`` is a (rows, n) matrix
    (nested lists or a scipy sparse matrix; in JSON nested lists or its entries,
    :func:`sparse_entries`); ``hessian`` (n, n), symmetric positive semidefinite, minimisation
    only, and no integer variable with it."""

    c: Any
    A: Any
    row_lower: Any
    row_upper: Any
    col_lower: Any
    col_upper: Any
    integrality: Any = None
    sense: str = "min"
    offset: float = 0.0
    hessian: Any = None

    name: ClassVar[str] = "linear_program"
    BOUNDED: ClassVar[bool] = False  # free variables: a program can be unbounded
    # violations' slack, tol x max(|side|, sum_j |a_ij| max(|x_j|, its bounds)), grows with the
    # box: an allowance for a solver's point, not the rows (StandardForm.widened)
    ROW_SLACK: ClassVar[str | None] = None
    SIZE_LABEL: ClassVar[str] = "variables"
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = ("c", "A", "row_lower", "row_upper", "col_lower", "col_upper")
    JSON_OPTIONAL: ClassVar[tuple[str, ...]] = ("integrality", "sense", "offset", "hessian")

    def __post_init__(self) -> None:
        import scipy.sparse as sp

        c = float_array("c", self.c, min_size=1)
        n = c.shape[0]
        if sp.issparse(self.A):
            A = _own_sparse("A", self.A, sp.csr_matrix)
        else:
            no_rows = isinstance(self.A, (list, tuple)) and len(self.A) == 0  # A = [] (JSON's no rows)
            dense = np.zeros((0, n)) if no_rows else float_array("A", self.A, ndim=2)
            A = _read_only(sp.csr_matrix(dense))
        if A.shape[1] != n:
            raise ValueError(f"A: has {A.shape[1]} columns, expected {n} (one per entry of c)")
        m = A.shape[0]
        rlo = _bounds("row_lower", self.row_lower, m, -np.inf)
        rhi = _bounds("row_upper", self.row_upper, m, np.inf)
        clo = _bounds("col_lower", self.col_lower, n, -np.inf)
        chi = _bounds("col_upper", self.col_upper, n, np.inf)
        if (rlo > rhi).any() or (rlo == np.inf).any() or (rhi == -np.inf).any():
            raise ValueError("row_lower: a row's bounds are empty (lower above upper, or infinite the wrong way)")
        if (clo > chi).any() or (clo == np.inf).any() or (chi == -np.inf).any():
            raise ValueError("col_lower: a column's bounds are empty (lower above upper, or infinite the wrong way)")
        integ = np.zeros(n, dtype=bool) if self.integrality is None else float_array(
            "integrality", self.integrality, shape=(n,), bools=True)
        if not np.isin(integ, (0.0, 1.0)).all():
            raise ValueError("integrality: entries must be 0/1 or true/false")
        integ = np.asarray(integ, dtype=bool)
        integ.setflags(write=False)
        if not isinstance(self.sense, str) or self.sense not in ("min", "max"):
            raise ValueError(f"sense: expected 'min' or 'max', got {self.sense!r}")
        hess = None
        if self.hessian is not None:
            hess = (_own_sparse("hessian", self.hessian, sp.csc_matrix) if sp.issparse(self.hessian)
                    else _read_only(sp.csc_matrix(float_array("hessian", self.hessian, ndim=2, shape=(n, n)))))
            if hess.shape != (n, n) or abs(hess - hess.T).max() > 1e-12 * max(1.0, abs(hess).max()):
                raise ValueError("hessian: expected a symmetric (n, n) matrix")
            hess = _read_only(sp.csc_matrix((hess + hess.T) * 0.5))  # x'Hx sees only the symmetric part
            _check_semidefinite(hess)
            if self.sense == "max" or integ.any():
                raise ValueError("hessian: quadratic objectives only for minimisation without integer variables")
        for key, value in (("c", c), ("A", A), ("row_lower", rlo), ("row_upper", rhi), ("col_lower", clo),
                           ("col_upper", chi), ("integrality", integ),
                           ("offset", finite_float("offset", self.offset)), ("hessian", hess)):
            object.__setattr__(self, key, value)

    @property
    def n_vars(self) -> int:
        return int(self.c.shape[0])

    @property
    def size(self) -> int:
        return self.n_vars

    @property
    def maximize(self) -> bool:  # type: ignore[override]  # the direction is per instance here
        return self.sense == "max"

    # --- the model's own math ------------------------------------------------------------
    def objective(self, solution: Any) -> float:
        x = solution_vector(solution, self.n_vars)
        value = float(self.c @ x) + self.offset
        if self.hessian is not None:
            value += 0.5 * float(x @ (self.hessian @ x))
        return value

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        x = solution_vector(solution)
        if x.shape != (self.n_vars,):
            return [f"solution has shape {x.shape}, expected ({self.n_vars},)"]
        if not np.isfinite(x).all():
            return ["solution has a non-finite entry"]
        out = []
        # each variable's magnitude: its largest finite bound or |x_j| (a program scaled as a whole
        # is checked as the unscaled one; row_slack scales each row's slack with the row). Per
        # column: one magnitude for all (the largest bound, 1.1e6) let a row of coefficient 1e3
        # on a column of range 4e-5 pass a point 16 % over its side. A bound's slack has a floor
        # of the smaller of 1 and the program's magnitude, so a solver's zero on a column fixed
        # at 0 (1e-13) passes; the program's magnitude itself (1e9) let x = -999 pass x >= 0
        own = self.memo("column_magnitude", self._column_magnitude)
        magnitude = np.maximum(np.abs(x), own)
        bound_scale = np.maximum(magnitude, min(1.0, float(magnitude.max(initial=0.0))))
        for j in np.flatnonzero((x < self.col_lower - row_slack(tol, self.col_lower, bound_scale))
                                | (x > self.col_upper + row_slack(tol, self.col_upper, bound_scale)))[:3]:
            out.append(f"x[{j}] = {x[j]:.9g} outside [{self.col_lower[j]:g}, {self.col_upper[j]:g}]")
        for j in np.flatnonzero(self.integrality & (np.abs(x - np.round(x)) > max(tol, 1e-6)))[:3]:
            out.append(f"x[{j}] = {x[j]:.9g} is not integer")
        ax = self.A @ x
        reach = self.memo("abs_A", lambda: abs(self.A)) @ magnitude  # sum_j |a_ij| magnitude_j
        bad = (ax < self.row_lower - row_slack(tol, self.row_lower, reach)) | (ax > self.row_upper + row_slack(tol, self.row_upper, reach))
        for i in np.flatnonzero(bad)[:3]:
            out.append(f"row {i}: {ax[i]:.9g} outside [{self.row_lower[i]:g}, {self.row_upper[i]:g}]")
        return out

    def _column_magnitude(self) -> np.ndarray:
        """Per column, its largest finite |bound| (0 for a free column)."""
        bounds = np.abs(np.stack([self.col_lower, self.col_upper]))
        return np.where(np.isfinite(bounds), bounds, 0.0).max(axis=0)

    # --- forms -----------------------------------------------------------------------------------
    @cached_form
    def to_standard_form(self) -> StandardForm:
        return StandardForm(maximize=self.maximize, c=self.c, A=self.A, row_lower=self.row_lower,
                            row_upper=self.row_upper, col_lower=self.col_lower, col_upper=self.col_upper,
                            integrality=self.integrality, offset=self.offset, hessian=self.hessian)

    def solution_from_vector(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64).copy()
        x[self.integrality] = np.round(x[self.integrality])
        return x

    @property
    def bounded(self) -> bool:
        """Every column has finite bounds on both sides: no objective is unbounded then."""
        return bool(np.isfinite(self.col_lower).all() and np.isfinite(self.col_upper).all())

    @classmethod
    def from_form(cls, form: StandardForm) -> "LinearProgram":
        return cls(form.c, form.A, form.row_lower, form.row_upper, form.col_lower, form.col_upper,
                   form.integrality, "max" if form.maximize else "min", form.offset, form.hessian)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "LinearProgram":
        """A JSON object; ``A`` and ``hessian`` as nested lists or as their nonzero entries
        (:func:`sparse_entries`)."""
        check_keys(cls.name, dict(data), required=cls.JSON_REQUIRED, optional=cls.JSON_OPTIONAL)
        data = dict(data)
        n = len(data["c"]) if isinstance(data["c"], list) else None
        m = len(data["row_lower"]) if isinstance(data["row_lower"], list) else None
        for key, shape in (("A", (m, n)), ("hessian", (n, n))):
            if isinstance(data.get(key), dict):
                data[key] = matrix_from_entries(key, data[key], shape)
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        def listed(a: np.ndarray) -> list[Any]:
            return [None if not np.isfinite(v) else float(v) for v in a] if np.isinf(a).any() else a.tolist()

        return {"model": self.name, "c": self.c.tolist(), "A": sparse_entries(self.A),
                "row_lower": listed(self.row_lower), "row_upper": listed(self.row_upper),
                "col_lower": listed(self.col_lower), "col_upper": listed(self.col_upper),
                "integrality": self.integrality.astype(int).tolist(), "sense": self.sense,
                "offset": self.offset,
                "hessian": None if self.hessian is None else sparse_entries(self.hessian)}


def sparse_entries(matrix: Any) -> Any:
    """A sparse matrix for JSON: nested lists when at least a third of it is nonzero, else its
    entries ``{"shape": [m, n], "rows": [...], "cols": [...], "values": [...]}`` (a program of
    2,000 columns and 2,000 nonzeros was 20 MB of zeros as lists)."""
    m, n = matrix.shape
    if 3 * matrix.nnz >= m * n:
        return matrix.toarray().tolist()
    coo = matrix.tocoo()
    return {"shape": [int(m), int(n)], "rows": coo.row.tolist(), "cols": coo.col.tolist(), "values": coo.data.tolist()}


def matrix_from_entries(name: str, data: Mapping[str, Any], shape: tuple[int | None, int | None]) -> Any:
    """The scipy matrix of :func:`sparse_entries`'s object (ValueError naming ``name`` and the key);
    ``shape`` is what the program's other fields make it (None: not known yet, the model says)."""
    import scipy.sparse as sp

    check_keys(name, dict(data), required=("shape", "rows", "cols", "values"))
    given = data["shape"]
    if not (isinstance(given, list) and len(given) == 2
            and all(is_real_number(v) and 0 <= v < 2**53 and float(v).is_integer() for v in given)):
        raise ValueError(f"{name}.shape: expected [rows, columns] as two whole numbers >= 0, got {given!r}")
    given = [int(v) for v in given]  # optsched's JSON reader reads whole numbers as floats
    if any(want is not None and have != want for have, want in zip(given, shape)):
        raise ValueError(f"{name}.shape: {given} does not match the program's {list(shape)}")
    rows = index_array(f"{name}.rows", data["rows"], upper=given[0])
    cols = index_array(f"{name}.cols", data["cols"], upper=given[1])
    values = float_array(f"{name}.values", data["values"])
    if not rows.size == cols.size == values.size:
        raise ValueError(f"{name}: rows, cols and values have {rows.size}, {cols.size} and {values.size} entries")
    pairs, counts = np.unique(np.stack([rows, cols], axis=1), axis=0, return_counts=True)
    if (counts > 1).any():  # one entry listed twice: which value is meant?
        row, col = pairs[np.argmax(counts > 1)]
        raise ValueError(f"{name}: the entry ({row}, {col}) is listed twice")
    return sp.coo_matrix((values, (rows, cols)), shape=tuple(given)).tocsr()


# --- the kind's generator -------------------------------------------------------------
# rtol 1e-7: HiGHS's LP tolerances on fractional data.
@register_generator("linear_program", quick=(10, 40, 160), full=(10, 40, 160, 640), tiny=8, rtol=1e-7)
def linear_program(size: int, rng: np.random.Generator) -> Model:
    """A bounded program in ``size`` variables: a multidimensional knapsack (0-1, whole data) half
    the time, else a mixed program (integer and continuous columns, fractional data, equality rows)."""
    k = max(1, size // 4)
    if rng.random() < 0.5:
        w = rng.integers(0, 10, (k, size)).astype(float)
        return LinearProgram(rng.integers(1, 20, size).astype(float), w, np.full(k, -np.inf),
                             np.floor(0.5 * w.sum(axis=1)), np.zeros(size), np.ones(size), np.ones(size), "max")
    A = np.round(rng.uniform(-1, 3, (k, size)), 3)
    upper = np.round(rng.uniform(1, 5, size), 2)
    rhs = np.round(0.4 * np.abs(A).sum(axis=1) * upper.mean(), 3)
    lower_rows = np.where(rng.random(k) < 0.2, rhs, -np.inf)  # some equalities (feasible: x = 0 not required)
    lower_rows = np.where(np.isfinite(lower_rows), np.minimum(lower_rows, 0.0), lower_rows)
    return LinearProgram(np.round(rng.uniform(-2, 5, size), 3), A, lower_rows, rhs, np.zeros(size), upper,
                         rng.random(size) < 0.5, str(rng.choice(["min", "max"])))


# --- the kind's fuzz builder (tests/test_fuzz.py): degenerate variants ---


@register_fuzz("linear_program", *("random", "lp", "integer", "infeasible"), examples=60)
def fuzz_linear_program(rng: np.random.Generator, variant: str) -> Model:
    """Generic programs as MPS/LP files hold them: 0-1 knapsacks, mixed integer, pure LP."""
    m = linear_program(int(rng.integers(1, 10)), rng)
    integ = {"lp": np.zeros(m.n_vars, dtype=bool), "integer": np.ones(m.n_vars, dtype=bool)}.get(variant, m.integrality)
    row_upper = m.row_upper - 1e3 if variant == "infeasible" else m.row_upper  # no x >= 0 reaches it
    row_lower = np.where(np.isfinite(m.row_lower), np.minimum(m.row_lower, row_upper), m.row_lower)
    return LinearProgram(m.c, m.A, row_lower, row_upper, m.col_lower, m.col_upper, integ, m.sense)
