"""OR-Library mknap reader (mknap1 / mknapcb layout and the mknap2 layout) and the exact
backends reaching the stated optima of ../shared/data/orlib."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import optsched
from optsched.io import load_instance, load_instances
from optsched.io.orlib import read_orlib
from optsched.result import Termination

SMALL = """2
 3 2 7
 4 3 2
 1 1 1
 2 1 1
 2 3
 2 1 0
 5 6
 1 1
 4
"""


def test_reader_on_a_small_file(tmp_path: Path) -> None:
    insts = read_orlib(SMALL)
    assert [i.optimum for i in insts] == [7.0, None]
    m = insts[0].model
    assert m.values.tolist() == [4, 3, 2] and m.weights.tolist() == [[1, 1, 1], [2, 1, 1]]
    assert m.capacity.tolist() == [2, 3]
    assert optsched.solve(m, "dp").objective == 7.0
    f = tmp_path / "tiny.txt"
    f.write_text(SMALL)
    assert len(load_instances(f)) == 2
    assert load_instance(f, 2).capacity.tolist() == [4]


@pytest.mark.parametrize(
    "text, message",
    [("2\n 3 2 7\n 4 3\n", "ends early"), ("1\n 3 x 7\n", "m: 'x' is not an integer"), ("hello world\n", "neither"),
     ("1\n 0 1 0\n", "must be >= 1, got 0"), ("1\n 1 1 0\n 1\n -1\n 1\n", "weights"),
     # a count written as a decimal was taken as whole; a negative stated optimum read as "unknown"
     ("1\n 3.0 1 0\n 1 2 3\n 1 1 1\n 2\n", "n: '3.0' is not an integer"),
     ("1\n 3 1 -5\n 1 2 3\n 1 1 1\n 2\n", "the stated optimum -5 is negative")],
)
def test_reader_errors_are_value_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_orlib(text)


def test_a_field_the_model_refuses_and_a_repeated_name_are_named_with_their_instance(shared_data: Path) -> None:
    """A negative capacity in instance 7 said only "capacity: contains a negative value"; two
    mknap2 instances of one name read silently (the second shadowing the first by name)."""
    mknap1 = (shared_data / "orlib" / "mknap1.txt").read_text()
    assert mknap1.count(" 800 650 550 550 650\n") == 1
    with pytest.raises(ValueError, match="file: instance 7: capacity: contains a negative value"):
        read_orlib(mknap1.replace(" 800 650 550 550 650\n", " -800 650 550 550 650\n"))
    mknap2 = (shared_data / "orlib" / "mknap2.txt").read_text()
    with pytest.raises(ValueError, match="file: problem WEING1: the name is given twice \\(instances 3 and 4\\)"):
        read_orlib(mknap2.replace("problem WEING2.DAT", "problem WEING1.DAT", 1))


def _known(shared: Path, name: str) -> dict[str, float]:
    with open(shared / "orlib" / name) as fh:
        return {row["instance"]: float(row["highs_optimum"] if "highs_optimum" in row else row["highs_value"])
                for row in csv.DictReader(fh)}


@pytest.mark.parametrize("backend", ["highs", "cpsat", "pyomo"])
def test_exact_backends_reach_mknap1_optima(shared_data: Path, backend: str) -> None:
    insts = read_orlib((shared_data / "orlib" / "mknap1.txt").read_text())
    assert [i.optimum for i in insts] == [3800, 8706.1, 4015, 6120, 12400, 10618, 16537]
    for inst in insts:
        r = optsched.solve(inst.model, backend)
        assert r.termination is Termination.OPTIMAL, (inst.name, r.extra)
        assert r.objective == pytest.approx(inst.optimum, rel=1e-9)


def test_mknap2_layout_is_detected_and_parsed(shared_data: Path) -> None:
    insts = read_orlib((shared_data / "orlib" / "mknap2.txt").read_text())
    known = {k.removeprefix("mknap2.txt,"): v for k, v in _known(shared_data, "KNOWN_OPTIMA_mknap1_mknap2.csv").items()}
    assert len(insts) == 48
    assert {i.name: i.optimum for i in insts} == {k: v for k, v in known.items() if not k.startswith("mknap1")}
    weing1 = next(i for i in insts if i.name == "WEING1")
    assert weing1.model.weights.shape == (2, 28) and weing1.model.capacity.tolist() == [600, 600]
    for inst in insts:
        if inst.model.n_items <= 30:  # the small ones here; the rest are in the slow test below
            r = optsched.solve(inst.model, "highs")
            assert r.objective == pytest.approx(inst.optimum, rel=1e-9), inst.name


@pytest.mark.slow
def test_highs_reaches_every_mknap2_and_mknapcb1_optimum(shared_data: Path) -> None:
    for inst in read_orlib((shared_data / "orlib" / "mknap2.txt").read_text()):
        assert optsched.solve(inst.model, "highs").objective == pytest.approx(inst.optimum, rel=1e-9), inst.name
    cb = read_orlib((shared_data / "orlib" / "mknapcb1.txt").read_text())
    known = _known(shared_data, "VERIFIED_OPTIMA_mknapcb1.csv")
    for k, inst in enumerate(cb[:5]):
        r = optsched.solve(inst.model, "highs")
        assert r.objective == pytest.approx(known[f"mknapcb1-{k:02d}"], rel=1e-9)


def test_mknapcb1_parses(shared_data: Path) -> None:
    cb = read_orlib((shared_data / "orlib" / "mknapcb1.txt").read_text())
    assert len(cb) == 30 and all(i.model.weights.shape == (5, 100) for i in cb)
    assert all(i.optimum is None for i in cb)


def test_both_layouts_read_a_stated_optimum_of_0_as_unknown_and_refuse_a_negative_one() -> None:
    """The mknap2 layout read 0 as the optimum 0.0 and took a negative optimum as stated, where
    mknap1 reads 0 as unknown and refuses a negative one (profits are >= 0)."""
    one = "problem A.DAT\n1 2\n3 4\n5\n1 1\n{opt}\n"
    assert read_orlib(one.format(opt=0))[0].optimum is None
    assert read_orlib(one.format(opt=7))[0].optimum == 7.0
    with pytest.raises(ValueError, match="file: A: the stated optimum -5 is negative"):
        read_orlib(one.format(opt=-5))
