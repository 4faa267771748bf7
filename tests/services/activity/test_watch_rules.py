"""Which files Engram may look at, and how it reads them (secrets never opened)."""

from __future__ import annotations

import builtins
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from services.activity.watch_rules import (
    DEFAULT_SECRET_PATTERNS,
    PathRules,
    UnreadableFile,
    is_secret,
    parse_patterns,
    read_source,
)
from services.text.source_symbols import MAX_SOURCE_BYTES

# --- secrets --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        ".env.local",
        ".env.production",
        "prod.env",
        ".envrc",
        "id_rsa",
        "id_rsa.pub",
        "id_ed25519.pub",
        "server.pem",
        "x.key",
        "keystore.p12",
        "credentials",
        "credentials.json",
        "gcp-credentials.json",
        "service-account-foo.json",
        "client_secret.json",
        ".netrc",
        ".npmrc",
        ".pypirc",
        "passwords.kdbx",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret(name)
    assert is_secret(Path("/home/dev/project/config") / name)


@pytest.mark.parametrize(
    "name", [".ENV", ".Env.Local", "PROD.ENV", "ID_RSA", "Server.PEM", "Credentials.JSON"]
)
def test_secret_names_are_matched_ignoring_case(name: str) -> None:
    assert is_secret(name)


@pytest.mark.parametrize(
    "name",
    [
        "main.py",
        "environment.ts",
        "env.py",
        "README.md",
        "keyboard.ts",
        "monkey.py",
        "service.json",
        "package.json",
        "settings.toml",
    ],
)
def test_ordinary_names_are_not_secret(name: str) -> None:
    assert not is_secret(name)


def test_only_the_file_name_decides() -> None:
    assert not is_secret(".env/tools/main.py")
    assert not is_secret("/srv/id_rsa_backup_dir/notes.md")


def test_secret_patterns_are_a_setting() -> None:
    patterns = ("*.conf", "vault-*")
    assert is_secret("nginx.CONF", patterns)
    assert is_secret("vault-token.txt", patterns)
    assert not is_secret(".env", patterns)  # the defaults are replaced, not extended


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("*.pem, *.key", ("*.pem", "*.key")),
        ("*.pem\n*.key\n", ("*.pem", "*.key")),
        (" .env ,, \n\n  id_rsa*  ,\n", (".env", "id_rsa*")),
        ("", ()),
        (" , \n ", ()),
    ],
)
def test_parse_patterns(text: str, expected: tuple[str, ...]) -> None:
    assert parse_patterns(text) == expected


def test_parsed_default_patterns_round_trip() -> None:
    assert parse_patterns(", ".join(DEFAULT_SECRET_PATTERNS)) == DEFAULT_SECRET_PATTERNS


# --- which paths are activity ------------------------------------------------------------


@pytest.mark.parametrize(
    "relative",
    [
        "node_modules/react/index.js",
        "web/node_modules/react/index.js",
        ".venv/lib/python3.11/site-packages/x.py",
        "build/lib/app.py",
        "src/__pycache__/app.cpython-311.py",
        ".git/config",
        "engram.egg-info/PKG-INFO",
        "vendor/github.com/pkg/errors/errors.go",
        "dist/bundle.js",
    ],
)
def test_dependency_build_and_vcs_folders_are_not_activity(tmp_path: Path, relative: str) -> None:
    assert not PathRules().accepts(tmp_path / relative, tmp_path)


@pytest.mark.parametrize(
    "relative",
    ["src/app.py", "web/src/Board.tsx", "cmd/main.go", "scripts/build", "docs/env.md"],
)
def test_source_files_are_activity(tmp_path: Path, relative: str) -> None:
    assert PathRules().accepts(tmp_path / relative, tmp_path)


def test_only_folders_below_the_watched_root_are_checked(tmp_path: Path) -> None:
    root = tmp_path / "build" / "project"  # the watched folder itself sits in `build/`
    assert PathRules().accepts(root / "main.py", root)
    assert not PathRules().accepts(root / "build" / "main.py", root)


def test_ignored_directories_are_a_setting(tmp_path: Path) -> None:
    rules = PathRules(ignored_directories=frozenset({"generated"}))
    assert not rules.accepts(tmp_path / "generated" / "api.ts", tmp_path)
    assert rules.accepts(tmp_path / "node_modules" / "x" / "index.js", tmp_path)


@pytest.mark.parametrize(
    "name", ["logo.png", "LOGO.PNG", "photo.jpeg", "app.pyc", "model.onnx", "poetry.lock"]
)
def test_binary_files_are_not_activity(tmp_path: Path, name: str) -> None:
    assert not PathRules().accepts(tmp_path / "src" / name, tmp_path)


@pytest.mark.parametrize("name", ["main.py~", ".#main.py", ".main.py.swp", ".main.py.swx", "x.tmp"])
def test_editor_swap_and_lock_files_are_not_activity(tmp_path: Path, name: str) -> None:
    assert not PathRules().accepts(tmp_path / "src" / name, tmp_path)


def test_excluded_roots(tmp_path: Path) -> None:
    excluded = tmp_path / "generated"
    rules = PathRules(excluded_roots=(excluded,))
    assert not rules.accepts(excluded / "api.ts", tmp_path)
    assert not rules.accepts(excluded / "deep" / "er" / "api.ts", tmp_path)
    assert not rules.accepts(excluded, tmp_path)
    assert rules.accepts(tmp_path / "generated2" / "api.ts", tmp_path)  # not a string prefix
    assert rules.accepts(tmp_path / "src" / "api.ts", tmp_path)


def make_repository(path: Path, gitignore: str | None) -> Path:
    (path / ".git" / "info").mkdir(parents=True)
    if gitignore is not None:
        (path / ".gitignore").write_text(gitignore)
    return path


def test_gitignored_files_are_not_activity(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "ledgerly", "*.log\nsecret_dir/\n!keep.log\n/top_only.txt\n")
    rules = PathRules()
    assert not rules.accepts(repo / "debug.log", tmp_path)
    assert not rules.accepts(repo / "src" / "deep" / "trace.log", tmp_path)
    assert not rules.accepts(repo / "secret_dir" / "notes.py", tmp_path)
    assert not rules.accepts(repo / "top_only.txt", tmp_path)
    assert rules.accepts(repo / "keep.log", tmp_path)  # negated
    assert rules.accepts(repo / "src" / "top_only.txt", tmp_path)  # anchored to the root
    assert rules.accepts(repo / "src" / "app.py", tmp_path)
    assert rules.git_ignored(repo / "debug.log", tmp_path)
    assert not rules.git_ignored(repo / "keep.log", tmp_path)


def test_the_watched_root_may_be_the_repository(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "ledgerly", "*.log\n")
    assert not PathRules().accepts(repo / "src" / "trace.log", repo)
    assert PathRules().accepts(repo / "src" / "trace.py", repo)


def test_git_info_exclude_counts_too(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "ledgerly", None)
    (repo / ".git" / "info" / "exclude").write_text("*.scratch.py\n")
    assert not PathRules().accepts(repo / "src" / "try.scratch.py", tmp_path)
    assert PathRules().accepts(repo / "src" / "try.py", tmp_path)


def test_the_nearest_repository_decides(tmp_path: Path) -> None:
    outer = make_repository(tmp_path / "outer", "*.log\n")
    inner = make_repository(outer / "libs" / "inner", "*.tmpl\n")
    rules = PathRules()
    assert not rules.accepts(inner / "page.tmpl", tmp_path)
    assert rules.accepts(inner / "run.log", tmp_path)  # the outer rules do not apply
    assert rules.accepts(outer / "page.tmpl", tmp_path)


def test_a_gitignore_outside_a_repository_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")  # no `.git` folder: not a repository
    assert PathRules().accepts(tmp_path / "debug.log", tmp_path)


def test_forget_gitignore_makes_a_changed_gitignore_take_effect(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "ledgerly", "*.log\n")
    rules = PathRules()
    page = repo / "src" / "page.tmpl"
    assert rules.accepts(page, tmp_path)

    (repo / ".gitignore").write_text("*.log\n*.tmpl\n")
    assert rules.accepts(page, tmp_path)  # the rules are cached per repository
    rules.forget_gitignore(repo)
    assert not rules.accepts(page, tmp_path)

    (repo / ".gitignore").write_text("")
    rules.forget_gitignore(repo)
    assert rules.accepts(page, tmp_path)
    assert rules.accepts(repo / "debug.log", tmp_path)


def test_a_gitignore_added_later_takes_effect_after_forget(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "ledgerly", None)
    rules = PathRules()
    assert rules.accepts(repo / "debug.log", tmp_path)
    (repo / ".gitignore").write_text("*.log\n")
    rules.forget_gitignore(repo)
    assert not rules.accepts(repo / "debug.log", tmp_path)


# --- reading sources ---------------------------------------------------------------------


@pytest.fixture
def forbid_opening(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Make opening the given file, by any of the usual routes, fail the test."""
    forbidden: set[str] = set()

    def guard(original: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, str | os.PathLike) and os.path.abspath(file) in forbidden:
                pytest.fail(f"{file} was opened")
            return original(file, *args, **kwargs)

        return guarded

    monkeypatch.setattr(builtins, "open", guard(builtins.open))
    monkeypatch.setattr(io, "open", guard(io.open))
    monkeypatch.setattr(os, "open", guard(os.open))
    original_path_open = Path.open

    def path_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        if os.path.abspath(self) in forbidden:
            pytest.fail(f"{self} was opened")
        return original_path_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", path_open)
    return lambda path: forbidden.add(os.path.abspath(path))


@pytest.mark.parametrize("name", [".env", ".env.local", "id_rsa", "server.pem", "credentials.json"])
def test_secrets_are_refused_without_being_opened(
    tmp_path: Path, forbid_opening: Callable[[Path], None], name: str
) -> None:
    secret = tmp_path / name
    secret.write_text("STRIPE_KEY=sk_live_123\n")
    forbid_opening(secret)
    with pytest.raises(UnreadableFile, match="secret") as raised:
        read_source(secret)
    assert str(secret) in str(raised.value)
    assert "sk_live" not in str(raised.value)


def test_the_guard_does_catch_an_open(
    tmp_path: Path, forbid_opening: Callable[[Path], None]
) -> None:
    # The proof above is only worth something if opening the file would be noticed.
    ordinary = tmp_path / "main.py"
    ordinary.write_text("x = 1\n")
    forbid_opening(ordinary)
    with pytest.raises(pytest.fail.Exception):
        read_source(ordinary)


def test_secret_patterns_given_to_read_source_are_used(tmp_path: Path) -> None:
    config = tmp_path / "app.conf"
    config.write_text("password=hunter2\n")
    with pytest.raises(UnreadableFile, match="secret"):
        read_source(config, ("*.conf",))
    env = tmp_path / ".env"
    env.write_text("A=1\n")
    assert read_source(env, ("*.conf",)) == "A=1\n"


def test_reads_source_text(tmp_path: Path) -> None:
    source = tmp_path / "refunds.py"
    source.write_text("def issue_refund():\n    return 'é'\n", encoding="utf-8")
    assert read_source(source) == "def issue_refund():\n    return 'é'\n"


@pytest.mark.parametrize("name", ["logo.png", "LOGO.PNG", "app.pyc", "data.sqlite3"])
def test_binary_suffixes_are_refused(tmp_path: Path, name: str) -> None:
    binary = tmp_path / name
    binary.write_text("plain text, but the name says binary")
    with pytest.raises(UnreadableFile, match="binary"):
        read_source(binary)


def test_content_with_nul_bytes_is_refused(tmp_path: Path) -> None:
    blob = tmp_path / "blob.py"
    blob.write_bytes(b"x = 1\n\x00\x01\x02")
    with pytest.raises(UnreadableFile, match="binary content"):
        read_source(blob)


def test_files_over_the_size_limit_are_refused(tmp_path: Path) -> None:
    at_limit = tmp_path / "at_limit.py"
    at_limit.write_bytes(b"#" * MAX_SOURCE_BYTES)
    assert len(read_source(at_limit)) == MAX_SOURCE_BYTES
    over = tmp_path / "over.py"
    over.write_bytes(b"#" * (MAX_SOURCE_BYTES + 1))
    with pytest.raises(UnreadableFile, match="larger than 512 KB"):
        read_source(over)


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    latin = tmp_path / "legacy.py"
    latin.write_bytes(b"name = 'caf\xe9'\n")
    assert read_source(latin) == "name = 'caf\ufffd'\n"


def test_a_missing_file_names_its_path(tmp_path: Path) -> None:
    gone = tmp_path / "src" / "deleted.py"
    with pytest.raises(UnreadableFile) as raised:
        read_source(gone)
    assert str(gone) in str(raised.value)


def test_a_directory_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile) as raised:
        read_source(tmp_path)
    assert str(tmp_path) in str(raised.value)


# Checked against `git check-ignore` for the same files.
NESTED = [
    ("src/keep.log", False),  # the deeper `!keep.log` overrides the top `*.log`
    ("src/other.log", True),
    ("keep.log", True),
    ("src/page.tmpl", True),
    ("page.tmpl", False),  # src/.gitignore applies only below src/
    ("web/page.tmpl", False),
    ("src/only_here.txt", True),  # `/only_here.txt` is relative to src/
    ("src/x/only_here.txt", False),
    ("src/secret_dir/a.py", True),
]


@pytest.mark.parametrize(("relative", "ignored"), NESTED)
def test_nested_gitignores_as_git_reads_them(tmp_path: Path, relative: str, ignored: bool) -> None:
    repo = make_repository(tmp_path / "ledgerly", "*.log\nsecret_dir/\n")
    (repo / "src").mkdir()
    (repo / "src" / ".gitignore").write_text("!keep.log\n*.tmpl\n/only_here.txt\n")
    assert PathRules().accepts(repo / relative, tmp_path) is not ignored


def test_gitignore_takes_precedence_over_info_exclude(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "ledgerly", "!important.bak\n")
    (repo / ".git" / "info" / "exclude").write_text("*.bak\n")
    rules = PathRules()
    assert not rules.accepts(repo / "old.bak", tmp_path)
    assert rules.accepts(repo / "important.bak", tmp_path)  # as `git check-ignore` says


def test_forget_gitignore_of_a_nested_folder(tmp_path: Path) -> None:
    repo = make_repository(tmp_path / "ledgerly", None)
    (repo / "src").mkdir()
    rules = PathRules()
    assert rules.accepts(repo / "src" / "page.tmpl", tmp_path)
    (repo / "src" / ".gitignore").write_text("*.tmpl\n")
    rules.forget_gitignore(repo)  # the wrong folder: src/ keeps its cached rules
    assert rules.accepts(repo / "src" / "page.tmpl", tmp_path)
    rules.forget_gitignore(repo / "src")
    assert not rules.accepts(repo / "src" / "page.tmpl", tmp_path)
    assert rules.accepts(repo / "page.tmpl", tmp_path)
