"""Starting Engram with the desktop session (the `desktop.autostart` setting).

On Linux this is an XDG autostart entry, `~/.config/autostart/engram.desktop`
(`$XDG_CONFIG_HOME` respected), that runs `engram tray`. Other platforms are described
in packaging/README.md and not automated yet.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from services.errors import EnvironmentProblem

ENTRY_NAME = "engram.desktop"


def autostart_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "autostart" / ENTRY_NAME


def tray_command() -> str:
    """The command that starts the tray: the installed `engram` next to this Python."""
    engram = Path(sys.executable).with_name("engram")
    if engram.exists():
        return shlex.quote(str(engram)) + " tray"
    return f"{shlex.quote(sys.executable)} -m ui.launcher tray"


def set_autostart(enabled: bool) -> Path:
    """Create or remove the autostart entry; returns its path."""
    if not sys.platform.startswith("linux"):
        raise EnvironmentProblem(
            "starting with the session is automated on Linux only; see packaging/README.md"
        )
    path = autostart_file()
    if not enabled:
        path.unlink(missing_ok=True)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=Engram\n"
        "Comment=Local memory for coding with AI assistants\n"
        f"Exec={tray_command()}\n"
        "Icon=engram\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n",
        encoding="utf-8",
    )
    return path
