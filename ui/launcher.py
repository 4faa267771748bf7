"""The `engram` command: the CLI of app.cli plus `engram tray`, the desktop app.

It lives in ui/ because it is the outermost layer: ui imports app, never the reverse,
and the CLI commands never load Qt unless the tray is asked for."""

from __future__ import annotations

import sys

import app.cli  # noqa: F401  (registers every command on the group)
from app.cli.common import CliState, cli, handle_errors, pass_state


@cli.command()
@pass_state
@handle_errors
def tray(state: CliState) -> None:
    """Start the desktop app: tray icon, quick search, context on the clipboard.

    A second start for the same data folder shows the running app's popup."""
    from ui.main import run_tray

    sys.exit(run_tray(state.data_dir))


def main() -> None:
    cli.main(prog_name="engram", standalone_mode=True)


if __name__ == "__main__":
    main()
