"""Bounded rejection sampling: every "redraw until acceptable" loop of the generators.

A rejection loop whose acceptance probability a setting can drive to zero (``edge_prob =
1e-300`` leaves an ESDP graph without a channel; a truncated normal whose floor lies far
above its mean) would spin forever. These helpers redraw at most :data:`MAX_REDRAWS` times
and then raise a ``ValueError`` naming the setting. Up to that bound they draw exactly what
the unbounded loop drew, so seeded results are unchanged.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import numpy as np

MAX_REDRAWS = 1000  # at an acceptance probability of 1 % the bound is hit once in ~23000 calls

T = TypeVar("T")


def redraw_until(draw: Callable[[], T], ok: Callable[[T], bool], *, setting: str, what: str) -> T:
    """The first of at most :data:`MAX_REDRAWS` draws that is ``ok``; ``what`` says what
    the rejected draws lacked (``"a channel"``)."""
    for _ in range(MAX_REDRAWS):
        value = draw()
        if ok(value):
            return value
    raise ValueError(f"{setting}: {MAX_REDRAWS} draws in a row had no {what}; choose a less extreme {setting}")


def redraw_entries(
    values: np.ndarray, bad: Callable[[np.ndarray], np.ndarray], draw: Callable[[int], np.ndarray], *,
    setting: str, what: str,
) -> np.ndarray:
    """``values`` with every entry where ``bad`` holds redrawn (``draw(k)`` gives k new
    entries), in at most :data:`MAX_REDRAWS` rounds; ``what`` describes an accepted entry."""
    mask = bad(values)
    for _ in range(MAX_REDRAWS):
        if not mask.any():
            return values
        values[mask] = draw(int(mask.sum()))
        mask = bad(values)
    if not mask.any():
        return values
    raise ValueError(f"{setting}: {int(mask.sum())} entries still not {what} after {MAX_REDRAWS} redraws; "
                     f"choose a less extreme {setting}")
