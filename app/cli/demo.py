"""`engram demo`: what `make run` starts until the tray app exists. Loads a few sample
memories into a separate demo data folder (never the user's own) and shows searches."""

from __future__ import annotations

from importlib import resources

import click

from app.cli.common import CliState, cli, console, emit_json, handle_errors, json_option, pass_state

DEMO_QUERIES = (
    ("demo-shop", "TypeError: can't compare offset-naive and offset-aware datetimes"),
    ("demo-shop", "which database do we use and why"),
    ("demo-app", "how should a component load data from the API?"),
)


@cli.command()
@json_option
@pass_state
@handle_errors
def demo(state: CliState, as_json: bool) -> None:
    """Show Engram on sample memories, in a separate demo data folder."""
    from app.composition import open_engram
    from services.filters import MemoryFilter
    from services.transfer import parse_import

    data_dir = state.data_dir.with_name(state.data_dir.name + "-demo")
    raw = resources.files("resources").joinpath("demo/memories.jsonl").read_bytes()
    memories = parse_import(raw, "demo/memories.jsonl")
    engram = open_engram(data_dir)
    try:
        engram.service.import_memories(memories, skip_existing=True)
        engram.service.catch_up()
        if as_json:
            emit_json(
                {
                    "data_dir": str(data_dir),
                    "searches": [
                        {
                            "project": project,
                            "query": query,
                            "results": [
                                {
                                    "id": r.memory.id,
                                    "title": r.memory.title,
                                    "score": round(r.score, 4),
                                }
                                for r in engram.service.search(
                                    query, MemoryFilter(project=project), 2
                                ).results
                            ],
                        }
                        for project, query in DEMO_QUERIES
                    ],
                }
            )
            return
        out = console()
        out.print(f"[bold]Engram demo[/bold] — {len(memories)} sample memories in {data_dir}\n")
        for project, query in DEMO_QUERIES:
            out.print(f"[bold cyan]$ engram search -p {project} {query!r}[/bold cyan]")
            response = engram.service.search(query, MemoryFilter(project=project), limit=2)
            for result in response.results:
                b = result.breakdown
                out.print(
                    f"  {result.score:.2f}  [bold]{result.memory.title}[/bold]  "
                    f"[dim](dense {b.dense:.2f}, bm25 {b.lexical:.2f}, "
                    f"identifiers {b.identifier:.2f})[/dim]"
                )
            out.print("")
    finally:
        engram.close()
    click.echo(
        "Your own memories live in " + str(state.data_dir) + ". Try:\n"
        "  engram add 'We deploy with blue-green releases' --type decision -p myproj\n"
        "  engram search 'how do we deploy' -p myproj\n"
        "  engram import memories.jsonl   |   engram --help"
    )
