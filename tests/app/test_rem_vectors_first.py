"""A cycle compares every memory: those still waiting for vectors are embedded first,
or waited for while another process embeds them, and the user is told which."""

from __future__ import annotations

import threading

from app.background import embedding_lock
from app.composition import Engram
from app.rem import vectors_first
from services.memory import Memory
from tests.services.builders import make_memory


def waiting(engram: Engram, count: int) -> list[Memory]:
    memories = [
        make_memory(f"We support Python 3.{8 + i} and up.", project="p") for i in range(count)
    ]
    engram.service.import_memories(memories, embed=False)
    assert engram.store.pending_count(engram.embedder.model_id) == count
    return memories


def test_waiting_memories_are_embedded_before_the_cycle(engram: Engram) -> None:
    waiting(engram, 3)
    said: list[str] = []
    assert vectors_first(engram, engram.data_dir, said.append) == 3
    assert engram.store.pending_count(engram.embedder.model_id) == 0
    assert said == [
        "3 memories have no vectors yet: embedding them first, so the cycle sees every memory"
    ]


def test_nothing_waiting_says_nothing(engram: Engram) -> None:
    said: list[str] = []
    assert vectors_first(engram, engram.data_dir, said.append) == 0
    assert said == []


def test_another_embedder_is_waited_for_then_the_cycle_says_what_it_misses(
    engram: Engram,
) -> None:
    waiting(engram, 2)
    said: list[str] = []
    with embedding_lock(engram.data_dir) as held:  # a background embedder at work
        assert held
        done = threading.Event()
        thread = threading.Thread(
            target=lambda: (
                vectors_first(engram, engram.data_dir, said.append, wait_seconds=0.6),
                done.set(),
            )
        )
        thread.start()
        thread.join(10)
    assert done.is_set()
    assert "2 memories are still being embedded by another process" in said[-1]
