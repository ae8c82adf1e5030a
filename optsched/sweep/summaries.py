"""Per-run summaries of the four papers' experiments: one row of metrics per (config, policy).

Each summary reuses its experiment module's own instance builders, policies and evaluator
calls (so a sweep run and ``optsched run`` agree on the randomness of a seed) and returns
plain numbers. Every summary returns the same metric names for every policy of its
experiment (NaN where a metric does not apply).

========== ================================== ==========================================================
experiment policies                           metrics
========== ================================== ==========================================================
maxweight  ``Alg. 1 (exact)``,                ``min_rate``, ``mean_rate`` (completed-job rates at
           ``Alg. 2 (greedy)``                ``requirement``), ``achieved``, ``max_symmetric_r`` (largest
                                              achieved symmetric r on the ``fig5_r_step`` grid; same
                                              sample path). Network: ``JobNetwork.uniform(n_apps,
                                              n_workers, task_prob, completion_prob)``; ``requirement``
                                              defaults to 0.25 per application.
ogasched   ``OGASched``, ``DRF``, ``FAIRNESS``, ``cumulative_reward``, ``average_reward``, ``average_gain``,
           ``BINPACKING``, ``SPREADING``      ``average_overhead``, ``regret`` (Q(y*_T) - Q(policy), with
                                              ``offline = true``, else NaN)
esdp       ``ESDP``, ``ESDP-exact``, ``HSWF``, ``asw`` (sum of welfare), ``average_welfare``, ``regret``
           ``LCF``, ``LWTF``, ``Oracle``      (against the oracle, (5)), ``n_edges``; instance
                                              ``repeat = 0`` of the seed; default policies: the config's
                                              ``policies``
onsocmax   ``ONSOCMAX``, ``MAX-FIRST``,       ``welfare``, ``opt``, ``opt_bound``, ``ratio`` (opt / welfare),
           ``EQUAL-SHARE``                    ``alpha_hat``, ``demand_ratio``. ``study = "ratio"``: instance 0
                                              of ``family``; ``study = "sweep"``: the Section IV instance
                                              of the one ``kinds`` entry at the one ``values`` entry of
                                              ``sweep`` (grid over ``kinds`` / ``values``)
========== ================================== ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

Metrics = dict[str, Any]


@dataclass(frozen=True)
class Summary:
    """How a sweep runs one policy of an experiment on one config."""

    policies: tuple[str, ...]
    run: Callable[[Any, str], Metrics]
    prepare: Callable[[dict[str, Any]], dict[str, Any]] = lambda settings: settings
    default_policies: Callable[[Any], tuple[str, ...]] | None = None

    def policies_for(self, cfg: Any) -> tuple[str, ...]:
        return self.default_policies(cfg) if self.default_policies is not None else self.policies


# --- paper 004: max-weight scheduling ------------------------------------------------------------
def _maxweight_prepare(settings: dict[str, Any]) -> dict[str, Any]:
    if "requirement" not in settings:
        settings = {**settings, "requirement": [0.25] * int(settings.get("n_apps", 2))}
    return settings


def maxweight_summary(cfg: Any, policy: str) -> Metrics:
    from optsched.maxweight.experiments import achieved_rates
    from optsched.maxweight.network import JobNetwork

    net = JobNetwork.uniform(cfg.n_apps, cfg.n_workers, cfg.task_prob, cfg.completion_prob)
    r_grid = np.round(np.arange(0.0, 1.0 + 1e-9, cfg.fig5_r_step), 10)
    reqs = np.vstack([np.asarray(cfg.requirement)[None, :], np.repeat(r_grid[:, None], cfg.n_apps, axis=1)])
    rate = achieved_rates(net, reqs, policy, cfg)
    ok = (rate >= reqs - cfg.tolerance).all(axis=1)
    sym = r_grid[ok[1:]]
    return {"min_rate": float(rate[0].min()), "mean_rate": float(rate[0].mean()), "achieved": bool(ok[0]),
            "max_symmetric_r": float(sym.max()) if sym.size else 0.0}


# --- paper 003: OGASched ---------------------------------------------------------------------------
def ogasched_summary(cfg: Any, policy: str) -> Metrics:
    from optsched.ogasched.experiments import build_env, policies
    from optsched.policy import evaluate

    env = build_env(cfg, cfg.seed)
    (pol,) = [p for p in policies(cfg) if p.name == policy]
    rec = evaluate(env, pol, cfg.horizon, seed=cfg.seed + 1)  # the seeds of experiments.run_all
    regret = float("nan")
    if cfg.offline:
        from optsched.ogasched.offline import regret_curve

        regret = float(regret_curve(env.scenario, env.arrivals, rec["reward"], np.array([cfg.horizon]))[0]["regret"])
    return {"cumulative_reward": float(rec["reward"].sum()), "average_reward": float(rec["reward"].mean()),
            "average_gain": float(rec["gain"].mean()), "average_overhead": float(rec["overhead"].mean()),
            "regret": regret}


# --- paper 000: ESDP ---------------------------------------------------------------------------------
def esdp_summary(cfg: Any, policy: str) -> Metrics:
    from optsched.esdp.experiments import run_policies

    rec = run_policies(cfg, 0, (policy,))[policy]
    return {"asw": float(rec["welfare"].sum()), "average_welfare": float(rec["welfare"].mean()),
            "regret": float((rec["oracle_welfare"] - rec["expected_welfare"]).sum()), "n_edges": int(rec["n_edges"])}


# --- paper 002: ONSOCMAX -------------------------------------------------------------------------------
def onsocmax_summary(cfg: Any, policy: str) -> Metrics:
    from optsched.onsocmax import experiments as ex
    from optsched.onsocmax.offline import certified_optimum
    from optsched.onsocmax.policy import run_online
    from optsched.models.prices import alpha_hat

    if cfg.study == "ratio":
        inst = ex.FAMILIES[cfg.family](cfg, 0)
    else:
        if len(cfg.kinds) != 1 or len(cfg.values) != 1:
            raise ValueError("config.values: a sweep run of study 'sweep' draws one instance: give one 'kinds' "
                             "and one 'values' entry (grid over them)")
        gen = ex._generator(cfg, cfg.kinds[0], **ex.SWEEPS[cfg.sweep](cfg.values[0]))
        inst = gen.draw(np.random.default_rng([cfg.seed, 0]))  # repeat j = 0 of sweep_rows
    cert = certified_optimum(inst)
    welfare, _ = run_online(inst, ex.POLICIES[policy](cfg))
    iota, upsilon = inst.marginal_bounds()
    return {"welfare": float(welfare), "opt": float(cert.primal), "opt_bound": float(cert.bound),
            "ratio": ex._ratio(cert.primal, welfare), "alpha_hat": float(alpha_hat(upsilon / iota)),
            "demand_ratio": ex._demand_ratio(inst)}


def _maxweight() -> Summary:
    from optsched.maxweight.experiments import POLICIES

    return Summary(tuple(POLICIES), maxweight_summary, _maxweight_prepare)


def _ogasched() -> Summary:
    from optsched.ogasched.baselines import BASELINES

    return Summary(("OGASched", *BASELINES), ogasched_summary)


def _esdp() -> Summary:
    from optsched.esdp.experiments import POLICIES

    return Summary(tuple(POLICIES), esdp_summary, default_policies=lambda cfg: tuple(cfg.policies))


def _onsocmax() -> Summary:
    from optsched.onsocmax.experiments import POLICIES

    return Summary(tuple(POLICIES), onsocmax_summary)


SUMMARIES: dict[str, Callable[[], Summary]] = {
    "maxweight": _maxweight, "ogasched": _ogasched, "esdp": _esdp, "onsocmax": _onsocmax,
}


def get_summary(experiment: str) -> Summary:
    if experiment not in SUMMARIES:
        raise ValueError(f"sweep.experiment: no sweep summary for {experiment!r} (known: {', '.join(SUMMARIES)})")
    return SUMMARIES[experiment]()
