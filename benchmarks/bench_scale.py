"""Scale benchmark: whole experiment presets end to end, each in a fresh process.

For every setting of :data:`SETTINGS` it runs ``python -m optsched run EXPERIMENT --preset P``
(plus the setting's overrides) in a child process and prints its wall time, CPU time (user +
system of the child), peak resident memory (the child's ``ru_maxrss``) and the load average
before and after. Settings of one ``series`` share an x-axis (``size``): the series is drawn
on a log-log picture of time and memory against size, and the slope of a least-squares line
through the points is printed (time ~ size^slope).

OGASched (paper 003): ``large`` is the paper's largest setting (|L| = 100, |R| = 1024, K = 6,
T = 10,000; Fig. 5), ``huge`` ten times it (|L| = 1000, |R| = 10,000); the points in between
keep |L| = |R| / 10. Targets: ``large`` <= 10 s CPU; ``huge`` <= 10 min and <= 4 GB on 2 cores.
ESDP (``esdp-paper``, ``esdp-scale4x``: Table 2's graph and 4x it) and ONSOCMAX
(``onsocmax-scale``: 10^4 jobs over 100 nodes) are series of their own; their per-slot and
per-job times against the paper's size are in ``benchmarks/bench_scale_esdp_onsocmax.py``.

    python benchmarks/bench_scale.py                       # every setting
    python benchmarks/bench_scale.py --only ogasched-large  # one or more, comma-separated
    python benchmarks/bench_scale.py --out out/scale       # CSV and PNG there (default: a temp dir)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Setting:
    name: str
    series: str  # settings of one series are compared on one log-log picture
    experiment: str
    preset: str
    size: float  # the x-axis of the series
    size_label: str
    overrides: dict[str, Any] = field(default_factory=dict)


def _ogasched(name: str, ports: int, nodes: int, preset: str = "huge") -> Setting:
    return Setting(f"ogasched-{name}", "ogasched", "ogasched", preset, nodes, "|R| (nodes)",
                   {} if name in ("large", "huge") else {"n_ports": ports, "n_nodes": nodes})


SETTINGS: list[Setting] = [
    _ogasched("large", 100, 1024, preset="large"),
    _ogasched("R2500", 250, 2500),
    _ogasched("R5000", 500, 5000),
    _ogasched("huge", 1000, 10000),
    # ESDP (000): Table 2's graph (|R| = 40) and 4x it (|R| = 80), T = 2000 (docs/esdp.md, "Scale")
    Setting("esdp-paper", "esdp", "esdp", "fig2-4", 40, "|R| (servers)"),
    Setting("esdp-scale4x", "esdp", "esdp", "scale4x", 80, "|R| (servers)"),
    # ONSOCMAX (002): 10^4 jobs over 100 nodes (benchmarks/bench_scale_esdp_onsocmax.py has the per-job table)
    Setting("onsocmax-scale", "onsocmax", "onsocmax", "scale", 10000, "jobs"),
]


def _toml(overrides: dict[str, Any]) -> str:
    return "".join(f"{k} = {json.dumps(v)}\n" for k, v in overrides.items())


def run_setting(s: Setting, out: Path) -> dict[str, Any]:
    """One preset in a child process; its own wall time, CPU time and peak RSS."""
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "optsched", "run", s.experiment, "--preset", s.preset, "--out", str(out / "run")]
    if s.overrides:
        cfg = out / "overrides.toml"
        cfg.write_text(_toml(s.overrides))
        cmd += ["--config", str(cfg)]
    load0 = os.getloadavg()[0]
    start = time.perf_counter()
    with open(out / "log.txt", "w") as log:
        child = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    return {"setting": s.name, "series": s.series, "size": s.size, "wall_s": wall,
            "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024.0,
            "load_before": load0, "load_after": os.getloadavg()[0], "exit": os.waitstatus_to_exitcode(status)}


def slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def plot(rows: list[dict[str, Any]], path: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = list(dict.fromkeys(r["series"] for r in rows))
    fig, axes = plt.subplots(len(series), 2, figsize=(10, 3.8 * len(series)), squeeze=False)
    lines = []
    for (ax_t, ax_m), name in zip(axes, series):
        part = [r for r in rows if r["series"] == name and r["exit"] == 0]
        x = np.array([r["size"] for r in part], dtype=float)
        label = next(s.size_label for s in SETTINGS if s.series == name)
        for ax, key, unit in ((ax_t, "cpu_s", "CPU s"), (ax_t, "wall_s", "wall s"), (ax_m, "peak_rss_mb", "peak RSS MB")):
            y = np.array([r[key] for r in part], dtype=float)
            if x.size >= 2:
                k = slope(x, y)
                lines.append(f"{name}: {unit} ~ size^{k:.2f}")
                ax.loglog(x, y, "o-", label=f"{unit} (slope {k:.2f})")
            else:
                ax.loglog(x, y, "o", label=unit)
            ax.set_xlabel(label)
        ax_t.set_title(f"{name}: time")
        ax_m.set_title(f"{name}: memory")
        ax_t.legend(fontsize=8)
        ax_m.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated setting names (default: all)")
    ap.add_argument("--out", default="", help="directory for scale.csv, scale.png and each run's output")
    args = ap.parse_args()
    chosen = [s for s in SETTINGS if not args.only or s.name in args.only.split(",")]
    unknown = set(filter(None, args.only.split(","))) - {s.name for s in SETTINGS}
    if unknown:
        ap.error(f"unknown setting {sorted(unknown)[0]!r} (known: {', '.join(s.name for s in SETTINGS)})")
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench_scale_"))
    rows = []
    print(f"{'setting':<20}{'wall s':>10}{'CPU s':>10}{'peak RSS MB':>13}{'load before/after':>20}")
    for s in chosen:
        r = run_setting(s, out / s.name)
        rows.append(r)
        status = "" if r["exit"] == 0 else f"  (exit {r['exit']}: see {out / s.name / 'log.txt'})"
        print(f"{s.name:<20}{r['wall_s']:>10.1f}{r['cpu_s']:>10.1f}{r['peak_rss_mb']:>13.0f}"
              f"{r['load_before']:>12.1f} / {r['load_after']:<6.1f}{status}", flush=True)
    import pandas as pd

    pd.DataFrame(rows).to_csv(out / "scale.csv", index=False)
    for line in plot(rows, out / "scale.png"):
        print(line)
    print(f"wrote {out / 'scale.csv'} and {out / 'scale.png'}")


if __name__ == "__main__":
    main()
