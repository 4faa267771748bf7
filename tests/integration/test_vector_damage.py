"""The installed `engram`, one real process per call, on a data folder whose Chroma
index was damaged behind its back: it is set aside (never deleted) and rebuilt from
SQLite, the user told once, and add, search and reindex keep working."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CORPUS_MEMORIES
from tests.integration.conftest import run_engram

pytestmark = pytest.mark.slow
NOTICE = "the vector index was damaged; set aside as "


def _damage(data: Path) -> None:
    with (data / "chroma" / "chroma.sqlite3").open("r+b") as handle:
        handle.seek(4096)
        handle.write(b"\xde\xad" * 20_000)


def test_a_damaged_vector_index_is_set_aside_and_rebuilt(tmp_path: Path) -> None:
    data = tmp_path / "data"
    source = tmp_path / "thirty.jsonl"
    with CORPUS_MEMORIES.open(encoding="utf-8") as handle:
        source.write_text("".join(handle.readlines()[:30]), encoding="utf-8")
    imported = run_engram(data, "import", source)
    assert imported.returncode == 0, imported.stderr
    _damage(data)

    added = run_engram(data, "add", "Zinc roofs need expansion gaps", "--json", "--no-check")
    assert added.returncode == 0, added.stderr
    assert "Traceback" not in added.stderr
    assert added.stderr.count(NOTICE) == 1, added.stderr
    [moved] = sorted(data.glob("chroma.damaged-*"))
    assert f"{NOTICE}{moved} and rebuilt from the database (30 memories re-embedding" in (
        added.stderr
    )
    assert (moved / "chroma.sqlite3").stat().st_size > 0

    found = run_engram(data, "search", "zinc roofs expansion", "--retriever", "dense", "--json")
    assert found.returncode == 0, found.stderr
    assert NOTICE not in found.stderr
    payload = json.loads(found.stdout)
    assert payload["results"][0]["id"] == json.loads(added.stdout)["id"]
    assert payload["flags"] == []
    stats = json.loads(run_engram(data, "stats", "--json").stdout)
    assert (stats["memories"], stats["waiting_for_embedding"]) == (31, 0)

    _damage(data)
    rebuilt = run_engram(data, "reindex", "--json")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stderr.count(NOTICE) == 1, rebuilt.stderr
    assert json.loads(rebuilt.stdout)["embedded"] == 31
    assert len(list(data.glob("chroma.damaged-*"))) == 2
    again = run_engram(data, "search", "what happens with an empty list of targets", "--json")
    assert again.returncode == 0 and NOTICE not in again.stderr
    assert json.loads(again.stdout)["flags"] == []
