"""``optsched run ogasched``: the experiments of Section IV of paper 003.

Studies (config ``study``; ``"all"`` runs the four), each writing CSV + PNG into the output directory:

- ``fig2``   average and cumulative reward over t of OGASched and the four baselines, the
             ratio of OGASched to each, and (``offline = true``) the regret
             R_T = Q(y*_T) - Q(OGASched) at ``regret_points`` horizons (y* of (10) by the
             ``offline_backend``: the certified first-order solver, or cvxpy).
- ``fig3``   cumulative reward against |R|, |L| and the contention level.
- ``fig7``   cumulative reward for each utility kind of (54).
- ``table3`` average reward against T, the arrival probability and the graph density.

Every table comes with its PNG and a JSON of the run's metadata (seed, config, package
versions, what the policies' subproblems did).
"""

from __future__ import annotations

import math

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

import numpy as np

from optsched.config import StrictConfig, probability, require, within_memory
from optsched.files import user_directory
from optsched.ogasched.baselines import BASELINES, BaselinePolicy
from optsched.ogasched.env import SchedulingEnv
from optsched.ogasched.policy import OGASched
from optsched.ogasched.scenario import Scenario, synthetic_scenario
from optsched.ogasched.utilities import UTILITY_KINDS
from optsched.policy import evaluate
from optsched.artifacts import pyplot, write_artifacts



@dataclass(frozen=True)
class OgaConfig(StrictConfig):
    seed: int = 0
    study: Literal["fig2", "fig3", "fig7", "table3", "all"] = "fig2"
    source: Literal["synthetic", "alibaba"] = "synthetic"
    trace_dir: str = ""
    batch_ports: int = 5
    copies: int = 1
    n_ports: int = 10
    n_nodes: int = 32
    n_resources: int = 6
    horizon: int = 1000
    sweep_horizon: int = 0  # horizon of fig3 / fig7 / table3 runs; 0 = ``horizon``
    arrival_prob: float = 0.7
    density: float = 2.5
    contention: float = 10.0
    alpha_low: float = 1.0
    alpha_high: float = 1.5
    beta_low: float = 0.3
    beta_high: float = 0.5
    utility: str = "mixed"
    eta0: float = 25.0
    decay: float = 0.9999
    step: Literal["decay", "theory"] = "decay"
    # OGASched's projection (32): backend ("" = fast, the exact kernel) and its options
    backend: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    offline: bool = True
    offline_backend: str = "stationary_alm"  # backend of y* (10): the first-order one or "cvxpy"
    regret_points: int = 5
    fig3_nodes: tuple[int, ...] = (16, 32, 64)
    fig3_ports: tuple[int, ...] = (5, 10, 20)
    fig3_contention: tuple[float, ...] = (0.1, 1.0, 5.0, 10.0, 20.0)
    fig7_utilities: tuple[str, ...] = ("linear", "log", "reciprocal", "poly", "mixed")
    table3_horizons: tuple[int, ...] = (250, 500, 1000)
    table3_probs: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9)
    table3_densities: tuple[float, ...] = (2.0, 2.5, 3.0)

    def check(self) -> None:
        require(self.source != "alibaba" or bool(self.trace_dir), "trace_dir", "the alibaba source needs a directory")
        require(self.source == "alibaba" or not self.trace_dir, "trace_dir",  # it was never read, not even checked
                "only the alibaba source reads a trace (source is synthetic)")
        require(self.batch_ports >= 0, "batch_ports", "must be in [0, n_ports]")
        require(self.sweep_horizon >= 0, "sweep_horizon", "must be >= 0")
        for name in ("n_ports", "n_nodes", "n_resources", "horizon", "copies", "regret_points"):
            require(getattr(self, name) >= 1, name, "must be >= 1")
        require(self.source != "alibaba" or 0 <= self.batch_ports <= self.n_ports, "batch_ports",
                "must be in [0, n_ports]")
        probability(self.arrival_prob, "arrival_prob")
        require(self.density >= 1.0, "density", "must be >= 1")
        require(self.contention > 0, "contention", "must be > 0")
        require(0 < self.alpha_low <= self.alpha_high, "alpha_low", "need 0 < alpha_low <= alpha_high")
        require(0 <= self.beta_low <= self.beta_high, "beta_low", "need 0 <= beta_low <= beta_high")
        require(0 < self.eta0 < math.inf, "eta0", "must be a finite step size > 0")
        require(0 < self.decay <= 1, "decay", "must be in (0, 1]: the step eta0 decay^t shrinks")
        for u in (self.utility, *self.fig7_utilities):
            require(u == "mixed" or u in UTILITY_KINDS, "utility", f"unknown utility kind {u!r}")
        for p in self.table3_probs:
            probability(p, "table3_probs")
        require(all(v >= 1 for v in (*self.fig3_nodes, *self.fig3_ports, *self.table3_horizons)), "fig3_nodes",
                "sizes and horizons must be >= 1")
        require(all(v > 0 for v in self.fig3_contention), "fig3_contention", "must be > 0")
        require(all(v >= 1 for v in self.table3_densities), "table3_densities", "must be >= 1")
        horizon = max(self.horizon, self.sweep_horizon, *self.table3_horizons)
        ports = max(self.n_ports, *self.fig3_ports) * self.copies
        nodes = max(self.n_nodes, *self.fig3_nodes)
        within_memory("horizon", horizon * ports, "the arrivals (horizon x n_ports x copies)")
        within_memory("n_nodes", nodes * (ports + self.n_resources), "the graph and node arrays (n_nodes x (n_ports x copies + n_resources))")
        within_memory("regret_points", self.regret_points, "the regret horizons")
        within_memory("n_resources", ports * nodes * self.n_resources,
                      "a slot's allocation y (n_ports x copies x n_nodes x n_resources at most)")
        from optsched.models.capacity_projection import CapacityProjection
        from optsched.models.stationary_allocation import StationaryAllocation
        from optsched.ogasched.policy import DEFAULT_BACKEND
        from optsched.solve import check_backend

        check_backend(CapacityProjection, self.backend or DEFAULT_BACKEND, self.options)
        check_backend(StationaryAllocation, self.offline_backend)  # a name that does not solve y* is refused
        if self.trace_dir:  # last: every setting is checked before the file system is asked
            user_directory("config.trace_dir", self.trace_dir)


# --- building scenarios and policies ---------------------------------------------------------
def _synthetic(cfg: OgaConfig, rng: np.random.Generator) -> tuple[Scenario, np.ndarray | None]:
    scn = synthetic_scenario(
        rng, n_ports=cfg.n_ports, n_nodes=cfg.n_nodes, n_resources=cfg.n_resources, density=cfg.density,
        contention=cfg.contention, alpha_range=(cfg.alpha_low, cfg.alpha_high),
        beta_range=(cfg.beta_low, cfg.beta_high), utility=cfg.utility,
    )
    return scn, None


def _alibaba(cfg: OgaConfig, rng: np.random.Generator) -> tuple[Scenario, np.ndarray | None]:
    from optsched.ogasched.traces import alibaba_scenario

    ts = alibaba_scenario(
        cfg.trace_dir, rng=rng, n_ports=cfg.n_ports, batch_ports=cfg.batch_ports, n_nodes=cfg.n_nodes,
        slots=cfg.horizon, density=cfg.density, contention=cfg.contention,
        alpha_range=(cfg.alpha_low, cfg.alpha_high), beta_range=(cfg.beta_low, cfg.beta_high), utility=cfg.utility,
    )
    return ts.scenario, ts.counts


SOURCES: dict[str, Callable[[OgaConfig, np.random.Generator], tuple[Scenario, np.ndarray | None]]] = {
    "synthetic": _synthetic,
    "alibaba": _alibaba,
}


def build_env(cfg: OgaConfig, seed: int) -> SchedulingEnv:
    scn, counts = SOURCES[cfg.source](cfg, np.random.default_rng(seed))
    if cfg.copies > 1:
        scn = scn.replicate(cfg.copies)
    return SchedulingEnv(scn, horizon=cfg.horizon, arrival_prob=cfg.arrival_prob, trace_counts=counts)


def policies(cfg: OgaConfig) -> list[Any]:
    oga = OGASched(eta0=cfg.eta0, decay=cfg.decay, step=cfg.step, horizon=cfg.horizon, backend=cfg.backend or None,
                   options=cfg.options)
    return [oga, *(BaselinePolicy(name) for name in BASELINES)]


def run_all(
    cfg: OgaConfig, seed: int, label: str = ""
) -> tuple[SchedulingEnv, dict[str, dict[str, np.ndarray]], dict[str, tuple[float, float]]]:
    """Every policy on the same scenario and arrivals (common random numbers); (wall, CPU) seconds."""
    env = build_env(cfg, seed)
    out, times = {}, {}
    for pol in policies(cfg):
        start, cpu = time.perf_counter(), time.process_time()
        out[pol.name] = evaluate(env, pol, cfg.horizon, seed=seed + 1, progress=f"{label}{pol.name}")
        times[pol.name] = (time.perf_counter() - start, time.process_time() - cpu)
    return env, out, times


# --- plotting helpers --------------------------------------------------------------------------
def _figure(ncols: int) -> tuple[Any, Any]:
    fig, axes = pyplot().subplots(1, ncols, figsize=(5.2 * ncols, 3.8), squeeze=False)
    return fig, axes[0]


def _artifacts(cfg: OgaConfig, out_dir: Path, stem: str, table: Any, fig: Any,
               tables: Mapping[str, Any] | None = None) -> list[Path]:
    return write_artifacts(out_dir, stem, table=table, figure=fig, experiment=f"ogasched/{stem}", seed=cfg.seed,
                           config=cfg, tables=tables)


# --- studies ---------------------------------------------------------------------------------------
def study_fig2(cfg: OgaConfig, out_dir: Path) -> list[Path]:
    import pandas as pd

    from optsched.ogasched.offline import regret_curve

    env, out, times = run_all(cfg, cfg.seed, "fig2 ")
    t = np.arange(1, cfg.horizon + 1)
    rows = {"t": t}
    for name, rec in out.items():
        cum = np.cumsum(rec["reward"])
        rows[f"{name}_reward"] = rec["reward"]
        rows[f"{name}_average"] = cum / t
        rows[f"{name}_cumulative"] = cum
    oga_cum = rows["OGASched_cumulative"]
    for name in out:
        if name != "OGASched":
            base = rows[f"{name}_cumulative"]
            with np.errstate(divide="ignore", invalid="ignore"):  # a ratio to a total that is not positive: empty
                rows[f"ratio_OGASched_to_{name}"] = np.where(base > 0, oga_cum / base, np.nan)
    oga_total = out["OGASched"]["reward"].sum()
    summary = pd.DataFrame([
        {"policy": name, "cumulative_reward": rec["reward"].sum(), "average_reward": rec["reward"].mean(),
         "average_gain": rec["gain"].mean(), "average_overhead": rec["overhead"].mean(),
         "ogasched_ratio": oga_total / rec["reward"].sum() if rec["reward"].sum() > 0 else np.nan}
        for name, rec in out.items()
    ])
    # measured seconds differ from run to run: kept out of the (byte-reproducible) results
    timing = pd.DataFrame([{"policy": name, "runtime_s": wall, "cpu_s": cpu} for name, (wall, cpu) in times.items()])
    paths: list[Path] = []
    if cfg.offline:
        # more points than slots name every slot (10^8 of them took 1.8 GB); at least T = 1
        n = min(cfg.regret_points, cfg.horizon)
        points = np.unique(np.maximum(np.linspace(cfg.horizon / n, cfg.horizon, n).astype(int), 1))
        reg = pd.DataFrame(regret_curve(env.scenario, env.arrivals, out["OGASched"]["reward"], points,
                                        cfg.offline_backend))
        reg["regret_over_sqrtT"] = reg["regret"] / np.sqrt(reg["T"])
        fig, (ax,) = _figure(1)
        ax.plot(reg["T"], reg["regret"], "o-", label="R_T = Q(y*_T) - Q(OGASched)")
        ax.plot(reg["T"], reg["regret"].iloc[-1] * np.sqrt(reg["T"] / reg["T"].iloc[-1]), "--", label="c sqrt(T)")
        ax.set(xlabel="T", ylabel="regret", title="Regret against the best stationary y* (10)")
        ax.legend(fontsize=8)
        paths += _artifacts(cfg, out_dir, "fig2_regret", reg, fig)
    fig, (ax1, ax2) = _figure(2)
    for name, rec in out.items():
        ax1.plot(t, rows[f"{name}_average"], label=name)
        ax2.plot(t, rows[f"{name}_cumulative"], label=name)
    ax1.set(xlabel="t", ylabel="average reward until t", title="Fig. 2(a)")
    ax2.set(xlabel="t", ylabel="cumulative reward", title="Fig. 2(b)")
    ax1.legend(fontsize=8)
    # written last: its JSON's subproblem summary covers the policies' and y*'s solves
    return paths + _artifacts(cfg, out_dir, "fig2_rewards", pd.DataFrame(rows), fig,
                              tables={"fig2_summary.csv": summary, "fig2_timing.csv": timing})


def _sweep(cfg: OgaConfig, out_dir: Path, stem: str, settings: list[tuple[str, Any, dict[str, Any]]],
           metric: str) -> list[Path]:
    """Run every policy under each (panel, value, overrides); one row per (panel, value, policy).

    ``setting`` numbers the distinct configs: a panel's value that leaves the config as another
    column has it (the default, in every panel that varies one of its keys) is that column's
    run, shown again, not a new experiment (claims count distinct settings by it)."""
    import pandas as pd
    from tqdm import tqdm

    rows = []
    runs: list[tuple[OgaConfig, dict[str, dict[str, np.ndarray]]]] = []
    for panel, value, overrides in tqdm(settings, desc=stem, leave=False, disable=None):  # no bar off a terminal
        base = {"horizon": cfg.sweep_horizon} if cfg.sweep_horizon else {}
        sub = dataclasses.replace(cfg, **{**base, **overrides})
        setting = next((i for i, (seen, _) in enumerate(runs) if seen == sub), len(runs))
        if setting == len(runs):
            runs.append((sub, run_all(sub, cfg.seed, f"{stem} {panel}={value} ")[1]))
        out = runs[setting][1]
        oga = out["OGASched"]["reward"].sum()
        for name, rec in out.items():
            total = rec["reward"].sum()
            rows.append({"panel": panel, "value": value, "setting": setting, "policy": name, "cumulative_reward": total,
                         "average_reward": rec["reward"].mean(), "average_gain": rec["gain"].mean(),
                         "average_overhead": rec["overhead"].mean(),
                         "ogasched_ratio": oga / total if total else np.nan})
    df = pd.DataFrame(rows)
    panels = list(dict.fromkeys(df["panel"]))
    fig, axes = _figure(len(panels))
    for ax, panel in zip(axes, panels):
        sub = df[df["panel"] == panel]
        values = list(dict.fromkeys(sub["value"]))
        pos = np.arange(len(values))
        names = list(dict.fromkeys(sub["policy"]))
        width = 0.8 / len(names)
        for j, name in enumerate(names):
            ys = [sub[(sub["policy"] == name) & (sub["value"] == v)][metric].iloc[0] for v in values]
            ax.bar(pos + j * width, ys, width, label=name)
        ax.set_xticks(pos + 0.4 - width / 2, [_tick(v) for v in values])
        ax.set(xlabel=PANEL_LABELS.get(panel, panel), ylabel=METRIC_LABELS.get(metric, metric.replace("_", " ")),
               title=f"{STEM_TITLES.get(stem, stem)}: {PANEL_LABELS.get(panel, panel)}")
        ax.grid(alpha=0.3, axis="y")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return _artifacts(cfg, out_dir, stem, df, fig)


STEM_TITLES = {"fig3_scale": "Fig. 3", "fig7_utilities": "Fig. 7", "table3": "Table III"}
PANEL_LABELS = {"T": "horizon T (slots)", "arrival_prob": "arrival probability", "density": "graph density",
                "n_nodes": "|R| (nodes)", "n_ports": "|L| (ports)", "contention": "contention level",
                "utility": "utility kind"}
METRIC_LABELS = {"average_reward": "average reward per slot (synthetic units)",
                 "cumulative_reward": "cumulative reward (synthetic units)"}


def _tick(value: Any) -> str:
    """A setting as a tick label: whole numbers without a decimal point."""
    if isinstance(value, (int, float, np.integer, np.floating)) and float(value).is_integer():
        return str(int(value))
    return f"{value:g}" if isinstance(value, (float, np.floating)) else str(value)


def study_fig3(cfg: OgaConfig, out_dir: Path) -> list[Path]:
    settings = [("n_nodes", v, {"n_nodes": v}) for v in cfg.fig3_nodes]
    settings += [("n_ports", v, {"n_ports": v, "batch_ports": min(cfg.batch_ports, v)}) for v in cfg.fig3_ports]
    settings += [("contention", v, {"contention": v}) for v in cfg.fig3_contention]
    return _sweep(cfg, out_dir, "fig3_scale", settings, "cumulative_reward")


def study_fig7(cfg: OgaConfig, out_dir: Path) -> list[Path]:
    settings = [("utility", u, {"utility": u}) for u in cfg.fig7_utilities]
    return _sweep(cfg, out_dir, "fig7_utilities", settings, "cumulative_reward")


def study_table3(cfg: OgaConfig, out_dir: Path) -> list[Path]:
    settings = [("T", v, {"horizon": v}) for v in cfg.table3_horizons]
    settings += [("arrival_prob", v, {"arrival_prob": v}) for v in cfg.table3_probs]
    settings += [("density", v, {"density": v}) for v in cfg.table3_densities]
    return _sweep(cfg, out_dir, "table3", settings, "average_reward")


# --- optsched sweep ---------------------------------------------------------------------------
# config keys no sweep row reads (the config's one scenario and horizon; the figures' axes and regret points are ``run``'s): a sweep refuses them
SWEEP_UNUSED = frozenset({"study", "sweep_horizon", "regret_points", "fig3_nodes", "fig3_ports", "fig3_contention",
                          "fig7_utilities", "table3_horizons", "table3_densities", "table3_probs"})


def sweep_metrics(cfg: OgaConfig, policy: str) -> dict[str, Any]:
    """One sweep row: ``cumulative_reward``, ``average_reward``, ``average_gain``,
    ``average_overhead`` of ``policy`` on the config's scenario, and ``regret`` Q(y*_T) - Q(policy)
    (with ``offline = true``, else NaN); the seeds of :func:`run_all`."""
    env = build_env(cfg, cfg.seed)
    (pol,) = [p for p in policies(cfg) if p.name == policy]
    rec = evaluate(env, pol, cfg.horizon, seed=cfg.seed + 1)  # the seeds of experiments.run_all
    regret = float("nan")
    if cfg.offline:
        from optsched.ogasched.offline import regret_curve

        regret = float(regret_curve(env.scenario, env.arrivals, rec["reward"], np.array([cfg.horizon]),
                                    cfg.offline_backend)[0]["regret"])
    return {"cumulative_reward": float(rec["reward"].sum()), "average_reward": float(rec["reward"].mean()),
            "average_gain": float(rec["gain"].mean()), "average_overhead": float(rec["overhead"].mean()),
            "regret": regret}


STUDIES: dict[str, Callable[[OgaConfig, Path], list[Path]]] = {
    "fig2": study_fig2, "fig3": study_fig3, "fig7": study_fig7, "table3": study_table3,
}

PAPER_SWEEPS: dict[str, Any] = {
    "fig3_nodes": (64, 128, 256, 512, 1024),
    "fig3_ports": (5, 10, 20, 40, 80),
    "fig3_contention": (0.1, 0.5, 1.0, 5.0, 10.0, 20.0),
    "table3_horizons": (1000, 2000, 5000, 10000),
    "table3_densities": (2.0, 2.5, 3.0),
}
PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "fig2": {"study": "fig2", "n_nodes": 128, "horizon": 8000},
    "fig3": {"study": "fig3", "n_nodes": 128, "horizon": 2000, **{k: PAPER_SWEEPS[k] for k in
                                                                     ("fig3_nodes", "fig3_ports", "fig3_contention")}},
    "fig7": {"study": "fig7", "n_nodes": 128, "horizon": 2000},
    "table3": {"study": "table3", "n_nodes": 128, "horizon": 2000,
               **{k: PAPER_SWEEPS[k] for k in ("table3_horizons", "table3_densities")}},
    # Section IV-C, Fig. 5's caption: beta in [0.01, 0.015] and contention level 5
    "large": {"study": "fig2", "n_ports": 100, "n_nodes": 1024, "n_resources": 6, "horizon": 10000,
              "contention": 5.0, "beta_low": 0.01, "beta_high": 0.015, "regret_points": 1},
    # ten times the paper's largest setting (Fig. 5): |L| = 1000, |R| = 10,000
    "huge": {"study": "fig2", "n_ports": 1000, "n_nodes": 10000, "n_resources": 6, "horizon": 10000,
             "contention": 5.0, "beta_low": 0.01, "beta_high": 0.015, "regret_points": 1},
    "paper": {"study": "all", "n_nodes": 128, "horizon": 8000, "sweep_horizon": 2000, **PAPER_SWEEPS},
}


def run(cfg: OgaConfig, out_dir: Path) -> list[Path]:
    paths: list[Path] = []
    for study in STUDIES if cfg.study == "all" else (cfg.study,):
        paths += STUDIES[study](cfg, Path(out_dir))
    return paths
