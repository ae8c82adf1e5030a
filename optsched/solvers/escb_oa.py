"""``escb_oa``: the ESCB index P3 solved exactly by outer approximation with HiGHS.

P3 is  max mean.x + t  s.t.  t <= sqrt(variance.x),  W x <= capacity,  x binary.  sqrt is
concave, so each tangent  t <= sqrt(u0) + (variance.x - u0) / (2 sqrt(u0))  over-estimates it,
and the MILP with finitely many tangents is a relaxation whose optimum bounds OPT from above.
Loop: solve the MILP; at its x (u = variance.x) the true value mean.x + sqrt(u) is a lower bound;
stop when t <= sqrt(u) + tol (then the MILP bound meets the incumbent), else add the tangent
at u, which cuts this (x, t) off. Every x is cut at most once, so the loop is finite.

With ``reuse_cuts`` a Prepared remembers the tangent points its solves needed (the last 24) and
starts the next model with those cuts (valid for any data: a tangent of sqrt is an over-estimate
everywhere), which is what a policy's next slot usually needs again.

The tangent at u0 = 0 does not exist; a first cut t <= variance.x / sqrt(v_min), with v_min the
smallest positive variance, is exact at u = 0 and at u = v_min and valid for every
u in {0} U [v_min, inf), which holds for every x.

The MILPs are solved on the data scaled to an objective between 16 and 32 (mean c, variance
c^2, so every value is c times P3's; c a power of two) and each capacity row to entries of order 1
(capacities of 1e21 passed HiGHS's infinity of 1e20 and the rows vanished; a power of two per
row keeps the constraint exact): HiGHS's tolerances are absolute (1e-7), and with means and
variances of 1e-13 a cut violated within them returned the same x round after round (6,528
MILPs in 60 s). Should an x come back all the same, its cut did not hold within the solver's
tolerance: the loop stops with ``iteration_limit`` and the best x and bound so far.
"""

from __future__ import annotations

import math
import time
from typing import Any, Mapping

import numpy as np

from optsched.models.base import Model
from optsched.models.forms import HIGHS_MIP_ORACLE_OPTIONS, load_sides, power_of_two_scale, scaled_capacity_rows
from optsched.result import Result, Termination
from optsched.solvers.certificates import outside_model_tolerance
from optsched.solvers.highs import highs_termination, mip_start, new_highs, run_highs, set_option
from optsched.solvers.registry import Backend, Option, PrepareFn, register_backend


MAX_REMEMBERED_POINTS = 24


@register_backend
class EscbOuterApproximationBackend(Backend):
    NAME = "escb_oa"
    DESCRIPTION = "exact ESCB index (P3): outer approximation of sqrt by tangent cuts, MILPs by HiGHS"
    EXACT = True
    MODELS = frozenset({"escb_index"})
    SUPPORTS_TIME_LIMIT = True
    REQUIRES = ("highspy",)
    PRIORITY = 20
    OPTIONS: Mapping[str, Option] = {
        "tol": Option(1e-7, float, "stop when the tangent cut is within tol of sqrt (relative)", minimum=0.0,
                      maximum=1.0, open_minimum=True),
        "max_iterations": Option(10_000, int, "largest number of MILPs (outer iterations)", minimum=1),
        "threads": Option(1, int, "HiGHS threads", minimum=1, maximum=256),
        "reuse_cuts": Option(True, bool, "start from the tangent points of this Prepared's earlier solves"),
    }

    def new_state(self, kind: type[Model], options: Mapping[str, Any], *, prepare: PrepareFn) -> list[float]:
        return []  # tangent points u0 of earlier solves (a policy's next slot starts with them)

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        import highspy

        m: Any = model
        scale = _scale(m.mean, m.variance)
        n, var, mean = m.n_items, np.asarray(m.variance) * scale * scale, np.asarray(m.mean) * scale
        weights, capacity = scaled_capacity_rows(m.weights, load_sides(-np.inf, m.capacity)[1])  # model's tolerance
        h = new_highs(options["threads"])
        h.setOptionValue("mip_rel_gap", 0.0)
        # HiGHS 1.14.0 presolve also answered a wrong "optimal" 1.2127 (x = {0, 1}) on the first
        # MILP of mean = (0.3478, 0.5584, 0.5092), variance = (0.0368, 0.0571, 0), weights
        # (1.147, 0.538, 1.202) <= 2.834, where {1, 2} gives 1.3654 (P3 optimum 1.3066); no single
        # presolve rule switched off fixes it, presolve "off" does (found by the fuzz long run).
        # These MILPs have n + 1 columns and K + cuts rows: presolve buys little here.
        set_option(h, "presolve", "off")
        # cuts that hold to 1e-10, not HiGHS's default 1e-6: a cut violated within 1e-6 returned
        # its x again (iteration_limit, 1.8e-6 short) at some objective scales
        for key in ("primal_feasibility_tolerance", "mip_feasibility_tolerance", "small_matrix_value"):
            set_option(h, key, HIGHS_MIP_ORACLE_OPTIONS[key])
        # primal heuristics that cost more than they find here: feasibility jump a fixed ~4 ms a
        # run, several times these small MILPs; root reduced cost, RINS and RENS sub-MIPs most of
        # the root node's time on ESDP's indices (with the incumbent below, the loop took 0.41-0.50x
        # the time on 100 indices of a scale4x run, the same solutions)
        for heuristic in ("feasibility_jump", "root_reduced_cost", "rins", "rens"):
            set_option(h, f"mip_heuristic_run_{heuristic}", False)
        inf = highspy.kHighsInf
        t_upper = math.sqrt(float(var.sum()))
        h.addCols(n + 1, np.append(mean, 1.0), np.zeros(n + 1), np.append(np.ones(n), t_upper), 0,
                  np.zeros(n + 1, np.int32), np.zeros(0, np.int32), np.zeros(0))  # x, then t
        h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), [highspy.HighsVarType.kInteger] * n)
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        for k in range(weights.shape[0]):
            nz = np.flatnonzero(weights[k]).astype(np.int32)
            h.addRow(-inf, float(capacity[k]), len(nz), nz, weights[k, nz])
        cols = np.arange(n + 1, dtype=np.int32)
        positive = var[var > 0]
        if positive.size:
            h.addRow(-inf, 0.0, n + 1, cols, np.append(-var / math.sqrt(positive.min()), 1.0))

        points: list[float] = state if state is not None else []
        if options["reuse_cuts"]:
            # a tangent of the concave sqrt at any u0 > 0 over-estimates it everywhere: the points
            # where earlier solves of this Prepared needed a cut are valid cuts here too
            roots = np.sqrt(np.array(points)) * scale  # the points are kept in P3's own units
            h.addRows(roots.size, np.full(roots.size, -inf), roots / 2, roots.size * (n + 1),
                      np.arange(roots.size, dtype=np.int32) * (n + 1), np.tile(cols, roots.size),
                      np.hstack([-var[None, :] / (2 * roots[:, None]), np.ones((roots.size, 1))]).reshape(-1))
        tol = float(options["tol"])
        start = time.perf_counter()
        best_x, best_val, bound = None, -math.inf, math.inf  # scaled by ``scale``
        cut: set[bytes] = set()
        for it in range(1, int(options["max_iterations"]) + 1):
            if time_limit is not None:
                left = time_limit - (time.perf_counter() - start)
                if left <= 0:
                    return self._stop(m, Termination.TIME_LIMIT, best_x, best_val, bound, it - 1, scale)
                h.setOptionValue("time_limit", left)
            run_highs(h)
            termination = highs_termination(h.getModelStatus().name)
            if termination is not Termination.OPTIMAL:
                return self._stop(m, termination, best_x, best_val, bound, it, scale)
            sol = np.asarray(h.getSolution().col_value)
            x, t = sol[:n] > 0.5, float(sol[n])
            u = float(var @ x)
            value = float(mean @ x) + math.sqrt(u)
            if value > best_val:
                best_x, best_val = x, value
            bound = min(bound, float(h.getInfo().mip_dual_bound))
            if t <= math.sqrt(u) + tol * max(1.0, math.sqrt(u)) or bound <= best_val + tol * max(1.0, abs(best_val)):
                solution, said = m.solution_from_vector(best_x), {}
                done = Termination.FEASIBLE if outside_model_tolerance(m, solution, said, "HiGHS") else Termination.OPTIMAL
                return Result(done, objective=best_val / scale, bound=max(bound, best_val) / scale,
                              solution=solution, iterations=it, extra=said)
            if x.tobytes() in cut:  # its cut did not hold within HiGHS's tolerance: no progress left
                return self._stop(m, Termination.ITERATION_LIMIT, best_x, best_val, bound, it, scale,
                                  why="the MILP returned an x whose cut it had already (within its tolerance)")
            cut.add(x.tobytes())
            root = math.sqrt(u)
            h.addRow(-inf, root / 2, n + 1, cols, np.append(-var / (2 * root), 1.0))
            # the best x so far with t = sqrt(var.x) meets every cut (a tangent over-estimates
            # sqrt): the next MILP starts from it as its incumbent
            mip_start(h, np.append(best_x, min(math.sqrt(float(var @ best_x)), t_upper)))
            if options["reuse_cuts"] and u / scale / scale not in points:
                points.append(u / scale / scale)
                del points[:-MAX_REMEMBERED_POINTS]
        return self._stop(m, Termination.ITERATION_LIMIT, best_x, best_val, bound, int(options["max_iterations"]),
                          scale)

    @staticmethod
    def _stop(m: Any, termination: Termination, x: Any, value: float, bound: float, iterations: int, scale: float,
              *, why: str = "") -> Result:
        """Early end: the best x so far (if any) and the last MILP bound (both unscaled)."""
        return Result(
            termination if termination.stopped_early else Termination.ERROR,
            objective=None if x is None else value / scale,
            bound=None if not math.isfinite(bound) else max(bound, value) / scale,
            solution=None if x is None else m.solution_from_vector(x),
            iterations=iterations,
            extra={"message": f"outer approximation stopped ({termination.value}) after {iterations} MILPs"
                              + (f": {why}" if why else "")},
        )


def _scale(mean: Any, variance: Any) -> float:
    """The power of two c with c * (sum |mean| + sqrt(sum variance)) in [16, 32) (1 for all-zero
    data): P3's objective scaled for the MILP solvers' absolute tolerances, exactly (``1 / size``
    overflowed its square at sizes of 1e-160). Not [0.5, 1): a cut t <= sqrt(u) holds within
    the solver's 1e-7 (HiGHS) or 1e-6 (SCIP), which moves t by about that / (2 t); at sizes
    below 1 escb_oa met an x whose cut it already had (one ESDP index, gap 1.8e-6) and SCIP
    ended 26 of 300 generated indices at ``gap_limit`` (0 of 400 at [16, 32))."""
    return power_of_two_scale(float(np.abs(mean).sum()) + math.sqrt(float(np.sum(variance)))) * 2.0**5
