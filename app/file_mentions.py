"""The repository files a memory's text names: `src/billing.py`, or a file name only one
file of the repository has (`billing.py`). A memory added inside a repository gets them
as `file_refs`, so the context for that file finds it (the assembled context looks for
memories by their file_refs, not by words in their text). Only names that exist in the
repository count; no file is opened."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path, PurePosixPath

MAX_REFS = 5
# A path or file name with an extension: `src/billing.py`, `pyproject.toml`, `.eslintrc.json`.
_PATH = re.compile(r"(?<![\w@:/.-])(\.?[\w-]+(?:/[\w.-]+)*\.[A-Za-z][\w]{0,7})(?![\w/-])")
# Names many folders of one repository share say nothing about which file is meant.
_SHARED_NAMES = frozenset(
    {"__init__.py", "index.js", "index.ts", "mod.rs", "lib.rs", "main.rs", "main.go",
     "readme.md", "setup.py", "conftest.py", "package.json", "cargo.toml"}
)  # fmt: skip


def files_named_in(text: str, root: Path) -> list[str]:
    """Repository-relative paths of the files `text` names (at most MAX_REFS): a path
    that exists under `root`, or a bare file name exactly one tracked file has."""
    found: list[str] = []
    tracked: dict[str, list[str]] | None = None  # file name → tracked paths, read once
    for token in dict.fromkeys(m.group(1).rstrip(".") for m in _PATH.finditer(text)):
        if len(found) >= MAX_REFS:
            break
        relative = PurePosixPath(token)
        if relative.is_absolute() or ".." in relative.parts:
            continue
        if "/" in token or token.lower() in _SHARED_NAMES:
            # A path is checked as written; a name many folders share only at the root.
            path: str | None = token if _is_file(root / token) else None
        else:
            if tracked is None:
                tracked = _tracked_by_name(root)
            paths = tracked.get(token, [])
            path = paths[0] if len(paths) == 1 else None
        if path is not None and path not in found:
            found.append(path)
    return found


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def _tracked_by_name(root: Path) -> dict[str, list[str]]:
    """The repository's tracked files by file name (empty outside git or on error)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"],
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    if done.returncode != 0:
        return {}
    by_name: dict[str, list[str]] = {}
    for path in done.stdout.decode("utf-8", "replace").split("\0"):
        if path:
            by_name.setdefault(PurePosixPath(path).name, []).append(path)
    return by_name
