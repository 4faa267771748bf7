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


_ERROR_LINE = re.compile(
    r"^(?:[\w.]*(?:Error|Exception|Warning)\b[:(]|error(?:\[\w+\])?:|fatal:|panic:|"
    r"Uncaught |FAILED |E\s{2,}\w*Error)",
)
MAX_CLIPBOARD_ERROR_CHARS = 64_000


def error_in_text(text: str) -> str | None:
    """The key line when `text` (copied to the clipboard, say) is an error — a stack, or
    a single line such as `TypeError: …`, `error: …`, `panic: …` — else None. Longer
    texts and ordinary prose are not errors."""
    if not text or len(text) > MAX_CLIPBOARD_ERROR_CHARS:
        return None
    found = key_line(text)
    if found:
        return found
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) == 1 and _ERROR_LINE.match(lines[0]):
        return lines[0]
    return None


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def share_of_error_words(error_line: str, text: str) -> float:
    """How much of `error_line`'s words (names and words of three letters or more) `text`
    has: a fix quoting that error, or paraphrasing it closely, has most of them; a fix
    for another error of the same module shares a few common ones ("error", the
    module's name)."""
    wanted = {w.lower() for w in _WORD.findall(error_line)}
    if not wanted:
        return 0.0
    have = {w.lower() for w in _WORD.findall(text)}
    return len(wanted & have) / len(wanted)


# "panics: \"Unknown argument…\"", "fails with 'No matches…'": an error quoted in prose.
_QUOTED_ERROR = re.compile(
    r"\b(?:panic|error|fail|raise|throw|warn|complain)\w*\W{0,3}[\"'“‘]", re.IGNORECASE
)


def quotes_an_error(text: str) -> bool:
    """Whether a note quotes an error of its own: a fenced block (a pasted traceback or
    output), a line that reads as an error (`TypeError: …`, `error: …`, `panic: …`), or
    an error message in quotes after "panics", "fails with", "raises"."""
    if "```" in text or _QUOTED_ERROR.search(text):
        return True
    return any(_ERROR_LINE.match(line.strip()) for line in text.splitlines())
