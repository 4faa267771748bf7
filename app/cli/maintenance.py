"""`engram cleanup | reindex | stats | config`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from app.cli.common import (
    CliState,
    cli,
    console,
    counted,
    emit_json,
    err,
    handle_errors,
    json_option,
    pass_state,
    say,
    shown,
)
from services.filters import MemoryFilter

if TYPE_CHECKING:
    from app.settings import Settings


@cli.command()
@click.option("--force-decay", is_flag=True, help="Decay now even if a week has not passed.")
@json_option
@pass_state
@handle_errors
def cleanup(state: CliState, force_decay: bool, as_json: bool) -> None:
    """Weekly decay of unused memories; archive (never delete) the unneeded ones."""
    report = state.engram(catch_up=False).lifecycle.cleanup(force_decay=force_decay)
    if as_json:
        emit_json(
            {"decayed": report.decayed, "archived": report.archived, "decay_ran": report.decay_ran}
        )
        return
    decay = f"decayed {report.decayed} unused memories" if report.decay_ran else "decay not due yet"
    say(f"{decay}; archived {report.archived}")


@cli.command()
@json_option
@pass_state
@handle_errors
def reindex(state: CliState, as_json: bool) -> None:
    """Rebuild the keyword and vector indexes from the records (SQLite)."""
    from app.background import embedding_lock

    engram = state.engram(catch_up=False)
    with embedding_lock(state.data_dir, wait=True):
        change = engram.model_change()
        if change is not None:
            change.run()
        embedded = engram.indexer.reindex()
    total = engram.store.count()
    if as_json:
        emit_json({"memories": total, "embedded": embedded, "model": engram.embedder.model_id})
    else:
        say(f"reindexed {total} memories ({embedded} embedded with {engram.embedder.model_id})")


def _stats(state: CliState) -> dict[str, Any]:
    from services.storage.stats import knowledge_counts, memories_by

    engram = state.engram(catch_up=False)
    return {
        "data_dir": str(engram.data_dir),
        "memories": engram.store.count(),
        "searchable_now": engram.store.count(MemoryFilter()),
        "by_project": memories_by("project"),
        "by_type": memories_by("type"),
        "by_tier": memories_by("tier"),
        "waiting_for_embedding": engram.store.pending_count(engram.embedder.model_id),
        "embedding_model": engram.embedder.model_id,
        "embedding_dimension": engram.store.meta_get("embedder.active_dimension"),
        "searches": engram.metrics.summary(),
        "knowledge": knowledge_counts(engram.store),
    }


@cli.command()
@json_option
@pass_state
@handle_errors
def stats(state: CliState, as_json: bool) -> None:
    """What is stored and how searches went (last 30 days)."""
    data = _stats(state)
    if as_json:
        emit_json(data)
        return
    out = console()
    out.print(
        f"[bold]{data['memories']}[/bold] memor{'y' if data['memories'] == 1 else 'ies'} in "
        f"{shown(str(data['data_dir']))} "
        f"({data['waiting_for_embedding']} waiting for embedding)"
    )
    for key in ("by_project", "by_type", "by_tier"):
        pairs = shown(", ".join(f"{k}: {v}" for k, v in sorted(data[key].items())))
        out.print(f"  {key.replace('_', ' ')}: {pairs or '-'}")
    known = data["knowledge"]
    out.print(
        f"  {known['findings_waiting']} findings wait for review, "
        f"{known['contradictions_open']} contradictions open, {known['superseded']} superseded; "
        f"{known['facts']} facts, {known['lessons_versioned']} versioned lessons, "
        f"{known['dated_phrases']} dated phrases, {known['links']} links, "
        f"{known['communities']} communities"
    )
    searches = data["searches"]
    out.print(f"searches in the last {searches['days']} days: {searches['searches']}")
    if searches["searches"]:
        latency = searches["latency_ms"]
        out.print(
            f"  latency p50 {latency['p50']:.1f} ms, p95 {latency['p95']:.1f} ms; "
            f"empty: {searches['empty_searches']}; flags: {shown(str(searches['flags'] or '-'))}"
        )


@cli.group()
def config() -> None:
    """Read and change settings (stored in settings.json in the data folder)."""


def _repairable_settings(state: CliState) -> Settings:
    """The settings as `engram config` reads them: a broken file does not stop it (its
    valid values hold, the others are their defaults); what is wrong goes to stderr."""
    from app.settings import SETTINGS_FILE, Settings

    settings = Settings(state.data_dir / SETTINGS_FILE, strict=False)
    for problem in settings.problems:
        err(f"{problem} (not used)")
    return settings


def _say_repaired(settings: Settings) -> None:
    if settings.backed_up is not None:
        err(
            f"{settings.path} had problems: rewritten with its valid values; "
            f"the broken file is kept as {settings.backed_up}"
        )


@config.command(name="list")
@json_option
@pass_state
@handle_errors
def config_list(state: CliState, as_json: bool) -> None:
    """Every setting with its value, default and where the value comes from; an invalid
    value shows its default and what is wrong."""
    settings = _repairable_settings(state)
    items = settings.items()
    if as_json:
        emit_json(items)
        return
    from rich.table import Table

    wrong = [item for item in items if item["problem"]]
    table = Table()
    for column in ("key", "value", "source", "description"):
        table.add_column(column)
    if wrong:
        table.add_column("problem")
    for item in items:
        cells = [item["key"], str(item["value"]), item["source"], item["description"]]
        table.add_row(*cells, *([item["problem"] or ""] if wrong else []))
    console().print(table)
    if wrong or settings.problems:
        from app.settings import REPAIR_HINT

        err(f"fix: {REPAIR_HINT}")


@config.command(name="get")
@click.argument("key")
@json_option
@pass_state
@handle_errors
def config_get(state: CliState, key: str, as_json: bool) -> None:
    value = _repairable_settings(state).get(key)
    if as_json:
        emit_json({"key": key, "value": value})
    else:
        say(value)


@config.command(name="set")
@click.argument("key")
@click.argument("value")
@json_option
@pass_state
@handle_errors
def config_set(state: CliState, key: str, value: str, as_json: bool) -> None:
    """Set KEY to VALUE (also repairs a broken settings file: its valid values are kept,
    the file itself is kept as settings.json.broken-<time>)."""
    settings = _repairable_settings(state)
    stored = settings.set(key, value)
    _say_repaired(settings)
    if settings.source(key) == "env":
        from app.settings import setting

        err(f"note: {setting(key).env_var} is set and overrides this value")
    if key.startswith("embedder."):
        from app.composition import embedder_config, missing_model_file

        missing = missing_model_file(embedder_config(settings))
        if missing is not None:
            err(f"note: {missing} is not a file; until it is, searches keep the current model")
    if as_json:
        emit_json({"key": key, "value": stored})
    else:
        say(f"{key} = {stored}")


@config.command(name="reset")
@click.argument("key")
@json_option
@pass_state
@handle_errors
def config_reset(state: CliState, key: str, as_json: bool) -> None:
    """Put KEY back to its default (also repairs a broken settings file, like set)."""
    settings = _repairable_settings(state)
    default = settings.reset(key)
    _say_repaired(settings)
    if as_json:
        emit_json({"key": key, "value": default})
    else:
        say(f"{key} = {default} (the default)")


@config.command(name="set-key")
@click.argument("name", type=click.Choice(["embedder.openai", "llm.openai"]))
@json_option
@pass_state
@handle_errors
def config_set_key(state: CliState, name: str, as_json: bool) -> None:
    """Store an API key in the system keyring (never in a file)."""
    from app.secrets import set_api_key

    set_api_key(name, click.prompt("API key", hide_input=True, err=True))
    if as_json:
        emit_json({"stored": name, "where": "keyring"})
    else:
        say(f"stored the key for {name} in the system keyring")


@cli.command()
@click.option("--quiet", "-q", is_flag=True, help="Print nothing (background use).")
@click.option("--wait", is_flag=True, help="Wait for a running embedder instead of leaving.")
@json_option
@pass_state
@handle_errors
def embed(state: CliState, quiet: bool, wait: bool, as_json: bool) -> None:
    """Embed the memories that wait for vectors (runs by itself after large imports)."""
    from app.background import embedding_lock

    engram = state.engram(catch_up=False)
    with embedding_lock(state.data_dir, wait=wait) as held:
        if not held:
            if not quiet:
                say("another embedder is already running for this data folder")
            return
        engram.start_up()
        done = engram.service.catch_up()
        change = engram.model_change()
        if change is not None:
            if not quiet:
                say(f"re-embedding with {engram.target_embedder.model_id}…")
            change.run()
    waiting = engram.store.pending_count(engram.embedder.model_id)
    if as_json:
        emit_json({"embedded": done, "waiting": waiting})
    elif not quiet and done == waiting == 0:
        say("nothing was waiting: every memory has its vector")
    elif not quiet:
        say(f"embedded {counted(done, 'memory', 'memories')}; {waiting} still waiting")
