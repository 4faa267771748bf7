"""An advisory lock on a file, held by one process at a time: the data folder's
embedding lock and the backups folder's lock are both this."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def file_lock(path: Path, wait: bool = False) -> Iterator[bool]:
    """Yield True when this process holds the lock on `path` (created if missing);
    without `wait`, False at once when another process holds it."""
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
