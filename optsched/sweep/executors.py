"""Running batches of runs: serially, on a local process pool, or on a Dask cluster.

A task is a batch (a list of :class:`~optsched.sweep.grid.SweepRun`); a worker returns its rows,
and only the calling process writes them to the store (one part per finished batch), so
workers never touch the output directory and a remote Dask cluster needs no shared disk.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import logging
import os
import signal
import sys
import threading
import time
import warnings
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator, Sequence

from optsched.files import recording_inputs
from optsched.result import SolveFailed, WorkerLost
from optsched.sweep.batches import Batches
from optsched.sweep.grid import SweepRun, canonical_json
from optsched.sweep.store import Row, cell

TIMING_COLUMNS = ("runtime_s", "cpu_s")
RAN_ON = ("executor", "workers")  # set on each row by the sweep process that stored it (timings.csv)
WARNINGS = "warnings"  # a run's warnings, JSON: shown by the sweep process, never stored
EXECUTORS = ("serial", "pool", "dask")


@functools.lru_cache(maxsize=1)
def _versions() -> str:
    from optsched.artifacts import package_versions

    return canonical_json(package_versions())


@functools.lru_cache(maxsize=1)
def run_source() -> str:
    """The ``source`` cell of a row: the git commit (and uncommitted changes) of the code that
    ran it, as JSON (``{}`` outside a git checkout; ``artifacts.source_revision``)."""
    from optsched.artifacts import source_revision

    return canonical_json(source_revision())


def _run_experiment(run: SweepRun, config: dict[str, Any]) -> dict[str, Any]:
    from optsched.papers import get_paper

    paper = get_paper(run.target)
    assert paper.sweep is not None  # expand() refused a paper without one
    return paper.sweep.metrics(paper.make_config(config), run.variant)


def _solve(run: SweepRun, config: dict[str, Any]) -> dict[str, Any]:
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


def _pool_worker(parent: int, warm: Sequence[str] = (), warm_runs: Sequence[SweepRun] = ()) -> None:
    """Pool-worker setup: Ctrl-C left to the sweep process (a terminal sends it to every process
    of the group: each worker printed a traceback), quiet runs, the imports of ``warm`` and the
    warm-up runs, and exit when the sweep process is gone (a SIGKILLed sweep cannot shut its
    pool down; its workers would otherwise wait forever)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _quiet_worker()
    warm_worker(warm, warm_runs)

    def watch() -> None:
        while _alive(parent):
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="optsched-sweep-watchdog", daemon=True).start()


def run_one(run: SweepRun) -> Row:
    """One run's row (every cell already text). Progress bars inside the run are silenced:
    by ``TQDM_DISABLE`` in worker processes, by redirecting stderr on the main thread. The
    run's warnings (trace rows skipped) are kept, each once, as JSON under :data:`WARNINGS`,
    for the sweep process to show (:func:`optsched.sweep.runner.run_sweep`): the redirect
    swallowed them."""
    config = json.loads(run.config)
    lead = lead_columns(run)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        main = threading.current_thread() is threading.main_thread()
        with run_warnings() as caught, \
                contextlib.redirect_stderr(io.StringIO()) if main else contextlib.nullcontext(), recording_inputs() as inputs:
            metrics = (_run_experiment if run.kind == "experiment" else _solve)(run, config)
    except (ValueError, SolveFailed) as exc:  # bad input met at run time, a policy's solver failing:
        # the same one line (and exit status) as the run outside a sweep, naming the run
        raise type(exc)(f"sweep run {run.key} ({run.target}, {run.variant}, seed {run.seed}): {exc}") from None
    except Exception as exc:
        raise RuntimeError(f"sweep run {run.key} ({run.target}, {run.variant}, seed {run.seed}) failed: {exc!r}") from exc
    timing = {"runtime_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu}
    timing.update({k: metrics.pop(k) for k in TIMING_COLUMNS if k in metrics})
    params = json.loads(run.params)
    reserved = {*lead, "config", "versions", "source", "inputs", WARNINGS, *TIMING_COLUMNS, *RAN_ON}
    clash = sorted((set(config) & set(metrics)) | ((set(params) | set(metrics)) & reserved))
    if clash:  # a result named like a setting: consolidate() tells the grid's columns by the config's keys
        raise RuntimeError(f"sweep: column {clash[0]!r} is both a setting and a result")
    if inputs:  # the files the run read (a trace directory), by the path it opened them at
        metrics["inputs"] = canonical_json({path: note["sha256"] for path, note in inputs.items()})
    row = {**lead, **params, **metrics, **timing}
    out = {k: cell(v) for k, v in row.items()}
    out["config"] = run.config
    out["versions"] = _versions()
    out["source"] = run_source()
    said = list(dict.fromkeys(caught))
    if said:
        out[WARNINGS] = json.dumps(said)
    return out


_RUN = threading.local()  # .warnings: the list the warnings of the run on this thread go to
_HOOK = threading.Lock()
_passed_on: Any = None  # the showwarning in place when run_warnings installed its own


def _show_run_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    sink = getattr(_RUN, "warnings", None)
    if sink is not None:
        sink.append(" ".join(str(message).split()))
    elif _passed_on is getattr(warnings, "_showwarning_orig", None) and hasattr(warnings, "_showwarnmsg_impl"):
        # the default display, or catch_warnings(record=True)'s log (its _showwarnmsg_impl)
        warnings._showwarnmsg_impl(warnings.WarningMessage(message, category, filename, lineno, file, line))  # type: ignore[attr-defined]
    else:
        _passed_on(message, category, filename, lineno, file, line)


@contextlib.contextmanager
def run_warnings() -> Iterator[list[str]]:
    """The warnings the run on this thread gives, collected as text. ``catch_warnings`` swaps
    process-wide state: with two runs on threads of one process (a Dask worker of several
    threads) one run's warning went to the other's row or to stderr. A ``showwarning`` that
    routes by thread is installed once instead; warnings of other threads pass on to the
    display that was in place. Python's registry shows a warning once per location and text in
    a process; it is made to forget at each run's start, so a run repeating an earlier run's
    warning lists it in its own row too (:func:`_forget_shown_warnings`)."""
    global _passed_on
    with _HOOK:
        if warnings.showwarning is not _show_run_warning:
            _passed_on = warnings.showwarning
            warnings.showwarning = _show_run_warning
    _forget_shown_warnings()
    _RUN.warnings = caught = []
    try:
        yield caught
    finally:
        _RUN.warnings = None


def _forget_shown_warnings() -> None:
    """Python's once-per-location registries are versioned by the warning filters: bumping the
    version (as any change of the filters does) makes them forget. ``catch_warnings`` did it too,
    but saves and restores the process's whole display: a run on another thread inside a
    solver's ``catch_warnings(record=True)`` (cvxpy's) had its log left as the process's
    display, and later warnings went there (probe BA). Where Python has no such hook, entering
    and at once leaving ``catch_warnings`` bumps it (with that race, for an instant)."""
    bump = getattr(warnings, "_filters_mutated", None)
    if bump is not None:
        bump()
    else:
        with warnings.catch_warnings():
            pass


def lead_columns(run: SweepRun) -> dict[str, Any]:
    """The first columns of a run's row: its key, what it runs (experiment and policy, or model
    and backend) and its seed; the grid's values follow."""
    if run.kind == "experiment":
        return {"key": run.key, "experiment": run.target, "policy": run.variant, "seed": run.seed}
    return {"key": run.key, "model": run.target, "backend": run.variant, "seed": run.seed}


def run_batch(runs: Sequence[SweepRun]) -> list[Row]:
    return [run_one(r) for r in runs]


OnDone = Callable[[list[Row]], None]


def warm_worker(modules: Sequence[str], runs: Sequence[SweepRun] = ()) -> None:
    """Import what the runs need (a paper's experiment module, solver packages) and run the
    warm-up ``runs`` (tiny runs of each experiment and policy: ``SweepSummary.warm``), their rows
    dropped, once per worker process before its first task: no batch pays for them, and no
    run's ``runtime_s`` holds the loading of a policy's kernels (1-2 s in a fresh process). A
    run the fork server this worker came from already did is not repeated."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:  # a run that needs it reports the error itself
            pass
    server = sys.modules.get("optsched.sweep.fork_server_preload")  # a fork server's warm-up this process inherited
    done = getattr(server, "ran", frozenset())
    for run in runs:  # a warning one of them gives first still reaches the real runs' rows (run_warnings forgets)
        if run.key in done:
            continue
        try:
            run_one(run)
        except Exception:  # noqa: BLE001 - the real runs report what fails
            pass


def run_serial(batches: Batches, on_done: OnDone, *, warm_runs: Sequence[SweepRun] = ()) -> None:
    warm_worker((), warm_runs)
    while (batch := batches.next()) is not None:
        rows = run_batch(batch)
        batches.done(rows)
        on_done(rows)


def _in_flight(workers: int) -> int:
    return 2 * workers  # a worker always has its next batch queued


def _fork_server(preload: Sequence[str], warm_runs: Sequence[SweepRun] = ()) -> Any:
    """multiprocessing's ``forkserver`` context with its server started now, ``preload``
    imported and ``warm_runs`` run there (:mod:`optsched.sweep.fork_server_preload`) for every
    process forked from it (the server works while this process goes on); None where there is
    no fork server. A server already running (an earlier sweep in this process) is kept, with
    its own preload."""
    import multiprocessing
    from multiprocessing import forkserver

    from optsched.sweep.fork_server_preload import SERVER, WARM_RUNS

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([*preload, "optsched.sweep.fork_server_preload"])
    # the server, and every worker forked from it, starts with SIGINT ignored (an inherited
    # SIG_IGN, which Python keeps): a Ctrl-C, which a terminal sends to the whole process group,
    # is the sweep process's alone (the server's preload and Dask's workers printed tracebacks)
    main = threading.current_thread() is threading.main_thread()
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:  # read by the server as it starts (its environment is this process's, now)
        os.environ[SERVER] = "1"
        if warm_runs:
            os.environ[WARM_RUNS] = json.dumps([asdict(run) for run in warm_runs])
        forkserver.ensure_running()
    finally:
        os.environ.pop(SERVER, None)
        os.environ.pop(WARM_RUNS, None)
        if main:
            signal.signal(signal.SIGINT, handler)
    return ctx


def worker_lost(batches: Sequence[Sequence[SweepRun]]) -> WorkerLost:
    """The error for a worker process that died: the runs that were under way, the dead worker's
    among them (neither the pool nor Dask says which was its)."""
    runs = [run for batch in batches for run in batch]
    shown = ", ".join(f"{r.key} ({r.target}, {r.variant}, seed {r.seed})" for r in runs[:4])
    more = f" and {len(runs) - 4} more" if len(runs) > 4 else ""
    return WorkerLost(f"sweep: a worker process died (killed by the system, out of memory?) while these runs were "
                      f"under way, its own among them: {shown}{more}; the runs stored so far are kept: run the same "
                      "command again to resume")


def run_pool(batches: Batches, on_done: OnDone, *, workers: int, warm: Sequence[str] = (),
             warm_runs: Sequence[SweepRun] = ()) -> None:
    """A ``ProcessPoolExecutor`` (forkserver start method: safe with threads in the parent,
    and the server imports numpy and this module once for every worker; each worker then
    imports ``warm`` once). Batches are submitted as earlier ones finish, so their size can
    follow the measured run times (:class:`~optsched.sweep.batches.Batches`)."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    ctx = _fork_server([__name__], warm_runs) or multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_pool_worker,
                               initargs=(os.getpid(), tuple(warm), tuple(warm_runs)))
    try:
        running: dict[Any, list[SweepRun]] = {}
        while True:
            while len(running) < _in_flight(workers) and (batch := batches.next()) is not None:
                running[pool.submit(run_batch, batch)] = batch
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                batch = running.pop(fut)
                try:
                    rows = fut.result()
                except BrokenProcessPool:
                    raise worker_lost([batch, *running.values()]) from None
                batches.done(rows)
                on_done(rows)
    except BaseException:
        workers_now = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
        manager = getattr(pool, "_executor_manager_thread", None)
        pool.shutdown(wait=False, cancel_futures=True)
        _stop_workers(workers_now)
        if manager is not None:
            # the pool's thread closes its wake-up pipe once it sees the workers gone; the exit hook
            # of concurrent.futures writes to that pipe, and racing its closing (Python 3.11) it
            # printed "OSError: Bad file descriptor" after "optsched: interrupted"
            manager.join(timeout=5)
        raise
    pool.shutdown(wait=True)


def _stop_workers(processes: Sequence[Any]) -> None:
    """End a stopping pool's worker processes now (a Ctrl-C, a lost worker, a failed run).
    Left to finish their batches, they kept the interpreter's exit waiting in
    ``concurrent.futures``' exit hook; a second Ctrl-C there broke that wait and left
    multiprocessing's own hook waiting on workers nothing would stop (probe BJ: hung for good,
    3 of 3). The rows of the batches under way are lost, as on any stop; those stored stay."""
    for process in processes:
        with contextlib.suppress(Exception):  # already gone
            process.terminate()
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(timeout=5)


@dataclass(frozen=True)
class DaskTLS:
    """Files for a ``tls://`` scheduler: the CA that signed the cluster's certificates, and this
    client's certificate and key (PEM). All None: dask's own configuration
    (``distributed.comm.tls.ca-file``, ``.client.cert``, ``.client.key``; e.g. the environment
    variables ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``, ``..._TLS__CLIENT__CERT``,
    ``..._TLS__CLIENT__KEY``)."""

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    def given(self) -> bool:
        return any(f is not None for f in (self.ca_file, self.cert_file, self.key_file))


DASK_SCHEMES = ("tcp", "tls")


def _check_host_port(address: str) -> None:
    """HOST[:PORT] after the scheme, a port in 1..65535 (dask's 8786 when left out; a malformed
    one waited out a 10 s connect timeout)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"--dask: {address!r} is not HOST:PORT ({exc})") from None
    if not parts.hostname or (port is not None and not 1 <= port <= 65535) or parts.path not in ("", "/"):
        raise ValueError(f"--dask: expected SCHEME://HOST:PORT with a port in 1..65535, got {address!r}")


def check_dask_address(address: str, tls: DaskTLS | None) -> None:
    """``local``, ``tls://HOST:PORT`` or ``tcp://HOST:PORT``; TLS files only with ``tls://``.

    A ``tcp://`` scheduler is reached without encryption or authentication, and the results
    its workers send back are unpickled here: it must be trusted (one warning says so)."""
    tls = tls or DaskTLS()
    if importlib.util.find_spec("distributed") is None:  # before anything is cleaned up or run
        raise ValueError("--dask: dask.distributed is not installed: install optsched[dask]")
    if not isinstance(address, str) or not address.strip():
        raise ValueError("--dask: expected 'local' or a scheduler address such as tls://host:8786, got an empty address")
    if address == "local":
        if tls.given():
            raise ValueError("--dask-ca/--dask-cert/--dask-key: only for a tls:// scheduler, not a local cluster")
        return
    scheme, sep, rest = address.partition("://")
    if not sep or scheme not in DASK_SCHEMES or not rest:
        raise ValueError(f"--dask: expected 'local' or SCHEME://HOST:PORT with SCHEME in {', '.join(DASK_SCHEMES)}, "
                         f"got {address!r}")
    _check_host_port(address)
    if scheme == "tcp":
        if tls.given():
            raise ValueError("--dask-ca/--dask-cert/--dask-key: need a tls:// scheduler address")
        import warnings

        warnings.warn(f"--dask {address}: plain tcp has no encryption or authentication and results are unpickled; "
                      "use it only with a scheduler you trust (or tls:// with --dask-ca/--dask-cert/--dask-key)",
                      stacklevel=2)
        return
    files = (tls.ca_file, tls.cert_file, tls.key_file)
    if tls.given():
        if any(f is None for f in files):
            raise ValueError("--dask-ca/--dask-cert/--dask-key: give all three for a tls:// scheduler")
        for option, f in zip(("--dask-ca", "--dask-cert", "--dask-key"), files):
            if not os.path.isfile(str(f)):
                raise ValueError(f"{option}: {f} is not a file")
    _security(tls)  # dask's own TLS configuration, when no files are given


def _security(tls: DaskTLS | None) -> Any:
    """A ``distributed.Security`` requiring encryption, from ``tls`` or dask's configuration."""
    try:
        from distributed import Security
    except ImportError:
        raise ValueError("--dask: dask.distributed is not installed: install optsched[dask]") from None

    tls = tls or DaskTLS()
    if tls.given():
        return Security(tls_ca_file=tls.ca_file, tls_client_cert=tls.cert_file, tls_client_key=tls.key_file,
                        require_encryption=True)
    sec = Security(require_encryption=True)
    if not (sec.tls_ca_file and sec.tls_client_cert):
        raise ValueError("--dask: a tls:// scheduler needs --dask-ca, --dask-cert and --dask-key "
                         "(or dask's distributed.comm.tls configuration)")
    return sec


# A private LocalCluster's workers run our tasks and nothing else: no statistical profiler
# (a thread sampling every task's stack every 10 ms) and slower health checks than dask's
# defaults (memory every 100 ms, the event-loop tick every 20 ms), which on 2 cores took CPU
# from the runs (measured: a 10x ESDP sweep 9.2 s -> 7.7-8.2 s wall).
# Worker saturation 1.0: the scheduler hands a single-threaded worker one task at a time and
# keeps the others queued for whichever worker frees first (dask's 1.1 gives each worker a
# second task in advance, and at the end of a sweep one worker idled while the other still
# held two: 0.6 s of a 9 s sweep).
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.tick.interval": "1s",
    "distributed.scheduler.worker-saturation": 1.0,
}


def _start_forkserver(preload: Sequence[str], warm_runs: Sequence[SweepRun] = ()) -> str | None:
    """Start the fork server (:func:`_fork_server`) with ``preload`` for a LocalCluster's
    nannies to fork their workers from, and return the method name for dask's config (None
    where there is no fork server or no dask.distributed). Spawned workers each start an
    interpreter and import dask.distributed and the runs' modules; forked ones inherit them: a
    2-worker cluster started in 0.2 s instead of 0.5 s and closed in 0.02 s instead of 0.1 s
    (measured). The server imports them while this process imports dask.distributed. dask, when
    it sets up the fork server itself, first imports numpy, pandas and lz4 here to preload
    them; this process never uses pandas, so its flag is set to say the preload is done."""
    if importlib.util.find_spec("distributed") is None or _fork_server(preload, warm_runs) is None:
        return None
    import distributed.utils as dask_utils

    if hasattr(dask_utils, "_forkserver_preload_set"):
        dask_utils._forkserver_preload_set = True
    return "forkserver"


def run_dask(batches: Batches, on_done: OnDone, *, address: str, workers: int, tls: DaskTLS | None = None,
             warm: Sequence[str] = (), warm_runs: Sequence[SweepRun] = ()) -> None:
    """``address = "local"`` starts a LocalCluster of ``workers`` single-threaded processes
    (forked from a fork server that preloads dask.distributed and ``warm``: :func:`_start_forkserver`);
    any other address is a running scheduler reached with ``Client``: ``tls://host:8786``
    with the certificates of ``tls`` (:class:`DaskTLS`), or a trusted ``tcp://host:8786``
    (``run_sweep`` checks the address first with :func:`check_dask_address`)."""
    method = _start_forkserver(["distributed", __name__, *warm], warm_runs) if address == "local" else None
    try:
        from distributed import Client, LocalCluster, as_completed
        from distributed.scheduler import KilledWorker
    except ImportError:
        raise ValueError("--dask: dask.distributed is not installed: install optsched[dask]") from None
    cluster = None
    try:
        if address == "local":
            import dask

            config = {**LOCAL_CLUSTER_CONFIG, **({"distributed.worker.multiprocessing-method": method} if method else {})}
            with dask.config.set(config):  # read by the nannies and handed to their workers
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=logging.CRITICAL)  # a failed run is the sweep's one line
            client = Client(cluster)
        else:
            security = _security(tls) if address.startswith("tls://") else None
            try:
                client = Client(address, timeout=10, security=security)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ValueError(f"--dask: cannot connect to {address!r}: {exc}") from None
        try:
            client.run(_quiet_worker)
            client.run(warm_worker, tuple(warm), tuple(warm_runs))
            slots = _in_flight(len(client.scheduler_info().get("workers", {})) or workers)
            pending = as_completed()

            running: dict[Any, list[SweepRun]] = {}

            def refill() -> None:  # batches are cut as workers free up (their size follows run times)
                while pending.count() < slots and (batch := batches.next()) is not None:
                    fut = client.submit(run_batch, batch, pure=False)
                    running[fut.key] = batch
                    pending.add(fut)

            refill()
            for fut in pending:
                batch = running.pop(fut.key)
                try:
                    rows = fut.result()
                except KilledWorker:  # dask retried it on other workers, which died too
                    raise worker_lost([batch, *running.values()]) from None
                batches.done(rows)
                on_done(rows)
                refill()
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()
