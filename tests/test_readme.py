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
