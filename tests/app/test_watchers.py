"""The project watchers for real: watchdog's inotify observers on a temporary git
repository, a `WatchSession` predicting from what happens there, and `engram watch`.

Every wait polls with a timeout (the observers run on their own threads); nothing
asserts on timing. A test that something is *not* reported follows the refused action
with a sentinel file and waits for the sentinel's report: events reach the debounce
thread in order, so by then the refused event would have been seen. The bursts that
reach the debounce thread are recorded too, so a refused path that merely lost to the
sentinel in the same burst still fails the test.
"""

from __future__ import annotations

import builtins
import errno
import io
import itertools
import json
import os
import pathlib
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

import app.activity
import app.watchers
import services.activity.watch_rules
from app.composition import Engram, open_engram
from app.watch_session import WatchSession
from services.activity.watch_batch import RawEvent
from tests.app.conftest import EngramCli
from tests.fakes import HashEmbedder

WAIT = 5.0
BILLING = "src/ledgerly/billing.py"
BILLING_SOURCE = '''"""Invoices."""


def reconcile_invoices(rows):
    return [row for row in rows if row]
'''


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def wait_until(condition: Callable[[], Any], timeout: float = WAIT, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or condition}")
        time.sleep(0.02)


class Reports:
    """The `report` callback of a session: every line, thread-safely, with waits."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, line: dict[str, Any]) -> None:
        with self._lock:
            self.lines.append(line)

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.lines)

    def mark(self) -> int:
        return len(self.snapshot())

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], after: int = 0, timeout: float = WAIT
    ) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            return next((line for line in self.snapshot()[after:] if predicate(line)), None)

        try:
            return wait_until(found, timeout)
        except AssertionError:
            raise AssertionError(f"no matching report; got {self.snapshot()[after:]}") from None

    def mentioning(self, text: str) -> list[dict[str, Any]]:
        return [line for line in self.snapshot() if text in json.dumps(line)]


class Bursts:
    """Every raw event that reached the debounce thread (wraps `summarize`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[RawEvent] = []
        real = app.watchers.summarize

        def summarize(events: list[RawEvent], storm_threshold: int) -> Any:
            self.events.extend(events)
            return real(events, storm_threshold)

        monkeypatch.setattr(app.watchers, "summarize", summarize)

    def paths(self) -> list[Path]:
        return [event.path for event in list(self.events)]


class Watching:
    """Starts sessions on an engram and stops them all at teardown."""

    def __init__(self, engram: Engram) -> None:
        self.engram = engram
        self.sessions: list[WatchSession] = []
        self.sentinels = itertools.count(1)

    def start(self, *roots: Path, **options: Any) -> tuple[WatchSession, Reports]:
        reports = Reports()
        session = self.engram.watch_session(list(roots), reports, **options)
        self.sessions.append(session)
        session.start()
        return session, reports

    def sentinel(self, repo: Path, reports: Reports) -> dict[str, Any]:
        """Write a new, ordinary file and wait for its report (once more if the tail of
        a storm swallowed it: a storm predicts no file)."""
        (repo / "notes").mkdir(exist_ok=True)
        for attempt in range(3):
            name = f"notes/sentinel-{next(self.sentinels)}.md"
            after = reports.mark()
            (repo / name).write_text("a note\n", encoding="utf-8")
            try:
                return reports.wait_for(lambda line, name=name: line.get("path") == name, after)
            except AssertionError:
                if attempt == 2 or not any("storm" in line for line in reports.snapshot()[after:]):
                    raise
        raise AssertionError("unreachable")

    def stop(self) -> None:
        for session in self.sessions:
            session.stop()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed repository `ledgerly` on `main`."""
    root = tmp_path / "ledgerly"
    (root / "src" / "ledgerly").mkdir(parents=True)
    (root / "src" / "ledgerly" / "billing.py").write_text(BILLING_SOURCE, encoding="utf-8")
    (root / "src" / "ledgerly" / "__init__.py").write_text("", encoding="utf-8")
    (root / "README.md").write_text("# Ledgerly\n", encoding="utf-8")
    (root / ".gitignore").write_text("scratch.txt\n*.log\n", encoding="utf-8")
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (root / ".env").write_text("API_TOKEN=do-not-read\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "src", "README.md", ".gitignore")
    git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def seeded(engram: Engram) -> dict[str, str]:
    """A decision about `reconcile_invoices` in billing.py, and a note on feature/x."""
    engram.settings.set("watch.debounce_ms", 50)
    decision = engram.service.add(
        {
            "content": "reconcile_invoices must run inside one database transaction.",
            "type": "decision",
            "project": "ledgerly",
            "file_refs": [BILLING],
        },
        embed=False,
    )
    branch_note = engram.service.add(
        {
            "content": "The x feature stores drafts in a separate table.",
            "type": "fact",
            "project": "ledgerly",
            "branch": "feature/x",
            "tags": ["x"],
        },
        embed=False,
    )
    return {"decision": decision.id, "branch": branch_note.id}


@pytest.fixture
def watching(engram: Engram, seeded: dict[str, str]) -> Iterator[Watching]:
    watching = Watching(engram)
    try:
        yield watching
    finally:
        watching.stop()


@pytest.fixture
def bursts(monkeypatch: pytest.MonkeyPatch) -> Bursts:
    return Bursts(monkeypatch)


def tiers(line: dict[str, Any]) -> list[str]:
    return [*line["tier1"], *line["tier2"]]


# --- files -------------------------------------------------------------------------------


def test_opening_and_saving_a_file_predict_its_memories(
    repo: Path, watching: Watching, seeded: dict[str, str]
) -> None:
    _, reports = watching.start(repo)
    billing = repo / BILLING

    billing.read_text(encoding="utf-8")
    opened = reports.wait_for(lambda line: line.get("event") == "file_opened")
    assert opened["project"] == "ledgerly"
    assert opened["path"] == BILLING
    assert seeded["decision"] in opened["tier1"]  # a decision about a name it defines

    after = reports.mark()
    billing.write_text(BILLING_SOURCE + "\n# reviewed\n", encoding="utf-8")
    saved = reports.wait_for(lambda line: line.get("event") == "file_saved", after)
    assert saved["path"] == BILLING
    assert seeded["decision"] in tiers(saved)
    assert set(saved) == {
        "t",
        "event",
        "project",
        "path",
        "activity",
        "tier1",
        "tier2",
        "titles",
        "ms",
    }
    assert set(saved["titles"]) == set(saved["tier1"]) | set(saved["tier2"])


def test_the_manifests_engram_reads_for_a_file_are_not_activity(
    repo: Path, watching: Watching
) -> None:
    """A save makes Engram read the manifest that governs the file (its runtime floor);
    that open is Engram's, not the user's, and must not move the activity there."""
    (repo / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.10"\n')
    _, reports = watching.start(repo)
    after = reports.mark()
    (repo / BILLING).write_text(BILLING_SOURCE + "\n# reviewed\n", encoding="utf-8")
    reports.wait_for(lambda line: line.get("path") == BILLING, after)
    time.sleep(0.5)  # ten debounce windows: the manifest's open would have been reported
    watching.sentinel(repo, reports)  # and everything before this is handled
    assert not [line for line in reports.snapshot() if line.get("path") == "pyproject.toml"]


def test_an_atomic_save_is_a_save_of_the_target(repo: Path, watching: Watching) -> None:
    _, reports = watching.start(repo)
    temporary = repo / "src" / "ledgerly" / "billing.py.part"
    temporary.write_text(BILLING_SOURCE + "\n# atomically\n", encoding="utf-8")
    after = reports.mark()
    os.replace(temporary, repo / BILLING)
    reports.wait_for(
        lambda line: line.get("event") == "file_saved" and line.get("path") == BILLING, after
    )


def test_ignored_files_and_dependencies_are_not_activity(
    repo: Path, watching: Watching, bursts: Bursts
) -> None:
    _, reports = watching.start(repo)
    (repo / "scratch.txt").write_text("ignored by .gitignore\n")
    (repo / "debug.log").write_text("ignored by a glob\n")
    (repo / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 2\n")
    (repo / "node_modules" / "left-pad" / "index.js").read_text()
    (repo / "node_modules" / "fresh.js").write_text("new dependency file\n")
    (repo / ".git" / "description").write_text("git internals\n")
    watching.sentinel(repo, reports)

    for name in ("scratch.txt", "debug.log", "node_modules", ".git/"):
        assert not reports.mentioning(name), name
        assert not [p for p in bursts.paths() if name.rstrip("/") in p.parts], name
    assert all(line.get("path", "").startswith("notes/") for line in reports.snapshot())


def test_a_gitignore_edited_while_watching_is_obeyed(
    repo: Path, watching: Watching, bursts: Bursts
) -> None:
    _, reports = watching.start(repo)
    watching.sentinel(repo, reports)  # the .gitignore rules are now read and cached

    with (repo / ".gitignore").open("a", encoding="utf-8") as handle:
        handle.write("later.txt\n")
    watching.sentinel(repo, reports)
    (repo / "later.txt").write_text("ignored since the edit\n")
    watching.sentinel(repo, reports)

    assert not reports.mentioning("later.txt")
    assert repo / "later.txt" not in bursts.paths()


def test_a_nested_gitignore_is_obeyed(repo: Path, watching: Watching, bursts: Bursts) -> None:
    fixtures = repo / "tests" / "fixtures"
    fixtures.mkdir(parents=True)
    (fixtures / ".gitignore").write_text("*.csv\n", encoding="utf-8")
    assert git(repo, "check-ignore", "tests/fixtures/big.csv") == "tests/fixtures/big.csv"
    _, reports = watching.start(repo)

    (fixtures / "big.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    watching.sentinel(repo, reports)

    assert not reports.mentioning("big.csv")
    assert fixtures / "big.csv" not in bursts.paths()


# --- secrets -------------------------------------------------------------------------------


class OpenSpy:
    """Records the files opened by threads other than the test's own (the watcher's)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened: list[str] = []
        self.read_sources: list[str] = []
        test_thread = threading.current_thread()

        def record(file: Any) -> None:
            if threading.current_thread() is not test_thread and isinstance(file, str | Path):
                self.opened.append(os.fspath(file))

        real_open = builtins.open
        real_path_open = pathlib.Path.open

        def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            record(file)
            return real_open(file, *args, **kwargs)

        def spy_path_open(self_: Path, *args: Any, **kwargs: Any) -> Any:
            record(self_)
            return real_path_open(self_, *args, **kwargs)

        real_read_source = services.activity.watch_rules.read_source

        def spy_read_source(path: Path, *args: Any, **kwargs: Any) -> str:
            self.read_sources.append(os.fspath(path))
            return real_read_source(path, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", spy_open)
        monkeypatch.setattr(io, "open", spy_open)
        monkeypatch.setattr(pathlib.Path, "open", spy_path_open)
        monkeypatch.setattr(services.activity.watch_rules, "read_source", spy_read_source)
        monkeypatch.setattr(app.activity, "read_source", spy_read_source)

    def named(self, name: str) -> list[str]:
        return [p for p in self.opened + self.read_sources if Path(p).name == name]


def test_a_secret_file_is_never_reported_nor_read(
    repo: Path, watching: Watching, bursts: Bursts, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = OpenSpy(monkeypatch)
    _, reports = watching.start(repo)
    secret = repo / ".env"

    secret.read_text(encoding="utf-8")
    with secret.open("a", encoding="utf-8") as handle:
        handle.write("DB_PASSWORD=hunter2\n")
    replacement = repo / "env.new"
    replacement.write_text("API_TOKEN=rotated\n", encoding="utf-8")
    os.replace(replacement, secret)  # an editor's atomic save onto the secret
    (repo / "config").mkdir()
    (repo / "config" / ".env.production").write_text("X=1\n", encoding="utf-8")
    (repo / "config" / "server.pem").write_text("-----BEGIN-----\n", encoding="utf-8")
    watching.sentinel(repo, reports)
    (repo / BILLING).read_text(encoding="utf-8")  # a source file is read, for contrast
    reports.wait_for(lambda line: line.get("path") == BILLING)

    for name in (".env", ".env.production", "server.pem"):
        assert not reports.mentioning(name), name
        assert not [p for p in bursts.paths() if p.name == name], name
        assert spy.named(name) == [], name
    billing = (repo / BILLING).resolve()
    assert billing in [Path(p).resolve() for p in spy.read_sources]  # the spy sees reads


# --- storms --------------------------------------------------------------------------------


def test_a_storm_of_files_is_reported_once_not_predicted_file_by_file(
    repo: Path, engram: Engram, watching: Watching, monkeypatch: pytest.MonkeyPatch
) -> None:
    engram.settings.set("watch.debounce_ms", 200)
    spy = OpenSpy(monkeypatch)
    generated = repo / "src" / "generated"
    generated.mkdir()
    _, reports = watching.start(repo)

    for number in range(500):
        (generated / f"model_{number:03}.py").write_text(f"VALUE = {number}\n")
    storm = reports.wait_for(lambda line: "storm" in line, timeout=10)
    assert storm["storm"] > 40
    assert str(repo) in storm["root"]
    watching.sentinel(repo, reports)

    file_lines = [line for line in reports.snapshot() if "src/generated/" in line.get("path", "")]
    assert len(file_lines) <= 2
    assert len([p for p in spy.read_sources if "generated" in p]) <= 2
    assert sum(line.get("storm", 0) for line in reports.snapshot()) >= 400


# --- branches ------------------------------------------------------------------------------


def test_checkouts_and_a_detached_head_are_reported(
    repo: Path, watching: Watching, seeded: dict[str, str]
) -> None:
    _, reports = watching.start(repo)

    def branch_line(branch: str, after: int) -> dict[str, Any]:
        return reports.wait_for(
            lambda line: line.get("event") == "branch_checkout" and line.get("branch") == branch,
            after,
        )

    after = reports.mark()
    git(repo, "checkout", "-q", "-b", "feature/x")
    feature = branch_line("feature/x", after)
    assert feature["project"] == "ledgerly"
    assert seeded["branch"] in tiers(feature)

    (repo / "README.md").write_text("# Ledgerly\n\nDrafts.\n")
    git(repo, "commit", "-q", "-am", "drafts")
    after = reports.mark()
    git(repo, "switch", "-q", "main")
    main = branch_line("main", after)
    assert main["project"] == "ledgerly"
    assert seeded["branch"] not in tiers(main)

    commit = git(repo, "rev-parse", "HEAD")
    after = reports.mark()
    git(repo, "checkout", "-q", "--detach")
    detached = branch_line(f"(detached at {commit[:8]})", after)
    assert detached["project"] == "ledgerly"

    after = reports.mark()
    git(repo, "checkout", "-q", "feature/x")
    branch_line("feature/x", after)


def test_a_commit_without_a_checkout_is_no_branch_change(repo: Path, watching: Watching) -> None:
    _, reports = watching.start(repo)
    (repo / "README.md").write_text("# Ledgerly\n\nMore.\n")
    git(repo, "commit", "-q", "-am", "more")
    watching.sentinel(repo, reports)
    assert not [line for line in reports.snapshot() if line.get("event") == "branch_checkout"]


@pytest.mark.parametrize("watched", ["repository", "worktree"])
def test_switching_branches_in_a_worktree_is_reported(
    repo: Path, tmp_path: Path, watching: Watching, watched: str
) -> None:
    tree = tmp_path / "ledgerly-hotfix"
    git(repo, "worktree", "add", "-q", "-b", "hotfix/a", str(tree))
    # Watching the worktree alone: its HEAD lives outside it, in the main repository.
    session, reports = watching.start(repo if watched == "repository" else tree)
    assert tree.resolve() in {r.root for r in session.watcher.repositories.values()}

    after = reports.mark()
    git(tree, "switch", "-q", "-c", "hotfix/b")
    line = reports.wait_for(lambda line: line.get("event") == "branch_checkout", after)
    assert line["project"] == "ledgerly-hotfix"
    assert line["branch"] == "hotfix/b"


def test_a_worktree_added_while_watching_is_followed(
    repo: Path, tmp_path: Path, watching: Watching
) -> None:
    _, reports = watching.start(repo)
    tree = tmp_path / "ledgerly-late"
    git(repo, "worktree", "add", "-q", "-b", "late/a", str(tree))

    after = reports.mark()
    git(tree, "switch", "-q", "-c", "late/b")
    line = reports.wait_for(
        lambda line: line.get("event") == "branch_checkout" and line.get("branch") == "late/b",
        after,
    )
    assert line["project"] == "ledgerly-late"


# --- the inotify limit ---------------------------------------------------------------------


class FullInotifyObserver(Observer):  # type: ignore[misc,valid-type]
    """An inotify observer on a machine whose watch limit is used up."""

    def schedule(self, *args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")


def test_the_inotify_limit_falls_back_to_polling(repo: Path, watching: Watching) -> None:
    notices: list[str] = []
    session, reports = watching.start(
        repo,
        notice=notices.append,
        observer_factory=FullInotifyObserver,
        polling_factory=lambda: PollingObserver(timeout=0.2),
    )
    assert session.watcher.polling == [repo.resolve()]
    assert len(notices) == 1
    assert "fs.inotify.max_user_watches" in notices[0]
    assert "sysctl" in notices[0]
    assert str(repo.resolve()) in notices[0]

    after = reports.mark()
    (repo / BILLING).write_text(BILLING_SOURCE + "\n# polled\n", encoding="utf-8")
    reports.wait_for(lambda line: line.get("path") == BILLING, after)

    after = reports.mark()
    git(repo, "checkout", "-q", "-b", "feature/x")
    reports.wait_for(lambda line: line.get("branch") == "feature/x", after)


def test_other_observer_errors_are_not_swallowed(repo: Path, engram: Engram) -> None:
    class Broken(Observer):  # type: ignore[misc,valid-type]
        def schedule(self, *args: Any, **kwargs: Any) -> Any:
            raise OSError(errno.EACCES, "permission denied")

    session = engram.watch_session([repo], Reports(), observer_factory=Broken)
    try:
        with pytest.raises(OSError, match="permission denied"):
            session.start()
        assert session.watcher.polling == []
    finally:
        session.stop()


# --- Engram's own data ---------------------------------------------------------------------


def test_engrams_own_data_folder_is_not_activity(repo: Path, bursts: Bursts) -> None:
    inside = open_engram(repo / "engram-data", embedder=HashEmbedder())
    watching = Watching(inside)
    try:
        inside.settings.set("watch.debounce_ms", 50)
        _, reports = watching.start(repo)
        for number in range(3):
            inside.service.add(
                {"content": f"Written while watching, number {number}.", "project": "ledgerly"}
            )
        inside.store.meta_set("test.marker", "x")
        watching.sentinel(repo, reports)
        watching.sentinel(repo, reports)  # its report saved the activity state, in the folder

        data = (repo / "engram-data").resolve()
        assert list(data.iterdir())  # the database is really there
        assert not [p for p in bursts.paths() if data in p.parents]
        assert not reports.mentioning("engram-data")
        assert [line["path"] for line in reports.snapshot()] == [
            "notes/sentinel-1.md",
            "notes/sentinel-2.md",
        ]
    finally:
        watching.stop()
        inside.close()


# --- the CLI -------------------------------------------------------------------------------


def test_engram_watch_prints_json_lines(repo: Path, tmp_path: Path) -> None:
    engram_bin = Path(sys.executable).parent / "engram"
    command = [str(engram_bin), "--data-dir", str(tmp_path / "cli-data")]
    process = subprocess.Popen(
        [*command, "watch", str(repo), "--duration", "3", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout or []), daemon=True)
    reader.start()
    try:
        # The watcher starts once the process has loaded: keep saving until it reports.
        deadline = time.monotonic() + 20
        number = 0
        while process.poll() is None and time.monotonic() < deadline:
            if any(BILLING in line for line in list(lines)):
                break
            number += 1
            (repo / BILLING).write_text(BILLING_SOURCE + f"\n# edit {number}\n")
            time.sleep(0.2)
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reader.join(timeout=5)
    stderr = process.stderr.read() if process.stderr else ""

    assert process.returncode == 0, stderr
    parsed = [json.loads(line) for line in lines if line.strip()]
    assert parsed, f"no output; stderr: {stderr}"
    files = [line for line in parsed if line.get("path") == BILLING]
    assert files, parsed
    assert files[0]["event"] in ("file_saved", "file_opened")
    assert files[0]["project"] == "ledgerly"
    assert {"t", "activity", "tier1", "tier2", "ms"} <= set(files[0])


def test_engram_watch_without_folders_is_an_input_error(engram_cli: EngramCli) -> None:
    result = engram_cli("watch", "--duration", "1")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: nothing to watch: pass folders (engram watch ~/code/app) or set watch.paths\n"
    )
    assert result.stdout == ""
