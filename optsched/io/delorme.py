"""Delorme-Gandibleux-Rodriguez weighted set packing files (``.dat``).

Format: ``m n``; n integer profits; then for each of the m rows a line with its count k and
a line with k 1-based column indices. Rows are the elements, columns the sets: the set of
column i is the rows that list it.
"""

from __future__ import annotations

from optsched.io import register_reader
from optsched.io.numbers import parse_ints
from optsched.models.set_packing import SetPacking


def _ints(tokens: list[str], start: int, count: int, what: str) -> list[int]:
    chunk = tokens[start : start + count]
    if len(chunk) < count:
        raise ValueError(f"delorme: file ends inside {what} (wanted {count} numbers, found {len(chunk)})")
    try:
        return parse_ints(chunk)
    except ValueError as exc:
        raise ValueError(f"delorme: {what} holds a bad token: {exc}") from None


@register_reader(".dat")
def read_delorme(text: str) -> list[SetPacking]:
    tokens = text.split()
    m, n = _ints(tokens, 0, 2, "the header 'm n'")
    if m < 1 or n < 1:
        raise ValueError(f"delorme: header needs m >= 1 and n >= 1, got m={m} n={n}")
    pos = 2
    profits = _ints(tokens, pos, n, "the profits")
    pos += n
    sets: list[list[int]] = [[] for _ in range(n)]
    for row in range(m):
        (k,) = _ints(tokens, pos, 1, f"the count of row {row + 1}")
        pos += 1
        if k < 0 or k > n:
            raise ValueError(f"delorme: row {row + 1} has count {k} outside 0..{n}")
        cols = _ints(tokens, pos, k, f"row {row + 1}")
        pos += k
        for c in cols:
            if not 1 <= c <= n:
                raise ValueError(f"delorme: row {row + 1} names column {c} outside 1..{n}")
            sets[c - 1].append(row)
    if pos != len(tokens):
        raise ValueError(f"delorme: {len(tokens) - pos} unexpected tokens after row {m}")
    return [SetPacking(n_elements=m, sets=sets, weights=profits)]
