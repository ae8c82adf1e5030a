"""Delorme-Gandibleux-Rodriguez weighted set packing files (``.dat``).

Format: ``m n``; n integer profits; then for each of the m rows a line with its count k and
a line with k 1-based column indices. Rows are the elements, columns the sets: the set of
column i is the rows that list it.
"""

from __future__ import annotations

from optsched.io import register_reader
from optsched.io.numbers import parse_ints, require_whole_last_line, text_lines
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
    """The rows are read line by line: a row's count on a line of its own, its k indices on the
    next (every file of the library is laid out so), so a row with one index too few or too many
    is an error instead of shifting every later row onto the wrong elements."""
    require_whole_last_line(text)
    lines = [line.split() for line in text_lines(text) if line.strip()]
    tokens = [t for line in lines for t in line]
    m, n = _ints(tokens, 0, 2, "the header 'm n'")
    if m < 1 or n < 1:
        raise ValueError(f"delorme: header needs m >= 1 and n >= 1, got m={m} n={n}")
    profits = _ints(tokens, 2, n, "the profits")
    at, used = 0, 0  # the line where the rows start: the profits end at a line's end
    while used < n + 2:
        used += len(lines[at])
        at += 1
    if used != n + 2:
        raise ValueError(f"delorme: the line of the last profit holds {used - n - 2} more token(s)")
    sets: list[list[int]] = [[] for _ in range(n)]
    for row in range(m):
        if at >= len(lines):
            raise ValueError(f"delorme: file ends before row {row + 1} (of {m})")
        if len(lines[at]) != 1:
            raise ValueError(f"delorme: row {row + 1}: expected its count alone on a line, got {len(lines[at])} tokens")
        (k,) = _ints(lines[at], 0, 1, f"the count of row {row + 1}")
        at += 1
        if k < 0 or k > n:
            raise ValueError(f"delorme: row {row + 1} has count {k} outside 0..{n}")
        if k == 0:
            continue
        if at >= len(lines) or (at == len(lines) - 1 and len(lines[at]) < k):
            found = 0 if at >= len(lines) else len(lines[at])
            raise ValueError(f"delorme: file ends inside row {row + 1} (its line lists {found} of its {k} columns)")
        if len(lines[at]) != k:
            raise ValueError(f"delorme: row {row + 1} has count {k} but its line lists {len(lines[at])} columns")
        cols = _ints(lines[at], 0, k, f"row {row + 1}")
        at += 1
        for c in cols:
            if not 1 <= c <= n:
                raise ValueError(f"delorme: row {row + 1} names column {c} outside 1..{n}")
            if sets[c - 1] and sets[c - 1][-1] == row:
                raise ValueError(f"delorme: row {row + 1} lists column {c} twice")
            sets[c - 1].append(row)
    if at != len(lines):
        raise ValueError(f"delorme: {sum(map(len, lines[at:]))} unexpected tokens after row {m}")
    return [SetPacking(n_elements=m, sets=sets, weights=profits)]
