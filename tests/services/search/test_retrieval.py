"""Hybrid retrieval over real SQLite + real local Chroma with the fake HashEmbedder:
finds by meaning, words and identifiers, filters, degrades gracefully and measures."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.composition import open_engram
from services.filters import MemoryFilter
from services.search.retrieval import RetrieverKind, SearchResponse
from services.storage.database import SearchMetricRow
from services.storage.metrics import SearchMetrics, SearchMetricsLog
from services.types import MemoryType, RetrievalMode
from tests.fakes import BrokenEmbedder, HashEmbedder

CORPUS: list[dict[str, Any]] = [
    {
        "id": "refund",
        "type": "fix",
        "project": "shop",
        "content": "The refund worker retries failed payments with exponential backoff.",
    },
    {
        "id": "wal",
        "type": "decision",
        "project": "shop",
        "content": "SQLite runs in WAL mode so readers never block the single writer.",
    },
    {
        "id": "naming",
        "type": "convention",
        "project": "shop",
        "content": "Python modules use snake case names and short docstrings.",
    },
    {
        "id": "ident",
        "type": "pitfall",
        "project": "shop",
        "file_refs": ["billing/refunds.py"],
        "content": "Only the billing service may call refund_payment(); it is not idempotent.",
    },
    {
        "id": "deploy",
        "type": "workflow",
        "project": "ops",
        "tags": ["release"],
        "content": "Deploys go out on Tuesdays after the smoke tests pass on staging.",
    },
    {
        "id": "cold",
        "type": "fact",
        "project": "shop",
        "tier": "cold",
        "content": "The legacy ledger lives on the mainframe and syncs nightly.",
    },
    {
        "id": "old",
        "type": "fact",
        "project": "shop",
        "superseded_by": "wal",
        "content": "SQLite used the rollback journal before WAL mode was enabled.",
    },
]


@pytest.fixture
def loaded(engram: Any) -> Any:
    for data in CORPUS:
        engram.service.add(dict(data))
    return engram


def ids(response: SearchResponse) -> list[str]:
    return [r.memory.id for r in response.results]


def test_hybrid_finds_by_meaning_words_and_identifier(loaded: Any) -> None:
    by_meaning = loaded.service.search("exponential backoff for payments", kind=RetrieverKind.DENSE)
    assert ids(by_meaning)[0] == "refund"
    by_words = loaded.service.search("staging smoke tests")
    assert ids(by_words)[0] == "deploy"
    by_identifier = loaded.service.search("who may use refund_payment")
    top = by_identifier.results[0]
    assert top.memory.id == "ident"
    assert top.breakdown.matched_identifiers == ("refund_payment",)
    assert top.breakdown.identifier == 1.0
    assert "identifier" in top.breakdown.sources
    by_file = loaded.service.search("problems in refunds.py")
    assert by_file.results[0].memory.id == "ident"
    assert "refunds.py" in by_file.results[0].breakdown.matched_identifiers
    assert by_file.results[0].breakdown.named_file == 1.0  # its file_refs list the file
    assert all(r.breakdown.named_file == 0.0 for r in by_file.results[1:])
    assert all(r.breakdown.named_file == 0.0 for r in by_identifier.results)


def test_a_dotfile_query_names_the_memory_whose_file_refs_list_it(engram: Any) -> None:
    engram.service.add(
        {
            "id": "lint",
            "type": "convention",
            "file_refs": [".golangci.yml"],
            "content": "No io/ioutil in new code; the linter flags it.",
        }
    )
    engram.service.add(
        {"id": "other", "type": "workflow", "content": "Lint runs golangci in CI on every push."}
    )
    found = engram.service.search(".golangci.yml")
    assert ids(found)[0] == "lint"
    assert found.results[0].breakdown.named_file == 1.0
    assert found.results[0].breakdown.matched_identifiers == (".golangci.yml",)


def test_a_file_named_without_an_extension_is_a_file_the_query_names(engram: Any) -> None:
    """`justfile`, `Makefile`: a query naming one names the file, as `src/app.py` would:
    the note whose file_refs list it scores for the file, one that mentions it does not."""
    engram.service.add(
        {
            "id": "recipe",
            "type": "workflow",
            "file_refs": ["justfile"],
            "content": "`just downgrade-for-msrv` does nothing now; the pins are gone.",
        }
    )
    engram.service.add(
        {
            "id": "passing",
            "type": "pitfall",
            "content": "The justfile MSRV job failed; the justfile pins the time crate.",
        }
    )
    found = {r.memory.id: r.breakdown for r in engram.service.search("justfile").results}
    assert found["recipe"].named_file == 1.0
    assert found["recipe"].matched_identifiers == ("justfile",)
    assert found["passing"].named_file == 0.0


def test_a_question_spelling_out_an_acronym_finds_the_note_that_uses_it(engram: Any) -> None:
    engram.service.add(
        {"id": "msrv", "type": "constraint", "content": "MSRV is 1.78; CI checks it."}
    )
    engram.service.add({"id": "other", "type": "fact", "content": "Nightly builds the macros."})
    found = engram.service.search("minimum supported rust version", kind=RetrieverKind.LEXICAL)
    assert ids(found)[0] == "msrv"
    assert found.results[0].breakdown.lexical == 1.0


def test_a_question_spelling_out_a_word_finds_the_note_that_abbreviates_it(engram: Any) -> None:
    engram.service.add({"id": "deps", "type": "workflow", "content": "Bump deps with `uv lock`."})
    engram.service.add({"id": "other", "type": "fact", "content": "Nightly builds the macros."})
    found = engram.service.search("how to upgrade dependencies", kind=RetrieverKind.LEXICAL)
    assert ids(found)[0] == "deps"


def test_breakdown_adds_up_to_the_score(loaded: Any) -> None:
    weights = loaded.retriever.weights
    response = loaded.service.search("WAL mode readers writer design decision", limit=10)
    assert response.results and response.flags == []
    for result in response.results:
        b = result.breakdown
        assert 0.0 <= b.dense <= 1.0 + 1e-6 and 0.0 <= b.lexical <= 1.0
        assert 0.0 <= b.identifier <= 1.0 and b.intent in (0.0, 1.0)
        expected = (
            weights.dense * b.dense
            + weights.lexical * b.lexical
            + weights.identifier * b.identifier
            + weights.intent * b.intent
            + weights.project * b.named_project
            + weights.file * b.named_file
            + weights.time * b.asked_time
            + weights.neighbour * b.neighbour
            + weights.says_when * b.says_when
            + weights.says_change * b.says_change
            + weights.speaker * b.speaker
        )
        assert result.score == pytest.approx(expected)
        assert b.sources and set(b.sources) <= {"dense", "lexical", "identifier"}
    assert response.results[0].memory.id == "wal"
    assert response.results[0].breakdown.intent == 1.0  # "decision" asks for decisions
    assert max(r.breakdown.lexical for r in response.results) == 1.0  # normalised
    scores = [r.score for r in response.results]
    assert scores == sorted(scores, reverse=True)


def test_a_search_over_every_project_prefers_the_project_it_names(engram: Any) -> None:
    for project in ("shop", "ops", "Ledger"):
        engram.service.add(
            {
                "id": f"release-{project.lower()}",
                "type": "workflow",
                "project": project,
                "content": "Cutting a release: bump the version, tag it, push the tag.",
            }
        )
    for query, named in (
        ("how do I cut an ops release", "release-ops"),
        ("ops's release steps", "release-ops"),
        ("cutting a release of shop/app.py", "release-shop"),
        ("cut a ledger release", "release-ledger"),  # "Ledger" as usually written
    ):
        response = engram.service.search(query)
        top = response.results[0]
        assert top.memory.id == named, query
        assert top.breakdown.named_project == 1.0
        assert all(r.breakdown.named_project == 0.0 for r in response.results[1:])
    plain = engram.service.search("how do I cut a release")
    assert all(r.breakdown.named_project == 0.0 for r in plain.results)
    scoped = engram.service.search("how do I cut an ops release", MemoryFilter(project="shop"))
    assert ids(scoped) == ["release-shop"]
    assert scoped.results[0].breakdown.named_project == 0.0


def test_a_search_over_every_project_prefers_the_project_its_words_imply(engram: Any) -> None:
    """No project named, but the words are one project's: its notes get the project
    prior; one distinctive word alone implies nothing."""
    notes = {
        "rustlib": [
            "Run clippy on every crate before pushing; cargo fmt too.",
            "The workspace has three crates; cargo test runs them all.",
            "Feature flags live in each crate's Cargo.toml.",
            "MSRV is checked by a cargo job on the oldest toolchain.",
        ],
        "webapp": [
            "The bundle is built by vite; npm run build writes dist/.",
            "Keep the bundle small: lazy-load the admin pages.",
            "npm ci in CI, never npm install.",
            "Environment variables reach the bundle only with a VITE_ prefix.",
        ],
    }
    for project, texts in notes.items():
        for n, text in enumerate(texts):
            engram.service.add({"id": f"{project}-{n}", "project": project, "content": text})
        engram.service.add(
            {
                "id": f"{project}-release",
                "type": "workflow",
                "project": project,
                "content": "Cutting a release: bump the version, tag it, push the tag.",
            }
        )
    implied = engram.service.search("how do releases of a crate get published with cargo")
    rust = [r for r in implied.results if r.memory.project == "rustlib"]
    assert rust and all(r.breakdown.named_project == 1.0 for r in rust)
    assert all(r.breakdown.named_project == 0.0 for r in implied.results if r not in rust)
    ranks = [r.memory.id for r in implied.results]
    assert ranks.index("rustlib-release") < ranks.index("webapp-release")
    one_word = engram.service.search("how are releases of a crate published")
    assert all(r.breakdown.named_project == 0.0 for r in one_word.results)


def test_a_search_over_every_project_draws_twice_the_candidates(
    loaded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    retriever = loaded.service.retriever
    pools: list[int] = []
    find = retriever._find_candidates

    def spy(query: str, identifiers: list[str], flt: MemoryFilter, pool: int, *rest: Any) -> Any:
        pools.append(pool)
        return find(query, identifiers, flt, pool, *rest)

    monkeypatch.setattr(retriever, "_find_candidates", spy)
    loaded.service.search("write-ahead log", limit=5)
    loaded.service.search("write-ahead log", MemoryFilter(project="engram"), limit=5)
    assert pools == [2 * retriever.candidates, retriever.candidates]


def test_a_plain_question_discounts_keyword_coincidences_a_code_name_does_not(
    engram: Any,
) -> None:
    from services.search.retrieval import PLAIN_QUESTION_MEANING_FLOOR as floor

    long_note = (
        "Quarterly planning notes: budget owners, hiring plan, office moves, vendor "
        "contracts, travel policy, laptop refresh, onboarding buddies, and the "
        "warm_cache job mentioned once in passing. "
    )
    engram.service.add({"id": "coincidence", "type": "fact", "content": long_note})
    engram.service.add(
        {"id": "about", "type": "fix", "content": "The cache warms at start; warm cache."}
    )
    plain = engram.service.search("why is the cache not warm", limit=10)
    coincidence = next(r for r in plain.results if r.memory.id == "coincidence")
    assert coincidence.breakdown.dense < floor
    for result in plain.results:
        assert result.breakdown.lexical <= result.breakdown.dense / floor + 1e-9
    assert plain.results[0].memory.id == "about"
    named = engram.service.search("who calls warm_cache", limit=10)
    hit = next(r for r in named.results if r.memory.id == "coincidence")
    assert hit.breakdown.matched_identifiers == ("warm_cache",)
    assert hit.breakdown.lexical > hit.breakdown.dense / floor  # kept whole


def _score_of(response: Any, memory_id: str) -> float:
    return next(r.score for r in response.results if r.memory.id == memory_id)


def _add_turns(engram: Any, turns: list[tuple[str, str, str]]) -> None:
    """Conversation turns (id, written at, content) as episodes of the project "chat"."""
    for memory_id, at, content in turns:
        engram.service.add(
            {"id": memory_id, "type": "episode", "project": "chat", "created_at": at,
             "content": content}
        )  # fmt: skip


def test_the_memory_written_after_a_question_follows_it(engram: Any) -> None:
    turns = [
        ("q1", "2023-05-08T13:56:00+00:00", "Tim: Who's your favorite basketball player?"),
        ("a1", "2023-05-08T13:56:01+00:00", "John: LeBron, no contest. Saw him in 2019."),
        ("x1", "2023-05-08T13:56:02+00:00", "Tim: Nice. I went hiking on Sunday."),
        ("q2", "2023-05-08T14:00:00+00:00", "John: What is your favorite basketball team?"),
        ("late", "2023-05-09T09:00:00+00:00", "Tim: The Celtics, since forever."),
    ]
    _add_turns(engram, turns)
    found = engram.service.search("favorite basketball player", MemoryFilter(project="chat"))
    order = ids(found)
    assert order.index("a1") == order.index("q1") + 1  # the answer follows its question
    (answer,) = [r for r in found.results if r.memory.id == "a1"]
    assert answer.follows == "q1"
    assert (
        "late" not in order
        or next(r for r in found.results if r.memory.id == "late").follows is None
    )  # written a day later: not taken for q2's answer
    plain = engram.service.search("hiking on Sunday", MemoryFilter(project="chat"))
    assert ids(plain)[0] == "x1" and plain.results[0].follows is None  # the best stays first


def test_a_turn_written_right_after_a_strong_hit_borrows_part_of_its_score(
    engram: Any,
) -> None:
    turns = [
        ("trip", "2023-11-10T18:00:00+00:00", "Tim: I saw a castle on my trip to the UK."),
        ("reply", "2023-11-10T18:00:04+00:00", "John: Wow, that architecture looks stunning!"),
        ("later", "2023-11-10T18:30:00+00:00", "Tim: Off to bed, night!"),
        ("far", "2023-11-14T09:00:00+00:00", "John: The new library's architecture is bland."),
    ]
    _add_turns(engram, turns)
    query = "castle trip UK architecture"
    found = engram.service.search(query, MemoryFilter(project="chat"))
    by_id = {r.memory.id: r for r in found.results}
    assert ids(found)[0] == "trip"
    assert by_id["reply"].breakdown.neighbour > 0  # written 4 s after the trip turn
    assert by_id["far"].breakdown.neighbour == 0.0  # days apart: no shared context
    assert "later" not in by_id or by_id["later"].breakdown.neighbour == 0.0  # 30 min on
    assert ids(found).index("reply") < ids(found).index("far")
    engram.retriever.weights = replace(engram.retriever.weights, neighbour=0.0)
    alone = engram.service.search(query, MemoryFilter(project="chat"))
    assert all(r.breakdown.neighbour == 0.0 for r in alone.results)
    lent = {r.memory.id: r.score for r in alone.results}["trip"]
    assert by_id["reply"].breakdown.neighbour == pytest.approx(lent)


def test_a_search_asking_what_holds_now_prefers_the_memory_worded_as_a_change(
    engram: Any,
) -> None:
    notes = [
        ("setup", "Dev env: `make install` sets up the environment and its lockfile."),
        ("moved", "Moved off pdm: the dev environment's `make install` runs uv sync."),
        ("docs", "The docs build runs from the dev environment with `make docs`."),
    ]
    for memory_id, content in notes:
        engram.service.add(
            {"id": memory_id, "type": "workflow", "project": "p", "content": content}
        )
    scoped = MemoryFilter(project="p")
    now = engram.service.search("how is the dev environment set up now", scoped)
    by_id = {r.memory.id: r for r in now.results}
    assert by_id["moved"].breakdown.says_change == 1.0
    assert by_id["setup"].breakdown.says_change == 0.0 == by_id["docs"].breakdown.says_change
    asked_still = engram.service.search("is the dev environment still set up with make?", scoped)
    assert {r.memory.id for r in asked_still.results if r.breakdown.says_change} == {"moved"}
    symptom = engram.service.search("the dev environment still breaks on make install", scoped)
    assert all(r.breakdown.says_change == 0.0 for r in symptom.results)  # no question
    engram.retriever.weights = replace(engram.retriever.weights, says_change=0.0)
    unweighted = engram.service.search("how is the dev environment set up now", scoped)
    assert all(r.breakdown.says_change == 0.0 for r in unweighted.results)
    assert _score_of(now, "moved") - _score_of(unweighted, "moved") == pytest.approx(0.1)  # μ


def test_a_question_naming_a_person_prefers_what_that_person_said(engram: Any) -> None:
    _add_turns(
        engram,
        [
            ("hers", "2023-07-01T10:00:00+00:00", "Caroline: I painted a sunrise over the lake."),
            ("his", "2023-07-01T10:05:00+00:00", "Melanie: Caroline painted a lake sunrise!"),
        ],
    )
    chat = MemoryFilter(project="chat")
    found = engram.service.search("What did Caroline paint at the lake?", chat)
    by_id = {r.memory.id: r for r in found.results}
    assert by_id["hers"].breakdown.speaker == 1.0 and by_id["his"].breakdown.speaker == 0.0
    assert ids(found)[0] == "hers"
    plain = engram.service.search("what was painted at the lake", chat)
    assert all(r.breakdown.speaker == 0.0 for r in plain.results)  # nobody named
    engram.retriever.weights = replace(engram.retriever.weights, speaker=0.0)
    unweighted = engram.service.search("What did Caroline paint at the lake?", chat)
    assert all(r.breakdown.speaker == 0.0 for r in unweighted.results)


def test_a_question_asking_when_prefers_the_memory_that_says_when(engram: Any) -> None:
    notes = [
        ("plans", "Caroline: The LGBTQ conference is all about support and community."),
        ("went", "Caroline: I went to an LGBTQ conference two days ago, so moving!"),
        ("art", "Caroline: I'm painting for the LGBTQ art show; the conference inspired it."),
    ]
    for number, (memory_id, content) in enumerate(notes):
        engram.service.add(
            {"id": memory_id, "type": "episode", "project": "chat", "content": content,
             "created_at": f"2023-07-0{number + 1}T10:00:00+00:00"}
        )  # fmt: skip
    when = engram.service.search("When did Caroline go to the LGBTQ conference?")
    by_id = {r.memory.id: r for r in when.results}
    assert by_id["went"].breakdown.says_when == 1.0  # "two days ago" says when
    assert by_id["plans"].breakdown.says_when == 0.0 and by_id["art"].breakdown.says_when == 0.0
    assert ids(when)[0] == "went"
    what = engram.service.search("What did Caroline think of the LGBTQ conference?")
    assert all(r.breakdown.says_when == 0.0 for r in what.results)  # not asking when
    engram.retriever.weights = replace(engram.retriever.weights, says_when=0.0)
    unweighted = engram.service.search("When did Caroline go to the LGBTQ conference?")
    assert all(r.breakdown.says_when == 0.0 for r in unweighted.results)
    assert _score_of(when, "went") - _score_of(unweighted, "went") == pytest.approx(0.1)  # θ


def test_a_question_naming_a_day_prefers_what_was_written_then(engram: Any) -> None:
    for memory_id, day in (
        ("before", "2022-11-02"),
        ("then", "2022-11-09"),
        ("after", "2022-11-20"),
    ):
        engram.service.add(
            {"id": memory_id, "type": "episode", "project": "p",
             "created_at": f"{day}T18:00:00+00:00",
             "content": "Made coconut ice cream at home; the sprinkles changed its color."}
        )  # fmt: skip
    found = engram.service.search("what dessert did I make on 9 November, 2022")
    assert ids(found)[0] == "then" and found.results[0].breakdown.asked_time == 1.0
    assert all(r.breakdown.asked_time == 0.0 for r in found.results[1:])
    month = engram.service.search("ice cream in November 2022")
    assert {r.memory.id for r in month.results if r.breakdown.asked_time} == {
        "before",
        "then",
        "after",
    }
    undated = engram.service.search("coconut ice cream sprinkles")
    assert all(r.breakdown.asked_time == 0.0 for r in undated.results)


def test_lexical_only_candidates_get_their_dense_similarity(loaded: Any) -> None:
    response = loaded.service.search("mainframe", MemoryFilter(mode=RetrievalMode.DEEP))
    (result,) = [r for r in response.results if r.memory.id == "cold"]
    assert result.breakdown.lexical == 1.0
    assert result.breakdown.dense > 0.0


def test_modes(loaded: Any) -> None:
    dense = loaded.service.search("WAL mode readers", kind=RetrieverKind.DENSE)
    assert dense.results and all(r.breakdown.lexical == 0.0 for r in dense.results)
    assert all(r.score == r.breakdown.dense for r in dense.results)
    assert dense.metrics.lexical_count == 0 and dense.metrics.dense_count > 0
    lexical = loaded.service.search("WAL mode readers", kind=RetrieverKind.LEXICAL)
    assert lexical.results[0].memory.id == "wal"
    assert all(r.breakdown.dense == 0.0 for r in lexical.results)
    assert all(r.score == r.breakdown.lexical for r in lexical.results)
    assert lexical.metrics.dense_count == 0 and lexical.metrics.embed_ms == 0.0
    assert ids(loaded.service.search("zzzunknownword", kind=RetrieverKind.LEXICAL)) == []
    hybrid = loaded.service.search("WAL mode readers")
    assert hybrid.metrics.dense_count > 0 and hybrid.metrics.lexical_count > 0


def test_limit(loaded: Any) -> None:
    assert len(loaded.service.search("the", limit=2, kind=RetrieverKind.DENSE).results) == 2


def test_results_are_one_per_memory(engram: Any) -> None:
    body = "\n\n".join(
        f"Kiwi section {i}: kiwi growers prune kiwi vines. " + "filler " * 150 for i in range(10)
    )
    memory = engram.service.add({"content": body, "title": "Kiwi handbook"})
    engram.service.add({"content": "A short kiwi note."})
    assert len(engram.store.chunks(memory.id)) > 3
    for kind in RetrieverKind:
        response = engram.service.search("kiwi growers prune vines", kind=kind)
        assert len(ids(response)) == len(set(ids(response))) == 2, kind
    hybrid = engram.service.search("kiwi section 9")
    best = next(r for r in hybrid.results if r.memory.id == memory.id)
    assert best.breakdown.best_chunk >= 0
    assert "section 9" in engram.store.chunks(memory.id)[best.breakdown.best_chunk].text.lower()


@pytest.mark.parametrize(
    ("flt", "allowed"),
    [
        (MemoryFilter(project="ops"), {"deploy"}),
        (MemoryFilter(project="shop"), {"refund", "wal", "naming", "ident"}),
        (MemoryFilter(types=(MemoryType.DECISION, MemoryType.FACT)), {"wal"}),
        (MemoryFilter(tags=("release",)), {"deploy"}),
        (MemoryFilter(mode=RetrievalMode.REFLEXIVE), set()),
        (
            MemoryFilter(mode=RetrievalMode.DEEP),
            {"refund", "wal", "naming", "ident", "deploy", "cold", "old"},
        ),
        (MemoryFilter(min_confidence=0.6), set()),
    ],
)
@pytest.mark.parametrize("kind", list(RetrieverKind))
def test_filters_apply_to_every_retriever(
    loaded: Any, flt: MemoryFilter, allowed: set[str], kind: RetrieverKind
) -> None:
    query = (
        "SQLite WAL journal refund payments snake case deploys staging ledger "
        "mainframe refund_payment"
    )
    found = set(ids(loaded.service.search(query, flt, limit=50, kind=kind)))
    assert found <= allowed
    if kind is not RetrieverKind.DENSE or flt.project is not None:
        assert found == allowed


def test_record_retrieval_bumps_counters(loaded: Any) -> None:
    response = loaded.service.search("refund worker", limit=1, record_retrieval=True)
    (top,) = response.results
    after = loaded.store.get(top.memory.id)
    assert after.retrieval_count == 1 and after.last_accessed is not None
    loaded.service.search("refund worker", limit=1)
    assert loaded.store.get(top.memory.id).retrieval_count == 1


# --- fallbacks --------------------------------------------------------------------------------


def test_broken_embedder_falls_back_to_lexical_and_catches_up_later(data_dir: Path) -> None:
    broken = open_engram(data_dir, embedder=BrokenEmbedder())
    try:
        memory = broken.service.add({"content": "Quokkas nap in the afternoon shade."})
        assert broken.store.get(memory.id) == memory  # stored despite the embedder
        assert broken.store.pending_count("test-hash") == 1
        response = broken.service.search("quokkas shade")
        assert ids(response) == [memory.id]
        assert {"embedder_unavailable", "fallback_lexical"} <= set(response.flags)
        result = response.results[0]
        assert result.breakdown.dense == 0.0 and result.breakdown.sources == ("lexical",)
        assert result.score == pytest.approx(broken.retriever.weights.lexical)
        dense = broken.service.search("quokkas", kind=RetrieverKind.DENSE)
        assert dense.results == [] and "embedder_unavailable" in dense.flags
        assert broken.indexer.process_pending() == 0  # still broken: stays queued
        assert broken.store.pending_count("test-hash") == 1
        broken.metrics.flush()
        flags = [json.loads(row.flags) for row in SearchMetricRow.select()]
        assert ["embedder_unavailable", "fallback_lexical"] in flags
    finally:
        broken.close()

    fixed = open_engram(data_dir, embedder=HashEmbedder())
    try:
        waiting = fixed.service.search("quokkas shade")  # no vector yet to judge it by
        assert ids(waiting) == [memory.id] and waiting.results[0].breakdown.lexical == 1.0
        assert fixed.indexer.process_pending() == 1
        assert fixed.store.pending_count("test-hash") == 0
        response = fixed.service.search("quokkas afternoon", kind=RetrieverKind.DENSE)
        assert ids(response) == [memory.id] and response.flags == []
        assert fixed.service.search("quokkas").flags == []
    finally:
        fixed.close()


def test_dropped_fts_falls_back_to_dense(loaded: Any, data_dir: Path) -> None:
    loaded.store.database.execute_sql("DROP TABLE memory_fts")
    response = loaded.service.search("exponential backoff payments")
    assert "fts_unavailable" in response.flags
    assert ids(response)[0] == "refund"
    assert all(r.breakdown.lexical == 0.0 for r in response.results)
    assert all("lexical" not in r.breakdown.sources for r in response.results)
    lexical = loaded.service.search("refund", kind=RetrieverKind.LEXICAL)
    assert lexical.results == [] and "fts_unavailable" in lexical.flags
    # writes still work without the lexical index
    added = loaded.service.add({"content": "Narwhals are whales with a tusk."})
    assert ids(loaded.service.search("narwhals tusk", kind=RetrieverKind.DENSE))[0] == added.id
    # and a rebuild brings the lexical side back
    assert loaded.store.rebuild_fts() == len(CORPUS) + 1
    response = loaded.service.search("narwhals tusk")
    assert response.flags == [] and ids(response)[0] == added.id
    assert "lexical" in response.results[0].breakdown.sources


# --- metrics ------------------------------------------------------------------------------------


def test_search_metrics_are_recorded_and_summarised(loaded: Any) -> None:
    before = SearchMetricRow.select().count()
    loaded.service.search("refund payments")
    loaded.service.search("WAL", kind=RetrieverKind.LEXICAL)
    loaded.service.search("nothing matches zzzqqq", kind=RetrieverKind.LEXICAL)
    assert SearchMetricRow.select().count() == before  # buffered off the search path
    loaded.metrics.flush()
    rows = list(SearchMetricRow.select().order_by(SearchMetricRow.id))[before:]
    assert [r.retriever for r in rows] == ["hybrid", "lexical", "lexical"]
    assert [r.query_chars for r in rows] == [15, 3, 22]
    assert rows[0].dense_count > 0 and rows[0].top_similarity is not None
    assert rows[0].total_ms >= rows[0].embed_ms >= 0
    assert rows[2].result_count == 0
    summary = loaded.metrics.summary()
    assert summary["searches"] == before + 3
    assert summary["by_retriever"]["lexical"] == 2
    assert summary["empty_searches"] >= 1
    assert summary["latency_ms"]["p95"] >= summary["latency_ms"]["p50"] > 0
    assert summary["results_mean"]["returned"] > 0
    assert 0 < summary["top_similarity_mean"] <= 1.0
    columns = {c.name for c in loaded.store.database.get_columns("search_metric")}
    assert "query" not in columns  # no query text is stored


def test_summary_of_nothing(engram: Any) -> None:
    summary = engram.metrics.summary(days=7)
    assert summary["searches"] == 0 and summary["days"] == 7
    assert summary["latency_ms"]["p50"] == 0.0 and summary["top_similarity_mean"] is None


def test_metrics_older_than_the_retention_are_pruned(engram: Any) -> None:
    now = datetime.now(UTC)

    def row(age_days: float) -> None:
        values = dict(SearchMetrics("hybrid", "standard", 5).__dict__, flags="[]")
        SearchMetricRow.insert(at=(now - timedelta(days=age_days)).isoformat(), **values).execute()

    row(45)
    row(31)
    row(29)
    row(1)
    assert SearchMetricRow.select().count() == 4
    log = SearchMetricsLog(retention_days=30)
    log.record(SearchMetrics("lexical", "standard", 3))
    log.flush()
    ages = sorted(
        round((now - datetime.fromisoformat(r.at)) / timedelta(days=1))
        for r in SearchMetricRow.select()
    )
    assert ages == [0, 1, 29]
    assert log.summary()["searches"] == 3
    assert log.summary(days=2)["searches"] == 2


def test_metrics_are_written_in_batches(engram: Any) -> None:
    log = SearchMetricsLog(batch_size=3)
    for _ in range(2):
        log.record(SearchMetrics("hybrid", "standard", 4))
    assert SearchMetricRow.select().count() == 0
    log.record(SearchMetrics("hybrid", "standard", 4))
    assert SearchMetricRow.select().count() == 3


def test_repeated_queries_reuse_their_vector(engram: Any) -> None:
    engram.service.add({"content": "Blue-green deploys switch the router last."}, "p")
    embedder = engram.retriever.embedder
    before = embedder.calls
    first = engram.service.search("how do blue-green deploys switch?")
    second = engram.service.search("how do blue-green deploys switch?")
    assert embedder.calls == before + 1
    assert ids(first) == ids(second)
    engram.service.search("something else entirely")
    assert embedder.calls == before + 2


def test_a_note_about_a_family_of_names_matches_a_member(engram: Any) -> None:
    """`c.Bind*` in a note names `c.BindJSON` in a question."""
    engram.service.add(
        {"id": "family", "content": "On failure `c.Bind*` aborts with a plain 400.", "project": "g"}
    )
    engram.service.add({"id": "other", "content": "Handlers return JSON errors.", "project": "g"})
    found = engram.service.search("why does c.BindJSON answer 400")
    family = next(r for r in found.results if r.memory.id == "family")
    assert family.breakdown.matched_identifiers == ("c.BindJSON",)
    assert ids(found)[0] == "family"


def test_a_long_memory_does_not_crowd_others_out_of_dense_hits(engram: Any) -> None:
    """Every chunk of a pasted log is nearer a query about its subject than the short
    notes on it are; the notes still come back (the nearest vectors are asked for again,
    more of them)."""
    log = "\n\n".join(
        "worker timeout " * 40 + " ".join(f"pid{i}x{j}" for j in range(60)) for i in range(150)
    )
    engram.service.add({"id": "log", "type": "episode", "content": log})
    for i in range(12):
        note = f"the worker timeout of service {i} is set in the deploy config"
        engram.service.add({"id": f"n{i}", "type": "fact", "content": note})
    assert len(engram.store.chunks("log")) > 100
    found = ids(engram.service.search("worker timeout", limit=10, kind=RetrieverKind.DENSE))
    assert len(found) == 10
    assert len(set(found) - {"log"}) >= 9


def test_a_memory_holding_the_query_line_as_written_is_the_best_keyword_hit(
    engram: Any,
) -> None:
    """A line quoted from deep in a pasted log: BM25 weighs the log by its length, so
    notes sharing one word of it had outranked the log by keywords (with MiniLM, a new
    user's 3 MB log went from 5th to 1st)."""
    lines = [f"12:00:{i % 60:02d} [vite] hmr update /src/c{i}.vue page reload" for i in range(6000)]
    lines[5000] = "Error: ENOSPC: System limit for number of file watchers reached, watch '/repo'"
    engram.service.add({"id": "log", "type": "episode", "content": "\n".join(lines)})
    notes = ["The chunk size limit is 500 kB.", "Our file limit is 4096 watchers."]
    for i, note in enumerate(notes):
        engram.service.add({"id": f"n{i}", "type": "fact", "content": note})
    found = engram.service.search("System limit for number of file watchers reached")
    log = next(r for r in found.results if r.memory.id == "log")
    assert (log.breakdown.lexical, log.breakdown.identifier) == (1.0, 1.0)
    assert all(r.breakdown.identifier == 0.0 for r in found.results if r.memory.id != "log")
    short = engram.service.search("watchers limit")  # too few words to be a quoted line
    assert all(r.breakdown.identifier == 0.0 for r in short.results)
