"""ONSOCMAX (paper 002, Algorithm 1): one pseudo-welfare program P3 per arriving job.

Jobs are taken in arrival order (ties: job index). For job n the policy solves P3 at the
current usage levels w_r^(n) of its units R_n,

    max sum_r f_nr(x_r) + beta_nr x_r / C_r - int_{w_r}^{w_r + x_r} phi_r(u) du
    s.t. sum_r x_r <= rho_n, 0 <= x_r <= xbar_nr,

with Theorem 2's price phi_r (:mod:`optsched.models.prices`), dispatches (reserves) x_n on
R_n at once, and updates w_r^(n+1) = w_r^(n) + x_nr (11). iota and upsilon of (8) are
taken from the whole instance (the paper treats them as known constants), and alpha is
alpha-hat of (40) unless given.

Ties. For a linear pair whose marginal welfare a_nr + beta_nr / C_r equals iota (the pair that
defines iota in (8), for instance), P3's objective is *flat* while w_r + x_r stays below the
threshold w_hat_r = C_r / (alpha - 1): every x_r in that range is optimal for P3, and an exact
solver may return x_r = 0. The proof of Theorem 1 (Case I: "each job is processed with maximum
permitted workloads") needs the largest optimal x there; with x_r = 0 the ratio OPT / online
is unbounded (one linear job alone: online 0). With ``serve_ties`` (default) the policy
raises such pairs, in pair order, as far as the flat range, xbar_nr and rho_n allow
(:func:`serve_ties`); the result is still an optimal solution of P3. ``serve_ties=False``
keeps the solver's answer as is (see docs/onsocmax.md for the measured consequence). The rule
raises pairs to fractional amounts, so it is the continuous variant's alone: the integral
variant (43) keeps x_r in {0, xbar_r}, and ``serve_ties`` defaults to on for the continuous
variant, off for the integral one (which refuses it).

The job's subproblem P3 is a ``pseudo_welfare`` model (``pseudo_welfare_integral`` with
``integral``: Section III-D, x_r in {0, xbar_r}) solved through the seam by ``backend``:
``kkt`` (default: the exact compiled KKT kernel), ``alm`` (Algorithm 2 of the paper),
``cvxpy``; for the integral variant ``highs`` (default), ``cpsat``, ``brute_force``. A job
whose backend returns no solution is solved by the default backend (counted).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optsched.models.pseudo_welfare import PseudoWelfare, PseudoWelfareIntegral
from optsched.observe import SubproblemSolver
from optsched.models import utilities
from optsched.models.mesh import MeshInstance
from optsched.onsocmax.env import Dispatch, MeshEnv, Observation
from optsched.models.prices import alpha_hat, threshold
from optsched.models.validate import finite_float, flag
from optsched.policy import evaluate

DEFAULT_BACKENDS = {False: "kkt", True: "highs"}  # by ``integral``


class Onsocmax:
    """Algorithm 1. ``bounds`` = (iota, upsilon) overrides (8) computed from the instance."""

    name = "ONSOCMAX"

    def __init__(
        self,
        *,
        backend: str | None = None,
        options: Mapping[str, Any] | None = None,
        integral: bool = False,
        bounds: tuple[float, float] | None = None,
        alpha: float | None = None,
        serve_ties: bool | None = None,
    ) -> None:
        flag("integral", integral)
        if serve_ties is not None:
            flag("serve_ties", serve_ties)
        if serve_ties and integral:
            raise ValueError("serve_ties: the tie rule raises pairs to fractional amounts; the integral variant "
                             "(43) takes x_r in {0, xbar_r} (leave serve_ties unset or False)")
        self._model = PseudoWelfareIntegral if integral else PseudoWelfare
        self.solver = SubproblemSolver(self._model, backend, default=DEFAULT_BACKENDS[integral], options=options,
                                       label=self.name)
        if bounds is not None:  # (iota, upsilon) of (8): 0 < iota <= upsilon
            if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
                raise ValueError(f"bounds: expected (iota, upsilon), got {bounds!r}")
            iota, upsilon = (finite_float("bounds", b) for b in bounds)
            if not 0 < iota <= upsilon:
                raise ValueError(f"bounds: need 0 < iota <= upsilon, got ({iota}, {upsilon})")
            bounds = (iota, upsilon)
        self.bounds = bounds
        self.alpha = alpha
        self.serve_ties = (not integral) if serve_ties is None else bool(serve_ties)

    def reset(self, env: MeshEnv, rng: np.random.Generator) -> None:
        inst = env.instance
        if inst is None:
            raise RuntimeError(f"{self.name}.reset: reset the environment first")
        self._inst: MeshInstance = inst
        self.iota, self.upsilon = self.bounds if self.bounds is not None else inst.marginal_bounds()
        self._alpha = float(alpha_hat(self.upsilon / self.iota)) if self.alpha is None else float(self.alpha)

    def act(self, obs: Observation) -> Dispatch:
        inst = self._inst
        usage = np.array(obs.usage, dtype=np.float64)  # w_r^(n), updated by (11) job by job
        capacity = inst.capacity.reshape(-1)
        pairs: list[np.ndarray] = []
        amounts: list[np.ndarray] = []
        for n in obs.arrivals:
            s = inst.job_pairs(int(n))
            if s.start == s.stop:
                continue
            units = inst.pair_unit[s]
            job = self._model(
                utility=inst.pair_kind[s], a=inst.a[s], beta=inst.beta[s], capacity=capacity[units],
                xbar=inst.xbar[s], rho=float(inst.rho[n]), usage=np.minimum(usage[units], capacity[units]),
                iota=self.iota, upsilon=self.upsilon, alpha=self._alpha,
            )
            x = np.clip(np.asarray(self.solver.solution(job), dtype=np.float64), 0.0, inst.xbar[s])
            if self.serve_ties:
                x = serve_ties(
                    x, inst.pair_kind[s], inst.a[s], inst.beta[s], capacity[units], inst.xbar[s], usage[units],
                    float(inst.rho[n]), self.iota, self._alpha,
                )
            usage[units] += x
            pairs.append(np.arange(s.start, s.stop))
            amounts.append(x)
        if not pairs:
            return Dispatch.none()
        return Dispatch.of_pairs(inst, np.concatenate(pairs), np.concatenate(amounts))

    def observe(self, feedback: Mapping[str, Any]) -> None:
        pass


def serve_ties(
    x: np.ndarray, kind: np.ndarray, a: np.ndarray, beta: np.ndarray, capacity: np.ndarray, xbar: np.ndarray,
    usage: np.ndarray, rho: float, iota: float, alpha: float, *, rtol: float = 1e-12,
) -> np.ndarray:
    """The largest optimal solution of P3 from any optimal ``x`` (see the module doc).

    Only when (4) is slack (sum x < rho, so mu* = 0): a linear pair with a + beta / C = iota
    has zero marginal pseudo-welfare while w + x < w_hat = C / (alpha - 1); it is raised to
    min(xbar, w_hat - w), in pair order, until sum x = rho. P3's objective does not change."""
    x = np.array(x, dtype=np.float64)
    left = rho - x.sum()
    if left <= 0:
        return x
    linear = np.asarray(kind) == utilities.KINDS.index("linear")
    marginal = a + beta / capacity
    tie = linear & (np.abs(marginal - iota) <= rtol * iota)
    room = np.where(tie, np.maximum(np.minimum(xbar, threshold(capacity, alpha) - usage) - x, 0.0), 0.0)
    add = np.minimum(room, np.maximum(left - (np.cumsum(room) - room), 0.0))
    return x + add


def run_online(instance: MeshInstance, policy: Any, *, seed: int = 0) -> tuple[float, np.ndarray]:
    """Replay ``instance`` under ``policy`` (the shared evaluator loop); returns P1's welfare of
    the online allocation and the dense (N, n_units) allocation itself."""
    env = MeshEnv.fixed(instance)
    evaluate(env, policy, instance.n_slots, seed=seed)
    return instance.welfare(env.pair_allocation), env.allocation
