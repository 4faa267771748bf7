"""The gate every incoming text passes before it is stored: a size limit, and secrets
replaced by typed placeholders (`services.text.redact`).

The composition root builds one `IncomingText` from the settings (`privacy.redact`,
`privacy.redact_patterns`, `privacy.redact_allow`, `store.max_memory_bytes`) and gives it
to the writers, so no service reads settings. What was redacted is added to a `Counter`
of kinds the caller passes, for it to tell the user.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from services.errors import UserInputError
from services.memory import MAX_TITLE_CHARS, Memory
from services.text.redact import Redactor

DEFAULT_MAX_MEMORY_BYTES = 4_000_000
SIZE_SETTING = "store.max_memory_bytes"
TEXT_FIELDS = ("title", "content", "summary")


def utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", errors="surrogatepass"))


@dataclass(frozen=True)
class IncomingText:
    """`redactor` None: redaction is off (`privacy.redact` false)."""

    redactor: Redactor | None = field(default_factory=Redactor)
    max_bytes: int = DEFAULT_MAX_MEMORY_BYTES

    def size_problem(self, title: str, content: str) -> str | None:
        """Why a memory of this title and content is too large, or None."""
        if (len(title) + len(content)) * 4 <= self.max_bytes:  # at most 4 bytes a char
            return None
        size = utf8_size(title) + utf8_size(content)
        if size <= self.max_bytes:
            return None
        return (
            f"{size:,} bytes (title and content, UTF-8), more than the {self.max_bytes:,} "
            f"a memory may hold (setting {SIZE_SETTING})"
        )

    def check_size(self, title: str, content: str, what: str = "the memory") -> None:
        problem = self.size_problem(title, content)
        if problem is not None:
            raise UserInputError(f"{what} is {problem}; nothing was stored")

    def text(self, text: str, found: Counter[str]) -> str:
        """`text` with its secrets redacted; their kinds counted into `found`."""
        if self.redactor is None or not text:
            return text
        result = self.redactor.redact(text)
        found.update(result.found)
        return result.text

    def memory(self, memory: Memory, found: Counter[str]) -> Memory:
        """The memory with its title, content and summary redacted."""
        changes = self.fields({name: getattr(memory, name) for name in TEXT_FIELDS}, found)
        changed = {name: value for name, value in changes.items() if value != getattr(memory, name)}
        return replace(memory, **changed) if changed else memory

    def fields(self, data: dict[str, Any], found: Counter[str]) -> dict[str, Any]:
        """A copy of `data` (a memory's fields, or changes to them) whose text fields are
        redacted; a redacted title still fits its limit. A title or summary mostly
        repeats the content, so each kind counts as often as the field holding it most
        (one token in the content and the title derived from it is one secret)."""
        cleaned = dict(data)
        counted = Counter[str]()
        for name in TEXT_FIELDS:
            value = cleaned.get(name)
            if isinstance(value, str):
                in_field = Counter[str]()
                cleaned[name] = self.text(value, in_field)
                counted |= in_field
        found.update(counted)
        title = cleaned.get("title")
        if isinstance(title, str) and len(title) > MAX_TITLE_CHARS >= len(data["title"]):
            cleaned["title"] = title[: MAX_TITLE_CHARS - 1].rstrip() + "…"
        return cleaned


def describe(found: Counter[str] | dict[str, int]) -> str:
    """`2 secrets redacted (github-token, password)`, or "" when none were."""
    total = sum(found.values())
    if not total:
        return ""
    kinds = ", ".join(sorted(kind for kind, count in found.items() if count))
    return f"{total} secret{'s' if total != 1 else ''} redacted ({kinds})"


def redaction_json(found: Counter[str] | dict[str, int]) -> dict[str, Any]:
    """What was redacted, for `--json` output: `{"count": 2, "kinds": {"password": 1, …}}`."""
    kinds = {kind: count for kind, count in sorted(found.items()) if count}
    return {"count": sum(kinds.values()), "kinds": kinds}
