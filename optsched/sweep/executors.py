"""Running batches of runs: serially, on a local process pool, or on a Dask cluster.

A task is a batch (a list of :class:`~optsched.sweep.grid.Run`); a worker returns its rows,
and only the calling process writes them to the store (one part per finished batch), so
workers never touch the output directory and a remote Dask cluster needs no shared disk.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import os
import threading
import time
from typing import Any, Callable, Sequence

from optsched.sweep.grid import Run, canonical_json
from optsched.sweep.store import Row, cell

TIMING_COLUMNS = ("runtime_s", "cpu_s")
EXECUTORS = ("serial", "pool", "dask")


@functools.lru_cache(maxsize=1)
def _versions() -> str:
    from optsched.results import package_versions

    return canonical_json(package_versions())


def _run_experiment(run: Run, config: dict[str, Any]) -> dict[str, Any]:
    from optsched.experiments import get_experiment
    from optsched.sweep.summaries import get_summary

    cfg = get_experiment(run.target).make_config(config)
    return get_summary(run.target).run(cfg, run.variant)


def _solve(run: Run, config: dict[str, Any]) -> dict[str, Any]:
    import zlib

    import numpy as np

    import optsched
    from optsched.generators import generate
    from optsched.solvers.registry import get_backend

    rng = np.random.default_rng([run.seed, zlib.crc32(run.target.encode()), config["size"]])
    model = generate(run.target, config["size"], rng)
    reason = get_backend(run.variant).fits(model)  # instance limits, e.g. brute force n <= 22
    if reason is not None:
        return {"n": model.size, "termination": "unfit", "objective": None, "bound": None, "gap_to_own_bound": None,
                "iterations": None, "message": reason, "runtime_s": 0.0}
    res = optsched.solve(model, run.variant, time_limit=config["time_limit"], verify=config["verify"],
                         **config["options"])
    return {"n": model.size, "termination": res.termination.value, "objective": res.objective, "bound": res.bound,
            "gap_to_own_bound": res.gap_to_own_bound, "iterations": res.iterations, "message": res.message,
            "runtime_s": res.runtime_s}


def _quiet_worker() -> None:
    """Worker-process setup: no tqdm bars from inside the runs (the sweep has its own)."""
    os.environ["TQDM_DISABLE"] = "1"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a killed, not yet reaped parent
    except OSError:
        return True


def _pool_worker(parent: int) -> None:
    """Pool-worker setup: quiet runs, and exit when the sweep process is gone (a SIGKILLed
    sweep cannot shut its pool down; its workers would otherwise wait forever)."""
    _quiet_worker()

    def watch() -> None:
        while _alive(parent):
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="optsched-sweep-watchdog", daemon=True).start()


def run_one(run: Run) -> Row:
    """One run's row (every cell already text). Progress bars inside the run are silenced:
    by ``TQDM_DISABLE`` in worker processes, by redirecting stderr on the main thread."""
    config = json.loads(run.config)
    lead = ({"key": run.key, "experiment": run.target, "policy": run.variant, "seed": run.seed}
            if run.kind == "experiment" else
            {"key": run.key, "model": run.target, "backend": run.variant, "seed": run.seed})
    start, cpu = time.perf_counter(), time.process_time()
    try:
        main = threading.current_thread() is threading.main_thread()
        with contextlib.redirect_stderr(io.StringIO()) if main else contextlib.nullcontext():
            metrics = (_run_experiment if run.kind == "experiment" else _solve)(run, config)
    except Exception as exc:
        raise RuntimeError(f"sweep run {run.key} ({run.target}, {run.variant}, seed {run.seed}) failed: {exc!r}") from exc
    timing = {"runtime_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu}
    timing.update({k: metrics.pop(k) for k in TIMING_COLUMNS if k in metrics})
    params = json.loads(run.params)
    reserved = {*lead, "config", "versions", *TIMING_COLUMNS}
    clash = sorted((set(params) & set(metrics)) | ((set(params) | set(metrics)) & reserved))
    if clash:
        raise RuntimeError(f"sweep: column {clash[0]!r} is both a setting and a result")
    row = {**lead, **params, **metrics, **timing}
    out = {k: cell(v) for k, v in row.items()}
    out["config"] = run.config
    out["versions"] = _versions()
    return out


def run_batch(runs: Sequence[Run]) -> list[Row]:
    return [run_one(r) for r in runs]


OnDone = Callable[[list[Row]], None]


def run_serial(batches: list[list[Run]], on_done: OnDone) -> None:
    for batch in batches:
        on_done(run_batch(batch))


def run_pool(batches: list[list[Run]], on_done: OnDone, *, workers: int) -> None:
    """A ``ProcessPoolExecutor`` (forkserver start method: safe with threads in the parent,
    and the server imports numpy and this module once for every worker)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(["optsched.sweep.executors"])
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_pool_worker,
                               initargs=(os.getpid(),))
    try:
        futures = [pool.submit(run_batch, b) for b in batches]
        for fut in as_completed(futures):
            on_done(fut.result())
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def run_dask(batches: list[list[Run]], on_done: OnDone, *, address: str, workers: int) -> None:
    """``address = "local"`` starts a LocalCluster of ``workers`` single-threaded processes;
    any other address is a running scheduler (``tcp://host:8786``) reached with ``Client``."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ValueError("--dask: dask.distributed is not installed: install optsched[dask]") from None
    cluster = None
    try:
        if address == "local":
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR)
            client = Client(cluster)
        else:
            try:
                client = Client(address, timeout=10)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ValueError(f"--dask: cannot connect to {address!r}: {exc}") from None
        try:
            client.run(_quiet_worker)
            futures = client.map(run_batch, batches, pure=False)
            for fut in as_completed(futures):
                on_done(fut.result())
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()
