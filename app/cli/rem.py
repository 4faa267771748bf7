"""`engram rem`: the consolidation cycle — run operations, report and review findings."""

from __future__ import annotations

from typing import Any

import click

from app.cli.common import CliState, cli, emit_json, handle_errors, json_option, pass_state


def _context(state: CliState, project: str | None = None, as_of: str | None = None) -> Any:
    from services.rem.cycle import RemContext

    now = None
    if as_of is not None:
        from app.cli.memories import parse_date

        now = parse_date(as_of, "--as-of")
    engram = state.engram()
    from app.llm import build_llm_runner

    llm = build_llm_runner(engram.settings)  # loads its model only when first asked
    return RemContext(engram.service, engram.vectors, engram.embedder.model_id, project, now, llm)


@cli.group()
def rem() -> None:
    """Consolidation: find duplicates (and more, as operations arrive); you review."""


@rem.command(name="run")
@click.option("--op", "ops", multiple=True, help="Operation to run (repeatable; default all).")
@click.option("--project", "-p", default=None, help="Only this project.")
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
    """Run consolidation operations now (retention, staleness, duplicates, clusters,
    episodes). Cluster summaries use the configured LLM (llm.* settings) when it works,
    else summaries derived from the memories."""
    from services.rem.cycle import OPERATIONS, run_operations

    context = _context(state, project, as_of)
    selected = list(ops) or list(OPERATIONS)
    if only_due:
        from services.rem.schedule import due_operations

        gap = float(state.engram().settings.get("rem.session_gap_minutes"))
        dues = due_operations(context.service.store, selected, context.now, gap)
        selected = [d.op for d in dues if d.due]
    try:
        reports = run_operations(context, selected, auto, dry_run) if selected else []
    finally:
        context.llm.close()
    if as_json:
        emit_json({"dry_run": dry_run, "auto": auto, "operations": [r.to_dict() for r in reports]})
        return
    for report in reports:
        status = f"failed: {report.error}" if report.error else f"{len(report.findings)} findings"
        applied = f", {report.applied} applied" if auto else ""
        click.echo(f"{report.op}: {status}{applied} ({report.seconds:.2f} s)")
        for finding in report.findings[:20]:
            click.echo(f"  {finding.id} [{finding.kind}] {finding.summary[:110]}")


@rem.command(name="status")
@json_option
@pass_state
@handle_errors
def status(state: CliState, as_json: bool) -> None:
    """Which operations are due, and why (work sessions and time since each last ran)."""
    from services.rem.cycle import OPERATIONS
    from services.rem.schedule import due_operations

    context = _context(state)
    gap = float(state.engram().settings.get("rem.session_gap_minutes"))
    dues = due_operations(context.service.store, list(OPERATIONS), context.now, gap)
    if as_json:
        emit_json({"operations": [d.__dict__ for d in dues]})
        return
    for due in dues:
        mark = "due" if due.due else "not due"
        click.echo(f"{due.op:12} {mark:8} {due.reason} (last run: {due.last_run or 'never'})")


@rem.command(name="report")
@json_option
@pass_state
@handle_errors
def report(state: CliState, as_json: bool) -> None:
    """Findings waiting for an answer, and what ran when."""
    from services.rem.cycle import last_runs
    from services.rem.findings import FindingStore

    context = _context(state)
    findings = FindingStore(context.service.store)
    pending = findings.pending()
    runs = last_runs(context)
    if as_json:
        emit_json(
            {
                "pending": [f.to_dict() for f in pending],
                "counts": findings.counts(),
                "last_runs": runs,
            }
        )
        return
    for op, run_info in sorted(runs.items()):
        outcome = f"{run_info['status']}, {run_info['findings']} findings"
        click.echo(f"{op}: last run {run_info['at']} ({outcome})")
    click.echo(f"{len(pending)} findings wait for you" + (": engram rem review" if pending else ""))
    for finding in pending:
        click.echo(f"  {finding.id} [{finding.kind}] {finding.summary[:110]}")


@rem.command(name="review")
@click.option(
    "--answer", "answers", multiple=True, metavar="ID=OPTION", help="Answer without asking."
)
@pass_state
@handle_errors
def review(state: CliState, answers: tuple[str, ...]) -> None:
    """Go through waiting findings one at a time and choose an option for each."""
    from services.rem.actions import answer
    from services.rem.findings import FindingStore

    context = _context(state)
    findings = FindingStore(context.service.store)
    given = dict(item.split("=", 1) for item in answers if "=" in item)
    pending = [f for f in findings.pending() if not given or f.id in given]
    if not pending:
        click.echo("nothing to review")
        return
    for number, finding in enumerate(pending, 1):
        if finding.id in given:
            choice = given[finding.id]
        else:
            click.echo(f"\n[{number}/{len(pending)}] {finding.kind}: {finding.summary}")
            for memory_id in finding.memory_ids:
                memory = context.service.store.get(memory_id)
                click.echo(f"  - {memory_id} ({memory.type.value}): {memory.content[:160]}")
            for option in finding.options:
                mark = " (recommended)" if option.name == finding.recommended else ""
                click.echo(f"  {option.name}{mark}: {option.action}")
            names = [o.name for o in finding.options]
            choice = click.prompt("choose", type=click.Choice(names), default=finding.recommended)
        changed = answer(context.service, findings, finding, choice)
        click.echo(f"{finding.id}: {choice}" + (" (applied)" if changed else ""))
