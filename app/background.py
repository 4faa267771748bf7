"""Embedding in the background.

Embedding runs at about 25 memories/s on two cores, far slower than storing, so writes
land in SQLite (searchable by keywords at once) and vectors follow. Small amounts are
embedded inline; larger ones by one detached `engram embed` process per data folder,
guarded by a lock file so two embedders never write to Chroma at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from services.storage.file_lock import file_lock

LOCK_FILE = "embed.lock"
LOG_FILE = "embed.log"
INLINE_LIMIT = 32


@contextmanager
def embedding_lock(data_dir: Path, wait: bool = False) -> Iterator[bool]:
    """Yield True when this process holds the data folder's embedding lock."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(data_dir / LOCK_FILE, wait) as held:
        yield held


def embedder_running(data_dir: Path) -> bool:
    with embedding_lock(data_dir) as held:
        return not held


def spawn_background_embedder(data_dir: Path) -> bool:
    """Start a detached `engram embed` unless one already runs; True if started."""
    if embedder_running(data_dir):
        return False
    log = open(data_dir / LOG_FILE, "ab")  # noqa: SIM115  (handed to the child)
    subprocess.Popen(
        [sys.executable, "-m", "app.cli", "--data-dir", str(data_dir), "embed", "--quiet"],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        env={**os.environ, "ENGRAM_BACKGROUND": "1"},
    )
    log.close()
    return True
