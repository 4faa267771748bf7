"""The one place that turns errors into messages for people.

Expected errors (bad input, an environment problem) become one clear line (plus the
list of problems for a validation failure). Anything else is a bug: the message says
so and where the details were logged.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
import sys
import traceback
from dataclasses import dataclass

from services.errors import (
    DiskFull,
    EngramError,
    EnvironmentProblem,
    StoreDamaged,
    UserInputError,
    ValidationFailed,
)

log = logging.getLogger("engram")


@dataclass(frozen=True)
class UserMessage:
    title: str
    detail: str
    exit_code: int
    problems: tuple[str, ...] = ()


DAMAGED_DETAIL = (
    "Run `engram salvage` to copy every readable row into a new database, or "
    "`engram backups` to see the backups you can restore."
)


def to_message(error: BaseException) -> UserMessage:
    """The message for `error`. Nothing here says the memories are intact when the
    database is damaged or a full disk stopped a write."""
    if isinstance(error, StoreDamaged | DiskFull):
        return UserMessage(str(error), "", 3)
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        where = f"the disk holding {error.filename}" if error.filename else "the disk"
        return UserMessage(f"{where} is full; nothing was changed", "", 3)
    if isinstance(error, OSError) and error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        where = error.filename or "a file Engram needs"
        return UserMessage(
            f"{where} cannot be written ({error.strerror}); is the data folder read-only?",
            "Your memories are intact.",
            3,
        )
    if _sqlite_damage(error):
        return UserMessage(f"the database is damaged ({error})", DAMAGED_DETAIL, 3)
    if isinstance(error, ValidationFailed):
        return UserMessage(error.summary, "", 2, tuple(str(p) for p in error.problems))
    if isinstance(error, UserInputError):
        return UserMessage(str(error), "", 2)
    if isinstance(error, EnvironmentProblem):
        return UserMessage(str(error), "Your memories are intact.", 3)
    if isinstance(error, EngramError):
        return UserMessage(str(error), "", 1)
    log.error("unexpected error:\n%s", "".join(traceback.format_exception(error)))
    return UserMessage(
        f"unexpected error: {type(error).__name__}: {error}",
        "This is a bug in Engram; your memories are intact. Run with --verbose for details.",
        70,
    )


def _sqlite_damage(error: BaseException) -> bool:
    """A SQLite error saying the file is damaged that no store guard turned into a
    `StoreDamaged` (peewee's errors wrap sqlite3's and keep its text)."""
    peewee = sys.modules.get("peewee")  # loaded if the error came from it; --help never does
    kinds = (
        (sqlite3.DatabaseError,)
        if peewee is None
        else (sqlite3.DatabaseError, peewee.DatabaseError)
    )
    if not isinstance(error, kinds):
        return False
    text = str(error).lower()
    return "malformed" in text or "not a database" in text
