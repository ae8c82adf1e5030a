"""The text instance formats (Delorme ``.dat``, OR-Library, DIMACS ``.clq``, JSON Lines) as a
whole: numbers parsed in bounded memory, lines broken only at line breaks, errors naming the file."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from optsched.cli import main
from optsched.generators import generate
from optsched.io import load_captures, load_instances
from optsched.io.numbers import parse_floats, parse_ints


@pytest.mark.parametrize("parse, token, per_token", [(parse_ints, "7", 16), (parse_floats, "0.25", 48)])
def test_numbers_parse_in_memory_proportional_to_what_they_return(parse, token, per_token) -> None:
    """One regex over all the tokens joined kept state for every token it matched: 200 bytes an
    integer, 660 a decimal (a 40 MB OR-Library file of 20 million numbers peaked at 5.5 GB). The
    result itself is a list (8 bytes a token) of small ints (cached) or of floats (24 more)."""
    tokens = [token] * 400_000
    tracemalloc.start()
    try:
        values = parse(tokens)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert values[0] == float(token) and len(values) == len(tokens)
    assert peak < per_token * len(tokens), peak / len(tokens)


def test_a_form_feed_or_line_separator_breaks_no_line(tmp_path: Path) -> None:
    """``str.splitlines`` broke lines at a form feed (and NEL, U+2028): a comment holding one made
    its rest an unknown line type, and every later line number was one off."""
    clq = tmp_path / "g.clq"
    clq.write_text("c page\fbreak\u2028here\np edge 3 2\ne 1 2\ne 2 3\n")
    assert load_instances(clq)[0].n_sets == 3
    clq.write_text("c x\fc y\np edge 3 2\ne 1 5\ne 2 3\n")
    with pytest.raises(ValueError, match="line 3: vertex 5"):
        load_instances(clq)
    clq.write_text("p edge 3 2\re 1 2\re 2 3\r")  # carriage returns alone still break lines
    assert load_instances(clq)[0].n_sets == 3
    dat = tmp_path / "p.dat"
    dat.write_text("2 3\n1 1 1\n2\n1 2\n1\n3 \f\n")  # the form feed is a space at the end of row 2's line
    assert [list(s) for s in load_instances(dat)[0].sets] == [[0], [0], [1]]


def test_a_reader_error_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A directory of files (``bench --data``, ``--instances``) said only "delorme: file ends
    inside row 2" or "jsonl: line 2: ...", not which file."""
    (tmp_path / "cut.dat").write_text("2 3\n1 1 1\n2\n1 2\n")
    with pytest.raises(ValueError, match=f"^file: {tmp_path / 'cut.dat'}: delorme: file ends before row 2"):
        load_instances(tmp_path / "cut.dat")
    good = json.dumps(generate("set_packing", 4, np.random.default_rng(0)).to_dict())
    caps = tmp_path / "caps"
    caps.mkdir()
    (caps / "a.jsonl").write_text(good + "\n")
    (caps / "b.jsonl").write_text(good + "\n" + good[:-5] + "\n")
    with pytest.raises(ValueError, match=f"^file: {caps / 'b.jsonl'}: jsonl: line 2: "):
        load_captures(caps / "b.jsonl")
    assert main(["bench", "--instances", str(caps), "--quick", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "b.jsonl: jsonl: line 2" in err[0]


def test_a_json_list_names_the_instance_it_refuses(tmp_path: Path) -> None:
    """``[1]`` said "expected a JSON object, got float" (integers are read as floats), and an
    entry of a list was not named."""
    good = generate("set_packing", 4, np.random.default_rng(0)).to_dict()
    path = tmp_path / "list.json"
    path.write_text(json.dumps([good, 1]))
    with pytest.raises(ValueError, match="instance 2 of the list: instance: expected a JSON object, got a number$"):
        load_instances(path)
    path.write_text(json.dumps([good, [good]]))
    with pytest.raises(ValueError, match="instance 2 of the list: .* got an array$"):
        load_instances(path)
    path.write_text(json.dumps([good, good]))
    assert len(load_instances(path)) == 2


def test_a_set_packing_of_more_sets_than_any_backend_takes_is_refused_up_front(tmp_path: Path) -> None:
    """A 20 MB Delorme file of 10^7 columns read for 2 minutes into 3 GB before the model was
    built; its header now says it all (at most MAX_SETS, as MAX_ELEMENTS for the rows)."""
    from optsched.models.set_packing import MAX_SETS, SetPacking

    path = tmp_path / "wide.dat"
    path.write_text(f"1 {MAX_SETS + 1}\n")  # refused from the header alone: no profit is read
    with pytest.raises(ValueError, match=f"header needs 1 <= m <= 1000000 rows and 1 <= n <= {MAX_SETS} columns"):
        load_instances(path)
    with pytest.raises(ValueError, match=f"^sets: {MAX_SETS + 1} sets, more than {MAX_SETS}$"):
        SetPacking(n_elements=1, sets=[[]] * (MAX_SETS + 1), weights=np.zeros(MAX_SETS + 1))
