"""``njit`` for every numba kernel module: numba's, with a cache that cannot break the kernel.

``@numba.njit(cache=True)`` looks for a writable cache directory *when the function is
decorated* (``__pycache__`` beside the source, then ``$NUMBA_CACHE_DIR``, then the user's
cache directory under ``$HOME``) and raises ``RuntimeError: cannot cache function ...: no
locator available`` when there is none: an installed package in a read-only directory, run
with no writable home, could then import none of its compiled backends. This ``njit`` tries
numba's own locators first; when they all fail it points numba at a private directory
(``optsched-numba-<uid>`` in the temporary directory, mode 0700, used only when this user
owns it), and when even that fails it compiles without a cache (each process then pays the
~1 s compilation again, nothing else changes).

Kernel modules import ``njit`` from here instead of from numba; it is imported only with them.
numba keys a cached kernel on its own source file alone, so a kernel module that compiles code
from another kernel module (calls or inlines its functions, reads its constants) names that
module and the SHA-256 of its text in ``COMPILED_WITH``; tests/test_kernel_stamps.py fails until
the stamp follows an edit, and the stamp's edit makes numba rebuild the caller.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable

import numba
from numba.core import config


def _no_locator(exc: RuntimeError) -> bool:
    return "cannot cache function" in str(exc)


def private_cache_dir() -> Path | None:
    """A cache directory only this user can write, or None. An existing one is used only if
    this user owns it and nobody else can write to it (numba loads pickled code from it)."""
    path = Path(tempfile.gettempdir()) / f"optsched-numba-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        return None
    return path


def njit(*args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(*args, **kwargs)`` as a decorator (always used with parentheses)."""
    if not kwargs.get("cache"):
        return numba.njit(*args, **kwargs)

    def decorate(fn: Callable[..., Any]) -> Any:
        try:
            return numba.njit(*args, **kwargs)(fn)
        except RuntimeError as exc:
            if not _no_locator(exc):
                raise
        if not config.CACHE_DIR:
            private = private_cache_dir()
            if private is not None:
                config.CACHE_DIR = str(private)
                try:
                    return numba.njit(*args, **kwargs)(fn)
                except RuntimeError as exc:
                    if not _no_locator(exc):
                        raise
        return numba.njit(*args, **{**kwargs, "cache": False})(fn)

    return decorate
