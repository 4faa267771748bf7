"""Which files Engram may look at, and how it reads them.

Secret files (`.env*`, keys, credentials) are never opened: the check is on the name,
before any read, and the list is a setting (`watch.secret_patterns`). Version-control
internals, dependency and build folders, virtual environments, binaries and paths the
repository's `.gitignore` ignores are not activity worth predicting from.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from services.text.source_symbols import MAX_SOURCE_BYTES

DEFAULT_SECRET_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "credentials",
    "credentials.*",
    "*credentials*.json",
    "*secret*",
    "*.kdbx",
    ".htpasswd",
    "service-account*.json",
)

IGNORED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        "env",
        ".tox",
        ".nox",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".idea",
        ".vscode",
        "build",
        "dist",
        "target",
        "out",
        ".next",
        ".nuxt",
        ".cache",
        ".gradle",
        "vendor",
        "coverage",
        ".terraform",
        "site-packages",
    }
)

BINARY_SUFFIXES = frozenset(
    (
        ".png .jpg .jpeg .gif .bmp .ico .webp .tif .tiff .pdf .zip .gz .tgz .bz2 .xz .7z .rar "
        ".jar .war .class .so .dylib .dll .exe .o .a .lib .pyc .pyo .whl .egg .bin .dat .db "
        ".sqlite .sqlite3 .mp3 .mp4 .mov .avi .wav .flac .ogg .woff .woff2 .ttf .otf .eot "
        ".onnx .gguf .pt .pth .npy .npz .parquet .lock"
    ).split()
)


def is_secret(path: str | PurePath, patterns: tuple[str, ...] = DEFAULT_SECRET_PATTERNS) -> bool:
    """True when the file's name matches a secret pattern (case-insensitive)."""
    name = PurePath(path).name.lower()
    return any(fnmatch.fnmatchcase(name, pattern.lower()) for pattern in patterns)


def parse_patterns(text: str) -> tuple[str, ...]:
    """Comma- or newline-separated glob patterns from a setting."""
    parts = (part.strip() for chunk in text.splitlines() for part in chunk.split(","))
    return tuple(part for part in parts if part)


@dataclass
class PathRules:
    """Decides which paths under watched folders count as activity."""

    secret_patterns: tuple[str, ...] = DEFAULT_SECRET_PATTERNS
    ignored_directories: frozenset[str] = IGNORED_DIRECTORIES
    excluded_roots: tuple[Path, ...] = ()
    _gitignores: dict[Path, object] = field(default_factory=dict, repr=False)

    def is_excluded_root(self, path: Path) -> bool:
        return any(path == root or root in path.parents for root in self.excluded_roots)

    def in_ignored_directory(self, path: Path, root: Path) -> bool:
        try:
            parts = path.relative_to(root).parts[:-1]
        except ValueError:
            parts = path.parts[:-1]
        return any(part in self.ignored_directories or part.endswith(".egg-info") for part in parts)

    def accepts(self, path: Path, root: Path) -> bool:
        """Whether an event on `path` (a file under the watched `root`) is activity."""
        if self.is_excluded_root(path) or self.in_ignored_directory(path, root):
            return False
        if path.suffix.lower() in BINARY_SUFFIXES or path.name.endswith("~"):
            return False
        if path.name.startswith(".#") or path.suffix in (".swp", ".swx", ".tmp"):
            return False  # editors' lock and swap files
        return not self.git_ignored(path, root)

    def git_ignored(self, path: Path, root: Path) -> bool:
        """Whether the repository's ignore rules ignore `path`: `.git/info/exclude`, the
        top `.gitignore` and those of the folders between it and the file (each
        relative to its own folder). As in git, the deepest `.gitignore` with a pattern
        that matches decides (`!keep.log` in `src/` keeps `src/keep.log` despite a top
        `*.log`)."""
        repo = _repository_root(path.parent)
        if repo is None:
            return False
        try:
            folders = path.parent.relative_to(repo).parts
        except ValueError:
            return False
        directories = [repo]
        for folder in folders:
            directories.append(directories[-1] / folder)
        for directory in reversed(directories):
            spec = self._gitignore_spec(directory, repo)
            if spec is not None:
                relative = path.relative_to(directory).as_posix()
                include = spec.check_file(relative).include  # type: ignore[attr-defined]
                if include is not None:
                    return bool(include)
        return False

    def forget_gitignore(self, directory: Path) -> None:
        """Drop the cached rules of a folder (its `.gitignore` changed)."""
        self._gitignores.pop(directory, None)

    def _gitignore_spec(self, directory: Path, repo: Path) -> object | None:
        if directory not in self._gitignores:
            import pathspec

            lines: list[str] = []
            files = [directory / ".gitignore"]
            if directory == repo:  # first: the `.gitignore` patterns take precedence
                files.insert(0, repo / ".git" / "info" / "exclude")
            for ignore_file in files:
                try:
                    if ignore_file.is_file() and ignore_file.stat().st_size < MAX_SOURCE_BYTES:
                        lines += ignore_file.read_text("utf-8", errors="replace").splitlines()
                except OSError:
                    continue
            self._gitignores[directory] = (
                pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
            )
        return self._gitignores[directory]


def _repository_root(directory: Path) -> Path | None:
    """The working tree holding `directory`, which may lie above the watched folder
    (a watched sub-folder of a repository still follows its `.gitignore`)."""
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


class UnreadableFile(Exception):
    """A file that is not read: secret, binary, too large, or gone."""


def read_source(path: Path, patterns: tuple[str, ...] = DEFAULT_SECRET_PATTERNS) -> str:
    """The text of a source file for symbol parsing. Secret files are refused before
    they are opened; binaries and files over 512 KB are refused; invalid UTF-8 is
    replaced rather than fatal."""
    if is_secret(path, patterns):
        raise UnreadableFile(f"{path}: a secret file (matches watch.secret_patterns); not read")
    if path.suffix.lower() in BINARY_SUFFIXES:
        raise UnreadableFile(f"{path}: a binary file type; not read")
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES + 1)
    except OSError as error:
        raise UnreadableFile(f"{path}: {error.strerror or error}") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise UnreadableFile(f"{path}: larger than {MAX_SOURCE_BYTES // 1024} KB; not parsed")
    if b"\x00" in data[:8192]:
        raise UnreadableFile(f"{path}: binary content; not read")
    return data.decode("utf-8", errors="replace")
