"""`engram facts`: the structured facts memories state (key, value, scope), what held
at a date, and setting or removing a memory's fact by hand."""

from __future__ import annotations

import click

from app.cli.common import (
    CliState,
    cli,
    emit_json,
    handle_errors,
    json_option,
    only_project_option,
    pass_state,
    say,
)


@cli.group()
def facts() -> None:
    """Structured facts: key, value and scope of what memories state (proposed by
    `engram rem run --op facts`, accepted in the review)."""


@facts.command(name="list")
@click.option("--key", default=None, help="Only this key (e.g. primary_database).")
@click.option("--scope", default=None, help="Only this scope.")
@only_project_option
@click.option("--at", "at", default=None, help="Only facts that held at this date (ISO).")
@json_option
@pass_state
@handle_errors
def list_command(
    state: CliState,
    key: str | None,
    scope: str | None,
    project: str | None,
    at: str | None,
    as_json: bool,
) -> None:
    """Stored facts, oldest first, each with the window in which it held."""
    from app.cli.memories import parse_date
    from services.knowledge.facts import held_at, list_facts

    found = list_facts(state.engram().store, key=key, scope=scope, project=project)
    when = parse_date(at, "--at")
    if when is not None:
        found = [f for f in found if held_at(f, when)]
    if as_json:
        emit_json({"facts": [f.to_dict() for f in found]})
        return
    if not found:
        say("no facts" + (" held then" if when else " yet (engram rem run --op facts)"))
    for fact in found:
        window = f"{(fact.valid_from or '')[:10]} → {(fact.valid_to or 'now')[:10]}"
        say(f"{fact.memory_id}: {fact.line()}  [{window}; {fact.extracted_by}]")


@facts.command(name="set")
@click.argument("memory_id")
@click.option("--key", required=True, help="What the fact is about (e.g. error_handling).")
@click.option("--value", required=True, help="What the memory says it is.")
@click.option("--scope", default="", help="Where it applies (a language, module…).")
@json_option
@pass_state
@handle_errors
def set_command(
    state: CliState, memory_id: str, key: str, value: str, scope: str, as_json: bool
) -> None:
    """Set a memory's fact by hand (replaces a proposed one)."""
    from services.errors import UserInputError
    from services.knowledge.facts import Fact, normal_key, save_fact

    store = state.engram().store
    store.get(memory_id)  # a clear error for an unknown id
    if not normal_key(key) or not value.strip():
        raise UserInputError("--key needs letters or digits and --value must not be empty")
    fact = Fact(memory_id, normal_key(key), value.strip(), scope.strip(), 1.0, "user")
    save_fact(store, fact)
    if as_json:
        emit_json({"fact": fact.to_dict()})
    else:
        say(f"{memory_id}: {fact.line()}")


@facts.command(name="delete")
@click.argument("memory_id")
@pass_state
@handle_errors
def delete_command(state: CliState, memory_id: str) -> None:
    """Remove a memory's fact (the memory stays)."""
    from services.errors import NotFoundError
    from services.knowledge.facts import delete_fact

    if not delete_fact(state.engram().store, memory_id):
        raise NotFoundError(f"memory {memory_id!r} has no fact")
    say(f"{memory_id}: fact removed")
