"""A fifth paper needs no edit outside its own package: a toy paper, installed only through the
``optsched.papers`` entry point of its own distribution, is run, reproduced, swept and listed by
the CLI (in a subprocess whose path holds the toy package and its dist-info)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from optsched.papers import ENTRY_POINT_GROUP, paper_names

TOY_PAPER = '''
"""A toy paper: each slot a coin of bias p lands; the "bold" policy bets every slot, "shy" every other."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from optsched.artifacts import pyplot, write_artifacts
from optsched.claims import Claim, read_csv
from optsched.config import probability, require
from optsched.papers import Paper, ReproductionRun, SweepSummary

POLICIES = ("bold", "shy")


@dataclass(frozen=True)
class ToyConfig:
    study: Literal["coins"] = "coins"
    seed: int = 0
    slots: int = 100
    p: float = 0.5

    def check(self) -> None:
        require(self.slots >= 1, "slots", "must be >= 1")
        probability(self.p, "p")


def wins(cfg: ToyConfig, policy: str) -> np.ndarray:
    coins = np.random.default_rng(cfg.seed).random(cfg.slots) < cfg.p
    bets = np.ones(cfg.slots, bool) if policy == "bold" else np.arange(cfg.slots) % 2 == 0
    return coins & bets


def run(cfg: ToyConfig, out: Path) -> list[Path]:
    import pandas as pd

    table = pd.DataFrame([{"policy": p, "wins": int(wins(cfg, p).sum())} for p in POLICIES])
    fig, ax = pyplot().subplots()
    ax.bar(table["policy"], table["wins"])
    return write_artifacts(out, "coins", table=table, figure=fig, experiment="toy/coins", seed=cfg.seed, config=cfg)


def claims(d: Path, full: bool) -> list[Claim]:
    t = read_csv(d / "small" / "coins.csv").set_index("policy")["wins"]
    return [Claim("bold wins at least as often as shy", f"{t['bold']} vs {t['shy']}", "bold >= shy", "Same coins.")]


PAPER = Paper(
    name="toy",
    title="Toy paper: coins",
    description="a fifth paper, from its own package",
    config=ToyConfig,
    run=run,
    presets={"small": {"slots": 50}},
    policies=POLICIES,
    sweep=SweepSummary(metrics=lambda cfg, policy: {"wins": int(wins(cfg, policy).sum())}),
    runs=(ReproductionRun(preset="small", reduced={"slots": 20}),),
    claims=claims,
)
'''


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("site")
    (site / "toy_paper").mkdir()
    (site / "toy_paper" / "__init__.py").write_text("")
    (site / "toy_paper" / "paper.py").write_text(TOY_PAPER)
    dist = site / "toy_paper-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-paper\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\ntoy = toy_paper.paper:PAPER\n")
    return site


def optsched_cli(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "optsched", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_toy_paper_is_not_there_without_its_package() -> None:
    assert "toy" not in paper_names()


def test_a_toy_paper_runs_reproduces_sweeps_and_is_listed(toy_site: Path, tmp_path: Path) -> None:
    proc = optsched_cli(toy_site, "run", "toy", "--preset", "small", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(tmp_path / "run" / "coins.csv")
    assert list(table["policy"]) == ["bold", "shy"] and (tmp_path / "run" / "coins.png").stat().st_size > 0
    assert table.set_index("policy")["wins"]["bold"] >= table.set_index("policy")["wins"]["shy"]

    proc = optsched_cli(toy_site, "reproduce", "toy", "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    claims = pd.read_csv(tmp_path / "rep" / "toy" / "claims.csv")
    assert list(claims["paper"]) == ["bold >= shy"]
    assert "Toy paper: coins" in (tmp_path / "rep" / "toy" / "report.md").read_text()

    (tmp_path / "sweep.toml").write_text(textwrap.dedent('''
        kind = "experiment"
        experiment = "toy"
        seeds = [0, 1]
        [grid]
        p = [0.2, 0.8]
    '''))
    proc = optsched_cli(toy_site, "sweep", "sweep.toml", "--workers", "1", "--out", str(tmp_path / "sw"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = pd.read_csv(tmp_path / "sw" / "results.csv")
    assert len(rows) == 2 * 2 * 2 and set(rows["policy"]) == {"bold", "shy"}

    for sub in ("run", "reproduce"):
        proc = optsched_cli(toy_site, sub, "--help", cwd=tmp_path)
        assert "toy" in proc.stdout and "esdp" in proc.stdout
    proc = optsched_cli(toy_site, "run", "nope", cwd=tmp_path)
    assert proc.returncode == 2 and "toy" in proc.stderr and proc.stderr.count("\n") == 1
