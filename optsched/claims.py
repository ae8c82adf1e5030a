"""What a reproduction concludes: a :class:`Claim` per result (measured number, the paper's
statement, why they differ), and the helpers the papers' claims share: reading a run's CSVs and
metadata back, percentages, the in-loop heuristic-vs-exact rows of shadowed runs, and the mean
with its 95 % Student-t interval."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Claim:
    """One line of a report: a result, the measured number, the paper's, and why they differ."""

    result: str
    measured: str
    paper: str
    note: str


def read_csv(path: Path) -> "pd.DataFrame":
    import pandas as pd

    return pd.read_csv(path)


def pct(x: float) -> str:
    return f"{100 * x:+.1f}%"


def run_subproblems(d: Path, run_dir: str) -> dict[str, Any]:
    """The subproblem summary a run's metadata JSON carries (solvers, shadow, fallbacks)."""
    import json

    metas = sorted((d / run_dir).glob("*.json"))
    return json.loads(metas[-1].read_text()).get("subproblems", {}) if metas else {}


def _gap(x: float | None) -> str:
    return "-" if x is None else ("0" if x == 0 else f"{x:.1e}")


def shadow_claims(d: Path, run_dir: str, what: str) -> list[Claim]:
    """In-loop heuristic vs exact: per policy solver, every backend's gap to the best bound of
    each subproblem the policy met, and its runtime against the policy's own backend."""
    rows = run_subproblems(d, run_dir).get("shadow", [])
    out = []
    for solver in dict.fromkeys(r["solver"] for r in rows):
        mine = [r for r in rows if r["solver"] == solver]
        own = next(r for r in mine if r["role"] == "policy")
        parts = [f"{r['backend']}{' (policy)' if r['role'] == 'policy' else ''}: gap median {_gap(r['median_gap_to_best_bound'])}, "
                 f"max {_gap(r['max_gap_to_best_bound'])}, runtime x{r['runtime_vs_policy_backend']:.3g}"
                 for r in mine]
        out.append(Claim(
            f"In-loop subproblems of {solver} ({own['model']}, {what}): the policy's backend against exact shadows",
            f"{own['subproblems']} subproblems; " + "; ".join(parts),
            "the paper's algorithm is exact or approximate as stated (checked here on the instances the policy "
            "really meets)",
            "Gaps are to the best bound of each subproblem over every backend (one formula: |bound - objective| / "
            "max(|bound|, |objective|, 1)); runtimes are medians, side by side on the same subproblems "
            f"({run_dir}/shadow.csv, shadow.png).",
        ))
    return out


def mean_ci95(values: Any) -> tuple[float, float]:
    """Mean and the half-width of its 95 % Student-t interval (NaN for one value)."""
    from scipy.stats import t as student_t

    x = np.asarray(values, dtype=np.float64)
    if x.size < 2:
        return float(x.mean()), float("nan")
    return float(x.mean()), float(student_t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
