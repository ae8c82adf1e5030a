"""``run_sweep``: expand a sweep, skip what the store holds, run the rest, consolidate."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping

from optsched.config import MAX_WORKERS, whole_number
from optsched.sweep.batches import Batches
from optsched.sweep.executors import (RAN_ON, TIMING_COLUMNS, WARNINGS, DaskTLS, check_dask_address, lead_columns, run_dask, run_pool,
                                      run_serial, run_source)
from optsched.sweep.grid import SweepConfig, SweepRun, canonical_json, expand, load_sweep
from optsched.sweep.store import Row, Store, cell, column_order, write_table

RESULTS = "results.csv"
TIMINGS = "timings.csv"
METADATA = "sweep.json"
STORE = "store"


@dataclass(frozen=True)
class SweepReport:
    total: int
    stored_before: int
    ran: int
    executor: str
    workers: int
    batch_size: int  # the largest batch
    batches: int
    wall_s: float
    files: tuple[Path, ...]


def warm_modules(runs: list[SweepRun]) -> tuple[str, ...]:
    """The modules a worker imports once before its first task: each experiment's module (the
    paper's sweep metrics) and each backend's."""
    from optsched.papers import get_paper
    from optsched.solvers.registry import get_backend

    names: set[str] = set()
    for kind, target, variant in {(r.kind, r.target, r.variant) for r in runs}:
        if kind == "experiment":
            sweep = get_paper(target).sweep
            if sweep is not None:
                names.add(sweep.metrics.__module__)
        else:
            names.add(type(get_backend(variant)).__module__)
    return tuple(sorted(names))


def warm_runs(runs: list[SweepRun]) -> tuple[SweepRun, ...]:
    """One tiny run per (experiment, policy) of ``runs``: the first such run's config with the
    paper's ``SweepSummary.warm`` settings (none for a paper without them, nor for solve runs,
    whose ``runtime_s`` is the backend call alone, after ``prepare``'s own warm-up)."""
    from optsched.papers import get_paper

    out: dict[tuple[str, str], SweepRun] = {}
    for run in runs:
        if run.kind != "experiment" or (run.target, run.variant) in out:
            continue
        sweep = get_paper(run.target).sweep
        if sweep is not None and sweep.warm:
            config = canonical_json({**json.loads(run.config), **sweep.warm})
            out[run.target, run.variant] = dataclasses.replace(run, key=f"warm-up {run.key}", config=config)
    return tuple(out.values())


def run_sweep(
    sweep: SweepConfig | str | Path,
    out_dir: str | Path,
    *,
    executor: str = "pool",
    workers: int | None = None,
    dask_address: str = "local",
    dask_tls: DaskTLS | None = None,
    batch_size: int | None = None,
    progress: bool = True,
) -> SweepReport:
    """SweepRun every run of ``sweep`` not yet in ``out_dir/store``; write ``results.csv`` (sorted
    by key, no timings: byte-identical for a config whatever the executor), ``timings.csv``
    and ``sweep.json``. ``executor``: ``serial``, ``pool`` (``workers`` processes, default
    ``os.cpu_count()``) or ``dask`` (``dask_address``: ``local`` or a scheduler address,
    ``tls://`` with the certificate files of ``dask_tls``, or a trusted ``tcp://``; see
    :func:`~optsched.sweep.executors.check_dask_address`). One sweep at a time per
    ``out_dir``: a second is refused while the first holds the store's lock.

    The pool and a local Dask cluster start workers with the ``forkserver`` method, so a
    script calling this with ``executor="pool"`` or ``"dask"`` needs the ``if __name__ ==
    "__main__":`` guard."""
    if executor not in ("serial", "pool", "dask"):
        raise ValueError(f"executor: must be serial, pool or dask, got {executor!r}")
    if workers is not None:
        whole_number("--workers", workers, maximum=MAX_WORKERS)
    if batch_size is not None:
        whole_number("--batch-size", batch_size)
    if executor == "dask":
        check_dask_address(dask_address, dask_tls)
    spec = sweep if isinstance(sweep, SweepConfig) else load_sweep(sweep)
    n_workers = 1 if executor == "serial" else (workers or os.cpu_count() or 1)
    runs = expand(spec)
    keys = [r.key for r in runs]
    if len(set(keys)) != len(keys):
        raise ValueError("sweep: two runs have the same settings (a value repeated in the grid, seeds or lists?)")
    out = Path(out_dir)
    with Store(out / STORE).locked() as store:  # one writer per store, from clean-up to sweep.json
        from optsched.artifacts import begin_set, provenance, write_manifest

        begin_set(out / METADATA, out / RESULTS, out / TIMINGS)  # the set's manifest (optsched.artifacts), written last
        store.clean()
        stored_rows = store.rows()
        check_inputs_unchanged(runs, stored_rows, out / STORE)
        stored = set(stored_rows)
        pending = [r for r in runs if r.key not in stored]
        if pending and not (executor == "dask" and dask_address != "local"):  # a remote cluster's checkout is its own
            check_source_unchanged(runs, stored_rows, out / STORE)
        if executor == "dask" and dask_address == "local":  # a cluster no larger than the runs (as the pool's)
            n_workers = min(n_workers, max(1, len(pending)))
        batches = Batches(pending, n_workers, batch_size)
        warm = warm_modules(pending) if executor != "serial" else ()
        warm_up = warm_runs(pending)

        from tqdm import tqdm

        start = time.perf_counter()
        bar = tqdm(total=len(runs), initial=len(runs) - len(pending), unit="run", desc="sweep", file=sys.stderr,
                   disable=None if progress else True, dynamic_ncols=True)

        # a remote cluster's size is its own (--workers sized only the local ones): not recorded
        ran_on_workers = "" if executor == "dask" and dask_address != "local" else str(n_workers)

        shown: set[str] = set()

        def on_done(rows: list[Row]) -> None:
            said = []
            for row in rows:  # which session ran it: a resumed sweep's rows can come from several
                row.update(executor=executor, workers=ran_on_workers)
                said += [(row["key"], message) for message in json.loads(row.pop(WARNINGS, "[]"))]
            store.append(rows)  # before the warnings: under -W error a warning must not lose the batch
            bar.update(len(rows))
            for key, message in said:  # each once, naming the first run that gave it
                if message not in shown:
                    shown.add(message)
                    warnings.warn(f"sweep run {key}: {message}", stacklevel=2)

        try:
            if pending:
                if executor == "serial":
                    run_serial(batches, on_done, warm_runs=warm_up)
                elif executor == "pool":
                    run_pool(batches, on_done, workers=n_workers, warm=warm, warm_runs=warm_up)
                else:
                    run_dask(batches, on_done, address=dask_address, workers=n_workers, tls=dask_tls, warm=warm,
                             warm_runs=warm_up)
        finally:
            bar.close()
        wall = time.perf_counter() - start
        files = consolidate(store, runs, out)
        meta = {"sweep": asdict(spec), "runs": len(runs), "stored_before": len(runs) - len(pending), "ran": len(pending),
                "executor": executor, "workers": n_workers, "batch_size": max(batches.sizes, default=0),
                "batches": len(batches.sizes), "wall_s": wall}
        meta.update(provenance())
        files.append(write_manifest(out / METADATA, meta, files))
        return SweepReport(len(runs), len(runs) - len(pending), len(pending), executor, n_workers,
                           max(batches.sizes, default=0), len(batches.sizes), wall, tuple(files))


def check_source_unchanged(runs: list[SweepRun], stored: Mapping[str, Row], store: Path) -> None:
    """ValueError naming the first stored run of ``runs`` whose row another version of the code
    stored (its ``source`` cell: the git commit and uncommitted changes, :func:`run_source`):
    a resumed sweep mixed rows of two versions in silence (probe BJ: 19 rows of the old code, 61
    of a commit that doubled ``asw``). A row from before the cell was kept names no version and
    is refused too. Asked only when runs are pending (a finished sweep's rows are consolidated
    as they are, each naming its code) and not for a remote Dask cluster, whose workers stamp
    their own checkout's."""
    now = run_source()
    for run in runs:
        row = stored.get(run.key)
        if row is not None and row.get("source") != now:
            then = _described(row.get("source"))
            raise ValueError(f"sweep: run {run.key} was stored by {then}, and this is {_described(now)}; resuming "
                             f"would mix the results of two versions of the code: remove {store} (or choose another "
                             "--out) to run the sweep again")


def _described(source: str | None) -> str:
    """A ``source`` cell in words."""
    try:
        said = json.loads(source) if source is not None else None
    except ValueError:
        said = None
    if not isinstance(said, dict):
        return "code that recorded no version"
    if not said:
        return "code outside a git checkout"
    commit = str(said.get("commit", "?"))[:12]
    return f"commit {commit}" + (f" with uncommitted changes (diff {str(said.get('diff_sha256', '?'))[:12]})"
                                 if said.get("dirty") else "")


def check_inputs_unchanged(runs: list[SweepRun], stored: Mapping[str, Row], store: Path) -> None:
    """ValueError naming the first stored run of ``runs`` that read a file (its row's ``inputs``:
    path -> SHA-256) that has changed or gone since: resuming would mix rows of the old file
    with rows of the new (a run's key holds its settings, not the files they name)."""
    from optsched.artifacts import sha256

    digests: dict[str, str | None] = {}
    for run in runs:
        row = stored.get(run.key)
        if row is None or not row.get("inputs"):
            continue
        try:
            inputs = json.loads(row["inputs"])
        except ValueError:
            inputs = None
        if not isinstance(inputs, dict) or not all(isinstance(v, str) for v in inputs.values()):
            raise ValueError(f"sweep: the stored row of run {run.key} has a damaged 'inputs' cell (a store part changed "
                             "from outside); remove the part holding it to run it again")
        for path, recorded in inputs.items():
            if path not in digests:
                try:
                    digests[path] = sha256(Path(path))
                except OSError:
                    digests[path] = None
            if digests[path] != recorded:
                now = "has changed since its row was stored" if digests[path] else "cannot be read now"
                raise ValueError(f"sweep: run {run.key} read {path}, which {now}; remove {store} (or choose another "
                                 "--out) to run the sweep again")


def consolidate(store: Store, runs: list[SweepRun], out: Path) -> list[Path]:
    """``results.csv`` and ``timings.csv`` of the sweep's runs, rows sorted by key. A stored row
    whose settings are not its run's (a part changed from outside) is a ValueError naming it."""
    have = store.rows()
    missing = [r.key for r in runs if r.key not in have]
    if missing:
        raise RuntimeError(f"sweep: {len(missing)} runs missing from the store after the sweep (first {missing[0]})")
    for run in runs:
        row = have[run.key]
        target, variant = ("experiment", "policy") if run.kind == "experiment" else ("model", "backend")
        if (row.get(target), row.get(variant), row.get("seed"), row.get("config")) != (
                run.target, run.variant, str(run.seed), run.config):
            raise ValueError(f"sweep: the stored row of run {run.key} does not hold that run's settings (a store part "
                             f"changed from outside); remove the part holding it to run it again")
    rows = with_best_bounds([with_grid_columns(r, have[r.key]) for r in sorted(runs, key=lambda r: r.key)])
    columns = [c for c in column_order(rows) if c not in TIMING_COLUMNS and c not in RAN_ON]
    timing = ["key", *(c for c in (*TIMING_COLUMNS, *RAN_ON) if any(c in r for r in rows))]
    return [write_table(out / RESULTS, rows, columns), write_table(out / TIMINGS, rows, timing)]


def with_grid_columns(run: SweepRun, row: Row) -> Row:
    """``row`` as ``run`` would write it now: its grid's values after the lead columns. A row
    stored by an earlier version of the sweep file keeps its key when a setting moved between
    ``[base]`` and ``[grid]`` (the run's config is the same), but not its columns: the old grid's
    are dropped (they are config keys; no result is named like one) and the new grid's added."""
    lead = [str(k) for k in lead_columns(run)]
    config = json.loads(run.config)
    rest = {k: v for k, v in row.items() if k not in lead and k not in config}
    return {**{k: row[k] for k in lead}, **{k: cell(v) for k, v in json.loads(run.params).items()}, **rest}


def with_best_bounds(rows: list[Row]) -> list[Row]:
    """Solve rows with ``best_bound`` and ``gap_to_best_bound``: the best bound over every
    backend of the same instance (model, size, seed), as ``optsched.compare`` measures it."""
    from optsched.models.base import model_kinds
    from optsched.result import Result, Termination, relative_gap
    from optsched.solve import best_bound

    def number(text: str) -> float | None:
        return float(text) if text else None

    instances: dict[tuple[str, str, str], list[int]] = {}
    for i, row in enumerate(rows):
        if "backend" in row and row.get("termination") in Termination._value2member_map_:
            instances.setdefault((row["model"], row.get("size", ""), row["seed"]), []).append(i)
    out = list(rows)
    for (model, _, _), members in instances.items():
        kind = model_kinds()[model]
        if not isinstance(kind.maximize, bool):  # the direction is per instance (linear_program)
            continue
        results = [Result(Termination(rows[i]["termination"]), objective=number(rows[i]["objective"]),
                          bound=number(rows[i]["bound"])) for i in members]
        best = best_bound(kind, results)
        for i, r in zip(members, results):
            out[i] = {**rows[i], "best_bound": cell(best), "gap_to_best_bound": cell(relative_gap(r.objective, best))}
    return out


__all__ = ["SweepReport", "consolidate", "run_sweep", "warm_modules", "warm_runs"]
