"""Delorme-Gandibleux-Rodriguez weighted set packing files (``.dat``).

Format: ``m n``; n integer profits; then for each of the m rows a line with its count k and
a line with k 1-based column indices. Rows are the elements, columns the sets: the set of
column i is the rows that list it.
"""

from __future__ import annotations

import numpy as np

from optsched.io import register_reader
from optsched.io.numbers import parse_ints, require_whole_last_line, text_lines
from optsched.models.set_packing import MAX_ELEMENTS, MAX_SETS, SetFamily, SetPacking


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
    is an error instead of shifting every later row onto the wrong elements. The header is
    checked before anything else is read, and each row becomes an integer array as it is read
    (a list of Python objects per number took 3 GB for a 20 MB file)."""
    require_whole_last_line(text)
    lines = [line for line in text_lines(text) if line.strip()]
    tokens: list[str] = []
    at = 0  # the next line to read
    while len(tokens) < 2 and at < len(lines):
        tokens += lines[at].split()
        at += 1
    m, n = _ints(tokens, 0, 2, "the header 'm n'")
    if not (1 <= m <= MAX_ELEMENTS and 1 <= n <= MAX_SETS):
        raise ValueError(f"delorme: header needs 1 <= m <= {MAX_ELEMENTS} rows and 1 <= n <= {MAX_SETS} columns, "
                         f"got m={m} n={n}")
    while len(tokens) < n + 2 and at < len(lines):  # the profits end at a line's end
        tokens += lines[at].split()
        at += 1
    profits = _ints(tokens, 2, n, "the profits")
    if len(tokens) != n + 2:
        raise ValueError(f"delorme: the line of the last profit holds {len(tokens) - n - 2} more token(s)")
    parts: list[np.ndarray] = []
    for row in range(m):
        if at >= len(lines):
            raise ValueError(f"delorme: file ends before row {row + 1} (of {m})")
        count = lines[at].split()
        if len(count) != 1:
            raise ValueError(f"delorme: row {row + 1}: expected its count alone on a line, got {len(count)} tokens")
        (k,) = _ints(count, 0, 1, f"the count of row {row + 1}")
        at += 1
        if k < 0 or k > n:
            raise ValueError(f"delorme: row {row + 1} has count {k} outside 0..{n}")
        if k == 0:
            parts.append(np.zeros(0, dtype=np.int64))
            continue
        listed = lines[at].split() if at < len(lines) else []
        if at >= len(lines) or (at == len(lines) - 1 and len(listed) < k):
            raise ValueError(f"delorme: file ends inside row {row + 1} (its line lists {len(listed)} of its {k} columns)")
        if len(listed) != k:
            raise ValueError(f"delorme: row {row + 1} has count {k} but its line lists {len(listed)} columns")
        cols = np.array(_ints(listed, 0, k, f"row {row + 1}"), dtype=np.int64)
        at += 1
        _check_columns(cols, row, n)
        parts.append(cols - 1)
    if at != len(lines):
        raise ValueError(f"delorme: {sum(len(line.split()) for line in lines[at:])} unexpected tokens after row {m}")
    rows = np.repeat(np.arange(m, dtype=np.int64), [p.shape[0] for p in parts])  # each listed column's row
    return [SetPacking(n_elements=m, sets=SetFamily.from_pairs(m, n, np.concatenate(parts), rows), weights=profits)]


def _check_columns(cols: np.ndarray, row: int, n: int) -> None:
    """The first column of the row's line, in line order, that is out of 1..n or repeats an
    earlier one, named."""
    off = (cols < 1) | (cols > n)
    order = np.argsort(cols, kind="stable")
    repeat = np.zeros(cols.shape[0], dtype=bool)
    repeat[order[1:][cols[order][1:] == cols[order][:-1]]] = True  # every occurrence after the first
    bad = np.flatnonzero(off | repeat)
    if bad.size:
        c = cols[bad[0]]
        raise ValueError(f"delorme: row {row + 1} names column {c} outside 1..{n}" if off[bad[0]] else
                         f"delorme: row {row + 1} lists column {c} twice")
