"""The documentation's Python: every ``python`` block of README.md and docs/*.md runs as written
(from the repository root, as a reader would paste it), and every ``optsched.<module>[.name]``
the text names in backticks exists (docs named ``optsched.onsocmax.prices`` and a quick start
imported ``MeshGenerator`` from a module it had left)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [(page.name, number, code) for page in PAGES
          for number, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S), start=1)]


@pytest.mark.parametrize(("page", "number", "code"), BLOCKS, ids=[f"{p}#{n}" for p, n, _ in BLOCKS])
def test_a_python_block_of_the_docs_runs(page: str, number: int, code: str, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{page} block {number}:\n{done.stderr[-2000:]}"


def _named(page: Path) -> set[str]:
    return set(re.findall(r"`(optsched(?:\.\w+)+)", page.read_text()))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_dotted_name_the_docs_give_exists(page: Path) -> None:
    for dotted in sorted(_named(page)):
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable module, then attributes
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            for attr in parts[cut:]:
                assert hasattr(obj, attr), f"{page.name}: {dotted} ({'.'.join(parts[:cut])} has no {attr!r})"
                obj = getattr(obj, attr)
            break
