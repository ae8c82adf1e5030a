"""The per-job pseudo-social-welfare program P3 of ONSOCMAX (paper 002, Proposition 2).

For job n over its resource units R_n (its nodes K_n, slots from arrival to deadline, (1)):

    max  W(x) = sum_r [ f_nr(x_r) + g_nr(x_r) - int_{w_r}^{w_r + x_r} phi_r(u) du ]
    s.t. sum_r x_r <= rho_n                                   (4)
         0 <= x_r <= xbar_nr                                  (7)

with f_n(x) = sum_r f_nr(x_r) by (2) (the job utility is separable over units), the cluster
utility g_nr(x) = beta_nr x / C_r of (3), usage levels w_r = w_r^(n) of (11), and the price
phi_r of Theorem 2 (:mod:`optsched.models.prices`). phi_r = +inf above C_r, so
w_r + x_r <= C_r is implied; we state it as a constraint. (5) is built in: only R_n's units
are variables.

``PseudoWelfare`` is the partitionable program (backends ``kkt`` exact, ``alm`` Algorithm 2,
``cvxpy`` the exponential-cone oracle). ``PseudoWelfareIntegral`` is Section III-D's
non-partitionable variant, x_r in {0, xbar_r} (43): each unit's value is then a constant,
so P3 becomes a 0-1 knapsack (HiGHS / CP-SAT / brute force through the standard and binary
forms).

Solution type: a float64 array x, one entry per unit, in the order of the input arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from optsched.models.base import Model, cached_form, register_fuzz, register_generator, register_model
from optsched.models.forms import StandardForm
from optsched.models.validate import FEASIBILITY_TOL, finite_float, float_array, items_of, not_whole_units, packing_slack, per_capacity, scaled_onto_capacity, solution_vector
from optsched.models import prices, utilities

if TYPE_CHECKING:
    pass


CAPACITY_ULPS = 8 * np.finfo(float).eps  # w_r + x_r this far past C_r is C_r rounded (0.1 + 0.2 vs 0.3)


@dataclass(frozen=True, eq=False)
class JobWelfare(Model):
    """The data and math P3 and its non-partitionable variant share: one arriving job's units.
    ``utility`` is one kind name for every unit, one per unit, or an integer array of kind codes
    (:data:`optsched.models.utilities.KINDS`); ``iota``/``upsilon`` default to (8) over this
    job's own units; ``alpha`` to alpha-hat."""

    utility: Any
    a: Any
    beta: Any
    capacity: Any
    xbar: Any
    rho: float
    usage: Any = None
    iota: float | None = None
    upsilon: float | None = None
    alpha: float | None = None

    SIZE_LABEL: ClassVar[str] = "resource units of the job"
    maximize: ClassVar[bool] = True
    WHOLE_UNITS: ClassVar[bool] = False  # x_r in {0, xbar_r} (43): (4) is held as a 0-1 selection
    JSON_REQUIRED: ClassVar[tuple[str, ...]] = ("utility", "a", "beta", "capacity", "xbar", "rho")
    JSON_OPTIONAL: ClassVar[tuple[str, ...]] = ("usage", "iota", "upsilon", "alpha")

    def __post_init__(self) -> None:
        a = float_array("a", self.a, nonnegative=True, min_size=1)
        n = a.size
        if isinstance(self.utility, str):
            kinds = np.full(n, utilities.kind_codes(self.utility)[0])
        elif isinstance(self.utility, np.ndarray) and self.utility.dtype.kind in "iu":  # codes (a policy's loop)
            if self.utility.shape != (n,) or (self.utility < 0).any() or (self.utility >= len(utilities.KINDS)).any():
                raise ValueError(f"utility: expected {n} kind codes in [0, {len(utilities.KINDS)})")
            kinds = self.utility.astype(np.int64)
        elif isinstance(self.utility, (list, tuple, np.ndarray)):
            if len(items_of("utility", self.utility, "kind names")) != n:
                raise ValueError(f"utility: has {len(self.utility)} kinds, expected {n}")
            if not all(isinstance(k, str) for k in self.utility):
                raise ValueError("utility: expected kind names (strings)")
            kinds = utilities.kind_codes(list(self.utility))
        else:
            raise ValueError("utility: expected a kind name or a list of kind names")
        kinds.setflags(write=False)
        beta = float_array("beta", self.beta, shape=(n,), nonnegative=True)
        cap = float_array("capacity", self.capacity, shape=(n,))
        if (cap <= 0).any():
            raise ValueError("capacity: every C_r must be > 0")
        per_capacity("capacity", beta, cap)
        xbar = float_array("xbar", self.xbar, shape=(n,), nonnegative=True)
        usage = float_array("usage", np.zeros(n) if self.usage is None else self.usage, shape=(n,), nonnegative=True)
        if (usage > cap).any():
            raise ValueError("usage: a unit is already used above its capacity")
        rho = finite_float("rho", self.rho, minimum=0.0)
        if self.iota is None or self.upsilon is None:
            own_iota, own_upsilon = prices.iota_upsilon(kinds, a, beta, cap, xbar)
        iota = own_iota if self.iota is None else finite_float("iota", self.iota)
        if iota <= 0:
            raise ValueError(f"iota: must be > 0, got {iota}")
        upsilon = own_upsilon if self.upsilon is None else finite_float("upsilon", self.upsilon)
        if upsilon < iota:
            raise ValueError(f"upsilon: must be >= iota ({iota}), got {upsilon}")
        alpha = prices.alpha_hat(upsilon / iota) if self.alpha is None else finite_float("alpha", self.alpha)
        if not 1 < alpha <= prices.LARGEST_ALPHA:
            raise ValueError(f"alpha: must be in (1, {prices.LARGEST_ALPHA:g}], got {alpha}")
        for key, value in (
            ("utility", kinds), ("a", a), ("beta", beta), ("capacity", cap), ("xbar", xbar),
            ("usage", usage), ("rho", rho), ("iota", iota), ("upsilon", upsilon), ("alpha", float(alpha)),
        ):
            object.__setattr__(self, key, value)

    # --- derived data -------------------------------------------------------------------------
    @property
    def n_units(self) -> int:
        return int(self.a.size)

    @property
    def size(self) -> int:
        return self.n_units

    @property
    def upper(self) -> np.ndarray:
        """u_r = min(xbar_r, C_r - w_r): the largest feasible x_r."""
        return np.minimum(self.xbar, self.capacity - self.usage)

    def kernel_args(self) -> tuple[Any, ...]:
        """Positional arguments of the ``kkt``/``alm`` kernels for this instance."""
        return (self.utility, self.a, self.beta, self.capacity, self.xbar, self.usage,
                self.rho, self.iota, self.upsilon, self.alpha)

    def unit_welfare(self, x: Any) -> np.ndarray:
        """f_nr(x_r) + g_nr(x_r) - Phi_r(x_r) per unit; -inf where w_r + x_r > C_r."""
        x = np.asarray(x, dtype=np.float64)
        end = self.usage + x
        # x = C - w exactly can sum to C plus an ulp, where the price is +inf: rounding, not overload
        end = np.where((end > self.capacity) & (end <= self.capacity * (1 + CAPACITY_ULPS)), self.capacity, end)
        cost = prices.price_integral(self.usage, end, self.capacity, self.iota, self.upsilon, self.alpha)
        return utilities.value(self.utility, self.a, x) + self.beta * x / self.capacity - cost

    # --- the model's own math -------------------------------------------------------------------
    def zero_solution(self) -> np.ndarray:
        return np.zeros(self.n_units)

    def _vector(self, solution: Any) -> np.ndarray:
        return solution_vector(solution).reshape(-1)

    @property
    def reach(self) -> float:
        """The most the workloads can sum to (sum of xbar): the floor of (4)'s slack, below 1."""
        return self.memo("reach", lambda: float(np.sum(self.xbar)))

    @property
    def scale(self) -> float:
        """The largest workload bound: a solver's zero is measured against it, below 1."""
        return self.memo("scale", lambda: float(np.max(self.xbar, initial=0.0)))

    def objective(self, solution: Any) -> float:
        return float(self.unit_welfare(solution_vector(solution, self.n_units)).sum())

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        x = self._vector(solution)
        if x.size != self.n_units:
            return [f"solution has {x.size} entries, expected {self.n_units}"]
        if not np.isfinite(x).all():
            return ["solution has a non-finite entry"]
        out = []
        total = float(x.sum())
        if total > self.rho + packing_slack(tol, self.rho, total, self.reach, whole_units=self.WHOLE_UNITS):
            out.append(f"(4): total {total} exceeds rho = {self.rho}")
        floor = tol * min(1.0, self.scale)  # a solver's zero at the job's own scale
        for r in np.flatnonzero(x < -floor)[:3]:
            out.append(f"(7): x[{r}] = {x[r]} < 0")
        for r in np.flatnonzero(x > self.xbar + np.maximum(floor, tol * self.xbar))[:3]:
            out.append(f"(7): x[{r}] = {x[r]} > xbar = {self.xbar[r]}")
        for r in np.flatnonzero(self.usage + x > self.capacity * (1.0 + tol))[:3]:
            out.append(f"capacity: w + x[{r}] = {self.usage[r] + x[r]} > C = {self.capacity[r]}")
        return out

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["utility"] = [utilities.KINDS[k] for k in self.utility]
        return out


@register_model
@dataclass(frozen=True, eq=False)
class PseudoWelfare(JobWelfare):
    """P3 for one arriving job (fractional workloads, (7)): a convex program."""

    name: ClassVar[str] = "pseudo_welfare"

    def objective_magnitude(self) -> float:
        """A bound on |objective| over the feasible x: with t_r = min(upper_r, rho), the gain
        f_r + g_r is increasing from 0, and so is the cost Phi_r (prices are >= 0), so the
        objective lies within [-sum Phi_r(t_r), sum (f_r + g_r)(t_r)]. The seam's agreement is
        absolute below it (``Model.objective_magnitude``), as for the other kinds without a
        standard form (P1, ``onsocmax_offline``, at a welfare of 6e-7: Clarabel's answer at half
        the optimum agreed with its bound within 1e-6 of scale 1 and was called optimal)."""
        t = np.minimum(np.maximum(self.upper, 0.0), self.rho)
        gain = utilities.value(self.utility, self.a, t) + self.beta * t / self.capacity
        cost = prices.price_integral(self.usage, self.usage + t, self.capacity, self.iota, self.upsilon, self.alpha)
        magnitude = float(np.sum(gain) + np.sum(cost))
        return magnitude if math.isfinite(magnitude) else 1.0

    # --- cvxpy form (the oracle) --------------------------------------------------------------
    def to_cvxpy(self) -> tuple[Any, Any]:
        """DCP form. phi = max(iota, h) with h the exponential piece, increasing, h(w_hat) = iota,
        so Phi_r(x) = iota x + H(max(w + x, w_hat)) - H(max(w, w_hat)) with H(u) = int (h - iota),
        convex and increasing on [w_hat, inf). An epigraph variable replaces the max (H is
        increasing there, so it is tight at the optimum); it is scaled as
        t_r = alpha u_r / C_r - alpha/(alpha-1) >= 0 (0 at w_hat), and H's exponential e^t goes
        through the exponential cone."""
        import cvxpy as cp

        n = self.n_units
        io, al = self.iota, self.alpha
        cap, w = self.capacity, self.usage
        s = al / (al - 1.0)
        x = cp.Variable(n, name="x")
        # t = alpha u / C - alpha/(alpha-1): dimensionless usage, 0 at w_hat (scaled for the solver)
        t = cp.Variable(n, name="t")
        parts = []  # f_n(x) = sum_r f_nr(x_r) (2), grouped by kind
        for code, kind in enumerate(utilities.KINDS):
            idx = np.flatnonzero(self.utility == code)
            if idx.size:
                parts.append(_CVXPY_UTILITY[kind](self.a[idx], x[idx]))
        # H(u) - H(u0) = (iota/alpha - iota)(u - u0) + iota (alpha-1) C/alpha^2 (e^t - e^t0)
        t0 = np.maximum(al * w / cap - s, 0.0)
        lin = (io / al - io) * cap / al
        k = io * (al - 1.0) * cap / al**2
        cost = io * cp.sum(x) + cp.sum(cp.multiply(lin, t - t0) + cp.multiply(k, cp.exp(t) - np.exp(t0)))
        welfare = cp.sum(cp.hstack(parts)) + cp.sum(cp.multiply(self.beta / cap, x)) - cost
        constraints = [
            cp.sum(x) <= self.rho, x >= 0, x <= self.upper, t >= cp.multiply(al / cap, w + x) - s, t >= 0, t <= al - s,
        ]
        problem = cp.Problem(cp.Maximize(welfare), constraints)

        def to_solution() -> np.ndarray:  # clipped into the box, then onto (4) when over it
            x_in = np.clip(np.asarray(x.value, dtype=np.float64), 0.0, self.upper)
            return scaled_onto_capacity(x_in, np.zeros(n, dtype=np.int64), np.array([self.rho]))

        return problem, to_solution

    def cvxpy_default_solver(self) -> tuple[str, dict[str, Any]]:
        # With default settings Clarabel stopped with InsufficientProgress on ~1 job in 300
        # (before t got its upper bound); these settings solved the 4000 test jobs.
        return "CLARABEL", {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10,
                            "equilibrate_enable": False, "max_step_fraction": 0.9}


def _cvx_sum_linear(a: np.ndarray, x: Any) -> Any:
    import cvxpy as cp

    return cp.sum(cp.multiply(a, x))


def _cvx_sum_log(a: np.ndarray, x: Any) -> Any:
    import cvxpy as cp

    return cp.sum(cp.multiply(a, cp.log(1 + x)))


def _cvx_sum_sqrt(a: np.ndarray, x: Any) -> Any:
    import cvxpy as cp

    return cp.sum(cp.multiply(a, cp.sqrt(1 + x) - 1))


_CVXPY_UTILITY = {"linear": _cvx_sum_linear, "log": _cvx_sum_log, "sqrt": _cvx_sum_sqrt}


@register_model
@dataclass(frozen=True, eq=False)
class PseudoWelfareIntegral(JobWelfare):
    """Section III-D: non-partitionable workloads, x_r in {0, xbar_r} (43) instead of (7).

    Taking unit r is worth the constant v_r = f_nr(xbar_r) + g_nr(xbar_r) - Phi_r(xbar_r)
    and is possible only when w_r + xbar_r <= C_r, so P3 is the 0-1 knapsack
    max sum_r v_r z_r s.t. sum_r xbar_r z_r <= rho. (The paper also sets xbar_nr = rho_n, which
    makes it "pick at most one unit"; we keep general xbar so both cases are covered.)"""

    name: ClassVar[str] = "pseudo_welfare_integral"
    WHOLE_UNITS: ClassVar[bool] = True
    SIZE_LABEL: ClassVar[str] = "resource units of the job"

    @property
    def takeable(self) -> np.ndarray:
        return self.usage + self.xbar <= self.capacity * (1 + CAPACITY_ULPS)  # where unit_welfare is defined

    @property
    def unit_values(self) -> np.ndarray:
        """v_r (0 where the unit cannot be taken: w_r + xbar_r > C_r)."""
        return np.where(self.takeable, self.unit_welfare(np.where(self.takeable, self.xbar, 0.0)), 0.0)

    def violations(self, solution: Any, *, tol: float = 1e-9) -> list[str]:
        out = super().violations(solution, tol=tol)
        if out:
            return out
        x = self._vector(solution)
        off = not_whole_units(x, self.xbar, tol)
        return [f"(43): x[{r}] = {x[r]} is neither 0 nor xbar = {self.xbar[r]}" for r in np.flatnonzero(off)[:3]]

    @cached_form
    def to_standard_form(self) -> StandardForm:
        import scipy.sparse as sp
        n = self.n_units
        return StandardForm(
            maximize=True,
            c=self.unit_values,
            A=sp.csr_matrix(self.xbar.reshape(1, n)),
            row_lower=np.array([-np.inf]),
            row_upper=np.array([self.rho]),
            col_lower=np.zeros(n),
            col_upper=self.takeable.astype(np.float64),
            integrality=np.ones(n, dtype=bool),
        )

    def solution_from_vector(self, z: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(z) > 0.5, self.xbar, 0.0)

    @property
    def n_binary(self) -> int:
        return self.n_units

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = rows.astype(np.float64)
        # the rows of violations, at its default tolerance
        total = z @ self.xbar
        feasible = ((total <= self.rho + packing_slack(FEASIBILITY_TOL, self.rho, total, self.reach, whole_units=True))
                    & ~(rows & ~self.takeable).any(axis=1))
        return feasible, z @ self.unit_values


# --- the kinds' generators ---------------------------------------------------------------------
def pseudo_welfare_job(rng: np.random.Generator, n: int, kind: str, *, integral: bool = False) -> Model:
    """Section IV draws (a ~ U[1,3], beta ~ U[0.1,0.5], C ~ N(20,2), xbar ~ N(7,1)), rho ~
    N(18,3) scaled by |R_n| / 24 so (4) stays binding, usage levels U[0, 0.9] C."""
    cls = PseudoWelfareIntegral if integral else PseudoWelfare
    cap = np.abs(rng.normal(20, 2, n)) + 1
    return cls(
        utility=kind, a=rng.uniform(1, 3, n), beta=rng.uniform(0.1, 0.5, n), capacity=cap,
        xbar=np.abs(rng.normal(7, 1, n)), usage=cap * rng.uniform(0, 0.9, n),
        rho=float(abs(rng.normal(18, 3))) * max(1.0, n / 24),
    )


def random_kind(rng: np.random.Generator) -> str:
    """A utility kind of (2) drawn uniformly."""
    return str(utilities.KINDS[int(rng.integers(len(utilities.KINDS)))])


# rtol 1e-6 for the convex program (conic solvers at 1e-10), 1e-9 for the integral MIP.
@register_generator("pseudo_welfare", quick=(4, 16, 64), full=(4, 8, 16, 32, 64, 128, 256), tiny=4, rtol=1e-6)
def pseudo_welfare(size: int, rng: np.random.Generator) -> Model:
    """A Section IV job of paper 002 on ``size`` = |R_n| units at random usage levels, utility kind
    at random (benchmarks/bench_pseudo_welfare)."""
    return pseudo_welfare_job(rng, size, random_kind(rng))


@register_generator("pseudo_welfare_integral", quick=(4, 16, 64), full=(4, 8, 16, 32, 64, 128, 256), tiny=4, rtol=1e-9)
def pseudo_welfare_integral(size: int, rng: np.random.Generator) -> Model:
    """The same job as :func:`pseudo_welfare`, non-partitionable (Section III-D)."""
    return pseudo_welfare_job(rng, size, random_kind(rng), integral=True)


# --- the kind's fuzz builder (tests/test_fuzz.py): degenerate variants ---


def _welfare_job(rng: np.random.Generator, variant: str, cls: type) -> PseudoWelfare:
    n = 1 if variant == "one_unit" else int(rng.integers(1, 9 if cls is PseudoWelfareIntegral else 13))
    cap = np.abs(rng.normal(20, 2, n)) + 1.0
    usage = cap * rng.choice([0.0, 0.3, 0.6, 0.9, 1.0], size=n) * rng.uniform(0.5, 1.0, n)
    kinds = list(utilities.KINDS)
    utility: Any = [str(k) for k in rng.choice(kinds, n)] if rng.random() < 0.4 else str(rng.choice(kinds))
    a, beta = rng.uniform(1, 3, n), rng.uniform(0.1, 0.5, n)
    if cls is PseudoWelfareIntegral:
        a *= 2.0  # whole units of xbar pay the price over all of xbar: richer jobs take some
    xbar = np.abs(rng.normal(7, 1, n))
    rho = float(abs(rng.normal(18, 3))) * float(rng.choice([0.2 if cls is PseudoWelfare else 0.5, 1.0, 3.0]))
    if variant == "rho_zero":
        rho = 0.0
    elif variant == "xbar_zero":
        xbar[rng.random(n) < 0.7] = 0.0
    elif variant == "full":
        usage = cap.copy()
    elif variant == "ties":
        a, beta, cap, xbar, usage = np.full(n, 2.0), np.zeros(n), np.full(n, 20.0), np.full(n, 5.0), np.zeros(n)
    base = PseudoWelfare(utility=utility, a=a, beta=beta, capacity=cap, xbar=xbar, usage=usage, rho=rho)
    widen = (rng.uniform(0.3, 1.0), rng.uniform(1.0, 3.0)) if variant != "ties" else (1.0, 1.0)
    return cls(utility=utility, a=a, beta=beta, capacity=cap, xbar=xbar, usage=usage, rho=rho,
               iota=base.iota * widen[0], upsilon=base.upsilon * widen[1])


@register_fuzz("pseudo_welfare", *("random", "one_unit", "rho_zero", "xbar_zero", "full", "ties"), examples=80)
def fuzz_pseudo_welfare(rng: np.random.Generator, variant: str) -> PseudoWelfare:
    return _welfare_job(rng, variant, PseudoWelfare)


@register_fuzz("pseudo_welfare_integral", *("random", "one_unit", "rho_zero", "xbar_zero", "full", "ties"), examples=60)
def fuzz_pseudo_welfare_integral(rng: np.random.Generator, variant: str) -> PseudoWelfareIntegral:
    return _welfare_job(rng, variant, PseudoWelfareIntegral)  # type: ignore[return-value]
