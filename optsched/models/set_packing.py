"""Weighted set packing: the per-frame subproblem of max-weight scheduling (paper 004).

Given N candidate sets J_1..J_N (jobs), each a subset of the M elements (workers), and
weights w_i >= 0, choose pairwise disjoint sets D maximising sum_{i in D} w_i.
In paper 004 the weight of job i in frame t is Q_i(t) * prod_{j in J_i(t)} P_ij, which makes
this Eq. (2) of Algorithm 1 (line 3); Lemma 8 shows it is NP-hard.

``SetPacking`` is one instance; its solution type is a sorted ``int64`` array of chosen set
indices (0-based). ``SetPackingBatch`` is B instances over one family of sets, one per row of a
(B, N) weight matrix: the frame of a max-weight policy that runs B requirement vectors side by
side (Section IV's regions). It is itself a set packing (max sum_b w_b . x_b over B disjoint
copies of the family), so every set-packing backend solves it; its solution type is a (B, N)
bool matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Sequence

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from optsched.lazy_modules import loaded
from optsched.models.base import (FrozenArrays, Model, cached_form, draw_from, frozen_cached_property, register_fuzz,
                                  register_generator, register_model)
from optsched.models.forms import StandardForm, all_binary_rows, pyomo_values
from optsched.models.validate import float_array, items_of, positive_int, refuse_non_numbers, solution_indices


@dataclass(frozen=True, eq=False)
class SetFamily(FrozenArrays):
    """N sets over M elements in CSR layout: set i is ``indices[indptr[i]:indptr[i+1]]`` (sorted)."""

    n_elements: int
    indptr: np.ndarray
    indices: np.ndarray

    @property
    def n_sets(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @frozen_cached_property
    def sizes(self) -> np.ndarray:
        return np.diff(self.indptr)

    @frozen_cached_property
    def rows(self) -> np.ndarray:
        """The set of each entry of ``indices``."""
        return np.repeat(np.arange(self.n_sets), self.sizes)

    @frozen_cached_property
    def used(self) -> np.ndarray:
        """The elements some set contains, sorted (the others constrain nothing; M itself may
        be far larger than the data, so nothing here allocates M entries)."""
        return np.unique(self.indices)

    @frozen_cached_property
    def dense(self) -> np.ndarray:
        """(N, U) bool incidence over the ``used`` elements."""
        out = np.zeros((self.n_sets, self.used.shape[0]), dtype=bool)
        out[self.rows, np.searchsorted(self.used, self.indices)] = True
        return out

    def sets(self) -> tuple[np.ndarray, ...]:
        out = tuple(np.split(self.indices, self.indptr[1:-1]))
        for s in out:
            s.setflags(write=False)
        return out

    def loads(self, chosen: np.ndarray) -> np.ndarray:
        """How many chosen sets hold each used element, per 0-1 row of ``chosen`` (k, N): (k, U)."""
        return np.asarray(chosen, dtype=np.float64) @ self.dense

    @classmethod
    def from_sets(cls, n_elements: Any, sets: Any) -> "SetFamily":
        """Validate sets of element indices (ValueError naming ``sets[i]``), vectorised: one
        concatenate for the ranges, one sort for the repeats."""
        m = positive_int("n_elements", n_elements)
        sets = items_of("sets", sets, "a list of lists of element indices")
        if len(sets) == 0:
            raise ValueError("sets: needs at least one set")
        if len(sets) > MAX_SETS:
            raise ValueError(f"sets: {len(sets)} sets, more than {MAX_SETS}")
        parts = []
        for i, s in enumerate(sets):
            s = items_of(f"sets[{i}]", s, "a list of element indices")
            refuse_non_numbers(f"sets[{i}]", s)  # np.asarray([True, 2]) would make True the index 1
            try:
                arr = np.asarray(s)
            except ValueError:  # ragged nesting
                raise ValueError(f"sets[{i}]: expected a list of element indices") from None
            if arr.ndim != 1:
                raise ValueError(f"sets[{i}]: expected a list of element indices")
            parts.append(arr)
        sizes = np.fromiter((p.shape[0] for p in parts), dtype=np.int64, count=len(parts))
        indptr = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        rows = np.repeat(np.arange(len(parts)), sizes)
        flat = np.concatenate(parts) if indptr[-1] else np.zeros(0, dtype=np.int64)
        indices = _whole_indices(flat, rows, m)
        order = np.lexsort((indices, rows))
        indices = np.ascontiguousarray(indices[order])
        repeat = np.flatnonzero((indices[1:] == indices[:-1]) & (rows[1:] == rows[:-1]))
        if repeat.size:
            raise ValueError(f"sets[{rows[repeat[0]]}]: repeats an element")
        indices.setflags(write=False)
        indptr.setflags(write=False)
        return cls(m, indptr, indices)

    @classmethod
    def from_incidence(cls, incidence: np.ndarray) -> "SetFamily":
        """The family of the rows of a (N, M) 0-1 matrix (trusted: bools are valid sets)."""
        inc = np.asarray(incidence, dtype=bool)
        if inc.ndim != 2 or inc.shape[0] == 0 or inc.shape[1] == 0:
            raise ValueError("sets: expected a non-empty (N, M) incidence matrix")
        rows, cols = np.nonzero(inc)
        indptr = np.zeros(inc.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=inc.shape[0]), out=indptr[1:])
        indices = cols.astype(np.int64)
        indptr.setflags(write=False)  # writable, a write changed the model's sets (the max-weight policy's families)
        indices.setflags(write=False)
        return cls(int(inc.shape[1]), indptr, indices)


    @classmethod
    def from_pairs(cls, n_elements: int, n_sets: int, member: np.ndarray, element: np.ndarray) -> "SetFamily":
        """The family whose set i holds ``element[j]`` for every j with ``member[j] == i``
        (trusted: indices in range, no element twice in one set; a file reader's checked pairs)."""
        member = np.asarray(member, dtype=np.int64)
        element = np.asarray(element, dtype=np.int64)
        order = np.lexsort((element, member))  # by set, then element: each set's elements sorted
        indptr = np.zeros(n_sets + 1, dtype=np.int64)
        np.cumsum(np.bincount(member, minlength=n_sets), out=indptr[1:])
        indices = np.ascontiguousarray(element[order])
        indptr.setflags(write=False)
        indices.setflags(write=False)
        return cls(int(n_elements), indptr, indices)


def _whole_indices(flat: np.ndarray, rows: np.ndarray, m: int) -> np.ndarray:
    """Element indices as int64: whole numbers (not bools, not strings) in [0, m)."""
    if flat.size == 0:
        return np.zeros(0, dtype=np.int64)
    if flat.dtype.kind not in "iuf":  # bools, strings, None, nested objects
        wrong = np.fromiter((isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating))
                             for v in flat), dtype=bool, count=flat.shape[0])
        if wrong.any() or flat.dtype.kind == "b":
            first = int(np.argmax(wrong)) if wrong.any() else 0
            raise ValueError(f"sets[{rows[first]}]: element indices must be whole numbers")
    try:
        values = flat.astype(np.float64)
    except OverflowError:
        raise ValueError("sets: an element index is too large") from None
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        raise ValueError(f"sets[{rows[np.argmax(bad)]}]: element indices must be whole numbers")
    off = (values < 0) | (values >= m)  # before the cast: 1e300 has no int64
    if off.any():
        raise ValueError(f"sets[{rows[np.argmax(off)]}]: index out of range [0, {m})")
    return values.astype(np.int64)


# backends allocate per element (HiGHS rows, bitsets): 10^7 takes HiGHS 3 GB
MAX_ELEMENTS = 10**6
# and per set (a column each; the model keeps each set as an array): 10^7 empty sets took 2 GB
MAX_SETS = 10**6


def _family(n_elements: Any, sets: Any) -> SetFamily:
    """The validated family of a set packing's ``sets``: a :class:`SetFamily` is checked in a few
    vectorised passes (its constructor takes any arrays: an element of 10^11 in a universe of 3
    made the compiled audit write past its bit words, a segfault), anything else is read by
    :meth:`SetFamily.from_sets`."""
    positive_int("n_elements", n_elements, maximum=MAX_ELEMENTS)
    if not isinstance(sets, SetFamily):
        return SetFamily.from_sets(n_elements, sets)
    f = sets
    if f.n_elements != n_elements:
        raise ValueError(f"n_elements: {n_elements} given with a family over {f.n_elements} elements")
    ptr, idx = f.indptr, f.indices
    if not (isinstance(ptr, np.ndarray) and isinstance(idx, np.ndarray) and ptr.dtype == np.int64
            and idx.dtype == np.int64 and ptr.ndim == 1 and idx.ndim == 1 and ptr.size >= 1):
        raise ValueError("sets: a SetFamily holds 1-D int64 arrays indptr (N + 1 entries) and indices")
    if ptr.size - 1 > MAX_SETS or ptr[0] != 0 or ptr[-1] != idx.size or (ptr.size > 1 and np.diff(ptr).min() < 0):
        raise ValueError("sets: the family's indptr must rise from 0 to the number of indices, at most "
                         f"{MAX_SETS} sets")
    if idx.size and (idx.min() < 0 or idx.max() >= n_elements):
        raise ValueError(f"sets: an element lies outside [0, {n_elements})")
    rising = np.diff(idx) > 0
    rising[ptr[1:-1][(ptr[1:-1] > 0) & (ptr[1:-1] < idx.size)] - 1] = True  # across a set boundary: no order
    if not rising.all():
        raise ValueError("sets: each set's elements must be sorted and distinct")
    return f


@register_model
@dataclass(frozen=True, eq=False)
class SetPacking(Model):
    """max sum_i w_i x_i  s.t.  sum_{i : j in J_i} x_i <= 1 for every element j,  x in {0,1}^N."""

    n_elements: int
    sets: Sequence[Sequence[int]]
    weights: Any

    name: ClassVar[str] = "set_packing"
    SIZE_LABEL: ClassVar[str] = "sets N"
    maximize: ClassVar[bool] = True
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = ("n_elements", "sets", "weights")

    def __post_init__(self) -> None:
        family = _family(self.n_elements, self.sets)
        w = float_array("weights", self.weights, shape=(family.n_sets,), nonnegative=True)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "n_elements", family.n_elements)
        object.__setattr__(self, "sets", family.sets())
        object.__setattr__(self, "weights", w)

    family: ClassVar[SetFamily]  # set in __post_init__ (not a field)

    @property
    def n_sets(self) -> int:
        return self.family.n_sets

    @property
    def size(self) -> int:
        return self.n_sets

    @property
    def set_sizes(self) -> np.ndarray:
        return self.family.sizes

    @frozen_cached_property
    def incidence(self) -> "sp.csr_matrix":
        """N x U 0-1 matrix over the used elements (``family.used``): row i marks set i's."""
        import scipy.sparse as sp

        f = self.family
        cols = np.searchsorted(f.used, f.indices)
        return sp.csr_matrix((np.ones(f.indices.shape[0]), cols, f.indptr), shape=(f.n_sets, f.used.shape[0]))

    # --- the model's own math ------------------------------------------------------------
    def _as_indices(self, solution: Any) -> np.ndarray:
        return solution_indices(solution)

    def objective(self, solution: Any) -> float:
        return float(self.weights[solution_indices(solution, self.n_sets)].sum())

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        """Indices in range, no set twice, no element in two chosen sets. The common case (a
        sorted selection of disjoint sets) costs one gather and one sort of its elements."""
        idx = self._as_indices(solution)
        if idx.size == 0:
            return []
        ordered = idx.size == 1 or bool((idx[1:] > idx[:-1]).all())
        low, high = (idx[0], idx[-1]) if ordered else (idx.min(), idx.max())
        if low < 0 or high >= self.n_sets:
            return [f"set index out of range [0, {self.n_sets})"]
        if not ordered and (np.bincount(idx) > 1).any():
            return ["a set is chosen twice"]
        f = self.family
        chosen = np.zeros(self.n_sets, dtype=bool)
        chosen[idx] = True
        elements = np.sort(f.indices[chosen[f.rows]])
        if not (elements[1:] == elements[:-1]).any():
            return []
        elements, counts = np.unique(elements, return_counts=True)
        clash = np.flatnonzero(counts > 1)
        return [f"element {elements[j]} is in {counts[j]} chosen sets" for j in clash[:3]]

    def audit(self, solution: Any, *, tol: float = 1e-9) -> tuple[list[str], float]:
        """``violations`` and ``objective`` in one compiled call when the selection is clean."""
        idx = self._as_indices(solution)
        f = self.family
        clean, value = loaded("optsched.models.set_packing_kernel").check_selection(idx, self.weights, f.indptr, f.indices,
                                                                                    f.n_elements)
        if clean:
            return [], float(value)
        return super().audit(idx, tol=tol)

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = rows.astype(np.float64)
        load = np.asarray(self.incidence.T @ x.T).T  # (k, M) elements used per row
        return load.max(axis=1, initial=0.0) <= 1.0, x @ self.weights

    @property
    def n_binary(self) -> int:
        return self.n_sets

    def all_packings(self) -> np.ndarray:
        """Every feasible 0-1 selection as rows of a (K, N) bool matrix (small N only)."""
        return all_packings(self.family)

    # --- forms ---------------------------------------------------------------------------------
    @cached_form
    def to_standard_form(self) -> StandardForm:
        """One packing row per used element (elements in no set constrain nothing)."""
        n, m = self.n_sets, self.incidence.shape[1]
        return StandardForm(
            maximize=True,
            c=np.asarray(self.weights, dtype=np.float64),
            A=self.incidence.T.tocsr(),
            row_lower=np.full(m, -np.inf),
            row_upper=np.ones(m),
            col_lower=np.zeros(n),
            col_upper=np.ones(n),
            integrality=np.ones(n, dtype=bool),
        )

    def solution_from_vector(self, x: np.ndarray) -> np.ndarray:
        return np.flatnonzero(np.asarray(x) > 0.5).astype(np.int64)

    def to_pyomo(self) -> Any:
        import pyomo.environ as pyo

        m = pyo.ConcreteModel(name="set_packing")
        used = self.family.used
        m.I = pyo.RangeSet(0, self.n_sets - 1)
        m.J = pyo.RangeSet(0, used.shape[0] - 1)  # the elements some set contains
        m.x = pyo.Var(m.I, domain=pyo.Binary)
        members: list[list[int]] = [[] for _ in range(used.shape[0])]
        for i, s in enumerate(self.sets):
            for j in np.searchsorted(used, s):
                members[j].append(i)

        def pack(mm: Any, j: int) -> Any:
            if len(members[j]) < 2:
                return pyo.Constraint.Skip
            return sum(mm.x[i] for i in members[j]) <= 1

        m.pack = pyo.Constraint(m.J, rule=pack)
        m.weight = pyo.Objective(
            expr=sum(float(self.weights[i]) * m.x[i] for i in m.I), sense=pyo.maximize
        )
        return m

    def solution_from_pyomo(self, m: Any) -> np.ndarray:
        x = pyomo_values(m.x, self.n_sets)
        return self.solution_from_vector(x)

    @classmethod
    def random(
        cls, rng: np.random.Generator, n_sets: int, n_elements: int, *, max_size: int = 4, integer_weights: bool = False
    ) -> "SetPacking":
        """Random instance: set sizes uniform in 1..max_size, elements drawn without replacement,
        weights uniform in [0, 1) (or whole numbers 1..100)."""
        sizes = rng.integers(1, min(max_size, n_elements) + 1, size=n_sets)
        sets = [rng.choice(n_elements, size=k, replace=False) for k in sizes]
        weights = rng.integers(1, 101, size=n_sets) if integer_weights else rng.random(n_sets)
        return cls(n_elements, sets, weights)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "n_elements": self.n_elements,
            "sets": [s.tolist() for s in self.sets],
            "weights": self.weights.tolist(),
        }


def all_packings(family: SetFamily) -> np.ndarray:
    """Every feasible 0-1 selection of the family's sets as rows of a (K, N) bool matrix
    (2^N rows are enumerated: small N only)."""
    rows = all_binary_rows(family.n_sets, 0, 1 << family.n_sets)
    return rows[family.loads(rows).max(axis=1, initial=0.0) <= 1.0]


@register_model
@dataclass(frozen=True, eq=False)
class SetPackingBatch(Model):
    """B set packings over one family: max sum_b w_b . x_b, each x_b a packing of the sets.

    ``weights`` is (B, N). The copies share no constraint, so the optimum is the sum of the
    members' optima (:meth:`member`); the standard form is the block-diagonal program."""

    n_elements: int
    sets: Sequence[Sequence[int]]
    weights: Any

    name: ClassVar[str] = "set_packing_batch"
    SIZE_LABEL: ClassVar[str] = "copies x sets (B N)"
    maximize: ClassVar[bool] = True
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = ("n_elements", "sets", "weights")

    family: ClassVar[SetFamily]  # set in __post_init__ (not a field)

    def __post_init__(self) -> None:
        family = _family(self.n_elements, self.sets)
        w = float_array("weights", self.weights, ndim=2, shape=(None, family.n_sets), nonnegative=True, min_size=1)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "n_elements", family.n_elements)
        object.__setattr__(self, "sets", family.sets())
        object.__setattr__(self, "weights", w)

    @classmethod
    def from_incidence(cls, incidence: np.ndarray, weights: Any) -> "SetPackingBatch":
        """The batch over the rows of a (N, M) 0-1 matrix (the jobs of one frame)."""
        family = SetFamily.from_incidence(incidence)
        return cls(family.n_elements, family, weights)  # type: ignore[arg-type]

    @property
    def n_copies(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_sets(self) -> int:
        return self.family.n_sets

    @property
    def size(self) -> int:
        return self.n_copies * self.n_sets

    def member(self, b: int) -> SetPacking:
        """Copy b as a stand-alone :class:`SetPacking`."""
        return SetPacking(self.n_elements, self.family, self.weights[b])  # type: ignore[arg-type]

    # --- the model's own math ------------------------------------------------------------
    def _as_matrix(self, solution: Any) -> np.ndarray:
        x = np.asarray(solution) if not isinstance(solution, (str, bytes)) else np.array([], dtype=object)
        if x.dtype.kind not in "biuf":
            raise ValueError(f"solution: expected a 0-1 matrix, got {type(solution).__name__}")
        return x

    def objective(self, solution: Any) -> float:
        x = self._as_matrix(solution)
        if x.shape != self.weights.shape:
            raise ValueError(f"solution: has shape {x.shape}, expected {self.weights.shape}")
        return float(np.vdot(self.weights, x.astype(np.float64)))

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        x = self._as_matrix(solution)
        if x.shape != self.weights.shape:
            return [f"solution has shape {x.shape}, expected {self.weights.shape}"]
        if x.dtype != bool and not np.isin(x, (0, 1)).all():
            return ["solution entries must be 0 or 1"]
        loads = self.family.loads(x)
        over = np.argwhere(loads > 1)
        used = self.family.used
        return [f"copy {b}: element {used[j]} is in {int(loads[b, j])} chosen sets" for b, j in over[:3]]

    @property
    def n_binary(self) -> int:
        return self.n_copies * self.n_sets

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = rows.reshape(rows.shape[0] * self.n_copies, self.n_sets)
        feasible = self.family.loads(x).max(axis=1, initial=0.0) <= 1.0
        return feasible.reshape(rows.shape[0], self.n_copies).all(axis=1), rows.astype(np.float64) @ self.weights.ravel()

    @cached_form
    def to_standard_form(self) -> StandardForm:
        import scipy.sparse as sp

        B, n, m = self.n_copies, self.n_sets, self.family.used.shape[0]
        block = sp.csr_matrix(self.family.dense.T.astype(np.float64))  # rows: the used elements
        return StandardForm(
            maximize=True,
            c=self.weights.ravel().astype(np.float64),
            A=sp.kron(sp.identity(B, format="csr"), block, format="csr"),
            row_lower=np.full(B * m, -np.inf),
            row_upper=np.ones(B * m),
            col_lower=np.zeros(B * n),
            col_upper=np.ones(B * n),
            integrality=np.ones(B * n, dtype=bool),
        )

    def solution_from_vector(self, x: np.ndarray) -> np.ndarray:
        return (np.asarray(x) > 0.5).reshape(self.n_copies, self.n_sets)

    def solution_to_json(self, solution: Any) -> Any:
        return np.asarray(solution, dtype=bool).astype(int).tolist()

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "n_elements": self.n_elements,
            "sets": [s.tolist() for s in self.family.sets()],
            "weights": self.weights.tolist(),
        }


# --- the kinds' generators --------------------------------------------------------------------------------
# rtol 1e-9: exact only with HiGHS's HIGHS_MIP_ORACLE_OPTIONS, models/forms.py (the fuzz variant
# extreme_weights mixes weights 1 and 1e-9, which HiGHS's defaults treat as zero).
@register_generator("set_packing", quick=(20, 50, 200), full=(10, 20, 50, 100, 200, 500, 1000), tiny=6, rtol=1e-9)
def set_packing(size: int, rng: np.random.Generator) -> Model:
    """N = M = ``size`` (sets = elements), set sizes 1..4, weights U[0, 1)
    (benchmarks/bench_set_packing)."""
    return SetPacking.random(rng, size, size, max_size=4)


BATCH_COPIES = 8  # weight vectors of a generated set_packing_batch


@register_generator("set_packing_batch", quick=(4, 8, 16), full=(4, 8, 12, 16, 20), tiny=4, rtol=1e-9)
def set_packing_batch(size: int, rng: np.random.Generator) -> Model:
    """A max-weight frame: ``size`` jobs over ``size`` workers (sets of 1..4 elements) and
    ``BATCH_COPIES`` weight vectors U[0, 1)."""
    one = SetPacking.random(rng, size, size, max_size=4)
    return SetPackingBatch(one.n_elements, one.family, rng.random((BATCH_COPIES, size)))  # type: ignore[arg-type]


# --- the kind's fuzz builder (tests/test_fuzz.py): degenerate variants ---


@register_fuzz("set_packing", *("random", "empty_sets", "zero_weights", "ties", "one_element", "extreme_weights"), examples=80)
def fuzz_set_packing(rng: np.random.Generator, variant: str) -> SetPacking:
    m = 1 if variant == "one_element" else int(rng.integers(1, 8))
    n = int(rng.integers(1, 11))
    sizes = rng.integers(0, m + 1, n)
    if variant == "empty_sets":
        sizes[rng.random(n) < 0.6] = 0
    sets = [rng.choice(m, size=int(k), replace=False) for k in sizes]
    if variant == "ties":
        sets = sets + [sets[0]] * int(rng.integers(1, 3))  # duplicate sets, equal weights
        weights = draw_from(rng, [1.0, 2.0], len(sets))
    elif variant == "zero_weights":
        weights = np.zeros(len(sets))
    elif variant == "extreme_weights":
        weights = draw_from(rng, [0.0, 1e-9, 1.0, 1e6], len(sets))
    else:
        weights = rng.random(len(sets)) if rng.random() < 0.5 else rng.integers(0, 20, len(sets)).astype(float)
    return SetPacking(m, sets, weights)


@register_fuzz("set_packing_batch", *("random", "empty_sets", "zero_weights", "ties", "one_element", "extreme_weights"), examples=60)
def fuzz_set_packing_batch(rng: np.random.Generator, variant: str) -> SetPackingBatch:
    """A max-weight frame: the family of ``build_set_packing``, 1..3 weight vectors."""
    one = fuzz_set_packing(rng, variant)
    copies = int(rng.integers(1, 4))
    weights = np.vstack([one.weights] + [rng.permutation(one.weights) for _ in range(copies - 1)])
    return SetPackingBatch(one.n_elements, one.sets, weights)
