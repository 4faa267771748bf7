"""What the user is doing: signals from the watchers (file opened or saved, branch
checkout, error seen) and the activity state they build, per project.

The state remembers the current file and branch, recent files and errors (24 h), and
infers the kind of activity — debugging, feature work, review — that decides how the
context budget is split.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from services.text.source_symbols import SourceSymbols
from services.text.stacktrace import key_line

RECENT_ERRORS_WINDOW = timedelta(hours=24)
DEBUGGING_WINDOW = timedelta(minutes=30)
RECENT_FILES = 12
_DEBUG_BRANCH_PREFIXES = ("fix/", "hotfix/", "bug/", "bugfix/", "debug/")
_REVIEW_BRANCH_PREFIXES = ("review/", "pr/", "pull/")
_FEATURE_BRANCH_PREFIXES = ("feature/", "feat/")


class SignalKind(StrEnum):
    FILE_OPENED = "file_opened"
    FILE_SAVED = "file_saved"
    BRANCH_CHECKOUT = "branch_checkout"
    ERROR_SEEN = "error_seen"


class ActivityKind(StrEnum):
    GENERAL = "general"
    DEBUGGING = "debugging"
    FEATURE = "feature"
    REVIEW = "review"


@dataclass(frozen=True)
class Signal:
    kind: SignalKind
    at: datetime
    project: str | None = None
    path: str | None = None  # project-relative, POSIX separators
    branch: str | None = None
    error: str | None = None
    symbols: SourceSymbols | None = None

    @property
    def key(self) -> str:
        """What identifies this signal for learning: a memory cited after it counts for
        the same signal next time."""
        if self.kind in (SignalKind.FILE_OPENED, SignalKind.FILE_SAVED):
            return file_key(self.path or "")
        if self.kind is SignalKind.BRANCH_CHECKOUT:
            return branch_key(self.branch or "")
        return error_key(error_key_line(self.error or ""))


def file_key(path: str) -> str:
    return f"file:{path}"


def branch_key(branch: str) -> str:
    return f"branch:{branch}"


def error_key(line: str) -> str:
    return f"error:{line[:200]}"


def error_key_line(text: str) -> str:
    """The line of an error that says what went wrong: the last line of a Python
    traceback, the first line of other stacks and of a single message."""
    found = key_line(text)
    if found:
        return found
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


@dataclass(frozen=True)
class SeenError:
    at: datetime
    key_line: str


@dataclass
class ActivityState:
    """One project's activity, updated by each signal."""

    project: str | None
    current_file: str | None = None
    symbols: SourceSymbols | None = None
    branch: str | None = None
    last_signal: Signal | None = None
    recent_files: deque[str] = field(default_factory=lambda: deque(maxlen=RECENT_FILES))
    recent_errors: list[SeenError] = field(default_factory=list)
    recent_kinds: deque[tuple[datetime, SignalKind]] = field(
        default_factory=lambda: deque(maxlen=20)
    )
    explicit_kind: ActivityKind | None = None

    def apply(self, signal: Signal) -> None:
        self.last_signal = signal
        self.recent_kinds.append((signal.at, signal.kind))
        if signal.kind in (SignalKind.FILE_OPENED, SignalKind.FILE_SAVED) and signal.path:
            self.current_file = signal.path
            self.symbols = signal.symbols
            if signal.path in self.recent_files:
                self.recent_files.remove(signal.path)
            self.recent_files.appendleft(signal.path)
        elif signal.kind is SignalKind.BRANCH_CHECKOUT:
            self.branch = signal.branch
        elif signal.kind is SignalKind.ERROR_SEEN and signal.error:
            line = error_key_line(signal.error)
            self.recent_errors = [e for e in self.recent_errors if e.key_line != line]
            self.recent_errors.append(SeenError(signal.at, line))
        self.forget_old(signal.at)

    def forget_old(self, now: datetime) -> None:
        self.recent_errors = [e for e in self.recent_errors if now - e.at <= RECENT_ERRORS_WINDOW]

    def errors_within(self, now: datetime, window: timedelta = RECENT_ERRORS_WINDOW) -> list[str]:
        """Key lines of the errors seen in the window before `now`, newest first."""
        return [e.key_line for e in reversed(self.recent_errors) if now - e.at <= window]

    def activity(self, now: datetime) -> ActivityKind:
        """The explicit activity if the user set one, else inferred from the signals."""
        if self.explicit_kind is not None:
            return self.explicit_kind
        if self.errors_within(now, DEBUGGING_WINDOW):
            return ActivityKind.DEBUGGING
        branch = (self.branch or "").lower()
        if branch.startswith(_DEBUG_BRANCH_PREFIXES):
            return ActivityKind.DEBUGGING
        if branch.startswith(_REVIEW_BRANCH_PREFIXES):
            return ActivityKind.REVIEW
        recent = [kind for at, kind in self.recent_kinds if now - at <= timedelta(hours=1)]
        opens = sum(kind is SignalKind.FILE_OPENED for kind in recent)
        saves = sum(kind is SignalKind.FILE_SAVED for kind in recent)
        if opens >= 6 and saves == 0:
            return ActivityKind.REVIEW
        if saves or branch.startswith(_FEATURE_BRANCH_PREFIXES):
            return ActivityKind.FEATURE
        return ActivityKind.GENERAL
