"""Instance files: a reader registry keyed by file suffix.

``load_instances(path)`` returns every instance a file holds; ``load_instance(path, k)``
one of them (``k`` is 1-based, as ``optsched solve --instance K``); ``load_captures`` and
``load_captured`` the same with each one's ``capture`` entry.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, TypeVar

import numpy as np

from optsched.files import check_user_file, read_user_text, user_path
from optsched.models.base import Model

Reader = Callable[[str], list[Model]]
T = TypeVar("T")


def default_data_dir() -> Path:
    """The shared data directory: ``$OPTSCHED_SHARED_DATA``, else ``../shared/data`` from the
    working directory (read from there, never copied)."""
    env = os.environ.get("OPTSCHED_SHARED_DATA")
    return Path(env) if env else Path("..") / "shared" / "data"

_READERS: dict[str, Reader] = {}


def register_reader(*suffixes: str) -> Callable[[Reader], Reader]:
    """Decorator: ``reader(text) -> list of models`` for files ending in ``suffixes``."""

    def deco(fn: Reader) -> Reader:
        for s in suffixes:
            if s in _READERS:
                raise RuntimeError(f"two readers for {s!r}")
            _READERS[s] = fn
        return fn

    return deco


PathReader = Callable[[Path], list[Model]]
_PATH_READERS: dict[str, PathReader] = {}


def register_path_reader(*suffixes: str) -> Callable[[PathReader], PathReader]:
    """Decorator: ``reader(path) -> list of models`` for formats a solver library reads itself."""

    def deco(fn: PathReader) -> PathReader:
        for s in suffixes:
            if s in _READERS or s in _PATH_READERS:
                raise RuntimeError(f"two readers for {s!r}")
            _PATH_READERS[s] = fn
        return fn

    return deco


def load_instances(path: str | Path) -> list[Model]:
    path = user_path("file", path)
    suffix = path.suffix.lower()
    if suffix in _PATH_READERS:
        check_user_file(path, "file")  # the library reads it: a regular file within the byte cap
        return _PATH_READERS[suffix](path)
    reader = _READERS.get(suffix)
    if reader is None:
        known = ", ".join(sorted([*_READERS, *_PATH_READERS]))
        raise ValueError(f"file: unknown instance format {path.suffix!r} (known: {known})")
    text = read_user_text(path, "file")
    models = _naming(path, reader, text)
    if not models:
        raise ValueError(f"file: {path} holds no instance")
    return models


def _naming(path: Path, reader: Callable[[str], list[T]], text: str) -> list[T]:
    """``reader(text)``, its ValueError naming the file (a directory of them, as ``bench
    --data`` and ``--instances`` read, said only "delorme: file ends inside row 206")."""
    try:
        return reader(text)
    except ValueError as exc:
        said = str(exc)
        raise ValueError(f"file: {path}: {said.removeprefix('file: ')}") from None


def load_instance(path: str | Path, instance: int | None = None) -> Model:
    return _one(load_instances(path), path, instance)


def load_captures(path: str | Path) -> list[tuple[Model, dict[str, Any]]]:
    """Every instance of a file with its ``capture`` entry (``run --capture``'s ``.jsonl`` lines;
    {} for a line without one and for every other format)."""
    if user_path("file", path).suffix.lower() != ".jsonl":
        return [(model, {}) for model in load_instances(path)]
    from optsched.io.json_instance import read_captures

    pairs = _naming(Path(path), read_captures, read_user_text(Path(path), "file"))
    if not pairs:
        raise ValueError(f"file: {path} holds no instance")
    return pairs


def load_captured(path: str | Path, instance: int | None = None) -> tuple[Model, dict[str, Any]]:
    """One instance of :func:`load_captures` (``instance`` as in :func:`load_instance`)."""
    return _one(load_captures(path), path, instance)


def _one(items: list[T], path: str | Path, instance: int | None) -> T:
    """Item ``instance`` (1-based) of a file's instances; the only one when it is None."""
    if instance is not None and (isinstance(instance, (bool, np.bool_)) or not isinstance(instance, (int, np.integer))):
        raise ValueError(f"instance: expected a whole number 1..{len(items)}, got {instance!r}")
    if instance is None:
        if len(items) > 1:
            raise ValueError(f"instance: {path} holds {len(items)} instances; choose one with --instance 1..{len(items)}")
        return items[0]
    if not 1 <= instance <= len(items):
        raise ValueError(f"instance: {instance} is out of range 1..{len(items)}")
    return items[instance - 1]


from optsched.io import delorme, dimacs, json_instance, model_files, orlib  # noqa: E402,F401  (register the readers)
