"""Alibaba cluster traces -> an OGASched scenario (Section IV, "Traces").

Readers (one per file; each takes a path, so the full Alibaba tables work as well as the
samples in the shared data directory):

- ``read_v2023_nodes``  gpu-v2023 ``openb_node_list_all_node.csv``: sn, cpu_milli, memory_mib, gpu, model
- ``read_v2020_machines`` gpu-v2020 ``pai_machine_spec.csv`` (no header): machine, gpu_type,
  cap_cpu (cores), cap_mem (GB), cap_gpu
- ``read_v2023_pods``   gpu-v2023 pod lists: name, cpu_milli, memory_mib, num_gpu, gpu_milli
  [, gpu_spec, creation_time] (the ``multigpu50`` variant has no times: arrivals then need
  the default list)
- ``read_v2018_tasks``  v2018 batch tasks (no header), either layout: the shared sample's
  seven columns (arrival, job, task, duration, plan_cpu, plan_mem, instance_num) or Alibaba's
  full ``batch_task.csv`` (task_name, instance_num, job_name, task_type, status, start_time,
  end_time, plan_cpu, plan_mem: arrival = start_time, duration = end_time - start_time); plan_cpu
  100 = one core, plan_mem the share of a machine's memory in [0, 100]

Project-wide rule for bad input: a row that cannot be parsed, or whose values are outside what
the format defines, is skipped and counted in one ``warnings.warn`` naming the first few row
numbers (1-based, header = row 1). A quantity is a number in [0, ``LARGEST_QUANTITY``] (no
machine or job comes near; 1e308 memory overflowed its unit conversion, and an integer beyond
64 bits made an object column); a share is within its documented range (gpu_milli <= 1000, one
whole GPU; plan_mem <= 100); a task has at least one instance; an id (machine, pod, job, task)
is not empty, and no text holds a NUL; a last row without a line break may be cut short inside
its last number, and is a bad row too. ``ValueError`` for a file without a required column, a
header naming a column twice, a file without data rows (empty, or a header alone), a file none
of whose rows parse, and an id given twice (a machine, a pod, a task of a job: the file then
says two things of one thing). The files hold no quoted fields, so a quote is an ordinary
character (a stray one once swallowed the rest of a file into one field).

``alibaba_scenario`` builds the scenario: K = 3 resources (CPU cores, memory GiB, GPUs; the
GPU model is a locality constraint), nodes sampled from the machines of both clusters (both
files required), job types (ports) by k-means on the log requests of the v2023 pods (GPU jobs)
and of the v2018 tasks (batch jobs), service locality from capacity fit and GPU model, and
per-slot arrival counts from creation / arrival times. A task's request is one instance's
(plan_cpu, plan_mem): (2) bounds what one node gives a job by a_l, and a task's instances run
one per node, so ``instance_num`` (checked, >= 1) has no place in the model; a task is one
arrival, as a pod is.
"""

from __future__ import annotations

import csv
import io
import warnings
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from optsched.files import open_user_file, user_directory
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


def _warn_skipped(path: Path, bad: list[int], cut: bool) -> None:
    if bad:
        shown = ", ".join(map(str, bad[:_SHOWN_BAD_ROWS]))
        more = "" if len(bad) <= _SHOWN_BAD_ROWS else ", ..."
        why = f"; row {bad[-1]}, the last, has no line break: the file may be cut short inside it" if cut else ""
        warnings.warn(f"{path}: skipped {len(bad)} unparseable row(s) (rows {shown}{more}{why})", stacklevel=4)


class _WholeLines:
    """The lines of a file, but a last line without a line break is held back (``cut``): a file
    cut short inside its last number still parses (a plan_mem of 0.39 read as 0.3). The trace
    files end in a newline; the files hold no quoted fields, so a line is a row."""

    def __init__(self, fh: Any) -> None:
        self.fh, self.cut = fh, False

    def __iter__(self) -> Any:
        for line in self.fh:
            if line.endswith(("\n", "\r")) or not line.strip():
                yield line
            else:
                self.cut = True


Fields = dict[str, Callable[[str], Any]]


def _read(
    path: str | Path,
    fields: Fields,
    *,
    header: bool,
    optional: Sequence[str] = (),
    key: tuple[str, ...] = (),
    derive: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Table:
    """Parse ``fields`` (name -> converter) of a CSV; by name with a header, else by position.
    ``derive`` maps a parsed row to the table's columns (a ValueError makes it a bad row);
    ``key`` names the columns that identify a row (unique in the file)."""
    path = Path(path)
    try:
        return _parse(path, fields, header=header, optional=optional, key=key, derive=derive)
    except UnicodeDecodeError:
        raise ValueError(f"trace: {path} is not a text file (not UTF-8)") from None
    except csv.Error as exc:
        raise ValueError(f"trace: {path} is not a readable CSV file: {exc}") from None


def _parse(path: Path, fields: Fields, *, header: bool, optional: Sequence[str], key: tuple[str, ...],
           derive: Callable[[dict[str, Any]], dict[str, Any]] | None) -> Table:
    values: dict[str, list[Any]] = {}
    numbers = array("q")  # the file row of each kept row, for the messages
    bad: list[int] = []
    with io.TextIOWrapper(open_user_file(path, "trace"), encoding="utf-8-sig", newline="") as fh:
        lines = _WholeLines(fh)
        reader = csv.reader(lines, quoting=csv.QUOTE_NONE)
        if header:
            try:
                named = [h.strip() for h in next(reader)]
            except StopIteration:
                raise ValueError(f"trace: {path} " + ("holds no data rows" if lines.cut else "is empty")) from None
            head = _without_trailing_empties(named)
            for name in fields:
                if name not in head and name not in optional:
                    raise ValueError(f"{path}: missing required column {name!r}")
                if head.count(name) > 1:
                    raise ValueError(f"{path}: the header names column {name!r} twice")
            pos = {name: head.index(name) for name in fields if name in head}
            first_row, widths = 2, {len(head), len(named)}  # a header's trailing comma, or not, in the rows
        else:
            pos = {name: i for i, name in enumerate(fields)}
            first_row, widths = 1, {len(fields)}
        number = first_row - 1
        for number, row in enumerate(reader, start=first_row):
            if not row:  # a blank line
                continue
            if len(row) not in widths:  # a field too many or too few shifts the rest (a node of 262,144 GPUs)
                bad.append(number)
                continue
            try:
                parsed = {name: fields[name](row[i].strip()) for name, i in pos.items()}
                if derive is not None:
                    parsed = derive(parsed)
            except (IndexError, ValueError):
                bad.append(number)
                continue
            for name, v in parsed.items():
                values.setdefault(name, []).append(v)
            numbers.append(number)
        if lines.cut:
            bad.append(number + 1)
    if bad and not numbers:
        cut = f"; row {bad[-1]}, the last, has no line break: the file may be cut short inside it" if lines.cut else ""
        raise ValueError(f"trace: {path}: none of its {len(bad)} row(s) can be parsed (first bad row {bad[0]}{cut})")
    if not numbers:
        raise ValueError(f"trace: {path} holds no data rows")
    table = Table({k: np.asarray(v) for k, v in values.items()}, len(bad))
    if key:
        _check_unique(path, [table[k] for k in key], key, np.frombuffer(numbers, dtype=np.int64))
    _warn_skipped(path, bad, lines.cut)
    return table


def _check_unique(path: Path, columns: list[np.ndarray], key: tuple[str, ...], numbers: np.ndarray) -> None:
    """ValueError naming the first row (in file order) whose id an earlier row has, and both rows."""
    order = np.lexsort(columns[::-1])  # stable: equal ids stay in file order
    same = np.ones(order.size - 1, dtype=bool)
    for column in columns:
        ranked = column[order]
        same &= ranked[1:] == ranked[:-1]
    if not same.any():
        return
    at = np.flatnonzero(same)
    j = at[np.argmin(order[at + 1])]  # the pair whose second row comes first
    earlier, later = order[j], order[j + 1]
    shown = ", ".join(f"{k} {str(c[later])!r}" for k, c in zip(key, columns))
    raise ValueError(f"trace: {path}: {shown} is given twice (rows {numbers[earlier]} and {numbers[later]})")


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


def _share(largest: float) -> Callable[[str], float]:
    """A number in [0, largest] (a documented share: 1000 milli-GPUs, 100 % of a machine's memory)."""
    def convert(text: str) -> float:
        v = _nonneg_float(text)
        if v > largest:
            raise ValueError(text)
        return v
    return convert


def _positive_int(text: str) -> int:
    n = _nonneg_int(text)
    if n < 1:
        raise ValueError(text)
    return n


def _text(text: str) -> str:
    """A text field; a NUL is no character of a trace (numpy's string columns drop trailing ones)."""
    if "\x00" in text:
        raise ValueError(text)
    return text


def _id(text: str) -> str:
    """A text field that identifies its row: not empty (an empty one names no machine, pod or task)."""
    if not text:
        raise ValueError(text)
    return _text(text)


def read_v2023_nodes(path: str | Path) -> Table:
    return _read(path, {"sn": _id, "cpu_milli": _nonneg_float, "memory_mib": _nonneg_float, "gpu": _nonneg_int,
                        "model": _text}, header=True, key=("sn",))


def read_v2020_machines(path: str | Path) -> Table:
    return _read(path, {"machine": _id, "gpu_type": _text, "cap_cpu": _nonneg_float, "cap_mem": _nonneg_float,
                        "cap_gpu": _nonneg_int}, header=False, key=("machine",))


def read_v2023_pods(path: str | Path) -> Table:
    return _read(
        path,
        {"name": _id, "cpu_milli": _nonneg_float, "memory_mib": _nonneg_float, "num_gpu": _nonneg_int,
         "gpu_milli": _share(1000.0), "gpu_spec": _text, "creation_time": _nonneg_float},
        header=True,
        optional=("gpu_spec", "creation_time"),
        key=("name",),
    )


V2018_SAMPLE: Fields = {"arrival": _nonneg_float, "job": _id, "task": _id, "duration": _nonneg_float,
                        "plan_cpu": _nonneg_float, "plan_mem": _share(100.0), "instance_num": _positive_int}
V2018_FULL: Fields = {"task": _id, "instance_num": _positive_int, "job": _id, "task_type": _text, "status": _text,
                      "start_time": _nonneg_float, "end_time": _nonneg_float, "plan_cpu": _nonneg_float,
                      "plan_mem": _share(100.0)}


def _from_full_layout(row: dict[str, Any]) -> dict[str, Any]:
    """A ``batch_task.csv`` row in the sample's columns (a task that ends before it starts is bad)."""
    duration = row["end_time"] - row["start_time"]
    if duration < 0:
        raise ValueError("end_time before start_time")
    return {"arrival": row["start_time"], "job": row["job"], "task": row["task"], "duration": duration,
            "plan_cpu": row["plan_cpu"], "plan_mem": row["plan_mem"], "instance_num": row["instance_num"]}


def read_v2018_tasks(path: str | Path) -> Table:
    """Either layout of the module doc, told apart by the number of fields most of the first
    rows have (a stray row of the other width is a bad row, not the file's layout)."""
    full = _usual_width(Path(path)) == len(V2018_FULL)
    return _read(path, V2018_FULL if full else V2018_SAMPLE, header=False, key=("job", "task"),
                 derive=_from_full_layout if full else None)


LAYOUT_ROWS = 1000  # the rows whose widths decide a headerless file's layout


def _usual_width(path: Path) -> int:
    """The most common number of fields among the first ``LAYOUT_ROWS`` non-blank lines (0 for a
    file without one: read on, it is refused)."""
    widths: dict[int, int] = {}
    try:
        with io.TextIOWrapper(open_user_file(path, "trace"), encoding="utf-8-sig", newline="") as fh:
            for line in fh:
                if line.strip():
                    width = line.count(",") + 1
                    widths[width] = widths.get(width, 0) + 1
                    if sum(widths.values()) >= LAYOUT_ROWS:
                        break
    except UnicodeDecodeError:
        raise ValueError(f"trace: {path} is not a text file (not UTF-8)") from None
    return max(widths, key=lambda w: widths[w]) if widths else 0


@dataclass(frozen=True)
class NodePool:
    """Machines of both clusters in common units: (n, 3) capacities and the GPU model."""

    capacity: np.ndarray
    model: np.ndarray
    source: np.ndarray


def node_pool(directory: str | Path) -> NodePool:
    """All machines: gpu-v2023 nodes (cpu_milli/1000 cores, memory_mib/1024 GiB, gpus) and
    gpu-v2020 machines (cores, GB, gpus; the GPU model is gpu_type where the machine has GPUs:
    CPU machines have none, MISC ones 8 of types the trace does not name)."""
    d = user_directory("trace", directory)
    f23 = d / "gpu-v2023" / "openb_node_list_all_node.csv"
    f20 = d / "gpu-v2020" / "pai_machine_spec.csv"
    for f in (f23, f20):  # both clusters, always: one file missing silently shrank the pool
        if not (f.exists() or f.is_symlink()):  # anything there is read (a directory or FIFO is refused)
            raise ValueError(f"trace: {d} has no {f.relative_to(d)} (the node pool is the machines of both "
                             f"gpu-v2023 and gpu-v2020)")
    t23, t20 = read_v2023_nodes(f23), read_v2020_machines(f20)
    return NodePool(
        capacity=np.vstack([
            np.column_stack([t23["cpu_milli"] / 1000.0, t23["memory_mib"] / 1024.0, t23["gpu"].astype(float)]),
            np.column_stack([t20["cap_cpu"], t20["cap_mem"], t20["cap_gpu"].astype(float)]),
        ]),
        model=np.concatenate([t23["model"].astype(str), np.where(t20["cap_gpu"] > 0, t20["gpu_type"].astype(str), "")]),
        source=np.concatenate([np.full(len(t23), "v2023"), np.full(len(t20), "v2020")]),
    )


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
