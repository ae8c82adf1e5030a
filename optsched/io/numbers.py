"""Strict numbers and lines in text formats (Delorme ``.dat``, OR-Library mknap, DIMACS, trace CSVs).

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
from typing import Iterator

_INT = re.compile(r"-?[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", re.ASCII)
INT_LIMIT = 2**63  # integers must lie in [-INT_LIMIT, INT_LIMIT)


_INTS = re.compile(r"-?[0-9]{1,18}(?: -?[0-9]{1,18})*", re.ASCII)  # 18 digits: inside 64 bits
_DECIMALS = re.compile(rf"(?:{_DECIMAL.pattern})(?: (?:{_DECIMAL.pattern}))*", re.ASCII)


_TYPED_INT = re.compile(r"\s*[-+]?[0-9]+\s*", re.ASCII)
_TYPED_FLOAT = re.compile(rf"\s*[-+]?(?:{_DECIMAL.pattern[2:]}|inf|infinity|nan)\s*", re.ASCII | re.IGNORECASE)


def typed_int(text: str) -> int:
    """An integer typed on a command line: the data files' integer, with an optional sign and
    surrounding spaces (its range is the setting's own check); ValueError for "1_0" or
    non-ASCII digits, which ``int()`` takes (the Arabic-Indic three ran as seed 3)."""
    if not _TYPED_INT.fullmatch(text):
        raise ValueError(f"not an integer: {_shown(text)}")
    return int(text)


def typed_float(text: str) -> float:
    """A number typed on a command line or in an environment variable: the data files'
    decimal, with an optional sign, surrounding spaces, and the words inf and nan (the
    setting's own check names them); ValueError for what ``float()`` alone takes ("1_0",
    non-ASCII digits)."""
    if not _TYPED_FLOAT.fullmatch(text):
        raise ValueError(f"not a number: {_shown(text)}")
    return float(text)


def _shown(token: str) -> str:
    return repr(token if len(token) <= 24 else token[:20] + "...")


def parse_int(token: str) -> int:
    """An ASCII integer token within 64 bits."""
    if not _INT.fullmatch(token):
        raise ValueError(f"{_shown(token)} is not an integer")
    if len(token) > 20 or not -INT_LIMIT <= int(token) < INT_LIMIT:
        raise ValueError(f"{_shown(token)} is out of range (integers must fit in 64 bits)")
    return int(token)


def parse_count(token: str, where: str, what: str, *, minimum: int = 0) -> int:
    """A count of a file's header (items, rows, edges): an integer token >= ``minimum``;
    ValueError naming ``where`` and ``what``."""
    try:
        value = parse_int(token)
    except ValueError as exc:
        raise ValueError(f"{where}: {what}: {exc}") from None
    if value < minimum:
        raise ValueError(f"{where}: {what} must be >= {minimum}, got {value}")
    return value


def parse_float(token: str) -> float:
    """An ASCII decimal token with a finite float value."""
    if not _DECIMAL.fullmatch(token):
        raise ValueError(f"{_shown(token)} is not a number")
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(f"{_shown(token)} is out of the float range")
    return value


# Tokens per regex call: a repeated group keeps state for each token it matched (170 bytes an
# integer, 500 a decimal: 5.5 GB for a 40 MB file of 20 million numbers in one call).
CHUNK = 4096


def _chunks(tokens: list[str]) -> Iterator[list[str]]:
    return (tokens[i : i + CHUNK] for i in range(0, len(tokens), CHUNK))


def parse_ints(tokens: list[str]) -> list[int]:
    """:func:`parse_int` of every token (one regex over each chunk of joined tokens in the common case)."""
    if all(_INTS.fullmatch(" ".join(chunk)) for chunk in _chunks(tokens)):
        return list(map(int, tokens))
    return [parse_int(t) for t in tokens]


def parse_floats(tokens: list[str]) -> list[float]:
    """:func:`parse_float` of every token (one regex over each chunk of joined tokens in the common case)."""
    if all(_DECIMALS.fullmatch(" ".join(chunk)) for chunk in _chunks(tokens)):
        values = list(map(float, tokens))
        if all(map(math.isfinite, values)):
            return values
    return [parse_float(t) for t in tokens]


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def text_lines(text: str) -> list[str]:
    """The lines of a text file, broken at a line feed, a carriage return or both (a file from
    any system) and nowhere else: ``str.splitlines`` also breaks at a form feed, NEL or U+2028,
    which a comment may hold (a form feed in a DIMACS comment made "break" an unknown line
    type, and moved every later line's number by one)."""
    return _LINE_BREAK.split(text)


def require_whole_last_line(text: str) -> None:
    """A line-oriented file whose last line has no line break may be cut short inside its last
    number, and still read: ``15 26`` cut to ``15 2``, a capacity of 650 to 65 (OR-Library,
    Delorme and DIMACS files all end in a newline). Refused, naming the last line; spaces or
    tabs after the last line break hold no number to cut."""
    if text.strip() and not text.rstrip(" \t").endswith(("\n", "\r")):
        last = text_lines(text)[-1].strip()
        raise ValueError(f"file: the last line ({last[-40:]!r}) has no line break: the file may be cut short inside "
                         "its last number (if it is whole, end it with a newline)")
