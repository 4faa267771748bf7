"""Escape sequences in memory text never reach the terminal raw: search, recall, the
context block, stats and JSON output show them escaped (or, in the block, not at all),
and brackets in a title are not rich markup."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.conftest import EngramCli

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
TITLE = f"Cache builds{OSC52} [link=https://evil.example]here[/link] \x1b[2J"
CONTENT = (
    "Use the shared cache for CI builds since yesterday.\x9b31m\n"
    "admin\u202e // check\u2066 and ring the bell\x07."
)
RAW = ("\x1b", "\x9b", "\u202e", "\u2066", "\x07")


def _assert_clean(text: str) -> None:
    for character in RAW:
        assert character not in text, (repr(character), text)


def test_hostile_memory_text_is_shown_escaped(engram_cli: EngramCli, tmp_path: Path) -> None:
    workflow = tmp_path / "ci.yml"
    workflow.write_text("jobs: {}\n", encoding="utf-8")
    memory_id = engram_cli.add(
        CONTENT,
        "--title",
        TITLE,
        "-p",
        "shop",
        "--no-check",
        "-t",
        "pitfall",
        "--file-ref",
        "ci.yml",
    )

    search = engram_cli.ok("search", "-p", "shop", "shared cache for CI builds").stdout
    _assert_clean(search)
    assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in search
    assert "[link=https://evil.example]here[/link]" in search  # text, not a link

    block = engram_cli.ok("context", "-p", "shop", "--budget", "2000", "--file", workflow).stdout
    _assert_clean(block)
    assert memory_id in block and "ZWNobyBwd25lZA" not in block

    recall = engram_cli.ok("recall", "--no-llm", "-p", "shop", "when did we share the cache?")
    _assert_clean(recall.stdout)

    raw_json = engram_cli.ok("search", "--json", "-p", "shop", "shared cache").stdout
    _assert_clean(raw_json)
    found = json.loads(raw_json)["results"][0]
    assert found["title"] == TITLE  # JSON keeps the text exactly, only escaped

    _assert_clean(engram_cli.ok("stats").stdout)
