"""Every way a memory reaches storage passes the incoming-text gate: add, edit, import
and ingest store secrets only as placeholders (nowhere in the database: memory, chunks,
full-text index), report what was redacted, and refuse a memory over the size limit
without storing anything."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from app.composition import Engram
from services.errors import UserInputError, ValidationFailed
from services.memories.transfer import parse_import
from services.search.retrieval import RetrieverKind
from services.text.incoming import IncomingText
from tests.services.builders import make_memory
from tests.services.text.fake_secrets import sample

RNG = random.Random(1515)
GITHUB = sample("github-token", RNG).secret
AWS = sample("aws-access-key", RNG).secret
OPENAI = sample("openai-key", RNG).secret
PASSWORD = "Tr0ub4dor-3x"
SECRET_TEXT = (
    f"CI uses GH_TOKEN={GITHUB}; the key id is {AWS} and OPENAI_API_KEY={OPENAI}. "
    f"DATABASE_URL=postgres://app:{PASSWORD}@db.internal:5432/main"
)
SECRETS = (GITHUB, AWS, OPENAI, PASSWORD)


def database_text(engram: Engram) -> str:
    """Everything SQLite holds, as SQL text."""
    return "\n".join(engram.store.database.connection().iterdump())


def assert_nowhere(engram: Engram, *secrets: str) -> None:
    dump = database_text(engram)
    for secret in secrets:
        assert secret not in dump


def test_add_stores_placeholders_and_counts_them(engram: Engram) -> None:
    found: Counter[str] = Counter()
    memory = engram.service.add(
        {"content": SECRET_TEXT, "title": f"token {GITHUB}"}, redacted=found
    )
    stored = engram.store.get(memory.id)
    assert stored.title == "token [redacted:github-token]"
    assert "GH_TOKEN=[redacted:github-token]" in stored.content
    assert "postgres://app:[redacted:password]@db.internal" in stored.content
    assert found == {"github-token": 1, "aws-access-key": 1, "openai-key": 1, "password": 1}
    assert_nowhere(engram, *SECRETS)
    assert engram.service.search(GITHUB, kind=RetrieverKind.LEXICAL).results == []
    assert engram.service.search("GH_TOKEN", kind=RetrieverKind.LEXICAL).results  # it is there


def test_edit_redacts_the_changed_text(engram: Engram) -> None:
    memory = engram.service.add({"content": "deploy with the bot token"})
    found: Counter[str] = Counter()
    edited = engram.service.edit(
        memory.id, {"content": SECRET_TEXT, "tags": ["ci"]}, redacted=found
    )
    assert GITHUB not in edited.content and edited.tags == ["ci"]
    assert sum(found.values()) == 4
    assert_nowhere(engram, *SECRETS)


def test_add_and_edit_over_the_limit_store_nothing(engram: Engram) -> None:
    engram.service.incoming = IncomingText(max_bytes=2_000)
    with pytest.raises(UserInputError, match=r"store\.max_memory_bytes"):
        engram.service.add({"content": "x" * 2_001})
    assert engram.store.all_ids() == set()
    memory = engram.service.add({"content": "small"})
    with pytest.raises(UserInputError, match=r"2,101 bytes"):
        engram.service.edit(memory.id, {"title": "t" * 100, "content": "y" * 2_001})
    assert engram.store.get(memory.id).content == "small"


def test_import_redacts_and_reports_only_what_it_stored(engram: Engram) -> None:
    existing = make_memory(f"old note {GITHUB}", id="keep-1")
    engram.service.import_memories([existing])
    report = engram.service.import_memories(
        [make_memory(f"old note {GITHUB}", id="keep-1"), make_memory(SECRET_TEXT, id="new-1")],
        skip_existing=True,
    )
    assert (report.imported, report.skipped) == (1, 1)
    assert report.redacted == {
        "github-token": 1,
        "aws-access-key": 1,
        "openai-key": 1,
        "password": 1,
    }
    assert_nowhere(engram, *SECRETS)


def test_an_import_with_one_memory_too_large_is_refused_whole(engram: Engram) -> None:
    gate = IncomingText(max_bytes=1_000)
    lines = [
        json.dumps({"id": "a", "content": "fine"}),
        json.dumps({"id": "b", "content": "z" * 1_200}),
        json.dumps({"id": "c", "content": "fine too"}),
    ]
    with pytest.raises(ValidationFailed) as refused:
        parse_import("\n".join(lines).encode(), "big.jsonl", gate=gate)
    assert [p.where for p in refused.value.problems] == ["big.jsonl:2"]
    assert "store.max_memory_bytes" in str(refused.value)
    # The service refuses it too, whoever built the memories.
    engram.service.incoming = gate
    with pytest.raises(ValidationFailed, match="nothing was imported"):
        engram.service.import_memories([make_memory("fine"), make_memory("z" * 1_200)])
    assert engram.store.all_ids() == set()


def test_ingest_redacts_captured_lines_and_reports_a_line_too_large(engram: Engram) -> None:
    engram.service.incoming = IncomingText(max_bytes=1_000)
    transcript = (
        f"chat…\nMEMORY:fact:the staging bot uses {GITHUB}\n"
        f"MEMORY:fact:{'w' * 1_100}\nMEMORY:pitfall:DB_PASSWORD={PASSWORD} must be rotated\n"
    )
    report = engram.service.ingest(transcript, "session.log", None)
    assert len(report.stored) == 2
    assert report.redacted == {"github-token": 1, "password": 1}
    assert [p.where for p in report.problems] == ["session.log:3"]
    assert_nowhere(engram, GITHUB, PASSWORD)
