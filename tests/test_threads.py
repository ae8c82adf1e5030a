"""The library used as a cvxpy or Pyomo user would: from threads, from forked processes, with
Ctrl-C during a solve. Each case once failed (a library probe of the seam)."""

from __future__ import annotations

import multiprocessing
import pickle
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import optsched
from optsched.generators import generate
from optsched.result import Termination
from optsched.solvers.registry import get_backend


def _run(code: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter (first imports, file descriptors of its own)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], input=stdin, capture_output=True, text=True,
                          timeout=300)


def test_first_solves_from_threads_wait_for_the_kernel_import() -> None:
    """``lazy_modules.loaded`` handed a thread the kernel module another thread was still
    importing: AttributeError ('partially initialized module') for 7 of 8 first solves."""
    done = _run("""
        import numpy as np, optsched
        from concurrent.futures import ThreadPoolExecutor
        from optsched.generators import generate
        models = [generate("set_packing", 6, np.random.default_rng(s)) for s in range(8)]
        with ThreadPoolExecutor(4) as pool:
            print([r.termination.value for r in pool.map(lambda m: optsched.solve(m, "brute_force"), models)])
    """)
    assert done.returncode == 0 and "optimal" in done.stdout, done.stderr[-2000:]


def test_threads_sharing_a_stateful_prepared_get_the_serial_answers() -> None:
    """One HiGHS object per Prepared, solved from four threads at once, mixed instances up:
    0 of 24 results matched the serial run (errors, and numpy's own ValueError)."""
    prepared = optsched.prepare("set_packing", "highs")
    models = [generate("set_packing", 12, np.random.default_rng(s)) for s in range(24)]
    serial = [prepared.solve(m).objective for m in models]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda m: prepared.solve(m), models))
    assert [r.objective for r in threaded] == serial
    assert all(r.termination is Termination.OPTIMAL for r in threaded)


@pytest.mark.parametrize("backend", ["scip", "cvxpy", "pyomo"])
def test_threads_leave_the_output_streams_and_finish(backend: str) -> None:
    """scip and cvxpy solves from threads left file descriptors 1 and 2 on optsched's deleted
    capture file (every later line of the process lost); pyomo's from four threads deadlocked
    in Pyomo's own output capture."""
    if not get_backend(backend).available():
        pytest.skip(f"{backend} is not installed")
    done = _run(f"""
        import os, sys, numpy as np, optsched
        from concurrent.futures import ThreadPoolExecutor
        from optsched.generators import generate
        kind = "capacity_projection" if "{backend}" == "cvxpy" else "set_packing"
        models = [generate(kind, 8, np.random.default_rng(s)) for s in range(8)]
        before = [os.readlink(f"/proc/self/fd/{{fd}}") for fd in (1, 2)]
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda m: optsched.solve(m, "{backend}"), models))
        after = [os.readlink(f"/proc/self/fd/{{fd}}") for fd in (1, 2)]
        print("same" if before == after and sys.stdout is sys.__stdout__ else f"moved {{before}} {{after}}")
        print([r.termination.value for r in results])
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("same") and "error" not in done.stdout, done.stdout


def test_pyomo_and_cvxpy_solves_side_by_side_leave_the_output_streams() -> None:
    """Pyomo swaps sys.stdout for its own capture and held only its own lock, while cvxpy's
    captured block redirected file descriptors 1 and 2 under another: side by side in four
    threads, cvxpy solves raised "I/O operation on closed file", pyomo ones ended in error, and
    the process's stdout was left a StringIO."""
    done = _run("""
        import os, sys, numpy as np, optsched
        from concurrent.futures import ThreadPoolExecutor
        from optsched.generators import generate
        models = [generate("linear_program", 6, np.random.default_rng(s)) for s in range(20)]
        before = [os.readlink(f"/proc/self/fd/{fd}") for fd in (1, 2)]
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda job: optsched.solve(*job), [(m, b) for m in models for b in ("pyomo", "cvxpy")]))
        after = [os.readlink(f"/proc/self/fd/{fd}") for fd in (1, 2)]
        print("same" if before == after and sys.stdout is sys.__stdout__ else f"moved {before} {after}")
        print(sorted({r.termination.value for r in results}))
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["same", "['optimal']"], done.stdout


def test_a_prepared_unpickled_in_another_process_is_warmed_up_there() -> None:
    """Unpickling rebuilt the solver state but never warmed up: in a new process the first
    solve's runtime_s held the kernel's compilation (4.1 s against 2e-5 s)."""
    done = _run("""
        import importlib, pickle, numpy as np, optsched
        from optsched.generators import generate
        seam = importlib.import_module("optsched.solve")
        blob = bytes.fromhex(input())
        assert not seam._WARMED
        prepared = pickle.loads(blob)
        print(sorted(key[:2] for key in seam._WARMED))
    """, stdin=pickle.dumps(optsched.prepare("set_packing", "greedy")).hex())
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[('greedy', 'set_packing')]", done.stdout


def _cpsat_objective(seed: int) -> float:
    return optsched.solve(generate("set_packing", 10, np.random.default_rng(seed)), "cpsat").objective


def test_a_forked_child_solves_with_cpsat_after_its_parent_did() -> None:
    """The helper thread of ``interruptible`` did not survive fork: a cpsat solve in a forked
    child (multiprocessing's default on Linux) waited for it forever."""
    expected = _cpsat_objective(0)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_cpsat_objective, (0,)).get(timeout=120) == expected


def test_ctrl_c_during_a_cvxpy_solve_is_a_keyboard_interrupt() -> None:
    """OSQP catches SIGINT and stops: the solve came back as an error result ("Solver
    interrupted") and the caller's Ctrl-C was lost."""
    done = _run("""
        import os, signal, threading, optsched
        from optsched.generators import big_projection, generate
        import numpy as np
        optsched.solve(generate("capacity_projection", 20, np.random.default_rng(0)), "cvxpy")  # imports done
        model = big_projection()
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            result = optsched.solve(model, "cvxpy", time_limit=60)
            print("returned", result.termination.value, result.runtime_s)
        except KeyboardInterrupt:
            print("interrupted")
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.split()
    # a solve that finished within the half second has nothing to interrupt
    assert lines[0] == "interrupted" or (lines[0] == "returned" and float(lines[2]) < 0.5), done.stdout


def test_every_prepared_backend_pickles_and_deep_copies_as_a_new_session() -> None:
    """The docs said a Prepared pickles; one holding a HiGHS object (highs, budget_exact's inner
    HiGHS) raised TypeError on pickle and deepcopy. A copy is a new session of the same backend,
    kind and options, and solves as the original."""
    import copy
    import pickle

    from optsched.models.base import kind_specs

    done = set()
    for kind, spec in sorted(kind_specs().items()):
        model = spec.generate(spec.tiny, np.random.default_rng(3))
        for name in optsched.backends(model):
            if name in done:
                continue
            prepared = optsched.prepare(model, name)
            reference = prepared.solve(model)
            for twin in (pickle.loads(pickle.dumps(prepared)), copy.deepcopy(prepared)):
                assert (twin.name, twin.kind, twin.options) == (prepared.name, prepared.kind, prepared.options)
                again = twin.solve(model)
                assert again.termination is reference.termination, (name, kind)
                if reference.objective is not None:
                    assert again.objective == pytest.approx(reference.objective, rel=1e-6, abs=1e-9), (name, kind)
            done.add(name)
    assert {"highs", "cpsat", "budget_exact", "greedy", "cvxpy", "pyomo"} <= done


def test_a_second_ctrl_c_waits_for_the_stopped_solve(python_sigint: None) -> None:
    """A second Ctrl-C while ``interruptible`` waited for the stopped solve left the solve running
    on the helper thread, on an object the caller keeps (a HiGHS session's next solve would then
    share it)."""
    import os
    import signal
    import threading
    import time

    from optsched.solvers.interrupt import interruptible

    asked, finished = threading.Event(), threading.Event()

    def solve() -> str:
        asked.wait(10)
        time.sleep(0.5)  # the solver takes a while to stop
        finished.set()
        return "stopped"

    def press_twice() -> None:
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)
        asked.wait(10)
        time.sleep(0.1)
        os.kill(os.getpid(), signal.SIGINT)  # lands while the first waits for the solve

    presser = threading.Thread(target=press_twice)
    presser.start()
    with pytest.raises(KeyboardInterrupt):
        interruptible(solve, asked.set)
    assert finished.is_set()
    presser.join()
