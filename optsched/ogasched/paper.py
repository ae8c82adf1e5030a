"""Paper 003 as an optsched plugin: OGASched, scheduling multi-server jobs with sublinear
regrets via online learning (Section IV)."""

from __future__ import annotations

from optsched.ogasched import experiments
from optsched.ogasched.baselines import BASELINES
from optsched.ogasched.claims import ogasched_claims, ogasched_tables
from optsched.papers import Paper, ReproductionRun, SweepSummary

FIG2_REDUCED = {"horizon": 1000, "regret_points": 2}

PAPER = Paper(
    name="ogasched",
    title="Paper 003: Scheduling Multi-Server Jobs With Sublinear Regrets via Online Learning (OGASched)",
    description="OGASched (paper 003) vs DRF/FAIRNESS/BINPACKING/SPREADING: rewards, regret, scale, utilities",
    config=experiments.OgaConfig,
    run=experiments.run,
    presets=experiments.PRESETS,
    subproblems=("capacity_projection",),
    bench_capture={"settings": {"horizon": 100, "offline": False}, "every": 20},
    policies=("OGASched", *BASELINES),
    sweep=SweepSummary(metrics=experiments.sweep_metrics, unused=experiments.SWEEP_UNUSED, warm={"horizon": 4}),
    runs=(
        ReproductionRun(preset="fig2", reduced=FIG2_REDUCED, shadow=("highs", "cvxpy"), shadow_every=250),
        ReproductionRun(preset="fig2", reduced=FIG2_REDUCED, settings={"backend": "paper"}, label="fig2-paper"),
        ReproductionRun(preset="fig2", reduced=FIG2_REDUCED, settings={"backend": "paper", "options": {"repair": True}},
                        label="fig2-paper-repair"),
        ReproductionRun(preset="fig2", reduced=FIG2_REDUCED, settings={"source": "alibaba"}, label="fig2-alibaba",
                        data=("trace_dir", "alibaba")),
        ReproductionRun(preset="fig3", reduced={"horizon": 500, "fig3_nodes": [64, 128, 256, 512]}),
        ReproductionRun(preset="fig7", reduced={"horizon": 1000}),
        ReproductionRun(preset="table3", reduced={"horizon": 1000, "table3_horizons": [500, 1000, 2000]}),
    ),
    claims=ogasched_claims,
    tables=ogasched_tables,
)
