"""The pictures of README.md and docs/ come from the current drawing code: every picture they show
is in docs/img/pictures.json, which scripts/readme_pictures.py writes with the SHA-256 of the
functions that draw it; a drawing function changed since is a stale picture. And every picture
is saved in full colour (PNG colour type RGB or RGBA)."""

from __future__ import annotations

import importlib.util
import json
import re
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "readme_pictures.py"


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("readme_pictures", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


pictures = _script()
MANIFEST = json.loads(pictures.MANIFEST.read_text())


def shown_pictures() -> set[str]:
    names = set()
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        names |= set(re.findall(r"\]\((?:docs/)?img/([\w.-]+\.png)\)", page.read_text()))
    return names


def test_every_shown_picture_is_made_by_the_script() -> None:
    shown = shown_pictures()
    assert shown, "no pictures found in README.md / docs"
    assert shown <= set(pictures.PICTURES) <= set(MANIFEST)


@pytest.mark.parametrize("name", sorted(pictures.PICTURES))
def test_picture_is_drawn_by_the_current_code_in_full_colour(name: str) -> None:
    entry = MANIFEST[name]
    assert entry["drawn_by"] == list(pictures.PICTURES[name].drawn_by)
    assert entry["source_sha256"] == pictures.drawing_sha(pictures.PICTURES[name]), (
        f"{name}: its drawing code changed; run python scripts/readme_pictures.py --only {name}")
    head = (pictures.IMG / name).read_bytes()[:26]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    width, height, depth, colour = struct.unpack(">IIBB", head[16:26])
    assert colour in (2, 6) and depth == 8 and width > 200 and height > 150, (name, colour, depth)


def test_the_sha_sees_a_change_of_the_drawing_code() -> None:
    pic = pictures.PICTURES["shadow_esdp.png"]
    changed = pictures.Picture(pic.command, pic.source, ("optsched/bench.py:plot_runtime",))
    assert pictures.drawing_sha(changed) != pictures.drawing_sha(pic)
