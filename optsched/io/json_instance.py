"""JSON instances: one object ``{"model": NAME, ...}`` or a list of them (``.json``), or one
object a line (``.jsonl``, what ``optsched run --capture`` writes; the ``capture`` key of each
line says where the instance came from and is not part of the model).

The decoder is strict where Python's ``json`` is lenient: a key repeated in one object (the
last would silently win), ``NaN``/``Infinity`` literals and nesting deeper than the decoder's
recursion limit are refused. Integers are read as floats, so one beyond the float range is
infinite and refused by the field it is in, except in a text with a run of 16 digits or more
(an integer from 2^53 on may be there): its integers are read as Python integers, so the
model's own check refuses one that a float64 cannot hold exactly, as it does for a ``.dat``
file or a Python caller (9007199254740993 was read as 9007199254740992). Each raises a
one-line ``ValueError``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

from optsched.io import register_reader
from optsched.models.base import Model, model_from_dict

def _reject_constant(name: str) -> float:
    raise ValueError(f"json: {name} is not a number JSON allows")


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` refusing a key given twice in one object (json keeps the last)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"json: duplicate key {key!r} in one object")
        out[key] = value
    return out


_LONG_DIGITS = re.compile(r"[0-9]{16}")
_FLOAT_DIGITS = 309  # an integer of more digits is beyond the float range whatever its value


def _exact_int(token: str) -> int | float:
    """An integer as Python holds it exactly; past the float range, inf (refused by its field)."""
    return int(token) if len(token.lstrip("-")) <= _FLOAT_DIGITS else float(token)


def loads_strict(text: str, *, exact_ints: bool = False) -> Any:
    """``json.loads`` with the refusals of the module doc; integers exact with ``exact_ints``
    (a capture's backend options: an integer option read as 1.0 was refused)."""
    # parse_int=float: every number of an instance is used as a float64 or an index/count, and
    # each field's validation refuses a non-finite value naming the field, so an integer beyond
    # the float range becomes inf and is refused there; a Python hook on every integer would cost
    # 5x the parse, so it runs only where an integer may be past 2^53 (16 digits or more).
    parse_int = _exact_int if exact_ints or _LONG_DIGITS.search(text) else float
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=parse_int, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"json: malformed at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ValueError("json: arrays or objects nested too deeply") from None


@register_reader(".json")
def read_json(text: str) -> list[Model]:
    data = loads_strict(text)
    if not isinstance(data, list):
        return [model_from_dict(data)]
    out = []
    for number, item in enumerate(data, start=1):
        try:
            out.append(model_from_dict(item))
        except ValueError as exc:
            raise ValueError(f"json: instance {number} of the list: {exc}") from None
    return out


def dumps_float(x: float | None) -> float | None:
    """JSON has no inf/nan: map them to None."""
    return None if x is None or not math.isfinite(x) else x


CAPTURE_KEY = "capture"


@register_reader(".jsonl")
def read_json_lines(text: str) -> list[Model]:
    return [model for model, _ in read_captures(text)]


def read_captures(text: str) -> list[tuple[Model, dict[str, Any]]]:
    """Each line's model and its ``capture`` entry ({} without one; a table, else ValueError)."""
    out = []
    # records end at "\n" (JSON Lines); str.splitlines would also cut a string holding U+2028
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            data = loads_strict(line, exact_ints=CAPTURE_KEY in line)
            capture: Any = {}
            if isinstance(data, dict):
                capture = data.get(CAPTURE_KEY, {})
                data = {k: v for k, v in data.items() if k != CAPTURE_KEY}
            if not isinstance(capture, dict):
                raise ValueError(f"{CAPTURE_KEY}: expected a table, got {capture!r}")
            out.append((model_from_dict(data), capture))
        except ValueError as exc:
            raise ValueError(f"jsonl: line {number}: {exc}") from None
    return out


def policy_solve(capture: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The backend a capture's policy solved its instance with and the options it used (its
    configured ones and the slot's parameters, such as AESCB's xi and max_budget), or None for
    a capture that names none; ValueError when they are not a name and a table."""
    if "backend" not in capture and "options" not in capture:
        return None
    backend, options = capture.get("backend"), capture.get("options", {})
    if not isinstance(backend, str) or not isinstance(options, dict):
        raise ValueError(f"{CAPTURE_KEY}.backend and {CAPTURE_KEY}.options must be a name and a table, "
                         f"got {backend!r} and {options!r}")
    return backend, options
