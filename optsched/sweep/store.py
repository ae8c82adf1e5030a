"""The append-only run store: one CSV part file per finished batch, renamed into place.

A part is written to a hidden temporary file in the store directory, flushed and fsynced,
then ``os.replace``-d to ``part-<time_ns>-<digest>.csv`` (and the directory fsynced), so a
kill leaves either the whole part or none of it, never half a row. Readers merge every part
in name (= creation) order and keep the first row of a key; leftover temporaries of a killed
writer are ignored and removed by :meth:`Store.clean`. One writer at a time: a sweep holds
:meth:`Store.locked` (an ``flock`` on ``.lock`` in the store) from its clean-up to its last
file, and a second sweep on the same store is refused.

Cells are text from the start (:func:`cell`: ``repr`` for floats, ``true``/``false``,
canonical JSON for lists), so reading a part back gives exactly the strings that were
written, whatever the batching: the consolidated files are byte-identical for any executor.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import time
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from optsched.artifacts import create_temporary, write_text
from optsched.files import read_user_bytes

Row = dict[str, str]
LOCK = ".lock"


def cell(value: Any) -> str:
    """One CSV cell, the same text for the same value on every machine and executor."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # numpy scalar
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # shortest round-trip text; 'nan', 'inf', '-inf'

    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=lambda v: v.tolist() if hasattr(v, "tolist") else list(v))


def csv_text(rows: Iterable[Mapping[str, str]], columns: list[str]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([row.get(c, "") for c in columns])
    return buf.getvalue()


def column_order(rows: Iterable[Mapping[str, str]]) -> list[str]:
    """Columns in order of first appearance (deterministic for rows in a fixed order)."""
    out: dict[str, None] = {}
    for row in rows:
        out.update(dict.fromkeys(row))
    return list(out)


class Store:
    """Rows keyed by ``key`` under ``root`` (a directory of part files)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def parts(self) -> list[Path]:
        return sorted(self.root.glob("part-*.csv")) if self.root.is_dir() else []

    @contextlib.contextmanager
    def locked(self) -> Iterator["Store"]:
        """Hold the store's one-writer lock (``fcntl.flock`` on ``ROOT/.lock``) for the block.

        A second sweep on the same store would run every pending run again and its start-up
        :meth:`clean` would delete this one's in-flight part files: it is refused with a
        ``ValueError``. The kernel drops the lock when the holder exits, however it exits, so
        a killed sweep never leaves a stale lock."""
        import fcntl

        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                raise ValueError(f"sweep: {self.root.parent} is in use by another sweep (pid {holder}); wait for it "
                                 "to finish or choose another --out") from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield self
        finally:
            os.close(fd)  # releases the lock

    def clean(self) -> int:
        """Remove temporaries left by a killed writer; returns how many."""
        stale = list(self.root.glob(".part-*.tmp")) if self.root.is_dir() else []
        for p in stale:
            p.unlink(missing_ok=True)
        return len(stale)

    def rows(self) -> dict[str, Row]:
        """key -> row, first occurrence in part order (a key is never stored twice by one sweep).
        A part damaged from outside (no key column, a row cut short or too long, not UTF-8) is
        a ValueError naming it: its rows would be taken as done."""
        out: dict[str, Row] = {}
        for part in self.parts():
            damaged = f"sweep: {part} is a damaged store part"
            try:  # the bounded reader: a part replaced by a FIFO or a link to /dev/zero is refused, not read
                data = read_user_bytes(part, "sweep store part")
            except ValueError as exc:  # not a regular file, or past the size cap
                raise ValueError(f"{damaged} ({str(exc).removeprefix('sweep store part: ')}); remove it to run "
                                 "its runs again") from None
            try:
                text = data.decode("utf-8")
                if not text.endswith("\n"):  # every part is written whole, rows ending in "\n"
                    raise ValueError(f"{damaged} (cut short); remove it to run its runs again")
                with io.StringIO(text, newline="") as fh:
                    reader = csv.DictReader(fh, strict=True)  # a quoted field cut short is an error, not a value
                    if reader.fieldnames is None or "key" not in reader.fieldnames:
                        raise ValueError(f"{damaged} (no 'key' column); remove it to run its runs again")
                    for number, row in enumerate(reader, start=2):
                        if None in row or None in row.values() or not row["key"]:
                            raise ValueError(f"{damaged} (row {number} is cut short or too long); remove it to run "
                                             "its runs again")
                        out.setdefault(row["key"], {k: v or "" for k, v in row.items()})
            except UnicodeDecodeError:
                raise ValueError(f"{damaged} (not UTF-8 text); remove it to run its runs again") from None
            except csv.Error as exc:  # a quote cut short (the line break after it kept)
                raise ValueError(f"{damaged} ({exc}); remove it to run its runs again") from None
        return out

    def keys(self) -> set[str]:
        return set(self.rows())

    def append(self, rows: list[Row]) -> Path | None:
        """Atomically add one part holding ``rows``; None when ``rows`` is empty."""
        if not rows:
            return None
        self.root.mkdir(parents=True, exist_ok=True)
        text = csv_text(rows, column_order(rows))
        digest = hashlib.sha256("".join(sorted(r["key"] for r in rows)).encode()).hexdigest()[:12]
        final = self.root / f"part-{time.time_ns():020d}-{digest}.csv"
        fd, tmp = create_temporary(self.root, ".part-", ".tmp")
        try:
            with os.fdopen(fd, "w", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError) and exc.filename is None:  # e.g. a full disk: name the file
                raise OSError(exc.errno, exc.strerror or str(exc), str(final)) from exc
            raise
        _fsync_dir(self.root)
        return final


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_table(path: str | Path, rows: list[Mapping[str, str]], columns: list[str]) -> Path:
    """A consolidated CSV, written atomically (temporary file, then rename)."""
    return write_text(path, csv_text(rows, columns))
