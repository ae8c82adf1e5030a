"""MPS and LP files: generic ``linear_program`` instances in through HiGHS's reader, any model
with a standard form out (``optsched export``; the text of :mod:`optsched.models.model_text`)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np

from optsched.files import read_user_text
from optsched.io import register_path_reader
from optsched.io.numbers import parse_float
from optsched.models.base import Model
from optsched.models.forms import MODEL_SUFFIXES
from optsched.models.linear_program import LinearProgram


def _read_by_highs(h: Any, path: Path, text: str) -> bool:
    """HiGHS's reader on ``path``, or on a copy of ``text`` under an ASCII name when the path is
    not UTF-8 (highspy takes only UTF-8 strings); the suffix, which names the format, is kept."""
    import highspy

    try:
        str(path).encode("utf-8")
        return h.readModel(str(path)) == highspy.HighsStatus.kOk
    except UnicodeEncodeError:
        import tempfile

        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / f"model{path.suffix.lower()}"
            copy.write_text(text, encoding="utf-8")
            return h.readModel(str(copy)) == highspy.HighsStatus.kOk


_INFINITE_WORDS = {"inf", "infinity"}


def _lines(text: str, data: Callable[[str], str]) -> list[str]:
    """The file's lines as HiGHS's readers see them: split at line feeds only (a trailing
    carriage return dropped), with no whitespace but spaces and tabs in their data (``data``:
    the line without its comment; a blank line may hold any). Python's ``splitlines`` and
    ``split`` also break at a vertical tab, a form feed or a no-break space, which HiGHS keeps
    in a name: ``2<VT>x`` became a new variable, and ``c1<NBSP> 1`` a row name whose right-hand
    side was dropped."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    for number, line in enumerate(lines, start=1):
        part = data(line) if line.strip() else ""
        odd = next((c for c in part if (c.isspace() and c not in " \t") or (ord(c) < 32 and c != "\t")), None)
        if odd is not None:
            raise ValueError(f"line {number}: holds U+{ord(odd):04X}, which is neither a space nor a tab")
    return lines


def _mps_data(line: str) -> str:
    return "" if line.startswith("*") else line


def _lp_data(line: str) -> str:
    return line.split("\\", 1)[0]  # a backslash starts a comment


def _number(token: str, where: str, *, infinite: bool = False) -> None:
    """A strict decimal number (``parse_float``, a leading ``+`` allowed); with ``infinite``
    also HiGHS's words for an infinite bound (``inf``, ``infinity``, signed)."""
    bare = token[1:] if token[:1] in "+-" else token
    if infinite and bare.lower() in _INFINITE_WORDS:
        return
    try:
        parse_float(token[1:] if token.startswith("+") else token)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


_MPS_ONE_WORD_SECTIONS = {"ROWS", "COLUMNS", "RHS", "RANGES", "BOUNDS", "QUADOBJ", "QMATRIX", "QSECTION",
                          "QCMATRIX", "SOS", "INDICATORS", "ENDATA"}
_MPS_SENSES = {"MAX": "max", "MAXIMIZE": "max", "MIN": "min", "MINIMIZE": "min"}
_MPS_VALUE_BOUNDS = {"UP", "LO", "FX", "LI", "UI", "SC"}
_MPS_FREE_BOUNDS = {"MI", "PL", "FR"}


def _mps_header(line: str, fields: list[str]) -> str | None:
    """The section a line opens, or None for a data line: a keyword in column 1, alone (NAME
    and OBJSENSE may carry one word; "RHS ..." with more words is a data line whose set is named RHS)."""
    if line[0].isspace():
        return None
    key = fields[0].upper()
    if key == "NAME" or (key == "OBJSENSE" and len(fields) <= 2):
        return key
    return key if key in _MPS_ONE_WORD_SECTIONS and len(fields) == 1 else None


def check_mps_text(text: str) -> str | None:
    """What HiGHS's MPS reader lets through and reads as something else (measured): a file cut
    short (no ENDATA), a number that is not one (``nan`` and ``e5`` read as 0, ``0x10`` as 16,
    ``1_000`` as 1, ``1e400`` as an infinite bound: the constraint dropped), a row name COLUMNS,
    RHS or RANGES do not declare in ROWS (the entry dropped), a column BOUNDS names that no
    COLUMNS line has (a new variable), an entry given twice (the second dropped), a malformed
    marker, a third (row, value) pair on a line (dropped), a row's second RHS or RANGES value (one
    of the two kept), a misspelt section header (``OBJSENS``: the sense lost). Free MPS: names hold no spaces; data lines may start in column 1, and RHS, RANGES
    and BOUNDS lines may leave out the set name. Returns the sense OBJSENSE declares (HiGHS
    read ``OBJSENSE MAXIMIZE`` on one line as a minimisation), or None."""
    rows: set[str] = set()
    columns: set[str] = set()
    entries: set[tuple[str, str]] = set()  # (column, row) pairs of COLUMNS
    sides: set[tuple[str, str]] = set()  # (RHS or RANGES, row) pairs (a column may be named RHS)
    section, sense, ended = "", None, False
    for number, line in enumerate(_lines(text, _mps_data), start=1):
        if not line.strip() or line.startswith("*"):
            continue
        where = f"line {number}"
        fields = line.split()
        header = _mps_header(line, fields)
        if ended:
            raise ValueError(f"{where}: data after ENDATA")
        if header is not None:
            section, ended = header, header == "ENDATA"
            if header == "OBJSENSE" and len(fields) == 2:
                sense = _mps_sense(fields[1], where, sense)
            continue
        if section == "OBJSENSE":
            if len(fields) != 1:
                raise ValueError(f"{where}: OBJSENSE takes one word (MAX or MIN)")
            sense = _mps_sense(fields[0], where, sense)
        elif section == "ROWS":
            if len(fields) != 2 or fields[0].upper() not in ("N", "L", "G", "E"):
                raise ValueError(f"{where}: a row is 'N|L|G|E name'")
            rows.add(fields[1])
        elif section == "COLUMNS":
            if len(fields) > 1 and fields[1] == "'MARKER'":
                if len(fields) != 3 or fields[2] not in ("'INTORG'", "'INTEND'"):
                    raise ValueError(f"{where}: a marker is \"name 'MARKER' 'INTORG'|'INTEND'\"")
                continue
            if len(fields) not in (3, 5):  # HiGHS reads two pairs a line and drops a third
                raise ValueError(f"{where}: expected a column and one or two (row, value) pairs")
            columns.add(fields[0])
            for row, value in zip(fields[1::2], fields[2::2]):
                if row not in rows:
                    raise ValueError(f"{where}: row {row!r} is not declared in ROWS")
                if (fields[0], row) in entries:
                    raise ValueError(f"{where}: column {fields[0]!r} has a second entry in row {row!r}")
                entries.add((fields[0], row))
                _number(value, where)
        elif section in ("RHS", "RANGES"):
            pairs = fields[len(fields) % 2:]  # an odd count starts with the set's name
            if len(pairs) not in (2, 4):  # HiGHS reads two pairs a line and drops a third
                raise ValueError(f"{where}: expected one or two (row, value) pairs")
            for row, value in zip(pairs[::2], pairs[1::2]):
                if row not in rows:
                    raise ValueError(f"{where}: row {row!r} is not declared in ROWS")
                if (section, row) in sides:  # HiGHS kept one of the two, the first or the last
                    raise ValueError(f"{where}: row {row!r} has a second {section} entry")
                sides.add((section, row))
                _number(value, where, infinite=True)
        elif section == "BOUNDS":
            _mps_bound(fields, columns, where)
        elif section in ("QUADOBJ", "QMATRIX", "QSECTION"):
            if len(fields) != 3 or fields[0] not in columns or fields[1] not in columns:
                raise ValueError(f"{where}: expected 'column column value' of declared columns")
            _number(fields[2], where)
        elif section == "":
            raise ValueError(f"{where}: a data line before any section")
        elif section == "NAME":  # a misspelt header (OBJSENS) was read as nothing: a maximisation lost
            raise ValueError(f"{where}: {fields[0]!r} is not an MPS section (ROWS, COLUMNS, RHS, RANGES, BOUNDS, "
                             "OBJSENSE, ...), and NAME takes no data lines")
    if not ended:
        raise ValueError("no ENDATA line (the file is cut short)")
    return sense


def _mps_sense(word: str, where: str, given: str | None) -> str:
    """The sense a word of OBJSENSE names; a second one is refused (HiGHS kept the last)."""
    if word.upper() not in _MPS_SENSES:
        raise ValueError(f"{where}: OBJSENSE takes MAX or MIN, got {word!r}")
    if given is not None:
        raise ValueError(f"{where}: a second objective sense")
    return _MPS_SENSES[word.upper()]


def _mps_bound(fields: list[str], columns: set[str], where: str) -> None:
    """``type [set] column [value]``: the value types take one number, MI/PL/FR/BV an optional
    one (HiGHS ignores it); the set name is told apart by the count (and, where the value is
    optional, by which word is a column)."""
    kind = fields[0].upper()
    if kind in _MPS_VALUE_BOUNDS:
        shapes = {4: (2, 3), 3: (1, 2)}
    elif kind in _MPS_FREE_BOUNDS or kind == "BV":
        with_value = len(fields) == 3 and fields[1] in columns and fields[2] not in columns
        shapes = {4: (2, 3), 3: (1, 2) if with_value else (2, None), 2: (1, None)}
    else:
        raise ValueError(f"{where}: unknown bound type {fields[0]!r}")
    if len(fields) not in shapes:
        raise ValueError(f"{where}: a {kind} bound is '{kind} [set] column{' value' if kind in _MPS_VALUE_BOUNDS else ''}'")
    col, value = shapes[len(fields)]
    if fields[col] not in columns:
        raise ValueError(f"{where}: column {fields[col]!r} has no COLUMNS entry")
    if value is not None:
        _number(fields[value], where, infinite=True)


# A number where a word starts (after a space or an operator): decimal digits, a point, an
# exponent; what follows it must be a name (a coefficient glued to its variable, as in 2x1).
_LP_NUMBER = re.compile(r"(?<![^\s+\-*/^<>=:\[\]])((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)([^\s+\-*/^<>=:\[\]]*)")
_LP_END = re.compile(r"^\s*end\s*$", re.IGNORECASE)


def check_lp_text(text: str) -> None:
    """The LP format's counterpart of :func:`check_mps_text`: an ``end`` line (a file cut
    short), and every number a number (``0x10`` read as 16, ``1_000`` as 1, ``1e400`` as an
    infinite bound; ``nan`` is read as a number there, never as a name). Non-ASCII text is
    refused (HiGHS took a non-ASCII digit for a new variable)."""
    ended = False
    lines = _lines(text, _lp_data)
    for number, raw in enumerate(lines, start=1):
        line = _lp_data(raw)
        where = f"line {number}"
        if not line.isascii():
            raise ValueError(f"{where}: holds a non-ASCII character")
        if _LP_END.match(line):
            ended = True
            continue
        for token in line.split():
            if token.lstrip("+-").lower() == "nan":
                raise ValueError(f"{where}: 'nan' is not a number")
        for match in _LP_NUMBER.finditer(line):
            digits, glued = match.groups()
            if glued[:1] in ("_", ".") or glued[:1].isdigit() or (digits == "0" and glued[:1] in ("x", "X")):
                raise ValueError(f"{where}: {digits + glued!r} is not a number")
            _number(digits, where)
    if not ended:
        raise ValueError("no 'end' line (the file is cut short)")
    _check_lp_expressions(lines)


# a sense keyword alone or before the objective's text ("max:" is not one: HiGHS read its objective as 0)
_LP_OBJECTIVE = re.compile(r"^\s*(max|maximize|maximise|maximum|min|minimize|minimise|minimum)(?=\s|$)", re.IGNORECASE)
_LP_CONSTRAINTS = re.compile(r"^\s*(subject\s+to|such\s+that|st|s\.t\.)(?=\s|$)", re.IGNORECASE)
_LP_OTHER = re.compile(r"^\s*(bounds?|generals?|gen|integers?|binary|binaries|bin|semi-continuous|semis?|sos|end)(?=\s|$)",
                       re.IGNORECASE)
_LP_TOKEN = re.compile(r"(?P<quad>\[[^\]]*\](?:\s*/\s*2)?)|(?P<num>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
                       r"|(?P<cmp><=|>=|=<|=>|<|>|=)|(?P<sign>[+-])|(?P<colon>:)|(?P<name>[^\s+\-<>=:\[\]]+)")


def _check_lp_expressions(lines: list[str]) -> None:
    """What HiGHS's LP reader reads as another program (measured): text before the objective's
    sense keyword, or no such keyword (``max:``, ``maxi``, a missing line: the whole objective
    read as 0), a variable twice in the objective (``2 x + 3 x`` is 3 x), a constant on a
    constraint's left side (``x + 2 <= 4`` is x <= 4), two terms with no operator between them
    (``8 x0 x1`` is 8 x0 + x1; ``8e x0`` is 8 e + x0), an operator with no term after it (``2 x +``
    ended the objective with a constant 1), a comparison with neither a term nor a label before it
    (``x <= 4 <= 5`` added the row 0 <= 5), and the bounds of :func:`_check_lp_declarations`. All
    are refused. The objective and the constraints
    are read as whole sections: a term, a quadratic ``[ ... ]`` or a constraint may run on over
    lines (HiGHS wraps the objective of 20 variables or more)."""
    section = ""
    parts: dict[str, list[tuple[int, str]]] = {"objective": [], "constraints": [], "bounds": [], "binary": []}
    for number, raw in enumerate(lines, start=1):
        line = _lp_data(raw)
        for pattern, name in ((_LP_OBJECTIVE, "objective"), (_LP_CONSTRAINTS, "constraints"), (_LP_OTHER, "other")):
            match = pattern.match(line)
            if match:
                section, line = name, line[match.end():]
                if name == "other":  # the bounds and the binaries are checked, the other sections not
                    word = match.group(1).lower()
                    section = "bounds" if word.startswith("bound") else "binary" if word.startswith("bin") else "other"
                break
        if not section and line.strip():
            raise ValueError(f"line {number}: an LP file opens with its objective sense (max or min, alone or before "
                             f"the objective), got {line.strip()[:40]!r}")
        if section in parts:
            parts[section].append((number, line))
    if not section:
        raise ValueError("no objective: an LP file opens with max or min")
    objective, constraints = _lp_tokens(parts["objective"]), _lp_tokens(parts["constraints"])
    seen: dict[str, int] = {}
    for i, (number, kind, word) in enumerate(objective):
        follows = objective[i + 1][1] if i + 1 < len(objective) else ""
        _check_operator(number, kind, word, follows)
        if kind == "name" and follows != "colon":
            if word in seen:
                raise ValueError(f"line {number}: variable {word!r} appears twice in the objective (HiGHS would keep "
                                 "only its last coefficient); add the coefficients")
            seen[word] = number
    left, term = True, False  # term: the constraint so far has a term or a label (HiGHS writes an empty row "r: >= 0")
    for i, (number, kind, word) in enumerate(constraints):
        follows = constraints[i + 1][1] if i + 1 < len(constraints) else ""
        if left:
            _check_operator(number, kind, word, follows)
            term = term or kind in ("name", "num", "quad")
        if kind == "cmp":
            if not term:
                raise ValueError(f"line {number}: {word!r} with neither a term nor a label before it (HiGHS would "
                                 "read 'x <= 4 <= 5' as two rows, one of them 0 <= 5)")
            left, term = False, False
        elif not left and kind in ("num", "name"):
            left = True  # the right side's one number (or infinity) ends the constraint
        elif left and kind == "num" and follows != "name":
            raise ValueError(f"line {number}: a constant ({word}) on a constraint's left side (HiGHS would drop it); "
                             "move it to the right side")
    _check_lp_declarations(parts["bounds"], parts["binary"])


_LP_NOT_NAMES = frozenset({"inf", "infinity", "free"})


def _check_lp_declarations(bounds: list[tuple[int, str]], binary: list[tuple[int, str]]) -> None:
    """What HiGHS's LP reader reads as another program in the bounds (measured): a second bound on
    one side of a variable (``x <= 3`` then ``x <= 2``: the last kept; the MPS reader refuses it;
    ``x free`` then ``x <= 5`` is one bound on each side, but ``x <= 5`` then ``x free`` loses the
    5), and a bound outside [0, 1] on a binary variable (``binary x`` and ``x <= 5``: a general
    integer in [0, 5]; HiGHS writes each binary with the bound 1, which is the same program). A
    variable that only a bound or an integer section names is a column of its own, as HiGHS
    reads it (and writes a column without entries)."""
    given: dict[tuple[str, str], int] = {}
    values: dict[str, tuple[int, list[float]]] = {}  # each variable's bound values, and the line of the last
    for number, line in bounds:
        tokens = [(kind, word) for _, kind, word in _lp_tokens([(number, line)])]
        names = [word for kind, word in tokens if kind == "name" and word.lower() not in _LP_NOT_NAMES]
        if len(names) != 1:
            continue  # not a bound of one variable: HiGHS's reader judges it
        (name,) = names
        comparisons = [(i, word) for i, (kind, word) in enumerate(tokens) if kind == "cmp"]
        at = next(i for i, (kind, word) in enumerate(tokens) if word == name)
        free = any(word.lower() == "free" for _, word in tokens)
        if free:  # sets the lower side and clears the upper: a bound given before it is lost
            checked, recorded = ("lower", "upper"), ("lower",)
        elif len(comparisons) != 1 or comparisons[0][1] == "=":
            checked = recorded = ("lower", "upper")
        else:
            i, op = comparisons[0]
            checked = recorded = ("upper",) if ("<" in op) == (at < i) else ("lower",)
        for side in checked:
            if (name, side) in given:
                raise ValueError(f"line {number}: a second {side} bound on {name!r} (the first on line "
                                 f"{given[name, side]}; HiGHS would keep only the last)")
        for side in recorded:
            given[name, side] = number
        values[name] = (number, values.get(name, (0, []))[1] + ([-math.inf] if free else _lp_bound_values(tokens)))
    for number, line in binary:
        for name in line.split():
            where, bound = values.get(name, (0, []))
            if any(not 0.0 <= v <= 1.0 for v in bound):
                raise ValueError(f"line {number}: {name!r} is binary, but its bound on line {where} reaches outside "
                                 "[0, 1] (HiGHS would read a general integer within that bound)")


def _lp_bound_values(tokens: list[tuple[str, str]]) -> list[float]:
    """The numbers of a bound line, signed (``inf`` and ``infinity`` as infinite)."""
    out, sign = [], 1.0
    for kind, word in tokens:
        if kind == "sign":
            sign = -1.0 if word == "-" else 1.0
            continue
        if kind == "num":
            out.append(sign * float(word))
        elif kind == "name" and word.lower() in ("inf", "infinity"):
            out.append(sign * math.inf)
        sign = 1.0
    return out


def _lp_tokens(lines: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """(line number, kind, text) of the terms of a section's lines read as one text."""
    text = "\n".join(line for _, line in lines)
    starts = np.cumsum([0] + [len(line) + 1 for _, line in lines])
    return [(lines[int(np.searchsorted(starts, m.start(), side="right")) - 1][0], m.lastgroup or "", m.group())
            for m in _LP_TOKEN.finditer(text)]


def _check_operator(number: int, kind: str, word: str, follows: str) -> None:
    """A term of an expression: a name is followed by an operator, a comparison, a colon (a
    label) or the end, never by another term; a number by its variable (``8 x0``) or as above;
    an operator by a term."""
    if (kind == "name" and follows in ("name", "num", "quad")) or (kind == "num" and follows in ("num", "quad")):
        raise ValueError(f"line {number}: no operator after {word!r} (HiGHS would read two terms as something "
                         "else); write + or - between terms")
    if kind == "sign" and follows not in ("name", "num", "quad"):
        raise ValueError(f"line {number}: no term after {word!r} (HiGHS would read a constant {word}1)")


@register_path_reader(*MODEL_SUFFIXES)
def read_model_file(path: str | Path) -> list[Model]:
    """An MPS or LP file through HiGHS's reader, after :func:`check_mps_text` /
    :func:`check_lp_text`; ValueError naming the reason for a malformed or unsupported file
    (semi-continuous or semi-integer columns, quadratic constraints)."""
    import highspy

    from optsched.solvers.highs import silent_highs

    path = Path(path)
    text = read_user_text(path, "file")
    if "\x00" in text:
        raise ValueError(f"file: {path.name}: holds a NUL byte")
    try:
        sense = check_mps_text(text) if path.suffix.lower() == ".mps" else check_lp_text(text)
    except ValueError as exc:
        raise ValueError(f"file: {path.name}: {exc}") from None
    h = silent_highs()
    if not _read_by_highs(h, path, text):
        raise ValueError(f"file: HiGHS cannot read {path.name} as an {path.suffix.lstrip('.').upper()} model "
                         "(malformed, or a feature it does not read: quadratic constraints, SOS, ...)")
    model = h.getModel()
    lp = model.lp_
    kinds = {int(t) for t in lp.integrality_} if len(lp.integrality_) else set()
    supported = {int(highspy.HighsVarType.kContinuous), int(highspy.HighsVarType.kInteger)}
    if kinds - supported:
        raise ValueError(f"file: {path.name} has semi-continuous or semi-integer columns, which no backend fits")
    import scipy.sparse as sp

    a = lp.a_matrix_
    n, m = lp.num_col_, lp.num_row_
    if n == 0:
        raise ValueError(f"file: {path.name} has no variables")
    A = sp.csc_matrix((np.asarray(a.value_), np.asarray(a.index_), np.asarray(a.start_)), shape=(m, n))
    hessian = None
    if model.hessian_.dim_:
        hs = model.hessian_
        tri = sp.csc_matrix((np.asarray(hs.value_), np.asarray(hs.index_), np.asarray(hs.start_)), shape=(n, n))
        hessian = tri + sp.tril(tri, k=-1).T  # HiGHS keeps the lower triangle
    integ = np.zeros(n, dtype=bool) if not len(lp.integrality_) else np.array(
        [int(t) == int(highspy.HighsVarType.kInteger) for t in lp.integrality_])
    return [LinearProgram(np.asarray(lp.col_cost_), A, np.asarray(lp.row_lower_), np.asarray(lp.row_upper_),
                         np.asarray(lp.col_lower_), np.asarray(lp.col_upper_), integ,
                         sense or ("max" if lp.sense_ == highspy.ObjSense.kMaximize else "min"), float(lp.offset_), hessian)]


def write_model_file(model: Model, path: str | Path) -> Path:
    """``model.write(path)`` (MPS or LP by the suffix), with the errors named for ``export``."""
    path = Path(path)
    if path.suffix.lower() not in MODEL_SUFFIXES:
        raise ValueError(f"--out: expected a .mps or .lp file, got {path.name!r}")
    return model.write(path)
