"""What ``optsched reproduce esdp`` concludes from its runs (paper 000, Section 4): ESDP's
welfare against the baselines and the oracle (Figs. 2-4), the regret, the exact index P3 against
the AESCB route, and the sensitivity figures 5-10."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from optsched.claims import Claim, pct, read_csv, run_subproblems, shadow_claims

if TYPE_CHECKING:
    import pandas as pd

ESDP_PAPER_GAINS = {"HSWF": 0.73, "LCF": 0.36, "LWTF": 0.28}
ESDP_NOTES = {
    "HSWF": "HSWF ranks ports by their summed v_hat; how weak that order is depends on Table 2's capacities, "
            "which are unreadable (we use c_k = ceil(alpha sum_e A_ke), README).",
    "LCF": "LCF is our strongest baseline: with linear supply costs f_k a the cost spreads more than the "
           "valuation (costs 1.5-3 vs valuations 0.1-1), so ranking channels by cost alone is close to the "
           "oracle's order (docs/esdp.md).",
    "LWTF": "LWTF serves ports round-robin by waiting time; the gap to it depends on the normalisation of "
            "Z - C into [0, 1] (ours: one affine map, clipped), which the paper does not state.",
}


def esdp_claims(d: Path, full: bool) -> list[Claim]:
    df = read_csv(d / "fig2-4" / "esdp_asw.csv")
    mean = df.groupby(["policy", "t"])["asw"].mean().unstack("policy")
    T = int(mean.index.max())
    out = []
    for base, paper in ESDP_PAPER_GAINS.items():
        if base not in mean.columns or "ESDP" not in mean.columns:
            continue
        ratio = mean["ESDP"] / mean[base]
        late = ratio[ratio.index >= max(1, T // 10)]
        gain = float(ratio.loc[T] - 1)
        verdict = ("ESDP loses to {b} at this horizon." if gain < 0 else
                   "ESDP wins, by less than the paper's {p:.0%}." if late.max() - 1 < paper else
                   "ESDP's lead reaches the paper's {p:.0%}.").format(b=base, p=paper)
        out.append(Claim(
            f"ESDP's accumulated social welfare over {base}",
            f"{pct(gain)} at T = {T}; at most {pct(late.max() - 1)} over t >= {max(1, T // 10)}",
            f"up to {paper:.0%} within 2000 slots",
            verdict + " " + ESDP_NOTES[base]
            + ("" if full else " The reduced horizon gives ESDP fewer slots to learn than the paper's 2000."),
        ))
    if "Oracle" in df["policy"].unique():
        reg = df.groupby(["policy", "t"])["regret"].mean().unstack("policy").drop(columns="Oracle")
        half = int(reg.index[reg.index <= T // 2].max())
        growth = reg.loc[T] / reg.loc[half]  # linear regret doubles from T/2 to T; sublinear grows less
        lowest = str(reg.loc[T].idxmin())
        out.append(Claim(
            "Regret (5) against the oracle at T, and its growth from T/2 to T",
            ", ".join(f"{p} {reg.loc[T, p]:.1f} (x{growth[p]:.2f})" for p in reg.columns)
            + f"; ESDP / Oracle ASW = {mean['ESDP'].loc[T] / mean['Oracle'].loc[T]:.3f}",
            "ESDP's regret is sublinear (Theorem 1); the baselines' is linear",
            f"Pseudo-regret with the true means v_tilde; lowest at T: {lowest}. A linear regret grows x2 from "
            f"t = {half} to {T}; ESDP's x{growth['ESDP']:.2f} is "
            + ("below the baselines' (slowest growth: "
               f"{growth.idxmin()})." if growth.idxmin() == "ESDP" else
               f"not the slowest (that is {growth.idxmin()}, x{growth.min():.2f}): over a short horizon ESDP is still exploring.")
            + " Curves: regret panel of esdp_asw.png.",
        ))
    return out + esdp_index_claims(d) + shadow_claims(d, "fig2-4", "Figs. 2-4 run") + esdp_sweep_claims(d)


def esdp_index_claims(d: Path) -> list[Claim]:
    """ESDP with the AESCB route (Algorithm 2 + the pick (17)) against ESDP with the exact index P3."""
    path = d / "exact-index" / "esdp_asw.csv"
    if not path.exists():
        return []
    df = read_csv(path)
    T = int(df["t"].max())
    final = df[df["t"] == T].groupby("policy")["asw"].mean()
    stats = {x["solver"]: x for x in run_subproblems(d, "exact-index").get("solvers", [])}
    exact = stats.get("ESDP-exact", {})
    return [Claim(
        "ESDP with the paper's AESCB route vs ESDP solving the index P3 exactly (escb_oa), same instance",
        f"ASW at T = {T}: AESCB {final['ESDP']:.1f}, exact {final['ESDP-exact']:.1f} "
        f"({pct(final['ESDP'] / final['ESDP-exact'] - 1)}); exact-index fallbacks {exact.get('fallbacks', 0)}",
        "the AESCB route is within (|x| + sqrt|x|) / xi of P3 (Theorem 1) and keeps the regret sublinear",
        "The in-loop gaps of the route on each slot's P3 are in the Figs. 2-4 shadow row above; a small gap "
        "per slot changes which channels are explored, so the two trajectories differ slightly.",
    )]


def _sweep(d: Path, preset: str, stem: str, key: str) -> tuple["pd.DataFrame", "pd.DataFrame"]:
    """An ESDP sweep's mean ASW and CPU seconds per (value, policy), values in file order."""
    df = read_csv(d / preset / f"{stem}.csv")
    t = read_csv(d / preset / f"{stem}_timing.csv")
    order = list(dict.fromkeys(df[key]))
    asw = df.groupby([key, "policy"])["asw"].mean().unstack("policy").reindex(order)
    cpu = t.groupby([key, "policy"])["cpu_s"].mean().unstack("policy").reindex(order)
    return asw, cpu


def esdp_sweep_claims(d: Path) -> list[Claim]:
    """Figs. 5-10 (Section 4.3 of paper 000)."""
    out = []
    size = read_csv(d / "fig5" / "esdp_overhead_n_servers.csv")
    secs = read_csv(d / "fig5" / "esdp_overhead_n_servers_timing.csv")
    o = size.merge(secs, on=["n_servers", "repeat"]).groupby("n_edges")["median_s_per_slot"].mean()
    out.append(Claim(
        "Fig. 5: ESDP's decision time per slot vs graph size (median over slots)",
        ", ".join(f"|E|={e}: {1e3 * v:.2f} ms" for e, v in o.items()),
        "overhead grows with the scale of the bipartite graph (Fig. 5; no numbers in the text)",
        "Grows with |E| as the DP table (capacity states x budget levels) grows. The median leaves out the "
        "first slot's one-off compilation (max_s_per_slot in esdp_overhead_n_servers_timing.csv).",
    ))
    asw, _ = _sweep(d, "fig6", "esdp_sweep_alpha", "alpha")
    online = asw.drop(columns="Oracle", errors="ignore")
    growth = online.iloc[-1] - online.iloc[0]
    rising = [p for p in online.columns if online[p].is_monotonic_increasing]
    out.append(Claim(
        f"Fig. 6: ASW as alpha (size of the solution space) goes {asw.index[0]:g} -> {asw.index[-1]:g}",
        "growth " + ", ".join(f"{p} {pct(online[p].iloc[-1] / online[p].iloc[0] - 1)} (+{growth[p]:.0f})"
                              for p in online.columns)
        + f"; rising for {len(rising)} of {len(online.columns)}; ESDP highest at "
        f"{int((online.idxmax(axis=1) == 'ESDP').sum())} of {len(online)} alphas",
        "ASW increases with the solution space for all algorithms; ESDP has the highest growth",
        ("Agrees." if growth.idxmax() == "ESDP" else
         f"Growth: agrees that all rise; the largest absolute growth is {growth.idxmax()}'s, not ESDP's: the "
         "baselines gain most when capacity stops binding, while ESDP, near the oracle already, has less to gain "
         "(its regret falls with alpha). ESDP keeps the highest ASW."),
    ))
    asw, cpu = _sweep(d, "fig7", "esdp_sweep_delta", "delta")
    e, c = asw["ESDP"], cpu["ESDP"]
    out.append(Claim(
        "Fig. 7: ESDP under the delta_t sequences " + ", ".join(map(str, e.index)),
        f"ASW spread {pct(e.max() / e.min() - 1)}; CPU s per run " + ", ".join(f"{v:.2f}" for v in c)
        + f" (spread {c.max() / c.min():.2f}x)",
        "little effect on performance, strong effect on the computation overhead",
        ("Performance: agrees. " if e.max() / e.min() - 1 < 0.02 else "Performance differs by more than 2%. ")
        + "Overhead: delta_t sets xi and so the budget range S = xi m; our DP solves every budget in one table "
        "whose size the capacity states set, so the sequences change its cost little (docs/esdp.md).",
    ))
    asw, _ = _sweep(d, "fig8", "esdp_sweep_g", "g")
    reg = read_csv(d / "fig8" / "esdp_sweep_g.csv").groupby("g")["regret"].mean().reindex(asw.index)
    out.append(Claim(
        "Fig. 8: ESDP under the g(t) settings " + ", ".join(map(str, asw.index)),
        "ASW " + ", ".join(f"{v:.0f}" for v in asw["ESDP"]) + "; regret " + ", ".join(f"{v:.0f}" for v in reg)
        + f"; best: {asw['ESDP'].idxmax()}",
        "the third setting, g(t) = ln(t+1), has an overwhelming advantage",
        ("Agrees: " if asw["ESDP"].idxmax() == asw.index[-1] else "Disagrees: ")
        + f"the smallest g explores least; its regret is {reg.iloc[0] / max(reg.iloc[-1], 1e-9):.1f}x lower than "
        "the default's, while the ASW differs by "
        f"{pct(asw['ESDP'].iloc[-1] / asw['ESDP'].iloc[0] - 1)} (ASW includes the oracle's share, which all share).",
    ))
    asw, _ = _sweep(d, "fig9", "esdp_sweep_arrival_prob", "arrival_prob")
    online = asw.drop(columns="Oracle", errors="ignore")
    rising = [p for p in online.columns if online[p].is_monotonic_increasing]
    out.append(Claim(
        f"Fig. 9: ASW as the arrival probability rho goes {asw.index[0]:g} -> {asw.index[-1]:g}",
        f"rising for {len(rising)} of {len(online.columns)} online policies ({', '.join(rising) or 'none'}); ESDP "
        f"{online['ESDP'].iloc[0]:.0f} -> {online['ESDP'].iloc[-1]:.0f}; ESDP highest at "
        f"{int((online.idxmax(axis=1) == 'ESDP').sum())} of {len(online)}",
        "with the increase of rho the ASW of nearly all the algorithms goes up",
        "Agrees." if len(rising) >= len(online.columns) - 1 else
        "Policies that saturate capacity stop gaining once more jobs arrive than can be served.",
    ))
    asw, cpu = _sweep(d, "fig10", "esdp_sweep_edge_prob", "edge_prob")
    edges = read_csv(d / "fig10" / "esdp_sweep_edge_prob.csv").groupby("edge_prob")["n_edges"].first().reindex(asw.index)
    share = asw["ESDP"] / asw["Oracle"]
    out.append(Claim(
        "Fig. 10: ESDP as the graph gets denser (|E| = " + ", ".join(str(int(x)) for x in edges) + ")",
        "ESDP / Oracle ASW " + ", ".join(f"{v:.3f}" for v in share) + "; ESDP CPU s per run "
        + ", ".join(f"{v:.2f}" for v in cpu["ESDP"]),
        "relaxing service locality enlarges the solution space and makes the search harder for ESDP",
        ("More edges mean more arms to learn and a larger DP: " if cpu["ESDP"].is_monotonic_increasing else "")
        + ("the harder search shows in ESDP's share of the oracle's ASW, which falls with |E|."
           if share.is_monotonic_decreasing else
           "it shows in the CPU time; ESDP's share of the oracle's ASW does not fall with |E| here (more edges "
           "also give more good choices, and the oracle faces the same graph)."),
    ))
    return out
