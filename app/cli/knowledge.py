"""`engram project-context`, `engram context-history` and `engram lesson`: the saved
project context with its history, and versioned lessons."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from app.cli.common import (
    CliState,
    cli,
    emit_json,
    err,
    handle_errors,
    json_option,
    pass_state,
    project_option,
    read_stdin,
    say,
)
from services.errors import NotFoundError, UserInputError


def _read_catalogue(source: str) -> dict[str, Any]:
    from services.knowledge.project_context import MAX_CATALOGUE_BYTES, read_catalogue_file

    if source == "-":
        return read_catalogue_file(read_stdin(MAX_CATALOGUE_BYTES + 1), "<stdin>")
    path = Path(source)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CATALOGUE_BYTES + 1)
    except FileNotFoundError:
        raise UserInputError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise UserInputError(f"{source}: is a folder, not a JSON file") from None
    except OSError as error:
        raise UserInputError(f"{source}: cannot be read ({error.strerror})") from None
    return read_catalogue_file(data, source)


def _read_notes(value: str) -> str:
    if value != "-":
        return value
    try:
        return read_stdin().decode("utf-8")
    except UnicodeDecodeError as error:
        raise click.UsageError(f"stdin is not valid UTF-8 (byte {error.start})") from None


# -- project context --------------------------------------------------------------------


@cli.group(name="project-context")
def project_context() -> None:
    """What is true now for a project: notes, active files, todos, recent decisions
    and a catalogue (a JSON object), with a history of every save."""


@project_context.command(name="save")
@click.argument("project")
@click.option("--notes", help="Notes (- reads stdin).")
@click.option("--active-file", "active_files", multiple=True, help="Active file (repeatable).")
@click.option("--todo", "todos", multiple=True, help="Todo (repeatable).")
@click.option("--decision", "decisions", multiple=True, help="Recent decision (repeatable).")
@click.option("--catalogue", help="A JSON object from this file (- reads stdin).")
@click.option(
    "--replace",
    is_flag=True,
    help="Save exactly what is given: parts left out become empty (default: kept).",
)
@json_option
@pass_state
@handle_errors
def project_context_save(
    state: CliState,
    project: str,
    notes: str | None,
    active_files: tuple[str, ...],
    todos: tuple[str, ...],
    decisions: tuple[str, ...],
    catalogue: str | None,
    replace: bool,
    as_json: bool,
) -> None:
    """Save the context of PROJECT and a snapshot of it in its history. A part given
    replaces the saved one (a list as a whole); parts left out keep what was saved,
    unless --replace. The snapshot keeps the catalogue's SHA-256 and its changes."""
    from services.knowledge.project_context import save

    if notes == "-" and catalogue == "-":
        raise click.UsageError("only one of --notes and --catalogue can read stdin")
    parsed = _read_catalogue(catalogue) if catalogue is not None else None
    empty: list[str] | None = [] if replace else None
    engram = state.engram(catch_up=False)
    saved, entry = save(
        engram.store,
        project,
        notes=_read_notes(notes) if notes is not None else ("" if replace else None),
        active_files=list(active_files) if active_files else empty,
        todos=list(todos) if todos else empty,
        decisions=list(decisions) if decisions else empty,
        catalogue=parsed if parsed is not None else ({} if replace else None),
        incoming=engram.service.incoming,
    )
    if as_json:
        emit_json({"context": saved.to_dict(), "snapshot": entry.to_dict()})
        return
    delta = entry.catalogue_delta
    say(
        f"saved the context of {saved.project} (snapshot {entry.id}; catalogue "
        f"+{len(delta['added'])} -{len(delta['removed'])} ~{len(delta['changed'])}, "
        f"sha256 {entry.catalogue_sha256[:12]})"
    )


@project_context.command(name="show")
@click.argument("project")
@json_option
@pass_state
@handle_errors
def project_context_show(state: CliState, project: str, as_json: bool) -> None:
    """The saved context of PROJECT."""
    from services.knowledge.project_context import load

    context = load(state.engram(catch_up=False).store, project)
    if context.updated_at is None:
        raise NotFoundError(f"no saved context for project {project!r}")
    if as_json:
        emit_json(context.to_dict())
        return
    say(f"{context.project} (saved {context.updated_at})")
    if context.notes:
        say("\n" + context.notes)
    for title, items in (
        ("active files", context.active_files),
        ("todos", context.todos),
        ("decisions", context.decisions),
    ):
        if items:
            say(f"\n{title}:")
            for item in items:
                say(f"  - {item}")
    if context.catalogue:
        say("\ncatalogue:")
        say(json.dumps(context.catalogue, ensure_ascii=False, indent=2, sort_keys=True))


@cli.command(name="context-history")
@click.argument("project")
@click.option("--limit", "-n", type=click.IntRange(1), default=None, help="The last N saves.")
@click.option(
    "--catalogue", "with_catalogue", is_flag=True, help="Add the catalogue at each snapshot."
)
@json_option
@pass_state
@handle_errors
def context_history(
    state: CliState, project: str, limit: int | None, with_catalogue: bool, as_json: bool
) -> None:
    """The saved contexts of PROJECT, oldest first: notes, files, todos and decisions
    in full, the catalogue as its changes. The catalogue is rebuilt from the changes
    and checked against each snapshot's SHA-256."""
    from services.knowledge.project_context import HistoryMismatch, history, replay

    entries = history(state.engram(catch_up=False).store, project)
    if not entries:
        raise NotFoundError(f"no saved context for project {project!r}")
    try:
        catalogues: list[dict[str, Any]] | None = replay(entries)
        verified = True
    except HistoryMismatch as error:
        err(f"warning: {error}")
        catalogues, verified = None, False
    shown = range(len(entries) - limit if limit else 0, len(entries))
    if as_json:
        items = []
        for index in shown:
            data = entries[index].to_dict()
            if with_catalogue and catalogues is not None:
                data["catalogue"] = catalogues[index]
            items.append(data)
        emit_json({"project": project, "catalogue_verified": verified, "entries": items})
        return
    for index in shown:
        entry = entries[index]
        delta = entry.catalogue_delta
        before = entries[index - 1] if index else None
        say(
            f"#{entry.id} {entry.saved_at}  catalogue +{len(delta['added'])} "
            f"-{len(delta['removed'])} ~{len(delta['changed'])} "
            f"(sha256 {entry.catalogue_sha256[:12]})"
        )
        for title, now, was in (
            ("todo", entry.todos, before.todos if before else []),
            ("decision", entry.decisions, before.decisions if before else []),
            ("file", entry.active_files, before.active_files if before else []),
        ):
            for item in now:
                if item not in was:
                    say(f"  + {title}: {item}")
            for item in was:
                if item not in now:
                    say(f"  - {title}: {item}")
        if before is not None and entry.notes != before.notes:
            say("  notes changed")
        if with_catalogue and catalogues is not None:
            text = json.dumps(catalogues[index], ensure_ascii=False, sort_keys=True)
            say(f"  catalogue: {text}")
    say(
        f"{len(shown)} of {len(entries)} snapshots; catalogue hashes "
        + ("verified" if verified else "DO NOT MATCH (see the warning)")
    )


# -- lessons ----------------------------------------------------------------------------


@cli.group()
def lesson() -> None:
    """Lessons with versions: when <trigger>, <action>, because <rationale>."""


def _lesson_json(value: Any) -> dict[str, Any]:
    data: dict[str, Any] = value.to_dict()
    return data


@lesson.command(name="add")
@click.option("--trigger", required=True, help="When it applies.")
@click.option("--action", required=True, help="What to do then.")
@click.option("--rationale", default="", help="Why.")
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option("--session", "session_id", help="Session the lesson comes from.")
@project_option
@json_option
@pass_state
@handle_errors
def lesson_add(
    state: CliState,
    trigger: str,
    action: str,
    rationale: str,
    tags: tuple[str, ...],
    session_id: str | None,
    project: str | None,
    as_json: bool,
) -> None:
    """Store a lesson (a memory of type lesson, at version 1)."""
    from services.knowledge.lessons import add_lesson

    added = add_lesson(
        state.engram().service,
        trigger,
        action,
        rationale,
        list(tags),
        project,
        session_id,
        embed=False,
    )
    state.embed_waiting()
    if as_json:
        emit_json(_lesson_json(added))
    else:
        say(f"stored lesson {added.memory_id} (v{added.version})")


@lesson.command(name="refine")
@click.argument("memory_id")
@click.option("--trigger", help="New trigger.")
@click.option("--action", help="New action.")
@click.option("--rationale", help="New rationale.")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeatable).")
@click.option("--reason", required=True, help="Why the lesson changes.")
@click.option("--session", "session_id", help="Session in which it changes.")
@json_option
@pass_state
@handle_errors
def lesson_refine(
    state: CliState,
    memory_id: str,
    trigger: str | None,
    action: str | None,
    rationale: str | None,
    tags: tuple[str, ...],
    reason: str,
    session_id: str | None,
    as_json: bool,
) -> None:
    """Make a new version of a lesson; the current one is kept in its versions."""
    from services.knowledge.lessons import refine

    changes: dict[str, Any] = {
        k: v
        for k, v in (("trigger", trigger), ("action", action), ("rationale", rationale))
        if v is not None
    }
    if tags:
        changes["tags"] = list(tags)
    if not changes:
        raise click.UsageError("nothing to change: give --trigger, --action, --rationale or --tag")
    engram = state.engram()
    with state.vector_access() as held:
        refined = refine(engram.service, memory_id, changes, reason, session_id, embed=held)
    if as_json:
        emit_json(_lesson_json(refined))
    else:
        say(f"refined lesson {refined.memory_id} to v{refined.version}")


@lesson.command(name="versions")
@click.argument("memory_id")
@json_option
@pass_state
@handle_errors
def lesson_versions(state: CliState, memory_id: str, as_json: bool) -> None:
    """Every version of a lesson, oldest first."""
    from services.knowledge.lessons import versions

    found = versions(state.engram(catch_up=False).store, memory_id)
    if as_json:
        emit_json({"lesson_id": memory_id, "versions": [v.to_dict() for v in found]})
        return
    from services.text.lesson_text import LessonParts, render

    for version in found:
        mark = " (current)" if version.current else ""
        say(f"v{version.version}{mark}  {version.saved_at}  {version.reason or ''}")
        parts = LessonParts(version.trigger, version.action, version.rationale)
        say(f"  {render(parts)[1]}")


@lesson.command(name="export-pairs")
@click.option(
    "--out",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of stdout.",
)
@project_option
@json_option
@pass_state
@handle_errors
def lesson_export_pairs(
    state: CliState, out: Path | None, project: str | None, as_json: bool
) -> None:
    """Preference pairs for fine-tuning, as JSONL: for each pair of consecutive versions
    of a lesson, the earlier is `rejected` and the later `chosen`, with the trigger as
    `prompt` (and lesson_id, project, from_version, to_version, reason, session_id)."""
    from services.knowledge.lessons import preference_pairs

    pairs = preference_pairs(state.engram(catch_up=False).store, project)
    text = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs)
    if out is None:
        sys.stdout.write(text)
        return
    temporary = out.with_name(out.name + ".part")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(out)
    if as_json:
        emit_json({"exported": len(pairs), "file": str(out)})
    else:
        say(f"exported {len(pairs)} preference pairs to {out}")


@lesson.command(name="backfill")
@json_option
@pass_state
@handle_errors
def lesson_backfill(state: CliState, as_json: bool) -> None:
    """Give lesson memories without structured parts (imported since) their trigger,
    action, rationale and versions, read from their text. Safe to run again."""
    from services.knowledge.lessons import backfill_lessons

    report = backfill_lessons(state.engram(catch_up=False).store)
    if as_json:
        emit_json(report.to_dict())
    else:
        say(f"backfilled {report.lessons} lessons ({report.versions} version records)")
