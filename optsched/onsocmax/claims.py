"""What ``optsched reproduce onsocmax`` concludes from its runs (paper 002): Theorem 2's
competitive ratio against alpha-hat, the welfare figures 4-6, and ONSOCMAX with Algorithm 2
(ALM) against the exact KKT kernel."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from optsched.claims import (Claim, Tally, best_on_the_mean, estimate, leader, named_leader, read_csv, relative_lead,
                             replication, run_subproblems, shadow_claims, tally, unpaired, verdict)

BASELINES = ("MAX-FIRST", "EQUAL-SHARE")  # Section IV's online baselines


def onsocmax_claims(d: Path, full: bool) -> list[Claim]:
    out = []
    for preset, stem in (("ratio", "onsocmax_ratio_section_iv"), ("ratio_small", "onsocmax_ratio_small")):
        r = read_csv(d / preset / f"{stem}.csv")
        finite = r[r["ratio"] < float("inf")]
        out.append(Claim(
            f"Theorem 2 on {len(r)} {'Section IV' if preset == 'ratio' else 'small worst-case-style'} instances: "
            "max OPT / online, and against alpha-hat",
            f"max OPT/online {finite['ratio'].max():.3f} (alpha-hat {r['alpha_hat'].min():.2f} - "
            f"{r['alpha_hat'].max():.2f}); max (OPT/online)/alpha-hat {(finite['ratio'] / finite['alpha_hat']).max():.3f}; "
            f"{int(r['violates_theorem2'].sum())} above alpha-hat; mean (OPT/online)/alpha-hat "
            f"{estimate(finite['ratio'] / finite['alpha_hat']).fmt('.3f')} over {len(finite)} instances",
            "OPT / online <= alpha-hat of (40) (alpha-competitive, alpha >= 2)",
            (f"Holds on every draw; the closest instance reaches "
             f"{(finite['ratio'] / finite['alpha_hat']).max():.0%} of alpha-hat (alpha-hat is a worst-case bound "
             "built on one-way trading). " if not r["violates_theorem2"].any() else
             f"Exceeded on {int(r['violates_theorem2'].sum())} instance(s); see docs/onsocmax.md for the "
             "documented cases. ")
            + "OPT is certified (weak-duality bound). The bound needs ONSOCMAX's tie rule (serve zero-slope "
            "pairs); without it docs/onsocmax.md documents instances above alpha-hat.",
        ))
    for preset, what, stem, paper in (
        ("fig4", "service duration", "onsocmax_duration", "ONSOCMAX always performs the best among the online algorithms"),
        ("fig5", "workload size", "onsocmax_workload", "ONSOCMAX always performs the best among the online algorithms"),
        ("fig6", "congestion level", "onsocmax_congestion", "ONSOCMAX is robust to the congestion level"),
    ):
        df = read_csv(d / preset / f"{stem}.csv")
        wide = df.pivot_table(index=["value", "kind", "repeat"], columns="policy", values="welfare")
        per, best = {}, {}
        for key, g in wide.groupby(level=["value", "kind"]):  # paired by instance, against one baseline per point
            best[key] = best_on_the_mean({b: g[b] for b in BASELINES})
            per[key] = relative_lead(g["ONSOCMAX"], g[best[key]] if best[key] is not None else np.full(len(g), np.nan))
        sides = tally(per)
        worst = leader(per, lowest=True)
        opt = df[df["policy"] == "ONSOCMAX"].set_index(["value", "kind", "repeat"])
        # instance j is drawn from one stream at every point: the repeats are the independent replicates
        gap = estimate((opt["opt"] / opt["welfare"]).groupby(level="repeat").mean())
        n = int(df["repeat"].nunique())
        out.append(Claim(
            f"Fig. {preset[-1]} ({what}): points (value x utility) where ONSOCMAX's welfare beats the best baseline",
            f"{sides.counts()} (95 % interval of the paired lead over the baseline best on the mean at each point: "
            f"{_best_counts(best)}); lowest mean "
            + (f"{per[worst].fmt('.1f', percent=True)} (at {worst[0]:g}, {worst[1]}, over {best[worst]})"
               if worst is not None else _shared_lowest(per))
            + f"; OPT / ONSOCMAX {gap.fmt('.3f')} (mean over all points, interval over "
            f"the {gap.n} repeats); "
            + replication(n, full) + " per point",
            paper,
            _reading(sides, df[df["policy"] == "ONSOCMAX"].groupby(["value", "kind"])["demand_ratio"].mean()),
        ))
    return out + onsocmax_alm_claims(d, full) + shadow_claims(d, "fig4", "Fig. 4 run")


def _shared_lowest(per: dict[tuple[float, str], Any]) -> str:
    """The lowest mean lead when no single point has it: its value and the points that share it."""
    if named_leader(per, lowest=True) == "none (no value)":
        return "none (no value)"
    low = min(e.mean for e in per.values() if np.isfinite(e.mean))
    at = [f"{v:g}, {k}" for (v, k), e in per.items() if np.isfinite(e.mean) and abs(e.mean - low) <= 1e-12 * max(abs(low), 1e-300)]
    return f"{100 * low:+.1f}% (shared by {len(at)} points: {'; '.join(at)})"


def _best_counts(best: Mapping[Any, str | None]) -> str:
    """How often each baseline is the best on the mean: ``MAX-FIRST at 9, EQUAL-SHARE at 3``."""
    counts = Counter(b for b in best.values() if b is not None)
    return ", ".join(f"{b} at {n}" for b, n in counts.most_common()) or "none with a value"


def _reading(sides: Tally, demand: Any) -> str:
    """"Agrees." only when ONSOCMAX is ahead at every point (the paper: it always performs the
    best; a point without a difference, or without an interval, is not shown to agree). Where
    it is behind, the price explanation only at points whose workload exceeds the capacity
    (``demand``: the mean demand ratio per point, > 1 congested), as measured; elsewhere this
    run does not explain it."""
    lost = sides.behind
    total = len(sides.ahead) + len(lost) + len(sides.level) + len(sides.open)
    if len(sides.ahead) == total:
        return "Agrees."
    high = [(v, k) for v, k in lost if demand[(v, k)] > 1.0]
    other = [(v, k) for v, k in lost if demand[(v, k)] <= 1.0]
    tied, open_ = len(sides.level), len(sides.open)
    name = lambda pts: ", ".join(f"{v:g} ({k}; demand {demand[(v, k)]:.2f} of capacity)" for v, k in pts)  # noqa: E731
    return (("" if not high else
             f"Behind at {name(high)}, where the workload exceeds the capacity: ONSOCMAX's price rises steeply "
             "above w_hat = C / (alpha - 1) and jobs stop taking work that the greedy baselines use (within Theorem "
             "2, but below the baselines on average-case instances; docs/onsocmax.md). ")
            + ("" if not other else f"Behind at {name(other)}, below capacity: not explained by this run. ")
            + ("" if not tied else f"Not shown at {tied} of {total} points: no difference at 95 % there, where "
                                   "the paper says ONSOCMAX performs the best. ")
            + ("" if not open_ else f"No verdict at {open_} of {total} points: no 95 % interval there (fewer than 2 "
                                    "replicates or a value not finite).")).strip()


# what fig4-alm sets on purpose (paper.py); every other key must be fig4's for the rows to pair
ALM_RUN_SETTINGS = frozenset({"backend", "values", "repeats"})


def onsocmax_alm_claims(d: Path, full: bool) -> list[Claim]:
    """ONSOCMAX end to end with Algorithm 2 (ALM, Table II) for P3 against the exact KKT kernel."""
    alm_path = d / "fig4-alm" / "onsocmax_duration.csv"
    if not alm_path.exists():
        return []
    title = "ONSOCMAX with Algorithm 2 (ALM, Table II settings) for P3 instead of the exact KKT solver (Fig. 4 setting)"
    paper = "Algorithm 2 solves P3 (the paper reports its per-job accuracy within 1e-3)"
    why = unpaired(d, "fig4-alm", "fig4", ALM_RUN_SETTINGS)
    if why is not None:
        return [Claim(title, why, paper, "The two runs must draw the same instances and arrivals to be paired.")]
    keys = ["value", "kind", "repeat"]
    kkt = read_csv(d / "fig4" / "onsocmax_duration.csv")
    alm = read_csv(alm_path)
    both = (kkt[kkt["policy"] == "ONSOCMAX"].set_index(keys)["welfare"].to_frame("kkt")
            .join(alm[alm["policy"] == "ONSOCMAX"].set_index(keys)["welfare"].to_frame("alm"), how="inner"))
    # instance j is drawn from one stream at every point: the repeats (each the mean over the points)
    # are the independent replicates
    per_repeat = both.groupby(level="repeat").mean()
    rel = relative_lead(per_repeat["alm"], per_repeat["kkt"])
    stats = run_subproblems(d, "fig4-alm").get("solvers", [])
    st = next((x for x in stats if x["backend"] == "alm"), {})
    return [Claim(
        title,
        f"welfare ALM / KKT - 1: {rel.fmt('.2f', percent=True)} over {len(both)} instances (points x repeats, "
        f"paired; the interval over the {rel.n} repeats, each the mean over the points), min {(both['alm'] / both['kkt']).min():.3f}; ALM terminations {st.get('terminations', {})}, "
        f"fallbacks {st.get('fallbacks', 0)}",
        paper,
        f"{verdict(rel, subject='ONSOCMAX with ALM', other='ONSOCMAX with KKT')}. With Table II's max_outer cap and "
        "sigma_0 < 1 most jobs stop at the iteration limit short of the optimum (docs/onsocmax_models.md); the "
        "online welfare follows. Same instances and arrivals (fig4-alm reruns the Fig. 4 instances with backend alm).",
    )]
