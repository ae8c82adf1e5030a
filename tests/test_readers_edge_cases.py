"""Edge cases of the text readers: mknap2 ``//`` comments (OR-Library), DIMACS edge counts and
line numbers, and the 64-bit rule of the integer parser, as a user of the readers sees them."""

from __future__ import annotations

import numpy as np
import pytest

from optsched.io.delorme import read_delorme
from optsched.io.dimacs import parse_dimacs_graph
from optsched.io.numbers import INT_LIMIT, parse_ints, text_lines
from optsched.io.orlib import read_orlib

# --- OR-Library mknap2: text after '//' is a comment -------------------------------------------------

MKNAP2_WITH_COMMENTS = (
    "free-text header of an mknap2 file\n"
    "problem A.DAT   // a two-item instance\n"
    "1 2        // m n\n"
    "3 4        // the n profits\n"
    "5          // the m capacities\n"
    "1 2        // the m x n weights\n"
    "7          // the optimum\n"
)


def test_mknap2_text_after_double_slash_is_a_comment() -> None:
    """mknap2: everything after '//' on a line is ignored, the numbers before it are the instance."""
    (inst,) = read_orlib(MKNAP2_WITH_COMMENTS)
    assert inst.name == "A"
    assert inst.optimum == 7.0
    np.testing.assert_array_equal(inst.model.values, [3.0, 4.0])
    np.testing.assert_array_equal(inst.model.capacity, [5.0])
    np.testing.assert_array_equal(inst.model.weights, [[1.0, 2.0]])


def test_mknap2_comments_read_as_the_same_file_without_them() -> None:
    """mknap2: a file with '//' comments gives the same instance as the file with them removed."""
    bare = "\n".join(line.split("//")[0] for line in MKNAP2_WITH_COMMENTS.split("\n"))
    (with_comments,), (without,) = read_orlib(MKNAP2_WITH_COMMENTS), read_orlib(bare)
    assert with_comments.optimum == without.optimum
    np.testing.assert_array_equal(with_comments.model.values, without.model.values)
    np.testing.assert_array_equal(with_comments.model.weights, without.model.weights)
    np.testing.assert_array_equal(with_comments.model.capacity, without.model.capacity)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_mknap2_reads_the_same_with_any_line_break(newline: str) -> None:
    """mknap2 with bare carriage returns (an old Mac file) was refused as neither layout: its
    problem lines were looked for after line feeds only."""
    (inst,) = read_orlib(MKNAP2_WITH_COMMENTS.replace("\n", newline))
    assert inst.name == "A" and inst.optimum == 7.0 and inst.model.values.tolist() == [3.0, 4.0]


def test_mknap2_comment_right_after_the_problem_name_is_not_part_of_it() -> None:
    """'problem A.DAT// c' named the instance 'A.DAT//' and read the comment's 'c' as m."""
    (inst,) = read_orlib("h\nproblem A.DAT// c\n1 2\n3 4\n5\n1 2\n7\n")
    assert inst.name == "A" and inst.optimum == 7.0


def test_a_last_line_without_a_break_is_named_alone_whatever_the_line_breaks() -> None:
    """The error names the last line, not the file's tail, in a file of carriage returns."""
    with pytest.raises(ValueError, match=r"the last line \('e 1 9'\) has no line break"):
        parse_dimacs_graph("p edge 3 1\re 1 9")


# --- line numbers: CRLF is one line break --------------------------------------------------------------

BAD_EDGE_ON_LINE_3 = ["c comment", "p edge 3 1", "e 1 9", ""]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_dimacs_error_names_the_same_line_for_every_line_break(newline: str) -> None:
    """DIMACS: an error names the line as an editor counts it, whether lines end in LF, CRLF or CR."""
    with pytest.raises(ValueError, match=r"^dimacs: line 3: vertex 9 outside 1\.\.3"):
        parse_dimacs_graph(newline.join(BAD_EDGE_ON_LINE_3))


def test_text_lines_counts_crlf_as_one_break() -> None:
    """text_lines: a Windows file (CRLF) has as many lines as the same file with LF or CR."""
    lines = ["c x", "p edge 2 1", "e 1 2", ""]
    assert text_lines("\r\n".join(lines)) == lines
    assert text_lines("\n".join(lines)) == text_lines("\r\n".join(lines)) == text_lines("\r".join(lines))


# --- integers: within 64 bits, also on the many-numbers fast path ------------------------------------


@pytest.mark.parametrize("token", [str(INT_LIMIT), "9999999999999999999", str(-INT_LIMIT - 1)])
def test_parse_ints_refuses_19_digit_integers_beyond_64_bits(token: str) -> None:
    """parse_ints: an integer outside [-2^63, 2^63) is refused, even among ordinary ones."""
    assert len(token.lstrip("-")) == 19
    with pytest.raises(ValueError, match="64 bits"):
        parse_ints([token])
    with pytest.raises(ValueError, match="64 bits"):
        parse_ints(["1", "2", token, "3"])


def test_parse_ints_accepts_the_64_bit_extremes() -> None:
    """parse_ints: -2^63 and 2^63 - 1 (19 digits) lie within 64 bits and are read exactly."""
    assert parse_ints([str(-INT_LIMIT), "7", str(INT_LIMIT - 1)]) == [-INT_LIMIT, 7, INT_LIMIT - 1]


def test_delorme_profit_beyond_64_bits_is_named_as_such() -> None:
    """Delorme: a profit past 64 bits is refused as a bad token of the profits, naming the 64-bit rule."""
    text = f"1 2\n{INT_LIMIT} 1\n1\n1\n"
    with pytest.raises(ValueError, match=r"delorme: the profits holds a bad token: .* 64 bits"):
        read_delorme(text)
