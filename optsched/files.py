"""Reading user files: regular files only, at most ``max_input_bytes()`` bytes; and writing
only where a regular file is, or nothing (:func:`check_output_path`), in a directory that can be
made before any work starts (:func:`check_output_dir`).

Every reader of a file a user names (instance files, ``--config`` TOML, sweep files, trace
CSVs) opens it here, so one rule holds everywhere: a FIFO, a device (``/dev/zero``,
``/dev/urandom``), a socket or a directory is refused at once instead of blocking or reading
until memory runs out, and a regular file that holds (or, like a ``/proc`` file, yields) more
than the cap is refused with a one-line ``ValueError`` naming the file and the limit.

The cap is :data:`MAX_INPUT_BYTES` (256 MiB); the environment variable
``OPTSCHED_MAX_INPUT_BYTES`` (a whole number of bytes) overrides it, e.g. for the full
Alibaba trace tables.

Inside :func:`recording_inputs`, every user file read to its end is noted with its size and
SHA-256 (hashed as it is read, not read twice): a run's metadata names the very data it read
(a trace directory's path alone said nothing of what was in it).
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import hashlib
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

MAX_INPUT_BYTES = 256 * 2**20
ENV_MAX_INPUT_BYTES = "OPTSCHED_MAX_INPUT_BYTES"


def user_path(what: str, path: object) -> Path:
    """A path a library caller names (a str or ``os.PathLike``, not empty): ValueError naming
    ``what`` for anything else (None, bytes and numbers raised TypeError deep in pathlib)."""
    if isinstance(path, (bytes, bytearray)) or not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"{what}: expected a path (str or os.PathLike), got {type(path).__name__}")
    if not os.fspath(path):
        raise ValueError(f"{what}: the path is empty")
    return Path(path)


def user_directory(what: str, path: object) -> Path:
    """An existing directory a caller names: ValueError naming ``what`` when it does not exist,
    is not a directory or cannot be looked at (a name too long for the system raised OSError
    from ``Path.is_dir``, and the message named neither the setting nor the problem)."""
    d = user_path(what, path)
    shown = str(d) if len(str(d)) <= 200 else f"{str(d)[:120]}... ({len(str(d))} characters)"
    try:
        info = os.stat(d)
    except FileNotFoundError:
        raise ValueError(f"{what}: {shown} does not exist") from None
    except OSError as exc:
        raise ValueError(f"{what}: cannot look at {shown}: {exc.strerror}") from None
    except ValueError as exc:  # a NUL byte in the name
        raise ValueError(f"{what}: cannot look at {shown!r}: {exc}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{what}: {shown} is not a directory")
    return d


def max_input_bytes() -> int:
    """The cap: ``$OPTSCHED_MAX_INPUT_BYTES`` when set, else :data:`MAX_INPUT_BYTES`."""
    raw = os.environ.get(ENV_MAX_INPUT_BYTES, "").strip()
    if not raw:
        return MAX_INPUT_BYTES
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{ENV_MAX_INPUT_BYTES}: expected a whole number of bytes >= 1, got {raw!r}")
    return int(raw)


def _too_big(what: str, path: Path, limit: int) -> ValueError:
    return ValueError(f"{what}: {path} is larger than the {limit} byte input limit (set {ENV_MAX_INPUT_BYTES} to raise it)")


InputsRead = dict[str, dict[str, object]]
# the open recording_inputs blocks of this thread (or task), innermost last: runs on other
# threads (a Dask worker's) note their own files only
_recorders: contextvars.ContextVar[tuple[InputsRead, ...]] = contextvars.ContextVar("optsched_inputs", default=())


@contextlib.contextmanager
def recording_inputs() -> Iterator[InputsRead]:
    """A block whose user files read to their end (on this thread) are noted in the yielded
    dict: the path as opened -> ``{"resolved": absolute path, "bytes": size, "sha256": digest}``
    (a file read again keeps its last reading). Blocks nest: a file read in an inner block is
    noted in the outer ones too."""
    inputs: InputsRead = {}
    token = _recorders.set((*_recorders.get(), inputs))
    try:
        yield inputs
    finally:
        _recorders.reset(token)


def inputs_read() -> InputsRead | None:
    """The innermost :func:`recording_inputs` block's notes so far (a copy), None outside any."""
    open_blocks = _recorders.get()
    return dict(open_blocks[-1]) if open_blocks else None


def _note_input(path: Path, size: int, digest: str) -> None:
    note = {"resolved": str(path.resolve()), "bytes": size, "sha256": digest}
    for inputs in _recorders.get():
        inputs[str(path)] = note


class _Capped(io.RawIOBase):
    """A raw reader over a file descriptor that fails once more than ``limit`` bytes came out
    (and, inside :func:`recording_inputs`, hashes what comes out and notes it at the end)."""

    def __init__(self, fd: int, what: str, path: Path, limit: int) -> None:
        self._file = io.FileIO(fd, "rb", closefd=True)
        self._what, self._path, self._limit = what, path, limit
        self._count = 0
        self._hash = hashlib.sha256() if _recorders.get() else None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: "bytearray | memoryview") -> int:  # type: ignore[override]
        n = self._file.readinto(buffer)
        if n is None:  # the descriptor stays non-blocking: a pseudo-file with nothing to give now
            raise ValueError(f"{self._what}: {self._path} would block the read (a kernel pseudo-file such as "
                             "/proc/kmsg, not a data file)")
        self._count += n or 0
        if self._count > self._limit:
            raise _too_big(self._what, self._path, self._limit)
        if self._hash is not None:
            if n:
                self._hash.update(memoryview(buffer)[:n])
            elif len(buffer):  # the end of the file
                _note_input(self._path, self._count, self._hash.hexdigest())
                self._hash = None
        return n  # type: ignore[return-value]

    def close(self) -> None:
        self._file.close()
        super().close()


def open_user_file(path: str | Path, what: str) -> IO[bytes]:
    """``path`` opened for binary reading; ``ValueError`` prefixed ``what`` unless it is a
    readable regular file, and on a read that passes the cap.

    The file is opened non-blocking (a FIFO would otherwise block the open until a writer
    comes), and stays so, and is checked with ``fstat`` on the open descriptor, so nothing can
    swap it in between."""
    path = user_path(what, path)  # "" was Path("."): "is a directory"
    limit = max_input_bytes()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ValueError(f"{what}: {path} does not exist") from None
    except OSError as exc:
        raise ValueError(f"{what}: cannot read {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ValueError(f"{what}: {path} is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{what}: {path} is not a regular file (a FIFO, device or socket is refused)")
        if info.st_size > limit:
            raise _too_big(what, path, limit)
        # left non-blocking: no effect on a regular file's reads, while a pseudo-file that passes
        # for one (/proc/kmsg, size 0) ends the read at once instead of blocking it for ever
        return io.BufferedReader(_Capped(fd, what, path, limit))
    except BaseException:
        os.close(fd)
        raise


def check_user_file(path: str | Path, what: str) -> None:
    """The checks of :func:`open_user_file` alone, for a file a library reads itself (HiGHS
    reading an MPS file): a regular file no larger than the cap. Inside
    :func:`recording_inputs` it is read through once, to note it."""
    with open_user_file(path, what) as fh:
        if inputs_read() is not None:
            while fh.read(1 << 20):
                pass


def read_user_bytes(path: str | Path, what: str) -> bytes:
    """The whole content of a user file (see :func:`open_user_file`)."""
    try:
        with open_user_file(path, what) as fh:
            return fh.read()
    except OSError as exc:  # e.g. EIO, or EISDIR from a file system that opens directories
        raise ValueError(f"{what}: cannot read {path}: {exc.strerror or exc}") from None


def read_user_text(path: str | Path, what: str) -> str:
    """The content of a user file decoded as UTF-8 (a byte-order mark in front is dropped, as
    editors on Windows write one); ``ValueError`` when it is not text."""
    data = read_user_bytes(path, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"{what}: {path} is not a text file (not UTF-8)") from None


def check_output_path(path: str | Path) -> None:
    """Refuse to write a result over anything but a regular file: at ``path`` (symlinks
    followed) a device (``/dev/null``, ``/dev/full``), a FIFO, a socket or a directory. The
    atomic write renames a temporary file over the path, which would replace a device node
    (run as root, ``--log /dev/full`` left a regular file at /dev/full), and a writer that opens
    the path itself (HiGHS's MPS writer) would block on a FIFO without a reader. OSError naming
    the file; a path that does not exist yet is fine."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EEXIST, "exists and is not a regular file (a directory, device, FIFO or socket); "
                                    "results are written to regular files only", str(path))


def check_output_dir(path: str | Path) -> None:
    """Refuse, before a command does any work, an output directory its writers could not make:
    ``path`` or one of its parents exists and is not a directory (symlinks followed), or the
    nearest existing one is not writable. OSError naming it, as ``mkdir`` would name it at the
    end of the run; nothing is created."""
    path = Path(path)
    for where in (path, *path.parents):
        try:
            info = os.stat(where)
        except FileNotFoundError:
            if os.path.islink(where):  # a dangling link: mkdir would not follow it
                raise OSError(errno.EEXIST, "is a symbolic link to nothing; outputs are written in a directory",
                              str(where)) from None
            continue
        except NotADirectoryError:  # a parent further up is a file: that one is named
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise OSError(errno.ENOTDIR if where != path else errno.EEXIST,
                          "exists and is not a directory; outputs are written in a directory", str(where))
        if not os.access(where, os.W_OK | os.X_OK):
            raise OSError(errno.EACCES, "Permission denied", str(where))
        return
