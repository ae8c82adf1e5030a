"""Strict numbers in text formats (Delorme ``.dat``, OR-Library mknap, trace CSVs).

Python's ``int()`` and ``float()`` accept far more than a number in a data file: ``1_0``,
``+10``, non-ASCII digits (``١``), surrounding whitespace, ``inf``/``nan``, and integers of
any size. These parsers accept exactly

* an integer: ``-?[0-9]+`` (ASCII digits), within 64 bits;
* a decimal number: ``-?`` then ``[0-9]+(.[0-9]*)?`` or ``.[0-9]+``, then an optional exponent
  ``[eE][+-]?[0-9]+`` (a finite value; one that overflows float is refused, not made ``inf``),

and raise ``ValueError`` for anything else.
"""

from __future__ import annotations

import math
import re

_INT = re.compile(r"-?[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", re.ASCII)
INT_LIMIT = 2**63  # integers must lie in [-INT_LIMIT, INT_LIMIT)


_INTS = re.compile(r"-?[0-9]{1,18}(?: -?[0-9]{1,18})*", re.ASCII)  # 18 digits: inside 64 bits
_DECIMALS = re.compile(rf"(?:{_DECIMAL.pattern})(?: (?:{_DECIMAL.pattern}))*", re.ASCII)


def _shown(token: str) -> str:
    return repr(token if len(token) <= 24 else token[:20] + "...")


def parse_int(token: str) -> int:
    """An ASCII integer token within 64 bits."""
    if not _INT.fullmatch(token):
        raise ValueError(f"{_shown(token)} is not an integer")
    if len(token) > 20 or not -INT_LIMIT <= int(token) < INT_LIMIT:
        raise ValueError(f"{_shown(token)} is out of range (integers must fit in 64 bits)")
    return int(token)


def parse_float(token: str) -> float:
    """An ASCII decimal token with a finite float value."""
    if not _DECIMAL.fullmatch(token):
        raise ValueError(f"{_shown(token)} is not a number")
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(f"{_shown(token)} is out of the float range")
    return value


def parse_ints(tokens: list[str]) -> list[int]:
    """:func:`parse_int` of every token (one regex over the joined tokens in the common case)."""
    if tokens and _INTS.fullmatch(" ".join(tokens)):
        return list(map(int, tokens))
    return [parse_int(t) for t in tokens]


def parse_floats(tokens: list[str]) -> list[float]:
    """:func:`parse_float` of every token (one regex over the joined tokens in the common case)."""
    if tokens and _DECIMALS.fullmatch(" ".join(tokens)):
        values = list(map(float, tokens))
        if all(map(math.isfinite, values)):
            return values
    return [parse_float(t) for t in tokens]


def require_whole_last_line(text: str) -> None:
    """A line-oriented file whose last line has no line break may be cut short inside its last
    number, and still read: ``15 26`` cut to ``15 2``, a capacity of 650 to 65 (OR-Library,
    Delorme and DIMACS files all end in a newline). Refused, naming the last line; spaces or
    tabs after the last line break hold no number to cut."""
    if text.strip() and not text.rstrip(" \t").endswith(("\n", "\r")):
        last = text.rsplit("\n", 1)[-1].strip()
        raise ValueError(f"file: the last line ({last[-40:]!r}) has no line break: the file may be cut short inside "
                         "its last number (if it is whole, end it with a newline)")
