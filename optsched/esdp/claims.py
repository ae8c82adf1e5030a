"""What ``optsched reproduce esdp`` concludes from its runs (paper 000, Section 4): ESDP's
welfare against the baselines and the oracle (Figs. 2-4), the regret, the exact index P3 against
the AESCB route, and the sensitivity figures 5-10."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from optsched.claims import (Claim, estimate, leader, named_leader, read_csv, relative_lead, replication, run_subproblems,
                             shadow_claims, tally, verdict)
from optsched.esdp.experiments import oracle_share

if TYPE_CHECKING:
    import pandas as pd

ESDP_PAPER_GAINS = {"HSWF": 0.73, "LCF": 0.36, "LWTF": 0.28}
ESDP_NOTES = {
    "HSWF": "HSWF ranks ports by their summed v_hat; how weak that order is depends on Table 2's capacities, "
            "which are unreadable (we use c_k = ceil(alpha sum_e A_ke), README).",
    "LCF": "LCF ranks ports by their channels' least cost: with linear supply costs f_k a the cost spreads "
           "more than the valuation (costs 1.5-3 vs valuations 0.1-1), so cost alone orders well (docs/esdp.md).",
    "LCF-channel": "LCF-channel ranks channels, not ports, by cost (not in the paper): the strongest order cost "
                   "alone gives (docs/esdp.md).",
    "LWTF": "LWTF serves ports round-robin by waiting time; the gap to it depends on the normalisation of "
            "Z - C into [0, 1] (ours: one affine map, clipped), which the paper does not state.",
}


def _final(df: "pd.DataFrame") -> "pd.DataFrame":
    """ASW at the horizon per (repeat, policy): one row per repeat (each a new instance and sample
    path), one column per policy."""
    T = int(df["t"].max())
    return df[df["t"] == T].pivot_table(index="repeat", columns="policy", values="asw")


def esdp_claims(d: Path, full: bool) -> list[Claim]:
    df = read_csv(d / "fig2-4" / "esdp_asw.csv")
    T = int(df["t"].max())
    final = _final(df)
    n = len(final)
    out = []
    room = ""
    if "Oracle" in final.columns:
        room = " Share of the oracle's ASW: " + ", ".join(
            f"{p} {estimate(final[p] / final['Oracle']).fmt('.1%')}" for p in final.columns if p != "Oracle") + "."
    baselines = [p for p in final.columns if p not in ("ESDP", "Oracle")]
    if baselines:
        room += f" The strongest baseline on the mean ASW: {named_leader({p: estimate(final[p]) for p in baselines})}."
    for base in baselines:
        gain = relative_lead(final["ESDP"], final[base])
        paper = ESDP_PAPER_GAINS.get(base)
        out.append(Claim(
            f"ESDP's accumulated social welfare over {base} at T = {T}",
            f"{gain.fmt('.1f', percent=True)}; {replication(n, full)}",
            f"up to {paper:.0%} within 2000 slots" if paper is not None else "(not in the paper: LCF ranking channels)",
            f"{verdict(gain, subject='ESDP', other=base)}. " + ESDP_NOTES.get(base, "") + room
            + ("" if full else " The reduced horizon gives ESDP fewer slots to learn than the paper's 2000."),
        ))
    if "Oracle" in df["policy"].unique():
        reg = df.pivot_table(index=["repeat", "t"], columns="policy", values="regret").drop(columns="Oracle")
        half = int(df["t"][df["t"] <= T // 2].max())
        at_t, at_half = reg.xs(T, level="t"), reg.xs(half, level="t")
        growth = {p: estimate(at_t[p] / at_half[p]) for p in reg.columns}
        slowest = named_leader(growth, lowest=True)
        vs = {p: estimate(at_t[p] / at_half[p] - at_t["ESDP"] / at_half["ESDP"]) for p in reg.columns if p != "ESDP"}
        slower_than = [p for p, e in vs.items() if e.above_zero()]
        out.append(Claim(
            "Regret (5) against the oracle at T, and its growth from T/2 to T",
            ", ".join(f"{p} {estimate(at_t[p]).fmt('.1f')} "
                      + (f"(x{growth[p].fmt('.2f')})" if growth[p].n else f"(growth: {growth[p].fmt()})") for p in reg.columns)
            + f"; {replication(n, full)}",
            "ESDP's regret is sublinear (Theorem 1); the baselines' is linear",
            f"Pseudo-regret with the true means v_tilde. A linear regret grows x{T / half:.3g} from t = {half} to {T}. ESDP's "
            f"growth is below that of {', '.join(slower_than) or 'no baseline'} (95 % interval of the paired "
            f"difference above 0); slowest on the mean: {slowest}"
            + ("" if slowest in ("ESDP", "none (tied)", "none (no value)") else ": over a short horizon ESDP is still exploring")
            + ".",
        ))
    return out + esdp_index_claims(d, full) + shadow_claims(d, "fig2-4", "Figs. 2-4 run") + esdp_sweep_claims(d, full)


def esdp_index_claims(d: Path, full: bool) -> list[Claim]:
    """ESDP with the AESCB route (Algorithm 2 + the pick (17)) against ESDP with the exact index P3."""
    path = d / "exact-index" / "esdp_asw.csv"
    if not path.exists():
        return []
    final = _final(read_csv(path))
    T = int(read_csv(path)["t"].max())
    diff = relative_lead(final["ESDP"], final["ESDP-exact"])
    stats = {x["solver"]: x for x in run_subproblems(d, "exact-index").get("solvers", [])}
    exact = stats.get("ESDP-exact", {})
    return [Claim(
        "ESDP with the paper's AESCB route vs ESDP solving the index P3 exactly (escb_oa), same instances",
        f"ASW at T = {T}: AESCB / exact - 1 = {diff.fmt('.2f', percent=True)}; exact-index fallbacks "
        f"{exact.get('fallbacks', 0)}; {replication(len(final), full)}",
        "the AESCB route is within (|x| + sqrt|x|) / xi of P3 (Theorem 1) and keeps the regret sublinear",
        f"{verdict(diff, subject='the AESCB route', other='the exact index')}. The in-loop gaps of the route on "
        "each slot's P3 are in the Figs. 2-4 shadow row; a small gap per slot changes which channels are "
        "explored, so the two trajectories differ.",
    )]


def _sweep(d: Path, preset: str, stem: str, key: str) -> "pd.DataFrame":
    """An ESDP sweep's rows (value, repeat, policy, asw, regret, oracle_asw, ...) with the CPU
    seconds of each run; values in file order."""
    df = read_csv(d / preset / f"{stem}.csv")
    t = read_csv(d / preset / f"{stem}_timing.csv")
    return df.merge(t[[key, "repeat", "policy", "cpu_s"]], on=[key, "repeat", "policy"], sort=False)


def _per_value(df: "pd.DataFrame", key: str, policy: str, column: str) -> dict[Any, Any]:
    part = df[df["policy"] == policy]
    return {v: estimate(part[part[key] == v][column]) for v in dict.fromkeys(df[key])}


def _fig6_reading(growth: dict[str, Any]) -> str:
    """Why ESDP's growth over alpha is or is not the largest, as far as the growths show it:
    the capacity explanation only when a baseline grew more than ESDP on the mean (it was printed
    whatever the data, also when ESDP grew most)."""
    top = leader(growth)
    if top is None or top == "ESDP" or "ESDP" not in growth:
        return "The share of the oracle says how much room there was (docs/esdp.md)."
    return (f"{top} grew more than ESDP on the mean: under c_k = ceil(alpha sum_e A_ke) capacity stops binding as "
            "alpha grows, so the baselines have the most to gain while ESDP, near the oracle already, has less; the "
            "share of the oracle says how much room there was (preset fig6-demand keeps capacity binding; docs/esdp.md).")


def _furthest_from_zero(pairs: dict[Any, Any]) -> tuple[Any, Any]:
    """The (key, estimate) whose interval (its mean, when it has none) reaches furthest from 0;
    NaN estimates last."""
    def reach(e: Any) -> float:
        value = max(abs(e.low), abs(e.high)) if e.defined else abs(e.mean)
        return value if value == value else -1.0
    return max(pairs.items(), key=lambda kv: reach(kv[1]))


def _clearest(pairs: dict[Any, Any]) -> tuple[Any, Any]:
    """The (key, lead) that differs most clearly: first a pair whose paired difference excludes 0
    (the test the count of differing pairs uses; a pair without a ratio ranked below one whose
    ratio interval included 0: probe BM), then the ratio interval's near side furthest from 0
    (the farther reach picked the widest interval, one that included 0 beside two pairs that
    excluded it: probe BL), then the mean."""
    def distance(e: Any) -> tuple[bool, float, float]:
        gap = max(e.low, -e.high, 0.0) if e.defined else 0.0
        return e.difference.excludes_zero(), gap, abs(e.mean) if e.mean == e.mean else -1.0
    return max(pairs.items(), key=lambda kv: distance(kv[1]))


def _fmt(t: dict[Any, Any], spec: str = ".0f", *, percent: bool = False) -> str:
    return ", ".join(f"{k}: {e.fmt(spec, percent=percent)}" for k, e in t.items())


def esdp_sweep_claims(d: Path, full: bool) -> list[Claim]:
    """Figs. 5-10 (Section 4.3 of paper 000), over the runs' repeats (instances x seeds)."""
    out = []
    size = read_csv(d / "fig5" / "esdp_overhead_n_servers.csv")
    secs = read_csv(d / "fig5" / "esdp_overhead_n_servers_timing.csv")
    o = size.merge(secs, on=["n_servers", "repeat"])
    per = {int(n): (int(g["n_edges"].mean()), estimate(1e3 * g["median_s_per_slot"])) for n, g in o.groupby("n_servers")}
    ms = o.pivot_table(index="repeat", columns="n_servers", values="median_s_per_slot")
    grows = relative_lead(ms[ms.columns[-1]], ms[ms.columns[0]])  # largest graph over the smallest, paired by repeat
    out.append(Claim(
        "Fig. 5: ESDP's decision time per slot vs graph size (median over slots)",
        ", ".join(f"|R|={n} (|E|~{e}): {est.fmt('.2f')} ms" for n, (e, est) in per.items())
        + f"; largest over smallest {grows.fmt('.0f', percent=True)}; {replication(int(o['repeat'].nunique()), full)}",
        "overhead grows with the scale of the bipartite graph (Fig. 5; no numbers in the text)",
        ("Grows with |E| (the interval of the largest graph's time over the smallest's lies above 0), as the DP "
         "table (capacity states x budget levels) grows. " if grows.above_zero() else
         "No growth with |E| shown at 95 %. ")
        + "The median leaves out the first slot's one-off compilation (max_s_per_slot in "
        "esdp_overhead_n_servers_timing.csv).",
    ))
    df = _sweep(d, "fig6", "esdp_sweep_alpha", "alpha")
    values = list(dict.fromkeys(df["alpha"]))
    wide = df.pivot_table(index=["repeat"], columns=["policy", "alpha"], values="asw")
    online = [p for p in dict.fromkeys(df["policy"]) if p != "Oracle"]
    growth = {p: estimate(wide[(p, values[-1])] / wide[(p, values[0])] - 1.0) for p in online}
    share = _per_value(df.assign(share=oracle_share(df)), "alpha", "ESDP", "share")
    rising = [p for p, e in growth.items() if e.above_zero()]
    out.append(Claim(
        f"Fig. 6: ASW as alpha (size of the solution space) goes {values[0]:g} -> {values[-1]:g}",
        "growth " + ", ".join(f"{p} {e.fmt('.1f', percent=True)}" for p, e in growth.items())
        + f"; ESDP / Oracle {_fmt(share, '.1%')}; {replication(int(df['repeat'].nunique()), full)}",
        "ASW increases with the solution space for all algorithms; ESDP has the highest growth",
        f"Rising (interval above 0) for {len(rising)} of {len(online)}; the largest mean growth: "
        f"{named_leader(growth)}. " + _fig6_reading(growth),
    ))
    df = _sweep(d, "fig7", "esdp_sweep_delta", "delta")
    e = _per_value(df, "delta", "ESDP", "asw")
    c = _per_value(df, "delta", "ESDP", "cpu_s")
    esdp = df[df["policy"] == "ESDP"].pivot_table(index="repeat", columns="delta", values="asw")
    cpu = df[df["policy"] == "ESDP"].pivot_table(index="repeat", columns="delta", values="cpu_s")
    pairs = {(a, b): relative_lead(esdp[a], esdp[b]) for i, a in enumerate(e) for b in list(e)[i + 1:]}
    (wa, wb), widest = _furthest_from_zero(pairs)
    cpu_pairs = {(a, b): relative_lead(cpu[a], cpu[b]) for a, b in pairs}
    (ca, cb), cpu_clearest = _clearest(cpu_pairs)
    cpu_sides = tally(cpu_pairs)
    within = all(x.defined and -0.02 < x.low and x.high < 0.02 for x in pairs.values())
    out.append(Claim(
        "Fig. 7: ESDP under the delta_t sequences " + ", ".join(map(str, e)),
        f"ASW {_fmt(e)}; the paired difference furthest from 0: {wa} over {wb} {widest.fmt('.1f', percent=True)}; "
        f"CPU s per run {_fmt(c, '.2f')}; CPU differs (paired 95 % interval excludes 0) in "
        f"{len(cpu_sides.ahead) + len(cpu_sides.behind)} of {len(cpu_pairs)} pairs, the interval furthest from 0: "
        f"{ca} over {cb} {cpu_clearest.fmt('.1f', percent=True)}; {replication(int(df['repeat'].nunique()), full)}",
        "little effect on performance, strong effect on the computation overhead",
        ("Performance: agrees (every paired difference's 95 % interval within 2 %). " if within else
         "Performance: not shown within 2 % (a paired difference's 95 % interval reaches past 2 %). "
         if all(x.defined for x in pairs.values()) else
         "Performance: no verdict (not every paired difference has a 95 % interval: fewer than 2 repeats). ")
        + "Overhead: delta_t sets xi and so the budget range S = xi m; our DP solves every budget in one table "
        "whose size the capacity states set, not the budget range (docs/esdp.md).",
    ))
    df = _sweep(d, "fig8", "esdp_sweep_g", "g")
    a, r = _per_value(df, "g", "ESDP", "asw"), _per_value(df, "g", "ESDP", "regret")
    best = leader(a)
    third = list(a)[-1]
    esdp = df[df["policy"] == "ESDP"].pivot_table(index="repeat", columns="g", values="asw")
    leads = {g: relative_lead(esdp[third], esdp[g]) for g in a if g != third}
    won = [g for g, x in leads.items() if x.above_zero()]
    out.append(Claim(
        "Fig. 8: ESDP under the g(t) settings " + ", ".join(map(str, a)),
        f"ASW {_fmt(a)}; regret {_fmt(r)}; best on the mean: {named_leader(a)}; {third} over "
        + ", ".join(f"{g} {x.fmt('.1f', percent=True)}" for g, x in leads.items())
        + f" (paired ASW); {replication(int(df['repeat'].nunique()), full)}",
        "the third setting, g(t) = ln(t+1), has an overwhelming advantage",
        ("Agrees on the order: ahead of every other setting (paired 95 % intervals above 0); how large the "
         "advantage is, the leads and the regret say (significance alone does not make it overwhelming). "
         if len(won) == len(leads) else
         f"Agrees on the mean only: ahead of {len(won)} of {len(leads)} settings by the paired 95 % intervals. "
         if best == third else "Not shown: the best mean is shared. " if best is None else "Disagrees: ")
        + "The smallest g explores least; ASW includes the oracle's share, which every setting shares, so the "
        "regret shows the differences more plainly than the ASW.",
    ))
    df = _sweep(d, "fig9", "esdp_sweep_arrival_prob", "arrival_prob")
    values = list(dict.fromkeys(df["arrival_prob"]))
    wide = df.pivot_table(index=["repeat"], columns=["policy", "arrival_prob"], values="asw")
    online = [p for p in dict.fromkeys(df["policy"]) if p != "Oracle"]
    growth = {p: estimate(wide[(p, values[-1])] / wide[(p, values[0])] - 1.0) for p in online}
    rising = [p for p, e in growth.items() if e.above_zero()]
    out.append(Claim(
        f"Fig. 9: ASW as the arrival probability rho goes {values[0]:g} -> {values[-1]:g}",
        "growth " + ", ".join(f"{p} {e.fmt('.1f', percent=True)}" for p, e in growth.items())
        + f"; rising (interval above 0) for {len(rising)} of {len(online)}; "
        + replication(int(df['repeat'].nunique()), full),
        "with the increase of rho the ASW of nearly all the algorithms goes up",
        "Agrees." if len(rising) >= len(online) - 1 else
        "Policies that saturate capacity stop gaining once more jobs arrive than can be served.",
    ))
    df = _sweep(d, "fig10", "esdp_sweep_edge_prob", "edge_prob")
    edges = df.groupby("edge_prob")["n_edges"].mean()
    shared = df.assign(share=oracle_share(df))
    share = _per_value(shared, "edge_prob", "ESDP", "share")
    cpu = _per_value(df, "edge_prob", "ESDP", "cpu_s")
    wide_share = shared[shared["policy"] == "ESDP"].pivot_table(index="repeat", columns="edge_prob", values="share",
                                                                dropna=False)
    first, last = list(share)[0], list(share)[-1]
    falls = relative_lead(wide_share[last], wide_share[first])  # densest graph's share over the sparsest's, paired
    out.append(Claim(
        "Fig. 10: ESDP as the graph gets denser (mean |E| = " + ", ".join(f"{edges[k]:.0f}" for k in share) + ")",
        f"ESDP / Oracle ASW {_fmt(share, '.1%')}; densest over sparsest {falls.fmt('.1f', percent=True)} (paired); "
        f"ESDP CPU s per run {_fmt(cpu, '.2f')}; " + replication(int(df['repeat'].nunique()), full),
        "relaxing service locality enlarges the solution space and makes the search harder for ESDP",
        ("The harder search shows in ESDP's share of the oracle's ASW, which falls from the sparsest graph to the "
         "densest (the paired interval lies below 0)." if falls.below_zero() else
         "ESDP's share of the oracle's ASW is not shown to fall from the sparsest graph to the densest at 95 % "
         "(more edges also give more good choices, and the oracle faces the same graph)."),
    ))
    return out
