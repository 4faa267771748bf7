"""Project context: what is true now for a project — notes, active files, todos, recent
decisions and a catalogue (any JSON object) — saved and loaded per project, with a
history of every save.

Every `save` writes the current state (`project_context`) and a snapshot
(`context_history`) in one transaction. A snapshot keeps the notes, active files,
todos and decisions in full, but of the catalogue only the SHA-256 of its canonical
JSON and its delta against the catalogue saved before it:

    {"added": {key: value}, "removed": [key, …], "changed": {key: {"from": old, "to": new}}}

Deltas are over top-level keys; a nested value is compared whole (as canonical JSON, so
`1` and `1.0` differ). Replaying the deltas from the first snapshot rebuilds the
catalogue at any snapshot, and its hash is checked against the stored one
(`catalogue_at`, `replay`).

Canonical JSON: `json.dumps(value, sort_keys=True, separators=(",", ":"),
ensure_ascii=False)` encoded as UTF-8.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.errors import EngramError, NotFoundError, UserInputError
from services.memory import now_iso
from services.storage import project_context as storage
from services.storage.memories import MemoryStore
from services.text.incoming import IncomingText

MAX_PROJECT_CHARS = 200
MAX_NOTES_CHARS = 100_000
MAX_ITEMS = 1_000  # active files, todos or decisions
MAX_ITEM_CHARS = 2_000
MAX_CATALOGUE_BYTES = 5_000_000  # canonical JSON, and a catalogue file on disk
MAX_CATALOGUE_DEPTH = 64


class HistoryMismatch(EngramError):
    """A project's history does not replay to the catalogue hash it recorded."""


@dataclass(frozen=True)
class ProjectContext:
    project: str
    notes: str = ""
    active_files: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    catalogue: dict[str, Any] = field(default_factory=dict)
    updated_at: str | None = None  # None: never saved

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "notes": self.notes,
            "active_files": self.active_files,
            "todos": self.todos,
            "decisions": self.decisions,
            "catalogue": self.catalogue,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True)
class HistoryEntry:
    id: int
    project: str
    saved_at: str
    catalogue_sha256: str
    catalogue_delta: dict[str, Any]
    notes: str
    active_files: list[str]
    todos: list[str]
    decisions: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "project": self.project,
            "saved_at": self.saved_at,
            "catalogue_sha256": self.catalogue_sha256,
            "catalogue_delta": self.catalogue_delta,
            "notes": self.notes,
            "active_files": self.active_files,
            "todos": self.todos,
            "decisions": self.decisions,
        }


# -- canonical JSON, hashes and deltas --------------------------------------------------


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def catalogue_sha256(catalogue: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(catalogue).encode("utf-8")).hexdigest()


def catalogue_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What changed from `before` to `after`, by top-level key (keys in sorted order)."""
    added = {k: after[k] for k in sorted(after) if k not in before}
    removed = sorted(k for k in before if k not in after)
    changed = {
        k: {"from": before[k], "to": after[k]}
        for k in sorted(after)
        if k in before and canonical_json(before[k]) != canonical_json(after[k])
    }
    return {"added": added, "removed": removed, "changed": changed}


def apply_delta(catalogue: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """`catalogue` with `delta` applied (a new dict; the input is not changed)."""
    result = dict(catalogue)
    for key in delta.get("removed", []):
        result.pop(key, None)
    result.update(delta.get("added", {}))
    for key, change in delta.get("changed", {}).items():
        result[key] = change["to"]
    return result


def replay(entries: Iterable[HistoryEntry]) -> list[dict[str, Any]]:
    """The catalogue at each of `entries` (a project's history, oldest first, from its
    first snapshot), each checked against the hash its snapshot recorded."""
    catalogue: dict[str, Any] = {}
    rebuilt: list[dict[str, Any]] = []
    for entry in entries:
        catalogue = apply_delta(catalogue, entry.catalogue_delta)
        if catalogue_sha256(catalogue) != entry.catalogue_sha256:
            raise HistoryMismatch(
                f"the context history of {entry.project!r} does not replay to the catalogue "
                f"it recorded at snapshot {entry.id} ({entry.saved_at})"
            )
        rebuilt.append(catalogue)
    return rebuilt


# -- validation -------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {key!r} appears twice in one object")
        result[key] = value
    return result


def parse_catalogue(text: str, where: str) -> dict[str, Any]:
    """A catalogue from JSON text; errors name `where` with line and column."""
    if len(text.encode("utf-8")) > MAX_CATALOGUE_BYTES:
        raise UserInputError(f"{where}: the catalogue is larger than {MAX_CATALOGUE_BYTES} bytes")
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise UserInputError(
            f"{where}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}"
        ) from None
    except ValueError as error:  # a repeated key, NaN or Infinity
        raise UserInputError(f"{where}: {error}") from None
    except RecursionError:
        raise UserInputError(f"{where}: the JSON is nested too deeply") from None
    return validate_catalogue(value, where)


def read_catalogue_file(data: bytes, where: str) -> dict[str, Any]:
    """A catalogue from the bytes of a file (or stdin), which must be UTF-8 JSON."""
    if len(data) > MAX_CATALOGUE_BYTES:
        raise UserInputError(f"{where}: the catalogue is larger than {MAX_CATALOGUE_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UserInputError(f"{where}: not valid UTF-8 (byte {error.start})") from None
    return parse_catalogue(text, where)


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of a JSON value, stopping once it exceeds `limit`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def validate_catalogue(value: Any, where: str = "catalogue") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UserInputError(
            f"{where}: the catalogue must be a JSON object, got {_json_kind(value)}"
        )
    if _depth(value, MAX_CATALOGUE_DEPTH) > MAX_CATALOGUE_DEPTH:
        raise UserInputError(f"{where}: the catalogue is nested deeper than {MAX_CATALOGUE_DEPTH}")
    try:
        size = len(canonical_json(value).encode("utf-8"))
    except (TypeError, ValueError) as error:
        raise UserInputError(f"{where}: the catalogue is not JSON data ({error})") from None
    if size > MAX_CATALOGUE_BYTES:
        raise UserInputError(f"{where}: the catalogue is larger than {MAX_CATALOGUE_BYTES} bytes")
    if any(not isinstance(key, str) for key in value):
        raise UserInputError(f"{where}: catalogue keys must be strings")
    return value


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if value is None:
        return "null"
    return type(value).__name__


def _validate_project(project: str) -> str:
    name = project.strip()
    if not name or len(name) > MAX_PROJECT_CHARS:
        raise UserInputError(f"a project name is 1 to {MAX_PROJECT_CHARS} characters")
    return name


def _validate_items(items: Sequence[str], what: str) -> list[str]:
    cleaned = [" ".join(item.split()) if what != "active files" else item.strip() for item in items]
    cleaned = list(dict.fromkeys(item for item in cleaned if item))
    if len(cleaned) > MAX_ITEMS:
        raise UserInputError(f"at most {MAX_ITEMS} {what} (got {len(cleaned)})")
    for item in cleaned:
        if len(item) > MAX_ITEM_CHARS:
            raise UserInputError(f"one of the {what} is longer than {MAX_ITEM_CHARS} characters")
    return cleaned


def _redacted_catalogue(
    catalogue: dict[str, Any], gate: IncomingText, found: Counter[str]
) -> dict[str, Any]:
    """The catalogue with its secrets redacted: redacting its JSON text keeps the
    keys that say what a value is (`"password": "…"`); placeholders never break a
    string, but if the text no longer parses each string is redacted on its own."""
    text = canonical_json(catalogue)
    counted = Counter[str]()
    redacted = gate.text(text, counted)
    if redacted == text:
        return catalogue
    try:
        value = json.loads(redacted)
    except ValueError:
        value = None
    if isinstance(value, dict):
        found.update(counted)
        return value

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return gate.text(item, found)
        if isinstance(item, list):
            return [walk(v) for v in item]
        if isinstance(item, dict):
            return {k: walk(v) for k, v in item.items()}
        return item

    result: dict[str, Any] = walk(catalogue)
    return result


# -- storage ----------------------------------------------------------------------------


def _strings(raw: str) -> list[str]:
    value = json.loads(raw)
    return [str(v) for v in value] if isinstance(value, list) else []


def load(store: MemoryStore, project: str) -> ProjectContext:
    """The saved context of `project`; an empty one (updated_at None) if never saved."""
    row = storage.context_row(store, project)
    if row is None:
        return ProjectContext(project)
    notes, files, todos, decisions, catalogue, updated_at = row
    parsed = json.loads(catalogue)
    return ProjectContext(
        project=project,
        notes=str(notes),
        active_files=_strings(files),
        todos=_strings(todos),
        decisions=_strings(decisions),
        catalogue=parsed if isinstance(parsed, dict) else {},
        updated_at=str(updated_at),
    )


def save(
    store: MemoryStore,
    project: str,
    *,
    notes: str | None = None,
    active_files: Sequence[str] | None = None,
    todos: Sequence[str] | None = None,
    decisions: Sequence[str] | None = None,
    catalogue: dict[str, Any] | None = None,
    saved_at: str | None = None,
    incoming: IncomingText | None = None,
    redacted: Counter[str] | None = None,
) -> tuple[ProjectContext, HistoryEntry]:
    """Save the context of `project` and a snapshot of it, in one transaction.

    A part given replaces the saved one (lists whole); a part left out (None) keeps what
    was saved before. Lists lose blank and repeated items. Secrets in what is given are
    redacted by `incoming` (the default gate when None) and counted into `redacted`.
    Returns the context now saved and its history entry."""
    project = _validate_project(project)
    if notes is not None and len(notes) > MAX_NOTES_CHARS:
        raise UserInputError(f"the notes are longer than {MAX_NOTES_CHARS} characters")
    new_files = None if active_files is None else _validate_items(active_files, "active files")
    new_todos = None if todos is None else _validate_items(todos, "todos")
    new_decisions = None if decisions is None else _validate_items(decisions, "decisions")
    if catalogue is not None:
        validate_catalogue(catalogue)
    gate = incoming or IncomingText()
    found = Counter[str]() if redacted is None else redacted
    if notes is not None:
        notes = gate.text(notes, found)
    new_files, new_todos, new_decisions = (
        None if items is None else list(dict.fromkeys(gate.text(item, found) for item in items))
        for items in (new_files, new_todos, new_decisions)
    )
    if catalogue is not None:
        catalogue = _redacted_catalogue(catalogue, gate, found)
    at = saved_at or now_iso()
    with store.writing():
        before = load(store, project)
        after = ProjectContext(
            project=project,
            notes=before.notes if notes is None else notes,
            active_files=before.active_files if new_files is None else new_files,
            todos=before.todos if new_todos is None else new_todos,
            decisions=before.decisions if new_decisions is None else new_decisions,
            catalogue=before.catalogue if catalogue is None else dict(catalogue),
            updated_at=at,
        )
        delta = catalogue_delta(before.catalogue, after.catalogue)
        digest = catalogue_sha256(after.catalogue)
        lists = [
            json.dumps(after.active_files, ensure_ascii=False),
            json.dumps(after.todos, ensure_ascii=False),
            json.dumps(after.decisions, ensure_ascii=False),
        ]
        storage.save_context(
            store, project, after.notes, lists, canonical_json(after.catalogue), at
        )
        entry_id = storage.add_snapshot(
            store, project, at, digest, canonical_json(delta), after.notes, lists
        )
    entry = HistoryEntry(
        entry_id,
        project,
        at,
        digest,
        delta,
        after.notes,
        after.active_files,
        after.todos,
        after.decisions,
    )
    return after, entry


def drop_todo(store: MemoryStore, project: str, todo: str) -> bool:
    """Remove `todo` from the project's todos with a new snapshot; False if not there."""
    with store.writing():
        current = load(store, project)
        if todo not in current.todos:
            return False
        save(store, project, todos=[t for t in current.todos if t != todo])
    return True


def history(store: MemoryStore, project: str, limit: int | None = None) -> list[HistoryEntry]:
    """The snapshots of `project`, oldest first (the last `limit` of them if given)."""
    rows = storage.history_rows(store, project, limit)
    return [
        HistoryEntry(
            id=int(r[0]),
            project=str(r[1]),
            saved_at=str(r[2]),
            catalogue_sha256=str(r[3]),
            catalogue_delta=json.loads(r[4]),
            notes=str(r[5]),
            active_files=_strings(r[6]),
            todos=_strings(r[7]),
            decisions=_strings(r[8]),
        )
        for r in reversed(rows)
    ]


def projects(store: MemoryStore) -> list[str]:
    """Projects with a saved context."""
    return storage.projects(store)


def catalogue_at(store: MemoryStore, project: str, entry_id: int) -> dict[str, Any]:
    """The catalogue as it was saved in snapshot `entry_id`, rebuilt from the deltas and
    checked against its hash."""
    entries = history(store, project)
    for index, entry in enumerate(entries):
        if entry.id == entry_id:
            return replay(entries[: index + 1])[-1]
    raise NotFoundError(f"no snapshot {entry_id} in the context history of {project!r}")
