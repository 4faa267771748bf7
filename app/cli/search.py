"""`engram search`: one query, or a batch from `--queries-file` (one JSON line out per
line in, nothing else on stdout)."""

from __future__ import annotations

import json
from dataclasses import replace
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
    shown,
)
from app.cli.memories import build_filter, filter_options
from services.errors import Problem, ValidationFailed


def result_json(result: Any, content_chars: int = 0) -> dict[str, Any]:
    """A search result for --json; with `content_chars`, the memory's text up to that
    many characters (`content_cut` when it is longer)."""
    memory, breakdown = result.memory, result.breakdown
    text = (
        {
            "content": memory.content[:content_chars],
            "content_cut": len(memory.content) > content_chars,
        }
        if content_chars
        else {}
    )
    return {
        "id": memory.id,
        "score": round(result.score, 6),
        "type": memory.type.value,
        "project": memory.project,
        "title": memory.title,
        "created_at": memory.created_at,
        "outdated_by": result.outdated_by,
        "replaces": list(result.replaces),
        "disagrees_with": list(result.disagrees_with),
        "superseded_by": memory.superseded_by,
        "follows": result.follows,
        "breakdown": {
            "dense": round(breakdown.dense, 6),
            "lexical": round(breakdown.lexical, 6),
            "identifier": round(breakdown.identifier, 6),
            "intent": round(breakdown.intent, 6),
            "named_project": round(breakdown.named_project, 6),
            "named_file": round(breakdown.named_file, 6),
            "asked_time": round(breakdown.asked_time, 6),
            "neighbour": round(breakdown.neighbour, 6),
            "says_when": round(breakdown.says_when, 6),
            "says_change": round(breakdown.says_change, 6),
            "speaker": round(breakdown.speaker, 6),
            "matched_identifiers": list(breakdown.matched_identifiers),
            "sources": list(breakdown.sources),
            "best_chunk": breakdown.best_chunk,
        },
        **text,
    }


def refuted_here(engram: Any, memories: list[Any]) -> dict[str, str]:
    """Memory id → why, for each of `memories` of the repository the command runs in
    whose stated runtime floor its root manifests contradict (`package.json` declaring
    `engines.node >=20` against a note saying Node 18+)."""
    from app.activity import project_floors, repository_here, secret_patterns
    from services.knowledge.declared_truth import contradicted_by_file

    here = repository_here()
    own = [m for m in memories if here is not None and m.project == here.project]
    if here is None or not own:
        return {}
    declared = project_floors(here.root, secret_patterns(engram))
    return dict(contradicted_by_file(own, declared, ""))


def read_queries(path: Path) -> list[dict[str, Any]]:
    problems: list[Problem] = []
    queries: list[dict[str, Any]] = []
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValidationFailed(
            f"{path} is not valid UTF-8", [Problem(str(path), f"byte {error.start}")]
        ) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(Problem(f"{where}:{error.colno}", f"invalid JSON ({error.msg})"))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("query"), str):
            problems.append(Problem(where, "expected an object with a string 'query'"))
            continue
        if (
            "project" in item
            and item["project"] is not None
            and not isinstance(item["project"], str)
        ):
            problems.append(Problem(where, "'project' must be a string"))
            continue
        queries.append(item)
    if problems:
        raise ValidationFailed(f"{path}: {len(problems)} problem(s) in the queries file", problems)
    return queries


@cli.command()
@click.argument("query", required=False)
@filter_options
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(1, 1000),
    default=None,
    help="How many results (default: the retrieval.limit setting).",
)
@click.option(
    "--retriever",
    type=click.Choice(["hybrid", "dense", "lexical"]),
    default=None,
    help="How to rank (default: the retrieval.retriever setting, hybrid).",
)
@click.option(
    "--queries-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL of {id, query, project?}: one JSON result line per query.",
)
@click.option(
    "--record/--no-record",
    default=None,
    help="Count the results as read (staleness asks when a memory was last read); "
    "default: a single query records, --queries-file does not.",
)
@click.option(
    "--content",
    "content_chars",
    type=click.IntRange(0, 1_000_000),
    default=0,
    help="With --json: each result's text, up to this many characters.",
)
@json_option
@pass_state
@handle_errors
def search(
    state: CliState,
    query: str | None,
    filters: dict[str, Any],
    limit: int | None,
    retriever: str | None,
    queries_file: Path | None,
    record: bool | None,
    content_chars: int,
    as_json: bool,
) -> None:
    """Find memories: hybrid of meaning, keywords and code identifiers."""
    from services.search.retrieval import RetrieverKind

    if (query is None) == (queries_file is None):
        raise click.UsageError("give a QUERY or --queries-file (not both)")
    if query is not None and not query.strip():
        raise click.UsageError(
            'the QUERY is empty; search e.g. "connection pool timeout" (`engram list` lists)'
        )
    engram = state.engram(embeds=retriever != "lexical")
    limit = limit or engram.settings.get_int("retrieval.limit")
    flt = build_filter(state, filters)
    kind = RetrieverKind(retriever or engram.settings.get_str("retrieval.retriever"))
    if record is None:
        record = queries_file is None
    if queries_file is not None:
        for item in read_queries(queries_file):
            scoped = replace(flt, project=item.get("project") or flt.project)
            response = engram.service.search(item["query"], scoped, limit, kind, record)
            emit_json(
                {
                    "id": item.get("id"),
                    "results": [
                        {"id": r.memory.id, "score": round(r.score, 6)} for r in response.results
                    ],
                }
            )
        return
    assert query is not None
    response = engram.service.search(query, flt, limit, kind, record)
    refuted = refuted_here(engram, [r.memory for r in response.results])
    if refuted:  # what the repository's manifests contradict goes last
        kept = [r for r in response.results if r.memory.id not in refuted]
        response = replace(
            response, results=[*kept, *(r for r in response.results if r.memory.id in refuted)]
        )
    if as_json:
        emit_json(
            {
                "query": query,
                "retriever": kind.value,
                "flags": response.flags,
                "took_ms": round(response.metrics.total_ms, 2),
                "results": [
                    {**result_json(r, content_chars), "refuted_by": refuted.get(r.memory.id)}
                    for r in response.results
                ],
            }
        )
        return
    out = console()
    for flag in response.flags:
        out.print(f"[yellow]note: {flag.replace('_', ' ')}[/yellow]")
    if not response.results:
        out.print("no memories found")
        return
    for rank, result in enumerate(response.results, start=1):
        memory, b = result.memory, result.breakdown
        why = f"dense {b.dense:.2f} · bm25 {b.lexical:.2f} · ident {b.identifier:.2f}"
        if b.matched_identifiers:
            why += " (" + shown(", ".join(b.matched_identifiers)) + ")"
        score = f"score {result.score:.3f}"
        if "replacement" in b.sources:  # the search did not find it: no score of its own
            why, score = "not matched by the search", "brought in"
        out.print(f"{rank:>2}. [bold]{shown(memory.title)}[/bold]  [dim]{memory.id}[/dim]")
        meta = (
            f"    {memory.type.value} · {shown(memory.project or '-')} · "
            f"{memory.created_at[:10]} · {score}"
        )
        # Wrapped by the terminal, "ident" and its value would land on two lines.
        if len(meta) + len(why) + 3 <= out.width:
            out.print(f"{meta} = {why}")
        else:
            out.print(meta)
            out.print(f"      = {why}")
        if memory.superseded_by:  # deep and exhaustive searches find history too
            out.print(f"    [yellow]no longer holds: replaced by {memory.superseded_by}[/yellow]")
        elif result.outdated_by:
            out.print(
                f"    [yellow]may be outdated — see {result.outdated_by}[/yellow] "
                f"(`engram contradictions list`)"
            )
        if result.replaces:
            out.print(
                f"    may replace {', '.join(result.replaces)}: ranked above, whatever the score"
            )
        if result.disagrees_with:
            out.print(
                f"    [yellow]disagrees with {', '.join(result.disagrees_with)}[/yellow] "
                f"(open: `engram contradictions resolve`)"
            )
        if memory.id in refuted:
            out.print(f"    [yellow]⚠ it {shown(refuted[memory.id])}[/yellow]")
