"""Files of the streams: atomic replacement of a JSON file (``stream.json``, lease tables), the
``flock`` file lock, and the streams directory under the headrace home (listing its streams).
"""
from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..connections import headrace_home


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data: Any) -> None:
    """Replace ``path`` with ``data`` as JSON: temp file, fsync, rename, fsync the directory."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, separators=(",", ":"))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def streams_dir(home: "str | os.PathLike[str] | None" = None) -> Path:
    return headrace_home(home) / "streams"


def list_streams(home: "str | os.PathLike[str] | None" = None) -> list[str]:
    d = streams_dir(home)
    if not d.is_dir():
        return []
    return sorted(p.name for p in d.iterdir() if not p.name.startswith(".") and (p / "stream.json").is_file())
