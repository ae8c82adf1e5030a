"""``optsched.generators`` (every kind valid, deterministic, solvable) and ``optsched bench``
(tiny runs: CSV schema, every fitting backend present, gaps, real files, bad input)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import optsched
from optsched.bench import COLUMNS, BenchConfig, generated_instances, run_bench
from optsched.cli import main
from optsched.generators import generate, generator_kinds
from optsched.models.base import kind_specs, model_kinds
from optsched.result import Termination
from optsched.solvers.registry import fitting_backends

TINY = {kind: spec.tiny for kind, spec in kind_specs().items()}  # brute force fits where it can


def test_every_model_kind_has_a_generator_and_a_size_row() -> None:
    assert set(generator_kinds()) == set(model_kinds())


@pytest.mark.parametrize("kind", sorted(TINY))
@pytest.mark.parametrize("seed", [0, 1])
def test_generated_instances_are_valid_deterministic_and_solved_exactly(kind: str, seed: int) -> None:
    a = generate(kind, TINY[kind], np.random.default_rng([seed, 5]))
    b = generate(kind, TINY[kind], np.random.default_rng([seed, 5]))
    assert a.name == kind
    assert a.to_dict() == b.to_dict()  # same seed, same instance
    # a round trip through JSON re-validates the data
    assert optsched.model_from_dict(a.to_dict()).to_dict() == a.to_dict()
    exact = [be for be in fitting_backends(a) if be.EXACT]
    assert exact, f"no exact backend fits {kind}"
    res = optsched.solve(a, exact[0].NAME, time_limit=30)
    assert res.termination is Termination.OPTIMAL, (kind, exact[0].NAME, res.termination, res.extra)
    assert a.violations(res.solution, tol=1e-6) == []


def test_generate_rejects_unknown_kind_and_bad_size() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="no generator"):
        generate("knapsackz", 5, rng)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="size"):
            generate("set_packing", bad, rng)  # type: ignore[arg-type]


def test_sizes_change_the_instance_size() -> None:
    for kind in ("set_packing", "capacity_projection", "budgeted_ip"):
        small, large = (generate(kind, n, np.random.default_rng(0)).size for n in (10, 40))
        assert small < large


@pytest.fixture(scope="module")
def tiny_bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[BenchConfig, Path, pd.DataFrame]:
    out = tmp_path_factory.mktemp("bench")
    cfg = BenchConfig(quick=True, repeats=2, per_size=1, capture_papers=False, sizes={k: (n,) for k, n in TINY.items()}, use_files=False,
                      time_limit=20.0)
    run_bench(cfg, out, log=lambda _msg: None)
    return cfg, out, pd.read_csv(out / "bench.csv")


def test_bench_csv_schema_and_files(tiny_bench: tuple[BenchConfig, Path, pd.DataFrame]) -> None:
    cfg, out, df = tiny_bench
    assert tuple(df.columns) == COLUMNS
    for name in ("bench.csv", "runtime.png", "gaps.png", "summary.md", "bench.json"):
        assert (out / name).stat().st_size > 0, name
    listed = json.loads((out / "bench.json").read_text())["files"]  # the set's manifest, written last
    assert sorted(listed) == ["bench.csv", "gaps.png", "runtime.png", "summary.md"]
    for name, digest in listed.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert set(df["model"]) == set(TINY)
    assert set(df["source"]) == {"generated"}
    assert df["versions"].str.contains("optsched=").all()
    assert set(df["termination"]) <= {s.value for s in Termination}


def test_bench_runs_every_fitting_backend_each_repeat(tiny_bench: tuple[BenchConfig, Path, pd.DataFrame]) -> None:
    cfg, _, df = tiny_bench
    for inst in generated_instances(cfg):
        rows = df[df["instance"] == inst.name]
        assert set(rows["backend"]) == set(optsched.backends(inst.model)), inst.name
        assert (rows["size"] == inst.model.size).all()
        for backend, b in rows.groupby("backend"):
            if (b["termination"] != "time_limit").all():
                assert sorted(b["repeat"]) == list(range(cfg.n_repeats)), (inst.name, backend)


def test_bench_gaps(tiny_bench: tuple[BenchConfig, Path, pd.DataFrame]) -> None:
    _, _, df = tiny_bench
    gaps = df["gap_to_best_bound"].dropna()
    assert len(gaps) > 0 and (gaps >= 0).all()
    optimal_exact = df[df["exact"] & (df["termination"] == "optimal")]
    assert len(optimal_exact) > 0
    assert (optimal_exact["gap_to_best_bound"] <= 1e-6).all(), optimal_exact[optimal_exact["gap_to_best_bound"] > 1e-6]
    # the gap is measured against the instance's best bound, one value per instance
    assert (df.groupby("instance")["best_bound"].nunique(dropna=False) == 1).all()
    has_gap = df["gap_to_best_bound"].notna()
    both = df.loc[has_gap, ["best_bound", "objective"]]
    recomputed = (both["best_bound"] - both["objective"]).abs() / both.abs().max(axis=1).clip(lower=1.0)
    # the CSV keeps every digit: the gap recomputed from it is relative_gap's to the last bits
    assert np.allclose(recomputed, df.loc[has_gap, "gap_to_best_bound"], rtol=1e-12, atol=1e-15)
    # an infeasible answer (Algorithm 1 of paper 003 as printed) is an error row without a gap
    assert df.loc[df["termination"] == "error", "gap_to_best_bound"].isna().all()


def test_bench_marks_an_exact_optimal_past_the_best_bound_wrong(tiny_bench: tuple[BenchConfig, Path, pd.DataFrame]) -> None:
    """An exact backend's optimal 3.8e-4 from the instance's best bound (SCIP on the ESCB index in
    the quick bench until 2026-11-28) is a fault, not a gap: its termination cell says WRONG."""
    from optsched.bench import overview_table

    _, _, df = tiny_bench
    assert not any("WRONG" in line for line in overview_table(df))
    row = df.index[df["exact"] & (df["termination"] == "optimal")][0]
    faulty = df.copy()
    faulty.loc[row, "gap_to_best_bound"] = 3.8e-4
    kind, backend = faulty.loc[row, "model"], faulty.loc[row, "backend"]
    marked = [line for line in overview_table(faulty) if "WRONG" in line]
    assert len(marked) == 1 and marked[0].startswith(f"| {kind} | {backend} |") and marked[0].endswith("WRONG 1 |")


def test_bench_summary_table(tiny_bench: tuple[BenchConfig, Path, pd.DataFrame]) -> None:
    _, out, df = tiny_bench
    text = (out / "summary.md").read_text()
    assert "| backend | exact |" in text
    for kind in TINY:
        assert f"## {kind}" in text
    for backend in set(df["backend"]):
        assert f"| {backend} |" in text
    assert "load average" in text


def test_bench_reads_real_files_and_notes_absent_ones(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "setpacking").mkdir(parents=True)
    # a Delorme file: m n; n profits; per row its count and its 1-based columns
    (data / "setpacking" / "didactic.dat").write_text("2 3\n5 4 3\n2\n1 2\n2\n2 3\n")
    (data / "mwis").mkdir()  # a DIMACS graph: its heaviest clique is {1, 2} (4 + 3)
    (data / "mwis" / "johnson8-4-4.clq").write_text("p edge 3 1\nn 1 4\nn 2 3\nn 3 6\ne 1 2\n")
    messages: list[str] = []
    cfg = BenchConfig(quick=True, models=("set_packing", "budgeted_ip"), repeats=1,
                      sizes={"set_packing": (5,), "budgeted_ip": (5,)}, data_dir=data, capture_papers=False)
    run_bench(cfg, tmp_path / "out", log=messages.append)
    df = pd.read_csv(tmp_path / "out" / "bench.csv")
    files = df[df["source"] == "file"]
    assert set(files["instance"]) == {"didactic.dat", "johnson8-4-4.clq"}
    exact = files[files["exact"]].groupby("instance")["objective"]
    assert (exact.min() == exact.max()).all() and exact.min().to_dict() == {"didactic.dat": 8, "johnson8-4-4.clq": 7}
    assert any("absent" in m for m in messages)  # pb_100rnd0100.dat and orlib/mknap1.txt
    assert "absent" in (tmp_path / "out" / "summary.md").read_text()
    # the directory read is recorded resolved: the default, ../shared/data, depends on the working directory
    assert json.loads((tmp_path / "out" / "bench.json").read_text())["data_dir_read"] == str(data.resolve())


def test_bench_without_data_dir_prints_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default data directory may be absent (a note); an explicit --data must exist (the
    bad-input corpus checks that error)."""
    messages: list[str] = []
    monkeypatch.setenv("OPTSCHED_SHARED_DATA", str(tmp_path / "nowhere"))
    cfg = BenchConfig(quick=True, models=("budgeted_ip",), repeats=1, sizes={"budgeted_ip": (4,)}, capture_papers=False)
    run_bench(cfg, tmp_path / "out", log=messages.append)
    assert any("absent" in m and "skipped" in m for m in messages)
    assert set(pd.read_csv(tmp_path / "out" / "bench.csv")["source"]) == {"generated"}
    assert json.loads((tmp_path / "out" / "bench.json").read_text())["data_dir_read"] is None


def test_bench_orlib_mknap1_reaches_the_stated_optima(shared_data: Path, tmp_path: Path) -> None:
    cfg = BenchConfig(quick=True, models=("budgeted_ip",), repeats=1, sizes={"budgeted_ip": (4,)}, data_dir=shared_data,
                      capture_papers=False)
    run_bench(cfg, tmp_path, log=lambda _m: None)
    df = pd.read_csv(tmp_path / "bench.csv")
    files = df[df["source"] == "file"]
    assert files["instance"].nunique() == 7
    best = files.groupby("instance")["best_bound"].first().sort_index(key=lambda s: s.str.split("#").str[1].astype(int))
    assert np.allclose(best.to_numpy(), [3800, 8706.1, 4015, 6120, 12400, 10618, 16537], rtol=1e-9)


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--models", "knapsackz"],
        ["bench", "--repeats", "0"],
        ["bench", "--time-limit", "-1"],
        ["bench", "--repeats", "two"],
    ],
)
def test_bench_bad_input_is_one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main([*argv, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("optsched: error: ") and err.count("\n") == 1


def test_time_limit_hits_are_recorded_once_and_cut_larger_sizes(tmp_path: Path) -> None:
    # HiGHS needs ~0.1 s for a 1000-variable projection QP: a 5 ms limit stops it
    cfg = BenchConfig(quick=True, models=("capacity_projection",), repeats=2, time_limit=0.005, use_files=False,
                      capture_papers=False,
                      sizes={"capacity_projection": (1000, 1500)})
    run_bench(cfg, tmp_path, log=lambda _m: None)
    df = pd.read_csv(tmp_path / "bench.csv")
    hit = df[df["termination"] == "time_limit"]
    assert "highs" in set(hit["backend"])
    summary = (tmp_path / "summary.md").read_text()
    for backend, b in hit.groupby("backend"):
        first = int(b["size"].min())
        rows = df[(df["backend"] == backend) & (df["size"] == first)]
        assert len(rows) == 1  # not repeated after the limit
        assert not ((df["backend"] == backend) & (df["size"] > first)).any()  # cut above that size
        assert f"{backend} on capacity_projection: not run above size {first}" in summary
    # backends without a hit still run every repeat at every size
    fast = df[df["backend"] == "fast"]
    assert len(fast) == 2 * 2 and (fast["termination"] == "optimal").all()
    # Algorithm 1 of paper 003 as printed leaves the box on these instances: error rows say why
    paper = df[df["backend"] == "paper"]
    assert (paper["termination"] == "error").all() and paper["message"].str.contains("infeasible").all()
    assert f"paper on capacity_projection: {len(paper)} error row(s); first: returned solution is infeasible" in summary


def test_bench_of_captures_that_nothing_fits_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--backends or --models that fit none of the captured instances wrote a bench of 0 rows and
    exited 0 (the generated mode refused the same mismatch)."""
    captures = tmp_path / "in"
    captures.mkdir()
    (captures / "sp.jsonl").write_text('{"model": "set_packing", "n_elements": 2, "sets": [[0], [1]], "weights": [1, 2]}\n')
    for extra, needle in ((["--backends", "kkt"], "'kkt' solves none of the captured models (set_packing)"),
                          (["--models", "budgeted_ip"], "holds no instance of the models benchmarked (budgeted_ip)")):
        code = main(["bench", "--instances", str(captures), *extra, "--out", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "out" / "bench.csv").exists()


def test_captured_ratios_compare_backends_on_the_same_instances() -> None:
    """A backend that fits one small captured instance (brute force, n <= 22) had its median over
    that one as the "1x" of every backend: escb_oa, the fastest exact backend on every instance,
    read 7.7x."""
    import pandas as pd

    from optsched.bench import captured_table

    runs = {"cap#1": {"escb_oa": 1e-3, "brute_force": 1.3e-3, "aescb": 0.3e-3},
            "cap#2": {"escb_oa": 10e-3, "aescb": 2e-3}, "cap#3": {"escb_oa": 20e-3, "aescb": 3e-3}}
    df = pd.DataFrame([{"model": "escb_index", "source": "captured", "instance": inst, "backend": b,
                        "exact": b != "aescb", "runtime_s": t, "size": 13, "gap_to_best_bound": 0.0,
                        "termination": "optimal"} for inst, times in runs.items() for b, t in times.items()])
    rows = {line.split(" | ")[4]: line.split(" | ")[7] for line in captured_table(df) if line.startswith("| escb_index")}
    assert rows == {"escb_oa": "1x", "brute_force": "1.3x", "aescb": "0.2x"}
    # a solve a limit cut short or an error is no runtime: paper's errors read "1e+02x" the fastest exact
    df.loc[df["backend"] == "aescb", "termination"] = "error"
    df.loc[(df["backend"] == "escb_oa") & (df["instance"] == "cap#1"), "termination"] = "time_limit"
    cells = {line.split(" | ")[4]: line.split(" | ")[6:8] for line in captured_table(df) if line.startswith("| escb_index")}
    assert cells["aescb"] == ["-", "-"] and cells["brute_force"][1] == "1x" and cells["escb_oa"][1] == "1x"


def test_captured_instances_carry_the_options_the_policy_solved_them_with(tmp_path) -> None:
    """ESDP's AESCB route takes xi and max_budget per slot; the capture kept only the model, so
    ``bench --instances`` re-solved 10 of 13 captured indices with the defaults (xi = 32) and
    reported gaps the policy never had."""
    import optsched
    from optsched.bench import captured_instances
    from optsched.observe import Observer
    from optsched.papers import get_paper

    paper = get_paper("esdp")
    cfg = paper.make_config({"horizon": 12, "n_servers": 6, "n_ports": 3, "policies": ["ESDP"]})
    with Observer(capture_dir=tmp_path / "cap", capture_every=1, shadow=("escb_oa",), shadow_every=1) as observer:
        paper.run(cfg, tmp_path / "out")
    captured = [i for i in captured_instances(tmp_path / "cap") if i.kind == "escb_index"]
    assert captured and all({"xi", "max_budget"} <= set(i.options["aescb"]) for i in captured)
    policy = [row["objective"] for row in observer.rows if row["role"] == "policy" and row["model"] == "escb_index"]
    again = [optsched.solve(i.model, "aescb", **i.options["aescb"]).objective for i in captured]
    assert len(again) == len(policy) and again == pytest.approx(policy, rel=1e-12)


def test_solve_and_compare_of_a_captured_instance_use_its_policys_options(tmp_path, capsys) -> None:
    """``optsched solve``/``compare`` with the policy's own backend solve what the policy solved
    (the capture's options: AESCB's xi and max_budget of that slot); another backend, and an
    option given on the command line, are not touched by them."""
    from optsched.cli import main
    from optsched.io.json_instance import read_captures
    from optsched.observe import Observer
    from optsched.papers import get_paper

    paper = get_paper("esdp")
    cfg = paper.make_config({"horizon": 12, "n_servers": 6, "n_ports": 3, "policies": ["ESDP"]})
    with Observer(capture_dir=tmp_path / "cap", capture_every=1, shadow=("escb_oa",), shadow_every=1) as observer:
        paper.run(cfg, tmp_path / "out")
    path = tmp_path / "cap" / "escb_index.jsonl"
    captures = read_captures(path.read_text())
    policy = [row["objective"] for row in observer.rows if row["role"] == "policy" and row["model"] == "escb_index"]
    differs = 0
    for k, (model, capture) in enumerate(captures, start=1):
        assert capture["backend"] == "aescb"
        assert main(["solve", str(path), "--instance", str(k), "--backend", "aescb", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["options"] == capture["options"] and out["objective"] == pytest.approx(policy[k - 1], rel=1e-12)
        default = optsched.solve(model, "aescb").objective
        differs += default != pytest.approx(policy[k - 1], rel=1e-12)
        assert main(["solve", str(path), "--instance", str(k), "--backend", "aescb", "--option", "xi=32", "--json"]) == 0
        said = capsys.readouterr()
        assert json.loads(said.out)["options"] == {**capture["options"], "xi": 32}
        if capture["options"].get("xi") != 32:  # the note named the captured xi the solve did not use
            assert "xi=" not in said.err and "(--option replaced xi)" in said.err, said.err
        assert main(["solve", str(path), "--instance", str(k), "--backend", "escb_oa", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["options"] == {}
    assert differs > 0  # the defaults answer another problem on some slots: the options matter
    assert main(["compare", str(path), "--instance", "1", "--backends", "aescb,escb_oa"]) == 0
    out = capsys.readouterr()
    assert "aescb took the options its policy solved this instance with" in out.err
    row = next(line for line in out.out.splitlines() if line.split()[:1] == ["aescb"])
    assert float(row.split()[2]) == pytest.approx(policy[0], rel=1e-6)


def test_a_captures_integer_options_stay_integers(tmp_path, capsys) -> None:
    """Instance JSON reads integers as floats (for speed): a hand-written capture's
    ``num_workers: 1`` became 1.0, which CP-SAT's schema refused (solve and bench alike); a
    refused capture option printed its note first, so the error was not the one line."""
    from optsched.bench import captured_instances

    line = {"model": "set_packing", "n_elements": 4, "sets": [[0, 1], [1, 2, 3]], "weights": [0.3072, 0.3645],
            "capture": {"backend": "cpsat", "options": {"num_workers": 1}}}
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert main(["solve", str(path), "--backend", "cpsat", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["options"] == {"num_workers": 1} and type(out["options"]["num_workers"]) is int
    (captured,) = captured_instances(path)
    assert captured.options == {"cpsat": {"num_workers": 1}}
    line["capture"]["options"] = {"nope": 1}
    path.write_text(json.dumps(line) + "\n")
    assert main(["solve", str(path), "--backend", "cpsat"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_paper_captures_follow_the_bench_seed(tmp_path: Path) -> None:
    """``bench --seed 5`` captured the very subproblems of seed 0 (the paper's default), with an
    empty seed column."""
    from optsched.bench import paper_captures

    def captured(seed: int) -> list:
        cfg = BenchConfig(quick=True, models=("budgeted_ip",), seed=seed)
        return list(paper_captures(cfg, tmp_path / str(seed), lambda _msg: None))

    zero, five, again = captured(0), captured(5), captured(0)
    assert zero and {i.seed for i in zero} == {"0"} and {i.seed for i in five} == {"5"}
    same = lambda a, b: a.model.to_dict() == b.model.to_dict()  # noqa: E731
    assert all(map(same, zero, again)) and len(zero) == len(again)
    assert not all(map(same, zero, five))


def test_the_summary_of_a_bench_of_captures_names_them(tmp_path: Path) -> None:
    """Probe AY: summary.md said "3 generated instance(s) per size" of a bench that ran only the
    captured instances of --instances."""
    captures = tmp_path / "in"
    captures.mkdir()
    (captures / "sp.jsonl").write_text('{"model": "set_packing", "n_elements": 2, "sets": [[0], [1]], "weights": [1, 2]}\n')
    assert main(["bench", "--instances", str(captures), "--backends", "greedy", "--out", str(tmp_path / "out")]) == 0
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert f"the captured instances of {captures} only" in summary and "generated instance" not in summary.split("\n")[2]


@pytest.mark.parametrize(("settings", "says"), [
    ({"sizes": {"set_packing": ("a",)}}, "sizes: set_packing: must be a whole number >= 1, got 'a'"),
    ({"sizes": {"set_packing": (2.7,)}}, "sizes: set_packing: must be a whole number >= 1, got 2.7"),
    ({"time_limit": True}, "time_limit: must be a positive number, got True"),
    ({"time_limit": 0}, "time_limit: must be a positive number, got 0"),  # probe BC's BC57: it ran as 5 s
    ({"per_size": 10**8}, "per_size: the rows of one size and backend"),
])
def test_bench_settings_are_refused_naming_the_setting_given(settings: dict, says: str) -> None:
    """Probe BC: a size "a" raised int()'s message (no setting named), 2.7 ran as size 2, a time
    limit of True was taken as 1 s, and --per-size 10^8 was blamed on repeats (its default)."""
    with pytest.raises(ValueError, match="^" + re.escape(says)):
        BenchConfig(**settings)
