"""The personal profile: how the user likes to work (style, languages, frameworks, goals,
domain, constraints, notes), kept only with consent.

It is one user-private memory (so it is embedded and searchable like the rest) plus its
fields in the meta table. Saving needs consent; revoking consent deletes both, with the
memory's vectors.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from typing import TYPE_CHECKING

from services.errors import NotFoundError, UserInputError

if TYPE_CHECKING:  # the CLI reads the field names without loading the services
    from services.memories.service import MemoryService

PROFILE_ID = "engram-profile"
_FIELDS_KEY = "profile.fields"
MAX_FIELD_CHARS = 4000

PROFILE_FIELDS: tuple[tuple[str, str], ...] = (
    ("style", "Coding style"),
    ("languages", "Preferred languages"),
    ("frameworks", "Frameworks and libraries"),
    ("goals", "Project goals"),
    ("domain", "Domain"),
    ("constraints", "Constraints"),
    ("notes", "Notes"),
)
_LABELS = dict(PROFILE_FIELDS)


def render_profile(fields: dict[str, str]) -> str:
    """The profile as text for context: one `Label: value` line per filled field."""
    return "\n".join(
        f"{label}: {fields[key].strip()}"
        for key, label in PROFILE_FIELDS
        if fields.get(key, "").strip()
    )


class ProfileStore:
    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self.store = service.store

    def load(self) -> dict[str, str]:
        raw = self.store.meta_get(_FIELDS_KEY)
        if not raw:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            return {}
        return (
            {k: str(v) for k, v in data.items() if k in _LABELS} if isinstance(data, dict) else {}
        )

    def text(self) -> str | None:
        """The rendered profile, or None when there is none."""
        return render_profile(self.load()) or None

    def save(
        self, fields: dict[str, str], consent: bool, redacted: Counter[str] | None = None
    ) -> str:
        """Store the profile (and embed it). Refused without consent. Secrets in the
        fields are redacted (counted into `redacted`)."""
        if not consent:
            raise UserInputError(
                "the profile is kept only with consent: turn on profile.consent first"
            )
        unknown = set(fields) - set(_LABELS)
        if unknown:
            raise UserInputError(f"unknown profile fields: {', '.join(sorted(unknown))}")
        found = Counter[str]() if redacted is None else redacted
        cleaned = {
            k: self.service.incoming.text(v.strip()[:MAX_FIELD_CHARS], found)
            for k, v in fields.items()
            if v.strip()
        }
        text = render_profile(cleaned)
        self.store.meta_set(_FIELDS_KEY, json.dumps(cleaned, ensure_ascii=False))
        if not text:
            self._delete_memory()
            return ""
        data = {
            "content": text,
            "title": "Personal profile",
            "type": "fact",
            "scope": "user-private",
            "source": "explicit",
            "tags": ["profile"],
            "confidence": 0.9,
        }
        if self.store.existing_ids([PROFILE_ID]):
            self.service.edit(PROFILE_ID, {"content": text})
        else:
            self.service.add({**data, "id": PROFILE_ID})
        return text

    def revoke(self) -> None:
        """Delete the profile: its fields, its memory and the memory's vectors."""
        self.store.meta_set(_FIELDS_KEY, "{}")
        self._delete_memory()

    def _delete_memory(self) -> None:
        with contextlib.suppress(NotFoundError):
            self.service.delete(PROFILE_ID)
