"""The edges of the accepted config space (probe AN): a config built in code obeys the rules a
TOML file does; a setting is refused naming it when the data it draws would be out of reach,
instead of a traceback mid-run; a solve an experiment depends on that ends without its answer
is one line and exit 1."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pytest

from optsched.cli import main
from optsched.config import config_from_mapping
from optsched.esdp.experiments import EsdpConfig
from optsched.maxweight.experiments import MaxWeightConfig, _grid, grid_axis_points
from optsched.ogasched.experiments import OgaConfig
from optsched.onsocmax.experiments import OnsocmaxConfig


@pytest.mark.parametrize(("build", "key"), [
    (lambda: OgaConfig(contention=math.inf), "config.contention: must be finite"),
    (lambda: EsdpConfig(noise=math.inf), "config.noise: must be finite"),
    (lambda: OnsocmaxConfig(arrival_rate=math.inf), "config.arrival_rate: must be finite"),
    (lambda: OnsocmaxConfig(values=(math.inf,)), "config.values[0]: must be finite"),
    (lambda: OnsocmaxConfig(max_congestion=math.inf), "config.max_congestion: must be finite"),
    (lambda: MaxWeightConfig(study="fig5", frames=2, fig5_sizes=()), "config.fig5_sizes: must list at least one value"),
    (lambda: MaxWeightConfig(frames=2.5), "config.frames: expected an integer"),
    (lambda: MaxWeightConfig(fig5_sizes=(2, 2)), "config.fig5_sizes: lists a value twice"),
    (lambda: dataclasses.replace(OgaConfig(), horizon=0), "config.horizon: must be >= 1"),
    (lambda: OgaConfig(seed=-1), "config.seed: must be >= 0"),
])
def test_a_config_built_in_code_obeys_the_rules_of_a_toml_file(build, key: str) -> None:
    """``run(cfg)`` never called ``check()``, and ``check()`` skipped the type, finiteness and list
    rules: ``MaxWeightConfig(fig5_sizes=())`` crashed its run with a KeyError."""
    with pytest.raises(ValueError, match=key.replace("[", r"\[").replace("]", r"\]")):
        build()


@pytest.mark.parametrize(("build", "key"), [
    (lambda: EsdpConfig(study="sweep", sweep="arrival_prob", sweep_values=(0.0, -0.0)), "config.sweep_values"),
    (lambda: MaxWeightConfig(fig3_app2_task_probs=(0.0, -0.0)), "config.fig3_app2_task_probs"),
    (lambda: OgaConfig(table3_probs=(-0.0, 0.0)), "config.table3_probs"),
])
def test_zero_and_negative_zero_are_one_value_twice(build, key: str) -> None:
    """Probe BD: the list rule compared values by repr, and -0.0 is not 0.0 there: ESDP's sweep
    over [0.0, -0.0] ran to its end and then failed on shapes (16,) and (4,), naming no setting;
    max-weight and OGASched drew a curve for each. A setting -0.0 is read as 0.0."""
    with pytest.raises(ValueError, match=f"{key}: lists a value twice"):
        build()
    assert math.copysign(1.0, MaxWeightConfig(fig3_app2_task_probs=(-0.0, 0.5)).fig3_app2_task_probs[0]) == 1.0


def test_a_sweep_grid_of_zero_and_negative_zero_is_one_point_twice(tmp_path: Path) -> None:
    """The same in a sweep's grid: two runs of one point (0.0 and -0.0), exit 0."""
    from optsched.sweep import expand, load_sweep

    sweep = tmp_path / "s.toml"
    sweep.write_text('kind = "experiment"\nexperiment = "esdp"\nseeds = [0]\npolicies = ["LCF"]\n'
                     "[base]\nhorizon = 5\n[grid]\narrival_prob = [0.0, -0.0]\n")
    runs = expand(load_sweep(sweep))
    assert len({run.key for run in runs}) == 1 and len(runs) == 2
    with pytest.raises(ValueError, match="two runs have the same settings"):
        from optsched.sweep import run_sweep

        run_sweep(sweep, tmp_path / "out", executor="serial", progress=False)


def test_a_config_built_in_code_equals_the_one_read_from_a_mapping() -> None:
    settings = {"horizon": 20, "contention": 5, "fig3_nodes": [8, 16]}
    assert OgaConfig(horizon=20, contention=5, fig3_nodes=[8, 16]) == config_from_mapping(OgaConfig, settings)
    assert isinstance(OgaConfig(contention=5).contention, float) and OgaConfig(fig3_nodes=[8]).fig3_nodes == (8,)


@pytest.mark.parametrize(("paper", "setting"), [
    ("ogasched", "alpha_low = 1e-300\nalpha_high = 1e-300"), ("esdp", "noise = 1e-300"),
    ("maxweight", "tolerance = 1e-13"),
])
def test_a_nonzero_setting_below_1e_12_is_refused_naming_it(paper: str, setting: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """alpha_low = 1e-300 made the reciprocal utility's gradient 1/0 (a ZeroDivisionError from the
    compiled reward); noise = 1e-300 an overflow warning."""
    (tmp_path / "c.toml").write_text(setting + "\n")
    assert main(["run", paper, "--config", str(tmp_path / "c.toml"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    key = setting.split(" = ")[0]
    assert len(err) == 1 and f"config.{key}: must be 0 or at least 1e-12" in err[0], err


def test_an_uncertified_offline_optimum_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A y* of (10) that its backend does not prove optimal (cvxpy alone at contention 1e-10,
    where its cones hold y ~ 1e-11 beside 1) ends the run with one line and exit 1; it was a
    RuntimeError's traceback after the whole run, now :class:`optsched.result.SolveFailed`."""
    (tmp_path / "c.toml").write_text('study = "fig2"\nhorizon = 10\nn_nodes = 4\ncontention = 1e-10\n'
                                     'offline_backend = "cvxpy"\n')
    assert main(["run", "ogasched", "--config", str(tmp_path / "c.toml"), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("optsched: error: y* of (10): 'cvxpy' ended"), err


@pytest.mark.parametrize("contention", [1e-12, 1e-10, 1e10, 1e12])
def test_y_star_is_certified_at_extreme_contention(contention: float, tmp_path: Path) -> None:
    """Probe BD's D6: at contention 1e-10 stationary_alm stopped at a gap of 5e-4 relative (its
    test was absolute below 1) and the run exited 1; at 1e10 and 1e12 neither backend certified y*
    (requests of 1e12 beside capacities of 10). Both take the box min(u, c) now, and the gap is
    relative at the model's own scale."""
    import pandas as pd

    (tmp_path / "c.toml").write_text(f'study = "fig2"\nhorizon = 10\nn_nodes = 4\ncontention = {contention!r}\n')
    assert main(["run", "ogasched", "--config", str(tmp_path / "c.toml"), "--out", str(tmp_path / "out")]) == 0
    regret = pd.read_csv(tmp_path / "out" / "fig2_regret.csv")
    assert len(regret) > 0 and (regret["y_star_backend"] == "stationary_alm").all()
    assert (regret["Q_star"] >= 0).all()  # y = 0 is feasible with Q = 0


@pytest.mark.parametrize("setting", ['sweep = "congestion"\nvalues = [1e-12]', 'sweep = "workload"\nvalues = [1e12]',
                                     'study = "ratio"\ninstances = 2\nmax_a_high = 1e12'])
def test_onsocmax_offline_optimum_at_extreme_settings_is_certified(setting: str, tmp_path: Path) -> None:
    """Probe BD's D7: at congestion 1e-12, workload 1e12 and max_a_high 1e12 (inside the settings'
    range) Clarabel called P1 unbounded, and the run exited 1. Every row now carries an optimum
    bracketed within 1e-6 by its weak-duality bound."""
    import pandas as pd

    (tmp_path / "c.toml").write_text(f'n_nodes = 3\nn_slots = 4\nn_jobs = 3\nmax_nodes = 2\nrepeats = 1\n'
                                     f'kinds = ["linear", "sqrt"]\n{setting}\n')
    assert main(["run", "onsocmax", "--config", str(tmp_path / "c.toml"), "--out", str(tmp_path / "out")]) == 0
    (csv,) = [p for p in (tmp_path / "out").glob("*.csv") if not p.name.endswith("_timing.csv")]
    rows = pd.read_csv(csv)
    assert len(rows) > 0
    assert (rows["opt"] <= rows["opt_bound"] * (1 + 1e-9)).all()
    assert ((rows["opt_bound"] - rows["opt"]) <= 1e-6 * rows["opt"].abs().clip(lower=1.0)).all()


def test_an_offline_optimum_no_solver_certifies_names_the_setting_that_drew_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Probe BD: an uncertified P1 ended with exit 1 naming no setting. The solver failing is
    stood in for here (no setting inside the ranges makes Clarabel fail on P1 since D7's fix):
    the one line names the value that drew the instance."""
    import optsched.onsocmax.experiments as experiments
    from optsched.result import SolveFailed

    def fails(instance: object) -> None:
        raise SolveFailed("P1 (the offline optimum) ended error: the solver failed")

    monkeypatch.setattr(experiments, "certified_optimum", fails)
    (tmp_path / "c.toml").write_text('n_nodes = 3\nn_slots = 4\nn_jobs = 3\nmax_nodes = 2\nrepeats = 1\n'
                                     'kinds = ["linear"]\nsweep = "congestion"\nvalues = [1e-12]\n')
    assert main(["run", "onsocmax", "--config", str(tmp_path / "c.toml"), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("optsched: error: P1") and "config.values: congestion = 1e-12" in err[0], err


@pytest.mark.parametrize(("settings", "key"), [
    ({"study": "ratio", "instances": 4, "max_congestion": 400.0}, "config.max_congestion: capacity_mean"),
    ({"sweep": "congestion", "values": (250.0,)}, "config.values: capacity_mean"),
    ({"sweep": "workload", "values": (0.05,)}, "config.values: rho_mean"),
])
def test_onsocmax_settings_whose_draws_the_floor_refuses_are_refused_up_front(settings: dict, key: str) -> None:
    """Congestion 400 put the capacity's mean 10 std below the generator's floor: each instance
    failed mid-run after 1000 redraws, under the generator's names."""
    with pytest.raises(ValueError, match=key):
        OnsocmaxConfig(**settings)
    OnsocmaxConfig(sweep="congestion", values=(150.0,))  # still reachable


def test_the_integral_ratio_takes_a_bracketed_optimum() -> None:
    """At max_a_high = 1e4 HiGHS's scaled pruning proves only a bound of 6.6e-6 for an objective of
    0 (``feasible``): the study raised; the point and the bound bracket OPT, as the continuous
    study's primal and dual do."""
    from optsched.onsocmax.experiments import FAMILIES, ratio_record

    cfg = OnsocmaxConfig(study="ratio", instances=2, integral=True, max_a_high=1e4)
    rec = ratio_record(FAMILIES["section_iv"](cfg, 0), cfg)
    assert rec["opt"] <= rec["opt_bound"] and np.isfinite(rec["ratio"])


@pytest.mark.parametrize(("step", "top"), [(0.02, 0.7), (0.05, 0.7), (0.07, 0.7), (0.1, 0.3), (0.33, 0.7), (1e-9, 1e-9)])
def test_the_maxweight_grid_holds_the_points_its_check_counts(step: float, top: float) -> None:
    """grid_step = 1e-12 passed a check that counted 4 rows and built 10^6 (11 distinct values)."""
    cfg = MaxWeightConfig(frames=2, grid_step=step, grid_max=top)
    grid = _grid(cfg)
    n = grid_axis_points(top, step)
    assert grid.shape == (n * n, 2) and len(np.unique(grid, axis=0)) == n * n
    np.testing.assert_array_equal(np.unique(grid[:, 0]), np.round(np.arange(0.0, top + 1e-9, step), 10))
    with pytest.raises(ValueError, match="config.grid_step: must be >= 1e-09"):
        MaxWeightConfig(frames=2, grid_step=1e-10, grid_max=1e-10)


def test_a_config_built_in_code_takes_numpy_numbers_as_python_ones() -> None:
    """Looping over ``np.arange`` builds settings from numpy scalars: construction must take them
    (probe AO: the first version refused ``n_nodes=np.int64(16)``) and hold Python values."""
    cfg = OgaConfig(n_nodes=np.int64(16), contention=np.float32(5), seed=np.uint32(3), horizon=np.int64(20),
                    fig3_nodes=np.array([8, 16]), offline=np.bool_(False))
    assert cfg == OgaConfig(n_nodes=16, contention=5.0, seed=3, horizon=20, fig3_nodes=(8, 16), offline=False)
    assert type(cfg.n_nodes) is int and type(cfg.contention) is float and type(cfg.offline) is bool
    for bad in ({"n_nodes": np.float64(2.5)}, {"n_nodes": np.bool_(True)}, {"contention": np.float64("nan")}):
        with pytest.raises(ValueError, match=f"config.{next(iter(bad))}"):
            OgaConfig(**bad)


@pytest.mark.parametrize(("trace_dir", "said"), [
    ("/tmp/" + "a" * 5000, "config.trace_dir: cannot look at /tmp/aaa"),
    ("/nonexistent/trace", "config.trace_dir: /nonexistent/trace does not exist"),
    (__file__, "config.trace_dir: " + __file__ + " is not a directory"),
])
def test_a_trace_dir_is_checked_with_the_config_and_named_by_its_setting(
        trace_dir: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Probe BD's m4: a trace_dir of 5,000 characters ended with an OSError naming only the path
    ("File name too long" from Path.is_dir), after the config was accepted; a missing one said
    "trace: ... does not exist" at run time. Both are refused with the config, by its key, and a
    long path is shortened in the one line."""
    from optsched.ogasched.experiments import OgaConfig

    with pytest.raises(ValueError, match=re.escape(said)):
        OgaConfig(source="alibaba", trace_dir=trace_dir)
    (tmp_path / "c.toml").write_text(f'source = "alibaba"\ntrace_dir = "{trace_dir}"\nhorizon = 10\n')
    assert main(["run", "ogasched", "--config", str(tmp_path / "c.toml"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and len(err[0]) < 400, err


def test_user_directory_nul_names_setting() -> None:
    """Probe BF: os.stat raises ValueError (not OSError) for a NUL byte, and the message named
    neither the setting nor the path ('optsched: error: embedded null byte')."""
    from optsched.files import user_directory
    with pytest.raises(ValueError, match="config.trace_dir"):
        user_directory("config.trace_dir", "a\x00b")
