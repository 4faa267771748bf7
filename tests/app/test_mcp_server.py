"""`engram mcp`'s tools, driven by the MCP SDK's own client in this process (the
in-memory transport with the real initialize handshake), on a temporary data folder
with the real embedder: what the assistant is offered (names, annotations, input
schemas, instructions), what it gets back (structured content and the same data as
text), failures as tool errors, the project taken from the folder, the resident
service used when it runs; and the argv each tool builds, read back by the real CLI
parser for any text (hypothesis). The stdio process is tested in
tests/integration/test_mcp_stdio.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

import app.cli  # noqa: F401  (registers every command on the group)
from app.cli.common import CliState, cli, resident
from app.mcp_server import INSTRUCTIONS, TOOLS, CommandRunner, EngramTools, build_server
from app.service import EngramService
from app.service_client import Answer
from services.types import MemoryType, UsageEvent

READ_ONLY = {
    "search",
    "get_memory",
    "context",
    "recall",
    "list_contradictions",
    "rem_status",
    "rem_report",
    "get_project_context",
}
DESTRUCTIVE = {
    "supersede_memory",
    "resolve_contradiction",
    "save_project_context",
    "refine_lesson",
}
ADDITIVE = {"add_memory", "mark_memories", "add_lesson"}


@pytest.fixture
def project_folder(tmp_path: Path) -> Path:
    """A repository whose project is `alpha` (its .engram-project file)."""
    folder = tmp_path / "alpha-clone"
    (folder / ".git").mkdir(parents=True)
    (folder / ".engram-project").write_text("alpha\n", encoding="utf-8")
    return folder


@pytest.fixture
def served(data_dir: Path, project_folder: Path) -> Iterator[tuple[Any, CommandRunner]]:
    server, runner = build_server(data_dir, str(project_folder))
    yield server, runner
    runner.close()


Session = Callable[[Client], Awaitable[Any]]


def with_client(server: Any, body: Session, mode: str = "legacy") -> Any:
    """Run `body` with an SDK client connected to `server` (initialize handshake
    included); return what it returns."""

    async def main() -> Any:
        async with Client(server, mode=mode, raise_exceptions=True) as client:
            return await body(client)

    return anyio.run(main)


def call(server: Any, name: str, arguments: dict[str, Any]) -> Any:
    async def body(client: Client) -> Any:
        return await client.call_tool(name, arguments)

    return with_client(server, body)


def ok(server: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call(server, name, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def test_the_assistant_is_offered_every_tool_with_its_hints_and_instructions(
    served: tuple[Any, CommandRunner],
) -> None:
    server, _ = served

    async def body(client: Client) -> Any:
        return client.server_info, client.instructions, (await client.list_tools()).tools

    info, instructions, tools = with_client(server, body)
    assert info is not None and info.name == "engram"
    assert instructions == INSTRUCTIONS
    assert "search" in instructions and "add_memory" in instructions
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == READ_ONLY | DESTRUCTIVE | ADDITIVE == {name for name, _, _ in TOOLS}
    for name, tool in by_name.items():
        hints = tool.annotations
        assert hints is not None and hints.open_world_hint is False, name
        assert tool.description and "\n" not in tool.description, name
        assert tool.title, name
        if name in READ_ONLY:
            assert hints.read_only_hint is True, name
        else:
            assert hints.read_only_hint is False, name
            assert hints.destructive_hint is (name in DESTRUCTIVE), name
    assert by_name["supersede_memory"].annotations.idempotent_hint is True

    search = by_name["search"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["limit"]["maximum"] == 50
    kinds = search["properties"]["types"]["anyOf"][0]["items"]["enum"]
    assert kinds == [t.value for t in MemoryType]
    add = by_name["add_memory"].input_schema
    assert add["required"] == ["content"]
    assert add["properties"]["type"]["enum"] == [t.value for t in MemoryType]
    mark = by_name["mark_memories"].input_schema
    assert mark["properties"]["event"]["enum"] == [e.value for e in UsageEvent]
    assert set(mark["required"]) == {"event", "memory_ids"}
    resolve = by_name["resolve_contradiction"].input_schema
    assert resolve["properties"]["resolution"]["enum"] == [
        "a_wins",
        "b_wins",
        "both_valid",
        "merged",
    ]


def test_add_search_show_and_mark_round_trip(served: tuple[Any, CommandRunner]) -> None:
    server, _ = served
    text = "-X flag: the orders service retries uploads three times on HTTP 503, then gives up."
    stored = ok(server, "add_memory", {"content": text, "type": "fix", "tags": ["uploads"]})
    memory_id = stored["id"]
    assert stored["type"] == "fix" and stored["project"] == "alpha"  # the folder's project

    found = call(server, "search", {"query": "upload retries on 503"})
    assert not found.is_error
    data = found.structured_content
    assert data["project"] == "alpha"
    assert [r["id"] for r in data["results"]] == [memory_id]
    assert data["results"][0]["content"] == text  # the text rides along with the title
    rendered = found.content[0].text
    assert memory_id in rendered and "[fix]" in rendered and "three times" in rendered

    shown = call(server, "get_memory", {"memory_id": memory_id})
    assert shown.structured_content["content"] == text
    assert shown.structured_content["tags"] == ["uploads"]
    assert text in shown.content[0].text

    marked = ok(server, "mark_memories", {"event": "used", "memory_ids": [memory_id]})
    assert marked == {"event": "used", "memories": [memory_id]}
    after = ok(server, "get_memory", {"memory_id": memory_id})
    assert after["use_count"] == 1


def test_a_new_memory_lists_what_it_may_replace_and_the_assistant_confirms(
    served: tuple[Any, CommandRunner],
) -> None:
    server, _ = served
    old = ok(
        server,
        "add_memory",
        {"content": "We use PostgreSQL 15 for the orders database.", "type": "decision"},
    )["id"]
    new = call(
        server,
        "add_memory",
        {"content": "We use PostgreSQL 16 for the orders database now.", "type": "decision"},
    )
    candidates = new.structured_content["may_replace"]
    assert [c["id"] for c in candidates] == [old]
    assert candidates[0]["kind"] == "supersedes" and 0 < candidates[0]["score"] <= 1
    assert candidates[0]["reason"]
    assert f"may replace {old}" in new.content[0].text
    assert "supersede_memory" in new.content[0].text

    new_id = new.structured_content["id"]
    pending = call(server, "search", {"query": "which PostgreSQL version for orders"})
    by_id = {r["id"]: r for r in pending.structured_content["results"]}
    # until confirmed, search ranks the new one first and says what it may replace; the
    # two are added within one second, so this holds only if the pair orders by the time
    # each was written (it had followed the ids' order, and failed one run in two)
    assert by_id[new_id]["replaces"] == [old] and by_id[old]["outdated_by"] == new_id
    assert f"may replace {old}: ranked above it" in pending.content[0].text
    confirmed = ok(server, "supersede_memory", {"memory_id": new_id, "replaces": [old]})
    assert confirmed["supersedes"] == [old]
    assert ok(server, "get_memory", {"memory_id": old})["superseded_by"] == new_id
    found = ok(server, "search", {"query": "which PostgreSQL version for orders"})
    assert [r["id"] for r in found["results"]] == [new_id]  # the old one no longer holds
    # a deep search finds it too, and says it no longer holds (it had come first, unmarked)
    deep = call(server, "search", {"query": "PostgreSQL 15 orders", "mode": "deep"})
    by_id = {r["id"]: r for r in deep.structured_content["results"]}
    assert by_id[old]["superseded_by"] == new_id and "superseded_by" not in by_id[new_id]
    assert f"no longer holds: replaced by {new_id}" in deep.content[0].text


def test_a_candidate_the_new_memory_does_not_replace_is_settled_by_its_number(
    served: tuple[Any, CommandRunner],
) -> None:
    """A walkthrough's assistant confirmed the right candidate and could not settle the
    wrong one: the add's answer named no proposal, and the note stayed "may be
    outdated"."""
    server, _ = served
    old = ok(
        server,
        "add_memory",
        {"content": "We use PostgreSQL 15 for the orders database.", "type": "decision"},
    )["id"]
    new = ok(
        server,
        "add_memory",
        {"content": "We use PostgreSQL 16 for the orders database now.", "type": "decision"},
    )
    (candidate,) = new["may_replace"]
    assert candidate["id"] == old and isinstance(candidate["contradiction"], int)
    ok(
        server,
        "resolve_contradiction",
        {"contradiction_id": candidate["contradiction"], "resolution": "both_valid"},
    )
    found = ok(server, "search", {"query": "which PostgreSQL version for orders"})
    assert [r.get("outdated_by") for r in found["results"]] == [None, None]


def test_an_assistant_told_twice_to_remember_one_thing_stores_it_once(
    served: tuple[Any, CommandRunner],
) -> None:
    server, _ = served
    note = {"content": "Orders are exported nightly as CSV to the finance bucket."}
    first = ok(server, "add_memory", note)
    again = call(server, "add_memory", {**note, "tags": ["finance"]})
    assert again.structured_content["id"] == first["id"]
    assert again.structured_content["already_stored"] is True
    assert again.content[0].text.startswith(f"already stored as {first['id']}")
    assert ok(server, "get_memory", {"memory_id": first["id"]})["tags"] == ["finance"]


def test_search_says_which_memories_disagree_while_it_is_open(
    served: tuple[Any, CommandRunner],
) -> None:
    server, _ = served
    old = ok(
        server,
        "add_memory",
        {
            "content": "The pool keeps `max_keepalive_connections = 20` (DEFAULT_LIMITS).",
            "type": "constraint",
            "title": "keep-alive pool size",
        },
    )["id"]
    new = ok(
        server,
        "add_memory",
        {"content": "FYI the keep-alive pool size is 10 now.", "title": "keep-alive pool size"},
    )["id"]
    found = call(server, "search", {"query": "keep-alive pool size"})
    marks = {r["id"]: r.get("disagrees_with") for r in found.structured_content["results"]}
    assert marks == {old: [new], new: [old]}
    assert f"disagrees with {new}: which holds is not decided yet" in found.content[0].text


def test_a_failed_command_is_a_tool_error_with_its_message(
    served: tuple[Any, CommandRunner],
) -> None:
    server, _ = served
    missing = call(server, "get_memory", {"memory_id": "mem-000000000000"})
    assert missing.is_error
    assert missing.content[0].text == "error: no memory with id 'mem-000000000000'"
    assert missing.structured_content is None

    unmarked = call(server, "mark_memories", {"event": "cited", "memory_ids": ["nope"]})
    assert unmarked.is_error and "no memory with id 'nope'" in unmarked.content[0].text

    # arguments the schema refuses never reach the CLI
    refused = call(server, "search", {"query": "x", "limit": 0})
    assert refused.is_error and "limit" in refused.content[0].text
    for name, arguments in (
        ("context", {"file": "a\x00b"}),
        ("add_memory", {"content": "x", "tags": ["a\x00"]}),
    ):
        nul = call(server, name, arguments)
        assert nul.is_error and nul.content[0].text == "error: an argument contains a NUL character"

    # a usage error is told without click's usage lines (a new user's assistant was
    # handed "Usage: engram search [OPTIONS] [QUERY] …" for an empty query)
    empty = call(server, "search", {"query": "  "})
    assert empty.is_error and empty.content[0].text.startswith("error: the QUERY is empty")
    assert "Usage:" not in empty.content[0].text and "--help" not in empty.content[0].text

    # and the server still answers afterwards
    assert ok(server, "search", {"query": "anything"})["results"] == []


def test_context_for_a_file_and_for_an_error(
    served: tuple[Any, CommandRunner], project_folder: Path
) -> None:
    server, _ = served
    source = project_folder / "orders" / "db.py"
    source.parent.mkdir()
    source.write_text("def connect():\n    return psycopg.connect(DSN)\n", encoding="utf-8")
    about_file = ok(
        server,
        "add_memory",
        {
            "content": "orders/db.py opens one connection per request; never share it "
            "between threads.",
            "type": "pitfall",
            "files": ["orders/db.py"],
        },
    )["id"]
    for_file = call(server, "context", {"file": "orders/db.py", "budget": 800})
    assert not for_file.is_error, for_file.content
    data = for_file.structured_content
    assert data["project"] == "alpha" and data["budget"] == 800
    assert about_file in [m["id"] for tier in data["tiers"] for m in tier["memories"]]
    assert for_file.content[0].text == data["markdown"]
    assert data["markdown"].startswith("<engram-context") and "never share it" in data["markdown"]

    # an error text that starts with a dash is the error, not an option
    for_error = ok(server, "context", {"error": "--- psycopg.OperationalError: connection refused"})
    assert for_error["activity"] == "debugging"

    missing = call(server, "context", {"file": "orders/nope.py"})
    assert missing.is_error and "no such file" in missing.content[0].text


def test_the_project_comes_from_the_folder_unless_given(
    served: tuple[Any, CommandRunner],
) -> None:
    server, _ = served
    here = ok(server, "add_memory", {"content": "Alpha deploys with blue-green switches."})
    there = ok(
        server,
        "add_memory",
        {"content": "Beta deploys with a rolling restart.", "type": "pitfall", "project": "beta"},
    )
    assert (here["project"], there["project"]) == ("alpha", "beta")

    scoped = ok(server, "search", {"query": "how do we deploy"})
    assert [r["id"] for r in scoped["results"]] == [here["id"]]
    named = ok(server, "search", {"query": "how do we deploy", "project": "beta"})
    assert [r["id"] for r in named["results"]] == [there["id"]]
    everywhere = ok(server, "search", {"query": "how do we deploy", "all_projects": True})
    assert {r["id"] for r in everywhere["results"]} == {here["id"], there["id"]}
    # nothing here matches: the other projects' memories, said as such
    elsewhere = ok(server, "search", {"query": "rolling restart", "types": ["pitfall"]})
    assert [r["id"] for r in elsewhere["results"]] == [there["id"]]
    assert elsewhere["project"] is None and "other projects" in elsewhere["note"]

    saved = ok(server, "save_project_context", {"notes": "Release on Tuesdays.", "todos": ["a"]})
    assert saved["context"]["project"] == "alpha"
    shown = call(server, "get_project_context", {})
    assert shown.structured_content["notes"] == "Release on Tuesdays."
    assert "- a" in shown.content[0].text
    absent = call(server, "get_project_context", {"project": "gamma"})
    assert absent.is_error and "no saved context for project 'gamma'" in absent.content[0].text


def test_lessons_recall_contradictions_and_consolidation_tools(
    served: tuple[Any, CommandRunner],
) -> None:
    server, _ = served
    lesson = ok(
        server,
        "add_lesson",
        {"trigger": "a migration adds a column", "action": "give it a default"},
    )
    assert (lesson["version"], lesson["project"]) == (1, "alpha")
    refined = call(
        server,
        "refine_lesson",
        {
            "memory_id": lesson["memory_id"],
            "action": "give it a default and backfill",
            "reason": "old rows broke the report",
        },
    )
    assert refined.structured_content["version"] == 2
    assert "v2" in refined.content[0].text

    ok(server, "add_memory", {"content": "We shipped release 1.2 yesterday.", "type": "episode"})
    when = call(server, "recall", {"question": "When did we ship release 1.2?"})
    assert when.structured_content["temporal_question"] is True
    assert when.structured_content["used_llm"] is False
    assert when.structured_content["date"] in when.content[0].text

    listed = ok(server, "list_contradictions", {})
    assert listed["contradictions"] == [] and listed["project"] == "alpha"
    wrong = call(server, "resolve_contradiction", {"contradiction_id": 999, "resolution": "a_wins"})
    assert wrong.is_error and "999" in wrong.content[0].text

    status = call(server, "rem_status", {})
    ops = [op["op"] for op in status.structured_content["operations"]]
    assert "duplicates" in ops and all(op in status.content[0].text for op in ops)
    report = ok(server, "rem_report", {})
    assert report["pending"] == [] and report["community_count"] == 0


def test_the_modern_handshake_serves_the_same_tools(served: tuple[Any, CommandRunner]) -> None:
    server, _ = served

    async def body(client: Client) -> Any:
        names = [tool.name for tool in (await client.list_tools()).tools]
        found = await client.call_tool("search", {"query": "nothing yet"})
        return names, found

    names, found = with_client(server, body, mode="auto")
    assert names == [name for name, _, _ in TOOLS]
    assert found.structured_content["results"] == []


def test_with_a_resident_service_the_tools_go_through_it(
    data_dir: Path, project_folder: Path
) -> None:
    state = CliState(str(data_dir), verbose=False)
    service = EngramService(data_dir, state.engram())
    service.start()
    try:
        server, runner = build_server(data_dir, str(project_folder))
        stored = ok(server, "add_memory", {"content": "Cache keys carry the schema version."})
        found = ok(server, "search", {"query": "cache key schema"})
        assert [r["id"] for r in found["results"]] == [stored["id"]]
        assert service.served == 2  # add, then one search (its results carry their text)
        assert runner._kept is False  # nothing opened in the MCP server itself
    finally:
        service.stop()
        state.engram().close()
    # the service gone, the next call opens the services here and keeps them
    assert ok(server, "get_memory", {"memory_id": stored["id"]})["project"] == "alpha"
    assert runner._kept is True and resident(data_dir) is not None
    runner.close()
    assert resident(data_dir) is None


# -- the argv each tool builds, read back by the CLI's own parser ----------------------


class RecordingRunner:
    """Stands in for CommandRunner: keeps the argv and stdin, answers `reply`."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.calls: list[tuple[list[str], bytes]] = []

    def run(self, argv: list[str], stdin: bytes = b"") -> Answer:
        self.calls.append((argv, stdin))
        return Answer(0, json.dumps(self.reply), "")

    def project_here(self) -> str | None:
        return "alpha"


def parsed(argv: list[str]) -> dict[str, Any]:
    """The parameters the real `engram` command receives for `argv`."""
    group = cli.make_context("engram", ["--data-dir", "unused", *argv])
    command: click.Command = cli
    rest = [*getattr(group, "_protected_args", []), *group.args]
    while isinstance(command, click.Group):
        found = command.get_command(group, rest[0])
        assert found is not None, rest
        command, rest = found, rest[1:]
    return command.make_context(command.name or "", rest, parent=group).params


# Any text but NUL, which no command line can carry (a tool refuses it: see below).
TEXT = st.characters(blacklist_characters="\x00")
any_text = st.text(TEXT, max_size=40)
some_text = st.text(TEXT, min_size=1, max_size=40)
names = st.lists(some_text, max_size=3)


@settings(max_examples=150)
@given(query=any_text, project=st.none() | some_text, types=st.lists(st.sampled_from(MemoryType)))
def test_search_passes_any_text_through_unchanged(
    query: str, project: str | None, types: list[MemoryType]
) -> None:
    runner = RecordingRunner({"results": []})
    EngramTools(runner).search(query, project=project, types=[t.value for t in types])  # type: ignore[arg-type]
    argv, stdin = runner.calls[0]
    params = parsed(argv)
    assert params["query"] == _as_text(query)
    named = project is not None and project.strip()  # a blank one names the project here
    assert params["project"] == (_as_text(project) if named else "alpha")
    assert list(params["types"]) == [t.value for t in types]
    assert params["as_json"] and stdin == b""


@settings(max_examples=150)
@given(content=any_text, title=st.none() | any_text, tags=names, files=names)
def test_add_memory_passes_any_text_through_unchanged(
    content: str, title: str | None, tags: list[str], files: list[str]
) -> None:
    runner = RecordingRunner({"id": "m", "title": "t", "may_replace": []})
    EngramTools(runner).add_memory(content, "pitfall", title=title, tags=tags, files=files)
    argv, stdin = runner.calls[0]
    params = parsed(argv)
    assert params["content"] == "-" and stdin.decode("utf-8") == _as_text(content)
    assert (params["title"], list(params["tags"]), list(params["file_refs"])) == (
        None if title is None else _as_text(title),
        [_as_text(t) for t in tags],
        [_as_text(f) for f in files],
    )
    assert params["type_"] == "pitfall" and params["project"] is None  # the CLI derives it


@settings(max_examples=100)
# A file that names an existing folder ("/", ".") is refused by the CLI's own check.
@given(
    file=st.none() | some_text.filter(lambda f: not _is_folder(f)),
    branch=st.none() | some_text,
    error=st.none() | any_text,
)
def test_context_passes_any_text_through_unchanged(
    file: str | None, branch: str | None, error: str | None
) -> None:
    runner = RecordingRunner({"tiers": [], "markdown": ""})
    EngramTools(runner).context(file=file, branch=branch, error=error)
    argv, stdin = runner.calls[0]
    params = parsed(argv)
    assert (params["file_"], params["branch"]) == (
        None if file is None else _as_text(file),
        None if branch is None else _as_text(branch),
    )
    assert params["error"] == ("-" if error is not None else None)
    assert stdin.decode("utf-8") == _as_text(error or "")


@settings(max_examples=100)
@given(memory_id=some_text, replaces=st.lists(some_text, min_size=1, max_size=3), reason=any_text)
def test_ids_and_reasons_pass_through_unchanged(
    memory_id: str, replaces: list[str], reason: str
) -> None:
    runner = RecordingRunner({"id": memory_id, "supersedes": replaces})
    tools = EngramTools(runner)
    tools.supersede_memory(memory_id, replaces)
    runner.reply = {"event": "cited", "memories": [memory_id, *replaces]}
    tools.mark_memories("cited", [memory_id, *replaces])  # type: ignore[arg-type]
    runner.reply = {"memory_id": memory_id, "version": 2, "trigger": "t", "action": "a"}
    tools.refine_lesson(memory_id, reason, action=reason or None)
    edit, mark, refine = (parsed(argv) for argv, _ in runner.calls)
    memory_id, replaces = _as_text(memory_id), [_as_text(r) for r in replaces]
    assert (edit["memory_id"], list(edit["replaces"])) == (memory_id, replaces)
    assert (mark["event"], list(mark["memory_ids"])) == ("cited", [memory_id, *replaces])
    assert (refine["memory_id"], refine["reason"]) == (memory_id, _as_text(reason))


# -- the protocol's streams ------------------------------------------------------------


def test_stray_output_and_reads_cannot_touch_the_protocol(tmp_path: Path) -> None:
    """After claim_stdio, only what is written to the kept stream reaches stdout;
    prints (Python's and a C library's) go to stderr, and reading stdin reads
    nothing while the protocol's input stays whole."""
    script = textwrap.dedent(
        """
        import ctypes, os, sys
        from app.cli.mcp import claim_stdio
        wire_in, wire_out = claim_stdio()
        print("stray print")
        sys.stdout.flush()
        os.write(1, b"stray write\\n")
        ctypes.CDLL(None).puts(b"stray C puts")
        ctypes.CDLL(None).fflush(None)
        assert sys.stdin.read() == ""
        wire_out.write(b"protocol:" + wire_in.readline())
        wire_out.flush()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=b'{"jsonrpc": "2.0"}\n',
        capture_output=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b'protocol:{"jsonrpc": "2.0"}\n'
    for stray in (b"stray print", b"stray write", b"stray C puts"):
        assert stray in done.stderr


def test_docs_show_the_instructions_and_every_tool() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert f"```text\n{INSTRUCTIONS}\n```" in docs
    for name, _, _ in TOOLS:
        assert f"| `{name}` |" in docs, name


def _is_folder(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except ValueError:  # a lone surrogate names no file
        return False


def _as_text(text: str) -> str:
    """What a command reads of `text`: itself, each lone surrogate as U+FFFD."""
    return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)


def test_the_answer_to_an_add_names_what_the_memory_may_repeat() -> None:
    from app.mcp_text import stored_text

    text = stored_text(
        {
            "id": "new",
            "title": "sleeping in async code",
            "may_repeat": [{"id": "old", "title": "blocking sleeps", "score": 0.97}],
        }
    )
    assert "it may repeat old «blocking sleeps» (score 0.97)" in text
    assert "supersede_memory" not in text  # nothing to confirm: the review merges
