"""The one place that turns errors into messages for people.

Expected errors (bad input, an environment problem) become one clear line (plus the
list of problems for a validation failure). Anything else is a bug: the message says
so and where the details were logged.
"""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass

from services.errors import EngramError, EnvironmentProblem, UserInputError, ValidationFailed

log = logging.getLogger("engram")


@dataclass(frozen=True)
class UserMessage:
    title: str
    detail: str
    exit_code: int
    problems: tuple[str, ...] = ()


def to_message(error: BaseException) -> UserMessage:
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
