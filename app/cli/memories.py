"""`engram add | list | show | edit | delete`."""

from __future__ import annotations

import functools
import shutil
from collections import Counter
from datetime import UTC, date, datetime, time
from typing import Any

import click

from app.cli.common import (
    CliState,
    ask,
    cli,
    console,
    counted,
    emit_json,
    err,
    handle_errors,
    json_option,
    memory_summary,
    no_record_option,
    only_project_option,
    pass_state,
    project_option,
    read_stdin,
    say,
    shortened,
    shown,
    stdin_is_terminal,
    stdout_is_terminal,
)
from services.errors import EngramError, NotFoundError
from services.types import MemoryType, RetrievalMode, Scope, Source, Tier, UsageEvent

TYPE_CHOICE = click.Choice([t.value for t in MemoryType], case_sensitive=False)


def parse_date(value: str | None, option: str) -> datetime | None:
    """An ISO date or time, or a relative date as people write it ("yesterday", "last
    week", "3 days ago", "on March 3"), which stands for the start of the day or span it
    names, in local time."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        relative = relative_day(value)
        if relative is None:
            raise click.BadParameter(
                f"{value!r} is neither an ISO date (YYYY-MM-DD) nor a relative date such as "
                "'yesterday', 'last week', '3 days ago' or 'september'",
                param_hint=option,
            ) from None
        return relative
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def relative_day(value: str, today: date | None = None) -> datetime | None:
    """Local midnight at the start of what `value`, a relative date and nothing else,
    names; None when it is not one."""
    from services.text.date_ranges import month_named
    from services.text.dates import find_times

    now = datetime.now().astimezone()
    written = " ".join(value.split())
    # A bare day ("March 3", "the 3rd") is read as a note would write it, "on March 3".
    for text in (written, f"on {written}"):
        found = find_times(text, today or now.date())
        if len(found) == 1 and found[0].start == 0 and found[0].end == len(text):
            return datetime.combine(found[0].resolved, time(), tzinfo=now.tzinfo)
    month = month_named(written, today or now.date())  # "september", "in May 2025"
    return None if month is None else datetime.combine(month, time(), tzinfo=now.tzinfo)


FILTER_PARAMETERS = (
    "project",
    "types",
    "tags",
    "after",
    "before",
    "exclude_session",
    "min_confidence",
    "mode",
)


def filter_options(function: Any) -> Any:
    """The filters shared by `list` and `search` (with --project), handed to the command
    as one `filters` dict for `build_filter`."""
    options = [
        only_project_option,
        click.option(
            "--type",
            "-t",
            "types",
            multiple=True,
            type=TYPE_CHOICE,
            help="Only these types (repeatable).",
        ),
        click.option("--tag", "tags", multiple=True, help="Only memories with this tag."),
        click.option(
            "--after",
            help="Created on or after this date: ISO, or 'yesterday', 'last week', "
            "'3 days ago' (from the start of that day or span).",
        ),
        click.option("--before", help="Created before this date (ISO or relative, as --after)."),
        click.option("--exclude-session", help="Leave out memories from this session."),
        click.option("--min-confidence", type=click.FloatRange(0, 1)),
        click.option(
            "--mode",
            type=click.Choice([m.value for m in RetrievalMode]),
            default=None,
            help="Tiers to include (default: standard = hot + warm).",
        ),
    ]

    @functools.wraps(function)
    def collect(*args: Any, **kwargs: Any) -> Any:
        kwargs["filters"] = {name: kwargs.pop(name) for name in FILTER_PARAMETERS}
        return function(*args, **kwargs)

    for option in reversed(options):
        collect = option(collect)
    return collect


def build_filter(state: CliState, filters: dict[str, Any]) -> Any:
    """A MemoryFilter from the options of `filter_options`."""
    from services.filters import MemoryFilter

    default_mode = state.engram().settings.get_str("retrieval.mode")
    after = parse_date(filters["after"], "--after")
    before = parse_date(filters["before"], "--before")
    if after is not None and before is not None and after >= before:
        raise click.BadParameter(
            f"--after {filters['after']} ({after:%Y-%m-%d}) is not before --before "
            f"{filters['before']} ({before:%Y-%m-%d}): no memory can match",
            param_hint="--after/--before",
        )
    return MemoryFilter(
        project=state.known_project(filters["project"]),
        types=tuple(MemoryType(t.lower()) for t in filters["types"]),
        tags=filters["tags"],
        created_after=after,
        created_before=before,
        exclude_session=filters["exclude_session"],
        min_confidence=filters["min_confidence"],
        mode=RetrievalMode(filters["mode"] or default_mode),
    )


def read_text_argument(value: str) -> str:
    if value != "-":
        return value
    data = read_stdin()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise click.UsageError(f"stdin is not valid UTF-8 (byte {error.start})") from None


@cli.command()
@click.argument("content")
@click.option("--type", "-t", "type_", type=TYPE_CHOICE, default="fact", show_default=True)
@click.option("--title", help="Short title (default: the first sentence).")
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option("--file-ref", "file_refs", multiple=True, help="Related path or glob (repeatable).")
@click.option("--confidence", type=click.FloatRange(0, 1), default=0.8, show_default=True)
@click.option("--scope", type=click.Choice([s.value for s in Scope]), default="project-shared")
@click.option("--session", "session_id", help="Session the memory comes from.")
@click.option("--id", "memory_id", help="Use this id instead of a generated one.")
@click.option(
    "--supersedes",
    "replaces",
    multiple=True,
    metavar="ID",
    help="This memory replaces ID (repeatable): ID stops holding at once, history kept.",
)
@click.option(
    "--no-check",
    is_flag=True,
    help="Do not look for memories the new one may replace (scripts, bulk adds).",
)
@click.option(
    "--allow-copy",
    is_flag=True,
    help="Store it even when a current memory of the project has the same text.",
)
@project_option
@json_option
@pass_state
@handle_errors
def add(
    state: CliState,
    content: str,
    type_: str,
    title: str | None,
    tags: tuple[str, ...],
    file_refs: tuple[str, ...],
    confidence: float,
    scope: str,
    session_id: str | None,
    memory_id: str | None,
    replaces: tuple[str, ...],
    no_check: bool,
    allow_copy: bool,
    project: str | None,
    as_json: bool,
) -> None:
    """Store a memory. CONTENT is the text, or - to read it from stdin.

    Unless --supersedes or --no-check is given, the new memory is compared with its
    nearest neighbours: "this may replace X: <reason>" is printed (and, on a terminal,
    you are asked whether it does); --json lists them under "may_replace" with scores,
    for a caller to confirm with `engram edit NEW --supersedes X`.

    The same text as a current memory of the project is not stored twice: "already
    stored as X" is printed (--json: "already_stored": true and X's id), X gets the new
    tags and file references, and --supersedes applies to X. --allow-copy (or --id)
    stores it anyway.

    Text that starts with a dash goes after `--`, which ends the options:
    `engram add -p web -- "--max-requests defaults to 0"`."""
    data: dict[str, Any] = {
        "content": read_text_argument(content),
        "type": type_,
        "title": title,
        "tags": list(tags),
        "file_refs": list(file_refs),
        "confidence": confidence,
        "scope": scope,
        "source": Source.EXPLICIT.value,
        "session_id": session_id,
        "id": memory_id,
    }
    engram = state.engram(embeds=True)
    for replaced in replaces:
        engram.store.get(replaced)  # an unknown id stores nothing
    from app.activity import repository_here

    here = repository_here()
    if project is None:  # inside a repository: its project, as `engram context` sees it
        project = here.project if here is not None else None
    elif note := state.new_project_note(project):
        err(note)
    if here is not None and project == here.project:
        # The repository's files the text names become file_refs: the context for a
        # file finds memories by them, not by words in their text.
        from app.file_mentions import files_named_in

        named = files_named_in(f"{title or ''}\n{data['content']}", here.root)
        data["file_refs"] = list(dict.fromkeys([*data["file_refs"], *named]))
    payload = {k: v for k, v in data.items() if v is not None}
    redacted: Counter[str] = Counter()
    # The look for a stored copy and the add are one write: two adds of one text at once
    # (an assistant told twice) store it once.
    with engram.store.writing():
        copy = None if allow_copy or memory_id else engram.service.stored_copy(payload, project)
        memory = None
        if copy is None:
            memory = engram.service.add(
                payload, default_project=project, embed=False, redacted=redacted
            )
    if memory is None:
        assert copy is not None
        _already_stored(state, copy, payload, replaces, as_json)
        return
    redaction = _say_redacted(redacted)
    superseded = _declare(engram, memory.id, replaces)
    state.embed_waiting()
    check = None if replaces or no_check else _check(engram, memory)
    candidates = check.replaces if check is not None else []
    repeats = check.repeats if check is not None else []
    asking = not as_json and stdin_is_terminal() and stdout_is_terminal() and content != "-"
    if not asking:  # open proposals: search ranks by them until someone decides
        _propose(engram, memory, candidates)
    if as_json:
        from services.knowledge.contradictions import for_pair

        # the open proposal each candidate is, so a caller can settle one it does not
        # confirm (`contradictions resolve N -r both_valid`, MCP resolve_contradiction)
        proposals = [for_pair(engram.store, c.memory.id, memory.id) for c in candidates]
        emit_json(
            {
                **memory_summary(memory),
                "supersedes": [m.id for m in superseded],
                "may_replace": [
                    {**c.to_dict(), "contradiction": record.id if record else None}
                    for c, record in zip(candidates, proposals, strict=True)
                ],
                "may_repeat": [c.to_dict() for c in repeats],
                "redacted": redaction,
            }
        )
        return
    say(f"stored {memory.id}: {memory.title}")
    _say_replaced(superseded, memory.id)
    confirmed: list[Any] = []
    declined: list[Any] = []
    unanswered: list[Any] = []
    for candidate in candidates:
        old = candidate.memory
        say(
            f"  this may {'replace' if candidate.kind == 'supersedes' else 'contradict'} "
            f"{old.id} «{old.title}»: {candidate.reason} (score {candidate.score:.2f})"
        )
        answer = _answer(f"  Does it replace {old.id}?") if asking else None
        if answer is None:
            unanswered.append(candidate)
        else:
            (confirmed if answer else declined).append(candidate)
    _say_replaced(_declare(engram, memory.id, tuple(c.memory.id for c in confirmed)), memory.id)
    if asking:
        _settle(engram, memory, declined, unanswered)
    for repeat in repeats:
        say(
            f"  this may repeat {repeat.memory.id} «{repeat.memory.title}» "
            f"(score {repeat.score:.2f}; the duplicates review offers to merge them)"
        )
    if not candidates or asking:
        return
    if any(c.kind == "supersedes" for c in candidates) or _guessed_holder(
        engram, memory, candidates
    ):
        say(
            "  (open proposals until you decide: search ranks the new memory above what it "
            f"may replace; `engram edit {memory.id} --supersedes ID` if it replaces, "
            "`engram contradictions resolve` if not)"
        )
    else:  # a contradiction names no holder: nothing is reranked
        say(
            "  (open until you decide: both are kept and marked as disagreeing; "
            "`engram contradictions resolve` says which holds)"
        )


def _guessed_holder(engram: Any, memory: Any, candidates: list[Any]) -> bool:
    """Whether the pass run as the memory was embedded recorded one of its contradictions
    with the new memory as holder: then search ranks it first, as for a replacement."""
    from services.knowledge import contradictions

    for candidate in candidates:
        record = contradictions.for_pair(engram.store, memory.id, candidate.memory.id)
        if record is not None and not record.resolved and record.holder == memory.id:
            return True
    return False


def _already_stored(
    state: CliState,
    copy: Any,
    payload: dict[str, Any],
    replaces: tuple[str, ...],
    as_json: bool,
) -> None:
    """Report `copy`, the current memory that already holds the text being added, after
    giving it what the add brought besides the text (tags, file references) and what it
    said the text replaces."""
    engram = state.engram(embeds=True)
    with state.vector_access() as held:
        copy, brought = engram.service.give_copy(copy, payload, embed=held)
    superseded = _declare(engram, copy.id, replaces)
    if as_json:
        emit_json(
            {
                **memory_summary(copy),
                "already_stored": True,
                "supersedes": [m.id for m in superseded],
                "may_replace": [],
                "may_repeat": [],
                "redacted": _say_redacted(Counter()),
            }
        )
        return
    say(f"already stored as {copy.id}: {copy.title} (not stored again; --allow-copy does)")
    if brought:
        say(f"  gave it what this add brought: {', '.join(brought)}")
    _say_replaced(superseded, copy.id)


def _say_redacted(redacted: Counter[str]) -> dict[str, Any]:
    """Say `2 secrets redacted (github-token, password)` on stderr, when any were; return
    what `--json` shows of it."""
    from services.text.incoming import describe, redaction_json

    if redacted:
        err(describe(redacted))
    return redaction_json(redacted)


def _check(engram: Any, memory: Any) -> Any:
    """Memories the new one may replace or repeat; None when the vectors cannot be read
    (the memory is stored either way, and the idle cycle looks again)."""
    from services.knowledge.write_check import check_added

    try:
        return check_added(engram.store, engram.vectors, engram.embedder, memory)
    except EngramError as error:
        err(f"could not look for memories it may replace: {error}")
        return None


def _answer(question: str) -> bool | None:
    """The answer to a yes/no question; None when the person pressed Enter without one,
    or the input ended before one came (a piped answer for the first of several)."""
    try:
        return ask(question, default=None)
    except (click.exceptions.Abort, EOFError):
        return None


def _settle(engram: Any, memory: Any, declined: list[Any], unanswered: list[Any]) -> None:
    """What the person answered no to holds beside the new memory and is not proposed
    again; what they did not answer stays an open proposal."""
    from services.knowledge.write_check import declined as record_declined

    try:
        record_declined(engram.store, memory, declined)
    except EngramError as error:
        err(f"could not record the answers: {error}")
    if unanswered:
        _propose(engram, memory, unanswered)
        say(f"  (no answer for {len(unanswered)}: kept as open proposals for the review)")


def _propose(engram: Any, memory: Any, candidates: list[Any]) -> None:
    """Keep what the new memory may replace as open proposals (never fails the add)."""
    if not candidates:
        return
    from services.knowledge.write_check import propose

    try:
        propose(engram.store, memory, candidates)
    except EngramError as error:
        err(f"could not record what it may replace: {error}")


def _say_replaced(replaced: list[Any], winner: str, indent: str = "  ") -> None:
    for old in replaced:
        say(f"{indent}{old.id} no longer holds (replaced by {winner}): {old.title}")


def _hold_again(engram: Any, memory_id: str, as_json: bool, quiet: bool) -> None:
    from services.knowledge.supersession import reinstate

    memory, replacer = reinstate(engram.store, memory_id)
    if as_json and not quiet:
        emit_json({"id": memory.id, "holds_again": True, "was_replaced_by": replacer})
    elif not as_json:
        beside = f" beside {replacer}" if replacer else ""
        say(f"{memory.id} holds again{beside}: both hold")


def _declare(engram: Any, winner: str, replaces: tuple[str, ...]) -> list[Any]:
    if not replaces:
        return []
    from services.knowledge.supersession import declare

    return declare(engram.store, winner, replaces)


@cli.command(name="list")
@filter_options
@click.option("--limit", "-n", type=click.IntRange(1), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@json_option
@pass_state
@handle_errors
def list_(
    state: CliState,
    filters: dict[str, Any],
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """List memories, newest first."""
    engram = state.engram(catch_up=False)
    flt = build_filter(state, filters)
    memories = engram.store.query(flt, limit=limit, offset=offset)
    if as_json:
        emit_json(
            {"total": engram.store.count(flt), "memories": [memory_summary(m) for m in memories]}
        )
        return
    # One line per memory at any width: the title takes what is left and ends in "…";
    # the project column is left out when the list is of one project.
    columns = ["id", "type", "created"] if flt.project else ["id", "type", "project", "created"]
    rows = [
        [m.id, m.type.value, *([] if flt.project else [m.project or ""]), m.created_at[:10]]
        for m in memories
    ]
    widths = [max([len(c), *(len(row[i]) for row in rows)]) for i, c in enumerate(columns)]
    room = max(12, shutil.get_terminal_size((100, 24)).columns - sum(widths) - 2 * len(widths) - 1)

    def line(cells: list[str], title: str) -> str:
        padded = (c.ljust(w) for c, w in zip(cells, widths, strict=True))
        return "  ".join([*padded, shortened(title, room)])

    say(line(columns, "title"))
    for row, memory in zip(rows, memories, strict=True):
        # Deep and exhaustive listings hold history too: say which no longer holds.
        replaced = f"[replaced by {memory.superseded_by}] " if memory.superseded_by else ""
        say(line(row, replaced + memory.title))
    total = engram.store.count(flt)
    beyond = _beyond_mode(engram, flt, total)
    say(f"{len(memories)} of {counted(total, 'memory', 'memories')}{beyond}")


def _beyond_mode(engram: Any, flt: Any, total: int) -> str:
    """How many more than `total` the same filter finds in what its mode leaves out
    (colder tiers, replaced memories), as a hint: a project whose older notes went cold
    is not smaller than it looks."""
    from dataclasses import replace

    if flt.mode is RetrievalMode.EXHAUSTIVE:
        return ""
    hidden = engram.store.count(replace(flt, mode=RetrievalMode.EXHAUSTIVE)) - total
    if not hidden:
        return ""
    left = [t.value for t in Tier if t not in flt.mode.tiers]
    if flt.mode is not RetrievalMode.DEEP:  # deep lists replaced memories too
        left.append("replaced")
    kinds = left[0] if len(left) == 1 else f"{', '.join(left[:-1])} or {left[-1]}"
    return f" ({hidden} more are {kinds}: --mode exhaustive)"


@cli.command()
@click.argument("memory_id")
@no_record_option
@json_option
@pass_state
@handle_errors
def show(state: CliState, memory_id: str, no_record: bool, as_json: bool) -> None:
    """Show one memory in full."""
    engram = state.engram(catch_up=False)
    memory = engram.store.get(memory_id)
    if not no_record:
        engram.service.record_read([memory_id])
    chunks = engram.store.chunks(memory_id)
    from services.storage.time_index import load_times
    from services.text.date_answers import with_dates
    from services.text.dates import times_for

    # The dates kept in memory_time (a database not yet backfilled: resolved now).
    stored = load_times(engram.store.database.connection(), [memory_id]).get(memory_id)
    times = stored or times_for(memory.content, memory.created_at)
    from services.knowledge.supersession import standing

    outdated_by, disagrees_with = standing(engram.store, memory_id)
    if as_json:
        data = memory.to_dict()
        data["outdated_by"] = outdated_by
        data["disagrees_with"] = list(disagrees_with)
        data["chunks"] = [
            {"index": c.index, "kind": c.kind, "language": c.language, "tokens": c.token_count}
            for c in chunks
        ]
        data["times"] = [
            {
                "start": t.start,
                "phrase": t.phrase,
                "resolved": t.resolved.isoformat(),
                "resolved_end": t.resolved_end and t.resolved_end.isoformat(),
                "granularity": t.granularity,
            }
            for t in times
        ]
        emit_json(data)
        return
    out = console()
    out.print(f"[bold]{shown(memory.title)}[/bold]  ({memory.type.value}, {memory.id})")
    out.print(
        f"project: {shown(memory.project or '-')}   tier: {memory.tier.value}   "
        f"confidence: {memory.confidence:.2f}   created: {memory.created_at}"
    )
    if memory.tags:
        out.print("tags: " + shown(", ".join(memory.tags)))
    if memory.file_refs:
        out.print("files: " + shown(", ".join(memory.file_refs)))
    if memory.superseded_by:
        out.print(f"[yellow]superseded by {memory.superseded_by}[/yellow]")
    elif outdated_by is not None:
        out.print(
            f"[yellow]may be outdated — see {outdated_by}[/yellow] (an open conflict: "
            "`engram contradictions list` to decide)"
        )
    if disagrees_with:
        out.print(f"[yellow]disagrees with {', '.join(disagrees_with)}[/yellow] (open)")
    say("")
    say(with_dates(memory.content, times))
    if chunks:
        say(f"\n({len(chunks)} chunks)")


@cli.command()
@click.argument("memory_id")
@click.option("--content", help="New content (- reads stdin).")
@click.option("--title")
@click.option("--type", "-t", "type_", type=TYPE_CHOICE)
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeatable).")
@click.option("--file-ref", "file_refs", multiple=True, help="Replace the file refs.")
@click.option("--confidence", type=click.FloatRange(0, 1))
@click.option("--tier", type=click.Choice([t.value for t in Tier]))
@click.option("--scope", type=click.Choice([s.value for s in Scope]))
@click.option("--summary", help="Summary form of the content.")
@click.option(
    "--supersedes",
    "replaces",
    multiple=True,
    metavar="ID",
    help="This memory replaces ID (repeatable): ID stops holding at once, history kept.",
)
@click.option(
    "--holds-again",
    is_flag=True,
    help="Undo a replacement: this replaced memory holds again, beside what replaced it.",
)
@project_option
@json_option
@pass_state
@handle_errors
def edit(
    state: CliState,
    memory_id: str,
    content: str | None,
    title: str | None,
    type_: str | None,
    tags: tuple[str, ...],
    file_refs: tuple[str, ...],
    confidence: float | None,
    tier: str | None,
    scope: str | None,
    summary: str | None,
    replaces: tuple[str, ...],
    holds_again: bool,
    project: str | None,
    as_json: bool,
) -> None:
    """Change fields of a memory. `--supersedes ID` says it replaces ID; `--holds-again`
    undoes a replacement of this memory (both hold; `edit OTHER --supersedes ID` the
    other way reverses it instead)."""
    changes: dict[str, Any] = {}
    if content is not None:
        changes["content"] = read_text_argument(content)
    for key, value in (
        ("title", title),
        ("type", type_),
        ("confidence", confidence),
        ("tier", tier),
        ("scope", scope),
        ("summary", summary),
        ("project", project),
    ):
        if value is not None:
            changes[key] = value
    if tags:
        changes["tags"] = list(tags)
    if file_refs:
        changes["file_refs"] = list(file_refs)
    if not changes and not replaces and not holds_again:
        raise click.UsageError("nothing to change: give at least one option")
    engram = state.engram()
    if holds_again:
        _hold_again(engram, memory_id, as_json, quiet=bool(changes or replaces))
        if not changes and not replaces:
            return
    if not changes:
        superseded = _declare(engram, memory_id, replaces)
        if as_json:
            emit_json({"id": memory_id, "supersedes": [m.id for m in superseded]})
        else:
            _say_replaced(superseded, memory_id, indent="")
        return
    from services.knowledge.lessons import check_plain_edit

    check_plain_edit(engram.store, memory_id, changes)
    redacted: Counter[str] = Counter()
    with state.vector_access() as held:
        memory = engram.service.edit(memory_id, changes, embed=held, redacted=redacted)
    redaction = _say_redacted(redacted)
    superseded = _declare(engram, memory.id, replaces)
    if as_json:
        emit_json(
            {
                **memory_summary(memory),
                "supersedes": [m.id for m in superseded],
                "redacted": redaction,
            }
        )
    else:
        say(f"updated {memory.id}: {memory.title}")
        _say_replaced(superseded, memory.id)


@cli.command()
@click.argument("memory_ids", nargs=-1, required=True)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@json_option
@pass_state
@handle_errors
def delete(state: CliState, memory_ids: tuple[str, ...], yes: bool, as_json: bool) -> None:
    """Delete memories for good (`engram edit ID --tier archived` keeps them). Asks on a
    terminal; without one (a pipe, a script) it needs --yes and deletes nothing
    otherwise, whatever the input says."""
    engram = state.engram()
    for memory_id in memory_ids:
        engram.store.get(memory_id)
    if not yes:
        if not stdin_is_terminal():
            raise click.UsageError(
                "not on a terminal, so nothing was deleted: add --yes to delete without asking"
            )
        click.confirm(f"Delete {counted(len(memory_ids), 'memory', 'memories')}?", abort=True)
    with state.vector_access() as held:
        done = [engram.service.delete(memory_id, remove_vectors=held) for memory_id in memory_ids]
    deleted = [d.memory.id for d in done]
    held_again = [i for d in done for i in d.held_again if i not in deleted]
    if as_json:
        emit_json({"deleted": deleted, "held_again": held_again})
    else:
        say(f"deleted {len(deleted)} {'memory' if len(deleted) == 1 else 'memories'}")
        if held_again:
            say(f"what they had replaced holds again: {', '.join(held_again)}")


@cli.command()
@click.argument("event", type=click.Choice([e.value for e in UsageEvent]))
@click.argument("memory_ids", nargs=-1, required=True)
@click.option("--session", "session_id", help="Session in which it happened.")
@json_option
@pass_state
@handle_errors
def mark(
    state: CliState, event: str, memory_ids: tuple[str, ...], session_id: str | None, as_json: bool
) -> None:
    """Record that memories were retrieved, cited, ignored or used.

    Use and citation raise confidence (lifecycle.use_boost) and teach prediction: the
    memories weigh more next time for the activity `engram watch` saw last. Unused
    memories decay."""
    engram = state.engram(catch_up=False)
    missing = sorted(set(memory_ids) - engram.store.existing_ids(memory_ids))
    if missing:
        raise NotFoundError(f"no memory with id {', '.join(map(repr, missing))}")
    engram.lifecycle.record(list(memory_ids), UsageEvent(event), session_id)
    if UsageEvent(event) in (UsageEvent.CITED, UsageEvent.USED):
        from app.activity import credit_citations

        credit_citations(engram, list(memory_ids))
    if as_json:
        emit_json({"event": event, "memories": list(memory_ids)})
    else:
        say(f"recorded {event} for {counted(len(memory_ids), 'memory', 'memories')}")
