"""JSON instances: one object ``{"model": NAME, ...}`` or a list of them."""

from __future__ import annotations

import json
import math

from optsched.io import register_reader
from optsched.models.base import Model, model_from_dict


def _reject_constant(name: str) -> float:
    raise ValueError(f"json: {name} is not a number JSON allows")


@register_reader(".json")
def read_json(text: str) -> list[Model]:
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"json: malformed at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    items = data if isinstance(data, list) else [data]
    return [model_from_dict(item) for item in items]


def dumps_float(x: float | None) -> float | None:
    """JSON has no inf/nan: map them to None."""
    return None if x is None or not math.isfinite(x) else x
