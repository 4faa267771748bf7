"""`engram recall`: answers to questions about when things happened, from the dates
resolved in memories."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any

import click

from app.cli.common import (
    CliState,
    cli,
    console,
    emit_json,
    handle_errors,
    json_option,
    pass_state,
    project_option,
    shown,
)


def _as_of(value: str | None) -> date:
    if not value:
        return datetime.now().astimezone().date()
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a date (YYYY-MM-DD)", param_hint="--as-of"
        ) from None


def _answerer(state: CliState, project: str | None, use_llm: bool) -> Any:
    """A function question → RecallAnswer over this data folder (one LLM runner)."""
    from services.filters import MemoryFilter
    from services.knowledge.recall import recall
    from services.storage.time_index import backfill, load_times
    from services.types import RetrievalMode

    engram = state.engram()
    backfill(engram.store)  # databases from before memory_time: once, cheap
    connection = engram.store.database.connection()
    llm = None
    if use_llm:
        llm = engram.llm_runner()
        click.get_current_context().call_on_close(llm.close)

    def answer(question: str, as_of: date, scope: str | None = None) -> Any:
        # A question about when something happened is about history: the note that says
        # "we moved the test runner to nox" answers it even after a later note replaced
        # it ("we dropped nox"), and so does a note gone cold or archived.
        flt = MemoryFilter(project=scope or project, mode=RetrievalMode.EXHAUSTIVE)

        def search(query: str, limit: int) -> list[tuple[Any, float]]:
            response = engram.service.search(query, flt, limit)
            return [(r.memory, r.score) for r in response.results]

        hits = engram.store.lexical(question, 50, flt.project)
        found = engram.store.filter_ids([h.memory_id for h in hits], flt)
        keyword_hits = [(found[h.memory_id], h.score) for h in hits if h.memory_id in found]
        return recall(
            question,
            search,
            lambda ids: load_times(connection, ids),
            as_of,
            llm,
            extra_hits=keyword_hits,
        )

    return answer


def _print(answer: Any, reason: bool) -> None:
    out = console()
    if not answer.temporal_question:
        out.print(shown(answer.answer))
        for memory in answer.matches:
            out.print(f"  [bold]{shown(memory.title)}[/bold]  [dim]{memory.id}[/dim]")
        return
    out.print(f"[bold]{shown(answer.answer)}[/bold]")
    out.print(
        f"[dim]confidence {answer.confidence:.2f}"
        + (" · inference needed" if answer.inference_needed else "")
        + (" · checked by the language model" if answer.used_llm else "")
        + "[/dim]"
    )
    for memory_id in answer.sources:
        text = answer.rendered.get(memory_id)
        out.print(f"  [dim]{memory_id}[/dim]" + (f": {shown(text)}" if text else ""))
    if reason:
        out.print("reasoning:")
        for step in answer.reasoning:
            out.print(f"  - {shown(step)}")
        for r in answer.resolutions:
            end = f" to {r['resolved_end']}" if r["resolved_end"] else ""
            out.print(f"  - {r['memory_id']}: '{shown(r['phrase'])}' → {r['resolved']}{end}")


@cli.command()
@click.argument("question", required=False)
@project_option
@click.option("--reason", is_flag=True, help="Show how the answer was found.")
@click.option("--as-of", default=None, help="Today's date for 'how long ago' (YYYY-MM-DD).")
@click.option(
    "--llm/--no-llm",
    "use_llm",
    default=True,
    help="Ask the language model when the dates alone are not enough (default: yes).",
)
@click.option(
    "--queries-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL of {id, query, project?}: one JSON answer line per question.",
)
@json_option
@pass_state
@handle_errors
def recall(
    state: CliState,
    question: str | None,
    project: str | None,
    reason: bool,
    as_of: str | None,
    use_llm: bool,
    queries_file: Path | None,
    as_json: bool,
) -> None:
    """Answer a question about time ("when did…", "how long ago…") from your memories."""
    if (question is None) == (queries_file is None):
        raise click.UsageError("give a QUESTION or --queries-file (not both)")
    if question is not None and not question.strip():
        raise click.UsageError('the QUESTION is empty; ask e.g. "When did we ship 1.2?"')
    today = _as_of(as_of)
    answer = _answerer(state, state.known_project(project), use_llm)
    if queries_file is not None:
        from app.cli.search import read_queries

        for item in read_queries(queries_file):
            result = answer(item["query"], today, item.get("project"))
            emit_json({"id": item.get("id"), **result.to_json()})
        return
    assert question is not None
    result = answer(question, today)
    if as_json:
        emit_json(result.to_json())
        return
    _print(result, reason)
