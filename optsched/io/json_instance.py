"""JSON instances: one object ``{"model": NAME, ...}`` or a list of them (``.json``), or one
object a line (``.jsonl``, what ``optsched run --capture`` writes; the ``capture`` key of each
line says where the instance came from and is not part of the model)."""

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


CAPTURE_KEY = "capture"


@register_reader(".jsonl")
def read_json_lines(text: str) -> list[Model]:
    models = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            raise ValueError(f"jsonl: line {number} is malformed at column {exc.colno}: {exc.msg}") from None
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k != CAPTURE_KEY}
        try:
            models.append(model_from_dict(data))
        except ValueError as exc:
            raise ValueError(f"jsonl: line {number}: {exc}") from None
    return models
