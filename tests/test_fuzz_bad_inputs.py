"""Fuzzing the bad-input class: mutated JSON instances of every model kind through ``optsched
solve`` (in-process), which must exit 0 or 2 and never raise; with 2, stderr is exactly one
line ``optsched: error: ...`` (no numpy warning before it, no traceback). Warnings are printed
as on the command line (not raised as the test configuration does elsewhere): a valid but
extreme instance (entries of 1e308) may warn of an overflow and still exit 0.

Each example starts from a valid instance of a kind (``optsched.generators``, size 3) and
applies a few mutations drawn by hypothesis: a value anywhere in the object replaced by
another JSON type (booleans, null, strings, numeric strings, lists, nested lists, objects),
by an extreme number (huge and tiny floats, integers beyond 64 bits and beyond the float
range), a key duplicated or dropped, an unknown key added, or the whole text nested deeply.
The CI run (derandomized ``ci`` profile) takes a few seconds; ``pytest -m slow`` runs the
long variant.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched.cli import main
from optsched.generators import generate, generator_kinds

KINDS = generator_kinds()
HUGE_INT = "1" + "0" * 400  # beyond the float range (spliced into the text: Python's json would write it too)
REPLACEMENTS: list[Any] = [
    True, False, None, "1", "2.5", "abc", "", [], {}, [[1]], [[[1, 2]]], [True, 1], ["1", 2], [None], [1, "a"],
    -1, 0, 1, 0.5, -0.0, 1e308, -1e308, 5e-324, 2**63, -(2**63) - 1, 10**13, 10**20, HUGE_INT,
    {"model": "set_packing"}, [[0, 1], [2]],
]


def _base(kind: str) -> dict[str, Any]:
    return generate(kind, 3, np.random.default_rng(0)).to_dict()


BASES = {kind: _base(kind) for kind in KINDS}


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            out += _paths(v, prefix + (i,))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = obj
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return obj


@st.composite
def mutated_instances(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(KINDS))
    obj: Any = json.loads(json.dumps(BASES[kind]))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["replace", "replace", "replace", "drop", "unknown"]))
        if op == "replace":
            paths = _paths(obj)
            path = draw(st.sampled_from(paths[1:] if len(paths) > 1 else paths))
            obj = _set(obj, path, json.loads(json.dumps(draw(st.sampled_from(REPLACEMENTS)))))
        elif isinstance(obj, dict) and obj:
            key = draw(st.sampled_from(sorted(obj)))
            if op == "drop":
                obj.pop(key)
            else:
                obj[key + "_x"] = obj[key]
    text = json.dumps(obj).replace(f'"{HUGE_INT}"', HUGE_INT)
    if isinstance(obj, dict) and obj and draw(st.booleans()):  # a key repeated: the last would silently win
        key = draw(st.sampled_from(sorted(obj)))
        text = text[:-1] + f", {json.dumps(key)}: {json.dumps(obj[key])}}}"
    if draw(st.integers(0, 9)) == 0:
        depth = draw(st.sampled_from([5, 50, 5000]))
        text = "[" * depth + text + "]" * depth
    return text


def check_solve(text: str) -> None:
    fd, path = tempfile.mkstemp(suffix=".json")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            # as on the command line: a warning is printed (one line each), not raised; only the
            # error path promises a single line
            warnings.simplefilter("default", RuntimeWarning)
            code = main(["solve", path])  # any exception escaping here fails the test
    finally:
        os.unlink(path)
    lines = err.getvalue().strip().splitlines()
    assert code in (0, 2), (code, text[:300])
    assert "Traceback" not in err.getvalue()
    if code == 2:
        assert out.getvalue() == ""
        assert len(lines) == 1 and lines[0].startswith("optsched: error: "), (lines, text[:300])
    else:
        assert "objective" in out.getvalue()  # the solve report


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_instances())
def test_mutated_instances_exit_0_or_2_with_one_line(text: str) -> None:
    check_solve(text)


@pytest.mark.slow
@settings(max_examples=20000, derandomize=False, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_instances())
def test_mutated_instances_long_run(text: str) -> None:
    check_solve(text)


def test_the_mutations_reach_every_kind_and_both_outcomes() -> None:
    """The strategy is not vacuous: valid bases solve (exit 0), and a known mutation fails (exit 2)."""
    for kind in KINDS:
        check_solve(json.dumps(BASES[kind]))
    bad = json.dumps(BASES["set_packing"]).replace('"n_elements": 3', '"n_elements": true')
    err = io.StringIO()
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as fh:
        fh.write(bad)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            assert main(["solve", path]) == 2
    finally:
        os.unlink(path)
    assert "n_elements: expected an integer, got True" in err.getvalue()
