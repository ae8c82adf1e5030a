"""Writing what a run produces: atomic files (temporary file, then rename; mode 0666 minus the
umask), run metadata, figures on one matplotlib backend, and :func:`write_artifacts` (a
result's CSV + PNG + JSON in one call, shared by every paper).

Each file is atomic; a *set* of files (a result's CSV, PNG and JSON; a benchmark's; a sweep's)
is made safe by its JSON, the manifest: :func:`begin_set` removes the old one before any file
of the set is rewritten, and :func:`write_manifest` writes the new one last, with the SHA-256
of every file of the set. A run killed part way leaves files without a manifest, never a
manifest beside files of another run, and a reader can check each file against it."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import secrets
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from optsched.files import check_output_path

if TYPE_CHECKING:
    import pandas as pd

# every solver package a backend runs (tests/test_packaging.py holds this to the registry's
# REQUIRES), the conic solvers cvxpy hands models to, and what computes or draws the outputs
TRACKED_PACKAGES = ("optsched", "numpy", "scipy", "highspy", "ortools", "cvxpy", "pyomo", "pyscipopt", "clarabel",
                    "osqp", "scs", "pandas", "numba", "matplotlib")


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def provenance() -> dict[str, Any]:
    """What ran, for every record the CLI writes (runs, sweeps, bench, captures): the package
    versions and, in a git checkout, the :func:`source_revision`."""
    out: dict[str, Any] = {"versions": package_versions()}
    if source_revision():
        out["source"] = source_revision()
    return out


@functools.lru_cache(maxsize=1)
def source_revision() -> dict[str, Any]:
    """The git commit of the optsched checkout this process imported, and whether its tracked
    files had uncommitted changes; when they had, ``changed`` (the files), ``diff_sha256`` (the
    SHA-256 of ``git diff HEAD --binary`` with the options the user's git config could change
    pinned: :func:`git_state`) and ``untracked`` (the package's files no commit holds, which the
    patch leaves out): a dirty run is rebuilt from the commit, that patch and those files. Once
    per process; empty when the package is not at the top of a git work tree, as when installed
    from a wheel, even inside another project's tree, or when git is absent."""
    return git_state(Path(__file__).resolve().parent)


def git_state(where: Path) -> dict[str, Any]:
    """:func:`source_revision` of the package directory ``where``."""
    import subprocess

    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=where, capture_output=True, text=True, timeout=10)
        if top.returncode or Path(top.stdout.strip()).resolve() != where.parent:  # installed inside another project's tree
            return {}
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10)
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=where,
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return {}
    if commit.returncode or status.returncode:
        return {}
    out: dict[str, Any] = {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}
    if out["dirty"]:  # which uncommitted change ran: the files, and the digest of the patch to match one against
        import hashlib

        # the user's git config must not change the patch: prefixes, algorithm, external and textconv drivers
        diff = [*GIT_PLAIN, "diff", "HEAD", "--binary", "--no-ext-diff", "--no-textconv", "--no-color",
                "--diff-algorithm=myers", "--src-prefix=a/", "--dst-prefix=b/", "--no-renames"]
        try:
            patch = subprocess.run(diff, cwd=where, capture_output=True, timeout=30)
            names = subprocess.run([*GIT_PLAIN, "diff", "HEAD", "--name-only", "-z", "--no-renames"], cwd=where,
                                   capture_output=True, timeout=30)
            loose = subprocess.run([*GIT_PLAIN, "ls-files", "--others", "--exclude-standard", "--full-name", "-z", "--", "."],
                                   cwd=where, capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return out
        if not (patch.returncode or names.returncode):
            out["changed"] = _paths(names.stdout)
            out["diff_sha256"] = hashlib.sha256(patch.stdout).hexdigest()
        if not loose.returncode and loose.stdout:  # files of the package that no commit holds: not in the patch
            out["untracked"] = _paths(loose.stdout)
    return out


def _paths(listed: bytes) -> list[str]:
    """The sorted paths of git's NUL-separated (``-z``) output."""
    return sorted(n.decode(errors="backslashreplace") for n in listed.split(b"\0") if n)


GIT_PLAIN = ("git", "-c", "diff.noprefix=false", "-c", "core.quotePath=false")


def machine() -> str:
    """The machine a report was measured on: logical CPUs, those this process may use, memory."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        mem = f", {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        mem = ""
    return f"{os.cpu_count()} logical CPUs, {usable} usable{mem}"



def create_temporary(directory: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """A new file in ``directory`` opened for writing: ``(fd, path)``. Unlike ``mkstemp``
    (mode 0600) it is created with mode 0666 minus the umask, so the file renamed into place
    has the permissions of any other file the user creates."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        path = directory / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            return os.open(path, flags, 0o666), str(path)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory}")


def write_atomically(path: Path, write: Callable[[str], None]) -> Path:
    """``write(tmp)`` to a new temporary file beside ``path``, then renamed over ``path``; never
    over what is not a regular file (:func:`optsched.files.check_output_path`). A failed write
    leaves ``path`` as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    check_output_path(path)
    try:
        # a short ASCII name whatever the target's: a name of 255 bytes leaves no room for more
        # (the rename then gives any name)
        fd, tmp = create_temporary(path.parent, ".optsched-", ".tmp")
    except OSError as exc:  # a read-only directory: name the file asked for, not the temporary's name
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:  # e.g. a full disk inside a writer: name the file
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise
    return path


def write_text(path: str | Path, text: str) -> Path:
    return write_atomically(Path(path), lambda tmp: _write_utf8(tmp, text))


def _write_utf8(path: str, text: str) -> None:
    """UTF-8, with a file name's undecodable bytes (Python's surrogate escapes, from names that
    are not UTF-8) written as backslash escapes instead of failing the write."""
    Path(path).write_text(text, encoding="utf-8", errors="backslashreplace")


def write_csv(df: "pd.DataFrame", path: str | Path) -> Path:
    """``df.to_csv(index=False)`` with "\n" line ends: every float as the shortest text that
    reads back as the same double (``repr``), so a result read from its CSV is the one computed
    (``%.10g`` kept 10 digits: a rerun's last-digit differences and the values themselves were
    lost). A frame of numbers and booleans is formatted column by column (:func:`csv_text`, the
    same bytes, several times faster on a 10,000-row trajectory)."""
    text = csv_text(df)
    if text is None:
        return write_atomically(Path(path), lambda tmp: df.to_csv(tmp, index=False, lineterminator="\n",
                                                                  errors="backslashreplace"))
    return write_atomically(Path(path), lambda tmp: _write_utf8(tmp, text))


_QUOTED = re.compile(r'[,"\r\n]')


def csv_text(df: "pd.DataFrame") -> str | None:
    """What pandas writes for ``df`` (see :func:`write_csv`) when every column is float64,
    integer or boolean and no name needs quoting (NaN as an empty cell); None otherwise."""
    names = list(df.columns)
    if (not names or not len(df) or len(set(names)) != len(names)
            or not all(isinstance(n, str) and not _QUOTED.search(n) for n in names)):
        return None
    cells = []
    missing = '""' if len(names) == 1 else ""  # pandas quotes a lone empty cell: a blank line is no row to a reader
    for name in names:
        col = df[name]
        kind = col.dtype.kind if isinstance(col.dtype, np.dtype) else "O"
        values = col.tolist()
        if kind == "f" and col.dtype == np.float64:
            cells.append([repr(v) if v == v else missing for v in values])
        elif kind in "iub":
            cells.append([str(v) for v in values])
        else:
            return None
    return ",".join(names) + "\n" + "".join(",".join(row) + "\n" for row in zip(*cells))


def write_png(fig: Any, path: str | Path) -> Path:
    """Save a matplotlib figure with fixed metadata so reruns give identical bytes, then close
    it (a figure is drawn for one file)."""
    out = write_atomically(
        Path(path), lambda tmp: fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    )
    pyplot().close(fig)
    return out


def run_metadata(*, experiment: str, seed: int, config: Any) -> dict[str, Any]:
    """Seed, config, package versions and (in a git checkout) the commit of a run; the files it
    read so far with their SHA-256 (``inputs``, inside :func:`~optsched.files.recording_inputs`);
    with an active :class:`~optsched.observe.Observer` also what its policies' subproblems did
    so far (solves, terminations, fallbacks, runtimes; shadow gaps; captured instances)."""
    from optsched.files import inputs_read
    from optsched.observe import active_observer

    cfg = asdict(config) if is_dataclass(config) else dict(config)
    meta = {"experiment": experiment, "seed": seed, "config": cfg, **provenance()}
    inputs = inputs_read()
    if inputs:
        meta["inputs"] = inputs
    observer = active_observer()
    if observer is not None:
        meta["subproblems"] = observer.summary()
    return meta


def write_metadata(path: str | Path, meta: dict[str, Any]) -> Path:
    return write_text(path, json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")


def begin_set(manifest: str | Path, *outputs: str | Path) -> None:
    """A set of outputs whose manifest is ``manifest`` is about to be (re)written: the old
    manifest goes first (module docstring); never anything but a regular file, at the manifest
    and at the ``outputs`` named up front (a directory at a sweep's ``results.csv`` was named
    only when the sweep's runs were done)."""
    manifest = Path(manifest)
    manifest.parent.mkdir(parents=True, exist_ok=True)  # an --out that is a file: named as the writers name it
    for path in (manifest, *outputs):
        check_output_path(path)
    manifest.unlink(missing_ok=True)


def sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def write_manifest(path: str | Path, meta: dict[str, Any], files: list[Path]) -> Path:
    """``meta`` with ``files``: the name (relative to the manifest's directory) and SHA-256 of
    each file of the set, written last (module docstring)."""
    where = Path(path).parent
    listed = {Path(f).relative_to(where).as_posix(): sha256(Path(f)) for f in files}
    return write_metadata(path, {**meta, "files": listed})


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend: the one backend choice of every
    figure optsched draws (no display needed, identical bytes on every machine)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_artifacts(out: str | Path, stem: str, *, table: "pd.DataFrame", figure: Any, experiment: str, seed: int,
                    config: Any, timing: "pd.DataFrame | None" = None,
                    tables: "Mapping[str, pd.DataFrame] | None" = None, extra: dict[str, Any] | None = None) -> list[Path]:
    """One result of a run in ``out``: ``stem.csv`` (the table), ``stem.png`` (the figure, closed
    after), ``stem_timing.csv`` (measured seconds, kept apart so the table is byte-reproducible),
    more CSVs of the set (``tables``: file name -> frame)
    and ``stem.json`` (:func:`run_metadata` of ``experiment``, ``seed``, ``config``, plus ``extra``),
    the set's manifest: removed first, written last, with each file's SHA-256."""
    out = Path(out)
    manifest = out / f"{stem}.json"
    begin_set(manifest)
    paths = [write_csv(table, out / f"{stem}.csv"), write_png(figure, out / f"{stem}.png")]
    if timing is not None:
        paths.append(write_csv(timing, out / f"{stem}_timing.csv"))
    paths += [write_csv(frame, out / name) for name, frame in (tables or {}).items()]
    meta = run_metadata(experiment=experiment, seed=seed, config=config)
    meta.update(extra or {})
    paths.append(write_manifest(manifest, meta, paths))
    return paths
