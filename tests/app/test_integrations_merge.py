"""Property tests of merging Engram's hook entries and MCP server into assistants'
configuration files, over arbitrary existing configurations: a second install changes
nothing, everything that was there stays (in order), and uninstall gives back the
original document."""

from __future__ import annotations

import json
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import given
from hypothesis import strategies as st

from app.integrations.formats import (
    ASSISTANTS,
    Assistant,
    HookStyle,
    Scope,
    engram_event_of,
    engram_subcommand,
    is_engram_handler,
    is_engram_server,
)
from app.integrations.install import apply_changes, plan_install, plan_uninstall

EXECUTABLE = ["/opt/engram env/bin/engram", "--data-dir", "/data/engram"]

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ_-", min_size=1, max_size=12)
scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=20)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(names, children, max_size=3),
    max_leaves=8,
)
# Commands that are not Engram's, including ones that look a little like it.
foreign_commands = st.sampled_from(
    [
        "say done",
        "npx prettier --write",
        "/usr/bin/engram-helper hook stop",
        "python engram.py",
        "echo 'engram hook'",
        "~/bin/notify 'unmatched",
    ]
) | st.text(alphabet="abc /-'\"", max_size=30)


def handlers() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just("command"), "command": foreign_commands},
        optional={"timeout": st.integers(1, 600), "name": names},
    )


def event_names(assistant: Assistant) -> st.SearchStrategy[str]:
    return st.sampled_from([b.native for b in assistant.bindings]) | names


def groups() -> st.SearchStrategy[Any]:
    group = st.fixed_dictionaries(
        {"hooks": st.lists(handlers(), max_size=3)}, optional={"matcher": names}
    )
    return group | json_values  # entries Engram does not understand stay as they are


def hook_tables(assistant: Assistant) -> st.SearchStrategy[dict[str, Any]]:
    entry = handlers() if assistant.style is HookStyle.FLAT else groups()
    return st.dictionaries(event_names(assistant), st.lists(entry, max_size=3), max_size=4)


def servers() -> st.SearchStrategy[dict[str, Any]]:
    server = st.fixed_dictionaries(
        {"command": foreign_commands, "args": st.lists(st.text(max_size=8), max_size=3)}
    )
    return st.dictionaries(names.filter(lambda n: n != "engram"), server, max_size=3)


def configs(assistant: Assistant, with_mcp: bool) -> st.SearchStrategy[dict[str, Any]]:
    optional: dict[str, Any] = {"hooks": hook_tables(assistant)}
    if with_mcp:
        optional[assistant.mcp_container] = servers()
    others = st.dictionaries(
        names.filter(lambda n: n not in ("hooks", "version", assistant.mcp_container)),
        json_values,
        max_size=4,
    )
    return st.tuples(others, st.fixed_dictionaries({}, optional=optional)).map(
        lambda pair: {**pair[0], **pair[1]}
    )


def _hooks_path(assistant: Assistant, home: Path) -> Path:
    return assistant.hooks_file(Scope.USER, home, None)


def _write(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), "utf-8")


def _normal(document: dict[str, Any], assistant: Assistant, original: dict[str, Any]) -> Any:
    """A document with what an install + uninstall may leave behind taken away: event
    lists and containers left empty, and the version Cursor's file must carry."""
    result = json.loads(json.dumps(document))
    if "version" not in original:
        result.pop("version", None)
    table = result.get("hooks")
    if isinstance(table, dict):
        for event in [e for e, entries in table.items() if entries == []]:
            del table[event]
    for key in ("hooks", assistant.mcp_container):
        if result.get(key) == {}:
            del result[key]
    return result


def _non_engram(entries: list[Any], style: HookStyle) -> list[Any]:
    if style is HookStyle.FLAT:
        return [e for e in entries if not is_engram_handler(e)]
    kept = []
    for entry in entries:
        hooks = entry.get("hooks") if isinstance(entry, dict) else None
        if isinstance(hooks, list) and any(is_engram_handler(h) for h in hooks):
            others = [h for h in hooks if not is_engram_handler(h)]
            if others:
                kept.append({**entry, "hooks": others})
        else:
            kept.append(entry)
    return kept


@pytest.mark.parametrize("name", sorted(ASSISTANTS))
def test_install_is_idempotent_keeps_everything_and_uninstall_restores(name: str) -> None:
    assistant = ASSISTANTS[name]
    shares_file = name == "gemini"

    @given(original=configs(assistant, with_mcp=shares_file))
    def check(original: dict[str, Any]) -> None:
        with tempfile.TemporaryDirectory() as folder:
            home = Path(folder)
            path = _hooks_path(assistant, home)
            _write(path, original)
            first = apply_changes(plan_install(assistant, Scope.USER, home, None, EXECUTABLE, 1000))
            assert {c.action for c in first} <= {"create", "update"}
            installed = json.loads(path.read_text("utf-8"))

            second = plan_install(assistant, Scope.USER, home, None, EXECUTABLE, 1000)
            assert [c.action for c in second] == ["unchanged"] * len(second)

            for key, value in original.items():  # nothing else was touched
                if key not in ("hooks", assistant.mcp_container):
                    assert installed[key] == value
            table = installed["hooks"]
            for event, entries in original.get("hooks", {}).items():
                assert _non_engram(table[event], assistant.style) == entries  # same order
            for binding in assistant.bindings:  # exactly one Engram entry per binding
                commands = [
                    h["command"]
                    for h in _flat(table[binding.native], assistant.style)
                    if is_engram_handler(h)
                ]
                assert [engram_event_of(c) for c in commands] == [binding.event]
            if shares_file:
                servers = installed["mcpServers"]
                assert is_engram_server(servers["engram"])
                for server, entry in original.get("mcpServers", {}).items():
                    assert servers[server] == entry

            apply_changes(plan_uninstall(assistant, Scope.USER, home, None))
            restored = json.loads(path.read_text("utf-8"))
            assert _normal(restored, assistant, original) == _normal(original, assistant, original)

    check()


def _flat(entries: list[Any], style: HookStyle) -> list[Any]:
    if style is HookStyle.FLAT:
        return entries
    found = []
    for entry in entries:
        hooks = entry.get("hooks") if isinstance(entry, dict) else None
        found += hooks if isinstance(hooks, list) else []
    return found


@given(
    original=configs(ASSISTANTS["claude"], with_mcp=False),
    stale=st.lists(st.sampled_from([b.native for b in ASSISTANTS["claude"].bindings]), max_size=5),
)
def test_install_replaces_stale_entries_where_they_were(
    original: dict[str, Any], stale: list[str]
) -> None:
    """Entries an older install wrote (another path, another timeout) are replaced in
    place, never doubled."""
    assistant = ASSISTANTS["claude"]
    table = original.setdefault("hooks", {})
    for native in stale:
        table.setdefault(native, []).insert(
            0,
            {
                "hooks": [
                    {"type": "command", "command": "/old/venv/bin/engram hook stop --for claude"}
                ]
            },
        )
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        _write(_hooks_path(assistant, home), original)
        apply_changes(plan_install(assistant, Scope.USER, home, None, EXECUTABLE, 1000))
        installed = json.loads(_hooks_path(assistant, home).read_text("utf-8"))["hooks"]
        for binding in assistant.bindings:
            engram = [
                h for h in _flat(installed[binding.native], assistant.style) if is_engram_handler(h)
            ]
            assert len(engram) == 1
            assert engram[0]["command"].startswith("'/opt/engram env/bin/engram'")
            if binding.native in stale:  # where the old entry stood: first
                first = installed[binding.native][0]
                assert first["hooks"] == engram


toml_keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
toml_values = (
    st.booleans()
    | st.integers(-1000, 1000)
    | st.text(max_size=15)
    | st.lists(st.integers(0, 9), max_size=3)
)
toml_tables = st.dictionaries(toml_keys, toml_values, max_size=3)


@given(
    top=st.dictionaries(toml_keys.filter(lambda k: k != "mcp_servers"), toml_values, max_size=3),
    tables=st.dictionaries(toml_keys.filter(lambda k: k != "mcp_servers"), toml_tables, max_size=2),
    other_servers=st.dictionaries(
        toml_keys.filter(lambda k: k != "engram"),
        st.fixed_dictionaries(
            {
                "command": st.sampled_from(["npx", "uvx"]),
                "args": st.lists(st.text(max_size=6), max_size=2),
            }
        ),
        max_size=2,
    ),
    comment=st.booleans(),
)
def test_codex_config_toml_keeps_the_rest(
    top: dict[str, Any], tables: dict[str, Any], other_servers: dict[str, Any], comment: bool
) -> None:
    """config.toml keeps every other key, table, server (and a comment); a second install
    changes nothing; uninstall gives the original text back."""
    document = tomlkit.document()
    if comment:
        document.add(tomlkit.comment("my Codex settings"))
    for key, value in top.items():
        document[key] = value
    for key, value in tables.items():
        table = tomlkit.table()
        table.update(value)
        document[key] = table
    if other_servers:
        document["mcp_servers"] = other_servers
    original = tomlkit.dumps(document)
    assistant = ASSISTANTS["codex"]
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        path = assistant.mcp_file(Scope.USER, home, None)
        path.parent.mkdir(parents=True)
        path.write_text(original, "utf-8")
        apply_changes(plan_install(assistant, Scope.USER, home, None, EXECUTABLE, 1000))
        installed = tomllib.loads(path.read_text("utf-8"))
        expected = tomllib.loads(original)
        assert installed["mcp_servers"]["engram"] == {
            "command": EXECUTABLE[0],
            "args": [*EXECUTABLE[1:], "mcp"],
        }
        servers = installed.pop("mcp_servers")
        servers.pop("engram")
        assert servers == expected.pop("mcp_servers", {})
        assert installed == expected
        if comment:
            assert "# my Codex settings" in path.read_text("utf-8")
        again = plan_install(assistant, Scope.USER, home, None, EXECUTABLE, 1000)
        assert [c.action for c in again] == ["unchanged", "unchanged"]
        apply_changes(plan_uninstall(assistant, Scope.USER, home, None))
        assert path.read_text("utf-8") == original


@given(st.lists(st.text(max_size=12), max_size=6))
def test_reading_commands_never_fails(words: list[str]) -> None:
    """Any command line (as written by anyone) is read without an error."""
    import shlex

    line = " ".join(shlex.quote(w) for w in words)
    engram_subcommand(words)
    engram_event_of(line)
    is_engram_handler({"command": line})
    is_engram_server({"command": line, "args": words})


@pytest.mark.parametrize(
    ("command", "subcommand"),
    [
        ("/x/engram hook stop --for claude", "hook"),
        ("'/a b/engram' --data-dir '/d d' -v hook prompt --for codex", "hook"),
        ("engram.exe mcp", "mcp"),
        ("/usr/bin/engram-helper hook stop", None),
        ("python engram.py hook", None),
        ("echo 'engram hook'", None),
        ("/x/engram", None),
    ],
)
def test_engram_commands_are_recognised_by_their_program(
    command: str, subcommand: str | None
) -> None:
    import shlex

    assert engram_subcommand(shlex.split(command)) == subcommand
