"""Findings: what a consolidation operation proposes, with the options the user can
choose and the one it recommends. They persist until answered; answering applies the
option's action (see `services.rem.actions`) in one transaction with the answer."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from services.errors import NotFoundError, UserInputError
from services.memory import now_iso
from services.storage.memories import MemoryStore
from services.text.words import sha256_hex


class Status(StrEnum):
    PENDING = "pending"
    APPLIED = "applied"
    DISMISSED = "dismissed"


@dataclass(frozen=True)
class Option:
    name: str  # merge, keep_both, delete_one, skip…
    label: str  # what the user reads
    action: str  # what choosing it does, in words


@dataclass
class Finding:
    op: str
    kind: str
    summary: str
    memory_ids: list[str]
    options: list[Option]
    recommended: str
    detail: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    status: Status = Status.PENDING
    answer: str | None = None
    created_at: str = ""
    answered_at: str | None = None

    def __post_init__(self) -> None:
        if not self.id:
            key = json.dumps([self.op, self.kind, sorted(self.memory_ids)])
            self.id = "f-" + sha256_hex(key, 12)
        if self.recommended not in {o.name for o in self.options}:
            raise ValueError(f"recommended option {self.recommended!r} is not an option")

    def option(self, name: str) -> Option:
        for option in self.options:
            if option.name == name:
                return option
        choices = ", ".join(o.name for o in self.options)

        raise UserInputError(f"finding {self.id} has no option {name!r} (choose from: {choices})")

    def proposal(self) -> tuple[str, str] | None:
        """(title, content) of the memory accepting would store — a cluster summary or
        an extraction draft — for the reviewer to read first; None when it stores none."""
        draft = self.detail.get("memory")
        if isinstance(draft, dict) and draft.get("content"):
            return str(draft.get("title") or ""), str(draft["content"])
        if self.op == "clusters" and self.detail.get("content"):
            return str(self.detail.get("title") or ""), str(self.detail["content"])
        return None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        return data


class FindingStore:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def _execute(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> Any:
        return self.store.database.execute_sql(sql, list(params))

    def save(self, findings: list[Finding]) -> list[Finding]:
        """Store new findings; one already known (same op, kind and memories) and still
        pending or answered is not proposed again. Returns those stored now."""
        stored: list[Finding] = []
        with self.store.writing():
            for finding in findings:
                exists = self._execute("SELECT 1 FROM finding WHERE id = ?", [finding.id])
                if exists.fetchone():
                    continue
                finding.created_at = finding.created_at or now_iso()
                self._execute(
                    "INSERT INTO finding (id, op, kind, summary, memory_ids, options, "
                    "recommended, detail, status, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    [
                        finding.id,
                        finding.op,
                        finding.kind,
                        finding.summary,
                        json.dumps(finding.memory_ids),
                        json.dumps([asdict(o) for o in finding.options]),
                        finding.recommended,
                        json.dumps(finding.detail, ensure_ascii=False),
                        finding.status.value,
                        finding.created_at,
                    ],
                )
                stored.append(finding)
        return stored

    def _row(self, row: Any) -> Finding:
        (
            id_,
            op,
            kind,
            summary,
            ids,
            options,
            recommended,
            detail,
            status,
            answer,
            created,
            answered,
        ) = row
        return Finding(
            op=op,
            kind=kind,
            summary=summary,
            memory_ids=json.loads(ids),
            options=[Option(**o) for o in json.loads(options)],
            recommended=recommended,
            detail=json.loads(detail),
            id=id_,
            status=Status(status),
            answer=answer,
            created_at=created,
            answered_at=answered,
        )

    _COLUMNS = (
        "id, op, kind, summary, memory_ids, options, recommended, detail, status, answer, "
        "created_at, answered_at"
    )

    def pending(self, op: str | None = None) -> list[Finding]:
        sql = f"SELECT {self._COLUMNS} FROM finding WHERE status = 'pending'"
        params: list[Any] = []
        if op is not None:
            sql += " AND op = ?"
            params.append(op)
        rows = self._execute(sql + " ORDER BY created_at, id", params).fetchall()
        return [self._row(r) for r in rows]

    def all(self, limit: int = 1000) -> list[Finding]:
        rows = self._execute(
            f"SELECT {self._COLUMNS} FROM finding ORDER BY created_at DESC, id LIMIT ?", [limit]
        ).fetchall()
        return [self._row(r) for r in rows]

    def get(self, finding_id: str) -> Finding:
        row = self._execute(
            f"SELECT {self._COLUMNS} FROM finding WHERE id = ?", [finding_id]
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no finding with id {finding_id!r}")
        return self._row(row)

    def mark_answered(self, finding: Finding, option: str, applied: bool) -> None:
        """Record the answer (inside the caller's transaction, with its action)."""
        status = Status.APPLIED if applied else Status.DISMISSED
        self._execute(
            "UPDATE finding SET status = ?, answer = ?, answered_at = ? WHERE id = ?",
            [status.value, option, now_iso(), finding.id],
        )

    def details(self, op: str) -> list[tuple[str, str, Any]]:
        """(kind, status, detail) of every finding of `op`, answered or not; the detail
        as stored (JSON), or None where it does not parse."""
        rows = self._execute("SELECT kind, status, detail FROM finding WHERE op = ?", [op])
        found: list[tuple[str, str, Any]] = []
        for kind, status, raw in rows.fetchall():
            try:
                detail = json.loads(raw)
            except ValueError:
                detail = None
            found.append((str(kind), str(status), detail))
        return found

    def memory_ids(self, op: str) -> set[str]:
        """The memories any finding of `op` was about, answered or not."""
        rows = self._execute("SELECT memory_ids FROM finding WHERE op = ?", [op]).fetchall()
        return {memory_id for (ids,) in rows for memory_id in json.loads(ids)}

    def counts(self) -> dict[str, int]:
        rows = self._execute("SELECT status, count(*) FROM finding GROUP BY status").fetchall()
        return {str(status): int(count) for status, count in rows}
