"""Robustness of the foundation: degenerate instances through every backend, time limits,
atomic result files, deterministic outputs."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import optsched
from optsched.models.set_packing import SetPacking
from optsched.result import Termination
from optsched.artifacts import write_csv, write_text

SET_PACKING_BACKENDS = ["greedy", "cpsat", "highs", "brute_force"]


@st.composite
def degenerate_packings(draw) -> SetPacking:
    """Includes empty sets, all-zero weights, ties, a single element, duplicated sets."""
    m = draw(st.integers(1, 6))
    n = draw(st.integers(1, 9))
    base = [draw(st.lists(st.integers(0, m - 1), unique=True, max_size=m)) for _ in range(n)]
    if draw(st.booleans()):
        base.append(list(base[0]))  # a duplicate set
    pool = draw(st.sampled_from([[0.0], [1.0], [0.0, 1.0], [0.0, 0.5, 2.0, 1e-9, 1e6]]))
    weights = [draw(st.sampled_from(pool)) for _ in base]
    return SetPacking(m, base, weights)


def check_set_packing_everywhere(model: SetPacking) -> None:
    results = {b: optsched.solve(model, b) for b in SET_PACKING_BACKENDS}
    for b, r in results.items():
        assert r.termination in (Termination.OPTIMAL, Termination.FEASIBLE), (b, r.termination, r.extra)
        assert model.is_feasible(r.solution), b
    opt = results["brute_force"].objective
    for b in ("cpsat", "highs"):
        assert abs(results[b].objective - opt) <= 1e-6 * max(1.0, opt), b
    assert results["greedy"].objective * np.sqrt(model.n_elements) >= opt * (1 - 1e-12)


@settings(max_examples=120)
@given(degenerate_packings())
def test_set_packing_degenerate_instances_every_backend(model: SetPacking) -> None:
    check_set_packing_everywhere(model)


@pytest.mark.slow
def test_set_packing_fuzz_long_run() -> None:
    """10^4 random instances (sizes, densities, weight kinds) through every backend."""
    rng = np.random.default_rng(2024)
    for k in range(10_000):
        n, m = int(rng.integers(1, 13)), int(rng.integers(1, 10))
        model = SetPacking.random(rng, n, m, max_size=int(rng.integers(1, m + 1)), integer_weights=bool(k % 2))
        check_set_packing_everywhere(model)


def test_pyomo_time_limit_is_a_status() -> None:
    model = SetPacking.random(np.random.default_rng(1), n_sets=400, n_elements=150, max_size=6, integer_weights=True)
    res = optsched.solve(model, "pyomo", time_limit=0.05)
    assert res.termination in (Termination.TIME_LIMIT, Termination.OPTIMAL)
    if res.solution is not None:
        assert model.is_feasible(res.solution)


def test_atomic_write_leaves_old_file_on_failure(tmp_path: Path) -> None:
    import pandas as pd

    target = tmp_path / "out.csv"
    write_text(target, "old\n")

    class Boom(pd.DataFrame):
        def to_csv(self, *args, **kwargs):  # type: ignore[override]
            Path(args[0]).write_text("partial")
            raise OSError("disk full")

    with pytest.raises(OSError):
        write_csv(Boom({"a": ["text"]}), target)  # text: pandas writes it
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.csv"]  # no temporary file left behind


@st.composite
def numeric_frames(draw):
    import pandas as pd

    rows = draw(st.integers(1, 6))
    floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.1 + 0.2, -0.0, 1e-300, 1e20, 5.0])
    columns = {}
    for j in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["f", "i", "b"]))
        values = st.lists(floats if kind == "f" else st.integers(-10**12, 10**12) if kind == "i" else st.booleans(),
                          min_size=rows, max_size=rows)
        columns[f"c{j}_{kind}"] = np.array(draw(values), dtype={"f": np.float64, "i": np.int64, "b": bool}[kind])
    return pd.DataFrame(columns)


@given(numeric_frames())
@example(pd.DataFrame({"x": [np.nan, 1.0, np.nan, 2.0]}))
@settings(max_examples=150, deadline=None)
def test_csv_fast_path_writes_what_pandas_writes(df) -> None:
    """write_csv formats numeric frames itself: byte for byte what df.to_csv writes."""
    from optsched.artifacts import csv_text

    assert csv_text(df) == df.to_csv(index=False, lineterminator="\n")


@given(numeric_frames())
@example(pd.DataFrame({"x": [np.nan, 1.0, np.nan, 2.0]}))  # probe BM: one column, NaN written as a blank line
@settings(max_examples=150, deadline=None)
def test_a_csv_reads_back_as_the_numbers_written(tmp_path_factory, df) -> None:
    """Every float of a written CSV reads back as the same double (probe BJ's F4: 10 significant
    digits were kept, 0.1 + 0.2 read back as 0.3)."""
    import csv

    from optsched.artifacts import write_csv

    path = write_csv(df, tmp_path_factory.mktemp("csv") / "out.csv")
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for name in df.columns:
        if df[name].dtype.kind == "f":
            written = df[name].to_numpy()
            read = np.array([float(row[name]) if row[name] else np.nan for row in rows])
            assert np.array_equal(np.isnan(written), np.isnan(read)), name
            same = ~np.isnan(written)
            assert (written[same] == read[same]).all() and (np.signbit(written[same]) == np.signbit(read[same])).all(), name


def test_csv_fast_path_declines_what_it_cannot_format() -> None:
    import pandas as pd

    from optsched.artifacts import csv_text

    assert csv_text(pd.DataFrame({"a": ["x"]})) is None  # text
    assert csv_text(pd.DataFrame({"a,b": [1.0]})) is None  # a name pandas quotes
    assert csv_text(pd.DataFrame({"a": np.array([1.0], dtype=np.float32)})) is None
    assert csv_text(pd.DataFrame({"a": []})) is None


def test_json_models_round_trip() -> None:
    from optsched.models import model_from_dict

    model = SetPacking.random(np.random.default_rng(0), 6, 5)
    again = model_from_dict(model.to_dict())
    assert again.to_dict() == model.to_dict()
