"""Bounded redraws (``optsched.sampling``) up to their last allowed round, and the sweep store's
refusal of a part whose row is cut short."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from optsched.sampling import MAX_REDRAWS, redraw_entries, redraw_until
from optsched.sweep.store import Store


def _accepting_on_round(accept_round: int) -> tuple[list[int], Callable[[int], np.ndarray]]:
    calls = [0]

    def draw(k: int) -> np.ndarray:
        calls[0] += 1
        return np.full(k, 1.0 if calls[0] >= accept_round else 0.0)

    return calls, draw


def test_redraw_entries_accepts_a_fix_on_the_last_allowed_round() -> None:
    """redraw_entries: entries made acceptable by the MAX_REDRAWS-th redraw are returned, not refused."""
    calls, draw = _accepting_on_round(MAX_REDRAWS)
    out = redraw_entries(np.zeros(3), lambda v: v < 0.5, draw, setting="floor", what="above the floor")
    np.testing.assert_array_equal(out, [1.0, 1.0, 1.0])
    assert calls[0] == MAX_REDRAWS


def test_redraw_entries_gives_up_one_round_later() -> None:
    """redraw_entries: entries still bad after MAX_REDRAWS redraws raise a ValueError naming the setting."""
    calls, draw = _accepting_on_round(MAX_REDRAWS + 1)
    with pytest.raises(ValueError, match=rf"^floor: 2 entries still not above the floor after {MAX_REDRAWS} redraws"):
        redraw_entries(np.zeros(2), lambda v: v < 0.5, draw, setting="floor", what="above the floor")
    assert calls[0] == MAX_REDRAWS


def test_redraw_entries_matches_redraw_until_at_the_bound() -> None:
    """sampling: both bounded loops accept a value first drawn acceptable on the MAX_REDRAWS-th draw."""
    calls, draw = _accepting_on_round(MAX_REDRAWS)
    assert redraw_until(lambda: float(draw(1)[0]), lambda v: v > 0.5, setting="s", what="w") == 1.0
    _, draw2 = _accepting_on_round(MAX_REDRAWS)
    np.testing.assert_array_equal(redraw_entries(np.zeros(1), lambda v: v < 0.5, draw2, setting="s", what="w"), [1.0])


def _part(store_dir: Path, name: str, text: str) -> Path:
    store_dir.mkdir(parents=True, exist_ok=True)
    path = store_dir / name
    path.write_text(text)
    return path


def test_store_refuses_a_part_with_a_row_cut_short(tmp_path: Path) -> None:
    """Store.rows: a part whose row has fewer cells than its header is damaged, named with the row number."""
    part = _part(tmp_path, "part-00000000000000000001-abc.csv", "key,welfare,status\nk1,3.5,done\nk2,4.0\n")
    with pytest.raises(ValueError, match=rf"{part.name} is a damaged store part \(row 3 is cut short or too long\)"):
        Store(tmp_path).rows()


def test_store_refuses_a_cut_row_even_beside_a_good_part(tmp_path: Path) -> None:
    """Store.rows: one damaged part fails the read; its rows are never taken as done runs."""
    store = Store(tmp_path)
    store.append([{"key": "k0", "welfare": "1.0", "status": "done"}])
    _part(tmp_path, "part-99999999999999999999-abc.csv", "key,welfare,status\nk1,3.5\n")
    with pytest.raises(ValueError, match=r"damaged store part \(row 2 is cut short"):
        store.keys()


def test_store_reads_an_empty_last_cell_as_empty_text(tmp_path: Path) -> None:
    """Store.rows: a row with every cell present, the last one empty, is whole and reads as ''."""
    _part(tmp_path, "part-00000000000000000001-abc.csv", "key,welfare,status\nk1,3.5,\n")
    assert Store(tmp_path).rows() == {"k1": {"key": "k1", "welfare": "3.5", "status": ""}}
