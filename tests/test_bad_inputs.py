"""The bad-input corpus (tests/bad_inputs/), driven from one table.

Every row is one bad input: the CLI arguments that feed it to an entry point and the words
its one-line message must contain. Each row is checked twice:

* through the CLI (``optsched.cli.main`` in-process, cwd = tests/bad_inputs so the trace
  configs' relative ``trace_dir`` resolves): exit status 2, nothing on stdout, exactly one
  line on stderr, starting ``optsched: error:``, containing the words; an exception other
  than ValueError would escape ``main`` and fail the test (that is a traceback);
* through the library call the CLI makes (reader, config loader, experiment, ``solve``):
  a ``ValueError`` whose message contains the same words, with no numpy ``RuntimeWarning``
  on the way.

Trace rows that cannot be parsed are *skipped and counted in a warning* (never silently
dropped, never fatal on their own); a trace file without a required column, an empty one, or
one none of whose rows parse is an error. ``test_trace_with_a_few_bad_rows_*`` pin that.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import optsched
from optsched.cli import main

BAD = Path(__file__).parent / "bad_inputs"

GOOD_MODELS: dict[str, dict[str, Any]] = {
    "set_packing.json": {"model": "set_packing", "n_elements": 4, "sets": [[0, 1], [1, 2, 3], [2]], "weights": [1.0, 2.5, 1.0]},
    "budgeted_ip.json": {"model": "budgeted_ip", "values": [3, 4, 5], "weights": [[1, 2, 2]], "capacity": [3],
                         "budget_coeffs": [1, 1, 2], "budget": 1},
    "fractional_ip.json": {"model": "budgeted_ip", "values": [3, 4, 5], "weights": [[1.5, 2, 2]], "capacity": [3]},
    "projection.json": {"model": "capacity_projection", "z": [1.0, 2.0], "upper": [1.0, 1.0], "group": [0, 0],
                        "capacity": [1.0]},
}


# --- library calls (what the CLI does, without the CLI) ---------------------------------------
def load(path: str) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from optsched.io import load_instances

        return load_instances(path)

    return call


def config(experiment: str, path: str) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from optsched.config import load_toml
        from optsched.papers import get_paper

        return get_paper(experiment).make_config(load_toml(path))

    return call


def run(experiment: str, path: str) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from optsched.config import load_toml
        from optsched.papers import get_paper

        exp = get_paper(experiment)
        return exp.run(exp.make_config(load_toml(path)), tmp / "out")

    return call


def solve(good: str, backend: str | None, time_limit: float | None = None, **options: Any) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from optsched.models import model_from_dict

        return optsched.solve(model_from_dict(GOOD_MODELS[good]), backend, time_limit=time_limit, **options)

    return call


def in_tmp(call: Callable[[str], Any], name: str) -> Callable[[Path], Any]:
    """``call`` on the file ``name`` of the test's temporary directory (FIFOs, device links)."""
    return lambda tmp: call(str(tmp / name))


def load_sweep_file(path: str) -> Any:
    from optsched.sweep import expand, load_sweep

    return expand(load_sweep(path))


def sweep_dask(address: str, tls: tuple[str, str, str] | None = None) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from optsched.sweep import run_sweep
        from optsched.sweep.executors import DaskTLS

        return run_sweep(tmp / "sweep.toml", tmp / "out", executor="dask", dask_address=address,
                         dask_tls=DaskTLS(*tls) if tls else None, progress=False)

    return call


def bench_data(path: str) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from optsched.bench import BenchConfig, run_bench

        return run_bench(BenchConfig(quick=True, models=("set_packing",), data_dir=Path(path)), tmp / "out")

    return call


def compare_with(**kwargs: Any) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from optsched.models import model_from_dict

        return optsched.compare(model_from_dict(GOOD_MODELS["set_packing.json"]), ["greedy", "enumerate"], **kwargs)

    return call


def reproduce_with(**kwargs: Any) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from optsched.reproduce import reproduce

        return list(reproduce("maxweight", out=tmp / "out", **kwargs))

    return call


def instance(name: str, words: str) -> tuple[list[str], str, Callable[[Path], Any]]:
    return ["solve", name], words, load(name)


def cfg(experiment: str, name: str, words: str, *, at_run: bool = False) -> tuple[list[str], str, Callable[[Path], Any]]:
    path = f"configs/{name}"
    lib = run(experiment, path) if at_run else config(experiment, path)
    return ["run", experiment, "--config", path, "--out", "{out}"], words, lib


# file (relative to tests/bad_inputs, None for pure CLI misuse) -> (argv, words, library call)
CASES: dict[str, tuple[list[str], str, Callable[[Path], Any]]] = {
    # JSON: set_packing (the first corpus) and generic JSON problems
    "empty_model.json": instance("empty_model.json", "sets: needs at least one set"),
    "index_out_of_range.json": instance("index_out_of_range.json", "sets[1]: index out of range"),
    "nan_weight.json": instance("nan_weight.json", "NaN is not a number"),
    "negative_weight.json": instance("negative_weight.json", "weights: contains a negative value"),
    "not_an_object.json": instance("not_an_object.json", "expected a JSON object"),
    "ragged_weights.json": instance("ragged_weights.json", "weights: axis 0 has length 1, expected 2"),
    "truncated.json": instance("truncated.json", "json: malformed at line 1"),
    "unknown_key.json": instance("unknown_key.json", "unknown key 'colour'"),
    "unknown_model.json": instance("unknown_model.json", "unknown model 'knapsackz'"),
    "wrong_type.json": instance("wrong_type.json", "n_elements: expected an integer"),
    "no_model_key.json": instance("no_model_key.json", "unknown model None"),
    "list_with_one_bad.json": instance("list_with_one_bad.json", "n_elements: must be >= 1"),
    "bool_as_count.json": instance("bool_as_count.json", "n_elements: expected an integer, got True"),
    "empty_file.json": instance("empty_file.json", "json: malformed at line 1 column 1"),
    "binary_garbage.json": instance("binary_garbage.json", "is not a text file"),
    # JSON: the strict reader and strict arrays (Reliability II)
    "json_integer_beyond_float.json": instance("json_integer_beyond_float.json", "weights: contains an infinite value (or a number beyond the float range)"),
    "json_integer_past_2_53.json": instance("json_integer_past_2_53.json", "weights: the integer 9007199254740993 is not exactly a float64 number"),
    "model_name_not_a_string.json": instance("model_name_not_a_string.json", "unknown model ['set_packing']"),
    "json_deeply_nested.json": instance("json_deeply_nested.json", "json: arrays or objects nested too deeply"),
    "duplicate_key.json": instance("duplicate_key.json", "json: duplicate key 'weights' in one object"),
    "bool_as_index.json": instance("bool_as_index.json", "sets[0]: expected numbers, got a boolean (true)"),
    "bool_in_weights.json": instance("bool_in_weights.json", "values: expected numbers, got a boolean (true)"),
    "numeric_string_in_array.json": instance("numeric_string_in_array.json", "z: expected numbers, got the string '1.5'"),
    "index_beyond_int64.json": instance("index_beyond_int64.json", "sets[0]: index out of range [0, 3)"),
    "set_packing_n_elements_huge.json": instance("set_packing_n_elements_huge.json", "n_elements: must be <= 1000000, got 10000000000000"),
    "budget_family_max_budget_huge.json": instance("budget_family_max_budget_huge.json", "max_budget: must be <= 1000000"),
    "onsocmax_offline_arrival_beyond_slots.json": instance("onsocmax_offline_arrival_beyond_slots.json", "arrival: holds 1e+300; numbers may be at most 1e+100 in magnitude"),
    # JSON: budgeted_ip
    "budgeted_ip_negative_capacity.json": instance("budgeted_ip_negative_capacity.json", "capacity: contains a negative value"),
    "budgeted_ip_ragged_weights.json": instance("budgeted_ip_ragged_weights.json", "weights: not a rectangular array of numbers (rows of different lengths)"),
    "budgeted_ip_overflow_value.json": instance("budgeted_ip_overflow_value.json", "values: contains an infinite value"),
    "budgeted_ip_infinity_literal.json": instance("budgeted_ip_infinity_literal.json", "Infinity is not a number"),
    "budgeted_ip_bad_mask.json": instance("budgeted_ip_bad_mask.json", "mask: entries must be 0/1"),
    "budgeted_ip_budget_string.json": instance("budgeted_ip_budget_string.json", "budget: expected a number, got 'high'"),
    "budgeted_ip_missing_capacity.json": instance("budgeted_ip_missing_capacity.json", "missing key 'capacity'"),
    "budgeted_ip_empty.json": instance("budgeted_ip_empty.json", "values: needs at least 1 entries"),
    "budgeted_ip_negative_budget_coeff.json": instance("budgeted_ip_negative_budget_coeff.json", "budget_coeffs: contains a negative value"),
    # JSON: budget_family
    "budget_family_budget_above_max.json": instance("budget_family_budget_above_max.json", "budget: must be <= max_budget = 2, got 5"),
    "budget_family_fractional_max_budget.json": instance("budget_family_fractional_max_budget.json", "max_budget: expected an integer, got 1.5"),
    "budget_family_bool_max_budget.json": instance("budget_family_bool_max_budget.json", "max_budget: expected an integer, got True"),
    # JSON: escb_index
    "escb_negative_variance.json": instance("escb_negative_variance.json", "variance: contains a negative value"),
    "escb_capacity_length.json": instance("escb_capacity_length.json", "capacity: axis 0 has length 1, expected 2"),
    "escb_mean_as_string.json": instance("escb_mean_as_string.json", "mean: expected numbers, got str"),
    # JSON: capacity_projection
    "projection_group_out_of_range.json": instance("projection_group_out_of_range.json", "group: index out of range [0, 2)"),
    "projection_fractional_group.json": instance("projection_fractional_group.json", "group: indices must be whole numbers"),
    "projection_negative_upper.json": instance("projection_negative_upper.json", "upper: contains a negative value"),
    "projection_nested_z.json": instance("projection_nested_z.json", "z: expected a 1-dimensional array"),
    # JSON: pseudo_welfare (+ integral) and the ONSOCMAX offline mesh
    "pseudo_welfare_unknown_utility.json": instance("pseudo_welfare_unknown_utility.json", "utility: unknown kind 'cubic'"),
    "pseudo_welfare_zero_capacity.json": instance("pseudo_welfare_zero_capacity.json", "capacity: every C_r must be > 0"),
    "pseudo_welfare_usage_above_capacity.json": instance("pseudo_welfare_usage_above_capacity.json", "usage: a unit is already used above its capacity"),
    "pseudo_welfare_alpha_not_above_one.json": instance("pseudo_welfare_alpha_not_above_one.json", "alpha: must be in (1, 500]"),
    "pseudo_welfare_negative_rho.json": instance("pseudo_welfare_negative_rho.json", "rho: must be >= 0"),
    "pseudo_welfare_utility_list_length.json": instance("pseudo_welfare_utility_list_length.json", "utility: has 1 kinds, expected 2"),
    "onsocmax_offline_missing_key.json": instance("onsocmax_offline_missing_key.json", "mesh instance: missing key"),
    # Delorme set packing (.dat)
    "column_out_of_range.dat": instance("column_out_of_range.dat", "row 1 names column 3 outside 1..2"),
    "non_integer.dat": instance("non_integer.dat", "the profits holds a bad token: 'x' is not an integer"),
    "trailing_tokens.dat": instance("trailing_tokens.dat", "2 unexpected tokens after row 2"),
    "truncated.dat": instance("truncated.dat", "file ends inside row 2"),
    "delorme_cut_last_number.dat": instance("delorme_cut_last_number.dat", "the last line ('2 3') has no line break"),
    "clq_cut_last_number.clq": instance("clq_cut_last_number.clq", "the last line ('e 2 3') has no line break"),
    "orlib_cut_last_number.txt": instance("orlib_cut_last_number.txt", "the last line ('2') has no line break"),
    "lp_sense_typo.lp": instance("lp_sense_typo.lp", "line 1: an LP file opens with its objective sense"),
    "lp_missing_operator.lp": instance("lp_missing_operator.lp", "line 2: no operator after 'x0'"),
    "mps_section_typo.mps": instance("mps_section_typo.mps", "line 2: 'OBJSENS' is not an MPS section"),
    "mps_rhs_twice.mps": instance("mps_rhs_twice.mps", "line 10: row 'r0' has a second RHS entry"),
    "delorme_zero_rows.dat": instance("delorme_zero_rows.dat", "header needs 1 <= m <= 1000000 rows"),
    "delorme_negative_count.dat": instance("delorme_negative_count.dat", "row 1 has count -1"),
    "delorme_empty.dat": instance("delorme_empty.dat", "file ends inside the header"),
    "delorme_repeated_column.dat": instance("delorme_repeated_column.dat", "delorme: row 2 lists column 1 twice"),
    "delorme_negative_profit.dat": instance("delorme_negative_profit.dat", "weights: contains a negative value"),
    "delorme_integer_beyond_float.dat": instance("delorme_integer_beyond_float.dat", "'99999999999999999999...' is out of range (integers must fit in 64 bits)"),
    "delorme_underscore_digits.dat": instance("delorme_underscore_digits.dat", "the profits holds a bad token: '1_0' is not an integer"),
    "delorme_plus_sign.dat": instance("delorme_plus_sign.dat", "the profits holds a bad token: '+1' is not an integer"),
    "delorme_non_ascii_digit.dat": instance("delorme_non_ascii_digit.dat", "the profits holds a bad token: '\u0661' is not an integer"),
    # DIMACS clique graphs (.clq)
    "clq_truncated.clq": instance("clq_truncated.clq", "the problem line declares 2 edges, the file lists 1"),
    "clq_vertex_out_of_range.clq": instance("clq_vertex_out_of_range.clq", "line 2: vertex 4 outside 1..3"),
    "clq_loop.clq": instance("clq_loop.clq", "line 2: a loop at vertex 2"),
    "clq_negative_weight.clq": instance("clq_negative_weight.clq", "line 2: vertex 1 has a negative weight (-5)"),
    "clq_edge_before_problem.clq": instance("clq_edge_before_problem.clq", "line 1: 'e' line before the problem line"),
    "clq_unknown_line.clq": instance("clq_unknown_line.clq", "line 2: unknown line type 'v'"),
    "clq_complement_too_large.clq": instance("clq_complement_too_large.clq", "12497500 non-adjacent vertex pairs, more than 1e+06"),
    "clq_plus_sign.clq": instance("clq_plus_sign.clq", "line 2: '+2' is not an integer"),
    # OR-Library mknap (.txt)
    "mknap_truncated.txt": instance("mknap_truncated.txt", "instance 1: ends early"),
    "mknap_count_too_high.txt": instance("mknap_count_too_high.txt", "instance 2: ends early"),
    "mknap_count_too_low.txt": instance("mknap_count_too_low.txt", "10 unexpected token(s) after the 1 instance(s)"),
    "mknap_zero_items.txt": instance("mknap_zero_items.txt", "n must be >= 1, got 0"),
    "mknap_non_number.txt": instance("mknap_non_number.txt", "instance 1: 'abc' is not a number"),
    "mknap_negative_weight.txt": instance("mknap_negative_weight.txt", "weights: contains a negative value"),
    "mknap_neither_layout.txt": instance("mknap_neither_layout.txt", "neither an OR-Library mknap1/mknapcb file"),
    "mknap2_truncated.txt": instance("mknap2_truncated.txt", "TEST1: ends early"),
    "mknap_number_beyond_float.txt": instance("mknap_number_beyond_float.txt", "instance 1: '10000000000000000000...' is out of the float range"),
    "mknap_underscore_digits.txt": instance("mknap_underscore_digits.txt", "instance 1: '1_0' is not a number"),
    "mknap_plus_sign.txt": instance("mknap_plus_sign.txt", "instance 1: '+10' is not a number"),
    "mknap_non_ascii_digit.txt": instance("mknap_non_ascii_digit.txt", "instance 1: '\u0661' is not a number"),
    # TOML configs: maxweight (the first corpus, top level) and every other experiment
    "malformed.toml": (["run", "maxweight", "--config", "malformed.toml"], "is not valid TOML", config("maxweight", "malformed.toml")),
    "probability_above_one.toml": (["run", "maxweight", "--config", "probability_above_one.toml"], "fig4_task_prob: must be a probability",
                                   config("maxweight", "probability_above_one.toml")),
    "requirement_length.toml": (["run", "maxweight", "--config", "requirement_length.toml"], "requirement: needs 2 entries",
                                config("maxweight", "requirement_length.toml")),
    "unknown_key.toml": (["run", "maxweight", "--config", "unknown_key.toml"], "unknown key 'framez'", config("maxweight", "unknown_key.toml")),
    "wrong_type.toml": (["run", "maxweight", "--config", "wrong_type.toml"], "frames: expected an integer", config("maxweight", "wrong_type.toml")),
    "configs/maxweight_fig5_size_zero.toml": cfg("maxweight", "maxweight_fig5_size_zero.toml", "fig5_sizes: sizes must be >= 1"),
    "configs/maxweight_negative_frames.toml": cfg("maxweight", "maxweight_negative_frames.toml", "frames: must be >= 1"),
    "configs/ogasched_contention_past_setting_range.toml": cfg("ogasched", "ogasched_contention_past_setting_range.toml",
                                                                "contention: must be at most 1e+12 in magnitude"),
    "configs/ogasched_allocation_past_memory.toml": cfg("ogasched", "ogasched_allocation_past_memory.toml",
                                                        "n_resources: a slot's allocation y"),
    "configs/onsocmax_arrival_rate_past_setting_range.toml": cfg("onsocmax", "onsocmax_arrival_rate_past_setting_range.toml",
                                                                 "arrival_rate: must be at most 1e+12 in magnitude"),
    "configs/maxweight_requirement_past_setting_range.toml": cfg("maxweight", "maxweight_requirement_past_setting_range.toml",
                                                                 "requirement[0]: must be at most 1e+12 in magnitude, got 1e+99"),
    "configs/esdp_unknown_key.toml": cfg("esdp", "esdp_unknown_key.toml", "unknown key 'n_serverz'"),
    "configs/maxweight_options_not_a_table.toml": cfg("maxweight", "maxweight_options_not_a_table.toml",
                                                      "config.options: expected a table, got int"),
    "configs/ogasched_empty_axis.toml": cfg("ogasched", "ogasched_empty_axis.toml", "config.fig3_nodes: must list at least one value"),
    "configs/esdp_repeated_sweep_value.toml": cfg("esdp", "esdp_repeated_sweep_value.toml",
                                                  "config.sweep_values: lists a value twice ([0.5, 0.5])"),
    "configs/onsocmax_negative_seed.toml": cfg("onsocmax", "onsocmax_negative_seed.toml", "config.seed: must be >= 0, got -1"),
    "configs/esdp_arrival_prob_above_one.toml": cfg("esdp", "esdp_arrival_prob_above_one.toml", "arrival_prob: must be a probability in [0, 1], got 1.2"),
    "configs/esdp_edge_prob_zero.toml": cfg("esdp", "esdp_edge_prob_zero.toml", "edge_prob: must be in (0, 1]"),
    "configs/esdp_unknown_policy.toml": cfg("esdp", "esdp_unknown_policy.toml", "unknown policy 'Magic'"),
    "configs/esdp_horizon_string.toml": cfg("esdp", "esdp_horizon_string.toml", "horizon: expected an integer, got 'long'"),
    "configs/esdp_study_unknown.toml": cfg("esdp", "esdp_study_unknown.toml", "study: must be one of"),
    "configs/ogasched_arrival_prob_above_one.toml": cfg("ogasched", "ogasched_arrival_prob_above_one.toml", "arrival_prob: must be a probability in [0, 1], got 1.5"),
    "configs/ogasched_alibaba_without_dir.toml": cfg("ogasched", "ogasched_alibaba_without_dir.toml", "trace_dir: the alibaba source needs a directory"),
    "configs/ogasched_decay_above_one.toml": cfg("ogasched", "ogasched_decay_above_one.toml", "config.decay: must be in (0, 1]"),
    "configs/ogasched_unknown_study.toml": cfg("ogasched", "ogasched_unknown_study.toml", "study: must be one of"),
    "configs/ogasched_study_not_string.toml": cfg("ogasched", "ogasched_study_not_string.toml", "study: must be one of"),
    "configs/ogasched_nested_table.toml": cfg("ogasched", "ogasched_nested_table.toml", "unknown key 'oga'"),
    "configs/ogasched_nan.toml": cfg("ogasched", "ogasched_nan.toml", "contention: must be finite"),
    "configs/onsocmax_max_nodes_above_n_nodes.toml": cfg("onsocmax", "onsocmax_max_nodes_above_n_nodes.toml", "max_nodes: must be in [1, n_nodes]"),
    "configs/onsocmax_unknown_kind.toml": cfg("onsocmax", "onsocmax_unknown_kind.toml", "kinds: each must be one of"),
    "configs/onsocmax_integral_sweep.toml": cfg("onsocmax", "onsocmax_integral_sweep.toml", "integral: only the ratio study"),
    "configs/onsocmax_repeats_float.toml": cfg("onsocmax", "onsocmax_repeats_float.toml", "repeats: expected an integer, got 2.5"),
    "configs/esdp_edge_prob_tiny.toml": cfg("esdp", "esdp_edge_prob_tiny.toml", "edge_prob: 1000 draws in a row had no channel", at_run=True),
    "configs/esdp_n_servers_huge.toml": cfg("esdp", "esdp_n_servers_huge.toml", "config.n_servers: the graph draw and requirements (n_ports x n_servers x n_resources) would hold 2.4e+10 entries"),
    "configs/ogasched_horizon_huge.toml": cfg("ogasched", "ogasched_horizon_huge.toml", "config.horizon: the arrivals (horizon x n_ports x copies) would hold 2e+13 entries"),
    "configs/ogasched_integer_beyond_float.toml": cfg("ogasched", "ogasched_integer_beyond_float.toml", "config.contention: must be finite (an integer beyond the float range)"),
    "configs/maxweight_integer_beyond_int64.toml": cfg("maxweight", "maxweight_integer_beyond_int64.toml", "config.frames: a 67-bit integer is out of range"),
    "configs/onsocmax_deeply_nested.toml": cfg("onsocmax", "onsocmax_deeply_nested.toml", "nests arrays or tables too deeply"),
    # run lengths that would never finish: refused before the first slot (they ran until stopped)
    "configs/esdp_horizon_huge.toml": cfg("esdp", "esdp_horizon_huge.toml", "config.horizon: the per-slot records of one repeat (horizon x policies) would hold 2.77e+19 entries"),
    "configs/esdp_repeats_huge.toml": cfg("esdp", "esdp_repeats_huge.toml", "config.repeats: the per-slot table (horizon x policies x repeats) would hold 9e+11 entries"),
    "configs/onsocmax_repeats_huge.toml": cfg("onsocmax", "onsocmax_repeats_huge.toml", "config.repeats: the sweep's rows (values x kinds x repeats x policies) would hold 2.7e+13 entries"),
    "configs/onsocmax_ratio_instances_huge.toml": cfg("onsocmax", "onsocmax_ratio_instances_huge.toml", "config.instances: the ratio study's rows (one per instance) would hold 1e+12 entries"),
    "configs/maxweight_simulate_frames_huge.toml": cfg("maxweight", "maxweight_simulate_frames_huge.toml", "config.frames: the per-frame rates (frames x policies x applications) would hold 1.84e+19 entries"),
    # sweep files
    "configs/sweep_size_huge.toml": (["sweep", "configs/sweep_size_huge.toml", "--out", "{out}", "--workers", "1"],
                                     "sweep.sizes: sizes must be in 1..1000000", lambda tmp: load_sweep_file("configs/sweep_size_huge.toml")),
    # Alibaba traces, through `optsched run ogasched` with source = "alibaba"
    "configs/ogasched_missing_trace_dir.toml": cfg("ogasched", "ogasched_missing_trace_dir.toml", "config.trace_dir: traces/no_such_directory does not exist"),
    "configs/ogasched_trace_missing_column.toml": cfg("ogasched", "ogasched_trace_missing_column.toml", "missing required column 'memory_mib'", at_run=True),
    "configs/ogasched_trace_all_rows_bad.toml": cfg("ogasched", "ogasched_trace_all_rows_bad.toml", "none of its 3 row(s) can be parsed (first bad row 2)", at_run=True),
    "configs/ogasched_trace_empty_file.toml": cfg("ogasched", "ogasched_trace_empty_file.toml", "openb_node_list_all_node.csv is empty", at_run=True),
    "configs/ogasched_trace_no_machine_files.toml": cfg("ogasched", "ogasched_trace_no_machine_files.toml", "traces/no_machine_files has no gpu-v2023/openb_node_list_all_node.csv", at_run=True),
    "configs/ogasched_trace_pods_without_time.toml": cfg("ogasched", "ogasched_trace_pods_without_time.toml", "missing required column 'creation_time'", at_run=True),
}

# CLI misuse on good files (written to the test's temporary directory as {tmp}/NAME)
MISUSE: dict[str, tuple[list[str], str, Callable[[Path], Any]]] = {
    "unknown backend": (["solve", "{tmp}/set_packing.json", "--backend", "nosuch"], "unknown backend 'nosuch'", solve("set_packing.json", "nosuch")),
    "backend does not fit the model": (["solve", "{tmp}/set_packing.json", "--backend", "kkt"], "backend 'kkt' does not solve 'set_packing'",
                                       solve("set_packing.json", "kkt")),
    "family backend on one budget": (["solve", "{tmp}/budgeted_ip.json", "--backend", "budget_exact"], "does not solve 'budgeted_ip'",
                                     solve("budgeted_ip.json", "budget_exact")),
    "dp on fractional data": (["solve", "{tmp}/fractional_ip.json", "--backend", "dp"], "dp: weights, capacity and budget_coeffs must be whole",
                              solve("fractional_ip.json", "dp")),
    "cpsat on fractional data": (["solve", "{tmp}/fractional_ip.json", "--backend", "cpsat"], "must be whole numbers",
                                 solve("fractional_ip.json", "cpsat")),
    "cpsat on a QP": (["solve", "{tmp}/projection.json", "--backend", "cpsat"], "does not solve 'capacity_projection'", solve("projection.json", "cpsat")),
    "missing file": (["solve", "{tmp}/nothing_here.json"], "does not exist", load("/nonexistent/nothing_here.json")),
    "unknown file format": (["solve", "configs/esdp_unknown_key.toml"], "unknown instance format '.toml'", load("configs/esdp_unknown_key.toml")),
    "option of the wrong type": (["solve", "{tmp}/budgeted_ip.json", "--backend", "cpsat", "--option", "num_workers=abc"],
                                 "option 'num_workers' expects an integer", solve("budgeted_ip.json", "cpsat", num_workers="abc")),
    "option as a list": (["solve", "{tmp}/budgeted_ip.json", "--backend", "cpsat", "--option", "num_workers=[1]"],
                         "option 'num_workers' expects an integer", solve("budgeted_ip.json", "cpsat", num_workers=[1])),
    "HiGHS option out of range": (["solve", "{tmp}/budgeted_ip.json", "--backend", "highs", "--option", "mip_rel_gap=-1"],
                                  "option 'mip_rel_gap' must be >= 0", solve("budgeted_ip.json", "highs", mip_rel_gap=-1.0)),
    "unknown HiGHS option": (["solve", "{tmp}/budgeted_ip.json", "--backend", "highs", "--option", 'highs_options={"bogus": 1}'],
                             "does not forward 'bogus'", solve("budgeted_ip.json", "highs", highs_options={"bogus": 1})),
    "unknown DP method": (["solve", "{tmp}/budgeted_ip.json", "--backend", "dp", "--option", "method=bogus"], "option 'method' must be one of reach, pareto, dense",
                          solve("budgeted_ip.json", "dp", method="bogus")),
    "NaN time limit": (["solve", "{tmp}/budgeted_ip.json", "--time-limit", "nan"], "time_limit: must be finite",
                       solve("budgeted_ip.json", None, time_limit=float("nan"))),
    "negative time limit": (["solve", "{tmp}/budgeted_ip.json", "--time-limit", "-1"], "time_limit: must be >= 0",
                            solve("budgeted_ip.json", None, time_limit=-1.0)),
    "compare with an unknown backend": (["compare", "{tmp}/budgeted_ip.json", "--backends", "highs,nosuch"], "unknown backend 'nosuch'",
                                        solve("budgeted_ip.json", "nosuch")),
    "unknown paper": (["run", "nosuch"], "unknown paper 'nosuch'", lambda tmp: __import__("optsched.papers").papers.get_paper("nosuch")),
    "unknown preset": (["run", "esdp", "--preset", "nosuch"], "esdp has no preset 'nosuch'",
                       lambda tmp: __import__("optsched.papers").papers.get_paper("esdp").make_config({}, "nosuch")),
    "missing config file": (["run", "onsocmax", "--config", "configs/missing.toml"], "does not exist",
                            config("onsocmax", "configs/missing.toml")),
    # files that are not regular files: refused at once (a FIFO would block, /dev/zero never ends)
    "FIFO as instance file": (["solve", "{tmp}/fifo.json"], "fifo.json is not a regular file", in_tmp(lambda p: load(p)(BAD), "fifo.json")),
    "/dev/zero as instance file": (["solve", "{tmp}/zero.json"], "zero.json is not a regular file", in_tmp(lambda p: load(p)(BAD), "zero.json")),
    "FIFO as --config": (["run", "esdp", "--config", "{tmp}/fifo.toml", "--out", "{out}"], "fifo.toml is not a regular file",
                         in_tmp(lambda p: config("esdp", p)(BAD), "fifo.toml")),
    "/dev/urandom as --config": (["run", "maxweight", "--config", "{tmp}/urandom.toml", "--out", "{out}"],
                                 "urandom.toml is not a regular file", in_tmp(lambda p: config("maxweight", p)(BAD), "urandom.toml")),
    "directory as --config": (["run", "esdp", "--config", "{tmp}", "--out", "{out}"], "is a directory",
                              lambda tmp: config("esdp", str(tmp))(tmp)),
    "FIFO as sweep file": (["sweep", "{tmp}/fifo.toml", "--out", "{out}"], "fifo.toml is not a regular file",
                           in_tmp(load_sweep_file, "fifo.toml")),
    "empty sweep file path": (["sweep", "", "--out", "{out}"], "the path is empty",
                              lambda tmp: load_sweep_file("")),
    # Dask and bench options
    "empty --dask address": (["sweep", "{tmp}/sweep.toml", "--out", "{out}", "--dask", ""], "got an empty address", sweep_dask("")),
    "--dask without a scheme": (["sweep", "{tmp}/sweep.toml", "--out", "{out}", "--dask", "host:8786"],
                                "expected 'local' or SCHEME://HOST:PORT", sweep_dask("host:8786")),
    "TLS files for a tcp:// scheduler": (["sweep", "{tmp}/sweep.toml", "--out", "{out}", "--dask", "tcp://127.0.0.1:1",
                                          "--dask-ca", "a", "--dask-cert", "b", "--dask-key", "c"],
                                         "need a tls:// scheduler address", sweep_dask("tcp://127.0.0.1:1", ("a", "b", "c"))),
    "missing --dask-key file": (["sweep", "{tmp}/sweep.toml", "--out", "{out}", "--dask", "tls://127.0.0.1:1", "--dask-ca",
                                 "{tmp}/sweep.toml", "--dask-cert", "{tmp}/sweep.toml", "--dask-key", "/nonexistent/key.pem"],
                                "--dask-key: /nonexistent/key.pem is not a file",
                                lambda tmp: sweep_dask("tls://127.0.0.1:1", (str(tmp / "sweep.toml"), str(tmp / "sweep.toml"),
                                                                              "/nonexistent/key.pem"))(tmp)),
    # counts of repeated work that would never finish, and worker counts beyond any machine
    "compare --repeats 10^11": (["compare", "{tmp}/set_packing.json", "--backends", "greedy,enumerate", "--repeats", "100000000000"],
                                "repeats: the runtimes kept for the medians (repeats x backends) would hold 2e+11 entries",
                                compare_with(repeats=10**11)),
    "compare --jobs 10^5": (["compare", "{tmp}/set_packing.json", "--backends", "greedy,enumerate", "--jobs", "100000"],
                            "jobs: must be a whole number in 1..1024, got 100000", compare_with(jobs=10**5)),
    "bench --per-size 10^12": (["bench", "--quick", "--models", "set_packing", "--per-size", "1000000000000", "--out", "{out}"],
                               "per_size: the generated instances of one size would hold 1e+12 entries",
                               lambda tmp: __import__("optsched.bench").bench.BenchConfig(quick=True, per_size=10**12)),
    "bench --repeats 10^12": (["bench", "--quick", "--models", "set_packing", "--repeats", "1000000000000", "--out", "{out}"],
                              "repeats: the rows of one size and backend (instances per size x repeats) would hold 1e+12 entries",
                              lambda tmp: __import__("optsched.bench").bench.BenchConfig(quick=True, repeats=10**12)),
    "reproduce --replicates 10^12": (["reproduce", "maxweight", "--replicates", "1000000000000", "--out", "{out}"],
                                     "replicates: the replicates' records (one per replicate) would hold 1e+12 entries",
                                     reproduce_with(replicates=10**12)),
    "reproduce --jobs 5000": (["reproduce", "maxweight", "--jobs", "5000", "--out", "{out}"], "jobs: must be a whole number in 1..1024, got 5000",
                              reproduce_with(jobs=5000)),
    "bench --data that does not exist": (["bench", "--quick", "--models", "set_packing", "--data", "/nonexistent/data",
                                          "--out", "{out}"], "--data: /nonexistent/data is not a directory",
                                         bench_data("/nonexistent/data")),
}


GOOD_SWEEP = 'kind = "solve"\nmodels = ["set_packing"]\nbackends = ["greedy"]\nsizes = [4]\n'


@pytest.fixture
def in_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """cwd = tests/bad_inputs (relative paths in the table and in trace configs), good files,
    FIFOs and links to devices in tmp."""
    for name, data in GOOD_MODELS.items():
        (tmp_path / name).write_text(json.dumps(data))
    (tmp_path / "sweep.toml").write_text(GOOD_SWEEP)
    for name in ("fifo.json", "fifo.toml"):
        os.mkfifo(tmp_path / name)
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "urandom.toml").symlink_to("/dev/urandom")
    monkeypatch.chdir(BAD)
    return tmp_path


class RanOn(Exception):
    """Raised by :func:`deadline`: the input was not refused up front."""


@contextlib.contextmanager
def deadline(seconds: float = 60.0) -> Iterator[None]:
    """Fail (instead of hanging) when a bad input is not refused and its run goes on: every
    case here is refused before any work starts."""
    def stop(signum: int, frame: Any) -> None:
        raise RanOn(f"still running after {seconds:g} s: the input was not refused up front")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_cli(capsys: pytest.CaptureFixture[str], argv: list[str], words: str, tmp: Path) -> None:
    argv = [a.replace("{tmp}", str(tmp)).replace("{out}", str(tmp / "out")) for a in argv]
    with deadline():
        code = main(argv)  # anything but a ValueError escapes here and fails the test
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (argv, code, err)
    assert out == ""
    assert len(lines) == 1, lines
    assert lines[0].startswith("optsched: error: ")
    assert "Traceback" not in err
    assert words in lines[0], (words, lines[0])


def check_library(call: Callable[[Path], Any], words: str, tmp: Path) -> None:
    """A ValueError naming the problem, and no numpy RuntimeWarning on the way (the CLI would
    print it as a second line before the error)."""
    with pytest.raises(ValueError) as info, warnings.catch_warnings(), deadline():
        warnings.simplefilter("error", RuntimeWarning)
        call(tmp)
    assert words in " ".join(str(info.value).split())


@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_file_cli_exit_2_one_line(name: str, in_corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, words, _ = CASES[name]
    check_cli(capsys, argv, words, in_corpus)


@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_file_library_value_error(name: str, in_corpus: Path) -> None:
    _, words, call = CASES[name]
    check_library(call, words, in_corpus)


@pytest.mark.parametrize("name", sorted(MISUSE))
def test_cli_misuse_exit_2_one_line(name: str, in_corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, words, _ = MISUSE[name]
    check_cli(capsys, argv, words, in_corpus)


@pytest.mark.parametrize("name", sorted(MISUSE))
def test_cli_misuse_library_value_error(name: str, in_corpus: Path) -> None:
    _, words, call = MISUSE[name]
    check_library(call, words, in_corpus)


def test_every_corpus_file_is_in_the_table() -> None:
    """No corpus file escapes the table; the trace directories are reached through their configs."""
    files = {
        p.relative_to(BAD).as_posix()
        for p in BAD.rglob("*")
        if p.is_file() and p.relative_to(BAD).parts[0] != "traces"
    }
    used_dirs = {Path(CASES[k][0][3]).stem.removeprefix("ogasched_trace_") for k in CASES if "_trace_" in k}
    trace_dirs = {p.name for p in (BAD / "traces").iterdir() if p.is_dir()}
    assert files - {"configs/ogasched_trace_few_bad_rows.toml"} == set(CASES)
    assert trace_dirs - {"few_bad_rows"} <= used_dirs
    assert len(CASES) >= 30


def test_trace_with_a_few_bad_rows_is_loaded_with_a_warning_counting_them() -> None:
    from optsched.ogasched.traces import read_v2018_tasks, read_v2023_nodes, read_v2023_pods

    d = BAD / "traces" / "few_bad_rows"
    for reader, path, n_good, rows in (
        (read_v2023_nodes, d / "gpu-v2023" / "openb_node_list_all_node.csv", 4, "(rows 3)"),
        (read_v2023_pods, d / "gpu-v2023" / "openb_pod_list_default.csv", 4, "(rows 2, 5)"),
        (read_v2018_tasks, d / "v2018-sample" / "sample_tasks.csv", 4, "(rows 3)"),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = reader(path)
        assert len(table) == n_good
        assert table.skipped == len(rows.split(","))
        assert len(caught) == 1
        message = str(caught[0].message)
        assert f"skipped {table.skipped} unparseable row(s) {rows}" in message and path.name in message


def test_trace_with_a_few_bad_rows_runs_from_the_cli_with_one_line_warnings(
    in_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "ogasched", "--config", "configs/ogasched_trace_few_bad_rows.toml", "--out", str(in_corpus / "o")])
    out, err = capsys.readouterr()
    assert code == 0
    warned = [line for line in err.splitlines() if line.startswith("optsched: warning: ")]
    assert len(warned) == 3 and all("unparseable row(s)" in w for w in warned)
    assert "Traceback" not in err and "UserWarning" not in err
    assert (in_corpus / "o" / "fig2_rewards.csv").is_file()


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "budgeted_ip_ragged_weights.json"],
        ["run", "esdp", "--config", "configs/esdp_unknown_policy.toml"],
        ["run", "ogasched", "--config", "configs/ogasched_trace_missing_column.toml"],
    ],
    ids=["json", "toml", "trace"],
)
def test_real_process_exit_status_and_one_line(argv: list[str], tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "optsched", *argv, *(["--out", str(tmp_path)] if argv[0] == "run" else [])],
        capture_output=True, text=True, cwd=BAD, timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("optsched: error: ")
