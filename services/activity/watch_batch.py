"""Turning a burst of file-system events into the signals worth predicting from.

Editors write a file in several steps, "save all" touches many files at once, and a
checkout or an indexer can touch hundreds: the watcher waits for a quiet moment
(debounce), then keeps the latest branch change per repository and the file the user
is on (the latest event; a save beats an open of the same file). More distinct files
than the storm threshold is a storm: it is reported, and the file prediction stays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class RawKind(StrEnum):
    OPENED = "opened"
    SAVED = "saved"
    CREATED = "created"
    HEAD = "head"  # a repository's HEAD file changed


@dataclass(frozen=True)
class RawEvent:
    kind: RawKind
    path: Path  # the file, or for HEAD the repository's working tree
    root: Path  # the watched folder it came from
    at: float  # time.monotonic()


@dataclass
class Burst:
    heads: list[RawEvent] = field(default_factory=list)  # latest per repository, in order
    file: RawEvent | None = None
    storm_files: int = 0  # distinct files when the burst was a storm, else 0


def summarize(events: list[RawEvent], storm_threshold: int) -> Burst:
    burst = Burst()
    latest_head: dict[Path, RawEvent] = {}
    files: dict[Path, RawEvent] = {}
    for event in events:
        if event.kind is RawKind.HEAD:
            latest_head.pop(event.path, None)
            latest_head[event.path] = event
            continue
        previous = files.pop(event.path, None)
        if previous is not None and previous.kind is RawKind.SAVED and event.kind is RawKind.OPENED:
            event = RawEvent(RawKind.SAVED, event.path, event.root, event.at)
        files[event.path] = event
    burst.heads = list(latest_head.values())
    if len(files) > storm_threshold:
        burst.storm_files = len(files)
    elif files:
        burst.file = list(files.values())[-1]
    return burst
