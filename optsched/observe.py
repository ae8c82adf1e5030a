"""A policy's per-slot subproblem, and watching it: shadow exact solves and captured instances.

:class:`SubproblemSolver` is what a policy holds for its subproblem: the model kind, the backend
(a :class:`~optsched.solve.Prepared`; "" or None picks the policy's default), its options, and
the rule when the backend returns no solution: the slot is solved by the policy's default
backend instead and counted as a fallback (never silently). Slot parameters the backend may
take as options (e.g. the scaling xi of the AESCB route) are passed with ``params`` and
forwarded only to backends that declare them.

An :class:`Observer` (a context manager; ``optsched run`` opens one) sees every subproblem
any policy solves in its block:

* ``shadow``: every ``shadow_every``-th subproblem (per solver) is also solved by each shadow
  backend that fits it. Nothing a shadow returns reaches the policy, so the trajectory is the
  same with and without shadows. One row per (subproblem, backend), the policy's own row
  included, with the two gaps measured against the best bound of that subproblem;
* ``capture``: every ``capture_every``-th subproblem is appended to ``DIR/<kind>.jsonl`` as
  the model's JSON object plus a ``capture`` key (episode, policy, solver, slot, call, and the
  policy's ``backend`` with the ``options`` it solved with: its configured ones and that slot's
  parameters, such as AESCB's xi and max_budget, which ``bench --instances`` passes to that
  backend again), and ``DIR/run.json`` records the run (experiment, config, versions);
* per solver: solves, terminations, fallbacks and runtimes, in :meth:`Observer.summary`
  (added to the run's metadata JSON).

:func:`optsched.policy.evaluate` tells the active observer which policy runs and which slot.
"""

from __future__ import annotations

import contextvars
import json
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from optsched.config import whole_number
from optsched.io.json_instance import CAPTURE_KEY
from optsched.models.base import Model
from optsched.models.validate import finite_float
from optsched.result import Result, SolveFailed
from optsched.solve import Prepared, model_kind, prepare, with_best_bound

_ACTIVE: contextvars.ContextVar["Observer | None"] = contextvars.ContextVar("optsched_observer", default=None)


def active_observer() -> "Observer | None":
    return _ACTIVE.get()


class SubproblemError(SolveFailed):
    """A policy's subproblem had no solution from its backend nor from the fallback."""


class SubproblemSolver:
    """The per-slot subproblem of a policy (see the module docstring).

    ``default`` is the policy's own backend for this kind (the paper's algorithm or the exact
    kernel); ``backend`` (None or "" for the default) must fit ``kind``, else ValueError with
    the registry's reason, before any slot runs. ``label`` names the solver in shadow rows and
    summaries (the policy's name, or e.g. "Oracle")."""

    def __init__(self, kind: Any, backend: str | None, *, default: str, options: Mapping[str, Any] | None = None,
                 label: str = "", verify: bool = True) -> None:
        self.kind = model_kind(kind)
        if options is not None and (not isinstance(options, Mapping) or not all(isinstance(k, str) for k in options)):
            raise ValueError(f"options: expected a mapping of backend option names to values, got {options!r}")
        self.backend = backend or default
        self.options = dict(options or {})
        self.default = default
        self.label = label or self.kind.name
        self.prepared = prepare(self.kind, self.backend, verify=verify, **self.options)
        self._fallback: Prepared | None = None
        self._verify = verify
        self.solves = 0
        self.fallbacks = 0
        self.runtime_s = 0.0
        self.terminations: Counter[str] = Counter()

    def _options_for(self, prepared: Prepared, params: Mapping[str, Any] | None) -> dict[str, Any]:
        if not params:
            return {}
        accepted = prepared.backend.OPTIONS
        return {k: v for k, v in params.items() if k in accepted}

    def solve(self, model: Model, *, params: Mapping[str, Any] | None = None) -> Result:
        """The backend's result for ``model`` (observed; no fallback)."""
        observer = _ACTIVE.get()
        if observer is not None:
            observer.meet(self)
        result = self.prepared.solve(model, **self._options_for(self.prepared, params))
        self.solves += 1
        self.runtime_s += result.runtime_s
        self.terminations[result.termination.value] += 1
        if observer is not None:
            observer.record(self, model, result, params)
        return result

    def counts(self) -> dict[str, Any]:
        """The counters of :meth:`stats` as they stand (a copy)."""
        return {"solves": self.solves, "fallbacks": self.fallbacks, "runtime_s": self.runtime_s,
                "terminations": Counter(self.terminations)}

    def solution(self, model: Model, *, params: Mapping[str, Any] | None = None) -> Any:
        """The solution the policy acts on: its backend's, or the default backend's when that
        returned none (counted in ``fallbacks``); SubproblemError when neither has one."""
        result = self.solve(model, params=params)
        if result.ok:
            return result.solution
        if self.backend == self.default:
            raise SubproblemError(f"{self.label}: {self.backend!r} returned no solution for a {self.kind.name!r} "
                                  f"subproblem ({result.termination.value}: {result.message})")
        if self._fallback is None:
            self._fallback = prepare(self.kind, self.default, verify=self._verify)
        self.fallbacks += 1
        fallback = self._fallback.solve(model, **self._options_for(self._fallback, params))
        if not fallback.ok:
            raise SubproblemError(f"{self.label}: neither {self.backend!r} ({result.termination.value}) nor the "
                                  f"fallback {self.default!r} ({fallback.termination.value}) solved a subproblem")
        return fallback.solution

    def stats(self) -> dict[str, Any]:
        return {"solver": self.label, "model": self.kind.name, "backend": self.backend, "default": self.default,
                "solves": self.solves, "fallbacks": self.fallbacks, "terminations": dict(self.terminations),
                "runtime_s": self.runtime_s, "setup_s": self.prepared.setup_s}


SHADOW_COLUMNS = ("episode", "policy", "solver", "slot", "call", "model", "size", "backend", "role", "termination",
                  "objective", "bound", "best_bound", "gap_to_own_bound", "gap_to_best_bound", "runtime_s", "message")


@dataclass
class Observer:
    """Shadow solves, captured instances and per-solver statistics of the policies run inside
    its ``with`` block (module docstring). ``shadow_options`` are per-backend options."""

    shadow: Sequence[str] = ()
    shadow_every: int = 1
    shadow_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    shadow_time_limit: float | None = None
    capture_dir: str | Path | None = None
    capture_every: int = 1
    run_info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for key in ("shadow_every", "capture_every"):
            whole_number(f"--{key.replace('_', '-')}", getattr(self, key))
        if self.shadow_time_limit is not None:  # refused by the first shadow solve, as "time_limit"
            finite_float("--shadow-time-limit", self.shadow_time_limit, minimum=0.0, largest=math.inf)
        if len(set(self.shadow)) != len(self.shadow):
            raise ValueError("--shadow: a backend is named twice")
        from optsched.solvers.registry import backend_available, get_backend

        for name in self.shadow:
            backend = get_backend(name)
            avail = backend_available(backend)
            if not avail:
                raise ValueError(f"--shadow: {name!r} is not available here: {avail.reason}")
            backend.check_options(self.shadow_options.get(name, {}))
        self.rows: list[dict[str, Any]] = []
        self.episode = -1
        self.policy = ""
        self.slot = -1
        self._solvers: dict[int, SubproblemSolver] = {}
        self._counted: dict[int, dict[str, Any]] = {}  # per solver: counted in the blocks closed so far
        self._since: dict[int, dict[str, Any]] = {}  # per solver: its counts when this block met it
        self._calls: Counter[int] = Counter()  # per solver, in this episode
        self._shadows: dict[tuple[str, str], Prepared | str] = {}
        self._skipped: dict[str, dict[str, Any]] = {}
        self._captured: Counter[str] = Counter()
        self._token: contextvars.Token | None = None
        if self.capture_dir is not None:
            if not str(self.capture_dir).strip():  # Path("") is the working directory
                raise ValueError("--capture: an empty path")
            self._capture = Path(self.capture_dir)
            if self._capture.exists() and not self._capture.is_dir():
                raise ValueError(f"--capture: {self._capture} is not a directory")
            from optsched.artifacts import begin_set
            from optsched.models.base import model_kinds

            begin_set(self._capture / "run.json")  # run.json is the capture's manifest, written last
            for kind in model_kinds():  # the files a capture writes, and only those (every *.jsonl
                (self._capture / f"{kind}.jsonl").unlink(missing_ok=True)  # went: a user's notes.jsonl in --capture .)

    # --- the context -----------------------------------------------------------------------
    def __enter__(self) -> "Observer":
        if self._token is not None:
            raise RuntimeError("Observer: already active (its block cannot open inside itself)")
        self._token = _ACTIVE.set(self)
        self._since = {key: solver.counts() for key, solver in self._solvers.items()}
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None
            for key, since in self._since.items():  # what the solvers do outside the block is not counted
                self._counted[key] = _added(self._counted[key], _less(self._solvers[key].counts(), since))
            self._since = {}

    def begin_episode(self, policy: str) -> None:
        self.episode += 1
        self.policy = policy
        self.slot = -1
        self._calls.clear()  # calls count from 0 in every episode: a reused policy is shadowed like a fresh one

    # --- one subproblem --------------------------------------------------------------------
    def meet(self, solver: SubproblemSolver) -> None:
        """Called before each solve: the solver's counts when the block first meets it are not the
        block's (nor what it solves between two blocks of this observer)."""
        key = id(solver)
        if key not in self._solvers:
            self._solvers[key] = solver
            self._counted[key] = {"solves": 0, "fallbacks": 0, "runtime_s": 0.0, "terminations": Counter()}
        if key not in self._since:
            self._since[key] = solver.counts()

    def record(self, solver: SubproblemSolver, model: Model, result: Result, params: Mapping[str, Any] | None) -> None:
        key = id(solver)
        call = self._calls[key]
        self._calls[key] += 1
        where = {"episode": self.episode, "policy": self.policy, "solver": solver.label, "slot": self.slot,
                 "call": call}
        if self.capture_dir is not None and call % self.capture_every == 0:
            options = {**solver.options, **solver._options_for(solver.prepared, params)}
            self._write_capture(model, {**where, "backend": solver.backend, "options": options})
        if self.shadow and call % self.shadow_every == 0:
            self._shadow_rows(solver, model, result, params, where)

    def _shadow_rows(self, solver: SubproblemSolver, model: Model, result: Result,
                     params: Mapping[str, Any] | None, where: dict[str, Any]) -> None:
        results, roles = [result], ["policy"]
        for name in self.shadow:
            prepared = self._shadow_for(name, model)
            reason = prepared if isinstance(prepared, str) else prepared.fits(model)
            if reason is not None:
                self._skip(name, model.name, reason)
                continue
            results.append(prepared.solve(model, time_limit=self.shadow_time_limit,
                                          **solver._options_for(prepared, params)))
            roles.append("shadow")
        for role, r in zip(roles, with_best_bound(model, results)):
            self.rows.append({**where, "model": model.name, "size": model.size, "backend": r.backend, "role": role,
                              "termination": r.termination.value, "objective": r.objective, "bound": r.bound,
                              "best_bound": r.best_bound, "gap_to_own_bound": r.gap_to_own_bound,
                              "gap_to_best_bound": r.gap_to_best_bound, "runtime_s": r.runtime_s,
                              "message": r.message})

    def _skip(self, backend: str, kind: str, reason: str) -> None:
        entry = self._skipped.setdefault(f"{backend} on {kind}", {"subproblems": 0, "first_reason": reason})
        entry["subproblems"] += 1

    def _shadow_for(self, name: str, model: Model) -> Prepared | str:
        """The prepared shadow backend for this kind, or why it does not fit the kind."""
        key = (name, model.name)
        if key not in self._shadows:
            try:
                self._shadows[key] = prepare(type(model), name, **dict(self.shadow_options.get(name, {})))
            except ValueError as exc:
                self._shadows[key] = str(exc)
        return self._shadows[key]

    def _write_capture(self, model: Model, where: dict[str, Any]) -> None:
        line = {**model.to_dict(), CAPTURE_KEY: where}
        with open(self._capture / f"{model.name}.jsonl", "a") as fh:
            fh.write(json.dumps(line, allow_nan=False, default=_jsonable) + "\n")
        self._captured[model.name] += 1

    # --- what was seen ---------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """Per solver: its statistics; per (solver, shadow backend): counts, gaps, runtimes."""
        out: dict[str, Any] = {"solvers": merge_stats(self._stats(key) for key in self._solvers)}
        if self.shadow:
            out["shadow"] = shadow_summary(self.rows)
            out["shadow_every"] = self.shadow_every
            out["shadow_skipped"] = dict(self._skipped)
        if self.capture_dir is not None:
            out["captured"] = {"dir": str(self.capture_dir), "every": self.capture_every, "instances": dict(self._captured)}
        return out

    def _stats(self, key: int) -> dict[str, Any]:
        """A solver's statistics counted inside this observer's blocks (the open one so far)."""
        solver = self._solvers[key]
        seen = self._counted[key]
        if key in self._since:
            seen = _added(seen, _less(solver.counts(), self._since[key]))
        return {**solver.stats(), **seen, "terminations": dict(seen["terminations"])}

    def write(self, out_dir: str | Path) -> list[Path]:
        """``shadow.csv`` and ``shadow.png`` (with shadows), ``DIR/run.json`` (with capture)."""
        from optsched.artifacts import provenance, write_manifest

        paths: list[Path] = []
        if self.capture_dir is not None:
            captured = [Path(self.capture_dir) / f"{kind}.jsonl" for kind in sorted(self._captured)]
            paths.append(write_manifest(Path(self.capture_dir) / "run.json",
                                        {**self.run_info, **provenance(),
                                         "captured": dict(self._captured), "every": self.capture_every}, captured))
        if self.shadow:
            import pandas as pd

            from optsched.artifacts import write_csv

            df = pd.DataFrame(self.rows, columns=list(SHADOW_COLUMNS))
            out = Path(out_dir)
            paths.append(write_csv(df, out / "shadow.csv"))
            if len(df):
                paths.append(plot_shadow(df, out / "shadow.png"))
        return paths


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def _less(end: Mapping[str, Any], start: Mapping[str, Any]) -> dict[str, Any]:
    """Counts of :meth:`SubproblemSolver.counts` from ``start`` to ``end``."""
    out = {k: end[k] - start[k] for k in ("solves", "fallbacks", "runtime_s")}
    out["terminations"] = end["terminations"] - start["terminations"]
    return out


def _added(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: a[k] + b[k] for k in ("solves", "fallbacks", "runtime_s")}
    out["terminations"] = a["terminations"] + b["terminations"]
    return out


def merge_stats(stats: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Solver statistics summed over the policy objects of one (solver, model, backend)."""
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for st in stats:
        key = (st["solver"], st["model"], st["backend"])
        if key not in merged:
            merged[key] = {**st, "terminations": Counter(st["terminations"]), "policies": 1}
            continue
        m = merged[key]
        m["policies"] += 1
        for field_ in ("solves", "fallbacks", "runtime_s", "setup_s"):
            m[field_] += st[field_]
        m["terminations"].update(st["terminations"])
    return [{**m, "terminations": dict(m["terminations"])} for m in merged.values()]


# a solve whose runtime is its own: it ran to an end of its own (its answer, or its iteration or
# gap rule) and answered; the caller's time limit cut the others short or never let them start,
# and an error answered nothing to compare
TIMED = frozenset({"optimal", "feasible", "infeasible", "unbounded", "iteration_limit", "gap_limit"})


def shadow_summary(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (solver, model, backend): rows, terminations, median and largest gap to the best
    bound; the median runtime over its solves that ran to an end of their own (``TIMED``:
    ``timed`` of them), and that median over the policy backend's on the same subproblems
    (those both solved so: a backend that fits only some of them, brute force's n <= 22, is
    compared there only)."""
    groups: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["solver"], r["model"], r["backend"], r["role"]), []).append(r)

    def subproblem(r: Mapping[str, Any]) -> tuple[Any, ...]:
        return r["episode"], r["policy"], r["solver"], r["slot"], r["call"]

    policy_times = {
        (solver, model): {subproblem(x): x["runtime_s"] for x in g if x["termination"] in TIMED}
        for (solver, model, _, role), g in groups.items() if role == "policy"
    }
    out = []
    for (solver, model, backend, role), g in groups.items():
        gaps = [x["gap_to_best_bound"] for x in g if x["gap_to_best_bound"] is not None]
        mine = {subproblem(x): x["runtime_s"] for x in g if x["termination"] in TIMED}
        reference = policy_times.get((solver, model), {})
        both = [key for key in mine if key in reference]
        ref = statistics.median(reference[k] for k in both) if both else 0.0
        ratio = statistics.median(mine[k] for k in both) / ref if ref > 0 else None
        out.append({
            "solver": solver, "model": model, "backend": backend, "role": role, "subproblems": len(g),
            "terminations": dict(Counter(x["termination"] for x in g)),
            "median_gap_to_best_bound": statistics.median(gaps) if gaps else None,
            "max_gap_to_best_bound": max(gaps) if gaps else None,
            "timed": len(mine),
            "median_runtime_s": statistics.median(mine.values()) if mine else None,
            "runtime_vs_policy_backend": ratio,
        })
    return out


def plot_shadow(df: Any, path: Path) -> Path:
    """Gap to the best bound of each subproblem over the slots, and the runtime distribution,
    per backend (one row of panels per solver)."""
    from optsched.artifacts import pyplot, write_png

    plt = pyplot()

    solvers = list(dict.fromkeys(df["solver"]))
    backends = list(dict.fromkeys(df["backend"]))
    color = {b: f"C{i % 10}" for i, b in enumerate(backends)}
    fig, axes = plt.subplots(len(solvers), 2, figsize=(11, 3.6 * len(solvers)), squeeze=False)
    for (ax_gap, ax_time), solver in zip(axes, solvers):
        part = df[df["solver"] == solver]
        x = part["call"] if (part["slot"] < 0).all() else part["slot"]
        for backend, b in part.groupby("backend", sort=False):
            style = "o-" if (b["role"] == "policy").all() else "x--"
            ax_gap.plot(x[b.index], b["gap_to_best_bound"].astype(float), style, ms=3, lw=0.8, color=color[backend],
                        label=f"{backend} ({b['role'].iloc[0]})")
        top = float(part["gap_to_best_bound"].max()) if part["gap_to_best_bound"].notna().any() else 0.0
        ax_gap.set_yscale("symlog", linthresh=1e-12)
        ax_gap.set_ylim(bottom=0.0, top=max(1e-9, 10 * top))
        ax_gap.set_xlabel("slot" if not (part["slot"] < 0).all() else "subproblem")
        ax_gap.set_ylabel("gap to the best bound")
        ax_gap.set_title(f"{solver}: {part['model'].iloc[0]}")
        ax_gap.legend(fontsize=7)
        ax_gap.grid(alpha=0.3)
        names = list(dict.fromkeys(part["backend"]))
        data = [part.loc[part["backend"] == b, "runtime_s"].clip(lower=1e-7).to_numpy() for b in names]
        ax_time.boxplot(data, orientation="horizontal")
        ax_time.set_yticks(range(1, len(names) + 1), names)
        ax_time.set_xscale("log")
        ax_time.set_xlabel("runtime per subproblem (s)")
        ax_time.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    out = write_png(fig, path)
    return out
