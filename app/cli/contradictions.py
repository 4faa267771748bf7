"""`engram contradictions`: memories that disagree, how they were resolved, and resolving them."""

from __future__ import annotations

from typing import Any

import click

from app.cli.common import (
    CliState,
    cli,
    counted,
    emit_json,
    handle_errors,
    json_option,
    only_project_option,
    pass_state,
    say,
)


@cli.group()
def contradictions() -> None:
    """Memories that disagree. The REM `contradictions` operation finds them (rule-based
    cues; the LLM only breaks ties); resolving one supersedes the memory that no longer
    holds (kept, found with --mode deep), never deletes it."""


def _line(record: Any, memories: dict[str, Any]) -> str:
    def short(memory_id: str) -> str:
        memory = memories[memory_id]
        mark = " [superseded]" if memory.superseded_by else ""
        return f"{memory_id}{mark}: {' '.join(memory.content.split())[:100]}"

    state = (
        f"resolved {record.resolution} at {record.resolved_at}"
        + (f" ({record.note})" if record.note else "")
        if record.resolved
        else "unresolved"
    )
    from services.knowledge.conflict_records import reason_of

    if record.resolved:  # what the answer says, not what was guessed before it
        winner = {"a_wins": record.a, "b_wins": record.b}.get(record.resolution or "")
        holds = f", {winner} holds" if winner else ""
    else:
        holds = f", {record.holder} holds" if record.holder else ""
    evidence = record.evidence
    differs = reason_of(evidence)
    if not differs and evidence.get("scorer") is not None:
        differs = f"the fitted scorer's guess ({float(evidence['scorer']):.2f}): check both"
    about = f" — {differs}" if differs else ""
    return (
        f"#{record.id} {record.kind}{holds}{about} ({state}; found {record.detected_at})\n"
        f"  A {short(record.a)}\n  B {short(record.b)}"
    )


@contradictions.command(name="list")
@click.option("--all", "show_all", is_flag=True, help="Resolved ones too.")
@only_project_option
@json_option
@pass_state
@handle_errors
def list_(state: CliState, show_all: bool, project: str | None, as_json: bool) -> None:
    """Unresolved contradictions (with --all, resolved ones too), newest first."""
    from services.knowledge.contradictions import listing, queued_count

    store = state.engram(catch_up=False).store
    records = listing(store, include_resolved=show_all, project=project)
    memories = store.get_many({i for r in records for i in (r.a, r.b)})
    moot = {r.id for r in records if _moot(r, memories)}
    if as_json:
        emit_json(
            {
                "contradictions": [{**r.to_dict(), "moot": r.id in moot} for r in records],
                "queue": queued_count(store),
            }
        )
        return
    hidden = 0 if show_all else len(moot)
    records = records if show_all else [r for r in records if r.id not in moot]
    if hidden:
        say(
            f"({counted(hidden, 'open conflict', 'open conflicts')} about notes that no longer "
            "hold, settled in effect, not shown: `--all` lists them)"
        )
    if not records:
        waiting = queued_count(store)["waiting"]
        tail = f"; {waiting} candidate pairs wait for `engram rem run --op contradictions`"
        say(
            "no contradictions"
            + (" to resolve" if not show_all else "")
            + (tail if waiting else "")
        )
        return
    for record in records:
        say(_line(record, memories))


def _moot(record: Any, memories: dict[str, Any]) -> bool:
    """An open conflict whose question is answered by now: the note it says is replaced,
    or both notes, no longer hold (a review answer or a later replacement superseded
    them), so nothing is left to decide between the two."""
    if record.resolved:
        return False
    superseded = {i for i in (record.a, record.b) if memories[i].superseded_by}
    loser = {record.a, record.b} - {record.holder} if record.holder else set()
    return bool(superseded) and (superseded == {record.a, record.b} or bool(loser & superseded))


def _contradiction_number(store: Any, given: str) -> int:
    """The number `contradictions list` shows ("3", "#3"), or the contradiction a review
    finding (`rem report`: "f-…") is about."""
    from services.storage.findings import FindingStore

    written = given.strip().removeprefix("#")
    if written.isdigit():
        return int(written)
    if written.startswith("f-"):
        finding = FindingStore(store).get(written)
        number = finding.detail.get("contradiction")
        if finding.op != "contradictions" or not isinstance(number, int):
            raise click.BadParameter(
                f"finding {written} is a {finding.op} finding, not a contradiction: answer "
                "it with `engram rem review`",
                param_hint="CONTRADICTION_ID",
            )
        return number
    raise click.BadParameter(
        f"{given!r}: give the number `engram contradictions list` shows (3 or #3) or a "
        "review finding's id (f-…, `engram rem report`)",
        param_hint="CONTRADICTION_ID",
    )


@contradictions.command(name="resolve")
@click.argument("contradiction_id")
@click.option(
    "--resolution",
    "-r",
    required=True,
    type=click.Choice(["a_wins", "b_wins", "both_valid", "merged"]),
    help="a_wins / b_wins: the other memory is superseded (valid_to, superseded_by; "
    "kept); both_valid: both hold; merged: both are superseded by --into.",
)
@click.option("--note", default=None, help="Why (kept with the resolution).")
@click.option("--into", default=None, help="merged: the memory that merges both.")
@json_option
@pass_state
@handle_errors
def resolve_(
    state: CliState,
    contradiction_id: str,
    resolution: str,
    note: str | None,
    into: str | None,
    as_json: bool,
) -> None:
    """Resolve contradiction ID: its number in `engram contradictions list` (3 or #3),
    or its finding in `engram rem report` (f-…)."""
    from services.knowledge.contradictions import get, resolve

    store = state.engram(catch_up=False).store
    number = _contradiction_number(store, contradiction_id)
    changed = resolve(store, number, resolution, note, into)
    record = get(store, number)
    if as_json:
        emit_json({"contradiction": record.to_dict(), "changed": changed})
        return
    if resolution in ("a_wins", "b_wins"):
        winner, loser = (record.a, record.b) if resolution == "a_wins" else (record.b, record.a)
        replaced_by = store.get(loser).superseded_by
        if replaced_by != winner:
            say(
                f"#{record.id}: {winner} holds; {loser} no longer held already (superseded "
                f"by {replaced_by}), so its history is left as it was"
            )
            return
        say(
            f"#{record.id}: {winner} holds; {loser} is superseded by it (kept; "
            "`engram search --mode deep` still finds it)"
        )
    elif resolution == "merged" and into:
        merged = [m for m in (record.a, record.b) if m != into]
        say(
            f"#{record.id}: merged into {into}; {', '.join(merged)} "
            f"{'is' if len(merged) == 1 else 'are'} superseded by it (kept; "
            "`engram search --mode deep` still finds them)"
        )
    else:
        say(f"#{record.id}: {resolution}" + (" (memories changed)" if changed else ""))
