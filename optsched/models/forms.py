"""Solver-neutral algebraic forms a model can lower itself to (cvxpy's "apply" step).

Each form is a :class:`typing.Protocol` (:data:`FORM_PROTOCOLS`): a model class provides the
form when it defines every method of the protocol, so a kind's ``FORMS`` are derived when it is
registered (:func:`forms_of`), never listed by hand, and a backend reaches the form through a
typed accessor (:func:`as_standard`, :func:`as_pyomo`, :func:`as_cvxpy`, :func:`as_binary`). A backend that
accepts a form can solve every model that provides it; what a solver cannot take (continuous
variables, a quadratic objective) is read off the instance's own form (:meth:`StandardForm.traits`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, cast

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp


MODEL_SUFFIXES = (".mps", ".lp")  # the files StandardForm.write / Model.write produce


def lower_triangle(h: Any) -> Any:
    """The lower triangle of a symmetric sparse matrix, CSC (what HiGHS stores of a Hessian)."""
    import scipy.sparse as sp

    return sp.csc_matrix(sp.tril(h, format="csc"))


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

    def row_spread(self) -> float:
        """The smallest ratio of a nonzero |a_ij| to the largest |a_ik| of its row (1 without
        rows): below a solver's feasibility tolerance, a 0-1 column's entry is within the
        tolerance of zero, and the solver's optimality no proof (certificates.branch_and_bound_proof)."""
        a = self.A.tocsr()
        nonzero = np.abs(a.data) > 0
        if not nonzero.any():
            return 1.0
        rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))[nonzero]
        return float((np.abs(a.data[nonzero]) / row_largest(a)[rows]).min())

    def largest_value(self) -> float:
        """The largest finite |number| the program holds (objective, matrix, Hessian, bounds):
        what a solver's "infinity" must stay above."""
        parts = [self.c, self.A.data, self.row_lower, self.row_upper, self.col_lower, self.col_upper]
        if self.hessian is not None:
            parts.append(self.hessian.data)
        largest = 0.0
        for part in parts:
            finite = np.abs(part[np.isfinite(part)])
            if finite.size:
                largest = max(largest, float(finite.max()))
        return largest

    @property
    def objective_scale(self) -> float:
        """The power of two f with f * max|c_j| in [0.5, 1) (1 when c is zero; f within
        2^-1000..2^1000): a MIP's objective is multiplied by it on every route to HiGHS, in
        SCIP and in CP-SAT (whose absolute tolerances and precision assume costs of order 1;
        ``HIGHS_MIP_ORACLE_OPTIONS``)."""
        finite = np.abs(self.c[np.isfinite(self.c)])
        return power_of_two_scale(float(finite.max()) if finite.size else 0.0)

    def scaled_objective(self) -> tuple["StandardForm", "Unscaling"]:
        """What the highs, scip and cpsat backends solve for a MIP, and the :class:`Unscaling`
        back to this program: c and H multiplied by :attr:`objective_scale`, no offset (it
        cannot swamp the costs). An LP or QP: itself (:meth:`scaled_continuous` scales it)."""
        if not self.is_mip:
            return self, Unscaling()
        f = self.objective_scale
        scaled = replace(self, c=self.c * f, offset=0.0, hessian=None if self.hessian is None else self.hessian * f)
        return scaled, Unscaling(objective=f, offset=float(self.offset))

    def implied_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Each column's bounds tightened by one round of row activity propagation (presolve's
        bound tightening): for a row L_i <= sum_j a_ij x_j <= U_i, a_ij x_j <= U_i minus the
        least activity of the row's other columns, and >= L_i minus their largest, where those
        are finite. Only the scales of :meth:`scaled_continuous` read them (the program keeps
        its own bounds): a column's box of 1e12 under a row x <= 1 set its scale, and the
        row's whole range became 1.8e-12 in the scaled column, below every solver's absolute
        tolerance (SCIP said optimal at 0 for max x, HiGHS's QP stopped "feasible" at 19x a
        projection's optimum). Where rounding crosses a pair, the box's bounds stand."""
        lower, upper = self.col_lower.astype(np.float64), self.col_upper.astype(np.float64)
        implied_low, implied_up = self._propagated(0.0)
        tight_low, tight_up = np.maximum(lower, implied_low), np.minimum(upper, implied_up)
        crossed = tight_low > tight_up
        return np.where(crossed, lower, tight_low), np.where(crossed, upper, tight_up)

    def _propagated(self, margin: float) -> tuple[np.ndarray, np.ndarray]:
        """The bounds one round of row activity propagation implies for each column (-inf/inf
        where no row gives one; :meth:`implied_bounds`), each moved out by ``margin`` times the
        magnitudes it was computed from: the side and the other columns' least (largest)
        activities, over |a_ij| (:meth:`tightened`)."""
        lower, upper = self.col_lower.astype(np.float64), self.col_upper.astype(np.float64)
        implied_low, implied_up = np.full(lower.size, -np.inf), np.full(upper.size, np.inf)
        a = self.A.tocsr()
        if a.nnz == 0:
            return implied_low, implied_up
        m = a.shape[0]
        rows, cols, coef = np.repeat(np.arange(m), np.diff(a.indptr)), a.indices, a.data.astype(np.float64)
        with np.errstate(all="ignore"):
            least = np.where(coef > 0, coef * lower[cols], coef * upper[cols])  # the entry's least activity
            most = np.where(coef > 0, coef * upper[cols], coef * lower[cols])
            for activity, side, toward_upper in ((least, self.row_upper, True), (most, self.row_lower, False)):
                infinite = ~np.isfinite(activity)
                finite = np.where(infinite, 0.0, activity)
                finite_sum = np.bincount(rows, weights=finite, minlength=m)
                n_infinite = np.bincount(rows, weights=infinite.astype(np.float64), minlength=m)
                others = finite_sum[rows] - finite  # the other entries' activity
                known = (n_infinite[rows] - infinite == 0) & np.isfinite(side[rows]) & np.isfinite(others)
                limit = (side[rows] - others) / coef  # a_ij x_j <= U_i - least (or >= L_i - most)
                slack = 0.0
                if margin:
                    size = np.bincount(rows, weights=np.abs(finite), minlength=m)
                    slack = margin * (np.abs(side[rows]) + size[rows]) / np.abs(coef)
                bounds_up = known & ((coef > 0) == toward_upper) & np.isfinite(limit)
                bounds_low = known & ((coef > 0) != toward_upper) & np.isfinite(limit)
                np.minimum.at(implied_up, cols[bounds_up], (limit + slack)[bounds_up])
                np.maximum.at(implied_low, cols[bounds_low], (limit - slack)[bounds_low])
        return implied_low, implied_up

    def tightened(self) -> "StandardForm":
        """An integer program with each integer column's bounds rounded in to the whole numbers
        its rows imply, and the cost of a column so fixed at 0 dropped; anything else as it is.
        The same integer points, on every route to an exact MIP solver: what HiGHS's presolve
        did before it was switched off (``HIGHS_MIP_ORACLE_OPTIONS``), without its wrong
        reductions. Values 1 and 1e12, the item of 1e12 fitting nowhere: its cost set the
        objective's scale, and the item of 1 fell below the search's resolution (HiGHS without
        presolve, SCIP: feasible 0 where 1 is).

        One round of row activity propagation, as :meth:`implied_bounds`, with each bound moved
        out by 1e-9 of the magnitudes it was computed from (:meth:`_propagated`) before it is
        rounded: in floating point 1e12 - 5e-5 is 1e12, and a bound from it cut off x1 = 50 of a
        row that x1 = 50 meets exactly (probe BK: HiGHS said optimal 0 where 60 is)."""
        if not self.is_mip:
            return self
        lower, upper = self.col_lower.astype(np.float64), self.col_upper.astype(np.float64)
        implied_low, implied_up = self._propagated(1e-9)
        new_low, new_up = np.maximum(lower, implied_low), np.minimum(upper, implied_up)
        ints = self.integrality
        with np.errstate(invalid="ignore"):
            new_up = np.where(ints & np.isfinite(new_up), np.floor(new_up), upper)
            new_low = np.where(ints & np.isfinite(new_low), np.ceil(new_low), lower)
        keep = new_low > new_up  # crossed: the rows leave no whole number; the solver says so
        new_low, new_up = np.where(keep, lower, new_low), np.where(keep, upper, new_up)
        if np.array_equal(new_low, lower) and np.array_equal(new_up, upper):
            return self
        zero = (new_low == 0) & (new_up == 0)
        return replace(self, col_lower=new_low, col_upper=new_up, c=np.where(zero, 0.0, self.c))

    def scaled_continuous(self) -> tuple["StandardForm", "Unscaling"]:
        """An LP or QP as the highs backend solves it: x_j = s_j x'_j with s_j the power of two
        that brings column j's largest finite |bound| (:meth:`implied_bounds`) into [1, 2) in an
        LP, and that of the largest bound of all for a free column, one fixed at 0 and every
        column of a QP (a column's own scale would spread a projection's Hessian 2 s_j^2). An
        LP's columns are only scaled up (s_j <= 1): a solver's tolerance on x' is s_j times it on
        x, and an optimum at x = 1 in a column of range [-1e12, 1] came back from SCIP as 0,
        "optimal", where the column's range had set s_j = 2^39 (c_j s_j, H_ij s_i s_j,
        A's column j times s_j, bounds / s_j), then the objective (costs and Hessian) times the
        power of two f that brings its largest entry into [0.5, 1), without the offset. Exact in
        floating point; :class:`Unscaling` maps the answer back (x, values, duals). HiGHS's
        tolerances are absolute: projections of data of 1e-12 came back "optimal" at twice the
        optimum; one s for all columns (from the largest bound, 1.1e6) left a column of range
        4e-5 and coefficient 1e3 at 4e-9 of its row, where HiGHS returned a point 16 % over the
        row. Bounds and an objective already within :data:`ROWS_KEPT` are not scaled. A MIP:
        itself (its integer columns cannot be scaled; :meth:`scaled_objective`)."""
        if self.is_mip:
            return self, Unscaling()
        bounds = np.abs(np.stack(self.implied_bounds()))
        top = np.where(np.isfinite(bounds), bounds, 0.0).max(axis=0)
        overall = float(top.max(initial=0.0))
        common = 0 if _kept(overall) else int(np.clip(math.frexp(overall)[1] - 1, -1000, 1000))  # bound / s in [1, 2)
        if self.hessian is None:  # an LP: each column on its own scale, up only (see the docstring)
            own = np.where(_kept(top), 0, np.clip(np.frexp(top)[1] - 1, -1000, 1000))
            exponent = np.minimum(np.where(top > 0, own, common), 0)
        else:
            exponent = np.full(top.size, common)
        # the objective's largest entry after the columns' scaling, as a base-2 logarithm (the
        # scaled entries themselves can leave the float range before f brings them back)
        logs = [np.log2(np.abs(self.c[self.c != 0])) + exponent[self.c != 0]]
        hessian = None if self.hessian is None else self.hessian.tocoo()
        if hessian is not None and hessian.nnz:
            logs.append(np.log2(np.abs(hessian.data)) + exponent[hessian.row] + exponent[hessian.col])
        joined = np.concatenate(logs)
        largest = float(np.exp2(joined.max())) if joined.size else 0.0
        objective_exponent = 0 if _kept(largest) else int(np.clip(-(np.floor(joined.max()) + 1), -1000, 1000))
        if not exponent.any() and objective_exponent == 0:  # data of order 1 (ROWS_KEPT): as it is
            return self, Unscaling()
        import scipy.sparse as sp

        a = sp.csr_matrix(self.A, copy=True)
        a.data = np.ldexp(a.data, exponent[a.indices])
        if hessian is not None:  # each entry's powers of two as one exponent
            hessian = sp.csr_matrix((np.ldexp(hessian.data, exponent[hessian.row] + exponent[hessian.col] + objective_exponent),
                                     (hessian.row, hessian.col)), shape=hessian.shape)
        scaled = replace(self, c=np.ldexp(np.asarray(self.c, dtype=np.float64), exponent + objective_exponent), offset=0.0,
                         hessian=hessian, A=a, col_lower=np.ldexp(self.col_lower, -exponent),
                         col_upper=np.ldexp(self.col_upper, -exponent))
        return scaled, Unscaling(column=np.ldexp(1.0, exponent), objective=math.ldexp(1.0, objective_exponent),
                                 offset=float(self.offset))

    def scaled_rows(self) -> tuple["StandardForm", np.ndarray]:
        """This program with row i of A and its two sides multiplied by g_i, the power of two
        that brings the row's largest |coefficient| into [1, 2) (rows whose largest is within
        :data:`ROWS_KEPT`, and empty rows, keep g_i = 1), and g. The same feasible set,
        exactly; what changes is what the solvers' absolute numbers act on: HiGHS drops
        coefficients below 1e-9 and every MIP
        solver accepts a row within an absolute tolerance, so rows of weights 2^-40 came back
        "optimal" at points 2 % to 90 % beyond their capacities. A row's dual on the original row
        is g_i times its dual here."""
        a = self.A.tocsr()
        g = row_factors(row_largest(a))
        if np.all(g == 1.0):
            return self, g
        import scipy.sparse as sp

        return replace(self, A=sp.diags(g) @ a, row_lower=self.row_lower * g, row_upper=self.row_upper * g), g

    def widened(self, tol: float | None = None, *, slack: str | None = "load") -> "StandardForm":
        """An integer program with each row's sides moved out to what a model accepts at ``tol``
        (``FEASIBILITY_TOL`` by default); a continuous program, or ``slack=None``, as it is.

        What a 0-1 kind calls feasible is its ``violations`` at ``FEASIBILITY_TOL``: a row may be
        passed by ``row_slack(tol, side, load)``, the load being the selection's own
        sum_j |a_ij| x_j (``slack="load"``, ``Model.ROW_SLACK``). An exact solver given the rows
        as written searched a smaller set: an item 5e-10 over its capacity is feasible to the
        model (brute force took it, worth 1e4) but not to HiGHS, whose "optimal 0" was then no
        bound on the model's optimum. Solvers get this program on every route (HiGHS, SCIP,
        CP-SAT, Pyomo, cvxpy), so their bound holds for the model.

        A row of nonnegative coefficients over nonnegative columns (its load is its activity)
        is moved exactly to the model's: u >= 0 up to u / (1 - tol), l down by tol |l|. Other
        rows move by the slack of their reach, sum_j |a_ij| max(|l_j|, |u_j|) over the finite
        bounds, which is at least the load's: a point from the band between is not certified
        (``certificates.outside_model_tolerance``). A row of whole coefficients over integer
        columns gets the whole numbers within its sides (its own sides below a slack of 1,
        1e9 + 1 for a capacity of 1e9). A row over a continuous column stays as written: the
        slack there is room for the solver's own tolerance (a vertex on the widened side sat on
        the model's very edge). A ``LinearProgram`` (``ROW_SLACK = None``) is solved as written:
        its slack grows with the box (1e-9 of x0's range 1e12 is 1000 on the row x0 + x1 <= 1),
        an allowance for a solver's point at that scale, not the program's rows."""
        if slack not in ("load", None):
            raise ValueError(f"slack: expected 'load' or None, got {slack!r}")
        if not self.is_mip or slack is None:
            return self
        from optsched.models.validate import FEASIBILITY_TOL, row_slack

        tol = FEASIBILITY_TOL if tol is None else tol
        if self.integrality.all():
            # whole rows over integer columns take the whole numbers within their moved sides:
            # their own, while every slack (tol times a row's side or reach) stays below one half
            sides = np.abs(np.concatenate([self.row_lower, self.row_upper]))
            box = max(float(np.abs(self.col_lower).max(initial=0.0)), float(np.abs(self.col_upper).max(initial=0.0)))
            largest = max(float(np.abs(self.A.data).sum()) * box, float(sides[np.isfinite(sides)].max(initial=0.0)))
            if tol * largest < 0.5 and self.is_integral_data:
                return self
        a = self.A.tocsr()
        rows = np.repeat(np.arange(self.n_rows), np.diff(a.indptr))
        magnitude = np.maximum(np.abs(self.col_lower), np.abs(self.col_upper))
        magnitude = np.where(np.isfinite(magnitude), magnitude, 0.0)
        reach = np.bincount(rows, weights=np.abs(a.data) * magnitude[a.indices], minlength=self.n_rows)
        with np.errstate(invalid="ignore"):  # an infinite side stays infinite
            lower = self.row_lower - row_slack(tol, self.row_lower, reach)
            upper = self.row_upper + row_slack(tol, self.row_upper, reach)
        negative = (a.data < 0) | (self.col_lower[a.indices] < 0)
        own = np.bincount(rows[negative], minlength=self.n_rows) == 0  # empty rows too: activity 0
        own_lower, own_upper = load_sides(self.row_lower, self.row_upper, tol)
        lower, upper = np.where(own, own_lower, lower), np.where(own, own_upper, upper)
        # a row of whole coefficients over integer columns takes whole activities: its sides are
        # the whole numbers within them (the rows as written below a slack of 1; the solvers keep
        # the row's integer structure)
        continuous = np.bincount(rows[~self.integrality[a.indices]], minlength=self.n_rows) > 0
        whole = (np.bincount(rows[a.data != np.round(a.data)], minlength=self.n_rows) == 0) & ~continuous
        whole_lower, whole_upper = whole_sides(lower, upper)
        lower, upper = np.where(whole, whole_lower, lower), np.where(whole, whole_upper, upper)
        # a row over a continuous column stays as written: the slack is the room of the solver's
        # own tolerance there (its vertex on the widened side sat on the model's very edge)
        lower, upper = np.where(continuous, self.row_lower, lower), np.where(continuous, self.row_upper, upper)
        return replace(self, row_lower=np.where(np.isfinite(self.row_lower), lower, self.row_lower),
                       row_upper=np.where(np.isfinite(self.row_upper), upper, self.row_upper))

    def lagrangian_gap(self, x: np.ndarray, row_duals: np.ndarray) -> float:
        """How far below f(x) the Lagrangian bound of row multipliers ``row_duals`` (y) lies, for a
        convex QP (minimisation; HiGHS's sign: reduced costs r = c + Hx - A'y): f(x) - gap is a
        lower bound on the optimum whatever x and y are, so a solver's "optimal" is certified
        only when the gap is within the seam's tolerance.

        For every feasible point x' = x + t: f(x') = f(x) + r't + t'Ht / 2 + y'(A x' - A x), and
        each part is bounded below on its own: the rows' term over each row's interval for A x',
        the columns' term over the box of t. For a diagonal H the box minimum is exact (one
        interval per column). Otherwise, with F the columns whose r_j t_j is unbounded below over
        their interval (a free column's reduced cost, a solver's 1e-6 residual) and B the rest,
        the term is at least r_B't_B over B's box plus the minimum over all t of
        t'Ht / 2 + r_F't_F (finite when r_F, padded with zeros, lies in the range of H; dense, up
        to ``UNCONSTRAINED_MAX`` columns). The terms are products of residuals, so the gap is not
        lost to the rounding of f's own large parts (an offset of 1e12 beside an optimum of 0.5).
        No reduced cost of a bounded column is rounded to 0: over a column range of 1e9, -1e-6 is
        a term of 1e3. A column the box leaves unbounded is first bounded by what the rows imply
        (:func:`_implied_box`); one still unbounded counts its reduced cost as 0 only within the
        rounding of its own computation (``RESIDUAL_ROUNDING`` of |grad_j| + sum_i |a_ij y_i|:
        multipliers that make it exactly 0 lie that close and move the bound as little), and when
        its cost is larger the nearest multipliers that zero it (least squares) are tried as well
        (an interior-point solver's duals leave 1e-9 there). The range test is numerical:
        eigenvalues of H below double precision of its largest (1e-34 beside 1) count as 0, so a
        free column along one is bounded as if flat.

        A maximisation is its negation's minimisation (y in HiGHS's sign for the program as
        stated, r = c + Hx - A'y): the gap is then how far above f(x) the bound lies."""
        x = np.asarray(x, dtype=np.float64)
        sign = -1.0 if self.maximize else 1.0  # the minimisation of sign * f, with multipliers sign * y
        y = sign * np.asarray(row_duals, dtype=np.float64)
        gap, free, magnitude = self._gap_at(x, y, sign)
        if np.isinf(gap) and free is not None:  # also the nearest multipliers that zero the free columns' costs
            polished = _zeroing_duals(self.A, y, free)
            if polished is not None:  # its rounding measured against the magnitudes of the solver's y
                gap = min(gap, self._gap_at(x, polished, sign, magnitude)[0])
        return gap

    def _gap_at(self, x: np.ndarray, y: np.ndarray, sign: float, least: np.ndarray | None = None
                ) -> tuple[float, tuple[np.ndarray, np.ndarray] | None, np.ndarray | None]:
        """:meth:`lagrangian_gap` of the minimisation of ``sign`` f at the multipliers y; (the
        columns whose term stayed unbounded, their reduced costs) when that made it infinite
        (None otherwise); and the magnitudes |grad_j| + sum_i |a_ij y_i| a reduced cost's
        rounding is measured against (at least ``least``; None when no column needed them)."""
        # a multiplier facing an infinite side is clipped to 0 there (any y gives a bound; HiGHS's
        # +1e-4 on a <= row made this one -inf)
        y = np.where(np.isinf(self.row_upper), np.maximum(y, 0.0), y)
        y = np.where(np.isinf(self.row_lower), np.minimum(y, 0.0), y)
        grad = sign * np.asarray(self.c, dtype=np.float64)
        curvature = np.zeros_like(grad)
        full = None
        if self.hessian is not None:
            grad += sign * (self.hessian @ x)
            if self.hessian.nnz == np.count_nonzero(self.hessian.diagonal()):
                curvature = sign * np.asarray(self.hessian.diagonal(), dtype=np.float64)
            else:
                full = sign * self.hessian
        reduced = grad - _transpose_times(self.A, y)
        lo, hi = self.column_bounds()
        each = _interval_minimum(reduced, curvature, lo - x, hi - x)
        unbounded = np.isneginf(each)
        if unbounded.any() and self.A.shape[0]:  # a free column's residual: bound it by what the rows imply
            implied_lo, implied_hi = _implied_box(self.A, self.row_lower, self.row_upper, lo, hi)
            lo, hi = np.where(unbounded, implied_lo, lo), np.where(unbounded, implied_hi, hi)
            each = _interval_minimum(reduced, curvature, lo - x, hi - x)
            unbounded = np.isneginf(each)
        magnitude = None
        if unbounded.any():  # a reduced cost within the rounding of its own computation is 0
            magnitude = np.abs(grad) + _transpose_times(self.A, np.abs(y), absolute=True)
            if least is not None:
                magnitude = np.maximum(magnitude, least)
            rounding = unbounded & (curvature == 0) & (np.abs(reduced) <= RESIDUAL_ROUNDING * magnitude)
            each[rounding] = 0.0
            unbounded &= ~rounding
        columns = float(each[~unbounded].sum())
        if unbounded.any():
            columns += -np.inf if full is None else _range_minimum(full, np.where(unbounded, reduced, 0.0))
        ax = np.asarray(self.A @ x, dtype=np.float64) if self.A.shape[0] else np.zeros(0)
        rows = _interval_minimum(y, np.zeros_like(y), self.row_lower - ax, self.row_upper - ax)
        gap = -(columns + float(rows.sum()))
        free = (np.flatnonzero(unbounded), reduced[unbounded]) if np.isinf(gap) and unbounded.any() else None
        return gap, free, magnitude

    def column_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) with the integer columns' bounds rounded inward (ceil, floor): the same
        program. HiGHS 1.14's presolve returned wrong optima on fractional bounds of integer
        columns (3 of 3000 pure-integer fuzz programs; tests/test_interop.py keeps one)."""
        lo = np.asarray(self.col_lower, dtype=np.float64)
        hi = np.asarray(self.col_upper, dtype=np.float64)
        if not self.integrality.any():
            return lo, hi
        return (np.where(self.integrality, np.ceil(lo - 1e-9), lo), np.where(self.integrality, np.floor(hi + 1e-9), hi))

    def to_highs(self) -> Any:
        """This program as a ``highspy.HighsModel`` (LP, MIP or QP; highspy imported here)."""
        import highspy

        lp = highspy.HighsLp()
        lp.num_col_ = self.n_vars
        lp.num_row_ = self.n_rows
        lp.col_cost_ = np.asarray(self.c, dtype=np.float64)
        lp.col_lower_, lp.col_upper_ = self.column_bounds()
        lp.row_lower_ = np.asarray(self.row_lower, dtype=np.float64)
        lp.row_upper_ = np.asarray(self.row_upper, dtype=np.float64)
        lp.offset_ = float(self.offset)
        lp.sense_ = highspy.ObjSense.kMaximize if self.maximize else highspy.ObjSense.kMinimize
        a = self.A.tocsc()
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = a.indptr.astype(np.int32)
        lp.a_matrix_.index_ = a.indices.astype(np.int32)
        lp.a_matrix_.value_ = a.data.astype(np.float64)
        lp.a_matrix_.num_col_ = self.n_vars
        lp.a_matrix_.num_row_ = self.n_rows
        if self.is_mip:
            lp.integrality_ = [
                highspy.HighsVarType.kInteger if f else highspy.HighsVarType.kContinuous for f in self.integrality
            ]
        hm = highspy.HighsModel()
        hm.lp_ = lp
        if self.hessian is not None:
            tri = lower_triangle(self.hessian)
            hess = highspy.HighsHessian()
            hess.dim_ = self.n_vars
            hess.format_ = highspy.HessianFormat.kTriangular
            hess.start_ = tri.indptr.astype(np.int32)
            hess.index_ = tri.indices.astype(np.int32)
            hess.value_ = tri.data.astype(np.float64)
            hm.hessian_ = hess
        return hm

    def write(self, path: str | Path) -> Path:
        """Write this program as MPS or LP (by the suffix of ``path``), every number exact and
        the columns x0, x1, ... in order, rows r0, r1, ... (:mod:`optsched.models.model_text`),
        atomically (a temporary file beside it, then renamed)."""
        from optsched.artifacts import write_text
        from optsched.models.model_text import lp_text, mps_text

        path = Path(path)
        if path.suffix.lower() not in MODEL_SUFFIXES:
            raise ValueError(f"path: expected a .mps or .lp file, got {path.name!r}")
        largest = self.largest_value()
        if largest >= SOLVER_INFINITY:  # the file would hold another program
            raise ValueError(f"path: this program holds the value {largest:.3g}, and HiGHS's reader takes values from "
                             f"{SOLVER_INFINITY:g} on as infinite; write it as JSON")
        entries = np.abs(np.concatenate([self.A.data, self.hessian.data if self.hessian is not None else []]))
        entries = entries[entries > 0]
        if entries.size and not (READ_MATRIX_VALUES[0] < entries.min() and entries.max() < READ_MATRIX_VALUES[1]):
            off = entries.min() if entries.min() <= READ_MATRIX_VALUES[0] else entries.max()
            raise ValueError(f"path: this program's matrix holds {off:.3g}, and HiGHS's reader refuses entries outside "
                             f"({READ_MATRIX_VALUES[0]:g}, {READ_MATRIX_VALUES[1]:g}) (it drops or rejects them); "
                             "write it as JSON")
        return write_text(path, mps_text(self) if path.suffix.lower() == ".mps" else lp_text(self))

    def to_cvxpy(self) -> tuple[Any, Any]:
        """This program in cvxpy: ``(problem, x)`` with ``x`` the variable vector (integer
        columns declared integer; cvxpy imported here)."""
        import cvxpy as cp

        ints = np.flatnonzero(self.integrality)
        x = cp.Variable(self.n_vars, integer=(ints,)) if ints.size else cp.Variable(self.n_vars)
        objective = self.c @ x + self.offset
        if self.hessian is not None:
            objective = objective + 0.5 * cp.quad_form(x, cp.psd_wrap(self.hessian))
        constraints = []
        for bound, sign in ((self.col_lower, 1), (self.col_upper, -1)):
            finite = np.flatnonzero(np.isfinite(bound))
            if finite.size:
                constraints.append(sign * (x[finite] - bound[finite]) >= 0)
        for bound, sign in ((self.row_lower, 1), (self.row_upper, -1)):
            finite = np.flatnonzero(np.isfinite(bound))
            if finite.size:
                constraints.append(sign * (self.A[finite] @ x - bound[finite]) >= 0)
        sense = cp.Maximize if self.maximize else cp.Minimize
        return cp.Problem(sense(objective), constraints), x

    def to_pyomo(self) -> Any:
        """This program as a Pyomo ``ConcreteModel`` (pyomo imported here): variables ``x[j]``
        (integer columns ``Integers``), one ranged constraint ``rows[i]`` per row with a finite
        side, objective ``c.x + offset (+ x'Hx / 2)``."""
        import pyomo.environ as pyo
        import scipy.sparse as sp
        from pyomo.core.expr.numeric_expr import LinearExpression

        m = pyo.ConcreteModel(name="standard_form")
        lo, hi = self.column_bounds()
        m.J = pyo.RangeSet(0, self.n_vars - 1)
        m.x = pyo.Var(m.J, bounds=lambda _, j: (_finite(lo[j]), _finite(hi[j])),
                      domain=lambda _, j: pyo.Integers if self.integrality[j] else pyo.Reals)
        a = self.A.tocsr(copy=True)
        a.eliminate_zeros()
        rows = [i for i in range(self.n_rows) if np.isfinite(self.row_lower[i]) or np.isfinite(self.row_upper[i])]
        m.I = pyo.Set(initialize=rows)

        def row(_: Any, i: int) -> Any:
            start, stop = a.indptr[i], a.indptr[i + 1]
            if start == stop:  # an empty row: 0 within its sides or not
                if self.row_lower[i] <= 0 <= self.row_upper[i]:
                    # Skip, not Feasible: Pyomo keeps a Feasible row as a trivial expression, which its
                    # SCIP interface cannot translate (NotImplementedError; probe BR)
                    return pyo.Constraint.Skip
                if not self.n_vars:
                    return pyo.Constraint.Infeasible
                # 0 x_0 outside its sides: a linear row every solver interface takes, and none can meet
                body = LinearExpression(constant=0.0, linear_coefs=[0.0], linear_vars=[m.x[0]])
                return (_finite(self.row_lower[i]), body, _finite(self.row_upper[i]))
            body = sum(float(v) * m.x[int(j)] for j, v in zip(a.indices[start:stop], a.data[start:stop]))
            return (_finite(self.row_lower[i]), body, _finite(self.row_upper[i]))

        m.rows = pyo.Constraint(m.I, rule=row)
        # every column in the objective, zero costs too: a solver sees only the variables used
        objective = LinearExpression(constant=float(self.offset), linear_coefs=[float(v) for v in self.c],
                                     linear_vars=[m.x[j] for j in range(self.n_vars)])
        if self.hessian is not None:
            h = sp.coo_matrix(self.hessian)
            objective = objective + 0.5 * sum(float(v) * m.x[int(i)] * m.x[int(j)] for i, j, v in zip(h.row, h.col, h.data))
        m.objective = pyo.Objective(expr=objective, sense=pyo.maximize if self.maximize else pyo.minimize)
        return m

    def vector_from_pyomo(self, m: Any) -> np.ndarray:
        """The solved ``x`` of :meth:`to_pyomo` as a vector (integer columns rounded, all clipped
        to their bounds)."""
        v = pyomo_values(m.x, self.n_vars)
        return np.where(self.integrality, np.round(v), np.clip(v, self.col_lower, self.col_upper))

    def cvxpy_solver(self) -> tuple[str, dict[str, Any]]:
        """The cvxpy solver that solves this program exactly: Clarabel at 1e-10 for LPs and QPs,
        HiGHS with no gap and ``HIGHS_MIP_ORACLE_OPTIONS`` for pure-integer programs, SCIP for mixed-integer ones (HiGHS 1.14 and 1.16
        return wrong optima on those, solvers/highs.py)."""
        if not self.is_mip:
            return "CLARABEL", {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}
        if self.integrality.all():
            return "HIGHS", {"mip_rel_gap": 0.0, "mip_abs_gap": 0.0, **HIGHS_MIP_ORACLE_OPTIONS}
        return "SCIP", {"scip_params": {"limits/gap": 0.0, "limits/absgap": 0.0, **SCIP_ORACLE_PARAMS}}

    def traits(self) -> "Traits":
        """What a solver must accept to take this program."""
        return Traits(continuous=not bool(self.integrality.all()), quadratic=self.hessian is not None)

    @property
    def is_integral_data(self) -> bool:
        """Every constraint coefficient and finite bound is a whole number (CP-SAT needs it)."""
        def whole(a: np.ndarray) -> bool:
            return bool((a == np.round(a)).all())  # an infinite bound rounds to itself

        return (
            whole(self.A.data)
            and whole(self.row_lower)
            and whole(self.row_upper)
            and whole(self.col_lower)
            and whole(self.col_upper)
        )


# HiGHS (infinite_cost, infinite_bound), SCIP (its infinity) and CP-SAT (its objective scaling)
# take numbers from this magnitude on as infinite: measured, they fail or answer wrongly from
# there on, and HiGHS's MPS/LP reader reads them as inf.
SOLVER_INFINITY = 1e20
# HiGHS's small_matrix_value and large_matrix_value: its readers drop matrix entries at or below
# the first (a warning, and optsched's reader then refuses the file) and reject those from the second on
READ_MATRIX_VALUES = (1e-9, 1e15)

# What a HiGHS MIP needs to be an oracle, for every route optsched takes to HiGHS (the highs
# backend, cvxpy, Pyomo); the measurements behind each are in optsched/solvers/highs.py.
# - presolve off: HiGHS 1.14's MIP presolve and its restarts (which presolve again) returned
#   wrong "optimal" answers on 0-1 knapsacks of 6 items (1 of 2,000 random ones, 4 of 1,300
#   whose subsets sit at their capacities; a reduction to the empty program that dropped an
#   item, a restart that fixed one), with no rule that can be switched off alone (rule 13,
#   parallel rows and columns, did so on programs with duplicate 0-1 columns; ``escb_oa`` ran
#   without presolve already). Measured 2026-11-28: knapsacks of 30-120 items 0.45-0.84x the
#   time, set packing of 50-200 sets 0.77-1.01x, the DIMACS clique graphs 1-3.3x (keller4
#   7.1 -> 16.6 s, san200_0.7_1 2.7 -> 8.6 s). HiGHS 1.16's presolve too (probe BN): 3 wrong
#   optima (6-34 % short) of 14,250 random knapsacks of 3-8 items, 0 with it off;
# - tight tolerances: HiGHS's defaults treat a cost of 1e-9 beside 1 as zero;
# - the objective scaled to costs of order 1 (``StandardForm.objective_scale``, a power of two,
#   so exact): an integral objective lets HiGHS prune a node whose bound cannot beat the
#   incumbent by one step plus mip_feasibility_tolerance, an absolute margin. With costs of
#   93,543 the LP bound's rounding (2e-10 on 1.7e6) exceeded 1e-10 and HiGHS said "optimal" at
#   17 steps where 18 are feasible (a budgeted IP of benchmarks/bench_budget_dp.py).
PRESOLVE_RULE_13 = 1 << 13  # HiGHS's "parallel rows and columns" (wrong MIP optima: solvers/highs.py)
HIGHS_MIP_ORACLE_OPTIONS: Mapping[str, Any] = MappingProxyType({
    "presolve": "off",
    "small_matrix_value": 1e-12,
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
    "mip_feasibility_tolerance": 1e-10,
    "presolve_rule_off": PRESOLVE_RULE_13,
})
# HiGHS's own values of those options (what a non-MIP gets back; what a route that sets none has)
HIGHS_DEFAULT_TOLERANCES: Mapping[str, Any] = MappingProxyType({
    "presolve": "choose",
    "small_matrix_value": 1e-9,
    "primal_feasibility_tolerance": 1e-7,
    "dual_feasibility_tolerance": 1e-7,
    "mip_feasibility_tolerance": 1e-6,
})

# What SCIP needs to be an oracle, on every route to it (the scip backend, cvxpy, Pyomo):
# - numerics/epsilon 1e-12: SCIP takes values below it (default 1e-9) as zero; with weights 1
#   and 1e-9 it answered 1.0 "optimal" where 1.000000001 is (tests/test_fuzz.py);
# - numerics/feastol 1e-9, the models' own feasibility tolerance: at SCIP's 1e-6 (relative) it
#   said optimal 2 for a knapsack of capacity 2(1 - 5e-7) whose optimum is 1, optimal 5 for a
#   budget nothing reaches, and optimal 5 where 6 is with weights 5 and 1e8 in one row;
# - numerics/dualfeastol 1e-9 (SoPlex's smallest): a search's bound may fall short by it times
#   the columns' ranges (certificates.branch_and_bound_proof), 100x less than at SCIP's 1e-7;
# - presolving/domcol/maxrounds 0: at that epsilon the dominated-columns presolver dropped items
#   that fit (5 of 2,000 random 0-1 knapsacks of 3-8 items, 2026-11-28: "optimal" 739.9 where
#   871.8 is; also at epsilon 1e-11; none at 1e-10 or with the presolver off);
# - constraints/linear/maxprerounds 0 and separating/maxroundsroot 0: the linear constraints'
#   presolve and the root's cutting planes cut off optima too (3 of 1,000 knapsacks whose subsets
#   sit at their capacities, with domcol off: "optimal" 1.72 where 2.76 is, 20570 where 22683
#   is; 2 at epsilon 1e-9; each alone left 1; both off: 0 of 2,000, 11 more left feasible);
# - propagating/pseudoobj/freq -1: the objective propagator bounds a column with a cost by
#   (lower bound - the others' reach) / cost; at that epsilon a scaled cost of 1e-12 to 1e-9 is
#   not zero, and the rounding of the O(1) numerator divided by it cut off the root (a column
#   fixed at 3 given the bound 2.99999, floored to 2). SCIP then answered the trivial heuristic's
#   middle point, every column at half its range, "optimal" at half the optimum (probe BP,
#   2026-11-28: 3 of 2,000 random mixed programs, 2 of 2,700 wide LPs; 0 with it off).
SCIP_ORACLE_PARAMS: Mapping[str, Any] = MappingProxyType({
    "numerics/epsilon": 1e-12, "numerics/feastol": 1e-9, "numerics/dualfeastol": 1e-9, "presolving/domcol/maxrounds": 0,
    "constraints/linear/maxprerounds": 0, "separating/maxroundsroot": 0, "propagating/pseudoobj/freq": -1})
# SCIP's own values of those two (what a route that sets neither gets)
SCIP_DEFAULT_TOLERANCES: Mapping[str, float] = MappingProxyType({"numerics/epsilon": 1e-9, "numerics/feastol": 1e-6,
                                                                  "numerics/dualfeastol": 1e-7})


# Rows whose largest |coefficient| lies in [1/16, 2^20) go to the solvers as they are: scaled,
# whole-number knapsack rows lost HiGHS's integer structure (budgeted IPs of 30 items took 1.06x).
# So do the columns and objective of an LP or QP whose bounds and costs lie there.
ROWS_KEPT = (2.0**-4, 2.0**20)


def row_largest(a: Any) -> np.ndarray:
    """The largest |entry| of each row of a CSR matrix (0 for an empty row)."""
    largest = np.zeros(a.shape[0])
    filled = np.diff(a.indptr) > 0
    if filled.any():
        largest[filled] = np.maximum.reduceat(np.abs(a.data), a.indptr[:-1][filled])
    return largest


def _kept(largest: Any) -> Any:
    """``largest`` (a number or an array) is 0 or within :data:`ROWS_KEPT`: no scaling."""
    return (largest == 0) | ((largest >= ROWS_KEPT[0]) & (largest < ROWS_KEPT[1]))


def row_factors(largest: np.ndarray) -> np.ndarray:
    """Per row, the power of two that brings its largest |entry| into [1, 2); 1 for a row
    that is empty or within :data:`ROWS_KEPT`."""
    exponent = np.frexp(largest)[1]  # largest = m 2^e, m in [0.5, 1)
    return np.where(_kept(largest), 1.0, np.ldexp(1.0, np.clip(1 - exponent, -1000, 1000)))


@dataclass(frozen=True)
class Unscaling:
    """From a program scaled by :meth:`StandardForm.scaled_objective` or
    :meth:`StandardForm.scaled_continuous` (x = column * x', objective times ``objective``
    without ``offset``) back to the original."""

    column: float | np.ndarray = 1.0  # per column (scaled_continuous) or one for all
    objective: float = 1.0
    offset: float = 0.0

    def x(self, scaled: np.ndarray) -> np.ndarray:
        return np.asarray(scaled, dtype=np.float64) * self.column

    def value(self, scaled: float) -> float:
        return float(scaled) / self.objective + self.offset

    def row_duals(self, scaled: np.ndarray) -> np.ndarray:
        return np.asarray(scaled, dtype=np.float64) / self.objective

    def column_duals(self, scaled: np.ndarray) -> np.ndarray:
        return np.asarray(scaled, dtype=np.float64) / (self.objective * self.column)


def power_of_two_scale(largest: float) -> float:
    """The power of two f with f * largest in [0.5, 1) (1 for 0), f within 2^-1000..2^1000:
    multiplying by it is exact, and it brings data to the order 1 that solvers' absolute
    tolerances assume."""
    return 1.0 if largest == 0.0 else math.ldexp(1.0, min(1000, max(-1000, -math.frexp(largest)[1])))


def load_sides(lower: Any, upper: Any, tol: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The sides of rows whose load is their activity (nonnegative coefficients over
    nonnegative columns) at a model's tolerance (``FEASIBILITY_TOL`` by default): the load may
    pass u by ``row_slack(tol, u, load)``, so u >= 0 up to u / (1 - tol), and fall short of l
    by tol |l| (a load short of l is below |l|). ``StandardForm.widened`` for those rows, and
    the capacities of the routes that build their rows themselves (ESCB's P3)."""
    from optsched.models.validate import FEASIBILITY_TOL

    tol = FEASIBILITY_TOL if tol is None else tol
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # an infinite side stays infinite
        wide_upper = np.where(upper >= 0, upper / (1.0 - tol), upper + tol * np.abs(upper))
        wide_lower = lower - tol * np.abs(lower)
    return np.where(np.isfinite(lower), wide_lower, lower), np.where(np.isfinite(upper), wide_upper, upper)


def whole_sides(lower: Any, upper: Any) -> tuple[np.ndarray, np.ndarray]:
    """The whole numbers within sides at a model's tolerance (of :func:`load_sides` or
    :meth:`StandardForm.widened`): the sides rounded in, after :data:`WHOLE_SIDE_ULPS` units in
    the last place of their size outward. The model's own test rounds too: a weight of 17 passes
    a capacity of 16.999999983 (16.999999983 + 1e-9 x 17 is 17.0 in floats) while 16.999999983 /
    (1 - 1e-9) is 16.999999999999996, one unit in the last place short, whose floor, 16, left the
    item out (probe BK; also 999999968 on 999999967). The margin was 1e-12 of the side until
    2026-11-28: at a capacity of 1e12 that is a whole unit, and a weight of 1e12 + 1001, which the
    model refuses (its slack is 1000), reached CP-SAT's "feasible" (probe BM). A whole load that
    this lets through and the model refuses lies within the margin of its side, and is not
    certified (``certificates.outside_model_tolerance``)."""
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    margin = WHOLE_SIDE_ULPS * np.finfo(np.float64).eps
    with np.errstate(invalid="ignore"):
        return (np.ceil(lower - margin * np.maximum(1.0, np.abs(lower))),
                np.floor(upper + margin * np.maximum(1.0, np.abs(upper))))


WHOLE_SIDE_ULPS = 16  # the model's test and the widened side differ by a few roundings of the side


def scaled_capacity_rows(weights: np.ndarray, capacity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``W x <= capacity`` with each row whose largest |entry| (capacity included) is outside
    :data:`ROWS_KEPT` multiplied by the power of two that brings it into [1, 2): the same
    constraint, exactly, with the solvers' absolute tolerances acting on the row's own scale
    (:meth:`StandardForm.scaled_rows` for a standard form's rows)."""
    w, c = np.asarray(weights, dtype=np.float64), np.asarray(capacity, dtype=np.float64)
    f = row_factors(np.maximum(np.abs(w).max(axis=1, initial=0.0), np.abs(c)))
    return w * f[:, None], c * f


def solver_form(model: Any) -> StandardForm:
    """The program an exact solver is given for ``model`` (HiGHS, SCIP, CP-SAT, and the cvxpy and
    Pyomo routes of a standard form): its standard form, a MIP's rows at the model's tolerance
    (:meth:`StandardForm.widened`) and its integer columns as its rows bound them
    (:meth:`StandardForm.tightened`). Once per model."""
    def build() -> StandardForm:
        form = model.to_standard_form()
        return form.widened(slack=model.ROW_SLACK).tightened() if form.is_mip else form

    return model.memo("solver_form", build)


def mip_objective_scale(model: Any) -> float:
    """:attr:`StandardForm.objective_scale` of the program the solver is given (the model's
    standard form, a MIP's widened and tightened: no cost of a column fixed at 0): what the
    cvxpy and Pyomo routes to HiGHS multiply a MIP's objective by. 1 for a kind without a
    standard form and where the objective's offset, which their objective holds, would pass
    2^60 scaled (an offset of 1e50 beside costs of 1e-200 went past the solvers' infinity)."""
    if "standard" not in type(model).FORMS:
        return 1.0
    form = solver_form(model)
    scale = form.objective_scale
    return scale if abs(form.offset) * scale < 2.0**60 else 1.0


def cvxpy_objective_scale(model: Any) -> float:
    """What the cvxpy backend multiplies a continuous model's objective by before the solve
    (and divides the solver's objective and multipliers by after it): the model's own
    ``cvxpy_objective_scale()`` where its kind defines one, else 1."""
    own = getattr(model, "cvxpy_objective_scale", None)
    return 1.0 if own is None else float(own())


def all_binary_rows(n: int, start: int, stop: int) -> np.ndarray:
    """Rows ``start..stop-1`` of the 2^n x n table of 0-1 vectors (bit j of the row number): the
    enumeration of the ``binary`` form."""
    codes = np.arange(start, stop, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(bool)


@dataclass(frozen=True, slots=True)
class Traits:
    """What an instance's form asks of a solver (matched against a backend's capability flags)."""

    continuous: bool  # some variable is continuous
    quadratic: bool  # the objective has a quadratic term


UNCONSTRAINED_MAX = 4000  # columns of a dense pseudo-inverse solve in lagrangian_gap


# How small a free column's reduced cost, against the magnitudes it is computed from, is taken as
# its rounding (2^-40: a few thousand ulps of the sum c_j - sum_i a_ij y_i)
RESIDUAL_ROUNDING = 2.0**-40
# The largest (free columns x rows) for which the multipliers that zero the free columns'
# reduced costs are computed (dense least squares)
ZEROING_MAX_CELLS = 10**6


def _transpose_times(a: Any, y: np.ndarray, *, absolute: bool = False) -> np.ndarray:
    """A'y (|A|'y with ``absolute``) without building the transpose (scipy's costs ~50 us a
    product on a small program: the certificate runs on every LP and QP solve)."""
    a = a if a.format == "csr" else a.tocsr()
    data = np.abs(a.data) if absolute else a.data
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    return np.bincount(a.indices, weights=data * y[rows], minlength=a.shape[1]).astype(np.float64, copy=False)


def _zeroing_duals(a: Any, y: np.ndarray, free: tuple[np.ndarray, np.ndarray]) -> np.ndarray | None:
    """y + d with d the least-norm solution of A_F' d = r_F (F the free columns, r_F their
    reduced costs at y): multipliers under which those costs are 0 up to rounding; None past
    ``ZEROING_MAX_CELLS``."""
    columns, reduced = free
    if columns.size * a.shape[0] > ZEROING_MAX_CELLS:
        return None
    block = np.asarray(a.tocsc()[:, columns].toarray().T)
    return y + np.linalg.lstsq(block, reduced, rcond=None)[0]


def _implied_box(a: Any, row_lower: np.ndarray, row_upper: np.ndarray, lo: np.ndarray,
                 hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The column bounds one pass of bound propagation proves: for a_ij != 0, a_ij x_j lies
    within row i's sides less the least and greatest activity of its other terms over the box
    (where those are finite), widened outward by 1e-7 of the magnitudes summed (rounding). Every
    feasible point lies in the box, so a Lagrangian bound over it holds for the program: a free
    column's reduced cost of 1e-15 (a solver's residual) times an implied range of 20 is a term
    of 2e-14, where over the unbounded column it made the bound -inf."""
    coo = a.tocoo()
    i, j, v = coo.row, coo.col, np.asarray(coo.data, dtype=np.float64)
    keep = v != 0
    i, j, v = i[keep], j[keep], v[keep]
    with np.errstate(invalid="ignore", over="ignore"):
        low_term = np.where(v > 0, v * lo[j], v * hi[j])
        high_term = np.where(v > 0, v * hi[j], v * lo[j])
    n_rows = row_lower.shape[0]

    def others(term: np.ndarray, infinite: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per entry: the row's sum of the other entries' terms (inf where one is infinite), and
        the magnitudes summed."""
        finite = np.where(infinite, 0.0, term)
        total = np.bincount(i, weights=finite, minlength=n_rows)
        count = np.bincount(i, weights=infinite.astype(np.float64), minlength=n_rows)
        size = np.bincount(i, weights=np.abs(finite), minlength=n_rows)
        rest = np.where(count[i] - infinite > 0, np.nan, total[i] - finite)
        return rest, size[i]

    rest_low, size_low = others(low_term, np.isneginf(low_term))  # nan: -inf
    rest_high, size_high = others(high_term, np.isposinf(high_term))  # nan: +inf
    new_lo, new_hi = lo.copy(), hi.copy()
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for side, rest, size, sign in ((row_upper[i], rest_low, size_low, 1.0), (row_lower[i], rest_high, size_high, -1.0)):
            usable = np.isfinite(side) & ~np.isnan(rest)
            bound = (side - rest) / v  # a_ij x_j <= side - rest (upper side) or >= (lower side)
            slack = 1e-7 * ((np.abs(side) + size) / np.abs(v) + np.abs(bound)) + 1e-300
            upper = usable & (sign * v > 0)  # x_j <= bound
            lower = usable & (sign * v < 0)  # x_j >= bound
            np.minimum.at(new_hi, j[upper], (bound + slack)[upper])
            np.maximum.at(new_lo, j[lower], (bound - slack)[lower])
    return new_lo, new_hi


def _range_minimum(hessian: Any, r: np.ndarray) -> float:
    """min over all t of t'Ht / 2 + r't: -r'z / 2 with Hz = r, when r lies in the range of H
    (least squares, the residual within 1e-12 of |r|); -inf otherwise, or past UNCONSTRAINED_MAX
    columns. A lower bound of the same over any box, whatever the other columns do."""
    if r.shape[0] > UNCONSTRAINED_MAX:
        return -np.inf
    dense = hessian.toarray()
    z = np.linalg.lstsq(dense, r, rcond=None)[0]
    if not np.linalg.norm(dense @ z - r) <= 1e-12 * np.linalg.norm(r):
        return -np.inf
    return -0.5 * float(r @ z)


def _interval_minimum(r: np.ndarray, q: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """min over t in [low, high] of q t^2 / 2 + r t, entrywise (q >= 0; -inf where unbounded)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        t = np.where(q > 0, np.clip(-r / np.where(q > 0, q, 1.0), low, high), np.where(r > 0, low, high))
        value = np.where(r == 0, 0.0, r * t) + np.where(q > 0, 0.5 * q * t * t, 0.0)
    value[(r == 0) & (q == 0)] = 0.0
    return np.where(np.isnan(value), -np.inf, value)


class StandardFormModel(Protocol):
    """``"standard"``: a linear or convex quadratic program (HiGHS, CP-SAT, SCIP, export)."""

    def to_standard_form(self) -> StandardForm: ...

    def solution_from_vector(self, x: np.ndarray) -> Any: ...


class PyomoModel(Protocol):
    """``"pyomo"``: a Pyomo ``ConcreteModel``, the reference statement of the math."""

    def to_pyomo(self) -> Any: ...

    def solution_from_pyomo(self, m: Any) -> Any: ...


class CvxpyModel(Protocol):
    """``"cvxpy"``: ``(problem, to_solution)`` in DCP form, and the solver (with its settings)
    that solves it as an oracle. A model may also say what its objective is multiplied by
    before the solve (``cvxpy_objective_scale()``, :func:`cvxpy_objective_scale`)."""

    def to_cvxpy(self) -> tuple[Any, Callable[[], Any]]: ...

    def cvxpy_default_solver(self) -> tuple[str, dict[str, Any]]: ...


class BinaryModel(Protocol):
    """``"binary"``: ``n_binary`` 0-1 variables and ``evaluate_binary(X)`` -> (feasible, values)
    over rows of 0-1 vectors (brute force)."""

    @property
    def n_binary(self) -> int: ...

    def evaluate_binary(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def solution_from_vector(self, x: np.ndarray) -> Any: ...


FORM_PROTOCOLS: dict[str, type] = {
    "standard": StandardFormModel, "pyomo": PyomoModel, "cvxpy": CvxpyModel, "binary": BinaryModel,
}


def _members(protocol: type) -> list[str]:
    return [name for name in vars(protocol) if not name.startswith("_")]


def forms_of(cls: type) -> frozenset[str]:
    """The forms a model class provides: every protocol all of whose members the class defines.
    A class that defines some members of a protocol but not all is a mistake: ValueError."""
    counts: dict[str, int] = {}
    for protocol in FORM_PROTOCOLS.values():
        for m in _members(protocol):
            counts[m] = counts.get(m, 0) + 1
    out = set()
    for name, protocol in FORM_PROTOCOLS.items():
        have = {m for m in _members(protocol) if getattr(cls, m, None) is not None}
        if len(have) == len(_members(protocol)):
            out.add(name)
        elif any(counts[m] == 1 for m in have):  # a member only this form has: the form was meant
            missing = sorted(set(_members(protocol)) - have)
            raise ValueError(f"model {cls.__name__}: the {name!r} form needs {', '.join(missing)} as well")
    return frozenset(out)


def standard_form_to_cvxpy(model: Any) -> tuple[Any, Callable[[], Any]]:
    """The ``"cvxpy"`` form of a kind that states its math only as a standard form: the
    program of :meth:`StandardForm.to_cvxpy` (a MIP's rows scaled to order 1,
    :meth:`StandardForm.scaled_rows`: its solvers' tolerances are absolute), mapped back by
    ``solution_from_vector``."""
    form = model.to_standard_form()
    problem, x = (solver_form(model).scaled_rows()[0] if form.is_mip else form).to_cvxpy()

    def to_solution() -> Any:
        v = np.asarray(x.value, dtype=np.float64)
        v = np.where(form.integrality, np.round(v), np.clip(v, form.col_lower, form.col_upper))
        return model.solution_from_vector(v)

    return problem, to_solution


def pyomo_values(var: Any, n: int) -> np.ndarray:
    """The values of the indexed Pyomo variable ``var[0..n-1]`` after a solve, a variable without
    one as 0 (no constraint or objective names it: no solver saw it); ValueError when none has a
    value (the model was never solved, or its solution not loaded: it read as x = 0)."""
    values = [var[i].value for i in range(n)]
    if n and all(v is None for v in values):
        raise ValueError("solution: the Pyomo model holds no values (solve it and load its solution first)")
    return np.array([0.0 if v is None else v for v in values], dtype=np.float64)


def standard_form_to_pyomo(model: Any) -> Any:
    """The ``"pyomo"`` form of a kind that states its math only as a standard form:
    :meth:`StandardForm.to_pyomo` (a MIP's rows widened, its columns tightened and its rows
    scaled to order 1, as for cvxpy)."""
    form = solver_form(model)
    return (form.scaled_rows()[0] if form.is_mip else form).to_pyomo()


def standard_form_solution_from_pyomo(model: Any, m: Any) -> Any:
    return model.solution_from_vector(model.to_standard_form().vector_from_pyomo(m))


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def standard_form_cvxpy_solver(model: Any) -> tuple[str, dict[str, Any]]:
    return model.to_standard_form().cvxpy_solver()


def _form(model: Any, name: str) -> Any:
    if name not in type(model).FORMS:
        raise TypeError(f"model {model.name!r} has no {name!r} form")
    return model


def as_standard(model: Any) -> StandardFormModel:
    return cast(StandardFormModel, _form(model, "standard"))


def as_pyomo(model: Any) -> PyomoModel:
    return cast(PyomoModel, _form(model, "pyomo"))


def as_cvxpy(model: Any) -> CvxpyModel:
    return cast(CvxpyModel, _form(model, "cvxpy"))


def as_binary(model: Any) -> BinaryModel:
    return cast(BinaryModel, _form(model, "binary"))
