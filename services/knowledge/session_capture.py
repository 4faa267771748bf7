"""Capture from assistant sessions: what a Claude Code or Codex transcript holds that is
worth remembering, proposed in the review (or stored, for the kinds the user accepts
without review).

The one entry point, for the hooks (after a turn, at pre-compact and stop) and for
`engram capture`::

    capture_session(
        service: MemoryService, transcript: Path, start_offset: int, *,
        session_id: str, project: str | None, assistant: str,   # "claude", "codex"
        auto_accept: frozenset[MemoryType] = frozenset(),       # capture.auto_accept
        llm: LLM | None = None,                                 # None: rules only
        model_seconds: float = 20.0,   # the model's time for all candidates of a call
        max_bytes: int = 8 MiB,        # new bytes read at most
        dry_run: bool = False,         # report, change nothing
        embed: bool = False,           # embed stored memories now (else queued)
    ) -> CaptureReport                 # .new_offset, .more, .stored/.proposed/.skipped

It raises `UserInputError` when the transcript cannot be read, and what the store raises
when it cannot write. The caller keeps only the byte offset read so far
(`assistant_session.transcript_offset`) and passes `report.new_offset` back next time.

Reading is incremental (only bytes after the offset; a last line still being written
is left for next time, unless it is already a whole JSON object), bounded (at most
`max_bytes` a call: `report.more` says bytes wait; a single line longer than that is
skipped, never held whole) and robust (invalid UTF-8, lines that are not JSON and
records of unknown shape are counted and skipped). A file now shorter than the offset
(rotated, truncated) is read again from 0. So that a fix whose failure was read by an
earlier call is still seen, up to `LOOKBACK_BYTES` before the offset are read again as
context; only what completes after the offset is captured.

What becomes a candidate:

- `MEMORY:type:content` lines the person or the assistant wrote (outside code fences),
  as written;
- a fix: a command that failed with an error (a non-zero exit or an error result whose
  output names the error: a FAILED test, an exception, `error: …`), then edits to files,
  then the same command passing. Its title is the error's key line; its content names
  the command, the error and the files changed (`file_refs`, from the transcript only)
  and one or two sentences — the model's, when one is given, else the assistant's own
  words from between the failure and the pass;
- a decision or convention stated in so many words (`services.text.session_cues`).

(`services.knowledge.session_candidates` finds them and asks the model.)

Every text passes the incoming gate (`service.incoming`: secrets become
`[redacted:kind]`) before anything else sees it — the model, a finding, the database.
Each candidate has a key: a hash of its project, type and evidence (the line, the
sentence, the error with its files and command). The memory it would become and its
finding are named by that key, so capturing the same range again, or the same thing in
another session, creates nothing new; a finding dismissed in the review is not proposed
again. Stored and proposed memories carry the session id (the hooks leave a session's
own memories out of what they give it) and the tags "captured" and the assistant's name.

Accepting a proposal (`engram rem review`, the review window) runs `accept_finding`
through the REM answer dispatch (op "capture", option "store").
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from services.errors import NotFoundError, UserInputError
from services.knowledge.session_candidates import (
    Candidate,
    clip_title,
    find_candidates,
    summarised,
)
from services.llm.base import LLM, LLMUnavailable, TimeBudget
from services.storage.findings import Finding, FindingStore, Option, Status
from services.text.incoming import IncomingText
from services.text.transcripts import (
    Speaker,
    Transcript,
    complete_end,
    is_json_object,
    parse_transcript,
)
from services.text.words import normalised, sha256_hex
from services.types import MemoryType, parse_enum

if TYPE_CHECKING:
    from services.memories.service import MemoryService

log = logging.getLogger(__name__)

OP = "capture"
MAX_BYTES_PER_CALL = 8 * 1024 * 1024
LOOKBACK_BYTES = 1024 * 1024
PEEK_BYTES = 256 * 1024
DEFAULT_MODEL_SECONDS = 20.0
CAPTURED_TAG = "captured"

CONFIDENCE = {"memory-line": 0.7, "fix": 0.6, "decision": 0.6}

CAPTURE_OPTIONS = [
    Option("store", "Store the memory", "keep it as a memory of the project"),
    Option("dismiss", "Not worth keeping", "forget it; it is not proposed again"),
    Option("skip", "Skip", "decide later; the finding stays open"),
]


@dataclass(frozen=True)
class Outcome:
    status: str  # "stored", "proposed" or "skipped"
    type: MemoryType
    title: str
    content: str
    origin: str
    memory_id: str
    file_refs: tuple[str, ...] = ()
    finding_id: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["type"] = self.type.value
        data["file_refs"] = list(self.file_refs)
        return data


@dataclass
class CaptureReport:
    transcript: str
    start_offset: int  # where reading started (0 after a restart)
    new_offset: int  # pass this next time
    restarted: bool = False  # the file was shorter than the offset given
    more: bool = False  # bytes after `new_offset` wait (the per-call cap was reached)
    records: int = 0
    unreadable_lines: int = 0
    session_id: str | None = None  # the transcript's own id, when it names one
    stored: list[Outcome] = field(default_factory=list)
    proposed: list[Outcome] = field(default_factory=list)
    skipped: list[Outcome] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # MEMORY lines that were refused
    redacted: dict[str, int] = field(default_factory=dict)
    model: str | None = None  # the model that summarised, None: rules only
    dry_run: bool = False

    def add(self, later: CaptureReport) -> None:
        """Take in the report of the next call over the same transcript."""
        self.new_offset, self.more = later.new_offset, later.more
        self.restarted = self.restarted or later.restarted
        self.records += later.records
        self.unreadable_lines += later.unreadable_lines
        self.session_id = self.session_id or later.session_id
        self.stored.extend(later.stored)
        self.proposed.extend(later.proposed)
        self.skipped.extend(later.skipped)
        self.problems.extend(later.problems)
        self.redacted = dict(Counter(self.redacted) + Counter(later.redacted))
        self.model = self.model or later.model

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("stored", "proposed", "skipped"):
            data[name] = [outcome.to_dict() for outcome in getattr(self, name)]
        return data


# --- reading ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    data: bytes  # whole lines: context before `start`, then what is new
    data_offset: int  # where `data` starts in the file
    start: int  # the first byte not read before
    end: int  # the new offset
    restarted: bool
    more: bool
    oversized: bool  # a line longer than the cap was skipped


def read_window(
    path: Path, start_offset: int, max_bytes: int = MAX_BYTES_PER_CALL, lookback: int = 0
) -> Window:
    """The whole lines after `start_offset` (at most `max_bytes`), with up to `lookback`
    bytes of whole lines before it as context."""
    try:
        with path.open("rb") as handle:
            size = path.stat().st_size
            restarted = start_offset < 0 or start_offset > size
            start = 0 if restarted else start_offset
            context_from = max(0, start - lookback)
            handle.seek(context_from)
            context = handle.read(start - context_from)
            if context_from > 0:  # drop the line the lookback starts inside
                cut = context.find(b"\n") + 1
                context, context_from = context[cut:], context_from + cut
                if not cut:
                    context, context_from = b"", start
            new = handle.read(max(1, max_bytes))
            at_end = handle.read(1) == b""
    except OSError as error:
        raise UserInputError(f"cannot read the transcript {path}: {error.strerror}") from None
    whole = complete_end(new)
    oversized = False
    if whole < len(new) and at_end and is_json_object(new[whole:].strip()):
        whole = len(new)  # a last record written without its newline
    elif whole == 0 and len(new) >= max_bytes and not at_end:
        # One line longer than the cap: skip what was read of it; the rest of it is an
        # unreadable fragment next time.
        oversized, whole, new = True, len(new), b""
    return Window(
        data=context + new[:whole],
        data_offset=context_from,
        start=start,
        end=start + whole,
        restarted=restarted,
        more=start + whole < size,
        oversized=oversized,
    )


def transcript_identity(path: Path) -> Transcript:
    """The start of a transcript, read for its session id, folder and format."""
    return parse_transcript(read_window(path, 0, PEEK_BYTES).data)


# --- storing ----------------------------------------------------------------------------------


def auto_accept_kinds(value: str) -> frozenset[MemoryType]:
    """The kinds of the `capture.auto_accept` setting ("decision,fix")."""
    kinds = [part for part in value.split(",") if part.strip()]
    return frozenset(parse_enum(MemoryType, kind, "memory type") for kind in kinds)


def capture_key(project: str | None, candidate: Candidate) -> str:
    raw = json.dumps([project or "", candidate.type.value, normalised(candidate.evidence)])
    return sha256_hex(raw, 16)


def memory_id_for(project: str | None, key: str) -> str:
    prefix = re.sub(r"[^a-z0-9]+", "-", (project or "mem").lower()).strip("-") or "mem"
    return f"{prefix[:60]}-cap-{key}"


def finding_id_for(key: str) -> str:
    return f"f-cap-{key[:12]}"


def capture_session(
    service: MemoryService,
    transcript: Path,
    start_offset: int,
    *,
    session_id: str,
    project: str | None,
    assistant: str,
    auto_accept: frozenset[MemoryType] = frozenset(),
    llm: LLM | None = None,
    model_seconds: float = DEFAULT_MODEL_SECONDS,
    max_bytes: int = MAX_BYTES_PER_CALL,
    dry_run: bool = False,
    embed: bool = False,
) -> CaptureReport:
    """Read the transcript after `start_offset`, and store or propose what it holds
    worth remembering; the report says what, and the offset to pass next time."""
    window = read_window(transcript, start_offset, max_bytes, LOOKBACK_BYTES)
    parsed = parse_transcript(window.data, window.data_offset)
    report = CaptureReport(
        transcript=str(transcript),
        start_offset=window.start,
        new_offset=window.end,
        restarted=window.restarted,
        more=window.more,
        records=parsed.records,
        unreadable_lines=parsed.unreadable + (1 if window.oversized else 0),
        session_id=parsed.session_id,
        dry_run=dry_run,
    )
    found, report.problems = find_candidates(parsed, since=window.start)
    redacted: Counter[str] = Counter()
    fresh = [_gated(candidate, service.incoming, redacted) for candidate in found]
    findings = FindingStore(service.store)
    budget = TimeBudget(model_seconds) if llm is not None else None
    seen: set[str] = set()
    for candidate in fresh:
        key = capture_key(project, candidate)
        memory_id, finding_id = memory_id_for(project, key), finding_id_for(key)
        reason = _known(service, findings, memory_id, finding_id, key in seen)
        seen.add(key)
        if reason:
            report.skipped.append(_outcome("skipped", candidate, memory_id, finding_id, reason))
            continue
        if llm is not None and budget is not None:
            candidate = _with_model(candidate, llm, budget, service.incoming, redacted, report)
        fields = _memory_fields(candidate, memory_id, project, session_id, assistant)
        if candidate.type in auto_accept:
            if not dry_run and not _add(service, fields, embed):
                reason = f"already stored as {memory_id}"
                report.skipped.append(_outcome("skipped", candidate, memory_id, None, reason))
                continue
            report.stored.append(_outcome("stored", candidate, memory_id, None))
        else:
            if not dry_run:
                findings.save([_finding(candidate, finding_id, fields, session_id, assistant)])
            report.proposed.append(_outcome("proposed", candidate, memory_id, finding_id))
    report.redacted = dict(redacted)
    return report


def _add(service: MemoryService, fields: dict[str, Any], embed: bool) -> bool:
    """Store the memory; False when another writer stored it first (same key)."""
    try:
        service.add(fields, embed=embed)
    except UserInputError:
        if service.store.existing_ids([fields["id"]]):
            return False
        raise
    return True


def _gated(candidate: Candidate, incoming: IncomingText, redacted: Counter[str]) -> Candidate:
    """The candidate with every text through the incoming gate (secrets redacted)."""
    title = incoming.text(candidate.title, Counter())  # the content counts the same secret
    return replace(
        candidate,
        title=clip_title(title),
        content=incoming.text(candidate.content, redacted),
        evidence=incoming.text(candidate.evidence, Counter()),
        context=incoming.text(candidate.context, Counter()),
        note=incoming.text(candidate.note, Counter()),
        file_refs=tuple(incoming.text(ref, redacted) for ref in candidate.file_refs),
    )


def _with_model(
    candidate: Candidate,
    llm: LLM,
    budget: TimeBudget,
    incoming: IncomingText,
    redacted: Counter[str],
    report: CaptureReport,
) -> Candidate:
    if candidate.origin == "memory-line" or not budget.allows_a_call():
        return candidate
    try:
        better = summarised(candidate, llm, budget)
    except LLMUnavailable as error:  # a timeout too: the rules' text stands
        log.info("capture without the model: %s", error)
        return candidate
    if better is candidate:
        return candidate
    report.model = llm.model_id
    return _gated(better, incoming, redacted)


def _known(
    service: MemoryService,
    findings: FindingStore,
    memory_id: str,
    finding_id: str,
    repeated: bool,
) -> str:
    """Why a candidate is not new ("" when it is)."""
    if repeated:
        return "said again in this session"
    if service.store.existing_ids([memory_id]):
        return f"already stored as {memory_id}"
    try:
        finding = findings.get(finding_id)
    except NotFoundError:
        return ""
    if finding.status is Status.PENDING:
        return f"already proposed ({finding_id})"
    if finding.status is Status.DISMISSED:
        return f"dismissed in the review ({finding_id})"
    return f"already answered in the review ({finding_id})"


def _memory_fields(
    candidate: Candidate,
    memory_id: str,
    project: str | None,
    session_id: str,
    assistant: str,
) -> dict[str, Any]:
    return {
        "id": memory_id,
        "type": candidate.type.value,
        "title": candidate.title,
        "content": candidate.content,
        "project": project,
        "tags": [CAPTURED_TAG, assistant] if assistant else [CAPTURED_TAG],
        "file_refs": list(candidate.file_refs),
        "session_id": session_id,
        "confidence": CONFIDENCE.get(candidate.origin, 0.5),
        "source": "automatic",
    }


def _finding(
    candidate: Candidate,
    finding_id: str,
    fields: dict[str, Any],
    session_id: str,
    assistant: str,
) -> Finding:
    who = "you" if candidate.speaker is Speaker.USER else "the assistant"
    if candidate.origin == "fix":
        what = "a fix the assistant made"
    elif candidate.origin == "memory-line":
        what = f"a MEMORY line {who} wrote"
    else:
        what = f"a {candidate.type.value} {who} stated"
    summary = f"Captured from a {assistant or 'assistant'} session ({what}): {candidate.title}"
    return Finding(
        op=OP,
        kind=f"captured_{candidate.type.value}",
        summary=summary,
        memory_ids=[],
        options=CAPTURE_OPTIONS,
        recommended="store",
        detail={
            "memory": {k: v for k, v in fields.items() if v is not None},
            "session_id": session_id,
            "assistant": assistant,
            "origin": candidate.origin,
            "evidence": candidate.evidence[:500],
        },
        id=finding_id,
    )


def _outcome(
    status: str, candidate: Candidate, memory_id: str, finding_id: str | None, reason: str = ""
) -> Outcome:
    return Outcome(
        status,
        candidate.type,
        candidate.title,
        candidate.content,
        candidate.origin,
        memory_id,
        candidate.file_refs,
        finding_id,
        reason,
    )


# --- answering --------------------------------------------------------------------------------


def accept_finding(service: MemoryService, finding: Finding) -> bool:
    """Store the memory a capture finding proposes (its `detail["memory"]`); False when
    it is already stored."""
    draft = finding.detail.get("memory")
    if not isinstance(draft, dict) or not draft.get("content"):
        return False
    memory_id = draft.get("id")
    if isinstance(memory_id, str) and service.store.existing_ids([memory_id]):
        return False
    return _add(service, {"source": "automatic", **draft}, embed=False)
