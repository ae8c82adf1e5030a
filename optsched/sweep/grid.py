"""Sweep files (strict TOML) and their expansion into runs with stable keys.

A run is one (configuration, seed, policy) of an experiment, or one (model, size, seed,
backend) solve. Its key is the first 16 hex digits of the SHA-256 of the canonical JSON of
everything that determines its result (the full experiment config including defaults and the
seed, or model kind, size, seed, backend, time limit, options, verify); package versions are
not part of the key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

from optsched.config import StrictConfig, config_from_mapping, load_toml, require

KINDS = ("experiment", "solve")


@dataclass(frozen=True)
class SweepConfig(StrictConfig):
    """The keys of a sweep file (see :mod:`optsched.sweep`), checked whenever one is built (a
    file, or the library's ``SweepConfig(...)``: ``kind="bogus"`` or no seeds ran nothing)."""

    WHERE = "sweep"

    kind: Literal["experiment", "solve"] = "experiment"
    seeds: tuple[int, ...] = (0,)
    # kind = "experiment"
    experiment: str = ""
    policies: tuple[str, ...] = ()
    base: Mapping[str, Any] = field(default_factory=dict)
    grid: Mapping[str, Any] = field(default_factory=dict)
    # kind = "solve"
    models: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    sizes: tuple[int, ...] = ()
    time_limit: float | None = None
    verify: bool = True
    options: Mapping[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        require(len(self.seeds) >= 1, "seeds", "name at least one seed", where="sweep")
        require(all(s >= 0 for s in self.seeds), "seeds", "seeds must be >= 0", where="sweep")
        require(len(set(self.seeds)) == len(self.seeds), "seeds", "seeds must be distinct", where="sweep")
        own = {"experiment": ("experiment", "policies", "base", "grid"),
               "solve": ("models", "backends", "sizes", "time_limit", "verify", "options")}
        for kind, keys in own.items():
            for key in keys if kind != self.kind else ():
                require(getattr(self, key) == _default(key), key, f"is not a key of a kind = {self.kind!r} sweep", where="sweep")
        for key in ("base", "grid", "options"):
            require(isinstance(getattr(self, key), Mapping), key, "expected a table", where="sweep")
        if self.kind == "experiment":
            require(bool(self.experiment), "experiment", "name the experiment to sweep", where="sweep")
            for key, values in self.grid.items():
                require(isinstance(values, (list, tuple)) and len(values) >= 1, f"grid.{key}",
                        "expected a non-empty list of values", where="sweep")
                require(key not in self.base, f"grid.{key}", "is set in [base] too: give each setting once", where="sweep")
            for key in ("base", "grid"):
                require("seed" not in getattr(self, key), f"{key}.seed", "set the seeds with the top-level 'seeds' key", where="sweep")
        else:
            for key in ("models", "backends", "sizes"):
                require(len(getattr(self, key)) >= 1, key, "name at least one", where="sweep")
            from optsched.generators import MAX_SIZE

            require(all(1 <= n <= MAX_SIZE for n in self.sizes), "sizes", f"sizes must be in 1..{MAX_SIZE}", where="sweep")
            require(self.time_limit is None or self.time_limit > 0, "time_limit", "must be > 0", where="sweep")
        points = math.prod(len(v) for v in self.grid.values()) if self.kind == "experiment" else \
            len(self.models) * len(self.sizes) * max(1, len(self.backends))
        within_run_limit(points * len(self.seeds) * max(1, len(self.policies)))  # the default policies: expand()


def within_run_limit(count: int) -> None:
    require(count <= MAX_RUNS, "grid", f"would make {count:.3g} runs (seeds x grid points x policies), more than "
                                       f"the limit of {MAX_RUNS:.0e} (optsched.sweep.grid.MAX_RUNS)", where="sweep")


# A sweep's runs are expanded (one config each) before the first runs: 10 axes of 10 values
# spent minutes and gigabytes there. 10^6 runs of the shortest task is already hours.
MAX_RUNS = 10**6


def _default(name: str) -> Any:
    (f,) = [f for f in dataclasses.fields(SweepConfig) if f.name == name]
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default


@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep. ``config`` is the canonical JSON of what determines the result;
    ``params`` the JSON of the values that vary over the grid (their own columns)."""

    key: str
    kind: str
    target: str  # experiment name or model kind
    variant: str  # policy or backend
    seed: int
    config: str
    params: str


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True, default=_jsonable)


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def run_key(kind: str, target: str, variant: str, seed: int, config: Any) -> str:
    payload = canonical_json({"kind": kind, "target": target, "variant": variant, "seed": seed, "config": config})
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def load_sweep(path: str | Path) -> SweepConfig:
    return config_from_mapping(SweepConfig, load_toml(path), where="sweep")


def _wrap_scalars(cfg_type: type, settings: Mapping[str, Any]) -> dict[str, Any]:
    """A scalar given for a tuple-typed config key stands for a one-element list."""
    hints = typing.get_type_hints(cfg_type)
    out = {}
    for key, value in settings.items():
        if typing.get_origin(hints.get(key)) is tuple and not isinstance(value, (list, tuple)):
            value = [value]
        out[key] = value
    return out


def expand(sweep: SweepConfig) -> list[SweepRun]:
    """Every run of the sweep, in grid order; ValueError naming the key for bad settings."""
    return _expand_experiment(sweep) if sweep.kind == "experiment" else _expand_solve(sweep)


def _expand_experiment(sweep: SweepConfig) -> list[SweepRun]:
    from optsched.papers import get_paper

    exp = get_paper(sweep.experiment)
    summary = exp.sweep
    if summary is None:
        raise ValueError(f"sweep.experiment: paper {exp.name!r} has no sweep summary")
    names = {f.name for f in dataclasses.fields(exp.config)}
    for table in ("base", "grid"):
        for key in getattr(sweep, table):
            if key not in names:
                raise ValueError(
                    f"sweep.{table}: unknown key {key!r} for experiment {exp.name!r} (known: {', '.join(sorted(names - {'seed'}))})"
                )
            if key in summary.unused:
                raise ValueError(f"sweep.{table}: {key!r} changes no sweep run of {exp.name!r} (a run is one policy on "
                                 f"one config and seed; {key!r} is a setting of `optsched run`)")
    given = sorted({"policies"} & (set(sweep.base) | set(sweep.grid)))
    if sweep.policies and given:  # the runs took the top level's; each row recorded the other
        raise ValueError(f"sweep.policies: given at the top level and as the config key {given[0]!r} in [base] or "
                         "[grid]; give the policies once")
    for p in sweep.policies:
        if p not in exp.policies:
            raise ValueError(f"sweep.policies: unknown policy {p!r} for {exp.name} (known: {', '.join(exp.policies)})")
    keys = list(sweep.grid)

    def config(values: tuple[Any, ...], seed: int) -> Any:
        settings = {**_wrap_scalars(exp.config, sweep.base), **_wrap_scalars(exp.config, dict(zip(keys, values))),
                    "seed": seed}
        if summary.prepare is not None:
            settings = summary.prepare(settings)
        cfg = exp.make_config(settings)
        if summary.check is not None:
            summary.check(cfg)
        return cfg

    def policies(cfg: Any) -> tuple[str, ...]:
        default = summary.default_policies(cfg) if summary.default_policies is not None else exp.policies
        return tuple(sweep.policies or default)

    if not sweep.policies:  # check() counted one policy a point; a grid of 10^6 points then expanded for 40 min
        first = config(tuple(sweep.grid[k][0] for k in keys), sweep.seeds[0])
        within_run_limit(math.prod(len(sweep.grid[k]) for k in keys) * len(sweep.seeds) * len(policies(first)))
    runs = []
    for values in itertools.product(*(sweep.grid[k] for k in keys)):
        for seed in sweep.seeds:
            cfg = config(values, seed)
            full = dataclasses.asdict(cfg)
            params = {k: full[k] for k in keys}
            chosen = policies(cfg)
            within_run_limit(len(runs) + len(chosen))  # the first point's count held; a point may name more policies
            for policy in chosen:
                runs.append(SweepRun(run_key("experiment", exp.name, policy, seed, full), "experiment", exp.name, policy,
                                seed, canonical_json(full), canonical_json(params)))
    return runs


def _expand_solve(sweep: SweepConfig) -> list[SweepRun]:
    import numpy as np

    from optsched.generators import generate, generator_kinds
    from optsched.solvers.registry import backend_available, get_backend

    for m in sweep.models:
        if m not in generator_kinds():
            raise ValueError(f"sweep.models: no generator for {m!r} (known: {', '.join(generator_kinds())})")
    backends = {name: get_backend(name) for name in sweep.backends}
    for name, options in sweep.options.items():
        if name not in backends:
            raise ValueError(f"sweep.options: {name!r} is not one of the sweep's backends")
        if not isinstance(options, Mapping):
            raise ValueError(f"sweep.options.{name}: expected a table of backend options")
        try:  # names, types, ranges and allow-lists, before the first run
            backends[name].check_options(dict(options))
        except ValueError as exc:
            raise ValueError(f"sweep.options.{name}: {exc}") from None
    fits: dict[str, list[str]] = {}
    for m in sweep.models:
        probe = generate(m, min(sweep.sizes), np.random.default_rng(0))
        fits[m] = [name for name, b in backends.items() if b.fits(probe) is None]
    for name, b in backends.items():
        if not any(name in f for f in fits.values()):
            raise ValueError(f"sweep.backends: {name!r} solves none of the models {list(sweep.models)}")
        avail = backend_available(b)
        if not avail:
            raise ValueError(f"sweep.backends: {name!r} is not available here: {avail.reason}")
    runs = []
    for m in sweep.models:
        for size in sweep.sizes:
            for seed in sweep.seeds:
                for name in fits[m]:
                    full = {"model": m, "size": size, "backend": name, "time_limit": sweep.time_limit,
                            "verify": sweep.verify, "options": dict(sweep.options.get(name, {}))}
                    runs.append(SweepRun(run_key("solve", m, name, seed, full), "solve", m, name, seed,
                                    canonical_json(full), canonical_json({"size": size})))
    return runs
