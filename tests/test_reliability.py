"""Reliability II: no hangs, no unbounded reads, no escape from the one-line error, one writer
per sweep store, ordinary file modes, numba without a writable cache, Dask over TLS.

Bad *inputs* live in the corpus (tests/bad_inputs/ and tests/test_bad_inputs.py); this file
holds what needs a process, an environment or the file system set up around the run.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from optsched.cli import main

ROOT = Path(__file__).resolve().parents[1]
SOLVE_SWEEP = """
kind = "solve"
models = ["set_packing"]
backends = ["highs"]
sizes = [4, 5]
seeds = {seeds}
"""


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(argv)
    return code, capsys.readouterr().err.strip().splitlines()


def one_error_line(lines: list[str], words: str) -> None:
    assert len(lines) == 1 and lines[0].startswith("optsched: error: "), lines
    assert words in lines[0], (words, lines[0])


def wait_until(condition: Callable[[], object], *, polls: int = 2400,
               while_running: subprocess.Popen[str] | None = None) -> bool:
    """Whether ``condition()`` came true within ``polls`` looks 0.05 s apart, while the process
    ``while_running`` (if given) still ran: the bound keeps a test from waiting forever on
    another process; it is no claim about speed."""
    for _ in range(polls):
        if condition():
            return True
        if while_running is not None and while_running.poll() is not None:
            return bool(condition())
        time.sleep(0.05)
    return bool(condition())


def run_cli(argv: list[str], *, timeout: float = 300, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """``optsched`` in a child process; a child still running after ``timeout`` seconds is
    killed and the test fails (subprocess.TimeoutExpired): the guard against a hang."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1", **kwargs.pop("env", {})}  # type: ignore[dict-item]
    return subprocess.run([sys.executable, "-m", "optsched", *argv], capture_output=True, text=True, env=env,
                          timeout=timeout, **kwargs)  # type: ignore[call-overload]


# --- the byte cap on user files -------------------------------------------------------------------
def test_input_larger_than_the_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from optsched.files import ENV_MAX_INPUT_BYTES
    from optsched.io import load_instances

    path = tmp_path / "big.json"
    path.write_text('{"model": "set_packing", "n_elements": 2, "sets": [[0], [1]], "weights": [1, 2]}' + " " * 200)
    assert len(load_instances(path)) == 1  # under the default cap
    monkeypatch.setenv(ENV_MAX_INPUT_BYTES, "100")
    with pytest.raises(ValueError, match="larger than the 100 byte input limit"):
        load_instances(path)
    code, lines = cli(["solve", str(path)], capsys)
    assert code == 2
    one_error_line(lines, f"set {ENV_MAX_INPUT_BYTES} to raise it")
    monkeypatch.setenv(ENV_MAX_INPUT_BYTES, "lots")
    with pytest.raises(ValueError, match=f"{ENV_MAX_INPUT_BYTES}: expected a whole number of bytes"):
        load_instances(path)


def test_cap_holds_for_a_file_that_reports_size_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc files are regular files of st_size 0 that yield bytes: the cap counts what is read."""
    from optsched.files import ENV_MAX_INPUT_BYTES, read_user_bytes

    maps = Path("/proc/self/maps")
    if not maps.is_file():
        pytest.skip("no /proc")
    assert maps.stat().st_size == 0 and len(read_user_bytes(maps, "file")) > 100
    monkeypatch.setenv(ENV_MAX_INPUT_BYTES, "100")
    with pytest.raises(ValueError, match="larger than the 100 byte input limit"):
        read_user_bytes(maps, "file")


def test_fifo_does_not_block_a_real_process(tmp_path: Path) -> None:
    fifo = tmp_path / "instance.json"
    os.mkfifo(fifo)
    proc = run_cli(["solve", str(fifo)], timeout=60)  # a CLI blocked on the FIFO is killed, failing the test
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "is not a regular file" in proc.stderr


# --- bounded rejection sampling ----------------------------------------------------------------
def test_rejection_samplers_are_bounded() -> None:
    from optsched.esdp.env import generate_instance
    from optsched.models.mesh import MeshGenerator

    with pytest.raises(ValueError, match="edge_prob: 1000 draws in a row had no channel"):
        generate_instance(np.random.default_rng(0), edge_prob=1e-300)
    from optsched.models.mesh import _positive_normal

    # the redraw bound itself (a generator refuses such settings when it is built, below)
    with pytest.raises(ValueError, match="capacity_mean: .* still not above floor = 50"):
        _positive_normal(np.random.default_rng(0), 1.0, 0.1, 5, 50.0, "capacity_mean")
    with pytest.raises(ValueError, match="capacity_mean: N.1, 0.1. lies almost wholly below the floor 50"):
        MeshGenerator(capacity_mean=1.0, capacity_std=0.1, rho_mean=60.0, xbar_mean=60.0, floor=50.0)
    with pytest.raises(ValueError, match="rho_mean: N.0.1, 0. lies almost wholly below the floor 0.5"):
        MeshGenerator(rho_mean=0.1, rho_std=0.0, floor=0.5, capacity_mean=20.0)
    # a rare but possible acceptance still succeeds, with the same draws as before the bound
    inst = generate_instance(np.random.default_rng(0), n_ports=2, n_servers=2, edge_prob=0.05)
    assert inst.n_edges >= 1


# --- output files: --out a file or unwritable, a full disk ----------------------------------------
def test_out_is_a_file_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("horizon = 3\nn_servers = 6\nn_ports = 3\n")
    target = tmp_path / "a_file"
    target.write_text("keep")
    code, lines = cli(["run", "esdp", "--config", str(cfg), "--out", str(target)], capsys)
    assert code == 2
    one_error_line(lines, f"{target}: exists and is not a directory")
    assert target.read_text() == "keep"


def test_out_not_writable_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("horizon = 3\nn_servers = 6\nn_ports = 3\n")
    if os.geteuid() == 0:  # root writes through permission bits: use a directory nobody can create in
        out = Path("/sys/optsched-test-out")
        try:
            out.mkdir()
        except OSError:
            pass
        else:
            out.rmdir()
            pytest.skip("/sys is writable here")
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        out = ro / "out"
    code, lines = cli(["run", "esdp", "--config", str(cfg), "--out", str(out)], capsys)
    assert code == 2
    one_error_line(lines, str(out))


def test_unreadable_config_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads through permission bits (the directory and FIFO cases are in the corpus)")
    cfg = tmp_path / "c.toml"
    cfg.write_text("horizon = 3\n")
    cfg.chmod(0)
    code, lines = cli(["run", "esdp", "--config", str(cfg), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    one_error_line(lines, "Permission denied")


def _limit_file_size(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_full_disk_run_one_line_and_no_temporaries(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("horizon = 3\nn_servers = 6\nn_ports = 3\n")
    out = tmp_path / "out"
    proc = run_cli(["run", "esdp", "--config", str(cfg), "--out", str(out)], preexec_fn=lambda: _limit_file_size(64))
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("optsched: error: ") and "File too large" in proc.stderr
    assert os.listdir(out) == []  # no half-written file, no temporary left


def test_full_disk_sweep_leaves_the_store_intact(tmp_path: Path) -> None:
    from optsched.sweep import run_sweep

    out = tmp_path / "out"
    small = tmp_path / "small.toml"
    small.write_text(SOLVE_SWEEP.format(seeds="[0, 1]"))
    run_sweep(small, out, executor="serial", progress=False)
    store = out / "store"
    before = {p.name: p.read_bytes() for p in store.iterdir() if p.name != ".lock"}  # .lock: the last writer's pid
    results = (out / "results.csv").read_bytes()

    more = tmp_path / "more.toml"
    more.write_text(SOLVE_SWEEP.format(seeds="[0, 1, 2]"))
    proc = run_cli(["sweep", str(more), "--out", str(out), "--workers", "1"], preexec_fn=lambda: _limit_file_size(200))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "File too large" in proc.stderr
    after = {p.name: p.read_bytes() for p in store.iterdir() if p.name != ".lock"}
    assert after == before  # no part lost, none half-written, no temporary left
    assert (out / "results.csv").read_bytes() == results

    rep = run_sweep(more, out, executor="serial", progress=False)  # resumes: only the new seed runs
    assert rep.stored_before == 4 and rep.ran == 2


# --- one writer per sweep store ------------------------------------------------------------------------
HOLD_LOCK = """
import sys
from optsched.sweep.store import Store
with Store(sys.argv[1]).locked():
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_second_sweep_on_a_store_is_refused_while_the_first_holds_it(tmp_path: Path) -> None:
    """Process A holds the store's lock (as a running sweep does from its clean-up to its last
    file); process B, a real ``optsched sweep`` on the same --out, is refused with one line and
    touches nothing; once A is gone (killed, even) B runs."""
    sweep = tmp_path / "s.toml"
    sweep.write_text(SOLVE_SWEEP.format(seeds="[0]"))
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(out / "store")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        (out / "store" / ".part-inflight.tmp").write_text("a part being written by A")
        proc = run_cli(["sweep", str(sweep), "--out", str(out), "--workers", "1"])
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1
        assert f"is in use by another sweep (pid {holder.pid})" in proc.stderr
        assert (out / "store" / ".part-inflight.tmp").exists()  # B's clean-up did not run
        assert not (out / "results.csv").exists()
    finally:
        holder.kill()
        holder.wait()
    proc = run_cli(["sweep", str(sweep), "--out", str(out), "--workers", "1"])
    assert proc.returncode == 0, proc.stderr
    assert not (out / "store" / ".part-inflight.tmp").exists()  # the dead writer's temporary is cleaned


@pytest.mark.slow
def test_two_real_sweeps_on_one_store(tmp_path: Path) -> None:
    """Two ``optsched sweep`` processes on one --out: the second is refused while the first
    runs, and the first stores every run exactly once."""
    sweep = tmp_path / "s.toml"
    sweep.write_text('kind = "experiment"\nexperiment = "esdp"\nseeds = [0, 1, 2, 3, 4, 5]\npolicies = ["ESDP", "LCF"]\n'
                     '[base]\nhorizon = 1500\nn_servers = 8\nn_ports = 3\n')
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen([sys.executable, "-m", "optsched", "sweep", str(sweep), "--out", str(out), "--workers", "1",
                              "--batch-size", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lock = out / "store" / ".lock"
    assert wait_until(lambda: lock.exists() and lock.read_text().strip() == str(first.pid), while_running=first)
    second = run_cli(["sweep", str(sweep), "--out", str(out), "--workers", "1"])
    assert first.poll() is None, "the first sweep ended before the second started: make it longer"
    assert second.returncode == 2 and "is in use by another sweep" in second.stderr
    first.communicate(timeout=600)
    assert first.returncode == 0
    from optsched.sweep.store import Store

    parts = Store(out / "store").parts()
    keys = [line.split(",")[0] for p in parts for line in p.read_text().splitlines()[1:]]
    assert len(keys) == len(set(keys)) == 12



def _session_processes(sid: int) -> list[int]:
    """The live processes of session ``sid`` (zombies are dead: their parent reaps them)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(entry.name))
    return pids


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads sessions from /proc")
@pytest.mark.parametrize("executor", [["--workers", "2"], ["--dask", "local", "--workers", "2"]], ids=["pool", "dask"])
def test_killed_sweep_leaves_no_worker_behind(tmp_path: Path, executor: list[str]) -> None:
    """A sweep SIGKILLed while its workers run (it cannot shut them down) leaves no process
    behind: every process it started (pool workers, the fork server, Dask's workers) notices
    and exits within a few seconds, instead of computing for nobody."""
    if "--dask" in executor:
        pytest.importorskip("distributed")
    sweep = tmp_path / "s.toml"
    sweep.write_text('kind = "experiment"\nexperiment = "esdp"\nseeds = [0, 1, 2, 3, 4, 5, 6, 7]\n'
                     'policies = ["ESDP", "LCF"]\n[base]\nhorizon = 1500\nn_servers = 8\nn_ports = 3\n')
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TQDM_DISABLE": "1"}
    sweep_proc = subprocess.Popen([sys.executable, "-m", "optsched", "sweep", str(sweep), "--out", str(out), *executor,
                                   "--batch-size", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                  start_new_session=True)
    try:
        # a batch came back: the workers run
        assert wait_until(lambda: list((out / "store").glob("part-*")), while_running=sweep_proc), "no batch stored"
        assert len(_session_processes(sweep_proc.pid)) > 1, "the sweep started no worker process"
        sweep_proc.kill()
        sweep_proc.wait(timeout=10)
        wait_until(lambda: not _session_processes(sweep_proc.pid), polls=600)
        left = _session_processes(sweep_proc.pid)
        assert not left, f"processes of the killed sweep still running after 600 polls: {left}"
    finally:
        for pid in _session_processes(sweep_proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)

# --- writing over what is not a regular file --------------------------------------------------------
def _special(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        import socket

        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    else:  # a character device like /dev/null, made in the test's own directory
        try:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except (PermissionError, OSError):
            pytest.skip("cannot make a device node here")


@pytest.mark.parametrize("kind", ["fifo", "directory", "socket", "device"])
@pytest.mark.parametrize("writer", ["solve --log", "export json", "export mps"])
def test_results_are_never_written_over_a_device_fifo_socket_or_directory(tmp_path: Path, kind: str, writer: str) -> None:
    """Run as root, ``optsched solve --log /dev/full`` renamed its temporary file over the
    device node (a regular file was left at /dev/full), and HiGHS's MPS writer would block on a
    FIFO without a reader. Every writer now refuses a target that exists and is not a regular
    file: exit 2, one line naming it, the target untouched (and no hang: the child is killed
    after 60 s)."""
    instance = tmp_path / "sp.json"
    instance.write_text('{"model": "set_packing", "n_elements": 3, "sets": [[0, 1], [1, 2]], "weights": [1, 2]}')
    target = tmp_path / ("target.mps" if writer == "export mps" else "target.json")
    _special(kind, target)
    before = os.lstat(target)
    argv = {"solve --log": ["solve", str(instance), "--backend", "highs", "--log", str(target)],
            "export json": ["export", str(instance), "--format", "json", "--out", str(target)],
            "export mps": ["export", str(instance), "--format", "mps", "--out", str(target)]}[writer]
    done = run_cli(argv, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(target) in lines[0] and "not a regular file" in lines[0], lines
    after = os.lstat(target)
    assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


# --- file modes ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o027, 0o640)])
def test_result_files_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    from optsched.artifacts import write_text
    from optsched.sweep import run_sweep

    old = os.umask(umask)
    try:
        assert (write_text(tmp_path / "r.txt", "x").stat().st_mode & 0o777) == mode
        sweep = tmp_path / "s.toml"
        sweep.write_text(SOLVE_SWEEP.format(seeds="[0]"))
        rep = run_sweep(sweep, tmp_path / "out", executor="serial", progress=False)
    finally:
        os.umask(old)
    written = [*rep.files, *(tmp_path / "out" / "store").glob("part-*.csv")]
    assert len(written) >= 4
    assert {p.stat().st_mode & 0o777 for p in written} == {mode}


# --- numba without a writable cache ------------------------------------------------------------------------
KERNELS = tuple(sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "optsched").rglob("*_kernel.py")
))
NUMBA_PROBE = f"""
import importlib, numpy as np, optsched
from numba.core import config
for name in {KERNELS!r}:
    importlib.import_module(name)
from optsched.models.set_packing import SetPacking
res = optsched.solve(SetPacking.random(np.random.default_rng(0), 8, 6), "greedy")
print(res.termination.value, config.CACHE_DIR or "no-cache-dir")
"""


def _read_only_package(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the package where numba finds no cache directory: ``__pycache__`` beside the
    kernels is a file (as unwritable as a read-only install, even for root), no HOME, and the
    user cache directory lies under a file."""
    pkg = tmp_path / "site"
    shutil.copytree(ROOT / "optsched", pkg / "optsched", ignore=shutil.ignore_patterns("__pycache__"))
    for d in ("solvers", "ogasched"):
        (pkg / "optsched" / d / "__pycache__").write_text("not a directory")
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.update(PYTHONPATH=str(pkg), PYTHONDONTWRITEBYTECODE="1", XDG_CACHE_HOME=str(blocker / "cache"),
               TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return pkg, env


def test_every_kernel_module_takes_njit_from_optsched_jit() -> None:
    assert len(KERNELS) >= 7
    for name in KERNELS:
        text = (ROOT / (name.replace(".", "/") + ".py")).read_text()
        assert "from optsched.jit import njit" in text and "from numba import njit" not in text, name


def test_numba_kernels_without_a_writable_cache_use_a_private_directory(tmp_path: Path) -> None:
    _, env = _read_only_package(tmp_path)
    proc = subprocess.run([sys.executable, "-c", NUMBA_PROBE], capture_output=True, text=True, env=env, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    status, cache_dir = proc.stdout.split()
    assert status in ("optimal", "feasible")
    private = tmp_path / "tmp" / f"optsched-numba-{os.getuid()}"
    assert cache_dir == str(private) and any(private.iterdir())  # the greedy kernel was cached there
    assert private.stat().st_mode & 0o777 == 0o700


@pytest.mark.slow  # two fresh processes compile every kernel: ~30 s
def test_numba_kernels_compile_without_any_cache(tmp_path: Path) -> None:
    _, env = _read_only_package(tmp_path)
    (tmp_path / "tmp" / f"optsched-numba-{os.getuid()}").write_text("not a directory either")
    proc = subprocess.run([sys.executable, "-c", NUMBA_PROBE], capture_output=True, text=True, env=env, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split()[1] == "no-cache-dir"


def test_private_cache_dir_owned_by_someone_else_or_open_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from optsched.jit import private_cache_dir

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    path = private_cache_dir()
    assert path is not None and path.parent == tmp_path
    path.chmod(0o777)  # writable by others: numba would load planted pickles from it
    assert private_cache_dir() is None


# --- Dask --------------------------------------------------------------------------------------------------
def test_plain_tcp_scheduler_warns_that_it_must_be_trusted() -> None:
    from optsched.sweep.executors import check_dask_address

    with pytest.warns(UserWarning, match="plain tcp has no encryption or authentication and results are unpickled"):
        check_dask_address("tcp://127.0.0.1:8786", None)


def test_dask_tls_scheduler_with_certificate_files(tmp_path: Path) -> None:
    """A TLS-only cluster (self-signed, as ``Security.temporary``): the sweep connects with
    --dask-ca/--dask-cert/--dask-key files and gives the serial executor's bytes; without the
    files it is refused before any run."""
    distributed = pytest.importorskip("distributed")
    from optsched.sweep import run_sweep
    from optsched.sweep.executors import DaskTLS

    sec = distributed.Security.temporary()
    files = {}
    for name, pem in (("ca", sec.tls_ca_file), ("cert", sec.tls_client_cert), ("key", sec.tls_client_key)):
        files[name] = tmp_path / f"{name}.pem"
        files[name].write_text(pem)
    sweep = tmp_path / "s.toml"
    sweep.write_text(SOLVE_SWEEP.format(seeds="[0, 1]"))
    serial = run_sweep(sweep, tmp_path / "serial", executor="serial", progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tls", security=sec,
                                  dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://")
        with pytest.raises(ValueError, match="a tls:// scheduler needs --dask-ca, --dask-cert and --dask-key"):
            run_sweep(sweep, tmp_path / "none", executor="dask", dask_address=address, progress=False)
        rep = run_sweep(sweep, tmp_path / "tls", executor="dask", dask_address=address,
                        dask_tls=DaskTLS(str(files["ca"]), str(files["cert"]), str(files["key"])), progress=False)
    assert rep.ran == serial.ran == 4
    assert (tmp_path / "tls" / "results.csv").read_bytes() == (tmp_path / "serial" / "results.csv").read_bytes()


@pytest.mark.parametrize("backend", ["cpsat", "scip", "highs"])
def test_ctrl_c_during_a_long_solver_run_exits_130_at_once(shared_data: Path, backend: str) -> None:
    """CP-SAT's and SCIP's own SIGINT handlers ended the solve as if by its time limit: exit 0
    with termination time_limit after Ctrl-C (and CP-SAT left SIGINT at SIG_DFL afterwards).
    CP-SAT and HiGHS now run beside the main thread (solvers/interrupt.py), so they end well
    inside the limit (Python's handler alone waited out the rest of it: HiGHS 55 s of 60)."""
    import signal

    hard = shared_data / "setpacking" / "pb_200rnd0100.dat"  # neither proves it within minutes
    proc = subprocess.Popen([sys.executable, "-m", "optsched", "solve", str(hard), "--backend", backend,
                             "--time-limit", "120", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(6)  # past the imports and the start of the search
    assert proc.poll() is None, proc.communicate()
    os.killpg(proc.pid, signal.SIGINT)
    pressed = time.perf_counter()
    out, err = proc.communicate(timeout=60)  # a hang guard: 114 s of the limit were left
    waited = time.perf_counter() - pressed
    assert proc.returncode == 130 and err.strip() == "optsched: interrupted" and out == "", (proc.returncode, err, out)
    # HiGHS, before its callbacks, ran on for 40-55 s (to its proof, or its limit) and then exited 130
    assert waited < 20, waited


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_ends_a_highs_qp_at_once(tmp_path: Path, presses: int) -> None:
    """HiGHS 1.14's QP solver asked no interrupt callback: after Ctrl-C, `optsched solve` of a
    projection of 10^5 variables ran on for 78 s (the QP's end) and only then exited 130, so a
    second Ctrl-C was made to quit at once, with the same one line (written past the solver's
    capture of descriptor 2, where a first version's line went). HiGHS 1.16's QP solver asks its
    own interrupt event, which optsched subscribes to: one press ends it too. Two presses 0.2 s
    apart take the second's way (``timeout -s INT`` signals twice)."""
    import json
    import signal

    from optsched.generators import generate

    instance = tmp_path / "qp.json"
    instance.write_text(json.dumps(generate("capacity_projection", 100_000, np.random.default_rng(0)).to_dict()))
    proc = subprocess.Popen([sys.executable, "-m", "optsched", "solve", str(instance), "--backend", "highs",
                             "--time-limit", "300"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(8)  # past the imports, the reading and the start of the QP
    assert proc.poll() is None, proc.communicate()
    for press in range(presses):
        if press:
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
    try:  # a hang guard, not a timing: the QP alone runs on for minutes here
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"still solving 20 s after {presses} Ctrl-C")
    # a second press that lands after the first has ended the solve, while the interpreter shuts
    # down (it gives SIGINT its default action back), ends the process by SIGINT: a shell's 130 too
    codes = (130,) if presses == 1 else (130, -signal.SIGINT)
    assert proc.returncode in codes and (err, out) == ("optsched: interrupted\n", ""), (proc.returncode, err, out)


def test_two_ctrl_cs_end_a_pool_sweep(tmp_path: Path) -> None:
    """Probe BJ (2026-11-28): Ctrl-C pressed twice during a pool sweep (or ``timeout -s INT``,
    which signals twice) hung it for good: the first press left the workers finishing their
    batches, the interpreter's exit waited for them, and the second press broke that wait, after
    which multiprocessing's exit hook waited on workers nothing would stop. The workers are now
    ended with the sweep, and it exits 130; the runs stored before are kept."""
    import signal

    sweep = tmp_path / "long.toml"
    sweep.write_text('kind = "experiment"\nexperiment = "esdp"\nseeds = [0, 1, 2, 3, 4]\n'
                     'policies = ["ESDP", "LCF", "HSWF", "Oracle"]\n[base]\nhorizon = 4000\nn_servers = 12\n'
                     'n_ports = 4\n[grid]\nalpha = [0.3, 0.6]\narrival_prob = [0.5, 0.9]\n')
    proc = subprocess.Popen([sys.executable, "-m", "optsched", "sweep", str(sweep), "--out", str(tmp_path / "out"),
                             "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(4)  # past the imports and the start of the workers' first batches
    assert proc.poll() is None, proc.communicate()
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.3)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    try:  # a hang guard, not a timing: it hung for good, and ends within seconds now
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the sweep was still running 60 s after two Ctrl-Cs")
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "optsched: interrupted", err


def test_the_cli_gives_ctrl_c_back_to_python_when_it_returns(capsys: pytest.CaptureFixture[str]) -> None:
    """The second-press handler is the CLI's while it runs, not the caller's afterwards."""
    import signal

    assert main(["backends"]) == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("kind", ["qp", "mip"])
def test_a_highs_object_stopped_by_ctrl_c_solves_again(request: pytest.FixtureRequest, kind: str) -> None:
    """A kept HiGHS object (a Prepared's) that Ctrl-C stopped answered every later solve at once
    with kInterrupt: HiGHS keeps the flag an interrupt callback sets, and only optsched's own was
    reset (probe BO; a MIP since the callbacks came, a QP since HiGHS 1.16 asks its QP event).
    Here the stop is asked from another thread, as the Ctrl-C of solvers/interrupt.py does."""
    import threading

    from optsched.generators import generate
    from optsched.io import load_instance
    from optsched.models.forms import as_standard
    from optsched.solvers.highs import new_highs, run_highs

    if kind == "qp":
        big = generate("capacity_projection", 10_000, np.random.default_rng(0))  # about 18 s to its end
        small = generate("capacity_projection", 50, np.random.default_rng(1))
    else:
        shared_data = request.getfixturevalue("shared_data")  # the QP case needs no data
        big = load_instance(shared_data / "setpacking" / "pb_200rnd0100.dat")  # not proven within minutes
        small = generate("set_packing", 30, np.random.default_rng(0))
    h = new_highs(1)
    h.passModel(as_standard(big).to_standard_form().to_highs())
    threading.Timer(1.0, h.optsched_cancel.stop).start()
    run_highs(h)
    assert h.getModelStatus().name == "kInterrupt"
    fresh = new_highs(1)
    for solver in (h, fresh):
        solver.passModel(as_standard(small).to_standard_form().to_highs())
        run_highs(solver)
        assert solver.getModelStatus().name == "kOptimal"
    assert h.getInfo().objective_function_value == pytest.approx(fresh.getInfo().objective_function_value, rel=1e-9)


def test_building_a_highs_object_waits_for_no_other_threads_output() -> None:
    """HiGHS 1.16 prints its banner while the first object of a process is built, which optsched
    captures; later constructions took the capture's process-wide lock too, and waited 6.5 s for
    another thread's solve that held it (probe BO). Only the first one takes it now."""
    import threading

    from optsched.solvers.c_output import output_turn
    from optsched.solvers.highs import silent_highs

    silent_highs()  # the process's first, or a later one
    built: list[object] = []
    with output_turn():  # as a cvxpy, Pyomo or HiGHS QP solve holds it on another thread
        worker = threading.Thread(target=lambda: built.append(silent_highs()))
        worker.start()
        worker.join(timeout=10)  # a hang guard: it waited for the lock before
        assert built, "a HiGHS construction waited for the output lock"


def test_a_missing_dask_is_refused_before_the_last_sweep_is_touched(tmp_path: Path, monkeypatch) -> None:
    """Without dask.distributed, --dask was refused only after the store was locked and the
    finished sweep's manifest removed (results.csv left without its sweep.json)."""
    import importlib.util

    from optsched.sweep import run_sweep

    sweep, out = tmp_path / "s.toml", tmp_path / "out"
    sweep.write_text(SOLVE_SWEEP.format(seeds="[0]"))
    run_sweep(sweep, out, executor="serial", progress=False)
    before = sorted(p.name for p in out.iterdir())
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else find_spec(name, *a))
    sweep.write_text(SOLVE_SWEEP.format(seeds="[0, 1]"))
    with pytest.raises(ValueError, match="^--dask: dask.distributed is not installed"):
        run_sweep(sweep, out, executor="dask", dask_address="local", progress=False)
    assert sorted(p.name for p in out.iterdir()) == before and "sweep.json" in before


def test_a_local_dask_cluster_is_no_larger_than_the_runs(tmp_path: Path) -> None:
    """--dask local --workers 300 started 300 worker processes for 8 runs (7.9 GB, nothing
    stored in 240 s); the pool starts no more than it needs."""
    pytest.importorskip("distributed")
    from optsched.sweep import run_sweep

    sweep = tmp_path / "s.toml"
    sweep.write_text(SOLVE_SWEEP.format(seeds="[0, 1]"))
    report = run_sweep(sweep, tmp_path / "out", executor="dask", dask_address="local", workers=64, progress=False)
    assert report.ran == report.total < 64 and report.workers == report.ran
