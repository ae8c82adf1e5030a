"""``optsched reproduce PAPER [--full]``: regenerate a paper's figures and tables, and put the
measured headline numbers beside what the paper states.

Each paper (:func:`optsched.papers.paper_names`; ``all`` runs every one) lists the
:class:`~optsched.papers.ReproductionRun` s it needs, each one of its experiment's presets. By
default a run applies its ``reduced`` overrides (shorter horizons, fewer frames, repeats or
instances: minutes for all papers); with ``--full`` it runs the preset as it stands, the paper's
scale. ``--set KEY=VALUE`` overrides a config key in every run of the paper whose config has
that key (an unknown key is an error).

Every run writes its CSV + PNG + JSON into ``OUT/PAPER/RUN/``. The paper's ``claims`` function
then reads those CSVs back (it never re-implements an experiment) and returns
:class:`~optsched.claims.Claim` rows (result, measured, paper, difference explained), written as
``OUT/PAPER/claims.csv`` and ``OUT/PAPER/report.md``; ``all`` also writes ``OUT/report.md`` with
every paper's section. The paper statements come from ``../shared/papers`` (README.md and the
texts).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from optsched.artifacts import machine
from optsched.claims import MIN_REPLICATES, Claim
from optsched.config import MAX_WORKERS, whole_number, within_memory
from optsched.files import recording_inputs
from optsched.papers import Paper, ReproductionRun, get_paper, paper_names


def config_keys(paper: Paper) -> set[str]:
    """The keys of the paper's experiment config."""
    return {f.name for f in dataclasses.fields(paper.config)}


def settings_for(paper: Paper, run: ReproductionRun, full: bool, settings: Mapping[str, Any]) -> dict[str, Any]:
    """What ``run`` overrides in its preset: its ``settings``, its ``reduced`` scale unless
    ``full``, then the user's ``--set`` keys that the paper's config has."""
    keys = config_keys(paper)
    merged = dict(run.settings) if full else {**run.settings, **run.reduced}
    merged.update({k: v for k, v in settings.items() if k in keys})
    return merged


def report_markdown(paper: Paper, claims: list[Claim], *, full: bool, runs: list[dict[str, Any]],
                    extra: list[str]) -> str:
    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    lines = [f"## {paper.title}", "",
             f"Scale: {'paper (--full)' if full else 'reduced (default; --full for the paper scale)'}.", "",
             "| run | settings | replicates | wall s | CPU s | load avg (1 min) |", "|---|---|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {paper.name} --preset {r['preset']} ({r['label']}) | {cell(str(r['settings']) or '-')} | "
                     f"{r['replicates']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['load']:.2f} |")
    lines += ["", "| result | measured | paper | difference explained |", "|---|---|---|---|"]
    for c in claims:
        lines.append(f"| {cell(c.result)} | {cell(c.measured)} | {cell(c.paper)} | {cell(c.note)} |")
    lines += [""] + extra
    return "\n".join(lines) + "\n"


REPLICATES_DIR = "replicates"
SKIPPED = "SKIPPED.txt"
REPLICATE_KEY = 7919  # keeps replicate seeds apart from the other streams drawn from a run's seed


def replicate_seed(seed: int, i: int) -> int:
    """The seed of replicate ``i`` of a run with ``seed``: the run's own for i = 0; for i >= 1 a
    32-bit seed drawn from ``SeedSequence([seed, REPLICATE_KEY, i])``. (Seeds added up,
    ``seed + 7919 i``, made two reproductions share replicates: a run at seed 7919 replayed
    replicates 1, 2, ... of a run at seed 0 as its own 0, 1, ..., and pooled, they counted twice.)"""
    if i == 0:
        return seed
    return int(np.random.SeedSequence([seed, REPLICATE_KEY, i]).generate_state(1)[0])


def _run_replicate(name: str, preset: str, settings: Mapping[str, Any], out: Path) -> tuple[list[Path], float]:
    """One replicate of a run (a worker process may run it): its paths and CPU seconds."""
    cpu = time.process_time()
    paper = get_paper(name)
    with recording_inputs():
        return paper.run(paper.make_config(settings, preset), out), time.process_time() - cpu


def reproduce_paper(name: str, *, out: Path, full: bool = False, settings: Mapping[str, Any] | None = None,
                    replicates: int | None = None, jobs: int = 1, only: Sequence[str] | None = None,
                    log: Callable[[str], None] = print) -> tuple[list[Path], str]:
    """Run one paper's experiments and write claims.csv + report.md; (paths, report text).

    Every run with ``replicate`` runs ``replicates`` times (default 5, ``full`` 10) with
    independent seeds, ``jobs`` replicates at once in worker processes; a run that replicates
    inside itself takes ``replicates`` (when given) as its ``replicates_key`` (``repeats``), and
    one whose sample is not a number of replicates (``instances``) is logged as left as it is.
    With ``only`` (run labels) just those runs run; the claims then read the other runs' output
    already in ``out`` (to finish or redo part of a reproduction)."""
    import pandas as pd

    from optsched.artifacts import write_csv, write_text
    from optsched.observe import Observer

    paper = reproducible(name)
    settings = dict(settings or {})
    unknown = sorted(set(settings) - config_keys(paper))
    if unknown:
        raise ValueError(f"set: no run of {paper.name} has a config key {unknown[0]!r}")
    base = Path(out) / name
    paths: list[Path] = []
    runs = []
    if replicates is not None:
        whole_number("replicates", replicates)
        within_memory("replicates", replicates, "the replicates' records (one per replicate)", where="")
    whole_number("jobs", jobs, maximum=MAX_WORKERS)
    n = replicates if replicates is not None else (2 * MIN_REPLICATES if full else MIN_REPLICATES)
    labels = [r.subdir for r in paper.runs]
    unknown_runs = sorted(set(only or ()) - set(labels))
    if unknown_runs:
        raise ValueError(f"runs: {paper.name} has no run {unknown_runs[0]!r} (known: {', '.join(labels)})")
    kept = [label for label in labels if only is not None and label not in only]
    absent = [label for label in kept if not (base / label).is_dir() or not any((base / label).iterdir())]
    if absent:  # the claims read every run's output: found missing only after the chosen runs ran
        raise ValueError(f"runs: {paper.name}'s claims read every run's output, and {base / absent[0]} holds none; "
                         f"add {absent[0]} to --runs, or reproduce {paper.name} in full into this --out first")
    if replicates is not None:
        for run in paper.runs:
            if only is None or run.subdir in only:
                key = run.replicates_key
                if key is not None and key in settings:
                    raise ValueError(f"replicates: run {run.subdir} replicates through its {key!r}, which --set "
                                     f"sets too ({settings[key]!r}): give one of them")
    for stale in ("report.md", "claims.csv"):  # derived from the runs: gone until they are all rewritten
        (base / stale).unlink(missing_ok=True)
    for run in paper.runs:
        if only is not None and run.subdir not in only:  # kept as an earlier run into OUT wrote it
            continue
        merged = settings_for(paper, run, full, settings)
        if replicates is not None and not run.replicate:
            if run.replicates_key is not None:
                merged[run.replicates_key] = replicates
            else:
                log(f"reproduce {name}: {run.subdir} is a sample, not replicates (--replicates leaves it; "
                    f"its config sets its size)")
        if run.data:
            from optsched.io import default_data_dir

            key, sub = run.data
            where = default_data_dir() / sub
            if not where.is_dir():
                shutil.rmtree(base / run.subdir, ignore_errors=True)
                reason = f"{where} is absent (set $OPTSCHED_SHARED_DATA or run from beside ../shared)"
                paths.append(write_text(base / run.subdir / SKIPPED, reason + "\n"))
                log(f"reproduce {name}: --preset {run.preset} ({run.subdir}) skipped: {reason}")
                continue
            merged[key] = str(where.resolve())
        cfg = paper.make_config(merged, run.preset)
        count = n if run.replicate else 1
        log(f"reproduce {name}: --preset {run.preset} {merged or ''}" + (f" x {count} replicates" if count > 1 else ""))
        wall, cpu = time.perf_counter(), time.process_time()
        shutil.rmtree(base / run.subdir / REPLICATES_DIR, ignore_errors=True)  # no replicate of an earlier run
        (base / run.subdir / SKIPPED).unlink(missing_ok=True)
        with Observer(shadow=run.shadow, shadow_every=run.shadow_every) as observer, recording_inputs():
            paths += paper.run(cfg, base / run.subdir)
        paths += observer.write(base / run.subdir)
        seed = int(getattr(cfg, "seed", 0))
        tasks = [(name, run.preset, {**merged, "seed": replicate_seed(seed, i)}, base / run.subdir / REPLICATES_DIR / f"r{i}")
                 for i in range(1, count)]
        child_cpu = 0.0
        if tasks and jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(max_workers=jobs) as pool:
                for p, c in pool.map(_run_replicate, *zip(*tasks)):
                    paths += p
                    child_cpu += c
        else:
            for task in tasks:
                p, c = _run_replicate(*task)
                paths += p
        runs.append({"preset": run.preset, "label": run.subdir, "settings": merged, "replicates": count,
                     "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu + child_cpu,
                     "load": os.getloadavg()[0]})
    assert paper.claims is not None  # reproducible() checked it
    claims = paper.claims(base, full)
    paths.append(write_csv(pd.DataFrame([dataclasses.asdict(c) for c in claims]), base / "claims.csv"))
    text = report_markdown(paper, claims, full=full, runs=runs, extra=paper.tables(base) if paper.tables else [])
    paths.append(write_text(base / "report.md", f"# Reproduction report\n\n{text}"))
    return paths, text


def reproduce(paper: str, *, out: Path, full: bool = False, settings: Mapping[str, Any] | None = None,
              replicates: int | None = None, jobs: int = 1, only: Sequence[str] | None = None,
              log: Callable[[str], None] = print) -> list[Path]:
    """``optsched reproduce PAPER``: one paper, or ``all`` (also writes ``OUT/report.md``)."""
    names = reproducible_names() if paper == "all" else [reproducible(paper).name]
    if paper == "all" and settings:
        known = set().union(*(config_keys(get_paper(n)) for n in names))
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ValueError(f"set: no run has a config key {unknown[0]!r}")
    start, load0 = time.perf_counter(), os.getloadavg()[0]
    paths: list[Path] = []
    sections = []
    if paper == "all":
        (Path(out) / "report.md").unlink(missing_ok=True)  # rewritten after every paper's report
    for name in names:
        keys = config_keys(get_paper(name))
        own = {k: v for k, v in (settings or {}).items() if paper != "all" or k in keys}
        p, text = reproduce_paper(name, out=out, full=full, settings=own, replicates=replicates, jobs=jobs,
                                  only=only if paper != "all" else None, log=log)
        paths += p
        sections.append(text)
    if paper == "all":
        from optsched.artifacts import write_text

        head = (f"# Reproduction report: all papers\n\nWall time {time.perf_counter() - start:.0f} s; load average "
                f"{load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end ({machine()}).\n\n")
        paths.append(write_text(Path(out) / "report.md", head + "\n".join(sections)))
    return paths



def reproducible_names() -> list[str]:
    """The discovered papers that have reproduction runs and claims."""
    return [n for n in paper_names() if get_paper(n).runs and get_paper(n).claims is not None]


def reproducible(name: str) -> Paper:
    paper = get_paper(name) if name in paper_names() else None
    if paper is None or not paper.runs or paper.claims is None:
        raise ValueError(f"paper: unknown paper {name!r} (known: {', '.join(reproducible_names())}, all)")
    return paper
