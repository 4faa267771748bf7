"""How a row of the `memory` table maps to a `Memory` and back, and its column list for
hand-written SELECTs (peewee compiles big queries slowly on the search path). Runs no
SQL itself."""

from __future__ import annotations

import json
from collections import namedtuple
from typing import Any

from services.memory import Memory, now_iso, parse_time
from services.storage.database import MemoryRow
from services.types import MemoryType, Scope, Source, Tier

COLUMN_NAMES = tuple(MemoryRow._meta.sorted_field_names)
COLUMNS = ", ".join(f"t1.{name}" for name in COLUMN_NAMES)  # over table alias t1
ColumnRow = namedtuple("ColumnRow", COLUMN_NAMES)  # type: ignore[misc]


def row_to_memory(row: Any) -> Memory:
    """A Memory from a MemoryRow or a named tuple of its columns."""
    return Memory(
        id=row.id,
        type=MemoryType(row.type),
        title=row.title,
        content=row.content,
        project=row.project,
        summary=row.summary,
        compressed=row.compressed,
        index_line=row.index_line,
        tags=json.loads(row.tags),
        file_refs=json.loads(row.file_refs),
        confidence=row.confidence,
        source=Source(row.source),
        session_id=row.session_id,
        task_id=row.task_id,
        role=row.role,
        branch=row.branch,
        scope=Scope(row.scope),
        created_at=row.created_at,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        last_accessed=row.last_accessed,
        retrieval_count=row.retrieval_count,
        citation_count=row.citation_count,
        ignore_count=row.ignore_count,
        use_count=row.use_count,
        supersedes=row.supersedes,
        superseded_by=row.superseded_by,
        tier=Tier(row.tier),
    )


def columns_to_memory(values: Any) -> Memory:
    """A Memory from the values of a `SELECT {COLUMNS}` row."""
    return row_to_memory(ColumnRow(*values))


def memory_to_row_values(memory: Memory) -> dict[str, Any]:
    """The column values of a memory's row (waiting for embedding)."""
    values = memory.to_dict()
    values["tags"] = json.dumps(memory.tags, ensure_ascii=False)
    values["file_refs"] = json.dumps(memory.file_refs, ensure_ascii=False)
    values["created_ts"] = parse_time(memory.created_at).timestamp()
    values["updated_at"] = now_iso()
    values["embedded_model"] = None
    values["staged_model"] = None
    return values
