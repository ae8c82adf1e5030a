"""What a sweep's fork server runs as it starts (a ``multiprocessing`` preload module; imported
anywhere else, where :data:`SERVER` is not set, it does nothing):

- the sweep's warm-up runs, so every worker forked from the server starts with the runs'
  modules imported and their policies' compiled kernels loaded, where each worker would
  otherwise load them itself (1-2 s a process). A preload is a module name and takes no
  arguments: the runs come as JSON in the environment variable :data:`WARM_RUNS`;
- a quiet exit for a worker forked while the sweep shuts its pool down (a Ctrl-C about a second
  into a sweep): its pool's queues are gone, and each such worker printed a 15-line
  ``FileNotFoundError`` traceback under the sweep's "optsched: interrupted".

:func:`optsched.sweep.executors._fork_server` sets both variables for the server's start only.
"""

from __future__ import annotations

import json
import os
import sys
from types import TracebackType

SERVER = "OPTSCHED_SWEEP_FORK_SERVER"
WARM_RUNS = "OPTSCHED_SWEEP_WARM_RUNS"

ran: frozenset[str] = frozenset()  # the keys of the warm-up runs done here: a forked worker does not repeat them


def quiet_start_failure(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    """``sys.excepthook`` of the server's children: silent for a worker that found its pool's
    semaphores gone as it started (``FileNotFoundError`` in ``multiprocessing.synchronize``), the
    interpreter's own hook for anything else."""
    frames = []
    at = tb
    while at is not None:
        frames.append(at.tb_frame.f_code.co_filename)
        at = at.tb_next
    if isinstance(value, FileNotFoundError) and any(f.endswith(os.path.join("multiprocessing", "synchronize.py"))
                                                    for f in frames):
        return
    sys.__excepthook__(kind, value, tb)


if os.environ.pop(SERVER, None):
    sys.excepthook = quiet_start_failure
    _given = os.environ.pop(WARM_RUNS, None)
    if _given:
        from optsched.sweep.executors import warm_worker
        from optsched.sweep.grid import SweepRun

        _runs = [SweepRun(**fields) for fields in json.loads(_given)]
        warm_worker((), _runs)
        ran = frozenset(run.key for run in _runs)
