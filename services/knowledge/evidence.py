"""How much a note shows what it says, rather than recalls or relays it.

Of two notes that disagree with nothing saying one replaced the other, the one that
shows more (quoted code, a pasted block) is likelier right than one that says "afaik"
or "if I remember".
"""

from __future__ import annotations

import re

from services.text.words import UNSURE_PHRASES, code_spans

RECALLED = re.compile(UNSURE_PHRASES + r"|\bif i recall\b", re.IGNORECASE)


def evidence_of(content: str) -> int:
    """Code a note quotes (up to three spans, a fenced block counting as one more), less
    two for wording that recalls or relays it ("afaik", "remember", "reviewer note")."""
    shown = min(len(code_spans(content, 2, 200)), 3) + (1 if "```" in content else 0)
    return shown - 2 * min(len(RECALLED.findall(content)), 1)
