"""``optsched reproduce PAPER [--full]``: regenerate each paper's figures and tables, and put
the measured headline numbers beside what the paper states.

Each paper (:data:`PAPERS`: ``maxweight`` 004, ``esdp`` 000, ``ogasched`` 003, ``onsocmax``
002; ``all`` runs the four) is a list of :class:`Run` s, each an experiment of the registry
(:func:`optsched.experiments.get_experiment`) with one of its presets. By default a run
applies its ``reduced`` overrides (shorter horizons, fewer frames, repeats or instances:
about 2 minutes for all four papers); with ``--full`` it runs the preset as it stands, the
paper's scale (minutes too: the compiled kernels make it cheap). ``--set KEY=VALUE``
overrides a config key in every run of the paper whose config has that key (an unknown key
is an error).

Every run writes its CSV + PNG + JSON into ``OUT/PAPER/PRESET/``. The paper's ``claims``
function then reads those CSVs back (it never re-implements an experiment) and returns
rows of (result, measured, paper, difference explained), written as ``OUT/PAPER/claims.csv``
and ``OUT/PAPER/report.md``; ``all`` also writes ``OUT/report.md`` with every paper's
section. The paper statements come from ``../shared/papers`` (README.md and the texts).
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Run:
    """One experiment preset; ``reduced`` overrides make it the default (minutes) scale.

    ``settings`` are overrides in both modes (e.g. the backend of the policy's subproblem),
    ``label`` the output subdirectory (default: the preset); with ``shadow`` every
    ``shadow_every``-th subproblem of the policies is also solved by those backends
    (``shadow.csv``, ``shadow.png``; the trajectory is the same)."""

    experiment: str
    preset: str
    reduced: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    shadow: tuple[str, ...] = ()
    shadow_every: int = 1

    @property
    def subdir(self) -> str:
        return self.label or self.preset


@dataclass(frozen=True)
class Claim:
    """One line of a report: a result, the measured number, the paper's, and why they differ."""

    result: str
    measured: str
    paper: str
    note: str


ClaimsFn = Callable[[Path, bool], list[Claim]]


@dataclass(frozen=True)
class Paper:
    name: str
    title: str
    runs: tuple[Run, ...]
    claims: ClaimsFn
    tables: Callable[[Path], list[str]] = lambda _d: []


PAPERS: dict[str, Paper] = {}


def register_paper(name: str, title: str, runs: tuple[Run, ...]) -> Callable[[ClaimsFn], ClaimsFn]:
    def deco(fn: ClaimsFn) -> ClaimsFn:
        if name in PAPERS:
            raise RuntimeError(f"paper {name!r} registered twice")
        PAPERS[name] = Paper(name, title, runs, fn)
        return fn

    return deco


def _tables(name: str) -> Callable[[Callable[[Path], list[str]]], Callable[[Path], list[str]]]:
    """Attach extra Markdown lines (a measured table) to a registered paper's report."""

    def deco(fn: Callable[[Path], list[str]]) -> Callable[[Path], list[str]]:
        PAPERS[name] = dataclasses.replace(PAPERS[name], tables=fn)
        return fn

    return deco


def _read(path: Path) -> "pd.DataFrame":
    import pandas as pd

    return pd.read_csv(path)


def _pct(x: float) -> str:
    return f"{100 * x:+.1f}%"


def _subproblems(d: Path, run_dir: str) -> dict[str, Any]:
    """The subproblem summary a run's metadata JSON carries (solvers, shadow, fallbacks)."""
    import json

    metas = sorted((d / run_dir).glob("*.json"))
    return json.loads(metas[-1].read_text()).get("subproblems", {}) if metas else {}


def _fmt(x: float | None) -> str:
    return "-" if x is None else ("0" if x == 0 else f"{x:.1e}")


def shadow_claims(d: Path, run_dir: str, what: str) -> list[Claim]:
    """In-loop heuristic vs exact: per policy solver, every backend's gap to the best bound of
    each subproblem the policy met, and its runtime against the policy's own backend."""
    rows = _subproblems(d, run_dir).get("shadow", [])
    out = []
    for solver in dict.fromkeys(r["solver"] for r in rows):
        mine = [r for r in rows if r["solver"] == solver]
        own = next(r for r in mine if r["role"] == "policy")
        parts = [f"{r['backend']}{' (policy)' if r['role'] == 'policy' else ''}: gap median {_fmt(r['median_gap_to_best_bound'])}, "
                 f"max {_fmt(r['max_gap_to_best_bound'])}, runtime x{r['runtime_vs_policy_backend']:.3g}"
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


# --- paper 004: max-weight scheduling ---------------------------------------------------------
MW_REDUCED = {"frames": 5000}


@register_paper(
    "maxweight",
    "Paper 004: Scheduling Stochastic Real-Time Jobs in Unreliable Workers (Section IV, Figs. 3-5)",
    (
        Run("maxweight", "fig3", MW_REDUCED, shadow=("highs", "cpsat"), shadow_every=200),
        Run("maxweight", "fig4", MW_REDUCED),
        Run("maxweight", "fig5", {"frames": 3000, "fig5_r_step": 0.01}),
    ),
)
def maxweight_claims(d: Path, full: bool) -> list[Claim]:
    out = []
    for fig, what in (("fig3", "P[J_2j] = 0.3 / 0.5"), ("fig4", "P_2j = 0.7 / 0.9")):
        df = _read(d / fig / f"{fig}_regions.csv")
        parts = []
        for curve, c in df.groupby("curve", sort=True):
            key = ["r1", "r2"]
            a1 = {tuple(r) for r in c[(c["policy"] == "Alg. 1 (exact)") & c["achieved"]][key].to_numpy()}
            a2 = {tuple(r) for r in c[(c["policy"] == "Alg. 2 (greedy)") & c["achieved"]][key].to_numpy()}
            share = len(a1 & a2) / max(1, len(a1))
            parts.append(f"{curve}: {share:.1%} of Alg. 1's {len(a1)} points ({len(a2 - a1)} extra)")
        out.append(Claim(
            f"Fig. {fig[-1]}: requirements achieved by Alg. 2 among those of Alg. 1 ({what})",
            "; ".join(parts),
            "Alg. 2 fulfils almost all requirements within R_max achievable by Alg. 1",
            "Agrees. A grid point counts when both rates are >= r_i - 0.01 over the frames; points on the region's "
            "edge flip with the sample path (the paper: 10,000 frames; the reduced scale has fewer), so the "
            "shares move by a few points between runs.",
        ))
    f5 = _read(d / "fig5" / "fig5_symmetric.csv")
    g = f5[f5["policy"] == "Alg. 2 (greedy)"].pivot_table(index="n", columns="task_prob", values="max_symmetric_r")
    probs = sorted(g.columns)
    n_small, n_large = int(g.index.min()), int(g.index.max())
    row = lambda n: ", ".join(f"{g.loc[n, p]:.3f}" for p in probs)  # noqa: E731
    low_first = bool(g.loc[n_small].is_monotonic_increasing)
    n5 = [n for n in g.index if n >= 5]
    reversed_ = [int(n) for n in n5 if g.loc[n].is_monotonic_decreasing and g.loc[n].iloc[0] > g.loc[n].iloc[-1]]
    out.append(Claim(
        f"Fig. 5: largest symmetric r by Alg. 2 for P[J_ij] = {', '.join(map(str, probs))}",
        f"N = {n_small}: {row(n_small)} (increasing in P: {'yes' if low_first else 'no'}); N = {n_large}: "
        f"{row(n_large)}; order reversed (lower P, higher r) at N = {reversed_ or 'none'} of N >= 5 = "
        f"{[int(n) for n in n5]}",
        "N = 2: lower task probability, lower r; N >= 5: lower task probability, higher r (interference); "
        "r decreases super-linearly in N",
        "The crossing is where interference starts to dominate; r is read off a grid (fig5_r_step), so "
        "close curves can tie.",
    ))
    rising = [f"P={p:g}" for p in probs if not g[p].is_monotonic_decreasing]
    out.append(Claim(
        "Fig. 5: r falls with N",
        f"r(N={n_large}) / r(N={n_small}) = "
        + ", ".join(f"{g.loc[n_large, p] / max(g.loc[n_small, p], 1e-9):.2f}" for p in probs)
        + (f"; not monotone for {', '.join(rising)} (" + "; ".join(
            f"P={p:g}: " + ", ".join(f"{g.loc[n, p]:.2f}" for n in g.index) for p in probs
            if f"P={p:g}" in rising) + ")" if rising else "; non-increasing for every P"),
        "decreases super-linearly with the number of applications",
        "Shape only: the paper gives no numbers for Fig. 5. At the lowest P a job is rare at N = 2 (few "
        "jobs to complete), so r can first rise with N before interference takes over.",
    ))
    return out + shadow_claims(d, "fig3", "Fig. 3 run, Algorithms 1 and 2")


# --- paper 000: ESDP --------------------------------------------------------------------------
ESDP_REDUCED = {"horizon": 1000}  # the paper's T is 2000
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


@register_paper(
    "esdp",
    "Paper 000: Learning to Dispatch Multi-Server Jobs in Bipartite Graphs with Unknown Service Rates (ESDP)",
    (
        Run("esdp", "fig2-4", ESDP_REDUCED, shadow=("escb_oa", "dp"), shadow_every=50),
        Run("esdp", "exact-index", {"horizon": 300}),
        Run("esdp", "fig5", {"horizon": 100}),
        *(Run("esdp", f"fig{k}", ESDP_REDUCED) for k in range(6, 11)),
    ),
)
def esdp_claims(d: Path, full: bool) -> list[Claim]:
    df = _read(d / "fig2-4" / "esdp_asw.csv")
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
            f"{_pct(gain)} at T = {T}; at most {_pct(late.max() - 1)} over t >= {max(1, T // 10)}",
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
    df = _read(path)
    T = int(df["t"].max())
    final = df[df["t"] == T].groupby("policy")["asw"].mean()
    stats = {x["solver"]: x for x in _subproblems(d, "exact-index").get("solvers", [])}
    exact = stats.get("ESDP-exact", {})
    return [Claim(
        "ESDP with the paper's AESCB route vs ESDP solving the index P3 exactly (escb_oa), same instance",
        f"ASW at T = {T}: AESCB {final['ESDP']:.1f}, exact {final['ESDP-exact']:.1f} "
        f"({_pct(final['ESDP'] / final['ESDP-exact'] - 1)}); exact-index fallbacks {exact.get('fallbacks', 0)}",
        "the AESCB route is within (|x| + sqrt|x|) / xi of P3 (Theorem 1) and keeps the regret sublinear",
        "The in-loop gaps of the route on each slot's P3 are in the Figs. 2-4 shadow row above; a small gap "
        "per slot changes which channels are explored, so the two trajectories differ slightly.",
    )]


def _sweep(d: Path, preset: str, stem: str, key: str) -> tuple["pd.DataFrame", "pd.DataFrame"]:
    """An ESDP sweep's mean ASW and CPU seconds per (value, policy), values in file order."""
    df = _read(d / preset / f"{stem}.csv")
    t = _read(d / preset / f"{stem}_timing.csv")
    order = list(dict.fromkeys(df[key]))
    asw = df.groupby([key, "policy"])["asw"].mean().unstack("policy").reindex(order)
    cpu = t.groupby([key, "policy"])["cpu_s"].mean().unstack("policy").reindex(order)
    return asw, cpu


def esdp_sweep_claims(d: Path) -> list[Claim]:
    """Figs. 5-10 (Section 4.3 of paper 000)."""
    out = []
    size = _read(d / "fig5" / "esdp_overhead_n_servers.csv")
    secs = _read(d / "fig5" / "esdp_overhead_n_servers_timing.csv")
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
        "growth " + ", ".join(f"{p} {_pct(online[p].iloc[-1] / online[p].iloc[0] - 1)} (+{growth[p]:.0f})"
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
        f"ASW spread {_pct(e.max() / e.min() - 1)}; CPU s per run " + ", ".join(f"{v:.2f}" for v in c)
        + f" (spread {c.max() / c.min():.2f}x)",
        "little effect on performance, strong effect on the computation overhead",
        ("Performance: agrees. " if e.max() / e.min() - 1 < 0.02 else "Performance differs by more than 2%. ")
        + "Overhead: delta_t sets xi and so the budget range S = xi m; our DP solves every budget in one table "
        "whose size the capacity states set, so the sequences change its cost little (docs/esdp.md).",
    ))
    asw, _ = _sweep(d, "fig8", "esdp_sweep_g", "g")
    reg = _read(d / "fig8" / "esdp_sweep_g.csv").groupby("g")["regret"].mean().reindex(asw.index)
    out.append(Claim(
        "Fig. 8: ESDP under the g(t) settings " + ", ".join(map(str, asw.index)),
        "ASW " + ", ".join(f"{v:.0f}" for v in asw["ESDP"]) + "; regret " + ", ".join(f"{v:.0f}" for v in reg)
        + f"; best: {asw['ESDP'].idxmax()}",
        "the third setting, g(t) = ln(t+1), has an overwhelming advantage",
        ("Agrees: " if asw["ESDP"].idxmax() == asw.index[-1] else "Disagrees: ")
        + f"the smallest g explores least; its regret is {reg.iloc[0] / max(reg.iloc[-1], 1e-9):.1f}x lower than "
        "the default's, while the ASW differs by "
        f"{_pct(asw['ESDP'].iloc[-1] / asw['ESDP'].iloc[0] - 1)} (ASW includes the oracle's share, which all share).",
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
    edges = _read(d / "fig10" / "esdp_sweep_edge_prob.csv").groupby("edge_prob")["n_edges"].first().reindex(asw.index)
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


# --- paper 003: OGASched ----------------------------------------------------------------------
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


@register_paper(
    "ogasched",
    "Paper 003: Scheduling Multi-Server Jobs With Sublinear Regrets via Online Learning (OGASched)",
    (
        Run("ogasched", "fig2", {"horizon": 2000, "regret_points": 2}, shadow=("highs", "cvxpy"), shadow_every=250),
        Run("ogasched", "fig2", {"horizon": 2000, "regret_points": 2}, settings={"backend": "paper"}, label="fig2-paper"),
        Run("ogasched", "fig2", {"horizon": 2000, "regret_points": 2},
            settings={"backend": "paper", "options": {"repair": True}}, label="fig2-paper-repair"),
        Run("ogasched", "fig3", {"horizon": 500, "fig3_nodes": [64, 128, 256, 512]}),
        Run("ogasched", "fig7", {"horizon": 1000}),
        Run("ogasched", "table3", {"horizon": 1000, "table3_horizons": [500, 1000, 2000]}),
    ),
)
def ogasched_claims(d: Path, full: bool) -> list[Claim]:
    out = []
    summary = _read(d / "fig2" / "fig2_summary.csv").set_index("policy")
    import json

    cfg = json.loads((d / "fig2" / "metadata.json").read_text())["config"]
    setting = f"|R| = {cfg['n_nodes']}, |L| = {cfg['n_ports']}, T = {cfg['horizon']}"
    for base, paper in OGA_PAPER_GAINS.items():
        ratio = float(summary.loc[base, "ogasched_ratio"])
        out.append(Claim(
            f"OGASched's cumulative reward over {base} (Fig. 2 setting, {setting})",
            _pct(ratio - 1),
            f"{_pct(paper)} (abstract; trace-driven)",
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
    t3 = _read(d / "table3" / "table3.csv")
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
            f"Change over the T panel: {_pct(oga_t.iloc[-1] / oga_t.iloc[0] - 1)}. Our learning curve "
            "flattens early (eta_0 = 25, decay 0.9999 on synthetic units): once R_T / T is small the average "
            "reward barely moves with T.",
        ))
    reg_path = d / "fig2" / "fig2_regret.csv"
    if reg_path.exists():
        reg = _read(reg_path)
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
    exact = _read(d / "fig2" / "fig2_summary.csv").set_index("policy")["cumulative_reward"]
    for label, how in (("fig2-paper", "as printed; a slot whose point leaves Y is projected exactly instead"),
                       ("fig2-paper-repair", "as printed, then clipped into the box and scaled into the capacities")):
        if not (d / label / "fig2_summary.csv").exists():
            continue
        mine = _read(d / label / "fig2_summary.csv").set_index("policy")["cumulative_reward"]
        st = next(iter(_subproblems(d, label).get("solvers", [])), {})
        left = st.get("terminations", {}).get("error", 0)
        reg = {k: _read(d / k / "fig2_regret.csv")["regret"].iloc[-1] for k in ("fig2", label)
               if (d / k / "fig2_regret.csv").exists()}
        best_other = mine.drop("OGASched").max()
        out.append(Claim(
            f"OGASched with the projection of Algorithm 1 {how}",
            f"left Y in {left} of {st.get('solves', 0)} slots (fallbacks {st.get('fallbacks', 0)}); cumulative reward "
            f"{_pct(mine['OGASched'] / exact['OGASched'] - 1)} against the exact projection"
            + (f"; regret {reg[label]:.3g} vs {reg['fig2']:.3g}" if len(reg) == 2 else "")
            + f"; vs the best baseline {_pct(mine['OGASched'] / best_other - 1)}",
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
    f3 = _read(d / "fig3" / "fig3_scale.csv")

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
    f7 = _read(d / "fig7" / "fig7_utilities.csv").pivot_table(index="value", columns="policy",
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


@_tables("ogasched")
def ogasched_tables(d: Path) -> list[str]:
    t3 = _read(d / "table3" / "table3.csv")
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


# --- paper 002: ONSOCMAX ----------------------------------------------------------------------
@register_paper(
    "onsocmax",
    "Paper 002: Theoretically Guaranteed Online Workload Dispatching for Deadline-Aware Multi-Server Jobs (ONSOCMAX)",
    (
        Run("onsocmax", "fig4", {"values": [1.0, 2.0, 4.0, 8.0], "repeats": 8}, shadow=("cvxpy", "alm"),
            shadow_every=20),
        Run("onsocmax", "fig4", {"values": [2.0, 8.0], "repeats": 3},
            settings={"backend": "alm", "values": [1.0, 2.0, 4.0, 8.0], "repeats": 8}, label="fig4-alm"),
        Run("onsocmax", "fig5", {"values": [10.0, 18.0, 30.0], "repeats": 8}),
        Run("onsocmax", "fig6", {"values": [1.0, 2.0, 4.0, 12.0], "repeats": 8}),
        Run("onsocmax", "ratio", {"instances": 150}),
        Run("onsocmax", "ratio_small", {"instances": 400}),
    ),
)
def onsocmax_claims(d: Path, full: bool) -> list[Claim]:
    out = []
    for preset, stem in (("ratio", "onsocmax_ratio_section_iv"), ("ratio_small", "onsocmax_ratio_small")):
        r = _read(d / preset / f"{stem}.csv")
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
        df = _read(d / preset / f"{stem}.csv")
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
    kkt = _read(d / "fig4" / "onsocmax_duration.csv")
    alm = _read(alm_path)
    both = (kkt[kkt["policy"] == "ONSOCMAX"].set_index(keys)["welfare"].to_frame("kkt")
            .join(alm[alm["policy"] == "ONSOCMAX"].set_index(keys)["welfare"].to_frame("alm"), how="inner"))
    rel = both["alm"] / both["kkt"]
    stats = _subproblems(d, "fig4-alm").get("solvers", [])
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


# --- running ------------------------------------------------------------------------------------
def _config_keys(*runs: Run) -> set[str]:
    """The config keys of the runs' experiments."""
    from optsched.experiments import get_experiment

    return {f.name for run in runs for f in dataclasses.fields(get_experiment(run.experiment).config_type)}


def _settings_for(run: Run, full: bool, settings: Mapping[str, Any]) -> dict[str, Any]:
    fields = _config_keys(run)
    merged = dict(run.settings) if full else {**run.settings, **run.reduced}
    merged.update({k: v for k, v in settings.items() if k in fields})
    return merged


def _check_settings(paper: Paper, settings: Mapping[str, Any]) -> None:
    known = _config_keys(*paper.runs)
    for key in settings:
        if key not in known:
            raise ValueError(f"set: no run of {paper.name} has a config key {key!r}")


def report_markdown(paper: Paper, claims: list[Claim], *, full: bool, runs: list[dict[str, Any]],
                    extra: list[str]) -> str:
    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    lines = [f"## {paper.title}", "",
             f"Scale: {'paper (--full)' if full else 'reduced (default; --full for the paper scale)'}.", "",
             "| run | settings | wall s | CPU s | load avg (1 min) |", "|---|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r['experiment']} --preset {r['preset']} ({r['label']}) | {cell(str(r['settings']) or '-')} | "
                     f"{r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['load']:.2f} |")
    lines += ["", "| result | measured | paper | difference explained |", "|---|---|---|---|"]
    for c in claims:
        lines.append(f"| {cell(c.result)} | {cell(c.measured)} | {cell(c.paper)} | {cell(c.note)} |")
    lines += [""] + extra
    return "\n".join(lines) + "\n"


def reproduce_paper(name: str, *, out: Path, full: bool = False, settings: Mapping[str, Any] | None = None,
                    log: Callable[[str], None] = print) -> tuple[list[Path], str]:
    """Run one paper's experiments and write claims.csv + report.md; (paths, report text)."""
    import pandas as pd

    from optsched.experiments import get_experiment
    from optsched.observe import Observer
    from optsched.artifacts import write_csv, write_text

    paper = PAPERS[name]
    settings = dict(settings or {})
    _check_settings(paper, settings)
    base = Path(out) / name
    paths: list[Path] = []
    runs = []
    for run in paper.runs:
        exp = get_experiment(run.experiment)
        merged = _settings_for(run, full, settings)
        cfg = exp.make_config(merged, run.preset)
        log(f"reproduce {name}: {run.experiment} --preset {run.preset} {merged or ''}")
        wall, cpu = time.perf_counter(), time.process_time()
        with Observer(shadow=run.shadow, shadow_every=run.shadow_every) as observer:
            paths += exp.run(cfg, base / run.subdir)
        paths += observer.write(base / run.subdir)
        runs.append({"experiment": run.experiment, "preset": run.preset, "label": run.subdir, "settings": merged,
                     "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
                     "load": os.getloadavg()[0]})
    claims = paper.claims(base, full)
    paths.append(write_csv(pd.DataFrame([dataclasses.asdict(c) for c in claims]), base / "claims.csv"))
    text = report_markdown(paper, claims, full=full, runs=runs, extra=paper.tables(base))
    paths.append(write_text(base / "report.md", f"# Reproduction report\n\n{text}"))
    return paths, text


def reproduce(paper: str, *, out: Path, full: bool = False, settings: Mapping[str, Any] | None = None,
              log: Callable[[str], None] = print) -> list[Path]:
    """``optsched reproduce PAPER``: one paper, or ``all`` (also writes ``OUT/report.md``)."""
    if paper != "all" and paper not in PAPERS:
        raise ValueError(f"paper: unknown paper {paper!r} (known: {', '.join(PAPERS)}, all)")
    names = list(PAPERS) if paper == "all" else [paper]
    if paper == "all" and settings:
        unknown = sorted(set(settings) - _config_keys(*(run for p in PAPERS.values() for run in p.runs)))
        if unknown:
            raise ValueError(f"set: no run has a config key {unknown[0]!r}")
    start, load0 = time.perf_counter(), os.getloadavg()[0]
    paths: list[Path] = []
    sections = []
    for name in names:
        keys = _config_keys(*PAPERS[name].runs)
        own = {k: v for k, v in (settings or {}).items() if paper != "all" or k in keys}
        p, text = reproduce_paper(name, out=out, full=full, settings=own, log=log)
        paths += p
        sections.append(text)
    if paper == "all":
        from optsched.artifacts import write_text

        head = (f"# Reproduction report: all papers\n\nWall time {time.perf_counter() - start:.0f} s; load average "
                f"{load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end (2 cores, shared).\n\n")
        paths.append(write_text(Path(out) / "report.md", head + "\n".join(sections)))
    return paths

