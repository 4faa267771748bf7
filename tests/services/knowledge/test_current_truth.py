"""What holds now, judged when a memory is embedded: a later note worded as a change is
recorded as replacing its neighbour (an open proposal, nothing superseded); notes of one
sitting and episodes are not; the context shows the replacement in place of the
replaced memory, following chains to the newest."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from app.composition import Engram, open_engram
from services.activity.prediction import Candidate, Prediction, Reason
from services.activity.signals import ActivityKind
from services.context.assembly import ContextAssembler
from services.knowledge import contradictions
from services.knowledge.current_truth import current_holders, judge_embedded
from services.storage import contradictions as table
from tests.services.knowledge.test_supersession import FLOOR_NEW, FLOOR_OLD, UNRELATED

pytestmark = pytest.mark.slow  # the real ONNX embedder: similarity must be real


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engram]:
    instance = open_engram(tmp_path_factory.mktemp("truth") / "data")
    yield instance
    instance.close()


def _records(engram: Engram, *ids: str) -> list[Any]:
    return [
        r
        for r in contradictions.listing(engram.store)
        if {r.a, r.b} <= set(ids) and r.resolved_at is None
    ]


def test_a_later_change_is_recorded_when_it_is_embedded(real: Engram) -> None:
    old = real.service.add({**FLOOR_OLD, "project": "one"})
    unrelated = real.service.add({**UNRELATED, "project": "one"})
    new = real.service.add({**FLOOR_NEW, "project": "one"})
    [record] = _records(real, old.id, new.id)
    assert (record.a, record.b, record.kind, record.holder) == (
        old.id,
        new.id,
        "supersedes",
        new.id,
    )
    assert record.evidence["judged"] == "when embedded" and record.evidence["scorer"] > 0.5
    assert not _records(real, unrelated.id, new.id) and not _records(real, old.id, unrelated.id)
    assert real.store.get(old.id).superseded_by is None  # a proposal, not an act
    assert current_holders(real.store, [old.id, new.id])[old.id].id == new.id


def test_one_sitting_and_episodes_are_left_to_the_judge(real: Engram) -> None:
    same_day = {**FLOOR_NEW, "project": "two", "created_at": "2024-01-16T15:00:00+00:00"}
    old = real.service.add({**FLOOR_OLD, "project": "two"})
    new = real.service.add(same_day)
    assert not _records(real, old.id, new.id)
    episode = real.service.add({**FLOOR_OLD, "project": "three", "type": "episode"})
    later = real.service.add({**FLOOR_NEW, "project": "three"})
    assert not _records(real, episode.id, later.id)


def test_a_failing_index_never_fails_the_embedding(real: Engram) -> None:
    class Broken:
        def vectors_for(self, *args: Any) -> Any:
            raise RuntimeError("index gone")

    memory = real.store.get(real.service.add({**FLOOR_OLD, "project": "four"}).id)
    assert judge_embedded(real.store, Broken(), real.embedder, [memory]) == 0  # type: ignore[arg-type]


def test_the_context_shows_the_newest_holder_in_place_of_what_it_replaced(
    engram: Engram,
) -> None:
    first = engram.service.add({**FLOOR_OLD, "id": "floor-38"})
    second = engram.service.add({**FLOOR_NEW, "id": "floor-39", "content": "3.8 is gone."})
    third = engram.service.add({**FLOOR_NEW, "id": "floor-310", "content": "3.9 is gone too."})
    with engram.store.writing():
        table.record_flag(engram.store, first.id, second.id, "supersedes", second.id, "t", "{}")
        table.record_flag(engram.store, second.id, third.id, "supersedes", third.id, "t", "{}")
    holders = current_holders(engram.store, [first.id, second.id])
    assert {k: v.id for k, v in holders.items()} == {first.id: third.id, second.id: third.id}

    def candidate(memory: Any, score: float) -> Candidate:
        return Candidate(memory, score, [Reason("file_ref: pyproject.toml", score)])

    prediction = Prediction(
        project="httpx",
        at=datetime(2026, 1, 1, tzinfo=UTC),
        activity=ActivityKind.GENERAL,
        critical=[candidate(first, 1.0)],
        relevant=[candidate(second, 0.8)],
        background=[],
        topics=[],
    )
    assembled = ContextAssembler(2000, replaced=engram.replaced_among).assemble(prediction)
    placed = [p for tier in assembled.tiers for p in tier.placed]
    assert [p.candidate.memory.id for p in placed] == [third.id]
    assert placed[0].candidate.reasons[-1].signal == f"replaces {first.id}"
    assert first.id not in assembled.markdown and second.id not in assembled.markdown
    assert ContextAssembler(2000).assemble(prediction).tiers[0].placed  # no judge: as predicted
