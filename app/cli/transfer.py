"""`engram export | import | ingest`."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

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
    read_stdin,
    say,
)
from services.errors import Problem, UserInputError, ValidationFailed
from services.filters import MemoryFilter
from services.memory import Memory, parse_time


@cli.command()
@project_option
@click.option(
    "--format", "format_", type=click.Choice(["json", "jsonl"]), default="json", show_default=True
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of stdout.",
)
@json_option
@pass_state
@handle_errors
def export(
    state: CliState, project: str | None, format_: str, output: Path | None, as_json: bool
) -> None:
    """Export memories (all tiers, superseded included) as JSON or JSONL. JSON also
    carries the conflicts between them, with what you settled; JSONL is memories only."""
    from services.knowledge.conflict_transfer import exported
    from services.memories.transfer import export_document

    engram = state.engram(catch_up=False)
    project = state.known_project(project)  # a misspelt -p is not an empty export
    memories = [m for m in engram.store.iter_all() if project is None or m.project == project]
    if format_ == "json":
        document = export_document(memories, project, lambda listed: exported(engram.store, listed))
        text = json.dumps(document, ensure_ascii=False, indent=1)
    else:
        text = "\n".join(json.dumps(m.to_dict(), ensure_ascii=False) for m in memories)
        left_out = exported(engram.store, memories)
        if left_out:
            records = counted(len(left_out), "conflict record", "conflict records")
            err(
                f"note: JSONL holds memories only; it leaves out {records} between them "
                "(what you settled with `engram contradictions`): export with --format json "
                "to keep them"
            )
    text += "\n"
    if output is None:
        sys.stdout.write(text)
        return
    temporary = output.with_name(output.name + ".part")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(output)
    count = engram.store.count(MemoryFilter.everything(project))
    if as_json:
        emit_json({"exported": count, "file": str(output)})
    else:
        say(f"exported {counted(count, 'memory', 'memories')} to {output}")


@cli.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--replace", is_flag=True, help="Overwrite memories whose id exists.")
@click.option("--skip-existing", is_flag=True, help="Keep memories whose id exists.")
@click.option(
    "--project",
    "-p",
    default=None,
    help="Project of the records that name none (a record's own project is kept).",
)
@json_option
@pass_state
@handle_errors
def import_(
    state: CliState,
    file: Path,
    replace: bool,
    skip_existing: bool,
    project: str | None,
    as_json: bool,
) -> None:
    """Import an export (JSON) or JSONL: all or nothing, every problem reported."""
    from services.knowledge import conflict_transfer
    from services.knowledge.supersession import apply_declared, declared_problems
    from services.memories.transfer import read_import_file, without_stored_copies
    from services.text.incoming import describe, redaction_json

    if replace and skip_existing:
        raise click.UsageError("--replace and --skip-existing exclude each other")
    engram = state.engram()
    imported = read_import_file(file, default_project=project, gate=engram.service.incoming)
    memories = imported.memories
    problems = declared_problems(engram.store, memories, str(file))
    conflicts, found = conflict_transfer.read_section(
        imported.contradictions, str(file), {m.id for m in memories}, engram.store.existing_ids
    )
    problems += found
    if problems:
        raise ValidationFailed(f"{file}: nothing was imported", problems)
    records = {m.id: m for m in memories}
    memories, copies = without_stored_copies(
        memories,
        lambda m: engram.service.stored_copy(m.to_dict(), m.project),
        engram.store.existing_ids(m.id for m in memories),
    )
    report = engram.service.import_memories(memories, replace, skip_existing, embed=False)
    for record_id, copy in copies.items():  # as `add` does: the copy gets the tags and files
        engram.service.give_copy(engram.store.get(copy.id), records[record_id].to_dict(), False)
    replaced = apply_declared(engram.store, memories) if report.imported else []
    renamed = {record_id: copy.id for record_id, copy in copies.items()}
    restored = conflict_transfer.restore(engram.store, conflicts, renamed)
    if replace and report.imported:
        # The replaced memories' old vectors (other chunks, maybe another project) are
        # now orphans: reconciling removes them before the new ones are written.
        with state.vector_access() as held:
            if held:
                engram.start_up()
    state.embed_waiting()
    waiting = min(report.imported, engram.store.pending_count(engram.embedder.model_id))
    if report.redacted:
        err(describe(report.redacted))
    future = _dated_ahead(memories)
    if future:
        err(
            f"note: {counted(len(future), 'memory', 'memories')} dated after today "
            f"(latest {future[-1].created_at[:10]}: {future[-1].id}); imported as written: if "
            "a year or time zone is wrong, fix the file and import it again with --replace"
        )
    if as_json:
        emit_json(
            {
                "imported": report.imported,
                "skipped": report.skipped,
                "queued_for_embedding": waiting,
                "superseded": [m.id for m in replaced],
                "contradictions_restored": restored,
                "already_stored": [
                    {"id": record_id, "stored_as": copy.id} for record_id, copy in copies.items()
                ],
                "redacted": redaction_json(report.redacted),
            }
        )
        return
    say(
        f"imported {counted(report.imported, 'memory', 'memories')}"
        + (f", skipped {report.skipped} existing" if report.skipped else "")
        + (f"; {len(replaced)} older memories no longer hold (supersedes)" if replaced else "")
        + (f"; {len(copies)} already stored, not stored again" if copies else "")
        + (
            f"; {counted(restored, 'conflict record', 'conflict records')} restored "
            "(`engram contradictions list --all`)"
            if restored
            else ""
        )
    )
    for record_id, copy in copies.items():
        say(f"  {record_id}: already stored as {copy.id}: {copy.title}")


def _dated_ahead(memories: list[Memory]) -> list[Memory]:
    """The memories written more than a day after now (a mistyped year, a time zone
    read the wrong way round), oldest first (their dates were checked on reading)."""
    ahead = datetime.now(UTC) + timedelta(days=1)
    written = sorted((parse_time(m.created_at), m.id, m) for m in memories)
    return [memory for when, _, memory in written if when > ahead]


@cli.command()
@click.argument("file", default="-")
@click.option("--session", "session_id", help="Session the lines come from.")
@project_option
@json_option
@pass_state
@handle_errors
def ingest(
    state: CliState, file: str, session_id: str | None, project: str | None, as_json: bool
) -> None:
    """Store the `MEMORY:type:content` lines of FILE (or stdin)."""
    from services.text.incoming import describe, redaction_json

    if file == "-":
        raw, where = read_stdin(), "<stdin>"
    else:
        try:
            raw, where = Path(file).read_bytes(), file
        except OSError as error:
            raise UserInputError(f"{file}: {error.strerror}") from None
    if b"\x00" in raw[:8192]:  # as import says: a binary file holds no MEMORY lines
        raise ValidationFailed(
            f"{where} looks binary; nothing was stored", [Problem(where, "contains NUL bytes")]
        )
    text = raw.decode("utf-8", errors="replace")
    if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
        err(f"warning: {where} is not valid UTF-8; undecodable bytes were replaced")
    report = state.engram().service.ingest(text, where, project, session_id, embed=False)
    state.embed_waiting()
    if report.redacted:
        err(describe(report.redacted))
    if as_json:
        emit_json(
            {
                "stored": [m.id for m in report.stored],
                "already_stored": report.already_stored,
                "problems": [str(p) for p in report.problems],
                "redacted": redaction_json(report.redacted),
            }
        )
    else:
        already = len(report.already_stored)
        say(
            f"stored {counted(len(report.stored), 'memory', 'memories')}"
            + (f" ({already} already stored, not stored again)" if already else "")
        )
        for problem in report.problems:
            err(f"  {problem}")
    if report.problems:
        sys.exit(1)
