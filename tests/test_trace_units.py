"""Units of the Alibaba trace readers: GPU requests (num_gpu x gpu_milli), plan_cpu in percent
of a core, and header rows with a trailing comma, on small trace files written per test."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from optsched.ogasched.traces import batch_jobs, gpu_jobs, read_v2023_nodes

POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time\n"


def _pods(root: Path, rows: list[str]) -> Path:
    folder = root / "gpu-v2023"
    folder.mkdir(parents=True)
    (folder / "openb_pod_list_default.csv").write_text(POD_HEADER + "".join(r + "\n" for r in rows))
    return root


def _tasks(root: Path, rows: list[str]) -> Path:
    folder = root / "v2018-sample"
    folder.mkdir(parents=True)
    (folder / "sample_tasks.csv").write_text("".join(r + "\n" for r in rows))
    return root


def test_gpu_request_is_num_gpu_times_gpu_milli_over_1000(tmp_path: Path) -> None:
    """gpu_jobs: a pod asks num_gpu GPUs of gpu_milli/1000 each, so its GPU request is their product / 1000."""
    pods = [  # (num_gpu, gpu_milli)
        ("p-four-whole", 4, 1000),
        ("p-two-halves", 2, 500),
        ("p-one-quarter", 1, 250),
        ("p-cpu-only", 0, 0),
    ]
    root = _pods(tmp_path, [f"{name},1000,1024,{g},{milli},V100,{i}" for i, (name, g, milli) in enumerate(pods)])
    jobs = gpu_jobs(root)
    np.testing.assert_allclose(jobs.request[:, 2], [g * milli / 1000 for _, g, milli in pods])
    np.testing.assert_allclose(jobs.request[:, 2], [4.0, 1.0, 0.25, 0.0])


def test_gpu_pod_cpu_and_memory_units(tmp_path: Path) -> None:
    """gpu_jobs: cpu_milli / 1000 is cores and memory_mib / 1024 is GiB; creation_time is the arrival."""
    root = _pods(tmp_path, ["p1,8000,2048,1,1000,,12.5", "p2,500,512,0,0,,30"])
    jobs = gpu_jobs(root)
    np.testing.assert_allclose(jobs.request[:, :2], [[8.0, 2.0], [0.5, 0.5]])
    np.testing.assert_allclose(jobs.arrival, [12.5, 30.0])


def test_plan_cpu_is_percent_of_a_core(tmp_path: Path) -> None:
    """batch_jobs: plan_cpu 100 is one core (250 -> 2.5 cores); plan_mem is a percentage of the machine's memory."""
    # the sample layout: arrival, job, task, duration, plan_cpu, plan_mem, instance_num
    root = _tasks(tmp_path, ["0,j1,t1,10,100,50,1", "5,j1,t2,10,250,25,3", "9,j2,t1,10,50,100,1"])
    jobs = batch_jobs(root, machine_memory_gib=64.0)
    np.testing.assert_allclose(jobs.request[:, 0], [1.0, 2.5, 0.5])
    np.testing.assert_allclose(jobs.request[:, 1], [32.0, 16.0, 64.0])
    np.testing.assert_array_equal(jobs.request[:, 2], 0.0)
    np.testing.assert_allclose(jobs.arrival, [0.0, 5.0, 9.0])


def test_plan_cpu_is_percent_of_a_core_in_the_full_layout(tmp_path: Path) -> None:
    """batch_jobs: in Alibaba's full batch_task.csv layout too, plan_cpu 400 is four cores."""
    # task_name, instance_num, job_name, task_type, status, start_time, end_time, plan_cpu, plan_mem
    root = _tasks(tmp_path, ["M1,1,j_1,1,Terminated,100,160,400,10", "M2,2,j_1,1,Terminated,120,130,150,20"])
    jobs = batch_jobs(root, machine_memory_gib=100.0)
    np.testing.assert_allclose(jobs.request[:, 0], [4.0, 1.5])
    np.testing.assert_allclose(jobs.request[:, 1], [10.0, 20.0])
    np.testing.assert_allclose(jobs.arrival, [100.0, 120.0])


@pytest.mark.parametrize("rows", ["n1,64000,262144,2,V100,\nn2,96000,524288,8,A100,\n",
                                  "n1,64000,262144,2,V100\nn2,96000,524288,8,A100,\n"], ids=["with", "mixed"])
def test_rows_with_or_without_the_headers_trailing_comma_are_read(tmp_path: Path, rows: str) -> None:
    """read_v2023_nodes: a header with a trailing comma may have rows with one too, or not; all are
    read, unwarned."""
    path = tmp_path / "nodes.csv"
    path.write_text("sn,cpu_milli,memory_mib,gpu,model,\n" + rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a skipped row would warn
        table = read_v2023_nodes(path)
    assert len(table) == 2 and table.skipped == 0
    assert list(table["sn"]) == ["n1", "n2"]
    np.testing.assert_allclose(table["cpu_milli"], [64000, 96000])
    np.testing.assert_array_equal(table["gpu"], [2, 8])
    assert list(table["model"]) == ["V100", "A100"]
