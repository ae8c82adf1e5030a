"""``optsched bench``: runtime vs instance size and the optimality gap of every backend, for
every model kind, measured side by side in one run.

What is run
-----------
* **Instances.** Each model kind declares its sizes beside its model (``quick`` and ``full``
  of ``@register_generator``; the ``size`` of :func:`optsched.generators.generate`);
  ``instances`` random instances per size are drawn from
  ``np.random.default_rng([seed, crc32(kind), size, i])``. Real files are added when the shared data directory is there (:data:`REAL_FILES`):
  Delorme set-packing ``.dat`` files and OR-Library ``mknap1`` / ``mknapcb1``
  (``budgeted_ip``). ``--data DIR`` (default ``$OPTSCHED_SHARED_DATA`` or ``../shared/data``
  from the working directory); when it is absent the files are skipped with a printed note.
* **Backends** are the ones that fit each instance and are available here
  (:func:`optsched.solvers.registry.fitting_backends`: capability flags plus instance
  limits, e.g. brute force only up to 22 binaries, ``dp`` only when its table fits), never a
  hand-written list.
* **Side by side.** Every backend is warmed up once per model kind (imports, numba
  compilation; not recorded). Then, per instance, each repeat round runs every backend once,
  the order rotated by one each round, so load from other processes hits all backends alike.
  Runtime figures are medians over the rounds (and over the instances of a size).
* **Time limits.** Backends with ``SUPPORTS_TIME_LIMIT`` get ``time_limit`` seconds; one that
  stops there is recorded with status ``time_limit`` (with its best objective and bound, if
  any), is not repeated on that instance, and is not run at larger sizes of the same model.
  A backend without time-limit support whose median runtime on an instance exceeds the limit
  is likewise not run at larger sizes. Each such cut is listed in ``summary.md``. (Real files
  run after the generated instances and are never cut: each backend runs on every file.)
* **Gap.** Per instance the best proven bound over every backend and round
  (:func:`optsched.solve.best_bound`: proven optimal objectives and dual bounds), and per row
  ``gap = |best - objective| / max(|best|, |objective|, 1)`` (:func:`optsched.result.relative_gap`),
  the same definition as :func:`optsched.compare`. Rows without a usable objective (status ``error``,
  ``infeasible``, a time limit with no solution) have an empty gap. ``solve`` verifies every
  solution with the model's own math, so an infeasible answer (e.g. ``paper``, Algorithm 1 of
  paper 003 as printed) is an ``error`` row, not a gap.

Output (``--out DIR``, default ``results/bench``)
--------------------------------------------------
``bench.csv``    (rewritten after each model kind, so a long run keeps what it finished)
                 one row per instance x backend x repeat: model, source, instance, size
                 (``model.size``), param (the generator size or file), backend, exact,
                 repeat, status, objective, bound, best_bound, gap, runtime_s (wall, from
                 ``Result.runtime_s``), cpu_s (process CPU time around the call), time_limit,
                 seed, versions, message (why, for status ``error``).
``runtime.png``  per model, median runtime vs size on log-log axes, one line per backend.
``gaps.png``     per model and non-exact backend, the distribution of gaps (symlog axis).
``summary.md``   per model, a table of median runtime per size and backend, status counts,
                 median and largest gap; the cuts; load averages and versions.
``bench.json``   config, versions, wall time, load averages.

``--quick`` uses each kind's ``quick`` sizes, one instance per size, a 5 s limit and the
quick file list (a couple of minutes); the full mode the ``full`` column, three instances per
size, a 60 s limit and every file.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

import numpy as np

from optsched.config import whole_number, within_memory
from optsched.models.validate import is_real_number
from optsched.models.base import Model, kind_specs, model_kinds
from optsched.result import OBJECTIVE_RTOL, Result, Termination, relative_gap

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class RealFiles:
    """Instance files under the shared data directory for one model kind:
    (relative path, 1-based instance numbers or None for all) in quick and full mode."""

    kind: str
    quick: tuple[tuple[str, tuple[int, ...] | None], ...]
    full: tuple[tuple[str, tuple[int, ...] | None], ...]


def _files(folder: str, names: list[str]) -> tuple[tuple[str, None], ...]:
    return tuple((f"{folder}/{n}", None) for n in names)


REAL_FILES: tuple[RealFiles, ...] = (
    RealFiles(
        "set_packing",
        quick=_files("setpacking", ["didactic.dat", "pb_100rnd0100.dat"]) + _files("mwis", ["johnson8-4-4.clq"]),
        # the DIMACS graphs whose cliques the exact backends prove within seconds; the other
        # six take HiGHS or CP-SAT 20-100 s each (tests/test_dimacs.py runs them)
        full=_files("setpacking", ["didactic.dat"] + [f"pb_100rnd{k:02d}00.dat" for k in range(1, 13)]
                    + [f"pb_200rnd{k:02d}00.dat" for k in range(1, 19)])
        + _files("mwis", [f"{g}.clq" for g in ("johnson8-2-4", "hamming6-4", "MANN_a9", "hamming6-2", "johnson8-4-4",
                                                 "johnson16-2-4", "C125.9", "san200_0.7_1")]),
    ),
    RealFiles(
        "budgeted_ip",
        quick=(("orlib/mknap1.txt", None),),
        # mknapcb1: 5 of its 30 instances (Chu-Beasley, 100 items x 5 rows); the exact backends
        # run each to the time limit, so all 30 would add about 90 minutes
        full=(("orlib/mknap1.txt", None), ("orlib/mknapcb1.txt", (1, 2, 3, 4, 5))),
    ),
)


@dataclass(frozen=True, kw_only=True)
class BenchConfig:
    """Settings of one benchmark run (``optsched bench`` options)."""

    quick: bool = False
    models: tuple[str, ...] = ()  # empty: every kind with a generator
    repeats: int | None = None  # None: 3 (quick) or 5 (full)
    per_size: int | None = None  # generated instances per size; None: 1 (quick) or 3 (full)
    seed: int = 0
    time_limit: float | None = None  # None: 5 s (quick) or 60 s (full)
    data_dir: Path | None = None  # None: $OPTSCHED_SHARED_DATA or ../shared/data
    use_files: bool = True
    sizes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # per-kind override
    # captured subproblems: a .jsonl file or a directory of them (``optsched run --capture``);
    # given, only these instances run
    instances_from: Path | None = None
    # capture a short seeded run of every paper on the fly (None: in quick mode)
    capture_papers: bool | None = None
    backends: tuple[str, ...] = ()  # empty: every backend that fits

    def __post_init__(self) -> None:
        unknown = [m for m in self.models if m not in kind_specs()]
        if unknown:
            raise ValueError(f"models: unknown model {unknown[0]!r} (known: {', '.join(kind_specs())})")
        if self.instances_from is not None and not Path(self.instances_from).exists():
            raise ValueError(f"--instances: {self.instances_from} does not exist")
        from optsched.solvers.registry import get_backend

        kinds = self.models or tuple(kind_specs())
        for name in self.backends:
            backend = get_backend(name)  # ValueError naming an unknown backend
            if self.instances_from is None and all(backend.fits_kind(model_kinds()[k]) is not None for k in kinds):
                raise ValueError(f"backends: {name!r} solves none of the models benchmarked ({', '.join(kinds)})")
        for key in ("repeats", "per_size"):
            if getattr(self, key) is not None:
                whole_number(key, getattr(self, key))
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"seed: must be a whole number >= 0, got {self.seed!r}")  # numpy's message names nothing
        within_memory("per_size", self.n_instances, "the generated instances of one size", where="")
        within_memory("repeats" if self.repeats is not None and self.per_size is None else
                      "per_size" if self.per_size is not None and self.repeats is None else "per_size x repeats",
                      self.n_repeats * self.n_instances, "the rows of one size and backend "
                      "(instances per size x repeats)", where="")  # the setting given, not a default, is named
        if self.time_limit is not None and (not is_real_number(self.time_limit)
                                            or not (np.isfinite(self.time_limit) and self.time_limit > 0)):
            raise ValueError(f"time_limit: must be a positive number, got {self.time_limit!r}")
        for kind, sizes in self.sizes.items():
            if kind not in kind_specs():
                raise ValueError(f"sizes: unknown model {kind!r}")
            if not sizes:
                raise ValueError(f"sizes: {kind} needs sizes >= 1")
            for size in sizes:  # a size "a" raised int()'s message, 2.7 ran as 2
                whole_number(f"sizes: {kind}", size)

    @property
    def kinds(self) -> tuple[str, ...]:
        return self.models or tuple(kind_specs())

    @property
    def n_repeats(self) -> int:
        return self.repeats or (3 if self.quick else 5)

    @property
    def n_instances(self) -> int:
        return self.per_size or (1 if self.quick else 3)

    @property
    def papers_captured(self) -> bool:
        return self.quick if self.capture_papers is None else self.capture_papers

    @property
    def limit(self) -> float:
        return self.time_limit or (5.0 if self.quick else 60.0)

    def sizes_of(self, kind: str) -> tuple[int, ...]:
        if kind in self.sizes:
            return tuple(int(s) for s in self.sizes[kind])
        spec = kind_specs()[kind]
        return spec.quick_sizes if self.quick else spec.full_sizes


@dataclass(frozen=True)
class Instance:
    kind: str
    source: str  # "generated", "file" or "captured"
    name: str
    param: str
    seed: str
    model: Model
    # a captured instance: the options its policy's backend solved it with (backend -> options)
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def generated_instances(cfg: BenchConfig) -> Iterator[Instance]:
    from optsched.generators import generate

    for kind in kind_specs():
        if kind not in cfg.kinds:
            continue
        for size in cfg.sizes_of(kind):
            for i in range(cfg.n_instances):
                seed = [cfg.seed, zlib.crc32(kind.encode()), size, i]  # a new kind leaves the others' draws alone
                model = generate(kind, size, np.random.default_rng(seed))
                yield Instance(kind, "generated", f"{kind}-n{size}-i{i}", str(size), "-".join(map(str, seed)), model)


def file_instances(cfg: BenchConfig, data_dir: Path, note: Callable[[str], None]) -> Iterator[Instance]:
    from optsched.io import load_instances

    for spec in REAL_FILES:
        if spec.kind not in cfg.kinds:
            continue
        for rel, numbers in (spec.quick if cfg.quick else spec.full):
            path = data_dir / rel
            if not path.is_file():
                note(f"note: {path} is absent; skipped")
                continue
            models = load_instances(path)
            for j in numbers or range(1, len(models) + 1):
                name = Path(rel).name + (f"#{j}" if len(models) > 1 else "")
                yield Instance(spec.kind, "file", name, rel, "", models[j - 1])


def captured_instances(path: Path, label: str = "", seed: str = "") -> Iterator[Instance]:
    """The instances of a ``.jsonl`` capture file, or of every one in a directory (sorted), each
    with the options its policy's backend solved it with (the capture's ``backend`` and
    ``options``: AESCB's xi and max_budget change from slot to slot), checked against that
    backend's schema here."""
    from optsched.io import load_captures
    from optsched.io.json_instance import policy_solve
    from optsched.solve import check_backend

    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise ValueError(f"--instances: {path} holds no .jsonl capture file")
    for f in files:
        for j, (model, capture) in enumerate(load_captures(f), start=1):
            options: dict[str, Mapping[str, Any]] = {}
            try:
                policy = policy_solve(capture)
                if policy is not None:
                    check_backend(model, *policy)
                    options[policy[0]] = policy[1]
            except ValueError as exc:
                raise ValueError(f"--instances: {f} instance {j}: {exc}") from None
            yield Instance(model.name, "captured", f"{label or f.stem}#{j}", label or f.name, seed, model, options)


def paper_captures(cfg: BenchConfig, tmp: Path, log: Callable[[str], None]) -> Iterator[Instance]:
    """A short run of every paper that declares a bench capture (its ``bench_capture``: config
    settings and ``every``) at the bench's seed, its policies' subproblems captured."""
    from optsched.observe import Observer
    from optsched.papers import all_papers

    for name, paper in all_papers().items():
        spec = paper.bench_capture
        if not spec or not set(paper.subproblems) & set(cfg.kinds):
            continue
        t0 = time.perf_counter()
        with Observer(capture_dir=tmp / name, capture_every=int(spec["every"])):
            paper.run(paper.make_config({**spec["settings"], "seed": cfg.seed}), tmp / name / "run")
        found = [i for i in captured_instances(tmp / name, label=name, seed=str(cfg.seed)) if i.kind in cfg.kinds]
        log(f"bench: captured {len(found)} subproblems from a short {name} run in {time.perf_counter() - t0:.1f} s")
        yield from found


def _smallest_instance(cfg: BenchConfig, kind: str) -> Model:
    from optsched.generators import generate

    return generate(kind, min(cfg.sizes_of(kind)), np.random.default_rng([cfg.seed, 999_983]))


def _timed_solve(model: Model, backend: str, time_limit: float | None,
                 options: Mapping[str, Any] | None = None) -> tuple[Result, float]:
    import optsched

    cpu = time.process_time()
    res = optsched.solve(model, backend, time_limit=time_limit, **dict(options or {}))
    return res, time.process_time() - cpu




def _versions() -> str:
    from optsched.artifacts import package_versions

    return ";".join(f"{k}={v}" for k, v in package_versions().items() if v != "not installed")


class _Cuts:
    """Backends no longer run at larger sizes of a model, and why (the run's mutable state)."""

    def __init__(self) -> None:
        self.above: dict[tuple[str, str], tuple[int, str]] = {}

    def blocked(self, kind: str, backend: str, size: int) -> bool:
        cut = self.above.get((kind, backend))
        return cut is not None and size > cut[0]

    def add(self, kind: str, backend: str, size: int, why: str) -> None:
        if (kind, backend) not in self.above or size < self.above[(kind, backend)][0]:
            self.above[(kind, backend)] = (size, why)


def run_instance(inst: Instance, cfg: BenchConfig, cuts: _Cuts, versions: str) -> list[dict[str, Any]]:
    """Every fitting backend on one instance, ``n_repeats`` interleaved rounds; tidy rows."""
    from optsched.solve import best_bound
    from optsched.solvers.registry import fitting_backends

    size = inst.model.size
    backends = [b for b in fitting_backends(inst.model)
                if not (inst.source == "generated" and cuts.blocked(inst.kind, b.NAME, size))
                and (not cfg.backends or b.NAME in cfg.backends)]
    results: dict[str, list[tuple[int, Result, float]]] = {b.NAME: [] for b in backends}
    stopped: set[str] = set()
    for r in range(cfg.n_repeats):
        shift = r % max(1, len(backends))
        for b in backends[shift:] + backends[:shift]:
            if b.NAME in stopped:
                continue
            limit = cfg.limit if b.SUPPORTS_TIME_LIMIT else None
            res, cpu = _timed_solve(inst.model, b.NAME, limit, inst.options.get(b.NAME))
            results[b.NAME].append((r, res, cpu))
            if res.termination is Termination.TIME_LIMIT:
                stopped.add(b.NAME)
                if inst.source == "generated":  # files come last and have no "larger sizes"
                    cuts.add(inst.kind, b.NAME, size, f"hit the {cfg.limit:g} s time limit on {inst.name}")
    for b in backends:
        runs = results[b.NAME]
        slow = statistics.median(x[1].runtime_s for x in runs) > cfg.limit
        if inst.source == "generated" and not b.SUPPORTS_TIME_LIMIT and slow:
            cuts.add(inst.kind, b.NAME, size, f"median {statistics.median(x[1].runtime_s for x in runs):.1f} s "
                     f"> {cfg.limit:g} s on {inst.name} (no time-limit support)")
    best = best_bound(inst.model, [res for runs in results.values() for _, res, _ in runs])
    rows = []
    for b in backends:
        for r, res, cpu in results[b.NAME]:
            rows.append({
                "model": inst.kind, "source": inst.source, "instance": inst.name, "size": size,
                "param": inst.param, "backend": b.NAME, "exact": b.EXACT, "repeat": r,
                "termination": res.termination.value, "objective": res.objective, "bound": res.bound,
                "best_bound": best, "gap_to_own_bound": res.gap_to_own_bound,
                "gap_to_best_bound": relative_gap(res.objective, best), "runtime_s": res.runtime_s, "cpu_s": cpu,
                "time_limit": cfg.limit if b.SUPPORTS_TIME_LIMIT else None, "seed": inst.seed,
                "versions": versions, "message": res.message if res.termination is Termination.ERROR else "",
            })
    return rows


def warm_up(kind: str, cfg: BenchConfig) -> None:
    """Import each fitting backend's packages and compile its kernels, outside the timings."""
    from optsched.solvers.registry import fitting_backends

    model = _smallest_instance(cfg, kind)
    for b in fitting_backends(model):
        _timed_solve(model, b.NAME, cfg.limit if b.SUPPORTS_TIME_LIMIT else None)


OUTPUTS = ("bench.csv", "runtime.png", "gaps.png", "summary.md")  # beside bench.json (module docstring)
COLUMNS = ("model", "source", "instance", "size", "param", "backend", "exact", "repeat", "termination", "objective",
           "bound", "best_bound", "gap_to_own_bound", "gap_to_best_bound", "runtime_s", "cpu_s", "time_limit", "seed",
           "versions", "message")


def _check_captures_fit(cfg: BenchConfig, instances: list[Instance]) -> None:
    """The captured instances' counterpart of the config's check on generated ones: --models
    that keep none of them, or --backends that solve none of their kinds, are refused (a bench of
    0 rows was written and exit 0)."""
    from optsched.solvers.registry import get_backend

    if not instances:
        raise ValueError(f"--instances: {cfg.instances_from} holds no instance of the models benchmarked "
                         f"({', '.join(cfg.models)})")
    kinds = sorted({i.kind for i in instances})
    for name in cfg.backends:
        if all(get_backend(name).fits_kind(model_kinds()[k]) is not None for k in kinds):
            raise ValueError(f"backends: {name!r} solves none of the captured models ({', '.join(kinds)})")


def run_bench(cfg: BenchConfig, out: Path, *, log: Callable[[str], None] = print) -> list[Path]:
    """Run the benchmark and write CSV, PNGs, summary.md and bench.json into ``out``
    (bench.json's ``inputs``: every file it read, with its SHA-256)."""
    from optsched.files import recording_inputs

    with recording_inputs() as inputs:
        return _run_bench(cfg, out, inputs, log)


def _run_bench(cfg: BenchConfig, out: Path, inputs: Mapping[str, Any], log: Callable[[str], None]) -> list[Path]:
    import pandas as pd

    from optsched.artifacts import begin_set, package_versions, provenance, write_csv, write_manifest, write_text

    if cfg.data_dir is not None and not Path(cfg.data_dir).is_dir():  # only the default may be absent
        raise ValueError(f"--data: {cfg.data_dir} is not a directory")
    out = Path(out)
    captured = None
    if cfg.instances_from is not None:  # read and checked before the old set is touched
        captured = [i for i in captured_instances(Path(cfg.instances_from)) if not cfg.models or i.kind in cfg.models]
        _check_captures_fit(cfg, captured)
    begin_set(out / "bench.json", *(out / name for name in OUTPUTS))  # the set's manifest, written last
    start, load0 = time.perf_counter(), os.getloadavg()
    from optsched.io import default_data_dir

    data_dir = cfg.data_dir if cfg.data_dir is not None else default_data_dir()
    notes: list[str] = []

    def note(msg: str) -> None:
        notes.append(msg)
        log(msg)

    import tempfile

    tmp = tempfile.TemporaryDirectory(prefix="optsched-bench-")
    if captured is not None:
        instances = captured
    else:
        instances = list(generated_instances(cfg))
        if cfg.use_files:
            if data_dir.is_dir():
                instances += list(file_instances(cfg, data_dir, note))
            elif any(spec.kind in cfg.kinds for spec in REAL_FILES):
                note(f"note: shared data directory {data_dir} is absent; real-file instances skipped")
        if cfg.papers_captured:
            instances += list(paper_captures(cfg, Path(tmp.name), log))
    versions = _versions()
    cuts = _Cuts()
    rows: list[dict[str, Any]] = []
    for kind in dict.fromkeys([*cfg.kinds, *(i.kind for i in instances)]):
        mine = [i for i in instances if i.kind == kind]
        if not mine:
            continue
        t0 = time.perf_counter()
        warm_up(kind, cfg)
        for inst in sorted(mine, key=lambda i: (i.source != "generated", i.source, i.model.size)):
            t1 = time.perf_counter()
            rows += run_instance(inst, cfg, cuts, versions)
            log(f"bench: {kind} {inst.name}: {time.perf_counter() - t1:.1f} s")
        log(f"bench: {kind}: {len(mine)} instances in {time.perf_counter() - t0:.1f} s")
        write_csv(pd.DataFrame(rows, columns=list(COLUMNS)), out / "bench.csv")  # kinds done so far
    tmp.cleanup()
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    for key, (size, why) in sorted(cuts.above.items()):
        notes.append(f"{key[1]} on {key[0]}: not run above size {size} ({why})")
    errors = df[df["termination"] == "error"]
    for (kind, backend), e in errors.groupby(["model", "backend"], sort=False):
        notes.append(f"{backend} on {kind}: {len(e)} error row(s); first: {e['message'].iloc[0]}")
    wall = time.perf_counter() - start
    load1 = os.getloadavg()
    paths = [write_csv(df, out / "bench.csv")]
    paths += plot_runtime(df, out / "runtime.png")
    paths += plot_gaps(df, out / "gaps.png")
    text = summary_markdown(df, cfg, notes=notes, wall_s=wall, load=(load0, load1), versions=package_versions())
    paths.append(write_text(out / "summary.md", text))
    read = captured is None and cfg.use_files and data_dir.is_dir()
    meta = {"config": dataclasses.asdict(cfg), **provenance(), "wall_s": wall,
            "data_dir_read": str(data_dir.resolve()) if read else None, "inputs": dict(sorted(inputs.items())),
            "loadavg_start": load0, "loadavg_end": load1, "notes": notes, "rows": len(df)}
    paths.append(write_manifest(out / "bench.json", meta, paths))
    return paths


# --- reporting ---------------------------------------------------------------------------------
def per_size_medians(df: "pd.DataFrame") -> "pd.DataFrame":
    """Median runtime per (model, source, size, backend): first the median over repeats of
    each instance, then over the instances of that size."""
    per_inst = df.groupby(["model", "source", "instance", "size", "backend"], as_index=False)["runtime_s"].median()
    return per_inst.groupby(["model", "source", "size", "backend"], as_index=False)["runtime_s"].median()


def plot_runtime(df: "pd.DataFrame", path: Path) -> list[Path]:
    """Median runtime against instance size, one panel per model kind: generated instances as
    lines (exact backends solid, heuristics dashed), real files and captured subproblems as
    markers in the backend's colour; every backend is named in the legend; each panel says what
    its size counts."""
    from optsched.models.base import model_kinds
    from optsched.artifacts import pyplot, write_png

    if df.empty:
        return []
    plt = pyplot()
    gen = per_size_medians(df[df["source"] == "generated"])
    kinds = list(dict.fromkeys(df["model"]))
    cols = min(3, len(kinds))
    rows = -(-len(kinds) // cols)
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    palette = plt.get_cmap("tab20").colors
    color = {b: palette[i % 20] for i, b in enumerate(sorted(df["backend"].unique()))}  # one per backend
    exact = dict(zip(df["backend"], df["exact"].astype(bool)))
    markers = {"file": "x", "captured": "^"}
    fig, axes = plt.subplots(rows, cols, figsize=(5.6 * cols, 5.0 * rows), squeeze=False)
    for ax, kind in zip(axes.flat, kinds):
        part = gen[gen["model"] == kind]
        for backend, b in part.groupby("backend", sort=True):
            ax.plot(b["size"], b["runtime_s"].clip(lower=1e-6), marker="o", ms=4, color=color[backend],
                    linestyle="-" if exact[backend] else "--", label=f"{backend} ({'exact' if exact[backend] else 'heuristic'})")
        for source, marker in markers.items():
            pts = per_size_medians(df[(df["source"] == source) & (df["model"] == kind)])
            for i, (backend, b) in enumerate(pts.groupby("backend", sort=True)):
                if backend not in set(part["backend"]):  # a backend seen on these instances only
                    ax.plot([], [], color=color[backend], linestyle="-" if exact[backend] else "--",
                            label=f"{backend} ({'exact' if exact[backend] else 'heuristic'})")
                ax.plot(b["size"], b["runtime_s"].clip(lower=1e-6), marker, color=color[backend], ms=6)
            if len(pts):
                ax.plot([], [], marker, color="0.3", label=f"{source} instances (backend's colour)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        label = model_kinds()[kind].SIZE_LABEL if kind in model_kinds() else "model.size"
        ax.set_title(kind)
        ax.set_xlabel(f"size: {label}")
        ax.set_ylabel("median runtime (s)")
        ax.grid(alpha=0.3, which="both")
        handles, labels = ax.get_legend_handles_labels()
        unique = dict(zip(labels, handles))
        ax.legend(unique.values(), unique.keys(), fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.2),
                  ncol=3, frameon=False)
    for ax in list(axes.flat)[len(kinds):]:
        ax.axis("off")
    fig.suptitle("Runtime vs size (lines: generated instances, solid exact / dashed heuristic; x: real files; "
                 "^: captured from the papers' policies)", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.985))  # the title above the top row
    out = write_png(fig, path)
    return [out]


def plot_gaps(df: "pd.DataFrame", path: Path) -> list[Path]:
    from optsched.artifacts import pyplot, write_png

    heur = df[~df["exact"].astype(bool)]
    pairs = list(dict.fromkeys(zip(heur["model"], heur["backend"])))
    if not pairs:
        return []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(pairs) + 1.5))
    rng = np.random.default_rng(0)
    for j, (kind, backend) in enumerate(pairs):
        part = heur[(heur["model"] == kind) & (heur["backend"] == backend)]
        # one gap per instance (the repeats of a deterministic backend agree)
        gaps = part.groupby("instance")["gap_to_best_bound"].median().dropna().to_numpy(dtype=float)
        errors = int(part.groupby("instance")["termination"].agg(lambda s: (s == "error").all()).sum())
        if gaps.size:
            ax.scatter(gaps, j + rng.uniform(-0.2, 0.2, gaps.size), s=14, alpha=0.7, color=f"C{j % 10}")
            ax.plot([np.median(gaps)] * 2, [j - 0.3, j + 0.3], color="k", lw=2)
        if errors:
            ax.annotate(f"{errors} error", (0, j), xytext=(4, 6), textcoords="offset points", fontsize=7)
    ax.set_yticks(range(len(pairs)), [f"{b} ({k})" for k, b in pairs])
    ax.set_xscale("symlog", linthresh=1e-6)
    top = float(heur["gap_to_best_bound"].max()) if heur["gap_to_best_bound"].notna().any() else 1.0
    ax.set_xlim(left=0, right=max(1.0, 2 * top))
    ax.set_xlabel("gap to the best bound, |best - objective| / max(|best|, |objective|, 1) (bar: median)")
    ax.set_title("Non-exact backends: gap per instance")
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    out = write_png(fig, path)
    return [out]


def _fmt_time(s: float) -> str:
    if not np.isfinite(s):
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.0f} us"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def _fmt_gap(g: float) -> str:
    return "-" if not np.isfinite(g) else ("0" if g == 0 else f"{g:.1e}")


def _gap_cells(b: "pd.DataFrame") -> list[str]:
    """A backend's median and largest gap to the best bound over its rows with one ("-" for none)."""
    gaps = b["gap_to_best_bound"].dropna().astype(float)
    return [_fmt_gap(float(gaps.median())), _fmt_gap(float(gaps.max()))] if len(gaps) else ["-", "-"]


def _terminations(b: "pd.DataFrame") -> str:
    """A backend's termination counts, and ``WRONG k`` for the rows where an exact backend said
    optimal beyond ``OBJECTIVE_RTOL`` of the instance's best bound: a solver fault, not a gap
    (SCIP's on the ESCB index showed here for weeks as an exact backend's max gap of 3.8e-4)."""
    counts = ", ".join(f"{k} {v}" for k, v in b["termination"].value_counts().items())
    wrong = int((b["exact"].astype(bool) & (b["termination"] == Termination.OPTIMAL.value)
                 & (b["gap_to_best_bound"].astype(float) > OBJECTIVE_RTOL)).sum())
    return counts + (f", WRONG {wrong}" if wrong else "")


def overview_table(df: "pd.DataFrame") -> list[str]:
    """One row per (model, backend): runtime at the largest generated size, its ratio to the
    fastest exact backend there (measured side by side), gaps over every instance, statuses."""
    gen = per_size_medians(df[df["source"] == "generated"])
    head = ["model", "backend", "exact", "largest n", "runtime there", "/ fastest exact", "median gap", "max gap",
            "termination (all rows)"]
    lines = ["## Overview", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    exact_names = set(df.loc[df["exact"].astype(bool), "backend"])
    for kind in dict.fromkeys(df["model"]):
        part, g = df[df["model"] == kind], gen[gen["model"] == kind]
        for backend, b in part.groupby("backend", sort=False):
            mine = g[g["backend"] == backend]
            if len(mine):
                n = int(mine["size"].max())
                t = float(mine.loc[mine["size"] == n, "runtime_s"].iloc[0])
                there = g[(g["size"] == n) & g["backend"].isin(exact_names)]["runtime_s"]
                ratio = f"{t / float(there.min()):.2g}x" if len(there) and float(there.min()) > 0 else "-"
                size_cell, time_cell = str(n), _fmt_time(t)
            else:
                size_cell, time_cell, ratio = "-", "-", "-"
            lines.append("| " + " | ".join([
                kind, backend, "yes" if bool(b["exact"].iloc[0]) else "no", size_cell, time_cell, ratio,
                *_gap_cells(b), _terminations(b)]) + " |")
    return lines


def captured_table(df: "pd.DataFrame") -> list[str]:
    """The subproblems the papers' policies really produced (``source = captured``): per model,
    capture set and backend, the median runtime over its instances, the median over those
    instances of its runtime over the fastest exact backend's on the same instance (a backend
    that fits only some instances, brute force's n <= 22, is compared there only: a median over
    its one small instance was the reference for all 13), the gaps to the best bound and the
    terminations. Runtimes are those of solves that ran to an end of their own and answered
    (``observe.TIMED``): the time limit cuts a solve short, and an error answered nothing."""
    from optsched.observe import TIMED

    cap = df[df["source"] == "captured"]
    if cap.empty:
        return []
    cap = cap.assign(capture=cap["instance"].str.rsplit("#", n=1).str[0])
    timed = cap[cap["termination"].isin(TIMED)]
    per_inst = timed.groupby(["model", "capture", "instance", "backend"], as_index=False)["runtime_s"].median()
    head = ["model", "captured from", "instances", "sizes", "backend", "exact", "median runtime",
            "/ fastest exact (per instance)", "median gap", "max gap", "termination (all rows)"]
    lines = ["## Captured subproblems (what the papers' policies solve)", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    exact_names = set(df.loc[df["exact"].astype(bool), "backend"])
    for (kind, capture), part in cap.groupby(["model", "capture"], sort=False):
        times = per_inst[(per_inst["model"] == kind) & (per_inst["capture"] == capture)]
        medians = times.groupby("backend")["runtime_s"].median()
        fastest = times[times["backend"].isin(exact_names)].groupby("instance")["runtime_s"].min()
        ratios = times.assign(ratio=times["runtime_s"] / times["instance"].map(fastest))
        ratios = ratios[np.isfinite(ratios["ratio"])].groupby("backend")["ratio"].median()
        for backend, b in part.groupby("backend", sort=False):
            t = _fmt_time(float(medians[backend])) if backend in medians.index else "-"
            ratio = f"{float(ratios[backend]):.2g}x" if backend in ratios.index else "-"
            lines.append("| " + " | ".join([
                kind, capture, str(b["instance"].nunique()), f"{int(b['size'].min())}-{int(b['size'].max())}", backend,
                "yes" if bool(b["exact"].iloc[0]) else "no", t, ratio, *_gap_cells(b), _terminations(b)]) + " |")
    return lines + [""]


def summary_markdown(
    df: "pd.DataFrame", cfg: BenchConfig, *, notes: list[str], wall_s: float,
    load: tuple[tuple[float, ...], tuple[float, ...]], versions: dict[str, str],
) -> str:
    """One table per model: median runtime per size (generated instances) and over the
    files, status counts, median and largest gap per backend."""
    from optsched.artifacts import machine

    lines = [
        f"# optsched bench ({'quick' if cfg.quick else 'full'})",
        "",
        f"{len(df)} rows; {cfg.n_repeats} interleaved repeats per instance; "
        + (f"the captured instances of {cfg.instances_from} only" if cfg.instances_from is not None
           else f"{cfg.n_instances} generated instance(s) per size")
        + f"; time limit {cfg.limit:g} s; wall time {wall_s:.0f} s; load average "
        f"{load[0][0]:.2f} at the start, {load[1][0]:.2f} at the end (os.getloadavg, 1 min; {machine()}).",
        "Runtime: median over the repeats of each instance, then over the instances of a size (wall, "
        "`Result.runtime_s`). Gap: |best bound - objective| / max(|best bound|, |objective|, 1) per row; median and max over the "
        "rows with an objective. Termination counts are over all rows (instances x repeats).",
        "",
    ]
    lines += overview_table(df) + [""]
    lines += captured_table(df)
    for kind in dict.fromkeys(df["model"]):
        part = df[df["model"] == kind]
        gen = per_size_medians(part[part["source"] == "generated"])
        sizes = sorted(gen["size"].unique())
        files = part[part["source"] == "file"]
        file_med = per_size_medians(files).groupby("backend")["runtime_s"].median() if len(files) else None
        head = ["backend", "exact"] + [f"n={s}" for s in sizes] + (["files"] if file_med is not None else [])
        head += ["termination", "median gap", "max gap"]
        lines += [f"## {kind}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for backend, b in part.groupby("backend", sort=False):
            cells = [backend, "yes" if bool(b["exact"].iloc[0]) else "no"]
            for s in sizes:
                v = gen[(gen["backend"] == backend) & (gen["size"] == s)]["runtime_s"]
                cells.append(_fmt_time(float(v.iloc[0])) if len(v) else "-")
            if file_med is not None:
                cells.append(_fmt_time(float(file_med.get(backend, float("nan")))))
            cells += [_terminations(b), *_gap_cells(b)]
            lines.append("| " + " | ".join(cells) + " |")
        if len(files):
            lines.append("")
            lines.append(f"files: {', '.join(dict.fromkeys(files['instance']))} (sizes "
                         f"{int(files['size'].min())}-{int(files['size'].max())})")
        lines.append("")
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    lines += ["Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()), ""]
    return "\n".join(lines)
