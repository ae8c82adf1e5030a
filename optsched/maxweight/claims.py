"""What ``optsched reproduce maxweight`` concludes from its runs (paper 004, Section IV):
Algorithm 2's regions against Algorithm 1's (Figs. 3, 4), the symmetric requirement vs N
(Fig. 5), and the in-loop greedy-vs-exact set packings.

Every number is a mean over the run's replicates (independent seeds: sample paths of the
frames) with its 95 % t-interval (:func:`optsched.claims.estimate`); comparisons are paired by
replicate and stated only when the interval of the difference excludes 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from optsched.claims import (Claim, Estimate, estimate, over_replicates, read_csv, replicate_dirs, replication, run_config,
                             shadow_claims)


ALMOST_ALL = 0.9  # the paper's "almost all" of Alg. 1's requirements, as a share Alg. 2 must reach
PATHS = "sample paths (the network is fixed: a replicate draws the frames anew)"


def _region_shares(run_dir: Path, fig: str) -> dict[str, float]:
    """Per curve: the share of Alg. 1's achieved grid points that Alg. 2 achieves too."""
    df = read_csv(run_dir / f"{fig}_regions.csv")
    out = {}
    for curve, c in df.groupby("curve", sort=True):
        key = ["r1", "r2"]
        a1 = {tuple(r) for r in c[(c["policy"] == "Alg. 1 (exact)") & c["achieved"]][key].to_numpy()}
        a2 = {tuple(r) for r in c[(c["policy"] == "Alg. 2 (greedy)") & c["achieved"]][key].to_numpy()}
        out[str(curve)] = len(a1 & a2) / len(a1) if a1 else float("nan")  # Alg. 1 reached nothing: no share
        out[f"{curve} extra"] = len(a2 - a1)
    return out


def _repeated_curves(d: Path) -> list[tuple[str, str]]:
    """(Fig. 4 curve, Fig. 3 curve) pairs that are one experiment: the same network, seeds and
    frames give rows identical in every replicate (P_2j = 0.9 at P = 0.5 is Fig. 3's
    P[J_2j] = 0.5 at the defaults), so they are one piece of evidence, not two."""
    pairs = list(zip(replicate_dirs(d / "fig3"), replicate_dirs(d / "fig4")))
    frames = [(read_csv(a / "fig3_regions.csv"), read_csv(b / "fig4_regions.csv")) for a, b in pairs]

    def rows(df: Any, curve: str) -> Any:
        return df[df["curve"] == curve].drop(columns="curve").reset_index(drop=True)

    same = []
    for c4 in frames[0][1]["curve"].unique() if frames else ():
        for c3 in frames[0][0]["curve"].unique():
            if all(rows(f3, c3).equals(rows(f4, c4)) for f3, f4 in frames):
                same.append((str(c4), str(c3)))
    return same


def _symmetric(run_dir: Path) -> Any:
    f5 = read_csv(run_dir / "fig5_symmetric.csv")
    return f5[f5["policy"] == "Alg. 2 (greedy)"].pivot_table(index="n", columns="task_prob", values="max_symmetric_r")


def grid_difference(difference: Estimate, step: float) -> Estimate:
    """A paired difference of two r read off a grid of ``step``, its interval widened by one step:
    each r is the largest grid point reached, up to one step below the true threshold, so their
    difference is known to one step (equal grid values in every replicate gave a zero-width
    interval, and a constant one-step difference a "significant" order)."""
    if not difference.defined:
        return difference
    return Estimate(difference.mean, difference.half + step, difference.n, difference.dropped)


def maxweight_claims(d: Path, full: bool) -> list[Claim]:
    out = []
    repeated = _repeated_curves(d)
    for fig, what in (("fig3", "P[J_2j] = 0.3 / 0.5"), ("fig4", "P_2j = 0.7 / 0.9")):
        reps = over_replicates(d / fig, lambda r, fig=fig: _region_shares(r, fig))
        curves = [k for k in reps[0] if not k.endswith(" extra")]
        parts = [f"{curve}: {estimate([r[curve] for r in reps]).fmt('.1%')} of Alg. 1's points "
                 f"(Alg. 2 alone: {estimate([r[f'{curve} extra'] for r in reps]).fmt('.1f')} points)" for curve in curves]
        shares = [e for e in (estimate([r[c] for r in reps]) for c in curves) if e.n]
        low = min((e.low if e.defined else e.mean for e in shares), default=float("nan"))
        where = ("the lower end of every 95 % interval" if all(e.defined for e in shares) else
                 "the smallest share (no interval for a single replicate)")
        judged = (f"{'Agrees' if low >= ALMOST_ALL else 'Disagrees'}: {where} is {low:.1%}" if shares else
                  "No verdict: Alg. 1 reached no grid point, so there is no share")
        out.append(Claim(
            f"Fig. {fig[-1]}: requirements achieved by Alg. 2 among those of Alg. 1 ({what})",
            "; ".join(parts) + "".join(f"; {c4} is the network of Fig. 3's {c3} with the same seeds (identical rows): "
                                       "one experiment in both figures" for c4, c3 in repeated if fig == "fig4")
            + f"; {replication(len(reps), full, PATHS)}",
            "Alg. 2 fulfils almost all requirements within R_max achievable by Alg. 1",
            f"{judged} ('almost all' read as at least {ALMOST_ALL:.0%}). A grid point "
            "counts when both rates are "
            ">= r_i - 0.01 over the frames; points on the region's edge flip with the sample path, which is the "
            "spread of the intervals.",
        ))
    gs = over_replicates(d / "fig5", _symmetric)
    g = gs[0]
    step = float(run_config(d / "fig5").get("fig5_r_step", 0.0))
    on_grid = lambda e: grid_difference(e, step)  # noqa: E731
    probs = sorted(g.columns)
    n_small, n_large = int(g.index.min()), int(g.index.max())
    lo_p, hi_p = probs[0], probs[-1]

    def r_est(n: int, p: float) -> Any:
        return estimate([x.loc[n, p] for x in gs])

    def order(n: int) -> str:
        diff = on_grid(estimate([x.loc[n, lo_p] - x.loc[n, hi_p] for x in gs]))  # lower P minus higher P
        if not diff.defined:  # one replicate: no interval, and no order shown (it read "tie" 9 grid steps apart)
            return "no interval"
        if not diff.excludes_zero():
            return "tie"
        return "lower P higher" if diff.mean > 0 else "lower P lower"

    orders = {int(n): order(int(n)) for n in g.index}
    said = lambda n: ("no verdict on the order: no interval" if orders[n] == "no interval"  # noqa: E731
                      else f"{orders[n]} r at P = {lo_p:g} than at {hi_p:g}")
    row = lambda n: ", ".join(r_est(n, p).fmt(".3f") for p in probs)  # noqa: E731
    reversed_ = [n for n, o in orders.items() if n >= 5 and o == "lower P higher"]
    judged = [n for n, o in orders.items() if n >= 5 and o != "no interval"]
    out.append(Claim(
        f"Fig. 5: largest symmetric r by Alg. 2 for P[J_ij] = {', '.join(map(str, probs))}",
        f"N = {n_small}: {row(n_small)} ({said(n_small)}); N = {n_large}: "
        f"{row(n_large)} ({said(n_large)}); order reversed (lower P, higher r; the 95 % interval of the paired "
        f"difference, widened by the grid's step, excludes 0) at N = {reversed_ or 'none'} of N >= 5 = {judged}"
        + ("" if len(judged) == sum(n >= 5 for n in orders) else " with an interval") + "; "
        f"{replication(len(gs), full, PATHS)}",
        "N = 2: lower task probability, lower r; N >= 5: lower task probability, higher r (interference); "
        "r decreases super-linearly in N",
        f"The crossing is where interference starts to dominate; r is read off a grid of step {step:g} "
        "(fig5_r_step), so every paired difference's interval is widened by one step, and close curves tie "
        "('tie': the widened interval includes 0).",
    ))
    ratios = {p: estimate([x.loc[n_large, p] / max(x.loc[n_small, p], 1e-9) for x in gs]) for p in probs}
    sizes = [int(n) for n in g.index]
    steps = {(p, a, b): on_grid(estimate([x.loc[b, p] - x.loc[a, p] for x in gs]))
             for p in probs for a, b in zip(sizes, sizes[1:])}
    rises = [f"P={p:g}: N={a}->{b}" for (p, a, b), e in steps.items() if e.above_zero()]
    all_judged = all(e.defined for e in steps.values())
    out.append(Claim(
        "Fig. 5: r falls with N",
        f"r(N={n_large}) / r(N={n_small}) = " + ", ".join(f"P={p:g}: {e.fmt('.2f')}" for p, e in ratios.items())
        + f"; r rises from one N to the next (paired 95 % interval, widened by the grid's step, above 0) at "
          f"{', '.join(rises) or 'none'}"
        + f"; {replication(len(gs), full, PATHS)}",
        "decreases super-linearly with the number of applications",
        "Shape only: the paper gives no numbers for Fig. 5. "
        + ("Every ratio's interval lies below 1" if all(e.defined and e.high < 1 for e in ratios.values()) else
           "Not every ratio's interval lies below 1" if all(e.defined for e in ratios.values()) else
           "No verdict on the ratios: not every one has an interval (fewer than 2 sample paths)")
        + (" and r never rises from one N to the next." if not rises and all_judged else
           "; whether r rises from one N to the next has no interval to tell." if not rises else
           ", but r rises between some neighbouring N: at a low P a job is rare at small N (few jobs to complete), "
           "so r can first rise with N before interference takes over."),
    ))
    return out + shadow_claims(d, "fig3", "Fig. 3 run, Algorithms 1 and 2")
