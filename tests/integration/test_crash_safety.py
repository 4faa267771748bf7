"""The crash-safety harness (bench/crash_safety.py) at small scale: two SIGKILLs of the
real `engram` during each of import, add, edit, embed, reindex, rem run and config set,
and nothing lost or corrupted; and the harness's checks do see loss and a stray index
row when there is some."""

from __future__ import annotations

import random
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import crash_safety  # a bench script (bench/ is not a package)

pytestmark = pytest.mark.slow
# Each operation's duration, measured once by the full run (saves a run per operation).
TYPICAL_S = {
    "import": 1.5,
    "add": 1.7,
    "edit": 1.9,
    "embed": 3.0,
    "reindex": 3.0,
    "rem": 2.6,
    "config": 0.3,
}
SMALL = crash_safety.Sizes(
    import_records=60, embed_batch=40, reindex_memories=20, rem_memories=12, edit_memories=6
)


def test_two_kills_of_every_operation_lose_and_corrupt_nothing(tmp_path: Path) -> None:
    rng = random.Random(7)
    outcomes = [
        crash_safety.run_operation(operation, 2, tmp_path, rng, SMALL, TYPICAL_S[operation])
        for operation in crash_safety.OPERATIONS
    ]
    assert [o.kills for o in outcomes] == [2] * len(crash_safety.OPERATIONS)
    assert [o.problems for o in outcomes] == [[]] * len(outcomes)
    assert sum(o.lost for o in outcomes) == 0
    assert sum(o.corrupted for o in outcomes) == 0
    assert sum(o.survived for o in outcomes) == sum(o.kills for o in outcomes)


def test_the_checks_see_a_lost_memory_and_a_stray_index_row(tmp_path: Path) -> None:
    folder = crash_safety.Folder(tmp_path / "data", random.Random(3))
    folder.import_records(folder.records(3, "m"))
    victim = sorted(folder.ledger)[0]
    connection = sqlite3.connect(folder.database)
    with connection:  # the record goes, its keyword row stays behind
        connection.execute("DELETE FROM memory WHERE id = ?", (victim,))
    connection.close()
    outcome = crash_safety.Outcome("probe")

    assert not crash_safety.check(folder, crash_safety.Flight(), outcome)

    assert outcome.lost == 1
    assert f"probe: {victim} missing after a kill" in outcome.problems
    assert outcome.corrupted == 1
    assert any(f"fts row of missing memory {victim}" in p for p in outcome.problems)
