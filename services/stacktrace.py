"""Pasted errors: find the line that says what went wrong.

A Python traceback ends with its exception line; most other stacks (JavaScript, Go,
Java, a command's output with `exit status 1`) start with it. Searching by that key line
finds the fixes and pitfalls that quote it, where the frames would only add noise.
"""

from __future__ import annotations

import re

_PYTHON_HEADER = "Traceback (most recent call last)"
_FRAME = re.compile(
    r"^\s*(at\s|File\s\"|goroutine\s\d|exit status \d|\S+\.(go|js|jsx|ts|tsx|py|java|rb|rs)"
    r":\d+|Caused by:|\.\.\. \d+ more)"
)


def key_line(text: str) -> str | None:
    """The key line of a pasted traceback or stack, or None when `text` is not one."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    if any(line.startswith(_PYTHON_HEADER) for line in lines):
        last = lines[-1]
        return None if last.startswith(_PYTHON_HEADER) else last
    if any(_FRAME.match(line) for line in lines[1:]):
        return lines[0]
    return None
