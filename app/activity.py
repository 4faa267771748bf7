"""Activity for the app: turns paths into signals (project, project-relative path, parsed
symbols) and keeps the last activity in the database, so `engram context` run from a
terminal sees what `engram watch` (or the tray) saw. The prediction engine and the
context assembler come from the composition root (`Engram.predictive_engine`,
`Engram.assembler`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from services.activity.git_state import project_name, read_head
from services.activity.prediction import PredictiveEngine
from services.activity.signals import ActivityKind, Signal, SignalKind
from services.activity.watch_rules import UnreadableFile, parse_patterns, read_source
from services.knowledge.profile import ProfileStore
from services.text.manifests import RUNTIME_OF, DeclaredVersion, declared_versions
from services.text.source_symbols import SourceSymbols, is_readable, parse_source
from services.types import parse_enum

if TYPE_CHECKING:
    from app.composition import Engram

STATE_KEY = "activity.last"


def secret_patterns(engram: Engram) -> tuple[str, ...]:
    return parse_patterns(engram.settings.get_str("watch.secret_patterns"))


def watched_paths(engram: Engram) -> list[Path]:
    raw = engram.settings.get_str("watch.paths")
    return [Path(p).expanduser() for p in raw.split(os.pathsep) if p.strip()]


def read_profile(engram: Engram) -> tuple[str | None, bool]:
    """The profile text and whether the user consented to its use (without consent
    the profile is not even read)."""
    consent = engram.settings.get_bool("profile.consent")
    if not consent:
        return None, False
    return ProfileStore(engram.service).text(), True


def project_root(path: Path) -> Path:
    """The repository that holds `path` (its working tree), else its folder."""
    start = path if path.is_dir() else path.parent
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


@dataclass(frozen=True)
class Located:
    root: Path
    project: str
    relative: str


def locate(path: Path, project: str | None = None) -> Located:
    """Project and project-relative path of a file: unless one is given, the project
    is the repository's (`services.activity.git_state.project_name`: its
    `.engram-project` file, its origin remote, its main worktree), so a clone in
    `repo/`, a worktree and a subfolder all find the same memories."""
    absolute = path.expanduser().resolve()
    root = project_root(absolute)
    try:
        relative = absolute.relative_to(root).as_posix()
    except ValueError:
        relative = absolute.name
    return Located(root, project or project_name(root), relative)


def project_here(cwd: Path | None = None) -> str | None:
    """The project of the repository the current folder is in (None outside one)."""
    here = repository_here(cwd)
    return here.project if here is not None else None


def repository_here(cwd: Path | None = None) -> Located | None:
    """The repository the current folder is in: its root and project (None outside one)."""
    folder = (cwd or Path.cwd()).resolve()
    root = project_root(folder)
    if not (root / ".git").exists():
        return None
    return Located(root, project_name(root), folder.relative_to(root).as_posix())


def file_symbols(
    path: Path,
    patterns: tuple[str, ...],
    root: Path | None = None,
    reading: Callable[[Path], object] | None = None,
) -> SourceSymbols | None:
    """Parsed symbols of a source file, with the runtime floors of the manifests that
    govern it (its own, when it is one; else the nearest of each kind in its folder or
    above, up to `root`); None for secrets, binaries and other files without any.
    `reading` is told of each manifest before it is read (a watcher must not take
    Engram's own opens for the user's)."""
    symbols: SourceSymbols | None = None
    if is_readable(path.name):
        try:
            symbols = parse_source(path.name, read_source(path, patterns))
        except UnreadableFile:
            symbols = None
    governing = governing_floors(path, root, patterns, reading) if root is not None else ()
    if not governing:
        return symbols
    own = {d.runtime for d in symbols.declared} if symbols is not None else set()
    extra = tuple(d for d in governing if d.runtime not in own)
    base = symbols if symbols is not None else SourceSymbols(None)
    return replace(base, declared=(*base.declared, *extra))


MAX_MANIFEST_LEVELS = 12


def governing_floors(
    path: Path,
    root: Path,
    patterns: tuple[str, ...],
    reading: Callable[[Path], object] | None = None,
) -> tuple[DeclaredVersion, ...]:
    """The runtime floors of the nearest manifest of each kind above `path` (its own
    folder first), up to the repository `root`: a note about Node 18 for a file of a
    package whose `package.json` declares `>=20` is checked against that file."""
    try:
        own = path.resolve()
        top = root.resolve()
        own.parent.relative_to(top)
    except (OSError, ValueError):
        return ()
    return _floors_upward(own.parent, top, patterns, skip=own, reading=reading)


def project_floors(root: Path, patterns: tuple[str, ...]) -> tuple[DeclaredVersion, ...]:
    """The runtime floors the manifests at the repository `root` declare (what a search
    run inside the repository checks its results against)."""
    try:
        top = root.resolve()
    except OSError:
        return ()
    return _floors_upward(top, top, patterns)


def _floors_upward(
    folder: Path,
    top: Path,
    patterns: tuple[str, ...],
    skip: Path | None = None,
    reading: Callable[[Path], object] | None = None,
) -> tuple[DeclaredVersion, ...]:
    found: dict[str, DeclaredVersion] = {}
    for _ in range(MAX_MANIFEST_LEVELS):
        for name, runtime in RUNTIME_OF.items():
            candidate = folder / name
            if runtime in found or candidate == skip:
                continue
            try:
                if not candidate.is_file():
                    continue
                if reading is not None:
                    reading(candidate)
                text = read_source(candidate, patterns)
            except (OSError, UnreadableFile):  # a folder we may not read: no manifest
                continue
            source = candidate.relative_to(top).as_posix()
            for declared in declared_versions(name, text):
                found.setdefault(declared.runtime, replace(declared, source=source))
        if folder == top or folder.parent == folder:
            break
        folder = folder.parent
    return tuple(found.values())


def file_signal(
    kind: SignalKind,
    path: Path,
    patterns: tuple[str, ...],
    project: str | None = None,
    at: datetime | None = None,
    reading: Callable[[Path], object] | None = None,
) -> Signal:
    """The signal of a file opened or saved, with its symbols (`reading` is told of each
    other file read for them, as `file_symbols` says)."""
    where = locate(path, project)
    return Signal(
        kind,
        at or datetime.now(UTC),
        where.project,
        where.relative,
        symbols=file_symbols(path, patterns, where.root, reading),
    )


def save_state(engram: Engram, engine: PredictiveEngine, root: Path | None = None) -> None:
    """Remember the active project's activity for later `engram context` runs."""
    project = engine.current_project
    state = engine.state(project)
    data: dict[str, Any] = {
        "project": project,
        "root": str(root) if root else None,
        "file": state.current_file,
        "branch": state.branch,
        "errors": [[e.at.isoformat(), e.key_line] for e in state.recent_errors],
        "at": (state.last_signal.at if state.last_signal else datetime.now(UTC)).isoformat(),
    }
    engram.store.meta_set(STATE_KEY, json.dumps(data))


def saved_project(engram: Engram) -> str | None:
    """The project of the last saved activity (a watched file, an assistant's hook)."""
    raw = engram.store.meta_get(STATE_KEY)
    try:
        name = json.loads(raw).get("project") if raw else None
    except (ValueError, AttributeError):
        return None
    return name if isinstance(name, str) and name else None


def restore_state(engram: Engram, engine: PredictiveEngine, project: str | None) -> bool:
    """Rebuild the last saved activity (when it is of `project`, if one is given)."""
    raw = engram.store.meta_get(STATE_KEY)
    if not raw:
        return False
    try:
        data = json.loads(raw)
        at = datetime.fromisoformat(data["at"])
    except (ValueError, KeyError, TypeError):
        return False
    if project is not None and data.get("project") != project:
        return False
    name = data.get("project")
    patterns = secret_patterns(engram)
    for stamp, line in data.get("errors") or []:
        engine.observe(
            Signal(SignalKind.ERROR_SEEN, datetime.fromisoformat(stamp), name, error=line)
        )
    if data.get("branch"):
        engine.observe(Signal(SignalKind.BRANCH_CHECKOUT, at, name, branch=data["branch"]))
    if data.get("file"):
        symbols = None
        if data.get("root"):
            root = Path(data["root"])
            symbols = file_symbols(root / data["file"], patterns, root)
        engine.observe(Signal(SignalKind.FILE_OPENED, at, name, data["file"], symbols=symbols))
    return True


def branch_of(root: Path) -> str | None:
    head = read_head(root)
    return head.branch if head else None


def parse_activity(value: str | None) -> ActivityKind | None:
    if value is None:
        return None
    return parse_enum(ActivityKind, value, "activity")


def credit_citations(engram: Engram, memory_ids: list[str]) -> int:
    """Credit cited or used memories to the signals of the last saved activity, so they
    weigh more for those signals next time. Returns the number of signals credited."""
    engine = engram.predictive_engine()
    if not restore_state(engram, engine, None):
        return 0
    keys = engine.prediction().signal_keys
    engine.learn_from_citations(memory_ids)
    return len(keys)
