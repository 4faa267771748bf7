"""The repository files a memory's text names become its file_refs when it is added
inside the repository."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.file_mentions import MAX_REFS, files_named_in


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    for path in ("src/billing.py", "src/api/__init__.py", "tests/__init__.py", "pyproject.toml"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x = 1\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    return root


def test_paths_and_unique_file_names_are_found(repo: Path) -> None:
    text = (
        "billing.py is pure functions; the config lives in pyproject.toml, and "
        "src/api/__init__.py re-exports it. __init__.py alone says nothing, "
        "nor do os.path, e.g. or src/missing.py."
    )
    assert files_named_in(text, repo) == ["src/billing.py", "pyproject.toml", "src/api/__init__.py"]


def test_nothing_outside_the_repository(repo: Path) -> None:
    (repo.parent / "secret.txt").write_text("no", encoding="utf-8")
    assert files_named_in("see ../secret.txt and /etc/passwd.txt", repo) == []


_PIECES = [
    "billing.py",
    "src/",
    "../",
    "/",
    ".",
    "a",
    "pyproject.toml",
    "`",
    "\n",
    "x.y",
    "__init__.py",
]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_found_paths_exist_and_are_few(repo: Path, text: str) -> None:
    found = files_named_in(text, repo)
    assert len(found) <= MAX_REFS and len(set(found)) == len(found)
    assert all((repo / path).is_file() and ".." not in path for path in found)


def test_add_inside_the_repository_keeps_them_as_file_refs(
    repo: Path, engram_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "src")
    added = engram_cli.json("add", "billing.py has no I/O; keep it that way.", "--no-check")
    assert added["project"] == "shop"
    assert engram_cli.json("show", added["id"])["file_refs"] == ["src/billing.py"]
    elsewhere = engram_cli.json(
        "add", "billing.py of the other service is different.", "-p", "other", "--no-check"
    )
    assert engram_cli.json("show", elsewhere["id"])["file_refs"] == []  # not this repository
