"""Section IV of paper 004: achievable-requirement regions (Fig. 3, Fig. 4), the largest
symmetric requirement versus N (Fig. 5), and a single simulation run.

A requirement r counts as achieved when every application's completed-job rate over the
frames is at least r_i - tolerance (the paper: 10,000 frames, tolerance 0.01). Every
requirement of a grid is simulated side by side on the same sample path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

import numpy as np

from optsched.config import StrictConfig, probability, require, within_memory
from optsched.maxweight.network import JobNetwork, NetworkEnv
from optsched.maxweight.policy import MaxWeightPolicy
from optsched.policy import evaluate
from optsched.artifacts import pyplot, write_artifacts

# policy label -> the config key naming its set-packing backend
POLICIES = {"Alg. 1 (exact)": "exact_backend", "Alg. 2 (greedy)": "backend"}


@dataclass(frozen=True)
class MaxWeightConfig(StrictConfig):
    study: Literal["fig3", "fig4", "fig5", "simulate"] = "fig3"
    seed: int = 0
    frames: int = 10_000
    tolerance: float = 0.01
    # Alg. 2's set-packing backend ("" = greedy, the paper's Algorithm 2) and its options;
    # Alg. 1's exact backend
    backend: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    exact_backend: str = "enumerate"
    # Fig. 3 / Fig. 4 (N = M = 2) on a grid of requirements [0, grid_max]^2
    grid_step: float = 0.02
    grid_max: float = 0.7
    fig3_app1_task_prob: float = 0.5
    fig3_app2_task_probs: tuple[float, ...] = (0.3, 0.5)
    fig34_completion_prob: float = 0.9
    fig4_task_prob: float = 0.5
    fig4_worker2_completion_probs: tuple[float, ...] = (0.7, 0.9)
    # Fig. 5: N = M applications and workers, symmetric requirement r, Alg. 2
    fig5_sizes: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8)
    fig5_task_probs: tuple[float, ...] = (0.3, 0.4, 0.5)
    fig5_completion_prob: float = 0.9
    fig5_r_step: float = 0.005
    fig5_exact_up_to: int = 0
    # simulate: one network, one requirement vector, rates over time
    n_apps: int = 2
    n_workers: int = 2
    task_prob: float = 0.5
    completion_prob: float = 0.9
    requirement: tuple[float, ...] = field(default=(0.25, 0.25), metadata={"vector": True})

    def check(self) -> None:
        require(self.frames >= 1, "frames", "must be >= 1")
        require(0 <= self.tolerance < 1, "tolerance", "must be in [0, 1)")
        require(0 < self.grid_step <= self.grid_max, "grid_step", "must be in (0, grid_max]")
        require(self.grid_step >= GRID_DECIMAL, "grid_step", f"must be >= {GRID_DECIMAL:g}: the grid's points are "
                "rounded to 10 decimals, and finer steps repeated them (1e-12 made 10^6 rows of 11 values)")
        require(0 < self.fig5_r_step <= 1, "fig5_r_step", "must be in (0, 1]")
        require(all(n >= 1 for n in self.fig5_sizes), "fig5_sizes", "sizes must be >= 1")
        require(self.n_apps >= 1 and self.n_workers >= 1, "n_apps", "n_apps and n_workers must be >= 1")
        require(len(self.requirement) == self.n_apps, "requirement", f"needs {self.n_apps} entries")
        require(all(r >= 0 for r in self.requirement), "requirement", "entries must be >= 0")
        # a virtual queue grows by r_i a frame and is a set packing's weight: r within the settings'
        # 1e12 (config.SETTING_MAGNITUDE) and frames within memory keep it inside the models' 1e100
        # evaluate() stacks every frame's completions: frames x requirement rows x applications;
        # only the study that runs is sized (a simulate run was refused for the Fig. 3/4 grid)
        n5 = max(self.fig5_sizes, default=1)
        if self.study in ("fig3", "fig4"):
            grid_rows = float(grid_axis_points(self.grid_max, self.grid_step)) ** 2
            within_memory("grid_step", self.frames * grid_rows * 2, "the Fig. 3/4 rates (frames x grid points x 2)")
        if self.study == "fig5":
            r_rows = min(1.0 / self.fig5_r_step, 1e300) + 2
            within_memory("fig5_r_step", self.frames * r_rows * n5, "the Fig. 5 rates (frames x r grid x applications)")
            within_memory("fig5_sizes", n5 * n5, "the largest Fig. 5 network (N x N)")
        if self.study == "simulate":
            within_memory("frames", self.frames * len(POLICIES) * self.n_apps, "the per-frame rates (frames x policies x applications)")
        within_memory("n_workers", self.n_apps * self.n_workers, "the network (n_apps x n_workers)")
        for key in ("fig3_app1_task_prob", "fig34_completion_prob", "fig4_task_prob", "fig5_completion_prob",
                    "task_prob", "completion_prob"):
            probability(getattr(self, key), key)
        for key in ("fig3_app2_task_probs", "fig4_worker2_completion_probs", "fig5_task_probs"):
            for p in getattr(self, key):
                probability(p, key)
        from optsched.maxweight.policy import DEFAULT_BACKEND
        from optsched.models.set_packing import SetPackingBatch
        from optsched.solve import check_backend

        # a backend that does not fit the frame's set packing is refused before any frame runs
        check_backend(SetPackingBatch, self.backend or DEFAULT_BACKEND, self.options)
        exact = check_backend(SetPackingBatch, self.exact_backend)
        require(exact.EXACT, "exact_backend", f"{self.exact_backend!r} is not an exact backend")


def make_policy(cfg: MaxWeightConfig, label: str, requirements: np.ndarray) -> MaxWeightPolicy:
    """The policy ``label`` of ``POLICIES`` with the config's backend (and options, for Alg. 2)."""
    key = POLICIES[label]
    options = cfg.options if key == "backend" else {}
    return MaxWeightPolicy(requirements, backend=getattr(cfg, key) or None, options=options, name=label)


def achieved_rates(net: JobNetwork, requirements: np.ndarray, label: str, cfg: MaxWeightConfig) -> np.ndarray:
    """Completed-job rate of each app for each requirement row, over ``cfg.frames`` frames."""
    env = NetworkEnv(net, len(requirements))
    policy = make_policy(cfg, label, requirements)
    out = evaluate(env, policy, cfg.frames, seed=cfg.seed, progress=f"{policy.backend} N={net.n_apps}")
    return out["completed"].mean(axis=0)


GRID_DECIMAL = 1e-9  # the Fig. 3/4 grid: multiples of grid_step up to grid_max (+ this slack), rounded to 10 decimals


def grid_axis_points(grid_max: float, grid_step: float) -> int:
    """The points on each axis of :func:`_grid`: those of ``arange(0, grid_max + GRID_DECIMAL,
    grid_step)`` (the count ``check`` sizes memory by, the same the grid holds)."""
    return max(1, math.ceil((grid_max + GRID_DECIMAL) / grid_step))


def _grid(cfg: MaxWeightConfig) -> np.ndarray:
    g = np.round(np.arange(grid_axis_points(cfg.grid_max, cfg.grid_step)) * cfg.grid_step, 10)
    return np.array([(a, b) for a in g for b in g])


def region_rows(curves: dict[str, JobNetwork], cfg: MaxWeightConfig) -> "object":
    import pandas as pd

    grid = _grid(cfg)
    frames = []
    for curve, net in curves.items():
        for policy in POLICIES:
            rate = achieved_rates(net, grid, policy, cfg)
            frames.append(
                pd.DataFrame(
                    {
                        "curve": curve,
                        "policy": policy,
                        "r1": grid[:, 0],
                        "r2": grid[:, 1],
                        "rate1": rate[:, 0],
                        "rate2": rate[:, 1],
                        "achieved": (rate >= grid - cfg.tolerance).all(axis=1),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def region_boundary(df: "object") -> "object":
    """For each curve, policy and r1: the largest achieved r2 (the region's upper edge)."""
    ok = df[df["achieved"]]
    return ok.groupby(["curve", "policy", "r1"], as_index=False)["r2"].max().rename(columns={"r2": "max_r2"})


def plot_regions(boundary: "object", title: str) -> "object":
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    styles = {"Alg. 1 (exact)": "-", "Alg. 2 (greedy)": "--"}
    for i, ((curve, policy), part) in enumerate(boundary.groupby(["curve", "policy"], sort=True)):
        ax.step(part["r1"], part["max_r2"], where="post", linestyle=styles[policy], color=f"C{i // 2}",
                label=f"{policy}, {curve}")
    ax.set_xlabel("requirement r1")
    ax.set_ylabel("largest achievable r2")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def _write(cfg: MaxWeightConfig, out: Path, stem: str, table: "object", fig: "object",
           tables: Mapping[str, Any] | None = None) -> list[Path]:
    return write_artifacts(out, stem, table=table, figure=fig, experiment=f"maxweight/{stem}", seed=cfg.seed, config=cfg,
                           tables=tables)


def run_fig3(cfg: MaxWeightConfig, out: Path) -> list[Path]:
    curves = {}
    for p2 in cfg.fig3_app2_task_probs:
        tp = np.array([[cfg.fig3_app1_task_prob] * 2, [p2] * 2])
        curves[f"P[J2j]={p2}"] = JobNetwork(tp, np.full((2, 2), cfg.fig34_completion_prob))
    df = region_rows(curves, cfg)
    bnd = region_boundary(df)
    return _write(cfg, out, "fig3_regions", df, plot_regions(bnd, "Fig. 3: varying P[J_2j = 1]"), tables={"fig3_boundary.csv": bnd})


def run_fig4(cfg: MaxWeightConfig, out: Path) -> list[Path]:
    curves = {}
    for p2 in cfg.fig4_worker2_completion_probs:
        cp = np.array([[cfg.fig34_completion_prob] * 2, [p2] * 2])
        curves[f"P2j={p2}"] = JobNetwork(np.full((2, 2), cfg.fig4_task_prob), cp)
    df = region_rows(curves, cfg)
    bnd = region_boundary(df)
    return _write(cfg, out, "fig4_regions", df, plot_regions(bnd, "Fig. 4: varying P_2j"), tables={"fig4_boundary.csv": bnd})


def run_fig5(cfg: MaxWeightConfig, out: Path) -> list[Path]:
    plt = pyplot()
    import pandas as pd

    r_grid = np.round(np.arange(0.0, 1.0 + 1e-9, cfg.fig5_r_step), 10)
    rows = []
    for p in cfg.fig5_task_probs:
        for n in cfg.fig5_sizes:
            net = JobNetwork.uniform(n, n, p, cfg.fig5_completion_prob)
            reqs = np.repeat(r_grid[:, None], n, axis=1)
            policies = ["Alg. 2 (greedy)"] + (["Alg. 1 (exact)"] if n <= cfg.fig5_exact_up_to else [])
            for policy in policies:
                rate = achieved_rates(net, reqs, policy, cfg)
                ok = (rate >= reqs - cfg.tolerance).all(axis=1)
                rows.append({"task_prob": p, "n": n, "policy": policy,
                             "max_symmetric_r": float(r_grid[ok].max()) if ok.any() else 0.0})
    df = pd.DataFrame(rows)
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    for (p, policy), part in df.groupby(["task_prob", "policy"]):
        ax.plot(part["n"], part["max_symmetric_r"], marker="o", linestyle="-" if "greedy" in policy else ":",
                label=f"{policy}, P[Jij]={p}")
    ax.set_xlabel("number of applications N (= workers M)")
    ax.set_ylabel("largest achievable symmetric r")
    ax.set_title("Fig. 5")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _write(cfg, out, "fig5_symmetric", df, fig)


def run_simulate(cfg: MaxWeightConfig, out: Path) -> list[Path]:
    plt = pyplot()
    import pandas as pd

    net = JobNetwork.uniform(cfg.n_apps, cfg.n_workers, cfg.task_prob, cfg.completion_prob)
    req = np.asarray(cfg.requirement)[None, :]
    frames = np.arange(1, cfg.frames + 1)
    parts = []
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    # Alg. 1 (exact) solid and thick, Alg. 2 (greedy) dashed with markers on top: distinguishable
    # where the two coincide
    styles = [{"linestyle": "-", "lw": 3.0, "alpha": 0.55}, {"linestyle": "--", "lw": 1.3, "marker": "o", "ms": 3,
                                                           "markevery": 0.1}]
    for j, policy in enumerate(POLICIES):
        env = NetworkEnv(net, 1)
        out_ = evaluate(env, make_policy(cfg, policy, req), cfg.frames, seed=cfg.seed, progress=policy)
        running = np.cumsum(out_["completed"][:, 0, :], axis=0) / frames[:, None]
        for i in range(cfg.n_apps):
            parts.append(pd.DataFrame({"policy": policy, "app": i + 1, "frame": frames, "rate": running[:, i]}))
            ax.plot(frames, running[:, i], color=f"C{i}", label=f"{policy}, app {i + 1}", **styles[j % 2])
    for i, r in enumerate(cfg.requirement):
        ax.axhline(r, color=f"C{i}", lw=0.8, linestyle=":", label=f"requirement r_{i + 1} = {r:g}")
    ax.set_xscale("log")
    ax.set_xlabel("frame (log scale)")
    ax.set_ylabel("completed jobs per frame (running mean)")
    ax.set_title(f"Max-weight scheduling: {cfg.n_apps} applications, {cfg.n_workers} workers, {cfg.frames:,} frames")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    df = pd.concat(parts, ignore_index=True)
    return _write(cfg, out, "simulate_rates", df, fig)


# --- optsched sweep ---------------------------------------------------------------------------
def sweep_prepare(settings: dict[str, Any]) -> dict[str, Any]:
    """A sweep point without ``requirement`` asks 0.25 per application."""
    if "requirement" not in settings:
        settings = {**settings, "requirement": [0.25] * int(settings.get("n_apps", 2))}
    return settings


# config keys no sweep row reads (the uniform network of the config; the figures' own networks and grids are ``run``'s): a sweep refuses them
SWEEP_UNUSED = frozenset({"study", "grid_step", "grid_max", "fig3_app1_task_prob", "fig3_app2_task_probs",
                          "fig34_completion_prob", "fig4_task_prob", "fig4_worker2_completion_probs",
                          "fig5_sizes", "fig5_task_probs", "fig5_completion_prob", "fig5_exact_up_to"})


def sweep_metrics(cfg: MaxWeightConfig, policy: str) -> dict[str, Any]:
    """One sweep row: ``min_rate``, ``mean_rate`` (completed-job rates at ``requirement`` on
    ``JobNetwork.uniform(n_apps, n_workers, task_prob, completion_prob)``), ``achieved``, and
    ``max_symmetric_r``: the largest achieved symmetric r on the ``fig5_r_step`` grid (same
    sample path)."""
    net = JobNetwork.uniform(cfg.n_apps, cfg.n_workers, cfg.task_prob, cfg.completion_prob)
    r_grid = np.round(np.arange(0.0, 1.0 + 1e-9, cfg.fig5_r_step), 10)
    reqs = np.vstack([np.asarray(cfg.requirement)[None, :], np.repeat(r_grid[:, None], cfg.n_apps, axis=1)])
    rate = achieved_rates(net, reqs, policy, cfg)
    ok = (rate >= reqs - cfg.tolerance).all(axis=1)
    sym = r_grid[ok[1:]]
    return {"min_rate": float(rate[0].min()), "mean_rate": float(rate[0].mean()), "achieved": bool(ok[0]),
            "max_symmetric_r": float(sym.max()) if sym.size else 0.0}


STUDIES: dict[str, Callable[[MaxWeightConfig, Path], list[Path]]] = {
    "fig3": run_fig3,
    "fig4": run_fig4,
    "fig5": run_fig5,
    "simulate": run_simulate,
}

PRESETS = {
    "fig3": {"study": "fig3"},
    "fig4": {"study": "fig4"},
    "fig5": {"study": "fig5"},
    "fig5-small": {"study": "fig5", "fig5_sizes": [2, 3, 4, 5], "frames": 3000, "fig5_r_step": 0.01},
    "simulate": {"study": "simulate"},
    "quick": {"study": "fig3", "frames": 2000, "grid_step": 0.05},
}


def run(cfg: MaxWeightConfig, out: Path) -> list[Path]:
    return STUDIES[cfg.study](cfg, Path(out))
