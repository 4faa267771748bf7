"""The checked-out branch of a repository, read from its HEAD file, and the repositories
under a watched folder."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.activity.git_state import (
    PROJECT_FILE,
    HeadState,
    branch_slug,
    branch_words,
    find_repositories,
    git_dir,
    project_name,
    read_head,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No user or system git configuration (hooks, signing, default branch) applies."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, git_env: None) -> Path:
    path = tmp_path / "ledgerly"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "refunds.py").write_text("def issue_refund(): ...\n")
    git(path, "add", "refunds.py")
    git(path, "commit", "-q", "-m", "first")
    return path


@needs_git
def test_branch_of_a_fresh_repository(repo: Path) -> None:
    head = read_head(repo)
    assert head is not None
    assert head.branch == "main"
    assert head.commit is None
    assert head.repo == repo
    assert head.head_file == repo / ".git" / "HEAD"
    assert head.label == "main"


@needs_git
def test_branch_follows_checkout_and_switch(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature/x")
    head = read_head(repo)
    assert head is not None and head.branch == "feature/x"

    git(repo, "switch", "-q", "main")
    head = read_head(repo)
    assert head is not None and head.branch == "main"


@needs_git
def test_detached_head(repo: Path) -> None:
    commit = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "--detach")
    head = read_head(repo)
    assert head is not None
    assert head.branch is None
    assert head.commit == commit
    assert head.label == f"(detached at {commit[:8]})"


@needs_git
def test_worktree_reads_its_own_head_through_the_git_file(repo: Path) -> None:
    git(repo, "worktree", "add", "-q", "../wt", "-b", "wt-branch")
    worktree = repo.parent / "wt"
    assert (worktree / ".git").is_file()

    head = read_head(worktree)
    assert head is not None
    assert head.branch == "wt-branch"
    assert head.head_file.parent.parent == repo / ".git" / "worktrees"
    main_head = read_head(repo)
    assert main_head is not None and main_head.branch == "main"


def test_relative_gitdir_of_a_submodule(tmp_path: Path) -> None:
    modules = tmp_path / "app" / ".git" / "modules" / "lib"
    modules.mkdir(parents=True)
    (modules / "HEAD").write_text("ref: refs/heads/release/2.1\n")
    submodule = tmp_path / "app" / "lib"
    submodule.mkdir()
    (submodule / ".git").write_text("gitdir: ../.git/modules/lib\n")

    assert git_dir(submodule) == modules.resolve()
    head = read_head(submodule)
    assert head is not None and head.branch == "release/2.1"


def test_a_ref_outside_refs_heads_is_kept_whole(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/remotes/origin/main\n")
    head = read_head(tmp_path)
    assert head is not None and head.branch == "refs/remotes/origin/main"


@pytest.mark.parametrize(
    "dot_git", ["", "not a gitdir line\n", "gitdir: /nonexistent/place/.git/worktrees/x\n"]
)
def test_broken_git_files_are_not_repositories(tmp_path: Path, dot_git: str) -> None:
    (tmp_path / ".git").write_text(dot_git)
    assert read_head(tmp_path) is None


def test_not_a_repository(tmp_path: Path) -> None:
    assert git_dir(tmp_path) is None
    assert read_head(tmp_path) is None


def test_a_git_folder_without_head(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert read_head(tmp_path) is None


def test_an_empty_head_is_detached_at_nothing(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("\n")
    assert read_head(tmp_path) == HeadState(tmp_path, tmp_path / ".git" / "HEAD", None, None)
    assert read_head(tmp_path).label == "(detached at ?)"  # type: ignore[union-attr]


# --- repositories under a watched folder ------------------------------------------------


def mark_repository(path: Path) -> Path:
    (path / ".git").mkdir(parents=True)
    return path


def test_find_repositories(tmp_path: Path) -> None:
    ledgerly = mark_repository(tmp_path / "ledgerly")
    nested = mark_repository(tmp_path / "ledgerly" / "libs" / "money")
    shipit = mark_repository(tmp_path / "work" / "shipit")
    worktree = tmp_path / "work" / "shipit-wt"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: ../shipit/.git/worktrees/wt\n")
    mark_repository(tmp_path / "web" / "node_modules" / "left-pad")
    mark_repository(tmp_path / "ledgerly" / ".venv" / "src" / "editable")
    mark_repository(tmp_path / ".hidden" / "dotfiles")
    (tmp_path / "notes.txt").write_text("not a folder")

    assert find_repositories(tmp_path) == [ledgerly, nested, shipit, worktree]


def test_the_watched_folder_may_be_a_repository(tmp_path: Path) -> None:
    mark_repository(tmp_path)
    sub = mark_repository(tmp_path / "sub")
    assert find_repositories(tmp_path) == [tmp_path, sub]


def test_find_repositories_stops_at_max_depth(tmp_path: Path) -> None:
    shallow = mark_repository(tmp_path / "a")
    deep = mark_repository(tmp_path / "a" / "b" / "c" / "d")
    assert find_repositories(tmp_path) == [shallow]
    assert find_repositories(tmp_path, max_depth=4) == [shallow, deep]
    assert find_repositories(tmp_path, max_depth=0) == []


def test_no_repositories(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert find_repositories(tmp_path) == []
    assert find_repositories(tmp_path / "missing") == []


# --- branch names -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("branch", "slug"),
    [
        ("feature/board-dnd", "board-dnd"),
        ("fix/tz-bug", "tz-bug"),
        ("users/ana/fix/tz-bug", "tz-bug"),
        ("main", "main"),
        ("feature/board-dnd/", "board-dnd"),
    ],
)
def test_branch_slug(branch: str, slug: str) -> None:
    assert branch_slug(branch) == slug


@pytest.mark.parametrize(
    ("branch", "words"),
    [
        ("feature/board-dnd", ["board", "dnd"]),
        ("fix/tz-bug", ["tz", "bug"]),
        ("feat/JIRA-1234_refund_retry", ["JIRA", "refund", "retry"]),
        ("hotfix/x-timeout--2", ["timeout"]),
        ("main", ["main"]),
        ("release/2024", []),
    ],
)
def test_branch_words(branch: str, words: list[str]) -> None:
    assert branch_words(branch) == words


def _repository(folder: Path, config: str = "") -> Path:
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (folder / ".git" / "config").write_text(config, encoding="utf-8")
    return folder


ORIGIN = '[core]\n\tbare = false\n[remote "origin"]\n\turl = {url}\n\tfetch = +refs/heads/*\n'


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:pallets/click.git",
        "https://github.com/pallets/click",
        "https://github.com/pallets/click.git/",
        "ssh://git@example.org:2222/tools/click.git",
    ],
)
def test_a_clone_is_named_after_its_origin_not_its_folder(tmp_path: Path, url: str) -> None:
    clone = _repository(tmp_path / "repo", ORIGIN.format(url=url))
    assert project_name(clone) == "click"


def test_a_worktree_is_the_project_of_its_main_repository(tmp_path: Path) -> None:
    main = _repository(tmp_path / "click-main")
    inner = main / ".git" / "worktrees" / "feature"
    inner.mkdir(parents=True)
    (inner / "commondir").write_text("../..\n", encoding="utf-8")
    (inner / "HEAD").write_text("ref: refs/heads/feature\n", encoding="utf-8")
    worktree = tmp_path / "elsewhere" / "feature-x"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {inner}\n", encoding="utf-8")
    assert project_name(worktree) == "click-main"


def test_a_file_in_the_repository_names_the_project(tmp_path: Path) -> None:
    clone = _repository(tmp_path / "repo", ORIGIN.format(url="git@host:org/click.git"))
    (clone / PROJECT_FILE).write_text("click-docs\n", encoding="utf-8")
    assert project_name(clone) == "click-docs"


def test_other_sections_urls_are_not_the_origin(tmp_path: Path) -> None:
    config = '[submodule "vendor"]\n\turl = https://x/vendor.git\n[remote "origin"]\n'
    config += "\turl = https://github.com/pallets/click.git\n"
    assert project_name(_repository(tmp_path / "repo", config)) == "click"
    assert project_name(tmp_path / "plain") == "plain"  # not a repository: its folder


@given(st.text(max_size=300))
def test_any_config_gives_a_name(config: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        repo = _repository(Path(folder) / "repo", config)
        name = project_name(repo)
        assert name and "\n" not in name
