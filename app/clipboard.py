"""Copying text to the system clipboard from the command line.

The tray uses Qt's clipboard; the CLI has no event loop, so it hands the text to the
platform's clipboard tool (wl-copy, xclip, xsel, pbcopy or clip.exe).
"""

from __future__ import annotations

import shutil
import subprocess

from services.errors import EnvironmentProblem

_TOOLS: tuple[tuple[str, list[str]], ...] = (
    ("wl-copy", []),
    ("xclip", ["-selection", "clipboard"]),
    ("xsel", ["--clipboard", "--input"]),
    ("pbcopy", []),
    ("clip.exe", []),
)


def copy_text(text: str) -> str:
    """Copy `text`; returns the tool used, or raises EnvironmentProblem saying what to
    install."""
    for tool, arguments in _TOOLS:
        executable = shutil.which(tool)
        if executable is None:
            continue
        try:
            subprocess.run(
                [executable, *arguments], input=text.encode("utf-8"), check=True, timeout=10
            )
        except (OSError, subprocess.SubprocessError):
            continue
        return tool
    raise EnvironmentProblem(
        "no clipboard tool found (install wl-clipboard, xclip or xsel); "
        "print the context without --copy and copy it yourself"
    )
