"""The ``optsched`` command line: solve, compare, backends, run.

Any bad input, and any file that cannot be read or written, prints one line
``optsched: error: ...`` on stderr and exits with status 2 (``INPUT_FAILURES``); a solve the
run depends on that ends without its answer (:class:`optsched.result.SolveFailed`), or a
sweep's worker process killed (:class:`optsched.result.WorkerLost`), prints one line and exits
with status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Iterator, Sequence

from optsched.files import check_output_dir, recording_inputs
from optsched.result import SolveFailed, WorkerLost

EXIT_BAD_INPUT = 2


class BadInput(ValueError):
    pass


def _whole(text: str) -> int:
    """An integer argument as the data files write one (:func:`optsched.io.numbers.typed_int`)."""
    from optsched.io.numbers import typed_int

    return typed_int(text)


def _number(text: str) -> float:
    """A decimal argument as the data files write one (:func:`optsched.io.numbers.typed_float`)."""
    from optsched.io.numbers import typed_float

    return typed_float(text)


_whole.__name__ = "integer"  # argparse's message: "argument --seed: invalid integer value: '1_0'"
_number.__name__ = "number"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too)
        raise BadInput(message)


def _parse_options(pairs: Sequence[str], flag: str = "--option") -> dict[str, Any]:
    """``KEY=VALUE`` pairs, each value JSON where it parses as JSON (else the text); a key given
    twice, here or inside a JSON object, is refused (the last one silently won)."""
    from optsched.io.json_instance import unique_keys

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise BadInput(f"{flag} expects KEY=VALUE, got {pair!r}")
        if key in out:
            raise BadInput(f"{flag}: {key!r} is given twice")
        try:
            out[key] = json.loads(raw, object_pairs_hook=unique_keys)
        except json.JSONDecodeError:
            out[key] = raw
        except ValueError as exc:  # a key twice inside the value's JSON object
            raise BadInput(f"{flag} {key}: {exc}") from None
    return out


def _path_text(text: str) -> str:
    """A path argument: not empty (``--out ""`` wrote to the default directory unseen; a sweep
    config "" was read as the directory ".")."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the path is empty")
    return text


def _finite_or_none(x: float | None) -> float | None:
    from optsched.io.json_instance import dumps_float

    return dumps_float(x)


def cmd_solve(args: argparse.Namespace) -> int:
    import optsched
    from optsched.io import load_captured
    from optsched.solve import check_backend, choose_backend

    model, capture = load_captured(args.file, args.instance)
    backend = choose_backend(model, args.backend).NAME
    captured = _captured_options(args, capture, backend)
    given = _parse_options(args.option)
    options = {**captured, **given}
    if args.log:
        if "log" not in optsched.all_backends()[backend].OPTIONS:  # "options: ... has no option 'log'" named no flag
            logging = sorted(name for name, b in optsched.all_backends().items() if "log" in b.OPTIONS)
            raise BadInput(f"--log: backend {backend!r} keeps no solver log (those that do: {', '.join(logging)})")
        options["log"] = True
    # the backend's own options only: --option time_limit=1 or verify=false named solve()'s parameters
    check_backend(model, backend, options)
    res = optsched.solve(model, backend, time_limit=args.time_limit, **options)
    _note_captured(backend, captured, given)
    if args.log:
        from optsched.artifacts import write_text

        write_text(args.log, str(res.extra.get("log", "")))
    solution = None if res.solution is None else model.solution_to_json(res.solution)
    if args.json:
        print(json.dumps({
            "model": res.model,
            "backend": res.backend,
            "termination": res.termination.value,
            "objective": _finite_or_none(res.objective),
            "bound": _finite_or_none(res.bound),
            "gap_to_own_bound": res.gap_to_own_bound,
            "solution": solution,
            "options": options,
            "runtime_s": res.runtime_s,
            "setup_s": res.extra.get("setup_s"),
            "message": res.message,
        }))
    else:
        print(f"model       {res.model} (size {model.size})")
        print(f"backend     {res.backend}")
        if options:
            print(f"options     {_options_text(options)}")
        print(f"termination {res.termination.value}")
        print(f"objective   {res.objective}")
        print(f"bound       {res.bound}")
        print(f"gap         {res.gap_to_own_bound} (to its own bound)")
        print(f"runtime     {res.runtime_s:.3g} s (set-up {res.extra.get('setup_s', 0.0):.3g} s, not counted)")
        if res.message:
            print(f"message     {res.message}")
        print(f"solution    {solution}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    import optsched
    from optsched.io import load_captured

    model, capture = load_captured(args.file, args.instance)
    names = _names(args.backends, "--backends") or [b.NAME for b in optsched.fitting_backends(model)]
    options: dict[str, dict[str, Any]] = {n: {"log": True} for n in names
                                          if args.log and "log" in optsched.all_backends()[n].OPTIONS}
    captured = {name: _captured_options(args, capture, name) for name in names}
    for name in names:
        options.setdefault(name, {}).update(captured[name])
    for key, value in _parse_options(args.option).items():
        backend, dot, name = key.partition(".")
        if not dot or not backend or not name:
            raise BadInput(f"--option expects BACKEND.KEY=VALUE for compare, got {key!r}")
        options.setdefault(backend, {})[name] = value
    table, results = optsched.compare(model, names, time_limit=args.time_limit, options=options,
                                      repeats=args.repeats, jobs=args.jobs, results=True)
    for name in names:
        _note_captured(name, captured[name], options.get(name, {}))
    if args.log:
        from optsched.artifacts import write_text

        for r in results:
            if "log" in r.extra:
                print(f"wrote {write_text(Path(args.log) / f'{r.backend}.log', r.extra['log'])}")
    print(table.to_string(index=False))
    return 0


def _captured_options(args: argparse.Namespace, capture: dict[str, Any], backend: str) -> dict[str, Any]:
    """The options a captured instance's policy solved it with, when ``backend`` is the policy's
    (so ``solve``/``compare`` with that backend solve what the policy solved; options given on
    the command line override them); {} otherwise, and for instances without a capture."""
    from optsched.io.json_instance import policy_solve

    try:
        policy = policy_solve(capture)
    except ValueError as exc:
        raise ValueError(f"file: {args.file} instance {args.instance or 1}: {exc}") from None
    return {} if policy is None or policy[0] != backend else dict(policy[1])


def _note_captured(backend: str, captured: dict[str, Any], used: dict[str, Any]) -> None:
    """Say (stderr, once the solve has run) which options came from the capture: those ``used``
    holds at the captured value (an --option given over one is named as such)."""
    kept = {k: v for k, v in captured.items() if k not in used or used[k] == v}
    replaced = [k for k in captured if k not in kept]
    if kept:
        print(f"note: {backend} took the options its policy solved this instance with: {_options_text(kept)}"
              + (f" (--option replaced {', '.join(replaced)})" if replaced else ""), file=sys.stderr)
    elif replaced:
        print(f"note: {backend}: --option replaced every option its policy solved this instance with "
              f"({', '.join(replaced)})", file=sys.stderr)


def _options_text(options: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in options.items()) or "none"


def cmd_export(args: argparse.Namespace) -> int:
    from optsched.io import load_instance
    from optsched.io.model_files import write_model_file
    from optsched.artifacts import write_text

    model = load_instance(args.file, args.instance)
    out = Path(args.out)
    if args.format == "json":
        path = write_text(out, json.dumps(model.to_dict()) + "\n")
    else:
        if out.suffix.lower() != f".{args.format}":
            raise BadInput(f"--out: a {args.format} file must end in .{args.format}, got {out.name!r}")
        path = write_model_file(model, out)
    print(f"wrote {path}")
    return 0


def cmd_backends(args: argparse.Namespace) -> int:
    from optsched.models.base import model_kinds
    from optsched.solvers.registry import all_backends, backend_available

    kinds = model_kinds()
    for name, b in sorted(all_backends().items()):
        solves = sorted(k for k, cls in kinds.items() if b.fits_kind(cls) is None)
        avail = backend_available(b)
        status = "available" if avail else f"unavailable: {avail.reason}"
        kind = "exact" if b.EXACT else "heuristic"
        print(f"{name:14s} {kind:9s} {status}")
        print(f"{'':14s} solves: {', '.join(solves) or '-'}")
        print(f"{'':14s} {b.DESCRIPTION}")
        print(f"{'':14s} options:{'' if b.OPTIONS else ' -'}")
        for key, spec in b.OPTIONS.items():
            print(f"{'':16s} {key} = {spec.default!r} ({_accepts(spec)}): {spec.doc}")
    return 0


def _accepts(spec: Any) -> str:
    """What an option takes, in words: its type and range or choices."""
    if spec.choices:
        return "one of " + ", ".join(spec.choices)
    words = {bool: "true or false", int: "integer", float: "number", str: "text", dict: "table"}[spec.kind]
    if spec.minimum is not None:
        words += f" {'>' if spec.open_minimum else '>='} {spec.minimum:.12g}"
    if spec.maximum is not None:
        words += f"{',' if spec.minimum is not None else ''} <= {spec.maximum:.12g}"
    return words + (" or none" if spec.nullable else "")


def _names(text: str | None, flag: str) -> list[str]:
    """A comma-separated list of names (none when the flag is not given): an empty item or a
    name given twice is an error (``--backends ,`` once fell back to every backend)."""
    if text is None:
        return []
    names = [n.strip() for n in text.split(",")]
    if "" in names:
        raise BadInput(f"{flag}: an empty name in {text!r}")
    if len(set(names)) < len(names):
        raise BadInput(f"{flag}: a name is given twice in {text!r}")
    return names


def cmd_run(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from optsched.config import load_toml
    from optsched.papers import get_paper
    from optsched.observe import Observer
    from optsched.solve import model_kind
    from optsched.solvers.registry import get_backend

    exp = get_paper(args.paper)
    settings = load_toml(args.config) if args.config else {}
    if args.seed is not None:
        settings["seed"] = args.seed
    if args.backend is not None:
        settings["backend"] = args.backend
    if args.option:
        given = settings.get("options", {})
        if not isinstance(given, dict):
            raise BadInput(f"config.options: expected a table, got {type(given).__name__}")
        settings["options"] = {**given, **_parse_options(args.option)}
    cfg = exp.make_config(settings, args.preset)
    shadow = _names(args.shadow, "--shadow")
    for flag, value, needs, given in (("--shadow-every", args.shadow_every, "--shadow", shadow),
                                      ("--shadow-time-limit", args.shadow_time_limit, "--shadow", shadow),
                                      ("--capture-every", args.capture_every, "--capture", args.capture)):
        if value is not None and not given:  # it was ignored without it
            raise BadInput(f"{flag}: only with {needs}")
    for name in shadow:  # a shadow backend must fit one of the paper's subproblems
        if all(get_backend(name).fits_kind(model_kind(kind)) is not None for kind in exp.subproblems):
            raise BadInput(f"--shadow: backend {name!r} solves none of {exp.name}'s subproblems "
                           f"({', '.join(exp.subproblems)})")
    out = Path(args.out) if args.out else Path("results") / exp.name
    check_output_dir(out)  # before the run: a file at --out was named only after it
    if args.capture:
        check_output_dir(args.capture)
    observer = Observer(shadow=shadow, shadow_every=1 if args.shadow_every is None else args.shadow_every,
                        shadow_time_limit=args.shadow_time_limit, capture_dir=args.capture,
                        capture_every=1 if args.capture_every is None else args.capture_every,
                        run_info={"paper": exp.name, "preset": args.preset, "config": asdict(cfg)})
    with observer, recording_inputs():
        paths = exp.run(cfg, out)
    paths += observer.write(out)
    for p in paths:
        print(f"wrote {p}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from optsched.bench import BenchConfig, run_bench

    cfg = BenchConfig(quick=args.quick, models=tuple(_names(args.models, "--models")), repeats=args.repeats, per_size=args.per_size,
                      seed=args.seed, time_limit=args.time_limit, data_dir=Path(args.data) if args.data else None,
                      instances_from=Path(args.instances) if args.instances else None,
                      backends=tuple(_names(args.backends, "--backends")))
    out = Path(args.out) if args.out else Path("results") / "bench"
    check_output_dir(out)
    for p in run_bench(cfg, out):
        print(f"wrote {p}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from optsched.reproduce import reproduce

    settings = _parse_options(args.set, "--set")
    out = Path(args.out) if args.out else Path("results") / "reproduce"
    from optsched.config import MAX_WORKERS, whole_number

    if args.replicates is not None:
        whole_number("--replicates", args.replicates)
    whole_number("--jobs", args.jobs, maximum=MAX_WORKERS)
    only = _names(args.runs, "--runs") if args.runs is not None else None
    if only is not None and args.paper == "all":
        raise BadInput("--runs: name one paper, not all")
    check_output_dir(out)
    for p in reproduce(args.paper, out=out, full=args.full, settings=settings, replicates=args.replicates,
                       jobs=args.jobs, only=only):
        print(f"wrote {p}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from optsched.sweep import run_sweep

    out = Path(args.out) if args.out else Path("results") / "sweeps" / Path(args.config).stem
    if args.dask is not None:
        executor = "dask"
    else:
        executor = "serial" if args.workers == 1 else "pool"
    from optsched.sweep.executors import DaskTLS

    tls = DaskTLS(args.dask_ca, args.dask_cert, args.dask_key)
    if tls.given() and args.dask is None:
        raise BadInput("--dask-ca/--dask-cert/--dask-key: need --dask tls://HOST:PORT")
    check_output_dir(out)
    rep = run_sweep(args.config, out, executor=executor, workers=args.workers,
                    dask_address="local" if args.dask is None else args.dask, dask_tls=tls, batch_size=args.batch_size)
    print(f"sweep: {rep.total} runs, {rep.stored_before} already stored, {rep.ran} run now "
          f"({rep.executor}, {rep.workers} workers, {rep.batches} batches of up to {rep.batch_size}) in {rep.wall_s:.1f} s")
    for p in rep.files:
        print(f"wrote {p}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from optsched import __version__
    from optsched.papers import paper_names

    p = _Parser(prog="optsched", description="Per-slot scheduling subproblems: paper algorithms vs exact solvers.")
    p.add_argument("--version", action="version", version=f"optsched {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("solve", help="solve one instance file (JSON, Delorme .dat, OR-Library, DIMACS .clq, MPS, LP)")
    s.add_argument("file", help="instance file (JSON, .jsonl, Delorme .dat, OR-Library, DIMACS .clq, MPS, LP)")
    s.add_argument("--backend", default=None, help="backend name (default: the first available exact backend that fits)")
    s.add_argument("--time-limit", type=_number, default=None, help="seconds; a backend that stops early says time_limit")
    s.add_argument("--instance", type=_whole, default=None, help="1-based instance number in a multi-instance file")
    s.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="backend option (repeatable)")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    s.add_argument("--log", default=None, type=_path_text, metavar="FILE",
                   help="write the solver's log to FILE (highs, cpsat, scip, pyomo)")
    s.set_defaults(func=cmd_solve)

    c = sub.add_parser("compare", help="solve one instance with several backends; print a table")
    c.add_argument("file", help="instance file (JSON, .jsonl, Delorme .dat, OR-Library, DIMACS .clq, MPS, LP)")
    c.add_argument("--backends", default=None, help="comma-separated; default: every backend that fits")
    c.add_argument("--time-limit", type=_number, default=None, help="seconds per backend solve")
    c.add_argument("--instance", type=_whole, default=None, help="1-based instance number in a multi-instance file")
    c.add_argument("--log", default=None, type=_path_text, metavar="DIR", help="write each solver's log to DIR/<backend>.log")
    c.add_argument("--repeats", type=_whole, default=1, help="solves per backend; the table shows the median runtime")
    c.add_argument("--jobs", type=_whole, default=1, help="backends solved in parallel processes")
    c.add_argument("--option", action="append", default=[], metavar="BACKEND.KEY=VALUE",
                   help="an option of one compared backend, e.g. cpsat.num_workers=2 (repeatable)")
    c.set_defaults(func=cmd_compare)

    e = sub.add_parser("export", help="write one instance as MPS, LP (models with a linear/quadratic form) or JSON")
    e.add_argument("file", help="instance file (JSON, .jsonl, Delorme .dat, OR-Library, DIMACS .clq, MPS, LP)")
    e.add_argument("--format", choices=("mps", "lp", "json"), required=True, help="output format")
    e.add_argument("--out", required=True, type=_path_text, help="output file")
    e.add_argument("--instance", type=_whole, default=None, help="1-based instance number in a multi-instance file")
    e.set_defaults(func=cmd_export)

    b = sub.add_parser("backends", help="list backends, what they solve, availability")
    b.set_defaults(func=cmd_backends)

    r = sub.add_parser("run", help="run a paper's experiment; writes CSV + PNG + JSON")
    r.add_argument("paper", help=f"one of: {', '.join(paper_names())}")
    r.add_argument("--config", default=None, type=_path_text, help="TOML file of settings")
    r.add_argument("--preset", default=None, help="a named preset of the paper's experiment, e.g. fig2 (an unknown name lists the known ones)")
    r.add_argument("--seed", type=_whole, default=None, help="the config's seed (every random draw derives from it)")
    r.add_argument("--out", default=None, type=_path_text, help="output directory (default results/NAME)")
    r.add_argument("--backend", default=None, help="backend of the policy's per-slot subproblem (config key 'backend')")
    r.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="option of that backend (repeatable; config table 'options')")
    r.add_argument("--shadow", default=None, metavar="B1,B2",
                   help="also solve the policies' subproblems with these backends; writes shadow.csv and shadow.png")
    r.add_argument("--shadow-every", type=_whole, default=None, metavar="K", help="shadow every K-th subproblem (default 1)")
    r.add_argument("--shadow-time-limit", type=_number, default=None, help="seconds per shadow solve")
    r.add_argument("--capture", default=None, type=_path_text, metavar="DIR",
                   help="write the policies' subproblems to DIR/<model>.jsonl (readable by solve and bench)")
    r.add_argument("--capture-every", type=_whole, default=None, metavar="K", help="capture every K-th subproblem (default 1)")
    r.set_defaults(func=cmd_run)

    bn = sub.add_parser("bench", help="runtime vs size and gap of every backend on every model; CSV, PNG, summary.md")
    bn.add_argument("--quick", action="store_true", help="small sizes, 1 instance per size, 5 s limit (about 30 s)")
    bn.add_argument("--models", default=None, help="comma-separated model kinds (default: all)")
    bn.add_argument("--out", default=None, type=_path_text, help="output directory (default results/bench)")
    bn.add_argument("--repeats", type=_whole, default=None, help="interleaved repeats per instance (3 quick, 5 full)")
    bn.add_argument("--per-size", type=_whole, default=None, help="generated instances per size (1 quick, 3 full)")
    bn.add_argument("--instances", default=None, type=_path_text, metavar="DIR_OR_FILE",
                    help="benchmark captured subproblems (.jsonl from 'run --capture') instead of generated ones")
    bn.add_argument("--backends", default=None, help="comma-separated backends (default: every one that fits)")
    bn.add_argument("--seed", type=_whole, default=0, help="seed of the generated instances")
    bn.add_argument("--time-limit", type=_number, default=None, help="seconds per exact solve (5 quick, 60 full)")
    bn.add_argument("--data", default=None, type=_path_text, help="shared data directory (default $OPTSCHED_SHARED_DATA or ../shared/data)")
    bn.set_defaults(func=cmd_bench)

    rp = sub.add_parser("reproduce", help="regenerate a paper's figures and tables; CSV, PNG, report.md")
    rp.add_argument("paper", help=f"one of: {', '.join(paper_names())}, or all")
    rp.add_argument("--full", action="store_true",
                    help="the paper's scale (about 46 min for all four on 2 cores) instead of the reduced default")
    rp.add_argument("--out", default=None, type=_path_text, help="output directory (default results/reproduce)")
    rp.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a config key in every run of the paper that has it (repeatable)")
    rp.add_argument("--replicates", type=_whole, default=None,
                    help="independent seeds per run (default 5; 10 with --full); a run that replicates inside "
                         "itself (esdp, onsocmax) takes it as its repeats")
    rp.add_argument("--jobs", type=_whole, default=1, help="replicates run at once in worker processes")
    rp.add_argument("--runs", default=None, metavar="LABEL,...",
                    help="only these runs of one paper (their labels, e.g. fig3,table3); the claims read the others from --out")
    rp.set_defaults(func=cmd_reproduce)

    sw = sub.add_parser("sweep", help="a grid of runs from a TOML file, in parallel, resumable; results.csv")
    sw.add_argument("config", type=_path_text, help="sweep TOML file (see examples/sweeps/)")
    sw.add_argument("--workers", type=_whole, default=None, help="processes (default: all cores; 1 = in-process)")
    sw.add_argument("--dask", default=None, metavar="ADDRESS",
                    help="run on a Dask cluster: 'local', tls://HOST:PORT, or tcp://HOST:PORT (trusted only: no encryption or auth)")
    sw.add_argument("--dask-ca", default=None, type=_path_text, metavar="FILE", help="tls:// scheduler: CA certificate (PEM)")
    sw.add_argument("--dask-cert", default=None, type=_path_text, metavar="FILE", help="tls:// scheduler: this client's certificate (PEM)")
    sw.add_argument("--dask-key", default=None, type=_path_text, metavar="FILE", help="tls:// scheduler: this client's private key (PEM)")
    sw.add_argument("--out", default=None, type=_path_text,
                    help="output directory (default results/sweeps/CONFIG-NAME)")
    sw.add_argument("--batch-size", type=_whole, default=None, help="runs per task (default: adapts to the measured run time, about 0.5 s of runs per task)")
    sw.set_defaults(func=cmd_sweep)
    return p


def _one_line_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    """Warnings (e.g. trace rows skipped) as one line each, like the errors."""
    print(f"optsched: warning: {' '.join(str(message).split())}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    import warnings

    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 prints escaped, not as a crash
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    with warnings.catch_warnings(), _second_interrupt_quits():
        warnings.showwarning = _one_line_warning
        return _main(argv)


@contextlib.contextmanager
def _second_interrupt_quits() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt as usual; a second one quits at once (one line, exit 130).
    The first asks a running solve to stop and waits for it (solvers/interrupt.py), but a solver
    may not ask (HiGHS 1.14's QP solver: a QP of 10^5 variables ran on for 78 s after Ctrl-C;
    1.16's asks). The second press ends the process without waiting for it (its files are written
    whole or not at all, ``artifacts.write_atomically``). Only where Python's own handler is
    in place, on the main thread; the previous handler comes back on return."""
    import signal

    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    pressed = False

    def on_interrupt(signum: int, frame: Any) -> None:
        nonlocal pressed
        if pressed:
            for stream in (sys.stdout, sys.stderr):  # what was printed before the press
                with contextlib.suppress(Exception):  # a write the press cut into refuses a flush
                    stream.flush()
            os.write(stderr, b"optsched: interrupted\n")
            os._exit(130)
        pressed = True
        raise KeyboardInterrupt

    stderr = os.dup(2)  # the terminal's: a solver's output capture points descriptor 2 at a file
    signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.close(stderr)


# Input-shaped failures: one line on stderr, exit 2. ValueError (with UnicodeError and json's
# errors) is every documented bad input; OverflowError and RecursionError are numbers or nesting
# beyond what a reader takes; MemoryError an allocation the machine refused (sizes come from
# the input); OSError a file that cannot be written or read (``--out`` is a file or read-only,
# a full disk, ``ulimit -f``). Anything else is a bug and keeps its traceback.
INPUT_FAILURES = (ValueError, OverflowError, RecursionError, MemoryError, OSError)
EXIT_SOLVER_FAILED = 1


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        text = f"input nested too deeply ({exc})"
    elif isinstance(exc, MemoryError):
        text = f"out of memory: {exc}" if str(exc) else "out of memory"
    elif isinstance(exc, OSError) and exc.strerror:
        names = " -> ".join(str(n) for n in (exc.filename, exc.filename2) if n is not None)
        text = f"{names}: {exc.strerror}" if names else exc.strerror
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)  # the parser lists the papers: a Ctrl-C can land there
        return args.func(args)
    except KeyboardInterrupt:
        print("optsched: interrupted", file=sys.stderr)
        return 130
    except INPUT_FAILURES as exc:  # BadInput is a ValueError
        print(f"optsched: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ModuleNotFoundError as exc:  # an optional package this command needs (the core install)
        print(f"optsched: error: this command needs the python package {exc.name!r} ({_install_hint(exc.name)})",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    except (SolveFailed, WorkerLost) as exc:  # a policy's solver and its fallback failed on a slot; an offline
        # optimum unproven; a sweep's worker process killed
        print(f"optsched: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_SOLVER_FAILED


def _install_hint(module: str | None) -> str:
    from optsched.solvers.registry import EXTRA_OF

    extra = EXTRA_OF.get(module or "", {"pandas": "plot", "matplotlib": "plot", "dask": "dask"}.get(module or "", "all"))
    return f"pip install 'optsched[{extra}]'"


if __name__ == "__main__":
    sys.exit(main())
