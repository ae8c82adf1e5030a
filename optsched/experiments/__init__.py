"""Experiment registry: ``optsched run NAME`` looks experiments up here.

An experiment is a function ``run(config, out_dir) -> list[Path]`` (the files it wrote)
with a strict config dataclass and named presets (mappings of config overrides).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from optsched.config import config_from_mapping


@dataclass(frozen=True)
class Experiment:
    name: str
    description: str
    config_type: type
    run: Callable[[Any, Path], list[Path]]
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    subproblems: tuple[str, ...] = ()  # the model kinds its policies solve each slot
    # a short seeded run whose subproblems ``optsched bench --quick`` captures: {"settings", "every"}
    bench_capture: Mapping[str, Any] = field(default_factory=dict)

    def make_config(self, settings: Mapping[str, Any] | None = None, preset: str | None = None) -> Any:
        merged: dict[str, Any] = {}
        if preset is not None:
            if preset not in self.presets:
                raise ValueError(f"preset: {self.name} has no preset {preset!r} (known: {', '.join(sorted(self.presets))})")
            merged.update(self.presets[preset])
        merged.update(settings or {})
        return config_from_mapping(self.config_type, merged)


_EXPERIMENTS: dict[str, Experiment] = {}

# Modules that register experiments; imported on first lookup (they pull in pandas/matplotlib).
EXPERIMENT_MODULES = ("optsched.maxweight.experiments", "optsched.esdp.experiments", "optsched.onsocmax.experiments", "optsched.ogasched.experiments")


def experiment(
    name: str, *, config: type, description: str, presets: Mapping[str, Mapping[str, Any]] | None = None,
    subproblems: tuple[str, ...] = (), bench_capture: Mapping[str, Any] | None = None,
) -> Callable[[Callable[[Any, Path], list[Path]]], Callable[[Any, Path], list[Path]]]:
    def deco(fn: Callable[[Any, Path], list[Path]]) -> Callable[[Any, Path], list[Path]]:
        if name in _EXPERIMENTS:
            raise RuntimeError(f"experiment {name!r} registered twice")
        _EXPERIMENTS[name] = Experiment(name, description, config, fn, dict(presets or {}), tuple(subproblems),
                                        dict(bench_capture or {}))
        return fn

    return deco


def all_experiments() -> dict[str, Experiment]:
    for mod in EXPERIMENT_MODULES:
        importlib.import_module(mod)
    return dict(_EXPERIMENTS)


def get_experiment(name: str) -> Experiment:
    exps = all_experiments()
    if name not in exps:
        raise ValueError(f"experiment: unknown experiment {name!r} (known: {', '.join(sorted(exps))})")
    return exps[name]
