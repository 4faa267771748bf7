"""The hook events Engram answers and what one call says, in no assistant's dialect:
each assistant's JSON is read into a `HookCall` at the edge (app/hook_formats.py)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class HookEvent(StrEnum):
    SESSION_START = "session-start"
    PROMPT = "prompt"
    TOOL_USE = "tool-use"
    PRE_COMPACT = "pre-compact"
    STOP = "stop"


# Why a session (re)starts. After a clear or a compaction the assistant no longer holds
# what it was given, so its ledger starts again; a resumed session still holds it.
STARTUP = "startup"
RESUME = "resume"
CLEAR = "clear"
COMPACT = "compact"
FORGETTING_SOURCES = frozenset({CLEAR, COMPACT})


class FileAction(StrEnum):
    OPENED = "opened"  # the assistant read the file
    SAVED = "saved"  # the assistant wrote or edited it


@dataclass(frozen=True)
class FileTouch:
    path: Path  # absolute
    action: FileAction


@dataclass(frozen=True)
class HookCall:
    event: HookEvent
    assistant: str  # claude, codex, gemini, cursor
    session_id: str
    native_event: str  # the assistant's own name of the event (its answer names it)
    cwd: Path | None = None
    transcript_path: str | None = None
    source: str | None = None  # why the session started: startup, resume, clear, compact
    prompt: str | None = None
    files: tuple[FileTouch, ...] = ()

    @property
    def forgets_context(self) -> bool:
        """The assistant's context was just cleared or compacted."""
        return self.event is HookEvent.SESSION_START and self.source in FORGETTING_SOURCES
