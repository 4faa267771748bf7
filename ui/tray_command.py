"""`engram tray`: the desktop app's command on the CLI's group (Qt loads only when it
runs)."""

from __future__ import annotations

import sys

from app.cli.common import CliState, cli, handle_errors, pass_state


@cli.command()
@pass_state
@handle_errors
def tray(state: CliState) -> None:
    """Start the desktop app: tray icon, quick search, context on the clipboard.

    A second start for the same data folder shows the running app's popup."""
    from ui.main import run_tray

    sys.exit(run_tray(state.data_dir))
