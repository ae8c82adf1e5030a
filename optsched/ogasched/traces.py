"""Alibaba cluster traces -> an OGASched scenario (Section IV, "Traces").

Readers (one per file; each takes a path, so the full Alibaba tables work as well as the
samples in the shared data directory):

- ``read_v2023_nodes``  gpu-v2023 ``openb_node_list_all_node.csv``: sn, cpu_milli, memory_mib, gpu, model
- ``read_v2020_machines`` gpu-v2020 ``pai_machine_spec.csv`` (no header): machine, gpu_type,
  cap_cpu (cores), cap_mem (GB), cap_gpu
- ``read_v2023_pods``   gpu-v2023 pod lists: name, cpu_milli, memory_mib, num_gpu, gpu_milli
  [, gpu_spec, creation_time] (the ``multigpu50`` variant has no times: arrivals then need
  the default list)
- ``read_v2018_tasks``  v2018 ``batch_task`` rows (no header): arrival, job, task, duration,
  plan_cpu (100 = one core), plan_mem (0-100, share of a machine), instance_num

Project-wide rule for bad input: a row that cannot be parsed is skipped and counted in one
``warnings.warn`` naming the first few row numbers (1-based, header = row 1); a file without a
required column, a file without data rows (empty, or a header alone), and a file none of whose
rows parse raise ``ValueError``. A quantity is a number in [0, ``LARGEST_QUANTITY``] (no machine
or job comes near; 1e308 memory overflowed its unit conversion, and an integer beyond 64 bits
made an object column); the files hold no quoted fields, so a quote is an ordinary character
(a stray one once swallowed the rest of a file into one field).

``alibaba_scenario`` builds the scenario: K = 3 resources (CPU cores, memory GiB, GPUs; the
GPU model is a locality constraint), nodes sampled from the machines of both clusters, job
types (ports) by k-means on the log requests of the v2023 pods (GPU jobs) and of the v2018
tasks (multi-instance batch jobs), service locality from capacity fit and GPU model, and
per-slot arrival counts from creation / arrival times.
"""

from __future__ import annotations

import csv
import io
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from optsched.files import open_user_file
from optsched.io.numbers import parse_float
from optsched.ogasched.scenario import Scenario
from optsched.ogasched.utilities import UTILITY_KINDS

_SHOWN_BAD_ROWS = 5
LARGEST_QUANTITY = 1e12


@dataclass(frozen=True)
class Table:
    """Columns of one trace file as numpy arrays, plus how many rows were skipped."""

    columns: dict[str, np.ndarray]
    skipped: int

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]


def _warn_skipped(path: Path, bad: list[int]) -> None:
    if bad:
        shown = ", ".join(map(str, bad[:_SHOWN_BAD_ROWS]))
        more = "" if len(bad) <= _SHOWN_BAD_ROWS else ", ..."
        warnings.warn(f"{path}: skipped {len(bad)} unparseable row(s) (rows {shown}{more})", stacklevel=4)


def _read(
    path: str | Path,
    fields: dict[str, Callable[[str], Any]],
    *,
    header: bool,
    optional: Sequence[str] = (),
) -> Table:
    """Parse ``fields`` (name -> converter) of a CSV; by name with a header, else by position."""
    path = Path(path)
    try:
        return _parse(path, fields, header=header, optional=optional)
    except UnicodeDecodeError:
        raise ValueError(f"trace: {path} is not a text file (not UTF-8)") from None
    except csv.Error as exc:
        raise ValueError(f"trace: {path} is not a readable CSV file: {exc}") from None


def _parse(path: Path, fields: dict[str, Callable[[str], Any]], *, header: bool, optional: Sequence[str]) -> Table:
    values: dict[str, list[Any]] = {}
    bad: list[int] = []
    with io.TextIOWrapper(open_user_file(path, "trace"), encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, quoting=csv.QUOTE_NONE)
        if header:
            try:
                named = [h.strip() for h in next(reader)]
            except StopIteration:
                raise ValueError(f"trace: {path} is empty") from None
            head = _without_trailing_empties(named)
            for name in fields:
                if name not in head and name not in optional:
                    raise ValueError(f"{path}: missing required column {name!r}")
            pos = {name: head.index(name) for name in fields if name in head}
            first_row, widths = 2, {len(head), len(named)}  # a header's trailing comma, or not, in the rows
        else:
            pos = {name: i for i, name in enumerate(fields)}
            first_row, widths = 1, {len(fields)}
        values = {name: [] for name in pos}
        for number, row in enumerate(reader, start=first_row):
            if not row:  # a blank line
                continue
            if len(row) not in widths:  # a field too many or too few shifts the rest (a node of 262,144 GPUs)
                bad.append(number)
                continue
            try:
                parsed = {name: fields[name](row[i].strip()) for name, i in pos.items()}
            except (IndexError, ValueError):
                bad.append(number)
                continue
            for name, v in parsed.items():
                values[name].append(v)
    if bad and not any(len(v) for v in values.values()):
        raise ValueError(f"trace: {path}: none of its {len(bad)} row(s) can be parsed (first bad row {bad[0]})")
    if not bad and not any(len(v) for v in values.values()):
        raise ValueError(f"trace: {path} holds no data rows")
    _warn_skipped(path, bad)
    return Table({k: np.asarray(v) for k, v in values.items()}, len(bad))


def _without_trailing_empties(fields: list[str]) -> list[str]:
    """A header's names without the empty ones at its end (a trailing comma)."""
    end = len(fields)
    while end and not fields[end - 1].strip():
        end -= 1
    return fields[:end]


def _nonneg_float(text: str) -> float:
    v = parse_float(text)
    if not 0 <= v <= LARGEST_QUANTITY:
        raise ValueError(text)
    return v


def _nonneg_int(text: str) -> int:
    x = _nonneg_float(text)
    if x != int(x):
        raise ValueError(text)
    return int(x)


def read_v2023_nodes(path: str | Path) -> Table:
    return _read(path, {"sn": str, "cpu_milli": _nonneg_float, "memory_mib": _nonneg_float, "gpu": _nonneg_int,
                        "model": str}, header=True)


def read_v2020_machines(path: str | Path) -> Table:
    return _read(path, {"machine": str, "gpu_type": str, "cap_cpu": _nonneg_float, "cap_mem": _nonneg_float,
                        "cap_gpu": _nonneg_int}, header=False)


def read_v2023_pods(path: str | Path) -> Table:
    return _read(
        path,
        {"name": str, "cpu_milli": _nonneg_float, "memory_mib": _nonneg_float, "num_gpu": _nonneg_int,
         "gpu_milli": _nonneg_float, "gpu_spec": str, "creation_time": _nonneg_float},
        header=True,
        optional=("gpu_spec", "creation_time"),
    )


def read_v2018_tasks(path: str | Path) -> Table:
    return _read(path, {"arrival": _nonneg_float, "job": str, "task": str, "duration": _nonneg_float,
                        "plan_cpu": _nonneg_float, "plan_mem": _nonneg_float, "instance_num": _nonneg_int},
                 header=False)


@dataclass(frozen=True)
class NodePool:
    """Machines of both clusters in common units: (n, 3) capacities and the GPU model."""

    capacity: np.ndarray
    model: np.ndarray
    source: np.ndarray


def node_pool(directory: str | Path) -> NodePool:
    """All machines: gpu-v2023 nodes (cpu_milli/1000 cores, memory_mib/1024 GiB, gpus) and
    gpu-v2020 machines (cores, GB, gpus; gpu_type CPU/MISC means no GPU model)."""
    d = Path(directory)
    parts = []
    f23 = d / "gpu-v2023" / "openb_node_list_all_node.csv"
    f20 = d / "gpu-v2020" / "pai_machine_spec.csv"
    if f23.exists() or f23.is_symlink():  # anything there is read (a directory or FIFO is refused)
        t = read_v2023_nodes(f23)
        cap = np.column_stack([t["cpu_milli"] / 1000.0, t["memory_mib"] / 1024.0, t["gpu"].astype(float)])
        parts.append((cap, t["model"].astype(str), np.full(len(t), "v2023")))
    if f20.exists() or f20.is_symlink():
        t = read_v2020_machines(f20)
        cap = np.column_stack([t["cap_cpu"], t["cap_mem"], t["cap_gpu"].astype(float)])
        model = np.where(t["cap_gpu"] > 0, t["gpu_type"].astype(str), "")
        parts.append((cap, model, np.full(len(t), "v2020")))
    if not parts:
        raise ValueError(f"trace: {d} has neither {f23.relative_to(d)} nor {f20.relative_to(d)}")
    return NodePool(*(np.concatenate([p[i] for p in parts]) for i in range(3)))


@dataclass(frozen=True)
class JobPool:
    """Jobs in common units: (n, 3) requests, arrival time (s), allowed GPU models."""

    request: np.ndarray
    arrival: np.ndarray
    gpu_spec: np.ndarray


def gpu_jobs(directory: str | Path) -> JobPool:
    """gpu-v2023 pods with a creation time: cores, GiB, GPUs = num_gpu * gpu_milli / 1000."""
    t = read_v2023_pods(Path(directory) / "gpu-v2023" / "openb_pod_list_default.csv")
    if "creation_time" not in t.columns:
        raise ValueError("openb_pod_list_default.csv: missing required column 'creation_time'")
    req = np.column_stack([t["cpu_milli"] / 1000.0, t["memory_mib"] / 1024.0, t["num_gpu"] * t["gpu_milli"] / 1000.0])
    spec = t.columns.get("gpu_spec", np.full(len(t), ""))
    return JobPool(req, t["creation_time"].astype(float), spec.astype(str))


def batch_jobs(directory: str | Path, machine_memory_gib: float) -> JobPool:
    """v2018 batch tasks: plan_cpu / 100 cores, plan_mem / 100 of a machine's memory, no GPU."""
    t = read_v2018_tasks(Path(directory) / "v2018-sample" / "sample_tasks.csv")
    req = np.column_stack([t["plan_cpu"] / 100.0, t["plan_mem"] / 100.0 * machine_memory_gib, np.zeros(len(t))])
    return JobPool(req, t["arrival"], np.full(len(t), ""))


@dataclass(frozen=True)
class TraceScenario:
    scenario: Scenario
    counts: np.ndarray  # (slots, |L|) job arrivals per slot and port
    port_jobs: np.ndarray  # how many trace jobs each port stands for
    port_source: np.ndarray  # "gpu" or "batch"


def _cluster(rng: np.random.Generator, req: np.ndarray, k: int) -> np.ndarray:
    """k-means labels of the log requests (scipy kmeans2, ++ init from ``rng``)."""
    from scipy.cluster.vq import kmeans2

    feats = np.log1p(req)
    scale = feats.std(axis=0)
    feats = feats / np.where(scale > 0, scale, 1.0)
    k = min(k, len(np.unique(feats, axis=0)))
    _, labels = kmeans2(feats, k, minit="++", seed=rng)
    return labels


def alibaba_scenario(
    directory: str | Path,
    *,
    rng: np.random.Generator,
    n_ports: int = 10,
    batch_ports: int = 5,
    n_nodes: int = 128,
    slots: int = 2000,
    density: float = 2.5,
    contention: float = 1.0,
    alpha_range: tuple[float, float] = (1.0, 1.5),
    beta_range: tuple[float, float] = (0.3, 0.5),
    utility: str = "mixed",
) -> TraceScenario:
    """A trace-driven scenario (see the module doc). Each job source's time span is mapped
    onto ``slots`` slots. A node r may serve port l when it fits the port's (mean) request on
    every resource and, for GPU jobs, has GPUs of an allowed model; each node then keeps
    |L_r| in {floor(density), ceil(density)} of its eligible ports (uniformly at random)."""
    if not 0 <= batch_ports <= n_ports:
        raise ValueError(f"batch_ports: must be in [0, n_ports], got {batch_ports}")
    if utility != "mixed" and utility not in UTILITY_KINDS:
        raise ValueError(f"utility: unknown kind {utility!r}")
    nodes = node_pool(directory)
    if n_nodes > len(nodes.capacity):
        raise ValueError(f"n_nodes: the trace has only {len(nodes.capacity)} machines, asked for {n_nodes}")
    pick = rng.choice(len(nodes.capacity), size=n_nodes, replace=False)
    capacity, model = nodes.capacity[pick], nodes.model[pick]

    sources = []
    if n_ports - batch_ports:
        sources.append(("gpu", gpu_jobs(directory), n_ports - batch_ports))
    if batch_ports:
        sources.append(("batch", batch_jobs(directory, float(np.median(nodes.capacity[:, 1]))), batch_ports))
    requests, spec, counts, port_jobs, port_source = [], [], [], [], []
    for name, jobs, k in sources:
        labels = _cluster(rng, jobs.request, k)
        span = max(float(jobs.arrival.max() - jobs.arrival.min()), 1.0)
        slot = np.minimum(((jobs.arrival - jobs.arrival.min()) / span * slots).astype(np.int64), slots - 1)
        for c in np.unique(labels):
            member = labels == c
            requests.append(jobs.request[member].mean(axis=0))
            models = {m for s in jobs.gpu_spec[member] for m in s.split("|") if m}
            spec.append(models)
            counts.append(np.bincount(slot[member], minlength=slots))
            port_jobs.append(int(member.sum()))
            port_source.append(name)
    L = len(requests)
    req = np.asarray(requests)
    gpu_ok = np.array([[(r[2] == 0) or (cap[2] > 0 and (not s or m in s)) for cap, m in zip(capacity, model)]
                       for r, s in zip(req, spec)])
    eligible = (req[:, None, :] <= capacity[None, :, :]).all(axis=2) & gpu_ok  # (L, R)
    lo = int(np.floor(density))
    want = np.clip(lo + (rng.random(n_nodes) < density - lo), 1, None)
    keys = np.where(eligible.T, rng.random((n_nodes, L)), np.inf)
    ranks = np.argsort(np.argsort(keys, axis=1), axis=1)
    adj = (ranks < want[:, None]) & eligible.T  # (R, L)
    for l in np.flatnonzero(~adj.any(axis=0)):
        options = np.flatnonzero(eligible[l])
        if options.size == 0:
            raise ValueError(f"n_nodes: no sampled machine can host job type {l} (request {req[l].round(2)})")
        adj[rng.choice(options), l] = True
    node_idx, port_idx = np.nonzero(adj)
    kinds = list(UTILITY_KINDS)
    kind = rng.integers(len(kinds), size=(n_nodes, 3)) if utility == "mixed" else np.full((n_nodes, 3), kinds.index(utility))
    scn = Scenario(
        n_ports=L,
        n_nodes=n_nodes,
        edge_port=port_idx,
        edge_node=node_idx,
        requests=contention * req,
        capacity=capacity,
        alpha=rng.uniform(*alpha_range, size=(n_nodes, 3)),
        kind=kind,
        beta=rng.uniform(*beta_range, size=3),
    )
    return TraceScenario(scn, np.column_stack(counts), np.asarray(port_jobs), np.asarray(port_source))
