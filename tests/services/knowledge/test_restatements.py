"""The restatement scorer: one incident recorded twice, as a pitfall and as a lesson."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.knowledge import restatements
from services.knowledge.restatements import (
    Vocabulary,
    restatement_features,
    restatement_probability,
    tokens,
)
from services.rem.ops import duplicates
from services.vectors.embeddings.onnx_minilm import OnnxMiniLMEmbedder
from tests.services.builders import make_memory

PITFALL = make_memory(
    "CI broke on every template test:\n```\nValueError: Missing staticfiles manifest "
    "entry for 'css/site.css'\n```\nThe test settings inherit ManifestStaticFilesStorage "
    "and nobody runs collectstatic in the test job.",
    id="pitfall",
    type="pitfall",
    title="template tests fail on the manifest",
    project="shop",
    file_refs=["shop/settings.py"],
    created_at="2026-03-02T10:00:00Z",
)
LESSON = make_memory(
    "lesson: with the manifest storage every {% static %} lookup needs collectstatic "
    "first, otherwise it raises 'Missing staticfiles manifest entry'. Test settings now "
    "use the plain StaticFilesStorage backend.",
    id="lesson",
    type="lesson",
    title="static files in tests",
    project="shop",
    file_refs=["shop/settings.py"],
    created_at="2026-04-20T10:00:00Z",
)
OTHER = make_memory(
    "New models get BigAutoField ids: DEFAULT_AUTO_FIELD is set once in settings, so "
    "do not declare an id field by hand.",
    id="other",
    type="convention",
    title="primary keys",
    project="shop",
    file_refs=["shop/settings.py"],
    created_at="2026-03-10T10:00:00Z",
)
FILLER = [
    make_memory(text, id=f"filler-{n}", type=kind, project="shop", title=title)
    for n, (kind, title, text) in enumerate(
        [
            ("workflow", "release", "Tag the release, then the deploy job builds the image."),
            ("decision", "payments", "Payments go through the Stripe webhook, never polling."),
            ("pitfall", "timezone", "Naive datetimes in reports shift by an hour in March."),
            ("fix", "slow admin", "The order admin listing needed list_select_related."),
            ("convention", "tests", "Factories live next to the tests that use them."),
        ]
    )
]
NOTES = [PITFALL, LESSON, OTHER, *FILLER]


def test_tokens_keep_fenced_code_and_drop_trailing_punctuation() -> None:
    found = tokens(PITFALL)
    assert {"valueerror", "staticfiles", "manifeststaticfilesstorage", "collectstatic"} <= found
    assert "css/site.css" in found
    assert not any(t.endswith((".", "/", "-")) for t in found)


def test_the_features_read_shared_files_rare_words_and_kinds() -> None:
    vocabulary = Vocabulary(NOTES)
    same = restatement_features(PITFALL, LESSON, vocabulary)
    assert same["files_shared"] == 1.0 and same["files_jaccard"] == 1.0
    assert same["both_problem"] == 1.0 and same["both_rule"] == 0.0
    assert same["rare_shared"] >= 4  # manifest, staticfiles, collectstatic, entry, ...
    other = restatement_features(PITFALL, OTHER, vocabulary)
    assert other["both_problem"] == 0.0 and other["both_rule"] == 0.0
    assert other["rare_shared"] < same["rare_shared"]
    assert other["idf_jaccard"] < same["idf_jaccard"]


def test_a_quantity_told_differently_is_never_a_restatement() -> None:
    assert restatement_probability({"cosine": 1.0, "quantity_clash": 1.0}) == 0.0


@given(st.text(max_size=400), st.text(max_size=80))
def test_tokens_of_any_text_are_lower_case_and_clean(content: str, title: str) -> None:
    memory = make_memory(f"x {content}", title=f"t {title}")
    for token in tokens(memory):
        assert token == token.lower() and len(token) >= 1
        assert not token.endswith((".", "/", "-"))


@pytest.fixture(scope="module")
def vectors() -> dict[str, np.ndarray]:
    texts = [f"{m.title}\n{m.content}" for m in NOTES]
    embedded = OnnxMiniLMEmbedder().embed(texts)
    return {m.id: np.asarray(v, dtype=np.float32) for m, v in zip(NOTES, embedded, strict=True)}


def test_an_incident_told_twice_is_proposed_as_a_duplicate(
    vectors: dict[str, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real embedder, real fitted weights: the pitfall and the later lesson are one
    incident; the convention sharing their settings file is not."""
    proposed = {(p.a, p.b) for p in duplicates.scored_pairs(NOTES, vectors)}
    assert ("lesson", "pitfall") in proposed
    assert not any("other" in pair for pair in proposed)
    # the duplicate scorer fitted on one set (one type per duplicate) does not find it
    monkeypatch.setattr(duplicates, "RESTATEMENT_THRESHOLD", 2.0)
    assert ("lesson", "pitfall") not in {
        (p.a, p.b) for p in duplicates.scored_pairs(NOTES, vectors)
    }


def test_the_weights_name_every_feature_they_read() -> None:
    from services.knowledge.pair_features import FEATURES

    read = set(FEATURES) - set(restatements.LEFT_OUT) | set(restatements.EXTRA_FEATURES)
    assert set(restatements.restatement_weights.WEIGHTS) == read


def test_a_restatement_written_the_same_day_is_proposed_too(
    vectors: dict[str, np.ndarray],
) -> None:
    """The sets' authors dated restatements months apart; people restate the same day."""
    same_day = replace(LESSON, created_at=PITFALL.created_at, valid_from=PITFALL.valid_from)
    notes = [PITFALL, same_day, OTHER, *FILLER]
    proposed = {(p.a, p.b) for p in duplicates.scored_pairs(notes, vectors)}
    assert ("lesson", "pitfall") in proposed


SLEEP_PITFALL = make_memory(
    "Calling `std::thread::sleep` inside an async fn blocks the whole worker thread: "
    "every other task on it stalls until it returns. Use `tokio::time::sleep(...).await`, "
    "or move blocking work into `tokio::task::spawn_blocking`.",
    id="sleep-pitfall",
    type="pitfall",
    title="sleeping in async code",
    project="shop",
    created_at="2024-03-02T10:00:00Z",
)
SLEEP_LESSON = make_memory(
    "Retro: the stalled websocket pings came from `std::thread::sleep` in a handler. It "
    "freezes the worker thread for every task. Use `tokio::time::sleep` or "
    "`spawn_blocking` for anything that blocks.",
    id="sleep-lesson",
    type="lesson",
    title="sleeping in async code",
    project="shop",
    created_at="2025-09-20T10:00:00Z",
)
TOLD_TWICE = [SLEEP_PITFALL, SLEEP_LESSON, OTHER, *FILLER]


def _judge_texts(notes: list) -> tuple:
    from services.knowledge.conflict_scan import idf_weights
    from services.knowledge.contradictions import reading_of
    from services.knowledge.cues import compare
    from services.knowledge.pair_features import features, read_pair_text

    readings = {m.id: reading_of(m) for m in notes}
    weights = idf_weights(readings.values())
    texts = (read_pair_text(SLEEP_PITFALL), read_pair_text(SLEEP_LESSON))
    cues = compare(readings[SLEEP_PITFALL.id], readings[SLEEP_LESSON.id], weights)
    return texts, (lambda cosine: features(*texts, cosine, cues, weights))


def test_an_incident_told_again_under_its_title_is_no_conflict_when_the_restatement_is_surer(
    told_twice_vectors: dict[str, np.ndarray],
) -> None:
    """A pitfall and the lesson written a year later under the same title read to the
    conflict scorer (fitted where people keep a topic's title to write what changed) as
    a replacement; the restatement scorer, which reads the project's rare words, is
    surer that they tell one thing."""
    from services.knowledge.conflict_scorer import is_conflict

    texts, features_at = _judge_texts(TOLD_TWICE)
    v = told_twice_vectors
    pair = features_at(float(v["sleep-pitfall"] @ v["sleep-lesson"]))
    restated = restatements.restatement_of(
        SLEEP_PITFALL, SLEEP_LESSON, pair, Vocabulary(TOLD_TWICE)
    )
    assert is_conflict(pair, texts)[0]  # the conflict scorer alone flags it
    assert not is_conflict(pair, texts, restated=restated)[0]
    proposed = {(p.a, p.b) for p in duplicates.scored_pairs(TOLD_TWICE, told_twice_vectors)}
    assert ("sleep-lesson", "sleep-pitfall") in proposed


def test_the_surer_scorer_decides_between_a_restatement_and_a_conflict() -> None:
    from services.knowledge.conflict_scorer import THRESHOLD, restatement_claims

    bar = restatements.RESTATEMENT_THRESHOLD
    assert not restatement_claims(bar - 0.01, 0.0)  # below its own bar: never
    assert restatement_claims(0.99, THRESHOLD)  # far past its bar, the conflict just at it
    assert not restatement_claims(min(0.999, bar + 0.01), 0.9999)  # the conflict is surer
    assert restatement_claims(min(0.999, bar + 0.01), 0.9999, any_claim_wins=True)


@pytest.fixture(scope="module")
def told_twice_vectors() -> dict[str, np.ndarray]:
    texts = [f"{m.title}\n{m.content}" for m in TOLD_TWICE]
    embedded = OnnxMiniLMEmbedder().embed(texts)
    return {
        m.id: np.asarray(v, dtype=np.float32) for m, v in zip(TOLD_TWICE, embedded, strict=True)
    }


def test_a_scan_reads_restatements_only_over_a_project_it_read_whole() -> None:
    """Rare words are rare within a project: a pair judged alone (queued on write, no
    scan around it) has no vocabulary to read them from, so no restatement claim."""
    from services.knowledge.conflict_scan import Scan

    _, features_at = _judge_texts(TOLD_TWICE)
    pair = features_at(0.8)
    alone = Scan(memories={m.id: m for m in (SLEEP_PITFALL, SLEEP_LESSON)})
    assert alone.restated(SLEEP_PITFALL, SLEEP_LESSON, pair) is None
    scanned = Scan(memories={m.id: m for m in TOLD_TWICE}, scanned=True)
    read = scanned.restated(SLEEP_PITFALL, SLEEP_LESSON, pair)
    assert read == restatements.restatement_of(
        SLEEP_PITFALL, SLEEP_LESSON, pair, Vocabulary(TOLD_TWICE)
    )
