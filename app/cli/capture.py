"""`engram capture TRANSCRIPT`: read an assistant session's transcript (Claude Code's or
Codex's JSONL) and propose what it holds worth remembering — `MEMORY:` lines, fixes,
stated decisions — for review (`engram rem review`), or store the kinds the setting
`capture.auto_accept` names. The hooks do the same after each turn; this reads a whole
file, a few megabytes at a time, for people and tests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from app.cli.common import (
    CliState,
    cli,
    counted,
    emit_json,
    err,
    handle_errors,
    json_option,
    pass_state,
    project_option,
    say,
    waits,
)

if TYPE_CHECKING:
    from services.knowledge.session_capture import CaptureReport

ASSISTANTS = ("claude", "codex")


@cli.command()
@click.argument("transcript", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--session", "session_id", help="Session id (default: the transcript's own).")
@click.option(
    "--assistant",
    type=click.Choice(ASSISTANTS),
    default=None,
    help="Whose transcript it is (default: read from its records).",
)
@click.option(
    "--dry-run", is_flag=True, help="Show what would be stored or proposed; change nothing."
)
@click.option(
    "--llm/--no-llm",
    "use_llm",
    default=True,
    help="Word fixes and decisions with the language model (default: yes; rules without).",
)
@project_option
@json_option
@pass_state
@handle_errors
def capture(
    state: CliState,
    transcript: Path,
    session_id: str | None,
    assistant: str | None,
    dry_run: bool,
    use_llm: bool,
    project: str | None,
    as_json: bool,
) -> None:
    """Capture memories from an assistant session's TRANSCRIPT (a .jsonl file)."""
    from services.knowledge.session_capture import (
        auto_accept_kinds,
        capture_session,
        transcript_identity,
    )

    identity = transcript_identity(transcript)
    assistant = assistant or ("codex" if identity.formats == {"codex"} else "claude")
    session_id = session_id or identity.session_id or transcript.stem
    if project is None:
        project = _project_of(identity.cwd)
    engram = state.engram()
    auto_accept = auto_accept_kinds(engram.settings.get_str("capture.auto_accept"))
    llm = None
    if use_llm:
        llm = engram.llm_runner()
        click.get_current_context().call_on_close(llm.close)

    def read(offset: int) -> CaptureReport:
        return capture_session(
            engram.service,
            transcript,
            offset,
            session_id=session_id,
            project=project,
            assistant=assistant,
            auto_accept=auto_accept,
            llm=llm,
            dry_run=dry_run,
        )

    report = read(0)
    while report.more:
        later = read(report.new_offset)
        moved = later.new_offset > report.new_offset
        report.add(later)
        if not moved:
            break
    if report.stored:
        state.embed_waiting()
    _tell(report, project, assistant, session_id, as_json)


def _project_of(cwd: str | None) -> str | None:
    """The project of the session's folder when it is still here, else of this one."""
    from app.activity import project_here

    if cwd and Path(cwd).is_dir():
        return project_here(Path(cwd))
    return project_here()


def _tell(
    report: CaptureReport, project: str | None, assistant: str, session_id: str, as_json: bool
) -> None:
    from services.text.incoming import describe, redaction_json

    if report.redacted:
        err(describe(report.redacted))
    for problem in report.problems:
        err(f"  {problem}")
    if as_json:
        data: dict[str, Any] = report.to_dict()
        data.update(
            project=project,
            assistant=assistant,
            session_id=session_id,
            redacted=redaction_json(report.redacted),
        )
        emit_json(data)
        return
    would = "would be " if report.dry_run else ""
    say(
        f"read {report.records} records of {report.transcript} ({assistant} session "
        f"{session_id}, project {project or 'none'})"
    )
    if report.unreadable_lines:
        say(f"  {report.unreadable_lines} lines were not records of a known shape: skipped")
    for outcome in report.stored:
        say(f"{would}stored {outcome.memory_id} [{outcome.type.value}] {outcome.title}")
    for outcome in report.proposed:
        say(f"{would}proposed {outcome.finding_id} [{outcome.type.value}] {outcome.title}")
    for outcome in report.skipped:
        say(f"skipped [{outcome.type.value}] {outcome.title}: {outcome.reason}")
    if not (report.stored or report.proposed or report.skipped):
        say("nothing to capture")
    if report.model:
        say(f"worded by {report.model}")
    if report.proposed and not report.dry_run:
        count = len(report.proposed)
        say(f"{counted(count, 'proposal')} {waits(count)} for you: engram rem review")
