"""The files a run read, with their SHA-256, in its metadata (``optsched.files.recording_inputs``):
a run on the Alibaba traces recorded only the trace directory's path, nothing of its content."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from optsched.cli import main
from optsched.files import inputs_read, open_user_file, read_user_text, recording_inputs

TRACE_FILES = ("gpu-v2020/pai_machine_spec.csv", "gpu-v2023/openb_node_list_all_node.csv",
               "gpu-v2023/openb_pod_list_default.csv", "v2018-sample/sample_tasks.csv")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_read_to_its_end_is_noted_with_its_size_and_digest(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"x" * 200_000 + b"end\n")  # more than one buffer's worth
    assert inputs_read() is None
    with recording_inputs() as outer:
        read_user_text(path, "file")
        with recording_inputs() as inner:
            other = tmp_path / "b.txt"
            other.write_text("b\n")
            read_user_text(other, "file")
            assert inputs_read() == inner
        assert inputs_read() == outer
    assert inputs_read() is None
    note = {"resolved": str(path.resolve()), "bytes": path.stat().st_size, "sha256": _digest(path)}
    assert outer == {str(path): note, str(other): {"resolved": str(other.resolve()), "bytes": 2, "sha256": _digest(other)}}
    assert inner == {str(other): outer[str(other)]}  # a block notes only what was read inside it


def test_a_file_not_read_to_its_end_or_outside_a_block_is_not_noted(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"y" * 100_000)
    read_user_text(path, "file")  # outside any block
    with recording_inputs() as inputs:
        with open_user_file(path, "file") as fh:
            fh.read(10)
    assert inputs == {}


def test_a_read_on_another_thread_is_its_own(tmp_path: Path) -> None:
    """A Dask worker runs tasks on threads: one run's block must not note another's files."""
    path = tmp_path / "t.txt"
    path.write_text("t\n")
    with recording_inputs() as inputs:
        seen: list[object] = []
        thread = threading.Thread(target=lambda: (read_user_text(path, "file"), seen.append(inputs_read())))
        thread.start()
        thread.join()
    assert inputs == {} and seen == [None]


def test_run_on_the_traces_names_each_file_and_its_digest(tmp_path: Path, shared_data: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'source = "alibaba"\ntrace_dir = "{shared_data / "alibaba"}"\nhorizon = 30\nregret_points = 2\n')
    assert main(["run", "ogasched", "--preset", "fig2", "--config", str(config), "--out", str(tmp_path / "out")]) == 0
    metas = sorted((tmp_path / "out").glob("*.json"))
    assert metas
    for meta in metas:
        inputs = json.loads(meta.read_text())["inputs"]
        expected = {str(shared_data / "alibaba" / name) for name in TRACE_FILES}
        assert set(inputs) == expected, meta
        for path, note in inputs.items():
            assert note == {"resolved": str(Path(path).resolve()), "bytes": Path(path).stat().st_size,
                            "sha256": _digest(Path(path))}


def test_sweep_rows_and_bench_name_what_they_read(tmp_path: Path, shared_data: Path) -> None:
    import csv

    from optsched.config import config_from_mapping
    from optsched.sweep import run_sweep
    from optsched.sweep.grid import SweepConfig

    trace_dir = shared_data / "alibaba"
    sweep = config_from_mapping(SweepConfig, {
        "experiment": "ogasched", "policies": ["OGASched"],
        "base": {"source": "alibaba", "trace_dir": str(trace_dir), "horizon": 12, "n_nodes": 6, "n_ports": 3,
                 "batch_ports": 1},
        "grid": {"contention": [1.0]}}, where="sweep")
    run_sweep(sweep, tmp_path / "sweep", executor="serial", progress=False)

    with open(tmp_path / "sweep" / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(json.loads(r["inputs"]) == {str(trace_dir / name): _digest(trace_dir / name)
                                                    for name in TRACE_FILES} for r in rows)

    captures = tmp_path / "in"
    captures.mkdir()
    (captures / "sp.jsonl").write_text('{"model": "set_packing", "n_elements": 2, "sets": [[0], [1]], "weights": [1, 2]}\n')
    assert main(["bench", "--instances", str(captures), "--backends", "greedy", "--out", str(tmp_path / "bench")]) == 0
    inputs = json.loads((tmp_path / "bench" / "bench.json").read_text())["inputs"]
    assert inputs == {str(captures / "sp.jsonl"): {"resolved": str((captures / "sp.jsonl").resolve()), "bytes": (captures / "sp.jsonl").stat().st_size,
                                                    "sha256": _digest(captures / "sp.jsonl")}}


def test_a_dirty_checkout_records_its_changed_files_and_the_digest_of_its_diff(tmp_path: Path, monkeypatch) -> None:
    """``source.dirty`` said only that the checkout had uncommitted edits: the run could not be
    rebuilt from the commit (probe AM). The files and the digest of ``git diff HEAD`` now say
    which, whatever the user's git config (probe AO: ``diff.noprefix`` changed the digest), and
    the package's untracked files are named."""
    import subprocess

    from optsched.artifacts import git_state

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("x = 1\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    for argv in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "one"]):
        subprocess.run(git + argv, cwd=tmp_path, check=True, capture_output=True)
    clean = git_state(package)
    assert clean["dirty"] is False and "diff_sha256" not in clean and len(clean["commit"]) == 40
    (package / "__init__.py").write_text("x = 2\n")
    dirty = git_state(package)
    diff = subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=tmp_path, capture_output=True, check=True).stdout
    assert dirty["dirty"] is True and dirty["changed"] == ["pkg/__init__.py"] and "untracked" not in dirty
    assert dirty["diff_sha256"] == hashlib.sha256(diff).hexdigest() and dirty["commit"] == clean["commit"]
    user = tmp_path.parent / f"{tmp_path.name}-gitconfig"
    user.write_text("[diff]\n\tnoprefix = true\n\talgorithm = histogram\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    (package / "new.py").write_text("y = 1\n")
    configured = git_state(package)
    assert configured["diff_sha256"] == dirty["diff_sha256"] and configured["untracked"] == ["pkg/new.py"]
    assert git_state(tmp_path) == {}  # not a package at the top of the work tree
