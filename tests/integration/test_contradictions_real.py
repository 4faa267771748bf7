"""One real run of the embedded SmolLM2 on contradiction pairs: its answers parse into
verdicts, and it cannot flag a pair the cues see as compatible or unflag one they decide."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.knowledge.contradictions import Judge, ask_model, reading_of
from services.llm.base import TimeBudget
from services.llm.llama_local import LlamaLocalLLM
from tests.services.builders import make_memory

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm2() -> Iterator[LlamaLocalLLM]:
    llm = LlamaLocalLLM()
    yield llm
    llm.close()


def memories(first: str, second: str) -> tuple[object, object]:
    a = make_memory(first, id="r1", created_at="2026-03-01T10:00:00+00:00")
    b = make_memory(second, id="r2", created_at="2026-04-01T10:00:00+00:00")
    return a, b


def test_the_embedded_model_answers_and_only_breaks_ties(smollm2: LlamaLocalLLM) -> None:
    a, b = memories(
        "We deploy on Fridays after the freeze.", "We never deploy on Fridays after the freeze."
    )
    answer = ask_model(smollm2, a, b, TimeBudget(60))  # type: ignore[arg-type]
    assert answer is None or answer["verdict"] in ("contradiction", "supersedes", "compatible")
    judge = Judge(smollm2, TimeBudget(60))
    decided = memories(
        "`settle_batch` times out after 5 seconds.",
        "We changed the timeout of `settle_batch` from 5s to 30s.",
    )
    unrelated = memories("Lunch is at noon.", "`settle_batch` times out after 5 seconds.")
    for pair, flagged in ((decided, True), (unrelated, False)):
        readings = (reading_of(pair[0]), reading_of(pair[1]))  # type: ignore[arg-type]
        verdict = judge.judge(pair[0], pair[1], readings)  # type: ignore[arg-type]
        assert verdict.flagged is flagged and verdict.llm is None  # not asked: no tie
    tie = (reading_of(a), reading_of(b))  # type: ignore[arg-type]
    judge.judge(a, b, tie)  # type: ignore[arg-type]
    assert judge.asked == 1
