"""``optsched reproduce``: every discovered paper's runs are presets of its experiment, a tiny
``reproduce all`` writes each paper's CSVs, claims.csv and report.md with the paper column,
and bad input is one line with exit status 2."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from optsched.claims import Estimate, estimate, replicate_dirs, skipped, verdict
from optsched.cli import main
from optsched.papers import get_paper
from optsched.reproduce import reproduce, reproducible_names, settings_for

PAPERS = reproducible_names()

TINY = {
    "frames": 200, "grid_step": 0.1, "fig5_sizes": [2, 5], "fig5_r_step": 0.05,  # maxweight
    "horizon": 30,  # esdp, ogasched (esdp's and onsocmax's repeats: the replicates given to reproduce)
    "n_nodes": 8, "table3_horizons": [15, 30], "regret_points": 1,  # ogasched
    "fig3_nodes": [8, 16], "fig3_ports": [5, 10], "fig3_contention": [1.0, 5.0],  # ogasched
    "instances": 3, "values": [1.0, 8.0], "kinds": ["linear"],  # onsocmax
}


def test_the_four_papers_are_discovered() -> None:
    assert {"maxweight", "esdp", "ogasched", "onsocmax"} <= set(PAPERS)


@pytest.mark.parametrize("name", PAPERS)
def test_every_run_is_a_preset_and_its_reduced_settings_are_valid(name: str) -> None:
    paper = get_paper(name)
    for run in paper.runs:
        assert run.preset in paper.presets
        data = {run.data[0]: str(Path.cwd())} if run.data else {}  # reproduce fills it from the data directory
        paper.make_config({**settings_for(paper, run, False, {}), **data}, run.preset)  # raises on an unknown key
        assert settings_for(paper, run, True, {}) == dict(run.settings)  # --full: the preset (+ the run's own backend)
        paper.make_config({**settings_for(paper, run, True, {}), **data}, run.preset)
        assert run.reduced, f"{name}/{run.preset} has no reduced scale"


@pytest.fixture(scope="module")
def tiny_all(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reproduce")
    reproduce("all", out=out, settings=TINY, replicates=2, log=lambda _m: None)
    return out


@pytest.mark.parametrize("name", PAPERS)
def test_tiny_reproduce_writes_report_with_the_paper_column(tiny_all: Path, name: str) -> None:
    base = tiny_all / name
    for run in get_paper(name).runs:
        if skipped(base / run.subdir):  # its data directory is absent
            continue
        produced = list((base / run.subdir).glob("*.csv"))
        assert produced, (name, run.preset)
        assert list((base / run.subdir).glob("*.png")), (name, run.preset)
    claims = pd.read_csv(base / "claims.csv")
    assert list(claims.columns) == ["result", "measured", "paper", "note"]
    assert len(claims) >= 3
    assert claims.notna().all().all()
    report = (base / "report.md").read_text()
    assert "| result | measured | paper | difference explained |" in report
    for paper_text in claims["paper"]:
        assert paper_text.replace("|", "\\|") in report
    # the run table records the settings actually used
    assert "| run | settings |" in report


def test_reports_quote_the_papers_headline_numbers(tiny_all: Path) -> None:
    text = {name: (tiny_all / name / "report.md").read_text() for name in PAPERS}
    assert all(s in text["esdp"] for s in ("73%", "36%", "28%"))
    assert all(s in text["ogasched"] for s in ("+11.3%", "+7.8%", "+13.9%", "+13.4%", "3104.98"))
    assert all(s in text["esdp"] for s in ("Fig. 5", "Fig. 6", "Fig. 7", "Fig. 8", "Fig. 9", "Fig. 10",
                                           "overwhelming advantage"))
    assert all(s in text["ogasched"] for s in ("Fig. 3(a)", "Fig. 3(b)", "Fig. 3(c)", "Fig. 7", "weaker impact"))
    assert "alpha-hat" in text["onsocmax"]
    assert "almost all requirements" in text["maxweight"]
    combined = (tiny_all / "report.md").read_text()
    assert all(get_paper(n).title in combined for n in PAPERS)
    assert "load average" in combined


def test_unknown_paper_and_key_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown paper"):
        reproduce("nope", out=tmp_path)
    with pytest.raises(ValueError, match="config key"):
        reproduce("esdp", out=tmp_path, settings={"frames": 10})
    with pytest.raises(ValueError, match="config key"):
        reproduce("all", out=tmp_path, settings={"no_such_key": 1})


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce", "nope"],
        ["reproduce", "esdp", "--set", "frames=10"],
        ["reproduce", "esdp", "--set", "horizon"],
        ["reproduce", "maxweight", "--set", "frames=-5"],
        ["reproduce", "maxweight", "--replicates", "0"],
        ["reproduce", "maxweight", "--jobs", "0"],
        ["reproduce", "maxweight", "--replicates", "two"],
        ["reproduce", "all", "--runs", "fig3"],
        ["reproduce", "maxweight", "--runs", "nope"],
    ],
)
def test_reproduce_bad_input_is_one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main([*argv, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("optsched: error: ") and err.count("\n") == 1


def test_replicated_runs_write_one_directory_per_replicate_with_its_own_seed(tiny_all: Path) -> None:
    """Runs with ``replicate`` run once per replicate (own seed: a new instance and sample path);
    the claims say n. Runs that replicate inside themselves (esdp, onsocmax) do not."""
    import json

    for name in PAPERS:
        for run in get_paper(name).runs:
            dirs = replicate_dirs(tiny_all / name / run.subdir)
            if skipped(dirs[0]):
                continue
            assert len(dirs) == (2 if run.replicate else 1), (name, run.subdir)
            if run.replicate:
                metas = [json.loads(sorted(d.glob("*.json"))[0].read_text()) for d in dirs]
                assert len({m["seed"] for m in metas}) == 2, (name, run.subdir)
    assert "n = 2 sample paths (the network is fixed" in (tiny_all / "maxweight" / "report.md").read_text()
    assert "n = 2 instances x seeds" in (tiny_all / "ogasched" / "report.md").read_text()
    assert "| replicates |" in (tiny_all / "ogasched" / "report.md").read_text()


def test_a_difference_whose_interval_includes_zero_is_no_win() -> None:
    noisy = estimate([0.05, -0.04, 0.06, -0.05, 0.03])  # mean +1 %, interval across 0
    assert not noisy.excludes_zero()
    assert "won" not in verdict(noisy, subject="A", other="B") and "no difference" in verdict(noisy, subject="A", other="B")
    clear = estimate([0.05, 0.06, 0.04, 0.05, 0.055])
    assert clear.excludes_zero() and "A won against B" in verdict(clear, subject="A", other="B")
    assert "A lost" in verdict(Estimate(-0.02, 0.01, 5), subject="A", other="B")
    assert not Estimate(0.5, float("nan"), 1).excludes_zero()  # one replicate proves nothing


def test_verdicts_need_an_interval_and_leads_pair_their_rows() -> None:
    """A review's edge cases: an infinite value gave "the interval includes 0" (there was no
    interval); 0.3 against 0.1 + 0.2 "lost" on a rounding difference with a zero-width interval;
    a NaN in one run left its pair's other value in the denominator (0.50 or 0.149 for 1.00)."""
    from optsched.claims import relative_lead

    infinite = estimate([1.0, float("inf"), 2.0])
    assert not infinite.defined and not infinite.excludes_zero()
    assert "no verdict" in verdict(infinite, subject="A", other="B")
    assert "no verdict" in verdict(estimate([0.4]), subject="A", other="B")
    same = relative_lead([0.3] * 3, [0.1 + 0.2] * 3)
    assert same.mean == 0.0 and "no difference" in verdict(same, subject="A", other="B")
    assert relative_lead([10.0, 11.0, 10.2], [5.0, np.nan, 5.1]).mean == pytest.approx(1.0)
    assert relative_lead([10.0, np.nan, 10.2], [5.0, 6.0, 5.1]).mean == pytest.approx(1.0)
    assert relative_lead([10.0, np.nan, 10.2], [5.0, 6.0, 5.1]).n == 2
    for a, b in (([np.inf, 2.0, 3.0], [1.0, 1.0, 1.0]), ([np.inf, 2.0, 3.0], [np.inf, 1.0, 1.0])):
        # an infinite difference was zeroed as "rounding" (|inf| <= 1e-12 inf), and inf - inf dropped as NaN
        assert "no verdict" in verdict(relative_lead(a, b), subject="A", other="B")


def test_a_value_dropped_for_having_none_is_said_beside_its_interval() -> None:
    """An ESDP share of an oracle that served nothing is 0/0: the replicate was dropped, and the
    claim still said n = 6 beside an interval over 4 (probe AM)."""
    from optsched.claims import relative_lead

    e = estimate([1.0, np.nan, 0.9, np.nan, 1.1, 1.0])
    assert (e.n, e.dropped) == (4, 2) and "(n = 4; 2 of 6 without a value)" in e.fmt(".1%")
    assert "without a value" not in estimate([1.0, 0.9, 1.1]).fmt()
    assert estimate([np.nan, np.nan]).fmt() == "no value (2 without one)"
    lead = relative_lead([1.0, np.nan, 2.0, 3.0], [1.0, 1.0, np.nan, 2.0])
    assert (lead.n, lead.dropped) == (2, 2) and "2 of 4 without a value" in lead.fmt(".1f", percent=True)
    assert relative_lead([np.nan], [1.0]).dropped == 1


def test_a_leader_is_named_only_when_it_leads_alone() -> None:
    """``max(..., key=mean)`` named the first key when every mean was NaN ("slowest: ESDP") or when
    five policies tied in every replicate ("the strongest baseline: HSWF")."""
    from optsched.claims import leader, named_leader

    assert leader({"a": 1.0, "b": 2.0, "c": 0.5}) == "b" and leader({"a": 1.0, "b": 2.0}, lowest=True) == "a"
    assert leader({"a": estimate([1.0, 2.0]), "b": estimate([1.0, 2.0])}) is None
    assert named_leader({"a": 3.0, "b": 3.0, "c": 1.0}) == "none (tied)"
    assert named_leader({"a": np.nan, "b": np.nan}) == "none (no value)"
    assert leader({"a": np.nan, "b": 1.0}) == "b"
    assert named_leader({0.5: 1.0, 2.0: 3.0}, label=lambda k: format(k, "g")) == "2"


@pytest.mark.slow
def test_esdp_claims_on_replicates_without_values_and_tied_policies(tmp_path: Path) -> None:
    """Probe AM's run (2 slots, few arrivals): oracle shares of 0/0 were dropped under "n = 6",
    a flat share "fell with |E|", and max/min over tied or NaN means named the first policy."""
    reproduce("esdp", out=tmp_path, settings={"horizon": 2, "arrival_prob": 0.1}, replicates=6, log=lambda _m: None)
    report = (tmp_path / "esdp" / "report.md").read_text()
    fig10 = next(line for line in report.splitlines() if line.startswith("| Fig. 10"))
    assert "without a value" in fig10 and "not shown to fall" in fig10
    assert "The strongest baseline on the mean ASW: none (tied)" in report
    assert "slowest on the mean: none (no value)" in report and "(xno value" not in report


def test_replicates_of_different_seeds_do_not_share_seeds() -> None:
    """``seed + 7919 i`` made a reproduction at seed 7919 replay replicates 1, 2, ... of one at
    seed 0 (byte-identical CSVs; pooled, counted twice)."""
    from optsched.reproduce import replicate_seed

    seeds = [replicate_seed(s, i) for s in (*range(40), 7919, 15838) for i in range(8)]
    assert len(set(seeds)) == len(seeds)
    assert replicate_seed(7919, 0) == 7919 and all(0 <= x < 2**32 for x in seeds)
    assert replicate_seed(3, 2) == replicate_seed(3, 2)  # a function of (seed, i) alone


def test_the_small_ratio_family_gives_each_seed_its_own_instances() -> None:
    """Instance i of seed s was ``small_instance(s * 10^6 + i)``: seed 1's first instance was seed
    0's 10^6-th."""
    from optsched.onsocmax.experiments import FAMILIES, OnsocmaxConfig

    def draw(seed: int, i: int) -> tuple:
        inst = FAMILIES["small"](OnsocmaxConfig(seed=seed, study="ratio", family="small"), i)
        return tuple(np.asarray(inst.a).round(12)), tuple(np.asarray(inst.xbar).round(12))

    assert draw(1, 0) != draw(0, 1_000_000)
    assert draw(0, 3) == draw(0, 3) and draw(0, 3) != draw(0, 4)


def test_runs_left_by_another_reproduce_are_not_paired(tmp_path: Path) -> None:
    """``reproduce onsocmax --runs fig4-alm --set seed=5`` beside a seed-0 fig4: the ALM claim
    joined the two runs' rows as paired ("same instances and arrivals") with no instance shared.
    Runs whose recorded configs differ beyond what the run sets on purpose are not compared."""
    import json

    from optsched.onsocmax.claims import onsocmax_alm_claims

    for run, seed, backend in (("fig4", 0, ""), ("fig4-alm", 5, "alm")):
        (tmp_path / run).mkdir()
        pd.DataFrame([{"value": 1.0, "kind": "log", "repeat": j, "policy": "ONSOCMAX", "welfare": 100.0 + j}
                      for j in range(3)]).to_csv(tmp_path / run / "onsocmax_duration.csv", index=False)
        (tmp_path / run / "onsocmax_duration.json").write_text(json.dumps({"config": {"seed": seed, "backend": backend}}))
    (claim,) = onsocmax_alm_claims(tmp_path, full=False)
    assert claim.measured.startswith("not compared: fig4-alm and fig4 were run with different seed")
    (tmp_path / "fig4-alm" / "onsocmax_duration.json").write_text(json.dumps({"config": {"seed": 0, "backend": "alm"}}))
    (claim,) = onsocmax_alm_claims(tmp_path, full=False)
    assert claim.measured.startswith("welfare ALM / KKT - 1: +0.00%")


def test_shadow_claims_say_how_each_solve_ended(tmp_path: Path) -> None:
    """The gaps are over the solves that returned a point: the claim said nothing of the others
    (a review), and a policy median of 0 s gave a ratio of None that the format raised on."""
    import json

    from optsched.claims import shadow_claims

    rows = [{"solver": "S", "model": "set_packing", "backend": b, "role": role, "subproblems": 4,
             "terminations": ends, "median_gap_to_best_bound": gap, "max_gap_to_best_bound": gap,
             "median_runtime_s": 0.0, "runtime_vs_policy_backend": None}
            for b, role, ends, gap in (("greedy", "policy", {"feasible": 4}, 0.1),
                                       ("highs", "shadow", {"optimal": 3, "time_limit": 1}, 0.0))]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "meta.json").write_text(json.dumps({"config": {}, "subproblems": {"shadow": rows}}))
    (claim,) = shadow_claims(tmp_path, "run", "a run")
    assert "greedy (policy) (feasible 4): gap median 1.0e-01" in claim.measured
    assert "highs (optimal 3, time_limit 1): gap median 0" in claim.measured and "runtime -" in claim.measured


def test_fig3_says_disagrees_when_alg2_misses_most_of_alg1s_region(tiny_all: Path, tmp_path: Path) -> None:
    """Figs. 3 and 4 said "Agrees" whatever the share (a review dropped 70 % of Alg. 2's points:
    "Agrees: the lower end ... is 25.7%")."""
    import shutil

    from optsched.maxweight.claims import maxweight_claims

    d = tmp_path / "maxweight"
    shutil.copytree(tiny_all / "maxweight", d)
    agreed = {c.result: c.note for c in maxweight_claims(d, full=False)}
    assert all(note.startswith("Agrees") for r, note in agreed.items() if r.startswith("Fig. 3:"))
    for run_dir in replicate_dirs(d / "fig3"):
        regions = pd.read_csv(run_dir / "fig3_regions.csv")
        greedy = regions["policy"] == "Alg. 2 (greedy)"
        regions.loc[greedy & (np.arange(len(regions)) % 4 != 0), "achieved"] = False
        regions.to_csv(run_dir / "fig3_regions.csv", index=False)
    (note,) = [c.note for c in maxweight_claims(d, full=False) if c.result.startswith("Fig. 3:")]
    assert note.startswith("Disagrees")


def test_a_run_whose_data_is_absent_is_skipped_with_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from optsched.ogasched.claims import ogasched_claims

    monkeypatch.setenv("OPTSCHED_SHARED_DATA", str(tmp_path / "nowhere"))
    out = tmp_path / "out"
    keys = {f.name for f in dataclasses.fields(get_paper("ogasched").config)}
    reproduce("ogasched", out=out, settings={k: v for k, v in TINY.items() if k in keys}, replicates=1,
              log=lambda _m: None)
    reason = skipped(out / "ogasched" / "fig2-alibaba")
    assert reason is not None and "nowhere" in reason
    claim = next(c for c in ogasched_claims(out / "ogasched", False) if "Alibaba" in c.result)
    assert claim.measured.startswith("not run:")


@pytest.mark.parametrize("name", PAPERS)
def test_every_preset_of_every_paper_passes_its_config_checks(name: str) -> None:
    """A preset the README or a benchmark runs must not be refused by the config's own range and
    memory rules (onsocmax's ``scale`` once was: its memory rule counted every node for every job)."""
    paper = get_paper(name)
    for preset in paper.presets:
        settings = {"trace_dir": str(Path.cwd())} if paper.presets[preset].get("source") == "alibaba" else {}
        paper.make_config(settings, preset)


def test_only_some_runs_rerun_and_the_claims_read_the_rest(tiny_all: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "out"
    shutil.copytree(tiny_all / "maxweight", out / "maxweight")
    before = (out / "maxweight" / "fig3" / "fig3_regions.csv").stat().st_mtime_ns
    keys = {f.name for f in dataclasses.fields(get_paper("maxweight").config)}
    reproduce("maxweight", out=out, settings={k: v for k, v in TINY.items() if k in keys}, replicates=2,
              only=["fig5"], log=lambda _m: None)
    assert (out / "maxweight" / "fig3" / "fig3_regions.csv").stat().st_mtime_ns == before  # not rerun
    report = (out / "maxweight" / "report.md").read_text()
    assert "--preset fig5" in report and "--preset fig3" not in report and "Fig. 3:" in report
    with pytest.raises(ValueError, match="no run 'nope'"):
        reproduce("maxweight", out=out, only=["nope"])
    # into an --out without the other runs' output: refused before fig5 runs (it ran, then the
    # claims failed on fig3_regions.csv)
    with pytest.raises(ValueError, match="claims read every run's output, and .*fig3 holds none; add fig3 to --runs"):
        reproduce("maxweight", out=tmp_path / "fresh", only=["fig5"], log=lambda _m: None)
    assert not (tmp_path / "fresh").exists()


def test_a_rerun_cut_short_leaves_no_report_of_the_earlier_runs(tiny_all: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """report.md and claims.csv stood beside runs an interrupted rerun had rewritten (the report
    quoted frames = 1000 over runs of 3000): they go before the first run and come back last."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(tiny_all / "maxweight", out / "maxweight")

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt  # as Ctrl-C arrives in the first run

    monkeypatch.setattr("optsched.observe.Observer", interrupted)
    with pytest.raises(KeyboardInterrupt):
        reproduce("maxweight", out=out, only=["fig5"], log=lambda _m: None)
    assert not (out / "maxweight" / "report.md").exists() and not (out / "maxweight" / "claims.csv").exists()


def test_pooled_onsocmax_numbers_take_their_interval_over_the_repeats(tmp_path: Path) -> None:
    """Instance j is drawn from the same stream at every (value, kind) point: pooling the
    points as independent gave the ALM claim n = 12 (points x repeats) where 3 repeats are the
    replicates, and an interval too narrow by about sqrt(4)."""
    from optsched.claims import relative_lead
    from optsched.onsocmax.claims import onsocmax_alm_claims

    rows = {"fig4": [], "fig4-alm": []}
    rng = np.random.default_rng(0)
    for j, shift in enumerate((0.80, 0.90, 0.95)):  # a repeat-level effect shared by every point
        for value in (1.0, 2.0):
            for kind in ("linear", "log"):
                kkt = 100.0 + 10 * value + rng.normal()
                rows["fig4"].append({"value": value, "kind": kind, "repeat": j, "policy": "ONSOCMAX", "welfare": kkt})
                rows["fig4-alm"].append({"value": value, "kind": kind, "repeat": j, "policy": "ONSOCMAX",
                                         "welfare": kkt * shift})
    for run, data in rows.items():
        (tmp_path / run).mkdir()
        pd.DataFrame(data).to_csv(tmp_path / run / "onsocmax_duration.csv", index=False)
    (claim,) = onsocmax_alm_claims(tmp_path, full=False)
    both = pd.DataFrame(rows["fig4"]).groupby("repeat")["welfare"].mean(), \
        pd.DataFrame(rows["fig4-alm"]).groupby("repeat")["welfare"].mean()
    expected = relative_lead(both[1], both[0])
    assert expected.n == 3
    assert "over the 3 repeats" in claim.measured
    assert expected.fmt(".2f", percent=True) in claim.measured


def test_replicates_reach_the_runs_that_replicate_inside_themselves(tmp_path: Path, monkeypatch) -> None:
    """``--replicates 8`` was silently ignored by esdp and onsocmax (their runs replicate through
    ``repeats``): the claims still said n = 5. It is their repeats now; a ``--set repeats`` as
    well is refused before anything runs, and a sample (onsocmax's ``instances``) is left, saying so."""
    import dataclasses
    import json

    import optsched.reproduce

    def alone(name: str, label: str):  # the one run, and no claims over the others
        paper = get_paper(name)
        return dataclasses.replace(paper, runs=tuple(r for r in paper.runs if r.subdir == label),
                                   claims=lambda _d, _full: [])

    papers = {"esdp": alone("esdp", "fig5"), "onsocmax": alone("onsocmax", "ratio_small")}
    monkeypatch.setattr(optsched.reproduce, "reproducible", papers.__getitem__)
    logged: list[str] = []
    reproduce("esdp", out=tmp_path, settings={"horizon": 20}, replicates=3, only=["fig5"], log=logged.append)
    (meta,) = [json.loads(p.read_text()) for p in (tmp_path / "esdp" / "fig5").glob("*.json")]
    assert meta["config"]["repeats"] == 3
    with pytest.raises(ValueError, match="replicates: run fig5 replicates through its 'repeats', which --set sets too"):
        reproduce("esdp", out=tmp_path / "b", settings={"repeats": 2}, replicates=3, only=["fig5"], log=logged.append)
    assert not (tmp_path / "b").exists()
    reproduce("onsocmax", out=tmp_path, settings={"instances": 2}, replicates=2, only=["ratio_small"], log=logged.append)
    assert any("ratio_small is a sample, not replicates" in line for line in logged)


def test_a_setting_shown_in_several_columns_is_counted_once(tiny_all: Path) -> None:
    """Table III's and Fig. 3's panels each hold the default setting (the same config and seed:
    identical rows), and Fig. 4's P_2j = 0.9 curve is Fig. 3's P[J_2j] = 0.5 network: the tallies
    counted one experiment as two or three."""
    import pandas as pd

    claims = {r["result"]: r["measured"] for _, r in pd.read_csv(tiny_all / "ogasched" / "claims.csv").iterrows()}
    table3 = pd.read_csv(tiny_all / "ogasched" / "table3" / "table3.csv")
    table3 = table3[table3["panel"].notna()]
    default = table3[(table3["panel"] == "T") & (table3["value"] == 30)]["setting"].iloc[0]
    assert sorted(zip(*table3[table3["setting"] == default][["panel", "value"]].drop_duplicates().to_numpy().T)) == [
        ("T", 30), ("arrival_prob", 0.7), ("density", 2.5)]
    for column in ("arrival_prob", "density"):  # the same run's numbers under each column
        shown = table3[(table3["panel"] == column) & (table3["setting"] == default)].set_index("policy")
        assert shown["average_reward"].equals(table3[(table3["panel"] == "T") & (table3["value"] == 30)]
                                              .set_index("policy")["average_reward"])
    assert ("T=30 / arrival_prob=0.7 / density=2.5 are one run (the same setting), so distinct settings: "
            in claims["Table III: columns where OGASched has the highest average reward"])
    assert "of 7 ahead" in claims["Table III: columns where OGASched has the highest average reward"]
    mw = {r["result"]: r["measured"] for _, r in pd.read_csv(tiny_all / "maxweight" / "claims.csv").iterrows()}
    fig4 = next(v for k, v in mw.items() if k.startswith("Fig. 4"))
    assert "P2j=0.9 is the network of Fig. 3's P[J2j]=0.5 with the same seeds (identical rows)" in fig4
    assert "P2j=0.7 is" not in fig4


def test_a_runs_config_and_subproblems_come_from_the_metadata_of_its_files(tmp_path: Path) -> None:
    """A run directory holding an older study's metadata beside its own: the config came from
    the first file by name and the subproblems from the last, so a claim could pair runs by one
    study's config and report another's solves. Both now come from the metadata whose files are
    all there unchanged, then the newest (a copy that does not keep times, a capture manifest
    written later); JSON that does not parse or holds no config is not metadata."""
    import json
    import os

    from optsched.artifacts import write_manifest
    from optsched.claims import run_config, run_subproblems

    run = tmp_path / "fig2"
    run.mkdir()
    (run / "rewards.csv").write_text("old\n")
    write_manifest(run / "z_old.json", {"config": {"seed": 1}, "subproblems": {"solvers": ["old"]}}, [run / "rewards.csv"])
    (run / "rewards.csv").write_text("new\n")  # the later study rewrote the file the claims read
    write_manifest(run / "a_new.json", {"config": {"seed": 2}, "subproblems": {"solvers": ["new"]}}, [run / "rewards.csv"])
    (run / "m_schema.json").write_text(json.dumps({"fields": ["x"]}))
    (run / "broken.json").write_text("{")
    (run / "binary.json").write_bytes(b"\xff{}")
    later = 2_000_000_000_000_000_000
    os.utime(run / "z_old.json", ns=(later, later))  # copied without its time: the stale file is the newest
    assert run_config(run) == {"seed": 2} and run_subproblems(tmp_path, "fig2") == {"solvers": ["new"]}
    (run / "rewards.csv").unlink()  # no file of either set left: the newest
    assert run_config(run) == {"seed": 1}
    assert run_config(tmp_path / "missing") == {} and run_subproblems(tmp_path, "missing") == {}


def test_a_lead_has_fiellers_interval_and_no_ratio_over_a_baseline_near_zero() -> None:
    """Probe AV: the lead's "±" was the paired difference's interval over the baseline's mean, as
    if that mean were exact, and at a mean <= 0 the reference switched to the subject's
    (0.2 % of a mean near 0 printed +166,567 % ± 3,405 %; moved by 0.1, +100 % ± 2 %)."""
    from scipy import stats

    from optsched.claims import Lead, relative_lead

    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(2, 12))
        b = rng.normal(100.0, rng.uniform(1, 30), n)
        a = b * rng.uniform(0.8, 1.3) + rng.normal(0, rng.uniform(0.5, 20), n)
        lead = relative_lead(a, b)
        assert isinstance(lead, Lead)
        ref = stats.t.interval(0.95, n - 1, loc=b.mean(), scale=b.std(ddof=1) / np.sqrt(n))
        if ref[0] <= 0:
            assert math.isnan(lead.mean)
            continue
        assert lead.mean == pytest.approx(a.mean() / b.mean() - 1)
        # Fieller's interval is the set of R the paired t-test of a - (1 + R) b does not reject
        for r in np.linspace(lead.low - 0.2 * abs(lead.low) - 0.01, lead.high + 0.2 * abs(lead.high) + 0.01, 25):
            u = a - (1 + r) * b
            kept = abs(u.mean()) <= stats.t.ppf(0.975, n - 1) * u.std(ddof=1) / np.sqrt(n) + 1e-9
            edge = min(abs(r - lead.low), abs(r - lead.high)) < 1e-7 * (1 + abs(r))
            assert kept == (lead.low <= r <= lead.high) or edge, (r, lead)
        assert (lead.low > 0 or lead.high < 0) == lead.difference.excludes_zero()
    near_zero = relative_lead([101, 99, 100, 102, 98], [1, -1, 0.5, -0.4, 0.2])
    assert math.isnan(near_zero.mean) and "no ratio" in near_zero.fmt(".1f", percent=True)
    assert near_zero.above_zero() and "A won against B" in verdict(near_zero, subject="A", other="B")
    below = relative_lead([-1.0, -1.1, -0.9], [-2.0, -2.2, -1.9])  # ahead of a baseline that loses more
    assert math.isnan(below.mean) and below.above_zero()
    # probe AX: at 1e-160 the quadratic's leading coefficient underflowed (+103 % [+107 %, +107 %]),
    # at 1e160 the variance overflowed, and near the edge low and high came out crossed
    for scale in (1e-160, 1.0, 1e160):
        tiny = relative_lead(np.array([2.0, 2.2, 1.9]) * scale, np.array([1.0, 1.1, 0.9]) * scale)
        assert tiny.low <= tiny.mean <= tiny.high and tiny.mean == pytest.approx(31 / 30)
        assert (tiny.low, tiny.high) == pytest.approx((0.909, 1.228), abs=1e-3)
    for _ in range(2000):
        n = int(rng.integers(2, 8))
        b = rng.normal(1.0, rng.uniform(0.05, 2.0), n)
        lead = relative_lead(b * rng.uniform(0.5, 1.5) + rng.normal(0, rng.uniform(0, 1), n), b)
        assert math.isnan(lead.mean) or (lead.defined and lead.low <= lead.mean <= lead.high)
    assert "no ratio" in relative_lead([np.inf, 2.0, 3.0], [1.0, 1.0, 1.0]).fmt(".1f", percent=True)


def test_onsocmax_agrees_only_when_ahead_at_every_point_and_explains_losses_by_the_measured_demand() -> None:
    """Probe AV: "Agrees." whenever no point was behind (ONSOCMAX tied with the best baseline at
    every point agreed with "always performs the best"), and every loss in the upper half of the
    sweep values was blamed on demand near capacity without reading the demand ratio."""
    import pandas as pd

    from optsched.claims import Tally
    from optsched.onsocmax.claims import _reading

    points = [(1.0, "log"), (2.0, "log"), (12.0, "log"), (12.0, "sqrt")]
    demand = pd.Series({(1.0, "log"): 0.2, (2.0, "log"): 0.4, (12.0, "log"): 2.2, (12.0, "sqrt"): 0.7})
    assert _reading(Tally(points, [], [], []), demand) == "Agrees."
    tied = _reading(Tally(points[:1], [], points[1:], []), demand)
    assert "Agrees" not in tied and "Not shown at 3 of 4 points" in tied
    lost = _reading(Tally(points[:2], points[2:], [], []), demand)
    assert "12 (log; demand 2.20 of capacity), where the workload exceeds the capacity" in lost
    assert "12 (sqrt; demand 0.70 of capacity), below capacity: not explained by this run" in lost


def test_esdps_fig6_reading_follows_which_policy_grew_most() -> None:
    from optsched.esdp.claims import _fig6_reading

    grew = lambda esdp, lcf: {"ESDP": estimate([esdp, esdp + 0.01]), "LCF": estimate([lcf, lcf + 0.01])}  # noqa: E731
    assert "LCF grew more than ESDP" in _fig6_reading(grew(0.5, 0.9))
    assert "baselines have the most to gain" not in _fig6_reading(grew(0.9, 0.5))


def test_a_difference_of_grid_values_is_known_to_one_grid_step() -> None:
    """Probe AV: Fig. 5's r is read off a grid; a difference of one step in every replicate had
    a zero-width interval and counted as a significant order."""
    from optsched.maxweight.claims import grid_difference

    one_step = estimate([0.01] * 5)
    assert one_step.excludes_zero() and not grid_difference(one_step, 0.01).excludes_zero()
    assert grid_difference(estimate([0.03, 0.04, 0.03, 0.03, 0.04]), 0.01).above_zero()
    assert not grid_difference(estimate([0.4]), 0.01).defined


def test_replicate_dirs_are_the_r_numbered_directories_in_numeric_order(tmp_path: Path) -> None:
    """Replicates r2 before r10, and a note left beside them is no replicate (``readme.txt``
    crashed the sort on int('eadme.txt'), and every claim of the run with it)."""
    for name in ("r10", "r2", "r1"):
        (tmp_path / "replicates" / name).mkdir(parents=True)
    (tmp_path / "replicates" / "readme.txt").write_text("notes")
    (tmp_path / "replicates" / "r3.tmp").mkdir()
    assert [p.name for p in replicate_dirs(tmp_path)] == [tmp_path.name, "r1", "r2", "r10"]
