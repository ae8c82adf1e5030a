"""Sweeps: a grid of runs from a TOML file, run in parallel, stored append-only, resumable.

``optsched sweep CONFIG.toml [--workers N] [--dask ADDRESS|local] [--out DIR] [--batch-size N]``

Two kinds of sweep (strict TOML: an unknown or misplaced key is a ``ValueError`` naming it):

``kind = "experiment"``: ``experiment`` (a paper, :func:`optsched.papers.paper_names`) x every
combination of the ``[grid]`` lists x ``seeds`` x ``policies`` (default: all of the paper's
policies, or what its sweep summary's ``default_policies`` picks, e.g. esdp's config
``policies``). ``[base]`` holds fixed settings. Keys of ``[base]`` and ``[grid]`` are keys of
the paper's config dataclass, except those no sweep run reads (``SweepSummary.unused``: the
study, figure axes, repeats), which are refused; a scalar for a list-typed key means a
one-element list. One run
= one policy on one config and seed; its row holds the grid values, the metrics of the paper's
:class:`~optsched.papers.SweepSummary`, the full config (JSON), the package versions (JSON) and
the code that ran it (``source``: git commit and uncommitted changes, JSON; a sweep whose stored
rows other code ran is refused, :func:`~optsched.sweep.runner.check_source_unchanged`).

``kind = "solve"``: ``models`` (kinds of :mod:`optsched.generators`) x ``sizes`` x ``seeds``
x ``backends`` (pairs where the backend does not fit the model kind are left out; a backend
that fits none is an error). One run = one seeded random instance (generator draws from
``default_rng([seed, crc32(model), size])``, the same for every backend) solved with
``optsched.solve(model, backend, time_limit=..., verify=..., **options[backend])``; its row
holds ``n`` (``model.size``), ``status``, ``objective``, ``bound``, ``gap``, ``iterations``
and ``runtime_s``.

Run keys: 16 hex digits of SHA-256 of the canonical JSON of the run's full config (defaults
included) and seed (:func:`optsched.sweep.grid.run_key`). The store ``OUT/store/`` is a
directory of CSV parts, one per finished batch, each written to a temporary file, fsynced
and renamed into place (:mod:`optsched.sweep.store`): a killed sweep loses at most its
in-flight batches, never leaves half a row, and a rerun skips every stored key. At the end
the sweep's rows are consolidated, sorted by key, into ``OUT/results.csv`` (no timings:
byte-identical for the same config whatever the executor, batching or interruptions, given
deterministic backends), ``OUT/timings.csv`` (``key, runtime_s, cpu_s, executor, workers``:
the session that ran each row, as a resumed sweep's rows can come from several) and
``OUT/sweep.json`` (the sweep, counts, this session's executor, wall time, versions, source). All three
are written atomically. A run that read files (a trace directory) names each with its SHA-256
in its row's ``inputs`` column.

Executors (:mod:`optsched.sweep.executors`): ``--workers 1`` runs in-process; otherwise a
``ProcessPoolExecutor`` with ``--workers`` processes (default ``os.cpu_count()``); ``--dask
local`` a Dask ``LocalCluster`` of ``--workers`` single-threaded processes; ``--dask
tls://host:8786`` (with ``--dask-ca``, ``--dask-cert``, ``--dask-key`` or dask's TLS config) or,
for a trusted scheduler only (no encryption or authentication, and results are unpickled),
``--dask tcp://host:8786`` an existing cluster (its workers need optsched installed; ``pip
install "optsched[dask]"``). One sweep per output directory at a time: the store's lock
(:meth:`optsched.sweep.store.Store.locked`) refuses a second. Runs are batched into tasks of ``--batch-size`` runs; by default
the batches adapt to task length (:mod:`optsched.sweep.batches`: one run per worker first,
then about half a second of runs per task at the measured run time, 1..64 runs, two tasks
per worker kept for the end). Workers import each experiment's or backend's module once,
before their first task. Only the calling process writes files. A tqdm bar
(stderr, only on a terminal) shows done / total and the ETA.
"""

from optsched.sweep.grid import SweepRun, SweepConfig, expand, load_sweep, run_key
from optsched.sweep.runner import SweepReport, run_sweep

__all__ = ["SweepRun", "SweepConfig", "SweepReport", "expand", "load_sweep", "run_key", "run_sweep"]
