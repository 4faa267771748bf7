"""Helpers that build domain objects for the services tests."""

from __future__ import annotations

import itertools
from typing import Any

from services.memory import Memory, memory_from_dict

_counter = itertools.count()


def make_memory(content: str | None = None, **fields: Any) -> Memory:
    """A valid memory (through the same validation as every input); unique id by default."""
    number = next(_counter)
    data: dict[str, Any] = {"id": f"mem-{number}", "content": content or f"memory {number}"}
    data.update(fields)
    memory, problems = memory_from_dict(data, "test")
    assert memory is not None, problems
    return memory


def full_memory(**fields: Any) -> Memory:
    """A memory with every field set to a non-default value."""
    data: dict[str, Any] = {
        "id": "full-1",
        "type": "decision",
        "title": "Use WAL mode",
        "content": "We use SQLite WAL mode so readers never block the writer.",
        "project": "engram",
        "summary": "WAL for concurrency",
        "compressed": "WAL: readers!block writer",
        "index_line": "decision: WAL mode",
        "tags": ["sqlite", "concurrency"],
        "file_refs": ["services/db.py", "services/*.py"],
        "confidence": 0.75,
        "source": "imported",
        "session_id": "session-7",
        "task_id": "task-3",
        "role": "architect",
        "branch": "main",
        "scope": "user-private",
        "created_at": "2024-02-03T04:05:06+00:00",
        "valid_from": "2024-02-01T00:00:00+00:00",
        "valid_to": "2030-01-01T00:00:00+00:00",
        "last_accessed": "2024-03-01T12:00:00+00:00",
        "retrieval_count": 5,
        "citation_count": 4,
        "ignore_count": 3,
        "use_count": 2,
        "supersedes": "old-1",
        "superseded_by": "new-1",
        "tier": "hot",
    }
    data.update(fields)
    memory, problems = memory_from_dict(data, "test")
    assert memory is not None, problems
    return memory
