"""The desktop app's daily backup: the first use of the services after
`backup.interval_hours` writes one (on the caller's thread, the task runner's worker),
and uses in between only look, at most every few minutes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import app.desktop as desktop_module
from app.composition import open_engram
from app.desktop import Desktop
from services.storage.backup import backup_folder, list_backups
from tests.fakes import HashEmbedder
from tests.services.builders import make_memory


def test_the_first_use_after_the_interval_writes_a_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engram = open_engram(tmp_path, embedder=HashEmbedder())
    engram.store.add(make_memory("worth keeping", id="keep"))
    desktop = Desktop(tmp_path, engram)
    try:
        assert desktop.engram is engram
        folder = backup_folder(engram.store.path)
        backups = list_backups(folder)
        assert [(b.reason, b.memories) for b in backups] == [("auto", 1)]

        monkeypatch.setattr(desktop_module, "BACKUP_CHECK_S", 0.0)
        desktop._next_backup_check = 0.0
        assert desktop.engram is engram
        assert len(list_backups(folder)) == 1  # not due: the newest is fresh

        day_ago = time.time() - 25 * 3600
        os.utime(backups[0].path, (day_ago, day_ago))
        desktop.all_memories()
        assert len(list_backups(folder)) == 2  # a day later, the next use wrote one
    finally:
        desktop.close()
