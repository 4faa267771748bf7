"""Coverage-guided fuzzing with atheris (libFuzzer) of the readers of user input: the
import parser, `MEMORY:` lines, relative dates and setting values. Anything but a
clear error (an EngramError: ValidationFailed, UserInputError, …) is a crash, which
libFuzzer saves as `crash-*` for replay.

    pip install atheris                                 # not a dependency of Engram
    python bench/fuzz_atheris.py import -runs=200000   # or: memory-lines, dates, settings
    python bench/fuzz_atheris.py import crash-abc123   # replay a saved input

The hypothesis properties in tests/ (test_import_fuzz, test_text_fuzz,
test_settings_fuzz) run on every test run; this goes deeper when there is time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date

import atheris

with atheris.instrument_imports():
    from app.settings import SCHEMA
    from services.errors import EngramError
    from services.memories.transfer import parse_import
    from services.text.capture import parse_memory_lines
    from services.text.dates import find_times, times_for


def fuzz_import(data: bytes) -> None:
    try:
        memories = parse_import(data, "fuzz.jsonl")
    except EngramError:
        return
    assert memories, "parse_import returned no memories without an error"


def fuzz_memory_lines(data: bytes) -> None:
    text = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(len(data))
    captured, problems = parse_memory_lines(text, "notes.md")
    assert all(memory.content for memory in captured)
    assert all(problem.where.startswith("notes.md:") for problem in problems)


def fuzz_dates(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    base = date.fromordinal(provider.ConsumeIntInRange(1, date.max.toordinal()))
    created_at = provider.ConsumeUnicodeNoSurrogates(32)
    text = provider.ConsumeUnicodeNoSurrogates(len(data))
    for ref in [*find_times(text, base), *times_for(text, created_at)]:
        assert text[ref.start : ref.end] == ref.phrase


def fuzz_settings(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    spec = SCHEMA[provider.ConsumeIntInRange(0, len(SCHEMA) - 1)]
    choice = provider.ConsumeIntInRange(0, 2)
    raw: object = (
        provider.ConsumeUnicodeNoSurrogates(40)
        if choice == 0
        else provider.ConsumeRegularFloat()
        if choice == 1
        else provider.ConsumeInt(8)
    )
    try:
        value = spec.parse(raw)
    except EngramError:
        return
    assert spec.parse(value) == value


TARGETS: dict[str, Callable[[bytes], None]] = {
    "import": fuzz_import,
    "memory-lines": fuzz_memory_lines,
    "dates": fuzz_dates,
    "settings": fuzz_settings,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(TARGETS)}}} [libFuzzer options]")
    target = TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()
