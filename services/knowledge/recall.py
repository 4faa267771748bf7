"""Answers to questions about time ("When did hotfix 1.2.12 ship?", "How long ago was
the staging data restored?") from the dates resolved in memories (`memory_time`).

1. The question is recognised as temporal from its wording (`temporal.question_kind`).
2. Candidates: the hybrid search of the question plus a keyword search; those with
   resolved dates are the ones that can answer.
3. Each (memory, resolved phrase) pair is scored: the memory's search score (relative
   to the best) plus the word overlap between the question and the *sentence holding
   the phrase* — numbers and identifiers ("1.2.12", "SHIP-1012") weigh most — and a
   small bonus when the phrase points the way the question does (past "did", future
   "is … scheduled").
4. The best pair answers with its resolved date; confidence comes from the overlap and
   the margin over the runner-up. Inference is needed when no candidate has a resolved
   date (then the best memory's creation date is offered), when the date rests on a
   guess ("on Tuesday"), or when the best sentence barely matches the question; only
   then, and only if one is given and works, is the language model asked.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from services.knowledge.retirement import near_retiring
from services.llm.base import LLM, LLMCancelled, LLMUnavailable, ask_json
from services.memory import Memory
from services.text.date_answers import (
    describe,
    is_temporal_question,
    question_kind,
    with_dates,
)
from services.text.dates import TimeRef, local_date, sentence_at
from services.text.words import STOPWORDS

log = logging.getLogger(__name__)

Search = Callable[[str, int], Sequence[tuple[Memory, float]]]
"""(query, limit) → (memory, score) pairs, best first."""
LoadTimes = Callable[[Sequence[str]], dict[str, list[TimeRef]]]

SEARCH_LIMIT = 30
WEAK_OVERLAP = 0.34
_WORD = re.compile(r"[a-z0-9]+(?:[.#-][a-z0-9]+)*", re.IGNORECASE)
# Function words plus the words every date question has ("when did … start?").
_STOP = STOPWORDS | frozenset(
    "date day days long ago since take place happen happened start started".split()
)
# A question about something retired, and the words that say so.
_RETIRING_QUESTION = re.compile(
    r"\b(?:drop(?:ped)?|remov(?:e|ed)|deprecat(?:e|ed)|retir(?:e|ed)|stop(?:ped)? "
    r"(?:using|supporting|running)|got rid of|get rid of|mov(?:e|ed) off|ditch(?:ed)?|"
    r"end(?:ed)? support)\b",
    re.IGNORECASE,
)
_RETIRING_WORDS = frozenset(  # besides the stopwords `_words` leaves out
    "drop dropped remove removed deprecate deprecated retire retired stop stopped using "
    "supporting running rid move moved ditch ditched end ended support".split()
)
_FUTURE_QUESTION = re.compile(
    r"\b(is|are|will|does|do)\b.*\b(start|scheduled|switch|be)\b|\bwhen is\b", re.I
)


@dataclass(frozen=True)
class Candidate:
    memory: Memory
    ref: TimeRef
    sentence: str
    score: float
    overlap: float
    search_score: float


@dataclass
class RecallAnswer:
    question: str
    temporal_question: bool
    kind: str  # "date", "how_long", "weekday" or "" (not about time)
    answer: str
    date: str | None = None  # the day, or the first day of a range
    date_end: str | None = None  # the last day of a range
    vague: bool = False  # the range is a guess at what a vague phrase meant
    recorded_on: str | None = None  # no date written: when the closest memory was recorded
    confidence: float = 0.0
    reasoning: list[str] = field(default_factory=list)
    resolutions: list[dict[str, Any]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    inference_needed: bool = False
    used_llm: bool = False
    matches: list[Memory] = field(default_factory=list)
    rendered: dict[str, str] = field(default_factory=dict)  # source id → text with dates

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "date": self.date,
            "date_end": self.date_end,
            "vague": self.vague,
            "recorded_on": self.recorded_on,
            "confidence": round(self.confidence, 3),
            "reasoning": self.reasoning,
            "resolutions": self.resolutions,
            "sources": self.sources,
            "inference_needed": self.inference_needed,
            "used_llm": self.used_llm,
            "temporal_question": self.temporal_question,
            "kind": self.kind,
            "matches": [{"id": m.id, "title": m.title} for m in self.matches],
        }


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP]


def _weight(word: str) -> float:
    return 3.0 if any(c.isdigit() for c in word) else 1.0


_INFLECTION = re.compile(r"(?:ing|ed|es|s)$")
_DOUBLED = re.compile(r"([b-df-hj-np-tv-z])\1$")


def _base(word: str) -> str:
    """A word without an inflection: pinned, pins → pin; fixed, fixes → fix."""
    stripped = _INFLECTION.sub("", word)
    if len(stripped) < 3:
        return word
    return _DOUBLED.sub(r"\1", stripped)


def _same(a: str, b: str) -> bool:
    """The same word, or forms of one (`pin`/`pinned`, `quote`/`quoting`)."""
    if a == b:
        return True
    if any(c.isdigit() for c in a + b):
        return False
    if _base(a) == _base(b):
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short[: max(4, len(short) - 1)])


def word_overlap(question: str, sentence: str) -> float:
    """Share of the question's (weighted) words found in the sentence."""
    wanted = list(dict.fromkeys(_words(question)))
    if not wanted:
        return 0.0
    have = set(_words(sentence))
    total = sum(_weight(w) for w in wanted)
    found = sum(_weight(w) for w in wanted if any(_same(w, h) for h in have))
    return found / total


def _future(question: str) -> bool:
    return bool(_FUTURE_QUESTION.search(question))


def rank_candidates(
    question: str, hits: Sequence[tuple[Memory, float]], times: dict[str, list[TimeRef]]
) -> list[Candidate]:
    top = max((score for _, score in hits), default=0.0) or 1.0
    future = _future(question)
    out: list[Candidate] = []
    for memory, score in hits:
        for ref in times.get(memory.id, []):
            sentence = sentence_at(memory.content, ref.start)
            overlap = word_overlap(question, sentence + " " + memory.title)
            try:
                created = local_date(memory.created_at)
            except ValueError:
                created = ref.resolved
            points_future = ref.resolved > created
            agrees = 0.05 if points_future == future else 0.0
            relative = max(0.0, score) / top
            out.append(
                Candidate(memory, ref, sentence, 0.4 * relative + overlap + agrees, overlap, score)
            )
    out.sort(key=lambda c: (-c.score, c.memory.id, c.ref.start))
    return out


def _day_text(day: date) -> str:
    return f"{day.isoformat()} ({day.strftime('%A')})"


def _recorded_when(kind: str, ref: TimeRef, as_of: date) -> str:
    """ "on 2026-10-23", or for a question asking how long ago "40 days ago, on …"."""
    if kind == "how_long":
        return f"{_how_long(as_of, ref.resolved)}, on {_day_text(ref.resolved)}"
    return f"on {_answer_text(kind, ref, as_of)}"


def _how_long(as_of: date, day: date) -> str:
    """ "40 days ago", "in 3 days", "today"."""
    days = (as_of - day).days
    if days > 0:
        return f"{days} day{'s' if days != 1 else ''} ago"
    if days < 0:
        return f"in {-days} day{'s' if days != -1 else ''}"
    return "today"


def _how_long_between(as_of: date, first: date, last: date) -> str:
    """ "1 to 7 days ago" for a vague span ("the other day"): its nearer end first, not
    the far end alone as if it were the day."""
    near, far = sorted(((as_of - last).days, (as_of - first).days))
    if near <= 0 or near == far:
        return _how_long(as_of, first)
    return f"{near} to {far} days ago"


def _answer_text(kind: str, ref: TimeRef, as_of: date) -> str:
    when = _day_text(ref.resolved) if ref.granularity == "day" else describe(ref)
    if ref.granularity == "week":
        when = f"the week of {ref.resolved.isoformat()} ({describe(ref)})"
    elif ref.granularity == "month":
        when = f"{ref.resolved.strftime('%B %Y')} ({describe(ref)})"
    elif ref.granularity == "year":
        when = str(ref.resolved.year)
    elif ref.granularity == "vague":
        when = f"some time {describe(ref)} (a vague “{ref.phrase}”)"
    if kind == "how_long" and ref.granularity == "vague" and ref.resolved_end is not None:
        return f"{_how_long_between(as_of, ref.resolved, ref.resolved_end)}: {when}"
    if kind == "how_long":
        return f"{_how_long(as_of, ref.resolved)}: {when}"
    if kind == "weekday" and ref.granularity == "day":
        return f"{ref.resolved.strftime('%A')}, {ref.resolved.isoformat()}"
    return when


def _resolution(memory_id: str, ref: TimeRef) -> dict[str, Any]:
    return {
        "memory_id": memory_id,
        "phrase": ref.phrase,
        "start": ref.start,
        "resolved": ref.resolved.isoformat(),
        "resolved_end": None if ref.resolved_end is None else ref.resolved_end.isoformat(),
        "granularity": ref.granularity,
        "inferred": ref.inferred,
    }


def recall(
    question: str,
    search: Search,
    load_times: LoadTimes,
    as_of: date,
    llm: LLM | None = None,
    extra_hits: Sequence[tuple[Memory, float]] = (),
) -> RecallAnswer:
    """The answer to `question` from the memories `search` finds (see the module doc).
    `extra_hits` (e.g. keyword hits) join the candidates with their own scores."""
    kind = question_kind(question)
    hits = list(search(question, SEARCH_LIMIT))
    if not is_temporal_question(question):
        return _not_about_time(question, hits)
    seen = {m.id for m, _ in hits}
    hits.extend((m, 0.0) for m, _ in extra_hits if m.id not in seen)
    times = load_times([m.id for m, _ in hits])
    ranked = rank_candidates(question, hits, times)
    closest = _closest_undated(question, hits, times)
    if not ranked or (
        ranked[0].overlap < WEAK_OVERLAP and closest is not None and closest[1] > ranked[0].overlap
    ):
        # No dated memory is about this; the closest memory's own date is all there is.
        first = [closest[0]] if closest is not None else []
        return _without_dates(question, kind, first + [m for m, _ in hits], as_of, llm)
    answer = _dated_answer(question, kind, ranked, times, as_of)
    if answer.inference_needed and llm is not None:
        shown = list(dict.fromkeys(c.memory.id for c in ranked))[:3]
        by_id = {c.memory.id: c.memory for c in ranked}
        _ask_model(answer, [by_id[i] for i in shown], times, as_of, llm)
    return answer


def _not_about_time(question: str, hits: Sequence[tuple[Memory, float]]) -> RecallAnswer:
    return RecallAnswer(
        question,
        False,
        "",
        "This is not a question about time; the closest memories are listed.",
        reasoning=["no temporal wording (when, what date, how long ago, which day…)"],
        matches=[m for m, _ in hits[:5]],
        sources=[m.id for m, _ in hits[:5]],
    )


def _closest_undated(
    question: str, hits: Sequence[tuple[Memory, float]], times: dict[str, list[TimeRef]]
) -> tuple[Memory, float] | None:
    """Among the first ten hits without a resolved date, the one whose words match the
    question best, with its overlap. A question about retiring something ("when did we
    drop Python 3.7?") is answered first by a note that says one of its words was
    retired ("3.7 is EOL and no longer tested"), not by the note that set it ("the floor
    is >=3.7"), which shares as many words."""
    undated = [(m, word_overlap(question, f"{m.title} {m.content}")) for m, _ in hits[:10]]
    undated = [(m, o) for m, o in undated if m.id not in times]
    if _RETIRING_QUESTION.search(question):
        terms = [w for w in dict.fromkeys(_words(question)) if w not in _RETIRING_WORDS]
        retired = {m.id for m, _ in undated if _says_retired(m, terms)}
        return max(undated, key=lambda pair: (pair[0].id in retired, pair[1]), default=None)
    return max(undated, key=lambda pair: pair[1], default=None)


def _says_retired(memory: Memory, terms: Sequence[str]) -> bool:
    text = f"{memory.title}\n{memory.content}".lower()
    return any(near_retiring(text, term) for term in terms)


def _dated_answer(
    question: str,
    kind: str,
    ranked: Sequence[Candidate],
    times: dict[str, list[TimeRef]],
    as_of: date,
) -> RecallAnswer:
    """The answer of the best (memory, phrase) pair, the runner-up (the best pair with
    another date) as the alternative."""
    best = ranked[0]
    runner_up = next((c for c in ranked[1:] if c.ref.resolved != best.ref.resolved), None)
    answer = RecallAnswer(
        question,
        True,
        kind,
        _answer_text(kind, best.ref, as_of),
        date=best.ref.resolved.isoformat(),
        date_end=None if best.ref.resolved_end is None else best.ref.resolved_end.isoformat(),
        vague=best.ref.granularity == "vague",
        confidence=_confidence(best, runner_up),
        reasoning=_reasoning(best, runner_up, kind, as_of),
        resolutions=[_resolution(best.memory.id, best.ref)],
        sources=[best.memory.id],
        inference_needed=best.ref.inferred or best.overlap < WEAK_OVERLAP,
    )
    answer.rendered[best.memory.id] = with_dates(best.memory.content, times[best.memory.id])
    if runner_up is not None:
        answer.resolutions.append(_resolution(runner_up.memory.id, runner_up.ref))
    return answer


def _confidence(best: Candidate, runner_up: Candidate | None) -> float:
    """From the word overlap and the margin over the runner-up; less for a week, month
    or year, and for a guessed date."""
    margin = best.score - (runner_up.score if runner_up else 0.0)
    confidence = 0.35 + 0.4 * min(1.0, best.overlap) + 0.25 * min(1.0, margin / 0.3)
    if best.ref.granularity != "day":
        confidence *= 0.9
    if best.ref.inferred or best.ref.granularity == "vague":
        confidence *= 0.7
    return max(0.05, min(0.99, confidence))


def _reasoning(best: Candidate, runner_up: Candidate | None, kind: str, as_of: date) -> list[str]:
    reasoning = [
        f"'{best.ref.phrase}' in {best.memory.id} (written {best.memory.created_at}) "
        f"resolves to {describe(best.ref)} against its local creation date "
        f"{local_date(best.memory.created_at).isoformat()}",
        f"the sentence matches {best.overlap:.0%} of the question's words: "
        f'"{best.sentence[:160]}"',
    ]
    if runner_up is not None:
        reasoning.append(
            f"runner-up: '{runner_up.ref.phrase}' in {runner_up.memory.id} → "
            f"{describe(runner_up.ref)} (score {runner_up.score:.2f} vs {best.score:.2f})"
        )
    if kind == "how_long":
        reasoning.append(f"{(as_of - best.ref.resolved).days} days before {as_of.isoformat()}")
    return reasoning


def _without_dates(
    question: str,
    kind: str,
    hits: Sequence[Memory],
    as_of: date,
    llm: LLM | None,
) -> RecallAnswer:
    if not hits:
        return RecallAnswer(
            question, True, kind, "No memory answers this.", reasoning=["nothing matched"]
        )
    memory = hits[0]
    day = local_date(memory.created_at)
    ref = TimeRef(0, "", day, None, "day", "created_at")
    answer = RecallAnswer(
        question,
        True,
        kind,
        f"no date is written in the memories; the closest one was recorded "
        f"{_recorded_when(kind, ref, as_of)}",
        recorded_on=day.isoformat(),
        confidence=0.25,
        reasoning=[
            f"no matching memory holds a relative or resolved date; {memory.id} matches "
            f"best and was written on {day.isoformat()} (its local date)"
        ],
        sources=[memory.id],
        inference_needed=True,
    )
    if llm is not None:
        _ask_model(answer, list({m.id: m for m in hits}.values())[:3], {}, as_of, llm)
    return answer


_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "maxLength": 10},
        "confidence": {"type": "number"},
        "reasoning": {"type": "string", "maxLength": 300},
    },
    "required": ["date", "confidence", "reasoning"],
}


def _ask_model(
    answer: RecallAnswer,
    memories: Sequence[Memory],
    times: dict[str, list[TimeRef]],
    as_of: date,
    llm: LLM,
) -> None:
    """Let the model pick the date when the metadata alone is not enough; keep the
    metadata answer if it cannot (no model, no usable answer)."""
    from services.llm.prompts import load

    prompt = load("answer_temporal")
    notes = "\n".join(
        f"- [{m.id}] written {local_date(m.created_at).isoformat()}: "
        f"{with_dates(m.content, times.get(m.id, []))[:600]}"
        for m in memories
    )
    known = (
        {answer.date}
        | {r.resolved.isoformat() for m in memories for r in times.get(m.id, [])}
        | {local_date(m.created_at).isoformat() for m in memories}
    )

    def valid(value: Any) -> bool:
        return str(value.get("date")) in known

    try:
        reply = ask_json(
            llm,
            prompt.render(question=answer.question, notes=notes, today=as_of.isoformat()),
            prompt.schema or _SCHEMA,
            valid,
            max_tokens=160,
        )
    except (LLMUnavailable, LLMCancelled) as error:
        answer.reasoning.append(f"no language model to check this ({error}); metadata only")
        return
    if reply is None:
        answer.reasoning.append("the language model gave no usable answer; metadata only")
        return
    answer.used_llm = True
    chosen = date.fromisoformat(str(reply["date"]))
    answer.reasoning.append(f"language model: {str(reply.get('reasoning', ''))[:300]}")
    if chosen.isoformat() != answer.date:
        ref = TimeRef(0, "", chosen, None, "day", "llm")
        answer.date = chosen.isoformat()
        answer.answer = _answer_text(answer.kind, ref, as_of)
    answer.confidence = max(0.05, min(0.95, float(reply.get("confidence", 0.5))))
