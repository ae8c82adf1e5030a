"""Paper plugins: everything optsched knows about one paper in one :class:`Paper` object, which
the paper's package exports as ``PAPER`` from its module ``paper``.

Papers are discovered, never listed: every subpackage ``optsched.NAME`` with a module
``optsched.NAME.paper``, and every entry point of the group ``optsched.papers`` of an installed
distribution (another package's paper, e.g. in its ``pyproject.toml``::

    [project.entry-points."optsched.papers"]
    toy = "toy_paper.paper:PAPER"

). ``optsched run``, ``reproduce``, ``sweep``, ``bench --quick`` (captured subproblems) and the
CLI help read the papers from here, so adding a paper touches no file outside its package.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping

from optsched.config import config_from_mapping

if TYPE_CHECKING:
    from optsched.claims import Claim

ENTRY_POINT_GROUP = "optsched.papers"
Metrics = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ReproductionRun:
    """One experiment preset that ``optsched reproduce`` runs; ``reduced`` overrides make it
    the default (minutes) scale.

    ``settings`` are overrides in both modes (e.g. the backend of the policy's subproblem),
    ``label`` the output subdirectory (default: the preset); with ``shadow`` every
    ``shadow_every``-th subproblem of the policies is also solved by those backends
    (``shadow.csv``, ``shadow.png``; the trajectory is the same).

    With ``replicate`` (the default) ``optsched reproduce`` runs the preset once per replicate,
    each with its own seed (instance and sample path both change): replicate 0 into the run's
    directory, replicate i into ``RUN/replicates/r<i>/`` (:func:`optsched.claims.replicate_dirs`).
    ``replicate=False`` for a run that replicates inside itself (its ``repeats`` or
    ``instances``); its claims then say how many it has, and ``replicates_key`` names the config
    key that ``reproduce --replicates N`` sets for it (None: its sample, such as the instances
    a maximum is taken over, is not a number of replicates, and ``--replicates`` leaves it). A
    run with ``data = (key, subdir)`` reads ``subdir`` of the shared data directory
    (:func:`optsched.io.default_data_dir`), passed as its config key ``key``; when that
    directory is absent the run is skipped and ``RUN/SKIPPED.txt`` says why
    (:func:`optsched.claims.skipped`)."""

    preset: str
    reduced: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    shadow: tuple[str, ...] = ()
    shadow_every: int = 1
    replicate: bool = True
    replicates_key: str | None = None
    data: tuple[str, str] = ()  # (config key, directory under the shared data directory) the run reads

    @property
    def subdir(self) -> str:
        return self.label or self.preset


# a run that replicates through its config's ``repeats``: ``reproduce --replicates N`` sets repeats = N
REPEATS_INSIDE: Mapping[str, Any] = MappingProxyType({"replicate": False, "replicates_key": "repeats"})


@dataclass(frozen=True, kw_only=True)
class SweepSummary:
    """How ``optsched sweep`` runs one policy of the paper on one config: ``metrics(cfg, policy)``
    returns one row of plain numbers, the same names for every policy (NaN where one does not
    apply). ``prepare`` completes a sweep point's settings before the config is built;
    ``default_policies(cfg)`` the policies a sweep runs when it names none (default: all);
    ``check(cfg)`` what one sweep point's config must hold beyond the experiment's own check
    (a ValueError naming the setting, before any run); ``unused`` the config keys no sweep run
    reads (the settings of ``optsched run``'s figures and repeats): a sweep refuses them in
    ``[base]`` and ``[grid]`` rather than record a setting that changed nothing. ``warm`` are
    settings that make a run tiny (a few slots): before its first timed run, every process of a
    sweep runs each of its (experiment, policy) pairs once with them and drops the row, so loading
    the policy's compiled kernels and solver packages (1-2 s in a fresh process) counts in no
    run's ``runtime_s`` and does not skew the batch sizes measured from it."""

    metrics: Callable[[Any, str], Metrics]
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    default_policies: Callable[[Any], tuple[str, ...]] | None = None
    check: Callable[[Any], None] | None = None
    unused: frozenset[str] = frozenset()
    warm: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class Paper:
    """One paper: its experiment (``config`` dataclass with a ``study`` key and ``check()``,
    ``run(config, out_dir) -> written paths``, named ``presets``), the model kinds its policies
    solve each slot (``subproblems``), the short run whose subproblems ``bench --quick``
    captures (``bench_capture``: ``settings``, ``every``), its ``policies``, its sweep summary,
    and what ``optsched reproduce`` runs (``runs``) and concludes (``claims(out_dir, full)``,
    read back from the runs' CSVs; ``tables(out_dir)``: extra Markdown for the report)."""

    name: str
    title: str
    description: str
    config: type
    run: Callable[[Any, Path], list[Path]]
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    subproblems: tuple[str, ...] = ()
    bench_capture: Mapping[str, Any] = field(default_factory=dict)
    policies: tuple[str, ...] = ()
    sweep: SweepSummary | None = None
    runs: tuple[ReproductionRun, ...] = ()
    claims: Callable[[Path, bool], list["Claim"]] | None = None
    tables: Callable[[Path], list[str]] | None = None

    def make_config(self, settings: Mapping[str, Any] | None = None, preset: str | None = None) -> Any:
        """The checked config of ``preset`` (if any) overridden by ``settings``."""
        merged: dict[str, Any] = {}
        if preset is not None:
            if preset not in self.presets:
                raise ValueError(f"preset: {self.name} has no preset {preset!r} (known: {', '.join(sorted(self.presets))})")
            merged.update(self.presets[preset])
        merged.update(settings or {})
        return config_from_mapping(self.config, merged)


def _builtin_names() -> list[str]:
    """Subpackages of optsched with a ``paper`` module, found on disk (nothing imported)."""
    import optsched

    return sorted(m.name for m in pkgutil.iter_modules(optsched.__path__)
                  if m.ispkg and any((Path(root) / m.name / "paper.py").is_file() for root in optsched.__path__))


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def paper_names() -> list[str]:
    """The names of every discovered paper (built-in first, then entry points), without
    importing any of them."""
    names = _builtin_names()
    return names + sorted(n for n in _entry_points() if n not in names)


def get_paper(name: str) -> Paper:
    """The paper ``name``; ValueError naming the known ones for an unknown name."""
    if name in _builtin_names():
        paper = importlib.import_module(f"optsched.{name}.paper").PAPER
    elif name in (eps := _entry_points()):
        paper = eps[name].load()
    else:
        raise ValueError(f"paper: unknown paper {name!r} (known: {', '.join(paper_names())})")
    if not isinstance(paper, Paper) or paper.name != name:
        raise RuntimeError(f"paper {name!r}: its PAPER is not a Paper named {name!r}")
    return paper


def all_papers() -> dict[str, Paper]:
    return {name: get_paper(name) for name in paper_names()}
