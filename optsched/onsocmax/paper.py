"""Paper 002 as an optsched plugin: ONSOCMAX, online workload dispatching for deadline-aware
multi-server jobs with a competitive guarantee (Section IV, Theorem 2)."""

from __future__ import annotations

from optsched.onsocmax import experiments
from optsched.onsocmax.claims import onsocmax_claims
from optsched.papers import REPEATS_INSIDE, Paper, ReproductionRun, SweepSummary

PAPER = Paper(
    name="onsocmax",
    title="Paper 002: Theoretically Guaranteed Online Workload Dispatching for Deadline-Aware Multi-Server Jobs (ONSOCMAX)",
    description="paper 002: welfare of ONSOCMAX / MAX-FIRST / EQUAL-SHARE vs offline OPT (Figs. 4-6); OPT/online vs alpha-hat",
    config=experiments.OnsocmaxConfig,
    run=experiments.run,
    presets=experiments.PRESETS,
    subproblems=("pseudo_welfare", "pseudo_welfare_integral"),
    bench_capture={"settings": {"values": [4.0], "repeats": 1}, "every": 6},
    policies=tuple(experiments.POLICIES),
    sweep=SweepSummary(metrics=experiments.sweep_metrics, check=experiments.sweep_check,
                       unused=experiments.SWEEP_UNUSED, warm={"n_jobs": 4}),
    runs=(
        ReproductionRun(preset="fig4", reduced={"values": [1.0, 2.0, 4.0, 8.0], "repeats": 8}, shadow=("cvxpy", "alm"),
                        shadow_every=20, **REPEATS_INSIDE),
        ReproductionRun(preset="fig4", reduced={"values": [2.0, 8.0], "repeats": 5},
                        settings={"backend": "alm", "values": [1.0, 2.0, 4.0, 8.0], "repeats": 10}, label="fig4-alm",
                        **REPEATS_INSIDE),
        ReproductionRun(preset="fig5", reduced={"values": [10.0, 18.0, 30.0], "repeats": 8}, **REPEATS_INSIDE),
        ReproductionRun(preset="fig6", reduced={"values": [1.0, 2.0, 4.0, 12.0], "repeats": 8}, **REPEATS_INSIDE),
        ReproductionRun(preset="ratio", reduced={"instances": 150}, replicate=False),
        ReproductionRun(preset="ratio_small", reduced={"instances": 400}, replicate=False),
    ),
    claims=onsocmax_claims,
)
