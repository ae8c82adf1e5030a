"""Instance files: a reader registry keyed by file suffix.

``load_instances(path)`` returns every instance a file holds; ``load_instance(path, k)``
one of them (``k`` is 1-based, as ``optsched solve --instance K``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from optsched.files import check_user_file, read_user_text
from optsched.models.base import Model

Reader = Callable[[str], list[Model]]


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
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in _PATH_READERS:
        check_user_file(path, "file")  # the library reads it: a regular file within the byte cap
        return _PATH_READERS[suffix](path)
    reader = _READERS.get(suffix)
    if reader is None:
        known = ", ".join(sorted([*_READERS, *_PATH_READERS]))
        raise ValueError(f"file: unknown instance format {path.suffix!r} (known: {known})")
    text = read_user_text(path, "file")
    models = reader(text)
    if not models:
        raise ValueError(f"file: {path} holds no instance")
    return models


def load_instance(path: str | Path, instance: int | None = None) -> Model:
    models = load_instances(path)
    if instance is None:
        if len(models) > 1:
            raise ValueError(f"instance: {path} holds {len(models)} instances; choose one with --instance 1..{len(models)}")
        return models[0]
    if not 1 <= instance <= len(models):
        raise ValueError(f"instance: {instance} is out of range 1..{len(models)}")
    return models[instance - 1]


from optsched.io import delorme, dimacs, json_instance, model_files, orlib  # noqa: E402,F401  (register the readers)
