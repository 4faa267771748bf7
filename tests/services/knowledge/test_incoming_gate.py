"""The knowledge writers that keep user text apart from the memory — lesson parts and
refinement reasons, profile fields, project context — redact it before it is stored,
with the gate the memory service holds (so the settings apply to them too)."""

from __future__ import annotations

import random
from collections import Counter

from app.composition import Engram
from services.knowledge.lessons import add_lesson, get_lesson, refine, versions
from services.knowledge.profile import ProfileStore
from services.knowledge.project_context import history, load, save
from services.text.incoming import IncomingText
from services.text.redact import Redactor
from tests.services.text.fake_secrets import sample

RNG = random.Random(99)
GITHUB = sample("github-token", RNG).secret
STRIPE = sample("stripe-key", RNG).secret
PASSWORD = "Wint3r-is-c0ming"


def database_text(engram: Engram) -> str:
    return "\n".join(engram.store.database.connection().iterdump())


def test_lesson_parts_and_reasons_are_redacted(engram: Engram) -> None:
    found: Counter[str] = Counter()
    lesson = add_lesson(
        engram.service,
        "the deploy bot fails",
        f"export GITHUB_TOKEN={GITHUB} before running it",
        f"the old token expired; DB_PASSWORD={PASSWORD} was fine",
        redacted=found,
    )
    assert lesson.action == "export GITHUB_TOKEN=[redacted:github-token] before running it"
    assert found == {"github-token": 1, "password": 1}
    refine(
        engram.service,
        lesson.memory_id,
        {"action": f"use the app token {STRIPE} instead"},
        reason=f"rotated after {GITHUB} leaked",
    )
    current = get_lesson(engram.store, lesson.memory_id)
    assert current.action == "use the app token [redacted:stripe-key] instead"
    assert versions(engram.store, lesson.memory_id)[-1].reason == (
        "rotated after [redacted:github-token] leaked"
    )
    dump = database_text(engram)
    for secret in (GITHUB, STRIPE, PASSWORD):
        assert secret not in dump


def test_profile_fields_are_redacted(engram: Engram) -> None:
    store = ProfileStore(engram.service)
    found: Counter[str] = Counter()
    text = store.save(
        {"notes": f"my npm login is in ~/.npmrc; GH token {GITHUB}", "style": "small PRs"},
        consent=True,
        redacted=found,
    )
    assert GITHUB not in text and "[redacted:github-token]" in store.load()["notes"]
    assert found == {"github-token": 1}
    assert GITHUB not in database_text(engram)


def test_project_context_is_redacted_notes_lists_and_catalogue(engram: Engram) -> None:
    found: Counter[str] = Counter()
    saved, entry = save(
        engram.store,
        "shop",
        notes=f"staging DATABASE_URL=postgres://shop:{PASSWORD}@db:5432/shop",
        todos=[f"revoke {GITHUB}", "ship the refund fix"],
        catalogue={"stripe": {"secret_key": STRIPE, "mode": "live"}, "port": 8080},
        incoming=engram.service.incoming,
        redacted=found,
    )
    assert saved.todos == ["revoke [redacted:github-token]", "ship the refund fix"]
    assert saved.catalogue == {
        "stripe": {"secret_key": "[redacted:stripe-key]", "mode": "live"},
        "port": 8080,
    }
    assert found == {"password": 1, "github-token": 1, "stripe-key": 1}
    assert load(engram.store, "shop") == saved
    assert history(engram.store, "shop")[0].catalogue_sha256 == entry.catalogue_sha256
    dump = database_text(engram)
    for secret in (GITHUB, STRIPE, PASSWORD):
        assert secret not in dump


def test_the_services_gate_settings_reach_the_writers(engram: Engram) -> None:
    engram.service.incoming = IncomingText(Redactor([r"TICKET-\d+"]))
    lesson = add_lesson(engram.service, "a TICKET-42 comes in", "triage it the same day")
    assert lesson.trigger == "a [redacted:custom] comes in"
    engram.service.incoming = IncomingText(redactor=None)
    kept = add_lesson(engram.service, "with redaction off", f"{GITHUB} stays")
    assert kept.action == f"{GITHUB} stays"
