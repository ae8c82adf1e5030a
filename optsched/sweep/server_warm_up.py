"""A sweep's warm-up runs, run once in its fork server: a ``multiprocessing`` preload module, so
every worker forked from the server starts with the runs' modules imported and their policies'
compiled kernels loaded, where each worker would otherwise load them itself (1-2 s a process).

A preload is a module name and takes no arguments: the runs come as JSON in the environment
variable :data:`WARM_RUNS`, which :func:`optsched.sweep.executors._fork_server` sets for the
server's start only. Imported anywhere else (the variable unset), it does nothing.
"""

from __future__ import annotations

import json
import os

WARM_RUNS = "OPTSCHED_SWEEP_WARM_RUNS"

ran: frozenset[str] = frozenset()  # the keys of the runs done here: a forked worker does not repeat them

_given = os.environ.pop(WARM_RUNS, None)
if _given:
    from optsched.sweep.executors import warm_worker
    from optsched.sweep.grid import SweepRun

    _runs = [SweepRun(**fields) for fields in json.loads(_given)]
    warm_worker((), _runs)
    ran = frozenset(run.key for run in _runs)
