"""`engram rem`: the consolidation cycle — run operations, report and review findings."""

from __future__ import annotations

import sys
from typing import Any

import click

from app.cli.common import (
    CliState,
    cli,
    counted,
    emit_json,
    err,
    handle_errors,
    json_option,
    only_project_option,
    pass_state,
    say,
    shortened,
    stdin_is_terminal,
    waits,
)


def _context(state: CliState, project: str | None = None, as_of: str | None = None) -> Any:
    from app.rem import rem_context

    now = None
    if as_of is not None:
        from app.cli.memories import parse_date

        now = parse_date(as_of, "--as-of")
    return rem_context(state.engram(), state.known_project(project), now)


@cli.group()
def rem() -> None:
    """Consolidation: tiers, staleness, duplicates, links, summaries, communities and
    suggestions; you review what it proposes."""


@rem.command(name="run")
@click.option("--op", "ops", multiple=True, help="Operation to run (repeatable; default all).")
@only_project_option
@click.option("--auto", is_flag=True, help="Apply each finding's recommended option.")
@click.option("--dry-run", is_flag=True, help="Report findings; store and change nothing.")
@click.option("--as-of", help="Judge ages and use as of this time (replays, benchmarks).")
@click.option("--due", "only_due", is_flag=True, help="Only the operations that are due.")
@json_option
@pass_state
@handle_errors
def run(
    state: CliState,
    ops: tuple[str, ...],
    project: str | None,
    auto: bool,
    dry_run: bool,
    as_of: str | None,
    only_due: bool,
    as_json: bool,
) -> None:
    """Run consolidation operations now (retention, staleness, duplicates,
    contradictions, links, clusters, communities, episodes, extraction). Summaries use
    the configured LLM (llm.* settings) when it works, else summaries derived from the
    memories; their facts are kept either way. --auto never applies extraction's
    suggestions."""
    from services.rem.cycle import run_operations
    from services.rem.registry import names

    context = _context(state, project, as_of)
    selected = list(ops) or names()
    if only_due:
        from app.rem import operations_due

        selected = [d.op for d in operations_due(state.engram(), selected, context.now) if d.due]
    if selected and not dry_run:
        from app.rem import vectors_first

        vectors_first(state.engram(), state.data_dir, err)
    try:
        reports = run_operations(context, selected, auto, dry_run) if selected else []
    finally:
        context.llm.close()
    if as_json:
        emit_json({"dry_run": dry_run, "auto": auto, "operations": [r.to_dict() for r in reports]})
        return
    for report in reports:
        found = counted(len(report.findings), "finding")
        status = f"failed: {report.error}" if report.error else found
        applied = f", {report.applied} applied" if auto else ""
        if auto and report.out_of_date:
            applied += f", {report.out_of_date} out of date (dismissed; the next run looks again)"
        say(f"{report.op}: {status}{applied} ({report.seconds:.2f} s)")
        if report.outcome is not None and report.changes:
            say(f"  {report.outcome.describe()}")
        for finding in report.findings[:20]:
            say(f"  {finding.id} [{finding.kind}] {shortened(finding.summary, 110)}")


@rem.command(name="status")
@json_option
@pass_state
@handle_errors
def status(state: CliState, as_json: bool) -> None:
    """Which operations are due, and why (work sessions and time since each last ran)."""
    from app.rem import operations_due

    dues = operations_due(state.engram())
    if as_json:
        emit_json({"operations": [d.__dict__ for d in dues]})
        return
    for due in dues:
        mark = "due" if due.due else "not due"
        say(f"{due.op:12} {mark:8} {due.reason} (last run: {due.last_run or 'never'})")


@rem.command(name="report")
@json_option
@pass_state
@handle_errors
def report(state: CliState, as_json: bool) -> None:
    """Findings waiting for an answer, what ran when and what it changed, and the
    communities of related memories."""
    from services.rem.cycle import describe_changes, last_runs
    from services.storage.communities import stored_communities
    from services.storage.findings import FindingStore

    context = _context(state)
    findings = FindingStore(context.service.store)
    pending = findings.pending()
    runs = last_runs(context)
    communities = stored_communities(context.service.store)
    if as_json:
        emit_json(
            {
                "pending": [f.to_dict() for f in pending],
                "counts": findings.counts(),
                "last_runs": runs,
                "communities": communities,
            }
        )
        return
    for op, run_info in sorted(runs.items()):
        outcome = f"{run_info['status']}, {counted(run_info['findings'], 'finding')}"
        say(f"{op}: last run {run_info['at']} ({outcome})")
        if run_info["changes"]:
            say(f"  {describe_changes(op, run_info['changes'])}")
    if communities:
        say(f"{len(communities)} communities; the largest:")
        for community in communities[:5]:
            line = f"{community['id']} ({community['project']}, {community['size']} memories)"
            say(f"  {line}: {community['label']}")
    hint = ": engram rem review" if pending else ""
    say(f"{counted(len(pending), 'finding')} {waits(len(pending))} for you{hint}")
    for finding in pending:
        say(f"  {finding.id} [{finding.kind}] {shortened(finding.summary, 110)}")


@rem.command(name="review")
@click.option(
    "--answer", "answers", multiple=True, metavar="ID=OPTION", help="Answer without asking."
)
@pass_state
@handle_errors
def review(state: CliState, answers: tuple[str, ...]) -> None:
    """Go through waiting findings one at a time and choose an option for each."""
    from services.errors import UserInputError
    from services.rem.actions import answer
    from services.storage.findings import FindingStore

    context = _context(state)
    findings = FindingStore(context.service.store)
    malformed = [item for item in answers if "=" not in item]
    if malformed:
        raise UserInputError(f"--answer takes ID=OPTION, not {', '.join(malformed)}")
    given = dict(item.split("=", 1) for item in answers)
    waiting = findings.pending()
    unknown = sorted(set(given) - {f.id for f in waiting})
    if unknown:  # answered already, dismissed, or mistyped: nothing is answered
        raise UserInputError(f"no waiting finding with id {', '.join(unknown)}")
    by_id = {f.id: f for f in waiting}
    wrong = [  # an option the finding does not have: invalid input, nothing is answered
        f"finding {key} has no option {value!r} (choose from: "
        f"{', '.join(o.name for o in by_id[key].options)})"
        for key, value in given.items()
        if value not in {o.name for o in by_id[key].options}
    ]
    if wrong:
        raise UserInputError("; ".join(wrong) + "; nothing was answered")
    pending = [f for f in waiting if not given or f.id in given]
    if not pending:
        say("nothing to review")
        return
    failed = 0
    for number, finding in enumerate(pending, 1):
        if finding.id in given:
            choice = given[finding.id]
        else:
            say(f"\n[{number}/{len(pending)}] {finding.kind}: {finding.summary}")
            proposed = finding.proposal()
            if proposed is not None:
                say(f"  proposed: {proposed[0]}")
                say("    " + proposed[1].replace("\n", "\n    "))
            for memory_id in finding.memory_ids:
                memory = context.service.store.get(memory_id)
                say(f"  - {memory_id} ({memory.type.value}): {memory.content[:160]}")
            for option in finding.options:
                mark = " (recommended)" if option.name == finding.recommended else ""
                say(f"  {option.name}{mark}: {option.action}")
            names = [o.name for o in finding.options]
            # Enter takes the recommendation at a terminal; read from a pipe, a blank line
            # is no decision (skip), so piped input never applies a change by default.
            default = finding.recommended if stdin_is_terminal() else _no_decision(names)
            try:
                choice = click.prompt(
                    f"choose ({', '.join(names)}; a unique start will do)",
                    default=default,
                    value_proc=lambda text, names=names: _option_named(text, names),
                )
            except click.Abort:  # Ctrl-D / Ctrl-C: stop here; what was answered stays
                left = len(pending) - number + 1
                say(f"\nstopped; {counted(left, 'finding')} still {waits(left)}")
                return
        try:
            changed = answer(context.service, findings, finding, choice)
        except UserInputError as error:  # out of date: say so and go on with the rest
            err(str(error))
            failed += 1
            continue
        say(f"{finding.id}: {choice}" + (" (applied)" if changed else ""))
    if failed:
        sys.exit(1)


def _no_decision(names: list[str]) -> str | None:
    """The option that changes nothing, when there is one (else a blank line re-asks)."""
    return "skip" if "skip" in names else None


def _option_named(text: str, names: list[str]) -> str:
    """The option `text` names: in full, or by a start only it has ("s" for skip)."""
    wanted = text.strip().lower()
    if wanted in names:
        return wanted
    matches = [name for name in names if name.startswith(wanted)] if wanted else []
    if len(matches) == 1:
        return matches[0]
    raise click.BadParameter(f"{text!r} is not one of {', '.join(names)}")
