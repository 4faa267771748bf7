"""Export and import of memories.

Export: a JSON document `{"version", "project", "exported_at", "memories": [...]}` or
JSONL, one memory per line. Import reads either (and the benchmark corpus JSONL), reads
and validates everything first, and is all-or-nothing: any problem (a memory over the
incoming-text gate's size limit among them) is reported as file:line with its reason and
nothing is stored. A record whose text a current memory of its project already holds is
not stored again (`without_stored_copies`, with the check `engram add` makes).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from services.errors import Problem, UserInputError, ValidationFailed
from services.memory import Memory, memory_from_dict, now_iso
from services.text.incoming import IncomingText
from services.types import Tier

EXPORT_VERSION = 1
MAX_IMPORT_BYTES = 2 * 1024**3
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def export_document(memories: Iterable[Memory], project: str | None) -> dict[str, Any]:
    return {
        "version": EXPORT_VERSION,
        "project": project,
        "exported_at": now_iso(),
        "memories": [m.to_dict() for m in memories],
    }


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
    if b"\x00" in raw[:8192]:
        raise ValidationFailed(
            f"{where} looks binary; nothing was imported", [Problem(where, "contains NUL bytes")]
        )
    text = _decode(raw, where)
    stripped = text.lstrip()
    records: list[tuple[str, Any]] = []
    problems: list[Problem] = []
    document_project = default_project
    if stripped.startswith("{") and _is_single_document(stripped):
        document = json.loads(stripped)
        if "memories" in document:
            if not isinstance(document["memories"], list):
                raise ValidationFailed(
                    f"{where}: invalid export", [Problem(where, "'memories' must be a list")]
                )
            if isinstance(document.get("project"), str) and default_project is None:
                document_project = document["project"]
            records = [
                (f"{where}:memories[{i}]", item) for i, item in enumerate(document["memories"])
            ]
        else:
            records = [(f"{where}:1", document)]
    elif stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise ValidationFailed(
                f"{where} is not valid JSON; nothing was imported",
                [Problem(f"{where}:{error.lineno}", error.msg)],
            ) from None
        except (ValueError, RecursionError) as error:  # huge number, deep nesting
            raise ValidationFailed(
                f"{where} is not valid JSON; nothing was imported", [Problem(where, str(error))]
            ) from None
        records = [(f"{where}:[{i}]", item) for i, item in enumerate(items)]
    else:
        # Lines end at \n or \r only: str.splitlines would also split at U+2028, U+0085
        # and other characters a JSON string may hold unescaped.
        for number, line in enumerate(_LINE_BREAK.split(text), start=1):
            if not line.strip():
                continue
            try:
                records.append((f"{where}:{number}", json.loads(line)))
            except json.JSONDecodeError as error:
                problems.append(Problem(f"{where}:{number}", f"invalid JSON ({error.msg})"))
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
    if problems:
        raise ValidationFailed(
            f"{where}: {len(problems)} problem(s); nothing was imported", problems
        )
    if not memories:
        raise UserInputError(f"{where}: no memories found")
    return memories


def _is_single_document(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return False
    return True


def read_import_file(
    path: Path, default_project: str | None = None, gate: IncomingText | None = None
) -> list[Memory]:
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
    return parse_import(raw, str(path), default_project, gate)


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
