"""`engram`, the command-line interface: everything the tray does, scriptable, with
`--json` on every command. Heavy libraries load only when a command needs them."""

from __future__ import annotations

from app.cli import (  # noqa: F401
    backup,
    capture,
    context,
    contradictions,
    demo,
    facts,
    hook,
    integrations,
    knowledge,
    maintenance,
    mcp,
    memories,
    profile,
    recall,
    rem,
    search,
    serve,
    transfer,
)
from app.cli.common import cli


def main() -> None:
    cli.main(prog_name="engram", standalone_mode=True)


if __name__ == "__main__":
    main()
