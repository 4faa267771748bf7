"""Lessons with versions: a lesson is a memory (searchable, embedded) with structured
parts; refine snapshots the current state before changing it, in one transaction;
versions oldest to newest; preference pairs of consecutive versions; the backfill of
older lesson memories (`[vN]` notes become earlier versions) is idempotent, in the
migration and on demand."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.errors import NotFoundError, UserInputError
from services.knowledge.lessons import (
    add_lesson,
    backfill_lessons,
    get_lesson,
    preference_pairs,
    refine,
    versions,
)
from services.storage.lessons import backfill
from services.storage.memories import MemoryStore
from services.storage.migrations import MIGRATIONS, migrate
from services.text.lesson_text import LessonParts, parse_lesson, render, split_notes
from tests.services.builders import make_memory


def _engram(engram: object) -> Any:
    return engram


def test_a_lesson_is_a_searchable_embedded_memory_at_version_1(engram: object) -> None:
    e = _engram(engram)
    lesson = add_lesson(
        e.service,
        "deploying the shop",
        "run the migrations before restarting the workers",
        "old workers crash on the new schema",
        tags=["deploy"],
        project="shop",
        session_id="s-1",
    )
    memory = e.store.get(lesson.memory_id)
    assert memory.type.value == "lesson" and memory.project == "shop"
    assert memory.content == (
        "When deploying the shop: run the migrations before restarting the workers. "
        "Why: old workers crash on the new schema."
    )
    assert (
        memory.title == "When deploying the shop: run the migrations before restarting the workers"
    )
    assert lesson.memory_id in e.store.embedded_ids(e.embedder.model_id)
    assert [h.memory_id for h in e.store.lexical("restarting workers", 5)] == [lesson.memory_id]
    (first,) = versions(e.store, lesson.memory_id)
    assert (first.version, first.reason, first.session_id, first.current) == (
        1,
        "added",
        "s-1",
        True,
    )
    assert first.tags == ["deploy"]
    assert get_lesson(e.store, lesson.memory_id) == lesson


def test_refine_snapshots_the_current_state_before_changing_it(engram: object) -> None:
    e = _engram(engram)
    lesson = add_lesson(e.service, "deploying", "restart the workers", tags=["deploy"])
    # Changed outside refine since v1 was recorded: the snapshot takes the state as it is.
    e.service.edit(lesson.memory_id, {"tags": ["deploy", "ops"]})
    refined = refine(
        e.service,
        lesson.memory_id,
        {"action": "run the migrations first, then restart the workers"},
        reason="workers crashed on the old schema",
        session_id="s-2",
    )
    assert refined.version == 2 and refined.trigger == "deploying"
    old, new = versions(e.store, lesson.memory_id)
    assert (old.version, old.action, old.tags, old.reason) == (
        1,
        "restart the workers",
        ["deploy", "ops"],
        "added",
    )
    assert not old.current and new.current
    assert (new.version, new.reason, new.session_id) == (
        2,
        "workers crashed on the old schema",
        "s-2",
    )
    assert new.action == "run the migrations first, then restart the workers"
    memory = e.store.get(lesson.memory_id)
    assert memory.content == "When deploying: run the migrations first, then restart the workers."
    # The keyword index and the vectors follow the new text.
    assert [h.memory_id for h in e.store.lexical("migrations", 5)] == [lesson.memory_id]
    assert lesson.memory_id in e.store.embedded_ids(e.embedder.model_id)


def test_refine_is_one_transaction(engram: object, monkeypatch: pytest.MonkeyPatch) -> None:
    e = _engram(engram)
    lesson = add_lesson(e.service, "deploying", "restart the workers")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(e.service, "edit", broken)
    with pytest.raises(RuntimeError):
        refine(e.service, lesson.memory_id, {"action": "migrate first"}, reason="crash")
    monkeypatch.undo()
    assert get_lesson(e.store, lesson.memory_id) == lesson
    assert [v.version for v in versions(e.store, lesson.memory_id)] == [1]
    assert e.store.get(lesson.memory_id).content == "When deploying: restart the workers."


def test_refine_refuses_what_it_cannot_do(engram: object) -> None:
    e = _engram(engram)
    lesson = add_lesson(e.service, "deploying", "restart the workers")
    fact = e.service.add({"content": "The shop runs on Postgres."})
    with pytest.raises(UserInputError, match="not a lesson"):
        refine(e.service, fact.id, {"action": "x"}, reason="r")
    with pytest.raises(NotFoundError):
        refine(e.service, "missing-1", {"action": "x"}, reason="r")
    with pytest.raises(UserInputError, match="changes nothing"):
        refine(e.service, lesson.memory_id, {"action": "restart  the workers"}, reason="r")
    with pytest.raises(UserInputError, match="reason is empty"):
        refine(e.service, lesson.memory_id, {"action": "migrate"}, reason=" ")
    with pytest.raises(UserInputError, match="has no colour"):
        refine(e.service, lesson.memory_id, {"colour": "red"}, reason="r")
    with pytest.raises(UserInputError, match="action is empty"):
        add_lesson(e.service, "deploying", "  ")
    assert [v.version for v in versions(e.store, lesson.memory_id)] == [1]


def test_preference_pairs_of_consecutive_versions(engram: object) -> None:
    e = _engram(engram)
    lesson = add_lesson(e.service, "deploying", "restart the workers", project="shop")
    refine(e.service, lesson.memory_id, {"action": "migrate, then restart"}, reason="crash")
    refine(e.service, lesson.memory_id, {"tags": ["deploy"]}, reason="tagging")  # same answer
    refine(
        e.service,
        lesson.memory_id,
        {"trigger": "deploying the shop", "rationale": "old workers crash"},
        reason="say why",
        session_id="s-9",
    )
    add_lesson(e.service, "reviewing", "read the tests first")  # one version: no pair
    pairs = preference_pairs(e.store)
    assert pairs == [
        {
            "prompt": "deploying",
            "chosen": "migrate, then restart",
            "rejected": "restart the workers",
            "lesson_id": lesson.memory_id,
            "project": "shop",
            "from_version": 1,
            "to_version": 2,
            "reason": "crash",
            "session_id": None,
        },
        {
            "prompt": "deploying the shop",
            "chosen": "migrate, then restart\nWhy: old workers crash",
            "rejected": "migrate, then restart",
            "lesson_id": lesson.memory_id,
            "project": "shop",
            "from_version": 3,
            "to_version": 4,
            "reason": "say why",
            "session_id": "s-9",
        },
    ]
    assert preference_pairs(e.store, project="elsewhere") == []


# -- backfill ---------------------------------------------------------------------------

OLD_LESSONS = [
    {
        "id": "old-versions",
        "type": "lesson",
        "title": "When deploying, run the migrations first.",
        "content": "When deploying, run the migrations first. Why: old workers crash on the "
        "new schema. [v1] When deploying: restart the workers [v2] restart the workers, then "
        "run the migrations",
        "tags": ["deploy"],
    },
    {
        "id": "old-plain",
        "type": "lesson",
        "title": "Lesson: httpx",
        "content": "Renaming things in httpx is cheap now and expensive later.",
    },
    {"id": "old-if", "type": "lesson", "content": "If the build fails: clear the cache"},
    {"id": "not-a-lesson", "type": "fact", "content": "When deploying, smile."},
]


def _lesson_tables(store: MemoryStore) -> list[list[Any]]:
    return [
        store.database.execute_sql(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
        for table in ("lesson", "lesson_version")
    ]


def test_backfill_parses_old_lessons_and_their_version_notes(store: MemoryStore) -> None:
    for data in OLD_LESSONS:
        store.add(make_memory(**data))
    report = backfill_lessons(store)
    assert report.to_dict() == {"lessons": 3, "versions": 5}
    rows = {r[0]: r[1:] for r in _lesson_tables(store)[0]}
    assert rows == {
        "old-versions": (
            "When deploying",
            "run the migrations first.",
            "old workers crash on the new schema.",
            3,
        ),
        "old-plain": ("httpx", "Renaming things in httpx is cheap now and expensive later.", "", 1),
        "old-if": ("If the build fails", "clear the cache", "", 1),
    }
    history = versions(store, "old-versions")
    assert [(v.version, v.trigger, v.action) for v in history] == [
        (1, "When deploying", "restart the workers"),
        (2, "When deploying", "restart the workers, then run the migrations"),
        (3, "When deploying", "run the migrations first."),
    ]
    assert [v.reason for v in history[:2]] == [
        "backfilled from the [v1] note",
        "backfilled from the [v2] note",
    ]
    assert history[0].tags == ["deploy"] and history[-1].current
    assert [v.version for v in versions(store, "old-plain")] == [1]
    # The memories themselves are not changed.
    assert store.get("old-versions").content == OLD_LESSONS[0]["content"]


def test_backfill_twice_gives_the_same_result(store: MemoryStore) -> None:
    for data in OLD_LESSONS:
        store.add(make_memory(**data))
    backfill_lessons(store)
    first = _lesson_tables(store)
    report = backfill_lessons(store)
    assert report.to_dict() == {"lessons": 0, "versions": 0}
    assert _lesson_tables(store) == first
    # A lesson imported later is picked up by the next run, the others stay as they were.
    store.add(make_memory(id="later", type="lesson", content="When testing, seed the clock."))
    assert backfill_lessons(store).to_dict() == {"lessons": 1, "versions": 1}
    lessons, records = _lesson_tables(store)
    assert [r for r in lessons if r[0] != "later"] == first[0]
    assert [r for r in records if r[0] != "later"] == first[1]


def test_the_migration_backfills_an_upgraded_database(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "old.sqlite3", isolation_level=None)
    migrate(connection, tuple(m for m in MIGRATIONS if m.name < "0008"))
    connection.execute(
        "INSERT INTO memory (id, type, title, content, created_at, created_ts, updated_at) "
        "VALUES ('m1', 'lesson', 'Lesson: tz', 'When parsing dates, keep the offset. "
        "[v1] drop the offset', '2026-01-01T00:00:00+00:00', 0, '2026-01-01T00:00:00+00:00')"
    )
    assert "0008_lesson_backfill" in migrate(connection)
    assert connection.execute("SELECT version FROM lesson").fetchall() == [(2,)]
    dump = connection.execute("SELECT * FROM lesson_version ORDER BY version").fetchall()
    assert [(r[1], r[3]) for r in dump] == [(1, "drop the offset"), (2, "keep the offset.")]
    assert migrate(connection) == []
    backfill(connection)  # as `engram lesson backfill` would, later: nothing changes
    assert connection.execute("SELECT * FROM lesson_version ORDER BY version").fetchall() == dump
    connection.close()


def _old_database(path: Path) -> sqlite3.Connection:
    """A database from before 0008 holding OLD_LESSONS."""
    connection = sqlite3.connect(path, isolation_level=None)
    migrate(connection, tuple(m for m in MIGRATIONS if m.name < "0008"))
    for data in OLD_LESSONS:
        memory = make_memory(**data)
        connection.execute(
            "INSERT INTO memory (id, type, title, content, tags, session_id, created_at, "
            "created_ts, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)",
            [
                memory.id,
                memory.type.value,
                memory.title,
                memory.content,
                json.dumps(memory.tags),
                memory.session_id,
                memory.created_at,
                memory.created_at,
            ],
        )
    return connection


def test_migration_0008_stores_what_the_live_backfill_stores(tmp_path: Path) -> None:
    """Migration 0008 runs a frozen copy of the backfill; on the same lessons it writes
    the same rows as the live one (`engram lesson backfill`) does today."""
    dumps = []
    for name in ("migrated", "live"):
        connection = _old_database(tmp_path / f"{name}.sqlite3")
        if name == "migrated":
            assert "0008_lesson_backfill" in migrate(connection)
        else:
            assert backfill(connection).to_dict() == {"lessons": 3, "versions": 5}
        # `saved_at` is the clock when the version was written: the two runs may fall
        # in different seconds, so it is compared for its presence only.
        dumps.append(
            [
                connection.execute("SELECT * FROM lesson ORDER BY 1, 2").fetchall(),
                connection.execute(
                    "SELECT memory_id, version, trigger_text, action, rationale, tags, reason,"
                    " session_id, saved_at != '' FROM lesson_version ORDER BY 1, 2"
                ).fetchall(),
            ]
        )
        connection.close()
    assert dumps[0] == dumps[1]
    assert len(dumps[0][0]) == 3 and len(dumps[0][1]) == 5


def test_refine_backfills_a_lesson_imported_since(engram: object) -> None:
    e = _engram(engram)
    e.store.add(make_memory(id="imp", type="lesson", content="When testing, seed the clock."))
    refine(e.service, "imp", {"action": "freeze the clock"}, reason="seeding was not enough")
    history = versions(e.store, "imp")
    assert [(v.version, v.action, v.reason) for v in history] == [
        (1, "seed the clock.", "backfilled from the lesson"),
        (2, "freeze the clock", "seeding was not enough"),
    ]


def test_a_lesson_without_parts_says_how_to_get_them(store: MemoryStore) -> None:
    store.add(make_memory(id="imp", type="lesson", content="When testing, seed the clock."))
    with pytest.raises(NotFoundError, match="engram lesson backfill"):
        versions(store, "imp")


# -- parsing ----------------------------------------------------------------------------


def test_render_and_parse_agree() -> None:
    parts = LessonParts("deploying", "run the migrations first", "old workers crash")
    title, content = render(parts)
    parsed, notes = parse_lesson(title, content)
    assert notes == []
    assert parsed == LessonParts(
        "When deploying", "run the migrations first.", "old workers crash."
    )
    assert render(LessonParts("If it fails", "retry.", ""))[1] == "If it fails: retry."


_note_text = st.text(
    st.characters(blacklist_characters="[]", blacklist_categories=("Cs",)), max_size=30
)


@given(
    _note_text,
    st.lists(st.tuples(st.integers(0, 99), _note_text), max_size=6),
)
def test_version_notes_are_split_out_in_order(body: str, notes: list[tuple[int, str]]) -> None:
    text = body + "".join(f" [v{label}] {note}" for label, note in notes)
    rest, found = split_notes(text)
    if notes:
        assert rest == body.strip()
    expected = sorted(notes, key=lambda n: n[0])  # stable: equal labels keep their order
    assert [(n.label, n.text) for n in found] == [(k, " ".join(t.split())) for k, t in expected]


@given(_note_text.filter(lambda t: t.strip()), _note_text, st.integers(0, 5))
def test_parsing_any_lesson_gives_a_trigger_and_an_action(
    title: str, content: str, count: int
) -> None:
    text = content + "".join(f" [v{n}] earlier {n}" for n in range(count))
    parts, notes = parse_lesson(title, text)
    assert parts.trigger.strip() and parts.action.strip()
    assert len(notes) == count
