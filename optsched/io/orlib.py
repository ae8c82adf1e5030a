"""OR-Library multidimensional 0-1 knapsack files (J. E. Beasley) as ``budgeted_ip`` models.

Two layouts, told apart by the first token:

* mknap1 / mknapcb*: the number of instances, then per instance ``n m opt``, n profits,
  m rows of n weights, m capacities (``opt`` is 0 where unknown).
* mknap2: a free-text header, then per instance a ``problem NAME.DAT`` line, ``m n``,
  n profits, m capacities, the m x n weights and the optimum (0 unknown, as above). Text after
  ``//`` is a comment.

Problem: max p.x s.t. W x <= b, x binary (no budget, no mask).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from optsched.io import register_reader
from optsched.io.numbers import parse_count, parse_floats, require_whole_last_line, text_lines
from optsched.models.base import Model
from optsched.models.budgeted_ip import BudgetedIP


@dataclass(frozen=True)
class OrlibInstance:
    """One instance: its name, the model, and the optimum the file states (None if unknown)."""

    name: str
    model: BudgetedIP
    optimum: float | None


class _Tokens:
    def __init__(self, text: str, where: str) -> None:
        self.items = text.split()
        self.pos = 0
        self.where = where

    def take(self, count: int) -> np.ndarray:
        if self.pos + count > len(self.items):
            raise ValueError(f"file: {self.where}: ends early (needs {count} more numbers)")
        chunk = self.items[self.pos : self.pos + count]
        self.pos += count
        try:
            return np.array(parse_floats(chunk))
        except ValueError as exc:
            raise ValueError(f"file: {self.where}: {exc}") from None

    def expect_end(self, after: str) -> None:
        """Wrong counts show up as numbers left over: reject them instead of ignoring them."""
        extra = len(self.items) - self.pos
        if extra:
            raise ValueError(f"file: {self.where}: {extra} unexpected token(s) after {after}")

    def size(self, what: str) -> int:
        """A count: an integer token (``3.0`` and ``1e1`` are refused, as in the other formats)."""
        if self.pos >= len(self.items):
            raise ValueError(f"file: {self.where}: ends early (needs {what})")
        self.pos += 1
        return parse_count(self.items[self.pos - 1], f"file: {self.where}", what, minimum=1)

    def optimum(self) -> float | None:
        """The stated optimum: 0 for unknown (Beasley's files), never negative (profits are >= 0)."""
        value = float(self.take(1)[0])
        if value < 0:
            raise ValueError(f"file: {self.where}: the stated optimum {value:g} is negative (profits are >= 0; 0 means unknown)")
        return value if value > 0 else None


def _parse_beasley(text: str) -> list[OrlibInstance]:
    tok = _Tokens(text, "mknap")
    count = tok.size("the number of instances")
    out = []
    for k in range(1, count + 1):
        tok.where = f"instance {k}"
        n, m = tok.size("n"), tok.size("m")
        opt = tok.optimum()
        profits = tok.take(n)
        weights = tok.take(m * n).reshape(m, n)
        capacity = tok.take(m)
        out.append(OrlibInstance(f"instance-{k}", _model(tok, profits, weights, capacity), opt))
    tok.where = "mknap"
    tok.expect_end(f"the {count} instance(s) the file's count announces")
    return out


_PROBLEM = re.compile(r"^\s*problem\s+(\S+)", re.MULTILINE | re.IGNORECASE)


def _parse_mknap2(text: str) -> list[OrlibInstance]:
    """``text`` with line feeds only (:func:`read_orlib`). Comments go before the problem lines
    are looked for: one right after a name was read as part of it ('A.DAT//'), its text as m."""
    text = "\n".join(line.split("//")[0] for line in text.split("\n"))
    heads = list(_PROBLEM.finditer(text))
    # the preamble is free text between '+++' lines (its example instance comes with prose); a
    # block of numbers alone is an instance whose 'problem' line is misspelt (it was dropped silently)
    for block in re.split(r"\+{3,}", text[: heads[0].start()]):
        lines = [line.split() for line in block.split("\n")]
        lines = [words for words in lines if words]
        if lines and all(_is_number(word) for words in lines for word in words):
            raise ValueError(f"file: an instance's numbers ({' '.join(lines[0])[:40]!r}) before the first "
                             "'problem NAME.DAT' line: a misspelt problem line?")
    out = []
    seen: dict[str, int] = {}
    for i, head in enumerate(heads):
        name = re.sub(r"\.DAT$", "", head.group(1), flags=re.IGNORECASE)
        body = text[head.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        body = "\n".join(line for line in body.split("\n") if not line.strip().startswith("+"))
        tok = _Tokens(body, name)
        m, n = tok.size("m"), tok.size("n")
        profits = tok.take(n)
        capacity = tok.take(m)
        weights = tok.take(m * n).reshape(m, n)
        opt = tok.optimum()  # as in mknap1: 0 unknown, a negative one refused (it came back as stated)
        tok.expect_end("the optimum (check m and n)")
        if name in seen:
            raise ValueError(f"file: problem {name}: the name is given twice (instances {seen[name]} and {i + 1})")
        seen[name] = i + 1
        out.append(OrlibInstance(name, _model(tok, profits, weights, capacity), opt))
    return out


def _model(tok: _Tokens, profits: np.ndarray, weights: np.ndarray, capacity: np.ndarray) -> BudgetedIP:
    """The instance's model; a field the model refuses is named with the instance."""
    try:
        return BudgetedIP(profits, weights, capacity)
    except ValueError as exc:
        raise ValueError(f"file: {tok.where}: {exc}") from None


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def read_orlib(text: str) -> list[OrlibInstance]:
    """Every instance of an OR-Library mknap file (either layout), with its stated optimum."""
    require_whole_last_line(text)
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    if re.fullmatch(r"[0-9]+", first):
        return _parse_beasley(text)
    lines = "\n".join(text_lines(text))  # a file of bare carriage returns had no problem line (^ follows a line feed)
    if _PROBLEM.search(lines):
        return _parse_mknap2(lines)
    raise ValueError(
        "file: neither an OR-Library mknap1/mknapcb file (starts with a count) "
        "nor mknap2 (has 'problem NAME.DAT' lines)"
    )


@register_reader(".txt")
def read_orlib_models(text: str) -> list[Model]:
    return [inst.model for inst in read_orlib(text)]
