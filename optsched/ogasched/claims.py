"""What ``optsched reproduce ogasched`` concludes from its runs (paper 003, Section IV):
OGASched's lead over the baselines (Fig. 2, Table III), the regret, the projection of Algorithm
1 as printed against the exact one, and the scale and utility figures (Figs. 3, 7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from optsched.claims import Claim, pct, read_csv, run_subproblems, shadow_claims

if TYPE_CHECKING:
    import pandas as pd

OGA_PAPER_GAINS = {"DRF": 0.1133, "FAIRNESS": 0.0775, "BINPACKING": 0.1389, "SPREADING": 0.1344}
# Table III of the paper: average reward per slot (columns: T, arrival probability, density).
OGA_TABLE3_COLUMNS = (("T", 1000), ("T", 2000), ("T", 5000), ("T", 10000), ("arrival_prob", 0.3), ("arrival_prob", 0.5),
                      ("arrival_prob", 0.7), ("arrival_prob", 0.9), ("density", 2.0), ("density", 2.5), ("density", 3.0))
OGA_TABLE3: dict[str, tuple[float, ...]] = {
    "OGASched": (2578.53, 2886.33, 2911.37, 3104.98, 1904.87, 2154.18, 3117.29, 2938.22, 2816.18, 2904.51, 3127.47),
    "DRF": (2422.47, 2493.02, 2449.23, 2497.85, 1364.53, 2086.59, 2503.01, 2755.41, 2417.08, 2786.94, 2795.42),
    "FAIRNESS": (2532.24, 2582.80, 2552.41, 2436.22, 1295.53, 1997.19, 2628.02, 2873.84, 2501.54, 2857.60, 2918.98),
    "BINPACKING": (2386.01, 2449.15, 2444.32, 2365.13, 1246.39, 1897.79, 2518.98, 2740.19, 2374.31, 2757.71, 2829.19),
    "SPREADING": (2382.01, 2466.71, 2436.60, 2362.88, 1250.67, 1888.06, 2519.37, 2737.93, 2382.87, 2766.07, 2836.37),
}


def _paper_table3_ratios() -> list[float]:
    return [OGA_TABLE3["OGASched"][j] / max(OGA_TABLE3[b][j] for b in OGA_TABLE3 if b != "OGASched")
            for j in range(len(OGA_TABLE3_COLUMNS))]


def ogasched_claims(d: Path, full: bool) -> list[Claim]:
    out = []
    summary = read_csv(d / "fig2" / "fig2_summary.csv").set_index("policy")

    cfg = json.loads((d / "fig2" / "fig2_rewards.json").read_text())["config"]
    setting = f"|R| = {cfg['n_nodes']}, |L| = {cfg['n_ports']}, T = {cfg['horizon']}"
    for base, paper in OGA_PAPER_GAINS.items():
        ratio = float(summary.loc[base, "ogasched_ratio"])
        out.append(Claim(
            f"OGASched's cumulative reward over {base} (Fig. 2 setting, {setting})",
            pct(ratio - 1),
            f"{pct(paper)} (abstract; trace-driven)",
            ("Close to the paper (within 5 points). " if abs(ratio - 1 - paper) < 0.05 else
             f"{'Larger' if ratio - 1 > paper else 'Smaller'} lead than the paper's. ")
            + {
                "DRF": "DRF and FAIRNESS see x(t) before allocating, as in the paper, and split capacity "
                       "sensibly; OGASched's lead comes from not over-allocating where utilities saturate.",
                "FAIRNESS": "As for DRF.",
                "BINPACKING": "Our BINPACKING/SPREADING give a job whole servers (nodes that fit the whole "
                              "request first), which pays the overhead term of (7) in full; the paper's trace "
                              "jobs and its (unshipped) baseline code differ.",
                "SPREADING": "As for BINPACKING.",
            }[base] + " Synthetic Table II scenario, not the paper's trace mix (not shipped; README).",
        ))
    t3 = read_csv(d / "table3" / "table3.csv")
    t3 = t3[~t3["panel"].isna()]
    best_counts = 0
    lost: list[str] = []
    columns = list(dict.fromkeys(zip(t3["panel"], t3["value"])))
    ratios = []
    for panel, value in columns:
        c = t3[(t3["panel"] == panel) & (t3["value"] == value)].set_index("policy")["average_reward"]
        others = c.drop("OGASched")
        best_counts += bool(c["OGASched"] >= others.max())
        ratios.append(c["OGASched"] / others.max())
        if c["OGASched"] < others.max():
            lost.append(f"{panel}={value:g} (to {others.idxmax()})")
    paper_ratios = _paper_table3_ratios()
    out.append(Claim(
        "Table III: columns where OGASched has the highest average reward",
        f"{best_counts} of {len(columns)}; OGASched / best baseline {min(ratios):.3f} - {max(ratios):.3f}",
        f"11 of 11 (\"whatever the parameter settings, OGASched always performs the best\"); "
        f"OGASched / best baseline {min(paper_ratios):.3f} - {max(paper_ratios):.3f}",
        (f"Lost at {', '.join(lost)}: where few jobs contend (low arrival probability, dense graphs) the "
         "reactive baselines, which see x(t) before allocating, serve arrivals in full, while OGASched competes "
         "with the best fixed allocation. " if lost else "Agrees. ")
        + "Absolute rewards are in other units (synthetic capacities and requests, not the paper's trace), so "
        "compare ratios and orders, not values.",
    ))
    t_panel = [(v, r) for (p, v), r in zip(columns, ratios) if p == "T"]
    if len(t_panel) >= 2:
        oga_t = t3[(t3["panel"] == "T") & (t3["policy"] == "OGASched")].set_index("value")["average_reward"]
        out.append(Claim(
            "Table III: OGASched's average reward grows with T",
            ", ".join(f"T={int(v)}: {oga_t.loc[v]:.0f}" for v, _ in t_panel),
            "positive correlation with T (2578.53, 2886.33, 2911.37, 3104.98 for T = 1000..10000)",
            f"Change over the T panel: {pct(oga_t.iloc[-1] / oga_t.iloc[0] - 1)}. Our learning curve "
            "flattens early (eta_0 = 25, decay 0.9999 on synthetic units): once R_T / T is small the average "
            "reward barely moves with T.",
        ))
    reg_path = d / "fig2" / "fig2_regret.csv"
    if reg_path.exists():
        reg = read_csv(reg_path)
        out.append(Claim(
            "Regret R_T = Q(y*_T) - Q(OGASched) (Theorem 1: sublinear)",
            ", ".join(f"T={int(r.T)}: R_T/sqrt(T) = {r.regret_over_sqrtT:.0f}" for r in reg.itertuples()),
            "O(sqrt(T)) with the step size of (53)",
            "With Table II's decaying step (not the theory step) R_T / sqrt(T) need not fall at these T; "
            "docs/ogasched.md shows it falling with step = \"theory\".",
        ))
    return out + ogasched_projection_claims(d) + shadow_claims(d, "fig2", "Fig. 2 run") + ogasched_scale_claims(d)


def ogasched_projection_claims(d: Path) -> list[Claim]:
    """OGASched end to end with the projection of Algorithm 1 as printed against the exact one."""
    out = []
    exact = read_csv(d / "fig2" / "fig2_summary.csv").set_index("policy")["cumulative_reward"]
    for label, how in (("fig2-paper", "as printed; a slot whose point leaves Y is projected exactly instead"),
                       ("fig2-paper-repair", "as printed, then clipped into the box and scaled into the capacities")):
        if not (d / label / "fig2_summary.csv").exists():
            continue
        mine = read_csv(d / label / "fig2_summary.csv").set_index("policy")["cumulative_reward"]
        st = next(iter(run_subproblems(d, label).get("solvers", [])), {})
        left = st.get("terminations", {}).get("error", 0)
        reg = {k: read_csv(d / k / "fig2_regret.csv")["regret"].iloc[-1] for k in ("fig2", label)
               if (d / k / "fig2_regret.csv").exists()}
        best_other = mine.drop("OGASched").max()
        out.append(Claim(
            f"OGASched with the projection of Algorithm 1 {how}",
            f"left Y in {left} of {st.get('solves', 0)} slots (fallbacks {st.get('fallbacks', 0)}); cumulative reward "
            f"{pct(mine['OGASched'] / exact['OGASched'] - 1)} against the exact projection"
            + (f"; regret {reg[label]:.3g} vs {reg['fig2']:.3g}" if len(reg) == 2 else "")
            + f"; vs the best baseline {pct(mine['OGASched'] / best_other - 1)}",
            "the projection step (32) is solved by the sort-based Algorithm 1",
            "Algorithm 1 as printed assumes the capacity binds and caps only the largest member "
            "(docs/ogasched_projection.md), so on this scenario its point leaves the box in every slot. "
            + ("The fallback rule makes the run identical to the exact one. " if label == "fig2-paper" else
               "The clipped point is feasible but not the projection: the gradient steps lose what the "
               "clipping throws away. "),
        ))
    return out


def ogasched_scale_claims(d: Path) -> list[Claim]:
    """Fig. 3 (scale in |R|, |L| and contention) and Fig. 7 (utility kinds) of paper 003."""
    out = []
    f3 = read_csv(d / "fig3" / "fig3_scale.csv")

    def panel(name: str) -> "pd.DataFrame":
        part = f3[f3["panel"] == name]
        return part.pivot_table(index="value", columns="policy", values="cumulative_reward", sort=False)

    def lead(t: "pd.DataFrame") -> "pd.Series":
        return t["OGASched"] / t.drop(columns="OGASched").max(axis=1)

    nodes, ports, cont = panel("n_nodes"), panel("n_ports"), panel("contention")
    ln, lp, lc = lead(nodes), lead(ports), lead(cont)
    fmt = lambda s: ", ".join(f"{k:g}: {v:.3f}" for k, v in s.items())  # noqa: E731
    out.append(Claim(
        "Fig. 3(a): OGASched / best baseline vs |R|",
        f"{fmt(ln)}; leads at {int((ln >= 1).sum())} of {len(ln)}; every policy's reward rises with |R|: "
        f"{'yes' if all(nodes[p].is_monotonic_increasing for p in nodes.columns) else 'no'}",
        "OGASched leads whatever |R|; all rewards grow with |R|; the lead first increases then decreases "
        "(fiercest contention at |R| in [128, 256])",
        f"Lead peaks at |R| = {ln.idxmax():g}. Synthetic Table II capacities, not the paper's trace.",
    ))
    out.append(Claim(
        "Fig. 3(b): OGASched / best baseline vs |L|, against its range over |R|",
        f"{fmt(lp)}; range {lp.max() - lp.min():.3f} over |L| vs {ln.max() - ln.min():.3f} over |R|",
        "|L| has a weaker impact than |R| (regret linear in |R|, sublinear in |L|)",
        "Agrees." if lp.max() - lp.min() < ln.max() - ln.min() else
        "Here |L| moves the lead more than |R|: each |L| redraws the job mix (requests, utilities), which changes "
        "the instance as much as its size.",
    ))
    peak = cont["OGASched"].idxmax()
    out.append(Claim(
        "Fig. 3(c): rewards and OGASched's lead vs the contention level",
        f"OGASched's reward peaks at contention {peak:g}; lead {fmt(lc)}",
        "rewards rise from 0.1 to 1, then fall; OGASched always performs the best",
        f"OGASched leads at {int((lc >= 1).sum())} of {len(lc)} levels. "
        + ("" if not (lc[lc.index <= 1] < 1).any() else
           f"Behind at {', '.join(f'{k:g}' for k in lc[(lc < 1) & (lc.index <= 1)].index)}: with little contention "
           "the reactive baselines see x(t) and serve every arrival in full, which is optimal when nothing "
           "contends (Table III's low arrival probability shows the same). ")
        + ("" if not (lc[lc.index > 1] < 1).any() else
           f"Behind at {', '.join(f'{k:g}' for k in lc[(lc < 1) & (lc.index > 1)].index)}: requests far beyond node "
           "capacity, where the paper too sees OGASched's superiority shrink. ")
        + (f"Our rewards keep rising up to {peak:g}: the synthetic capacities are larger relative to the requests "
           "than the paper's trace, so contention starts later." if peak > 1 else ""),
    ))
    f7 = read_csv(d / "fig7" / "fig7_utilities.csv").pivot_table(index="value", columns="policy",
                                                            values="cumulative_reward", sort=False)
    best = f7.idxmax(axis=1)
    out.append(Claim(
        "Fig. 7: best policy per utility kind (cumulative reward)",
        ", ".join(f"{u}: {b}" for u, b in best.items()) + f"; OGASched best for {int((best == 'OGASched').sum())} "
        f"of {len(best)}",
        "poly, log and reciprocal give far less reward than linear; OGASched stays superior for every utility",
        ("Diminishing utilities: agrees (linear gives the largest rewards). " if f7.loc["linear"].min() >= f7.drop(
            index="linear").max().max() else "Linear is not the largest for every policy here. ")
        + ("" if best.get("linear") == "OGASched" else
           f"With all-linear utilities {best.get('linear')} is ahead: there is no diminishing return for "
           "OGASched's spread allocation to exploit, and the reactive baselines fill requests in full. ")
        + (f"Baselines below zero ({', '.join(f'{u}' for u in f7.index if (f7.loc[u].drop('OGASched') < 0).any())}): "
           "their allocations pay the overhead term of (7) beyond the concave gain."
           if (f7.drop(columns="OGASched") < 0).any().any() else ""),
    ))
    return out


def ogasched_tables(d: Path) -> list[str]:
    t3 = read_csv(d / "table3" / "table3.csv")
    columns = list(dict.fromkeys(zip(t3["panel"], t3["value"])))
    head = ["policy"] + [f"{p}={v:g}" for p, v in columns]
    lines = ["Table III as measured (average reward per slot):", "", "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for policy in dict.fromkeys(t3["policy"]):
        cells = [policy]
        for p, v in columns:
            x = t3[(t3["panel"] == p) & (t3["value"] == v) & (t3["policy"] == policy)]["average_reward"]
            cells.append(f"{float(x.iloc[0]):.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    ratio_cells = []
    for p, v in columns:
        c = t3[(t3["panel"] == p) & (t3["value"] == v)].set_index("policy")["average_reward"]
        ratio_cells.append(f"{c['OGASched'] / c.drop('OGASched').max():.3f}")
    lines.append("| OGASched / best baseline | " + " | ".join(ratio_cells) + " |")
    ph = ["policy"] + [f"{p}={v:g}" for p, v in OGA_TABLE3_COLUMNS]
    lines += ["", "Table III as printed in the paper:", "", "| " + " | ".join(ph) + " |", "|" + "---|" * len(ph)]
    for policy, values in OGA_TABLE3.items():
        lines.append("| " + " | ".join([policy] + [f"{v:.2f}" for v in values]) + " |")
    lines.append("| OGASched / best baseline | " + " | ".join(f"{r:.3f}" for r in _paper_table3_ratios()) + " |")
    return lines + [""]
