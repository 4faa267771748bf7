"""The checked-out branch of a repository, read from its `HEAD` file (no git process).

Handles ordinary repositories (`.git/` folder), worktrees and submodules (a `.git` file
that says `gitdir: …`), and detached HEADs (a commit id instead of a ref).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_REF_PREFIX = "ref: refs/heads/"


@dataclass(frozen=True)
class HeadState:
    repo: Path
    head_file: Path
    branch: str | None  # None when detached
    commit: str | None  # the commit id of a detached HEAD

    @property
    def label(self) -> str:
        return self.branch if self.branch else f"(detached at {(self.commit or '?')[:8]})"


def git_dir(repo: Path) -> Path | None:
    """The git directory of a working tree: `.git/`, or where a `.git` file points."""
    dot_git = repo / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():
        try:
            first = dot_git.read_text("utf-8", errors="replace").strip().splitlines()[0]
        except (OSError, IndexError):
            return None
        if first.startswith("gitdir:"):
            target = Path(first.removeprefix("gitdir:").strip())
            return target if target.is_absolute() else (repo / target).resolve()
    return None


def read_head(repo: Path) -> HeadState | None:
    """The HEAD of the working tree at `repo`, or None when it is not a repository."""
    directory = git_dir(repo)
    if directory is None:
        return None
    head_file = directory / "HEAD"
    try:
        text = head_file.read_text("utf-8", errors="replace").strip()
    except OSError:
        return None
    if text.startswith(_REF_PREFIX):
        return HeadState(repo, head_file, text.removeprefix(_REF_PREFIX), None)
    if text.startswith("ref: "):
        return HeadState(repo, head_file, text.removeprefix("ref: "), None)
    return HeadState(repo, head_file, None, text or None)


def find_repositories(root: Path, max_depth: int = 3) -> list[Path]:
    """Working trees at or below `root` (a watched folder may hold several projects),
    not descending into dependency folders."""
    from services.activity.watch_rules import IGNORED_DIRECTORIES

    found: list[Path] = []

    def visit(directory: Path, depth: int) -> None:
        if (directory / ".git").exists():
            found.append(directory)
        if depth >= max_depth:
            return
        try:
            children = sorted(p for p in directory.iterdir() if p.is_dir())
        except OSError:
            return
        for child in children:
            if child.name not in IGNORED_DIRECTORIES and not child.name.startswith("."):
                visit(child, depth + 1)

    visit(root, 0)
    return found


def branch_words(branch: str) -> list[str]:
    """The words of a branch name without its kind prefix: `feature/board-dnd` → board, dnd."""
    slug = branch_slug(branch)
    words = [w for part in slug.replace("_", "-").split("-") for w in [part.strip()] if w]
    return [w for w in words if len(w) > 1 and not w.isdigit()]


def branch_slug(branch: str) -> str:
    """The last segment of a branch name: `fix/tz-bug` → `tz-bug`."""
    return branch.rstrip("/").rsplit("/", 1)[-1]


PROJECT_FILE = ".engram-project"  # one line in a repository's root: the project's name
_CONFIG_LINE = re.compile(r"^\s*\[([^\]\n]+)\]|^\s*url\s*=\s*(\S+)", re.M)
_REMOTE_SECTION = re.compile(r'remote\s+"([^"]+)"')


def project_name(repo: Path) -> str:
    """The project a working tree belongs to, the same for every clone, worktree and
    subfolder of it: the name in its `.engram-project` file, else the repository name
    of its `origin` remote (`git@github.com:pallets/click.git` → `click`), else the
    folder of its main worktree, else its own folder's name."""
    override = repo / PROJECT_FILE
    try:
        named = override.read_text("utf-8", errors="replace").strip().splitlines()
    except OSError:
        named = []
    if named and named[0].strip():
        return named[0].strip()
    common = _common_dir(repo)
    if common is not None:
        remote = _origin_name(common / "config")
        if remote:
            return remote
        if common.name == ".git":
            return common.parent.name
    return repo.name


def _common_dir(repo: Path) -> Path | None:
    """The repository's shared git directory (a worktree's `.git` file points into
    `<main>/.git/worktrees/<name>`, whose `commondir` leads back)."""
    directory = git_dir(repo)
    if directory is None:
        return None
    try:
        pointer = (directory / "commondir").read_text("utf-8", errors="replace").strip()
    except OSError:
        return directory
    common = Path(pointer)
    return common if common.is_absolute() else (directory / common).resolve()


def _origin_name(config: Path) -> str | None:
    try:
        text = config.read_text("utf-8", errors="replace")[:200_000]
    except OSError:
        return None
    remote: str | None = None
    urls: dict[str, str] = {}
    for match in _CONFIG_LINE.finditer(text):
        if match.group(1) is not None:
            section = _REMOTE_SECTION.fullmatch(match.group(1).strip())
            remote = section.group(1) if section else None
        elif remote is not None:
            urls.setdefault(remote, match.group(2))
    url = urls.get("origin") or next(iter(urls.values()), None)
    if not url:
        return None
    name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    name = name.removesuffix(".git")
    return name or None
