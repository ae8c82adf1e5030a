"""``optsched bench`` rules its module docstring states, checked on small runs and on synthetic
frames with numbers worked out by hand: the instance seed, the ``seed`` column, which sizes a
cut blocks, the slow-backend cut by the median, per-size medians, the overview table's
"largest n" and "/ fastest exact", and the time unit of the tables (mutants BC48, BC49, BC51,
BC52, BC53, BC54, BC55, BC59)."""

from __future__ import annotations

import dataclasses
import itertools
import zlib

import numpy as np
import pandas as pd
import pytest

from optsched.bench import (
    BenchConfig,
    _Cuts,
    generated_instances,
    overview_table,
    per_size_medians,
    run_instance,
)
from optsched.generators import generate


def small_cfg(**kw: object) -> BenchConfig:
    settings = {"quick": True, "models": ("set_packing",), "backends": ("greedy",), "use_files": False,
                "capture_papers": False, "per_size": 2, "repeats": 1, "sizes": {"set_packing": (10,)}}
    return BenchConfig(**{**settings, **kw})  # type: ignore[arg-type]


def test_each_generated_instance_is_drawn_from_seed_kind_size_and_index() -> None:
    """Rule (bench docstring): ``instances`` random instances per size are drawn from
    ``default_rng([seed, crc32(kind), size, i])``: recomputed here, and the instances of one size
    differ (mutant BC52 left ``i`` out: "3 instances per size" were copies of one)."""
    cfg = small_cfg(per_size=3, seed=4)
    insts = list(generated_instances(cfg))
    assert [i.name for i in insts] == [f"set_packing-n10-i{i}" for i in range(3)]
    for i, inst in enumerate(insts):
        expected = generate("set_packing", 10, np.random.default_rng([4, zlib.crc32(b"set_packing"), 10, i]))
        assert inst.model.to_dict() == expected.to_dict()
    assert len({repr(inst.model.to_dict()) for inst in insts}) == 3


def test_the_seed_column_names_the_instances_own_seed() -> None:
    """Rule (bench docstring: bench.csv holds ``seed``; instances come from
    ``[seed, crc32(kind), size, i]``): each row's seed is that instance's seed sequence, from which
    the instance is drawn again (mutant BC51 wrote the bench's seed alone, ``0``, which names no
    instance)."""
    cfg = small_cfg(seed=0)
    for i, inst in enumerate(generated_instances(cfg)):
        rows = run_instance(inst, cfg, _Cuts(), versions="")
        assert rows and {r["seed"] for r in rows} == {f"0-{zlib.crc32(b'set_packing')}-10-{i}"}
        parts = [int(x) for x in rows[0]["seed"].split("-")]
        again = generate("set_packing", 10, np.random.default_rng(parts))
        assert again.to_dict() == inst.model.to_dict()


def test_a_cut_blocks_only_larger_sizes() -> None:
    """Rule (bench docstring): a backend that hits the time limit "is not run at larger sizes of
    the same model"; the other instances of the size it stopped at still run it (mutant BC48
    blocked that size too: instance i1 of the size was never run)."""
    cuts = _Cuts()
    cuts.add("set_packing", "highs", 30, "hit the limit")
    assert not cuts.blocked("set_packing", "highs", 10)
    assert not cuts.blocked("set_packing", "highs", 30)
    assert cuts.blocked("set_packing", "highs", 31)
    assert not cuts.blocked("set_packing", "cpsat", 60)  # other backends and kinds are untouched
    assert not cuts.blocked("budgeted_ip", "highs", 60)


def test_a_backend_without_time_limits_is_cut_by_its_median_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule (bench docstring): "A backend without time-limit support whose *median* runtime on an
    instance exceeds the limit is likewise not run at larger sizes." Runtimes 0.01, 5.0, 0.01 s
    against a 1 s limit have median 0.01 s: no cut; 5.0, 5.0, 0.01 has median 5 s: a cut (mutant
    BC49 used the largest runtime, cutting greedy on one slow repeat)."""
    from optsched import bench

    real = bench._timed_solve
    for times, cut in (([0.01, 5.0, 0.01], False), ([5.0, 5.0, 0.01], True)):
        fake = itertools.cycle(times)

        def timed(model, backend, limit, options=None, fake=fake):  # type: ignore[no-untyped-def]
            res, cpu = real(model, backend, limit, options)
            return dataclasses.replace(res, runtime_s=next(fake)), cpu

        monkeypatch.setattr(bench, "_timed_solve", timed)
        cfg = small_cfg(repeats=3, time_limit=1.0, per_size=1)
        cuts = _Cuts()
        run_instance(next(generated_instances(cfg)), cfg, cuts, versions="")
        assert (("set_packing", "greedy") in cuts.above) is cut, (times, cuts.above)


def test_per_size_runtime_is_the_median_over_instances_of_the_median_over_repeats() -> None:
    """Rule (per_size_medians' docstring, bench docstring "Runtime figures are medians over the
    rounds (and over the instances of a size)"): by hand, instance medians 0.010 (0.010, 0.009,
    0.012), 0.011 and 0.500 give 0.011 for the size (mutant BC53 took the mean over instances:
    0.1737)."""
    rows = [("i0", 0.010), ("i0", 0.009), ("i0", 0.012), ("i1", 0.011), ("i2", 0.500)]
    df = pd.DataFrame([{"model": "set_packing", "source": "generated", "instance": inst, "size": 10,
                        "backend": "highs", "runtime_s": t} for inst, t in rows])
    out = per_size_medians(df)
    assert len(out) == 1
    assert float(out["runtime_s"].iloc[0]) == pytest.approx(0.011)


def _overview_rows() -> pd.DataFrame:
    # (size, backend, exact, runtime): two exact backends, one heuristic, sizes 10 and 30
    times = {(10, "highs"): 0.002, (10, "cpsat"): 0.004, (10, "greedy"): 0.001,
             (30, "highs"): 0.020, (30, "cpsat"): 0.010, (30, "greedy"): 0.005}
    return pd.DataFrame([{"model": "set_packing", "source": "generated", "instance": f"set_packing-n{n}-i0",
                          "size": n, "backend": b, "exact": b != "greedy", "runtime_s": t,
                          "gap_to_best_bound": 0.0, "termination": "optimal" if b != "greedy" else "feasible"}
                         for (n, b), t in times.items()])


def test_the_overview_reports_each_backend_at_its_largest_size_against_the_fastest_exact_there() -> None:
    """Rule (overview_table's docstring): one row per (model, backend): runtime at the largest
    generated size, its ratio to the fastest exact backend there. By hand at n = 30: cpsat 10 ms
    is the fastest exact, so cpsat 1x, highs 20/10 = 2x, greedy 5/10 = 0.5x (mutants BC54 reported
    n = 10, the smallest; BC55 divided by the slowest exact: cpsat 0.5x, highs 1x)."""
    cells = {}
    for line in overview_table(_overview_rows()):
        if line.startswith("| set_packing"):
            parts = [c.strip() for c in line.strip("|").split("|")]
            cells[parts[1]] = parts[3:6]  # largest n, runtime there, / fastest exact
    assert cells == {"highs": ["30", "20.0 ms", "2x"], "cpsat": ["30", "10.0 ms", "1x"],
                     "greedy": ["30", "5.0 ms", "0.5x"]}


@pytest.mark.parametrize("seconds, text", [(1.5, "1.50 s"), (7.2, "7.20 s"), (1.0, "1.00 s"), (0.25, "250.0 ms"),
                                           (2e-4, "200 us")])
def test_times_of_a_second_or_more_are_printed_in_seconds(seconds: float, text: str) -> None:
    """Rule (the tables' unit ladder in ``_fmt_time``: us below 1 ms, ms below 1 s, seconds
    from 1 s on): 1.5 s reads "1.50 s" (mutant BC59 moved the step to 10 s: "1500.0 ms")."""
    from optsched.bench import _fmt_time

    assert _fmt_time(seconds) == text
