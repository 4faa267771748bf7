"""Knowledge extraction with planted work sessions: themes across 3+ sessions, todos
pending for 5+ sessions, decisions that later pitfalls and fixes make lessons; accepting
a draft stores it linked to its sources, and an answered suggestion is not made again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.composition import Engram
from services.memory import Memory
from services.rem.actions import answer
from services.rem.ops.clusters import missing_facts
from services.rem.ops.extraction import (
    MAX_PER_PROJECT,
    extraction_findings,
    text_todo_marker,
    todo_marker,
)
from services.storage.findings import Finding, FindingStore, Status
from services.storage.memories import MemoryStore
from services.types import Tier
from tests.services.builders import make_memory

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
SESSION = timedelta(hours=2)  # far more than the 30 idle minutes that split sessions


def at(session: int, minutes: int = 0) -> str:
    return (T0 + session * SESSION + timedelta(minutes=minutes)).isoformat()


def sessions(store: MemoryStore, count: int) -> datetime:
    """Activity in sessions 0..count-1 (a note of another project in each); returns a
    `now` just after the last one."""
    for n in range(count):
        store.add(make_memory(f"Standup notes {n}.", project="elsewhere", created_at=at(n, 1)))
    return T0 + (count - 1) * SESSION + timedelta(minutes=10)


def add(store: MemoryStore, content: str, session: int, **fields: Any) -> Memory:
    fields.setdefault("project", "shop")
    return store.add(make_memory(content, created_at=at(session, 2), **fields))


def by_kind(findings: list[Finding], kind: str) -> list[Finding]:
    return [f for f in findings if f.kind == kind]


# -- themes ---------------------------------------------------------------------------


def plant_theme(store: MemoryStore, in_sessions: tuple[int, ...]) -> list[Memory]:
    facts = [
        "`issue_refund` retries 3 times before giving up.",
        "`issue_refund` writes to the `refunds` table and the audit log in one transaction.",
        "Refunds over 500 EUR go through `issue_refund` with a manual review.",
        "`issue_refund` is slow when `stripe_client` times out after 30 s.",
    ]
    return [
        add(store, facts[i % len(facts)], session, id=f"t{i}", tags=["refunds"])
        for i, session in enumerate(in_sessions)
    ]


def test_a_name_in_three_sessions_is_a_theme_with_a_drafted_pattern(store: MemoryStore) -> None:
    sources = plant_theme(store, (0, 2, 4))
    now = sessions(store, 6)
    (finding,) = extraction_findings(store, now)
    assert finding.op == "extraction" and finding.kind == "theme"
    assert finding.detail["theme"] == "issue_refund" and finding.detail["sessions"] == 3
    assert finding.memory_ids == ["t0", "t1", "t2"]
    assert finding.recommended == "create"
    assert [o.name for o in finding.options] == ["create", "dismiss", "skip"]
    draft = finding.detail["memory"]
    assert draft["type"] == "pattern" and draft["project"] == "shop"
    assert "`issue_refund`" in draft["title"] and "refunds" in draft["tags"]
    assert finding.detail["link_kind"] == "related"
    assert missing_facts(draft["content"], sources) == []  # 3, 500, 30, every name


def test_three_memories_in_two_sessions_are_not_a_theme(store: MemoryStore) -> None:
    plant_theme(store, (0, 0, 3))  # two of them in the same session
    assert by_kind(extraction_findings(store, sessions(store, 6)), "theme") == []


def test_a_theme_a_convention_or_summary_already_covers_is_not_proposed(
    store: MemoryStore,
) -> None:
    plant_theme(store, (0, 2, 4))
    add(store, "Call `issue_refund` only from the service layer.", 5, type="convention")
    assert by_kind(extraction_findings(store, sessions(store, 6)), "theme") == []


def test_a_summary_in_another_project_does_not_cover_a_theme(store: MemoryStore) -> None:
    plant_theme(store, (0, 2, 4))
    add(store, "Key facts: `issue_refund`.", 5, project="other", tags=["consolidated"])
    themes = by_kind(extraction_findings(store, sessions(store, 6)), "theme")
    assert [f.detail["theme"] for f in themes] == ["issue_refund"]


def test_archived_and_superseded_memories_do_not_count(store: MemoryStore) -> None:
    plant_theme(store, (0, 2))
    add(store, "`issue_refund` again.", 4, tier="archived")
    add(store, "`issue_refund` once more.", 5, superseded_by="t0")
    assert by_kind(extraction_findings(store, sessions(store, 6)), "theme") == []


def test_themes_are_capped_per_project_and_the_rest_wait_for_room(store: MemoryStore) -> None:
    # name_k comes up in 3 + k sessions: the most frequent ones come first
    for k in range(12):
        for session in range(3 + k):
            add(store, f"`name_{k:02}` matters.", session)
    now = sessions(store, 16)
    first = extraction_findings(store, now)
    assert [f.detail["theme"] for f in first] == [f"name_{k:02}" for k in range(11, 1, -1)]
    assert len(first) == MAX_PER_PROJECT
    findings = FindingStore(store)
    assert len(findings.save(first)) == MAX_PER_PROJECT
    assert extraction_findings(store, now) == []  # ten wait: no more are piled on
    with store.writing():
        for finding in first:
            findings.mark_answered(finding, "dismiss", applied=False)
    rest = extraction_findings(store, now)
    assert [f.detail["theme"] for f in rest] == ["name_01", "name_00"]


def test_numbers_members_and_error_lines_are_not_themes(store: MemoryStore) -> None:
    for session in (0, 2, 4):
        add(
            store, "Set `0`, call `.get()`, see `ValueError: the amount must be positive`.", session
        )
    assert by_kind(extraction_findings(store, sessions(store, 6)), "theme") == []


def test_accepting_a_theme_stores_the_pattern_linked_to_its_sources(engram: Engram) -> None:
    service = engram.service
    store = service.store
    sources = plant_theme(store, (0, 2, 4, 5))
    now = sessions(store, 6)
    findings = FindingStore(store)
    (finding,) = findings.save(by_kind(extraction_findings(store, now), "theme"))
    assert answer(service, findings, finding, "create")
    (pattern,) = [m for m in store.iter_all() if m.type.value == "pattern"]
    assert pattern.project == "shop" and {"extracted", "consolidated"} <= set(pattern.tags)
    assert pattern.content == finding.detail["memory"]["content"]
    assert missing_facts(pattern.content, sources) == []
    assert "3" in pattern.content and "500" in pattern.content and "`refunds`" in pattern.content
    links = store.database.execute_sql(
        "SELECT target, kind FROM memory_link WHERE source = ?", [pattern.id]
    ).fetchall()
    assert sorted(links) == [(f"t{i}", "related") for i in range(4)]
    assert findings.get(finding.id).status is Status.APPLIED
    # The pattern covers the theme now, and the finding was answered: nothing new.
    again = extraction_findings(store, now)
    assert by_kind(again, "theme") == [] and findings.save(again) == []


def test_a_dismissed_theme_is_not_proposed_again_when_it_grows(store: MemoryStore) -> None:
    plant_theme(store, (0, 2, 4))
    now = sessions(store, 8)
    findings = FindingStore(store)
    (finding,) = findings.save(by_kind(extraction_findings(store, now), "theme"))
    with store.writing():
        findings.mark_answered(finding, "dismiss", applied=False)
    add(store, "`issue_refund` logs every attempt.", 7)  # different memory_ids now
    assert by_kind(extraction_findings(store, now), "theme") == []


def test_the_same_data_gives_the_same_findings(store: MemoryStore) -> None:
    plant_theme(store, (0, 2, 4))
    add(store, "TODO: rotate the API keys.", 0)
    now = sessions(store, 6)
    first = extraction_findings(store, now)
    second = extraction_findings(store, now)
    assert [f.id for f in first] == [f.id for f in second] and len(first) == 2
    assert [f.to_dict() for f in first] == [f.to_dict() for f in second]


# -- todos ----------------------------------------------------------------------------


def test_a_todo_from_five_sessions_ago_is_proposed(store: MemoryStore) -> None:
    add(store, "TODO: rotate the API keys before the audit.", 0, id="todo-1")
    now = sessions(store, 6)  # sessions 1 to 5 came after it
    (finding,) = extraction_findings(store, now)
    assert finding.kind == "todo" and finding.memory_ids == ["todo-1"]
    assert finding.detail["sessions_ago"] == 5 and finding.detail["marker"] == "TODO"
    assert finding.recommended == "skip"
    assert {o.name for o in finding.options} == {"keep", "archive", "skip"}


def test_a_todo_from_four_sessions_ago_is_not_proposed_yet(store: MemoryStore) -> None:
    add(store, "TODO: rotate the API keys before the audit.", 0)
    assert extraction_findings(store, sessions(store, 5)) == []


def test_todos_by_tag_and_phrase_but_not_archived_or_superseded(store: MemoryStore) -> None:
    add(store, "Rotate the API keys.", 0, id="tagged", tags=["TODO"])
    add(store, "Outage review.\nFollow up on the vendor's SLA.", 0, id="phrase")
    add(store, "FIXME: flaky test.", 0, id="archived", tier="archived")
    add(store, "FIXME: other flaky test.", 0, id="superseded", superseded_by="phrase")
    add(store, "The caller decides what to do.", 0, id="not-a-todo")
    add(store, "- Keys: TODO: rotate them.", 0, id="summary", tags=["consolidated"])
    add(store, "TODO: later.", 3, id="recent")
    found = extraction_findings(store, sessions(store, 8))
    assert sorted(i for f in found for i in f.memory_ids) == ["phrase", "tagged"]


def test_answering_todos_archive_or_keep(engram: Engram) -> None:
    service = engram.service
    store = service.store
    add(store, "TODO: drop the legacy endpoint.", 0, id="done")
    add(store, "TODO: write the runbook.", 0, id="open")
    now = sessions(store, 7)
    findings = FindingStore(store)
    saved = {f.memory_ids[0]: f for f in findings.save(extraction_findings(store, now))}
    assert answer(service, findings, saved["done"], "archive")
    assert not answer(service, findings, saved["open"], "keep")
    assert store.get("done").tier is Tier.ARCHIVED  # archived, never deleted
    assert store.get("open").tier is not Tier.ARCHIVED
    assert extraction_findings(store, now) == []


# -- lessons --------------------------------------------------------------------------


FX = ["src/shop/fx.py"]


def plant_decision(store: MemoryStore) -> Memory:
    return add(
        store,
        "We decided to cache exchange rates in `fetch_fx_rates` for 15 minutes.",
        0,
        id="d1",
        type="decision",
        title="Cache exchange rates for 15 minutes",
        file_refs=FX,
    )


def test_a_decision_later_pitfalls_and_fixes_are_about_becomes_a_lesson(
    store: MemoryStore,
) -> None:
    plant_decision(store)
    add(store, "Stale rates: `fetch_fx_rates` served 2 h old rates.", 2, id="p1", type="pitfall")
    add(store, "Cleared the cache on rate alerts.", 3, id="f1", type="fix", file_refs=FX)
    add(store, "`fetch_fx_rates` rounds to 4 decimals.", 3, id="other", type="fact")
    now = sessions(store, 5)
    (finding,) = by_kind(extraction_findings(store, now), "lesson")
    assert finding.memory_ids == ["d1", "p1", "f1"] and finding.recommended == "create"
    assert finding.detail["decision"] == "d1" and finding.detail["followed_by"] == ["p1", "f1"]
    assert finding.detail["shared"] == ["fetch_fx_rates", "src/shop/fx.py"]
    assert "2 later pitfalls and fixes are about it (`fetch_fx_rates`, src/shop/fx.py)" in (
        finding.summary
    )
    draft = finding.detail["memory"]
    assert draft["type"] == "lesson" and draft["project"] == "shop"
    assert "Cache exchange rates for 15 minutes" in draft["title"]
    assert "Cache exchange rates for 15 minutes" in draft["content"]
    assert "2 h" in draft["content"] and "15" in draft["content"]
    decision, pitfall, fix = (store.get(i) for i in ("d1", "p1", "f1"))
    assert missing_facts(draft["content"], [decision, pitfall, fix]) == []


def test_one_later_pitfall_or_earlier_ones_are_not_enough(store: MemoryStore) -> None:
    add(store, "`fetch_fx_rates` had no timeout.", 0, type="pitfall")  # before the decision
    decision = "We decided to cache exchange rates in `fetch_fx_rates`."
    add(store, decision, 1, id="d1", type="decision", file_refs=["src/**"])
    add(store, "`fetch_fx_rates` served stale rates.", 3, type="pitfall")
    add(store, "A glob is about everything.", 3, type="fix", file_refs=["src/**"])  # same glob
    assert by_kind(extraction_findings(store, sessions(store, 5)), "lesson") == []


def test_a_busy_file_alone_does_not_make_a_lesson(store: MemoryStore) -> None:
    """Pitfalls that only share a file with a decision are often about something else
    in that file (seen on the corpus: a naming decision tied to dunning bugs)."""
    plant_decision(store)
    add(store, "Retry emails went out twice.", 2, type="pitfall", file_refs=FX)
    add(store, "Deduplicated the retry emails.", 3, type="fix", file_refs=FX)
    now = sessions(store, 5)
    assert by_kind(extraction_findings(store, now), "lesson") == []
    add(store, "`fetch_fx_rates` served stale rates.", 3, type="pitfall")
    assert len(by_kind(extraction_findings(store, now), "lesson")) == 1


def test_a_decision_used_three_times_becomes_a_lesson(store: MemoryStore) -> None:
    plant_decision(store)
    now = sessions(store, 5)

    def cite(count: int) -> list[Finding]:
        for n in range(count):
            store.database.execute_sql(
                "INSERT INTO usage_event (memory_id, event, session_id, at) VALUES (?,?,?,?)",
                ["d1", "cited" if n % 2 else "used", None, at(n + 1, 3)],
            )
        return by_kind(extraction_findings(store, now), "lesson")

    assert cite(2) == []
    (finding,) = cite(1)
    assert finding.memory_ids == ["d1"] and finding.detail["uses"] == 3
    assert "cited or used 3 times" in finding.summary


def test_no_lesson_when_one_links_to_or_quotes_the_decision(store: MemoryStore) -> None:
    plant_decision(store)
    add(store, "`fetch_fx_rates` served stale rates.", 2, type="pitfall")
    add(store, "`fetch_fx_rates` now clears its cache.", 3, type="fix")
    now = sessions(store, 5)
    assert len(by_kind(extraction_findings(store, now), "lesson")) == 1
    add(store, "Caches need an owner.", 4, id="l1", type="lesson")
    store.database.execute_sql(
        "INSERT INTO memory_link (source, target, kind, created_at) VALUES (?,?,?,?)",
        ["l1", "d1", "related", at(4)],
    )
    assert by_kind(extraction_findings(store, now), "lesson") == []
    store.database.execute_sql("DELETE FROM memory_link")
    quote = "We learnt: cache exchange rates for 15 minutes, not longer."
    add(store, quote, 4, type="lesson", tier="archived")  # archived, but it was written
    assert by_kind(extraction_findings(store, now), "lesson") == []


def test_accepting_a_lesson_stores_it_linked_and_it_is_not_proposed_again(
    engram: Engram,
) -> None:
    service = engram.service
    store = service.store
    plant_decision(store)
    add(store, "`fetch_fx_rates` served rates 2 h old.", 2, id="p1", type="pitfall")
    add(store, "`fetch_fx_rates` clears the cache on alerts.", 3, id="f1", type="fix")
    now = sessions(store, 5)
    findings = FindingStore(store)
    (finding,) = by_kind(findings.save(extraction_findings(store, now)), "lesson")
    assert answer(service, findings, finding, "create")
    (lesson,) = [m for m in store.iter_all() if m.type.value == "lesson"]
    assert lesson.title == "Lesson: Cache exchange rates for 15 minutes"
    assert "`fetch_fx_rates`" in lesson.content and "2 h" in lesson.content
    targets = store.database.execute_sql(
        "SELECT target FROM memory_link WHERE source = ? AND kind = 'related'", [lesson.id]
    ).fetchall()
    assert sorted(r[0] for r in targets) == ["d1", "f1", "p1"]
    assert store.get("d1").superseded_by is None  # the sources stay as they are
    assert by_kind(extraction_findings(store, now), "lesson") == []


def test_a_lesson_finding_left_pending_is_not_duplicated(store: MemoryStore) -> None:
    plant_decision(store)
    add(store, "`fetch_fx_rates` served stale rates.", 2, type="pitfall")
    add(store, "`fetch_fx_rates` now clears its cache.", 3, type="fix")
    now = sessions(store, 6)
    findings = FindingStore(store)
    (lesson,) = by_kind(findings.save(extraction_findings(store, now)), "lesson")
    add(store, "`fetch_fx_rates` failed again.", 5, type="pitfall")  # another source
    assert extraction_findings(store, now) == []  # the lesson (and the theme) wait
    assert lesson.id in {f.id for f in findings.pending("extraction")}


# -- the todo detector ----------------------------------------------------------------

# Words that look like markers but are not: plurals, names, "what to do", past follow-ups,
# markers inside code.
LOOKALIKES = [
    "todos", "TODOs", "Todoist", "mastodon", "todo-list", "the todo list", "what to do:",
    "nothing to do: it works", "how to do: see docs", "followed up", "follow-ups",
    "a follow-up PR fixed it", "fixmes", "TODO.md", "docs/TODO", "`TODO(ana): x`",
    "```\n# FIXME: later\n```", "to", "do", "up", "follow", "fix", "me", "the", "cache",
    "returns", "42", "`issue_refund`", "and", "it", "when", "\n",
]  # fmt: skip


@given(st.lists(st.sampled_from(LOOKALIKES), max_size=12))
def test_text_without_a_marker_is_not_a_todo(words: list[str]) -> None:
    assert text_todo_marker(" ".join(words)) is None


MARKED = ["TODO: {}", "{} FIXME", "To do: {}", "Follow up on {}", "We need to follow up: {}"]


@given(st.text(alphabet=st.characters(exclude_characters="`")), st.sampled_from(MARKED))
def test_a_marker_outside_code_makes_any_text_a_todo(text: str, template: str) -> None:
    assert text_todo_marker(f"{text}\n{template.format(text)}") is not None


@given(st.text(alphabet=st.characters(exclude_characters="`\n")), st.sampled_from(MARKED))
def test_a_marker_inside_code_is_ignored(text: str, template: str) -> None:
    code = template.format(text)
    assert text_todo_marker(f"Write it as `{code}` and\n```\n{code}\n```\nok.") is None


@given(st.sampled_from(["todo", "TODO", "To-Do", "fixme"]), st.text().filter(str.strip))
def test_a_todo_tag_makes_a_memory_a_todo(tag: str, content: str) -> None:
    memory = make_memory(content, tags=[tag])
    assert todo_marker(memory) == f"tag {tag}"
