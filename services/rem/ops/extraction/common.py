"""What the parts of knowledge extraction share: the memories as entries of the work
sessions they came from, what earlier runs proposed (`Known`), the key that tells one
suggestion from another, and the limits."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from services.memory import Memory
from services.storage.findings import FindingStore
from services.storage.memories import MemoryStore

OP = "extraction"
MAX_PER_PROJECT = 10  # pending findings of a kind per project (new ones wait for room)
MAX_SOURCES = 12  # memories a draft is made from (the earliest: stable between runs)


@dataclass(frozen=True)
class Entry:
    memory: Memory
    at: datetime
    session: int  # index in the work sessions
    names: frozenset[str]


@dataclass(frozen=True)
class Known:
    """What earlier runs proposed: the keys of all extraction findings (pending or
    answered: never proposed twice), and how many are pending per kind and project."""

    keys: frozenset[str]
    pending: Counter[tuple[str, str | None]]

    @classmethod
    def load(cls, store: MemoryStore) -> Known:
        keys: set[str] = set()
        pending: Counter[tuple[str, str | None]] = Counter()
        for kind, status, detail in FindingStore(store).details(OP):
            if not isinstance(detail, dict):
                continue
            if isinstance(detail.get("key"), str):
                keys.add(detail["key"])
            if status == "pending":
                project = detail.get("project")
                pending[(kind, project if isinstance(project, str) else None)] += 1
        return cls(frozenset(keys), pending)

    def room(self, kind: str, project: str | None) -> int:
        return max(0, MAX_PER_PROJECT - self.pending[(kind, project)])


def finding_key(kind: str, *parts: str | None) -> str:
    return json.dumps([kind, *parts])
