"""The README's commands stay true: every ``python3 -m optsched ...`` line in its shell blocks
parses with the CLI's own parser, the files it names in this repository exist, and the
pictures it embeds are committed."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from optsched.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _shell_lines() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


COMMANDS = [line for line in _shell_lines() if "python3 -m optsched " in line]


def test_the_readme_has_the_commands() -> None:
    assert len(COMMANDS) >= 15
    for sub in ("solve", "compare", "backends", "run", "bench", "reproduce", "sweep"):
        assert any(f"-m optsched {sub}" in c for c in COMMANDS), sub


@pytest.mark.parametrize("line", COMMANDS)
def test_readme_command_parses(line: str) -> None:
    argv = shlex.split(line.split("-m optsched ", 1)[1].split("&&")[0])
    args = build_parser().parse_args(argv)  # argparse exits (SystemExit) on an unknown option
    assert callable(args.func)
    for token in argv:
        if token.startswith("examples/"):
            assert (ROOT / token).is_file(), token


def test_readme_pictures_are_committed() -> None:
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert pictures
    for rel in pictures:
        assert (ROOT / rel).is_file() and (ROOT / rel).stat().st_size > 1000, rel


def test_the_time_limit_lists_are_the_registrys() -> None:
    """The Robustness section names the backends that honour ``time_limit`` and those that do
    one pass of bounded work; ``scip`` and ``stationary_alm`` were in neither list."""
    from optsched.solvers.registry import all_backends

    text = " ".join(README.split())
    honoured = text.split("`time_limit` is honoured by ", 1)[1].split(": termination", 1)[0]
    ignored = text.split("The others (", 1)[1].split(")", 1)[0]
    names = set(all_backends())
    said = {name for name in re.findall(r"`(\w+)`", honoured) if name in names}
    others = {name for name in re.findall(r"`(\w+)`", ignored) if name in names}
    assert said == {n for n, b in all_backends().items() if b.SUPPORTS_TIME_LIMIT}
    assert others == {n for n, b in all_backends().items() if not b.SUPPORTS_TIME_LIMIT}


def test_the_papers_table_names_every_backend_that_fits_its_kinds() -> None:
    """The table at the top lists, per paper, the backends of its per-slot kinds; it had left
    out cvxpy (set packing, the budgeted IP) and pyomo (ONSOCMAX's 0-1 variants)."""
    from optsched.models.base import model_kinds
    from optsched.solvers.registry import all_backends

    table = README.split("| paper | policy | per-slot model |", 1)[1].split("\n\n", 1)[0]
    rows = table.splitlines()[2:]
    assert len(rows) == 4
    for row in rows:
        cells = row.split("|")[1:-1]
        kinds = {k for k in re.findall(r"`(\w+)`", cells[2]) if k in model_kinds()}
        kinds |= {f"{k}_integral" for k in re.findall(r"`(\w+)\[_integral\]`", cells[2])}
        named = set(re.findall(r"\w+", cells[3] + cells[4]))
        fit = {n for n, b in all_backends().items() if any(b.fits_kind(model_kinds()[k]) is None for k in kinds)}
        assert fit <= named, (cells[0].strip(), sorted(fit - named))
