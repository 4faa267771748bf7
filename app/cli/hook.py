"""`engram hook EVENT [--for ASSISTANT]`: what an assistant's hook runs. It reads the
hook's JSON on standard input, gives the session what it needs (services/assistants:
a context block at session start, the memories a prompt needs, a read file's critical
notes; a file read or written becomes activity for the prediction; pre-compact and stop
capture the transcript) and answers in the assistant's format (app/hook_formats.py).

A hook never holds a session up: whatever goes wrong — unreadable input, a damaged or
locked store — it exits 0 with nothing on stdout (the reason goes to stderr with -v),
and it prints at most once, at the end. The resident service runs this same command
with its warm services; `hooks.timeout_ms` is enforced by the client.

EVENT is Engram's name (session-start, prompt, tool-use, pre-compact, stop) or the
assistant's own; the input's `hook_event_name` wins when it names an event Engram
answers. Without --for the assistant is read from the input's dialect (Claude Code when
nothing says otherwise).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from app.cli.common import (
    CliState,
    cli,
    emit_json,
    err,
    pass_state,
    read_stdin,
    stdin_is_terminal,
)
from app.hook_formats import HookInputError, answer, parse_call, takes_context

if TYPE_CHECKING:
    from app.activity import Located
    from app.composition import Engram
    from services.activity.prediction import Prediction, PredictiveEngine
    from services.assistants.events import FileTouch, HookCall
    from services.assistants.injection import HookLimits
    from services.assistants.ledger import SessionLedger
    from services.storage.assistant_sessions import SessionRow

log = logging.getLogger(__name__)
MAX_HOOK_INPUT = 8 * 1024 * 1024  # a Write's whole file is in its input; more is refused
CAPTURED_ASSISTANTS = frozenset({"claude", "codex"})  # whose transcripts capture reads
CAPTURE_BYTES = 2 * 1024 * 1024  # of transcript read by one hook; the rest waits for the next


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("event", required=False)
@click.option(
    "--for", "assistant", help="claude, codex, gemini or cursor (default: from the input)."
)
@click.pass_context
@pass_state
def hook(state: CliState, ctx: click.Context, event: str | None, assistant: str | None) -> None:
    """Answer an assistant's hook: the JSON it sends on stdin in, its answer out.

    Never fails a session: on any problem it exits 0 and prints nothing (-v says why)."""
    from services.assistants.events import HookEvent

    try:
        call = parse_call(_read_input(), event, assistant)
        engram = state.engram(catch_up=False, back_up=False)
        if call.event is HookEvent.PROMPT:
            engram.prepare_search()
        reply = answer(call, run_hook(engram, call))
    except Exception as error:  # the one rule: an assistant's session is never blocked
        if state.verbose:
            reason = str(error) if isinstance(error, HookInputError) else repr(error)
            err(f"engram hook: nothing answered: {reason}")
        return
    if ctx.args and state.verbose:
        err(f"engram hook: ignored arguments {ctx.args}")
    if reply is not None:
        emit_json(reply)


def _read_input() -> Any:
    if stdin_is_terminal():
        raise HookInputError("standard input is a terminal: an assistant pipes its JSON in")
    raw = read_stdin(MAX_HOOK_INPUT + 1)
    if len(raw) > MAX_HOOK_INPUT:
        raise HookInputError(f"the input is over {MAX_HOOK_INPUT} bytes")
    if not raw.strip():
        raise HookInputError("no input on stdin")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise HookInputError(f"the input is not JSON: {error}") from None


def run_hook(engram: Engram, call: HookCall) -> str | None:
    """Do what `call` asks of Engram; returns the context for the assistant, if any."""
    from services.assistants.events import HookEvent
    from services.assistants.injection import HookLimits
    from services.assistants.ledger import SessionLedger

    located = _located(call.cwd)
    project = located.project if located is not None else None
    ledger = SessionLedger(engram.store, call.session_id)
    ledger.open(call.assistant, project, str(call.cwd) if call.cwd else None, call.transcript_path)
    limits = HookLimits(
        engram.settings.get_int("hooks.session_budget"),
        engram.settings.get_int("hooks.prompt_budget"),
    )
    if call.event is HookEvent.SESSION_START:
        return _session_start(engram, call, ledger, limits, located)
    if call.event is HookEvent.PROMPT:
        return _prompt(engram, call, ledger, limits, project)
    if call.event is HookEvent.TOOL_USE:
        return _tool_use(engram, call, ledger, limits)
    if call.event is HookEvent.PRE_COMPACT:
        ledger.forget_given()  # what was given is summarised away: it may be given again
    try:
        _capture(engram, ledger)
    except Exception as error:  # an unreadable transcript is read again next time
        log.info("the transcript was not captured: %r", error)
    return None


def _located(cwd: Path | None) -> Located | None:
    """The project and repository of the session's folder (None without a folder)."""
    from app.activity import locate

    if cwd is None or not cwd.is_dir():
        return None
    return locate(cwd)


def _session_start(
    engram: Engram,
    call: HookCall,
    ledger: SessionLedger,
    limits: HookLimits,
    located: Located | None,
) -> str | None:
    from app.activity import read_profile
    from services.assistants.injection import session_context
    from services.assistants.ledger import prune_old_sessions

    prune_old_sessions(engram.store)
    if located is None:
        if call.forgets_context:
            ledger.forget_given()
        return None
    profile, consent = read_profile(engram)
    block = session_context(
        ledger,
        engram.assembler(),
        _project_prediction(engram, located),
        limits,
        call.forgets_context,
        profile,
        consent,
    )
    if block is None:
        return None
    engram.service.record_read(block.memory_ids)
    return block.text


def _project_prediction(engram: Engram, located: Located) -> Prediction:
    """What the project's context is assembled from: the activity last watched in it
    (`engram watch`, the tray, earlier hooks) and its checked-out branch, as of now."""
    from app.activity import restore_state

    now = datetime.now(UTC)
    engine = engram.predictive_engine()
    restore_state(engram, engine, located.project)
    _on_branch(engine, located, now)
    engine.current_project = located.project
    return engine.prediction(located.project, at=now)


def _on_branch(engine: PredictiveEngine, located: Located, now: datetime) -> None:
    """Put the repository's checked-out branch into the project's activity (the
    prediction is computed once, after)."""
    from app.activity import branch_of
    from services.activity.signals import Signal, SignalKind

    branch = branch_of(located.root)
    if branch:
        signal = Signal(SignalKind.BRANCH_CHECKOUT, now, located.project, branch=branch)
        engine.state(located.project).apply(signal)


def _prompt(
    engram: Engram,
    call: HookCall,
    ledger: SessionLedger,
    limits: HookLimits,
    project: str | None,
) -> str | None:
    from services.assistants.injection import prompt_memories
    from services.filters import MemoryFilter
    from services.search.retrieval import SearchResult

    if not call.prompt or not takes_context(call) or project is None:
        return None

    def search(prompt: str) -> list[SearchResult]:
        return engram.service.search(prompt, MemoryFilter(project=project), limit=10).results

    block = prompt_memories(ledger, search, call.prompt, limits, project)
    if block is None:
        return None
    engram.service.record_read(block.memory_ids)
    return block.text


def _tool_use(
    engram: Engram, call: HookCall, ledger: SessionLedger, limits: HookLimits
) -> str | None:
    """Each file read or written becomes a file-opened or file-saved signal (kept as
    the last activity, where `engram context` and the next session start find it); a
    read file's critical notes are given once."""
    from app.activity import file_signal, locate, restore_state, save_state, secret_patterns
    from services.activity.signals import SignalKind
    from services.activity.watch_rules import PathRules
    from services.assistants.events import FileAction
    from services.assistants.injection import file_memories
    from services.knowledge.declared_truth import contradicted_by_file

    patterns = secret_patterns(engram)
    # What `engram watch` counts as activity: not dependencies, builds, ignored files,
    # binaries or this data folder (secret files count, but are never read).
    rules = PathRules(secret_patterns=patterns, excluded_roots=(engram.data_dir.resolve(),))
    engine = engram.predictive_engine()
    context: str | None = None
    for touch in _existing(call.files):
        where = locate(touch.path)
        if not rules.accepts(touch.path.resolve(), where.root):
            continue
        if where.project not in engine.states:  # carry the branch and errors on
            restore_state(engram, engine, where.project)
            _on_branch(engine, where, datetime.now(UTC))
        opened = touch.action is FileAction.OPENED
        kind = SignalKind.FILE_OPENED if opened else SignalKind.FILE_SAVED
        prediction = engine.observe(file_signal(kind, touch.path, patterns, where.project))
        save_state(engram, engine, where.root)
        if opened and context is None and takes_context(call):
            block = file_memories(
                ledger, prediction, limits, engram.replaced_among, contradicted_by_file
            )
            if block is not None:
                engram.service.record_read(block.memory_ids)
                context = block.text
    return context


def _existing(files: tuple[FileTouch, ...]) -> list[FileTouch]:
    return [touch for touch in files if touch.path.is_file()]


def _capture(engram: Engram, ledger: SessionLedger) -> None:
    """Capture the session's transcript (Claude Code's and Codex's JSONL) from where it
    was last read, by rules (a model would not answer within a hook's time), proposing
    what it finds in the review unless `capture.auto_accept` names its kind; unless
    `capture.enabled` is off."""
    from services.assistants.injection import capture_transcript

    if not engram.settings.get_bool("capture.enabled"):
        return
    if ledger.row is None or ledger.row.assistant not in CAPTURED_ASSISTANTS:
        return
    try:
        from services.knowledge.session_capture import auto_accept_kinds, capture_session
    except ImportError:  # session capture is another part of this work
        log.info("session capture is not available; the transcript is not read")
        return
    accepted = auto_accept_kinds(engram.settings.get_str("capture.auto_accept"))

    def capture(row: SessionRow) -> int | None:
        report = capture_session(
            engram.service,
            Path(row.transcript_path or ""),
            row.transcript_offset,
            session_id=row.session_id,
            project=row.project,
            assistant=row.assistant,
            auto_accept=accepted,
            max_bytes=CAPTURE_BYTES,
        )
        log.info(
            "captured %s: %d stored, %d proposed",
            row.transcript_path,
            len(report.stored),
            len(report.proposed),
        )
        return report.new_offset

    capture_transcript(ledger, capture)
