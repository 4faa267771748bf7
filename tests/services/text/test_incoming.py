"""The incoming-text gate: the size limit names the size, the limit and the setting;
redaction of a memory's text fields counts what it found and keeps the title within
its limit; the user is told in one line."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.errors import UserInputError
from services.memory import MAX_TITLE_CHARS, memory_from_dict
from services.text.incoming import IncomingText, describe, redaction_json, utf8_size
from services.text.redact import Redactor

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"


def test_a_memory_over_the_limit_is_refused_with_size_limit_and_setting() -> None:
    gate = IncomingText(max_bytes=1_000)
    gate.check_size("title", "x" * 995)  # 1,000 bytes: accepted
    with pytest.raises(UserInputError) as refused:
        gate.check_size("title", "é" * 500 + "x")  # 1,006 bytes in UTF-8
    message = str(refused.value)
    assert "1,006 bytes" in message and "1,000" in message
    assert "store.max_memory_bytes" in message and "nothing was stored" in message


@given(st.text(max_size=300), st.text(max_size=300), st.integers(1, 2_000))
def test_the_size_is_counted_in_utf8_bytes(title: str, content: str, limit: int) -> None:
    problem = IncomingText(max_bytes=limit).size_problem(title, content)
    size = len(title.encode("utf-8", "surrogatepass")) + len(
        content.encode("utf-8", "surrogatepass")
    )
    assert utf8_size(title) + utf8_size(content) == size
    assert (problem is None) == (size <= limit)


def test_a_memory_is_redacted_in_title_content_and_summary() -> None:
    memory, _ = memory_from_dict(
        {"content": f"Use {TOKEN} for the bot.", "summary": f"token {TOKEN}"}, "m"
    )
    assert memory is not None and TOKEN in memory.title
    found: Counter[str] = Counter()
    cleaned = IncomingText().memory(memory, found)
    assert cleaned.title == "Use [redacted:github-token] for the bot."
    assert cleaned.content == "Use [redacted:github-token] for the bot."
    assert cleaned.summary == "token [redacted:github-token]"
    assert found == {"github-token": 1}  # one token, repeated by the title and summary
    assert memory.content.startswith(f"Use {TOKEN}")  # the input is not changed


def test_a_redacted_title_still_fits_its_limit() -> None:
    title = "pw " + "x" * 75 + " DB_PASSWORD=hunter2"
    assert len(title) <= MAX_TITLE_CHARS
    cleaned = IncomingText().fields({"title": title}, Counter())
    assert len(cleaned["title"]) == MAX_TITLE_CHARS and cleaned["title"].endswith("…")
    assert "hunter2" not in cleaned["title"]


def test_redaction_off_keeps_the_text_and_the_limit_still_holds() -> None:
    gate = IncomingText(redactor=None, max_bytes=1_000)
    found: Counter[str] = Counter()
    assert gate.text(f"GH={TOKEN}", found) == f"GH={TOKEN}" and not found
    with pytest.raises(UserInputError):
        gate.check_size("", "x" * 1_001)


def test_extra_patterns_reach_the_memory() -> None:
    gate = IncomingText(Redactor([r"ACME-\d{6}"]))
    found: Counter[str] = Counter()
    assert gate.fields({"content": "see ACME-424242"}, found) == {
        "content": "see [redacted:custom]"
    }
    assert found == {"custom": 1}


def test_what_the_user_is_told() -> None:
    assert describe(Counter()) == ""
    assert describe(Counter({"password": 1})) == "1 secret redacted (password)"
    told = describe(Counter({"password": 1, "github-token": 1}))
    assert told == "2 secrets redacted (github-token, password)"
    assert redaction_json({"password": 2, "jwt": 0}) == {"count": 2, "kinds": {"password": 2}}
