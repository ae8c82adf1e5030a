"""The command line: solve / compare / backends / run, and one line + exit 2 on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from optsched.cli import main

BAD = Path(__file__).parent / "bad_inputs"
GOOD = {"model": "set_packing", "n_elements": 4, "sets": [[0, 1], [1, 2, 3], [2]], "weights": [1.0, 2.5, 1.0]}


@pytest.fixture
def good_json(tmp_path: Path) -> Path:
    p = tmp_path / "inst.json"
    p.write_text(json.dumps(GOOD))
    return p


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_json_output(capsys, good_json: Path) -> None:
    code, out, _ = run_cli(capsys, "solve", str(good_json), "--backend", "highs", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"model", "backend", "termination", "objective", "bound", "gap_to_own_bound", "solution",
                         "options", "runtime_s", "setup_s", "message"}
    assert data["termination"] == "optimal" and data["message"] == ""
    assert data["objective"] == pytest.approx(2.5)
    assert data["solution"] == [1]


def test_solve_readable_and_options(capsys, good_json: Path) -> None:
    code, out, _ = run_cli(capsys, "solve", str(good_json), "--backend", "cpsat", "--option", "num_workers=2")
    assert code == 0
    assert "termination optimal" in out


def test_compare_prints_every_backend(capsys, good_json: Path) -> None:
    code, out, _ = run_cli(capsys, "compare", str(good_json), "--backends", "greedy,highs,brute_force")
    assert code == 0
    for b in ("greedy", "highs", "brute_force"):
        assert b in out


def test_backends_lists_availability(capsys) -> None:
    code, out, _ = run_cli(capsys, "backends")
    assert code == 0
    assert "greedy" in out and "available" in out


def test_backends_lists_each_option_with_its_default_and_range(capsys) -> None:
    from optsched.solvers.registry import all_backends

    code, out, _ = run_cli(capsys, "backends")
    assert code == 0 and "Option(" not in out  # once the dataclass's repr
    lines = set(line.strip() for line in out.splitlines())
    for backend in all_backends().values():
        for key, spec in backend.OPTIONS.items():
            assert any(line.startswith(f"{key} = {spec.default!r} (") for line in lines), (backend.NAME, key)
    assert "max_outer = 200 (integer >= 1): outer iterations before stopping (not in the paper)" in lines
    assert "decay = 0.95 (number > 0, <= 0.999999999999): backtracking factor of the inner descent" in lines


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", str(BAD / "does_not_exist.json")],
        ["solve", str(BAD)],  # a directory
        ["solve", str(BAD / "unknown_key.toml")],  # unknown instance format
    ]
    + [["solve", str(p)] for p in sorted(BAD.glob("*.json"))]
    + [["solve", str(p)] for p in sorted(BAD.glob("*.dat"))]
    + [["run", "maxweight", "--config", str(p)] for p in sorted(BAD.glob("*.toml"))]
    + [
        ["run", "nosuchexperiment"],
        ["run", "maxweight", "--preset", "nosuchpreset"],
        ["run", "maxweight", "--config", str(BAD / "missing.toml")],
        ["frobnicate"],
        [],
        ["solve"],
        ["solve", "x.json", "--time-limit", "soon"],
    ],
    ids=lambda a: " ".join(Path(x).name for x in a) or "empty",
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv: list[str]) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("optsched: error: ")


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--backend", "nosuch"], "unknown backend"),
        (["--backend", "fast"], "does not solve"),
        (["--option", "bogus=1", "--backend", "highs"], "no option"),
        (["--option", "novalue"], "KEY=VALUE"),
        (["--instance", "2"], "out of range"),
        (["--time-limit", "-1"], "time_limit"),
        # solve()'s own parameters are no backend options: a traceback (TypeError), or verify=false
        # switched verification off unseen
        (["--option", "time_limit=1", "--backend", "highs"], "no option 'time_limit'"),
        (["--option", "backend=greedy", "--backend", "highs"], "no option 'backend'"),
        (["--option", "verify=false", "--backend", "highs"], "no option 'verify'"),
        (["--option", "kind_or_model=1"], "no option 'kind_or_model'"),
    ],
)
def test_solve_misuse(capsys, good_json: Path, extra: list[str], needle: str) -> None:
    code, _, err = run_cli(capsys, "solve", str(good_json), *extra)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_compare_rejects_unfit_backend_before_solving(capsys, good_json: Path) -> None:
    code, out, err = run_cli(capsys, "compare", str(good_json), "--backends", "highs,kkt")
    assert code == 2 and out == "" and "kkt" in err


def test_bad_inputs_named_in_message(capsys) -> None:
    expectations = {
        "negative_weight.json": "weights",
        "index_out_of_range.json": "sets[1]",
        "nan_weight.json": "NaN",
        "ragged_weights.json": "weights",
        "unknown_model.json": "unknown model",
        "unknown_key.json": "colour",
        "truncated.dat": "ends inside",
        "column_out_of_range.dat": "column 3",
    }
    for name, needle in expectations.items():
        _, _, err = run_cli(capsys, "solve", str(BAD / name))
        assert needle in err, (name, err)


def test_run_quick_writes_csv_png_and_metadata(capsys, tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('study = "fig3"\nframes = 300\ngrid_step = 0.1\nfig3_app2_task_probs = [0.5]\n')
    code, out, _ = run_cli(capsys, "run", "maxweight", "--config", str(cfg), "--out", str(tmp_path / "o"), "--seed", "4")
    assert code == 0
    written = [Path(line.split(" ", 1)[1]) for line in out.splitlines()]
    assert {p.suffix for p in written} == {".csv", ".png", ".json"}
    meta = json.loads((tmp_path / "o" / "fig3_regions.json").read_text())
    assert meta["seed"] == 4 and meta["config"]["frames"] == 300 and "numpy" in meta["versions"]


def test_run_is_deterministic(capsys, tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('study = "fig3"\nframes = 200\ngrid_step = 0.1\nfig3_app2_task_probs = [0.3]\n')
    for d in ("a", "b"):
        assert main(["run", "maxweight", "--config", str(cfg), "--out", str(tmp_path / d)]) == 0
    capsys.readouterr()
    for name in ("fig3_regions.csv", "fig3_boundary.csv", "fig3_regions.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_entry_point_process_exit_code(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "optsched.cli", "solve", str(tmp_path / "none.json")], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_compare_takes_options_per_backend(capsys, good_json: Path) -> None:
    code, out, _ = run_cli(capsys, "compare", str(good_json), "--backends", "greedy,cpsat",
                           "--option", "cpsat.num_workers=2", "--repeats", "2")
    assert code == 0 and "cpsat" in out and "greedy" in out
    code, out, err = run_cli(capsys, "compare", str(good_json), "--backends", "greedy,cpsat", "--option", "cpsat.bogus=1")
    assert code == 2 and out == "" and "bogus" in err
    code, _, err = run_cli(capsys, "compare", str(good_json), "--option", "num_workers=2")
    assert code == 2 and "BACKEND.KEY=VALUE" in err


def test_every_command_line_option_has_help_text() -> None:
    import argparse

    from optsched.cli import build_parser

    missing = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    walk(sub, sub_name)
            elif not action.help and action.dest != "help":
                missing.append(f"{name} {action.option_strings or action.dest}")

    walk(build_parser(), "optsched")
    assert missing == []


@pytest.mark.parametrize("argv, needle", [
    (["compare", "{good}", "--backends", ","], "--backends: an empty name"),
    (["compare", "{good}", "--backends", ""], "--backends: an empty name"),
    (["compare", "{good}", "--backends", "greedy,greedy"], "--backends: a name is given twice"),
    (["run", "maxweight", "--shadow", ",,", "--out", "{tmp}/o"], "--shadow: an empty name"),
    (["bench", "--quick", "--models", "capacity_projection", "--backends", "greedy", "--out", "{tmp}/b"],
     "'greedy' solves none of the models benchmarked"),
    (["run", "maxweight", "--seed", "-1", "--out", "{tmp}/o"], "config.seed: must be >= 0"),
    (["sweep", "{tmp}/grid.toml", "--out", "{tmp}/s"], "more than the limit of 1e+06"),
    (["sweep", "{tmp}/small.toml", "--workers", "100000", "--out", "{tmp}/s"], "--workers: must be a whole number in 1..1024"),
    (["sweep", "{tmp}/small.toml", "--dask", "tcp://127.0.0.1:99999", "--out", "{tmp}/s"], "is not HOST:PORT"),
])
def test_lists_counts_and_addresses_the_probe_found_are_refused_in_one_line(capsys, good_json: Path, tmp_path: Path,
                                                                            argv: list[str], needle: str) -> None:
    """An empty or repeated name in a comma list was dropped or used twice (``--backends ,``
    ran every backend), bench took a backend that solves none of its models, a 10^10-run grid
    was expanded for minutes, --workers had no bound, a bad port waited out a connect timeout."""
    axes = "\n".join(f"{k} = [{', '.join(str(10 + i) for i in range(10))}]" for k in
                     ("horizon", "n_servers", "n_ports", "n_resources", "a_max"))
    (tmp_path / "grid.toml").write_text(f'kind = "experiment"\nexperiment = "esdp"\nseeds = {list(range(100))}\n'
                                        f'[grid]\n{axes}\n')
    (tmp_path / "small.toml").write_text('kind = "solve"\nmodels = ["set_packing"]\nbackends = ["greedy"]\nsizes = [4]\n')
    argv = [a.replace("{good}", str(good_json)).replace("{tmp}", str(tmp_path)) for a in argv]
    code, _, err = run_cli(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and needle in lines[0], (code, err)


def test_a_damaged_store_part_is_named_not_taken_as_done(capsys, tmp_path: Path) -> None:
    sweep = tmp_path / "small.toml"
    sweep.write_text('kind = "solve"\nmodels = ["set_packing"]\nbackends = ["greedy"]\nsizes = [4]\nseeds = [0, 1]\n')
    assert run_cli(capsys, "sweep", str(sweep), "--workers", "1", "--out", str(tmp_path / "s"))[0] == 0
    part = sorted((tmp_path / "s" / "store").glob("part-*.csv"))[0]
    text = part.read_text()
    # the last: the closing quote of the last quoted cell (the versions JSON) cut, the line break
    # kept, was read as a value and the part taken as done
    last_quote = text.rindex('"')
    cut_quote = text[:last_quote] + text[last_quote + 1:]
    assert text[last_quote + 1:] == ",serial,1\n"  # then the session that ran the row: executor, workers
    for damaged in (text.replace("key", "kee", 1), text[: len(text) - 20], b"\xff\xfe".decode("latin-1") + text,
                    cut_quote):
        part.write_text(damaged, encoding="latin-1" if damaged.startswith("\xff") else "utf-8")
        code, _, err = run_cli(capsys, "sweep", str(sweep), "--workers", "1", "--out", str(tmp_path / "s"))
        assert code == 2 and "is a damaged store part" in err and len(err.strip().splitlines()) == 1, err


def test_a_store_part_that_is_a_fifo_or_holds_another_runs_row_is_named(capsys, tmp_path: Path) -> None:
    """A part replaced by a FIFO hung the resume (read without the bounded reader); a row whose
    settings were changed (another model kind, no seed) raised KeyError with a traceback."""
    sweep = tmp_path / "small.toml"
    sweep.write_text('kind = "solve"\nmodels = ["set_packing"]\nbackends = ["greedy"]\nsizes = [4]\nseeds = [0]\n')
    out = tmp_path / "s"
    assert run_cli(capsys, "sweep", str(sweep), "--workers", "1", "--out", str(out))[0] == 0
    part = sorted((out / "store").glob("part-*.csv"))[0]
    text = part.read_text()
    for changed, needle in ((text.replace(",set_packing,", ",other_kind,", 1), "does not hold that run's settings"),
                            (text.replace(",seed,", ",sead,", 1), "does not hold that run's settings")):
        part.write_text(changed)
        code, _, err = run_cli(capsys, "sweep", str(sweep), "--workers", "1", "--out", str(out))
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    part.unlink()
    os.mkfifo(part)
    code, _, err = run_cli(capsys, "sweep", str(sweep), "--workers", "1", "--out", str(out))
    assert code == 2 and "is a damaged store part" in err and "not a regular file" in err, err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_bad_input_met_inside_a_sweep_run_is_one_line_naming_the_run(capsys, tmp_path: Path, workers: str) -> None:
    """A value refused only when a run executes (HiGHS refusing an option value) was wrapped in a
    RuntimeError: a traceback and exit 1 where ``solve`` exits 2 with one line."""
    sweep = tmp_path / "h.toml"
    sweep.write_text('kind = "solve"\nmodels = ["set_packing"]\nbackends = ["highs"]\nsizes = [5]\n'
                     '[options.highs]\nhighs_options = {presolve = "maybe"}\n')
    code, _, err = run_cli(capsys, "sweep", str(sweep), "--workers", workers, "--out", str(tmp_path / "s"))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "sweep run" in lines[0] and "HiGHS rejects option 'presolve'" in lines[0]


def test_file_names_that_are_not_utf8_or_use_all_255_bytes(capsys, tmp_path: Path) -> None:
    """highspy takes only UTF-8 paths (a TypeError traceback reading or exporting an MPS/LP file
    named in Latin-1), a CSV could not hold such a name (bench --instances), and the atomic
    writer's temporary added 18 bytes to a name of 238-255 bytes (File name too long)."""
    lp = tmp_path / os.fsdecode(b"n\xffx.lp")
    lp.write_text("max\n obj: x + 2 y\nst\n c1: x + y <= 4\nbounds\n x <= 3\n y <= 2\nend\n")
    code, out, err = run_cli(capsys, "solve", str(lp), "--json")
    assert code == 0 and json.loads(out)["objective"] == 6.0, err
    for target in (tmp_path / os.fsdecode(b"out\xfe.mps"), tmp_path / ("y" * 251 + ".mps")):
        code, _, err = run_cli(capsys, "export", str(lp), "--format", "mps", "--out", str(target))
        assert code == 0 and target.is_file(), err
        code, out, err = run_cli(capsys, "solve", str(target), "--json")
        assert code == 0 and json.loads(out)["objective"] == 6.0, err
    captures = tmp_path / "captures"
    captures.mkdir()
    (captures / os.fsdecode(b"x\xffy.jsonl")).write_text(
        '{"model": "set_packing", "n_elements": 4, "sets": [[0, 1], [1, 2, 3]], "weights": [0.3072, 0.3645]}\n')
    code, _, err = run_cli(capsys, "bench", "--instances", str(captures), "--backends", "greedy,enumerate",
                           "--repeats", "1", "--out", str(tmp_path / "b"))
    assert code == 0, err
    assert "x\\udcffy.jsonl" in (tmp_path / "b" / "bench.csv").read_text(encoding="utf-8")


def test_a_capture_directorys_run_json_is_its_manifest(capsys, tmp_path: Path) -> None:
    """A rerun that failed after capturing left the new .jsonl beside the previous run's run.json
    (its seed, its count). run.json is now removed first and written last with the files' hashes."""
    import hashlib

    cap = tmp_path / "cap"
    argv = ["run", "maxweight", "--preset", "quick", "--capture", str(cap), "--capture-every", "50"]
    assert run_cli(capsys, *argv, "--seed", "1", "--out", str(tmp_path / "o"))[0] == 0
    meta = json.loads((cap / "run.json").read_text())
    assert set(meta["files"]) == {"set_packing_batch.jsonl"}
    assert meta["files"]["set_packing_batch.jsonl"] == hashlib.sha256((cap / "set_packing_batch.jsonl").read_bytes()).hexdigest()
    (tmp_path / "a_file").write_text("")
    code, _, err = run_cli(capsys, *argv, "--seed", "2", "--out", str(tmp_path / "a_file"))
    assert code == 2 and "a_file: exists and is not a directory" in err  # refused before the run
    again = json.loads((cap / "run.json").read_text())  # so the capture is the first run's, as its manifest says
    assert again == meta
    assert hashlib.sha256((cap / "set_packing_batch.jsonl").read_bytes()).hexdigest() == meta["files"]["set_packing_batch.jsonl"]


def test_a_capture_removes_its_own_files_only(capsys, tmp_path: Path) -> None:
    """Probe BC: a capture started by deleting every *.jsonl in its directory (``--capture .``
    took a user's notes.jsonl); it now removes the files it writes, <kind>.jsonl, and no other.
    ``Observer(capture_dir="")`` (the working directory; the CLI refuses "") is refused."""
    from optsched.observe import Observer

    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "notes.jsonl").write_text('{"mine": 1}\n')
    (cap / "set_packing_batch.jsonl").write_text("an earlier capture's\n")
    argv = ["run", "maxweight", "--preset", "quick", "--capture", str(cap), "--capture-every", "50"]
    assert run_cli(capsys, *argv, "--out", str(tmp_path / "o"))[0] == 0
    assert (cap / "notes.jsonl").read_text() == '{"mine": 1}\n'
    assert "an earlier capture's" not in (cap / "set_packing_batch.jsonl").read_text()
    with pytest.raises(ValueError, match="^--capture: an empty path$"):
        Observer(capture_dir="")


@pytest.mark.parametrize("argv", [
    ["run", "maxweight", "--preset", "quick"],
    ["reproduce", "maxweight"],
    ["bench", "--quick", "--models", "set_packing", "--backends", "greedy"],
    ["sweep", "{sweep}", "--workers", "1"],
])
@pytest.mark.parametrize("where", ["out", "parent"])
def test_an_output_directory_that_cannot_be_made_is_refused_before_any_work(capsys, tmp_path: Path, argv, where) -> None:
    """``--out`` naming a file (or a path under one) was refused only when the first result was
    written, after the whole run: 9.5 s for the README's command, hours for a long one."""
    sweep = tmp_path / "small.toml"
    sweep.write_text('kind = "solve"\nmodels = ["set_packing"]\nbackends = ["greedy"]\nsizes = [5]\nseeds = [0]\n')
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    out = blocker if where == "out" else blocker / "sub"
    code, out_text, err = run_cli(capsys, *[a.format(sweep=sweep) for a in argv], "--out", str(out))
    assert code == 2 and out_text == "", err
    assert err.strip() == f"optsched: error: {blocker}: exists and is not a directory; outputs are written in a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "small.toml"]


def test_an_out_that_is_a_dangling_link_is_refused_before_the_run(capsys, tmp_path: Path) -> None:
    """A link to nothing passed the check (its target does not exist) and failed after the run."""
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    code, _, err = run_cli(capsys, "run", "maxweight", "--preset", "quick", "--out", str(tmp_path / "link"))
    assert code == 2 and err.strip() == (f"optsched: error: {tmp_path / 'link'}: is a symbolic link to nothing; "
                                         "outputs are written in a directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link"]


@pytest.mark.parametrize(("argv", "output"), [
    (["sweep", "{sweep}", "--workers", "1"], "results.csv"),
    (["sweep", "{sweep}", "--workers", "1"], "timings.csv"),
    (["bench", "--quick", "--models", "set_packing", "--backends", "greedy"], "gaps.png"),
    (["bench", "--quick", "--models", "set_packing", "--backends", "greedy"], "summary.md"),
])
def test_a_directory_where_a_result_file_goes_is_refused_before_any_run(capsys, tmp_path: Path, argv, output) -> None:
    """A directory at a sweep's ``results.csv`` was named only after every run of the sweep."""
    sweep = tmp_path / "small.toml"
    sweep.write_text('kind = "solve"\nmodels = ["set_packing"]\nbackends = ["greedy"]\nsizes = [5]\nseeds = [0]\n')
    (tmp_path / "o" / output).mkdir(parents=True)
    code, _, err = run_cli(capsys, *[a.format(sweep=sweep) for a in argv], "--out", str(tmp_path / "o"))
    assert code == 2 and f"{output}: exists and is not a regular file" in err and len(err.strip().splitlines()) == 1
    written = sorted(p.relative_to(tmp_path / "o").as_posix() for p in (tmp_path / "o").rglob("*") if p.is_file())
    assert written in ([], ["store/.lock"]), written  # no run stored, no table or picture (the store's lock only)


def test_bench_names_a_negative_seed(capsys) -> None:
    """numpy's own message ("expected non-negative integer") named nothing."""
    code, _, err = run_cli(capsys, "bench", "--quick", "--models", "set_packing", "--backends", "greedy", "--seed", "-1")
    assert code == 2 and "seed: must be a whole number >= 0, got -1" in err and len(err.strip().splitlines()) == 1


def test_an_empty_out_path_is_refused(capsys, tmp_path: Path) -> None:
    """``--out ""`` wrote to the default directory without a word."""
    sweep = tmp_path / "small.toml"
    sweep.write_text('kind = "solve"\nmodels = ["set_packing"]\nbackends = ["greedy"]\nsizes = [4]\n')
    for argv in (["sweep", str(sweep), "--out", ""], ["run", "maxweight", "--out", " "]):
        code, _, err = run_cli(capsys, *argv)
        assert code == 2 and "--out: the path is empty" in err and len(err.strip().splitlines()) == 1


def test_an_esdp_seed_whose_sample_paths_pass_2_53_is_refused_before_any_run(capsys, tmp_path: Path) -> None:
    """Seed 10^10 passed the config check; its repeats draw from seed x 1000003 + repeat, and the
    sweep failed after other runs had run, naming 10000030000000000, a number nobody wrote."""
    sweep = tmp_path / "s.toml"
    sweep.write_text('kind = "experiment"\nexperiment = "esdp"\nseeds = [0, 10000000000]\npolicies = ["ESDP"]\n'
                     '[base]\nhorizon = 5\nn_servers = 4\nn_ports = 2\n')
    code, _, err = run_cli(capsys, "sweep", str(sweep), "--workers", "1", "--out", str(tmp_path / "o"))
    assert code == 2 and "config.seed: must be <= 9007172233" in err and not (tmp_path / "o").exists(), err


def test_an_onsocmax_sweep_point_drawing_several_instances_is_refused_before_any_run(capsys, tmp_path: Path) -> None:
    """With ONSOCMAX's default kinds and values, every run failed at run time."""
    sweep = tmp_path / "s.toml"
    sweep.write_text('kind = "experiment"\nexperiment = "onsocmax"\n[base]\nn_nodes = 3\nn_slots = 4\nn_jobs = 5\n')
    code, _, err = run_cli(capsys, "sweep", str(sweep), "--workers", "1", "--out", str(tmp_path / "o"))
    assert code == 2 and "give one 'kinds' and one 'values' entry" in err and not (tmp_path / "o").exists(), err


@pytest.mark.parametrize(("argv", "words"), [
    (["solve", "{f}", "--backend", "cpsat", "--option", "num_workers=1", "--option", "num_workers=8"],
     "--option: 'num_workers' is given twice"),
    (["solve", "{f}", "--backend", "highs", "--option", 'highs_options={"mip_rel_gap":0.1,"mip_rel_gap":0.2}'],
     "duplicate key 'mip_rel_gap'"),
    (["reproduce", "maxweight", "--set", "frames=100", "--set", "frames=200"], "--set: 'frames' is given twice"),
    (["reproduce", "maxweight", "--set", ""], "--set expects KEY=VALUE"),
    (["run", "maxweight", "--config", ""], "--config: the path is empty"),
    (["run", "maxweight", "--capture", ""], "--capture: the path is empty"),
    (["solve", "{f}", "--backend", "highs", "--log", ""], "--log: the path is empty"),
    (["compare", "{f}", "--log", ""], "--log: the path is empty"),
    (["bench", "--instances", ""], "--instances: the path is empty"),
    (["bench", "--data", ""], "--data: the path is empty"),
])
def test_a_flag_given_twice_or_empty_is_refused(capsys, good_json: Path, argv: list[str], words: str) -> None:
    """The last of two values won in silence, and an empty path was read as no path (the
    defaults used, nothing captured, no log written): each is one line and exit 2."""
    code, out, err = run_cli(capsys, *[a.replace("{f}", str(good_json)) for a in argv])
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_backends_takes_a_model_a_kind_or_its_class() -> None:
    import optsched
    from optsched.models import SetPacking

    model = SetPacking(n_elements=4, sets=[[0, 1], [1, 2, 3]], weights=[0.3, 0.4])
    assert set(optsched.backends(model)) <= set(optsched.backends("set_packing")) == set(optsched.backends(SetPacking))
    for bad in ("nope", 1, str):
        with pytest.raises(ValueError, match="model: expected an optsched model"):
            optsched.backends(bad)


def test_a_ctrl_c_while_the_parser_is_built_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Probe AW: a Ctrl-C about a second into `optsched sweep` landed in build_parser (it lists the
    papers) and printed a traceback; the parser was built outside the handler."""
    import optsched.cli as cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["backends"]) == 130
    assert capsys.readouterr().err.strip().splitlines() == ["optsched: interrupted"]


# a child that meets Ctrl-C when the CLI's first heavy import (numpy) starts, as `python -m
# optsched` (runpy imports the package, then runs its __main__) or as the `optsched` script does
_INTERRUPTED_IMPORT = """
import importlib.abc, runpy, sys
class Interrupt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, Interrupt())
if sys.argv[1] == "module":
    sys.argv[1:] = ["backends"]
    runpy.run_module("optsched", run_name="__main__", alter_sys=True)
else:
    sys.argv[1:] = ["backends"]
    from optsched.__main__ import main
    sys.exit(main())
"""


@pytest.mark.parametrize("entry", ["module", "script"])
def test_a_ctrl_c_while_the_package_loads_is_one_line(entry: str) -> None:
    """A Ctrl-C in the first half second of `python -m optsched` landed in the package's own
    imports (numpy, the registries), before any handler: the interpreter's traceback."""
    proc = subprocess.run([sys.executable, "-c", _INTERRUPTED_IMPORT, entry], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr.strip(), proc.stdout) == (130, "optsched: interrupted", "")


def test_the_lazy_package_answers_attribute_questions_as_a_module_does() -> None:
    """Probe BA: hasattr(optsched, "x.y") raised ModuleNotFoundError once the package's names
    loaded at first use; an unknown name is an AttributeError, a subpackage loads."""
    import optsched

    assert not hasattr(optsched, "x.y") and not hasattr(optsched, "nothing_of_that_name")
    assert hasattr(optsched, "generators") and callable(optsched.solve) and "solve" in dir(optsched)


@pytest.mark.parametrize(("flags", "says"), [
    (["--shadow-time-limit", "-1"], "--shadow-time-limit: only with --shadow"),
    (["--shadow-every", "5"], "--shadow-every: only with --shadow"),
    (["--capture-every", "5"], "--capture-every: only with --capture"),
    (["--shadow", "highs", "--shadow-time-limit", "-1"], "--shadow-time-limit: must be >= 0.0, got -1.0"),
])
def test_a_shadow_or_capture_flag_without_its_flag_is_refused(flags: list[str], says: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Probe BD: these ran to exit 0 without --shadow / --capture, even when invalid, and a
    negative --shadow-time-limit with --shadow was refused as "time_limit" by its first solve."""
    assert main(["run", "maxweight", "--preset", "fig3", "--out", str(tmp_path / "out"), *flags]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"optsched: error: {says}"]
    assert not (tmp_path / "out").exists()


def test_the_observer_names_a_negative_shadow_time_limit() -> None:
    from optsched.observe import Observer

    with pytest.raises(ValueError, match=r"^--shadow-time-limit: must be >= 0.0, got -1.0$"):
        Observer(shadow=("highs",), shadow_time_limit=-1.0)


@pytest.mark.parametrize(("argv", "says"), [
    (["run", "maxweight", "--preset", "quick", "--seed", "\u0663"], "argument --seed: invalid integer value: '\u0663'"),
    (["run", "maxweight", "--preset", "quick", "--seed", "1_0"], "argument --seed: invalid integer value: '1_0'"),
    (["solve", "x.json", "--time-limit", "1_0"], "argument --time-limit: invalid number value: '1_0'"),
])
def test_numbers_on_the_command_line_are_written_as_in_the_data_files(argv: list[str], says: str,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Probe BD: int() and float() took "1_0" as 10 and the Arabic-Indic digit three as 3 (a run
    with seed 3); the README refuses both forms in data files, and now on the command line."""
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"optsched: error: {says}"]


@pytest.mark.parametrize("raw", ["\u0663", "1_0"])
def test_the_memory_limit_variable_is_written_as_in_the_data_files(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import optsched
    from optsched.models.set_packing import SetPacking

    monkeypatch.setenv("OPTSCHED_MEMORY_LIMIT_GB", raw)
    with pytest.raises(ValueError, match="^OPTSCHED_MEMORY_LIMIT_GB: expected a number of GB"):
        optsched.solve(SetPacking(3, [[0], [1, 2]], [1.0, 2.0]), "greedy")


def test_the_shadow_time_limit_reaches_the_shadow_solves(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``--shadow-time-limit 0`` stops every shadow solve at once: each shadow row says
    time_limit (mutant BC72 solved them without the limit)."""
    import pandas as pd

    argv = ["run", "maxweight", "--preset", "quick", "--out", str(tmp_path / "o"), "--shadow", "highs",
            "--shadow-every", "25", "--shadow-time-limit", "0"]
    assert main(argv) == 0
    rows = pd.read_csv(tmp_path / "o" / "shadow.csv")
    shadow = rows[rows["backend"] == "highs"]
    assert len(shadow) > 0 and set(shadow["termination"]) == {"time_limit"}


def test_log_with_a_backend_that_keeps_none_names_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Probe BD: ``solve --backend fast --log F`` said "options: backend 'fast' has no option
    'log'", naming an option the user never gave."""
    from optsched.generators import generate
    import numpy as np

    instance = tmp_path / "p.json"
    instance.write_text(json.dumps(generate("capacity_projection", 5, np.random.default_rng(0)).to_dict()))
    assert main(["solve", str(instance), "--backend", "fast", "--log", str(tmp_path / "log.txt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["optsched: error: --log: backend 'fast' keeps no solver log (those that do: cpsat, highs, pyomo, scip)"]
    assert not (tmp_path / "log.txt").exists()
