"""Bulk tier changes of memories: the retention operation (`services.rem.ops.retention`)
moves many memories between hot, warm and cold at once, without touching anything else
of them (not their `updated_at`, text or vectors).

This writes one column of the `memory` table, whose owner is `services.storage.memories`;
it belongs there as a `MemoryStore` method and moves in when that module is next free."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from services.storage.database import batches

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore


def set_tiers(store: MemoryStore, moves: Mapping[str, Sequence[str]]) -> None:
    """Give the memories of each tier (tier → ids) that tier, in one transaction."""
    with store.writing():
        for tier, ids in moves.items():
            for batch in batches(ids):
                marks = ", ".join("?" for _ in batch)
                store.database.execute_sql(
                    f"UPDATE memory SET tier = ? WHERE id IN ({marks})", [tier, *batch]
                )
