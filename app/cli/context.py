"""`engram context`, `engram predict --replay` and `engram watch`: assembled context
from activity, the replay benchmark's contract, and the headless watchers."""

from __future__ import annotations

import signal as signals
import sys
import time
from datetime import UTC, datetime
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
    no_record_option,
    pass_state,
    project_option,
    read_stdin,
    say,
    shortened,
)


@cli.command()
@click.option("--file", "file_", type=click.Path(dir_okay=False), help="The file being worked on.")
@click.option("--branch", help="The checked-out branch (default: read from the repository).")
@click.option("--error", "error", help="An error message or stack trace; - reads stdin.")
@click.option(
    "--activity",
    type=click.Choice(["general", "debugging", "feature", "review"]),
    help="What you are doing (default: inferred from the signals).",
)
@click.option("--budget", type=int, help="Token budget (default: the context.budget setting).")
@project_option
@json_option
@click.option("--copy", is_flag=True, help="Copy the Markdown block to the clipboard.")
@no_record_option
@pass_state
@handle_errors
def context(
    state: CliState,
    file_: str | None,
    branch: str | None,
    error: str | None,
    activity: str | None,
    budget: int | None,
    project: str | None,
    as_json: bool,
    copy: bool,
    no_record: bool,
) -> None:
    """Print the context assembled for what you are doing, within a token budget.

    With no --file/--branch/--error it uses the activity `engram watch` (or the tray)
    saw last, else the repository of the current folder."""
    from app.activity import (
        branch_of,
        file_signal,
        locate,
        parse_activity,
        read_profile,
        restore_state,
        secret_patterns,
    )
    from services.activity.signals import Signal, SignalKind

    engram = state.engram(catch_up=False)
    project = state.known_project(project)
    engine = engram.predictive_engine()
    now = datetime.now(UTC)
    error_text = _read_error(error)
    if file_ or branch or error_text:
        located = locate(Path(file_) if file_ else Path.cwd(), project)
        name = located.project
        if not branch and (file_ or not project):
            branch = branch_of(located.root)
        if branch:
            engine.observe(Signal(SignalKind.BRANCH_CHECKOUT, now, name, branch=branch))
        if error_text:
            engine.observe(Signal(SignalKind.ERROR_SEEN, now, name, error=error_text))
        if file_:
            path = Path(file_)
            if not path.is_file():
                from services.errors import UserInputError

                raise UserInputError(f"{file_}: no such file")
            engine.observe(
                file_signal(SignalKind.FILE_OPENED, path, secret_patterns(engram), name, now)
            )
    elif not restore_state(engram, engine, project):
        located = locate(Path.cwd(), project)
        name = located.project
        found = branch_of(located.root)
        if found:
            engine.observe(Signal(SignalKind.BRANCH_CHECKOUT, now, name, branch=found))
        else:
            engine.current_project = name
    engine.set_activity(engine.current_project, parse_activity(activity))
    prediction = engine.prediction()
    profile, consent = read_profile(engram)
    assembled = engram.assembler().assemble(prediction, budget, profile, consent)
    if not no_record:
        engram.service.record_read([i for tier in (1, 2, 3) for i in assembled.ids(tier)])
    if copy:
        from app.clipboard import copy_text

        tool = copy_text(assembled.markdown)
        err(f"copied {assembled.tokens} tokens of context with {tool}")
    if as_json:
        emit_json(assembled.to_dict())
    elif not copy:
        say(assembled.markdown)


def _read_error(error: str | None) -> str | None:
    if error is None:
        return None
    if error == "-":
        data = read_stdin(1_000_000)
        return data.decode("utf-8", errors="replace")
    return error


@cli.command()
@click.option(
    "--replay",
    "log_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="An activity log (JSON lines) to replay.",
)
@click.option(
    "--source-root",
    type=click.Path(exists=True, file_okay=False),
    help="Folder holding <project>/<path> for the log's file events.",
)
@click.option("--budget", type=int, help="Token budget of the context (default: the setting).")
@json_option
@pass_state
@handle_errors
def predict(
    state: CliState, log_file: str, source_root: str | None, budget: int | None, as_json: bool
) -> None:
    """Replay an activity log and report how much of what was needed was predicted.

    Each event is evaluated as of its own time; the hit rate is the share of an event's
    `needed` memories placed in tiers 1–2 right after it (no hit rate when the log has
    no `needed` fields)."""
    from services.context.assembly import ContextAssembler
    from services.context.replay import evaluate, read_events

    path = Path(log_file)
    try:
        with path.open(encoding="utf-8") as handle:
            events = read_events(handle, path.name)
    except UnicodeDecodeError as error:
        from services.errors import UserInputError

        raise UserInputError(f"{path}: not UTF-8 text ({error.reason})") from None
    engram = state.engram(catch_up=False)
    assembler = engram.assembler()
    if budget is not None:
        assembler = ContextAssembler(
            budget, assembler.split, assembler.counter, assembler.alerts, assembler.dates
        )
    report = evaluate(
        events, engram.predictive_engine(), assembler, Path(source_root) if source_root else None
    ).to_dict()
    if as_json:
        emit_json(report)
        return
    _print_replay(report)


def _print_replay(report: dict[str, Any]) -> None:
    say(f"events: {report['event_count']}")
    if report["hit_rate"] is None:
        say("hit rate: — (the log has no `needed` fields)")
    else:
        say(f"hit rate (tiers 1–2): {report['hit_rate']:.1%}")
        for kind, rate in report["by_event"].items():
            say(f"  {kind:16} {rate:.1%}")
        if report["precision"] is not None:
            say(f"precision (needed / placed in tiers 1–2): {report['precision']:.1%}")
    say(
        f"event → prediction: p50 {report['p50_ms']} ms, p95 {report['p95_ms']} ms; "
        f"assembly p95 {report['assemble_p95_ms']} ms"
    )
    if report["missing_files"]:
        say(f"files not found or not parsed: {report['missing_files']}")


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option("--duration", type=float, help="Stop after this many seconds (default: Ctrl-C).")
@json_option
@pass_state
@handle_errors
def watch(state: CliState, paths: tuple[str, ...], duration: float | None, as_json: bool) -> None:
    """Watch project folders and log each prediction (default: the watch.paths setting).

    Secret files are never read; .git internals, dependencies, builds and ignored files
    are not activity."""
    from app.activity import watched_paths

    engram = state.engram(catch_up=False)
    roots = [Path(p) for p in paths] or watched_paths(engram)
    if not roots:
        from services.errors import UserInputError

        raise UserInputError(
            "nothing to watch: pass folders (engram watch ~/code/app) or set watch.paths"
        )

    def report(line: dict[str, Any]) -> None:
        if as_json:
            emit_json(line)
        else:
            say(_watch_line(line))
        sys.stdout.flush()

    session = engram.watch_session(roots, report, notice=err)
    session.start()
    stop_at = time.monotonic() + duration if duration is not None else None
    previous = signals.signal(signals.SIGTERM, lambda *_: session.request_stop())
    try:
        while not session.stopped.wait(0.2):
            if stop_at is not None and time.monotonic() >= stop_at:
                break
    except KeyboardInterrupt:
        pass
    finally:
        signals.signal(signals.SIGTERM, previous)
        session.stop()


WATCH_TITLE_CHARS = 60
SHOWN_PER_TIER = 8  # memories a watch line names per tier; the rest are counted


def _watch_line(line: dict[str, Any]) -> str:
    """A prediction as a person reads it: what happened, then each tier's memories by
    title (shortened) with their ids."""
    stamp = line["t"][11:19]
    if line.get("storm"):
        return f"{stamp} storm of {line['storm']} files in {line['root']}; prediction kept"
    what = line.get("path") or line.get("branch") or ""
    project = line.get("project") or "(no project)"
    titles: dict[str, str] = line.get("titles", {})
    lines = [f"{stamp} {line['event']} {project}: {what} [{line['activity']}] ({line['ms']} ms)"]
    for number, ids in ((1, line["tier1"]), (2, line["tier2"])):
        if not ids:
            lines.append(f"  tier {number}: —")
            continue
        named = ids[:SHOWN_PER_TIER]
        for position, memory_id in enumerate(named):
            label = f"  tier {number}: " if position == 0 else "          "
            title = shortened(titles.get(memory_id, ""), WATCH_TITLE_CHARS)
            lines.append(f"{label}{title}  {memory_id}")
        if len(ids) > len(named):
            lines.append(f"          … and {len(ids) - len(named)} more")
    return "\n".join(lines)
