"""The personal profile: kept only with consent; revoking deletes it from SQLite and
from Chroma."""

from __future__ import annotations

import pytest

from app.composition import Engram
from services.errors import UserInputError
from services.knowledge.profile import PROFILE_ID, ProfileStore, render_profile
from services.types import Scope


def vector_ids(engram: Engram) -> set[str]:
    by_collection = engram.vectors.memory_ids(engram.embedder.model_id)
    return set().union(*by_collection.values()) if by_collection else set()


def test_render_keeps_field_order_and_skips_empty() -> None:
    text = render_profile({"notes": "n", "style": "small PRs", "goals": "  "})
    assert text == "Coding style: small PRs\nNotes: n"


def test_saving_needs_consent(engram: Engram) -> None:
    store = ProfileStore(engram.service)
    with pytest.raises(UserInputError, match="consent"):
        store.save({"style": "tabs"}, consent=False)
    assert store.load() == {} and store.text() is None
    assert PROFILE_ID not in engram.store.all_ids()


def test_save_embeds_and_revoke_deletes_everywhere(engram: Engram) -> None:
    store = ProfileStore(engram.service)
    store.save({"style": "Type hints everywhere", "languages": "Python, Go"}, consent=True)
    memory = engram.store.get(PROFILE_ID)
    assert memory.scope is Scope.USER_PRIVATE
    assert "Preferred languages: Python, Go" in memory.content
    assert PROFILE_ID in vector_ids(engram)
    store.save({"style": "Small functions"}, consent=True)  # an edit re-embeds
    assert engram.store.get(PROFILE_ID).content == "Coding style: Small functions"
    assert store.load() == {"style": "Small functions"}

    store.revoke()
    assert PROFILE_ID not in engram.store.all_ids()
    assert PROFILE_ID not in vector_ids(engram)
    assert store.load() == {} and store.text() is None


def test_unknown_fields_are_refused(engram: Engram) -> None:
    with pytest.raises(UserInputError, match="unknown profile fields: mood"):
        ProfileStore(engram.service).save({"mood": "x"}, consent=True)
