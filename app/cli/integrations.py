"""`engram hooks install | uninstall | status`: Engram's hook entries and MCP server in
Claude Code's, Codex's, Gemini CLI's and Cursor's configuration, for the user (home
folder) or for the current repository (`--project`). The files and shapes live in
app.integrations.formats; reading, merging and backing up in app.integrations.install."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from app.cli.common import (
    CliState,
    cli,
    console,
    emit_json,
    err,
    handle_errors,
    json_option,
    pass_state,
    say,
    shown,
)
from services.errors import UserInputError

_ASSISTANT = click.option(
    "--for",
    "assistant_name",
    required=True,
    type=click.Choice(["claude", "codex", "gemini", "cursor"]),
    help="The assistant whose configuration to change.",
)
_PROJECT = click.option(
    "--project",
    is_flag=True,
    help="This repository's project files instead of your user configuration.",
)
_DRY_RUN = click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")


@cli.group()
def hooks() -> None:
    """Engram in your coding assistants: hooks that hand it each session's start,
    prompts, file reads and edits, and an MCP server (`engram mcp`) it can ask."""


def _scope(project: bool) -> tuple[Any, Path | None]:
    from app.integrations.formats import Scope
    from app.integrations.install import repository_root

    if not project:
        return Scope.USER, None
    root = repository_root(Path.cwd())
    if root is None:
        raise UserInputError(
            f"--project writes into a repository's files, and {Path.cwd()} is not inside a "
            "git repository; run it from the repository, or leave out --project to install "
            "for your user"
        )
    return Scope.PROJECT, root


def _program(state: CliState, executable: str | None) -> tuple[list[str], str, str]:
    """The engram command line written into configurations (absolute program, plus
    --data-dir when this command was given one), and how the program was found."""
    from app.integrations.install import find_executable

    if executable is not None:
        path, found_by = os.path.abspath(executable), "--executable"
    else:
        found = find_executable()
        if found is None:
            raise UserInputError(
                "cannot find the engram program (not this command, not beside this Python, "
                "not on PATH); name it with --executable PATH"
            )
        path, found_by = found.path, found.found_by
    words = [path]
    if state.data_dir_option or os.environ.get("ENGRAM_DATA_DIR"):
        words += ["--data-dir", str(state.data_dir.absolute())]
    return words, path, found_by


def _timeout_ms(state: CliState) -> int:
    from app.settings import SETTINGS_FILE, Settings

    return Settings(state.data_dir / SETTINGS_FILE, strict=False).get_int("hooks.timeout_ms")


def _where(scope: Any) -> str:
    return "this project" if scope.value == "project" else "your user"


def _report(changes: list[Any], dry_run: bool) -> None:
    verbs = {"create": "created", "update": "updated"}
    for change in changes:
        if change.action == "unchanged":
            continue
        what = ", ".join(dict.fromkeys(change.added or change.removed))
        if dry_run:
            say(f"  would {change.action} {change.path}: {what}")
            say(change.diff().rstrip("\n"))
            continue
        backup = f" (backup: {change.backup})" if change.backup else ""
        say(f"  {verbs[change.action]} {change.path}{backup}: {what}")


def _as_json(changes: list[Any], dry_run: bool) -> list[dict[str, Any]]:
    rows = []
    for change in changes:
        row = change.as_dict()
        if dry_run:
            row["diff"] = change.diff()
        rows.append(row)
    return rows


@hooks.command(name="install")
@_ASSISTANT
@_PROJECT
@_DRY_RUN
@click.option(
    "--executable",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="The engram program the entries run (default: this one, found by absolute path).",
)
@json_option
@pass_state
@handle_errors
def install(
    state: CliState,
    assistant_name: str,
    project: bool,
    dry_run: bool,
    executable: str | None,
    as_json: bool,
) -> None:
    """Write Engram's hook entries and its MCP server into an assistant's configuration.
    Other entries stay as they were; a changed file is backed up first
    (FILE.engram-backup-TIME); running it again changes nothing."""
    from app.integrations.formats import ASSISTANTS
    from app.integrations.install import apply_changes, plan_install

    assistant = ASSISTANTS[assistant_name]
    scope, root = _scope(project)
    words, path, found_by = _program(state, executable)
    changes = plan_install(assistant, scope, Path.home(), root, words, _timeout_ms(state))
    changed = any(change.action != "unchanged" for change in changes)
    if changed and not dry_run:
        apply_changes(changes)
    if as_json:
        emit_json(
            {
                "assistant": assistant.name,
                "scope": scope.value,
                "executable": path,
                "found_by": found_by,
                "dry_run": dry_run,
                "changed": changed,
                "files": _as_json(changes, dry_run),
                "notes": list(assistant.notes),
            }
        )
        return
    files = ", ".join(str(change.path) for change in changes)
    if not changed:
        say(f"{assistant.label} ({_where(scope)}): already installed in {files}; nothing changed")
        return
    say(f"{assistant.label} ({_where(scope)}): the entries run {path} (found via {found_by})")
    _report(changes, dry_run)
    if dry_run:
        say("nothing was written (--dry-run)")
        return
    say(f"Start a new {assistant.label} session to load them; `engram hooks status` shows them.")
    for note in assistant.notes:
        err(f"note: {note}")


@hooks.command(name="uninstall")
@_ASSISTANT
@_PROJECT
@_DRY_RUN
@json_option
@pass_state
@handle_errors
def uninstall(
    state: CliState, assistant_name: str, project: bool, dry_run: bool, as_json: bool
) -> None:
    """Take Engram's hook entries and MCP server out of an assistant's configuration
    (recognised by their command: `engram hook …`, `engram mcp`); everything else
    stays. A changed file is backed up first."""
    from app.integrations.formats import ASSISTANTS
    from app.integrations.install import apply_changes, plan_uninstall

    assistant = ASSISTANTS[assistant_name]
    scope, root = _scope(project)
    changes = plan_uninstall(assistant, scope, Path.home(), root)
    changed = any(change.action != "unchanged" for change in changes)
    if changed and not dry_run:
        apply_changes(changes)
    if as_json:
        emit_json(
            {
                "assistant": assistant.name,
                "scope": scope.value,
                "dry_run": dry_run,
                "changed": changed,
                "files": _as_json(changes, dry_run),
            }
        )
        return
    if not changed:
        say(f"{assistant.label} ({_where(scope)}): nothing of Engram's to remove")
        return
    say(f"{assistant.label} ({_where(scope)}):")
    _report(changes, dry_run)
    if dry_run:
        say("nothing was written (--dry-run)")


@hooks.command(name="status")
@json_option
@pass_state
@handle_errors
def status(state: CliState, as_json: bool) -> None:
    """What of Engram is installed in each assistant, for your user and for this
    repository: the hook events, the MCP server, the files, and whether the engram
    program they run still exists (it does not after a virtual environment moved)."""
    from app.integrations.formats import ASSISTANTS, Scope
    from app.integrations.install import find_executable, inspect, repository_root

    root = repository_root(Path.cwd())
    scopes = [Scope.USER] + ([Scope.PROJECT] if root is not None else [])
    rows = [
        inspect(assistant, scope, Path.home(), root)
        for assistant in ASSISTANTS.values()
        for scope in scopes
    ]
    here = find_executable()
    from app.service import ping

    service = ping(state.data_dir)
    if as_json:
        emit_json(
            {
                "executable": here.path if here else None,
                "repository": str(root) if root else None,
                "service": {"running": service is not None, "pid": (service or {}).get("pid")},
                "assistants": rows,
            }
        )
        return
    _status_table(rows, root)
    say(f"this engram: {here.path if here else 'not found'}")
    if service is not None:
        say(f"the Engram service runs (pid {service['pid']}): hooks are answered from it")
    else:
        say(
            "no Engram service runs for this data folder: hooks work in their own process, "
            "and a prompt's memories may miss the 1 s limit (start the tray or `engram serve`)"
        )
    if root is None:
        say("(not inside a git repository: project configurations not shown)")
    for row in rows:
        for problem in row["problems"]:
            err(f"{row['label']} ({row['scope']}): {problem}")
        for program in row["programs"]:
            if not program["exists"]:
                err(
                    f"{row['label']} ({row['scope']}): {program['path']} no longer exists; "
                    f"run `engram hooks install --for {row['assistant']}"
                    f"{' --project' if row['scope'] == 'project' else ''}` again"
                )


def _status_table(rows: list[dict[str, Any]], root: Path | None) -> None:
    from rich.table import Table

    table = Table()
    for column in ("assistant", "scope", "state", "hooks", "MCP"):
        table.add_column(column)
    table.add_column("files", overflow="fold")  # a path is never cut short
    for row in rows:
        events = row["hooks"]["events"]
        missing = row["hooks"]["missing"]
        if not events:
            hooks_cell = "—"
        elif not missing:
            hooks_cell = f"all {len(events)}"
        else:
            hooks_cell = f"{', '.join(events)} (not {', '.join(missing)})"
        files = dict.fromkeys(
            _short(Path(row[part]["path"]), root if row["scope"] == "project" else None)
            for part in ("hooks", "mcp")
        )
        table.add_row(
            row["label"],
            row["scope"],
            row["state"],
            shown(hooks_cell),
            "yes" if row["mcp"]["installed"] else "no",
            shown("\n".join(files)),
        )
    console().print(table)


def _short(path: Path, root: Path | None) -> str:
    """A path as people read it: relative to the repository, or with ~ for home."""
    if root is not None and path.is_relative_to(root):
        return str(path.relative_to(root))
    if path.is_relative_to(Path.home()):
        return f"~/{path.relative_to(Path.home())}"
    return str(path)
