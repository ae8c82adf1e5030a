"""Measured competitive ratios OPT / online against alpha-hat (Theorem 2), and the two
documented instances where the measured ratio exceeds alpha-hat (see docs/onsocmax.md)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import optsched
from optsched.models.pseudo_welfare import PseudoWelfare, PseudoWelfareIntegral
from optsched.models.mesh import MeshInstance
from optsched.models.mesh import MeshGenerator
from optsched.onsocmax.experiments import FAMILIES, OnsocmaxConfig, ratio_record, small_instance
from optsched.models.onsocmax_offline import OfflineWelfareIntegral
from optsched.onsocmax.offline import certified_optimum
from optsched.onsocmax.policy import Onsocmax, run_online
from optsched.models.prices import alpha_hat
from optsched.models.utilities import KINDS


@settings(max_examples=40)
@given(st.integers(0, 10_000), st.sampled_from(KINDS), st.floats(1.0, 10.0), st.floats(1.0, 8.0))
def test_ratio_within_alpha_hat_on_section_iv_instances(seed: int, kind: str, congestion: float, a_high: float) -> None:
    gen = MeshGenerator(kind=kind, n_nodes=5, n_slots=12, n_jobs=14, a_high=a_high,
                        capacity_mean=20 / congestion, capacity_std=2 / congestion)
    rec = ratio_record(gen.draw(np.random.default_rng(seed)))
    assert rec["opt_bound"] - rec["opt"] <= 1e-6 * rec["opt"]  # OPT is pinned down
    assert 1.0 - 1e-9 <= rec["ratio"] <= rec["alpha_hat"]


@settings(max_examples=150)
@given(st.integers(0, 100_000))
def test_ratio_within_alpha_hat_on_adversarial_small_instances(seed: int) -> None:
    rec = ratio_record(small_instance(seed))
    assert rec["ratio"] <= rec["alpha_hat"]


def _p3_models(inst: MeshInstance, X: np.ndarray, integral: bool) -> list[tuple[PseudoWelfare, np.ndarray]]:
    """P3 of every job at the usage level it saw online (jobs in arrival order, (11)), each with
    the decision the policy took for it (its units' row of X)."""
    iota, upsilon = inst.marginal_bounds()
    kind = PseudoWelfareIntegral if integral else PseudoWelfare
    usage = np.zeros(inst.n_units)
    out = []
    for n in np.lexsort((np.arange(inst.n_jobs), inst.arrival)):
        s, u = inst.job_pairs(n), inst.units[n]
        out.append((kind(utility=[KINDS[k] for k in inst.pair_kind[s]], a=inst.a[s], beta=inst.beta[s],
                        capacity=inst.capacity.reshape(-1)[u], xbar=inst.xbar[s], rho=float(inst.rho[n]),
                        usage=usage[u], iota=iota, upsilon=upsilon), X[n, u]))
        usage += X[n]
    return out


# Found by a search over small meshes like small_instance with the tie rule off.
TIE_CASE = MeshInstance(
    capacity=[[8.893500789443546, 4.26861614438747]], tau=1.0, arrival=[0.0, 1.0], deadline=[1.0, 1.0],
    rho=[26.047253345119923, 9.374825164954512], nodes=[[0], [0]], kind=["linear", "linear"],
    xbar=[10.293196390144699, 14.827851845959934, 17.313022203320138],
    a=[0.7417729976935376, 0.7417729976935376, 0.8636987013682947],
    beta=[0.24526587670842342, 0.22131773965201978, 0.18332034630834582],
)


def test_documented_case_exact_p3_optimum_breaks_theorem_2() -> None:
    """Job 0's unit (0, 0) has marginal welfare exactly iota, so P3 is flat there and x = 0 is
    an exact optimum; taking it leaves the unit idle and OPT / online = 3.115 > alpha-hat = 2.154."""
    inst = TIE_CASE
    iota, upsilon = inst.marginal_bounds()
    ah = alpha_hat(upsilon / iota)
    assert ah == pytest.approx(2.1540287042961554, rel=1e-12)
    clarabel, scs = certified_optimum(inst), certified_optimum(inst, solver="SCS")
    assert clarabel.gap <= 1e-9 and scs.primal == pytest.approx(clarabel.primal, rel=1e-6)
    plain, X = run_online(inst, Onsocmax(serve_ties=False))
    assert clarabel.primal / plain == pytest.approx(3.1147402244336813, rel=1e-9)
    assert clarabel.primal / plain > ah
    # both exact P3 solvers agree on every job's P3 value, and the online answer reaches it
    for model, decision in _p3_models(inst, X, integral=False):
        kkt, cvx = optsched.solve(model, "kkt"), optsched.solve(model, "cvxpy")
        assert kkt.termination is cvx.termination is optsched.Termination.OPTIMAL
        assert kkt.objective == pytest.approx(cvx.objective, rel=1e-6, abs=1e-9)
        assert model.violations(decision) == []
        assert model.objective(decision) == pytest.approx(kkt.objective, rel=1e-9, abs=1e-9)
    # the largest optimal P3 solution (the tie rule) restores the bound
    served, _ = run_online(inst, Onsocmax())
    assert clarabel.primal / served == pytest.approx(1.1434755274170112, rel=1e-9)


INTEGRAL_CASE = MeshInstance(
    capacity=[[20.0], [20.0]], tau=1.0, arrival=[0.0, 0.0, 0.0], deadline=[0.5, 0.5, 0.5], rho=[1.0, 12.0, 12.0],
    nodes=[[1], [0], [0]], kind=["linear"] * 3, xbar=[1.0, 12.0, 12.0], a=[0.1, 1.0, 20.0], beta=[0.0, 0.0, 0.0],
)


def test_documented_case_integral_variant_breaks_theorem_2() -> None:
    """Section III-D claims the same ratio for non-partitionable jobs. A cheap job (a = 1)
    fits under the price and takes 12 of C = 20; the valuable one (a = 20) no longer fits."""
    inst = INTEGRAL_CASE
    iota, upsilon = inst.marginal_bounds()
    ah = alpha_hat(upsilon / iota)
    assert ah == pytest.approx(6.638201335050523, rel=1e-12)
    online, X = run_online(inst, Onsocmax(backend="highs", integral=True, serve_ties=False))
    model = OfflineWelfareIntegral(inst)
    milp, brute = optsched.solve(model, "highs"), optsched.solve(model, "brute_force")
    assert milp.termination is optsched.Termination.OPTIMAL and brute.termination is optsched.Termination.OPTIMAL
    assert milp.objective == pytest.approx(brute.objective, rel=1e-12) == pytest.approx(240.1)
    assert online == pytest.approx(12.0)
    assert milp.objective / online == pytest.approx(20.008333333333333, rel=1e-12)
    assert milp.objective / online > ah
    for p3, decision in _p3_models(inst, X, integral=True):  # the online answer is each job's P3 optimum
        a, b = optsched.solve(p3, "highs"), optsched.solve(p3, "brute_force")
        assert a.termination is b.termination is optsched.Termination.OPTIMAL
        assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-12)
        assert p3.violations(decision) == []
        assert p3.objective(decision) == pytest.approx(b.objective, rel=1e-9, abs=1e-12)
    assert run_online(inst, Onsocmax(backend="brute_force", integral=True, serve_ties=False))[0] == pytest.approx(online)


@pytest.mark.slow
def test_ratio_within_alpha_hat_at_paper_scale() -> None:
    """300 full-size Section IV instances (10 nodes, 24 slots, 20 jobs) as in the ratio preset."""
    cfg = OnsocmaxConfig()
    for i in range(300):
        rec = ratio_record(FAMILIES["section_iv"](cfg, i))
        assert rec["opt_bound"] - rec["opt"] <= 1e-6 * rec["opt"]
        assert rec["ratio"] <= rec["alpha_hat"], (i, rec)


@pytest.mark.slow
def test_ratio_within_alpha_hat_on_many_small_instances() -> None:
    for seed in range(3000):
        rec = ratio_record(small_instance(seed))
        assert rec["ratio"] <= rec["alpha_hat"], (seed, rec)
