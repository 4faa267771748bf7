"""The candidates of session capture (`services.knowledge.session_capture`): what the
turns of a transcript hold worth remembering — `MEMORY:` lines, fixes (a command failing
with an error, edits, the same command passing) and decisions stated in so many words —
and the model's title and sentences for them, kept only when they name no file the
session did not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from services.llm.base import LLM, TimeBudget, ask_json
from services.memory import MAX_TITLE_CHARS, title_from_content
from services.text.capture import parse_memory_lines
from services.text.session_cues import (
    command_key,
    failure_line,
    is_probe,
    reports_failure,
    short_error,
    stated_decisions,
)
from services.text.transcripts import Speaker, ToolCall, Transcript, Turn
from services.text.words import STOPWORDS, normalised, sentences, without_fences
from services.types import MemoryType

MAX_NOTE_CHARS = 280  # the assistant's words kept in a fix (rules)
MAX_EVIDENCE_CHARS = 2_000  # what the model is shown of a candidate


@dataclass(frozen=True)
class Candidate:
    type: MemoryType
    title: str
    content: str
    evidence: str  # what it was read from; with type and project, its key
    origin: str  # "memory-line", "fix" or "decision"
    speaker: Speaker
    offset: int  # where the record that completes it starts
    file_refs: tuple[str, ...] = ()
    context: str = ""  # what the model is shown (a fix's command, output, notes)
    note: str = ""  # a fix's sentences (rules: the assistant's words)


def find_candidates(transcript: Transcript, since: int = 0) -> tuple[list[Candidate], list[str]]:
    """What the turns hold worth remembering that completes at byte `since` or later,
    in order; and the problems of refused MEMORY lines there. (A fix is seen whole
    even when its failure came before `since`.)"""
    candidates: list[Candidate] = []
    problems: list[str] = []
    for turn in transcript.turns:
        if turn.speaker is Speaker.TOOL or not turn.text or turn.offset < since:
            continue
        captured, refused = parse_memory_lines(
            without_fences(turn.text), f"{turn.speaker.value} text at byte {turn.offset}"
        )
        problems.extend(f"{problem.where}: {problem.reason}" for problem in refused)
        for item in captured:
            candidates.append(
                Candidate(
                    item.type,
                    item.title,
                    item.content,
                    item.content,
                    "memory-line",
                    turn.speaker,
                    turn.offset,
                )
            )
        by_user = turn.speaker is Speaker.USER
        for statement in stated_decisions(turn.text, by_user):
            if "MEMORY:" in statement.sentence:
                continue  # already read as a MEMORY line
            sentence = statement.sentence
            candidates.append(
                Candidate(
                    statement.type,
                    title_from_content(sentence[:1].upper() + sentence[1:]),
                    sentence,
                    sentence,
                    "decision",
                    turn.speaker,
                    turn.offset,
                )
            )
    candidates.extend(f for f in find_fixes(transcript.turns, transcript.cwd) if f.offset >= since)
    candidates.sort(key=lambda c: c.offset)
    return candidates, problems


@dataclass
class _Failure:
    command: str
    error: str
    output: str
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def find_fixes(turns: Iterable[Turn], cwd: str | None = None) -> list[Candidate]:
    """Fixes: a command failing with an error, edits to files, the same command passing."""
    calls: dict[str, ToolCall] = {}
    failing: dict[str, _Failure] = {}  # by command key
    fixes: list[Candidate] = []
    for turn in turns:
        for call in turn.calls:
            if call.call_id:
                calls[call.call_id] = call
        if turn.speaker is Speaker.ASSISTANT and turn.text:
            for failure in failing.values():
                failure.notes.append(turn.text)
        for result in turn.results:
            tool = calls.get(result.call_id)
            if tool is None:
                continue
            if tool.writes:
                if not result.failed:
                    for failure in failing.values():
                        failure.files.extend(p for p in tool.paths if p not in failure.files)
                continue
            if tool.command is None or is_probe(tool.command):
                continue
            key = command_key(tool.command)
            if result.failed or reports_failure(result.text):
                error = failure_line(result.text)
                if error is None:
                    continue  # failed without saying why: nothing to remember
                known = failing.get(key)
                if known is None:
                    failing[key] = _Failure(tool.command, error, result.text)
                else:  # failing again: the last error is the one the edits fixed
                    known.error, known.output = error, result.text
                continue
            fixed = failing.pop(key, None)
            if fixed is not None and fixed.files:
                fixes.append(_fix(fixed, turn.offset, cwd))
    return fixes


def _fix(failure: _Failure, offset: int, cwd: str | None) -> Candidate:
    files = tuple(dict.fromkeys(relative_path(path, cwd) for path in failure.files))
    shown_files = ", ".join(files)
    command = failure.command if len(failure.command) <= 200 else failure.command[:199] + "…"
    note = _assistant_note(failure.notes)
    content = (
        f"`{command}` failed with: {failure.error}\n"
        f"Fixed by changing {shown_files}; the same command passed afterwards."
    )
    notes = "\n".join(failure.notes)[-1200:]
    context = (
        f"Command: {command}\nError: {failure.error}\nOutput (end):\n{failure.output[-800:]}\n"
        f"Files changed: {shown_files}\nThe assistant said while fixing it:\n{notes}"
    )
    return Candidate(
        MemoryType.FIX,
        clip_title(f"Fix: {short_error(failure.error)}"),
        content + (f"\n{note}" if note else ""),
        f"{failure.error}\n{' '.join(sorted(files))}\n{command_key(failure.command)}",
        "fix",
        Speaker.ASSISTANT,
        offset,
        files,
        context,
        note,
    )


_STEP_TALK = re.compile(
    r"^(?:let me|let's|now,? (?:let|i)|next|running|ok|okay|great|good|perfect|done|"
    r"all green)\b|^i(?:'ll| will) (?:re-?run|run|check|look|read|try|test|verify)\b",
    re.I,
)


def _assistant_note(notes: list[str]) -> str:
    """The assistant's own account of the fix: the first sentences of its last words
    between the failure and the pass that say more than the next step."""
    for text in reversed(notes):
        said = [s for s in sentences(without_fences(text)) if not _STEP_TALK.match(s)]
        said = [s for s in said if "MEMORY:" not in s]
        if not said:
            continue
        note = " ".join(said[:2])
        return note if len(note) <= MAX_NOTE_CHARS else note[: MAX_NOTE_CHARS - 1] + "…"
    return ""


def relative_path(path: str, cwd: str | None) -> str:
    """`path` relative to the session's folder when it lies inside it."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


# --- summarising --------------------------------------------------------------------------

# The tiny default model repeats itself and adds what it imagines ("the csv module is a
# data science tool"). Its words are kept only when they are the evidence's words: no
# file or path the evidence does not name, most words found there, no sentence twice.
_PATHISH = re.compile(
    r"[\w.-]+/[\w./-]+|\b[\w-]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|"
    r"cs|swift|md|toml|json|ya?ml|cfg|ini|txt|sh|sql|html|css|lock)\b"
)
_WORD = re.compile(r"[a-z][a-z0-9_]+")
# Words any account of a fix or a decision may use without finding them in the session.
_ACCOUNT_WORDS = frozenset(
    """fix fixed fixes fixing change changed changes replace replaced use used using add added
    remove removed instead now again because so failed fails failure error errors test tests
    passed pass passes passing command file files code decided decision rule always never
    make made keep kept switch switched rather prefer new old wrong right works work""".split()
)
MIN_GROUNDED_SHARE = 0.7
MIN_TITLE_WORDS = 3
MIN_CONTENT_WORDS = 6


def summarised(candidate: Candidate, llm: LLM, budget: TimeBudget) -> Candidate:
    """The candidate with the model's title (and, for a fix, its sentences) when they are
    grounded in the evidence; unchanged otherwise. MEMORY lines are kept as written, and
    a decision keeps the words it was said in."""
    from services.llm.prompts import render, schema

    if candidate.origin == "memory-line":
        return candidate
    evidence = (candidate.context or candidate.content)[:MAX_EVIDENCE_CHARS]
    kind = "fix of a failing command" if candidate.origin == "fix" else candidate.type.value
    answer = ask_json(
        llm,
        render("summarize_capture", kind=kind, evidence=evidence),
        schema("summarize_capture"),
        lambda value: _usable(str(value["title"]), str(value["content"]), evidence),
        max_tokens=200,
        budget=budget,
    )
    if answer is None:
        return candidate
    title = clip_title(" ".join(str(answer["title"]).split()))
    if candidate.origin != "fix":
        return replace(candidate, title=title)
    said = " ".join(str(answer["content"]).split())
    head = candidate.content.split("\n")[:2]  # the command and error; the files
    return replace(candidate, title=title, content="\n".join([*head, said]), note=said)


def _usable(title: str, content: str, evidence: str) -> bool:
    """A title of a few words and a content of a sentence or two that is more than the
    title again, both grounded in the evidence."""
    if len(title.split()) < MIN_TITLE_WORDS or len(content.split()) < MIN_CONTENT_WORDS:
        return False
    if normalised(content).rstrip(".") == normalised(title).rstrip("."):
        return False
    return grounded(f"{title}. {content}", evidence)


def grounded(text: str, evidence: str) -> bool:
    """`text` (a model's answer) names no file the evidence does not, takes most of its
    words from it, and says no sentence twice."""
    if not text.strip() or any(path not in evidence for path in _PATHISH.findall(text)):
        return False
    said = [s.lower() for s in sentences(text)]
    if len(set(said)) < len(said):
        return False
    known = set(_WORD.findall(evidence.lower())) | _ACCOUNT_WORDS
    words = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
    if not words:
        return False
    found = sum(word in known or word.rstrip("s") in known for word in words)
    return found / len(words) >= MIN_GROUNDED_SHARE


def clip_title(title: str) -> str:
    title = title.strip()
    if len(title) <= MAX_TITLE_CHARS:
        return title
    return title[: MAX_TITLE_CHARS - 1].rstrip() + "…"
