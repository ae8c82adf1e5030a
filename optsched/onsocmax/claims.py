"""What ``optsched reproduce onsocmax`` concludes from its runs (paper 002): Theorem 2's
competitive ratio against alpha-hat, the welfare figures 4-6, and ONSOCMAX with Algorithm 2
(ALM) against the exact KKT kernel."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from optsched.claims import Claim, read_csv, run_subproblems, shadow_claims

if TYPE_CHECKING:
    pass

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
            f"{int(r['violates_theorem2'].sum())} above alpha-hat",
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
        mean = df.groupby(["value", "kind", "policy"])["welfare"].mean().unstack("policy")
        base = mean[["MAX-FIRST", "EQUAL-SHARE"]].max(axis=1)
        rel = mean["ONSOCMAX"] / base
        wins = int((rel >= 1).sum())
        worst = rel.idxmin()
        opt = df.groupby(["value", "kind"])["opt"].mean()
        out.append(Claim(
            f"Fig. {preset[-1]} ({what}): points (value x utility) where ONSOCMAX has the highest mean welfare",
            f"{wins} of {len(rel)}; ONSOCMAX / best baseline {rel.min():.3f} (at {worst[0]:g}, {worst[1]}) - "
            f"{rel.max():.3f}; OPT / ONSOCMAX <= {(opt / mean['ONSOCMAX']).max():.3f}",
            paper,
            "Agrees." if wins == len(rel) else
            f"Lost at {', '.join(f'{v:g} ({k})' for (v, k) in rel[rel < 1].index)}. Once demand nears capacity, "
            "ONSOCMAX's price rises steeply above w_hat = C / (alpha - 1) and jobs stop taking work that the greedy baselines use (within Theorem 2, but below the "
            "baselines on average-case instances; docs/onsocmax.md).",
        ))
    return out + onsocmax_alm_claims(d) + shadow_claims(d, "fig4", "Fig. 4 run")


def onsocmax_alm_claims(d: Path) -> list[Claim]:
    """ONSOCMAX end to end with Algorithm 2 (ALM, Table II) for P3 against the exact KKT kernel."""
    alm_path = d / "fig4-alm" / "onsocmax_duration.csv"
    if not alm_path.exists():
        return []
    keys = ["value", "kind", "repeat"]
    kkt = read_csv(d / "fig4" / "onsocmax_duration.csv")
    alm = read_csv(alm_path)
    both = (kkt[kkt["policy"] == "ONSOCMAX"].set_index(keys)["welfare"].to_frame("kkt")
            .join(alm[alm["policy"] == "ONSOCMAX"].set_index(keys)["welfare"].to_frame("alm"), how="inner"))
    rel = both["alm"] / both["kkt"]
    stats = run_subproblems(d, "fig4-alm").get("solvers", [])
    st = next((x for x in stats if x["backend"] == "alm"), {})
    return [Claim(
        "ONSOCMAX with Algorithm 2 (ALM, Table II settings) for P3 instead of the exact KKT solver (Fig. 4 setting)",
        f"welfare ALM / KKT: median {rel.median():.3f}, min {rel.min():.3f}, max {rel.max():.3f} over {len(rel)} "
        f"instances; ALM terminations {st.get('terminations', {})}, fallbacks {st.get('fallbacks', 0)}",
        "Algorithm 2 solves P3 (the paper reports its per-job accuracy within 1e-3)",
        "With Table II's max_outer cap and sigma_0 < 1 most jobs stop at the iteration limit short of the "
        "optimum (docs/onsocmax_models.md); the online welfare follows. Same instances and arrivals "
        "(fig4-alm reruns the Fig. 4 instances with backend alm).",
    )]
