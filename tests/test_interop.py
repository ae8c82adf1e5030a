"""Models in solver formats: every kind with a linear/quadratic form written as MPS and LP and read
back as a generic ``linear_program`` reaches the same optimum; users' own MPS/LP files are solved
by every backend whose form fits; malformed or unsupported files are one line, exit 2."""

from __future__ import annotations

import functools
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import optsched
from optsched.cli import main
from optsched.generators import generate
from optsched.io import load_instances
from optsched.io.model_files import write_model_file
from optsched.models.base import kind_specs, model_kinds
from optsched.models.linear_program import LinearProgram
from optsched.result import Termination
from optsched.solvers.registry import fitting_backends, get_backend

STANDARD_KINDS = sorted(k for k, cls in model_kinds().items() if "standard" in cls.FORMS and k != "linear_program")


@pytest.mark.parametrize("kind", STANDARD_KINDS)
@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_every_standard_kind_round_trips_through_mps_and_lp(kind: str, suffix: str, tmp_path: Path) -> None:
    for seed in range(3):
        model = generate(kind, 6, np.random.default_rng([seed, 41]))
        back = load_instances(write_model_file(model, tmp_path / f"{kind}{suffix}"))[0]
        assert back.name == "linear_program" and back.maximize == model.maximize
        a, b = optsched.solve(model, "highs"), optsched.solve(back, "highs")
        assert a.termination is b.termination is Termination.OPTIMAL
        assert b.objective == pytest.approx(a.objective, rel=1e-9, abs=1e-9)
        # the file's optimum maps back: the same vector is optimal for the original's form
        assert model.to_standard_form().n_vars == back.n_vars


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_every_fuzz_variant_reads_back_as_written(suffix: str, tmp_path: Path) -> None:
    """What HiGHS writes the readers take: a column in no objective term and no row (a zero
    weight) is listed only under bounds, and the objective of 20 variables or more wraps its
    quadratic part over lines; both were refused (a variable 'in no objective or constraint', 'no
    term after +')."""
    for kind, spec in kind_specs().items():
        if spec.fuzz is None or "standard" not in model_kinds()[kind].FORMS:
            continue
        for variant in spec.fuzz_variants:
            for seed in range(3):
                model = spec.fuzz(np.random.default_rng(seed), variant)
                form = model.to_standard_form()
                try:
                    path = write_model_file(model, tmp_path / f"m{suffix}")
                except ValueError:  # values HiGHS writes as infinite are not exported (a test below)
                    continue
                back = load_instances(path)[0]
                assert back.to_standard_form().n_vars == form.n_vars, (kind, variant, seed)
                assert np.array_equal(back.c, form.c), (kind, variant, seed)  # in order, every digit
    wide = generate("capacity_projection", 20, np.random.default_rng(0))
    back = load_instances(write_model_file(wide, tmp_path / f"wide{suffix}"))[0]
    assert back.n_vars == wide.to_standard_form().n_vars


def test_users_files_are_solved_by_every_fitting_backend(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = generate("budgeted_ip", 12, np.random.default_rng(3))
    assert main(["export", "-", "--format", "mps", "--out", str(tmp_path / "x.mps")]) == 2  # no such file
    capsys.readouterr()
    src = tmp_path / "m.json"
    src.write_text(json.dumps(model.to_dict()))
    assert main(["export", str(src), "--format", "mps", "--out", str(tmp_path / "m.mps")]) == 0
    back = load_instances(tmp_path / "m.mps")[0]
    names = optsched.backends(back)
    assert {"highs", "cpsat", "scip"} <= set(names)  # 0-1 with whole data
    table = optsched.compare(back, names)
    assert (table["termination"] == "optimal").all()
    assert np.allclose(table["objective"], optsched.solve(model, "highs").objective)
    assert main(["export", str(src), "--format", "json", "--out", str(tmp_path / "again.json")]) == 0
    assert optsched.model_from_dict(json.loads((tmp_path / "again.json").read_text())).to_dict() == model.to_dict()


@pytest.mark.parametrize(("upper", "integrality"), [(5.0, [1, 0]), (-1.0, [1, 0]), (5.0, [1, 1]), (-1.0, [1, 1]),
                                                   (5.0, [0, 0]), (-1.0, [0, 0])])
def test_pyomo_solves_programs_with_an_empty_row(upper: float, integrality: list[int]) -> None:
    """Probe BR: a row with no entries became Pyomo's Constraint.Feasible, kept as a trivial
    expression that Pyomo's SCIP interface cannot translate: the default route of a mixed
    program (scip_direct) ended error (NotImplementedError) where scip and cvxpy say 6. A
    satisfied empty row is left out; one that 0 misses (0 <= -1) stays as 0 x_0, infeasible."""
    model = LinearProgram(c=[1.0, 2.0], A=[[1.0, 1.0], [0.0, 0.0]], row_lower=[None, None], row_upper=[3.5, upper],
                          col_lower=[0, 0], col_upper=[2, 2.5], integrality=integrality, sense="max")
    truth = optsched.solve(model, "scip")
    r = optsched.solve(model, "pyomo")
    assert r.termination is truth.termination, (r.termination, r.message, truth.termination)
    if upper < 0:
        assert r.termination is Termination.INFEASIBLE
    else:
        assert r.termination is Termination.OPTIMAL and r.objective == pytest.approx(truth.objective, rel=1e-9)


def test_pyomo_refuses_highs_for_a_mixed_program_naming_the_option() -> None:
    """Probe BR: solver=highs on a program mixing integer and continuous columns passed prepare and
    ended error at every solve; it is refused as the highs backend refuses it (ValueError)."""
    mixed = LinearProgram(c=[1.0, 2.0], A=[[1.0, 1.0]], row_lower=[None], row_upper=[3.5], col_lower=[0, 0],
                          col_upper=[2, 2.5], integrality=[1, 0], sense="max")
    with pytest.raises(ValueError, match="option solver: HiGHS returns wrong 'optimal' answers on programs mixing"):
        optsched.solve(mixed, "pyomo", solver="highs")
    assert "pyomo" in optsched.backends(mixed)  # its default route (scip_direct) fits


def test_mixed_integer_files_go_to_scip_not_highs(tmp_path: Path) -> None:
    """HiGHS 1.14 (and 1.16, more rarely) gave wrong 'optimal' answers on programs mixing integer
    and continuous columns (tests/test_fuzz.py found it): the highs backend refuses them with that reason, scip solves."""
    (tmp_path / "mixed.lp").write_text(
        "Maximize\n obj: 4.503 x0 - 0.756 x1 + 2.262 x2 + 2.934 x3 + 4.6 x4 + 2.66 x5 - 1.066 x6\n"
        "Subject To\n r0: 2.905 x0 - 0.677 x1 + 1.429 x2 + 0.506 x3 + 2.208 x4 - 0.302 x5 + 2.487 x6 <= 15.02\n"
        "Bounds\n x0 <= 3.18\n x1 <= 4.61\n x2 <= 2.91\n x3 <= 2.72\n x4 <= 4.16\n x5 <= 4.94\n x6 <= 2.48\n"
        "General\n x0 x1 x4 x5\nEnd\n")
    model = load_instances(tmp_path / "mixed.lp")[0]
    with pytest.raises(ValueError, match="mixing integer and continuous"):
        optsched.solve(model, "highs")
    r = optsched.solve(model)
    assert r.backend == "scip" and r.termination is Termination.OPTIMAL
    assert r.objective == pytest.approx(47.62094897130861, rel=1e-9)  # HiGHS 1.14 said 46.5939


@pytest.mark.parametrize("text, words", [
    ("Maximize\n obj: x + y\nSubject To\n c1: x^2 + y <= 3\nEnd\n", "cannot read"),
    ("Minimize\n obj: x + y\nSubject To\n c1: x + y >= 3\nBounds\n x <= 4\nSemi-continuous\n x\nEnd\n",
     "semi-continuous"),
])
def test_unsupported_files_are_one_line_exit_2(text: str, words: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.lp").write_text(text)
    assert main(["solve", str(tmp_path / "bad.lp")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("optsched: error:") and words in err[0]


BASE_MPS = """NAME        T
OBJSENSE
  MAX
ROWS
 N  Obj
 L  r0
COLUMNS
    x0        Obj       3
    x0        r0        2
    x1        Obj       5
    x1        r0        4
RHS
    RHS_V     r0        5
BOUNDS
 UP BND       x0        1
 UP BND       x1        1
ENDATA
"""
BASE_LP = "max\n obj: 3 x0 + 5 x1\nst\n r0: 2 x0 + 4 x1 <= 5\nbounds\n x0 <= 1\n x1 <= 1\nend\n"


@pytest.mark.parametrize("suffix, old, new, words", [
    # HiGHS's own readers took each of these and read something else (found by fuzzing the files)
    (".mps", "    x1        r0        4\nRHS", "    x1", "(row, value) pairs"),  # cut inside COLUMNS
    (".mps", "ENDATA\n", "", "no ENDATA"),
    (".mps", "r0        5", "r0        nan", "'nan' is not a number"),
    (".mps", "r0        5", "r0        0x10", "'0x10' is not a number"),
    (".mps", "r0        5", "r0        1_000", "'1_000' is not a number"),
    (".mps", "r0        5", "r0        1e400", "out of the float range"),
    (".mps", "r0        5", "r0        e5", "'e5' is not a number"),
    (".mps", "RHS_V     r0", "RHS_V     r9", "row 'r9' is not declared"),
    (".mps", "x0        r0        2", "x0        zz        2", "row 'zz' is not declared"),
    (".mps", "UP BND       x1", "UP BND       x7", "column 'x7' has no COLUMNS entry"),
    (".mps", "x0        Obj       3", "x0        Obj       3\x00", "NUL byte"),
    (".lp", "end\n", "", "no 'end' line"),
    (".lp", "3 x0", "nan x0", "'nan' is not a number"),
    (".lp", "3 x0", "0x10 x0", "'0x10' is not a number"),
    (".lp", "<= 5", "<= 1e400", "out of the float range"),
    # a third pair on a line, a repeated objective variable, a constant on a constraint's left
    # side: HiGHS dropped the pair and the constant and kept only the variable's last coefficient
    (".mps", "    x0        Obj       3\n    x0        r0        2", "    x0   Obj   3   r0   2   Obj   1",
     "one or two (row, value) pairs"),
    (".mps", "RHS_V     r0        5", "RHS_V     r0        5   r0   1   Obj   2", "one or two (row, value) pairs"),
    (".lp", "3 x0 + 5 x1", "2 x0 + 5 x1 + x0", "variable 'x0' appears twice in the objective"),
    (".lp", "2 x0 + 4 x1 <= 5", "2 x0 + 4 x1 + 1 <= 6", "a constant (1) on a constraint's left side"),
    (".lp", "2 x0 + 4 x1 <= 5", "-1 + 2 x0 + 4 x1 <= 4", "a constant (1) on a constraint's left side"),
    # an operator with no term (the objective gained a constant 1), a vertical tab or form feed
    # (HiGHS kept it in the name: a new variable), a no-break space (a row name whose right-hand
    # side was dropped), a second objective sense (HiGHS kept the last)
    (".lp", "3 x0 + 5 x1", "3 x0 + 5 x1 +", "no term after '+'"),
    (".lp", "3 x0 + 5 x1", "3 x0 + 5 x1 -", "no term after '-'"),
    (".lp", "3 x0", "3\vx0", "U+000B"),
    (".lp", "3 x0", "3\fx0", "U+000C"),
    (".mps", "RHS_V     r0        5", "RHS_V     r0\u00a0       5", "U+00A0"),
    (".mps", "    x1        Obj       5", "    x1\u2003      Obj       5", "U+2003"),
    (".mps", "OBJSENSE\n  MAX", "OBJSENSE\n  MAX\n  MIN", "a second objective sense"),
])
def test_model_files_that_hold_something_else_than_they_say_are_refused(suffix: str, old: str, new: str, words: str,
                                                                         tmp_path: Path) -> None:
    base = BASE_MPS if suffix == ".mps" else BASE_LP
    good, bad = tmp_path / f"good{suffix}", tmp_path / f"bad{suffix}"
    good.write_text(base)
    (model,) = load_instances(good)
    assert optsched.solve(model, "highs").objective == pytest.approx(6.75)  # x = (1, 3/4)
    assert old in base
    bad.write_text(base.replace(old, new))
    with pytest.raises(ValueError, match=f"^file: bad{suffix}: "):
        load_instances(bad)
    try:
        load_instances(bad)
    except ValueError as exc:
        assert words in str(exc)


@pytest.mark.parametrize("suffix, old, new", [
    # valid files the checks must not refuse (HiGHS reads each to the same model)
    (".mps", "    RHS_V     r0        5", "    r0        5"),  # RHS without a set name
    (".mps", " UP BND       x0        1", " UP x0        1"),  # a bound without a set name
    (".mps", " UP BND       x1        1", " UP BND       x1        1\n MI BND       x1        0"),
    (".mps", "    x0        Obj       3\n    x0        r0        2", "x0 Obj 3 r0 2"),  # column 1, pairs
    (".mps", "OBJSENSE\n  MAX", "OBJSENSE MAXIMIZE"),  # HiGHS itself read this as a minimisation
    (".mps", "    x0        Obj       3", "    MARKER                 'MARKER'                 'INTORG'\n"
                                         "    x0        Obj       3"),
    (".lp", "3 x0 + 5 x1", "3x0+5x1"),
    (".lp", "2 x0 + 4 x1 <= 5", "2.0e+00 x0+4x1<=5"),
    (".lp", "end\n", "End \\ the last line\n"),
    (".lp", " x0 <= 1", " -inf <= x0 <= 1"),
    # a term, or an operator, continued on the next line; names that start with a section word;
    # a no-break space in a comment, a form feed on a blank line
    (".lp", "3 x0 + 5 x1", "3 x0 +\n 5 x1"),
    (".lp", "<= 5\nbounds\n x0 <= 1", "<= 5\n c1: bin.a >= 0\nbounds\n bin.a <= 1\n x0 <= 1"),
    (".lp", "st\n", "st\n end.c: x0 <= 1\n"),
    (".lp", "end\n", "\\ prices in\u00a0EUR\nend\n"),
    (".lp", " x0 <= 1", " x0 >= -1\n 1 >= x0"),  # one bound on each side, one of them written backwards
    (".lp", " x0 <= 1", " x0 free\n x0 <= 1"),  # free, then the upper bound: (-inf, 1]
    (".lp", " x0 <= 1\n x1 <= 1", "binary\n x0 x1"),
    # as HiGHS writes them: each binary with the bound 1, an empty row under its label, a column
    # that only a bound names
    (".lp", "end\n", "bin\n x0 x1\nend\n"),
    (".lp", " r0: 2 x0 + 4 x1 <= 5\n", " r0: 2 x0 + 4 x1 <= 5\n r1lo: >= +0\n r1up: <= +5\n"),
    (".lp", " x1 <= 1\n", " x1 <= 1\n x2 <= 10\n"),
    (".mps", "ROWS", "\f\nROWS"),
])
def test_valid_model_files_read_as_highs_reads_them(suffix: str, old: str, new: str, tmp_path: Path) -> None:
    base = BASE_MPS if suffix == ".mps" else BASE_LP
    assert old in base
    path = tmp_path / f"valid{suffix}"
    path.write_text(base.replace(old, new))
    (model,) = load_instances(path)
    expected = 5.0 if "MARKER" in new or "bin" in new.split() or "binary" in new else 6.75  # x0 integer: x = (0, 1)
    assert model.sense == "max"
    assert optsched.solve(model, "highs").objective == pytest.approx(expected)


@pytest.mark.parametrize("text, words", [
    (BASE_MPS.replace("    RHS_V     r0        5", "RHS_V r0 0x10"), "'0x10' is not a number"),  # in column 1
    (BASE_MPS.replace("    x1        r0        4", "    x1        r0        4\n    x1        r0        7"),
     "a second entry in row 'r0'"),
    (BASE_MPS.replace("    x0        Obj       3", "    M1 'MARKER' 'INTORG' extra\n    x0        Obj       3"),
     "a marker is"),
    ("garbage here\n" + BASE_MPS, "a data line before any section"),
    (BASE_LP.replace("3 x0", "\u0663 x0"), "non-ASCII"),
    (BASE_LP.replace("<= 5", "<= 1_000"), "'1_000' is not a number"),
    # HiGHS read each of these as another program and solved it (exit 0, no warning)
    (BASE_MPS.replace("OBJSENSE\n", "OBJSENS\n"), "'OBJSENS' is not an MPS section"),  # a minimisation: 0 for 8
    (BASE_MPS.replace("    RHS_V     r0        5", "    RHS_V     r0        5\n    RHS_V     r0        9"),
     "row 'r0' has a second RHS entry"),
    (BASE_MPS.replace("BOUNDS", "RANGES\n    RNG r0 1\n    RNG r0 4\nBOUNDS"), "row 'r0' has a second RANGES entry"),
    (BASE_LP.replace("max\n", "maxi\n"), "opens with its objective sense"),  # the objective read as 0
    (BASE_LP.replace("max\n", ""), "opens with its objective sense"),
    (BASE_LP.replace("max\n", "max:\n"), "opens with its objective sense"),
    (BASE_LP.replace("3 x0 + 5 x1", "3e x0 + 5 x1"), "no operator after 'e'"),  # 3 e + x0
    (BASE_LP.replace("3 x0 + 5 x1", "3 x0 x1"), "no operator after 'x0'"),  # 3 x0 + x1
    (BASE_LP.replace("2 x0 + 4 x1", "2 x0 4 x1"), "no operator after 'x0'"),
    # HiGHS read a second row 0 <= 5, kept the last of two upper bounds (or lost the first to a
    # later "free"), and made a binary with the bound 5 a general integer in [0, 5]
    (BASE_LP.replace("<= 5", "<= 5 <= 6"), "'<=' with neither a term nor a label before it"),
    (BASE_LP.replace(" x0 <= 1", " x0 <= 1\n x0 <= 0.5"), "a second upper bound on 'x0' .the first on line 6;"),
    (BASE_LP.replace(" x0 <= 1", " 0 <= x0 <= 1\n x0 free"), "a second lower bound on 'x0'"),
    (BASE_LP.replace(" x0 <= 1", " x0 <= 1\n x0 free"), "a second upper bound on 'x0'"),
    (BASE_LP.replace(" x0 <= 1", " 1 >= x0\n x0 <= 1"), "a second upper bound on 'x0'"),
    (BASE_LP.replace(" x1 <= 1", " x1 <= 5").replace("end\n", "binary\n x1\nend\n"),
     "'x1' is binary, but its bound on line 7 reaches outside"),
])
def test_model_files_that_only_look_valid_are_refused(text: str, words: str, tmp_path: Path) -> None:
    path = tmp_path / ("bad.mps" if "ENDATA" in text else "bad.lp")
    path.write_text(text)
    with pytest.raises(ValueError, match=words):
        load_instances(path)


def test_a_byte_order_mark_and_a_line_separator_inside_a_string_are_text(tmp_path: Path) -> None:
    model = generate("set_packing", 4, np.random.default_rng(0))
    text = json.dumps(model.to_dict())
    (tmp_path / "bom.json").write_bytes("\ufeff".encode() + text.encode())
    assert load_instances(tmp_path / "bom.json")[0].n_sets == model.n_sets
    record = json.loads(text)
    record["note"] = "a\u2028b"  # valid JSON; str.splitlines cut the record there
    (tmp_path / "sep.jsonl").write_text(json.dumps(record, ensure_ascii=False) + "\n" + text + "\n")
    with pytest.raises(ValueError, match="unknown key 'note'"):  # read whole, then refused for the key
        load_instances(tmp_path / "sep.jsonl")
    (tmp_path / "ok.jsonl").write_text(text + "\n" + text + "\n")
    assert len(load_instances(tmp_path / "ok.jsonl")) == 2


def test_a_delorme_row_with_a_miscounted_line_is_refused(tmp_path: Path) -> None:
    from optsched.io.delorme import read_delorme

    text = "3 4\n1 2 3 4\n2\n1 2\n0\n3\n2 3 4\n"
    assert [sorted(s) for s in read_delorme(text)[0].sets] == [[0], [0, 2], [2], [2]]
    with pytest.raises(ValueError, match="row 1 has count 2 but its line lists 1 columns"):
        read_delorme(text.replace("1 2\n", "1\n"))  # once read on into row 2's count
    with pytest.raises(ValueError, match="row 3 has count 3 but its line lists 4 columns"):
        read_delorme(text.removesuffix("2 3 4\n") + "1 2 3 4\n")
    with pytest.raises(ValueError, match="the line of the last profit holds 1 more"):
        read_delorme(text.replace("1 2 3 4\n", "1 2 3 4 5\n", 1))


def test_highs_solves_integer_columns_with_fractional_bounds() -> None:
    """HiGHS 1.14's presolve said 'optimal' at 2.266 (x = (1, 1)) on this pure-integer program,
    whose optimum is 2.854 at x = (1, 0) (SCIP, cvxpy, brute force agree); the backend passes
    the integer columns' bounds rounded inward (the same program)."""
    import numpy as np

    import optsched
    from optsched.models.linear_program import LinearProgram

    m = LinearProgram(c=[2.854, -0.588], A=[[2.391, -0.986]], row_lower=[-np.inf], row_upper=[3.992],
                      col_lower=[0.0, 0.0], col_upper=[1.94, 3.97], integrality=[True, True], sense="max")
    best = max(2.854 * a - 0.588 * b for a in (0, 1) for b in range(4) if 2.391 * a - 0.986 * b <= 3.992)
    for backend in ("highs", "scip", "cvxpy"):
        r = optsched.solve(m, backend)
        assert r.termination.value == "optimal" and abs(r.objective - best) < 1e-9, (backend, r)


# The kinds with no Pyomo statement, and why (README "Model forms"): nonlinear programs
# (log / sqrt / exp utilities, the ESCB index's square root) that appsi_highs cannot take and whose
# reference statement is the cvxpy conic form, and the budget family (one program per budget
# level: each level is a budgeted_ip, which has one).
NO_PYOMO_FORM = {"budget_family", "escb_index", "onsocmax_offline", "pseudo_welfare", "stationary_allocation"}


def test_the_kinds_without_a_pyomo_form_are_the_documented_ones() -> None:
    assert {name for name, kind in model_kinds().items() if "pyomo" not in kind.FORMS} == NO_PYOMO_FORM


@pytest.mark.parametrize("kind", sorted(set(model_kinds()) - NO_PYOMO_FORM))
def test_to_pyomo_solves_with_appsi_highs_to_the_exact_optimum(kind: str) -> None:
    """``to_pyomo()`` of every kind that has one, solved by Pyomo's appsi_highs outside optsched,
    reaches the optimum of the ``highs`` backend (``scip`` where the program mixes integer and
    continuous columns, which HiGHS 1.14 and 1.16 get wrong: there SCIP through Pyomo). appsi_highs takes
    no quadratic objective: the QP kind (capacity_projection) goes to Pyomo's contrib ``highs``."""
    import pyomo.environ as pyo

    from optsched.models.base import kind_specs

    spec = kind_specs()[kind]
    for seed in range(4):
        model = spec.generate(spec.tiny, np.random.default_rng(seed))
        mixed = get_backend("highs").fits(model) is not None
        exact = optsched.solve(model, "scip" if mixed else "highs")
        assert exact.termination is Termination.OPTIMAL, (kind, seed, exact.extra)
        m = model.to_pyomo()
        quadratic = model.to_standard_form().hessian is not None
        if mixed or quadratic:
            from pyomo.contrib.solver.common.factory import SolverFactory

            res = SolverFactory("scip_direct" if mixed else "highs").solve(m)
        else:
            res = pyo.SolverFactory("appsi_highs").solve(m)
        value = pyo.value(next(m.component_data_objects(pyo.Objective, active=True)))
        assert value == pytest.approx(exact.objective, rel=1e-7, abs=1e-9), (kind, seed, str(res)[:200])
        solution = model.solution_from_pyomo(m)
        assert not model.violations(solution), (kind, seed)


@pytest.mark.parametrize("kind", sorted(model_kinds()))
def test_every_kind_writes_json_that_reads_back(kind: str, tmp_path: Path) -> None:
    from optsched.models.base import kind_specs

    spec = kind_specs()[kind]
    model = spec.generate(spec.tiny, np.random.default_rng(3))
    back = load_instances(model.write(tmp_path / f"{kind}.json"))[0]
    assert back.to_dict() == model.to_dict()


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_a_value_highs_writes_as_infinite_is_not_exported_as_mps_or_lp(tmp_path: Path, suffix: str) -> None:
    """HiGHS's writer takes values from 1e20 on as infinite: set packing weights of 3e25 came
    back from the MPS file as inf (and the file was refused on reading). Export refuses them
    and writes nothing; 3e19 round-trips exactly."""
    from optsched.models.set_packing import SetPacking

    big = SetPacking(4, [[0, 1], [1, 2], [2, 3]], [1e25, 1.0, 3e25])
    with pytest.raises(ValueError, match="takes values from 1e\\+20 on as infinite"):
        write_model_file(big, tmp_path / f"big{suffix}")
    assert not list(tmp_path.iterdir())
    fine = SetPacking(4, [[0, 1], [1, 2], [2, 3]], [1e19, 1.0, 3e19])
    back = load_instances(write_model_file(fine, tmp_path / f"fine{suffix}"))[0]
    assert optsched.solve(back, "highs").objective == optsched.solve(fine, "brute_force").objective == 4e19


def _arrays(obj: Any, path: str = "") -> list[tuple[str, np.ndarray]]:
    """Every numpy array a model holds, nested optsched objects included (``family.indptr``)."""
    out = []
    for key, value in vars(obj).items():
        out += _held(value, path + key)
    return out


def _held(value: object, name: str) -> list[tuple[str, np.ndarray]]:
    """The arrays in ``value``: itself, its items (a tuple of sets), a sparse matrix's parts."""
    if isinstance(value, np.ndarray):
        return [(name, value)]
    if isinstance(value, (tuple, list)):
        return [a for i, item in enumerate(value) for a in _held(item, f"{name}[{i}]")]
    if isinstance(value, dict):  # a model's memo
        return [a for key, item in value.items() for a in _held(item, f"{name}[{key!r}]")]
    if hasattr(value, "data") and (hasattr(value, "indptr") or hasattr(value, "row")):  # scipy sparse
        return [(f"{name}.{part}", getattr(value, part)) for part in ("data", "indices", "indptr", "row", "col")
                if isinstance(getattr(value, part, None), np.ndarray)]
    if hasattr(value, "__dict__") and type(value).__module__.startswith("optsched"):
        return _arrays(value, f"{name}.")
    return []


@pytest.mark.parametrize("kind", sorted(kind_specs()))
def test_models_stay_read_only_through_pickling(kind: str) -> None:
    """A model is immutable: its arrays are read-only, and stay so when it is pickled (numpy
    restores arrays writeable; a model sent to compare's worker processes was mutable and gave
    numba kernels a new argument type to compile inside the first timed solve). The unpickled
    model solves to the same objective."""
    spec = kind_specs()[kind]
    model = spec.generate(spec.tiny + 2, np.random.default_rng(0))
    back = pickle.loads(pickle.dumps(model))
    for where, m in (("built", model), ("unpickled", back)):
        writeable = [name for name, a in _arrays(m) if a.flags.writeable]
        assert not writeable, (where, writeable)
    backend = fitting_backends(model)[0].NAME
    assert optsched.solve(back, backend).objective == pytest.approx(optsched.solve(model, backend).objective, rel=1e-12)


def _touch_cached(obj: object, depth: int = 0) -> None:
    """Evaluate every cached property of ``obj`` and of the optsched objects it holds."""
    if depth > 2 or not type(obj).__module__.startswith("optsched"):
        return
    for cls in type(obj).__mro__:
        for name, attr in vars(cls).items():
            if isinstance(attr, functools.cached_property):
                getattr(obj, name)
    for value in list(vars(obj).values()):
        if hasattr(value, "__dict__") and not isinstance(value, type):
            _touch_cached(value, depth + 1)


@pytest.mark.parametrize("kind", sorted(kind_specs()))
def test_derived_data_stays_read_only_after_every_backend_solved(kind: str) -> None:
    """A model's derived data (cached properties: a set family's dense incidence, a mesh's pair
    arrays; memo'd forms and plans) was writable: ``family.dense[:] = False`` on a set packing
    batch made HiGHS's answer, three sets sharing element 1, pass verification as optimal (it
    reads the arrays HiGHS was built from)."""
    spec = kind_specs()[kind]
    model = spec.generate(spec.tiny + 2, np.random.default_rng(0))
    for name in optsched.backends(model):
        r = optsched.solve(model, name)
        assert "read-only" not in r.message, (name, r.message)  # no backend writes into the model's data
        reference = pickle.loads(pickle.dumps(model))  # read-only again when unpickled: solves the same
        assert optsched.solve(reference, name).termination is r.termination, name
    _touch_cached(model)
    writeable = [name for name, a in _arrays(model) if a.flags.writeable]
    assert not writeable, writeable


def test_a_batch_from_an_incidence_matrix_cannot_be_changed_under_its_sets() -> None:
    from optsched.models.set_packing import SetPackingBatch

    model = SetPackingBatch.from_incidence(np.array([[1, 1, 0], [0, 1, 1], [1, 0, 0]], dtype=bool), np.ones((1, 3)))
    for array in (model.family.indices, model.family.indptr, model.family.dense):
        with pytest.raises(ValueError, match="read-only"):
            array[:] = 0
    assert optsched.solve(model, "highs").objective == 2.0


@pytest.mark.parametrize("relative", ["orlib/mknap1.txt", "orlib/mknap2.txt", "setpacking/pb_100rnd0100.dat",
                                      "mwis/johnson8-2-4.clq"])
def test_a_real_file_cut_inside_its_last_number_is_refused(relative: str, tmp_path: Path, shared_data: Path) -> None:
    """Cut inside the last number (the line break and one digit gone), every reader took the
    file: a capacity of 650 read as 65 (objective 7007 where the file states 16537), an edge
    '21 26' as '21 2'. The whole file still reads."""
    source = shared_data / relative
    text = source.read_text()
    whole = tmp_path / source.name
    whole.write_text(text)
    assert load_instances(whole)
    padded = tmp_path / ("padded" + source.suffix)  # spaces after the last line break: nothing cut
    padded.write_text(text + "  ")
    assert len(load_instances(padded)) == len(load_instances(whole))
    cut = tmp_path / ("cut" + source.suffix)
    cut.write_text(text.rstrip()[:-1])
    with pytest.raises(ValueError, match="has no line break"):
        load_instances(cut)


def test_an_mknap2_instance_whose_problem_line_is_misspelt_is_refused(tmp_path: Path, shared_data: Path) -> None:
    """'probelm SENTO1.DAT': its numbers were taken for the preamble's free text and the file
    read as 47 instances, its first SENTO2 (objective 8722 for SENTO1's 7772)."""
    text = (shared_data / "orlib" / "mknap2.txt").read_text()
    bad = tmp_path / "mknap2.txt"
    bad.write_text(text.replace(" problem SENTO1.DAT", " probelm SENTO1.DAT", 1))
    with pytest.raises(ValueError, match="before the first 'problem NAME.DAT' line"):
        load_instances(bad)


def test_a_column_named_rhs_is_not_a_second_rhs_entry(tmp_path: Path) -> None:
    """The check of a row's second RHS entry shared its record with the COLUMNS entries, so a
    column named RHS with an entry in c1 refused a valid file (the review's case)."""
    path = tmp_path / "named.mps"
    path.write_text("NAME test\nROWS\n N obj\n L c1\nCOLUMNS\n x obj 1 c1 1\n RHS obj 2 c1 1\nRHS\n RHS c1 4\nENDATA\n")
    (model,) = load_instances(path)
    assert model.row_upper.tolist() == [4.0] and model.n_vars == 2


VALUES = [1 / 3, 2 / 3, 5e-324, 2.0**53, 1e-300, 1e19, -0.0, 0.1 + 0.2, 7.0, -1e-9, 123456789.12345678]


def _edge_program(rng: np.random.Generator) -> LinearProgram | None:
    """A small program whose numbers HiGHS's writer shortened (15 digits: 1/3, 2^53, 5e-324),
    with free, one-sided, ranged and fixed rows and columns, integer columns, an offset, a
    Hessian or a maximisation; matrix and cost entries within what HiGHS's reader takes."""
    def value() -> float:
        if rng.random() < 0.5:
            return float(rng.choice(VALUES)) * (1.0 if rng.random() < 0.7 else -1.0)
        return float(rng.normal() * 10.0 ** rng.integers(-5, 6))

    def pair() -> tuple[float, float]:
        a, b = sorted([value(), value()])
        return a, b

    n, m = int(rng.integers(1, 6)), int(rng.integers(0, 5))
    c = [v if abs(v := value()) < 1e15 else 3.0 for _ in range(n)]
    A = np.where(rng.random((m, n)) < 0.4, [[v if 1e-8 < abs(v := value()) < 1e15 else 1.0 for _ in range(n)]
                                            for _ in range(m)], 0.0) if m else np.zeros((0, n))
    rows = [(lambda a, b, t: ([None, a, a, None, a][t], [b, None, b, None, a][t]))(*pair(), int(rng.integers(5)))
            for _ in range(m)]
    integer = rng.random(n) < 0.3
    cols = []
    for j in range(n):
        a, b = pair()
        if integer[j]:
            a, b = float(np.floor(a)), float(np.ceil(b))
        t = int(rng.integers(6))
        cols.append(([None, a, a, None, a, 0.0][t], [b, None, b, None, a, None][t]))
    sense = "max" if rng.random() < 0.3 else "min"
    hessian = None
    if not integer.any() and sense == "min" and rng.random() < 0.5:
        root = rng.normal(size=(n, n))
        hessian = root @ root.T
    try:
        return LinearProgram(c=c, A=A, row_lower=[r[0] for r in rows], row_upper=[r[1] for r in rows],
                             col_lower=[k[0] for k in cols], col_upper=[k[1] for k in cols], integrality=integer,
                             sense=sense, offset=value() if rng.random() < 0.5 else 0.0, hessian=hessian)
    except ValueError:  # a fixed integer column between two whole numbers, and such
        return None


def _rows_as_written(form: Any, lp_file: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, lower, upper) with a ranged row as two: every one in an LP file, in MPS one whose
    sides no RANGES entry holds exactly."""
    from optsched.models.model_text import exact_range

    a, lo, hi = form.A.toarray(), form.row_lower, form.row_upper
    out = []
    for i in range(a.shape[0]):
        ranged = np.isfinite(lo[i]) and np.isfinite(hi[i]) and lo[i] != hi[i]
        if ranged and (lp_file or exact_range(lo[i], hi[i]) is None):
            out += [(a[i], lo[i], np.inf), (a[i], -np.inf, hi[i])]
        else:
            out.append((a[i], lo[i], hi[i]))
    if not out:
        return np.zeros((0, a.shape[1])), np.zeros(0), np.zeros(0)
    return np.array([r[0] for r in out]), np.array([r[1] for r in out]), np.array([r[2] for r in out])


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_a_written_program_reads_back_exactly(suffix: str, tmp_path: Path) -> None:
    """HiGHS's writer kept 15 significant digits (a row bound of 1/3 read back as
    0.333333333333333, 5e-324 as 0, and 2^53 made a file its reader refused) and its LP files
    put a column with no cost after the others (x = [7, 1] was worth 1 and read back worth 7).
    Every array now reads back equal, in order; an LP file's ranged rows are two rows."""
    tried = split = 0
    for seed in range(300):
        model = _edge_program(np.random.default_rng([seed, 7]))
        if model is None:
            continue
        form = model.to_standard_form()
        back = load_instances(model.write(tmp_path / f"m{suffix}"))[0].to_standard_form()
        for name in ("c", "col_lower", "col_upper", "integrality"):
            assert np.array_equal(getattr(back, name), getattr(form, name)), (seed, name)
        assert (back.maximize, back.offset) == (form.maximize, form.offset), seed
        assert (back.hessian is None) == (form.hessian is None), seed
        if form.hessian is not None:
            assert np.array_equal(back.hessian.toarray(), form.hessian.toarray()), seed
        a, lo, hi = _rows_as_written(form, suffix == ".lp")
        split += suffix == ".mps" and back.n_rows != form.n_rows  # a range no RANGES entry holds exactly
        assert np.array_equal(back.A.toarray(), a) and np.array_equal(back.row_lower, lo), seed
        assert np.array_equal(back.row_upper, hi), seed
        tried += 1
    assert tried >= 250 and split <= tried // 20


@pytest.mark.parametrize("entry", [2.0**53, 1e15, 1e-10])
@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_a_matrix_entry_highs_cannot_read_is_not_exported(entry: float, suffix: str, tmp_path: Path) -> None:
    """HiGHS's reader rejects matrix entries from 1e15 on and drops those at or below 1e-9 (a
    warning its caller here refuses): such an export was a file optsched could not read back."""
    model = LinearProgram(c=[1.0], A=[[entry]], row_lower=[None], row_upper=[1.0], col_lower=[0.0], col_upper=[1.0])
    with pytest.raises(ValueError, match=r"HiGHS's reader refuses entries outside \(1e-09, 1e\+15\)"):
        model.write(tmp_path / f"m{suffix}")
    assert not (tmp_path / f"m{suffix}").exists()
    inside = LinearProgram(c=[1.0], A=[[9.99e14]], row_lower=[None], row_upper=[1.0], col_lower=[0.0], col_upper=[1.0])
    assert load_instances(inside.write(tmp_path / f"ok{suffix}"))[0].A.toarray().item() == 9.99e14


def test_a_sparse_program_is_written_as_its_entries_and_read_back_exactly(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A program of 2,000 columns and 2,000 nonzeros was written as 20 MB of nested lists (250 MB
    to write it): A and the Hessian go as their entries when under a third is nonzero, and read
    back to the same program; a small dense one stays nested lists."""
    import json

    import scipy.sparse as sp

    from optsched.io import load_instance
    from optsched.models import LinearProgram

    n = 1000  # 10^6 entries as nested lists, about 4 MB
    A = sp.eye(n, format="csr") * 2.0
    big = LinearProgram(c=-np.arange(1.0, n + 1), A=A, row_lower=[None] * n, row_upper=np.full(n, 3.0),
                        col_lower=np.zeros(n), col_upper=np.full(n, 1e30), hessian=sp.diags(np.full(n, 0.5)).tocsc())
    path = big.write(tmp_path / "big.json")
    assert path.stat().st_size < 100_000
    data = json.loads(path.read_text())
    assert set(data["A"]) == {"shape", "rows", "cols", "values"} and len(data["hessian"]["values"]) == n
    again = load_instance(path)  # the reader takes whole numbers as floats: the shape [1000.0, 1000.0]
    assert (again.A != big.A).nnz == 0 and (again.hessian != big.hessian).nnz == 0
    assert again.to_dict() == big.to_dict()
    line = tmp_path / "big.jsonl"
    line.write_text(json.dumps(big.to_dict()) + "\n")
    assert load_instance(line).to_dict() == big.to_dict()
    small = LinearProgram(c=[1.0, 2.0], A=[[1.0, 1.0]], row_lower=[1.0], row_upper=[2.0], col_lower=[0, 0], col_upper=[1, 1])
    assert small.to_dict()["A"] == [[1.0, 1.0]]
    entries = {"shape": [1, 2], "rows": [0], "cols": [1], "values": [3.0]}
    base = {**small.to_dict(), "A": entries}
    base.pop("model")
    assert LinearProgram.from_dict(base).A.toarray().tolist() == [[0.0, 3.0]]
    for bad, field in (({**entries, "shape": [2, 2]}, "A.shape"), ({**entries, "cols": [2]}, "A.cols"),
                       ({**entries, "values": [3.0, 4.0]}, "A: rows, cols and values"), ({**entries, "extra": 1}, "A: unknown key"),
                       ({**entries, "rows": [0.5]}, "A.rows"), ({**entries, "shape": [1, True]}, "A.shape"),
                       ({**entries, "shape": [1, 2.5]}, "A.shape"),
                       ({**entries, "rows": [0, 0], "cols": [1, 1], "values": [1.0, 2.0]}, r"A: the entry \(0, 1\) is listed twice")):
        with pytest.raises(ValueError, match=f"^{field}"):
            LinearProgram.from_dict({**base, "A": bad})
