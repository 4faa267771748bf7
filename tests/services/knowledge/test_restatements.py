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
