"""What a solver's C code writes to the process's stdout and stderr, captured instead of printed.

OSQP (through cvxpy) prints "ERROR in validate_settings" with printf and SCIP prints
"[paramset.c] ERROR" to stderr when a pass-through option is out of range, beside the error
they return: a solve never prints, so the text is caught at the file descriptors (Python's
``contextlib.redirect_stdout`` does not reach C) and handed back to go into the result or the
error message. The descriptors are the process's: threads take turns at a captured block (a
lock), or one thread's restore left another's redirection in place and every later line of
the process went to a deleted file.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import io
import os
import sys
import tempfile
import threading
from typing import IO, Iterator

_LIBC = ctypes.CDLL(None)
_SINK: "tuple[int, IO[bytes]] | None" = None
_TURN = threading.RLock()  # one captured block at a time in the process (nested ones in its thread)


def output_turn() -> "threading.RLock":
    """The lock of :func:`captured_c_output`, for a block that swaps the process's output
    streams by other means (Pyomo's own capture of ``sys.stdout``): a cvxpy solve beside a Pyomo
    one raised "I/O operation on closed file" and left ``sys.stdout`` a StringIO for good."""
    return _TURN


@contextlib.contextmanager
def captured_c_output() -> Iterator[list[str]]:
    """Inside the block, file descriptors 1 and 2 write to a temporary file and Python's
    ``sys.stdout`` / ``sys.stderr`` to a buffer (OSQP's Python module prints through
    ``sys.stdout``); the list it yields holds that text (stripped) once the block ends."""
    with _TURN:
        with _captured(captured := []):
            yield captured


@contextlib.contextmanager
def _captured(captured: list[str]) -> Iterator[None]:
    global _SINK
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = (os.dup(1), os.dup(2))
    python_text = io.StringIO()
    if _SINK is None or _SINK[0] != os.getpid():  # one temporary file per process (not shared with
        _SINK = (os.getpid(), tempfile.TemporaryFile())  # a forked child), emptied before each use
        atexit.register(_SINK[1].close)
    sink = _SINK[1]
    sink.seek(0)
    sink.truncate()
    try:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        with contextlib.redirect_stdout(python_text), contextlib.redirect_stderr(python_text):
            yield
    finally:
        _LIBC.fflush(None)  # C stdio buffers a file (not a terminal): write it out here
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
        sink.seek(0)
        text = python_text.getvalue() + sink.read().decode("utf-8", errors="replace")
        captured.append(text.strip())
