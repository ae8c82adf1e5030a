"""Algorithm 2 of paper 002: the augmented Lagrangian method for P3, as printed.

P3' moves the constraints into equalities with slacks (17)-(20); eliminating the slacks by
(23) gives the augmented Lagrangian (24):

    L_sigma(x, mu, y, z) = sum_r [Phi_r(x_r) - f_r(x_r) - g_r(x_r)]
        + sigma/2 [max(mu/sigma + sum_r x_r - rho, 0)^2 - mu^2/sigma^2]
        + sigma/2 sum_r [max(y_r/sigma + x_r - xbar_r, 0)^2 - y_r^2/sigma^2]
        + sigma/2 sum_r [max(z_r/sigma - x_r, 0)^2 - z_r^2/sigma^2],

with the violation degree (25) and the loop of Algorithm 2 (steps 1-28), including the
corrected step 13: mu <- max(mu + sigma (sum_r x_r - rho), 0). Defaults are Table II:
sigma_0 = 0.97, theta_1 = 0.99, theta_2 = 0.999, p = 1.002, final eta = 0.1, final
epsilon = 10, learning rate 2, decay 0.95.

Where the paper is silent (see docs/onsocmax_models.md):
- Step 6 ("gradient descent", learning rate 2, decay 0.95): projected gradient descent on
  x_r <= C_r - w_r (the domain of Phi_r, phi = +inf above C_r). The first step of each
  outer iteration is the learning rate; later ones are Barzilai-Borwein step lengths; a step
  that raises L above its recent maximum is multiplied by ``decay`` (non-monotone
  backtracking). Plain fixed-rate descent needed 10^4-10^5 steps per job on linear utilities
  (L is then nearly flat along sum x = rho, condition number ~ sigma |R_n| / phi'), so we
  use the standard step-length rule. The inner loop stops when the projected gradient norm is
  <= eta_k or after ``max_inner`` steps.
- (25) is a sum of signed terms that can cancel; we sum their absolute values (the usual
  l1 measure of infeasibility and complementarity).
- For x_r < 0 (only ALM iterates go there) f_r is extended linearly, f_r(x) = f_r'(0) x,
  and the price is iota (a concave, C^1 extension).
- The returned x is the last iterate, Euclidean-projected onto the feasible set of P3
  (ALM iterates are only approximately feasible); ``extra`` reports the raw violation and
  ``inner_limit_hits``, the outer iterations whose step 6 stopped at ``max_inner`` short of
  eta_k (steps 7-24 then act on a point that is not the subproblem's approximate minimiser).
- ``floor_tolerances`` (off by default, as printed): steps 18-19 and 24 never set eta_k, eps_k
  below the final eta, epsilon (the safeguard of LANCELOT-type augmented Lagrangian codes).
  As printed, eta_k shrinks by sigma per accepted step, to 1e-12 and below with sigma >= 100,
  which step 6 cannot reach although step 9 only asks for eta.
"""

from __future__ import annotations

import math
import time
from typing import Any, Mapping, NamedTuple

import numpy as np

from optsched.models.base import Model
from optsched.models.pseudo_welfare import PseudoWelfare
from optsched.models import prices, utilities
from optsched.result import Result, Termination
from optsched.solvers.registry import Backend, Option, register_backend

MEMORY = 10  # non-monotone line search window of step 6

TABLE_II: Mapping[str, float] = {
    "sigma0": 0.97,
    "theta1": 0.99,
    "theta2": 0.999,
    "p": 1.002,
    "eta": 0.1,
    "epsilon": 10.0,
    "learning_rate": 2.0,
    "decay": 0.95,
}

# Settings under which Algorithm 2 converges on the Section IV jobs (measured in
# benchmarks/bench_pseudo_welfare.py): sigma_0 > 1 so the tolerances of step 19 shrink, the
# classic augmented-Lagrangian exponents theta_1 = 0.1, theta_2 = 0.9 so step 8 accepts, and
# step 6 given the steps it needs and never asked for less than the final eta (with 2000 steps
# and no floor, 20 of 240 jobs of 23-39 units never returned: docs/onsocmax_models.md).
CONVERGENT: Mapping[str, float | int | bool] = {
    "sigma0": 10.0,
    "theta1": 0.1,
    "theta2": 0.9,
    "p": 10.0,
    "eta": 1e-6,
    "epsilon": 1e-6,
    "max_inner": 20000,
    "floor_tolerances": True,
}


DEADLINE_EVERY = 64  # inner steps between clock reads


class ALMSolution(NamedTuple):
    x: np.ndarray  # projected onto the feasible set of P3
    raw_x: np.ndarray  # the last iterate of Algorithm 2
    outer: int
    inner: int
    violation: float  # (25) of the last iterate (absolute terms)
    grad_norm: float
    converged: bool
    inner_limit_hits: int  # outer iterations whose step 6 stopped at max_inner short of eta_k
    timed_out: bool = False


def project_feasible(x: np.ndarray, upper: np.ndarray, rho: float) -> np.ndarray:
    """Euclidean projection onto {0 <= x <= upper, sum x <= rho}: clip(x - tau, 0, upper)
    with the least tau >= 0 meeting the sum (bisection to the ulp)."""
    y = np.clip(x, 0.0, upper)
    if y.sum() <= rho:
        return y
    lo, hi = 0.0, float(np.max(x))
    for _ in range(200):
        tau = 0.5 * (lo + hi)
        if np.clip(x - tau, 0.0, upper).sum() > rho:
            lo = tau
        else:
            hi = tau
        if hi - lo <= 1e-15 * max(hi, 1.0):
            break
    return np.clip(x - hi, 0.0, upper)


class _Program:
    """The pieces of (24) for one P3 instance."""

    def __init__(self, model: PseudoWelfare):
        self.m = model
        self.b = model.beta / model.capacity
        self.slope0 = utilities.derivative(model.utility, model.a, 0.0)
        self.top = model.capacity - model.usage  # domain of Phi_r

    def welfare_grad(self, x: np.ndarray) -> np.ndarray:
        """d/dx of sum_r [Phi_r - f_r - g_r] = phi_r(w_r + x_r) - f_r'(x_r) - beta_r/C_r."""
        m = self.m
        fp = np.where(x < 0.0, self.slope0, utilities.derivative(m.utility, m.a, np.maximum(x, 0.0)))
        return prices.price(m.usage + x, m.capacity, m.iota, m.upsilon, m.alpha) - fp - self.b

    def welfare(self, x: np.ndarray) -> float:
        m = self.m
        f = np.where(x < 0.0, self.slope0 * x, utilities.value(m.utility, m.a, np.maximum(x, 0.0)))
        cost = prices.price_integral(m.usage, m.usage + x, m.capacity, m.iota, m.upsilon, m.alpha)
        return float(np.sum(cost - f - self.b * x))

    def lagrangian(self, x: np.ndarray, mu: float, y: np.ndarray, z: np.ndarray, s: float) -> float:
        m = self.m
        pen = (max(mu / s + x.sum() - m.rho, 0.0) ** 2 - (mu / s) ** 2
               + np.sum(np.maximum(y / s + x - m.xbar, 0.0) ** 2 - (y / s) ** 2)
               + np.sum(np.maximum(z / s - x, 0.0) ** 2 - (z / s) ** 2))
        return self.welfare(x) + 0.5 * s * float(pen)

    def gradient(self, x: np.ndarray, mu: float, y: np.ndarray, z: np.ndarray, s: float) -> np.ndarray:
        m = self.m
        return (self.welfare_grad(x) + s * max(mu / s + x.sum() - m.rho, 0.0)
                + s * np.maximum(y / s + x - m.xbar, 0.0) - s * np.maximum(z / s - x, 0.0))

    def projected_norm(self, x: np.ndarray, grad: np.ndarray) -> float:
        """|| x - P(x - grad) ||: the gradient norm on the domain x <= C - w, computed on the
        vector divided by its largest entry (squares of entries past 1e154 overflowed, with a
        warning, under penalties the option fuzz draws)."""
        v = np.abs(x - np.minimum(x - grad, self.top))
        top = float(v.max(initial=0.0))
        if not 0.0 < top < math.inf:
            return top
        return top * math.sqrt(float(np.sum((v / top) ** 2)))

    def violation(self, x: np.ndarray, mu: float, y: np.ndarray, z: np.ndarray, s: float) -> float:
        """(25), with absolute values of its terms."""
        m = self.m
        return (abs(max(x.sum() - m.rho, -mu / s))
                + float(np.abs(np.maximum(x - m.xbar, -y / s)).sum())
                + float(np.abs(np.maximum(-x, -z / s)).sum()))


def _minimize(prog: _Program, x: np.ndarray, mu: float, y: np.ndarray, z: np.ndarray, s: float,
              tol: float, lr: float, decay: float, max_inner: int,
              deadline: float = math.inf) -> tuple[np.ndarray, float, int]:
    """Step 6: projected gradient descent on L_sigma until the projected gradient norm is
    <= tol. The first step is ``lr``; later steps are Barzilai-Borwein lengths
    <dx, dx> / <dx, dgrad>; a step is accepted when L does not exceed the largest of its
    last ``MEMORY`` values (non-monotone line search) and is otherwise multiplied by ``decay``."""
    value = prog.lagrangian(x, mu, y, z, s)
    history = [value]
    grad = prog.gradient(x, mu, y, z, s)
    norm = prog.projected_norm(x, grad)
    steps = 0
    while norm > tol and steps < max_inner:
        if steps % DEADLINE_EVERY == 0 and time.perf_counter() > deadline:
            break
        steps += 1
        trial = np.minimum(x - lr * grad, prog.top)
        trial_value = prog.lagrangian(trial, mu, y, z, s)
        if trial_value <= max(history[-MEMORY:]):
            trial_grad = prog.gradient(trial, mu, y, z, s)
            dx, dg = trial - x, trial_grad - grad
            curv = float(dx @ dg)
            lr = float(np.clip(float(dx @ dx) / curv, 1e-12, 1e12)) if curv > 0 else lr / decay
            x, value, grad = trial, trial_value, trial_grad
            history.append(value)
            norm = prog.projected_norm(x, grad)
        else:
            lr *= decay
            if lr < 1e-300:
                break
    return x, norm, steps


def alm_solve(model: PseudoWelfare, *, sigma0: float, theta1: float, theta2: float, p: float,
              eta: float, epsilon: float, learning_rate: float, decay: float,
              max_outer: int, max_inner: int, floor_tolerances: bool = False,
              deadline: float = math.inf) -> ALMSolution:
    """Algorithm 2 on one P3 instance (step numbers in the comments). Past ``deadline``
    (a ``time.perf_counter`` value) it stops with the current iterate, projected."""
    floor_eta, floor_eps = (eta, epsilon) if floor_tolerances else (0.0, 0.0)
    prog = _Program(model)
    n = model.n_units
    x = np.zeros(n)  # 1
    mu, y, z = 0.0, np.zeros(n), np.zeros(n)
    s = sigma0  # 2
    eta_k, eps_k = max(1.0 / s, floor_eta), max(1.0 / s**theta1, floor_eps)  # 3
    inner_total = inner_limit_hits = 0
    norm, v, converged = np.inf, np.inf, False
    outer, timed_out = 0, False
    for outer in range(1, max_outer + 1):  # 5
        if time.perf_counter() > deadline:
            timed_out = True
            break
        x, norm, steps = _minimize(prog, x, mu, y, z, s, eta_k, learning_rate, decay, max_inner, deadline)  # 6
        inner_total += steps
        inner_limit_hits += steps == max_inner and norm > eta_k
        v = prog.violation(x, mu, y, z, s)  # 7
        if not np.isfinite(v):
            break
        if v <= eps_k:  # 8
            if norm <= eta and v <= epsilon:  # 9-10
                converged = True
                break  # 11
            mu = max(mu + s * (x.sum() - model.rho), 0.0)  # 13
            y = np.maximum(y + s * (x - model.xbar), 0.0)  # 15
            z = np.maximum(z - s * x, 0.0)  # 16
            eta_k, eps_k = max(eta_k / s, floor_eta), max(eps_k / s**theta2, floor_eps)  # 18-19 (sigma unchanged)
        else:
            s = p * s  # 23 (duals unchanged, 22)
            eta_k, eps_k = max(1.0 / s, floor_eta), max(1.0 / s**theta1, floor_eps)  # 24
    feasible = project_feasible(x, model.upper, model.rho) if np.isfinite(x).all() else x
    return ALMSolution(feasible, x, outer, inner_total, float(v), float(norm), converged, inner_limit_hits, timed_out)


@register_backend
class PseudoWelfareALMBackend(Backend):
    NAME = "alm"
    DESCRIPTION = "Algorithm 2 of paper 002 (augmented Lagrangian, Table II defaults); approximate"
    EXACT = False
    MODELS = frozenset({PseudoWelfare.name})
    PRIORITY = 10
    SUPPORTS_TIME_LIMIT = True
    OPTIONS: Mapping[str, Option] = {
        "sigma0": Option(TABLE_II["sigma0"], float, "initial penalty sigma_0", minimum=0.0, open_minimum=True),
        "theta1": Option(TABLE_II["theta1"], float, "exponent theta_1 of step 8", minimum=0.0, maximum=1.0,
                         open_minimum=True),
        "theta2": Option(TABLE_II["theta2"], float, "exponent theta_2 of step 8", minimum=0.0, maximum=1.0,
                         open_minimum=True),
        "p": Option(TABLE_II["p"], float, "penalty growth factor p of (23)", minimum=1.0, open_minimum=True),
        "eta": Option(TABLE_II["eta"], float, "final inner tolerance eta", minimum=0.0, open_minimum=True),
        "epsilon": Option(TABLE_II["epsilon"], float, "final violation tolerance epsilon", minimum=0.0,
                          open_minimum=True),
        "learning_rate": Option(TABLE_II["learning_rate"], float, "first step of each inner descent", minimum=0.0,
                                open_minimum=True),
        "decay": Option(TABLE_II["decay"], float, "backtracking factor of the inner descent", minimum=0.0,
                        maximum=1.0 - 1e-12, open_minimum=True),
        "max_outer": Option(200, int, "outer iterations before stopping (not in the paper)", minimum=1),
        "max_inner": Option(2000, int, "inner descent steps per outer iteration", minimum=1),
        "floor_tolerances": Option(False, bool, "keep eta_k, eps_k at or above the final eta, epsilon "
                                   "(not in the paper)"),
    }

    def check_option_values(self, options: Mapping[str, Any]) -> None:
        if not options["theta1"] <= options["theta2"]:
            raise ValueError("options: backend 'alm' needs theta1 <= theta2")

    def run(self, model: Model, *, time_limit: float | None, options: Mapping[str, Any], state: Any = None) -> Result:
        assert isinstance(model, PseudoWelfare)
        deadline = math.inf if time_limit is None else time.perf_counter() + time_limit
        # penalties the options allow (sigma0 = 1e2, p = 100, ...) overflow the Lagrangian to inf:
        # alm_solve stops on a non-finite violation, and diverged iterates are an error below
        with np.errstate(over="ignore", invalid="ignore"):
            sol = alm_solve(model, **{k: options[k] for k in self.OPTIONS}, deadline=deadline)
        extra = {"outer": sol.outer, "inner": sol.inner, "violation": sol.violation,
                 "grad_norm": sol.grad_norm, "converged": sol.converged, "inner_limit_hits": sol.inner_limit_hits,
                 "raw_max_infeasibility": float(np.max(np.abs(sol.raw_x - sol.x))) if np.isfinite(sol.raw_x).all() else np.inf}
        if not np.isfinite(sol.x).all():
            return Result(Termination.ERROR, iterations=sol.outer, extra={**extra, "message": "the iterates diverged"})
        if sol.timed_out:
            termination = Termination.TIME_LIMIT
        elif not sol.converged:
            termination = Termination.ITERATION_LIMIT  # max_outer reached before the stopping test of step 19
        else:
            termination = Termination.FEASIBLE
        return Result(termination, solution=sol.x, iterations=sol.outer, extra=extra)
