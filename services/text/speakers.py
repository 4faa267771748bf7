"""Who said a memory, when it is a turn of a conversation written as "Name: what they
said", and which people a question names.

A question about a person ("What did Caroline paint last week?") is mostly answered by
what that person said, not by the other side of the exchange mentioning them: on the
public LoCoMo conversations 96 % of the evidence turns of a question naming one speaker
are that speaker's own (two speakers a conversation, so half would be chance).
"""

from __future__ import annotations

import re

# A speaker's label: a capitalised name (one or two words) and a colon, opening the text.
_LABEL = re.compile(r"\A\s*([A-Z][\w'’-]{1,30}(?: [A-Z][\w'’-]{1,30})?):\s")
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]{1,30}\b")


def speaker_of(content: str) -> str | None:
    """The name a conversation turn opens with ("Caroline: I went…" → "Caroline")."""
    label = _LABEL.match(content)
    return label.group(1) if label else None


def names_in(question: str) -> frozenset[str]:
    """The capitalised words of a question, possessives dropped ("Caroline's" →
    "Caroline"): the names it may be asking about."""
    return frozenset(re.sub(r"['’]s\Z", "", word) for word in _CAPITALISED.findall(question))


def said_by_named(content: str, names: frozenset[str]) -> bool:
    """Whether `content` is a turn spoken by one of `names` (every word of a two-word
    label need not be named: "Caroline" names "Caroline Smith")."""
    speaker = speaker_of(content)
    return speaker is not None and any(part in names for part in speaker.split())
