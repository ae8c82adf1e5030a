"""How a sweep's pending runs are cut into tasks: fixed batches, or batches that adapt to task length.

A task carries a fixed cost (pickling, a round trip to a worker, a store part written and
fsynced); a batch of several runs shares it. Too small a batch and short runs pay that cost
each; too large and the last batches leave workers idle, and an interruption loses more.
:class:`Batches` hands out the next batch when a worker is free: with ``--batch-size`` every
batch has that many runs; by default the first batch of each worker is one run (a probe),
and every later batch has as many runs as take about ``TARGET_BATCH_S`` seconds at the mean
run time measured so far (the rows' ``runtime_s``), between 1 and ``MAX_BATCH``, and never more
than a share of what is left that keeps two batches per worker for the end. The batching
changes neither the rows nor ``results.csv`` (sorted by key).
"""

from __future__ import annotations

import math
from typing import Sequence

from optsched.sweep.grid import SweepRun
from optsched.sweep.store import Row

TARGET_BATCH_S = 0.5
MAX_BATCH = 64


class Batches:
    """The pending runs, handed out batch by batch (:meth:`next`); :meth:`done` reports a
    finished batch's rows, whose run times size the batches after it."""

    def __init__(self, runs: Sequence[SweepRun], workers: int, fixed: int | None = None) -> None:
        self._runs = list(runs)
        self._at = 0
        self._workers = max(1, workers)
        self._fixed = fixed
        self._seconds = 0.0
        self._timed = 0
        self.sizes: list[int] = []

    @property
    def left(self) -> int:
        return len(self._runs) - self._at

    def next_size(self) -> int:
        if self._fixed is not None:
            return self._fixed
        if self._timed == 0:  # probes: one run per batch until a run time is known
            return 1
        per_run = self._seconds / self._timed
        wanted = TARGET_BATCH_S / per_run if per_run > 0 else MAX_BATCH
        balance = math.ceil(self.left / (2 * self._workers))
        return max(1, min(MAX_BATCH, balance, int(wanted)))

    def next(self) -> list[SweepRun] | None:
        """The next batch, or None when every run has been handed out."""
        if self.left == 0:
            return None
        size = min(self.next_size(), self.left)
        batch = self._runs[self._at:self._at + size]
        self._at += size
        self.sizes.append(size)
        return batch

    def done(self, rows: Sequence[Row]) -> None:
        for row in rows:
            try:
                seconds = float(row.get("runtime_s", "") or "nan")
            except ValueError:
                continue
            if math.isfinite(seconds):
                self._seconds += seconds
                self._timed += 1
