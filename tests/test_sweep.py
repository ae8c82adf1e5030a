"""Sweeps: grid expansion, the append-only store, executors giving identical files, resume
after a SIGKILL, strict TOML."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from optsched.cli import main
from optsched.config import config_from_mapping
from optsched.sweep import SweepConfig, expand, run_key, run_sweep
from optsched.sweep.store import Store, cell

ESDP_TOML = """
kind = "experiment"
experiment = "esdp"
seeds = [0, 1, 2]
policies = ["ESDP", "LCF"]
[base]
horizon = {horizon}
n_servers = 8
n_ports = 3
[grid]
alpha = [0.4, 0.7]
arrival_prob = [0.5, 0.9]
"""

SOLVE_TOML = """
kind = "solve"
models = ["set_packing", "budgeted_ip"]
backends = ["greedy", "highs"]
sizes = [5, 9]
seeds = [0, 1]
"""


def spec(**settings: object) -> SweepConfig:
    return config_from_mapping(SweepConfig, settings, where="sweep")


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# --- grid --------------------------------------------------------------------------------------
def test_experiment_grid_expansion() -> None:
    s = spec(experiment="esdp", seeds=[0, 1], policies=["ESDP", "LCF"], base={"horizon": 7},
             grid={"alpha": [0.4, 0.7], "n_servers": [5, 6, 8]})
    runs = expand(s)
    assert len(runs) == 2 * 3 * 2 * 2
    assert len({r.key for r in runs}) == len(runs)
    combos = {(r.params, r.seed, r.variant) for r in runs}
    assert len(combos) == len(runs)
    assert {r.variant for r in runs} == {"ESDP", "LCF"}
    assert all('"horizon":7' in r.config for r in runs)
    # keys are a function of the full config and seed only: a rebuild gives the same keys,
    # a changed fixed setting gives new ones
    assert [r.key for r in expand(s)] == [r.key for r in runs]
    other = expand(spec(experiment="esdp", seeds=[0, 1], policies=["ESDP", "LCF"], base={"horizon": 8},
                        grid={"alpha": [0.4, 0.7], "n_servers": [5, 6, 8]}))
    assert not {r.key for r in other} & {r.key for r in runs}


def test_default_policies_and_scalar_for_list_keys() -> None:
    runs = expand(spec(experiment="onsocmax", grid={"kinds": ["log", "sqrt"], "values": [2.0]}))
    assert {r.variant for r in runs} == {"ONSOCMAX", "MAX-FIRST", "EQUAL-SHARE"}
    assert {r.params for r in runs} == {'{"kinds":["log"],"values":[2.0]}', '{"kinds":["sqrt"],"values":[2.0]}'}
    esdp = expand(spec(experiment="esdp", base={"policies": ["LCF", "Oracle"]}))
    assert [r.variant for r in esdp] == ["LCF", "Oracle"]
    # both ways at once: the runs took the top level's and each row recorded the other
    for table in ("base", "grid"):
        given = {"policies": ["ESDP"]} if table == "base" else {"policies": [["ESDP"], ["LCF"]]}
        with pytest.raises(ValueError, match="sweep.policies: given at the top level and as the config key"):
            expand(spec(experiment="esdp", policies=["LCF"], **{table: given}))


def test_solve_grid_leaves_out_unfit_pairs() -> None:
    runs = expand(spec(kind="solve", models=["set_packing", "budgeted_ip"], backends=["greedy", "highs"],
                       sizes=[5, 9], seeds=[0, 1, 2]))
    pairs = {(r.target, r.variant) for r in runs}
    assert pairs == {("set_packing", "greedy"), ("set_packing", "highs"), ("budgeted_ip", "highs")}
    assert len(runs) == 3 * 2 * 3


def test_run_key_ignores_dict_order() -> None:
    a = run_key("solve", "m", "b", 1, {"x": 1, "y": [1, 2]})
    assert a == run_key("solve", "m", "b", 1, {"y": (1, 2), "x": 1})
    assert a != run_key("solve", "m", "b", 2, {"x": 1, "y": [1, 2]})
    assert len(a) == 16 and int(a, 16) >= 0


# --- store ---------------------------------------------------------------------------------------
def test_cell_text() -> None:
    import numpy as np

    assert cell(0.1) == "0.1" and cell(np.float64(1 / 3)) == repr(1 / 3)
    assert cell(float("nan")) == "nan" and cell(float("-inf")) == "-inf"
    assert cell(True) == "true" and cell(np.bool_(False)) == "false"
    assert cell(np.int64(7)) == "7" and cell(None) == ""
    assert cell((0.5, 1)) == "[0.5,1]" and cell('a,"b"') == 'a,"b"'


def test_store_append_resume(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    assert store.keys() == set() and store.append([]) is None
    store.append([{"key": "a", "x": "1", "s": 'q,"u"\nline'}, {"key": "b", "x": "2", "s": ""}])
    store.append([{"key": "c", "x": "3", "y": "nan"}, {"key": "a", "x": "99"}])  # a duplicate key
    (tmp_path / "store" / ".part-killed.tmp").write_text("key,x\nd,4\ne,")  # a killed writer's temporary
    rows = store.rows()
    assert set(rows) == {"a", "b", "c"}
    assert rows["a"]["x"] == "1" and rows["a"]["s"] == 'q,"u"\nline'  # first stored row of a key wins
    assert rows["c"]["y"] == "nan"
    assert store.clean() == 1 and not list((tmp_path / "store").glob(".part-*"))
    assert len(store.parts()) == 2


# --- executors --------------------------------------------------------------------------------------
def test_solve_sweep_marks_instances_a_backend_cannot_take(tmp_path: Path) -> None:
    cfg = write(tmp_path, 'kind = "solve"\nmodels = ["set_packing"]\nbackends = ["brute_force", "greedy"]\n'
                          'sizes = [6, 30]\n')
    run_sweep(cfg, tmp_path, executor="serial", progress=False)
    rows = {(r["backend"], r["size"]): r for r in read_rows(tmp_path / "results.csv")}
    assert rows[("brute_force", "6")]["termination"] == "optimal"
    assert rows[("brute_force", "30")]["termination"] == "unfit" and "30 binary" in rows[("brute_force", "30")]["message"]
    assert rows[("brute_force", "30")]["objective"] == ""
    assert rows[("greedy", "30")]["termination"] == "feasible"
    assert float(rows[("brute_force", "6")]["objective"]) >= float(rows[("greedy", "6")]["objective"])


@pytest.fixture(scope="module")
def esdp_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(config, output of a local process pool of 2 workers) of a 24-run ESDP sweep."""
    root = tmp_path_factory.mktemp("esdp")
    cfg = write(root, ESDP_TOML.format(horizon=60))
    rep = run_sweep(cfg, root / "pool", executor="pool", workers=2, batch_size=1, progress=False)
    assert rep.ran == rep.total == 2 * 2 * 3 * 2
    return cfg, root / "pool" / "results.csv"


def test_serial_and_pool_give_identical_files(tmp_path: Path, esdp_sweep: tuple[Path, Path]) -> None:
    cfg, pool = esdp_sweep
    rep = run_sweep(cfg, tmp_path, executor="serial", batch_size=5, progress=False)
    assert rep.ran == rep.total
    assert (tmp_path / "results.csv").read_bytes() == pool.read_bytes()
    rows = read_rows(pool)
    assert len(rows) == rep.total and [r["key"] for r in rows] == sorted(r["key"] for r in rows)
    assert {r["policy"] for r in rows} == {"ESDP", "LCF"}
    assert all(float(r["asw"]) >= 0 for r in rows) and any(float(r["asw"]) > 0 for r in rows)
    assert "runtime_s" not in rows[0] and "versions" in rows[0] and '"horizon":60' in rows[0]["config"]
    times = read_rows(pool.parent / "timings.csv")
    assert len(times) == rep.total and all(float(t["runtime_s"]) >= 0 for t in times)
    assert {(t["executor"], t["workers"]) for t in times} == {("pool", "2")}
    assert {(t["executor"], t["workers"]) for t in read_rows(tmp_path / "timings.csv")} == {("serial", "1")}


def test_a_resumed_sweep_names_the_session_that_ran_each_row(tmp_path: Path, esdp_sweep: tuple[Path, Path]) -> None:
    """sweep.json names only the last session's executor: the rows stored by an earlier one
    (a pool, then resumed serially) said nothing of where they ran."""
    cfg, pool = esdp_sweep
    out = tmp_path / "resumed"
    shutil.copytree(pool.parent / "store", out / "store")
    parts = sorted(Store(out / "store").parts())
    for part in parts[::2]:
        part.unlink()
    kept = {r["key"] for part in parts[1::2] for r in read_rows(part)}
    rep = run_sweep(cfg, out, executor="serial", progress=False)
    assert rep.stored_before == len(kept) and rep.ran == rep.total - len(kept) > 0
    assert (out / "results.csv").read_bytes() == pool.read_bytes()
    ran_on = {t["key"]: (t["executor"], t["workers"]) for t in read_rows(out / "timings.csv")}
    assert ran_on == {key: ("pool", "2") if key in kept else ("serial", "1") for key in ran_on}


def test_solve_sweep_batching_and_rerun(tmp_path: Path) -> None:
    cfg = write(tmp_path, SOLVE_TOML)
    a = run_sweep(cfg, tmp_path / "a", executor="serial", batch_size=5, progress=False)
    b = run_sweep(cfg, tmp_path / "b", executor="serial", batch_size=1, progress=False)
    assert a.total == b.total == 3 * 2 * 2 and len(list((tmp_path / "b" / "store").glob("part-*"))) == b.total
    res = (tmp_path / "a" / "results.csv").read_bytes()
    assert res == (tmp_path / "b" / "results.csv").read_bytes()
    rows = read_rows(tmp_path / "a" / "results.csv")
    assert {r["termination"] for r in rows} <= {"optimal", "feasible"}
    assert all(r["termination"] == "optimal" for r in rows if r["backend"] == "highs")
    # a rerun skips every stored run and rewrites the same bytes
    again = run_sweep(cfg, tmp_path / "a", executor="serial", progress=False)
    assert again.ran == 0 and again.stored_before == a.total
    assert (tmp_path / "a" / "results.csv").read_bytes() == res
    # sweep.json is the set's manifest: written last, with each table's SHA-256
    listed = json.loads((tmp_path / "a" / "sweep.json").read_text())["files"]
    assert sorted(listed) == ["results.csv", "timings.csv"]
    for name, digest in listed.items():
        assert hashlib.sha256((tmp_path / "a" / name).read_bytes()).hexdigest() == digest


def _runs(n: int) -> list:
    from optsched.sweep.grid import SweepRun

    return [SweepRun(f"k{i}", "experiment", "esdp", "ESDP", i, "{}", "{}") for i in range(n)]


def _rows(seconds: float, n: int) -> list[dict[str, str]]:
    return [{"runtime_s": cell(seconds)} for _ in range(n)]


def test_batches_fixed_size_hand_out_every_run_once() -> None:
    from optsched.sweep.batches import Batches

    batches = Batches(_runs(10), workers=2, fixed=3)
    out = list(iter(batches.next, None))
    assert [len(b) for b in out] == [3, 3, 3, 1] and batches.sizes == [3, 3, 3, 1]
    assert [r.key for b in out for r in b] == [f"k{i}" for i in range(10)]


def test_batches_adapt_to_the_measured_run_time() -> None:
    from optsched.sweep.batches import MAX_BATCH, TARGET_BATCH_S, Batches

    short = Batches(_runs(1000), workers=2)
    assert len(short.next()) == 1 and len(short.next()) == 1  # probes until a run time is known
    short.done(_rows(0.001, 2))  # 1 ms runs: the target would want 500, the cap is MAX_BATCH
    assert len(short.next()) == MAX_BATCH
    slow = Batches(_runs(1000), workers=2)
    slow.next()
    slow.done(_rows(TARGET_BATCH_S / 4, 1))  # a quarter of the target: four runs a batch
    assert len(slow.next()) == 4
    long = Batches(_runs(1000), workers=2)
    long.next()
    long.done(_rows(3.0, 1) + [{"runtime_s": ""}])  # runs longer than the target: one a batch; no time: ignored
    assert len(long.next()) == 1
    tail = Batches(_runs(12), workers=2)
    tail.next()
    tail.done(_rows(0.0001, 1))  # 11 left: at most ceil(11 / 4) = 3 a batch, two batches per worker at the end
    assert len(tail.next()) == 3


def test_workers_import_each_experiment_and_backend_once() -> None:
    from optsched.sweep.grid import SweepRun
    from optsched.sweep.runner import warm_modules

    runs = [SweepRun("a", "experiment", "esdp", "ESDP", 0, "{}", "{}"),
            SweepRun("b", "experiment", "esdp", "LCF", 1, "{}", "{}"),
            SweepRun("c", "solve", "set_packing", "greedy", 0, "{}", "{}")]
    assert warm_modules(runs) == ("optsched.esdp.experiments", "optsched.solvers.greedy_set_packing")


def test_each_experiment_and_policy_is_warmed_up_once_on_its_tiny_settings(tmp_path: Path) -> None:
    from optsched.sweep.grid import SweepRun
    from optsched.sweep.runner import warm_runs

    runs = [SweepRun("a", "experiment", "esdp", "ESDP", 0, '{"horizon": 500, "seed": 0}', "{}"),
            SweepRun("b", "experiment", "esdp", "ESDP", 1, '{"horizon": 500, "seed": 1}', "{}"),
            SweepRun("c", "experiment", "esdp", "LCF", 0, '{"horizon": 500, "seed": 0}', "{}"),
            SweepRun("d", "solve", "set_packing", "greedy", 0, "{}", "{}")]
    warm = warm_runs(runs)
    assert [(w.target, w.variant, w.seed, json.loads(w.config)) for w in warm] == [
        ("esdp", "ESDP", 0, {"horizon": 4, "seed": 0}), ("esdp", "LCF", 0, {"horizon": 4, "seed": 0})]
    assert all(w.key.startswith("warm-up ") for w in warm)


# the least a sweep point of each paper must give (ONSOCMAX's sweep study draws one kind at one value)
SWEEP_POINT = {"esdp": {}, "maxweight": {}, "ogasched": {}, "onsocmax": {"kinds": ["log"], "values": [2.0]}}


@pytest.mark.parametrize("paper", sorted(SWEEP_POINT))
def test_every_papers_warm_up_settings_run_every_policy(paper: str) -> None:
    """A warm-up that fails is dropped silently, so a paper whose ``warm`` settings its config
    refuses would warm nothing: each paper's run, with every policy, on a sweep point."""
    from optsched.papers import get_paper
    from optsched.sweep.executors import run_one
    from optsched.sweep.grid import SweepRun, canonical_json

    summary = get_paper(paper).sweep
    assert summary is not None and summary.warm
    settings = {**SWEEP_POINT[paper], **summary.warm}
    if summary.prepare is not None:
        settings = summary.prepare(settings)
    for policy in get_paper(paper).policies:
        row = run_one(SweepRun("w", "experiment", paper, policy, 0, canonical_json(settings), "{}"))
        assert row["policy"] == policy


def test_the_warm_up_runs_first_and_leaves_no_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Serially: the warm-up runs before the first timed run, one per policy; its rows are not
    stored; a warm-up that fails (here: a horizon the config refuses) leaves the sweep as it was."""
    from optsched.sweep import executors

    ran: list[str] = []
    real = executors.run_one

    def spy(run):  # type: ignore[no-untyped-def]
        ran.append(run.key)
        return real(run)

    monkeypatch.setattr(executors, "run_one", spy)
    cfg = write(tmp_path, ESDP_TOML.format(horizon=30))
    rep = run_sweep(cfg, tmp_path / "out", executor="serial", progress=False)
    assert [k.startswith("warm-up ") for k in ran] == [True, True] + [False] * rep.total
    assert len(read_rows(tmp_path / "out" / "results.csv")) == rep.total
    from optsched.sweep.grid import SweepRun

    bad = SweepRun("x", "experiment", "esdp", "ESDP", 0, '{"horizon": -1}', "{}")
    executors.warm_worker((), [bad])  # no exception
    assert ran[-1] == "x"


FORKED_KERNELS = """
import json, sys
from optsched.sweep.executors import _fork_server
from optsched.sweep.grid import SweepRun


def compiled_kernels():
    import numba.core.registry

    server = sys.modules.get("optsched.sweep.fork_server_preload")
    return {"kernels": sorted(f"{m}.{n}" for m, mod in list(sys.modules.items())
                              if m.startswith("optsched.") and m.endswith("_kernel") for n, f in vars(mod).items()
                              if isinstance(f, numba.core.registry.CPUDispatcher) and f.signatures),
            "ran": sorted(getattr(server, "ran", []))}


if __name__ == "__main__":
    warm = [SweepRun("w", "experiment", "esdp", "ESDP", 0, json.dumps({"horizon": 4, "n_servers": 8, "n_ports": 3}), "{}")]
    ctx = _fork_server(["optsched.sweep.executors"], warm if sys.argv[1] == "warm" else [])
    with ctx.Pool(1) as pool:
        print(json.dumps(pool.apply(compiled_kernels)))
"""


@pytest.mark.parametrize("warm", [True, False])
def test_workers_fork_from_a_server_that_ran_the_warm_up(tmp_path: Path, warm: bool) -> None:
    """A worker forked from the sweep's fork server starts with the warm-up's kernels compiled (or
    loaded from the cache) and knows the server ran it; without warm-up runs it starts with none
    (a fresh server each time)."""
    script = write(tmp_path, FORKED_KERNELS, "forked.py")
    out = subprocess.run([sys.executable, str(script), "warm" if warm else "cold"], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    child = json.loads(out.stdout)
    if warm:
        assert any(k.startswith("optsched.solvers.") for k in child["kernels"]), child
        assert child["ran"] == ["w"]  # so the worker's own warm-up skips it
    else:
        assert child == {"kernels": [], "ran": []}


def test_default_batching_gives_the_same_files(tmp_path: Path, esdp_sweep: tuple[Path, Path]) -> None:
    cfg, pool = esdp_sweep
    rep = run_sweep(cfg, tmp_path, executor="pool", workers=2, progress=False)
    assert rep.ran == rep.total and rep.batches == len(list((tmp_path / "store").glob("part-*")))
    assert (tmp_path / "results.csv").read_bytes() == pool.read_bytes()


def test_dask_local_cluster_equals_pool(tmp_path: Path, esdp_sweep: tuple[Path, Path]) -> None:
    pytest.importorskip("distributed")
    cfg, pool = esdp_sweep
    rep = run_sweep(cfg, tmp_path, executor="dask", dask_address="local", workers=2, batch_size=3, progress=False)
    assert rep.ran == rep.total == len(read_rows(pool))
    assert read_rows(tmp_path / "results.csv") == read_rows(pool)
    assert (tmp_path / "results.csv").read_bytes() == pool.read_bytes()


@pytest.mark.parametrize("experiment,base,grid", [
    ("maxweight", {"frames": 150, "fig5_r_step": 0.1}, {"n_apps": [2, 3]}),
    ("ogasched", {"horizon": 12, "n_nodes": 6, "n_ports": 3}, {"contention": [1.0]}),
    ("onsocmax", {"study": "ratio", "n_jobs": 4, "n_slots": 4}, {"family": ["section_iv", "small"]}),
])
def test_experiment_summaries(tmp_path: Path, experiment: str, base: dict, grid: dict) -> None:
    s = spec(experiment=experiment, base=base, grid=grid)
    rep = run_sweep(s, tmp_path, executor="serial", progress=False)
    rows = read_rows(tmp_path / "results.csv")
    assert len(rows) == rep.total == len(expand(s)) > 0
    metrics = {"maxweight": "max_symmetric_r", "ogasched": "regret", "onsocmax": "ratio"}[experiment]
    assert all(float(r[metrics]) == float(r[metrics]) for r in rows)  # present, not NaN
    assert len({r["policy"] for r in rows}) >= 2


# --- resume after a kill ------------------------------------------------------------------------------
def test_killed_sweep_resumes_without_loss_or_duplicates(tmp_path: Path, esdp_sweep: tuple[Path, Path]) -> None:
    cfg, pool = esdp_sweep
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "optsched", "sweep", str(cfg), "--out", str(out), "--workers", "1", "--batch-size", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    store = Store(out / "store")
    deadline = time.monotonic() + 120
    try:
        while len(store.parts()) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    total = len(read_rows(pool))
    assert 3 <= len(store.keys()) < total
    assert not (out / "results.csv").exists()

    assert main(["sweep", str(cfg), "--out", str(out), "--workers", "1", "--batch-size", "2"]) == 0
    assert sum(len(read_rows(p)) for p in store.parts()) == total  # every run stored exactly once
    assert len(store.keys()) == total
    assert (out / "results.csv").read_bytes() == pool.read_bytes()


# --- bad input ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,needle", [
    ('kind = "experiment"\nexperiment = "esdp"\nfoo = 1\n', "'foo'"),
    ('kind = "experiment"\nexperiment = "esdp"\n[grid]\nhorizonn = [1]\n', "'horizonn'"),
    ('kind = "experiment"\nexperiment = "esdp"\n[base]\nalpha = 7.0\n', "alpha"),
    ('kind = "experiment"\nexperiment = "esdp"\n[grid]\nalpha = []\n', "grid.alpha"),
    ('kind = "experiment"\nexperiment = "esdp"\npolicies = ["NOPE"]\n', "'NOPE'"),
    ('kind = "experiment"\nexperiment = "nope"\n', "'nope'"),
    ('kind = "experiment"\nexperiment = "esdp"\n[base]\nseed = 3\n', "base.seed"),
    ('kind = "experiment"\nexperiment = "esdp"\nseeds = [1, 1]\n', "seeds"),
    ('kind = "solve"\nmodels = ["set_packing"]\nbackends = ["greedy"]\nsizes = [4]\nexperiment = "esdp"\n',
     "sweep.experiment"),
    ('kind = "solve"\nmodels = ["set_packing"]\nbackends = ["highs"]\nsizes = [4]\n[options.highs]\nbogus = 1\n',
     "'bogus'"),
    ('kind = "solve"\nmodels = ["set_packing"]\nbackends = ["nope"]\nsizes = [4]\n', "'nope'"),
    ('kind = "sideways"\n', "sweep.kind"),
    ("kind = [", "not valid TOML"),
])
def test_bad_sweep_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, needle: str) -> None:
    cfg = write(tmp_path, text)
    assert main(["sweep", str(cfg), "--out", str(tmp_path / "out"), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("optsched: error: ") and err.count("\n") == 1 and needle in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args", [["--workers", "0"], ["--batch-size", "0"], ["--workers", "x"]])
def test_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    cfg = write(tmp_path, SOLVE_TOML)
    assert main(["sweep", str(cfg), "--out", str(tmp_path / "out"), *args]) == 2
    assert capsys.readouterr().err.startswith("optsched: error: ")


# tiny configs that reach every branch of the sweep rows (onsocmax: both studies and families)
SWEEP_ROW_CASES = [
    ("esdp", {"horizon": 10, "n_servers": 5, "n_ports": 2}),
    ("ogasched", {"horizon": 20, "offline": True}),
    ("onsocmax", {"kinds": ["linear"], "values": [2.0]}),
    ("onsocmax", {"kinds": ["linear"], "study": "ratio"}),
    ("onsocmax", {"kinds": ["linear"], "study": "ratio", "family": "small"}),
    ("maxweight", {"frames": 200}),
]


@pytest.mark.parametrize(("paper", "settings"), SWEEP_ROW_CASES, ids=[f"{p}-{i}" for i, (p, _) in enumerate(SWEEP_ROW_CASES)])
def test_keys_a_sweep_refuses_are_read_by_no_sweep_row(paper: str, settings: dict) -> None:
    """``SweepSummary.unused`` is what a sweep refuses in [base] and [grid] (``study =
    "overhead"`` in an ESDP sweep's [base] was recorded in every row and changed none): every
    policy's row, on a config whose attribute reads are recorded, reads none of those keys."""
    import dataclasses

    from optsched.papers import get_paper

    exp = get_paper(paper)
    assert exp.sweep is not None and exp.sweep.unused
    cfg = exp.make_config({**settings, "seed": 0})
    fields = {f.name for f in dataclasses.fields(cfg)}
    assert exp.sweep.unused <= fields
    read: set[str] = set()

    def recorded(self: object, key: str) -> object:
        if key in fields:
            read.add(key)
        return object.__getattribute__(self, key)

    traced = type("Traced", (type(cfg),), {"__getattribute__": recorded})(**{k: getattr(cfg, k) for k in fields})
    read.clear()  # its construction checks every key
    policies = exp.sweep.default_policies(cfg) if exp.sweep.default_policies else exp.policies
    for policy in policies:
        exp.sweep.metrics(traced, policy)
    assert read and not read & exp.sweep.unused, sorted(read & exp.sweep.unused)


@pytest.mark.parametrize("paper", ["esdp", "ogasched", "onsocmax", "maxweight"])
def test_sweep_refuses_a_key_no_run_reads(paper: str) -> None:
    from optsched.papers import get_paper

    key = sorted(get_paper(paper).sweep.unused)[0]
    value = getattr(get_paper(paper).make_config({}), key)
    value = list(value) if isinstance(value, tuple) else value
    for table in ("base", "grid"):
        given = {"base": {key: value}} if table == "base" else {"grid": {key: [value]}}
        with pytest.raises(ValueError, match=f"sweep.{table}: '{key}' changes no sweep run of '{paper}'"):
            expand(spec(kind="experiment", experiment=paper, seeds=[0], **given))


# --- probe AW: what a resumed sweep reuses, lost workers, warnings, limits, library configs ------------------------
MOVED_TOML = """
kind = "experiment"
experiment = "esdp"
seeds = [0]
policies = ["LCF"]
[base]
horizon = 5
{base}
[grid]
arrival_prob = [0.5, 0.9]
{grid}
"""


def test_a_setting_moved_into_the_grid_gives_the_files_of_a_fresh_sweep(tmp_path: Path) -> None:
    """alpha in [base], then in [grid]: the two runs of alpha = 0.3 keep their keys (their
    configs are the same) and are reused, but their rows come out with the new grid's columns."""
    before = write(tmp_path, MOVED_TOML.format(base="alpha = 0.3", grid=""), "a.toml")
    after = write(tmp_path, MOVED_TOML.format(base="", grid="alpha = [0.3, 0.6]"), "b.toml")
    run_sweep(before, tmp_path / "resumed", executor="serial", progress=False)
    rep = run_sweep(after, tmp_path / "resumed", executor="serial", progress=False)
    assert (rep.stored_before, rep.ran) == (2, 2)
    run_sweep(after, tmp_path / "fresh", executor="serial", progress=False)
    assert (tmp_path / "resumed" / "results.csv").read_bytes() == (tmp_path / "fresh" / "results.csv").read_bytes()
    assert {r["alpha"] for r in read_rows(tmp_path / "resumed" / "results.csv")} == {"0.3", "0.6"}


def test_resuming_refuses_rows_whose_input_files_changed(tmp_path: Path) -> None:
    from optsched.sweep.grid import SweepRun
    from optsched.sweep.runner import check_inputs_unchanged

    trace = tmp_path / "trace.csv"
    trace.write_text("a,1\n")
    digest = hashlib.sha256(b"a,1\n").hexdigest()
    run = SweepRun("k1", "experiment", "ogasched", "DRF", 0, "{}", "{}")
    rows = {"k1": {"key": "k1", "inputs": json.dumps({str(trace): digest})}}
    check_inputs_unchanged([run], rows, tmp_path / "store")  # unchanged: resumes
    trace.write_text("a,2\n")
    with pytest.raises(ValueError, match="run k1 read .*trace.csv, which has changed since its row was stored"):
        check_inputs_unchanged([run], rows, tmp_path / "store")
    trace.unlink()
    with pytest.raises(ValueError, match="cannot be read now"):
        check_inputs_unchanged([run], rows, tmp_path / "store")
    for damaged in ("not json", "[1]", '{"x": 1}'):
        with pytest.raises(ValueError, match="damaged 'inputs' cell"):
            check_inputs_unchanged([run], {"k1": {"key": "k1", "inputs": damaged}}, tmp_path / "store")


def _die(batch: object) -> None:  # a pool task whose worker process is killed (out of memory, a native crash)
    os._exit(9)


def test_a_dead_pool_worker_is_one_error_naming_the_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from optsched.result import WorkerLost
    from optsched.sweep import executors

    monkeypatch.setattr(executors, "run_batch", _die)
    cfg = write(tmp_path, ESDP_TOML.format(horizon=5))
    with pytest.raises(WorkerLost, match=r"a worker process died .* these runs were under way, its own among them: "
                                         r"[0-9a-f]{16} \(esdp, (ESDP|LCF), seed \d\)"):
        run_sweep(cfg, tmp_path / "out", executor="pool", workers=2, progress=False)
    assert main(["sweep", str(cfg), "--out", str(tmp_path / "cli"), "--workers", "2"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("optsched: error: sweep: a worker process died"), err


def test_a_runs_warnings_are_shown_once_by_the_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs' stderr is redirected (progress bars); their warnings (trace rows skipped) were
    lost with it. Now each distinct one is shown once, naming the first run that gave it, and
    kept out of the stored rows."""
    import warnings

    from optsched.sweep import executors

    def warning_run(run, config):  # type: ignore[no-untyped-def]
        warnings.warn("trace.csv: skipped 1 unparseable row(s)")
        return {"asw": 1.0}

    monkeypatch.setattr(executors, "_run_experiment", warning_run)
    cfg = write(tmp_path, ESDP_TOML.format(horizon=5))
    with pytest.warns(UserWarning) as shown:
        rep = run_sweep(cfg, tmp_path / "out", executor="serial", progress=False)
    said = [str(w.message) for w in shown if "skipped" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("sweep run ") and said[0].endswith(": trace.csv: skipped 1 unparseable row(s)")
    assert rep.ran == 24
    stored = (tmp_path / "out" / "results.csv").read_text() + "".join(p.read_text() for p in (tmp_path / "out" / "store").glob("part-*"))
    assert "warnings" not in stored and "skipped" not in stored


def test_the_run_limit_counts_the_default_policies(monkeypatch: pytest.MonkeyPatch) -> None:
    from optsched.sweep import grid

    monkeypatch.setattr(grid, "MAX_RUNS", 100)
    settings = {"experiment": "esdp", "base": {"horizon": 5}, "grid": {"alpha": [0.1 * i for i in range(1, 11)],
                                                                        "arrival_prob": [0.1 + 0.05 * i for i in range(10)]}}
    with pytest.raises(ValueError, match="would make 600 runs"):  # 100 points x ESDP's 6 default policies
        expand(spec(**settings))
    assert len(expand(spec(**settings, policies=["LCF"]))) == 100


@pytest.mark.parametrize("settings,needle", [
    ({"kind": "bogus"}, "sweep.kind: must be one of"),
    ({"seeds": ()}, "sweep.seeds"),
    ({"kind": "solve"}, "sweep.models: name at least one"),
    ({"experiment": "esdp", "grid": {"alpha": "0.3"}}, "sweep.grid.alpha: expected a non-empty list"),
    ({"experiment": "esdp", "base": {"alpha": 0.3}, "grid": {"alpha": [0.3, 0.6]}}, "sweep.grid.alpha: is set in \\[base\\] too"),
])
def test_a_sweep_config_built_in_code_is_checked(tmp_path: Path, settings: dict, needle: str) -> None:
    """run_sweep(SweepConfig(...)) skipped the file's checks: kind='bogus' or no seeds ran nothing."""
    from optsched.sweep import SweepConfig

    with pytest.raises(ValueError, match=needle):
        SweepConfig(**settings)
    with pytest.raises(ValueError, match=needle):
        spec(**settings)


def test_a_size_a_generator_cannot_draw_is_named_as_the_size(tmp_path: Path) -> None:
    """Probe AW: budgeted_ip from about size 3000 failed on a model field ("max_budget: must be
    <= 1000000"); the message now says which size of which kind cannot be generated."""
    import numpy as np

    from optsched.generators import generate

    with pytest.raises(ValueError, match=r"^size: budgeted_ip cannot be generated at size 5000 \(max_budget: must be"):
        generate("budgeted_ip", 5000, np.random.default_rng(0))
    cfg = write(tmp_path, 'kind = "solve"\nmodels = ["budgeted_ip"]\nbackends = ["dp"]\nsizes = [5, 5000]\nseeds = [0]\n')
    with pytest.raises(ValueError, match=r"sweep run [0-9a-f]{16} \(budgeted_ip, dp, seed 0\): size: budgeted_ip cannot be "
                                         r"generated at size 5000"):
        run_sweep(cfg, tmp_path / "out", executor="serial", progress=False)


def test_a_warning_the_warm_up_gave_first_still_reaches_the_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Python shows a warning once per location in a process: when the (dropped) warm-up run gave
    it first, every real run's was swallowed and the user saw nothing. Through the CLI, with the
    interpreter's own filters."""
    import warnings

    from optsched.sweep import executors

    def warning_run(run, config):  # type: ignore[no-untyped-def]
        warnings.warn("trace.csv: skipped 1 unparseable row(s)")
        return {"asw": 1.0}

    monkeypatch.setattr(executors, "_run_experiment", warning_run)
    cfg = write(tmp_path, ESDP_TOML.format(horizon=5))
    with warnings.catch_warnings():
        warnings.resetwarnings()  # the interpreter's defaults: "default" shows once per location
        warnings.simplefilter("default")
        assert main(["sweep", str(cfg), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "skipped" in line]
    assert len(err) == 1 and err[0].startswith("optsched: warning: sweep run "), err


def test_a_warning_each_run_repeats_is_in_each_runs_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's registry shows a warning once per location in a process: under its default
    filter the second run of a worker repeating the first run's warning had none in its row."""
    import warnings

    from optsched.sweep import executors
    from optsched.sweep.grid import SweepRun

    def warning_run(run, config):  # type: ignore[no-untyped-def]
        warnings.warn("trace.csv: skipped 1 unparseable row(s)")  # one location for every run
        return {"asw": 1.0}

    monkeypatch.setattr(executors, "_run_experiment", warning_run)
    with warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.simplefilter("default")
        rows = [executors.run_one(SweepRun(f"k{seed}", "experiment", "esdp", "LCF", seed, "{}", "{}")) for seed in range(3)]
    assert [json.loads(r.get("warnings", "[]")) for r in rows] == [["trace.csv: skipped 1 unparseable row(s)"]] * 3


def test_a_run_leaves_the_process_display_alone_when_another_thread_records_warnings() -> None:
    """Probe BA: a run entering catch_warnings while a run on another thread sat in a solver's
    catch_warnings(record=True) (cvxpy's) restored that solver's log as the process's display on
    leaving; every later warning of the process went into a dead list."""
    import threading
    import warnings

    from optsched.sweep.executors import run_warnings

    display = warnings._showwarnmsg_impl  # type: ignore[attr-defined]
    recording, b_in, a_done = threading.Event(), threading.Event(), threading.Event()

    def run_a() -> None:
        with run_warnings():
            with warnings.catch_warnings(record=True):
                recording.set()
                b_in.wait(timeout=30)
        a_done.set()

    def run_b() -> None:
        recording.wait(timeout=30)
        with run_warnings():
            b_in.set()
            a_done.wait(timeout=30)

    threads = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert warnings._showwarnmsg_impl is display  # type: ignore[attr-defined]


def test_runs_on_two_threads_keep_their_own_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Probe AX: catch_warnings swaps process-wide state, and two runs on threads of one process
    (a Dask worker of several threads) got each other's warnings, or lost them to stderr."""
    import threading
    import warnings

    from optsched.sweep import executors
    from optsched.sweep.grid import SweepRun

    both_running = threading.Barrier(2)
    first_warned = threading.Event()

    def warning_run(run, config):  # type: ignore[no-untyped-def]
        both_running.wait(timeout=30)
        if run.seed == 1:
            first_warned.wait(timeout=30)  # seed 1 warns while seed 0's run is still open
        warnings.warn(f"from run {run.key}")
        if run.seed == 0:
            first_warned.set()
            time.sleep(0.2)
        return {"asw": 1.0}

    monkeypatch.setattr(executors, "_run_experiment", warning_run)
    runs = [SweepRun(f"k{seed}", "experiment", "esdp", "LCF", seed, "{}", "{}") for seed in (0, 1)]
    rows: dict[str, dict[str, str]] = {}
    threads = [threading.Thread(target=lambda r=r: rows.__setitem__(r.key, executors.run_one(r))) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert {k: json.loads(r["warnings"]) for k, r in rows.items()} == {"k0": ["from run k0"], "k1": ["from run k1"]}


def test_a_dead_dask_worker_is_one_error_naming_the_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Probe AX: dask retries a task whose worker died, then raised KilledWorker with its traceback."""
    pytest.importorskip("distributed")
    from optsched.result import WorkerLost
    from optsched.sweep import executors

    monkeypatch.setattr(executors, "run_batch", _die)
    cfg = write(tmp_path, ESDP_TOML.format(horizon=5))
    with pytest.raises(WorkerLost, match=r"a worker process died .* its own among them: [0-9a-f]{16} \(esdp, "):
        run_sweep(cfg, tmp_path / "out", executor="dask", dask_address="local", workers=2, progress=False)


def test_a_worker_whose_pool_is_gone_exits_quietly(capsys: pytest.CaptureFixture[str]) -> None:
    """Probe AW: a Ctrl-C about a second into a pool sweep printed, under "optsched: interrupted",
    a 15-line FileNotFoundError traceback from each worker still starting (its pool's semaphores
    unlinked). The fork server's children stay quiet for that one failure, not for others."""
    import multiprocessing.synchronize as synchronize

    from optsched.sweep.fork_server_preload import quiet_start_failure

    lock = object.__new__(synchronize.Lock)
    with pytest.raises(FileNotFoundError) as gone:  # the pool's lock, unlinked by a parent that shut down
        synchronize.SemLock.__setstate__(lock, (0, synchronize.SEMAPHORE, 1, "/optsched-test-no-such-semaphore"))
    quiet_start_failure(gone.type, gone.value, gone.tb)
    assert capsys.readouterr().err == ""
    try:
        raise FileNotFoundError("a trace file")
    except FileNotFoundError as exc:
        quiet_start_failure(type(exc), exc, exc.__traceback__)
    assert "FileNotFoundError: a trace file" in capsys.readouterr().err
