"""Alibaba trace loading for OGASched: counts and totals checked against the CSVs with ``csv``."""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest

from optsched.ogasched.baselines import BASELINES, BaselinePolicy
from optsched.ogasched.env import SchedulingEnv
from optsched.ogasched.policy import OGASched
from optsched.ogasched.traces import (
    alibaba_scenario,
    node_pool,
    read_v2018_tasks,
    read_v2020_machines,
    read_v2023_nodes,
    read_v2023_pods,
)
from optsched.policy import evaluate


def column_sums(path, columns, *, header=True):
    """Row count and per-column sums, computed independently with the csv module."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    if header:
        head, rows = rows[0], rows[1:]
        pos = [head.index(c) for c in columns]
    else:
        pos = list(columns)
    return len(rows), [sum(float(r[p]) for r in rows) for p in pos]


def test_v2023_nodes_match_csv(shared_data):
    path = shared_data / "alibaba" / "gpu-v2023" / "openb_node_list_all_node.csv"
    n, (cpu, mem, gpu) = column_sums(path, ["cpu_milli", "memory_mib", "gpu"])
    t = read_v2023_nodes(path)
    assert len(t) == n == 1523 and t.skipped == 0
    assert t["cpu_milli"].sum() == pytest.approx(cpu) and t["memory_mib"].sum() == pytest.approx(mem)
    assert t["gpu"].sum() == gpu


def test_v2020_machines_match_csv(shared_data):
    path = shared_data / "alibaba" / "gpu-v2020" / "pai_machine_spec.csv"
    n, (cpu, mem, gpu) = column_sums(path, [2, 3, 4], header=False)
    t = read_v2020_machines(path)
    assert len(t) == n == 1897
    assert t["cap_cpu"].sum() == pytest.approx(cpu) and t["cap_mem"].sum() == pytest.approx(mem)
    assert t["cap_gpu"].sum() == gpu


def test_node_pool_capacity_totals(shared_data):
    d = shared_data / "alibaba"
    n23, (cpu23, mem23, gpu23) = column_sums(d / "gpu-v2023" / "openb_node_list_all_node.csv",
                                             ["cpu_milli", "memory_mib", "gpu"])
    n20, (cpu20, mem20, gpu20) = column_sums(d / "gpu-v2020" / "pai_machine_spec.csv", [2, 3, 4], header=False)
    pool = node_pool(d)
    assert pool.capacity.shape == (n23 + n20, 3)
    np.testing.assert_allclose(pool.capacity.sum(axis=0), [cpu23 / 1000 + cpu20, mem23 / 1024 + mem20, gpu23 + gpu20])


@pytest.mark.parametrize("name, n_rows", [("openb_pod_list_default.csv", 8152), ("openb_pod_list_multigpu50.csv", 9061)])
def test_v2023_pods_match_csv(shared_data, name, n_rows):
    path = shared_data / "alibaba" / "gpu-v2023" / name
    n, (cpu, mem, ngpu) = column_sums(path, ["cpu_milli", "memory_mib", "num_gpu"])
    t = read_v2023_pods(path)
    assert len(t) == n == n_rows
    assert t["cpu_milli"].sum() == pytest.approx(cpu) and t["memory_mib"].sum() == pytest.approx(mem)
    assert t["num_gpu"].sum() == ngpu


def test_v2018_tasks_match_csv(shared_data):
    path = shared_data / "alibaba" / "v2018-sample" / "sample_tasks.csv"
    n, (cpu, inst) = column_sums(path, [4, 6], header=False)
    t = read_v2018_tasks(path)
    assert len(t) == n == 67634
    assert t["plan_cpu"].sum() == pytest.approx(cpu) and t["instance_num"].sum() == inst


def test_scenario_from_traces(shared_data):
    d = shared_data / "alibaba"
    n_pods, _ = column_sums(d / "gpu-v2023" / "openb_pod_list_default.csv", ["cpu_milli"])
    n_tasks, _ = column_sums(d / "v2018-sample" / "sample_tasks.csv", [4], header=False)
    ts = alibaba_scenario(d, rng=np.random.default_rng(0), n_ports=8, batch_ports=3, n_nodes=64, slots=300)
    scn = ts.scenario
    assert scn.n_ports == 8 and scn.n_nodes == 64 and scn.n_resources == 3
    assert ts.counts.shape == (300, 8)
    # every job of both sources arrives exactly once
    assert ts.counts.sum() == n_pods + n_tasks
    np.testing.assert_array_equal(ts.counts.sum(axis=0), ts.port_jobs)
    assert ts.port_jobs[ts.port_source == "gpu"].sum() == n_pods
    # service locality: every channel's node fits the job type's (uncontended) request
    assert np.all(scn.requests[scn.edge_port] <= scn.capacity[scn.edge_node] + 1e-12)
    gpu_ports = scn.requests[:, 2] > 0
    assert np.all(scn.capacity[scn.edge_node[gpu_ports[scn.edge_port]], 2] > 0)
    assert np.all(np.bincount(scn.edge_port, minlength=8) >= 1)


def test_policies_run_on_trace_scenario(shared_data):
    ts = alibaba_scenario(shared_data / "alibaba", rng=np.random.default_rng(1), n_ports=6, batch_ports=3,
                          n_nodes=32, slots=100, contention=3.0)
    env = SchedulingEnv(ts.scenario, horizon=100, trace_counts=ts.counts)
    for pol in [OGASched(), *(BaselinePolicy(n) for n in BASELINES)]:
        out = evaluate(env, pol, 100, seed=0)
        assert np.isfinite(out["reward"]).all()


def test_bad_rows_are_skipped_with_a_warning(tmp_path):
    path = tmp_path / "nodes.csv"
    path.write_text("sn,cpu_milli,memory_mib,gpu,model\n"
                    "a,1000,2048,1,T4\n"
                    "b,oops,2048,1,T4\n"
                    "c,1000,2048\n"
                    "d,-5,2048,0,\n"
                    "e,2000,1024,0,\n")
    with pytest.warns(UserWarning, match=r"skipped 3 unparseable row\(s\) \(rows 3, 4, 5\)"):
        t = read_v2023_nodes(path)
    assert len(t) == 2 and t.skipped == 3
    assert t["cpu_milli"].tolist() == [1000.0, 2000.0]


def test_missing_column_names_it(tmp_path):
    path = tmp_path / "pods.csv"
    path.write_text("name,cpu_milli,num_gpu,gpu_milli\np,1000,1,1000\n")
    with pytest.raises(ValueError, match="memory_mib"):
        read_v2023_pods(path)
    with pytest.raises(ValueError, match="does not exist"):
        read_v2023_pods(tmp_path / "absent.csv")


def test_missing_directory_and_bad_sizes(tmp_path, shared_data):
    with pytest.raises(ValueError, match="trace"):
        alibaba_scenario(tmp_path, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_nodes"):
        alibaba_scenario(shared_data / "alibaba", rng=np.random.default_rng(0), n_nodes=10**6)
    with pytest.raises(ValueError, match="batch_ports"):
        alibaba_scenario(shared_data / "alibaba", rng=np.random.default_rng(0), n_ports=3, batch_ports=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_v2023_nodes(shared_data / "alibaba" / "gpu-v2023" / "openb_node_list_all_node.csv")


def test_experiment_on_traces_with_multiple_arrivals(shared_data, tmp_path):
    from optsched.papers import get_paper

    exp = get_paper("ogasched")
    cfg = exp.make_config({"source": "alibaba", "trace_dir": str(shared_data / "alibaba"), "n_ports": 4,
                           "batch_ports": 2, "n_nodes": 16, "horizon": 40, "copies": 2, "contention": 2.0,
                           "regret_points": 1})
    paths = exp.run(cfg, tmp_path)
    assert (tmp_path / "fig2_summary.csv") in paths and (tmp_path / "fig2_regret.csv") in paths


def test_quantities_beyond_any_machine_are_bad_rows(tmp_path):
    """An integer beyond 64 bits made an object column (log1p then raised TypeError); 1e308 MiB
    overflowed the unit conversion. Both are rows skipped with the others."""
    path = tmp_path / "pods.csv"
    path.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\n"
                    "a,1000,2048,1,1000,5\n"
                    "b,1000,2048,18446744073709551616,1000,6\n"
                    "c,1000,1e308,1,1000,7\n"
                    "d,1000,1e12,1,1000,8\n")
    with pytest.warns(UserWarning, match=r"skipped 2 unparseable row\(s\) \(rows 3, 4\)"):
        t = read_v2023_pods(path)
    assert t["num_gpu"].dtype.kind in "iu" and t["memory_mib"].tolist() == [2048.0, 1e12]


@pytest.mark.parametrize("text", ["", "\n\n", "sn,cpu_milli,memory_mib,gpu,model\n"])
def test_a_file_without_data_rows_is_an_error_naming_it(tmp_path, text):
    path = tmp_path / "nodes.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"nodes\.csv(:? (is empty|holds no data rows|missing required column))"):
        read_v2023_nodes(path)
    machines = tmp_path / "machines.csv"
    machines.write_text(text.replace("sn,cpu_milli,memory_mib,gpu,model\n", ""))
    with pytest.raises(ValueError, match=r"machines\.csv holds no data rows"):
        read_v2020_machines(machines)


def test_quotes_are_characters_and_a_byte_order_mark_is_dropped(tmp_path):
    """The traces quote nothing: a stray quote once made the csv module read the rest of the
    file as one field (18 of 20 rows lost under a warning about one)."""
    path = tmp_path / "tasks.csv"
    rows = [f"{10 + i},j_{i},R{i},100,70,0.5,3" for i in range(20)]
    rows[1] = '11,j_1,"R1,100,70,0.5,3'
    path.write_text("\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(read_v2018_tasks(path)) == 20
    nodes = tmp_path / "nodes.csv"
    nodes.write_bytes("\ufeffsn,cpu_milli,memory_mib,gpu,model\na,1000,2048,1,T4\n".encode())
    assert len(read_v2023_nodes(nodes)) == 1


def test_a_node_file_that_is_not_a_regular_file_is_refused_not_skipped(tmp_path, shared_data):
    import os
    import shutil

    for name in ("gpu-v2023", "gpu-v2020"):
        shutil.copytree(shared_data / "alibaba" / name, tmp_path / name)
    spec = tmp_path / "gpu-v2020" / "pai_machine_spec.csv"
    spec.unlink()
    spec.mkdir()
    with pytest.raises(ValueError, match="pai_machine_spec.csv is a directory"):
        node_pool(tmp_path)
    spec.rmdir()
    os.mkfifo(spec)
    with pytest.raises(ValueError, match="pai_machine_spec.csv is not a regular file"):
        node_pool(tmp_path)


@pytest.mark.parametrize("relative,reader,column", [
    ("gpu-v2023/openb_node_list_all_node.csv", read_v2023_nodes, "gpu"),  # header: by name
    ("gpu-v2020/pai_machine_spec.csv", read_v2020_machines, "cap_gpu"),  # no header: by position
])
def test_a_row_with_a_field_too_many_or_too_few_is_skipped(relative, reader, column, shared_data, tmp_path):
    """A field too many shifted the rest of its row: a node of 262,144 GPUs (its memory) read
    without a word, where the real maximum is 8."""
    lines = (shared_data / "alibaba" / relative).read_text().splitlines(keepends=True)
    at = 1 if "node_list" in relative else 0  # the first data row
    fields = lines[at].rstrip("\n").split(",")
    longer = ",".join(fields[:2] + fields[1:]) + "\n"  # the second field twice
    shorter = ",".join(fields[:1] + fields[2:]) + "\n"  # the second field gone
    for changed in (longer, shorter):
        path = tmp_path / "trace.csv"
        path.write_text("".join(lines[:at] + [changed] + lines[at + 1:]))
        with pytest.warns(UserWarning, match=f"skipped 1 unparseable row\\(s\\) \\(rows {at + 1}\\)"):
            table = reader(path)
        assert len(table) == len(lines) - at - 1
        assert table[column].max() <= 8


def test_a_header_with_a_trailing_comma_reads_every_row(shared_data, tmp_path):
    """A trailing comma on the header line alone (rows without it) is no field: every row reads."""
    lines = (shared_data / "alibaba" / "gpu-v2023" / "openb_node_list_all_node.csv").read_text().splitlines(keepends=True)
    path = tmp_path / "nodes.csv"
    path.write_text(lines[0].rstrip("\n") + ",\n" + "".join(lines[1:]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = read_v2023_nodes(path)
    assert len(table) == len(lines) - 1 and table.skipped == 0


@pytest.mark.parametrize("missing", ["gpu-v2023/openb_node_list_all_node.csv", "gpu-v2020/pai_machine_spec.csv"])
def test_a_missing_machine_file_is_an_error_not_a_smaller_pool(missing, shared_data, tmp_path):
    """Without one of the two files the pool silently held one cluster (1,523 machines of 3,420)."""
    import shutil

    for name in ("gpu-v2023", "gpu-v2020"):
        shutil.copytree(shared_data / "alibaba" / name, tmp_path / name)
    assert len(node_pool(tmp_path).capacity) == 1523 + 1897
    (tmp_path / missing).unlink()
    with pytest.raises(ValueError, match=f"has no {missing} \\(the node pool is the machines of both"):
        node_pool(tmp_path)


@pytest.mark.parametrize("reader,text,bad_rows", [
    (read_v2023_pods, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,5000\np1,1000,1024,1,1000\n"
                      "p2,1000,1024,2,1000.5\n", "rows 2, 4"),  # gpu_milli: 1000 is one whole GPU
    (read_v2018_tasks, "0,j_1,M1,3,100,300,1\n0,j_1,M2,3,100,100,1\n0,j_1,M3,3,100,50,0\n", "rows 1, 3"),
    # an empty id names nothing; numpy's string columns dropped a trailing NUL (two ids became one)
    (read_v2023_nodes, "sn,cpu_milli,memory_mib,gpu,model\n,1000,1024,1,T4\nn1,1000,1024,1,T4\nn2,1000,1024,1,T4\x00\n",
     "rows 2, 4"),
    (read_v2018_tasks, "0,j_1,M1,3,100,30,1\n0,j_1,,3,100,30,1\n0,j_1,M1\x00,3,100,30,1\n", "rows 2, 3"),
])
def test_values_outside_the_documented_range_are_bad_rows(reader, text, bad_rows, tmp_path):
    """gpu_milli 5000 (a one-GPU pod asking for five), plan_mem 300 (a share in [0, 100]) and a
    task of no instances read without a word."""
    path = tmp_path / "trace.csv"
    path.write_text(text)
    with pytest.warns(UserWarning, match=f"skipped 2 unparseable row\\(s\\) \\({bad_rows}\\)"):
        table = reader(path)
    assert len(table) == 1


@pytest.mark.parametrize("reader,text,message", [
    (read_v2023_nodes, "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,0,\nn1,1,1,0,\nn0,96000,393216,8,G2\n",
     "sn 'n0' is given twice \\(rows 2 and 4\\)"),
    (read_v2020_machines, "m0,MISC,96,512,8\nm0,MISC,96,512,8\n", "machine 'm0' is given twice \\(rows 1 and 2\\)"),
    (read_v2023_pods, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,0,0\nq,1,1,0,0\nq,1,1,0,0\np,1,1,0,0\n",
     "name 'q' is given twice \\(rows 3 and 4\\)"),
    (read_v2018_tasks, "0,j_1,M1,3,100,1,1\n0,j_2,M1,3,100,1,1\n5,j_1,M1,3,100,1,1\n",
     "job 'j_1', task 'M1' is given twice \\(rows 1 and 3\\)"),  # a task name is unique within its job
    (read_v2023_nodes, "sn,cpu_milli,memory_mib,gpu,model,gpu\nn0,32000,262144,0,,8\n",
     "the header names column 'gpu' twice"),
])
def test_an_id_or_a_column_given_twice_is_an_error_naming_it(reader, text, message, tmp_path):
    """A repeated machine was read as two machines, and of a column named twice the first was used."""
    path = tmp_path / "trace.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        reader(path)


def test_the_full_batch_task_table_reads_as_the_sample(shared_data, tmp_path):
    """Alibaba's full ``batch_task.csv`` (task_name, instance_num, job_name, task_type, status,
    start_time, end_time, plan_cpu, plan_mem) was refused ("none of its rows can be parsed"):
    the sample's rows written in that layout read back as the same table."""
    sample = shared_data / "alibaba" / "v2018-sample" / "sample_tasks.csv"
    with open(sample, newline="") as fh:
        rows = list(csv.reader(fh))
    full = tmp_path / "batch_task.csv"
    full.write_text("".join(f"{task},{n},{job},1,Terminated,{a},{float(a) + float(d)!r},{cpu},{mem}\n"
                            for a, job, task, d, cpu, mem, n in rows))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want, got = read_v2018_tasks(sample), read_v2018_tasks(full)
    assert sorted(got.columns) == sorted(want.columns) and len(got) == len(want) == 67634
    for name in want.columns:
        assert np.array_equal(got[name], want[name]), name
    full.write_text("M1,1,j_1,1,Terminated,100,90,50,0.3\nM2,4,j_1,1,Terminated,100,200,50,0.3\n")
    with pytest.warns(UserWarning, match=r"skipped 1 unparseable row\(s\) \(rows 1\)"):  # it ends before it starts
        assert read_v2018_tasks(full)["duration"].tolist() == [100.0]


def test_a_stray_row_does_not_decide_a_v2018_files_layout(shared_data, tmp_path):
    """The layout was taken from the first line alone: a first row of 9 fields made the whole
    sample unreadable ("none of its 201 row(s) can be parsed")."""
    lines = (shared_data / "alibaba" / "v2018-sample" / "sample_tasks.csv").read_text().splitlines(keepends=True)[:200]
    path = tmp_path / "tasks.csv"
    path.write_text("0,j_1,R1_1,10,50.0,0.3,9,extra,extra\n" + "".join(lines))
    with pytest.warns(UserWarning, match=r"skipped 1 unparseable row\(s\) \(rows 1\)"):
        assert len(read_v2018_tasks(path)) == 200
    full = tmp_path / "batch_task.csv"
    full.write_text("M1,1,j_1,1,Terminated,157213,157295,100,0.3,\n" + "R2_1,1,j_1,1,Terminated,157297,157322,100,0.49\n"
                    "M1,1,j_2,1,Terminated,157200,157305,100,0.59\n")
    with pytest.warns(UserWarning, match=r"skipped 1 unparseable row\(s\) \(rows 1\)"):
        assert read_v2018_tasks(full)["duration"].tolist() == [25.0, 105.0]


@pytest.mark.parametrize("relative,reader", [
    ("gpu-v2023/openb_node_list_all_node.csv", read_v2023_nodes),
    ("gpu-v2020/pai_machine_spec.csv", read_v2020_machines),
    ("gpu-v2023/openb_pod_list_default.csv", read_v2023_pods),
    ("v2018-sample/sample_tasks.csv", read_v2018_tasks),
])
def test_a_last_row_without_a_line_break_is_skipped_as_maybe_cut(relative, reader, shared_data, tmp_path):
    """A file cut inside its last number read on: a plan_mem of 0.39 cut to 0.3, a model "V100"
    cut to "V1", without a word. The traces end in a newline; a last row without one is a bad row."""
    source = shared_data / "alibaba" / relative
    whole = reader(source)
    text = source.read_text()
    path = tmp_path / source.name
    path.write_text(text[:-2])  # the newline and the last character gone
    with pytest.warns(UserWarning, match=r"skipped 1 unparseable row\(s\) .*the last, has no line break"):
        cut = reader(path)
    assert len(cut) == len(whole) - 1 and cut.skipped == 1
    for name, column in cut.columns.items():
        assert np.array_equal(column, whole[name][:-1]), name


def test_a_file_whose_one_row_has_no_line_break_says_so(tmp_path):
    path = tmp_path / "nodes.csv"
    path.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1024,1,T4")
    with pytest.raises(ValueError, match=r"first bad row 2; row 2, the last, has no line break"):
        read_v2023_nodes(path)
