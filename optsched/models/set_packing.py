"""Weighted set packing: the per-frame subproblem of max-weight scheduling (paper 004).

Given N candidate sets J_1..J_N (jobs), each a subset of the M elements (workers), and
weights w_i >= 0, choose pairwise disjoint sets D maximising sum_{i in D} w_i.
In paper 004 the weight of job i in frame t is Q_i(t) * prod_{j in J_i(t)} P_ij, which makes
this Eq. (2) of Algorithm 1 (line 3); Lemma 8 shows it is NP-hard.

Solution type: a sorted ``int64`` array of chosen set indices (0-based).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Sequence

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from optsched.models.base import Model, register_model
from optsched.models.forms import StandardForm
from optsched.models.validate import float_array, index_array, positive_int


@register_model
@dataclass(frozen=True, eq=False)
class SetPacking(Model):
    """max sum_i w_i x_i  s.t.  sum_{i : j in J_i} x_i <= 1 for every element j,  x in {0,1}^N."""

    n_elements: int
    sets: Sequence[Sequence[int]]
    weights: Any

    name: ClassVar[str] = "set_packing"
    maximize: ClassVar[bool] = True
    FORMS: ClassVar[frozenset[str]] = frozenset({"standard", "pyomo", "binary"})
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = ("n_elements", "sets", "weights")

    def __post_init__(self) -> None:
        m = positive_int("n_elements", self.n_elements)
        if m > 10**6:  # backends allocate per element (HiGHS rows, bitsets): 10^7 takes HiGHS 3 GB
            raise ValueError(f"n_elements: must be <= 1000000, got {m}")
        if isinstance(self.sets, (str, bytes)) or not isinstance(self.sets, (list, tuple, np.ndarray)):
            raise ValueError("sets: expected a list of lists of element indices")
        if len(self.sets) == 0:
            raise ValueError("sets: needs at least one set")
        sets = []
        for i, s in enumerate(self.sets):
            if isinstance(s, (str, bytes, dict)) or not hasattr(s, "__len__"):
                raise ValueError(f"sets[{i}]: expected a list of element indices")
            arr = index_array(f"sets[{i}]", list(s), upper=m)
            if len(np.unique(arr)) != len(arr):
                raise ValueError(f"sets[{i}]: repeats an element")
            arr = np.sort(arr)
            arr.setflags(write=False)
            sets.append(arr)
        w = float_array("weights", self.weights, shape=(len(sets),), nonnegative=True)
        object.__setattr__(self, "n_elements", m)
        object.__setattr__(self, "sets", tuple(sets))
        object.__setattr__(self, "weights", w)

    @property
    def n_sets(self) -> int:
        return len(self.sets)

    @property
    def size(self) -> int:
        return self.n_sets

    @cached_property
    def incidence(self) -> "sp.csr_matrix":
        """N x M 0-1 matrix: row i marks the elements of set i."""
        indptr = np.cumsum([0] + [len(s) for s in self.sets])
        indices = np.concatenate(self.sets) if indptr[-1] else np.zeros(0, np.int64)
        data = np.ones(indptr[-1], dtype=np.float64)
        import scipy.sparse as sp

        return sp.csr_matrix((data, indices, indptr), shape=(self.n_sets, self.n_elements))

    @cached_property
    def element_words(self) -> np.ndarray:
        """N x ceil(M/64) uint64 matrix: bit j % 64 of word j // 64 of row i marks element j of set i."""
        words = np.zeros((self.n_sets, (self.n_elements + 63) // 64), dtype=np.uint64)
        rows = np.repeat(np.arange(self.n_sets), self.set_sizes)
        cols = np.concatenate(self.sets) if rows.size else np.zeros(0, np.int64)
        np.bitwise_or.at(words, (rows, cols // 64), np.left_shift(np.uint64(1), (cols % 64).astype(np.uint64)))
        return words

    @cached_property
    def set_sizes(self) -> np.ndarray:
        return np.array([len(s) for s in self.sets], dtype=np.int64)

    # --- the model's own math ------------------------------------------------------------
    def _as_indices(self, solution: Any) -> np.ndarray:
        return np.asarray(solution, dtype=np.int64).reshape(-1)

    def objective(self, solution: Any) -> float:
        return float(self.weights[self._as_indices(solution)].sum())

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        idx = self._as_indices(solution)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_sets):
            return [f"set index out of range [0, {self.n_sets})"]
        if len(np.unique(idx)) != len(idx):
            return ["a set is chosen twice"]
        counts = np.zeros(self.n_elements, dtype=np.int64)
        for i in idx:
            counts[self.sets[i]] += 1
        clash = np.flatnonzero(counts > 1)
        return [f"element {j} is in {counts[j]} chosen sets" for j in clash[:3]]

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = rows.astype(np.float64)
        load = np.asarray(self.incidence.T @ x.T).T  # (k, M) elements used per row
        return load.max(axis=1, initial=0.0) <= 1.0, x @ self.weights

    @property
    def n_binary(self) -> int:
        return self.n_sets

    def all_packings(self) -> np.ndarray:
        """Every feasible 0-1 selection as rows of a (K, N) bool matrix (small N only)."""
        from optsched.solvers.brute_force import all_binary_rows

        rows = all_binary_rows(self.n_sets, 0, 1 << self.n_sets)
        feasible, _ = self.evaluate_binary(rows)
        return rows[feasible]

    # --- forms ---------------------------------------------------------------------------------
    def standard_form(self) -> StandardForm:
        n, m = self.n_sets, self.n_elements
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

    def pyomo_model(self) -> Any:
        import pyomo.environ as pyo

        m = pyo.ConcreteModel(name="set_packing")
        m.I = pyo.RangeSet(0, self.n_sets - 1)
        m.J = pyo.RangeSet(0, self.n_elements - 1)
        m.x = pyo.Var(m.I, domain=pyo.Binary)
        members: list[list[int]] = [[] for _ in range(self.n_elements)]
        for i, s in enumerate(self.sets):
            for j in s:
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
        x = np.array([m.x[i].value or 0.0 for i in range(self.n_sets)])
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
