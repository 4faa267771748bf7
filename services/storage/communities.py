"""Owner of the `community` table: the communities of related memories that the last
consolidation run found (`services.rem.ops.graph`), per project, with their label and
summary. A run replaces a project's rows at once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from services.storage.memories import MemoryStore


@dataclass(frozen=True)
class CommunityRow:
    id: str
    project: str | None
    members: list[str]
    label: str
    summary: str
    created_at: str
    updated_at: str


def project_communities(store: MemoryStore, project: str | None) -> list[CommunityRow]:
    """The stored communities of `project` (None: the memories without a project)."""
    rows = store.database.execute_sql(
        "SELECT id, project, members, label, summary, created_at, updated_at FROM community "
        "WHERE project IS ?",
        [project],
    ).fetchall()
    return [
        CommunityRow(
            str(cid), proj, json.loads(members), str(label), str(summary), str(at), str(updated)
        )
        for cid, proj, members, label, summary, at, updated in rows
    ]


def replace_communities(
    store: MemoryStore, project: str | None, communities: list[CommunityRow]
) -> None:
    """Store `communities` in place of those of `project`, in one transaction."""
    with store.writing():
        store.database.execute_sql("DELETE FROM community WHERE project IS ?", [project])
        for community in communities:
            store.database.execute_sql(
                "INSERT INTO community (id, project, members, size, label, summary, "
                "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
                [
                    community.id,
                    project,
                    json.dumps(community.members),
                    len(community.members),
                    community.label,
                    community.summary,
                    community.created_at,
                    community.updated_at,
                ],
            )


def stored_communities(store: MemoryStore, project: str | None = None) -> list[dict[str, Any]]:
    """The communities of the last run, largest first."""
    sql = "SELECT id, project, size, label, summary, members FROM community"
    params: list[Any] = []
    if project is not None:
        sql += " WHERE project = ?"
        params.append(project)
    rows = store.database.execute_sql(sql + " ORDER BY size DESC, id", params).fetchall()
    return [
        {
            "id": cid,
            "project": proj,
            "size": size,
            "label": label,
            "summary": summary,
            "members": json.loads(members),
        }
        for cid, proj, size, label, summary, members in rows
    ]
