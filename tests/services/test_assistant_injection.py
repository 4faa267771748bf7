"""What each hook event gives a session, and its ledger (services/assistants/injection.py,
services/assistants/ledger.py), over a real store with the fast fake embedder."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from app.composition import Engram
from services.activity.prediction import PredictiveEngine
from services.activity.signals import Signal, SignalKind
from services.assistants.injection import (
    HookLimits,
    capture_transcript,
    file_memories,
    prompt_memories,
    session_context,
)
from services.assistants.ledger import SessionLedger, prune_old_sessions
from services.filters import MemoryFilter
from services.search.retrieval import ScoreBreakdown, SearchResult
from services.storage import assistant_sessions
from services.storage.assistant_sessions import SessionRow
from services.tokens import count_tokens
from tests.services.builders import make_memory

LIMITS = HookLimits(session_budget=600, prompt_budget=300)


def note(content: str, **fields: object) -> dict[str, object]:
    return {"content": content, **fields}


@pytest.fixture
def seeded(engram: Engram) -> Engram:
    add = engram.service.add
    add(
        note(
            "`issue_refund` never runs as admin: refunds go through the merchant's own key.",
            id="m-decision",
            type="decision",
            project="ledgerly",
            file_refs=["src/refunds.py"],
        )
    )
    add(
        note(
            "Money amounts are integers of cents, never floats.",
            id="m-convention",
            type="convention",
            project="ledgerly",
        )
    )
    add(
        note(
            "Refund limits are per merchant, stored in `merchant_limits`.",
            id="m-own",
            type="convention",
            project="ledgerly",
            session_id="s1",  # written by the session itself
        )
    )
    add(note("Use tabs in Go files.", id="m-other", type="convention", project="other"))
    return engram


def ledger_for(engram: Engram, session_id: str = "s1") -> SessionLedger:
    ledger = SessionLedger(engram.store, session_id)
    ledger.open("claude", "ledgerly", "/work/ledgerly", "/tmp/t.jsonl")
    return ledger


def project_prediction(engram: Engram) -> object:
    engine = PredictiveEngine(engram.store)
    engine.current_project = "ledgerly"
    return engine.prediction()


def test_a_session_gets_one_block_until_its_context_is_forgotten(seeded: Engram) -> None:
    ledger = ledger_for(seeded)
    assembler = seeded.assembler()
    prediction = project_prediction(seeded)
    block = session_context(ledger, assembler, prediction, LIMITS)  # type: ignore[arg-type]
    assert block is not None
    assert len(re.findall(r"<engram-context\b", block.text)) == 1
    assert 'project="ledgerly"' in block.text and 'budget="600"' in block.text
    assert count_tokens(block.text) <= 600
    assert {"m-convention", "m-decision"} <= set(block.memory_ids)  # m-decision: a key note
    assert "m-own" not in block.memory_ids and "m-own" not in block.text
    assert "m-other" not in block.memory_ids
    assert ledger.given() == set(block.memory_ids)
    # Resumed, or the same start told twice: the session holds its block already.
    again = SessionLedger(seeded.store, "s1")
    again.open("claude")
    assert session_context(again, assembler, prediction, LIMITS) is None  # type: ignore[arg-type]
    # After /clear or a compaction it gets a fresh one, and the ledger starts again.
    ledger.give(["m-other"], "prompt")
    fresh = session_context(ledger, assembler, prediction, LIMITS, forgets_context=True)  # type: ignore[arg-type]
    assert fresh is not None and fresh.memory_ids == block.memory_ids
    assert ledger.given() == set(block.memory_ids)


def test_the_block_fits_the_character_cap_by_shrinking(seeded: Engram) -> None:
    for n in range(12):
        seeded.service.add(
            note(
                f"Decision {n}: " + "keep handlers small and pure. " * 12,
                type="decision",
                project="ledgerly",
            )
        )
    ledger = ledger_for(seeded)
    limits = HookLimits(session_budget=4000, prompt_budget=300, max_chars=1500)
    block = session_context(ledger, seeded.assembler(), project_prediction(seeded), limits)  # type: ignore[arg-type]
    assert block is not None
    assert len(block.text) <= 1500
    assert block.budget < 4000 and f'budget="{block.budget}"' in block.text


def test_no_block_when_the_project_has_no_memories(seeded: Engram) -> None:
    ledger = SessionLedger(seeded.store, "s9")
    ledger.open("claude", "empty-project")
    engine = PredictiveEngine(seeded.store)
    engine.current_project = "empty-project"
    assert session_context(ledger, seeded.assembler(), engine.prediction(), LIMITS) is None
    assert not ledger.has_context


def fixed_search(*results: SearchResult):  # type: ignore[no-untyped-def]
    asked: list[str] = []

    def search(prompt: str) -> list[SearchResult]:
        asked.append(prompt)
        return list(results)

    search.asked = asked  # type: ignore[attr-defined]
    return search


def hit(
    engram: Engram, memory_id: str, dense: float, outdated_by: str | None = None
) -> SearchResult:
    memory = engram.store.get(memory_id)
    return SearchResult(memory, dense, ScoreBreakdown(dense, 0.5, 0.0), outdated_by)


def test_a_prompt_gets_what_it_needs_once_and_never_its_own_notes(seeded: Engram) -> None:
    ledger = ledger_for(seeded)
    search = fixed_search(hit(seeded, "m-own", 0.9), hit(seeded, "m-decision", 0.8))
    block = prompt_memories(ledger, search, "why can't issue_refund run as admin?", LIMITS)
    assert block is not None
    assert block.memory_ids == ["m-decision"]
    assert 'for="prompt"' in block.text and "never runs as admin" in block.text
    assert count_tokens(block.text) <= LIMITS.prompt_budget
    assert ledger.given() == {"m-decision"}
    assert prompt_memories(ledger, search, "and issue_refund as admin again?", LIMITS) is None


def test_unrelated_or_chat_prompts_get_nothing(seeded: Engram) -> None:
    ledger = ledger_for(seeded)
    weak = fixed_search(
        SearchResult(seeded.store.get("m-decision"), 0.5, ScoreBreakdown(0.3, 1.0, 0.0))
    )
    assert prompt_memories(ledger, weak, "run the tests", LIMITS) is None
    chat = fixed_search(hit(seeded, "m-decision", 0.9))
    assert prompt_memories(ledger, chat, "thanks!", LIMITS) is None
    assert chat.asked == []  # type: ignore[attr-defined]  # not even searched
    assert ledger.given() == set()


def test_a_replaced_note_is_not_given(seeded: Engram) -> None:
    ledger = ledger_for(seeded)
    search = fixed_search(hit(seeded, "m-decision", 0.9, outdated_by="m-newer"))
    assert prompt_memories(ledger, search, "refund admin rules please", LIMITS) is None


def test_a_prompt_searches_the_real_store(seeded: Engram) -> None:
    """With the store's own search (fake embedder): the project's note is found."""
    ledger = ledger_for(seeded)

    def search(prompt: str) -> list[SearchResult]:
        return seeded.service.search(prompt, MemoryFilter(project="ledgerly")).results

    block = prompt_memories(
        ledger, search, "`issue_refund` never runs as admin, refunds merchant key", LIMITS
    )
    assert block is not None and "m-decision" in block.memory_ids
    assert "m-other" not in block.text


def test_a_read_file_brings_its_critical_notes_once(seeded: Engram) -> None:
    ledger = ledger_for(seeded)
    engine = PredictiveEngine(seeded.store)
    signal = Signal(SignalKind.FILE_OPENED, datetime.now(UTC), "ledgerly", "src/refunds.py")
    prediction = engine.observe(signal)
    block = file_memories(ledger, prediction, LIMITS)
    assert block is not None
    assert block.memory_ids == ["m-decision"]
    assert "`src/refunds.py`" in block.text and 'for="file"' in block.text
    assert file_memories(ledger, engine.observe(signal), LIMITS) is None


def test_a_file_note_a_newer_one_replaces_is_given_as_that_one(seeded: Engram) -> None:
    newer = make_memory(
        "`issue_refund` may run as admin for chargebacks.", id="m-newer", project="ledgerly"
    )
    ledger = ledger_for(seeded)
    engine = PredictiveEngine(seeded.store)
    signal = Signal(SignalKind.FILE_OPENED, datetime.now(UTC), "ledgerly", "src/refunds.py")
    block = file_memories(
        ledger, engine.observe(signal), LIMITS, replaced=lambda ms: {"m-decision": newer}
    )
    assert block is not None and block.memory_ids == ["m-newer"]


def test_a_file_note_the_open_manifest_contradicts_is_not_given(seeded: Engram) -> None:
    from dataclasses import replace

    from services.knowledge.declared_truth import contradicted_by_file
    from services.text.manifests import DeclaredVersion

    wrong = make_memory("`issue_refund` needs Python 3.8+ now.", id="m-floor", project="ledgerly")
    ledger = ledger_for(seeded)
    engine = PredictiveEngine(seeded.store)
    signal = Signal(SignalKind.FILE_OPENED, datetime.now(UTC), "ledgerly", "src/refunds.py")
    declared = (DeclaredVersion("python", "requires-python", ">=3.11", "3.11", "pyproject.toml"),)
    prediction = replace(engine.observe(signal), declared=declared)
    # The note a newer one was taken to replace stays, since the open file refutes that one.
    block = file_memories(
        ledger,
        prediction,
        LIMITS,
        replaced=lambda ms, excluded=(): {} if "m-floor" in excluded else {"m-decision": wrong},
        against_file=contradicted_by_file,
    )
    assert block is not None and block.memory_ids == ["m-decision"]


def test_capture_reads_on_from_the_last_offset(seeded: Engram) -> None:
    ledger = ledger_for(seeded)
    seen: list[SessionRow] = []

    def capture(row: SessionRow) -> int | None:
        seen.append(row)
        return row.transcript_offset + 100

    assert capture_transcript(ledger, capture) == 100
    assert capture_transcript(ledger, capture) == 200
    assert [row.transcript_offset for row in seen] == [0, 100]
    assert assistant_sessions.transcript_offset(seeded.store, "s1") == 200
    no_transcript = SessionLedger(seeded.store, "s2")
    no_transcript.open("cursor")
    assert capture_transcript(no_transcript, capture) is None
    assert len(seen) == 2


def test_old_sessions_are_pruned(seeded: Engram) -> None:
    old = SessionLedger(seeded.store, "old", clock=lambda: "2020-01-01T00:00:00+00:00")
    old.open("claude")
    old.give(["m-decision"], "prompt")
    ledger_for(seeded)
    assert prune_old_sessions(seeded.store) == 1
    assert assistant_sessions.session_row(seeded.store, "old") is None
    assert assistant_sessions.session_row(seeded.store, "s1") is not None
