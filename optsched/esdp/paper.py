"""Paper 000 as an optsched plugin: ESDP, learning to dispatch multi-server jobs in bipartite
graphs with unknown service rates (Section 4)."""

from __future__ import annotations

from optsched.esdp import experiments
from optsched.esdp.claims import esdp_claims
from optsched.papers import REPEATS_INSIDE, Paper, ReproductionRun, SweepSummary

# every run replicates inside itself: ``repeats`` instances x sample paths (the paper's T is 2000)
REDUCED = {"horizon": 1000, "repeats": 5}
FULL = {"repeats": 10}

PAPER = Paper(
    name="esdp",
    title="Paper 000: Learning to Dispatch Multi-Server Jobs in Bipartite Graphs with Unknown Service Rates (ESDP)",
    description="Paper 000 (ESDP): ASW, ratios, regret vs baselines and oracle; overhead; sensitivity",
    config=experiments.EsdpConfig,
    run=experiments.run,
    presets=experiments.PRESETS,
    subproblems=("escb_index", "budgeted_ip"),
    bench_capture={"settings": {"horizon": 60, "policies": ["ESDP"]}, "every": 6},
    policies=tuple(experiments.POLICIES),
    sweep=SweepSummary(metrics=experiments.sweep_metrics, default_policies=lambda cfg: tuple(cfg.policies),
                       unused=experiments.SWEEP_UNUSED, warm={"horizon": 4}),
    runs=(
        ReproductionRun(preset="fig2-4", reduced=REDUCED, settings=FULL, shadow=("escb_oa", "dp"), shadow_every=50,
                        **REPEATS_INSIDE),
        ReproductionRun(preset="exact-index", reduced={**REDUCED, "horizon": 300}, settings=FULL, **REPEATS_INSIDE),
        ReproductionRun(preset="fig5", reduced={**REDUCED, "horizon": 100}, settings=FULL, **REPEATS_INSIDE),
        *(ReproductionRun(preset=f"fig{k}", reduced=REDUCED, settings=FULL, **REPEATS_INSIDE) for k in range(6, 11)),
    ),
    claims=esdp_claims,
)
