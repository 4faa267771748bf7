"""`PredictiveEngine`: turns activity signals into a per-tier prediction of the memories
the next question will need, recomputed on every signal and cached, so assembling
context is instant.

What each signal predicts, and at which score (0–1, before learning):

- file opened/saved: memories that mention an identifier the file defines (1.0) or
  imports from the project (0.85) or from a package (0.5; standard-library names are
  ignored), that point at the file (1.0, or by a glob over file names such as
  `src/db/*.py`: 0.7) or at its folder (`src/`, `src/**`: 0.5), and
  memories about sibling files of the same module (0.3). Decisions and constraints about
  the file are critical (tier 1).
- branch checkout: memories recorded on the branch or tagged with its slug (0.9), and
  decisions and patterns whose words match the branch name (0.4).
- error seen: fixes and pitfalls that quote the error's key line (1.0, tier 1), and
  keyword neighbours among fixes, pitfalls and lessons (0.6).
- time of day: workflows the user tends to use at this hour (tier 3, with the
  project's conventions, compressed, and summaries of its lessons and episodes).
- learning: a memory cited after a signal gains weight for that signal next time.

The state carries over: the branch's memories and the fixes of errors seen in the last
24 hours stay in the prediction while the user moves between files.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from services.activity.git_state import branch_slug, branch_words
from services.activity.prediction_sources import (
    PredictionSources,
    module_of,
    ref_matches,
    tested_file,
)
from services.activity.signals import (
    ActivityKind,
    ActivityState,
    Signal,
    SignalKind,
    branch_key,
    error_key,
    file_key,
)
from services.memory import Memory, written_at
from services.storage.memories import MemoryStore
from services.text.manifests import DeclaredVersion
from services.text.stacktrace import quotes_an_error, share_of_error_words
from services.text.words import sounds_unsure
from services.types import MemoryType as T

CRITICAL_TYPES = (T.DECISION, T.CONSTRAINT, T.ARCHITECTURE)
ERROR_TYPES = (T.FIX, T.PITFALL)
TESTED = 0.8  # a note about the file a test file tests (critical: it is about this test)
DIRECT = 0.7  # a file signal this strong is about the file itself (tier 1)
CROWDED_FILE = 0.75  # a file_ref shared by more notes than tier 1 holds (still tier 1)
NAMES_FILE = 0.6  # a note that names the open file in its text (not critical on that alone)
COMMON_NAME = 0.4  # a note naming only names common in the project: pointed at (tier 4)
OTHER_ERROR_SHARE = 0.5  # of the error's words, what a fix about it has at least
# An error seen this recently is what the user is working on; later, the files they
# open may be about something else, and the fixes for those files' other errors count.
ERROR_FOCUS = timedelta(minutes=5)
QUERY_CRITICAL = 3  # a search's results that lead the block assembled for it
BACKGROUND_POOL = 5  # with a file open, tier 3 picks from this many times more
# A fix quoting the error just seen comes before the notes about the file it is in
# (one pointing at the file and naming what it defines scores a little over 1.0).
LATEST_ERROR = 1.2
CARRY_OVER = 0.7  # weight of the branch context once the user has moved on to files


@dataclass(frozen=True)
class PredictionLimits:
    critical: int = 10
    relevant: int = 24
    background: int = 12
    topics: int = 12
    related: int = 12
    relevant_min_score: float = 0.55  # weaker candidates are only pointed at (tier 4)


@dataclass(frozen=True)
class Reason:
    signal: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"signal": self.signal, "score": round(self.score, 3)}


@dataclass
class Candidate:
    memory: Memory
    score: float
    reasons: list[Reason] = field(default_factory=list)
    richest: int = 0  # the richest level it may take: 0 full, 1 summary, 2 compressed


@dataclass
class Prediction:
    project: str | None
    at: datetime
    activity: ActivityKind
    critical: list[Candidate]
    relevant: list[Candidate]
    background: list[Candidate]
    topics: list[str]
    related: list[Candidate] = field(default_factory=list)
    current_file: str | None = None
    branch: str | None = None
    signal_keys: list[str] = field(default_factory=list)
    declared: tuple[DeclaredVersion, ...] = ()  # runtime floors the current file declares
    elapsed_ms: float = 0.0
    query: str | None = None  # the search the block was assembled for (the popup's copy)

    def tier_ids(self) -> dict[int, list[str]]:
        return {
            1: [c.memory.id for c in self.critical],
            2: [c.memory.id for c in self.relevant],
            3: [c.memory.id for c in self.background],
        }


def near_file(refs: Sequence[str], path: str) -> bool:
    """Whether one of `refs` points into `path`'s part of the project: the file, its
    folder, or the same top folder (for a file at the root: another root file)."""
    folder, top = module_of(path), path.split("/", 1)[0] if "/" in path else ""
    for ref in refs:
        ref = ref.strip().removeprefix("./")
        if ref_matches(ref, path) is not None or module_of(ref) == folder:
            return True
        if top and ref.split("/", 1)[0] == top:
            return True
    return False


def _belongs(memory: Memory, path: str | None, needs_file: bool) -> bool:
    """Whether a background memory belongs beside `path` (any, with no file open)."""
    if path is None:
        return True
    if not memory.file_refs:
        return not needs_file
    return near_file(memory.file_refs, path)


class _Scores:
    """Accumulates candidates: the best score per memory, every reason kept."""

    def __init__(self) -> None:
        self.scores: dict[str, float] = {}
        self.reasons: dict[str, list[Reason]] = {}
        self.critical: set[str] = set()

    def add(self, memory_id: str, score: float, signal: str, critical: bool = False) -> None:
        previous = self.scores.get(memory_id, 0.0)
        # Several independent signals agree: a little more than the best one alone.
        self.scores[memory_id] = max(previous, score) + 0.05 * min(previous, score)
        self.reasons.setdefault(memory_id, []).append(Reason(signal, score))
        if critical:
            self.critical.add(memory_id)


class PredictiveEngine:
    def __init__(
        self,
        store: MemoryStore,
        limits: PredictionLimits = PredictionLimits(),
        learning_rate: float = 0.15,
    ) -> None:
        self.store = store
        self.sources = PredictionSources(store)
        self.limits = limits
        self.learning_rate = learning_rate
        self.states: dict[str | None, ActivityState] = {}
        self.current_project: str | None = None
        self._cache: dict[str | None, tuple[Any, Prediction]] = {}

    def state(self, project: str | None) -> ActivityState:
        if project not in self.states:
            self.states[project] = ActivityState(project)
        return self.states[project]

    def set_activity(self, project: str | None, kind: ActivityKind | None) -> None:
        """Pin the activity kind (None: infer it again from the signals)."""
        self.state(project).explicit_kind = kind
        self._cache.pop(project, None)

    def observe(self, signal: Signal) -> Prediction:
        """Apply a signal and recompute the prediction for its project."""
        started = time.perf_counter()
        self.current_project = signal.project
        self.state(signal.project).apply(signal)
        prediction = self._compute(signal.project, signal.at, signal)
        prediction.elapsed_ms = (time.perf_counter() - started) * 1000.0
        self._cache[signal.project] = (self.store.generation(), prediction)
        return prediction

    def prediction(self, project: str | None = None, at: datetime | None = None) -> Prediction:
        """The cached prediction of `project` (default: the active one), recomputed only
        when the memories changed since, or when asked as of another time."""
        project = project if project is not None else self.current_project
        cached = self._cache.get(project)
        generation = self.store.generation()
        if cached is not None and cached[0] == generation and at is None:
            return cached[1]
        state = self.state(project)
        moment = at or (state.last_signal.at if state.last_signal else datetime.now(UTC))
        started = time.perf_counter()
        prediction = self._compute(project, moment, state.last_signal)
        prediction.elapsed_ms = (time.perf_counter() - started) * 1000.0
        if at is None:
            self._cache[project] = (generation, prediction)
        return prediction

    def learn_from_citations(self, memory_ids: list[str], project: str | None = None) -> None:
        """The user cited or used these memories: credit them to the current signals."""
        prediction = self.prediction(project)
        self.sources.learn(prediction.signal_keys, memory_ids)
        self._cache.pop(prediction.project, None)

    # --- computing -------------------------------------------------------------------------

    def _compute(self, project: str | None, at: datetime, signal: Signal | None) -> Prediction:
        state = self.state(project)
        scores = _Scores()
        keys: list[str] = []
        if state.current_file:
            keys.append(file_key(state.current_file))
            self._file(scores, project, at, state)
        if state.branch:
            keys.append(branch_key(state.branch))
            on_branch_now = signal is not None and signal.kind is SignalKind.BRANCH_CHECKOUT
            self._branch(scores, project, at, state.branch, 1.0 if on_branch_now else CARRY_OVER)
        focused = state.errors_within(at, ERROR_FOCUS)
        for number, line in enumerate(state.errors_within(at)):
            keys.append(error_key(line))
            latest = number == 0 and signal is not None and signal.kind is SignalKind.ERROR_SEEN
            weight = 1.0 if latest else CARRY_OVER
            self._error(scores, project, at, line, weight, line in focused)
        if signal is not None and signal.key not in keys:
            keys.insert(0, signal.key)
        self._learned(scores, keys)

        memories = self.sources.load(list(scores.scores), project, at)
        if focused:
            self._focus_on_errors(scores, memories, focused)
        ranked = sorted(
            (mid for mid in scores.scores if mid in memories),
            # Equal scores (several notes naming the file): more signals first, then
            # the newer note, which is likelier to hold now.
            key=lambda mid: (
                -scores.scores[mid],
                -len({r.signal for r in scores.reasons[mid]}),
                -written_at(memories[mid]),
                mid,
            ),
        )
        critical: list[Candidate] = []
        relevant: list[Candidate] = []
        related: list[Candidate] = []
        for memory_id in ranked:
            candidate = Candidate(
                memories[memory_id], scores.scores[memory_id], scores.reasons[memory_id]
            )
            if memory_id in scores.critical and len(critical) < self.limits.critical:
                critical.append(candidate)
            elif (
                candidate.score >= self.limits.relevant_min_score
                and len(relevant) < self.limits.relevant
            ):
                relevant.append(candidate)
            elif len(related) < self.limits.related:
                related.append(candidate)
        chosen = {c.memory.id for c in critical + relevant + related}
        background = self._background(project, at, chosen, state.current_file)
        topics = self.sources.topics(project, at, self.limits.topics)
        return Prediction(
            project=project,
            at=at,
            activity=state.activity(at),
            critical=critical,
            relevant=relevant,
            background=background,
            topics=topics,
            related=related,
            current_file=state.current_file,
            branch=state.branch,
            signal_keys=keys,
            declared=state.symbols.declared if state.symbols is not None else (),
        )

    def _file(
        self, scores: _Scores, project: str | None, at: datetime, state: ActivityState
    ) -> None:
        path = state.current_file or ""
        symbols = state.symbols
        if symbols is not None:
            defined = set(symbols.defined)
            external = set(symbols.external) - set(symbols.identifiers)
            names = [*symbols.identifiers, *sorted(external)]
            found = self.sources.mentioning(names, project, at)
            common = self.sources.common_names(found, project, at)
            for memory_id, mentioned in found.items():
                named = [n for n in mentioned if n not in common]
                if not named:
                    shown = ", ".join(mentioned[:3])
                    scores.add(memory_id, COMMON_NAME, f"names {shown}, common in the project")
                    continue
                own = [n for n in named if n in defined]
                local = [n for n in named if n not in external]
                shown = ", ".join((own or local or named)[:3])
                if own:
                    scores.add(memory_id, 0.9 + 0.02 * (len(own) - 1), f"defines: {shown}")
                elif local:
                    scores.add(memory_id, 0.8 + 0.02 * (len(local) - 1), f"imports: {shown}")
                else:
                    scores.add(memory_id, 0.5, f"uses package names: {shown}")
        pointing = self.sources.pointing_at(path, project)
        # More notes pointing at the file than tier 1 holds: pointing at it says less than
        # naming what it defines or imports, which then goes first (corpus-2k's activity
        # replay at 10,000 memories, some thirty notes a file: hit rate 71 % with the
        # pointers first, as with the names first on real-dev's few a file).
        crowded = sum(m.exact for m in pointing) > self.limits.critical
        for match in pointing:
            if match.exact:
                scores.add(match.memory_id, CROWDED_FILE if crowded else 1.0, f"file_ref: {path}")
            elif match.by_name:  # `django/db/models/*.py`: these files, by name
                scores.add(match.memory_id, DIRECT, f"file_ref glob matching {path}")
            else:
                scores.add(match.memory_id, 0.5, f"folder of {path}")
        self._naming_the_file(scores, project, at, path)
        subject = tested_file(path)
        if subject is not None:  # a test file is about the code it tests
            for memory_id in self.sources.naming_file(subject, project):
                scores.add(memory_id, TESTED, f"tests {subject}")
        for memory_id in self.sources.in_module(path, project):
            scores.add(memory_id, 0.3, f"same module as {path}")
        # What is about this very file (its path, or a name it defines or imports from
        # the project) is critical, whatever its type.
        for memory_id, score in scores.scores.items():
            if score >= DIRECT:
                scores.critical.add(memory_id)

    def _naming_the_file(
        self, scores: _Scores, project: str | None, at: datetime, path: str
    ) -> None:
        """A note without file_refs whose text names the open file (`src/app/db.py`, or
        `pyproject.toml`) is about it: added outside the repository, or imported, it has
        none. One whose file_refs point elsewhere names it in passing (on corpus-2k's
        activity replay, counting those took the hit rate at 10,000 memories from 100 %
        to 71 %). A name most of the project's notes write is only pointed at."""
        names = [n for n in dict.fromkeys([path, path.rsplit("/", 1)[-1]]) if "." in n]
        if not names:
            return
        found = self.sources.mentioning(names, project, at, unreferenced=True)
        common = self.sources.common_names(found, project, at)
        for memory_id, named in found.items():
            score = COMMON_NAME if all(n in common for n in named) else NAMES_FILE
            scores.add(memory_id, score, f"names {named[0]}")

    def _focus_on_errors(
        self, scores: _Scores, memories: dict[str, Memory], errors: list[str]
    ) -> None:
        """While an error is in focus (seen in the last few minutes: the user is on it),
        a fix or pitfall about the open file that quotes an error of its own sharing at
        most half of the focused error's words is a fix for another problem there: it is
        pointed at, not placed. A fix for the same error quotes or paraphrases most of
        its words."""
        for memory_id in list(scores.critical):
            memory = memories.get(memory_id)
            if memory is None or memory.type not in ERROR_TYPES:
                continue
            text = f"{memory.title}\n{memory.content}"
            if not quotes_an_error(text):
                continue  # a pitfall of the file that names no error may be about this one
            if max(share_of_error_words(line, text) for line in errors) > OTHER_ERROR_SHARE:
                continue
            scores.critical.discard(memory_id)
            scores.scores[memory_id] = min(scores.scores[memory_id], COMMON_NAME)
            scores.reasons[memory_id].append(Reason("about another error", COMMON_NAME))

    def _branch(
        self, scores: _Scores, project: str | None, at: datetime, branch: str, weight: float
    ) -> None:
        slug = branch_slug(branch)
        for memory_id in self.sources.on_branch(branch, slug, project, at):
            scores.add(memory_id, 0.9 * weight, f"branch: {branch}")
        words = " ".join(branch_words(branch))
        if words:
            for memory_id, _ in self.sources.similar_text(
                words, project, at, (T.DECISION, T.PATTERN, T.ARCHITECTURE), 6
            ):
                scores.add(memory_id, 0.4 * weight, f"branch words: {words}")

    def _error(
        self,
        scores: _Scores,
        project: str | None,
        at: datetime,
        line: str,
        weight: float,
        in_focus: bool = False,
    ) -> None:
        """Fixes quoting `line`, first in tier 1 while it is in focus (seen minutes ago,
        with a file opened since or not: what the user is on), and fixes of similar
        errors, weighed by `weight`."""
        quoted = LATEST_ERROR if in_focus else weight
        for memory_id in self.sources.quoting(line, project, at, ERROR_TYPES):
            scores.add(memory_id, quoted, f"error: {line[:80]}", critical=True)
        for memory_id, _ in self.sources.similar_text(
            line, project, at, (T.FIX, T.PITFALL, T.LESSON), 6
        ):
            scores.add(memory_id, 0.6 * weight, f"similar error: {line[:80]}")

    def _learned(self, scores: _Scores, keys: list[str]) -> None:
        for memory_id, weight in self.sources.affinities(keys).items():
            boost = min(0.5, self.learning_rate * math.log1p(weight))
            base = scores.scores.get(memory_id, 0.5)
            scores.add(memory_id, min(1.5, base + boost), f"cited after this before (×{weight:g})")

    def _background(
        self, project: str | None, at: datetime, chosen: set[str], path: str | None = None
    ) -> list[Candidate]:
        """Tier 3: workflows used at this hour, the project's conventions, workflows and
        recent lessons. With a file open, a convention or lesson that points at files
        counts only when one is in the file's part of the project (its folder, or the
        same top folder), and a workflow only then: a release workflow is no
        background for a routing file. Workflows used at this hour always count. A
        memory an open conflict disputes is no background: nothing about the file
        brought it, and its ⚠ line may not come with it."""
        found: list[Candidate] = []
        seen = set(chosen)
        disputed: set[str] = set()

        def take(
            memories: list[Memory],
            count: int,
            score: float,
            signal: str,
            richest: int,
            needs_file: bool = False,
        ) -> None:
            taken = 0
            for memory in memories:
                if taken == count or len(found) >= self.limits.background:
                    return
                if memory.id in seen or memory.id in disputed:
                    continue
                if not _belongs(memory, path, needs_file):
                    continue
                seen.add(memory.id)
                taken += 1
                found.append(Candidate(memory, score, [Reason(signal, score)], richest))

        hour_ids = self.sources.used_at_hour(project, at.astimezone(UTC).hour, 3)
        by_hour = self.sources.load(hour_ids, project, at)
        used = [by_hour[i] for i in hour_ids if i in by_hour]
        # Conventions enter compressed and history as summaries: background, not focus.
        pool = BACKGROUND_POOL if path is not None else 1  # room for the file's filter
        conventions = self.sources.of_types(project, at, (T.CONVENTION,), 6 * pool)
        workflows = self.sources.of_types(project, at, (T.WORKFLOW,), 2 * pool)
        history = self.sources.of_types(project, at, (T.LESSON, T.EPISODE), 3 * pool)
        pooled = [m.id for m in (*used, *conventions, *workflows, *history)]
        disputed.update(self.sources.disputed(pooled))
        take(used, 3, 0.6, f"used around {at:%H}:00", 0)
        # A convention someone is unsure of ("afaik the order doesn't matter") is no
        # background to work by; it still comes when it is about the file or task.
        firm = [m for m in conventions if not sounds_unsure(f"{m.title}\n{m.content}")]
        take(firm, 6, 0.5, "project convention", 2)
        take(workflows, 2, 0.4, "project workflow", 0, needs_file=True)  # whole, or as steps
        take(history, 3, 0.3, "project history", 1)
        return found


def with_search_results(
    prediction: Prediction, found: list[tuple[Memory, float]], query: str
) -> Prediction:
    """The prediction made about `query`: its best results are the critical tier (the
    user asked for them), the rest lead the relevant tier, and what the activity had
    predicted follows, each memory kept once; the block names the query."""
    reason = f"search: {query[:80]}"
    searched = [Candidate(memory, score, [Reason(reason, score)]) for memory, score in found]
    ids = {c.memory.id for c in searched}
    watched = [c for c in (*prediction.critical, *prediction.relevant) if c.memory.id not in ids]
    return replace(
        prediction,
        critical=searched[:QUERY_CRITICAL],
        relevant=searched[QUERY_CRITICAL:] + watched,
        background=[c for c in prediction.background if c.memory.id not in ids],
        related=[c for c in prediction.related if c.memory.id not in ids],
        query=query,
    )
