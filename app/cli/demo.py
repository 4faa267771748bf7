"""`engram demo`: what `make run` shows when the tray cannot start. Loads a few sample
memories into a separate demo data folder (never the user's own) and shows searches."""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

from app.cli.common import (
    CliState,
    cli,
    console,
    emit_json,
    handle_errors,
    json_option,
    pass_state,
    say,
    shown,
)

if TYPE_CHECKING:
    from app.composition import Engram
    from services.context.assembly import AssembledContext

DEMO_ERROR = "TypeError: can't compare offset-naive and offset-aware datetimes"
DEMO_CONTEXT_BUDGET = 600

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
    from services.memories.transfer import parse_import

    data_dir = state.data_dir.with_name(state.data_dir.name + "-demo")
    raw = resources.files("resources").joinpath("demo/memories.jsonl").read_bytes()
    memories = parse_import(raw, "demo/memories.jsonl")
    engram = open_engram(data_dir)
    try:
        engram.service.import_memories(memories, skip_existing=True)
        engram.service.catch_up()
        context = _demo_context(engram)
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
                    "context": context.to_dict(),
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
                    f"  {result.score:.2f}  [bold]{shown(result.memory.title)}[/bold]  "
                    f"[dim](dense {b.dense:.2f}, bm25 {b.lexical:.2f}, "
                    f"identifiers {b.identifier:.2f})[/dim]"
                )
            out.print("")
        out.print(
            f"[bold cyan]$ engram context -p demo-shop --error {DEMO_ERROR!r} "
            f"--budget {DEMO_CONTEXT_BUDGET}[/bold cyan]"
        )
        say(context.markdown + "\n")
    finally:
        engram.close()
    say(
        "Your own memories live in " + str(state.data_dir) + ". Try:\n"
        "  engram add 'We deploy with blue-green releases' --type decision -p myproj\n"
        "  engram search 'how do we deploy' -p myproj\n"
        "  engram watch ~/code/myproj   (then: engram context)\n"
        "  engram import memories.jsonl   |   engram --help"
    )


def _demo_context(engram: Engram) -> AssembledContext:
    """The context Engram assembles when the demo shop's error is pasted."""
    from datetime import UTC, datetime

    from services.activity.signals import Signal, SignalKind

    engine = engram.predictive_engine()
    at = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
    prediction = engine.observe(Signal(SignalKind.ERROR_SEEN, at, "demo-shop", error=DEMO_ERROR))
    return engram.assembler().assemble(prediction, DEMO_CONTEXT_BUDGET)
