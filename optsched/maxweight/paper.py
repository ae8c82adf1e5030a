"""Paper 004 as an optsched plugin: max-weight scheduling of stochastic real-time jobs on
unreliable workers (Section IV, Figs. 3-5)."""

from __future__ import annotations

from optsched.maxweight import experiments
from optsched.maxweight.claims import maxweight_claims
from optsched.papers import Paper, ReproductionRun, SweepSummary

REDUCED = {"frames": 5000}  # the paper's 10,000 frames

PAPER = Paper(
    name="maxweight",
    title="Paper 004: Scheduling Stochastic Real-Time Jobs in Unreliable Workers (Section IV, Figs. 3-5)",
    description="paper 004: max-weight scheduling regions (Fig. 3, 4), symmetric requirement vs N (Fig. 5)",
    config=experiments.MaxWeightConfig,
    run=experiments.run,
    presets=experiments.PRESETS,
    subproblems=("set_packing_batch",),
    bench_capture={"settings": {"study": "fig3", "frames": 300, "grid_step": 0.05}, "every": 100},
    policies=tuple(experiments.POLICIES),
    sweep=SweepSummary(metrics=experiments.sweep_metrics, prepare=experiments.sweep_prepare,
                       unused=experiments.SWEEP_UNUSED, warm={"frames": 20}),
    runs=(
        ReproductionRun(preset="fig3", reduced=REDUCED, shadow=("highs", "cpsat"), shadow_every=200),
        ReproductionRun(preset="fig4", reduced=REDUCED),
        ReproductionRun(preset="fig5", reduced={"frames": 3000, "fig5_r_step": 0.01}),
    ),
    claims=maxweight_claims,
)
