"""Capture `MEMORY:type:content` lines from any text (an assistant's answer, a commit
message, notes). Lines with an unknown type or no content are reported by line number;
the others are still captured."""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.errors import Problem
from services.memory import title_from_content
from services.types import MemoryType

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"^[\s#/*>;\-]*MEMORY:(?P<type>[^:\n]*):(?P<content>.*)$")


@dataclass(frozen=True)
class Captured:
    line: int
    type: MemoryType
    title: str
    content: str


def parse_memory_lines(text: str, where: str = "<stdin>") -> tuple[list[Captured], list[Problem]]:
    captured: list[Captured] = []
    problems: list[Problem] = []
    # Lines as editors number them: str.splitlines would also break at form feeds,
    # U+2028 and the like, shifting every later line number and cutting content.
    for number, line in enumerate(_LINE_BREAK.split(text), start=1):
        match = _LINE.match(line)
        if match is None:
            continue
        raw_type = match.group("type").strip().lower()
        content = match.group("content").strip()
        position = f"{where}:{number}"
        try:
            memory_type = MemoryType(raw_type)
        except ValueError:
            choices = ", ".join(t.value for t in MemoryType)
            problems.append(
                Problem(position, f"unknown type {raw_type!r} (choose from: {choices})")
            )
            continue
        if not content:
            problems.append(Problem(position, "no content after the type"))
            continue
        captured.append(Captured(number, memory_type, title_from_content(content), content))
    return captured, problems
