"""Sweep rules the sweep docs state and no other test read: the seed of a solve run's instance,
``verify = false``, the wall/CPU split of ``runtime_s`` and ``cpu_s``, every distinct warning
of a run, the pool telling the batches its run times, the default worker count, sweep.json's
``stored_before`` and ``versions``, the dask port range (mutants BC33, BC35, BC36, BC37, BC38,
BC39, BC41, BC42, BC43)."""

from __future__ import annotations

import csv
import json
import os
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

import optsched
from optsched.config import config_from_mapping
from optsched.generators import generate
from optsched.sweep import SweepConfig, expand, run_sweep


def spec(**settings: object) -> SweepConfig:
    return config_from_mapping(SweepConfig, settings, where="sweep")


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_solve_runs_instance_is_drawn_from_its_own_seed_model_and_size(tmp_path: Path) -> None:
    """Rule (optsched.sweep docstring): one run = one seeded random instance, the generator
    drawing from ``default_rng([seed, crc32(model), size])``. Each row's objective is the one of
    that instance, recomputed here, and three seeds give three different instances (mutant BC36
    left the seed out: every seed solved the same instance, 2.8607 three times)."""
    seeds = [0, 1, 2]
    run_sweep(spec(kind="solve", models=["set_packing"], backends=["greedy"], sizes=[10], seeds=seeds),
              tmp_path, executor="serial", progress=False)
    got = {int(r["seed"]): float(r["objective"]) for r in read_rows(tmp_path / "results.csv")}
    expected = {}
    for seed in seeds:
        model = generate("set_packing", 10, np.random.default_rng([seed, zlib.crc32(b"set_packing"), 10]))
        expected[seed] = optsched.solve(model, "greedy").objective
    assert got == pytest.approx(expected, rel=1e-9)
    assert len(set(expected.values())) == len(seeds)  # three seeds, three instances


def test_verify_false_in_a_solve_sweep_reaches_the_solve(tmp_path: Path) -> None:
    """Rule (optsched.sweep docstring): a solve run calls ``optsched.solve(model, backend,
    time_limit=..., verify=...)`` with the sweep's ``verify``. Algorithm 1 of paper 003 as printed
    leaves the box, which only verification turns into an error row; with ``verify = false`` the
    row is the unverified answer (mutant BC37 always verified: every row was ``error``)."""
    run_sweep(spec(kind="solve", models=["capacity_projection"], backends=["paper"], sizes=[10, 40], seeds=[0],
                   verify=False), tmp_path, executor="serial", progress=False)
    rows = read_rows(tmp_path / "results.csv")
    assert len(rows) == 2
    rejected = 0
    for row in rows:
        size = int(row["size"])
        model = generate("capacity_projection", size,
                         np.random.default_rng([0, zlib.crc32(b"capacity_projection"), size]))
        unverified = optsched.solve(model, "paper", verify=False)
        assert row["termination"] == unverified.termination.value != "error", row
        assert float(row["objective"]) == pytest.approx(unverified.objective, rel=1e-9)
        rejected += optsched.solve(model, "paper").termination.value == "error"
    assert rejected  # the check the sweep skipped does reject these answers (else the test shows nothing)


def _one_experiment_run():  # type: ignore[no-untyped-def]
    return expand(spec(experiment="esdp", policies=["LCF"], base={"horizon": 5}))[0]


def test_runtime_s_is_wall_time_and_cpu_s_is_process_cpu_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule (sweep docs: timings.csv ``runtime_s, cpu_s``; bench docs: runtime_s "wall", cpu_s
    "process CPU time"): a run that waits 0.3 s without computing has a wall time of at least
    0.3 s and almost no CPU time (mutant BC33 swapped the two: runtime_s 0.0, cpu_s 0.3)."""
    from optsched.sweep import executors

    def waiting(run, config):  # type: ignore[no-untyped-def]
        time.sleep(0.3)
        return {"welfare": 1.0}

    monkeypatch.setattr(executors, "_run_experiment", waiting)
    row = executors.run_one(_one_experiment_run())
    assert float(row["runtime_s"]) >= 0.3
    assert float(row["cpu_s"]) < 0.15


def test_a_run_keeps_each_of_its_distinct_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule (run_one's docstring): the run's warnings are kept, each once, as JSON for the sweep
    to show. Two different warnings (and one repeat) give both, once each, in order (mutant BC35
    kept only the first: "1 row skipped (negative demand)" was never shown)."""
    from optsched.sweep import executors

    def warning_run(run, config):  # type: ignore[no-untyped-def]
        warnings.warn("trace: 3 rows skipped (empty cell)")
        warnings.warn("trace: 1 row skipped (negative demand)")
        warnings.warn("trace: 3 rows skipped (empty cell)")
        return {"welfare": 1.0}

    monkeypatch.setattr(executors, "_run_experiment", warning_run)
    row = executors.run_one(_one_experiment_run())
    assert json.loads(row[executors.WARNINGS]) == ["trace: 3 rows skipped (empty cell)",
                                                   "trace: 1 row skipped (negative demand)"]


def test_the_pool_reports_every_finished_batch_to_the_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule (optsched.sweep docstring): by default the batches adapt to task length, "about half
    a second of runs per task at the measured run time", so every finished batch's rows must
    reach ``Batches.done`` on the pool too (mutant BC38 never told it: every batch stayed a
    one-run probe). Done is called in the sweep process, so it is counted here."""
    from optsched.sweep import batches

    reported: list[int] = []
    real = batches.Batches.done

    def counting(self, rows):  # type: ignore[no-untyped-def]
        reported.append(len(rows))
        return real(self, rows)

    monkeypatch.setattr(batches.Batches, "done", counting)
    rep = run_sweep(spec(kind="solve", models=["set_packing"], backends=["greedy"], sizes=[5], seeds=[0, 1, 2, 3]),
                    tmp_path, executor="pool", workers=2, progress=False)
    assert rep.ran == 4
    assert sum(reported) == 4 and len(reported) == rep.batches


def test_sweep_json_counts_stored_runs_and_the_default_workers_and_names_versions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rules (optsched.sweep docstring and run_sweep's): sweep.json holds the counts (runs
    stored before this session, runs it ran) and the versions; ``--workers`` defaults to
    ``os.cpu_count()`` for the pool. A fresh sweep stored nothing before; a rerun ran nothing and
    found every run stored (mutants BC42: stored_before = pending; BC43: no versions; BC41:
    the pool's default was 1 worker). The rerun has nothing to run, so no pool is started."""
    from optsched.artifacts import package_versions

    sweep = spec(kind="solve", models=["set_packing"], backends=["greedy"], sizes=[5], seeds=[0, 1, 2])
    first = run_sweep(sweep, tmp_path, executor="serial", progress=False)
    meta = json.loads((tmp_path / "sweep.json").read_text())
    assert (meta["runs"], meta["stored_before"], meta["ran"]) == (3, 0, 3)
    assert (first.total, first.stored_before, first.ran) == (3, 0, 3)
    assert meta["versions"] == json.loads(json.dumps(package_versions()))
    monkeypatch.setattr(os, "cpu_count", lambda: 3)  # a machine of 3 CPUs, whatever this one has
    again = run_sweep(sweep, tmp_path, executor="pool", progress=False)  # workers left to the default
    meta = json.loads((tmp_path / "sweep.json").read_text())
    assert (meta["runs"], meta["stored_before"], meta["ran"]) == (3, 3, 0)
    assert meta["workers"] == again.workers == 3
    assert "versions" in meta


@pytest.mark.parametrize("port, ok", [(0, False), (1, True), (65535, True), (65536, False)])
def test_a_dask_scheduler_port_must_be_in_1_to_65535(port: int, ok: bool) -> None:
    """Rule (_check_host_port's docstring and message): a port in 1..65535; port 0 is refused up
    front instead of waiting out a 10 s connect timeout (mutant BC39 accepted 0)."""
    pytest.importorskip("distributed")
    from optsched.sweep.executors import check_dask_address

    address = f"tcp://127.0.0.1:{port}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the plain-tcp warning
        if ok:
            check_dask_address(address, None)
        else:
            with pytest.raises(ValueError, match="--dask"):
                check_dask_address(address, None)


def test_a_sweep_records_its_code_and_refuses_to_resume_on_another(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Probe BJ (2026-11-28): sweeps recorded no code revision, and a sweep resumed after a commit
    mixed rows of the old code with rows of the new in silence. Each row's ``source`` cell and
    sweep.json name the code that ran (``artifacts.source_revision``); a resume by other code is
    a ValueError naming both, and nothing runs."""
    from optsched.artifacts import source_revision
    from optsched.sweep import executors, runner

    sweep = spec(kind="solve", models=["set_packing"], backends=["greedy"], sizes=[5], seeds=[0, 1])
    run_sweep(sweep, tmp_path, executor="serial", progress=False)
    rows = read_rows(tmp_path / "results.csv")
    assert {json.loads(r["source"]) == source_revision() for r in rows} == {True}
    assert json.loads((tmp_path / "sweep.json").read_text()).get("source") == (source_revision() or None)
    other = json.dumps({"commit": "0123456789abcdef", "dirty": False})
    monkeypatch.setattr(runner, "run_source", lambda: other)
    monkeypatch.setattr(executors, "run_source", lambda: other)
    wider = spec(kind="solve", models=["set_packing"], backends=["greedy"], sizes=[5], seeds=[0, 1, 2])
    with pytest.raises(ValueError, match="stored by .* and this is commit 0123456789ab; resuming would mix"):
        run_sweep(wider, tmp_path, executor="serial", progress=False)
    assert len(read_rows(tmp_path / "results.csv")) == 2  # the third run did not run
    again = run_sweep(sweep, tmp_path, executor="serial", progress=False)  # nothing pending: files rewritten
    assert again.ran == 0 and read_rows(tmp_path / "results.csv") == rows
