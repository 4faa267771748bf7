"""What a hook gives an assistant, as text within its limits: the session's context
block (the assembled context, `<engram-context … budget="…">`) and the smaller blocks of
memories a prompt or a read file needs (`<engram-memories …>`).

Both stay within a token budget and a character cap (Claude Code shows a hook's
additional context whole up to 10,000 characters and only a preview beyond). Their text
is stripped of terminal controls and escape sequences, as the assembled context is; a
memory quoting one of the block tags gets it escaped, so a block always ends where it
ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.activity.prediction import Prediction
from services.context.assembly import MIN_BUDGET, ContextAssembler
from services.context.rendering import Level, render_memory
from services.memory import Memory
from services.text.controls import strip_controls
from services.tokens import TokenCounter, count_tokens

MAX_CONTEXT_CHARS = 10_000
CONTEXT_TAG = "engram-context"
MEMORIES_TAG = "engram-memories"
_TAGS = (CONTEXT_TAG, MEMORIES_TAG)
_LEVELS = (Level.FULL, Level.SUMMARY, Level.COMPRESSED)


@dataclass(frozen=True)
class Block:
    text: str
    memory_ids: list[str]
    tokens: int
    budget: int


def escape_tags(text: str) -> str:
    """`text` with Engram's block tags escaped, so memory text cannot open or close one."""
    for tag in _TAGS:
        text = text.replace(f"</{tag}", f"&lt;/{tag}").replace(f"<{tag}", f"&lt;{tag}")
    return text


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _with_budget(markdown: str, budget: int) -> str:
    """The assembled block with `budget="…"` added to its opening tag, and its body's
    block tags escaped."""
    opening, _, rest = markdown.partition("\n")
    body, _, closing = rest.rpartition("\n")
    return f'{opening[:-1]} budget="{budget}">\n{escape_tags(body)}\n{closing}'


def session_block(
    assembler: ContextAssembler,
    prediction: Prediction,
    budget: int,
    max_chars: int = MAX_CONTEXT_CHARS,
    profile: str | None = None,
    consent: bool = False,
) -> Block | None:
    """The assembled context of `prediction` as one block within `budget` tokens and
    `max_chars` characters (a smaller budget is tried until it fits); None when it
    would hold no memory."""
    tried = budget
    while True:
        assembled = assembler.assemble(prediction, tried, profile, consent)
        ids = [memory_id for tier in (1, 2, 3) for memory_id in assembled.ids(tier)]
        if not ids:
            return None
        text = strip_controls(_with_budget(assembled.markdown, tried))
        if len(text) <= max_chars:
            return Block(text, ids, assembler.counter(text), tried)
        if tried <= MIN_BUDGET:
            return None
        tried = max(MIN_BUDGET, min(tried - 1, int(tried * max_chars / len(text) * 0.95)))


def memories_block(
    memories: Sequence[Memory],
    budget: int,
    intro: str,
    attributes: dict[str, str],
    max_chars: int = MAX_CONTEXT_CHARS,
    counter: TokenCounter = count_tokens,
) -> Block | None:
    """`memories` (best first) in one `<engram-memories>` block within `budget` tokens
    and `max_chars` characters: each at the richest level that still fits, one that
    fits at no level left out; None when none fits."""
    named = " ".join(f'{key}="{_attribute(value)}"' for key, value in attributes.items())
    opening = f"<{MEMORIES_TAG} {named}>" if named else f"<{MEMORIES_TAG}>"
    closing = f"</{MEMORIES_TAG}>"
    lines = [opening, escape_tags(strip_controls(intro))]
    used = counter("\n".join([*lines, closing]))
    chars = len("\n".join([*lines, closing]))
    placed: list[str] = []
    for memory in memories:
        for level in _LEVELS:
            entry = escape_tags(render_memory(memory, level))
            cost = counter(entry) + 1
            if used + cost <= budget and chars + len(entry) + 1 <= max_chars:
                lines.append(entry)
                placed.append(memory.id)
                used += cost
                chars += len(entry) + 1
                break
    if not placed:
        return None
    text = "\n".join([*lines, closing])
    return Block(text, placed, counter(text), budget)
