"""Ctrl-C during a long solve in a solver library.

A solver that runs in C++ without the GIL leaves Python's SIGINT handler nothing to run until
it returns (CP-SAT under a 60 s limit ran on for 56 s after Ctrl-C). :func:`interruptible`
runs the solve on a helper thread while the main thread waits, where Python raises
KeyboardInterrupt at once; the solver is then asked to stop and its answer dropped.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable, TypeVar

T = TypeVar("T")
_THREAD: ThreadPoolExecutor | None = None  # one helper, kept: about 10 us a solve, against 30 for a new thread


def _forget_thread() -> None:
    """In a forked child: the helper's thread did not come along (a solve submitted to it waited forever)."""
    global _THREAD
    _THREAD = None


os.register_at_fork(after_in_child=_forget_thread)


def interruptible(call: Callable[[], T], stop: Callable[[], object]) -> T:
    """``call()``, stopped by ``stop()`` when Ctrl-C arrives (KeyboardInterrupt is re-raised).
    Off the main thread (where no signal arrives) ``call()`` runs as it is."""
    global _THREAD
    if threading.current_thread() is not threading.main_thread():
        return call()
    if _THREAD is None:
        _THREAD = ThreadPoolExecutor(1, thread_name_prefix="optsched-solve")
    future = _THREAD.submit(call)
    try:
        return future.result()
    except KeyboardInterrupt:
        stop()
        while True:  # a second Ctrl-C must not leave the solve running on an object the caller keeps
            try:
                wait([future])
                break
            except KeyboardInterrupt:
                stop()
        raise
