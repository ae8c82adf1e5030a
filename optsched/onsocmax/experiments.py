"""Section IV of paper 002: social welfare of ONSOCMAX, MAX-FIRST and EQUAL-SHARE against the
offline optimum of P1 (Figs. 4-6), and the measured ratio OPT / online against alpha-hat.

``study = "sweep"`` varies one Section IV setting (``sweep``) over ``values``, for every
utility kind, ``repeats`` instances per point (instance j uses the same random stream at
every point and kind: common random numbers):

    duration    mean service duration (slots)                       Fig. 4
    workload    mean workload rho (std = mean / 6, i.e. N(18, 3) at 18)  Fig. 5
    congestion  capacity divided by the value: C ~ N(20 / c, 2 / c)   Fig. 6

``study = "ratio"`` draws ``instances`` random instances and records OPT / online next to
alpha-hat (Theorem 2 claims OPT / online <= alpha-hat). ``family = "section_iv"``: the
Section IV generator with a random kind, congestion c ~ U[1, max_congestion] and
a ~ U[1, a_high], a_high ~ U[1, max_a_high] (so upsilon / iota, hence alpha-hat, varies);
``family = "small"``: :func:`small_instance`, tiny meshes with jobs in increasing order of
value. ``serve_ties = false`` runs ONSOCMAX without its tie rule (see
:mod:`optsched.onsocmax.policy`; a rule of the continuous variant: the integral one has none). OPT is certified: ``opt`` is the welfare of a feasible point and
``opt_bound`` a weak-duality upper bound (:func:`~optsched.onsocmax.offline.certified_optimum`).
With ``integral`` (Section III-D), every job is non-partitionable: online P3 and offline P1
are 0-1 programs solved by HiGHS (baselines are fractional, so they are left out).
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Mapping

import numpy as np

from optsched.config import StrictConfig, require, within_memory
from optsched.onsocmax.baselines import EqualShare, MaxFirst
from optsched.models.mesh import MeshInstance, resource_units
from optsched.models.mesh import MeshGenerator
from optsched.onsocmax.env import replay
from optsched.models.onsocmax_offline import OfflineWelfareIntegral
from optsched.onsocmax.offline import certified_optimum
from optsched.onsocmax.policy import DEFAULT_BACKENDS, Onsocmax
from optsched.models.prices import alpha_hat
from optsched.models.utilities import KINDS
from optsched.artifacts import pyplot, write_artifacts
from optsched.result import SolveFailed

# Sweep name -> the generator settings a value stands for.
SWEEPS: dict[str, Callable[[float], dict[str, float]]] = {
    "duration": lambda v: {"mean_duration": v},
    "workload": lambda v: {"rho_mean": v, "rho_std": v / 6.0},
    "congestion": lambda v: {"capacity_mean": 20.0 / v, "capacity_std": 2.0 / v},
}
SWEEP_LABELS = {
    "duration": "mean service duration (slots)",
    "workload": "mean workload size rho",
    "congestion": "congestion level c (capacity / c)",
}

def onsocmax_policy(cfg: "OnsocmaxConfig") -> Onsocmax:
    """ONSOCMAX with the config's P3 backend, its options, the variant and the tie rule."""
    return Onsocmax(backend=cfg.backend or None, options=cfg.options, integral=cfg.integral,
                    serve_ties=cfg.serve_ties and not cfg.integral)


POLICIES: dict[str, Callable[["OnsocmaxConfig"], Any]] = {
    "ONSOCMAX": onsocmax_policy, "MAX-FIRST": lambda cfg: MaxFirst(), "EQUAL-SHARE": lambda cfg: EqualShare(),
}


@dataclass(frozen=True)
class OnsocmaxConfig(StrictConfig):
    study: Literal["sweep", "ratio"] = "sweep"
    seed: int = 0
    kinds: tuple[str, ...] = ("linear", "log", "sqrt")
    # Section IV instance size (the other generator settings keep their defaults)
    n_nodes: int = 10
    n_slots: int = 24
    n_jobs: int = 20
    max_nodes: int = 3
    arrival_rate: float = 2.03  # Poisson arrivals per slot
    # sweep
    sweep: Literal["duration", "workload", "congestion"] = "duration"
    values: tuple[float, ...] = (2.0, 4.0, 8.0)
    repeats: int = 3
    # ratio
    instances: int = 30
    max_congestion: float = 8.0
    max_a_high: float = 6.0
    integral: bool = False
    family: Literal["section_iv", "small"] = "section_iv"
    serve_ties: bool = True
    # ONSOCMAX's P3: backend ("" = kkt, or highs for the integral variant) and its options
    backend: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        require(len(self.kinds) > 0 and all(k in KINDS for k in self.kinds), "kinds", f"each must be one of {list(KINDS)}")
        require(self.n_nodes >= 1 and self.n_slots >= 1 and self.n_jobs >= 1, "n_nodes", "sizes must be >= 1")
        require(1 <= self.max_nodes <= self.n_nodes, "max_nodes", "must be in [1, n_nodes]")
        require(self.arrival_rate > 0, "arrival_rate", "must be > 0")
        require(len(self.values) > 0 and all(v > 0 for v in self.values), "values", "need values > 0")
        require(self.repeats >= 1, "repeats", "must be >= 1")
        require(self.instances >= 1, "instances", "must be >= 1")
        require(self.max_congestion >= 1, "max_congestion", "must be >= 1")
        require(self.max_a_high >= 1, "max_a_high", "must be >= 1")
        within_memory("n_slots", self.n_nodes * self.n_slots, "the capacity (n_nodes x n_slots)")
        # a job's units are its 1..max_nodes nodes over its window (at most n_slots slots)
        within_memory("n_jobs", self.n_jobs * self.max_nodes * self.n_slots, "the job draws (n_jobs x max_nodes x n_slots)")
        if self.study == "sweep":
            within_memory("repeats", len(self.values) * len(self.kinds) * self.repeats * len(POLICIES),
                          "the sweep's rows (values x kinds x repeats x policies)")
        else:
            within_memory("instances", self.instances, "the ratio study's rows (one per instance)")
        for key, settings in self._drawn_extremes():  # the generator's own checks, named by the config key
            try:
                _generator(self, self.kinds[0], **settings)
            except ValueError as exc:
                raise ValueError(f"config.{key}: {exc}") from None
        require(not self.integral or self.study == "ratio", "integral", "only the ratio study has an integral variant")
        require(not self.integral or self.family == "section_iv", "family", "the integral variant uses section_iv")
        from optsched.models.pseudo_welfare import PseudoWelfare, PseudoWelfareIntegral
        from optsched.solve import check_backend

        kind = PseudoWelfareIntegral if self.integral else PseudoWelfare
        check_backend(kind, self.backend or DEFAULT_BACKENDS[self.integral], self.options)


    def _drawn_extremes(self) -> list[tuple[str, dict[str, float]]]:
        """(config key, generator settings) of the most extreme instances the study draws: each
        sweep value, or the ratio study's largest congestion (:func:`_section_iv_instance`)."""
        if self.study == "sweep":
            return [("values", SWEEPS[self.sweep](v)) for v in self.values]
        if self.family == "section_iv":
            return [("max_congestion", SWEEPS["congestion"](self.max_congestion))]
        return []


PRESETS = {
    "fig4": {"study": "sweep", "sweep": "duration", "values": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], "repeats": 30},
    "fig5": {"study": "sweep", "sweep": "workload", "values": [10.0, 14.0, 18.0, 22.0, 26.0, 30.0], "repeats": 30},
    "fig6": {"study": "sweep", "sweep": "congestion", "values": [1.0, 2.0, 4.0, 6.0, 8.0, 12.0], "repeats": 30},
    "ratio": {"study": "ratio", "instances": 600},
    "ratio_integral": {"study": "ratio", "instances": 300, "integral": True},
    "ratio_small": {"study": "ratio", "family": "small", "instances": 1000},
    "ratio_small_no_ties": {"study": "ratio", "family": "small", "instances": 1000, "serve_ties": False},
    # 500x the jobs and 10x the nodes of Section IV at its load per node: 10 x 2.03 arrivals per
    # slot until 10^4 jobs have arrived (~493 slots; 540 slots leave room for their deadlines)
    "scale": {"study": "sweep", "sweep": "duration", "values": [4.0], "repeats": 1, "n_nodes": 100, "n_slots": 540,
              "n_jobs": 10_000, "arrival_rate": 20.3},
}
# Measured seconds: written to ``<stem>_timing.csv``, kept out of the (byte-reproducible) results.
TIMING_COLUMNS = ("runtime_s", "cpu_s", "opt_runtime_s", "opt_cpu_s")


def _generator(cfg: OnsocmaxConfig, kind: str, **settings: float) -> MeshGenerator:
    return MeshGenerator(
        n_nodes=cfg.n_nodes, n_slots=cfg.n_slots, n_jobs=cfg.n_jobs, max_nodes=cfg.max_nodes,
        arrival_rate=cfg.arrival_rate, kind=kind, **settings,
    )


def _demand_ratio(inst: MeshInstance) -> float:
    """Total workload over the capacity of the units some job may use (> 1: congested)."""
    used = np.unique(inst.pair_unit)
    return float(inst.rho.sum() / inst.capacity.reshape(-1)[used].sum())


@contextlib.contextmanager
def _drawn_at(where: str) -> Iterator[None]:
    """An offline optimum no solver certifies names the settings that drew its instance (probe
    BD: congestion 1e-12, workload 1e12 and max_a_high 1e12 ended "P1 ... the solver said
    unbounded", naming none)."""
    try:
        yield
    except SolveFailed as exc:
        raise SolveFailed(f"{exc}; the instance drawn at {where}") from None


def sweep_rows(cfg: OnsocmaxConfig) -> Any:
    import pandas as pd
    from tqdm import tqdm

    tasks = [(v, kind, j) for v in cfg.values for kind in cfg.kinds for j in range(cfg.repeats)]
    rows = []
    for value, kind, j in tqdm(tasks, desc=f"onsocmax {cfg.sweep}", leave=False, disable=None):  # no bar off a terminal
        inst = _generator(cfg, kind, **SWEEPS[cfg.sweep](value)).draw(np.random.default_rng([cfg.seed, j]))
        with _drawn_at(f"config.values: {cfg.sweep} = {value:g} (kind {kind}, repeat {j})"):
            cert, opt_s, opt_cpu = _timed(certified_optimum, inst)
        iota, upsilon = inst.marginal_bounds()
        for name, make in POLICIES.items():
            (welfare, _), wall, cpu = _timed(replay, inst, make(cfg))
            rows.append({
                "sweep": cfg.sweep, "value": value, "kind": kind, "repeat": j, "policy": name,
                "welfare": welfare, "opt": cert.primal, "opt_bound": cert.bound, "ratio": cert.primal / welfare,
                "alpha_hat": alpha_hat(upsilon / iota), "demand_ratio": _demand_ratio(inst), "n_jobs": inst.n_jobs,
                "runtime_s": wall, "cpu_s": cpu, "opt_runtime_s": opt_s, "opt_cpu_s": opt_cpu,
            })
    return pd.DataFrame(rows)


def _timed(fn: Callable[..., Any], *args: Any) -> tuple[Any, float, float]:
    """``fn(*args)``, its wall and its process CPU seconds."""
    import time

    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def plot_sweep(df: Any, cfg: OnsocmaxConfig) -> Any:
    plt = pyplot()

    kinds = list(dict.fromkeys(df["kind"]))
    fig, axes = plt.subplots(1, len(kinds), figsize=(4.6 * len(kinds), 3.8), squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        part = df[df["kind"] == kind]
        mean = part.groupby(["policy", "value"])["welfare"].mean()
        for i, name in enumerate(POLICIES):
            ax.plot(mean[name].index, mean[name].values, marker="o", color=f"C{i}", label=name)
        opt = part.groupby("value")["opt"].mean()
        ax.plot(opt.index, opt.values, "k--", label="offline OPT (P1)")
        ax.set_title(f"{kind} utility")
        ax.set_xlabel(SWEEP_LABELS[cfg.sweep])
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"social welfare (mean of {cfg.repeats})")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def _section_iv_instance(cfg: OnsocmaxConfig, i: int) -> MeshInstance:
    rng = np.random.default_rng([cfg.seed, 1_000_003, i])
    kind = cfg.kinds[int(rng.integers(len(cfg.kinds)))]
    c = float(rng.uniform(1.0, cfg.max_congestion))
    a_high = float(rng.uniform(1.0, cfg.max_a_high))
    gen = _generator(cfg, kind, a_high=a_high, **SWEEPS["congestion"](c))
    return gen.draw(rng)


def small_instance(seed: int, kinds: tuple[str, ...] = KINDS, *, index: int | None = None) -> MeshInstance:
    """A small mesh (1-2 nodes, 1-2 slots, 2-7 jobs) whose jobs come in increasing order of
    utility coefficient a ~ e^U[-2, 3] (the one-way-trading worst case), with random
    capacities U[1, 20], workloads U[1, 30], caps U[0.5, 25] and beta U[0, 0.5]; ``index``:
    instance i of a study at ``seed`` (its own stream, ``[seed, i]``)."""
    rng = np.random.default_rng([seed, 7_000_003] if index is None else [seed, index, 7_000_003])
    K, T, N = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(2, 8))
    kind = kinds[int(rng.integers(len(kinds)))]
    arrival = np.sort(rng.integers(0, T, N)).astype(float)
    deadline = arrival + rng.integers(0, T, N)
    nodes = [np.sort(rng.choice(K, int(rng.integers(1, K + 1)), replace=False)) for _ in range(N)]
    sizes = [u.size for u in resource_units(arrival, deadline, nodes, 1.0, T)]
    p = int(sum(sizes))
    return MeshInstance(
        capacity=rng.uniform(1, 20, (K, T)), tau=1.0, arrival=arrival, deadline=deadline, rho=rng.uniform(1, 30, N),
        nodes=nodes, kind=[kind] * N, xbar=rng.uniform(0.5, 25, p),
        a=np.repeat(np.sort(np.exp(rng.uniform(-2, 3, N))), sizes), beta=rng.uniform(0, 0.5, p),
    )


# Ratio-study instance family -> instance i of a config.
FAMILIES: dict[str, Callable[[OnsocmaxConfig, int], MeshInstance]] = {
    "section_iv": _section_iv_instance,
    "small": lambda cfg, i: small_instance(cfg.seed, cfg.kinds, index=i),  # seed * 10^6 + i: seed 1 was seed 0's 10^6-th
}


def _ratio(opt: float, online: float) -> float:
    """OPT / online; 1 when both are 0 (nothing can be served), +inf when only online is 0."""
    if opt <= 1e-12:
        return 1.0
    return opt / online if online > 0 else float("inf")


def ratio_record(inst: MeshInstance, cfg: "OnsocmaxConfig | None" = None) -> dict[str, Any]:
    """OPT / online of ONSOCMAX (as ``cfg`` sets it up; default config: the partitionable
    variant, kkt, the tie rule) on one instance, with alpha-hat and both sides' evidence."""
    import optsched

    cfg = cfg if cfg is not None else OnsocmaxConfig()
    iota, upsilon = inst.marginal_bounds()
    online, _ = replay(inst, onsocmax_policy(cfg))
    if cfg.integral:
        res = optsched.solve(OfflineWelfareIntegral(inst), "highs")
        # a point and a proven bound bracket OPT as the continuous path's primal and dual do: HiGHS's
        # scaled pruning proved 6.6e-6 for an objective of 0 at max_a_high = 1e4 ("feasible")
        bracketed = res.bound is not None and res.termination in (optsched.Termination.FEASIBLE,
                                                                   optsched.Termination.GAP_LIMIT)
        if res.termination is not optsched.Termination.OPTIMAL and not bracketed:
            raise SolveFailed(f"integral P1 (OPT of the ratio) ended {res.termination.value}: {res.message}")
        opt, bound = float(res.objective), float(res.bound if res.bound is not None else res.objective)
    else:
        cert = certified_optimum(inst)
        opt, bound = cert.primal, cert.bound
    return {
        "kind": inst.kind[0], "n_jobs": inst.n_jobs, "n_pairs": inst.n_pairs, "iota": iota, "upsilon": upsilon,
        "alpha_hat": float(alpha_hat(upsilon / iota)), "online": online, "opt": opt, "opt_bound": bound,
        "ratio": _ratio(opt, online), "demand_ratio": _demand_ratio(inst),
    }


def ratio_rows(cfg: OnsocmaxConfig) -> Any:
    import pandas as pd
    from tqdm import tqdm

    rows = []
    for i in tqdm(range(cfg.instances), desc="onsocmax ratio", leave=False, disable=None):  # no bar off a terminal
        inst = FAMILIES[cfg.family](cfg, i)
        with _drawn_at(f"instance {i} of the {cfg.family} family (config.max_a_high, config.max_congestion)"):
            rows.append({"instance": i, **ratio_record(inst, cfg)})
    df = pd.DataFrame(rows)
    df["violates_theorem2"] = df["ratio"] > df["alpha_hat"]
    return df


def plot_ratio(df: Any, cfg: OnsocmaxConfig) -> Any:
    plt = pyplot()

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    finite = np.isfinite(df["ratio"])
    top = float(max(df["alpha_hat"].max(), df.loc[finite, "ratio"].max()))
    for i, kind in enumerate(KINDS):
        part = df[(df["kind"] == kind) & finite]
        if len(part):
            ax.scatter(part["alpha_hat"], part["ratio"], s=12, color=f"C{i}", label=kind, alpha=0.7)
    if (~finite).any():  # online welfare 0 with OPT > 0: drawn at the top
        ax.scatter(df.loc[~finite, "alpha_hat"], np.full(int((~finite).sum()), top), marker="x", color="k",
                   label=f"online = 0 ({int((~finite).sum())})")
    ax.plot([1.0, top], [1.0, top], "k--", lw=1, label="OPT/online = alpha-hat")
    ax.set_xlabel("alpha-hat of (40)")
    ax.set_ylabel("measured OPT / online")
    variant = ("integral " if cfg.integral else "") + ("" if cfg.serve_ties else "no tie rule, ")
    ax.set_title(f"{variant}ONSOCMAX, {len(df)} {cfg.family} instances")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    bx.hist((df["ratio"] / df["alpha_hat"])[finite], bins=30, color="C0")
    bx.axvline(1.0, color="k", ls="--", lw=1)
    bx.set_xlabel("(OPT / online) / alpha-hat (finite ratios)")
    bx.set_ylabel("instances")
    bx.grid(alpha=0.3)
    fig.tight_layout()
    return fig


# --- optsched sweep ---------------------------------------------------------------------------
def sweep_check(cfg: OnsocmaxConfig) -> None:
    """A sweep run of study ``sweep`` draws one instance: one ``kinds`` and one ``values`` entry."""
    if cfg.study != "ratio" and (len(cfg.kinds) != 1 or len(cfg.values) != 1):
        raise ValueError("config.values: a sweep run of study 'sweep' draws one instance: give one 'kinds' "
                         "and one 'values' entry (grid over them)")


# config keys no sweep row reads (repeat / instance 0 of the seed): a sweep refuses them
SWEEP_UNUSED = frozenset({"repeats", "instances"})


def sweep_metrics(cfg: OnsocmaxConfig, policy: str) -> dict[str, Any]:
    """One sweep row: ``welfare``, ``opt``, ``opt_bound``, ``ratio`` (opt / welfare),
    ``alpha_hat``, ``demand_ratio``. ``study = "ratio"``: instance 0 of ``family``;
    ``study = "sweep"``: the Section IV instance of the one ``kinds`` entry at the one ``values``
    entry of ``sweep`` (a sweep grids over ``kinds`` / ``values``)."""
    sweep_check(cfg)
    if cfg.study == "ratio":
        inst = FAMILIES[cfg.family](cfg, 0)
    else:
        gen = _generator(cfg, cfg.kinds[0], **SWEEPS[cfg.sweep](cfg.values[0]))
        inst = gen.draw(np.random.default_rng([cfg.seed, 0]))  # repeat j = 0 of sweep_rows
    with _drawn_at("instance 0 of the ratio family" if cfg.study == "ratio" else
                   f"config.values: {cfg.sweep} = {cfg.values[0]:g} (kind {cfg.kinds[0]})"):
        cert = certified_optimum(inst)
    welfare, _ = replay(inst, POLICIES[policy](cfg))  # the pair vector: a dense matrix at 10^4 jobs was 4 GB
    iota, upsilon = inst.marginal_bounds()
    return {"welfare": float(welfare), "opt": float(cert.primal), "opt_bound": float(cert.bound),
            "ratio": _ratio(cert.primal, welfare), "alpha_hat": float(alpha_hat(upsilon / iota)),
            "demand_ratio": _demand_ratio(inst)}


STUDIES: dict[str, tuple[Callable[[OnsocmaxConfig], Any], Callable[[Any, OnsocmaxConfig], Any], Callable[[OnsocmaxConfig], str]]] = {
    "sweep": (sweep_rows, plot_sweep, lambda cfg: f"onsocmax_{cfg.sweep}"),
    "ratio": (ratio_rows, plot_ratio, lambda cfg: "_".join(
        ["onsocmax_ratio", cfg.family] + ["integral"] * cfg.integral + ["no_ties"] * (not cfg.serve_ties))),
}


def run(cfg: OnsocmaxConfig, out_dir: Path) -> list[Path]:
    import time

    rows, plot, stem_of = STUDIES[cfg.study]
    start = time.perf_counter()
    df = rows(cfg)
    fig = plot(df, cfg)
    stem = stem_of(cfg)
    out = Path(out_dir)
    timing = [c for c in TIMING_COLUMNS if c in df.columns]
    keys = ["value", "kind", "repeat", "policy", "n_jobs"]
    extra: dict[str, Any] = {"runtime_s": time.perf_counter() - start}
    if cfg.study == "ratio":
        extra["max_ratio_over_alpha_hat"] = float((df["ratio"] / df["alpha_hat"]).max())
        extra["online_zero_with_positive_opt"] = int(np.isinf(df["ratio"]).sum())
        extra["theorem2_violations"] = int(df["violates_theorem2"].sum())
    return write_artifacts(out, stem, table=df.drop(columns=timing), figure=fig, experiment=f"onsocmax/{stem}",
                           seed=cfg.seed, config=dataclasses.asdict(cfg), timing=df[keys + timing] if timing else None,
                           extra=extra)
