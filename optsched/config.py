"""Strict experiment configs: frozen dataclasses loaded from TOML or a mapping.

Unknown keys, wrong types and out-of-range values raise ``ValueError`` naming the key.
A list setting (a tuple field) must hold at least one value and no value twice: each is an
axis a study sweeps (an empty one crashed a plot, a repeated one multiplied an ESDP sweep's
rows before its summary failed), except a field marked ``metadata={"vector": True}``, whose
entries are one quantity each (maxweight's ``requirement``). A table setting (a Mapping field:
backend options) must be a table. A config class may define ``check(self)`` for cross-field
and range rules; one derived from :class:`StrictConfig` is checked whenever it is built.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import sys
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, Mapping, TypeVar

import numpy as np

C = TypeVar("C")
MAX_FLOAT_INT = int(sys.float_info.max)  # the largest integer that converts to a finite float
# A number setting's largest magnitude: contention = 1e100 made requests of 1.4e101, past the
# models' 1e100, refused as "requests" (no setting of that name), and 1e308 overflowed. A nonzero
# one's smallest is its inverse: alpha_low = 1e-300 made the reciprocal utility's gradient 1/0.
SETTING_MAGNITUDE = 1e12


def _coerce(key: str, value: Any, hint: Any) -> Any:
    if isinstance(value, (np.integer, np.floating, np.bool_)):  # a config built in code from numpy values
        value = value.item()
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(key, value, arg)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError(errors[0])
    if origin is typing.Literal:
        if value not in typing.get_args(hint):
            raise ValueError(f"{key}: must be one of {list(typing.get_args(hint))}, got {value!r}")
        return value
    if origin is tuple:
        if isinstance(value, np.ndarray) and value.ndim == 1:  # built in code: np.array([8, 16])
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{key}: expected a list, got {type(value).__name__}")
        if not value:
            raise ValueError(f"{key}: must list at least one value")
        (item,) = [a for a in typing.get_args(hint) if a is not Ellipsis][:1] or [Any]
        return tuple(_coerce(f"{key}[{i}]", v, item) for i, v in enumerate(value))
    if origin in (dict, Mapping, collections.abc.Mapping) or hint in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise ValueError(f"{key}: expected a table, got {type(value).__name__}")
        return dict(value)
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{key}: expected true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{key}: expected an integer, got {value!r}")
        if not -(2**63) <= value < 2**63:
            raise ValueError(f"{key}: a {value.bit_length()}-bit integer is out of range (integers must fit in 64 bits)")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key}: expected a number, got {value!r}")
        if isinstance(value, int) and abs(value) > MAX_FLOAT_INT:
            raise ValueError(f"{key}: must be finite (an integer beyond the float range)")
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{key}: must be finite")
        if abs(value) > SETTING_MAGNITUDE:
            raise ValueError(f"{key}: must be at most {SETTING_MAGNITUDE:g} in magnitude, got {value:g} (a setting scales "
                             "the data an experiment draws, which must stay inside the models' range)")
        if 0 < abs(value) < 1 / SETTING_MAGNITUDE:
            raise ValueError(f"{key}: must be 0 or at least {1 / SETTING_MAGNITUDE:g} in magnitude, got {value:g} (a "
                             "utility coefficient of 1e-300 made a gradient of 1/0)")
        return float(value) + 0.0  # -0.0 is 0.0: a list of both passed the no-value-twice rule (repr differs)
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"{key}: expected a string, got {value!r}")
        return value
    return value


def config_from_mapping(cls: type[C], data: Mapping[str, Any], *, where: str = "config") -> C:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a table of settings")
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(names))})")
    if issubclass(cls, StrictConfig):  # its construction applies the rules below
        return cls(**data)
    values = _checked_values(cls, data, where)
    cfg = cls(**values)
    check = getattr(cfg, "check", None)
    if check is not None:
        check()
    return cfg


def _checked_values(cls: type, data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``data``'s values coerced to the fields' types, with the seed and list rules (module docstring)."""
    hints = _hints(cls)
    values = {k: _coerce(f"{where}.{k}", v, hints[k]) for k, v in data.items()}
    if isinstance(values.get("seed"), int) and values["seed"] < 0:  # numpy's generators take seeds >= 0
        raise ValueError(f"{where}.seed: must be >= 0, got {values['seed']}")
    for f in dataclasses.fields(cls):
        listed = values.get(f.name)
        if isinstance(listed, tuple) and not f.metadata.get("vector") and len(set(map(repr, listed))) < len(listed):
            raise ValueError(f"{where}.{f.name}: lists a value twice ({list(listed)})")
    return values


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


class StrictConfig:
    """Base of the experiments' frozen config dataclasses: every construction (a TOML file, a
    mapping, ``dataclasses.replace`` or the library's ``OgaConfig(...)``) applies the rules of
    :func:`config_from_mapping` (types, finite numbers within :data:`SETTING_MAGNITUDE`, list
    rules, ``check``). Built in code, ``OgaConfig(contention=inf)`` passed and
    ``MaxWeightConfig(fig5_sizes=())`` crashed its run with a KeyError. Messages name the
    setting under ``WHERE`` ("config.seed")."""

    WHERE = "config"

    def __post_init__(self) -> None:
        given = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)  # type: ignore[arg-type]
                 if getattr(self, f.name) is not f.default}  # a default as it stands (a sweep's empty lists) is valid
        values = _checked_values(type(self), given, self.WHERE)
        for name, value in values.items():
            if value is not getattr(self, name):
                object.__setattr__(self, name, value)
        check = getattr(self, "check", None)
        if check is not None:
            check()


def load_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file a user names (a regular file within :mod:`optsched.files`' size cap)."""
    from optsched.files import read_user_text

    text = read_user_text(path, "config")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"config: {path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ValueError(f"config: {path} nests arrays or tables too deeply") from None


def require(ok: bool, key: str, message: str, *, where: str = "config") -> None:
    """Range rule for a config ``check``: raise ValueError naming ``where.key`` (``key`` alone
    when ``where`` is empty: a function's argument or a command-line option) unless ``ok``."""
    if not ok:
        raise ValueError(f"{where}.{key}: {message}" if where else f"{key}: {message}")


# The largest array (in entries; 800 MB of float64) a config may make an experiment allocate.
# Each config's ``check`` estimates its experiment's biggest arrays from its sizes and refuses
# one beyond this up front, instead of a MemoryError (or swapping) minutes into the run. Counts
# of repeated work (horizons, repeats, replicates) obey it too: each unit keeps a record.
MAX_CELLS = 10**8
# The most worker processes a command may start (sweep --workers, compare/reproduce --jobs).
MAX_WORKERS = 1024


def within_memory(key: str, cells: int, what: str, *, where: str = "config") -> None:
    """Range rule: ``what`` (an array or a set of records the settings size) holds at most
    :data:`MAX_CELLS` entries."""
    shown = f"{float(cells):.3g}" if cells < 1e300 else "more than 1e300"
    require(cells <= MAX_CELLS, key, f"{what} would hold {shown} entries, more than the limit of "
                                     f"{MAX_CELLS:.0e} (optsched.config.MAX_CELLS)", where=where)


def whole_number(key: str, value: Any, *, maximum: int | None = None) -> None:
    """A count given to a function or on the command line: an int (not a bool) >= 1 and, with
    ``maximum``, at most that; ValueError naming ``key``."""
    ok = (not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer)) and value >= 1
          and (maximum is None or value <= maximum))
    if not ok:
        expected = f"in 1..{maximum}" if maximum is not None else ">= 1"
        raise ValueError(f"{key}: must be a whole number {expected}, got {value!r}")


def probability(value: float, key: str) -> None:
    require(0.0 <= value <= 1.0, key, f"must be a probability in [0, 1], got {value}")
