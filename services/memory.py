"""The `Memory` record and its validation from untrusted dictionaries (import, CLI, API).

`memory_from_dict` collects every problem of one record instead of stopping at the first,
so an import can report them all with file:line positions.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from services.errors import Problem
from services.types import MemoryType, Scope, Source, Tier

MAX_TITLE_CHARS = 100
MAX_ID_CHARS = 200
MAX_COUNT = 2**63 - 1  # SQLite INTEGER
_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.DOTALL)
_ID_OK = re.compile(r"[^\s\x00-\x1f]+\Z")  # \Z: `$` would let a final newline in


@dataclass
class Memory:
    id: str
    type: MemoryType
    title: str
    content: str
    project: str | None = None
    summary: str | None = None
    compressed: str | None = None
    index_line: str | None = None
    tags: list[str] = field(default_factory=list)
    file_refs: list[str] = field(default_factory=list)
    confidence: float = 0.5
    source: Source = Source.EXPLICIT
    session_id: str | None = None
    task_id: str | None = None
    role: str | None = None
    branch: str | None = None
    scope: Scope = Scope.PROJECT_SHARED
    created_at: str = ""
    valid_from: str | None = None
    valid_to: str | None = None
    last_accessed: str | None = None
    retrieval_count: int = 0
    citation_count: int = 0
    ignore_count: int = 0
    use_count: int = 0
    supersedes: str | None = None
    superseded_by: str | None = None
    tier: Tier = Tier.WARM

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["type"] = self.type.value
        data["source"] = self.source.value
        data["scope"] = self.scope.value
        data["tier"] = self.tier.value
        return data

    @property
    def superseded(self) -> bool:
        return self.superseded_by is not None


def now_iso() -> str:
    """Now, to the millisecond: two memories written within one second (an assistant adding
    through MCP) still order by when each was written, which decides the holder of a pair."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def parse_time(value: str) -> datetime:
    """Parse an ISO-8601 time; a time without offset is taken as UTC."""
    parsed = datetime.fromisoformat(value.strip())
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def written_at(memory: Memory) -> float:
    """When a memory started to hold (valid_from, else created_at), as a timestamp; an
    unreadable time counts as the earliest."""
    try:
        return parse_time(memory.valid_from or memory.created_at).timestamp()
    except ValueError:
        return 0.0


def title_from_content(content: str) -> str:
    """The first sentence or line of `content`, at most 100 characters."""
    first_line = next((line.strip() for line in content.splitlines() if line.strip()), "")
    match = _SENTENCE.match(first_line)
    title = match.group(1) if match else first_line
    if len(title) > MAX_TITLE_CHARS:
        cut = title[: MAX_TITLE_CHARS - 1]
        if " " in cut[40:]:
            cut = cut[: cut.rfind(" ")]
        title = cut.rstrip() + "…"
    return title


def new_memory_id(project: str | None) -> str:
    prefix = re.sub(r"[^a-z0-9]+", "-", (project or "mem").lower()).strip("-") or "mem"
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


_TEXT_FIELDS = (
    "project",
    "summary",
    "compressed",
    "index_line",
    "session_id",
    "task_id",
    "role",
    "branch",
    "supersedes",
    "superseded_by",
)
_TIME_FIELDS = ("created_at", "valid_from", "valid_to", "last_accessed")
_EXTENDED_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?!\d)")
_COUNT_FIELDS = ("retrieval_count", "citation_count", "ignore_count", "use_count")


Complain = Callable[[str], None]
"""Records one problem of the record being read."""
FieldReader = Callable[[dict[str, Any], dict[str, Any], Complain], None]
"""Reads some fields of a raw record into the values of its `Memory`, or complains."""


def memory_from_dict(
    data: Any, where: str, default_project: str | None = None
) -> tuple[Memory | None, list[Problem]]:
    """Validate one untrusted record. Returns the memory, or None and its problems."""
    problems: list[Problem] = []

    def problem(reason: str) -> None:
        problems.append(Problem(where, reason))

    if not isinstance(data, dict):
        problem(f"expected a JSON object, got {type(data).__name__}")
        return None, problems
    values: dict[str, Any] = {}
    for read in _FIELD_READERS:
        read(data, values, problem)
    if problems:
        return None, problems
    values.setdefault("project", (default_project or "").strip() or None)  # "" is none
    values.setdefault("id", new_memory_id(values.get("project")))
    values.setdefault("title", title_from_content(values["content"]))
    values.setdefault("created_at", now_iso())
    return Memory(**values), []


def _read_content(data: dict[str, Any], values: dict[str, Any], problem: Complain) -> None:
    content = data.get("content")
    if content is not None and not isinstance(content, str):
        problem(f"'content' must be a string, not {type(content).__name__}")
    elif not isinstance(content, str) or not content.strip():
        problem("'content' is missing or empty")
    else:
        values["content"] = content


def _read_enums(data: dict[str, Any], values: dict[str, Any], problem: Complain) -> None:
    raw_type = data.get("type", "fact")
    try:
        values["type"] = MemoryType(str(raw_type).strip().lower())
    except ValueError:
        problem(
            f"unknown type {raw_type!r} (choose from: {', '.join(t.value for t in MemoryType)})"
        )
    for name, enum, default in (
        ("source", Source, Source.EXPLICIT),
        ("scope", Scope, Scope.PROJECT_SHARED),
        ("tier", Tier, Tier.WARM),
    ):
        raw = data.get(name)
        if raw is None:
            values[name] = default
            continue
        try:
            values[name] = enum(str(raw).strip().lower())
        except ValueError:
            problem(f"unknown {name} {raw!r}")


def _read_id_and_title(data: dict[str, Any], values: dict[str, Any], problem: Complain) -> None:
    raw_id = data.get("id")
    if raw_id is not None:
        if not isinstance(raw_id, str) or not raw_id or len(raw_id) > MAX_ID_CHARS:
            problem(f"'id' must be a non-empty string of at most {MAX_ID_CHARS} characters")
        elif not _ID_OK.match(raw_id):
            problem(f"'id' {raw_id!r} contains whitespace or control characters")
        else:
            values["id"] = raw_id
    title = data.get("title")
    if title is not None and not isinstance(title, str):
        problem("'title' must be a string")
    elif isinstance(title, str) and title.strip():
        values["title"] = title.strip()


def _read_text_fields(data: dict[str, Any], values: dict[str, Any], problem: Complain) -> None:
    """The optional strings; a `provenance` object fills the ones it names that are
    not given at the top level."""
    for name in _TEXT_FIELDS:
        raw = data.get(name)
        if raw is None:
            continue
        if not isinstance(raw, str):
            problem(f"'{name}' must be a string")
        elif raw.strip():
            values[name] = raw.strip()
    provenance = data.get("provenance")
    if isinstance(provenance, dict):
        for key in ("session_id", "task_id", "role"):
            if isinstance(provenance.get(key), str):
                values.setdefault(key, provenance[key])


def _read_lists(data: dict[str, Any], values: dict[str, Any], problem: Complain) -> None:
    for name in ("tags", "file_refs"):
        raw = data.get(name, [])
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            problem(f"'{name}' must be a list of strings")
        else:
            values[name] = [item.strip() for item in raw if item.strip()]


def _read_confidence(data: dict[str, Any], values: dict[str, Any], problem: Complain) -> None:
    confidence = data.get("confidence", 0.5)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        problem("'confidence' must be a number")
    elif not 0.0 <= float(confidence) <= 1.0:
        problem(f"'confidence' must be between 0 and 1, got {confidence}")
    else:
        values["confidence"] = float(confidence)


def _read_times(data: dict[str, Any], values: dict[str, Any], problem: Complain) -> None:
    for name in _TIME_FIELDS:
        raw = data.get(name)
        if raw is None:
            continue
        try:
            if not isinstance(raw, str):
                raise ValueError
            parsed = parse_time(raw)
            # ISO's basic and week forms ("20260304", "2026-W10-3") are written out in
            # full: dates are shown and exported as their first ten characters
            values[name] = raw.strip() if _EXTENDED_DATE.match(raw.strip()) else parsed.isoformat()
        except ValueError:
            problem(f"'{name}' is not an ISO-8601 time: {raw!r}")


def _read_counts(data: dict[str, Any], values: dict[str, Any], problem: Complain) -> None:
    for name in _COUNT_FIELDS:
        raw = data.get(name, 0)
        if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw <= MAX_COUNT:
            problem(f"'{name}' must be a non-negative integer (at most {MAX_COUNT})")
        else:
            values[name] = raw


# The order in which a record's problems are reported.
_FIELD_READERS: tuple[FieldReader, ...] = (
    _read_content,
    _read_enums,
    _read_id_and_title,
    _read_text_fields,
    _read_lists,
    _read_confidence,
    _read_times,
    _read_counts,
)
