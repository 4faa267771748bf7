"""Control characters in memory text, made harmless where the text is shown.

A memory is whatever someone pasted: it may hold terminal escape sequences (colours,
cursor moves, an OSC 52 clipboard write, an OSC 8 link) or bidirectional overrides
that make code read differently from how it runs. A terminal shows them escaped
(`escape_controls`: `\\x1b`, `\\u202e`, visible and reversible to the eye); the
assembled context for an assistant drops them (`strip_controls`), whole sequences
included, so an OSC 52 payload does not survive as text either. Newlines and tabs
stay; a Windows line ending becomes a newline.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls; and the bidirectional embeddings,
# overrides and isolates (the "Trojan Source" characters; plain LRM/RLM marks stay).
_UNSAFE_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[{_UNSAFE_CLASS}]")
# Whole escape sequences, each pattern linear: CSI (ESC [ or the C1 CSI), OSC (ESC ]
# or C1 OSC, up to BEL or ST), DCS/SOS/PM/APC strings up to ST, other two-byte escapes.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)


def _visible(character: str) -> str:
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """`text` with every unsafe character written as a visible escape."""
    text = text.replace("\r\n", "\n")
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(lambda match: _visible(match.group()), text)


def strip_controls(text: str) -> str:
    """`text` without escape sequences (payload included) and unsafe characters."""
    text = text.replace("\r\n", "\n")
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub("", _SEQUENCE.sub("", text))


def has_controls(text: str) -> bool:
    return _UNSAFE.search(text) is not None
