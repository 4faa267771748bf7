"""Export and import of memories.

Export: a JSON document `{"version", "project", "exported_at", "memories": [...],
"contradictions": [...]}` or JSONL, one memory per line. The document's
"contradictions" are the conflict records between its memories, settled or open, so what
the user judged travels with the notes (`knowledge.conflict_transfer` writes and checks
them); JSONL carries memories only. Import reads either (and the benchmark corpus
JSONL), reads and validates everything first, and is all-or-nothing: any problem (a
memory over the incoming-text gate's size limit among them) is reported as file:line
with its reason and nothing is stored. A record whose text a current memory of its
project already holds is not stored again (`without_stored_copies`, with the check
`engram add` makes).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from services.errors import Problem, UserInputError, ValidationFailed
from services.memory import Memory, memory_from_dict, now_iso
from services.text.incoming import IncomingText
from services.types import Tier

EXPORT_VERSION = 1
MAX_IMPORT_BYTES = 2 * 1024**3
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class ImportFile:
    """A validated import: its memories, and the export document's "contradictions"
    section as written (None when there is none; `knowledge.conflict_transfer` checks
    it)."""

    memories: list[Memory]
    contradictions: Any = None


def export_document(
    memories: Iterable[Memory],
    project: str | None,
    contradictions: Callable[[list[Memory]], list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The export document; with `contradictions`, the conflict records between the
    exported memories it returns for them."""
    listed = list(memories)
    document: dict[str, Any] = {
        "version": EXPORT_VERSION,
        "project": project,
        "exported_at": now_iso(),
        "memories": [m.to_dict() for m in listed],
    }
    if contradictions is not None:
        document["contradictions"] = contradictions(listed)
    return document


def _decode(raw: bytes, where: str) -> str:
    bom = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        return raw[bom:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = bom + error.start  # in the file, not after its byte-order mark
        line = raw[:offset].count(b"\n") + 1
        raise ValidationFailed(
            f"{where} is not valid UTF-8; nothing was imported",
            [Problem(f"{where}:{line}", f"invalid UTF-8 byte at offset {offset}")],
        ) from None


def parse_import(
    raw: bytes, where: str, default_project: str | None = None, gate: IncomingText | None = None
) -> list[Memory]:
    """Validate an export document or JSONL (each memory within `gate`'s size limit, when
    given). Raises ValidationFailed listing every problem; returns the memories only
    when there are none. Redaction is the memory service's, when it stores them."""
    return parse_import_file(raw, where, default_project, gate).memories


def parse_import_file(
    raw: bytes, where: str, default_project: str | None = None, gate: IncomingText | None = None
) -> ImportFile:
    """`parse_import`, with the export document's "contradictions" section kept."""
    if b"\x00" in raw[:8192]:
        raise ValidationFailed(
            f"{where} looks binary; nothing was imported", [Problem(where, "contains NUL bytes")]
        )
    text = _decode(raw, where)
    stripped = text.lstrip()
    records: list[tuple[str, Any]] = []
    problems: list[Problem] = []
    document_project = default_project
    contradictions: Any = None
    if stripped.startswith("{") and _is_single_document(stripped):
        document = json.loads(stripped)
        if "memories" in document:
            if not isinstance(document["memories"], list):
                raise ValidationFailed(
                    f"{where}: invalid export", [Problem(where, "'memories' must be a list")]
                )
            if isinstance(document.get("project"), str) and default_project is None:
                document_project = document["project"]
            contradictions = document.get("contradictions")
            places = _located(text, lambda: _memories_starts(text), len(document["memories"]))
            records = [
                (_place(where, place, f"memories[{i}]"), item)
                for i, (place, item) in enumerate(zip(places, document["memories"], strict=True))
            ]
        else:
            records = [(f"{where}:1", document)]
    elif stripped.startswith("[") or (stripped.startswith("{") and _broken_document(stripped)):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as error:  # one problem, where Python's json puts it
            raise ValidationFailed(
                f"{where} is not valid JSON; nothing was imported",
                [Problem(f"{where}:{error.lineno}:{error.colno}", error.msg)],
            ) from None
        except (ValueError, RecursionError) as error:  # huge number, deep nesting
            raise ValidationFailed(
                f"{where} is not valid JSON; nothing was imported", [Problem(where, str(error))]
            ) from None
        if not isinstance(items, list):  # a broken document that json reads after all
            raise ValidationFailed(
                f"{where} is not valid JSON; nothing was imported",
                [Problem(where, "not an export, a list of memories or JSONL")],
            )
        places = _located(text, lambda: _array_starts(text, _skip(text, 0)), len(items))
        records = [
            (_place(where, place, f"[{i}]"), item)
            for i, (place, item) in enumerate(zip(places, items, strict=True))
        ]
    else:
        # Lines end at \n or \r only: str.splitlines would also split at U+2028, U+0085
        # and other characters a JSON string may hold unescaped.
        for number, line in enumerate(_LINE_BREAK.split(text), start=1):
            if not line.strip():
                continue
            try:
                records.append((f"{where}:{number}", json.loads(line)))
            except json.JSONDecodeError as error:
                column = f"{where}:{number}:{error.colno}"  # the line is the document
                problems.append(Problem(column, f"invalid JSON ({error.msg})"))
            except (ValueError, RecursionError) as error:  # huge number, deep nesting
                problems.append(Problem(f"{where}:{number}", f"invalid JSON ({error})"))
    memories: list[Memory] = []
    seen: dict[str, str] = {}
    for position, record in records:
        memory, found = memory_from_dict(record, position, document_project)
        problems.extend(found)
        if memory is None:
            continue
        too_large = gate.size_problem(memory.title, memory.content) if gate else None
        if too_large:
            problems.append(Problem(position, too_large))
            continue
        if memory.id in seen:
            problems.append(
                Problem(position, f"duplicate id {memory.id!r} (first at {seen[memory.id]})")
            )
            continue
        seen[memory.id] = position
        memories.append(memory)
    if problems and not records and not stripped.startswith(("{", "[")):
        # Not one line is JSON: notes in Markdown or plain text, not an export.
        raise ValidationFailed(
            f"{where}: {len(problems)} problem(s); nothing was imported: no line is a JSON "
            "record (not an export or JSONL). Text notes are stored with `engram ingest "
            "FILE` (lines `MEMORY:type:content`) or `engram add`",
            problems,
        )
    if problems:
        raise ValidationFailed(
            f"{where}: {len(problems)} problem(s); nothing was imported", problems
        )
    if not memories:
        raise UserInputError(f"{where}: no memories found")
    return ImportFile(memories, contradictions)


def _broken_document(text: str) -> bool:
    """Whether `text` (starting with "{", not valid JSON as a whole) is one JSON document
    with a mistake in it rather than JSONL: neither of its first two lines is JSON alone
    (an export's first line, `{"version": 1, "memories": [`, never is)."""
    lines = [line for line in _LINE_BREAK.split(text, 3)[:3] if line.strip()][:2]
    return not any(_is_single_document(line) for line in lines)


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _skip(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]


def _array_starts(text: str, index: int) -> list[int]:
    """Where each element of the JSON array opening at `text[index]` starts."""
    decoder = json.JSONDecoder()
    starts: list[int] = []
    index = _skip(text, index + 1)
    while text[index] != "]":
        starts.append(index)
        index = _skip(text, decoder.raw_decode(text, index)[1])
        if text[index] == ",":
            index = _skip(text, index + 1)
    return starts


def _memories_starts(text: str) -> list[int]:
    """Where each record of a valid export document's "memories" list starts (the last
    "memories" key, as `json.loads` keeps it)."""
    decoder = json.JSONDecoder()
    starts: list[int] = []
    index = _skip(text, _skip(text, 0) + 1)
    while text[index] != "}":
        key, index = decoder.raw_decode(text, index)
        index = _skip(text, _skip(text, index) + 1)  # past the colon
        if key == "memories" and text[index] == "[":
            starts = _array_starts(text, index)
        index = _skip(text, decoder.raw_decode(text, index)[1])
        if text[index] == ",":
            index = _skip(text, index + 1)
    return starts


def _located(text: str, find: Callable[[], list[int]], count: int) -> list[str | None]:
    """`line:column` of each of `count` records (1-based, as Python's json says them);
    None for all when they cannot be found."""
    try:
        starts = find()
    except (ValueError, IndexError, RecursionError):
        starts = []
    if len(starts) != count:
        return [None] * count
    places: list[str | None] = []
    line, line_start, done = 1, 0, 0
    for start in starts:  # in order: the file is read once
        for end in _LINE_BREAK.finditer(text, done, start):
            line, line_start = line + 1, end.end()
        done = start
        places.append(f"{line}:{start - line_start + 1}")
    return places


def _place(where: str, line_column: str | None, index: str) -> str:
    """`file:line:column (memories[3])`, or `file:memories[3]` when not located."""
    return f"{where}:{line_column} ({index})" if line_column else f"{where}:{index}"


def _is_single_document(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return False
    return True


def read_import_file(
    path: Path, default_project: str | None = None, gate: IncomingText | None = None
) -> ImportFile:
    try:
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise UserInputError(f"{path}: {size} bytes is larger than an import may be")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserInputError(f"{path}: is a folder, not a file") from None
    except PermissionError:
        raise UserInputError(f"{path}: permission denied") from None
    return parse_import_file(raw, str(path), default_project, gate)


def without_stored_copies(
    memories: Sequence[Memory],
    stored_copy: Callable[[Memory], Memory | None],
    existing: set[str],
) -> tuple[list[Memory], dict[str, Memory]]:
    """The records to store, and (record id → that memory) those whose text a current
    memory already holds, as `engram add` finds it (`stored_copy`: the memory service's,
    same project, secrets redacted). A record whose own id is stored (`existing`: the
    import's existing-id rule decides), or that is itself history (superseded,
    archived), is kept, and so are records of one file that repeat each other (an
    export keeps the copies `--allow-copy` made; the duplicates operation offers them).
    A kept record naming a left-out one as what it replaces names its copy instead."""
    kept: list[Memory] = []
    copies: dict[str, Memory] = {}
    for memory in memories:
        current = memory.superseded_by is None and memory.tier is not Tier.ARCHIVED
        copy = stored_copy(memory) if current and memory.id not in existing else None
        if copy is not None and copy.id != memory.id:
            copies[memory.id] = copy
        else:
            kept.append(memory)
    kept = [
        replace(m, supersedes=copies[m.supersedes].id) if m.supersedes in copies else m
        for m in kept
    ]
    return kept, copies
