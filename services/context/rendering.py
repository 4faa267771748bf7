"""One memory as a line of the assembled context, at one of four levels: in full, as a
summary, compressed (`key: value`) or as its index line. Until the consolidation cycle
writes a memory's summary and compressed form, they are derived here from its text;
no rendering repeats the title, and a workflow is shortened as a whole."""

from __future__ import annotations

import re
from enum import IntEnum

from services.memory import Memory
from services.text import words
from services.text.controls import strip_controls


class Level(IntEnum):
    FULL = 0
    SUMMARY = 1
    COMPRESSED = 2
    INDEX = 3

    @property
    def label(self) -> str:
        return self.name.lower()


SAID_CHARS = 100  # what a compressed entry without code names keeps after its title


def _plain(text: str) -> str:
    return " ".join(words.without_fences(text).split())


def _after_title(memory: Memory) -> str:
    """The content without a first sentence that only repeats the title (a title
    derived from the content is its first sentence): no entry says a thing twice."""
    content = memory.content.strip()
    title_words = memory.title.rstrip(".:!?… ").split()
    if not title_words:
        return content
    repeated = re.match(r"\s*" + r"\s+".join(map(re.escape, title_words)), content, re.I)
    if repeated is None:
        return content
    rest = content[repeated.end() :]
    if rest and not re.match(r"[.:!?…]*(?:\s|$)", rest):  # only the start of a sentence
        return content
    if rest and rest[0] in " \t" and not re.match(r"\s*\n", rest):
        return content  # the sentence goes on ("… yesterday (2026-06-09).")
    return rest.lstrip(".:!?… \n\t")


def derived_summary(memory: Memory, max_chars: int = 240) -> str:
    """The stored summary, else the first sentences of the content (code left out)."""
    if memory.summary:
        return memory.summary
    return _first_sentences(_plain(memory.content) or memory.title, max_chars)


_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*•]|step \d+:?)\s+(.+)$", re.I | re.M)
STEP_CHARS = 60  # each step of a shortened workflow keeps its start, none is dropped


def _steps_line(content: str) -> str:
    """A workflow or checklist shortened as a whole: every step, each cut to its start
    ("tag the release → build → publish"), never the first steps and a cut."""
    steps = [m.group(1).strip() for m in _STEP.finditer(words.without_fences(content))]
    if len(steps) < 2:
        return ""
    short = [
        s if len(s) <= STEP_CHARS else s[: STEP_CHARS - 1].rsplit(" ", 1)[0] + "…" for s in steps
    ]
    return " → ".join(short)


def _first_sentences(text: str, max_chars: int) -> str:
    summary = ""
    for sentence in words.sentences(text):
        if summary and len(summary) + len(sentence) + 1 > max_chars:
            break
        summary = f"{summary} {sentence}".strip()
        if len(summary) >= max_chars // 2:
            break
    if len(summary) > max_chars:
        summary = summary[: max_chars - 1].rsplit(" ", 1)[0] + "…"
    return summary


def derived_compressed(memory: Memory) -> str:
    """The stored compressed form, else `key: value` facts: the title, the code names it
    mentions and the files it is about; a note naming no code keeps a short first
    sentence the title does not already give ("prod log level: Production log level is
    WARNING.": a title names a topic, not what holds about it)."""
    if memory.compressed:
        return memory.compressed
    names = list(dict.fromkeys(words.code_spans(memory.content, 2, 80)))[:4]
    if not names and _clipped_start(memory):  # the title is the note's start, cut short
        parts = [_first_sentences(_plain(memory.content), len(memory.title) + SAID_CHARS)]
    else:
        said = "" if names else _first_sentences(_plain(_after_title(memory)), SAID_CHARS)
        parts = [_title_then(memory.title, said)]
    if names:
        parts.append("names: " + ", ".join(names))
    if memory.file_refs:
        parts.append("files: " + ", ".join(memory.file_refs[:3]))
    return "; ".join(parts)


def _clipped_start(memory: Memory) -> bool:
    """The title is the start of the content cut with "…" (a title made from a long
    first sentence): shown before that sentence it would say it twice."""
    title = memory.title.rstrip()
    start = " ".join(title.removesuffix("…").split())
    return (
        title.endswith("…") and bool(start) and " ".join(memory.content.split()).startswith(start)
    )


def _title_then(title: str, said: str) -> str:
    """The title, then what the note goes on to say: after a title that names a topic
    ("prod log level") as `key: value`; after one that is a sentence of its own ("Prod
    log level: WARNING.") with its own end kept, never turned into a colon."""
    if not said:
        return title.rstrip(".")
    if title.rstrip().endswith((".", "!", "?", "…")):
        return f"{title.rstrip()} {said}"
    return f"{title}: {said}"


def derived_index(memory: Memory) -> str:
    if memory.index_line:
        return memory.index_line
    title = memory.title
    return title if len(title) <= 80 else title[:79].rsplit(" ", 1)[0] + "…"


def render_memory(memory: Memory, level: Level) -> str:
    """One memory as a Markdown list item at `level`."""
    label = f"{memory.type.value} · {memory.id}"
    if level is Level.FULL:
        body = _after_title(memory).replace("\n", "\n  ")
        line = f"- **{memory.title}** ({label})" + (f"\n  {body}" if body else "")
    elif level is Level.SUMMARY:
        summary = (
            memory.summary
            or _steps_line(memory.content)
            or _first_sentences(_plain(_after_title(memory)), 240)
        )
        line = f"- **{memory.title}** ({label})" + (f": {summary}" if summary else "")
    elif level is Level.COMPRESSED:
        line = f"- {label}: {derived_compressed(memory)}"
    else:
        line = f"- {memory.id}: {derived_index(memory)}"
    return strip_controls(line)
