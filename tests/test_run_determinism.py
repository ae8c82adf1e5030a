"""Determinism of ``optsched run``: the same config and seed give byte-identical result files.

Each experiment runs twice from the CLI with a tiny TOML config into two directories; every
result CSV must be byte-identical, and so must every PNG (``write_png`` fixes the metadata).
Measured seconds are the one exception, kept out of the result files by design: they go to
``*_timing.csv`` (ogasched fig2, esdp sweep and overhead), the ESDP overhead plot (a timing
figure), the ESDP sweep plot (one panel is CPU seconds) and the ``runtime_s`` / ``cpu_s`` of
the metadata JSON.
Results are written atomically (``optsched.artifacts``: temporary file, then ``os.replace``);
``test_no_temporary_files_left`` checks nothing else is left in the output directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from optsched.cli import main

TINY: dict[str, str] = {
    "maxweight-simulate": """
study = "simulate"
frames = 150
n_apps = 3
n_workers = 2
requirement = [0.1, 0.1, 0.1]
""",
    "maxweight-fig3": """
study = "fig3"
frames = 100
grid_step = 0.25
""",
    "maxweight-fig5": """
study = "fig5"
frames = 120
fig5_sizes = [2, 3]
fig5_task_probs = [0.4]
fig5_r_step = 0.05
""",
    "esdp-asw": """
study = "asw"
horizon = 6
n_ports = 3
n_servers = 6
edge_prob = 0.4
""",
    "esdp-sweep": """
study = "sweep"
horizon = 5
n_ports = 3
n_servers = 6
edge_prob = 0.4
policies = ["ESDP", "LCF", "Oracle"]
sweep = "alpha"
sweep_values = [0.5, 1.0]
""",
    "esdp-overhead": """
study = "overhead"
horizon = 4
n_ports = 3
edge_prob = 0.4
sweep = "n_servers"
sweep_values = [4, 6]
""",
    "ogasched": """
study = "all"
n_nodes = 6
n_ports = 3
horizon = 8
regret_points = 2
fig3_nodes = [4]
fig3_ports = [2]
fig3_contention = [1.0]
fig7_utilities = ["log"]
table3_horizons = [5]
table3_probs = [0.5]
table3_densities = [2.0]
""",
    "onsocmax-sweep": """
study = "sweep"
n_nodes = 3
n_slots = 6
n_jobs = 4
max_nodes = 2
values = [2.0, 4.0]
repeats = 1
kinds = ["linear", "log"]
""",
    "onsocmax-ratio": """
study = "ratio"
n_nodes = 3
n_slots = 6
n_jobs = 4
max_nodes = 2
instances = 2
kinds = ["sqrt"]
""",
}



def is_measurement(name: str) -> bool:
    """Files holding measured seconds, expected to differ between runs (see the module doc):
    timing CSVs, the ESDP overhead plot, and the ESDP sweep plot (its right panel is CPU time)."""
    return name.endswith("_timing.csv") or (name.startswith(("esdp_overhead_", "esdp_sweep_")) and name.endswith(".png"))


def _run(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str], dirs: tuple[str, ...] = ("a", "b")) -> list[Path]:
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(TINY[name])
    experiment = name.split("-")[0]
    for d in dirs:
        assert main(["run", experiment, "--config", str(cfg), "--seed", "3", "--out", str(tmp_path / d)]) == 0
    capsys.readouterr()
    return [tmp_path / d for d in dirs]


@pytest.mark.parametrize("name", sorted(TINY))
def test_same_config_and_seed_give_identical_results(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _run(tmp_path, name, capsys)
    files = sorted(p.name for p in a.iterdir())
    assert files == sorted(p.name for p in b.iterdir())
    results = [f for f in files if f.endswith((".csv", ".png")) and not is_measurement(f)]
    assert any(f.endswith(".csv") for f in results), files
    for f in results:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f"{name}: {f} differs between two runs"


@pytest.mark.parametrize("name", ["ogasched", "esdp-sweep", "esdp-overhead"])
def test_measured_seconds_live_only_in_timing_files(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (a,) = _run(tmp_path, name, capsys, ("a",))
    timing = sorted(p for p in a.iterdir() if p.name.endswith("_timing.csv"))
    assert timing, "the timing file is written"
    for p in a.glob("*.csv"):
        header = p.read_text().splitlines()[0].split(",")
        has_seconds = [c for c in header if c.endswith("_s") or "_s_" in c]  # runtime_s, mean_s_per_slot, ...
        assert bool(has_seconds) == (p in timing), (p.name, header)


def test_seed_changes_the_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The comparison above is not vacuous: another seed gives other bytes."""
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(TINY["esdp-asw"])
    for d, seed in (("a", "3"), ("b", "4")):
        assert main(["run", "esdp", "--config", str(cfg), "--seed", seed, "--out", str(tmp_path / d)]) == 0
    capsys.readouterr()
    assert (tmp_path / "a" / "esdp_asw.csv").read_bytes() != (tmp_path / "b" / "esdp_asw.csv").read_bytes()


def test_no_temporary_files_left(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (a,) = _run(tmp_path, "onsocmax-ratio", capsys, ("a",))
    assert not [p.name for p in a.iterdir() if p.name.startswith(".") or p.name.endswith(".tmp")]


@pytest.mark.parametrize("name", sorted(TINY))
def test_every_file_is_in_a_manifest_with_its_hash(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each result JSON (the set's manifest, optsched.artifacts) lists the files of its set with
    their SHA-256, and every file of the run is in exactly one set."""
    import hashlib
    import json

    (a,) = _run(tmp_path, name, capsys, ("a",))
    listed: list[str] = []
    for manifest in a.glob("*.json"):
        files = json.loads(manifest.read_text())["files"]
        assert files, manifest.name
        for f, digest in files.items():
            assert hashlib.sha256((a / f).read_bytes()).hexdigest() == digest, (manifest.name, f)
        listed += files
    assert sorted(listed) == sorted(p.name for p in a.iterdir() if p.suffix != ".json")


def test_a_set_cut_short_leaves_no_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A rerun killed between its CSV and its JSON leaves the new CSV without a JSON, never the
    old run's JSON beside it (the JSON goes first and is written last)."""
    import optsched.artifacts as artifacts

    (a,) = _run(tmp_path, "esdp-asw", capsys, ("a",))
    assert (a / "esdp_asw.json").exists()
    old_csv = (a / "esdp_asw.csv").read_bytes()

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # as a SIGINT arrives between two files

    monkeypatch.setattr(artifacts, "write_png", killed)
    cfg = tmp_path / "cfg.toml"
    assert main(["run", "esdp", "--config", str(cfg), "--seed", "4", "--out", str(a)]) == 130  # "interrupted"
    assert (a / "esdp_asw.csv").read_bytes() != old_csv  # the new run's table is there ...
    assert not (a / "esdp_asw.json").exists()  # ... and no manifest says it is complete
