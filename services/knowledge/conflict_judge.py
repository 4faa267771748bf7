"""Judging queued pairs: the deterministic cues decide, the fitted scorers flag what the
cues cannot see (recommended "skip", so `--auto` never acts on them), and a language
model is asked only where its verdict can tip the cues' score, within a time budget.
Verdicts are written through `services.storage.contradictions`."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from services.knowledge.conflict_records import (
    FLAG_AT,
    LLM_MAX_TOKENS,
    LLM_SECONDS,
    LLM_WEIGHT,
    Verdict,
    facts_of,
    ordered,
    pair_hash,
    pending,
    reading_of,
)
from services.knowledge.conflict_scan import Scan, _text, similarity_of
from services.knowledge.conflict_scorer import is_conflict, kind_of
from services.knowledge.cues import Cues, compare
from services.knowledge.holders import holder
from services.knowledge.pair_features import PairText, features, read_pair_text
from services.knowledge.reading import Reading
from services.llm.base import LLM, LLMCancelled, LLMTimeout, LLMUnavailable, TimeBudget, ask_json
from services.memory import Memory, now_iso
from services.storage import contradictions as table
from services.storage.memories import MemoryStore

log = logging.getLogger(__name__)


def ask_model(llm: LLM, a: Memory, b: Memory, budget: TimeBudget | None) -> dict[str, Any] | None:
    """The model's verdict on a pair ({verdict, holds, reason}) or None ("no verdict").
    Raises LLMUnavailable / LLMTimeout / LLMCancelled like `ask_json`."""
    from services.llm.prompts import render, schema

    def day(memory: Memory) -> str:
        return (memory.valid_from or memory.created_at)[:10]

    prompt = render(
        "judge_contradiction",
        a_date=day(a),
        a_text=f"{a.title}. {a.content[:400]}",
        b_date=day(b),
        b_text=f"{b.title}. {b.content[:400]}",
    )
    answer = ask_json(
        llm, prompt, schema("judge_contradiction"), max_tokens=LLM_MAX_TOKENS, budget=budget
    )
    return parse_verdict(answer)


def parse_verdict(answer: Any) -> dict[str, Any] | None:
    """A model answer as {verdict, holds, reason}, or None when it is not usable
    (unknown verdict, a conflict that names no holder, or "both" hold a conflict)."""
    if not isinstance(answer, dict):
        return None
    verdict = str(answer.get("verdict", "")).strip().lower()
    holds = str(answer.get("holds", "")).strip().lower()
    reason = " ".join(str(answer.get("reason", "")).split())[:200]
    if verdict not in ("contradiction", "supersedes", "compatible"):
        return None
    if holds not in ("a", "b", "both"):
        return None
    if verdict == "compatible":
        holds = "both"
    elif holds == "both":
        return None  # a conflict where both hold is no answer
    return {
        "verdict": verdict,
        "holds": holds.upper() if holds != "both" else "both",
        "reason": reason,
    }


_VERSIONED = ("runtime ", "version ")  # attributes whose values are versions


def _release(value: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", value)[:3])


def change_kind(earlier: PairText, later: PairText, found: Mapping[str, float], cues: Cues) -> str:
    """Which kind of conflict the scorer flagged (`kind_of`), counting as a change a
    later note that names the earlier's value as what it replaces ("60 s, was 30 s",
    "bumped from 15") or gives a newer version of what the earlier states
    (`upgraded`)."""
    return kind_of(earlier, later, found, cues.replaces == later.memory.id or upgraded(cues))


def upgraded(cues: Cues) -> bool:
    """Whether every value the two notes give differently is a version of one runtime or
    product ("Node 18" / "Node 20", "ESLint 9" / "eslint 10") and the second note (`b`
    of `compare`, the later one where the caller ordered them) gives the higher one: an
    upgrade written down, a change rather than a disagreement."""
    if not cues.conflicts:
        return False
    for conflict in cues.conflicts:
        if not str(conflict["attribute"]).startswith(_VERSIONED):
            return False
        earlier = max(map(_release, str(conflict["a"]).split(", ")))
        later = max(map(_release, str(conflict["b"]).split(", ")))
        if not later > earlier:
            return False
    return True


class Judge:
    """Judges pairs: cues first, the model (if any) only where it can tip the balance,
    within `budget`; a model that turns out unavailable is not asked again this run."""

    def __init__(self, llm: LLM | None, budget: TimeBudget | None = None) -> None:
        self.llm = llm
        self.budget = budget or TimeBudget(LLM_SECONDS)
        self.asked = 0
        self.llm_note: str | None = None

    def judge(
        self,
        a: Memory,
        b: Memory,
        readings: tuple[Reading, Reading],
        weights: dict[str, float] | None = None,
        facts: dict[str, tuple[str, str, str]] | None = None,
        similarity: float | None = None,
        texts: tuple[PairText, PairText] | None = None,
        restated: Callable[[Memory, Memory, dict[str, float]], float | None] | None = None,
        version_steps: Collection[tuple[str, str]] | None = None,
    ) -> Verdict:
        a, b = ordered(a, b)
        reading_a, reading_b = readings if readings[0].id == a.id else readings[::-1]
        cues = compare(reading_a, reading_b, weights, facts, version_steps)
        cue_score = cues.score()
        scorer_flag: float | None = None  # the scorer's probability, where it flags too
        if similarity is not None:
            text_a, text_b = texts or (read_pair_text(a), read_pair_text(b))
            if text_a.memory.id != a.id:
                text_a, text_b = text_b, text_a
            found = features(text_a, text_b, similarity, cues, weights)
            told_again = restated(a, b, found) if restated is not None else None
            flagged, scored = is_conflict(found, (text_a, text_b), restated=told_again)
            if flagged and cue_score < FLAG_AT:
                kind = change_kind(text_a, text_b, found, cues)
                # A supersession is the later note replacing the earlier: it holds.
                held = b.id if kind == "supersedes" else holder(reading_a, reading_b, cues)
                return Verdict(a.id, b.id, kind, held, scored, cue_score, cues, None, scored)
            scorer_flag = scored if flagged else None
        answer: dict[str, Any] | None = None
        if self.llm is not None and abs(cue_score - FLAG_AT) < LLM_WEIGHT:
            answer = self._ask(a, b)
        vote = 0.0
        held = holder(reading_a, reading_b, cues)
        if answer is not None and answer["verdict"] == "compatible":
            vote = -1.0
        elif answer is not None and answer["holds"] == ("A" if held == a.id else "B"):
            # A conflict counts only with the holder the cues see (the memory that
            # replaces the other, else the later one): a tiny model answering by rote
            # ("contradiction, A") does not tip anything.
            vote = 1.0
        if answer is not None:
            answer = {**answer, "counted": vote != 0.0}
        score = cue_score + LLM_WEIGHT * vote
        if score < FLAG_AT:
            return Verdict(a.id, b.id, "compatible", None, score, cue_score, cues, answer)
        # Where the scorer flags the pair too, the surer of the two is recorded: a rule's
        # fixed score (a revert's 0.8) must not make a looser look-alike, flagged at 0.94
        # against the same note, read as its surer replacement.
        score = max(score, scorer_flag or 0.0)
        if cues.replaces or (cues.conflicts and reading_b.change_wording and held == b.id):
            kind = "supersedes"
        elif upgraded(cues):  # the later note names a newer version: it holds
            kind, held = "supersedes", b.id
        elif cues.conflicts or cues.fact:
            kind = "contradiction"
        else:  # negation or near paraphrase: the model's word for it, if it gave one
            kind = answer["verdict"] if answer is not None else "contradiction"
        return Verdict(a.id, b.id, kind, held, score, cue_score, cues, answer)

    def _ask(self, a: Memory, b: Memory) -> dict[str, Any] | None:
        if self.llm is None or not self.budget.allows_a_call():
            return None
        try:
            answer = ask_model(self.llm, a, b, self.budget)
        except LLMCancelled:
            raise
        except LLMUnavailable as error:  # LLMTimeout too: the run's model time is up
            self.llm_note = str(error)

            if not isinstance(error, LLMTimeout):
                self.llm = None
            return None
        self.asked += 1
        return answer


def _scorer_may_flag(found: Scan, a: str, b: str) -> bool:
    """After a scan, only the pairs it kept for the scorer (the likeliest few a project);
    without one (pairs queued on write, judged alone), every pair."""
    return not found.scanned or (min(a, b), max(a, b)) in found.scored


def judge_pending(
    store: MemoryStore,
    judge: Judge,
    found: Scan | None = None,
    write: bool = True,
    pairs: Iterable[tuple[str, str]] | None = None,
    leave_for_model: bool = False,
) -> list[Verdict]:
    """Judge the queued pairs (or `pairs`); with `write`, mark them judged and record the
    flagged ones in `contradiction`. With `leave_for_model`, a pair whose cues a model's
    verdict could tip stays queued, unjudged, for a run that has one. Returns every
    verdict given."""
    found = found or Scan(facts=facts_of(store))
    wanted = list(pairs) if pairs is not None else pending(store)
    missing = {i for pair in wanted for i in pair} - set(found.memories)
    found.memories.update(store.get_many(sorted(missing)))
    verdicts: list[Verdict] = []
    now = now_iso()
    for start in range(0, len(wanted), 200):
        batch = wanted[start : start + 200]
        judged: list[tuple[Verdict | None, str, str]] = []
        for first, second in batch:
            a, b = found.memories.get(first), found.memories.get(second)
            if a is None or b is None or a.superseded_by or b.superseded_by:
                judged.append((None, first, second))
                continue
            readings = tuple(found.readings.setdefault(m.id, reading_of(m)) for m in (a, b))
            weights = found.weights.get(a.project)
            texts = (_text(found, a), _text(found, b))
            verdict = judge.judge(
                a,
                b,
                (readings[0], readings[1]),
                weights,
                found.facts,
                similarity_of(found, a.id, b.id) if _scorer_may_flag(found, a.id, b.id) else None,
                texts,
                found.restated,
                found.version_steps,
            )
            if leave_for_model and _model_could_tip(verdict):
                continue
            verdicts.append(verdict)
            judged.append((verdict, first, second))
        if write:
            _store_verdicts(store, judged, found.memories, now)
    return verdicts


def _model_could_tip(verdict: Verdict) -> bool:
    """Whether a model's verdict could change this cues-only verdict (the scorer did
    not decide it and the cues' score is within the model's weight of the bar)."""
    return (
        verdict.llm is None
        and verdict.scorer is None
        and (abs(verdict.cue_score - FLAG_AT) < LLM_WEIGHT)
    )


def _store_verdicts(
    store: MemoryStore,
    judged: list[tuple[Verdict | None, str, str]],
    memories: dict[str, Memory],
    now: str,
) -> None:
    with store.writing():
        for verdict, first, second in judged:
            if verdict is None:
                table.mark_judged(store, first, second, now)
                continue
            digest = pair_hash(memories[verdict.a], memories[verdict.b])
            evidence = verdict.evidence(digest)
            cues = json.dumps({"verdict": verdict.kind, **evidence})
            table.mark_judged(store, verdict.a, verdict.b, now, cues)
            if verdict.flagged:
                table.record_flag(
                    store, verdict.a, verdict.b, verdict.kind, verdict.holder, now,
                    json.dumps(evidence),
                )  # fmt: skip
