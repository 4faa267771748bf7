"""`app.errors.to_message`: every error class gets its message and exit code."""

from __future__ import annotations

import logging

import pytest

from app.errors import UserMessage, to_message
from services.errors import (
    EmbedderUnavailable,
    EngramError,
    EnvironmentProblem,
    NotFoundError,
    Problem,
    StoreUnavailable,
    UserInputError,
    ValidationFailed,
    VectorStoreUnavailable,
)


def test_validation_failed_lists_its_problems() -> None:
    problems = [Problem("a.jsonl:3", "invalid JSON"), Problem("a.jsonl:9", "unknown type")]
    message = to_message(ValidationFailed("a.jsonl: 2 problem(s)", problems))
    assert message == UserMessage(
        "a.jsonl: 2 problem(s)", "", 2, ("a.jsonl:3: invalid JSON", "a.jsonl:9: unknown type")
    )


@pytest.mark.parametrize("error", [UserInputError("bad input"), NotFoundError("bad input")])
def test_user_input_errors_exit_2(error: Exception) -> None:
    assert to_message(error) == UserMessage("bad input", "", 2)


@pytest.mark.parametrize(
    "kind", [EnvironmentProblem, StoreUnavailable, EmbedderUnavailable, VectorStoreUnavailable]
)
def test_environment_problems_exit_3_and_reassure(kind: type[Exception]) -> None:
    message = to_message(kind("the database is locked"))
    assert (message.title, message.exit_code) == ("the database is locked", 3)
    assert message.detail == "Your memories are intact."
    assert message.problems == ()


def test_other_engram_errors_exit_1() -> None:
    assert to_message(EngramError("partial")) == UserMessage("partial", "", 1)


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyError("k"), ZeroDivisionError()])
def test_anything_else_is_a_bug(error: Exception, caplog: pytest.LogCaptureFixture) -> None:
    try:
        raise error
    except Exception as raised:
        with caplog.at_level(logging.ERROR, logger="engram"):
            message = to_message(raised)
    assert message.exit_code == 70
    assert message.title.startswith(f"unexpected error: {type(error).__name__}")
    assert "bug in Engram" in message.detail and "--verbose" in message.detail
    assert "Traceback" in caplog.text and type(error).__name__ in caplog.text
