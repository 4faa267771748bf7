"""The `LLM` protocol, its errors, and `ask_json`, the one way the domain asks a model for
a structured answer.

A provider turns a prompt into text. Loading is lazy; `close()` unloads (the next call
loads again). A provider that cannot load or reach its model raises `LLMUnavailable`
with a message the user can act on; one call that fails without saying anything about
the model (out of time, prompt too long) raises `LLMCallFailed` (e.g. `LLMTimeout`).

Models — especially the tiny default one — answer badly now and then. `ask_json` treats
a malformed or non-matching answer as "no verdict": it asks once more, then returns None.
It never raises for a bad answer, only for an unavailable model or a cancelled call.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from services.errors import EngramError, EnvironmentProblem
from services.llm.schema import JSON, check_schema, parse_answer

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 256
DEFAULT_TIMEOUT_S = 60.0

RETRY_NOTE = (
    "\n\nYour previous answer could not be used ({reason}). Answer again with only one "
    "JSON object that matches the requested fields."
)


class LLMUnavailable(EnvironmentProblem):
    """The language model cannot be loaded or reached (missing or corrupt model file,
    dead endpoint, rejected key). Features that need it wait; nothing else is affected."""


class LLMCallFailed(LLMUnavailable):
    """One call failed but the model itself may be fine (a prompt longer than the
    context window, an endpoint's passing error); other calls go on."""


class LLMTimeout(LLMCallFailed):
    """One call took longer than its time limit."""


class LLMCancelled(EngramError):
    """The caller asked to stop (e.g. the user came back while a REM cycle ran)."""


@runtime_checkable
class LLM(Protocol):
    """A prompt in, the model's text out."""

    @property
    def model_id(self) -> str:
        """Stable id of the model; cached answers of different ids are never mixed."""
        ...

    def complete(
        self,
        prompt: str,
        *,
        schema: JSON | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> str:
        """The answer to `prompt`; with `schema`, the provider constrains it to JSON
        matching the schema as far as it can (callers still validate)."""
        ...

    def close(self) -> None:
        """Unload the model / drop connections; a later call loads again."""
        ...


@runtime_checkable
class ForgetsAnswers(Protocol):
    """An LLM with an answer cache (the runner): bad answers are dropped from it."""

    def forget(self, prompt: str, schema: JSON | None) -> None: ...


PER_ITEM_S = 0.025  # model seconds a memory earns an operation (100 memories: 2.5 s)


class TimeBudget:
    """The seconds an operation may spend on model calls, whatever the machine's load:
    each call gets at most what is left, and none starts with less than `minimum_s`."""

    def __init__(self, seconds: float, minimum_s: float = 2.0) -> None:
        self.deadline = time.monotonic() + seconds
        self.minimum_s = minimum_s

    @classmethod
    def for_work(cls, limit_s: float, items: int, per_item_s: float | None = None) -> TimeBudget:
        """A budget proportionate to the work: `per_item_s` a memory looked at, at most
        `limit_s`. A small store gets no model calls at all (its budget is under one
        call's minimum): a cycle over fewer than 100 memories stays within seconds."""
        per_item = PER_ITEM_S if per_item_s is None else per_item_s
        return cls(min(limit_s, per_item * max(0, items)))

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def allows_a_call(self) -> bool:
        return self.left() >= self.minimum_s


def ask_json(
    llm: LLM,
    prompt: str,
    schema: JSON,
    validate: Callable[[JSON], bool] | None = None,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    attempts: int = 2,
    budget: TimeBudget | None = None,
) -> JSON | None:
    """Ask for one JSON object matching `schema` (and, if given, accepted by
    `validate`). A malformed or invalid answer is asked again once, with a note saying
    what was wrong; after that the answer is None ("no verdict").

    Raises `LLMUnavailable` (no model), `LLMTimeout` (also when `budget` is used up),
    `LLMCancelled`, and `SchemaError` for a schema outside the supported subset (a bug
    in the caller) — never for a bad answer.
    """
    check_schema(schema)
    if schema.get("type") != "object":
        raise ValueError("ask_json needs a schema whose type is object")
    asked = prompt
    for attempt in range(1, attempts + 1):
        if budget is not None and not budget.allows_a_call():
            raise LLMTimeout(f"{llm.model_id}: the time for model calls is used up")
        limit = timeout_s if budget is None else min(timeout_s, budget.left())
        text = llm.complete(asked, schema=schema, max_tokens=max_tokens, timeout_s=limit)
        value, reason = parse_answer(text, schema)
        if value is not None and validate is not None:
            reason = _rejected_by(validate, value)
            if reason:
                value = None
        if value is not None:
            return value
        log.info("%s: unusable answer (attempt %d/%d): %s", llm.model_id, attempt, attempts, reason)
        if isinstance(llm, ForgetsAnswers):
            llm.forget(asked, schema)
        asked = prompt + RETRY_NOTE.format(reason=reason[:200])
    return None


def _rejected_by(validate: Callable[[JSON], bool], value: JSON) -> str:
    try:
        accepted: Any = validate(value)
    except (ValueError, TypeError, KeyError) as error:
        return f"rejected: {error}"
    return "" if accepted else "rejected by the caller's check"
