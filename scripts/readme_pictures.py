"""Regenerate the pictures of README.md and docs/ (docs/img/) from the current code.

    python scripts/readme_pictures.py [--only NAME ...] [--skip-scale] [--keep DIR]

Each picture is copied from the output of the command that draws it (``optsched reproduce``,
``optsched bench --quick``, ``benchmarks/bench_scale.py``), run from the repository root (so
``../shared/data`` resolves as in the README) into a temporary directory, or with ``--keep DIR``
into DIR, kept, so the README's tables can be read from the same runs.
``docs/img/pictures.json`` records, per picture, the functions that draw it and the SHA-256 of
their source: tests/test_readme_pictures.py fails when a drawing function changes and its
pictures were not regenerated (and when a picture is missing or not in full colour).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"
MANIFEST = IMG / "pictures.json"


@dataclass(frozen=True)
class Picture:
    """``command`` (argv after the Python interpreter) writes ``source`` (relative to its output
    directory, passed as ``--out``); ``drawn_by``: "file.py:function" of the drawing code."""

    command: tuple[str, ...]
    source: str
    drawn_by: tuple[str, ...]


REPRODUCE = ("-m", "optsched", "reproduce", "all")
PICTURES: dict[str, Picture] = {
    "shadow_maxweight.png": Picture(REPRODUCE, "maxweight/fig3/shadow.png", ("optsched/observe.py:plot_shadow",)),
    "shadow_ogasched.png": Picture(REPRODUCE, "ogasched/fig2/shadow.png", ("optsched/observe.py:plot_shadow",)),
    "shadow_esdp.png": Picture(REPRODUCE, "esdp/fig2-4/shadow.png", ("optsched/observe.py:plot_shadow",)),
    "shadow_onsocmax.png": Picture(REPRODUCE, "onsocmax/fig4/shadow.png", ("optsched/observe.py:plot_shadow",)),
    "reproduce_esdp_asw.png": Picture(REPRODUCE, "esdp/fig2-4/esdp_asw.png", ("optsched/esdp/experiments.py:run_asw",)),
    "bench_quick_runtime.png": Picture(("-m", "optsched", "bench", "--quick"), "runtime.png",
                                       ("optsched/bench.py:plot_runtime",)),
    "ogasched_scale.png": Picture(("benchmarks/bench_scale.py",), "scale.png", ("benchmarks/bench_scale.py:plot",)),
}


def function_source(spec: str) -> str:
    """The source text of ``file.py:function`` (module level), read without importing it."""
    file, name = spec.rsplit(":", 1)
    text = (ROOT / file).read_text()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(text, node) or ""
    raise ValueError(f"{spec}: no such function")


def drawing_sha(picture: Picture) -> str:
    h = hashlib.sha256()
    for spec in picture.drawn_by:
        h.update(spec.encode() + b"\0" + function_source(spec).encode() + b"\0")
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="picture names (default: all)")
    ap.add_argument("--skip-scale", action="store_true", help="leave ogasched_scale.png (bench_scale takes minutes)")
    ap.add_argument("--keep", type=Path, default=None, help="run the commands into this new directory and keep it")
    args = ap.parse_args(argv)
    names = args.only or [n for n in PICTURES if not (args.skip_scale and n == "ogasched_scale.png")]
    unknown = sorted(set(names) - set(PICTURES))
    if unknown:
        ap.error(f"--only: unknown picture {unknown[0]!r} (known: {', '.join(PICTURES)})")
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {}
    runs: dict[tuple[str, ...], Path] = {}
    if args.keep is not None and args.keep.exists():
        ap.error(f"--keep: {args.keep} exists; name a new directory")
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) if args.keep is None else args.keep.resolve()
        for name in names:
            pic = PICTURES[name]
            if pic.command not in runs:
                out = where / f"run{len(runs)}"
                print(f"running {' '.join(pic.command)} --out {out}", flush=True)
                subprocess.run([sys.executable, *pic.command, "--out", str(out)], cwd=ROOT, check=True)
                runs[pic.command] = out
            shutil.copyfile(runs[pic.command] / pic.source, IMG / name)
            manifest[name] = {"drawn_by": list(pic.drawn_by), "source_sha256": drawing_sha(pic),
                              "command": " ".join(pic.command)}
            print(f"wrote {IMG / name}")
    MANIFEST.write_text(json.dumps(dict(sorted(manifest.items())), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
