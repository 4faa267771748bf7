"""Split long memory content into searchable chunks.

Fenced code blocks become code chunks that keep their language; prose is split on
paragraphs and packed into chunks; nothing is longer than `max_tokens`. Oversized
paragraphs split on sentences, then words, then characters, so any input (a 10 MB
log, a single enormous line) chunks without loss: joining the chunks' text gives back
every non-whitespace character of the input in order.

A huge memory is chunked only so far: at most `max_chunks` chunks (MAX_CHUNKS, as many
as get a vector), read from at most MAX_CHUNK_CHARS_PER_TOKEN characters per token they
can hold. What lies beyond is still stored whole and found by keywords (the memory's own
full-text row), but has no chunk of its own: neither a chunk's keyword row nor a vector.
Below that bound the property above holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.tokens import TokenCounter, count_tokens

MAX_CHUNK_TOKENS = 500
MAX_CHUNKS = 256
# Characters read per token the chunks can hold: far more than any text needs (a token
# is a few characters; whitespace is free), so the cut only ever falls past the last chunk.
MAX_CHUNK_CHARS_PER_TOKEN = 16

_FENCE = re.compile(
    r"^(?P<indent>[ \t]{0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[^\s`]*)[^\n]*\n"
    r"(?P<body>.*?)"
    r"(?:^[ \t]{0,3}(?P=fence)[ \t]*\r?$|\Z)",
    re.MULTILINE | re.DOTALL,
)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_ATOM = re.compile(r"\S+\s*")


@dataclass(frozen=True)
class Chunk:
    index: int
    kind: str  # "prose" or "code"
    text: str
    token_count: int
    language: str | None = None


def _split_atom(atom: str, max_tokens: int, counter: TokenCounter) -> list[str]:
    """Split one whitespace-free run that alone exceeds the limit, by characters."""
    pieces: list[str] = []
    step = max(1, max_tokens)
    start = 0
    while start < len(atom):
        size = min(len(atom) - start, step * 4)
        while size > 1 and counter(atom[start : start + size]) > max_tokens:
            size //= 2
        pieces.append(atom[start : start + size])
        start += size
    return pieces


def _pack(units: list[str], max_tokens: int, counter: TokenCounter, joiner: str) -> list[str]:
    """Greedily pack units (already each within the limit) into pieces within the limit."""
    pieces: list[str] = []
    current: list[str] = []
    current_tokens = 0
    for unit in units:
        tokens = counter(unit)
        if current and not joiner and not current[-1][-1:].isspace():
            # The unit continues the previous one's word (pieces of a split word): the
            # joined word may count more tokens than its parts, so count it whole.
            tokens = counter("".join(current) + unit) - current_tokens
        if current and current_tokens + tokens > max_tokens:
            pieces.append(joiner.join(current))
            current, current_tokens = [], 0
            tokens = counter(unit)
        current.append(unit)
        current_tokens += tokens
    if current:
        pieces.append(joiner.join(current))
    return [piece for piece in pieces if piece.strip()]


def _split_words(text: str, max_tokens: int, counter: TokenCounter) -> list[str]:
    units: list[str] = []
    for match in _ATOM.finditer(text):
        atom = match.group()
        if counter(atom) > max_tokens:
            units.extend(_split_atom(atom.rstrip(), max_tokens, counter))
        else:
            units.append(atom)
    return [piece.strip() for piece in _pack(units, max_tokens, counter, "")]


def _split_prose(text: str, max_tokens: int, counter: TokenCounter) -> list[str]:
    units: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if counter(paragraph) <= max_tokens:
            units.append(paragraph)
            continue
        for sentence in _SENTENCE_END.split(paragraph):
            if counter(sentence) <= max_tokens:
                units.append(sentence)
            else:
                units.extend(_split_words(sentence, max_tokens, counter))
    return _pack(units, max_tokens, counter, "\n\n")


def _split_code(body: str, max_tokens: int, counter: TokenCounter) -> list[str]:
    units: list[str] = []
    for line in body.splitlines():
        if counter(line) <= max_tokens:
            units.append(line)
        else:
            units.extend(_split_words(line, max_tokens, counter))
    return _pack(units, max_tokens, counter, "\n")


def chunk_content(
    content: str,
    max_tokens: int = MAX_CHUNK_TOKENS,
    counter: TokenCounter = count_tokens,
    max_chunks: int = MAX_CHUNKS,
) -> list[Chunk]:
    """Split `content` into ordered chunks of at most `max_tokens` tokens each, the
    first `max_chunks` of them (see the module docstring for what is left out)."""
    content = content[: max_chunks * max(1, max_tokens) * MAX_CHUNK_CHARS_PER_TOKEN]
    raw: list[tuple[str, str, str | None]] = []
    position = 0
    for match in _FENCE.finditer(content):
        if len(raw) >= max_chunks:
            break
        raw.extend(
            ("prose", p, None)
            for p in _split_prose(content[position : match.start()], max_tokens, counter)
        )
        language = match.group("lang") or None
        raw.extend(
            ("code", p, language) for p in _split_code(match.group("body"), max_tokens, counter)
        )
        position = match.end()
    if len(raw) < max_chunks:
        raw.extend(
            ("prose", p, None) for p in _split_prose(content[position:], max_tokens, counter)
        )
    return [
        Chunk(index=i, kind=kind, text=text, token_count=counter(text), language=language)
        for i, (kind, text, language) in enumerate(raw[:max_chunks])
    ]
