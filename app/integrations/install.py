"""Reading, merging, backing up and writing assistants' configuration files for
`engram hooks install | uninstall | status`. Pure functions over paths and parsed
documents; no click.

Rules every change follows: a file that does not parse is refused with its line and
nothing is written; Engram's entries are recognised by their command (`engram hook …`,
`engram mcp`), everything else stays where it was; a second install changes nothing;
a file is backed up (`<file>.engram-backup-<time>`, owner-only) before it is changed,
and written whole through a temporary file, to the target of a symlink.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from app.integrations.formats import (
    MCP_SERVER_NAME,
    Assistant,
    FileFormat,
    HookStyle,
    Scope,
    command_words,
    engram_event_of,
    engram_program,
    entry_timeout,
    hook_command,
    hook_entry,
    is_engram_handler,
    is_engram_server,
    mcp_entry,
    server_words,
)
from services.errors import EnvironmentProblem, UserInputError


class ConfigFileError(UserInputError):
    """An assistant's configuration file Engram cannot safely change."""


@dataclass
class FileChange:
    """What installing or uninstalling does to one file."""

    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: nothing to write
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    backup: Path | None = None

    @property
    def action(self) -> str:
        if self.after is None:
            return "unchanged"
        return "create" if self.before is None else "update"

    def diff(self) -> str:
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after if self.after is not None else self.before or "").splitlines(
            keepends=True
        )
        label = str(self.path)
        return "".join(difflib.unified_diff(old, new, f"{label} (now)", f"{label} (after)"))

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "action": self.action,
            "added": self.added,
            "removed": self.removed,
            "backup": str(self.backup) if self.backup else None,
        }


# --- where ------------------------------------------------------------------------------


def repository_root(start: Path) -> Path | None:
    """The top of the git working tree holding `start` (a `.git` folder or file)."""
    from services.activity.git_state import git_dir

    here = start.resolve()
    for folder in (here, *here.parents):
        if git_dir(folder) is not None:
            return folder
    return None


@dataclass(frozen=True)
class Executable:
    """The engram program written into configurations, and how it was found."""

    path: str
    found_by: str


def find_executable() -> Executable | None:
    """The absolute path of the `engram` being run (argv[0]), else the one beside this
    Python (a virtual environment's bin), else the one on PATH."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name in ("engram", "engram.exe") and Path(argv0).is_file():
        return Executable(os.path.abspath(argv0), "the running command (argv[0])")
    beside = Path(sys.executable).parent / "engram"
    if beside.is_file():
        return Executable(str(beside.absolute()), "this Python environment's bin folder")
    on_path = shutil.which("engram")
    if on_path:
        return Executable(os.path.abspath(on_path), "PATH")
    return None


# --- reading and writing ---------------------------------------------------------------


def read_text(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as error:
        raise ConfigFileError(
            f"{path} is not UTF-8 text ({error.reason} at byte {error.start}); nothing was "
            "written — fix the file or move it away and run the command again"
        ) from None


def parse_json(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigFileError(
            f"{path}:{error.lineno}:{error.colno}: not valid JSON ({error.msg}); nothing was "
            "written — fix the file (comments are not JSON) or move it away and run the "
            "command again"
        ) from None
    if not isinstance(document, dict):
        raise ConfigFileError(
            f"{path}: expected a JSON object at the top, found {_kind(document)}; nothing "
            "was written"
        )
    return document


def parse_toml(path: Path, text: str | None) -> Any:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text or "")
    except ParseError as error:
        raise ConfigFileError(
            f"{path}:{error.line}:{error.col}: not valid TOML ({_toml_reason(error)}); "
            "nothing was written — fix the file or move it away and run the command again"
        ) from None


def _toml_reason(error: Exception) -> str:
    text = str(error)
    return text.split(" at line ")[0] if " at line " in text else text


def dump_json(document: dict[str, Any], original: str | None) -> str:
    return json.dumps(document, indent=_indent_of(original), ensure_ascii=False) + "\n"


def _indent_of(text: str | None) -> int | str:
    """The indentation a JSON file already uses (2 when it is new or flat)."""
    for line in (text or "").splitlines()[1:]:
        stripped = line.lstrip()
        if stripped:
            indent = line[: len(line) - len(stripped)]
            if indent and set(indent) == {" "}:
                return len(indent)
            if indent and set(indent) == {"\t"}:
                return "\t"
            return 2
    return 2


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def backup_path(path: Path, now: datetime) -> Path:
    stem = f"{path.name}.engram-backup-{now:%Y%m%d-%H%M%S}"
    candidate = path.with_name(stem)
    number = 2
    while candidate.exists():
        candidate = path.with_name(f"{stem}-{number}")
        number += 1
    return candidate


def write_backup(path: Path, now: datetime) -> Path:
    """A copy of `path` beside it, readable by its owner only."""
    target = backup_path(path, now)
    data = path.read_bytes()
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    return target


def write_whole(path: Path, text: str, expected: str | None) -> None:
    """Replace `path` with `text` through a temporary file in the same folder, keeping
    its permissions; refuse when the file changed since it was read (an assistant
    rewriting it at the same moment)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    if read_text(path) != expected:
        raise EnvironmentProblem(
            f"{path} changed while Engram was writing it (is the assistant running?); "
            "nothing was written to it — run the command again"
        )
    temporary = path.with_name(f".{path.name}.engram-{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def apply_changes(changes: list[FileChange], now: datetime | None = None) -> list[FileChange]:
    """Write every change (backing up each existing file first); unchanged files are
    left alone."""
    now = now or datetime.now()
    for change in changes:
        if change.after is None:
            continue
        target = change.path.resolve() if change.path.is_symlink() else change.path
        if change.before is not None:
            change.backup = write_backup(target, now)
        write_whole(target, change.after, change.before)
    return changes


# --- hooks in a JSON document ----------------------------------------------------------

Edit = Callable[[Any, Path], tuple[list[str], list[str]]]


def _hooks_table(document: dict[str, Any], path: Path, create: bool) -> dict[str, Any] | None:
    table = document.get("hooks")
    if table is None:
        if not create:
            return None
        table = document["hooks"] = {}
    if not isinstance(table, dict):
        raise ConfigFileError(
            f'{path}: "hooks" is {_kind(table)}, expected an object; nothing was written'
        )
    return table


def _event_list(table: dict[str, Any], native: str, path: Path) -> list[Any]:
    entries = table.get(native, [])
    if not isinstance(entries, list):
        raise ConfigFileError(
            f'{path}: "hooks.{native}" is {_kind(entries)}, expected a list; nothing was written'
        )
    return entries


def _strip_engram(entries: list[Any], style: HookStyle) -> tuple[list[Any], int | None, int]:
    """`entries` without Engram's handlers, where the first one stood, and how many
    handlers were taken out. A matcher group left empty goes; one that also holds
    other handlers keeps them."""
    kept: list[Any] = []
    position: int | None = None
    taken = 0
    for entry in entries:
        if style is HookStyle.FLAT:
            if is_engram_handler(entry):
                taken += 1
                position = len(kept) if position is None else position
            else:
                kept.append(entry)
            continue
        handlers = entry.get("hooks") if isinstance(entry, dict) else None
        if not isinstance(handlers, list) or not any(is_engram_handler(h) for h in handlers):
            kept.append(entry)
            continue
        others = [h for h in handlers if not is_engram_handler(h)]
        taken += len(handlers) - len(others)
        if others:
            kept.append({**entry, "hooks": others})
        if position is None:
            position = len(kept)
    return kept, position, taken


def install_hooks(
    document: dict[str, Any],
    path: Path,
    assistant: Assistant,
    command_of: Callable[[str], str],
    timeout: int,
) -> tuple[list[str], list[str]]:
    """Put Engram's entries for every bound event into `document` (in place): where
    Engram's entries were, else at the end of the event's list. Returns what was added
    and what was taken out (both name an entry that was replaced)."""
    if assistant.hooks_version is not None and "version" not in document:
        document_items = list(document.items())
        document.clear()
        document["version"] = assistant.hooks_version
        document.update(document_items)
    table = _hooks_table(document, path, create=True)
    assert table is not None
    added: list[str] = []
    removed: list[str] = []
    for native in dict.fromkeys(binding.native for binding in assistant.bindings):
        wanted = [
            hook_entry(assistant, binding, command_of(binding.event), timeout)
            for binding in assistant.bindings
            if binding.native == native
        ]
        existing = _event_list(table, native, path)
        kept, position, taken = _strip_engram(existing, assistant.style)
        at = len(kept) if position is None else position
        merged = kept[:at] + wanted + kept[at:]
        if merged == existing:
            continue
        table[native] = merged
        label = _label(assistant, native)
        added.append(label)
        if taken:
            removed.append(label)
    return added, removed


def remove_hooks(
    document: dict[str, Any], path: Path, assistant: Assistant
) -> tuple[list[str], list[str]]:
    """Take Engram's handlers out of every event (not only the bound ones: an older
    install may have used another); drop what they leave empty."""
    table = _hooks_table(document, path, create=False)
    if table is None:
        return [], []
    removed: list[str] = []
    for native in list(table):
        entries = table[native]
        if not isinstance(entries, list):
            continue
        kept, _, taken = _strip_engram(entries, assistant.style)
        if not taken:
            continue
        removed.append(_label(assistant, native))
        if kept:
            table[native] = kept
        else:
            del table[native]
    if removed and not table:
        del document["hooks"]
    return [], removed


def _label(assistant: Assistant, native: str) -> str:
    events = [b.event for b in assistant.bindings if b.native == native]
    return f"hook {native} → {', '.join(events)}" if events else f"hook {native}"


# --- the MCP server --------------------------------------------------------------------


def install_mcp_json(
    document: dict[str, Any], path: Path, assistant: Assistant, executable: list[str]
) -> tuple[list[str], list[str]]:
    servers = document.get(assistant.mcp_container)
    if servers is None:
        servers = document[assistant.mcp_container] = {}
    if not isinstance(servers, dict):
        raise ConfigFileError(
            f'{path}: "{assistant.mcp_container}" is {_kind(servers)}, expected an object; '
            "nothing was written"
        )
    wanted = mcp_entry(assistant, executable)
    existing = servers.get(MCP_SERVER_NAME)
    if existing == wanted:
        return [], []
    _refuse_foreign_server(existing, path)
    servers[MCP_SERVER_NAME] = wanted
    label = f"MCP server {MCP_SERVER_NAME!r}"
    return [label], ([label] if existing is not None else [])


def remove_mcp_json(
    document: dict[str, Any], path: Path, assistant: Assistant
) -> tuple[list[str], list[str]]:
    servers = document.get(assistant.mcp_container)
    if not isinstance(servers, dict):
        return [], []
    names = [name for name, entry in servers.items() if is_engram_server(entry)]
    for name in names:
        del servers[name]
    if names and not servers:
        del document[assistant.mcp_container]
    return [], [f"MCP server {name!r}" for name in names]


def _refuse_foreign_server(existing: object, path: Path) -> None:
    if existing is not None and not is_engram_server(existing):
        raise ConfigFileError(
            f"{path}: an MCP server named {MCP_SERVER_NAME!r} is already there and it does "
            "not run `engram mcp`; rename or remove it, then run the command again "
            "(nothing was written)"
        )


def install_mcp_toml(
    document: Any, path: Path, assistant: Assistant, executable: list[str]
) -> tuple[list[str], list[str]]:
    import tomlkit
    from tomlkit.items import InlineTable, Table

    container = assistant.mcp_container
    servers = document.get(container)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        document[container] = servers
    if not isinstance(servers, Table | InlineTable):
        raise ConfigFileError(f"{path}: `{container}` is not a table; nothing was written")
    wanted = mcp_entry(assistant, executable)
    existing = servers.get(MCP_SERVER_NAME)
    plain = _plain(existing)
    if plain == wanted:
        return [], []
    _refuse_foreign_server(plain, path)
    entry = tomlkit.inline_table() if isinstance(servers, InlineTable) else tomlkit.table()
    for key, value in wanted.items():
        entry[key] = value
    if isinstance(entry, Table):
        entry.add(tomlkit.nl())  # a blank line before whatever table follows
    servers[MCP_SERVER_NAME] = entry
    label = f"MCP server {MCP_SERVER_NAME!r}"
    return [label], ([label] if existing is not None else [])


def remove_mcp_toml(document: Any, path: Path, assistant: Assistant) -> tuple[list[str], list[str]]:
    from tomlkit.items import InlineTable, Table

    container = assistant.mcp_container
    servers = document.get(container)
    if not isinstance(servers, Table | InlineTable):
        return [], []
    names = [name for name, entry in servers.items() if is_engram_server(_plain(entry))]
    for name in names:
        del servers[name]
    if names and not servers:
        del document[container]
    return [], [f"MCP server {name!r}" for name in names]


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


# --- plans -----------------------------------------------------------------------------


@dataclass
class _FilePlan:
    path: Path
    format: FileFormat
    edits: list[Edit] = field(default_factory=list)


def _plan(files: list[_FilePlan]) -> list[FileChange]:
    """Read and parse every file first (a broken one stops everything before anything
    is written), then apply the edits to each in memory."""
    import tomlkit

    changes: list[FileChange] = []
    parsed: list[tuple[_FilePlan, str | None, Any]] = []
    for plan in files:
        text = read_text(plan.path)
        document = (
            parse_toml(plan.path, text)
            if plan.format is FileFormat.TOML
            else parse_json(plan.path, text)
        )
        parsed.append((plan, text, document))
    for plan, text, document in parsed:
        original = copy.deepcopy(document) if plan.format is FileFormat.JSON else None
        added: list[str] = []
        removed: list[str] = []
        for edit in plan.edits:
            more_added, more_removed = edit(document, plan.path)
            added += more_added
            removed += more_removed
        if plan.format is FileFormat.TOML:
            after = tomlkit.dumps(document)
            if after.endswith("\n\n") and not (text or "").endswith("\n\n"):
                after = after.rstrip("\n") + "\n"
            changed = after != (text or "")
        else:
            changed = document != original
            after = dump_json(document, text)
        changes.append(FileChange(plan.path, text, after if changed else None, added, removed))
    return changes


def _files(assistant: Assistant, scope: Scope, home: Path, root: Path | None) -> list[_FilePlan]:
    hooks = assistant.hooks_file(scope, home, root)
    mcp = assistant.mcp_file(scope, home, root)
    plans = [_FilePlan(hooks, FileFormat.JSON)]
    if mcp != hooks:
        plans.append(_FilePlan(mcp, assistant.mcp_format))
    return plans


def plan_install(
    assistant: Assistant,
    scope: Scope,
    home: Path,
    root: Path | None,
    executable: list[str],
    timeout_ms: int,
) -> list[FileChange]:
    """The changes that install Engram's hooks and MCP server for `assistant`.
    `executable` is the absolute engram program and any global options."""
    timeout = entry_timeout(assistant, timeout_ms)
    files = _files(assistant, scope, home, root)

    def command_of(event: str) -> str:
        return hook_command(executable, event, assistant)

    def hooks_edit(document: Any, path: Path) -> tuple[list[str], list[str]]:
        return install_hooks(document, path, assistant, command_of, timeout)

    def mcp_edit(document: Any, path: Path) -> tuple[list[str], list[str]]:
        if assistant.mcp_format is FileFormat.TOML:
            return install_mcp_toml(document, path, assistant, executable)
        return install_mcp_json(document, path, assistant, executable)

    files[0].edits.append(hooks_edit)
    files[-1].edits.append(mcp_edit)
    return _plan(files)


def plan_uninstall(
    assistant: Assistant, scope: Scope, home: Path, root: Path | None
) -> list[FileChange]:
    """The changes that take every Engram entry out of `assistant`'s files; a file
    that does not exist is not created."""
    files = [plan for plan in _files(assistant, scope, home, root) if plan.path.exists()]

    def hooks_edit(document: Any, path: Path) -> tuple[list[str], list[str]]:
        return remove_hooks(document, path, assistant)

    def mcp_edit(document: Any, path: Path) -> tuple[list[str], list[str]]:
        if assistant.mcp_format is FileFormat.TOML:
            return remove_mcp_toml(document, path, assistant)
        return remove_mcp_json(document, path, assistant)

    hooks_path = assistant.hooks_file(scope, home, root)
    mcp_path = assistant.mcp_file(scope, home, root)
    for plan in files:
        if plan.path == hooks_path:
            plan.edits.append(hooks_edit)
        if plan.path == mcp_path:
            plan.edits.append(mcp_edit)
    return _plan(files)


# --- status ----------------------------------------------------------------------------


def inspect(assistant: Assistant, scope: Scope, home: Path, root: Path | None) -> dict[str, Any]:
    """What of Engram is installed for `assistant` in `scope`: the hook events, the MCP
    server, the files, and whether the engram programs they name still exist."""
    hooks_path = assistant.hooks_file(scope, home, root)
    mcp_path = assistant.mcp_file(scope, home, root)
    problems: list[str] = []
    programs: list[str] = []
    events: list[str] = []
    try:
        document = parse_json(hooks_path, read_text(hooks_path))
        table = document.get("hooks")
        for binding in assistant.bindings:
            entries = table.get(binding.native) if isinstance(table, dict) else None
            for handler in _handlers(entries, assistant.style):
                if engram_event_of(handler.get("command")) == binding.event:
                    events.append(binding.event)
                    programs.append(engram_program(command_words(handler["command"])) or "")
                    break
    except UserInputError as error:
        problems.append(str(error))
    mcp = False
    try:
        text = read_text(mcp_path)
        if assistant.mcp_format is FileFormat.TOML:
            servers = _plain(parse_toml(mcp_path, text).get(assistant.mcp_container))
        else:
            servers = parse_json(mcp_path, text).get(assistant.mcp_container)
        for entry in (servers or {}).values() if isinstance(servers, dict) else ():
            if is_engram_server(entry):
                mcp = True
                programs.append(engram_program(server_words(entry)) or "")
    except UserInputError as error:
        problems.append(str(error))
    wanted = [binding.event for binding in assistant.bindings]
    found = list(dict.fromkeys(programs))
    missing_programs = [program for program in found if not _runnable(program)]
    if problems:
        state = "unreadable"
    elif missing_programs:
        state = "stale"
    elif not events and not mcp:
        state = "not installed"
    elif set(events) >= set(wanted) and mcp:
        state = "installed"
    else:
        state = "partial"
    return {
        "assistant": assistant.name,
        "label": assistant.label,
        "scope": scope.value,
        "state": state,
        "hooks": {
            "path": str(hooks_path),
            "events": events,
            "missing": [e for e in wanted if e not in events],
        },
        "mcp": {"path": str(mcp_path), "installed": mcp},
        "programs": [{"path": program, "exists": _runnable(program)} for program in found],
        "cannot": list(assistant.cannot),
        "problems": problems,
    }


def _handlers(entries: object, style: HookStyle) -> list[dict[str, Any]]:
    if not isinstance(entries, list):
        return []
    if style is HookStyle.FLAT:
        return [entry for entry in entries if is_engram_handler(entry)]
    found: list[dict[str, Any]] = []
    for group in entries:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(handlers, list):
            found += [handler for handler in handlers if is_engram_handler(handler)]
    return found


def _runnable(program: str) -> bool:
    if not program:
        return False
    if os.sep in program:
        return Path(program).is_file() and os.access(program, os.X_OK)
    return shutil.which(program) is not None
