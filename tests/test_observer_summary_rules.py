"""The Observer's summaries on synthetic rows with numbers worked out by hand (``shadow_summary``,
``merge_stats``), its count of skipped shadow subproblems, and its refusal of a shadow backend
named twice (mutants BC70, BC71, BC73, BC77, BC78)."""

from __future__ import annotations

import numpy as np
import pytest

from optsched.observe import Observer, merge_stats, shadow_summary
from optsched.ogasched.env import SchedulingEnv
from optsched.ogasched.scenario import synthetic_scenario
from optsched.policy import evaluate


def _row(call: int, backend: str, role: str, gap: float | None, t: float, term: str = "optimal") -> dict:
    return {"episode": 0, "policy": "OGASched", "solver": "OGASched", "slot": call, "call": call,
            "model": "capacity_projection", "size": 10, "backend": backend, "role": role, "termination": term,
            "gap_to_best_bound": gap, "runtime_s": t}


ROWS = [_row(0, "fast", "policy", 0.0, 1.0), _row(1, "fast", "policy", 0.0, 1.0),
        _row(2, "fast", "policy", None, 1.0, "error"),
        _row(0, "highs", "shadow", 0.0, 2.0), _row(1, "highs", "shadow", 0.0, 4.0),
        _row(2, "highs", "shadow", 0.9, 100.0)]


def _shadow_entry() -> dict:
    (entry,) = [s for s in shadow_summary(ROWS) if s["role"] == "shadow"]
    return entry


def test_the_shadow_summary_gives_the_median_and_the_largest_gap() -> None:
    """Rule (shadow_summary's docstring: "median and largest gap to the best bound"): gaps 0, 0,
    0.9 have median 0 and largest 0.9 (mutant BC70 took the mean, 0.3)."""
    entry = _shadow_entry()
    assert entry["median_gap_to_best_bound"] == 0.0
    assert entry["max_gap_to_best_bound"] == pytest.approx(0.9)


def test_a_shadows_runtime_ratio_is_taken_on_the_subproblems_both_timed() -> None:
    """Rule (shadow_summary's docstring, docs/solvers.md: "a shadow's runtime ratio is taken on
    the subproblems both it and the policy's backend solved so"): the policy's call 2 is an error
    (not timed), so the ratio is median(2, 4) / median(1, 1) = 3, while the shadow's own median
    runtime is over its three timed solves, median(2, 4, 100) = 4 (mutant BC71 divided that
    median over every solve: 4.0)."""
    entry = _shadow_entry()
    assert entry["runtime_vs_policy_backend"] == pytest.approx(3.0)
    assert entry["median_runtime_s"] == pytest.approx(4.0)
    assert entry["timed"] == 3 and entry["subproblems"] == 3


def test_merge_stats_counts_the_policy_objects_it_merged() -> None:
    """Rule (merge_stats' docstring: "Solver statistics summed over the policy objects of one
    (solver, model, backend)"): three policy objects give ``policies`` 3 and the sums of their
    counts (mutant BC77 left ``policies`` at 1)."""
    st = {"solver": "OGASched", "model": "capacity_projection", "backend": "fast", "solves": 10, "fallbacks": 1,
          "runtime_s": 0.1, "setup_s": 0.5, "terminations": {"optimal": 9, "feasible": 1}}
    (m,) = merge_stats([st, st, st])
    assert m["policies"] == 3
    assert (m["solves"], m["fallbacks"]) == (30, 3)
    assert m["runtime_s"] == pytest.approx(0.3) and m["setup_s"] == pytest.approx(1.5)
    assert m["terminations"] == {"optimal": 27, "feasible": 3}


def _oga_env(horizon: int) -> SchedulingEnv:
    return SchedulingEnv(synthetic_scenario(np.random.default_rng(0), n_ports=4, n_nodes=10, n_resources=2),
                         horizon=horizon)


def test_a_shadow_that_does_not_fit_counts_each_subproblem_it_skipped() -> None:
    """Rule (Observer: every ``shadow_every``-th subproblem is solved by each shadow backend "that
    fits it"; the summary's ``shadow_skipped`` counts, per backend and kind, the subproblems
    skipped, with the first reason). Greedy does not solve OGASched's capacity projection: with
    6 slots and ``shadow_every`` 2, calls 0, 2, 4 are shadowed, so 3 are skipped (mutant BC73
    never counted: 0)."""
    from optsched.ogasched.policy import OGASched

    with Observer(shadow=("greedy",), shadow_every=2) as observer:
        evaluate(_oga_env(6), OGASched(), 6, seed=0)
    skipped = observer.summary()["shadow_skipped"]
    assert list(skipped) == ["greedy on capacity_projection"]
    assert skipped["greedy on capacity_projection"]["subproblems"] == 3
    assert skipped["greedy on capacity_projection"]["first_reason"]
    assert all(r["role"] == "policy" for r in observer.rows) and len(observer.rows) == 3


def test_a_shadow_backend_named_twice_is_refused() -> None:
    """Rule (Observer / docs/solvers.md: one row per (subproblem, backend)): a backend named twice
    in ``shadow`` would give two rows for one pair, so it is refused up front (mutant BC78
    accepted it: 2 highs rows per shadowed subproblem)."""
    with pytest.raises(ValueError, match="named twice"):
        Observer(shadow=("highs", "highs"))
