"""Watching project folders: watchdog observers feed a debounce thread that turns bursts
of file-system events into signals (see `services.activity.watch_batch`).

- Files: inotify's open events where the platform has them, else created/modified;
  a write (modified, closed after writing, an atomic rename onto the file) is a save.
- Branches: each repository's `HEAD` file (worktrees included, whose HEAD lives in the
  main repository's `.git/worktrees/<name>/`), read again whenever it changes.
- Paths the rules refuse (secrets, `.git` internals, dependencies, builds, ignored
  files, Engram's own data folder) never become signals; secret files are never read.
- When the inotify watch limit is reached, the message says how to raise it and that
  folder falls back to polling.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.activity.git_state import HeadState, find_repositories, git_dir, read_head
from services.activity.watch_batch import Burst, RawEvent, RawKind, summarize
from services.activity.watch_rules import PathRules, is_secret

log = logging.getLogger(__name__)

_OPEN_TYPES = {"opened"}
_SAVE_TYPES = {"modified", "closed"}
_CREATE_TYPES = {"created"}
MAX_BURST_SECONDS = 2.0
OWN_READ_SECONDS = 2.0


def inotify_limit_message(folder: Path) -> str:
    current = "unknown"
    with contextlib.suppress(OSError):
        current = Path("/proc/sys/fs/inotify/max_user_watches").read_text().strip()
    return (
        f"the inotify watch limit is reached (fs.inotify.max_user_watches = {current}) while "
        f"watching {folder}; it is watched by polling instead (slower to notice changes). "
        "Raise the limit with `sudo sysctl fs.inotify.max_user_watches=524288` and make it "
        "permanent in /etc/sysctl.d/90-inotify.conf"
    )


@dataclass
class _Repository:
    root: Path  # working tree
    head_file: Path
    watched_root: Path
    last: HeadState | None


class _Handler:
    """watchdog handler: classifies events and queues the ones that matter."""

    def __init__(self, watcher: ProjectWatcher, root: Path) -> None:
        self.watcher = watcher
        self.root = root

    def dispatch(self, event: Any) -> None:
        if event.is_directory:
            return
        paths = [Path(event.src_path)]
        destination = getattr(event, "dest_path", "")
        if destination:
            paths = [Path(destination)]  # an atomic save renames a temporary file here
        kind_name = event.event_type
        for path in paths:
            self.watcher.classify(kind_name, path, self.root)


class ProjectWatcher:
    def __init__(
        self,
        roots: list[Path],
        rules: PathRules,
        on_burst: Callable[[Burst, ProjectWatcher], None],
        debounce_ms: int = 300,
        storm_threshold: int = 40,
        observer_factory: Callable[[], Any] | None = None,
        polling_factory: Callable[[], Any] | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> None:
        self.roots = [root.expanduser().resolve() for root in roots]
        self.rules = rules
        self.on_burst = on_burst
        self.debounce = debounce_ms / 1000.0
        self.storm_threshold = storm_threshold
        self.on_notice = on_notice or (lambda text: log.warning("%s", text))
        self._observer_factory = observer_factory
        self._polling_factory = polling_factory
        self._observers: list[Any] = []
        self._queue: queue.Queue[RawEvent | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.repositories: dict[Path, _Repository] = {}
        self.polling: list[Path] = []
        self.bursts_handled = 0
        self._own_reads: dict[Path, float] = {}

    def reading(self, path: Path) -> None:
        """Engram is about to read `path`: its own open must not count as activity."""
        now = time.monotonic()
        self._own_reads = {p: t for p, t in self._own_reads.items() if now - t < OWN_READ_SECONDS}
        self._own_reads[path] = now

    # --- set-up -----------------------------------------------------------------------------

    def start(self) -> None:
        for root in self.roots:
            if not root.is_dir():
                self.on_notice(f"{root}: not a folder; not watched")
                continue
            self._add_repositories(root)
            self._watch(root, recursive=True)
        watched_dirs = {r.head_file.parent for r in self.repositories.values()}
        for directory in sorted(watched_dirs):
            if not any(directory == root or root in directory.parents for root in self.roots):
                self._watch(directory, recursive=False)  # a worktree's HEAD outside the roots
        self._thread = threading.Thread(target=self._run, name="engram-watch", daemon=True)
        self._thread.start()

    def _add_repositories(self, root: Path) -> None:
        for repo in find_repositories(root):
            self._add_repository(repo, root)
            directory = git_dir(repo)
            worktrees = directory / "worktrees" if directory else None
            if worktrees and worktrees.is_dir():
                for entry in sorted(worktrees.iterdir()):
                    self._add_worktree(entry, root)

    def _add_worktree(self, entry: Path, root: Path, new: bool = False) -> None:
        """The worktree whose git directory is `entry` (`.git/worktrees/<name>/`); a `new`
        one (added while watching) has its first branch reported as a checkout."""
        pointer = entry / "gitdir"
        try:
            tree = Path(pointer.read_text("utf-8").strip()).parent
        except OSError:
            return
        if tree.is_dir():
            self._add_repository(tree.resolve(), root, new)

    def _add_repository(self, repo: Path, root: Path, new: bool = False) -> None:
        head = read_head(repo)
        if head is not None:
            self.repositories[head.head_file.resolve()] = _Repository(
                repo, head.head_file.resolve(), root, None if new else head
            )

    def _new_observer(self, polling: bool) -> Any:
        if polling:
            if self._polling_factory is not None:
                return self._polling_factory()
            from watchdog.observers.polling import PollingObserver

            return PollingObserver(timeout=2)
        if self._observer_factory is not None:
            return self._observer_factory()
        from watchdog.observers import Observer

        return Observer()

    def _watch(self, folder: Path, recursive: bool) -> None:
        handler = _Handler(self, folder)
        observer = self._new_observer(polling=False)
        try:
            observer.schedule(handler, str(folder), recursive=recursive)
            observer.start()
        except OSError as error:
            if error.errno not in (errno.ENOSPC, errno.EMFILE):
                raise
            _stop_quietly(observer)
            self.on_notice(inotify_limit_message(folder))
            observer = self._new_observer(polling=True)
            observer.schedule(handler, str(folder), recursive=recursive)
            observer.start()
            self.polling.append(folder)
        self._observers.append(observer)

    def stop(self) -> None:
        self._stopping.set()
        self._queue.put(None)
        for observer in self._observers:
            _stop_quietly(observer)
        if self._thread is not None:
            self._thread.join(timeout=5)

    # --- events -------------------------------------------------------------------------------

    def classify(self, kind_name: str, path: Path, root: Path) -> None:
        """Queue `path` if it is activity; called from watchdog's threads."""
        now = time.monotonic()
        resolved = path.resolve() if path.name == "HEAD" else path
        if (
            path.name == "HEAD"
            and resolved not in self.repositories
            and resolved.parent.parent.name == "worktrees"
        ):
            self._add_worktree(resolved.parent, root, new=True)  # added while watching
        if resolved in self.repositories and kind_name in (
            "modified",
            "created",
            "moved",
            "closed",
        ):
            repo = self.repositories[resolved]
            self._queue.put(RawEvent(RawKind.HEAD, repo.root, repo.watched_root, now))
            return
        if path.name == ".gitignore":
            self.rules.forget_gitignore(path.parent)
        if ".git" in path.parts or path.name.startswith(".git"):
            return
        if is_secret(path, self.rules.secret_patterns):
            return
        read_at = self._own_reads.get(path)
        if kind_name in _OPEN_TYPES and read_at is not None and now - read_at < OWN_READ_SECONDS:
            return
        if kind_name in _OPEN_TYPES:
            kind = RawKind.OPENED
        elif kind_name in _SAVE_TYPES or kind_name == "moved":
            kind = RawKind.SAVED
        elif kind_name in _CREATE_TYPES:
            kind = RawKind.CREATED
        else:
            return
        if not self.rules.accepts(path, root):
            return
        self._queue.put(RawEvent(kind, path, root, now))

    def _run(self) -> None:
        while not self._stopping.is_set():
            first = self._queue.get()
            if first is None:
                return
            events = [first]
            started = time.monotonic()
            while time.monotonic() - started < MAX_BURST_SECONDS:
                try:
                    event = self._queue.get(timeout=self.debounce)
                except queue.Empty:
                    break
                if event is None:
                    return
                events.append(event)
            burst = summarize(events, self.storm_threshold)
            burst.heads = [h for h in burst.heads if self._head_changed(h.path)]
            try:
                self.on_burst(burst, self)
            except Exception:  # a failing prediction must not stop the watcher
                log.exception("handling file activity failed")
            self.bursts_handled += 1

    def _head_changed(self, repo_root: Path) -> bool:
        for repo in list(self.repositories.values()):  # classify() may add worktrees
            if repo.root == repo_root:
                head = read_head(repo.root)
                if head is None or head == repo.last or _placeholder(head):
                    return False
                repo.last = head
                return True
        return False

    def head_of(self, repo_root: Path) -> HeadState | None:
        for repo in list(self.repositories.values()):
            if repo.root == repo_root:
                return repo.last
        return None


def _placeholder(head: HeadState) -> bool:
    """An empty or all-zero HEAD: git is still writing a new worktree's HEAD."""
    return head.branch is None and not (head.commit or "").strip("0")


def _stop_quietly(observer: Any) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout=5)
    except Exception:  # stopping a half-started observer
        log.debug("observer stop failed", exc_info=True)
